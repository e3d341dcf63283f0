/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The page span set of record (spanset.c): against a page-by-page model,
 * additions in any order keep each page's earliest time, spans disjoint,
 * sorted and merged where they touch at one time; memory follows spans,
 * not additions; and many random single pages (what lost a recording's
 * events with a sorted array) come out exact.
 */
#include "spanset.h"
#include "tap.h"

#include <stdint.h>

#define NONE UINT32_MAX

/* s against model[0..u): the same pages at the same times, canonical spans; "" or what differs */
static const char *differs(const struct pc_spanset *s, const uint32_t *model, uint64_t u)
{
	static char why[160];
	struct pc_span *v;
	size_t n, k = 0;
	uint64_t page = 0;

	if (pc_spanset_array(s, &v, &n) < 0)
		return "out of memory";
	why[0] = 0;
	if (n != s->n)
		snprintf(why, sizeof(why), "%zu spans listed, %zu counted", n, s->n);
	for (size_t i = 0; i < n && !why[0]; i++) {
		if (v[i].first > v[i].last || v[i].last >= u)
			snprintf(why, sizeof(why), "span %zu: %llu-%llu", i,
				 (unsigned long long)v[i].first, (unsigned long long)v[i].last);
		else if (i && v[i].first <= v[i - 1].last)
			snprintf(why, sizeof(why), "span %zu overlaps or is out of order", i);
		else if (i && v[i].first == v[i - 1].last + 1 && v[i].ms == v[i - 1].ms)
			snprintf(why, sizeof(why), "span %zu touches the one before at one time", i);
	}
	for (; page < u && !why[0]; page++) {
		while (k < n && v[k].last < page)
			k++;
		uint32_t got = k < n && v[k].first <= page ? v[k].ms : NONE;

		if (got != model[page])
			snprintf(why, sizeof(why), "page %llu: %u, not %u", (unsigned long long)page,
				 got, model[page]);
	}
	free(v);
	return why;
}

static void model_add(uint32_t *model, uint64_t first, uint64_t last, uint32_t ms)
{
	for (uint64_t p = first; p <= last; p++)
		if (ms < model[p])
			model[p] = ms;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

int main(void)
{
	struct pc_spanset s;
	uint32_t *model;
	const char *why = NULL;
	uint64_t x = 88172645463325252ull;
	int bad = 0;

	/* small: every case of overlap, touch and time, many times over */
	model = malloc(400 * sizeof(*model));
	for (int round = 0; round < 200 && !bad; round++) {
		pc_spanset_init(&s);
		for (int i = 0; i < 400; i++)
			model[i] = NONE;
		for (int i = 0; i < 300 && !bad; i++) {
			uint64_t first = rnd(&x) % 380, last = first + rnd(&x) % (round % 3 ? 4 : 20);
			uint32_t ms = (uint32_t)(rnd(&x) % (round % 2 ? 5 : 100));

			if (pc_spanset_add(&s, first, last, ms) < 0 ||
			    (model_add(model, first, last, ms), (why = differs(&s, model, 400))[0])) {
				ok(0, "round %d, add %d (%llu-%llu at %u): %s", round, i,
				   (unsigned long long)first, (unsigned long long)last, ms,
				   why ? why : "failed");
				bad = 1;
			}
		}
		pc_spanset_release(&s);
	}
	if (!bad)
		ok(1, "200 rounds of 300 random additions: each page at its earliest time, spans "
		      "canonical");
	free(model);

	/* the same two pages a million times, in both orders: two spans */
	pc_spanset_init(&s);
	for (uint32_t i = 0; i < 1000000; i++)
		pc_spanset_add(&s, i & 1 ? 7 : 3, i & 1 ? 7 : 3, 5 + (i & 3));
	{
		struct pc_span *v;
		size_t n;

		pc_spanset_array(&s, &v, &n);
		ok(n == 2 && v[0].first == 3 && v[0].ms == 5 && v[1].first == 7 && v[1].ms == 6,
		   "a million re-reads of two pages: two spans, at their first times");
		ok(s.cap <= 64, "and no more nodes than that made (%u)", s.cap);
		free(v);
	}
	pc_spanset_release(&s);

	/* earlier over later, later over earlier, the ends of the page numbers */
	pc_spanset_init(&s);
	pc_spanset_add(&s, 10, 19, 50);
	pc_spanset_add(&s, 5, 24, 20);
	pc_spanset_add(&s, 0, 30, 90);
	pc_spanset_add(&s, UINT64_MAX - 3, UINT64_MAX, 1);
	pc_spanset_add(&s, UINT64_MAX - 1, UINT64_MAX, 0);
	{
		struct pc_span *v;
		size_t n;

		pc_spanset_array(&s, &v, &n);
		ok(n == 5 && v[0].first == 0 && v[0].last == 4 && v[0].ms == 90 && v[1].first == 5 &&
		   v[1].last == 24 && v[1].ms == 20 && v[2].first == 25 && v[2].last == 30 &&
		   v[3].first == UINT64_MAX - 3 && v[3].ms == 1 && v[4].last == UINT64_MAX &&
		   v[4].ms == 0, "an earlier time takes over pages, a later one only fills gaps; "
				 "the last page number works");
		free(v);
	}
	ok(pc_spanset_add(&s, 9, 8, 0) == -EINVAL, "a span that ends before it begins: EINVAL");
	pc_spanset_release(&s);

	/* 400,000 random single pages of a million, times rising: exact */
	model = malloc(1000000 * sizeof(*model));
	for (int i = 0; i < 1000000; i++)
		model[i] = NONE;
	pc_spanset_init(&s);
	bad = 0;
	for (uint32_t i = 0; i < 400000; i++) {
		uint64_t p = rnd(&x) % 1000000;

		bad |= pc_spanset_add(&s, p, p, i / 1000) < 0;
		model_add(model, p, p, i / 1000);
	}
	why = bad ? "an addition failed" : differs(&s, model, 1000000);
	ok(!why[0], "400,000 random single pages of 1,000,000: every page at its first time%s%s",
	   why[0] ? ": " : "", why);
	pc_spanset_release(&s);
	free(model);

	pc_spanset_init(&s);
	{
		struct pc_span *v = (void *)1;
		size_t n = 9;

		ok(pc_spanset_array(&s, &v, &n) == 0 && !v && !n, "an empty set: no array");
	}
	pc_spanset_release(&s);
	return done_testing();
}
