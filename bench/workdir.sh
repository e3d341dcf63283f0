# SPDX-License-Identifier: GPL-2.0-or-later
# bench/workdir.sh: sourced by the scripts that keep data in a work
# directory as root (bench/*.sh, tests/demo.sh); POSIX sh.
#
# workdir DIR: DIR made (mode 0700) if it is missing, and its path without
# symbolic links printed; or a message and status 1 when others could
# change what is in it: DIR a symbolic link or not a directory, not the
# caller's own, writable by group or others, or below a directory that is
# neither root's nor the caller's, or writable by others without the sticky
# bit (/tmp and /var/tmp are fine). Files made in such a directory by path
# cannot be redirected by anyone else.
workdir() {
	_wd=$1
	_me=$(id -u)
	if [ ! -e "$_wd" ] && [ ! -L "$_wd" ]; then
		mkdir -m 0700 "$_wd" || return 1
	fi
	if [ -L "$_wd" ] || [ ! -d "$_wd" ]; then
		echo "cannot use the work directory '$_wd': not a directory (a symbolic link is not followed)" >&2
		return 1
	fi
	set -- $(stat -c '%u %a' "$_wd")
	if [ "$1" != "$_me" ]; then
		echo "cannot use the work directory '$_wd': owned by uid $1, not by uid $_me" >&2
		return 1
	fi
	if [ $((0$2 & 022)) -ne 0 ]; then
		echo "cannot use the work directory '$_wd': mode $2: writable by group or others" >&2
		return 1
	fi
	_wd=$(cd "$_wd" && pwd -P) || return 1
	_up=$_wd
	while [ "$_up" != / ]; do
		_up=$(dirname "$_up")
		set -- $(stat -c '%u %a' "$_up")
		if { [ "$1" != 0 ] && [ "$1" != "$_me" ]; } ||
		   { [ $((0$2 & 022)) -ne 0 ] && [ $((0$2 & 01000)) -eq 0 ]; }; then
			echo "cannot use the work directory '$_wd': '$_up' above it is owned by uid $1, mode $2: others could move it" >&2
			return 1
		fi
	done
	printf '%s\n' "$_wd"
}
