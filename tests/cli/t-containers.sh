#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cgroups and run --no-cache: temporary cgroups made and removed by the
# tests (on failure too), pre-cached files left alone, static and mmap
# readers contained, exit status and signals passed through.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)

pc cgroups --json >cg.json 2>cg.err; rc=$?
if [ $rc != 0 ] && grep -q "no memory cgroup controller" cg.err; then
	t_skip "cgroups and run" "no memory cgroup controller here"
	t_done; exit
fi
t_is "cgroups exits 0" "$rc" 0
t_ok "cgroups JSON has rows" test "$(jq '.cgroups | length' cg.json)" -ge 1
for k in path file active_file inactive_file dirty writeback shmem mapped refaults activations limit usage; do
	t_is "cgroup rows have $k" "$(jq "[.cgroups[] | has(\"$k\")] | all" cg.json)" true
done
t_is "rows are sorted by cache" "$(jq '[.cgroups[].file] == ([.cgroups[].file] | sort | reverse)' cg.json)" true
pc cgroups --prom >cg.prom
t_ok "prom names the cgroup" grep -q '^pagecache_cgroups_file_bytes{cgroup="' cg.prom
pc cgroups --root no/such >o 2>e; t_is "an unknown --root exits 1" $? 1

# --pid: a process that maps one file and holds another open
mkfile mapped 1024
mkfile held 1024
bash -c "exec 3<'$T_DIR/held'; exec '$PAGECACHE' lock '$T_DIR/mapped'" >/dev/null 2>&1 &
lp=$!
T_CLEANUP+=("t_kill $lp")
t_wait 10 grep -q "$T_DIR/mapped" /proc/$lp/maps
pc stat --pid $lp --json >pid.json 2>pid.err; rc=$?
t_is "stat --pid exits 0" "$rc" 0
t_ok "it lists the mapped file" jq -e "[.files[].path] | index(\"$T_DIR/mapped\")" pid.json
t_ok "and the file held open" jq -e "[.files[].path] | index(\"$T_DIR/held\")" pid.json
t_ok "and the process's own binary" jq -e '[.files[].path] | map(test("pagecache$")) | any' pid.json
t_is "the mapped (locked) file is fully cached" "$(jq "[.files[] | select(.path==\"$T_DIR/mapped\")][0].cached" pid.json)" 256
# it maps root's libraries too, whose residency the kernel gives only to
# their owner or a writer (CAP_FOWNER, CAP_DAC_OVERRIDE): without, exit 1
if t_cap fowner || t_cap dac_override; then
	pc snapshot -o pid.snap --pid $lp >/dev/null 2>&1; t_is "snapshot --pid works too" $? 0
else
	t_skip "snapshot --pid works too" "needs CAP_FOWNER or CAP_DAC_OVERRIDE: the process maps files not ours (libc), whose residency the kernel refuses"
fi
pc stat --pid 999999999 >o 2>e; t_is "a bad PID is a usage error" $? 2
if ! t_cap sys_admin; then
	pc stat --by-cgroup mapped >o 2>e; t_is "--by-cgroup without CAP_SYS_ADMIN is a usage error" $? 2
fi
pc stat --pid 4000000 >o 2>e; t_is "a PID that does not exist exits 1" $? 1
# each file of a process is held by an fd for the walk: out of fds, say so.
# The process holds 40 files, more than the limit, whatever fds the test
# itself inherited (CI passes fewer than a terminal does).
mkdir many
opens=""
for i in $(seq 40); do printf x >many/$i; opens+=" $((i + 19))<many/$i"; done
bash -c "exec $opens; exec sleep 60" >/dev/null 2>&1 &
hp=$!
T_CLEANUP+=("t_kill $hp")
t_wait 10 eval '[ -e /proc/$hp/fd/59 ] && [ "$(readlink /proc/$hp/exe)" != "$(readlink /proc/$$/exe)" ]'
(ulimit -n 24; "$PAGECACHE" stat --pid $hp --json >nofd.json 2>nofd.err); rc=$?
t_is "out of fds: exit 1" "$rc" 1
t_ok "and each file left out is named" jq -e '[.errors[] | select(.error == "cannot keep" and .reason == "Too many open files")] | length > 0' nofd.json
t_kill $lp

# --pid and a hostile process: it maps a file whose name is so long that a
# fixed-size line buffer splits its maps line, and the piece after the split
# reads as a record of its own naming a victim file (dev and inode are
# public) that it never mapped. The victim must not be listed.
mkfile victim 64
cat >bait.py <<'PY'
import mmap, os, sys, time
tdir, victim, ready = sys.argv[1:4]
vst = os.stat(victim)
with open(os.path.join(tdir, "short"), "wb") as f:
    f.write(b"x" * 4096)
f0 = open(os.path.join(tdir, "short"), "rb")
m0 = mmap.mmap(f0.fileno(), 4096, prot=mmap.PROT_READ)
off = [l.index(tdir) for l in open("/proc/self/maps") if l.rstrip("\n").endswith("/short")][0]
need = 4199 - off          # the forged record starts at byte 4199 of the line
fd, cur = os.open(tdir, os.O_RDONLY | os.O_DIRECTORY), len(tdir)
def sub(name):             # beyond PATH_MAX: one directory at a time
    global fd, cur
    os.mkdir(name, dir_fd=fd)
    fd, cur = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), cur + 1 + len(name)
while need - cur - 2 > 255:
    sub("a" * 200)
sub("b" * (need - cur - 2))
sub("1000-2000 r--p 00000000 %02x:%02x %d " % (os.major(vst.st_dev), os.minor(vst.st_dev), vst.st_ino))
for part in os.path.dirname(victim).strip("/").split("/"):
    sub(part)
bfd = os.open(os.path.basename(victim), os.O_RDWR | os.O_CREAT, 0o600, dir_fd=fd)
os.write(bfd, b"y" * 4096)
m = mmap.mmap(bfd, 4096, prot=mmap.PROT_READ)
open(ready, "w").write("%d\n" % cur)
time.sleep(60)            # until the test kills us
PY
python3 bait.py "$T_DIR" "$T_DIR/victim" "$T_DIR/bait.ready" &
bp=$!
T_CLEANUP+=("t_kill $bp")
t_wait 10 test -s bait.ready
pc stat --pid $bp --json >bait.json 2>bait.err; rc=$?
t_is "stat --pid of a process with a 4 KiB name exits 0" "$rc" 0
t_is "a file the process never mapped is not listed" \
	"$(jq "[.files[].path] | index(\"$T_DIR/victim\")" bait.json)" null
if t_cap sys_admin || t_cap checkpoint_restore; then	# what opening map_files/ needs
	t_ok "the file it maps is (through map_files, its name being too long)" \
		jq -e '[.files[] | select(.size == 4096 and (.path | test("^/proc/[0-9]+/map_files/")))] | length == 1' bait.json
else
	t_skip "the file it maps is (through map_files, its name being too long)" "needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE: opening /proc/PID/map_files"
fi
t_kill $bp

# --pid and an O_PATH fd: it needs only search permission, so a process
# holding one of a file it cannot read does not make that file its own
if t_cap setuid && t_cap setgid && t_cap sys_ptrace && t_have setpriv perl; then
	mkfile secret 64; chmod 600 secret
	mkfile mine 64; chmod 644 mine
	: >opath.ready; chmod 666 opath.ready	# nobody says it is ready there
	# perl (prove's own): O_PATH is 010000000 on Linux
	as_nobody perl -e 'sysopen(A, $ARGV[0], 010000000) or die "O_PATH: $!";
		open(B, "<", $ARGV[1]) or die "open: $!"; open(R, ">>", $ARGV[2]) or die;
		print R "$$\n"; close R; sleep 60' "$T_DIR/secret" "$T_DIR/mine" "$T_DIR/opath.ready" &
	op=$!
	# $! is as_nobody's subshell: perl (setpriv's exec) is the one to kill,
	# or it keeps this script's output open (prove waits) until it ends. Its
	# pid is read from the ready file when cleaning up (it may come late),
	# and the file emptied once it is killed, so no reused pid is hit
	T_CLEANUP+=("t_kill $op" "t_kill \$(cat '$T_DIR/opath.ready' 2>/dev/null)")
	t_wait 10 test -s opath.ready
	pc stat --pid "$(cat opath.ready)" --json >opath.json 2>/dev/null
	t_is "--pid: a file held only O_PATH is not the process's (not listed)" \
		"$(jq "[.files[].path] | index(\"$T_DIR/secret\")" opath.json)" null
	t_is "--pid: a file it opened to read is" \
		"$(jq "[.files[].path] | index(\"$T_DIR/mine\") != null" opath.json)" true
	t_kill $op $(cat opath.ready); : >opath.ready
	# ... nor when it keeps swapping (dup2) that O_PATH fd and a readable
	# one on the same number while root looks (2 in 200 got through once)
	: >race.ready; chmod 666 race.ready
	as_nobody perl -MPOSIX -e 'sysopen(A, $ARGV[0], 010000000) or die;
		open(B, "<", $ARGV[1]) or die; open(R, ">>", $ARGV[2]) or die;
		print R "$$\n"; close R; alarm 600;
		while (1) { POSIX::dup2(fileno(B), 10); POSIX::dup2(fileno(A), 10); }' \
		"$T_DIR/secret" "$T_DIR/mine" "$T_DIR/race.ready" &
	rp=$!
	T_CLEANUP+=("t_kill $rp" "t_kill \$(cat '$T_DIR/race.ready' 2>/dev/null)")
	t_wait 10 test -s race.ready
	# (the alarm only ends it should the test die: 200 looks took over 60 s
	# under a Debian 12 guest's emulation, and the looks after saw nothing)
	# grep, not jq, on each look: jq's start cost 70 ms a look against
	# pagecache's 9 (30 s of make check's each pass); the file held to
	# read, seen in every look by the same pattern, shows it matches
	# (PC_RACE_LOOKS: fewer in the Debian guest, where each look under
	# emulation beside the spinning racer took 0.8 to 3 s: tests/vm/check.sh)
	looks=${PC_RACE_LOOKS:-200}
	[[ $looks =~ ^[1-9][0-9]*$ ]] || looks=200
	leaked=0 seen=0 rpid=$(cat race.ready)
	for i in $(seq "$looks"); do
		pc stat --pid "$rpid" --json >race.json 2>/dev/null
		grep -qF "\"path\": \"$T_DIR/secret\"" race.json && leaked=$((leaked + 1))
		grep -qF "\"path\": \"$T_DIR/mine\"" race.json && seen=$((seen + 1))
	done
	t_is "--pid: an O_PATH fd swapped in and out by dup2 never gets through ($looks looks)" "$leaked" 0
	t_is "and the file it holds to read is seen in every look" "$seen" "$looks"
	t_kill $rp "$rpid"; : >race.ready
	t_ok "the racing process is gone with the check (it held prove's pipe for 10 minutes)" \
		t_gone "$rpid"
else
	t_skip "--pid and O_PATH" "${T_WHY:-}: a process of another user (setpriv, and CAP_SYS_PTRACE to look at it)"
fi

# our own memory cgroup: where run's cgroups must go (others' runs on this host are not ours to count)
MYSELF=$(awk -F: '$2=="memory"{print $3} $1=="0"{print $3}' /proc/self/cgroup | head -1)
MYCG=$(ls -d /sys/fs/cgroup/memory 2>/dev/null || echo /sys/fs/cgroup)${MYSELF%/}
if ! t_writable "$MYCG"; then
	t_skip "run --no-cache" "$T_WHY: run makes memory cgroups beneath our own"
	t_done; exit
fi
if ! t_can_nest; then
	t_skip "run --no-cache" "$T_NEST_WHY"
	t_done; exit
fi
# where run's cgroups go: beneath ours; on v2 under systemd, in a scope
# systemd makes for it (pagecache-PID.scope, delegated) in our unit's slice
if t_systemd_scope; then
	runcg() { echo "$T_SLICE/pagecache-$1.scope/pagecache-run-$1"; }
	run_left() { find "$MYCG" "$T_SLICE" -maxdepth 2 \( -name 'pagecache-run-*' -o -name 'pagecache-*.scope' \) -printf '%f ' 2>/dev/null; }
	CMDCG="^0::${T_SLICE#/sys/fs/cgroup}/pagecache-[0-9]+\.scope/pagecache-run-[0-9]+\$"
else
	runcg() { echo "$MYCG/pagecache-run-$1"; }
	run_left() { find "$MYCG" -maxdepth 1 -name 'pagecache-run-*' -printf '%f ' 2>/dev/null; }
	CMDCG="^(0:|[0-9]+:memory):${MYSELF%/}/pagecache-run-[0-9]+\$"
fi
mkfile pre 16384
mkfile cold 16384
want=$(cat pre cold | cksum)
drop pre cold
cat pre >/dev/null
got=$(pc run --no-cache -- cat pre cold | cksum; echo "rc=${PIPESTATUS[0]}")
t_is "run --no-cache exits with CMD's status, CMD having read both files" "$got" "$want
rc=0"
t_is "a file cached before stays cached" "$(cached_pages pre)" $((16384 * 1024 / PS))
t_is "what CMD brought in is gone" "$(cached_pages cold)" 0
t_wait 10 eval '[ -z "$(run_left)" ]'	# systemd removes an emptied scope a moment after
t_is "no temporary cgroup is left" "$(run_left)" ""
pc run --no-cache -- cat /proc/self/cgroup >cmdcg.txt
t_ok "CMD's cgroup is beneath ours, or in a scope of run's own in our slice" grep -qE "$CMDCG" cmdcg.txt
if [ -z "${T_SLICE:-}" ]; then
	bash -c 'mkdir "$1/pagecache-run-$$" && exec "$2" run --no-cache -- true' _ "$MYCG" "$PAGECACHE"
	t_is "an empty cgroup left with run's name and pid does not stop it" $? 0
else
	t_skip "an empty cgroup left with run's name" "v2 under systemd: run's cgroups go in a scope systemd makes afresh"
fi
pc run --no-cache -- sh -c 'exit 7'; t_is "CMD's exit status comes through" $? 7
pc run --no-cache -- no-such-command-xyz 2>e; t_is "a missing command exits 127" $? 127
# what CMD inherits: no ignored signal, no blocked one, and its status always comes back
(trap '' PIPE CHLD; "$PAGECACHE" run --no-cache -- sh -c 'exit 7'); rc=$?
t_is "CMD's status comes through an inherited ignored SIGCHLD" "$rc" 7
(trap '' PIPE HUP CHLD; "$PAGECACHE" run --no-cache -- grep -E '^Sig(Ign|Blk)' /proc/self/status) >sig.txt
t_is "CMD starts with no signal ignored (not SIGPIPE either)" "$(awk '$1=="SigIgn:"{print $2}' sig.txt)" 0000000000000000
# signals 32 and 33, which the C library keeps to itself, can come ignored too
cat >ign.c <<'C'
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int c, char **v)
{
	struct { void *h; unsigned long f; void *r; unsigned long m; } a = { SIG_IGN, 0, 0, 0 };

	(void)c;
	syscall(SYS_rt_sigaction, 32, &a, 0, 8);
	syscall(SYS_rt_sigaction, 33, &a, 0, 8);
	execvp(v[1], v + 1);
	return 127;
}
C
if cc -o ign ign.c 2>/dev/null; then
	./ign "$PAGECACHE" run --no-cache -- grep -E '^SigIgn' /proc/self/status >sig.txt
	t_is "nor signals 32 and 33" "$(awk '{print $2}' sig.txt)" 0000000000000000
