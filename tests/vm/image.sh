#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/vm/image.sh: build (or find) the Debian guest image that
# tests/vm/run.sh boots. mmdebstrap from Debian's own packages (the host's
# apt mirror, no other network), the kernel and initrd taken out of the
# image so that qemu boots them directly (no boot loader, no partition
# table), and the root file system written by mke2fs -d (no loop device,
# no mount on the host). Everything lands in $PCVM_CACHE/$SUITE-$KEY/,
# where KEY hashes this script and the package list: an unchanged recipe is
# never rebuilt. The guest agent itself (agent.sh) is not in the image: a
# stub there runs the copy each run brings, so changing it rebuilds nothing.
#
# usage: tests/vm/image.sh            print the image directory, building it if needed
# env:   PCVM_SUITE   Debian suite: bookworm (Linux 6.1, systemd 252; the default) or
#                     trixie (Linux 6.12, systemd 257)
#        PCVM_CACHE   cache directory (default /var/tmp/pcvm)
#        PCVM_MIRROR  Debian mirror (default: the host's, else http://deb.debian.org/debian)
# Needs root (mmdebstrap's root mode, so that the image's owners are right),
# mmdebstrap and e2fsprogs. Takes a few minutes, most of it downloading.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
suite=${PCVM_SUITE:-bookworm}
cache=${PCVM_CACHE:-/var/tmp/pcvm}

# What the tests need at run time, no build tools: the project is built on
# the host (same Debian release) and its binaries run in the guest.
packages=(
	linux-image-amd64 systemd systemd-sysv dbus udev kmod
	# a user's manager (user@UID.service) needs pam_systemd: t-scope
	libpam-systemd
	# the test harness and the commands the tests call
	perl jq util-linux util-linux-extra mount strace procps e2fsprogs
	python3 python3-yaml curl iproute2 make zsh tmux bsdextrautils
	libcap2-bin fuse3 ca-certificates
	# the tools the personalities are compared with: t-compat-*
	vmtouch nocache
	# the libraries the binaries link
	liburing2 libtraceevent1 libsqlite3-0 libnettle8 libfuse3-3 zlib1g libsystemd0
)
case $suite in
bookworm) ;;
trixie)	# Linux 6.12; the 64-bit time_t and fuse 3.17 renames (the host's
	# bookworm-built stallfs wants libfuse3.so.3, which trixie lacks)
	packages=("${packages[@]/#libnettle8/libnettle8t64}")
	packages=("${packages[@]/#libfuse3-3/libfuse3-4}") ;;
*)	# bullseye's glibc (2.31) cannot run what bookworm builds
	echo "image.sh: suite '$suite' is not supported (bookworm, trixie)" >&2
	exit 2 ;;
esac

key=$( { cat "$0"; printf '%s\n' "$suite" "${packages[@]}"; } | sha256sum | cut -c1-12)
dir=$cache/$suite-$key
if [ -s "$dir/root.img" ] && [ -s "$dir/vmlinuz" ] && [ -s "$dir/initrd.img" ]; then
	echo "$dir"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "image.sh: building the image needs root" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "image.sh: needs mmdebstrap (apt-get install mmdebstrap)" >&2; exit 1; }

