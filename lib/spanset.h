/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spanset.h: a set of page spans, each page at the earliest time it was
 * seen, as `pagecache record` keeps what a workload touched. Spans are
 * disjoint and sorted; touching spans of one time are one. Adding a span
 * costs O(log n + the spans it meets), n the spans held; memory follows
 * the spans (pages and their times), never the number of additions: a
 * million re-reads of two pages are two spans. Internal to pagecache (not
 * in pagecache.h): used by src/commands/cmd-record.c, tested by
 * tests/unit/test-spanset.c.
 */
#ifndef PC_SPANSET_H
#define PC_SPANSET_H

#include <stddef.h>
#include <stdint.h>

struct pc_span {
	uint64_t first, last;		/* pages, inclusive */
	uint32_t ms;			/* when first seen */
};

struct pc_span_node;

struct pc_spanset {
	struct pc_span_node *v;		/* the nodes; v[0] unused (0: none) */
	uint32_t nv, cap;		/* nodes made, room */
	uint32_t root, free;		/* the tree (a treap); freed nodes, chained */
	size_t n;			/* spans held */
	uint32_t seed;			/* the priorities' generator */
	struct pc_span *tmp;		/* scratch of one addition */
	size_t ntmp;
};

void pc_spanset_init(struct pc_spanset *s);
void pc_spanset_release(struct pc_spanset *s);

/* Pages first..last seen at ms: those not held, or held later, take ms. 0 or -ENOMEM. */
int pc_spanset_add(struct pc_spanset *s, uint64_t first, uint64_t last, uint32_t ms);

/*
 * The spans in order, in a new array (free() it; NULL with *ret_n 0 when
 * there are none). 0 or -ENOMEM.
 */
int pc_spanset_array(const struct pc_spanset *s, struct pc_span **ret, size_t *ret_n);

#endif
