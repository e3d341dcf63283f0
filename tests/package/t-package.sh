#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian packages, as `make package-check` runs it (not make check: it
# wants debhelper and lintian, and builds what is committed): a clean clone
# of HEAD, dpkg-buildpackage -us -uc -b, the three packages with what each
# must hold, linked against the distribution's shared libraries, the
# vmtouch and fincore alternatives installed and removed beside the real
# tools (as root: in an overlay of this host's root, installs() says how),
# and lintian without an error (its tags are printed either way).
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

# Installing: the packages go into a root that is an overlay of this
# Debian host's own (its dpkg database, update-alternatives and libraries;
# writes go to a tmpfs) in a mount namespace of their own, held by a
# process that nsenter joins; nothing reaches the host's /usr or /etc, and
# all of it goes when that process is killed. /run is empty there, so the
# postinst asks no systemd to do anything, and policy-rc.d forbids every
# start (vmtouch's package has a daemon), as in any chroot; man-db's
# trigger is off (minutes of mandb, for nothing). The real vmtouch comes from
# apt's cache (or apt-get download): dpkg -i in that root, offline.
installs() {
	local why='' deb ns rc
	if ! t_root; then why="not root (dpkg in an overlay of / needs mounts)"
	elif ! command -v unshare >/dev/null || ! command -v nsenter >/dev/null; then why="no unshare or nsenter (util-linux)"
	elif ! dpkg-query -W -f='${Status}' dpkg 2>/dev/null | grep -q installed; then why="this host has no dpkg database to overlay"
	elif ! grep -qw overlay /proc/filesystems && ! modprobe overlay 2>/dev/null; then why="no overlayfs"
	fi
	if [ -n "$why" ]; then
		t_skip "installing the package: the alternatives" "$why"
		return
	fi
	deb=$(ls /var/cache/apt/archives/vmtouch_*_"$a".deb 2>/dev/null | tail -1)
	[ -n "$deb" ] || { (apt-get download -q vmtouch >/dev/null 2>&1) && deb=$(ls "$T_DIR"/vmtouch_*_"$a".deb 2>/dev/null | tail -1); }
	unshare --mount --propagation private sleep 1d &
	ns=$!
	T_CLEANUP+=("kill $ns")
	while [ "$(readlink /proc/$ns/ns/mnt)" = "$(readlink /proc/self/ns/mnt)" ]; do sleep 0.05; done
	R=$T_DIR/ov/root
	mkdir -p "$T_DIR/ov"
	in_ns() { nsenter -t "$ns" -m "$@"; }
	in_ns sh -ec "mount -t tmpfs tmpfs '$T_DIR/ov'; cd '$T_DIR/ov'; mkdir upper work root
		mount -t overlay overlay -o lowerdir=/,upperdir=upper,workdir=work root
		mount --rbind /dev root/dev; mount -t proc proc root/proc
		mount -t tmpfs tmpfs root/run; mount -t tmpfs tmpfs root/tmp
		rm -f root/var/lib/man-db/auto-update
		printf '#!/bin/sh\nexit 101\n' >root/usr/sbin/policy-rc.d; chmod 755 root/usr/sbin/policy-rc.d"
	rc=$?
	t_is "an overlay root of this host, to install in" "$rc" 0
	if [ "$rc" != 0 ]; then
		kill "$ns"
		return
	fi
	in_ns cp "$T_DIR/pagecache_${v}_$a.deb" "$T_DIR/libpagecache0_${v}_$a.deb" ${deb:+"$deb"} "$R/tmp/"
	deb=${deb:+/tmp/${deb##*/}}
	# in the root, from /, with the log in $T_DIR/ir.log
	ir() { in_ns chroot "$R" sh -c "cd / && $*" >>"$T_DIR/ir.log" 2>&1; }
	ir_out() { in_ns chroot "$R" sh -c "cd / && $*" 2>&1; }
	# the same command line as the personality and as pagecache's word
	same() {
		local o1 o2
		o1=$(ir_out "$1 -h; echo rc=\$?")
		o2=$(ir_out "pagecache $1 -h; echo rc=\$?")
		[ "$o1" = "$o2" ] && [ -n "$o1" ]
	}
	query() { ir_out "update-alternatives --query $1" | sed -n "s/^$2: //p"; }
	real() {	# real TOOL PACKAGE: /usr/bin/TOOL is PACKAGE's file, and runs
		ir "test ! -L /usr/bin/$1 && test -f /usr/bin/$1 && dpkg -S /usr/bin/$1 | grep -q '^$2:'" &&
			ir "$1 /etc/passwd >/dev/null"
	}

	ir "dpkg --purge vmtouch"
	ir "dpkg -i /tmp/libpagecache0_${v}_$a.deb /tmp/pagecache_${v}_$a.deb"
	t_is "dpkg -i of libpagecache0 and pagecache (no vmtouch installed) exits 0" $? 0
	t_is "update-alternatives --query vmtouch names pagecache's link" \
		"$(query vmtouch Value)" /usr/libexec/pagecache/vmtouch
	t_is "  in auto mode, priority 10" "$(query vmtouch Status) $(query vmtouch Priority)" "auto 10"
	t_is "/usr/bin/vmtouch leads to pagecache" "$(ir_out "readlink -f /usr/bin/vmtouch")" /usr/bin/pagecache
	t_ok "vmtouch -h is pagecache vmtouch -h (output and exit status)" same vmtouch
	t_is "update-alternatives --query fincore names pagecache's link" \
		"$(query fincore Value)" /usr/libexec/pagecache/fincore
	if ir "dpkg -S /usr/bin/fincore"; then
		t_ok "util-linux-extra's fincore, installed before, stays /usr/bin/fincore and runs" \
			real fincore util-linux-extra
	else
		t_ok "fincore -h is pagecache fincore -h" same fincore
	fi

	if [ -z "$deb" ]; then
		t_skip "the real vmtouch beside pagecache" "no vmtouch .deb in apt's cache, and apt-get download failed"
	else
		ir "dpkg -i $deb"
		t_is "the real vmtouch installs after pagecache (dpkg -i exits 0)" $? 0
		t_ok "  and is /usr/bin/vmtouch, vmtouch's file, and runs" real vmtouch vmtouch
		t_is "  pagecache's alternative stays registered" "$(query vmtouch Value)" \
			/usr/libexec/pagecache/vmtouch
		ir "dpkg --purge vmtouch"
		t_is "removing the real vmtouch" $? 0
		t_is "  puts the alternative's link back (the trigger)" \
			"$(ir_out "readlink -f /usr/bin/vmtouch")" /usr/bin/pagecache
		t_ok "  and vmtouch is pagecache again" same vmtouch
	fi
	ir "dpkg -r pagecache"
	t_is "dpkg -r pagecache exits 0" $? 0
	t_ok "and removes the vmtouch alternative" sh -c "! nsenter -t $ns -m chroot '$R' update-alternatives --query vmtouch >/dev/null 2>&1"
	t_ok "  and the fincore one" sh -c "! nsenter -t $ns -m chroot '$R' update-alternatives --query fincore >/dev/null 2>&1"
	t_ok "  and its link" ir "test ! -e /usr/bin/vmtouch && test ! -L /usr/bin/vmtouch"
	if ir "dpkg -S /usr/bin/fincore"; then
		t_ok "  leaving util-linux-extra's fincore, which runs" real fincore util-linux-extra
	fi

	if [ -n "$deb" ]; then
		ir "dpkg -i $deb && dpkg -i /tmp/pagecache_${v}_$a.deb"
		t_is "the real vmtouch, then pagecache, install" $? 0
		t_ok "  the real vmtouch stays /usr/bin/vmtouch, and runs" real vmtouch vmtouch
		t_is "  with pagecache's alternative registered beside it" "$(query vmtouch Value)" \
			/usr/libexec/pagecache/vmtouch
		ir "dpkg -r pagecache"
		t_is "removing pagecache then" $? 0
		t_ok "  leaves the real vmtouch, which runs" real vmtouch vmtouch
	fi
	kill "$ns"
	[ "$T_FAILED" = 0 ] || sed 's/^/# install: /' "$T_DIR/ir.log"
}
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

# the drop-in personalities, as alternatives (debian/pagecache.alternatives)
for t in vmtouch fincore; do
	t_is "pagecache has /usr/libexec/pagecache/$t, a link to ../../bin/pagecache" \
		"$(readlink "x/pagecache/usr/libexec/pagecache/$t")" ../../bin/pagecache
	t_ok "  which the postinst makes the alternative for /usr/bin/$t" \
		grep -q "update-alternatives --install /usr/bin/$t $t /usr/libexec/pagecache/$t " ctl/postinst
	t_ok "  and the prerm takes back" \
		grep -q "update-alternatives --remove $t /usr/libexec/pagecache/$t" ctl/prerm
	t_ok "  a trigger on /usr/bin/$t, for a real $t removed later" \
		grep -qx "interest-noawait /usr/bin/$t" ctl/triggers
done
installs

lintian -I --pedantic --fail-on error "pagecache_${v}_$a.changes" >lintian.log 2>&1
rc=$?
sed 's/^/# lintian: /' lintian.log
t_is "lintian reports no error" "$rc" 0
t_done
