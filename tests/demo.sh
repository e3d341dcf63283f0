#!/bin/sh
# make demo: the main job on a sample tree it makes: see what is cached,
# drop it, see it gone, warm it back (verified), see it all back.
set -e
PC=${PAGECACHE:-build/pagecache}
DIR=${DEMO_DIR:-/var/tmp/pagecache-demo}
if [ ! -f "$DIR/.made" ]; then
	echo "# making a sample tree in $DIR: 2000 files of 4-64 KiB and one 256 MiB file"
	mkdir -p "$DIR"
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
run stat --json "$DIR/tree/big.db"
echo
echo "# done; the sample stays in $DIR (rm -rf it when finished)"
