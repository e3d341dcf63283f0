#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t-record-cold.sh: record --cold as root evicts only what the user's last
# recording chose: a snapshot at -o that another user left there, or one
# taken beneath another root than record's --root, or a corrupt one,
# evicts nothing (each says why); a good one evicts its files; and a
# recording that cannot start (tracing refused) evicts nothing.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

if ! t_root || ! { t_cap perfmon || t_cap sys_admin; }; then
	t_skip "record --cold" "needs root with CAP_PERFMON (tracepoints)"
	t_done; exit
fi
mkdir -p app other
mkfile app/f 64
mkfile other/secret 64
warm() { cat "$@" >/dev/null; }

# Each "evicts nothing" is tried up to three times (t_tries): the
# machine's reclaimer took one page of 16 once, which read as an eviction.
# stays FILE: all 16 pages of FILE are there (resident_pages), in got
stays() { got=$(resident_pages "$1" 16); [ "$got" = 16 ]; }

# beneath another root: its files are outside record's --root
other_root() {
	warm other/secret
	pc snapshot -o other.snap --root other other >/dev/null
	pc record --cold --root app -o other.snap -- true >/dev/null 2>other.err
	stays other/secret
}
t_tries 3 other_root
t_is "a snapshot of another root evicts nothing outside --root (try $T_TRY)" "$got" 16
t_ok "  and says why" grep -q "recorded beneath '$T_DIR/other'" other.err

# another user's snapshot at -o chooses nothing
nobodys() {
	warm app/f
	pc snapshot -o nobody.snap --root app app >/dev/null
	chown 65534:65534 nobody.snap
	pc record --cold --root app -o nobody.snap -- true >/dev/null 2>nobody.err
	stays app/f
}
t_tries 3 nobodys
t_is "another user's snapshot at -o evicts nothing (try $T_TRY)" "$got" 16
t_ok "  and says why" grep -q "another user's (uid 65534)" nobody.err

# corrupt: said, not taken for "no recording yet"
warm app/f
pc snapshot -o bad.snap --root app app >/dev/null
truncate -s -3 bad.snap
pc record --cold --root app -o bad.snap -- true >/dev/null 2>bad.err
t_ok "a corrupt snapshot at -o is said to be unreadable" grep -q "cannot read '.*bad.snap'" bad.err
t_ok "  not taken for no recording at all" eval '! grep -q "no recording" bad.err'

# a recording that cannot start evicts nothing (nobody: no CAP_PERFMON)
mkdir -p nb && chown 65534 nb
refused() {
	warm app/f
	nobody_pc record --cold --cold-path "$T_DIR/app" -o nb/x.snap -- true >/dev/null 2>nb.err
	rc=$?
	[ "$rc" != 0 ] && grep -q "cannot record" nb.err || return 0	# not refused: skipped below
	stays app/f
}
t_tries 3 refused
if [ "$rc" != 0 ] && grep -q "cannot record" nb.err; then
	t_is "a recording refused evicts nothing first (try $T_TRY)" "$got" 16
else
	t_skip "a recording refused evicts nothing first" "nobody may trace here (rc $rc)"
fi

# --cold-path: a FIFO is skipped as evict skips it; a link in a tree is not followed
mkfifo fifo
mkdir -p tree && ln -s "$T_DIR/other/secret" tree/link
cold_paths() {
	warm other/secret
	timeout 20 "$PAGECACHE" record --cold --cold-path fifo --cold-path tree -o cp.snap -- true \
		>/dev/null 2>cp.err
	stays other/secret
}
t_tries 3 cold_paths
t_ok "--cold-path on a FIFO: skipped, not a regular file" grep -q "skipping 'fifo': not a regular" cp.err
t_is "  a link in a --cold-path tree is not followed (try $T_TRY)" "$got" 16

# root's own, beneath the same root: its files are evicted
warm app/f
pc snapshot -o good.snap --root app app >/dev/null
pc record --cold --root app -o good.snap --json -- true >good.json 2>good.err
t_is "root's own snapshot beneath --root: its file evicted" \
	"$(jq .total.cold_files good.json) $(cached_pages app/f)" "1 0"
t_done
