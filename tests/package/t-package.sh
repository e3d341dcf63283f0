#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian packages, as `make package-check` runs it (not make check: it
# wants debhelper and lintian, and builds what is committed): a clean clone
# of HEAD, dpkg-buildpackage -us -uc -b, the three packages with what each
# must hold, linked against the distribution's shared libraries, and
# lintian without an error (its tags are printed either way).
. "$(dirname "$0")/../cli/lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$T_DIR"

for tool in git dpkg-buildpackage dh lintian readelf jq; do
	if ! command -v "$tool" >/dev/null; then
		t_skip "the Debian packages" "no $tool (make package-check installs it)"
		t_done; exit
	fi
done
git clone -q "$REPO" src
t_is "a clean clone of HEAD" $? 0
(cd src && dpkg-buildpackage -us -uc -b) >build.log 2>&1
rc=$?
t_is "dpkg-buildpackage -us -uc -b exits 0" "$rc" 0
[ "$rc" = 0 ] || tail -20 build.log | sed 's/^/# /'
v=$(cd src && dpkg-parsechangelog -S Version)
a=$(dpkg-architecture -qDEB_HOST_ARCH)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for p in pagecache libpagecache0 libpagecache-dev; do
	t_ok "$p is built" test -f "${p}_${v}_$a.deb"
	mkdir -p "x/$p" && dpkg-deb -x "${p}_${v}_$a.deb" "x/$p" 2>/dev/null
done
has() { test -e "x/$1/$2" || test -L "x/$1/$2"; }
t_ok "pagecache has the program" has pagecache usr/bin/pagecache
t_ok "and its helper" has pagecache usr/libexec/pagecache/pagecache-bench
t_ok "and the man pages" has pagecache usr/share/man/man1/pagecache-stat.1.gz
t_ok "and the daemon's (8) and its configuration's (5)" sh -c \
	"test -e x/pagecache/usr/share/man/man8/pagecache-daemon.8.gz && test -e x/pagecache/usr/share/man/man5/pagecache.conf.5.gz"
t_ok "and bash completion" has pagecache usr/share/bash-completion/completions/pagecache
t_ok "and zsh completion" has pagecache usr/share/zsh/vendor-completions/_pagecache
for u in pagecache.service pagecache-restore@.service pagecache-snapshot@.service pagecache-snapshot@.timer; do
	t_ok "and the systemd unit $u" has pagecache "lib/systemd/system/$u"
done
t_is "which runs /usr/bin/pagecache with /etc's config" \
	"$(sed -n 's/^ExecStart=//p' x/pagecache/lib/systemd/system/pagecache.service)" \
	"/usr/bin/pagecache daemon --config /etc/pagecache/pagecache.conf"
t_ok "and the daemon's example config" has pagecache etc/pagecache/pagecache.conf
h=usr/share/containers/oci/hooks.d/pagecache.json
t_ok "and the OCI hook, where podman and CRI-O read hooks" has pagecache "$h"
t_is "which is JSON and runs /usr/bin/pagecache hook" \
	"$(jq -r '[.hook.path] + .hook.args[1:] | join(" ")' "x/pagecache/$h" 2>&1)" \
	"/usr/bin/pagecache hook --log /var/log/pagecache-hook.log"
mkdir -p ctl && dpkg-deb -e "pagecache_${v}_$a.deb" ctl 2>/dev/null
t_is "a conffile" "$(cat ctl/conffiles 2>/dev/null)" /etc/pagecache/pagecache.conf
t_ok "the postinst knows the daemon's unit" grep -q "pagecache.service" ctl/postinst
# dh_installsystemd's snippets: "was-enabled defaults to true, so new
# installations run enable" without --no-enable; with it, only a unit the
# admin enabled before (debian-installed and was-enabled) is enabled again
t_ok "and enables it only where the admin did (dh_installsystemd --no-enable)" \
	grep -q "if deb-systemd-helper debian-installed 'pagecache.service'" ctl/postinst
t_ok "never on a first install" sh -c '! grep -q "new installations run enable" ctl/postinst'
t_ok "libpagecache0 has the library" has libpagecache0 "usr/lib/$ma/libpagecache.so.0"
t_ok "libpagecache-dev has the header" has libpagecache-dev usr/include/pagecache.h
t_ok "the .so link" has libpagecache-dev "usr/lib/$ma/libpagecache.so"
t_ok "the static library" has libpagecache-dev "usr/lib/$ma/libpagecache.a"
t_ok "pagecache.pc" has libpagecache-dev "usr/lib/$ma/pkgconfig/pagecache.pc"
t_ok "and pagecache(3)" has libpagecache-dev usr/share/man/man3/pagecache.3.gz
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | xargs; }
lib=$(needed "x/libpagecache0/usr/lib/$ma/libpagecache.so.0")
t_ok "the library takes the distribution's liburing" grep -qw liburing.so.2 <<<"$lib"
t_ok "and zlib" grep -qw libz.so.1 <<<"$lib"
t_ok "pagecache takes libpagecache.so.0" grep -qw libpagecache.so.0 <<<"$(needed x/pagecache/usr/bin/pagecache)"
t_ok "pagecache-bench takes the distribution's SQLite" \
	grep -qw libsqlite3.so.0 <<<"$(needed x/pagecache/usr/libexec/pagecache/pagecache-bench)"
t_ok "pagecache depends on libpagecache0" sh -c "dpkg-deb -f pagecache_${v}_$a.deb Depends | grep -q libpagecache0"

lintian -I --pedantic --fail-on error "pagecache_${v}_$a.changes" >lintian.log 2>&1
rc=$?
sed 's/^/# lintian: /' lintian.log
t_is "lintian reports no error" "$rc" 0
t_done
