#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vmtouch -b with lists that are not lists: refused as they are read, so a
# big binary file (here 4 GiB, sparse) or an endless line is refused within
# a small memory limit, before any of it is acted on, not read whole first.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

mkfile f 8
truncate -s 4G big
printf 'f\n' >ok
# lim CMD...: under a 512 MiB address-space limit. A SANITIZE=1 build's
# ASan reserves terabytes of address space for its shadow and cannot start
# under any such limit: there the refusals are checked without it, and the
# bound is said to be skipped (the normal build's run checks it).
if ldd "$PAGECACHE" 2>/dev/null | grep -q libasan; then
	lim() { "$@"; }
	t_skip "-b within 512 MiB of address space" "an ASan build cannot run under an address-space limit"
else
	lim() { (ulimit -v 524288 && "$@"); }
fi

lim "$PAGECACHE" vmtouch -b big >out 2>err
t_is "-b of a 4G binary file: exit status" "$?" 1
t_is "-b of a 4G binary file: refused at its first NUL" "$(cat err)" \
	"vmtouch: FATAL: big is not a list of paths: a NUL byte at offset 0 (-0 reads NUL-separated lists)"
head -c 100000000 /dev/zero | tr '\0' a | lim "$PAGECACHE" vmtouch -b - >out 2>err
t_is "-b - of one endless line: exit status" "$?" 1
t_is "-b - of one endless line: refused" "$(cat err)" \
	"vmtouch: FATAL: - is not a list of paths: a line longer than 4096 bytes at offset 0"
lim "$PAGECACHE" vmtouch -b ok >out 2>err
t_is "-b of a list: its file examined" "$(grep Files: out)" "           Files: 1"
t_done
