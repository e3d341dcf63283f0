/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * idmap.h: a map from a pair of 64-bit numbers, a file's (dev, ino) above
 * all, to a nonzero 32-bit value (an index + 1 into the caller's array),
 * open-addressed: the one kept by the walk (directories and hardlinks seen),
 * by `pagecache record` (its files) and by `pagecache top` (its rows and
 * names). Zeroed is empty; it grows to stay at most half full, so a
 * lookup costs a probe or two at any size. Not locked: its owner locks.
 * Internal to pagecache (not in pagecache.h): idmap.o is self-contained, so
 * that src/ can link it beside libpagecache.so (the Makefile's
 * CLI_HIDDEN_OBJ); tested by tests/unit/test-idmap.c.
 */
#ifndef PC_IDMAP_H
#define PC_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct pc_idmap {
	uint64_t *k;			/* (a, b) pairs, one a slot */
	uint32_t *v;			/* 0: an empty slot */
	size_t cap, n;			/* slots (a power of two, or 0), used */
};

/* The value of (a, b), 0 if there is none. */
uint32_t pc_idmap_get(const struct pc_idmap *m, uint64_t a, uint64_t b);
/* (a, b) -> v, over any value it had: 0, or -ENOMEM (m unchanged); v 0: -EINVAL. */
int pc_idmap_put(struct pc_idmap *m, uint64_t a, uint64_t b, uint32_t v);
/* Empty again, keeping its room. */
void pc_idmap_clear(struct pc_idmap *m);
/* Its memory freed; zeroed (empty) again. */
void pc_idmap_free(struct pc_idmap *m);

#endif
