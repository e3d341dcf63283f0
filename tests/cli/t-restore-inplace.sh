#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# restore of files modified in place (a database's tables, catalogs and
# control file at every checkpoint): restored, their recorded runs clipped
# to their size now; files replaced by others (rename over them, a new file
# on a reused inode number) skipped with the reason; --strict keeps the
# rule that any change of size or mtime skips; the same judged from a
# version 3 snapshot of the same files (mksnap -V 3 -I, as the writers
# before version 4 made them); and a version 1 snapshot (before identities
# were recorded) still restores.
. "$(dirname "$0")/lib.sh"
MKSNAP=${MKSNAP:-$(dirname "$PAGECACHE")/tests/mksnap}
[ -x "$MKSNAP" ] || { echo "Bail out! no mksnap at '$MKSNAP' (make builds it)"; exit 1; }
cd "$T_DIR"
PS=$(getconf PAGESIZE)
N=256				# pages per file
kib=$((N * PS / 1024))

mkdir db
for f in grow over shrink swap same; do mkfile db/$f "$kib"; done
drop db/*
cat db/* >/dev/null
declare -A want
for f in grow over shrink swap same; do want[$f]=$(cached_pages db/$f); done
pc snapshot -o s.snap db >/dev/null; rc=$?
t_is "snapshot exits 0 and writes format version 4" "$rc $(od -An -tu4 -j8 -N4 s.snap | tr -d ' ')" "0 4"
"$MKSNAP" -V 3 -I -r "$T_DIR" s3.snap db/grow db/over db/shrink db/swap db/same

# modified in place: appended to, overwritten, truncated shorter; replaced by rename
head -c $((N * PS)) /dev/urandom >>db/grow
dd if=/dev/urandom of=db/over bs="$PS" seek=10 count=5 conv=notrunc status=none
truncate -s $((N / 4 * PS)) db/shrink
head -c $((N * PS)) /dev/urandom >db/swap.new && mv db/swap.new db/swap
drop db/*
pc restore --dry-run --json s.snap >dry.json 2>/dev/null
t_is "a dry run plans the runs clipped to the sizes now" "$(jq .total.pages dry.json)" \
	$((want[grow] + want[over] + N / 4 + want[same]))
pc restore --root "$T_DIR" --dry-run --json s3.snap >dry3.json 2>/dev/null
t_is "the version 3 snapshot of the same files: the same one skipped, for the same reason" \
	"$(jq -c '[.skipped[] | [(.path | sub(".*/"; "")), .reason]]' dry3.json)" \
	"$(jq -c '[.skipped[] | [(.path | sub(".*/"; "")), .reason]]' dry.json)"
t_is "  and the others restored" "$(jq -c '[.files[].path | sub(".*/"; "")] | sort' dry3.json)" \
	'["grow","over","same","shrink"]'
drop db/*
pc restore --json s.snap >r.json 2>r.err; rc=$?
t_is "exit 1, for the one file replaced alone" "$rc $(jq '.skipped | length' r.json)" "1 1"
got=$(resident_pages db/grow)
t_ok "appended to: its recorded pages are back, not what was appended ($got of ${want[grow]})" \
	test "$got" -ge "${want[grow]}" -a "$got" -le $((want[grow] + 64))
got=$(resident_pages db/over)
t_ok "overwritten in place: restored ($got of ${want[over]})" test "$got" -ge "${want[over]}"
t_is "truncated shorter: the pages inside its size now" "$(resident_pages db/shrink $((N / 4)))" $((N / 4))
t_is "replaced by rename: skipped with its reason, not read" \
	"$(jq -r '.skipped[] | "\(.path): \(.reason)"' r.json) $(cached_pages db/swap)" \
	"$T_DIR/db/swap: replaced (new inode) 0"
t_is "three files counted as modified in place" "$(jq .total.modified r.json)" 3
t_is "one as changed" "$(jq .total.changed r.json)" 1
t_is "the pages wanted are the clipped runs" "$(jq .total.pages r.json)" \
	$((want[grow] + want[over] + N / 4 + want[same]))
pc restore s.snap >h.out 2>h.err
t_ok "people are told of the files modified in place" grep -q "^3 of them modified in place" h.out
t_ok "and of the replaced one on stderr" grep -q "skipping '$T_DIR/db/swap': replaced (new inode)" h.err

# --strict: any change of size or mtime skips, as before
drop db/*
pc restore --strict --json s.snap >st.json 2>/dev/null; rc=$?
t_is "--strict skips every file whose size or mtime changed (exit 1)" \
	"$rc $(jq -r '[.skipped[] | select(.reason == "modified since the snapshot (mtime/size)") | .path | sub(".*/"; "")] | sort | join(" ")' st.json)" \
	"1 grow over shrink swap"
t_is "and reads none of them, but the unchanged file" \
	"$(jq .total.read st.json) $(cached_pages db/grow) $(cached_pages db/over) $(cached_pages db/shrink) $(resident_pages db/same "${want[same]}")" \
	"${want[same]} 0 0 0 ${want[same]}"
pc restore --strict --allow-changed s.snap >o 2>e; rc=$?
t_is "--strict with --allow-changed is a usage error" "$rc $(grep -c 'contradict each other' e)" "2 1"

# a new file on the old one's inode number, with its size and mtime: only
# the generation (or the birth time) tells it from the old one
mkfile db/reuse "$kib"
cat db/reuse >/dev/null
pc snapshot -o reuse.snap db/reuse >/dev/null
ino=$(stat -c %i db/reuse) mt=$(stat -c %.9Y db/reuse)
rm db/reuse
found=
for k in $(seq 1 200); do
	: >db/r.$k
	if [ "$(stat -c %i db/r.$k)" = "$ino" ]; then found=db/r.$k; break; fi
done
[ -n "$found" ] && mv "$found" db/reuse
rm -f db/r.*[0-9]
if [ -n "$found" ]; then
	head -c $((N * PS)) /dev/urandom >db/reuse && touch -m -d "@$mt" db/reuse
	drop db/reuse
	pc restore --json reuse.snap >ru.json 2>/dev/null; rc=$?
	why=$(jq -r '.skipped[0].reason' ru.json)
	case $why in "replaced (new generation)" | "replaced (new birth time)") why="replaced (new generation or birth time)" ;; esac
	t_is "an inode number reused by a new file of the same size and mtime: skipped as replaced, exit 1, not read" \
		"$rc $(cached_pages db/reuse) $why" "1 0 replaced (new generation or birth time)"
else
	t_skip "an inode number reused by a new file" "the filesystem gave none of 200 new files the old number"
fi

# a version 1 snapshot (mksnap -R writes one, without a generation):
# still restored; a file modified since is judged by size and mtime
drop db/same db/over
"$MKSNAP" -R -r "$T_DIR" v1.snap db/same db/over=0+8
v=$(od -An -tu4 -j8 -N4 v1.snap | tr -d ' ')
touch db/over
pc restore --root "$T_DIR" --json v1.snap >v1.json 2>/dev/null; rc=$?
t_is "a version $v snapshot: its unchanged file restored; one modified since, with no generation or birth time recorded, judged by size and mtime and skipped, saying so (exit 1)" \
	"$v $rc $(resident_pages db/same "$N") $(cached_pages db/over) $(jq -r '.skipped[0].reason' v1.json)" \
	"1 1 $N 0 modified since the snapshot (mtime/size; no generation or birth time tells it from a new file)"

t_done
