#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# push / pull: a snapshot through an OCI registry (Debian's docker-registry,
# Distribution 2.8, on 127.0.0.1 with its storage in the scratch directory)
# and back, byte for byte, then restored under --root on a "replica"; what
# is not ours refused (a missing tag, a container image, another artifact,
# a corrupt blob, a layer not of its manifest's size or digest, too large)
# with the old -o FILE left as it was; -o onto a link, FIFO or device
# refused; TLS for every registry not on this host (the command line skopeo
# gets, through a fake one), and the environment it gets.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)
MT_LAYER=application/vnd.pagecache.snapshot.v1
MT_CONFIG=application/vnd.pagecache.snapshot.config.v1+json
MT_MANIFEST=application/vnd.oci.image.manifest.v1+json

if ! t_have skopeo docker-registry curl jq; then
	t_skip "push and pull through a registry" "$T_WHY"
	t_done
	exit
fi
# pagecache's private directories go here, so that each check can see none is left
mkdir -m 700 tmp
export TMPDIR=$T_DIR/tmp
tmp_empty() { [ -z "$(ls -A "$T_DIR/tmp")" ]; }

# ---- a registry of our own, on a free port of 127.0.0.1 ----
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
REG_PID=
for try in 1 2 3; do
	PORT=$(free_port)
	mkdir -p reg/store
	cat >reg/config.yml <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $T_DIR/reg/store
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$PORT
EOF
	docker-registry serve reg/config.yml >reg/log 2>&1 &
	REG_PID=$!
	T_CLEANUP+=("t_kill $REG_PID")
	t_wait 20 curl -sf "http://127.0.0.1:$PORT/v2/" && break
	t_kill "$REG_PID"
	REG_PID=
done
if [ -z "$REG_PID" ]; then
	t_is "docker-registry starts on 127.0.0.1" "$(tail -3 reg/log)" "listening"
	t_done
	exit
fi
t_ok "docker-registry answers on 127.0.0.1:$PORT" curl -sf "http://127.0.0.1:$PORT/v2/"
R=127.0.0.1:$PORT

# ---- a snapshot of our own ----
mkdir data
mkfile data/a 256
mkfile data/b 64
drop data/a data/b
dd if=data/a of=/dev/null bs=$PS count=20 status=none
cat data/b >/dev/null
pc snapshot -o s.snap --root "$T_DIR/data" data >/dev/null 2>snap.err
t_ok "a snapshot to push" test -s s.snap
pc show --json s.snap >show.json
want_a=$(jq '.files[] | select(.path == "a") | .pages' show.json)
want_b=$(jq '.files[] | select(.path == "b") | .pages' show.json)
t_ok "it holds a's pages and b's ($want_a, $want_b)" test "${want_a:-0}" -gt 0 -a "${want_b:-0}" -gt 0

# ---- push ----
pc push --json s.snap "$R/pc/db-cache:v1" >push.json 2>push.err; rc=$?
t_is "push exits 0" "$rc" 0
digest=$(jq -r .artifact.digest push.json)
t_ok "push says the manifest's digest ($digest)" grep -qE '^sha256:[0-9a-f]{64}$' <<<"$digest"
t_is "push: the layer's size is the snapshot's" "$(jq .artifact.size push.json)" "$(stat -c %s s.snap)"
t_is "push: the layer's digest is the snapshot's" "$(jq -r .artifact.layer_digest push.json)" \
	"sha256:$(sha256sum s.snap | cut -d' ' -f1)"
t_is "push: plain HTTP allowed for 127.0.0.1" "$(jq .artifact.plain_http_allowed push.json)" true
t_is "push: the snapshot's files and pages" "$(jq -c '[.snapshot.files, .snapshot.pages]' push.json)" \
	"[2,$((want_a + want_b))]"
t_ok "no private directory left" tmp_empty
# what the registry holds, asked without pagecache or skopeo
curl -sf -H "Accept: $MT_MANIFEST" -D man.head "http://$R/v2/pc/db-cache/manifests/v1" >man.json
t_is "the registry's digest is the one push said" \
	"$(tr -d '\r' <man.head | awk 'tolower($1) == "docker-content-digest:" { print $2 }')" "$digest"
