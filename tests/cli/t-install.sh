#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make install into a staging tree (DESTDIR), as a distribution does: the
# files, libpagecache.so.0's SONAME and exports (what pagecache.h declares,
# nothing of lib/'s internals), an everyday pagecache without SQLite whose
# `bench` still runs through its helper, and a program built through
# pkg-config against the installed library, shared and static.
. "$(dirname "$0")/lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$(dirname "$PAGECACHE")" && pwd)
cd "$T_DIR"

for tool in make cc pkg-config readelf nm; do
	if ! command -v "$tool" >/dev/null; then
		t_skip "make install" "no $tool (make deps, make check install what is needed)"
		t_done; exit
	fi
done
D=$T_DIR/root P=$T_DIR/root/usr/local
# what make check built, as it is (-o all: nothing rebuilt, whatever changed)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$REPO" -o all BUILD="$B" DESTDIR="$D" \
	prefix=/usr/local install >inst.out 2>inst.err
t_is "make install DESTDIR= exits 0" $? 0
for f in bin/pagecache libexec/pagecache/pagecache-bench; do
	t_ok "$f is installed, executable" test -f "$P/$f" -a -x "$P/$f"
done
for f in lib/libpagecache.so.0.1.0 lib/libpagecache.a include/pagecache.h lib/pkgconfig/pagecache.pc \
	share/man/man1/pagecache.1 share/man/man1/pagecache-stat.1 share/man/man3/pagecache.3; do
	t_ok "$f is installed" test -f "$P/$f" -a ! -L "$P/$f"
done
t_is "libpagecache.so.0 links to the library" "$(readlink "$P/lib/libpagecache.so.0")" libpagecache.so.0.1.0
t_is "libpagecache.so (for -lpagecache) links to libpagecache.so.0" "$(readlink "$P/lib/libpagecache.so")" \
	libpagecache.so.0
t_ok "bash completion is installed" test -s "$P/share/bash-completion/completions/pagecache"
t_ok "and is bash" bash -n "$P/share/bash-completion/completions/pagecache"
t_is "zsh completion is installed" "$(head -1 "$P/share/zsh/vendor-completions/_pagecache")" "#compdef pagecache"
for u in pagecache.service pagecache-restore@.service pagecache-snapshot@.service pagecache-snapshot@.timer; do
	t_ok "systemd unit $u is installed" test -f "$P/lib/systemd/system/$u"
done
t_is "and runs the installed program" "$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$P/lib/systemd/system/pagecache.service")" \
	/usr/local/bin/pagecache
t_ok "the daemon's example config is installed" test -f "$P/etc/pagecache/pagecache.conf"
# the OCI hook's definition (oci-hooks(5)): podman and CRI-O run it only for
# a container with the annotation, at createRuntime and poststop
h=$P/share/containers/oci/hooks.d/pagecache.json
t_ok "the OCI hook is installed in \$(datadir)/containers/oci/hooks.d" test -f "$h"
t_is "  it is JSON, and runs the installed program" "$(jq -r .hook.path "$h" 2>&1)" /usr/local/bin/pagecache
t_is "  as pagecache hook, with its log" "$(jq -c .hook.args "$h" 2>&1)" \
	'["pagecache","hook","--log","/var/log/pagecache-hook.log"]'
t_is "  at createRuntime and poststop" "$(jq -c .stages "$h" 2>&1)" '["createRuntime","poststop"]'
t_is "  only when io.pagecache.snapshot is set" "$(jq -c .when "$h" 2>&1)" \
	'{"annotations":{"^io\\.pagecache\\.snapshot$":".+"}}'
t_is "the SONAME is libpagecache.so.0" \
	"$(readelf -d "$P/lib/libpagecache.so.0.1.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" libpagecache.so.0

# exported: exactly the functions pagecache.h declares (lib/'s own pc_*
# helpers, internal.h json.h stats.h, stay hidden)
nm -D --defined-only "$P/lib/libpagecache.so.0.1.0" | awk '{ print $3 }' | sort >exported
t_is "only pc_* symbols are exported" "$(grep -v '^pc_' exported | head -3)" ""
grep -oE '\bpc_[a-z0-9_]+\(' "$REPO/include/pagecache.h" | tr -d '(' | sort -u >declared
t_is "the exports are what pagecache.h declares" "$(comm -3 exported declared | head -5 | tr -d '\t' | xargs)" ""
t_ok "an internal helper is not among them" sh -c '! grep -qx pc_json_parse exported'
# the installed archive holds the library's objects, not the build's own
# helpers (the JSON reader and bench's statistics: libpcinternal.a); the
# JSON reader is in it only inside layers.o (layers.json), its symbols
# local there: nothing links to it
nm --defined-only "$P/lib/libpagecache.a" 2>/dev/null | awk 'NF == 3 { print $3 }' >archived
nm --defined-only "$P/lib/libpagecache.a" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[A-Z]$/ { print $3 }' >linkable
t_ok "libpagecache.a defines the library's functions" grep -qx pc_fd_residency archived
t_is "but neither a JSON reader to link to nor bench's statistics" \
	"$(grep -E '^pc_json' linkable | head -3 | xargs)$(grep -E '^pc_(summarize|welch)' archived | head -3 | xargs)" ""

