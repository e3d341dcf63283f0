#!/bin/sh
# make demo: the main job on a sample tree it makes: see what is cached,
# drop it, see it gone, warm it back (verified), see it all back; then the
# warm-up story: snapshot what a service has cached, drop it, restore it,
# and a database's first queries after a restart (bench warmup --quick).
# The sample stays in DEMO_DIR (default /var/tmp/pagecache-demo) for the
# next run: only in a directory that is the caller's own (bench/workdir.sh),
# so that nobody else can plant a link where root writes.
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
run() {
	echo
	echo "\$ pagecache $*"
	s=$(date +%s%N)
	"$PC" "$@" || true
	e=$(date +%s%N)
	echo "# took $(((e - s) / 1000000)) ms"
}
run stat "$DIR/tree"
run evict "$DIR/tree"
run stat "$DIR/tree"
run warm "$DIR/tree"
run stat -v "$DIR/tree/big.db"
run snapshot -o "$DIR/tree.snap" "$DIR/tree"
run evict "$DIR/tree"
run restore "$DIR/tree.snap"
if [ "$(id -u)" = 0 ]; then
	run bench warmup --quick
else
	echo "# (bench warmup needs root: it drops the page cache between conditions)"
fi
echo
echo "# done; the sample stays in $DIR (rm -rf it when finished)"
