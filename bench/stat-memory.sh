#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/stat-memory.sh: peak RSS (GNU time's %M) of `pagecache stat -v` on
# 100,000 and 200,000 empty files in one directory, in the table, JSON
# pretty, JSON short and key=value. Rows stream (src/output/output.c), so the
# figure stays flat; the target (issue 11) is under 64 MiB for 100,000
# files. tests/cli/t-stat-memory.sh checks the same on 30,000 files within
# make check's time. Then the same files named by a list (--files-from
# LIST, and --files0-from - from a pipe), which is read as it is walked:
# its figure should be the tree's, but for the (dev, ino) of each file
# named (20 bytes a slot, the set at most half full), which keeps a file
# named twice to one visit. Needs no root: the files are made (once)
# beneath BENCH_DIR with touch (xargs, not a process per file).
set -euo pipefail
PAGECACHE=${PAGECACHE:-$(cd "$(dirname "$0")/.." && pwd)/build/pagecache}
. "$(dirname "$0")/workdir.sh"
DIR=$(workdir "${BENCH_DIR:-/var/tmp/pagecache-bench}") && DIR=$(workdir "$DIR/stat-memory") ||
	{ echo "bench/stat-memory.sh: choose another BENCH_DIR" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/stat-memory.sh: needs GNU time (/usr/bin/time)" >&2; exit 1; }
for n in 100000 200000; do
	d=$DIR/d$n
	if [ "$(find "$d" -type f -printf . 2>/dev/null | wc -c)" != "$n" ]; then
		rm -rf "$d"
		mkdir "$d"
		(cd "$d" && seq -f f%06g "$n" | xargs touch)
	fi
done
printf '%-8s %-14s %10s\n' files format peak_KiB
for n in 100000 200000; do
	for fmt in table --json --json=short --kv; do
		f=$fmt
		[ "$f" = table ] && f=
		/usr/bin/time -o "$DIR/rss" -f %M "$PAGECACHE" stat -v $f "$DIR/d$n" >/dev/null
		printf '%-8s %-14s %10s\n' "$n" "$fmt" "$(tail -n1 "$DIR/rss")"
	done
	find "$DIR/d$n" -type f >"$DIR/list"
	/usr/bin/time -o "$DIR/rss" -f %M "$PAGECACHE" stat -v --files-from "$DIR/list" >/dev/null
	printf '%-8s %-14s %10s\n' "$n" "--files-from" "$(tail -n1 "$DIR/rss")"
	tr '\n' '\0' <"$DIR/list" | /usr/bin/time -o "$DIR/rss" -f %M "$PAGECACHE" stat -v \
		--files0-from - >/dev/null
	printf '%-8s %-14s %10s\n' "$n" "--files0-from|" "$(tail -n1 "$DIR/rss")"
	rm -f "$DIR/list"
done
