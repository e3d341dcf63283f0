#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The systemd units (deploy/systemd/), as make install writes them: in a
# scratch prefix (no DESTDIR), so the program their ExecStart= names exists
# and `systemd-analyze verify` can check it. verify must print nothing at
# all: an unknown key or a bad value is only a warning to it (exit 0), so a
# unit that verify warns about fails here, as the two broken copies at the
# end show. Then the sandbox each unit claims, through `systemd-analyze
# security --offline`, a reason in a comment for each capability kept, and
# the units' own command lines run: the restore template's on a real
# snapshot. Nothing is started (no systemd needed as PID 1).
. "$(dirname "$0")/lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$(dirname "$PAGECACHE")" && pwd)
cd "$T_DIR"

if ! t_have systemd-analyze make jq; then
	t_skip "the systemd units" "$T_WHY"
	t_done; exit
fi
P=$T_DIR/usr U=$T_DIR/units E=$T_DIR/etc
# what make check built, as it is (-o all); the units for this prefix
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$REPO" -o all BUILD="$B" prefix="$P" \
	unitdir="$U" sysconfdir="$E" install >inst.out 2>inst.err
t_is "make install prefix=SCRATCH unitdir= sysconfdir= exits 0" $? 0
mapfile -t units < <(cd "$REPO/deploy/systemd" && ls -- *.in | sed 's/\.in$//')
t_is "the units" "${units[*]}" \
	"pagecache-restore@.service pagecache-snapshot@.service pagecache-snapshot@.timer pagecache.service"
for u in "${units[@]}"; do
	t_ok "$u is installed" test -f "$U/$u"
	t_is "$u has every @path@ put in" "$(grep -c '@[a-z]*@' "$U/$u")" 0
done
t_is "every Exec line runs the installed pagecache (or kill)" \
	"$(grep -h '^Exec' "$U"/* | grep -v "^Exec[A-Za-z]*=$P/bin/pagecache " | grep -v '^ExecReload=/bin/kill ')" ""
t_is "the daemon's config is the installed one" \
	"$(sed -n 's/^ExecStart=.* --config //p' "$U/pagecache.service")" "$E/pagecache/pagecache.conf"
t_ok "the example config is installed" test -f "$E/pagecache/pagecache.conf"
t_is "and has no active line but [daemon]" \
	"$(grep -v '^[[:space:]]*\(#.*\)\?$' "$E/pagecache/pagecache.conf")" "[daemon]"

# verify_clean FILE...: verify exits 0 and says nothing
verify_clean() {
	local out
	out=$(systemd-analyze verify --man=no "$@" 2>&1) || { printf '%s\n' "$out" | sed 's/^/# /' >&2; return 1; }
	[ -z "$out" ] || { printf '%s\n' "$out" | sed 's/^/# /' >&2; return 1; }
}
for u in "${units[@]}"; do
	t_ok "systemd-analyze verify accepts $u, silently" verify_clean "$U/$u"
done
# instances, as `systemctl enable pagecache-restore@mariadb` makes them
mkdir inst
for u in pagecache-restore@.service pagecache-snapshot@.service pagecache-snapshot@.timer; do
	cp "$U/$u" inst/
	ln -s "$u" "inst/${u/@./@pcunits.}"
	t_ok "and its instance ${u/@./@pcunits.}" verify_clean "inst/${u/@./@pcunits.}"
done
t_is "restore@NAME runs before NAME.service, wanted by it, with it" \
	"$(grep -E '^(Before|PartOf|WantedBy|RequiredBy)=' "$U/pagecache-restore@.service" | xargs)" \
	"Before=%i.service PartOf=%i.service WantedBy=%i.service"
t_is "only when NAME's snapshot exists" \
	"$(sed -n 's/^ConditionPathExists=//p' "$U/pagecache-restore@.service")" "%S/pagecache/%i.snap"
t_is "the timer fires every 5 minutes" "$(sed -n 's/^OnUnitActiveSec=//p' "$U/pagecache-snapshot@.timer")" 5min
# OnBootSec= already past when the timer starts elapses at once (systemd.timer(5)):
# `enable --now` on a machine up 5 minutes would snapshot at once
t_is "its first run is 5 minutes after the timer starts (boot, or enable --now), not at once" \
	"$(grep -E '^On[A-Za-z]*Sec=' "$U/pagecache-snapshot@.timer" | xargs)" "OnActiveSec=5min OnUnitActiveSec=5min"
