#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The systemd units for real, with systemd as PID 1: run inside the guest by
# make check-vm (tests/vm/check.sh), never on a host whose services it would
# touch (it refuses unless PID 1 is systemd and the host name is pcvm). It
# installs the tree (make install prefix=/usr, what is built, as it is), then
# with a toy service, pctoy.service, that holds a data file open and reads
# none of it (so the pages it finds cached are the restore's):
#  - pagecache-snapshot@pctoy snapshots it; pagecache-restore@pctoy brings
#    the pages back before pctoy starts, ordered before it;
#  - the snapshot timer is armed and names its service;
#  - snapshot@ while pctoy is down keeps the snapshot and succeeds;
#  - pagecache.service reaches READY, answers status and writes metrics,
#    reloads, takes its final snapshot when stopped, and restores a
#    `cgroup =` service ordered After= it that starts with it.
. "$(dirname "$0")/../cli/lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$(dirname "$PAGECACHE")" && pwd)

if [ "$(readlink /proc/1/exe)" != /usr/lib/systemd/systemd ] || [ "$(hostname)" != pcvm ]; then
	t_skip "the units under systemd" "not in the pcvm guest (tests/vm/run.sh): it installs and starts units"
	t_done; exit
fi

u_show() { systemctl show -P "$2" "$1"; }
mono() { u_show "$1" "$2"; }	# a *TimestampMonotonic, in microseconds
pages_of() { fincore -b -n -r -o PAGES "$1"; }

data=/srv/pctoy/data
npages=$((8 * 1024 * 1024 / $(getconf PAGESIZE)))
cleanup_units() {
	systemctl stop pctoy.service pagecache.service 'pagecache-snapshot@pctoy.timer' 2>/dev/null
	systemctl disable 'pagecache-restore@pctoy.service' 'pagecache-snapshot@pctoy.timer' 2>/dev/null
	rm -rf /etc/systemd/system/pctoy.service /etc/systemd/system/pctoy.service.d /srv/pctoy \
		/var/lib/pagecache /etc/pagecache /var/lib/prometheus/node-exporter/pagecache.prom
	env -u MAKEFLAGS make -s -C "$REPO" -o all BUILD="$B" prefix=/usr uninstall >/dev/null 2>&1
	systemctl daemon-reload
	systemctl reset-failed
}
T_CLEANUP+=(cleanup_units)

# ---- install ---------------------------------------------------------------
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$REPO" -o all BUILD="$B" prefix=/usr install \
	>"$T_DIR/inst.out" 2>&1
t_is "make install prefix=/usr exits 0" $? 0
sed 's/^/# /' "$T_DIR/inst.out" | tail -5
PAGECACHE=/usr/bin/pagecache
t_ok "the installed pagecache runs" "$PAGECACHE" --version
systemctl daemon-reload
for u in pagecache.service pagecache-restore@.service pagecache-snapshot@.service pagecache-snapshot@.timer; do
	t_ok "systemd knows $u" sh -c "systemctl list-unit-files --no-legend '$u' | grep -q '^$u '"
done

mkdir -p /srv/pctoy
mkfile "$data" 8192
cat >/etc/systemd/system/pctoy.service <<'UNIT'
[Unit]
Description=pagecache toy service: holds its data open, reads none of it

[Service]
ExecStart=/bin/bash -c 'exec 3</srv/pctoy/data; exec sleep infinity'
UNIT
systemctl daemon-reload
toy_holds() { pid=$(u_show pctoy.service MainPID); [ "$pid" != 0 ] && [ "$(readlink "/proc/$pid/fd/3")" = "$data" ]; }

# ---- the templates: snapshot@, restore@ before the service -------------------
systemctl start pctoy.service
t_ok "pctoy.service runs, its data open" t_wait 10 toy_holds
cat "$data" >/dev/null
t_is "its data is cached" "$(pages_of "$data")" "$npages"
systemctl start pagecache-snapshot@pctoy.service
t_is "pagecache-snapshot@pctoy.service succeeds" "$(u_show pagecache-snapshot@pctoy.service Result)" success
t_ok "and writes /var/lib/pagecache/pctoy.snap" test -s /var/lib/pagecache/pctoy.snap
"$PAGECACHE" show /var/lib/pagecache/pctoy.snap >"$T_DIR/show" 2>&1
t_ok "which names the data file" grep -q " ${data#/}\$" "$T_DIR/show"