else
	t_skip "signals 32 and 33" "no C compiler"
fi
if command -v python3 >/dev/null; then
	python3 -c 'import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGTERM}); os.execvp(sys.argv[1], sys.argv[1:])' \
		"$PAGECACHE" run --no-cache -- grep -E '^SigBlk' /proc/self/status >sig.txt
	t_is "and none blocked" "$(awk '{print $2}' sig.txt)" 0000000000000000
else
	t_skip "blocked signals" "python3 missing"
fi

# kill -9 of run: CMD and its cgroup stay, noted in a state file; the next
# run ends what is left in it and removes it
"$PAGECACHE" run --no-cache -- sleep 300 >/dev/null 2>&1 &
rp=$!
cg=$(runcg $rp)
T_CLEANUP+=("rmdir '$cg'" "rm -f /run/pagecache/run-$rp.state" "t_kill $rp")
t_wait 10 grep -q . "$cg/cgroup.procs"	# cgroupfs files are all of size 0: test -s waited out its 10 s
sp=$(head -1 "$cg/cgroup.procs" 2>/dev/null)
T_CLEANUP+=("t_kill ${sp:-}")
t_ok "a run notes its cgroup in its state file" grep -qxF "cgroup $cg" "/run/pagecache/run-$rp.state"
kill -KILL $rp; wait $rp 2>/dev/null
t_ok "after kill -9, CMD still runs in its cgroup (pid ${sp:-none})" kill -0 "${sp:-none}"
pc run --no-cache -- true; rc=$?
t_is "the next run exits 0" "$rc" 0
t_ok "and has removed the dead run's cgroup" test ! -d "$cg"
t_ok "and ended what was left running in it" t_wait 10 t_gone "${sp:-none}"
t_ok "and its state file is gone" test ! -e "/run/pagecache/run-$rp.state"
pc run -- true 2>e; t_is "run without --no-cache or --cache-limit exits 2" $? 2