t_is "manifest: OCI image manifest" "$(jq -r .mediaType man.json)" "$MT_MANIFEST"
t_is "manifest: artifactType" "$(jq -r .artifactType man.json)" application/vnd.pagecache.snapshot.v1
t_is "manifest: config media type" "$(jq -r .config.mediaType man.json)" "$MT_CONFIG"
t_is "manifest: one layer, ours" "$(jq -r '[.layers[].mediaType] | join(" ")' man.json)" "$MT_LAYER"
t_is "manifest: the layer is titled by the file name" \
	"$(jq -r '.layers[0].annotations["org.opencontainers.image.title"]' man.json)" s.snap
t_is "annotation host" "$(jq -r '.annotations["vnd.pagecache.snapshot.host"]' man.json)" \
	"$(jq -r .total.host show.json)"
t_is "annotation root" "$(jq -r '.annotations["vnd.pagecache.snapshot.root"]' man.json)" "$T_DIR/data"
t_is "annotation created" "$(jq -r '.annotations["vnd.pagecache.snapshot.created"]' man.json)" \
	"$(jq -r .total.created show.json)"
t_is "annotation org.opencontainers.image.created (RFC 3339)" \
	"$(jq -r '.annotations["org.opencontainers.image.created"]' man.json)" \
	"$(date -u -d "@$(jq -r .total.created show.json)" +%Y-%m-%dT%H:%M:%SZ)"
t_is "annotations files, pages, bytes" \
	"$(jq -r '.annotations | [.["vnd.pagecache.snapshot.files"], .["vnd.pagecache.snapshot.pages"], .["vnd.pagecache.snapshot.bytes"]] | join(" ")' man.json)" \
	"2 $((want_a + want_b)) $(((want_a + want_b) * PS))"
cd_=$(jq -r .config.digest man.json)
t_is "the config says what the annotations say" \
	"$(curl -sf "http://$R/v2/pc/db-cache/blobs/$cd_" | jq -c '[.host, .root, .files, .pages]')" \
	"$(jq -c --arg r "$T_DIR/data" '[.total.host, $r, .total.files, .total.pages]' show.json)"

# ---- pull, byte for byte, and restore under --root on a replica ----
pc pull --json "$R/pc/db-cache:v1" -o p.snap >pull.json 2>pull.err; rc=$?
t_is "pull exits 0" "$rc" 0
t_ok "the pulled snapshot is the pushed one, byte for byte" cmp s.snap p.snap
t_is "pulled 0600 (a snapshot says what others' files hold)" "$(stat -c %a p.snap)" 600
t_is "pull: the digest push said" "$(jq -r .artifact.digest pull.json)" "$digest"
t_is "pull: the annotations" "$(jq -r '.annotations["vnd.pagecache.snapshot.root"]' pull.json)" "$T_DIR/data"
t_is "pull: what the snapshot holds" "$(jq -c '[.snapshot.files, .snapshot.pages]' pull.json)" \
	"[2,$((want_a + want_b))]"
pc show --json p.snap >pshow.json; rc=$?
t_is "show reads the pulled snapshot" "$rc" 0
t_is "  the same files and pages" "$(jq -c '[.files[] | [.path, .pages]]' pshow.json)" \
	"$(jq -c '[.files[] | [.path, .pages]]' show.json)"
t_ok "no temporary file left beside it" test -z "$(ls -A | grep -F .p.snap.tmp.)"
t_ok "no private directory left" tmp_empty
pc pull "$R/pc/db-cache@$digest" -o bydigest.snap >/dev/null 2>&1; rc=$?
t_is "pull by digest exits 0" "$rc" 0
t_ok "  the same bytes" cmp s.snap bydigest.snap

# the replica: a copy of the files somewhere else (cp -a keeps size and mtime)
mkdir replica && cp -a data/. replica/ && drop replica/a replica/b
t_is "the replica starts cold" "$(cached_pages replica/a)" 0
pc restore --root "$T_DIR/replica" --json p.snap >rest.json 2>rest.err; rc=$?
t_is "restore --root of the pulled snapshot exits 0" "$rc" 0
t_is "the replica's a: its pages are back" "$(resident_pages replica/a "$want_a")" "$want_a"
t_is "the replica's b: its pages are back" "$(resident_pages replica/b "$want_b")" "$want_b"

