#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Image layer digests (snapshot format version 6, issue 25): a snapshot of
# a container through its overlay records, per file from an image layer,
# the layer's digest; a restore into another container takes a file from a
# layer of the same digest for the same file (another store, other inodes,
# another mtime: another node), and skips one from a layer of another
# digest or from the container's own upper layer, naming both digests.
# The stores are made by the test under $T_DIR: a containers/storage
# graphroot (overlay/ID/diff, overlay/l/ links, overlay-layers/layers.json)
# and a docker root (overlay2/, image/overlay2/layerdb/sha256/); a
# layers.json that is not root's, a link, group-writable or too large
# gives no digest, and the snapshot and restore go on by the other rules.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
cd "$T_DIR"
umask 022	# the stores' files must not be group-writable to count

if ! t_cap sys_admin; then
	t_skip "layer digests" "$T_WHY: mounting an overlay"
	t_done; exit
fi
if ! t_have jq sha256sum; then
	t_skip "layer digests" "$T_WHY"
	t_done; exit
fi
# as t-overlay.sh: an overlay's upper layer cannot be on an overlay
if [ "$(stat -f -c %T "$T_DIR")" = overlayfs ]; then
	if ! t_have mkfs.ext4; then
		t_skip "layer digests" "the scratch directory is on an overlay, and $T_WHY"
		t_done; exit
	fi
	mode=$(stat -c %a "$T_DIR")
	truncate -s 128M "$T_DIR.img"
	mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$T_DIR.img"
	T_CLEANUP+=("cd /; umount '$T_DIR' || umount -l '$T_DIR'; rm -f '$T_DIR.img'")
	mount -o loop "$T_DIR.img" "$T_DIR" && cd "$T_DIR" && rmdir lost+found && chmod "$mode" . ||
		{ t_skip "layer digests" "cannot mount an ext4 for the layers"; t_done; exit; }
fi
PS=$(getconf PAGESIZE)

id() { printf '%s' "$1" | sha256sum | cut -c1-64; }
ID1=$(id one) ID2=$(id two) ID3=$(id one-rebuilt)
D1=sha256:$(id digest-one) D2=sha256:$(id digest-two) D3=sha256:$(id digest-three)
short() { printf 'sha256:%s' "${1:7:12}"; }

