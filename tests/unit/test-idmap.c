/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The (dev, ino) map (idmap.c) that the walk, record and top share:
 * against a plain list, every key put is found with its last value, none
 * other is; values are replaced in place; it grows through many keys that
 * differ in one number only (inodes in a run, one device); clear empties
 * it and keeps its room; a zero value is refused.
 */
#include "idmap.h"
#include "tap.h"

#include <errno.h>
#include <stdint.h>

#define N 200000

int main(void)
{
	struct pc_idmap m = { 0 };
	size_t bad = 0, cap;
	int rc = 0;

	ok(pc_idmap_get(&m, 0, 0) == 0 && pc_idmap_get(&m, 1, 2) == 0, "empty: nothing found");
	ok(pc_idmap_put(&m, 1, 2, 0) == -EINVAL && m.n == 0, "a value of 0 is refused");
	ok(pc_idmap_put(&m, 0, 0, 7) == 0 && pc_idmap_get(&m, 0, 0) == 7, "(0, 0) is a key like any");

	/* one device, inodes in a run; then the same inodes on another device */
	for (uint64_t i = 0; i < N && !rc; i++)
		rc = pc_idmap_put(&m, 2049, 1000 + i, (uint32_t)i + 1);
	for (uint64_t i = 0; i < N && !rc; i++)
		rc = pc_idmap_put(&m, 64769, 1000 + i, (uint32_t)(N + i + 1));
	ok(rc == 0 && m.n == 2 * N + 1, "%d keys put (%zu held)", 2 * N + 1, m.n);
	ok(m.n * 2 <= m.cap && (m.cap & (m.cap - 1)) == 0, "at most half full, a power of two (%zu)",
	   m.cap);
	for (uint64_t i = 0; i < N; i++)
		bad += pc_idmap_get(&m, 2049, 1000 + i) != i + 1 ||
		       pc_idmap_get(&m, 64769, 1000 + i) != N + i + 1 ||
		       pc_idmap_get(&m, 2050, 1000 + i) != 0 || pc_idmap_get(&m, 1000 + i, 1) != 0;
	ok(bad == 0, "each found with its value, none other (%zu wrong)", bad);

	ok(pc_idmap_put(&m, 2049, 1000, 99) == 0 && pc_idmap_get(&m, 2049, 1000) == 99 &&
	   m.n == 2 * N + 1, "a put over a key replaces its value, no new key");

	cap = m.cap;
	pc_idmap_clear(&m);
	ok(m.n == 0 && m.cap == cap && pc_idmap_get(&m, 2049, 1001) == 0, "clear: empty, room kept");
	ok(pc_idmap_put(&m, 5, 6, 3) == 0 && pc_idmap_get(&m, 5, 6) == 3, "and it takes keys again");
	pc_idmap_free(&m);
	ok(!m.k && !m.v && !m.cap && !m.n && pc_idmap_get(&m, 5, 6) == 0, "free: zeroed, empty");
	return done_testing();
}