# ---- what is not a snapshot is refused; the old FILE stays ----
cp s.snap old.snap
keep() { t_ok "  the old FILE is left as it was" cmp s.snap old.snap
	t_ok "  no temporary file left" test -z "$(ls -A | grep -F .old.snap.tmp.)"
	t_ok "  no private directory left" tmp_empty; }

pc pull "$R/pc/db-cache:nope" -o old.snap >o 2>e; rc=$?
t_is "pull of a missing tag: exit 1" "$rc" 1
t_ok "  says so" grep -q "no such tag" e
keep
pc pull --json "$R/pc/db-cache:nope" -o old.snap >o.json 2>e
t_is "  under --json, the error is JSON" "$(jq -r '.errors[0].error' o.json)" "cannot pull"
pc pull "$R/pc/db-cache:v1" -o new.snap --max-size $(($(stat -c %s s.snap) - 1)) >o 2>e; rc=$?
t_is "pull of more than --max-size: exit 1" "$rc" 1
t_ok "  says so" grep -q "more than --max-size" e
t_ok "  and wrote nothing" test ! -e new.snap

# OCI image layouts made by hand, pushed with skopeo itself
blob() {	# blob DIR FILE: into DIR's blobs; prints its digest
	local d
	d=$(sha256sum "$2" | cut -d' ' -f1)
	cp "$2" "$1/blobs/sha256/$d"
	echo "sha256:$d"
}
mklayout() {	# mklayout DIR CONFIG-MT CONFIG-FILE LAYER-MT LAYER-FILE [ARTIFACT-TYPE]
	local dir=$1 cd ld md
	mkdir -p "$dir/blobs/sha256"
	cd=$(blob "$dir" "$3")
	ld=$(blob "$dir" "$5")
	jq -nj --arg cmt "$2" --arg cd "$cd" --argjson cs "$(stat -c %s "$3")" --arg lmt "$4" \
		--arg ld "$ld" --argjson ls "$(stat -c %s "$5")" --arg at "${6:-}" \
		'{schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json"} +
		 (if $at != "" then {artifactType: $at} else {} end) +
		 {config: {mediaType: $cmt, digest: $cd, size: $cs},
		  layers: [{mediaType: $lmt, digest: $ld, size: $ls}]}' >"$dir/manifest"
	md=$(blob "$dir" "$dir/manifest")
	printf '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
	jq -nj --arg md "$md" --argjson ms "$(stat -c %s "$dir/manifest")" \
		'{schemaVersion: 2, manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json",
		  digest: $md, size: $ms}]}' >"$dir/index.json"
	rm "$dir/manifest"
}
skopush() {	# skopush LAYOUT REF [skopeo options]
	local l=$1 r=$2; shift 2
	skopeo copy --quiet --dest-tls-verify=false "$@" "oci:$l" "docker://$r" 2>skopush.err
}

# a plain container image: an image config and a tar layer
mkdir -p rootfs && echo hello >rootfs/hello && tar -cf layer.tar -C rootfs .
jq -nj --arg d "sha256:$(sha256sum layer.tar | cut -d' ' -f1)" \
	'{architecture: "amd64", os: "linux", config: {}, rootfs: {type: "layers", diff_ids: [$d]}}' >img.json
mklayout image application/vnd.oci.image.config.v1+json img.json \
	application/vnd.oci.image.layer.v1.tar layer.tar
skopush image "$R/pc/image:v1"
t_is "a plain container image is in the registry" "$?" 0
pc pull "$R/pc/image:v1" -o old.snap >o 2>e; rc=$?
t_is "pull of a container image: exit 1" "$rc" 1
t_ok "  says it is a container image, naming its config's media type" \
	grep -q "a container image (config application/vnd.oci.image.config.v1+json" e
keep
skopeo copy --quiet --dest-tls-verify=false --format v2s2 oci:image "docker://$R/pc/image:docker" 2>skopush.err
pc pull "$R/pc/image:docker" -o old.snap >o 2>e; rc=$?
t_is "pull of a Docker image (schema 2): exit 1" "$rc" 1
t_ok "  names its manifest's media type" \
	grep -q "application/vnd.docker.distribution.manifest.v2+json" e
