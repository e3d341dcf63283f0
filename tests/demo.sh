#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make demo: the main job on a sample tree it makes: see what is cached,
# drop it, see it gone, warm it back (verified), see it all back; then the
# warm-up story: snapshot what a service has cached, drop it, restore it,
# and a database's first queries after a restart (bench warmup --quick).
# The sample stays in DEMO_DIR (default /var/tmp/pagecache-demo) for the
# next run: only in a directory that is the caller's own (bench/workdir.sh),
# so that nobody else can plant a link where root writes.
# A command that fails is shown, and the demo goes on, then exits 1 naming
# it (CI runs `make demo`: a failure must not pass for a demo).
set -e
PC=${PAGECACHE:-build/pagecache}
. "$(dirname "$0")/../bench/workdir.sh"
DIR=$(workdir "${DEMO_DIR:-/var/tmp/pagecache-demo}") || { echo "demo.sh: choose another DEMO_DIR" >&2; exit 1; }
if [ ! -f "$DIR/.made" ]; then
	echo "# making a sample tree in $DIR: 2000 files of 4-64 KiB and one 256 MiB file"
	i=0
	while [ $i -lt 2000 ]; do
		d="$DIR/tree/d$((i % 20))"
		[ -d "$d" ] || mkdir -p "$d"
		head -c $(((i * 7919 % 16 + 1) * 4096)) /dev/urandom >"$d/f$i"
		i=$((i + 1))
	done
	head -c 268435456 /dev/urandom >"$DIR/tree/big.db"
	sync
	touch "$DIR/.made"
fi
FAILED=
run() {
	echo
	echo "\$ pagecache $*"
	s=$(date +%s%N)
	rc=0
	"$PC" "$@" || rc=$?
	e=$(date +%s%N)
	echo "# took $(((e - s) / 1000000)) ms"
	if [ "$rc" != 0 ]; then
		echo "# FAILED: exit $rc"
		FAILED="$FAILED
#   pagecache $* (exit $rc)"
	fi
}
run stat "$DIR/tree"
run evict "$DIR/tree"
run stat "$DIR/tree"
run warm "$DIR/tree"
run stat -v "$DIR/tree/big.db"
run snapshot -o "$DIR/tree.snap" "$DIR/tree"
run evict "$DIR/tree"
run restore "$DIR/tree.snap"
if [ -w /proc/sys/vm/drop_caches ]; then
	run bench warmup --quick
else
	echo "# (bench warmup skipped: it drops the page cache between conditions, and /proc/sys/vm/drop_caches is not writable here)"
fi
echo
echo "# done; the sample stays in $DIR (rm -rf it when finished)"
if [ -n "$FAILED" ]; then
	echo "# demo FAILED:$FAILED" >&2
	exit 1
fi
