#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-one.sh PROGRAM: how prove runs each test program (prove --exec): under
# a time limit, so a regression that hangs fails its program instead of the
# whole run (PC_TEST_TIMEOUT seconds, 600 by default; SIGKILL 10 s after
# SIGTERM). Its TAP goes through unchanged; where PC_SKIP_LOG names a file,
# each skip is appended to it as "PROGRAM<TAB>REASON" for prove.sh's summary.
# The exit status is the program's (124 when it ran out of time).
set -o pipefail
prog=$1
limit=${PC_TEST_TIMEOUT:-600}
name=${prog##*/}
timeout -k 10 "$limit" "$prog" | awk -v skiplog="${PC_SKIP_LOG:-}" -v name="$name" '
	{ print; fflush() }
	skiplog != "" && /^ok [0-9]+ .*# [Ss][Kk][Ii][Pp]/ {
		r = $0; sub(/.*# [Ss][Kk][Ii][Pp] */, "", r)
		print name "\t" r >>skiplog; fflush(skiplog)
	}'
rc=$?
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "# $name: killed after ${limit}s (PC_TEST_TIMEOUT): it hung or is far too slow" >&2
	echo "not ok - $name ran out of time (${limit}s)"
fi
exit "$rc"