keep

# our config, another layer media type
head -c 2000 /dev/urandom >junk
printf '{}' >empty.json
mklayout wrongmt "$MT_CONFIG" empty.json application/octet-stream s.snap
skopush wrongmt "$R/pc/wrongmt:v1"
pc pull "$R/pc/wrongmt:v1" -o old.snap >o 2>e; rc=$?
t_is "pull of a layer of another media type: exit 1" "$rc" 1
t_ok "  names it" grep -q "its layer is application/octet-stream" e
keep
# our media types, but no snapshot in the layer
mklayout notsnap "$MT_CONFIG" empty.json "$MT_LAYER" junk
skopush notsnap "$R/pc/notsnap:v1"
pc pull "$R/pc/notsnap:v1" -o old.snap >o 2>e; rc=$?
t_is "pull of a layer that is no snapshot: exit 1" "$rc" 1
t_ok "  says it is not a valid snapshot" grep -q "not a valid pagecache snapshot" e
keep
# a snapshot cut short (its header fine): read through before it is written
head -c $(($(stat -c %s s.snap) - 8)) s.snap >cut.snap
mklayout cut "$MT_CONFIG" empty.json "$MT_LAYER" cut.snap
skopush cut "$R/pc/cut:v1"
pc pull "$R/pc/cut:v1" -o old.snap >o 2>e; rc=$?
t_is "pull of a truncated snapshot: exit 1" "$rc" 1
keep
# oras's form: OCI 1.1's empty config, our artifactType: taken
mklayout oras application/vnd.oci.empty.v1+json empty.json "$MT_LAYER" s.snap \
	application/vnd.pagecache.snapshot.v1
skopush oras "$R/pc/oras:v1"
pc pull "$R/pc/oras:v1" -o oras.snap >o 2>e; rc=$?
t_is "pull of the empty-config form (oras push --artifact-type) exits 0" "$rc" 0
t_ok "  the same bytes" cmp s.snap oras.snap

# a corrupt blob in the registry's storage: another snapshot, its bytes flipped
pc snapshot -o s2.snap --root "$T_DIR/data" data/b >/dev/null 2>&1
pc push --json s2.snap "$R/pc/corrupt:v1" >push2.json 2>&1
ld=$(jq -r .artifact.layer_digest push2.json)
data=reg/store/docker/registry/v2/blobs/sha256/${ld:7:2}/${ld:7}/data
t_ok "the registry stores the layer where we look" test -f "$data"
printf 'XXXXXXXX' | dd of="$data" bs=1 seek=40 conv=notrunc status=none
pc pull "$R/pc/corrupt:v1" -o old.snap >o 2>e; rc=$?
t_is "pull of a corrupt blob: exit 1" "$rc" 1
t_ok "  says its digest did not match" grep -q "digest did not match" e
keep

# ---- -o FILE that is no place for it ----
echo precious >target
ln -s target link
pc pull "$R/pc/db-cache:v1" -o link >o 2>e; rc=$?
t_is "pull -o onto a symbolic link: exit 1" "$rc" 1
t_ok "  says it is not written through" grep -q "symbolic link (not written through)" e
t_is "  the link's target is untouched" "$(cat target)" precious
t_ok "  the link is still a link" test -L link
mkfifo fifo
timeout 20 "$PAGECACHE" pull "$R/pc/db-cache:v1" -o fifo >o 2>e; rc=$?
t_is "pull -o onto a FIFO: exit 1 (not opened, no hang)" "$rc" 1
t_ok "  says it is a FIFO" grep -q "it is a FIFO" e
t_ok "  still a FIFO" test -p fifo
pc pull "$R/pc/db-cache:v1" -o /dev/null >o 2>e; rc=$?
t_is "pull -o /dev/null: exit 1" "$rc" 1
t_ok "  says it is a device" grep -q "it is a device" e
t_ok "  /dev/null is still the device" test -c /dev/null

