#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-one-diag.sh PROGRAM: tests/run-one.sh, and for a C unit test each
# failed check with the diagnostics after it on stderr too, as the CLI
# tests' own helpers do: prove shows stderr without -v, so the log of a
# guest run says what failed, not only how many.
set -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
case $1 in
*.sh) exec "$here/../run-one.sh" "$1" ;;
esac
tap=$(mktemp)
"$here/../run-one.sh" "$1" | tee "$tap"
rc=$?
awk -v name="${1##*/}" '
	/^not ok/ && !/# *TODO/ { p = 1; print "# " name ": " $0; next }
	p && /^#/ { print; next }
	{ p = 0 }' "$tap" >&2
rm -f "$tap"
exit "$rc"
