#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/mktree.py DIR N KIB [random]: the benchmarks' tree of small files,
# made once and kept (bench/ab.sh, bench/stat-shared.sh): N files f0..f(N-1),
# 1,000 a directory (DIR/d000, DIR/d001, ...), file i holding (i % KIB + 1)
# KiB of 'x', or of random bytes with "random" (nothing a filesystem can
# compress or share). DIR must exist and be empty.
import os
import sys

root, n, kib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rand = len(sys.argv) > 4 and sys.argv[4] == "random"
for i in range(n):
    d = "%s/d%03d" % (root, i // 1000)
    if i % 1000 == 0:
        os.mkdir(d)
    size = 1024 * (i % kib + 1)
    with open("%s/f%d" % (d, i), "wb") as f:
        f.write(os.urandom(size) if rand else b"x" * size)