# ---- usage ----
pc pull "pc/db-cache:v1" -o x.snap >o 2>e; rc=$?
t_is "a REF that names no registry: usage error" "$rc" 2
t_ok "  says how to name Docker Hub" grep -q "docker.io/pc/db-cache:v1" e
pc push s.snap "$R/pc/db-cache@$digest" >o 2>e; rc=$?
t_is "push to a digest: usage error" "$rc" 2
pc pull "$R/pc/db-cache:v1" >o 2>e; rc=$?
t_is "pull without -o: usage error" "$rc" 2
pc push junk "$R/pc/junk:v1" >o 2>e; rc=$?
t_is "push of a file that is no snapshot: exit 1" "$rc" 1
t_is "  and nothing is in the registry" \
	"$(curl -s -o /dev/null -w '%{http_code}' -H "Accept: $MT_MANIFEST" "http://$R/v2/pc/junk/manifests/v1")" 404

# ---- TLS and the environment: what a fake skopeo is given ----
mkdir -m 700 fake
cat >fake/skopeo <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$T_DIR/fake/argv"
env >"$T_DIR/fake/env"
echo 'level=fatal msg="fake: connection refused"' >&2
exit 1
EOF
chmod 755 fake/skopeo
fake() { PAGECACHE_SKOPEO=$T_DIR/fake/skopeo SECRET_TOKEN=x "$@"; }
rm -f fake/argv
fake "$PAGECACHE" pull registry.example/team/db-cache:v42 -o f.snap >o 2>e; rc=$?
t_is "pull from a remote registry (fake skopeo): exit 1" "$rc" 1
t_ok "  skopeo was asked" test -s fake/argv
t_ok "  to require TLS (--tls-verify=true)" grep -qx -- "--tls-verify=true" fake/argv
t_ok "  never plain HTTP" sh -c "! grep -q -- '-tls-verify=false' '$T_DIR/fake/argv'"
t_is "  the reference as given" "$(tail -1 fake/argv)" docker://registry.example/team/db-cache:v42
t_ok "  what skopeo said is passed on" grep -q "fake: connection refused" e
t_ok "  with what it means" grep -q "nothing answers" e
t_ok "  its environment lacks ours (SECRET_TOKEN)" sh -c "! grep -q SECRET_TOKEN '$T_DIR/fake/env'"
t_is "  its PATH is the system's" "$(grep '^PATH=' fake/env)" \
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
t_is "  HOME is passed (logins)" "$(grep '^HOME=' fake/env)" "HOME=$HOME"
t_ok "  its TMPDIR is the private directory" grep -q "^TMPDIR=$T_DIR/tmp/pagecache-oci-" fake/env
t_ok "  which is gone" tmp_empty
rm -f fake/argv
fake "$PAGECACHE" push s.snap registry.example/team/db-cache:v42 >o 2>e
t_ok "push to a remote registry: --dest-tls-verify=true" grep -qx -- "--dest-tls-verify=true" fake/argv
t_ok "  never plain HTTP" sh -c "! grep -q -- '-tls-verify=false' '$T_DIR/fake/argv'"
rm -f fake/argv
fake "$PAGECACHE" push s.snap "127.0.0.2:$PORT/pc/x:v1" >o 2>e
t_ok "127.0.0.2 is not this host's name for it: TLS" grep -qx -- "--dest-tls-verify=true" fake/argv
for host in "localhost:$PORT" "[::1]:$PORT"; do
	rm -f fake/argv
	fake "$PAGECACHE" pull "$host/pc/x:v1" -o f.snap >o 2>e
	t_ok "pull from $host: plain HTTP allowed" grep -qx -- "--tls-verify=false" fake/argv
done
chmod 777 fake
fake "$PAGECACHE" pull "$R/pc/db-cache:v1" -o f.snap >o 2>e; rc=$?
t_is "a skopeo in a directory others may write: not run" "$rc" 1
t_ok "  says why" grep -q "may be changed by others" e
chmod 700 fake