# a containers/storage layer: GRAPHROOT ID SHORT
cs_layer() {
	mkdir -p "$1/overlay/$2/diff" "$1/overlay/l" "$1/overlay-layers" &&
		ln -s "../$2/diff" "$1/overlay/l/$3"
}
# layers.json of GRAPHROOT: ID DIGEST pairs
cs_json() {
	local g=$1 sep='' out='['
	shift
	while [ $# -gt 1 ]; do
		out+="$sep{\"id\":\"$1\",\"created\":\"2026-12-03T00:00:00Z\",\"diff-digest\":\"$2\",\"uidset\":[0]}"
		sep=,
		shift 2
	done
	printf '%s]\n' "$out" >"$g/overlay-layers/layers.json"
	chmod 600 "$g/overlay-layers/layers.json"
}
# an overlay at NAME of LOWERDIR, with an upper of its own
mnt() {
	mkdir -p "$1" "$1.u" "$1.w"
	mount -t overlay overlay -o "lowerdir=$2,upperdir=$T_DIR/$1.u,workdir=$T_DIR/$1.w" "$T_DIR/$1" \
		2>mnt.err || return 1
	T_CLEANUP+=("umount -l '$T_DIR/$1'")
}
# the layer digest show records for PATH in SNAP ("none" without one)
layer_of() { pc show --json "$1" | jq -r --arg p "$2" '.files[] | select(.path == $p) | .layer // "none"'; }
# restore's reason for skipping PATH (a path beneath the root), "restored" if it read it
outcome() {
	jq -r --arg p "/$2" '(.skipped[] | select(.path | endswith($p)) | .reason),
		(.files[] | select(.path | endswith($p)) | "restored")' "$1"
}

# node 1: an image of two layers in containers/storage, a container of it
G=$T_DIR/cs
cs_layer "$G" "$ID1" SHORTONE0000000000000000000
cs_layer "$G" "$ID2" SHORTTWO0000000000000000000
cs_layer "$G" "$ID3" SHORTTHREE00000000000000000
mkdir -p "$G/overlay/$ID1/diff/usr/lib" "$G/overlay/$ID1/diff/etc" "$G/overlay/$ID2/diff/usr/bin"
mkfile "$G/overlay/$ID1/diff/usr/lib/libone.so" 64
mkfile "$G/overlay/$ID1/diff/etc/conf" 8
mkfile "$G/overlay/$ID2/diff/usr/bin/tool" 32
# the same files in a layer of another digest (an image rebuilt)
cp -a "$G/overlay/$ID1/diff/." "$G/overlay/$ID3/diff/"
cs_json "$G" "$ID1" "$D1" "$ID2" "$D2" "$ID3" "$D3"
if ! mnt c1 "$G/overlay/l/SHORTTWO0000000000000000000:$G/overlay/l/SHORTONE0000000000000000000"; then
	t_skip "layer digests" "cannot mount an overlay: $(cat mnt.err)"
	t_done; exit
fi
cat c1/usr/lib/libone.so c1/etc/conf c1/usr/bin/tool >/dev/null
mkfile c1/written 4	# the container's own file, in its upper layer
cat c1/written >/dev/null
pc snapshot --root "$T_DIR/c1" -o c1.snap "$T_DIR/c1" >sn.out 2>sn.err; rc=$?
t_is "a snapshot through the container's overlay exits 0" "$rc" 0
t_is "it is format version 6 (layer digests)" "$(od -An -tu1 -j8 -N1 c1.snap | tr -d ' ')" 6
t_is "a file of the lower layer: that layer's digest (l/ link)" "$(layer_of c1.snap usr/lib/libone.so)" "$D1"
t_is "a file of the upper of two lower layers: its digest" "$(layer_of c1.snap usr/bin/tool)" "$D2"
t_is "the container's own file: none" "$(layer_of c1.snap written)" none
t_is "the files are all there" "$(pc show --json c1.snap | jq '.total.files')" 4

# the same image by the other names (ID/diff), in another container
mnt c2 "$G/overlay/$ID2/diff:$G/overlay/$ID1/diff"
pc restore --json -v --root "$T_DIR/c2" c1.snap >r2.json 2>r2.err; rc=$?
# exit 1 in each: the first container's own file is missing, or one is replaced
t_is "restore into another container of the same image exits 1 (its own file is missing)" "$rc" 1
t_is "  a file of the same layer: restored" "$(outcome r2.json usr/lib/libone.so)" restored
t_is "  of the other same layer too" "$(outcome r2.json usr/bin/tool)" restored
t_is "  the first container's own file: missing" "$(outcome r2.json written)" missing

# node 2: another store, the layers unpacked anew (other inodes), one file
# with another mtime: the digest says it is the same file all the same
G2=$T_DIR/node2
cs_layer "$G2" "$ID1" SHORTONE0000000000000000000
cs_layer "$G2" "$ID2" SHORTTWO0000000000000000000
cp -a "$G/overlay/$ID1/diff/." "$G2/overlay/$ID1/diff/"
cp -a "$G/overlay/$ID2/diff/." "$G2/overlay/$ID2/diff/"
touch -d '2001-01-01' "$G2/overlay/$ID1/diff/etc/conf"
cs_json "$G2" "$ID1" "$D1" "$ID2" "$D2"
mnt n2 "$G2/overlay/l/SHORTTWO0000000000000000000:$G2/overlay/l/SHORTONE0000000000000000000"
drop "$G2/overlay/$ID1/diff/usr/lib/libone.so" "$G2/overlay/$ID1/diff/etc/conf"
pc restore --json -v --root "$T_DIR/n2" c1.snap >rn.json 2>rn.err; rc=$?
t_is "restore on another node (other store, other inodes) exits 1 (the same)" "$rc" 1
t_is "  a file of the same layer: restored" "$(outcome rn.json usr/lib/libone.so)" restored
t_is "  one whose mtime differs, of the same layer: restored" "$(outcome rn.json etc/conf)" restored
t_is "  and its pages are back in that node's file" \
	"$(resident_pages "$G2/overlay/$ID1/diff/usr/lib/libone.so" $((65536 / PS)))" $((65536 / PS))
pc restore --json -v --strict --root "$T_DIR/n2" c1.snap >rs.json 2>/dev/null
t_is "  --strict still wants the mtime" "$(outcome rs.json etc/conf)" "modified since the snapshot (mtime/size)"

# the same paths from a layer of another digest: skipped, both digests named
mnt c3 "$G/overlay/l/SHORTTWO0000000000000000000:$G/overlay/l/SHORTTHREE00000000000000000"
pc restore --json -v --root "$T_DIR/c3" c1.snap >r3.json 2>r3.err; rc=$?
t_is "restore into an image with another layer exits 1" "$rc" 1
t_is "  a file of the other layer: replaced, both digests named" "$(outcome r3.json usr/lib/libone.so)" \
	"replaced (layer $(short "$D3") now, $(short "$D1") in the snapshot)"
t_is "  a file of the layer both share: restored" "$(outcome r3.json usr/bin/tool)" restored
t_ok "  and it says why on stderr" grep -q "skipping '$T_DIR/c3/etc/conf': replaced (layer" r3.err

# written in the container: now in its upper layer
printf 'x' >>c1/etc/conf
pc restore --json -v --root "$T_DIR/c1" c1.snap >r1.json 2>/dev/null
t_is "a file written in the container since: replaced, its own layer now" "$(outcome r1.json etc/conf)" \
	"replaced (written in the container: its own layer now, $(short "$D1") in the snapshot)"
t_is "  one not written: restored" "$(outcome r1.json usr/lib/libone.so)" restored
cat c1/etc/conf >/dev/null
pc snapshot --root "$T_DIR/c1" -o c1b.snap "$T_DIR/c1" >/dev/null 2>&1
pc diff --json -v c1.snap c1b.snap >df.json 2>df.err
t_is "pc diff: a file's digest on each side where it has one" \
	"$(jq -r '.files[] | select(.path == "etc/conf" or .path == "usr/bin/tool") |
		"\(.path) \(.old_layer) \(.new_layer)"' df.json | xargs)" \
	"etc/conf $D1 null usr/bin/tool $D2 $D2"

# docker's overlay2: the same layers, digests from the layer database
R=$T_DIR/docker
dk_layer() {	# CACHEID SHORT DIGEST FROM
	local chain
	chain=$(id "chain-$1")
	mkdir -p "$R/overlay2/$1" "$R/overlay2/l" "$R/image/overlay2/layerdb/sha256/$chain"
	cp -a "$4" "$R/overlay2/$1/diff"
	ln -s "../$1/diff" "$R/overlay2/l/$2"
	printf '%s' "$1" >"$R/image/overlay2/layerdb/sha256/$chain/cache-id"
	printf '%s' "$3" >"$R/image/overlay2/layerdb/sha256/$chain/diff"
}
dk_layer "$(id cache-one)" DKONE000000000000000000000 "$D1" "$G/overlay/$ID1/diff"
dk_layer "$(id cache-two)" DKTWO000000000000000000000 "$D2" "$G/overlay/$ID2/diff"
mnt d1 "$R/overlay2/l/DKTWO000000000000000000000:$R/overlay2/l/DKONE000000000000000000000"
pc restore --json -v --root "$T_DIR/d1" c1.snap >rd.json 2>rd.err; rc=$?
t_is "restore of podman's snapshot into docker's overlay2 exits 1 (its own file is missing)" "$rc" 1
t_is "  a file of the same layer (docker's diff ID): restored" "$(outcome rd.json usr/lib/libone.so)" restored
cat d1/usr/bin/tool >/dev/null
pc snapshot --root "$T_DIR/d1" -o d1.snap "$T_DIR/d1/usr" >/dev/null 2>&1
t_is "a snapshot through docker's overlay: the layer database's digest" "$(layer_of d1.snap usr/bin/tool)" "$D2"
pc restore --json -v --root "$T_DIR/c2" d1.snap >rdp.json 2>rdp.err; rc=$?
t_is "  restored into podman's container of the image: exit 0, all of it" \
	"$rc $(outcome rdp.json usr/bin/tool)" "0 restored"
# a layer of docker's whose diff says another digest
printf '%s' "$D3" >"$R/image/overlay2/layerdb/sha256/$(id "chain-$(id cache-one)")/diff"
mnt d2 "$R/overlay2/l/DKTWO000000000000000000000:$R/overlay2/l/DKONE000000000000000000000"
pc restore --json -v --root "$T_DIR/d2" c1.snap >rd2.json 2>/dev/null
t_is "  docker's layer of another digest: replaced" "$(outcome rd2.json usr/lib/libone.so)" \
	"replaced (layer $(short "$D3") now, $(short "$D1") in the snapshot)"

# layers.json that may not decide: no digest, and the other rules decide
J=$G/overlay-layers/layers.json
cp -p "$J" good.json
hostile() {	# NAME: a snapshot and a restore with layers.json as it is now
	pc snapshot --root "$T_DIR/c2" -o h.snap "$T_DIR/c2" >h.out 2>h.err; rc=$?
	t_is "layers.json $1: the snapshot exits 0" "$rc" 0
	t_is "  and records no digest (unknown)" "$(layer_of h.snap usr/lib/libone.so)" none
	pc restore --json -v --root "$T_DIR/c3" c1.snap >h.json 2>/dev/null; rc=$?
	t_is "  a restore goes on: a copy unchanged in size and mtime is restored by the old rules" \
		"$rc $(outcome h.json usr/lib/libone.so)" "1 restored"
}
cat c2/usr/lib/libone.so >/dev/null
chown 65534 "$J"
hostile "not root's"
cp -p good.json "$J"
chmod 660 "$J"
hostile "group-writable"
rm "$J"
cp -p good.json "$T_DIR/elsewhere.json"
ln -s "$T_DIR/elsewhere.json" "$J"
hostile "a symbolic link"
rm "$J"
{ head -c 1 good.json; head -c $((17 * 1024 * 1024)) /dev/zero | tr '\0' ' '; tail -c +2 good.json; } >"$J"
chmod 600 "$J"
hostile "of 17 MiB (past the bound)"
printf '[{"id": 1' >"$J"
hostile "that is not JSON"
cp -p good.json "$J"
pc snapshot --root "$T_DIR/c2" -o h.snap "$T_DIR/c2" >/dev/null 2>&1
t_is "layers.json as it was: the digest again" "$(layer_of h.snap usr/lib/libone.so)" "$D1"
# a link of l/ that points elsewhere than ../ID/diff
rm "$G/overlay/l/SHORTONE0000000000000000000"
ln -s "$G/overlay/$ID1/diff" "$G/overlay/l/SHORTONE0000000000000000000"
mnt c4 "$G/overlay/l/SHORTTWO0000000000000000000:$G/overlay/l/SHORTONE0000000000000000000"
cat c4/usr/lib/libone.so >/dev/null
pc snapshot --root "$T_DIR/c4" -o c4.snap "$T_DIR/c4" >/dev/null 2>&1
t_is "an l/ link not of the form ../ID/diff: no digest" "$(layer_of c4.snap usr/lib/libone.so)" none
t_is "  the other layer's still" "$(layer_of c4.snap usr/bin/tool)" "$D2"

t_done