# writes: dirty pages are written, then dropped
pc run --no-cache -- sh -c "head -c 8388608 /dev/urandom > '$T_DIR/written'"
t_is "a file CMD wrote is not left cached" "$(cached_pages written)" 0
t_is "and its data is on disk" "$(stat -c %s written)" 8388608

# an mmap reader and a static binary: out of LD_PRELOAD's reach, not of a cgroup's
# Each reader prints what it read: one that reads nothing cannot pass.
want=$(sha256sum <cold)
drop cold
if t_have python3; then
	got=$(pc run --no-cache -- python3 -c "import hashlib,mmap; f=open('$T_DIR/cold','rb'); m=mmap.mmap(f.fileno(),0,access=mmap.ACCESS_READ); print(hashlib.sha256(m).hexdigest() + '  -')"; echo "rc=$?")
	t_is "an mmap reader under run --no-cache reads the whole file, exit 0" "$got" "$want
rc=0"
	t_is "and leaves nothing" "$(cached_pages cold)" 0
else
	t_skip "mmap reader" "$T_WHY"
fi
cat >reader.c <<'C'
#include <fcntl.h>
#include <unistd.h>
int main(int c, char **v)
{
	char b[65536];
	ssize_t n;
	int fd = open(v[1], O_RDONLY);

	(void)c;
	if (fd < 0)
		return 1;
	while ((n = read(fd, b, sizeof b)) > 0)
		if (write(1, b, (size_t)n) != n)
			return 1;
	return n < 0;
}
C
if cc -static -O2 -o sreader reader.c 2>cc.err; then
	got=$(pc run --no-cache -- ./sreader cold | sha256sum; echo "rc=${PIPESTATUS[0]}")
	t_is "a static reader under run --no-cache reads the whole file, exit 0" "$got" "$want
