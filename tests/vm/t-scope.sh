#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/vm/t-scope.sh: in a guest with systemd as PID 1 and cgroup v2 (run
# by tests/vm/run.sh, as root), run --no-cache, bench readtwice and bench
# swapin from where users start them: a service's cgroup shared with the
# script that runs them (the guest agent's own), a login-like session scope
# (systemd-run --scope), a delegated scope shared with its shell
# (systemd-run --scope -p Delegate=yes bash -c), and a delegated scope of
# their own. Each must work, put its memory cgroups in a scope systemd made
# for it (or, in the last case, beneath its own), and leave nothing: no
# pagecache unit, no cgroup. Then users: lingering (with and without
# XDG_RUNTIME_DIR, as sudo -u starts it), in a login session (su -l, no
# linger) beside nocache, and one whose manager is not running, which must
# refuse without running CMD and say why. A TAP script like tests/cli's.
. "$(dirname "$0")/../cli/lib.sh"
cd "$T_DIR"

if [ ! -d /run/systemd/system ] || [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
	t_skip "systemd scopes" "needs systemd as PID 1 and cgroup v2 (this is $(stat -f -c %T /sys/fs/cgroup))"
	t_done; exit
fi
PC=$PAGECACHE
echo "# in $(awk -F: '$1=="0"{print $3}' /proc/self/cgroup), systemd $(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')"

# what pagecache left: its units, and its cgroups anywhere (systemd removes
# an emptied scope a moment after its last process)
traces() {
	{ systemctl list-units --all --plain --no-legend 'pagecache-*.scope' | awk '{ print $1 }'
	  find /sys/fs/cgroup \( -name 'pagecache-*' -o -name 'pc-readtwice-*' -o -name 'pc-swapin-*' \) -type d; } 2>/dev/null | tr '\n' ' '
}
no_traces() { t_wait 10 eval '[ -z "$(traces)" ]'; t_is "$1: nothing left (units, cgroups)" "$(traces)" ""; }
t_is "no pagecache scope or cgroup before" "$(traces)" ""

head -c 8388608 /dev/urandom >file
want=$(sha256sum <file)

# run --no-cache -- cat FILE from SHELL-PREFIX...: reads it all, leaves it uncached
try_run() {
	local what=$1 got rc cg
	shift
	drop file
	got=$("$@" bash -c '"$1" run --no-cache -- cat "$2" | sha256sum; echo "rc=${PIPESTATUS[0]}"' _ "$PC" "$T_DIR/file" 2>err)
	t_is "$what: run --no-cache -- cat FILE exits 0, having read it all" "$got" "$want
rc=0"
	[ -s err ] && sed 's/^/# stderr: /' err
	t_is "$what: and leaves none of it cached" "$(cached_pages file)" 0
	# (a list: bash would exec a lone command, and pagecache be alone in the cgroup)
	cg=$("$@" bash -c '"$1" run --no-cache -- cat /proc/self/cgroup; exit $?' _ "$PC" 2>&1)
	t_ok "$what: CMD ran in a scope of pagecache's own ($cg)" \
		grep -qE '^0::/.*\.slice/pagecache-[0-9]+\.scope/pagecache-run-[0-9]+$' <<<"$cg"
	no_traces "$what"
}

# 1. a service's cgroup, shared with the script that runs pagecache (the agent's)
try_run "from a service shared with its script" env
# 2. a login: the session scope holds the shell
try_run "from a session-like scope" systemd-run --quiet --scope --
# 3. delegated, but shared with the shell: not pagecache's to hand on
try_run "from a delegated scope shared with its shell" systemd-run --quiet --scope -p Delegate=yes --

# 4. delegated and pagecache alone in it: nested in as it is, no new scope
cg=$(systemd-run --quiet --scope -p Delegate=yes --unit=pc-own-$$ "$PC" run --no-cache -- cat /proc/self/cgroup 2>&1)
t_ok "alone in a delegated scope: CMD's cgroup is beneath it ($cg)" \
	grep -qE "^0::/.*/pc-own-$$\\.scope/pagecache-run-[0-9]+\$" <<<"$cg"
no_traces "alone in a delegated scope"

# 5. signals: SIGTERM reaches CMD, and the scope still goes
"$PC" run --no-cache -- sh -c 'trap "exit 42" TERM; echo $$ >"$1"; while :; do sleep 0.1; done' _ "$T_DIR/ready" &
rp=$!
T_CLEANUP+=("t_kill $rp")
t_wait 30 test -s ready
kill -TERM $rp; wait $rp; rc=$?
t_is "SIGTERM reaches CMD (exit 42)" "$rc" 42
no_traces "after SIGTERM"

# 6. kill -9 of pagecache: systemd removes the scope once CMD ends too
"$PC" run --no-cache -- sleep 3 &
rp=$!
T_CLEANUP+=("t_kill $rp")
t_wait 30 eval 'systemctl is-active --quiet pagecache-$rp.scope'
t_ok "a run's scope is a unit systemd knows (pagecache-$rp.scope)" systemctl is-active --quiet "pagecache-$rp.scope"
t_ok "delegated" eval '[ "$(systemctl show -P Delegate pagecache-$rp.scope)" = yes ]'
kill -KILL $rp; wait $rp 2>/dev/null
sleep 3
no_traces "after kill -9, once CMD ended"

# 7. the old refusal, where systemd is not asked (the "systemd" fault point)
PAGECACHE_FAULT=systemd:ENOENT "$PC" run --no-cache -- true 2>err; rc=$?
t_is "without systemd's scope, run from a shared cgroup refuses (exit 1)" "$rc" 1
t_ok "saying why" grep -q "other processes share our cgroup" err

# 8. the benches, small
"$PC" bench readtwice --cgroups 2 --duration 0.3 --size 32M --limit 16M --json >rt.json 2>rt.err; rc=$?
t_is "bench readtwice from a shared cgroup exits 0" "$rc" 0
[ "$rc" = 0 ] || sed 's/^/# /' rt.err
t_is "with its 2 cgroups, each limited, on v2" "$(jq -c '[.total.cgroup_version, [.cgroups[].limit_bytes]]' rt.json 2>/dev/null)" '[2,[16777216,16777216]]'
no_traces "bench readtwice"
if [ -w /proc/sys/vm/page-cluster ] && [ -e /sys/kernel/mm/swap/vma_ra_enabled ]; then
	# t-swap's smallest run (emulated guests are slow)
	"$PC" bench swapin --swap-device file --dir "$T_DIR" --workload seq --page-cluster 3 \
		--vma-ra on --runs 1 --working-set 32M --limit 24M --passes 1 --json >sw.json 2>sw.err; rc=$?
	t_is "bench swapin from a shared cgroup exits 0" "$rc" 0
	[ "$rc" = 0 ] || sed 's/^/# /' sw.err
	t_is "on cgroup v2" "$(jq '[.. | objects | .cgroup_version? // empty] | first' sw.json 2>/dev/null)" 2
	no_traces "bench swapin"
else
	t_skip "bench swapin" "no vm.page-cluster or vma_ra_enabled"
fi

# 9. a user: the user's own manager makes the scope (lingering, so it runs)
if id pcscope >/dev/null 2>&1 || useradd -m pcscope 2>/dev/null; then
	T_CLEANUP+=("userdel -r pcscope" "loginctl disable-linger pcscope")
	loginctl enable-linger pcscope
	uid=$(id -u pcscope)
	t_wait 30 systemctl is-active --quiet "user@$uid.service"
fi
if ! id pcscope >/dev/null 2>&1; then
	t_skip "a user's scope" "cannot add a user"
elif ! systemctl is-active --quiet "user@$uid.service"; then
	# (user@.service's PAM stack wants pam_systemd: libpam-systemd, in the image)
	t_skip "a user's scope" "the user's manager did not start (user@$uid.service: $(systemctl is-active "user@$uid.service"))"
else
	out=$(systemd-run --quiet --scope --uid=pcscope -E XDG_RUNTIME_DIR=/run/user/$uid \
		"$PC" run --no-cache -- cat /proc/self/cgroup 2>&1); rc=$?
	t_is "a user, from a session-like scope: run --no-cache exits 0 ($out)" "$rc" 0
	t_ok "in a scope of the user's manager" grep -qE "^0::/user.slice/user-$uid.slice/user@$uid.service/.*pagecache-[0-9]+\\.scope/pagecache-run-[0-9]+\$" <<<"$out"
	no_traces "a user"
	# sudo -u, setpriv: no XDG_RUNTIME_DIR, no DBUS_SESSION_BUS_ADDRESS; the
	# manager's own socket is where it always is
	out=$(setpriv --reuid=pcscope --regid=pcscope --init-groups env -i PATH=/usr/bin:/bin \
		"$PC" run --no-cache -- cat /proc/self/cgroup 2>&1); rc=$?
	t_is "a user, started without XDG_RUNTIME_DIR or a session bus: exits 0 ($out)" "$rc" 0
	t_ok "in a scope of the user's manager" grep -qE "^0::/user.slice/user-$uid.slice/user@$uid.service/.*pagecache-[0-9]+\\.scope/pagecache-run-[0-9]+\$" <<<"$out"
	no_traces "a user without XDG_RUNTIME_DIR"
	# su without -l keeps the caller's XDG_RUNTIME_DIR: another user's
	out=$(setpriv --reuid=pcscope --regid=pcscope --init-groups env -i PATH=/usr/bin:/bin \
		XDG_RUNTIME_DIR=/run/user/0 "$PC" run --no-cache -- cat /proc/self/cgroup 2>&1); rc=$?
	t_is "a user with root's XDG_RUNTIME_DIR: exits 0 ($out)" "$rc" 0
	t_ok "in a scope of the user's manager" grep -qE "^0::/user.slice/user-$uid.slice/user@$uid.service/.*pagecache-[0-9]+\\.scope/pagecache-run-[0-9]+\$" <<<"$out"
	no_traces "a user with another's XDG_RUNTIME_DIR"
fi

# 10. a user without linger, from a real login (su -l: PAM, pam_systemd,
# which starts user@UID.service with the session): run --no-cache beside
# nocache, on the user's own file, a cat, an mmap and a static reader
READER=$(dirname "$PC")/tests/reader
chmod 755 "$T_DIR"
if id pcsess >/dev/null 2>&1 || useradd -m -s /bin/bash pcsess 2>/dev/null; then
	T_CLEANUP+=("userdel -r pcsess" "loginctl terminate-user pcsess")
fi
if ! id pcsess >/dev/null 2>&1; then
	t_skip "a user's login session" "cannot add a user"
else
	suid=$(id -u pcsess)
	loginctl disable-linger pcsess 2>/dev/null
	cp file ufile
	chown pcsess: ufile
	for r in "cat:cat" "mmap:$READER mmap" "static:$READER-static read"; do
		what=${r%%:*} cmd=${r#*:}
		ref=$($cmd ufile | sha256sum)
		drop ufile
		got=$(su -l pcsess -c "$PC run --no-cache -- $cmd $T_DIR/ufile | sha256sum; exit \${PIPESTATUS[0]}" 2>err); rc=$?
		t_is "a user in a login session, run --no-cache $what: exits 0" "$rc" 0
		[ -s err ] && sed 's/^/# stderr: /' err
		t_is "having read it all" "$got" "$ref"
		t_is "and leaves none of it cached" "$(cached_pages ufile)" 0
		if command -v nocache >/dev/null; then
			drop ufile
			got=$(su -l pcsess -c "nocache $cmd $T_DIR/ufile | sha256sum" 2>/dev/null)
			t_is "beside it, nocache $what reads it all" "$got" "$ref"
			c=$(cached_pages ufile)
			if [ "$what" = cat ]; then
				t_is "and leaves none cached" "$c" 0
			else
				t_ok "and leaves it cached ($c pages): LD_PRELOAD does not see it" test "$c" -gt 0
			fi
		else
			t_skip "nocache $what" "nocache is not installed"
		fi
	done
	out=$(su -l pcsess -c "$PC run --no-cache -- cat /proc/self/cgroup" 2>&1)
	t_ok "CMD ran in a scope of the user's manager ($out)" grep -qE "^0::/user.slice/user-$suid.slice/user@$suid.service/.*pagecache-[0-9]+\\.scope/pagecache-run-[0-9]+\$" <<<"$out"
	no_traces "a user's login session"
fi

# 11. a user whose manager is not running (no login, no linger), started
# as sudo -u does: refuses, says what is missing and how to get it, and
# never runs CMD uncontained
if id pcnone >/dev/null 2>&1 || useradd -m -s /bin/bash pcnone 2>/dev/null; then
	T_CLEANUP+=("userdel -r pcnone")
fi
if ! id pcnone >/dev/null 2>&1; then
	t_skip "a user with no manager" "cannot add a user"
else
	nuid=$(id -u pcnone)
	mkdir nb
	chown pcnone: nb
	setpriv --reuid=pcnone --regid=pcnone --init-groups env -i PATH=/usr/bin:/bin \
		"$PC" run --no-cache -- touch "$T_DIR/nb/ran" >out 2>err; rc=$?
	sed 's/^/# stderr: /' err
	t_is "a user with no manager running: exits 1" "$rc" 1
	t_ok "without running CMD" test ! -e nb/ran
	t_ok "saying the manager is not running" grep -q "user@$nuid.service) is not running" err
	t_ok "and how to get one (a login, enable-linger, root)" \
		grep -q "login session starts.*enable-linger pcnone.*as root" err
	no_traces "a user with no manager"
fi
t_done