# the everyday binary carries no SQLite; the helper does
t_ok "pagecache has a symbol table to look in" sh -c "nm '$P/bin/pagecache' | grep -q ' T main\$'"
t_is "pagecache has no sqlite3 symbols" "$(nm "$P/bin/pagecache" | grep -ci sqlite3)" 0
t_ok "pagecache-bench has them (the check can see them)" \
	sh -c "nm '$P/libexec/pagecache/pagecache-bench' | grep -q ' T sqlite3_open_v2\$'"
"$P/bin/pagecache" bench --help >bh.out 2>bh.err
t_is "the installed pagecache bench --help exits 0" $? 0
t_ok "through pagecache-bench" grep -q "^Usage: pagecache bench EXPERIMENT" bh.out
mv "$P/libexec/pagecache/pagecache-bench" helper
if [ -e /usr/local/libexec/pagecache/pagecache-bench ]; then
	t_skip "without its helper, bench says so" "a pagecache-bench is installed in /usr/local/libexec"
else
	"$P/bin/pagecache" bench --help >nh.out 2>nh.err
	t_is "without its helper, bench exits 1" $? 1
	t_ok "naming where it looked" grep -q "pagecache-bench is not installed (looked for .*'$P/libexec/pagecache/pagecache-bench'" nh.err
	"$P/bin/pagecache" bench warmup --json >nj.out 2>/dev/null
	t_is "and with --json, says it in JSON" "$(jq -r '.errors[0].error' nj.out)" "cannot run"
fi
mv helper "$P/libexec/pagecache/pagecache-bench"

# the drop-in personalities: a link named as each tool, off PATH, in
# libexec/pagecache, relative to the program, for a package's
# update-alternatives (docs/compat.md, "Installing the personalities")
pers=$("$P/bin/pagecache" --help | sed -n '/^Drop-in personalities/,/^$/s/^  \([a-z]*\) .*/\1/p' | xargs)
t_is "pagecache --help lists the personalities" "$pers" "vmtouch fincore"
for t in $pers; do
	t_is "libexec/pagecache/$t links to the program, relatively" \
		"$(readlink "$P/libexec/pagecache/$t")" ../../bin/pagecache
	"$P/bin/pagecache" "$t" -h >want.out 2>want.err
	want_rc=$?
	PATH=$P/libexec/pagecache:$PATH "$t" -h >got.out 2>got.err
	t_is "  $t -h through it exits as pagecache $t -h" $? "$want_rc"
	t_ok "  and prints the same" sh -c 'cmp -s want.out got.out && cmp -s want.err got.err'
done
t_ok "nothing named vmtouch or fincore goes into bin" \
	sh -c "! ls '$P/bin/vmtouch' '$P/bin/fincore' 2>/dev/null"

# the .pc follows the prefix of the make that installs it, not the one
# the library was built with (a plain make, then make install prefix=/usr)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$REPO" -o all BUILD="$B" DESTDIR="$T_DIR/root2" \
	prefix=/usr install >inst2.out 2>inst2.err
t_is "make install prefix=/usr after a build for /usr/local writes a .pc for /usr" \
	"$(sed -n 's/^prefix=//p' "$T_DIR/root2/usr/lib/pkgconfig/pagecache.pc")" /usr
# prefix=/usr: a distribution's places, the units where systemd.pc says
if ud=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null) && [ -n "$ud" ]; then :; else ud=/usr/lib/systemd/system; fi
t_is "prefix=/usr puts the units in systemd's unit directory ($ud), running /usr/bin/pagecache" \
	"$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$T_DIR/root2$ud/pagecache.service" 2>&1)" /usr/bin/pagecache
t_is "and the config in /etc, which the unit names" \
	"$(test -f "$T_DIR/root2/etc/pagecache/pagecache.conf" && sed -n 's/^ExecStart=.* --config //p' "$T_DIR/root2$ud/pagecache.service")" \
	/etc/pagecache/pagecache.conf
h=$T_DIR/root2/usr/share/containers/oci/hooks.d/pagecache.json
t_is "and the OCI hook where podman and CRI-O look, running /usr/bin/pagecache" \
	"$(jq -r .hook.path "$h" 2>&1)" /usr/bin/pagecache