rc=0"
	t_is "and leaves nothing" "$(cached_pages cold)" 0
else
	t_skip "static reader" "cannot link statically (libc6-dev's libc.a): $(head -1 cc.err)"
fi

# signals reach CMD, and the cgroup goes on that path too
"$PAGECACHE" run --no-cache -- sh -c 'trap "exit 42" TERM; echo $$ >"$1"; while :; do sleep 0.1; done' _ "$T_DIR/term.ready" &
rp=$!
T_CLEANUP+=("t_kill $rp")
t_wait 10 test -s term.ready	# the trap is set
kill -TERM $rp; wait $rp; rc=$?
t_is "SIGTERM is passed to CMD (it exits 42)" "$rc" 42
t_wait 10 eval '[ -z "$(run_left)" ]'
t_is "and no cgroup is left" "$(run_left)" ""

# --cgroup: every process in a memory cgroup (a temporary one)
root=$(ls -d /sys/fs/cgroup/memory 2>/dev/null || echo /sys/fs/cgroup)
self=$(awk -F: '$2=="memory"{print $3} $1=="0"{print $3}' /proc/self/cgroup | head -1)
# beneath ours, or (v2 under systemd, ours a unit's) in a delegated scope made for the test
NOMEMCG=
if t_memcg_parent; then self=$T_MEMCG; else NOMEMCG=1; echo "$T_MEMCG_WHY" >mk.err; fi
CG="$root${self%/}/pc-test-cg-$$"
if [ -z "$NOMEMCG" ] && mkdir "$CG" 2>mk.err; then
	T_CLEANUP+=("rmdir '$CG'")
	bash -c "exec 3<'$T_DIR/held'; echo \$\$ > '$CG/cgroup.procs'; exec sleep 30" &
	sp=$!
	T_CLEANUP+=("t_kill $sp")
	t_wait 10 eval '[ -e /proc/$sp/fd/3 ] && grep -qx "$sp" "$CG/cgroup.procs" && [ "$(readlink /proc/$sp/exe)" != "$(readlink /proc/$$/exe)" ]'
	pc stat --cgroup "${self%/}/pc-test-cg-$$" --json >cgs.json 2>cgs.err; rc=$?
	t_is "stat --cgroup exits 0" "$rc" 0
	t_ok "it lists the file a process in it holds" jq -e "[.files[].path] | index(\"$T_DIR/held\")" cgs.json
	t_kill $sp
	pc stat --cgroup no/such/cg >o 2>e; t_is "an unknown --cgroup exits 1" $? 1

	# attribution: pages read inside the cgroup are charged to it
	# (--by-cgroup reads /proc/kpagecgroup: CAP_SYS_ADMIN)
	if t_cap sys_admin; then
		mkfile owned 4096
		drop owned
		bash -c "echo \$\$ > '$CG/cgroup.procs'; exec dd if='$T_DIR/owned' of=/dev/null bs=1M count=2 iflag=fullblock status=none"
		pc stat --by-cgroup --json owned >own.json 2>own.err; rc=$?
		t_is "stat --by-cgroup exits 0" "$rc" 0
		t_ok "the pages read inside the cgroup are charged to it" \
			jq -e "[.files[0].cgroups[] | select(.path == \"${self%/}/pc-test-cg-$$\") | .cached] | add >= 512" own.json
		t_is "the owners add up to the cached pages" \
			"$(jq '[.files[0].cgroups[].cached] | add' own.json)" "$(jq '.files[0].cached' own.json)"
		# restore --cgroup: the pages land in that cgroup
		cat owned >/dev/null
		pc snapshot -o own.snap owned >/dev/null
		drop owned
		pc restore --cgroup "${self%/}/pc-test-cg-$$" own.snap >/dev/null 2>&1
		pc stat --by-cgroup --json owned >own2.json
		t_is "restore --cgroup charges every restored page to the cgroup" \
			"$(jq "[.files[0].cgroups[] | select(.path == \"${self%/}/pc-test-cg-$$\") | .cached] | add" own2.json)" \
			"$(jq '.files[0].cached' own2.json)"
	else
		t_skip "stat --by-cgroup, and restore --cgroup's charge" "$T_WHY (--by-cgroup reads /proc/kpagecgroup)"
	fi
else
	t_skip "stat --cgroup" "cannot create a memory cgroup here: $(head -1 mk.err)"
fi

# names chosen by others reach every format escaped: a memory cgroup named
# like a JSON fragment, with ESC, a tab and a byte that is not UTF-8 (the
# kernel refuses a newline in a cgroup's name)
EVIL=$'pc-test-x", "cached": 999999}, {"path": "INJ\e[2J\tz\xff'"-$$"
EV="$root${self%/}/$EVIL"
if [ -z "$NOMEMCG" ] && mkdir "$EV" 2>mk.err; then
	T_CLEANUP+=('rmdir "$EV"')
	mkfile evil 256
	drop evil
	EV="$EV" bash -c 'echo $$ >"$EV/cgroup.procs"; exec cat evil >/dev/null'
	pc cgroups --json >ev.json 2>ev.err
	t_ok "cgroups --json stays JSON with a hostile cgroup name" jq -e . ev.json
	t_is "and it is one record" "$(jq '[.cgroups[] | select(.path | test("INJ"))] | length' ev.json)" 1
	t_is "with no forged field" "$(jq '[.cgroups[] | select(has("cached"))] | length' ev.json)" 0
	t_is "the name, escaped where not UTF-8" "$(jq -r '.cgroups[] | select(.path | test("INJ")) | .path | test("x\", \"cached\": 999999}, \\{\"path\": \"INJ\u001b\\[2J\tz\\\\xff-")' ev.json)" true
	t_is "comes back whole in path_bytes" \
		"$(jq -r '.cgroups[] | select(.path | test("INJ")) | .path_bytes' ev.json | base64 -d | od -An -tx1)" \
		"$(printf '%s' "${self%/}/$EVIL" | od -An -tx1)"
	pc cgroups >ev.txt 2>ev.err
	t_is "cgroups for people: no raw control character" "$(LC_ALL=C grep -c '[[:cntrl:]]' ev.txt)" 0
	t_ok "but the name, escaped" grep -qF 'INJ\x1b[2J\tz\xff-' ev.txt
	pc cgroups --prom >ev.prom 2>ev.err
	t_ok "prom escapes the label's quotes" grep -qF 'pc-test-x\", \"cached\": 999999}, {\"path\": \"INJ' ev.prom
	t_is "and writes only UTF-8" "$(LC_ALL=C grep -c $'\xff' ev.prom)" 0
	t_ok "and the byte that is not UTF-8 as the text \\xff, as in JSON" \
		grep -qF $'INJ\e[2J\tz\\\\xff-' ev.prom
	pc stat --by-cgroup --json evil >evs.json 2>evs.err
	t_ok "stat --by-cgroup --json stays JSON" jq -e . evs.json
	if ! t_cap sys_admin; then
		t_skip "stat --by-cgroup with a hostile cgroup name" "$T_WHY (--by-cgroup reads /proc/kpagecgroup)"
	else
	t_is "the owner is one record" "$(jq '[.files[0].cgroups[] | select(.path | test("INJ"))] | length' evs.json)" 1
	t_is "no forged owner" "$(jq '[.files[0].cgroups[] | select(.cached == 999999 or (.path | startswith("INJ")))] | length' evs.json)" 0
	t_is "and it owns the pages read in it" \
		"$(jq '[.files[0].cgroups[] | select(.path | test("INJ")) | .cached] | add' evs.json)" \
		"$(jq '.files[0].cached' evs.json)"
	pc stat --by-cgroup evil >evs.txt 2>evs.err
	t_is "stat --by-cgroup for people: no raw control character" "$(LC_ALL=C grep -c '[[:cntrl:]]' evs.txt)" 0
	fi
	rmdir "$EV"