systemctl stop pctoy.service
drop "$data"
t_is "stopped, its pages dropped" "$(pages_of "$data")" 0
systemctl enable pagecache-restore@pctoy.service 2>/dev/null
t_ok "systemctl enable pagecache-restore@pctoy hooks it to pctoy" \
	test -L /etc/systemd/system/pctoy.service.wants/pagecache-restore@pctoy.service
systemctl start pctoy.service
t_ok "pctoy.service starts" t_wait 10 toy_holds
t_is "pagecache-restore@pctoy ran and succeeded" \
	"$(u_show pagecache-restore@pctoy.service ActiveState)/$(u_show pagecache-restore@pctoy.service Result)" active/success
got=$(pages_of "$data")
t_ok "the pages are back ($got of $npages) before pctoy read any" test "$got" -ge $((npages * 9 / 10))
r_end=$(mono pagecache-restore@pctoy.service ExecMainExitTimestampMonotonic)
s_start=$(mono pctoy.service ExecMainStartTimestampMonotonic)
t_ok "the restore ended ($r_end us) before pctoy started ($s_start us)" test "$r_end" -gt 0 -a "$r_end" -le "$s_start"
systemctl stop pctoy.service
t_is "stopping pctoy stops its restore unit too (PartOf)" "$(u_show pagecache-restore@pctoy.service ActiveState)" inactive
systemctl disable pagecache-restore@pctoy.service 2>/dev/null

# ---- the timer ----------------------------------------------------------------
systemctl start pagecache-snapshot@pctoy.timer
t_is "pagecache-snapshot@pctoy.timer is active" "$(u_show pagecache-snapshot@pctoy.timer ActiveState)" active
t_is "it triggers pagecache-snapshot@pctoy.service" "$(u_show pagecache-snapshot@pctoy.timer Triggers)" pagecache-snapshot@pctoy.service
next=$(systemctl list-timers --all --output=json 2>/dev/null | jq -r '.[] | select(.unit == "pagecache-snapshot@pctoy.timer") | .next' 2>/dev/null)
t_ok "list-timers has its next run ($next)" test -n "$next" -a "$next" != null -a "$next" != 0
systemctl stop pagecache-snapshot@pctoy.timer

# ---- snapshot@ while the service is down ----------------------------------------
sum0=$(sha256sum </var/lib/pagecache/pctoy.snap)
systemctl start pagecache-snapshot@pctoy.service 2>/dev/null
t_ok "snapshot@pctoy while pctoy is down succeeds (pagecache-snapshot(1): exit 0)" \
	test "$(u_show pagecache-snapshot@pctoy.service Result)" = success
t_is "and keeps the last good snapshot (--guard)" "$(sha256sum </var/lib/pagecache/pctoy.snap)" "$sum0"
systemctl reset-failed pagecache-snapshot@pctoy.service 2>/dev/null

# ---- pagecache.service ------------------------------------------------------------
mkdir -p /var/lib/prometheus/node-exporter /etc/systemd/system/pctoy.service.d
printf '[Unit]\nAfter=pagecache.service\n' >/etc/systemd/system/pctoy.service.d/after.conf
cat >/etc/pagecache/pagecache.conf <<'CONF'
[daemon]
metrics = /var/lib/prometheus/node-exporter/pagecache.prom

[service pctoy]
cgroup = system.slice/pctoy.service
restore = yes
interval = 0
CONF
systemctl daemon-reload
systemctl start pctoy.service
t_wait 10 toy_holds
cat "$data" >/dev/null
systemctl start pagecache.service
t_is "pagecache.service starts: active (Type=notify: READY=1 sent)" "$(u_show pagecache.service ActiveState)" active
t_ok "its status line says something" test -n "$(u_show pagecache.service StatusText)"
echo "# StatusText: $(u_show pagecache.service StatusText)"
"$PAGECACHE" status --json >"$T_DIR/st.json" 2>"$T_DIR/st.err"
t_is "pagecache status answers on the default socket" $? 0
t_is "status: the service pctoy" "$(jq -r '[.services[].service] | join(",")' "$T_DIR/st.json")" pctoy
t_ok "status: pctoy (a cgroup = service) is up" \
	test "$(jq -r '.services[0].up' "$T_DIR/st.json")" = true
