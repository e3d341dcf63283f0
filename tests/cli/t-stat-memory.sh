#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Rows stream: the memory of `stat -v` must not grow with the number of
# files listed. Peak RSS (GNU time's %M) of listing 10,000 empty files and
# of listing those and 20,000 more, in the table, JSON pretty and JSON
# short: the second may not be 8 MiB above the first (rows held until the
# end cost about 0.7 KB each: 14 MiB for 20,000; what streaming leaves is
# malloc's arenas, a few MiB), and neither above 64 MiB. Two walking
# threads (-j 2), so the arenas do not vary with the machine's CPUs.
# bench/stat-memory.sh measures 100,000 and 200,000 files.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

if [ ! -x /usr/bin/time ]; then
	t_skip "memory per file" "no GNU time at /usr/bin/time (it measures peak RSS)"
	t_done; exit
fi
if grep -q __asan_init "$PAGECACHE"; then
	t_skip "memory per file" "a sanitized build (ASan's quarantine keeps what is freed)"
	t_done; exit
fi
mkdir a b
(cd a && seq -f f%05g 10000 | xargs touch) && (cd b && seq -f f%05g 20000 | xargs touch)
t_is "30,000 files made" "$(find a b -type f -printf . | wc -c)" 30000

peak() {	# peak KB of pc "$@" into $T_PEAK, its stdout in out
	/usr/bin/time -o rss -f %M "$PAGECACHE" "$@" >out 2>err
	T_PEAK=$(tail -n1 rss)
}
for fmt in "" --json --json=short; do
	peak stat -v -j 2 $fmt a
	small=$T_PEAK
	peak stat -v -j 2 $fmt a b
	large=$T_PEAK
	case $fmt in
	"") got=$(grep -c ' [ab]/f' out) ;;
	--json) got=$(jq '.files | length' out) ;;
	--json=short) got=$(jq -R 'fromjson | select(.files) | 1' out | wc -l) ;;
	esac
	t_is "stat -v ${fmt:-(table)}: every row written" "$got" 30000
	t_ok "stat -v ${fmt:-(table)}: 30,000 files peak ${large} KB, 10,000 ${small} KB: under 8 MiB more" \
		test "$large" -lt $((small + 8192))
	t_ok "stat -v ${fmt:-(table)}: under 64 MiB" test "$large" -lt $((64 * 1024))
done
t_is "the last line of --json=short is the total" "$(tail -n1 out | jq -r 'keys | join(",")')" total
t_done