t_is "the daemon is Type=notify" "$(sed -n 's/^Type=//p' "$U/pagecache.service")" notify

# the check can fail: an unknown key (a warning to verify, exit 0), and a
# program that is not there
mkdir bad
sed 's/^Type=notify$/Type=notify\nTimeoutStopSecs=2min/' "$U/pagecache.service" >bad/pagecache.service
t_ok "verify only warns about an unknown key" sh -c 'systemd-analyze verify --man=no bad/pagecache.service 2>&1 | grep -q "Unknown key"'
t_ok "so a unit with one fails the check" eval '! verify_clean bad/pagecache.service 2>/dev/null'
sed "s|$P/bin/pagecache|$P/bin/pagecache-missing|" "$U/pagecache-restore@.service" >bad/pagecache-restore@.service
t_ok "a unit whose program is missing fails it" eval '! verify_clean bad/pagecache-restore@.service 2>/dev/null'

# the sandbox each service claims, as systemd reads it
if ! systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	t_skip "the sandbox" "this systemd-analyze has no security --offline (systemd 250+)"
else
	common=(NoNewPrivileges= ProtectSystem= PrivateMounts= PrivateTmp= PrivateDevices= PrivateNetwork=
		IPAddressDeny= ProtectKernelTunables= ProtectKernelModules= ProtectKernelLogs= ProtectClock=
		ProtectHostname= RestrictNamespaces=~user RestrictNamespaces=~mnt RestrictRealtime=
		RestrictSUIDSGID= LockPersonality= MemoryDenyWriteExecute= SystemCallArchitectures= UMask=
		"RestrictAddressFamilies=~AF_(INET|INET6)" RestrictAddressFamilies=~AF_PACKET
		RestrictAddressFamilies=~AF_NETLINK "RestrictAddressFamilies=~…" SystemCallFilter=~@mount
		SystemCallFilter=~@module SystemCallFilter=~@clock SystemCallFilter=~@swap
		SystemCallFilter=~@reboot SystemCallFilter=~@raw-io SystemCallFilter=~@obsolete
		CapabilityBoundingSet=~CAP_SYS_MODULE CapabilityBoundingSet=~CAP_SYS_RAWIO
		CapabilityBoundingSet=~CAP_NET_ADMIN
		"CapabilityBoundingSet=~CAP_(CHOWN|FSETID|SETFCAP)" CapabilityBoundingSet=~CAP_KILL
		CapabilityBoundingSet=~CAP_SYS_TIME CapabilityBoundingSet=~CAP_BPF CapabilityBoundingSet=~CAP_MKNOD)
	scores=()
	for u in pagecache.service pagecache-restore@.service pagecache-snapshot@.service; do
		systemd-analyze security --offline=yes --json=short "$U/$u" >"sec-$u.json" 2>sec.err
		t_is "systemd-analyze security --offline reads $u" $? 0
		unset_=()
		for s in "${common[@]}"; do
			v=$(jq -r --arg n "$s" '[.[] | select(.name == $n) | .set] | if length == 0 then "absent" else (.[0] | tostring) end' "sec-$u.json")
			[ "$v" = true ] || unset_+=("$s ($v)")
		done
		# none keeps CAP_SETUID or CAP_SETGID (status's peers are judged on
		# what the snapshots recorded, not by becoming them)
		s="CapabilityBoundingSet=~CAP_SET(UID|GID|PCAP)"
		v=$(jq -r --arg n "$s" '[.[] | select(.name == $n) | .set] | if length == 0 then "absent" else (.[0] | tostring) end' "sec-$u.json")
		[ "$v" = true ] || unset_+=("$s ($v)")
		t_is "$u: every setting claimed is in force" "${unset_[*]}" ""
		# the overall exposure, systemd's 0-10 scale (lower is safer)
		score=$(systemd-analyze security --offline=yes --no-pager "$U/$u" 2>/dev/null |
			sed -n 's/^→ Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p')
		echo "# $u: systemd-analyze security --offline=yes: exposure $score"
		scores+=("$score")
		t_ok "$u: exposure $score is at most 3.0 (OK)" awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 3.0) }'
	done
	# docs/service.md's figures are the ones measured (a unit that gains a
	# capability raises its exposure: the doc must say so)
	doc=$(tr '\n' ' ' <"$REPO/docs/service.md" |
		sed -n 's/.*`systemd-analyze security --offline=yes` rates the daemon \([0-9.]*\), `restore@` *\([0-9.]*\) and `snapshot@` \([0-9.]*\).*/\1 \2 \3/p')
	t_is "docs/service.md states the exposures measured (daemon, restore@, snapshot@)" "$doc" "${scores[*]}"
	t_is "the daemon may write cgroupfs (to charge a restore)" \
		"$(jq -r '.[] | select(.name == "ProtectControlGroups=") | .set' sec-pagecache.service.json)" false
