/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spanset.c: a set of page spans at their earliest times (spanset.h), as a
 * treap: a binary search tree on each span's first page whose random
 * priorities keep it balanced whatever order the spans come in (an
 * expected depth of O(log n)). An addition splits out the spans it meets
 * and its touching neighbours, rebuilds them with the new pages, and joins
 * the pieces back: O(log n) plus the spans met, never a move of the rest
 * (a sorted array's memmove made random single pages O(n) each, and lost
 * a recording's events). Nodes live in one array, linked by index: no
 * malloc per addition.
 */
#define _GNU_SOURCE
#include "spanset.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

struct pc_span_node {
	uint64_t first, last;		/* pages, inclusive */
	uint32_t ms;
	uint32_t prio;			/* a parent's is at least its children's */
	uint32_t l, r;			/* children, 0: none */
};

/*
 * The priorities' seeds: one secret drawn once a process (a recording
 * makes three sets a file, and a getrandom(2) each was a twentieth of its
 * time), and each set's seed that secret mixed with a count (splitmix64's
 * finalizer): as unknowable to whoever chooses the spans, and no two sets
 * alike.
 */
static uint64_t seed_basis(void)
{
	static uint64_t basis;
	uint64_t b = __atomic_load_n(&basis, __ATOMIC_RELAXED);

	if (!b) {
		if (getrandom(&b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			b = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)&ts;
		}
		b |= 1;	/* 0 is "not drawn yet" */
		/* a racing thread's draw is as good: the first one stored wins */
		if (!__atomic_compare_exchange_n(&basis, &(uint64_t){ 0 }, b, false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			b = __atomic_load_n(&basis, __ATOMIC_RELAXED);
	}
	return b;
}

void pc_spanset_init(struct pc_spanset *s)
{
	static uint64_t count;
	uint64_t z = seed_basis() + 0x9e3779b97f4a7c15ull *
				    (__atomic_add_fetch(&count, 1, __ATOMIC_RELAXED));
	uint32_t seed;

	memset(s, 0, sizeof(*s));
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	seed = (uint32_t)(z ^ (z >> 32));
	s->seed = seed ? seed : 0x9e3779b9u;	/* xorshift32 never leaves 0 */
}

void pc_spanset_release(struct pc_spanset *s)
{
	free(s->v);
	free(s->tmp);
	memset(s, 0, sizeof(*s));
}

static uint32_t next_prio(struct pc_spanset *s)
{
	uint32_t x = s->seed;	/* xorshift32 */

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	s->seed = x;
	return x;
}

/* Room for k more nodes, so that node_new cannot fail. */
static int reserve_nodes(struct pc_spanset *s, size_t k)
{
	size_t want = (size_t)s->nv + k, nc;
	struct pc_span_node *nv;

	if (!s->nv)
		want++;		/* v[0] is "none" */
	if (want <= s->cap)
		return 0;
	if (want > UINT32_MAX)
		return -ENOMEM;
	nc = s->cap ? s->cap : 8;	/* most files read are one span or a few: a recording
					   makes thousands of sets, each its own pages touched */
	while (nc < want)
		nc *= 2;
	if (nc > UINT32_MAX)
		nc = UINT32_MAX;
	nv = realloc(s->v, nc * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	s->v = nv;
	s->cap = (uint32_t)nc;
	if (!s->nv)
		s->nv = 1;
	return 0;
}

static uint32_t node_new(struct pc_spanset *s, const struct pc_span *sp)
{
	uint32_t i;

	if (s->free) {
		i = s->free;
		s->free = s->v[i].l;
	} else {
		i = s->nv++;	/* reserve_nodes made room */
	}
	s->v[i] = (struct pc_span_node){ sp->first, sp->last, sp->ms, next_prio(s), 0, 0 };
	return i;
}

/* t's nodes with first < key to *a, the others to *b */
static void split(struct pc_spanset *s, uint32_t t, uint64_t key, uint32_t *a, uint32_t *b)
{
	if (!t) {
		*a = *b = 0;
	} else if (s->v[t].first < key) {
		*a = t;
		split(s, s->v[t].r, key, &s->v[t].r, b);
	} else {
		*b = t;
		split(s, s->v[t].l, key, a, &s->v[t].l);
	}
}

/* every node of a before every node of b */
static uint32_t merge(struct pc_spanset *s, uint32_t a, uint32_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (s->v[a].prio > s->v[b].prio) {
		s->v[a].r = merge(s, s->v[a].r, b);
		return a;
	}
	s->v[b].l = merge(s, a, s->v[b].l);
	return b;
}

/* t without its last node, which goes to *ret */
static uint32_t pop_last(struct pc_spanset *s, uint32_t t, uint32_t *ret)
{
	if (!s->v[t].r) {
		uint32_t l = s->v[t].l;

		*ret = t;
		s->v[t].l = 0;	/* alone now */
		return l;
	}
	s->v[t].r = pop_last(s, s->v[t].r, ret);
	return t;
}

static size_t count(const struct pc_spanset *s, uint32_t t)
{
	return t ? 1 + count(s, s->v[t].l) + count(s, s->v[t].r) : 0;
}

/* t's spans in order to out[*k...], its nodes freed */
static void take(struct pc_spanset *s, uint32_t t, struct pc_span *out, size_t *k)
{
	uint32_t r;

	if (!t)
		return;
	take(s, s->v[t].l, out, k);
	out[(*k)++] = (struct pc_span){ s->v[t].first, s->v[t].last, s->v[t].ms };
	r = s->v[t].r;
	s->v[t].l = s->free;
	s->free = t;
	take(s, r, out, k);
}

/* sp, meeting no span: a node put where its priority goes, the subtree there split */
static int insert(struct pc_spanset *s, const struct pc_span *sp)
{
	uint32_t x, *link = &s->root;

	if (reserve_nodes(s, 1) < 0)
		return -ENOMEM;
	x = node_new(s, sp);
	while (*link && s->v[*link].prio > s->v[x].prio)
		link = sp->first < s->v[*link].first ? &s->v[*link].l : &s->v[*link].r;
	split(s, *link, sp->first, &s->v[x].l, &s->v[x].r);
	*link = x;
	s->n++;
	return 0;
}

static void push(struct pc_span *t, size_t *k, uint64_t first, uint64_t last, uint32_t ms)
{
	if (*k && t[*k - 1].ms == ms && t[*k - 1].last + 1 == first)
		t[*k - 1].last = last;
	else
		t[(*k)++] = (struct pc_span){ first, last, ms };
}

int pc_spanset_add(struct pc_spanset *s, uint64_t first, uint64_t last, uint32_t ms)
{
	uint32_t a, m, c, p = 0, t;
	struct pc_span *in, *out;
	size_t nin = 0, nout = 0, k, need;
	uint64_t pos = first;
	bool done = false;

	if (first > last)
		return -EINVAL;
	/* a: the span at or before first; c: the one after it */
	for (t = s->root, a = 0, c = 0; t;) {
		if (s->v[t].first <= first) {
			a = t;
			t = s->v[t].r;
		} else {
			c = t;
			t = s->v[t].l;
		}
	}
	if (a && s->v[a].last >= last && s->v[a].ms <= ms)
		return 0;	/* all of it seen, and no later: nothing to add */
	if ((!a || s->v[a].last < first) && (!c || s->v[c].first > last) &&
	    !(a && c && s->v[a].last + 1 == first && s->v[c].first == last + 1 &&
	      s->v[a].ms == ms && s->v[c].ms == ms)) {
		/* the common case: new pages, meeting nothing (random single pages) */
		if (a && s->v[a].last + 1 == first && s->v[a].ms == ms) {
			s->v[a].last = last;	/* the one before grows */
			return 0;
		}
		if (c && s->v[c].first == last + 1 && s->v[c].ms == ms) {
			s->v[c].first = first;	/* the one after: still between its neighbours */
			return 0;
		}
		return insert(s, &(struct pc_span){ first, last, ms });
	}

	/* a: before first; m: from first to last + 1 (a right neighbour); c: the rest */
	split(s, s->root, first, &a, &m);
	if (a) {	/* the last before: it may overlap, or touch */
		a = pop_last(s, a, &p);
		if (s->v[p].last < first - 1) {
			a = merge(s, a, p);
			p = 0;
		}
	}
	if (last < UINT64_MAX - 1)
		split(s, m, last + 2, &m, &c);
	else
		c = 0;
	k = count(s, m) + (p != 0);
	need = k + 3 * (k + 1) + 4;	/* what is taken, and at most this much made of it */
	if (need > s->ntmp) {
		struct pc_span *g = realloc(s->tmp, need * sizeof(*g));

		if (!g)
			goto nomem;
		s->tmp = g;
		s->ntmp = need;
	}
	if (reserve_nodes(s, need - k) < 0)
		goto nomem;
	in = s->tmp;
	out = s->tmp + k;
	if (p) {
		in[nin++] = (struct pc_span){ s->v[p].first, s->v[p].last, s->v[p].ms };
		s->v[p].l = s->free;
		s->free = p;
	}
	take(s, m, in, &nin);
	s->n -= nin;
	for (size_t i = 0; i < nin; i++) {
		const struct pc_span x = in[i];

		if (x.last < first) {		/* touching on the left */
			push(out, &nout, x.first, x.last, x.ms);
			continue;
		}
		if (x.first > last) {		/* touching on the right */
			if (!done)
				push(out, &nout, pos, last, ms);
			done = true;
			push(out, &nout, x.first, x.last, x.ms);
			continue;
		}
		if (x.first < first)
			push(out, &nout, x.first, first - 1, x.ms);
		if (!done && x.first > pos)
			push(out, &nout, pos, x.first - 1, ms);
		push(out, &nout, x.first > first ? x.first : first, x.last < last ? x.last : last,
		     x.ms < ms ? x.ms : ms);
		if (x.last > last)
			push(out, &nout, last + 1, x.last, x.ms);
		if (x.last >= last)
			done = true;
		else
			pos = x.last + 1;
	}
	if (!done)
		push(out, &nout, pos, last, ms);
	for (size_t i = 0; i < nout; i++)
		a = merge(s, a, node_new(s, &out[i]));
	s->n += nout;
	s->root = merge(s, a, c);
	return 0;
nomem:
	if (p)
		a = merge(s, a, p);
	s->root = merge(s, merge(s, a, m), c);
	return -ENOMEM;
}

static void flatten(const struct pc_spanset *s, uint32_t t, struct pc_span *out, size_t *k)
{
	while (t) {
		flatten(s, s->v[t].l, out, k);
		out[(*k)++] = (struct pc_span){ s->v[t].first, s->v[t].last, s->v[t].ms };
		t = s->v[t].r;
	}
}

int pc_spanset_array(const struct pc_spanset *s, struct pc_span **ret, size_t *ret_n)
{
	struct pc_span *v;
	size_t k = 0;

	*ret = NULL;
	*ret_n = 0;
	if (!s->n)
		return 0;
	v = malloc(s->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	flatten(s, s->root, v, &k);
	*ret = v;
	*ret_n = k;
	return 0;
}