t_is "and /usr/libexec/pagecache/vmtouch links to ../../bin/pagecache" \
	"$(readlink "$T_DIR/root2/usr/libexec/pagecache/vmtouch")" ../../bin/pagecache
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$REPO" BUILD="$B" DESTDIR="$T_DIR/root2" \
	prefix=/usr uninstall >uninst.out 2>uninst.err
t_is "make uninstall exits 0" $? 0
t_ok "  and removes the OCI hook" test ! -e "$h"
t_ok "  and the personalities' links" sh -c "! ls '$T_DIR'/root2/usr/libexec/pagecache/* 2>/dev/null"
rm -rf "$T_DIR/root2"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$REPO" -o all BUILD="$B" DESTDIR="$D" \
	prefix=/usr/local "$B/pagecache.pc" "$B"/systemd/* "$B"/oci/* >/dev/null 2>&1

# a program of the library's users, through pkg-config
export PKG_CONFIG_PATH=$P/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
t_is "pkg-config knows pagecache" "$(pkg-config --modversion pagecache)" \
	"$(sed -n 's/^#define PC_VERSION "\(.*\)"/\1/p' "$REPO/include/pagecache.h")"
t_is "its private requirements" "$(pkg-config --print-requires-private pagecache | xargs)" "liburing zlib libtraceevent"
cat >prog.c <<'EOF'
#include <fcntl.h>
#include <inttypes.h>
#include <pagecache.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct pc_residency r;
	struct stat st;
	int fd = open(argv[argc - 1], O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || pc_fd_residency(fd, st.st_size, 0, 0, &r) < 0)
		return 1;
	printf("%s %" PRIu64 " pages\n", PC_VERSION, r.pages);
	return 0;
}
EOF
pg=$(getconf PAGESIZE)
head -c $((3 * pg + 1)) /dev/urandom >data
want="$(pkg-config --modversion pagecache) 4 pages"
san=
readelf -d "$P/lib/libpagecache.so.0.1.0" | grep -q 'libasan' && san="-fsanitize=address,undefined"
# shellcheck disable=SC2046
cc $san -o prog-shared prog.c $(pkg-config --cflags --libs pagecache) 2>cc.err
t_is "a program builds with pkg-config --cflags --libs pagecache" $? 0
t_ok "and needs libpagecache.so.0" sh -c "readelf -d prog-shared | grep -q 'NEEDED.*\[libpagecache.so.0\]'"
t_is "and runs against the installed library" "$(LD_LIBRARY_PATH=$P/lib ./prog-shared data 2>&1)" "$want"
if [ -n "$san" ]; then
	t_skip "a static program" "the library was built with ASan (SANITIZE=1), which links no static program"
else
	# shellcheck disable=SC2046
	cc -static -o prog-static prog.c $(pkg-config --static --cflags --libs pagecache) 2>cc.err
	t_is "a static program builds with pkg-config --static" $? 0
	t_ok "it is static" sh -c "! readelf -d prog-static 2>/dev/null | grep -q NEEDED"
	t_is "and runs" "$(./prog-static data 2>&1)" "$want"
fi
# the example of pagecache(3): snapshot a tree and restore it, a page of C
ex=$REPO/docs/examples/warm-restart.c
# shellcheck disable=SC2046
cc $san -Wall -Werror -o warm-restart "$ex" $(pkg-config --cflags --libs pagecache) 2>cc.err
t_is "docs/examples/warm-restart.c builds with pkg-config" $? 0
mkdir -p tree/d
head -c $((8 * pg)) /dev/urandom >tree/d/a
head -c $((3 * pg)) /dev/urandom >tree/b
cat tree/d/a tree/b >/dev/null
t_ok "it snapshots a tree" sh -c "LD_LIBRARY_PATH=$P/lib ./warm-restart snapshot $T_DIR/tree tree.snap >ex.out"
t_is "  two files, eleven pages" "$(cat ex.out)" "snapshot: 2 files, 11 pages"
drop tree/d/a tree/b
t_ok "it restores them" sh -c "LD_LIBRARY_PATH=$P/lib ./warm-restart restore tree.snap >ex.out"
t_is "  saying what it read" "$(cat ex.out)" "restore: 11 pages wanted, 0 cached before, 11 read"
t_is "  and they are cached" "$(($(cached_pages tree/d/a) + $(cached_pages tree/b)))" 11
drop tree/d/a tree/b
t_ok "a budget of 4 pages stops it there" sh -c "LD_LIBRARY_PATH=$P/lib ./warm-restart restore tree.snap '' $((4 * pg)) >ex.out; [ \$? = 1 ]"
t_ok "  saying so" grep -q 'stopped at the budget' ex.out

t_done
