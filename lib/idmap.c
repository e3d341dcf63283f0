/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * idmap.c: (a, b) -> value, open-addressed with linear probing
 * (idmap.h). The slot is chosen by a 64-bit mix of both numbers (a
 * multiply, then splitmix64's finaliser), since inode numbers come in runs
 * and devices are few: neither alone spreads the keys. Nothing is ever
 * removed one by one, so a probe stops at the first empty slot.
 */
#include "idmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

/* The slot of (a, b): where it is, or the empty one where it would go. */
static size_t slot(const struct pc_idmap *m, uint64_t a, uint64_t b)
{
	size_t i = (size_t)mix(a, b) & (m->cap - 1);

	while (m->v[i] && (m->k[2 * i] != a || m->k[2 * i + 1] != b))
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint32_t pc_idmap_get(const struct pc_idmap *m, uint64_t a, uint64_t b)
{
	return m->cap ? m->v[slot(m, a, b)] : 0;
}

static int grow(struct pc_idmap *m)
{
	struct pc_idmap g = { .cap = m->cap ? m->cap * 2 : 256 };

	g.k = malloc(g.cap * 2 * sizeof(*g.k));
	g.v = calloc(g.cap, sizeof(*g.v));
	if (!g.k || !g.v) {
		free(g.k);
		free(g.v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->v[i]) {
			size_t j = slot(&g, m->k[2 * i], m->k[2 * i + 1]);

			g.k[2 * j] = m->k[2 * i];
			g.k[2 * j + 1] = m->k[2 * i + 1];
			g.v[j] = m->v[i];
		}
	g.n = m->n;
	free(m->k);
	free(m->v);
	*m = g;
	return 0;
}

int pc_idmap_put(struct pc_idmap *m, uint64_t a, uint64_t b, uint32_t v)
{
	size_t i;

	if (!v)
		return -EINVAL;
	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -ENOMEM;
	i = slot(m, a, b);
	m->n += !m->v[i];
	m->k[2 * i] = a;
	m->k[2 * i + 1] = b;
	m->v[i] = v;
	return 0;
}

void pc_idmap_clear(struct pc_idmap *m)
{
	if (m->cap)
		memset(m->v, 0, m->cap * sizeof(*m->v));
	m->n = 0;
}

void pc_idmap_free(struct pc_idmap *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof(*m));
}