mirror=${PCVM_MIRROR:-}
if [ -z "$mirror" ]; then
	mirror=$(grep -hoE '^URIs: *http[^ ]*/debian$|^deb +http[^ ]*/debian ' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
		| head -1 | sed -E 's/^URIs: *//; s/^deb +//; s/ +$//') || true
	mirror=${mirror:-http://deb.debian.org/debian}
fi

mkdir -p "$cache"
# one build at a time; a build directory left by a killed one is stale
exec 9>"$cache/.lock"
flock 9
if [ -s "$dir/root.img" ]; then echo "$dir"; exit 0; fi	# built while we waited
for old in "$cache/.build-$suite".*; do
	[ -d "$old" ] && ! grep -q " $old/" /proc/mounts && rm -rf --one-file-system "$old"
done
tmp=$(mktemp -d "$cache/.build-$suite.XXXXXX")
cleanup() {
	# mmdebstrap unmounts its chroot's /dev, /proc, /sys itself; should it be
	# killed midway, nothing under them may be removed on the host
	# (grep finds none, as a rule: under set -e and pipefail that must not
	# end the trap before the rm)
	{ grep -o " $tmp/[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
root=$tmp/root
echo "image.sh: building $suite from $mirror into $dir" >&2
start=$SECONDS
pkglist=$(printf '%s\n' "${packages[@]}" | grep -v '^$' | paste -sd, -)
# (in a mount namespace of its own: the chroot's /dev, /proc and /sys never
# show in the host's mount table, which test runs' leftovers checks compare,
# and go with the namespace however mmdebstrap ends)
unshare --mount --propagation private \
mmdebstrap --mode=root --variant=minbase --include="$pkglist" \
	--aptopt='Acquire::Retries "3"' \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--customize-hook='echo pcvm >"$1/etc/hostname"' \
	"$suite" "$root" "$mirror"

# the guest's own configuration
printf '/dev/vda / ext4 rw,relatime 0 1\n' >"$root/etc/fstab"
printf '127.0.0.1 localhost\n127.0.1.1 pcvm\n' >"$root/etc/hosts"
chroot "$root" passwd -d root >/dev/null
# the stub: mount the run's scratch share and run the agent the host put there
cat >"$root/usr/local/sbin/pcvm-agent" <<'STUB'
#!/bin/sh
mkdir -p /mnt/pcout
modprobe -q 9pnet_virtio
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 pcout /mnt/pcout &&
	[ -f /mnt/pcout/agent.sh ]; then
	exec /bin/bash /mnt/pcout/agent.sh
fi
echo "pcvm-agent: no 9p share 'pcout' with an agent.sh: powering off" >/dev/console
systemctl poweroff
STUB
chmod 755 "$root/usr/local/sbin/pcvm-agent"
cat >"$root/etc/systemd/system/pcvm-agent.service" <<'UNIT'
[Unit]
Description=pcvm guest agent: run the host's command, then power off
After=multi-user.target
ConditionKernelCommandLine=pcvm.agent=1

[Service]
Type=exec
ExecStart=/usr/local/sbin/pcvm-agent
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target
UNIT
chroot "$root" systemctl enable pcvm-agent.service >/dev/null 2>&1
# the 9p shares, loaded early
printf '9p\n9pnet_virtio\n' >"$root/etc/modules-load.d/pcvm.conf"
# no getty on the serial line: the console is the agent's
chroot "$root" systemctl mask serial-getty@ttyS0.service >/dev/null 2>&1 || true
# no apt timers, no man-db: nothing runs behind the tests' back
for u in apt-daily.timer apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer; do
	chroot "$root" systemctl mask "$u" >/dev/null 2>&1 || true
done
rm -f "$root/etc/machine-id"; : >"$root/etc/machine-id"

cp -L "$root/vmlinuz" "$tmp/vmlinuz"
cp -L "$root/initrd.img" "$tmp/initrd.img"
chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' >"$tmp/packages.txt"
rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/*_Packages
du_mb=$(du -sm "$root" | cut -f1)
size_mb=$(( du_mb + 3072 ))
mke2fs -q -t ext4 -L pcvm -E root_owner=0:0 -d "$root" "$tmp/root.img" "${size_mb}M" >&2
rm -rf "$root"
printf 'suite=%s\nkey=%s\nmirror=%s\nbuilt=%s\nseconds=%s\n' "$suite" "$key" "$mirror" \
	"$(date -u +%FT%TZ)" "$((SECONDS - start))" >"$tmp/info"
chmod 755 "$tmp"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
# older recipes' images of this suite (a guest still running keeps its open files)
for old in "$cache/$suite"-*; do
	[ "$old" = "$dir" ] || [ ! -f "$old/info" ] || rm -rf --one-file-system "$old"
done
echo "image.sh: built $dir in $((SECONDS - start)) s" >&2
echo "$dir"