# ---- a registry (a fake skopeo) that sends other bytes than its manifest names ----
mklayout lie "$MT_CONFIG" empty.json "$MT_LAYER" s.snap
lie_ld=$(jq -r '.layers[0].digest' "lie/blobs/sha256/$(jq -r '.manifests[0].digest[7:]' lie/index.json)")
cp "lie/blobs/sha256/$(jq -r '.manifests[0].digest[7:]' lie/index.json)" fake/manifest
cat >fake/skopeo <<EOF
#!/bin/sh
case \$1 in
inspect) cat "$T_DIR/fake/manifest" ;;
copy) for a; do last=\$a; done; d=\${last#oci:}; cp -r "$T_DIR/lie" "\$d" ;;
esac
EOF
# other bytes of the same size under the layer's name
printf 'XXXXXXXX' | dd of="lie/blobs/sha256/${lie_ld:7}" bs=1 seek=40 conv=notrunc status=none
fake "$PAGECACHE" pull "$R/pc/lie:v1" -o old.snap >o 2>e; rc=$?
t_is "a layer whose bytes are not its digest's: exit 1" "$rc" 1
t_ok "  says so" grep -q "its layer's digest is sha256:" e
keep
cat s.snap s.snap >"lie/blobs/sha256/${lie_ld:7}"	# more bytes than declared
fake "$PAGECACHE" pull "$R/pc/lie:v1" -o old.snap >o 2>e; rc=$?
t_is "a layer longer than its manifest says: exit 1" "$rc" 1
t_ok "  says so" grep -q "not of the $(stat -c %s s.snap) bytes its manifest says" e
keep

# ---- a registry (a fake skopeo) that sends more than the limit: RLIMIT_FSIZE stops it ----
cat >fake/skopeo <<EOF
#!/bin/sh
case \$1 in
inspect) cat "$T_DIR/fake/manifest" ;;
copy) for a; do last=\$a; done; d=\${last#oci:}; exec head -c 6000000 /dev/zero >"\${d%/layout}/big" ;;
esac
EOF
fake "$PAGECACHE" pull "$R/pc/lie:v1" -o old.snap >o 2>e; rc=$?
t_is "a skopeo that writes 6 MB for a layer of $(stat -c %s s.snap) bytes: exit 1" "$rc" 1
t_ok "  stopped by the file size limit" grep -q "grew past the limit" e
keep

# ---- interrupted: SIGTERM while skopeo runs ----
cat >fake/skopeo <<EOF
#!/bin/sh
echo \$\$ >"$T_DIR/fake/started"
exec sleep 60
EOF
rm -f fake/started
PAGECACHE_SKOPEO=$T_DIR/fake/skopeo "$PAGECACHE" pull "$R/pc/db-cache:v1" -o old.snap >o 2>e &
pull_pid=$!
T_CLEANUP+=("t_kill $pull_pid")
t_wait 20 test -s fake/started
t_ok "a pull waits on skopeo" test -s fake/started
kill -TERM "$pull_pid"
t_wait 20 t_gone "$pull_pid"; wait "$pull_pid"; rc=$?
t_is "SIGTERM ends it, as SIGTERM does" "$rc" 143
sk=$(cat fake/started)
t_wait 20 t_gone "$sk"
t_ok "  skopeo ($sk) was stopped too" t_gone "$sk"
keep

# ---- a registry that never finishes: --timeout, one deadline for every run ----
# a skopeo that trickles its answer forever, with a temporary file in the
# private directory and a child of its own (its process group's)
cat >fake/skopeo <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$T_DIR/fake/argv"
echo \$\$ >"$T_DIR/fake/started"
echo partial >"\$TMPDIR/partial"
sleep 3600 &
echo \$! >"$T_DIR/fake/child"
while :; do printf '{'; sleep 0.2; done
EOF
rm -f fake/started fake/child
T_CLEANUP+=("[ -s '$T_DIR/fake/child' ] && kill \$(cat '$T_DIR/fake/child')")
PAGECACHE_SKOPEO=$T_DIR/fake/skopeo timeout -k 5 20 "$PAGECACHE" pull --timeout 2 "$R/pc/db-cache:v1" \
	-o old.snap >o 2>e; rc=$?
t_is "pull --timeout 2 from a registry that trickles forever: exit 1, by itself" "$rc" 1
t_ok "  the error names the timeout" grep -q "timed out: skopeo inspect had not finished when --timeout 2 s ran out" e
t_ok "  skopeo was told the time left (--command-timeout)" grep -qx -- "--command-timeout" fake/argv
sk=$(cat fake/started 2>/dev/null) ch=$(cat fake/child 2>/dev/null)
t_wait 5 t_gone "${sk:-0}"
t_ok "  skopeo ($sk) is gone" t_gone "${sk:-0}"
t_wait 5 t_gone "${ch:-0}"
t_ok "  and the child it started ($ch), of its process group" t_gone "${ch:-0}"
keep
PAGECACHE_SKOPEO=$T_DIR/fake/skopeo timeout -k 5 20 "$PAGECACHE" pull --json --timeout 1 "$R/pc/db-cache:v1" \
	-o old.snap >o.json 2>e; rc=$?
t_is "  under --json: exit 1, the error JSON" "$rc:$(jq -r '.errors[0].error' o.json)" "1:cannot pull"
t_ok "  naming the timeout" grep -q "when --timeout 1 s ran out" o.json
t_wait 5 t_gone "$(cat fake/child)"
t_ok "  its child gone again" t_gone "$(cat fake/child)"
keep

# the manifest at once after 1.2 s, then a copy that never ends: the copy
# gets what is left of the 3 s, not 3 s of its own
cat >fake/skopeo <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$T_DIR/fake/argv.\$1"
case \$1 in
inspect) sleep 1.2; cat "$T_DIR/fake/manifest" ;;
copy) for a; do last=\$a; done; d=\${last#oci:}; mkdir -p "\$d/blobs/sha256"
	echo \$\$ >"$T_DIR/fake/started"; while :; do printf x >>"\$d/blobs/sha256/part"; sleep 0.2; done ;;
esac
EOF
rm -f fake/started
PAGECACHE_SKOPEO=$T_DIR/fake/skopeo timeout -k 5 20 "$PAGECACHE" pull --timeout 3 "$R/pc/lie:v1" \
	-o old.snap >o 2>e; rc=$?
t_is "a copy that never ends, after a slow manifest: exit 1" "$rc" 1
t_ok "  the error names the copy and the timeout" grep -q "skopeo copy had not finished when --timeout 3 s" e
t_ok "  the copy was given the time left (under 3 s), one deadline for both" \
	grep -qxE -- "[12]s" <(grep -x -A1 -- --command-timeout fake/argv.copy | tail -1)
t_wait 5 t_gone "$(cat fake/started)"
t_ok "  skopeo copy is gone" t_gone "$(cat fake/started)"
keep
rm -f fake/started
cp s.snap before.snap
PAGECACHE_SKOPEO=$T_DIR/fake/skopeo timeout -k 5 20 "$PAGECACHE" push --timeout 1 s.snap "$R/pc/slow:v1" \
	>o 2>e; rc=$?
t_is "push --timeout 1 to a registry that never answers: exit 1" "$rc" 1
t_ok "  the error names the timeout" grep -q "timed out: skopeo copy had not finished when --timeout 1 s" e
t_wait 5 t_gone "$(cat fake/started)"
t_ok "  skopeo copy is gone" t_gone "$(cat fake/started)"
t_ok "  no private directory left" tmp_empty
t_ok "  the snapshot is as it was" cmp s.snap before.snap

# a skopeo that leaves a process of its own session behind, holding its
# stdout, and exits: its answer is taken, the straggler not waited for
cat >fake/skopeo <<EOF
#!/bin/sh
case \$1 in
inspect) setsid sleep 3600 & echo \$! >"$T_DIR/fake/straggler"
	cat "$T_DIR/fake/manifest" ;;
