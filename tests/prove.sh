#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prove.sh [PROVE-OPTIONS] PROGRAM...: what `make check` runs instead of bare
# prove. Every program runs under tests/run-one.sh (a time limit), with its
# scratch files in a directory of this run's own (PAGECACHE_TEST_DIR); then
# the skips are counted per program with their reasons, and
# tests/leftovers.sh fails the run if a test left anything behind (mounts,
# devices, swap, cgroups, sysctls, state files, processes, scratch files);
# the last lines of a failed run name what failed (prove's summary scrolls
# away behind the skips).
# Exit status: prove's, or 1 if prove passed but something was left.
set -u
here=$(cd "$(dirname "$0")" && pwd)
meta=$(mktemp -d "${TMPDIR:-/tmp}/pc-prove-XXXXXX") || exit 1
export PAGECACHE_TEST_DIR
PAGECACHE_TEST_DIR=$(mktemp -d "${PAGECACHE_TEST_DIR:-/var/tmp}/pc-check-XXXXXX") || exit 1
chmod 755 "$PAGECACHE_TEST_DIR"	# tests run commands as nobody beneath it
export PC_CHECK_RUN="$$.$(date +%s%N)"	# in every test process's environment
export PC_SKIP_LOG=$meta/skips
: >"$PC_SKIP_LOG"
env -u PC_CHECK_RUN PC_LEFTOVERS_RUN="$PC_CHECK_RUN" "$here/leftovers.sh" record "$meta/before"

prove --exec "$here/run-one.sh" "$@" | tee "$meta/out"
rc=${PIPESTATUS[0]} prove_rc=${PIPESTATUS[0]}

awk -F'\t' '
	{ n[$1]++; if (!(($1, $2) in seen)) { seen[$1, $2] = 1; why[$1] = why[$1] (why[$1] == "" ? "" : "; ") $2 } }
	END {
		for (p in n) { total += n[p]; progs++ }
		if (!total) { print "# skipped: none"; exit }
		printf "# skipped: %d checks in %d programs\n", total, progs; fflush()
		for (p in n) printf "#   %s: %d skipped (%s)\n", p, n[p], why[p] | "sort"
	}' "$PC_SKIP_LOG"
if ! env -u PC_CHECK_RUN PC_LEFTOVERS_RUN="$PC_CHECK_RUN" "$here/leftovers.sh" check "$meta/before"; then
	[ "$rc" = 0 ] && rc=1
fi
# last, where a log cut to its end still shows it: which programs failed
if [ "$rc" != 0 ]; then
	echo "# failed in this run:"
	[ "$prove_rc" = 0 ] && echo "#   the leftovers check (above): every test passed"
	sed -n '/^Test Summary Report/,/^Result:/{/^Test Summary\|^---\|^Result:\|^Files=/d; s/^/#   /; p}' "$meta/out"
fi
rm -rf "$meta"
rmdir "$PAGECACHE_TEST_DIR" 2>/dev/null
exit "$rc"
