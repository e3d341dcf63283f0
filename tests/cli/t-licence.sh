#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The licence split that util-linux uses: libpagecache (lib/, include/)
# and its users' example programs (docs/examples/) under
# LGPL-2.1-or-later, everything else under GPL-2.0-or-later. Every source
# file says which in an SPDX line among its first three lines, and
# the texts named are in LICENSES/.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	t_skip "SPDX lines" "not a git checkout (the file list comes from git ls-files)"
	t_done; exit
fi
wrong= missing= n=0
while IFS= read -r f; do
	case $f in
	*.c | *.h | *.sh | *.[0-9] | Makefile | .ci/run | debian/rules) ;;
	*) continue ;;
	esac
	[ -f "$f" ] || continue
	n=$((n + 1))
	# docs/examples/: programs of the library's users, under the library's licence
	case $f in lib/* | include/* | docs/examples/*) want=LGPL-2.1-or-later ;; *) want=GPL-2.0-or-later ;; esac
	got=$(head -3 "$f" | sed -n 's/.*SPDX-License-Identifier: \([^ ]*\).*/\1/p' | head -1)
	if [ -z "$got" ]; then missing="$missing $f"
	elif [ "$got" != "$want" ]; then wrong="$wrong $f($got)"
	fi
done < <(git ls-files)
t_ok "the tree has source files to check ($n)" test "$n" -gt 50
t_is "every source file has an SPDX line" "${missing:-none}" none
t_is "lib/, include/ and docs/examples/ say LGPL-2.1-or-later, the rest GPL-2.0-or-later" "${wrong:-none}" none
for l in GPL-2.0-or-later LGPL-2.1-or-later; do
	t_ok "LICENSES/$l.txt holds the text" grep -q "GNU .*GENERAL PUBLIC LICENSE" "LICENSES/$l.txt"
done
t_done