fi

# each capability kept has its reason in a comment of its unit, and is
# given (ambient) as well as bounded: SecureBits=noroot gives uid 0 nothing
for u in pagecache.service pagecache-restore@.service pagecache-snapshot@.service; do
	bset=$(sed -n 's/^CapabilityBoundingSet=//p' "$U/$u")
	t_is "$u: AmbientCapabilities= is the bounding set" "$(sed -n 's/^AmbientCapabilities=//p' "$U/$u")" "$bset"
	t_is "$u: uid 0 is given nothing more" "$(sed -n 's/^SecureBits=//p' "$U/$u")" noroot-locked
	noreason=
	for c in $bset; do grep -q "^#.*\b$c\b" "$U/$u" || noreason+=" $c"; done
	t_is "$u: each capability has its reason ($bset)" "$noreason" ""
done
t_is "the daemon keeps what its jobs need, no more" \
	"$(sed -n 's/^CapabilityBoundingSet=//p' "$U/pagecache.service" | tr ' ' '\n' | sort | xargs)" \
	"CAP_DAC_READ_SEARCH CAP_FOWNER CAP_IPC_LOCK CAP_SYS_ADMIN CAP_SYS_PTRACE"

# unit_cmd UNIT NAME STATEDIR: the ExecStart= of UNIT, as systemd would run
# it for instance NAME (%i, %S) with its Environment= defaults ($X split, an
# empty one dropped; ${X} one word)
unit_cmd() {
	local line k v
	line=$(sed -n 's/^ExecStart=//p' "$1")
	line=${line//%i/$2}
	line=${line//%S/$3}
	while IFS='=' read -r k v; do
		line=${line//"\${$k}"/$v}
		line=${line//"\$$k"/$v}
	done < <(sed -n 's/^Environment=//p' "$1")
	echo "$line"
}
if ! t_root; then
	t_skip "the restore unit's command line" "not root (fincore's counts are true only as root)"
elif ! t_have fincore; then
	t_skip "the restore unit's command line" "$T_WHY"
else
	mkdir -p state/pagecache
	mkfile data 1024
	cat data >/dev/null
	want=$(cached_pages data)
	pc snapshot -o state/pagecache/pcunits.snap "$T_DIR/data" >/dev/null 2>&1
	t_is "a snapshot of the data for the unit" $? 0
	drop data
	read -ra cmd <<<"$(unit_cmd "$U/pagecache-restore@.service" pcunits "$T_DIR/state")"
	t_is "the restore unit's command line" "${cmd[*]}" "$P/bin/pagecache restore --quiet $T_DIR/state/pagecache/pcunits.snap"
	"${cmd[@]}" >restore.out 2>restore.err
	t_is "runs, and exits 0" $? 0
	t_is "and brings the pages back" "$(resident_pages data "$want")" "$want"
fi
read -ra cmd <<<"$(unit_cmd "$U/pagecache-snapshot@.service" pcunits "$T_DIR/state")"
t_is "the snapshot unit's command line" "${cmd[*]}" \
	"$P/bin/pagecache snapshot --guard 0.1 --cgroup pcunits.service -o $T_DIR/state/pagecache/pcunits.snap"
# ... run, as the timer would, on a service of one process (a memory cgroup
# NAME.service holding the data open): the snapshot; then, the service
# down, the guard keeps it
CG=
if [ -d /sys/fs/cgroup/memory ]; then CG=/sys/fs/cgroup/memory/pcunits-$$.service
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then CG=/sys/fs/cgroup/pcunits-$$.service; fi
if ! pc --list-options snapshot 2>/dev/null | grep -q -- '--guard'; then
	t_skip "the snapshot unit's command line" "this pagecache has no snapshot --guard yet"
elif ! t_root; then
	t_skip "the snapshot unit's command line" "not root"
elif [ -z "$CG" ] || ! t_writable "${CG%/*}"; then
	t_skip "the snapshot unit's command line" "${T_WHY:-no memory cgroup controller}"
elif ! mkdir "$CG" 2>cg.err; then
	t_skip "the snapshot unit's command line" "cannot make $CG: $(head -1 cg.err)"
else
	T_CLEANUP+=("rmdir '$CG'")
	read -ra cmd <<<"$(unit_cmd "$U/pagecache-snapshot@.service" "pcunits-$$" "$T_DIR/state")"
	mkdir -p state/pagecache
	mkfile svc.dat 256
	cat svc.dat >/dev/null
	(echo "$BASHPID" >"$CG/cgroup.procs" && exec sleep 300) 3<svc.dat &
	svc=$!
	T_CLEANUP+=("t_kill $svc")
	t_wait 10 grep -qx "$svc" "$CG/cgroup.procs"
	"${cmd[@]}" >snap.out 2>snap.err
	rc=$?
	# (the multi-gen LRU: it says, rightly, that active pages are unknown)
	t_mglru && sed -i '/active pages not recorded for [0-9]* files: the multi-gen LRU is on/d' snap.err
	t_is "the snapshot unit's command line runs, and exits 0" "$rc:$(head -c 300 snap.err)" "0:"
	got=$(pc show --json "state/pagecache/pcunits-$$.snap" 2>/dev/null | jq -r '[.files[].path] | join(" ")')
	t_ok "it records the file NAME.service holds open (and the files it maps)" \
		grep -qw -- "${T_DIR#/}/svc.dat" <<<"$got"
	t_kill "$svc"
	"${cmd[@]}" >snap.out 2>snap.err
	t_is "with NAME.service down, it exits 0" "$?" 0
	t_ok "saying it kept the last snapshot" grep -q "^pagecache: kept .*pcunits-$$.snap" snap.err
	t_is "and keeps the last good snapshot" \
		"$(pc show --json "state/pagecache/pcunits-$$.snap" 2>/dev/null | jq -r '[.files[].path] | join(" ")')" "$got"
	# systemd removes a stopped unit's cgroup: each tick while it is down
	# must still exit 0 (a failed unit makes the system "degraded")
	rmdir "$CG"
	"${cmd[@]}" >snap.out 2>snap.err
	t_is "with NAME.service's cgroup gone (systemd removed it), it exits 0" "$?" 0
	t_ok "saying there is nothing to record, and that it kept the snapshot" \
		sh -c 'grep -q "nothing of .pcunits-[0-9]*.service. to record" snap.err && grep -q "^pagecache: kept " snap.err'
	t_is "and the last good snapshot is still there" \
		"$(pc show --json "state/pagecache/pcunits-$$.snap" 2>/dev/null | jq -r '[.files[].path] | join(" ")')" "$got"
	pc snapshot --cgroup "pcunits-$$.service" -o none.snap >snap.out 2>snap.err
	t_is "without --guard, a cgroup that is not there is still a failure (exit 1)" "$?" 1
fi
if ! pc daemon --help >/dev/null 2>&1; then
	t_skip "the example config passes daemon --check" "this pagecache has no daemon command yet"
else
	pc daemon --check --config "$E/pagecache/pagecache.conf" >check.out 2>check.err
	t_is "the example config passes daemon --check" $? 0
fi

# make install keeps an edited config; uninstall takes the units and leaves it
echo "# mine" >>"$E/pagecache/pagecache.conf"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$REPO" -o all BUILD="$B" prefix="$P" \
	unitdir="$U" sysconfdir="$E" install >/dev/null 2>&1
t_is "a second make install keeps the edited config" "$(tail -1 "$E/pagecache/pagecache.conf")" "# mine"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$REPO" -o all BUILD="$B" prefix="$P" \
	unitdir="$U" sysconfdir="$E" uninstall >/dev/null 2>&1
t_is "make uninstall removes the units" "$(ls "$U" 2>/dev/null | xargs)" ""
t_ok "and leaves the edited config" test -f "$E/pagecache/pagecache.conf"
# the units and the .pc in the build tree go back to the default prefix
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$REPO" BUILD="$B" "$B/pagecache.pc" "${units[@]/#/$B/systemd/}" >/dev/null 2>&1
t_done