else
	t_skip "hostile cgroup names" "cannot create a memory cgroup here: $(head -1 mk.err)"
fi

# cgroups nest as deep as a delegated subtree likes: a level must not cost
# a path buffer on the stack (41 levels under a 256 KiB stack crashed)
DEEP="$root${self%/}/pc-test-deep-$$"
rm_deep() {
	local d="$DEEP$(printf '/d%.0s' $(seq 40))"
	while [ "${#d}" -ge "${#DEEP}" ]; do rmdir "$d"; d=${d%/*}; done
}
if [ -z "$NOMEMCG" ] && mkdir -p "$DEEP$(printf '/d%.0s' $(seq 40))" 2>mk.err; then
	T_CLEANUP+=(rm_deep)
	# v2: each level hands memory on to the next (v1's are all memory cgroups)
	if [ "$root" = /sys/fs/cgroup ]; then
		d=$DEEP
		for i in $(seq 40); do echo +memory >"$d/cgroup.subtree_control"; d=$d/d; done 2>/dev/null
	fi
	(ulimit -s 256; "$PAGECACHE" cgroups --json >deep.json 2>deep.err); rc=$?
	t_is "cgroups 41 levels deep on a 256 KiB stack: exit 0" "$rc" 0
	t_is "every level is a row" "$(jq '[.cgroups[] | select(.path | test("pc-test-deep"))] | length' deep.json)" 41
	if t_cap sys_admin; then
		(ulimit -s 256; "$PAGECACHE" stat --by-cgroup held >/dev/null 2>&1); rc=$?
		t_is "stat --by-cgroup too" "$rc" 0
	else
		t_skip "stat --by-cgroup too" "$T_WHY (--by-cgroup reads /proc/kpagecgroup)"
	fi
	(ulimit -s 128; "$PAGECACHE" stat --cgroup "${self%/}/pc-test-deep-$$" --json >deep2.json 2>&1); rc=$?
	t_is "stat --cgroup of it on a 128 KiB stack: exit 0" "$rc" 0
	rm_deep
else
	t_skip "deep cgroups" "cannot create a memory cgroup here: $(head -1 mk.err)"
fi

# --cache-limit: held under the limit while it runs (no OOM: anon is not limited)
drop cold
# CMD reads 16M, then watches its cgroup's cache (up to 10 s) until the
# limiter has brought it under 12M, and prints what it saw last
pc run --cache-limit 8M -- sh -c "cat '$T_DIR/cold' >/dev/null; \
	d=\$(awk -F: '\$2==\"memory\"{print \$3} \$1==\"0\"{print \$3}' /proc/self/cgroup | head -1); \
	for i in \$(seq 100); do \
	  for f in /sys/fs/cgroup/memory\$d/memory.stat /sys/fs/cgroup\$d/memory.stat; do \
	    [ -r \$f ] && c=\$(awk '\$1==\"total_cache\"||\$1==\"file\"{print \$2; exit}' \$f) && break; done; \
	  [ \"\${c:-0}\" -le $((12 * 1024 * 1024)) ] && break; sleep 0.1; done; echo \${c:-none}" >lim.txt
t_ok "--cache-limit 8M: the cache is brought near 8M while CMD runs ($(cat lim.txt) bytes)" test "$(cat lim.txt)" -le $((12 * 1024 * 1024))
t_is "--cache-limit drops it at the end too" "$(cached_pages cold)" 0
# --container: a process's root (here a chroot holding sleep and its
# libraries), paths as it names them, the root named, never /proc/PID
mkdir -p croot/bin croot/data
cp /bin/sleep croot/bin/
for l in $(ldd /bin/sleep | grep -o '/[^ ]*'); do mkdir -p "croot$(dirname "$l")"; cp -L "$l" "croot$l"; done
mkfile croot/data/db 256
if chroot croot /bin/sleep 0 2>/dev/null; then
	chroot croot /bin/sleep 300 &
	cp_pid=$!
	T_CLEANUP+=("t_kill $cp_pid")
	t_wait 10 test "$(readlink /proc/$cp_pid/root)" = "$T_DIR/croot"
	cat croot/data/db >/dev/null
	pc snapshot -o ctr.pcs --container $cp_pid /data >o 2>e; rc=$?
	t_is "snapshot --container PID exits 0" $rc 0
	pc show --json ctr.pcs >ctr.json
	t_is "  the path as the container names it" "$(jq -r '[.files[].path] | join(",")' ctr.json)" data/db
	t_is "  the root named container:PID" "$(jq -r .total.root ctr.json)" "container:$cp_pid"
	drop croot/data/db
	pc restore ctr.pcs >o 2>e; rc=$?
	t_is "restore of it without --container exits 1" $rc 1
	t_ok "  saying to give one" grep -q "say into which with --container" e
	pc restore --container $cp_pid ctr.pcs >o 2>e; rc=$?
	t_is "restore --container PID exits 0" $rc 0
	t_is "  the pages are back, beneath the container's root" "$(resident_pages croot/data/db 64)" 64
	pc restore --container $cp_pid --root / ctr.pcs >o 2>e; rc=$?
	t_is "  --container with --root is a usage error" $rc 2
	t_kill $cp_pid
else
	t_skip "snapshot and restore --container" "cannot chroot here"
fi
pc snapshot -o x.pcs --container 999999999 >o 2>e; rc=$?
t_is "--container of no process exits 1" $rc 1
t_ok "  saying so" grep -q "cannot find container" e
pc snapshot -o x.pcs --container ffffffffffffffff >o 2>e; rc=$?
t_is "--container of no such ID exits 1" $rc 1
t_done