copy) for a; do last=\$a; done; d=\${last#oci:}; cp -r "$T_DIR/lie" "\$d" ;;
esac
EOF
rm -f fake/straggler
T_CLEANUP+=("[ -s '$T_DIR/fake/straggler' ] && kill \$(cat '$T_DIR/fake/straggler')")
PAGECACHE_SKOPEO=$T_DIR/fake/skopeo timeout -k 5 20 "$PAGECACHE" pull --timeout 0 "$R/pc/lie:v1" \
	-o old.snap >o 2>e; rc=$?
t_is "skopeo exits leaving a straggler on its stdout: pull goes on (its layer checked)" \
	"$rc:$(grep -c "not of the $(stat -c %s s.snap) bytes its manifest says" e)" 1:1
[ -s fake/straggler ] && kill "$(cat fake/straggler)" 2>/dev/null
keep

# the default, and none: what skopeo is told
cat >fake/skopeo <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$T_DIR/fake/argv"
exit 1
EOF
rm -f fake/argv
PAGECACHE_SKOPEO=$T_DIR/fake/skopeo "$PAGECACHE" pull "$R/pc/db-cache:v1" -o old.snap >o 2>e
t_ok "pull without --timeout: skopeo gets the default's time left (300 s)" \
	grep -qxE -- "(29[0-9]|300)s" <(grep -x -A1 -- --command-timeout fake/argv | tail -1)
t_ok "  which --help names" grep -q "(default 300; 0: no limit)" <(pc pull --help)
rm -f fake/argv
PAGECACHE_SKOPEO=$T_DIR/fake/skopeo "$PAGECACHE" push --timeout 0 s.snap "$R/pc/x:v1" >o 2>e
t_ok "push --timeout 0: no limit, none given to skopeo" \
	sh -c "test -s '$T_DIR/fake/argv' && ! grep -q -- --command-timeout '$T_DIR/fake/argv'"
for bad in abc -1 1e9 nan ""; do
	pc pull --timeout "$bad" "$R/pc/db-cache:v1" -o x.snap >o 2>e; rc=$?
	t_is "pull --timeout '$bad': usage error" "$rc:$(grep -c -- "--timeout '$bad': seconds, 0 or more" e)" 2:1
done
pc push --timeout -5 s.snap "$R/pc/x:v1" >o 2>e; rc=$?
t_is "push --timeout -5: usage error" "$rc:$(grep -c -- "--timeout '-5': seconds" e)" 2:1

# ---- PAGECACHE_SKOPEO is not read where the run is secure (AT_SECURE) ----
# nobody's own fake is one pagecache runs for nobody, but not for a copy
# with a file capability, which takes skopeo from the system's directories
if t_cap setfcap && t_cap setuid && t_cap setgid && t_have setcap setpriv; then
	mkdir -m 755 fcap && cp "$PAGECACHE" fcap/pc && cp "$PAGECACHE" fcap/plain &&
		chmod 755 "$T_DIR" fcap/pc fcap/plain
	mkdir -m 700 fcap/nb && chown 65534:65534 fcap/nb
	printf '#!/bin/sh\necho ran >"%s"\nexit 1\n' "$T_DIR/fcap/nb/ran" >fcap/nb/skopeo
	chown 65534:65534 fcap/nb/skopeo && chmod 755 fcap/nb/skopeo
	nbpull() { (cd fcap/nb && TMPDIR=$T_DIR/fcap/nb PAGECACHE_SKOPEO=$T_DIR/fcap/nb/skopeo \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$@" pull 127.0.0.1:1/pc/x:v1 -o x.snap) >o 2>e; }
	nbpull "$T_DIR/fcap/plain"
	t_ok "nobody's PAGECACHE_SKOPEO, no capability: run (nobody's own file)" test -e fcap/nb/ran
	t_ok "  its private directory removed" test -z "$(ls fcap/nb | grep pagecache-oci-)"
	rm -f fcap/nb/ran
	if setcap cap_dac_read_search+ep fcap/pc 2>setcap.err; then
		nbpull "$T_DIR/fcap/pc"
		t_ok "  with a file capability (AT_SECURE): not run" test ! -e fcap/nb/ran
	else
		t_skip "PAGECACHE_SKOPEO under AT_SECURE" "setcap failed here: $(head -c 100 setcap.err)"
	fi
else
	t_skip "PAGECACHE_SKOPEO under AT_SECURE" "${T_WHY:-no setcap}"
fi

# ---- skopeo missing: an empty /usr/bin (merged /usr: /bin too), in a mount namespace ----
if t_cap sys_admin && t_have unshare; then
	unshare -m sh -c 'mount --make-rprivate / && mount -t tmpfs none /usr/bin && exec "$@"' sh \
		"$PAGECACHE" pull "$R/pc/db-cache:v1" -o f.snap >o 2>e; rc=$?
	t_is "without skopeo: exit 1" "$rc" 1
	t_ok "  says what to install" grep -q "pagecache pull needs skopeo (Debian: apt install skopeo)" e
else
	t_skip "without skopeo: says what to install" "${T_WHY:-no unshare}"
fi

t_kill "$REG_PID"
t_ok "the registry is gone" t_gone "$REG_PID"
t_done