"$PAGECACHE" status >"$T_DIR/st.txt" 2>&1
t_ok "status: the table" grep -q '^SERVICE' "$T_DIR/st.txt"
sed 's/^/# /' "$T_DIR/st.txt"
prom=/var/lib/prometheus/node-exporter/pagecache.prom
t_ok "metrics: the textfile is written" t_wait 10 test -s "$prom"
t_ok "metrics: pagecache_service_up of pctoy" grep -q '^pagecache_service_up{service="pctoy"}' "$prom"
t_ok "metrics: pagecache_service_up of pctoy is 1" \
	grep -q '^pagecache_service_up{service="pctoy"} 1$' "$prom"
t_ok "status --prom answers" sh -c "'$PAGECACHE' status --prom | grep -q '^pagecache_service_'"

# reload: a second service appears, the daemon stays the same process
pid0=$(u_show pagecache.service MainPID)
printf '\n[service pcdata]\npaths = /srv/pctoy\ninterval = 0\nrestore = no\n' >>/etc/pagecache/pagecache.conf
systemctl reload pagecache.service
t_is "systemctl reload pagecache succeeds" $? 0
t_is "the same daemon runs on" "$(u_show pagecache.service MainPID)/$(u_show pagecache.service ActiveState)" "$pid0/active"
t_ok "status: the reloaded config's two services" t_wait 10 sh -c \
	"[ \"\$('$PAGECACHE' status --json | jq '.services | length')\" = 2 ]"
# a config that does not parse: reload fails, the running one is kept
cp /etc/pagecache/pagecache.conf "$T_DIR/good.conf"
printf '[service broken\n' >>/etc/pagecache/pagecache.conf
systemctl reload pagecache.service 2>/dev/null
t_ok "a reload of a broken config fails" test $? != 0
t_is "and the daemon runs on" "$(u_show pagecache.service MainPID)/$(u_show pagecache.service ActiveState)" "$pid0/active"
cp "$T_DIR/good.conf" /etc/pagecache/pagecache.conf

# stop: the final snapshot
rm -f /var/lib/pagecache/pcdata.snap
systemctl stop pagecache.service
t_is "systemctl stop pagecache: a clean stop" "$(u_show pagecache.service Result)" success
t_ok "the final snapshot of pcdata was written at the stop" test -s /var/lib/pagecache/pcdata.snap
t_ok "and pctoy's" test /var/lib/pagecache/pctoy.snap -nt "$T_DIR/st.json"
journalctl -b -u pagecache.service --no-pager -o cat 2>/dev/null | grep -iE 'snapshot|stop' | tail -4 | sed 's/^/# journal: /'

# a cgroup = service that starts after the daemon, in the same transaction
# (as at boot): the daemon's start-up restore brings its pages back
systemctl stop pctoy.service
drop "$data"
t_is "pctoy and the daemon stopped, its pages dropped" "$(pages_of "$data")" 0
systemctl start pagecache.service pctoy.service
t_is "both start" "$(u_show pagecache.service ActiveState)/$(u_show pctoy.service ActiveState)" active/active
d_ready=$(mono pagecache.service ActiveEnterTimestampMonotonic)
s_start=$(mono pctoy.service ExecMainStartTimestampMonotonic)
t_ok "pctoy started ($s_start us) after the daemon was ready ($d_ready us)" test "$d_ready" -gt 0 -a "$d_ready" -le "$s_start"
got=$(pages_of "$data")
"$PAGECACHE" status --json >"$T_DIR/st2.json" 2>/dev/null
echo "# daemon restore of pctoy: $(jq -c '.services[] | select(.service == "pctoy") | {restore_result, restore_pages, up}' "$T_DIR/st2.json" 2>/dev/null); cached $got of $npages"
journalctl -b -u pagecache.service --no-pager -o cat 2>/dev/null | grep -i pctoy | tail -3 | sed 's/^/# journal: /'
t_ok "the daemon restored pctoy's pages ($got of $npages), its cgroup made after the restore began" \
	test "$got" -ge $((npages * 9 / 10))
t_ok "status: a restore that read pages, and says done" \
	test "$(jq -r '.services[] | select(.service == "pctoy") | "\(.restore_result) \(.restore_pages > 0)"' "$T_DIR/st2.json")" = "done true"
systemctl stop pagecache.service pctoy.service
t_is "is-system-running: no unit failed along the way" \
	"$(systemctl list-units --failed --plain --no-legend 2>/dev/null | grep -c pagecache)" 0
systemctl list-units --failed --plain --no-legend 2>/dev/null | sed 's/^/# failed: /'
t_done
