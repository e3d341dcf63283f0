/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * profile.c: a snapshot round-trips; writing is atomic; a truncated,
 * bit-flipped or lying file is a clear error, never a crash or a huge
 * allocation; two records of one file merge (restore of several).
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "internal.h"		/* pc_profile_same_file, pc_profile_file_merge */
#include "tap.h"

#include <dirent.h>
#include <linux/capability.h>
#include "snapcraft.h"

#define IDENT_TEST_ALL (PC_IDENT_GEN | PC_IDENT_BTIME | PC_IDENT_FSID)
#define diag(...) (printf("# "), printf(__VA_ARGS__), printf("\n"))

/*
 * One version 2 record by hand (snapcraft.h writes version 1): path "f",
 * one page, and `ident` then the bytes `tail` as its identity fields, so
 * each can be made wrong on its own.
 */
static uint8_t *craft_v2(const struct pc_profile_meta *m, uint64_t gen, uint64_t ident,
			 const uint8_t *tail, size_t tlen, size_t *ret_len)
{
	uint8_t raw[256], hdr[32] = "PCSNAP1\n", *out = malloc(4096);
	size_t r = 0, o = 32, rl = strlen(m->root), hl = strlen(m->host);
	uint32_t c;

	for (int i = 0; i < 4; i++) {
		hdr[8 + i] = (uint8_t)(2u >> (8 * i));
		hdr[12 + i] = (uint8_t)(m->page_size >> (8 * i));
	}
	c = (uint32_t)crc32(0, hdr, 28);
	for (int i = 0; i < 4; i++)
		hdr[28 + i] = (uint8_t)(c >> (8 * i));
	memcpy(out, hdr, 32);
	r = craft_varint(raw, rl);
	memcpy(raw + r, m->root, rl);
	r += rl;
	r += craft_varint(raw + r, hl);
	memcpy(raw + r, m->host, hl);
	r += hl;
	o += craft_section(out + o, 1, raw, r);
	r = craft_varint(raw, 1);
	raw[r++] = 'f';
	r += craft_varint(raw + r, m->page_size);	/* size */
	r += craft_varint(raw + r, 0);			/* mtime, ns, dev, ino */
	r += craft_varint(raw + r, 0);
	r += craft_varint(raw + r, 0);
	r += craft_varint(raw + r, 0);
	r += craft_varint(raw + r, gen);
	r += craft_varint(raw + r, ident);
	if (tlen)
		memcpy(raw + r, tail, tlen);
	r += tlen;
	r += craft_varint(raw + r, 1);			/* one run: page 0 */
	r += craft_varint(raw + r, 0);
	r += craft_varint(raw + r, 1);
	r += craft_varint(raw + r, 0);			/* no active runs */
	o += craft_section(out + o, 2, raw, r);
	r = craft_varint(raw, 1);
	r += craft_varint(raw + r, 1);
	o += craft_section(out + o, 3, raw, r);
	*ret_len = o;
	return out;
}

static char *file_bytes(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* read everything; returns files read or -errno */
static int read_all(const void *buf, size_t len, char *err, size_t errlen)
{
	struct pc_profile_reader *r;
	struct pc_profile_file f;
	int rc, n = 0;

	rc = pc_profile_open_mem(buf, len, &r, err, errlen);
	if (rc < 0)
		return rc;
	while ((rc = pc_profile_next(r, &f)) > 0) {
		n++;
		pc_profile_file_release(&f);
	}
	if (rc < 0)
		snprintf(err, errlen, "%s", pc_profile_error(r));
	pc_profile_close(r);
	return rc < 0 ? rc : n;
}

static uint32_t header_version(const char *path)
{
	size_t l;
	char *b = file_bytes(path, &l);
	uint32_t v = l >= 12 ? (uint32_t)(uint8_t)b[8] | (uint32_t)(uint8_t)b[9] << 8 : 0;

	free(b);
	return v;
}

/* version 3: what `record` adds (meta, used triples, block device records) */
static void test_v3(const struct pc_profile_meta *m0)
{
	struct pc_profile_meta m = *m0;
	struct pc_profile_writer *w;
	struct pc_profile_reader *r;
	struct pc_profile_file g;
	char p3[600], err[256];
	uint64_t runs[] = { 0, 10, 20, 5 }, used[] = { 2, 3, 40, 5, 1, 7, 20, 2, 0 };
	uint64_t bruns[] = { 0, 1, 1000, 3 }, bused[] = { 1000, 1, 3 }, one[] = { 0, 1 };
	struct pc_profile_file a = { .path = "a", .size = 25 * 4096, .runs = runs, .nruns = 2,
				     .used = used, .nused = 3 },
			       plain = { .path = "p", .size = 4096, .runs = one, .nruns = 1 },
			       dev = { .path = "loop0", .size = 1ull << 30, .dev = 0x700,
				       .ident = PC_IDENT_BDEV | PC_IDENT_FSID, .fsid = 42,
				       .runs = bruns, .nruns = 2, .used = bused, .nused = 1 };
	int rc, n;

	snprintf(p3, sizeof(p3), "%s/v3", scratch_dir());

	/* version 4 always: its encoding is for every snapshot, plain ones too */
	ok(pc_profile_create(p3, &m, &w) == 0 && pc_profile_add(w, &plain) == 0 &&
		   pc_profile_commit(w) == 0,
	   "v3: a plain snapshot written");
	ok(header_version(p3) == 4, "a plain snapshot is version 4 (%u)", header_version(p3));

	/* meta says recorded: version 3 from the start */
	m.flags = PC_META_RECORDED, m.lost = 12345, m.duration_ms = 9876;
	ok(pc_profile_create(p3, &m, &w) == 0, "v3: create recorded");
	ok(pc_profile_add(w, &a) == 0, "v3: add a file with used triples");
	ok(pc_profile_add(w, &dev) == 0, "v3: add a block device record");
	{
		struct pc_profile_file f2 = dev;

		f2.path = "a";	/* a device and a file may share a name */
		f2.ident = PC_IDENT_BDEV;
		ok(pc_profile_add(w, &f2) == 0, "v3: a device named like a file is not a path twice");
		ok(pc_profile_add(w, &f2) == -EEXIST, "v3: but a device twice is");
	}
	ok(pc_profile_commit(w) == 0, "v3: committed");
	ok(header_version(p3) == 4, "v3 contents: version 4 (%u)", header_version(p3));
	rc = pc_profile_open(p3, &r, err, sizeof(err));
	ok(rc == 0 && pc_profile_get_meta(r)->flags == PC_META_RECORDED &&
		   pc_profile_get_meta(r)->lost == 12345 && pc_profile_get_meta(r)->duration_ms == 9876,
	   "v3: meta flags, lost and duration round-trip");
	ok(rc == 0 && pc_profile_next(r, &g) == 1 && g.nused == 3 &&
		   !memcmp(g.used, used, sizeof(used)) && g.ident == 0 &&
		   pc_profile_first_use(&g) == 0,
	   "v3: used triples round-trip (times not by page order), first use 0");
	if (rc == 0)
		pc_profile_file_release(&g);
	ok(rc == 0 && pc_profile_next(r, &g) == 1 && !strcmp(g.path, "loop0") &&
		   g.ident == (PC_IDENT_BDEV | PC_IDENT_FSID) && g.fsid == 42 && g.dev == 0x700 &&
		   g.size == 1ull << 30 && g.nruns == 2 && g.runs[2] == 1000 && g.nused == 1 &&
		   g.used[2] == 3,
	   "v3: a block device record round-trips");
	if (rc == 0)
		pc_profile_file_release(&g);
	n = 0;
	while (rc >= 0 && (rc = pc_profile_next(r, &g)) > 0) {
		n++;
		pc_profile_file_release(&g);
	}
	ok(rc == 0 && n == 1, "v3: then the third record and a clean end (%d, '%s')", n,
	   pc_profile_error(r));
	pc_profile_close(r);

	/* a plain meta, then one file with times */
	m.flags = 0, m.lost = 0, m.duration_ms = 0;
	ok(pc_profile_create(p3, &m, &w) == 0 && pc_profile_add(w, &plain) == 0 &&
		   pc_profile_add(w, &a) == 0 && pc_profile_commit(w) == 0,
	   "v3: plain meta, v3 contents in the second file");
	n = 0;
	rc = pc_profile_open(p3, &r, err, sizeof(err));
	while (rc >= 0 && (rc = pc_profile_next(r, &g)) > 0) {
		n += g.nused == (strcmp(g.path, "a") ? 0u : 3u);
		pc_profile_file_release(&g);
	}
	ok(rc == 0 && n == 2, "v3: and it reads back whole (%d, '%s')", n, r ? pc_profile_error(r) : err);
	pc_profile_close(r);

	/* the writer refuses what a reader would */
	{
		static const struct {
			uint64_t u[6];
			size_t n;
			const char *what;
		} wb[] = {
			{ { 3, 2, 0, 0, 2, 0 }, 2, "out of order" },
			{ { 0, 3, 0, 2, 2, 0 }, 2, "overlapping" },
			{ { 0, 0, 0 }, 1, "empty" },
			{ { 8, 4, 0 }, 1, "outside the cached runs" },
			{ { 24, 2, 0 }, 1, "past the file's end" },
			{ { 0, 1, 1ull << 43 }, 1, "a time past 2^42 ms" },
			{ { 1, UINT64_MAX, 0 }, 1, "a count that overflows" },
		};
		int refused = 0;

		m.flags = PC_META_RECORDED;
		ok(pc_profile_create(p3, &m, &w) == 0, "v3: create for refusals");
		for (size_t i = 0; i < sizeof(wb) / sizeof(wb[0]); i++) {
			struct pc_profile_file x = a;

			x.used = (uint64_t *)wb[i].u;
			x.nused = wb[i].n;
			if (pc_profile_add(w, &x) == -EINVAL)
				refused++;
			else
				fprintf(stderr, "# writer took %s\n", wb[i].what);
		}
		ok(refused == (int)(sizeof(wb) / sizeof(wb[0])),
		   "v3: the writer refuses used triples out of order, overlapping, empty, not cached, "
		   "past the end, too late, overflowing (%d)", refused);
		refused = 0;
		{
			static const char *names[] = { "", "a/b", "..", ".", ".x", "x y", "a\\b",
						       "0123456789012345678901234567890123456789"
						       "0123456789012345678901234" };

			for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
				struct pc_profile_file x = dev;

				x.path = (char *)names[i];
				refused += pc_profile_add(w, &x) < 0;
			}
			ok(refused == (int)(sizeof(names) / sizeof(names[0])),
			   "v3: the writer refuses device names that are not one safe component (%d)",
			   refused);
		}
		pc_profile_abort(w);
		m.flags = 2;
		ok(pc_profile_create(p3, &m, &w) == -EINVAL, "v3: and meta flags it does not know");
		m.flags = 0;
	}

	/* a hostile writer's v3 (by hand): each refused, naming the section */
	{
		static const struct {
			uint64_t u[6];
			size_t n;
			const char *want;
		} rb[] = {
			{ { 2, 3, 40, 5, 1, 7 }, 2, NULL },
			{ { 3, 2, 0, 0, 2, 0 }, 2, "outside the file or empty" },	/* back: wraps */
			{ { 0, 3, 0, 2, 2, 0 }, 2, "outside the file or empty" },	/* overlaps */
			{ { 0, 0, 0 }, 1, "outside the file or empty" },
			{ { 8, 4, 0 }, 1, "used pages of 'a' that are not cached" },
			{ { 24, 2, 0 }, 1, "outside the file" },
			{ { 1, UINT64_MAX, 0 }, 1, "outside the file" },
			{ { 0, 1, UINT64_MAX }, 1, "used time of 'a' out of range" },
			{ { 0, 1, (1ull << 42) + 1 }, 1, "used time of 'a' out of range" },
		};
		int good = 0;

		for (size_t i = 0; i < sizeof(rb) / sizeof(rb[0]); i++) {
			struct pc_profile_file x = a;
			uint8_t *b;
			size_t l;

			x.used = (uint64_t *)rb[i].u;
			x.nused = rb[i].n;
			b = craft_snapshot_v(&m, &x, 1, &l, 3);
			err[0] = 0;
			rc = read_all(b, l, err, sizeof(err));
			if (rb[i].want ? rc == -EBADMSG && strstr(err, rb[i].want) &&
						 !strncmp(err, "section 2: ", 11)
				       : rc == 1)
				good++;
			else
				fprintf(stderr, "# used case %zu: %d '%s'\n", i, rc, err);
			free(b);
		}
		ok(good == (int)(sizeof(rb) / sizeof(rb[0])),
		   "v3 by hand: good triples read; back, overlapping, empty, not cached, past the end, "
		   "overflowing, negative and late times refused in section 2 (%d)", good);
	}
	{
		static const struct {
			const char *name;
			uint32_t ident, version;
			size_t nused;
			const char *want;
		} cb[] = {
			{ "loop0", PC_IDENT_BDEV, 3, 0, NULL },
			{ "nvme0n1p1", PC_IDENT_BDEV, 3, 1, NULL },
			{ "a/b", PC_IDENT_BDEV, 3, 0, "block device name 'a/b' is not one safe component" },
			{ ".x", PC_IDENT_BDEV, 3, 0, "not one safe component" },
			{ "x y", PC_IDENT_BDEV, 3, 0, "not one safe component" },
			{ "..", PC_IDENT_BDEV, 3, 0, "unsafe path" },
			{ "loop0", PC_IDENT_BDEV, 2, 0, "unknown identity flags 0x8" },
			{ "a", 0, 2, 1, "unknown identity flags 0x10" },
		};
		int good = 0;

		for (size_t i = 0; i < sizeof(cb) / sizeof(cb[0]); i++) {
			struct pc_profile_file x = a;
			uint8_t *b;
			size_t l;

			x.path = (char *)cb[i].name;
			x.ident = cb[i].ident;
			x.nused = cb[i].nused;
			b = craft_snapshot_v(&m, &x, 1, &l, cb[i].version);
			err[0] = 0;
			rc = read_all(b, l, err, sizeof(err));
			if (cb[i].want ? rc == -EBADMSG && strstr(err, cb[i].want) : rc == 1)
				good++;
			else
				fprintf(stderr, "# bdev case %zu: %d '%s'\n", i, rc, err);
			free(b);
		}
		ok(good == (int)(sizeof(cb) / sizeof(cb[0])),
		   "by hand: device names one safe component; v3 flags refused in version 2 (%d)", good);
	}
	{
		struct pc_profile_file x = plain;
		uint8_t *b;
		size_t l;

		m.flags = 6;
		b = craft_snapshot_v(&m, &x, 1, &l, 3);
		rc = read_all(b, l, err, sizeof(err));
		ok(rc == -EBADMSG && strstr(err, "section 1: unknown meta flags 0x6"),
		   "by hand: unknown meta flags: '%s'", err);
		free(b);
		m.flags = PC_META_RECORDED, m.lost = 1;
		b = craft_snapshot_v(&m, &x, 1, &l, 2);	/* version 2: META without them */
		b[8] = 3;
		{
			uint32_t c = (uint32_t)crc32(0, b, 28);

			for (int i = 0; i < 4; i++)
				b[28 + i] = (uint8_t)(c >> (8 * i));
		}
		rc = read_all(b, l, err, sizeof(err));
		ok(rc == -EBADMSG && strstr(err, "section 1: record runs past the end"),
		   "by hand: a version 3 META without its fields: '%s'", err);
		free(b);
	}
}

/* n numbers alike (memcmp of NULL is undefined, even for 0 bytes) */
static bool same_u64(const uint64_t *a, const uint64_t *b, size_t n)
{
	return n == 0 || !memcmp(a, b, n * sizeof(*a));
}

/* Do two readings of one file agree, on what version `v` holds? */
static bool same_file(const struct pc_profile_file *a, const struct pc_profile_file *b, unsigned v)
{
	if (strcmp(a->path, b->path) || a->size != b->size || a->mtime_s != b->mtime_s ||
	    a->mtime_ns != b->mtime_ns || a->dev != b->dev || a->ino != b->ino || a->gen != b->gen ||
	    a->nruns != b->nruns || !same_u64(a->runs, b->runs, 2 * a->nruns) ||
	    a->nactive != b->nactive || !same_u64(a->active, b->active, 2 * a->nactive))
		return false;
	if (v >= 2 && (a->ident != b->ident || a->btime_s != b->btime_s ||
		       a->btime_ns != b->btime_ns || a->fsid != b->fsid))
		return false;
	if (v >= 6 && (a->ident & PC_IDENT_LAYER) && memcmp(a->layer, b->layer, sizeof(a->layer)))
		return false;
	return v < 3 || (a->nused == b->nused && same_u64(a->used, b->used, 3 * a->nused));
}

/* read buf; each record must be want[i] as version v holds it; the count, or -1 */
static int read_same(const void *buf, size_t len, const struct pc_profile_file *want, size_t n,
		     unsigned v, char *err, size_t errlen)
{
	struct pc_profile_reader *r;
	struct pc_profile_file g;
	int rc, k = 0;

	if (pc_profile_open_mem(buf, len, &r, err, errlen) < 0)
		return -1;
	while ((rc = pc_profile_next(r, &g)) > 0) {
		if ((size_t)k >= n || !same_file(&g, &want[k], v)) {
			snprintf(err, errlen, "record %d differs", k);
			rc = -1;
		}
		k++;
		pc_profile_file_release(&g);
		if (rc < 0)
			break;
	}
	if (rc < 0 && rc != -1)
		snprintf(err, errlen, "%s", pc_profile_error(r));
	pc_profile_close(r);
	return rc < 0 ? -1 : k;
}

static uint64_t xs = 88172645463325252ull;
static uint64_t rnd(void)
{
	xs ^= xs << 13, xs ^= xs >> 7, xs ^= xs << 17;
	return xs;
}

/*
 * Version 5: directory records (PC_IDENT_DIR, snapshot --metadata). The
 * writer writes 5 only when one is in the file, 4 otherwise; a directory
 * has a path, dev, ino, mtime and identity, never a size or pages; a
 * reader of version 4 refuses the flag, and version 5 refuses a directory
 * with pages, a directory that is a device, or an unsafe path.
 */
static void test_v5(const struct pc_profile_meta *m0)
{
	struct pc_profile_meta m = *m0;
	struct pc_profile_writer *w;
	char p5[600], err[600];
	uint64_t one[] = { 0, 1 };
	struct pc_profile_file fs[] = {
		{ .path = "d", .mtime_s = 1700000000, .mtime_ns = 7, .dev = 2049, .ino = 12,
		  .gen = 5, .ident = PC_IDENT_DIR | IDENT_TEST_ALL, .btime_s = 1700000000,
		  .fsid = 99 },
		{ .path = "d/a", .size = 4096, .mtime_s = 1700000001, .dev = 2049, .ino = 13,
		  .runs = one, .nruns = 1 },
		{ .path = "d/e", .mtime_s = 1700000002, .dev = 2049, .ino = 11,
		  .ident = PC_IDENT_DIR },
	};
	size_t nf = sizeof(fs) / sizeof(fs[0]), l;
	uint8_t *b;
	int rc;

	snprintf(p5, sizeof(p5), "%s/v5", scratch_dir());
	ok(pc_profile_create(p5, &m, &w) == 0, "v5: create");
	for (size_t i = 0; i < nf; i++)
		pc_profile_add(w, &fs[i]);
	ok(pc_profile_commit(w) == 0, "v5: written");
	b = (uint8_t *)file_bytes(p5, &l);
	rc = read_same(b, l, fs, nf, 5, err, sizeof(err));
	ok(header_version(p5) == 5 && rc == 3,
	   "v5: directories and a file read back field by field, version %u (%d, '%s')",
	   header_version(p5), rc, rc < 0 ? err : "");
	free(b);

	/* none: version 4, as before, for the builds that read 4 */
	ok(pc_profile_create(p5, &m, &w) == 0 && pc_profile_add(w, &fs[1]) == 0 &&
		   pc_profile_commit(w) == 0 && header_version(p5) == 4,
	   "v5: a snapshot without directories is version 4 (%u)", header_version(p5));

	/* the writer refuses what a reader would */
	ok(pc_profile_create(p5, &m, &w) == 0, "v5: create again");
	{
		struct pc_profile_file x = fs[2];
		int good = 0;

		x.size = 4096;
		good += pc_profile_add(w, &x) == -EINVAL;
		x.size = 0, x.runs = one, x.nruns = 1;
		good += pc_profile_add(w, &x) == -EINVAL;
		x.runs = NULL, x.nruns = 0, x.path = "loop0", x.ident |= PC_IDENT_BDEV;
		good += pc_profile_add(w, &x) == -EINVAL;
		ok(good == 3, "v5: the writer refuses a directory with a size, pages, or a device's flag");
	}
	pc_profile_abort(w);

	/* by hand: version 5 reads the records; version 4 refuses the flag */
	b = craft_snapshot_v(&m, fs, nf, &l, 5);
	rc = read_same(b, l, fs, nf, 5, err, sizeof(err));
	ok(rc == 3, "v5 by hand reads back (%d, '%s')", rc, rc < 0 ? err : "");
	free(b);
	b = craft_snapshot_v(&m, fs, 1, &l, 4);
	rc = read_all(b, l, err, sizeof(err));
	ok(rc == -EBADMSG && strstr(err, "unknown record flags 0x47"),
	   "v4 by hand: a directory's flag refused: '%s'", err);
	free(b);
	{
		static const struct {
			const char *path;
			uint64_t size, pages;
			uint32_t ident;
			const char *want;
		} cases[] = {
			{ "d", 4096, 0, PC_IDENT_DIR, "directory 'd' has a size or pages" },
			{ "d", 4096, 1, PC_IDENT_DIR, "directory 'd' has a size or pages" },
			{ "loop0", 0, 0, PC_IDENT_DIR | PC_IDENT_BDEV, "both a directory and a block device" },
			{ "../x", 0, 0, PC_IDENT_DIR, "unsafe path" },
			{ "a/./b", 0, 0, PC_IDENT_DIR, "unsafe path" },
		};
		int good = 0;

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct pc_profile_file x = { .path = (char *)cases[i].path, .size = cases[i].size,
						     .ident = cases[i].ident, .runs = one,
						     .nruns = cases[i].pages };

			b = craft_snapshot_v(&m, &x, 1, &l, 5);
			rc = read_all(b, l, err, sizeof(err));
			if (rc == -EBADMSG && strstr(err, cases[i].want))
				good++;
			else
				diag("case %zu: %d '%s'", i, rc, err);
			free(b);
		}
		ok(good == (int)(sizeof(cases) / sizeof(cases[0])),
		   "v5 by hand: a directory with a size or pages, a device, or an unsafe path refused (%d)",
		   good);
	}
}

/*
 * Version 6: layer digests (PC_IDENT_LAYER: a container's file from an
 * image layer). The writer writes 6 only when a digest is in the file; a
 * LAYERS section before each FILES section holds the digests its records
 * name, each record's index follows its flags. A reader of version 5
 * refuses the flag and the section; version 6 refuses an index past the
 * table, a digest not of its one form, a table no FILES section follows,
 * and a digest on a directory or device.
 */
static void test_v6(const struct pc_profile_meta *m0)
{
	struct pc_profile_meta m = *m0;
	struct pc_profile_writer *w;
	char p6[600], err[600];
	uint64_t one[] = { 0, 1 };
	struct pc_profile_file fs[] = {
		{ .path = "d", .mtime_s = 1700000000, .dev = 2049, .ino = 12, .ident = PC_IDENT_DIR },
		{ .path = "d/a", .size = 4096, .mtime_s = 1700000001, .dev = 2049, .ino = 13,
		  .runs = one, .nruns = 1, .ident = PC_IDENT_LAYER | PC_IDENT_BTIME,
		  .btime_s = 1700000000 },
		{ .path = "d/b", .size = 4096, .mtime_s = 1700000001, .dev = 2049, .ino = 14,
		  .runs = one, .nruns = 1 },
		{ .path = "d/c", .size = 4096, .mtime_s = 1700000002, .dev = 2049, .ino = 15,
		  .runs = one, .nruns = 1, .ident = PC_IDENT_LAYER },
		{ .path = "e", .size = 8192, .mtime_s = 1700000003, .dev = 2049, .ino = 16,
		  .runs = one, .nruns = 1, .ident = PC_IDENT_LAYER },
	};
	size_t nf = sizeof(fs) / sizeof(fs[0]), l;
	uint8_t *b;
	int rc;

	for (int i = 0; i < 32; i++) {
		fs[1].layer[i] = (uint8_t)(0xa0 + i);
		fs[3].layer[i] = (uint8_t)(0x10 * i + 1);
		fs[4].layer[i] = (uint8_t)(0xa0 + i);	/* d/a's layer again */
	}
	snprintf(p6, sizeof(p6), "%s/v6", scratch_dir());
	ok(pc_profile_create(p6, &m, &w) == 0, "v6: create");
	for (size_t i = 0; i < nf; i++)
		pc_profile_add(w, &fs[i]);
	ok(pc_profile_commit(w) == 0, "v6: written");
	b = (uint8_t *)file_bytes(p6, &l);
	rc = read_same(b, l, fs, nf, 6, err, sizeof(err));
	ok(header_version(p6) == 6 && rc == 5,
	   "v6: files with and without digests, and a directory, read back field by field, "
	   "version %u (%d, '%s')", header_version(p6), rc, rc < 0 ? err : "");
	free(b);
	{
		char t[PC_LAYER_TEXT], s12[PC_LAYER_TEXT];

		pc_profile_layer_text(fs[1].layer, 64, t, sizeof(t));
		pc_profile_layer_text(fs[1].layer, 12, s12, sizeof(s12));
		ok(!strcmp(t, "sha256:a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf") &&
			   !strcmp(s12, "sha256:a0a1a2a3a4a5"),
		   "v6: a digest as text, whole and short ('%s', '%s')", t, s12);
	}

	/* with directories and no digest: 5 */
	rc = pc_profile_create(p6, &m, &w) == 0 && pc_profile_add(w, &fs[0]) == 0 &&
	     pc_profile_add(w, &fs[2]) == 0 && pc_profile_commit(w) == 0;
	ok(rc && header_version(p6) == 5,
	   "v6: a snapshot with directories and no digest is version 5 (%u)", header_version(p6));

	/* the writer refuses a digest on a directory or a device */
	ok(pc_profile_create(p6, &m, &w) == 0, "v6: create again");
	{
		struct pc_profile_file x = fs[0];
		int good = 0;

		x.ident |= PC_IDENT_LAYER;
		good += pc_profile_add(w, &x) == -EINVAL;
		x = fs[4];
		x.path = "loop0";
		x.ident |= PC_IDENT_BDEV;
		good += pc_profile_add(w, &x) == -EINVAL;
		ok(good == 2, "v6: the writer refuses a digest on a directory or a device");
	}
	pc_profile_abort(w);

	/* sections stand alone: each has the table of its own records */
	{
		enum { MANY = 30000 };
		struct pc_profile_file *mf = calloc(MANY, sizeof(*mf));
		char (*paths)[64] = malloc(MANY * sizeof(*paths));
		struct pc_profile_reader *r = NULL;
		struct pc_profile_file g;
		int n = 0, good = 0, sections = 0;

		for (int i = 0; i < MANY; i++) {
			/* paths that share little: front coding leaves most of them */
			snprintf(paths[i], sizeof(paths[i]), "%08x/files/number-%08d.dat",
				 (unsigned)(i * 2654435761u), i);
			mf[i] = (struct pc_profile_file){ .path = paths[i], .size = 4096,
							  .mtime_s = 1700000000 + i, .ino = 100 + i,
							  .runs = one, .nruns = 1 };
			if (i % 4) {
				mf[i].ident = PC_IDENT_LAYER;
				mf[i].layer[0] = (uint8_t)(i % 4);
				mf[i].layer[31] = 0x5a;
			}
		}
		rc = pc_profile_create(p6, &m, &w);
		for (int i = 0; i < MANY && rc == 0; i++)
			rc = pc_profile_add(w, &mf[i]);
		if (rc == 0)
			rc = pc_profile_commit(w);
		else
			pc_profile_abort(w);
		if (rc == 0)
			rc = pc_profile_open(p6, &r, err, sizeof(err));
		while (rc == 0 && (rc = pc_profile_next(r, &g)) > 0) {
			good += n < MANY && !strcmp(g.path, mf[n].path) && g.ident == mf[n].ident &&
				!memcmp(g.layer, mf[n].ident ? mf[n].layer : (uint8_t[32]){ 0 }, 32);
			n++;
			pc_profile_file_release(&g);
			rc = 0;
		}
		if (r)
			pc_profile_close(r);
		b = (uint8_t *)file_bytes(p6, &l);
		/* the sections' types, header to END */
		for (size_t o = 32; b && o + 16 <= l;) {
			uint32_t clen = (uint32_t)b[o + 8] | (uint32_t)b[o + 9] << 8 |
					(uint32_t)b[o + 10] << 16 | (uint32_t)b[o + 11] << 24;

			sections += b[o] == 4;
			o += 16 + clen;
		}
		ok(rc == 0 && n == MANY && good == MANY && sections >= 2,
		   "v6: %d files in sections of their own (%d LAYERS sections), each digest read back "
		   "(%d good)", n, sections, good);
		free(b);
		free(paths);
		free(mf);
	}

	/* by hand: version 6 reads the records; version 5 refuses the flag and the section */
	b = craft_snapshot_v(&m, fs, nf, &l, 6);
	rc = read_same(b, l, fs, nf, 6, err, sizeof(err));
	ok(rc == 5, "v6 by hand reads back (%d, '%s')", rc, rc < 0 ? err : "");
	free(b);
	b = craft_snapshot_v(&m, fs + 2, 1, &l, 6);
	rc = read_same(b, l, fs + 2, 1, 6, err, sizeof(err));
	ok(rc == 1, "v6 by hand without a digest: no LAYERS section, read (%d, '%s')", rc,
	   rc < 0 ? err : "");
	free(b);
	{
		uint8_t lay[128], files[256];
		size_t ll = craft_layers(lay, fs + 1, 1), fl = craft_columns_v4(files, fs + 1, 1);

		b = craft_wrap_layers(&m, 5, lay, ll, files, fl, 1, 1, &l);
		rc = read_all(b, l, err, sizeof(err));
		ok(rc == -EBADMSG && strstr(err, "section 2: unknown section type 4"),
		   "v5 by hand: a LAYERS section refused: '%s'", err);
		free(b);
		b = craft_wrap_layers(&m, 5, NULL, 0, files, fl, 1, 1, &l);
		rc = read_all(b, l, err, sizeof(err));
		ok(rc == -EBADMSG && strstr(err, "unknown record flags 0x82"),
		   "v5 by hand: a digest's flag refused: '%s'", err);
		free(b);
	}
	{
		static const struct {
			int what;
			const char *want;
		} cases[] = {
			{ 0, "section 2: layer index 0 out of range (0 digests) (file 'd/a')" },
			{ 1, "section 2: layer digest 0 is not sha256: and 64 lowercase hex digits" },
			{ 2, "section 2: layer digest 0 is not sha256: and 64 lowercase hex digits" },
			{ 3, "section 3: a LAYERS section with no FILES section after it" },
			{ 4, "section 3: a LAYERS section where its FILES section should be" },
			{ 5, "section 2: 3 bytes after the layer digests" },
			{ 6, "section 2: layer digest count 0 out of range" },
			{ 7, "'d' has a layer digest but is not a file" },
			{ 8, "section 3: layer index 1 out of range (1 digests) (file 'd/a')" },
		};
		int good = 0;

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			uint8_t lay[256], files[256], sec[1024];
			struct pc_profile_file x = fs[1];
			size_t ll = craft_layers(lay, &x, 1), fl, o = 0;

			switch (cases[i].what) {
			case 0:	/* a record with a digest, no LAYERS section */
				ll = 0;
				break;
			case 1:	/* an uppercase hex digit */
				lay[1 + 7 + 3] = 'A';
				break;
			case 2:	/* another algorithm's name */
				memcpy(lay + 2, "sha512", 6);
				break;
			case 3:	/* LAYERS, then END */
				break;
			case 5:	/* bytes after the table */
				memcpy(lay + ll, "xyz", 3);
				ll += 3;
				break;
			case 6:
				lay[0] = 0;
				ll = 1;
				break;
			case 7:	/* a directory with a digest */
				x = fs[0];
				x.ident |= PC_IDENT_LAYER;
				memcpy(x.layer, fs[1].layer, 32);
				ll = craft_layers(lay, &x, 1);
				break;
			case 8:	/* an index past the table */
				break;
			}
			fl = craft_columns_v4(files, &x, 1);
			if (cases[i].what == 8) {
				/* the flags column's index: path "d/a" (2 + 3 bytes), flags, index */
				size_t at = 1 + 12 + 5 + 2;	/* count, 12 lengths of one byte, path, flags */

				files[at] = 1;
			}
			if (cases[i].what == 3) {
				b = craft_wrap_layers(&m, 6, lay, ll, NULL, 0, 0, 0, &l);
			} else if (cases[i].what == 4) {
				/* two LAYERS sections in a row: the second written by hand */
				b = craft_wrap_layers(&m, 6, lay, ll, files, fl, 1, 1, &l);
				o = craft_section(sec, 4, lay, ll);
				b = realloc(b, l + o);
				/* after META: the header (32) and META's section */
				{
					size_t meta = 32 + 16 + ((size_t)b[32 + 8] | (size_t)b[32 + 9] << 8);

					memmove(b + meta + o, b + meta, l - meta);
					memcpy(b + meta, sec, o);
					l += o;
				}
			} else {
				b = craft_wrap_layers(&m, 6, lay, ll, files, fl, 1, 1, &l);
			}
			rc = read_all(b, l, err, sizeof(err));
			if (rc == -EBADMSG && strstr(err, cases[i].want))
				good++;
			else
				diag("case %zu: %d '%s'", i, rc, err);
			free(b);
		}
		ok(good == (int)(sizeof(cases) / sizeof(cases[0])),
		   "v6 by hand: a missing or bad table, an index past it, a table with no FILES, "
		   "a digest on a directory refused, each by name (%d)", good);
	}
}

/* A FILES section of version 4 by hand: the record count, then the columns as given. */
struct col {
	const char *b;
	size_t n;
};
#define C(s) { s, sizeof(s) - 1 }
static uint8_t *v4_by_hand(const struct pc_profile_meta *m, uint64_t nrec, const struct col *c,
			   size_t extra, uint64_t nfiles, size_t *len)
{
	uint8_t raw[4096];
	size_t r = craft_varint(raw, nrec);

	for (int k = 0; k < 12; k++)
		r += craft_varint(raw + r, c[k].n);
	for (int k = 0; k < 12; k++) {
		if (c[k].n)
			memcpy(raw + r, c[k].b, c[k].n);
		r += c[k].n;
	}
	memset(raw + r, 0, extra);
	return craft_wrap(m, 4, raw, r + extra, nfiles, nfiles, len);
}

/*
 * Version 4: the columns. Old versions (1 to 3, by hand as their writers
 * made them, and the committed fuzz seeds) read as before; every field
 * round-trips; hostile columns are refused naming the section and the
 * file; and a tree like the benchmark's takes well under 10 bytes a file.
 */
static void test_v4(const struct pc_profile_meta *m0)
{
	struct pc_profile_meta m = *m0;
	struct pc_profile_writer *w;
	char p4[600], err[600];
	uint64_t whole[] = { 0, 3 }, two[] = { 0, 1, 2, 1 }, act[] = { 2, 1 }, used[] = { 0, 1, 7 };
	struct pc_profile_file fs[] = {
		{ .path = "d/a", .size = 3 * 4096, .mtime_s = 1700000000, .mtime_ns = 5, .dev = 2049,
		  .ino = 10, .gen = 0xfedcba98, .ident = IDENT_TEST_ALL, .btime_s = 1700000000,
		  .btime_ns = 5, .fsid = 0x1234567890abcdefull, .runs = whole, .nruns = 1 },
		{ .path = "d/ab", .size = 3 * 4096 - 1, .mtime_s = 1699999999, .mtime_ns = 999999999,
		  .dev = 2049, .ino = 9, .gen = 0, .ident = PC_IDENT_GEN | PC_IDENT_BTIME,
		  .btime_s = -5, .btime_ns = 0, .runs = two, .nruns = 2, .active = act, .nactive = 1 },
		{ .path = "e", .size = 3 * 4096, .mtime_s = 1, .mtime_ns = 0, .dev = 7, .ino = 1ull << 40,
		  .runs = whole, .nruns = 1, .active = act, .nactive = 1 },
	};
	size_t nf = sizeof(fs) / sizeof(fs[0]), l;
	uint8_t *b;
	int rc;

	/* the same records, as each version holds them: by hand (1 to 4) and by the writer */
	for (unsigned v = 1; v <= 4; v++) {
		struct pc_profile_file want[3];

		memcpy(want, fs, sizeof(want));
		for (size_t i = 0; v == 1 && i < nf; i++)
			want[i].ident = want[i].gen ? PC_IDENT_GEN : 0;	/* no flags in version 1 */
		b = craft_snapshot_v(&m, want, nf, &l, v);
		rc = read_same(b, l, want, nf, v, err, sizeof(err));
		ok(rc == (int)nf, "version %u by hand reads back field by field (%d, '%s')", v, rc,
		   rc < 0 ? err : "");
		free(b);
	}
	snprintf(p4, sizeof(p4), "%s/v4", scratch_dir());
	ok(pc_profile_create(p4, &m, &w) == 0, "v4: create");
	for (size_t i = 0; i < nf; i++)
		pc_profile_add(w, &fs[i]);
	{
		uint64_t one[] = { 0, 1 };
		struct pc_profile_file want[4];

		memcpy(want, fs, sizeof(fs));
		want[3] = (struct pc_profile_file){ .path = "u", .size = 4096, .runs = one,
						    .nruns = 1, .used = used, .nused = 1 };
		ok(pc_profile_add(w, &want[3]) == 0 && pc_profile_commit(w) == 0, "v4: written");
		b = (uint8_t *)file_bytes(p4, &l);
		rc = read_same(b, l, want, 4, 4, err, sizeof(err));
		ok(header_version(p4) == 4 && rc == 4,
		   "v4: the writer's records read back field by field (%d, '%s')", rc,
		   rc < 0 ? err : "");
		free(b);
	}

	/* META's appended fields: record's source, then active pages unknown */
	{
		static const struct { uint32_t source, active; } cases[] = {
			{ 0, PC_META_ACTIVE_UNKNOWN }, { PC_META_SRC_MISSES, PC_META_ACTIVE_UNKNOWN },
			{ PC_META_SRC_USE, 0 }, { 0, 0 },
		};
		char pm[600];

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct pc_profile_meta mm = m;
			struct pc_profile_reader *rd = NULL;
			const struct pc_profile_meta *got;

			snprintf(pm, sizeof(pm), "%s/meta%zu", scratch_dir(), i);
			mm.source = cases[i].source;
			mm.active = cases[i].active;
			ok(pc_profile_create(pm, &mm, &w) == 0 && pc_profile_add(w, &fs[0]) == 0 &&
			   pc_profile_commit(w) == 0, "meta %zu: written", i);
			rc = pc_profile_open(pm, &rd, err, sizeof(err));
			got = rc == 0 ? pc_profile_get_meta(rd) : NULL;
			ok(got && got->source == cases[i].source && got->active == cases[i].active,
			   "meta %zu: source %u and active %u read back (%u, %u)", i, cases[i].source,
			   cases[i].active, got ? got->source : 99, got ? got->active : 99);
			if (rd)
				pc_profile_close(rd);
		}
	}

	/* committed files of older versions, from the fuzz corpus: read as they always were */
	{
		static const struct {
			const char *name;
			unsigned version, files;
			const char *first;
			uint64_t size, gen, fsid;
		} seeds[] = {
			{ "seed-two-files.snap", 1, 1, "tmp/rt/d/f1", 4194304, 425858473, 0 },
			{ "seed-v2-identity.snap", 2, 2, "d/one", 20000, 524407236,
			  0x9498c9a555f2807bull },
			{ "seed-v3-recorded.snap", 3, 3, "A", 40960, 0, 0 },
			{ "seed-v6-layers.snap", 6, 4, "etc", 0, 0, 0 },
		};

		for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
			char sp[1024];
			struct pc_profile_reader *r;
			struct pc_profile_file g;
			int n = 0, good = 0;

			snprintf(sp, sizeof(sp), "%s/tests/fuzz/corpus-profile/%s", PC_SRCDIR,
				 seeds[i].name);
			b = (uint8_t *)file_bytes(sp, &l);
			rc = pc_profile_open_mem(b, l, &r, err, sizeof(err));
			while (rc == 0 && (rc = pc_profile_next(r, &g)) > 0) {
				if (n++ == 0)
					good = !strcmp(g.path, seeds[i].first) &&
					       g.size == seeds[i].size && g.gen == seeds[i].gen &&
					       g.fsid == seeds[i].fsid;
				else if (seeds[i].version == 3 && n == 3)
					good &= !strcmp(g.path, "loop0") && g.ident == PC_IDENT_BDEV &&
						g.nused == 1;
				else if (seeds[i].version == 6 && n == 2)
					good &= !strcmp(g.path, "etc/os-release") &&
						(g.ident & PC_IDENT_LAYER) && g.layer[0] == 0xd5 &&
						g.layer[31] == (0xd5 ^ 31) && g.fsid == 0x1234;
				else if (seeds[i].version == 6 && n == 4)
					good &= !strcmp(g.path, "var/new") && !(g.ident & PC_IDENT_LAYER);
				pc_profile_file_release(&g);
				rc = 0;
			}
			ok(l > 12 && b[8] == seeds[i].version && rc == 0 && good &&
				   n == (int)seeds[i].files,
			   "committed version %u file %s reads (%d files, '%s')", seeds[i].version,
			   seeds[i].name, n, rc < 0 ? pc_profile_error(r) : "");
			pc_profile_close(r);
			free(b);
		}
	}

	/* hostile, through the hand encoder */
	{
		static uint64_t act2[] = { 1, 1 };
		static const struct {
			struct pc_profile_file f[2];
			size_t n;
			const char *want;
		} hb[] = {
			{ { { .path = "a", .size = 4096, .ident = 64 } }, 1,
			  "section 2: unknown record flags 0x40 (file 'a')" },
			{ { { .path = "a", .size = 0, .ident = 32 } }, 1,
			  "section 2: an empty file cached whole (file 'a')" },
			{ { { .path = "a", .size = 4096, .mtime_ns = 1000000000 } }, 1,
			  "section 2: mtime nanoseconds out of range (file 'a')" },
			{ { { .path = "a", .size = 4096, .ident = PC_IDENT_BTIME,
			      .btime_ns = 1000000001 } }, 1,
			  "section 2: birth time nanoseconds out of range (file 'a')" },
			{ { { .path = "a", .size = 4096, .ident = PC_IDENT_FSID } }, 1,
			  "section 2: filesystem id 0 given as known (file 'a')" },
			{ { { .path = "a", .size = 4096 }, { .path = "a", .size = 4096 } }, 2,
			  "section 2: 'a' is listed twice" },
			{ { { .path = "/x", .size = 4096 } }, 1,
			  "section 2: unsafe path '/x' (absolute, empty, '.' or '..')" },
			{ { { .path = "a/b", .size = 4096 }, { .path = "a/..", .size = 4096 } }, 2,
			  "section 2: unsafe path 'a/..' (absolute, empty, '.' or '..')" },
			{ { { .path = "a", .size = 4096, .ident = 32, .active = act2,
			      .nactive = 1 } }, 1,
			  "section 2: page run outside the file or out of order (file 'a')" },
		};
		int good = 0;

		for (size_t i = 0; i < sizeof(hb) / sizeof(hb[0]); i++) {
			b = craft_snapshot_v(&m, hb[i].f, hb[i].n, &l, 4);
			rc = read_all(b, l, err, sizeof(err));
			if (rc == -EBADMSG && !strcmp(err, hb[i].want))
				good++;
			else
				diag("case %zu: %d '%s', want '%s'", i, rc, err, hb[i].want);
			free(b);
		}
		ok(good == (int)(sizeof(hb) / sizeof(hb[0])),
		   "v4 by hand: each bad field refused, naming section and file (%d)", good);
	}

	/* hostile columns, byte by byte: path "a", flags 0, size 1 page, runs 0+1, no active */
	{
		static const struct {
			uint64_t nrec;
			struct col c[12];
			size_t extra;
			const char *want;
		} cb[] = {
			{ 1, { C("\x00\x01" "a"), C("\x00"), C("\x80\x20"), C("\x00\x00"), C("\x00"),
			       C("\x00"), C(""), C(""), C(""), C("\x01\x00\x01"), C("\x00"), C("") },
			  0, NULL },
			{ 1, { C("\x00\x01" "a"), C("\x00"), C("\x80\x20"), C("\x00\x00"), C("\x00"),
			       C("\x00"), C(""), C(""), C(""), C("\x01\x00\x01"), C("\x00"), C("") },
			  1, "section 2: 1 bytes after the last column" },
			{ 1, { C("\x00\x01" "a"), C("\x00"), C("\x80\x20\x05"), C("\x00\x00"), C("\x00"),
			       C("\x00"), C(""), C(""), C(""), C("\x01\x00\x01"), C("\x00"), C("") },
			  0, "section 2: 1 bytes left in the size column after the last record (file 'a')" },
			{ 1, { C("\x00\x01" "a"), C("\x00"), C("\x80\x20"), C("\x00\x00"), C("\x00"),
			       C("\x00"), C(""), C(""), C(""), C("\x01\x00"), C("\x00"), C("") },
			  0, "section 2: run count 1 out of range (file 'a')" },
			{ 1, { C("\x00\x01" "a"), C("\x01"), C("\x80\x20"), C("\x00\x00"), C("\x00"),
			       C("\x00"), C("\x01\x02\x03"), C(""), C(""), C("\x01\x00\x01"), C("\x00"),
			       C("") },
			  0, "section 2: record runs past the end of the generation column (file 'a')" },
			{ 1, { C("\x01\x01" "a"), C("\x00"), C("\x80\x20"), C("\x00\x00"), C("\x00"),
			       C("\x00"), C(""), C(""), C(""), C("\x01\x00\x01"), C("\x00"), C("") },
			  0, "section 2: path length out of range (1 shared, 1 more)" },
			{ 1, { C("\x00\x00"), C("\x00"), C("\x80\x20"), C("\x00\x00"), C("\x00"),
			       C("\x00"), C(""), C(""), C(""), C("\x01\x00\x01"), C("\x00"), C("") },
			  0, "section 2: path length out of range (0 shared, 0 more)" },
			{ 1, { C("\x00\x01\x00"), C("\x00"), C("\x80\x20"), C("\x00\x00"), C("\x00"),
			       C("\x00"), C(""), C(""), C(""), C("\x01\x00\x01"), C("\x00"), C("") },
			  0, "section 2: NUL inside a path" },
			{ 0, { C("") }, 0, "section 2: record count 0 out of range" },
			{ 2, { C("\x00\x01" "a"), C("\x00"), C("\x80\x20"), C("\x00\x00"), C("\x00"),
			       C("\x00"), C(""), C(""), C(""), C("\x01\x00\x01"), C("\x00"), C("") },
			  0, "section 2: record runs past the end of the path column" },
		};
		int good = 0;

		for (size_t i = 0; i < sizeof(cb) / sizeof(cb[0]); i++) {
			b = v4_by_hand(&m, cb[i].nrec, cb[i].c, cb[i].extra, 1, &l);
			rc = read_all(b, l, err, sizeof(err));
			if (cb[i].want ? rc == -EBADMSG && !strcmp(err, cb[i].want) : rc == 1)
				good++;
			else
				diag("columns %zu: %d '%s', want '%s'", i, rc, err,
				     cb[i].want ? cb[i].want : "one file");
			free(b);
		}
		ok(good == (int)(sizeof(cb) / sizeof(cb[0])),
		   "v4 by hand: the columns' lengths, paths and leftovers checked (%d)", good);
	}

	/* compact: 10,000 files as the benchmark's tree makes them (100 x 100, random sizes) */
	{
		enum { N = 10000 };
		struct pc_profile_file *t = calloc(N, sizeof(*t));
		uint64_t *r2 = calloc(2 * N, sizeof(*r2));
		size_t l3;
		uint8_t *b3;

		ok(pc_profile_create(p4, &m, &w) == 0, "compact: create");
		for (int i = 0; i < N; i++) {
			char *p;

			if (asprintf(&p, "var/tmp/tree/d%03d/s%02d/f%03d", i / 1000, i / 100 % 10,
				     i % 100) < 0)
				return;
			t[i] = (struct pc_profile_file){
				.path = p, .size = 4096 + rnd() % 61441, .mtime_s = 1796154064 + i / 2000,
				.mtime_ns = (uint32_t)(299037481 + 4000000 * (i / 100) % 999999999),
				.dev = 0xfe00, .ino = 1459997 + (uint64_t)i, .gen = (uint32_t)rnd(),
				.ident = IDENT_TEST_ALL, .fsid = 0xa66bd13d46af76abull,
				.runs = r2 + 2 * i, .nruns = 1 };
			t[i].btime_s = t[i].mtime_s;
			t[i].btime_ns = t[i].mtime_ns;
			r2[2 * i + 1] = (t[i].size + 4095) / 4096;
			pc_profile_add(w, &t[i]);
		}
		ok(pc_profile_commit(w) == 0, "compact: written");
		b = (uint8_t *)file_bytes(p4, &l);
		b3 = craft_snapshot_v(&m, t, N, &l3, 3);
		ok(read_same(b, l, t, N, 4, err, sizeof(err)) == N && l < 8 * N && l * 10 < l3 * 6,
		   "compact: %zu bytes for %d files (%.1f a file; version 3 took %zu), all read back",
		   l, N, (double)l / N, l3);
		free(b);
		free(b3);
		for (int i = 0; i < N; i++)
			free(t[i].path);
		free(t);
		free(r2);
	}
}

/* n numbers of v are want's */
static bool same_u64s(const uint64_t *v, size_t n, const uint64_t *want, size_t nwant)
{
	return n == nwant && (!n || !memcmp(v, want, n * sizeof(*v)));
}

/* copies of the arrays given, as the reader makes them (merge frees and replaces) */
static struct pc_profile_file rec(const char *path, const uint64_t *runs, size_t nruns,
				  const uint64_t *active, size_t nactive, const uint64_t *used,
				  size_t nused)
{
	struct pc_profile_file f = { .size = 200 * 4096, .mtime_s = 1700000000, .mtime_ns = 5,
				     .dev = 2049, .ino = 12, .gen = 7, .fsid = 0xabcdef,
				     .ident = PC_IDENT_GEN | PC_IDENT_FSID };

	f.path = strdup(path);
	f.runs = nruns ? malloc(2 * nruns * sizeof(*runs)) : NULL;
	f.active = nactive ? malloc(2 * nactive * sizeof(*active)) : NULL;
	f.used = nused ? malloc(3 * nused * sizeof(*used)) : NULL;
	if (nruns)
		memcpy(f.runs, runs, 2 * nruns * sizeof(*runs));
	if (nactive)
		memcpy(f.active, active, 2 * nactive * sizeof(*active));
	if (nused)
		memcpy(f.used, used, 3 * nused * sizeof(*used));
	f.nruns = nruns;
	f.nactive = nactive;
	f.nused = nused;
	return f;
}

/* restore of several snapshots: which records are of one file, and their union */
static void test_merge(const struct pc_profile_meta *m0)
{
	uint64_t ra[] = { 0, 10, 20, 5 }, rb[] = { 5, 10, 25, 5, 100, 1 };
	uint64_t aa[] = { 2, 3 }, ab[] = { 8, 4 };
	uint64_t ua[] = { 0, 4, 100, 20, 5, 50 }, ub[] = { 2, 6, 30, 25, 5, 10 };
	uint64_t want_runs[] = { 0, 15, 20, 10, 100, 1 }, want_active[] = { 2, 3, 8, 4 };
	uint64_t want_used[] = { 0, 2, 100, 2, 6, 30, 20, 5, 50, 25, 5, 10 };
	struct pc_profile_file a = rec("f", ra, 2, aa, 1, ua, 2), b = rec("f", rb, 3, ab, 1, ub, 2);
	struct pc_profile_file c;
	struct pc_profile_meta m = *m0;
	struct pc_profile_writer *w;
	char path[512];

	ok(pc_profile_same_file(&a, &b), "merge: the same identity is the same file");
	c = b;
	c.mtime_ns++;
	ok(!pc_profile_same_file(&a, &c), "merge: another mtime is another file");
	c = b;
	c.size += 4096;
	ok(!pc_profile_same_file(&a, &c), "merge: another size is another file");
	c = b;
	c.ino++;
	ok(!pc_profile_same_file(&a, &c), "merge: another inode is another file");
	c = b;
	c.gen++;
	ok(!pc_profile_same_file(&a, &c), "merge: another generation is another file");
	c.ident &= ~PC_IDENT_GEN;
	ok(pc_profile_same_file(&a, &c), "merge: a generation one side lacks is not compared");
	c = b;
	c.dev = 42;
	ok(pc_profile_same_file(&a, &c), "merge: by f_fsid where both have it, st_dev aside "
	   "(a reboot renumbers it)");
	c.ident &= ~PC_IDENT_FSID;
	ok(!pc_profile_same_file(&a, &c), "merge: by st_dev where one lacks f_fsid");
	c = b;
	c.fsid++;
	ok(!pc_profile_same_file(&a, &c), "merge: another filesystem is another file");
	c = b;
	c.ident |= PC_IDENT_BDEV;
	ok(!pc_profile_same_file(&a, &c), "merge: a block device's record is never a file's");
	c = b;
	c.ident |= PC_IDENT_BTIME;
	c.btime_s = 1690000000;
	c.btime_ns = 3;

	ok(pc_profile_file_merge(&a, &c) == 0, "merge: united");
	ok(same_u64s(a.runs, 2 * a.nruns, want_runs, 6),
	   "merge: cached runs united, overlapping and touching ones joined");
	ok(same_u64s(a.active, 2 * a.nactive, want_active, 4), "merge: active runs united");
	ok(same_u64s(a.used, 3 * a.nused, want_used, 12),
	   "merge: used ranges united, each page at the earlier time");
	ok((a.ident & PC_IDENT_BTIME) && a.btime_s == 1690000000 && a.btime_ns == 3,
	   "merge: a birth time only the other knew is kept");
	ok(same_u64s(b.runs, 2 * b.nruns, rb, 6) && same_u64s(b.used, 3 * b.nused, ub, 6),
	   "merge: the record merged from is left as it was");

	/* what the merge makes, the writer takes: used and active inside the runs, in order */
	snprintf(path, sizeof(path), "%s/merged.snap", scratch_dir());
	m.flags = PC_META_RECORDED;
	ok(pc_profile_create(path, &m, &w) == 0 && pc_profile_add(w, &a) == 0 &&
	   pc_profile_commit(w) == 0, "merge: the writer takes the merged record");
	unlink(path);
	pc_profile_file_release(&a);

	/* a snapshot (no times) and a recording: the recording's times stay */
	a = rec("f", ra, 2, NULL, 0, NULL, 0);
	ok(pc_profile_file_merge(&a, &b) == 0 && same_u64s(a.used, 3 * a.nused, ub, 6),
	   "merge: a snapshot without times keeps the recording's");
	pc_profile_file_release(&a);
	a = rec("f", ra, 2, aa, 1, ua, 2);
	c = rec("f", NULL, 0, NULL, 0, NULL, 0);
	ok(pc_profile_file_merge(&a, &c) == 0 && same_u64s(a.runs, 2 * a.nruns, ra, 4) &&
	   same_u64s(a.active, 2 * a.nactive, aa, 2) && same_u64s(a.used, 3 * a.nused, ua, 6),
	   "merge: with a record of no pages, nothing changes");
	ok(pc_profile_file_merge(&c, &c) == 0 && c.nruns == 0 && c.nused == 0,
	   "merge: two of no pages make none");
	pc_profile_file_release(&a);
	pc_profile_file_release(&b);
	pc_profile_file_release(&c);
}

int main(void)
{
	struct pc_profile_meta m = { .created = 1700000000, .page_size = 4096 };
	struct pc_profile_writer *w;
	struct pc_profile_reader *r;
	struct pc_profile_file f, g;
	char path[512], err[256];
	uint64_t runs[] = { 0, 10, 20, 5, 1000, 1 }, active[] = { 2, 3 };
	size_t len;
	char *buf;
	int rc, n;

	snprintf(m.root, sizeof(m.root), "/srv/db");
	snprintf(m.host, sizeof(m.host), "host1");
	snprintf(path, sizeof(path), "%s/snap", scratch_dir());

	ok(pc_profile_create(path, &m, &w) == 0, "create");
	f = (struct pc_profile_file){ .path = "data/t.ibd", .size = 4096 * 1001, .mtime_s = 123,
				      .mtime_ns = 456, .dev = 2049, .ino = 77, .gen = 9,
				      .runs = runs, .nruns = 3, .active = active, .nactive = 1 };
	ok(pc_profile_add(w, &f) == 0, "add a file");
	/* many files, to cross section boundaries */
	for (int i = 0; i < 30000; i++) {
		char p[64];
		struct pc_profile_file x = { .path = p, .size = 8192, .runs = runs, .nruns = 1 };
		uint64_t one[] = { 0, 2 };

		snprintf(p, sizeof(p), "many/f%05d", i);
		x.runs = one;
		if (pc_profile_add(w, &x) < 0)
			break;
	}
	f.path = "../etc/shadow";
	ok(pc_profile_add(w, &f) == 0, "the writer does not judge paths (the reader does)");
	ok(pc_profile_add(w, &f) == -EEXIST, "the writer refuses a path twice");
	{
		uint64_t outside[] = { 11, 10 };	/* pages 11-20: 20 is not cached */
		struct pc_profile_file y = f;

		y.path = "other";
		y.active = outside;
		ok(pc_profile_add(w, &y) == -EINVAL, "the writer refuses active pages not cached");
	}
	pc_profile_abort(w);
	ok(access(path, F_OK) != 0, "abort leaves no file");

	ok(pc_profile_create(path, &m, &w) == 0, "create again");
	f.path = "data/t.ibd";
	pc_profile_add(w, &f);
	for (int i = 0; i < 30000; i++) {
		char p[64];
		uint64_t one[] = { 0, 2 };
		struct pc_profile_file x = { .path = p, .size = 8192, .runs = one, .nruns = 1 };

		snprintf(p, sizeof(p), "many/f%05d", i);
		pc_profile_add(w, &x);
	}
	ok(pc_profile_commit(w) == 0, "commit");

	rc = pc_profile_open(path, &r, err, sizeof(err));
	ok(rc == 0, "open");
	ok(!strcmp(pc_profile_get_meta(r)->root, "/srv/db") &&
		   !strcmp(pc_profile_get_meta(r)->host, "host1") &&
		   pc_profile_get_meta(r)->page_size == 4096,
	   "meta round-trips");
	ok(pc_profile_next(r, &g) == 1, "first file");
	ok(!strcmp(g.path, "data/t.ibd") && g.size == 4096 * 1001 && g.mtime_s == 123 &&
		   g.mtime_ns == 456 && g.dev == 2049 && g.ino == 77 && g.gen == 9,
	   "identity round-trips");
	ok(g.ident == PC_IDENT_GEN, "a generation given alone counts as known (ident %u)", g.ident);
	ok(g.nruns == 3 && !memcmp(g.runs, runs, sizeof(runs)), "runs round-trip");
	ok(g.nactive == 1 && g.active[0] == 2 && g.active[1] == 3, "active runs round-trip");
	pc_profile_file_release(&g);
	n = 0;
	while ((rc = pc_profile_next(r, &g)) > 0) {
		n++;
		pc_profile_file_release(&g);
	}
	ok(rc == 0 && n == 30000, "30000 more files over several sections, then a clean end");
	pc_profile_close(r);

	buf = file_bytes(path, &len);
	ok(len < 30001 * 64, "compact: %zu bytes for 30001 files (< 64 per run)", len);

	/* every truncation is an error, never a crash or a silent short read */
	{
		int bad = 0;

		for (size_t cut = 0; cut < len; cut += (cut < 200 ? 1 : 997))
			if (read_all(buf, cut, err, sizeof(err)) >= 0)
				bad++;
		ok(bad == 0, "every truncation is refused (%d accepted)", bad);
	}
	ok(read_all(buf, len, err, sizeof(err)) == 30001, "the whole file reads");

	/* bit flips: refused with a message (the checksums catch them) */
	{
		int accepted = 0;

		for (size_t i = 0; i < len; i += 131) {
			buf[i] ^= 0x10;
			if (read_all(buf, len, err, sizeof(err)) >= 0)
				accepted++;
			buf[i] ^= 0x10;
		}
		ok(accepted == 0, "every bit flip is refused (%d accepted)", accepted);
	}
	rc = read_all("PCSNAP1\n", 8, err, sizeof(err));
	ok(rc == -EBADMSG && strstr(err, "too short"), "a header fragment: '%s'", err);
	rc = read_all("hello world, this is not a snapshot file", 40, err, sizeof(err));
	ok(rc == -EBADMSG && strstr(err, "magic"), "not a snapshot: '%s'", err);

	/* a section that claims 4 GiB: refused before any allocation */
	{
		char *b2 = malloc(len);

		memcpy(b2, buf, len);
		/* the META section header starts at byte 32: raw_len at 36 */
		b2[36] = (char)0xff, b2[37] = (char)0xff, b2[38] = (char)0xff, b2[39] = (char)0xff;
		rc = read_all(b2, len, err, sizeof(err));
		ok(rc == -EBADMSG && strstr(err, "out of range"), "a huge length: '%s'", err);
		free(b2);
	}

	/* a hostile writer's: a path twice, active pages outside the cached ones */
	{
		uint64_t four[] = { 0, 4 }, in[] = { 1, 2 }, out[] = { 2, 4 };
		struct pc_profile_file h[3] = {
			{ .path = "a", .size = 16 * 4096, .runs = four, .nruns = 1, .active = in, .nactive = 1 },
			{ .path = "b/c", .size = 16 * 4096, .runs = four, .nruns = 1 },
			{ .path = "d", .size = 16 * 4096, .runs = four, .nruns = 1 },
		};
		size_t l;
		uint8_t *b;

		b = craft_snapshot(&m, h, 3, &l);
		ok(read_all(b, l, err, sizeof(err)) == 3, "a hand-made snapshot reads (the test's encoder is right)");
		free(b);
		h[2].path = "a";
		b = craft_snapshot(&m, h, 3, &l);
		rc = read_all(b, l, err, sizeof(err));
		ok(rc == -EBADMSG && strstr(err, "'a' is listed twice"), "a path twice: '%s'", err);
		free(b);
		h[2].path = "d";
		h[0].active = out;
		b = craft_snapshot(&m, h, 3, &l);
		rc = read_all(b, l, err, sizeof(err));
		ok(rc == -EBADMSG && strstr(err, "not cached"), "active pages not cached: '%s'", err);
		free(b);
	}
	{
		struct stat st;

		ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600,
		   "a snapshot is its writer's alone: mode %o", st.st_mode & 0777);
	}

	/* version 2's identity: generation, birth time, filesystem id */
	{
		char p2[600];
		uint64_t one[] = { 0, 1 };
		struct pc_profile_file x[3] = {
			{ .path = "a", .size = 4096, .runs = one, .nruns = 1, .mtime_s = 1700000000,
			  .ident = PC_IDENT_GEN | PC_IDENT_BTIME | PC_IDENT_FSID, .gen = 0,
			  .btime_s = 1600000000, .btime_ns = 999999999, .fsid = 0x55f2807b9498c9a5ull },
			{ .path = "b", .size = 4096, .runs = one, .nruns = 1, .mtime_s = -5,
			  .ident = PC_IDENT_BTIME | PC_IDENT_FSID, .btime_s = -7, .btime_ns = 1,
			  .fsid = 1 },
			{ .path = "c", .size = 4096, .runs = one, .nruns = 1 },
		}, y;
		int same = 0;

		snprintf(p2, sizeof(p2), "%s/ident", scratch_dir());
		ok(pc_profile_create(p2, &m, &w) == 0, "ident: create");
		for (int i = 0; i < 3; i++)
			pc_profile_add(w, &x[i]);
		y = x[2];
		y.path = "d";
		y.ident = 32;
		ok(pc_profile_add(w, &y) == -EINVAL, "the writer refuses an identity flag it does not know");
		y.ident = PC_IDENT_FSID;
		ok(pc_profile_add(w, &y) == -EINVAL, "and an fsid of 0 given as known");
		y.ident = PC_IDENT_BTIME, y.btime_ns = 1000000000;
		ok(pc_profile_add(w, &y) == -EINVAL, "and birth time nanoseconds past a second");
		ok(pc_profile_commit(w) == 0, "ident: written");
		ok(pc_profile_open(p2, &r, err, sizeof(err)) == 0, "ident: open");
		for (int i = 0; i < 3 && pc_profile_next(r, &g) == 1; i++) {
			same += g.ident == x[i].ident && g.gen == x[i].gen && g.btime_s == x[i].btime_s &&
				g.btime_ns == x[i].btime_ns && g.fsid == x[i].fsid;
			pc_profile_file_release(&g);
		}
		ok(same == 3, "generation 0 known, birth times (before 1970 too), fsids round-trip (%d of 3)",
		   same);
		ok(pc_profile_next(r, &g) == 0, "ident: a clean end");
		pc_profile_close(r);
	}

	/* version 1 (before ident): still read; its generation known where not 0 */
	{
		uint64_t one[] = { 0, 1 };
		struct pc_profile_file h[2] = {
			{ .path = "a", .size = 4096, .runs = one, .nruns = 1, .gen = 9 },
			{ .path = "b", .size = 4096, .runs = one, .nruns = 1 },
		};
		size_t l;
		uint8_t *b = craft_snapshot(&m, h, 2, &l);
		uint32_t ids[2] = { 99, 99 };

		ok(b[8] == 1, "the test's encoder writes version 1");
		rc = pc_profile_open_mem(b, l, &r, err, sizeof(err));
		for (int i = 0; rc == 0 && i < 2 && pc_profile_next(r, &g) == 1; i++) {
			ids[i] = g.ident;
			pc_profile_file_release(&g);
		}
		ok(rc == 0 && ids[0] == PC_IDENT_GEN && ids[1] == 0,
		   "a version 1 snapshot reads: generation 9 known, 0 unknown (%u, %u)", ids[0], ids[1]);
		if (rc == 0)
			pc_profile_close(r);
		free(b);
	}

	/* version 2 by hand: each identity field checked */
	{
		static const struct {
			uint64_t gen, ident;
			uint8_t tail[24];
			size_t tlen;
			const char *want;	/* NULL: reads */
		} cases[] = {
			{ 5, 1, { 0 }, 0, NULL },
			{ 0, 6, { 2, 3, 0x80, 1 }, 4, NULL },	/* btime mtime+1 s, 3 ns; fsid 128 */
			{ 0, 8, { 0 }, 0, "unknown identity flags" },
			{ 5, 0, { 0 }, 0, "inode generation out of range" },
			{ 1ull << 32, 1, { 0 }, 0, "inode generation out of range" },
			{ 0, 2, { 0, 0x80, 0x94, 0xeb, 0xdc, 0x03 }, 6, "birth time nanoseconds" },
			{ 0, 4, { 0 }, 1, "filesystem id 0" },
		};
		int good = 0;

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			size_t l;
			uint8_t *b = craft_v2(&m, cases[i].gen, cases[i].ident, cases[i].tail,
					      cases[i].tlen, &l);

			err[0] = 0;
			rc = read_all(b, l, err, sizeof(err));
			if (cases[i].want ? rc == -EBADMSG && strstr(err, cases[i].want) : rc == 1)
				good++;
			else
				fprintf(stderr, "# case %zu: %d '%s'\n", i, rc, err);
			free(b);
		}
		ok(good == (int)(sizeof(cases) / sizeof(cases[0])),
		   "version 2 by hand: good identities read, each bad one refused by name (%d)", good);
	}
	{
		size_t l;
		uint8_t *b = craft_v2(&m, 0, 0, NULL, 0, &l);
		uint32_t c;

		b[8] = 7;
		c = (uint32_t)crc32(0, b, 28);
		for (int i = 0; i < 4; i++)
			b[28 + i] = (uint8_t)(c >> (8 * i));
		rc = read_all(b, l, err, sizeof(err));
		ok(rc == -EBADMSG && strstr(err, "unsupported version 7 (this build reads 1 to 6)"),
		   "a later version: '%s'", err);
		free(b);
	}

	test_v3(&m);
	test_v4(&m);
	test_merge(&m);
	test_v5(&m);
	test_v6(&m);

	/* a decompression bomb: 20,000 alike 4 KB paths, 80 MB in ~0.5 MB */
	{
		char bomb[600], p[4200];
		uint64_t one[] = { 0, 1 };
		struct pc_profile_file x = { .path = p, .size = 4096, .runs = one, .nruns = 1 };
		int files = 0;

		snprintf(bomb, sizeof(bomb), "%s/bomb", scratch_dir());
		memset(p, 'a', 4000);
		ok(pc_profile_create(bomb, &m, &w) == 0, "bomb: create");
		for (int i = 0; i < 20000; i++) {
			snprintf(p + 4000, 16, "/%d", i);
			pc_profile_add(w, &x);
		}
		ok(pc_profile_commit(w) == 0, "bomb: written");
		rc = pc_profile_open(bomb, &r, err, sizeof(err));
		while (rc == 0 && (rc = pc_profile_next(r, &g)) > 0) {
			files++;
			pc_profile_file_release(&g);
			rc = 0;
		}
		ok(rc == -EBADMSG && strstr(pc_profile_error(r), "over 100 times the file's size"),
		   "a bomb is refused once past 64 MiB (%d files read): '%s'", files,
		   pc_profile_error(r));
		pc_profile_close(r);
	}

	/* atomic replace: the old file stays if the new one is never committed */
	ok(pc_profile_create(path, &m, &w) == 0, "start a replacement");
	pc_profile_abort(w);
	free(buf);
	buf = file_bytes(path, &len);
	ok(read_all(buf, len, err, sizeof(err)) == 30001, "the old snapshot is intact");
	free(buf);

	/* ENOSPC: a tiny tmpfs, with CAP_SYS_ADMIN */
	if (pc_have_cap(CAP_SYS_ADMIN)) {
		char mnt[512], cmd[700], big[600];

		snprintf(mnt, sizeof(mnt), "%s/tiny", scratch_dir());
		mkdir(mnt, 0755);
		snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o size=64k tmpfs '%s'", mnt);
		if (system(cmd) == 0) {
			snprintf(big, sizeof(big), "%s/snap", mnt);
			pc_profile_create(big, &m, &w);
			pc_profile_commit(w);	/* a small, good one */
			ok(pc_profile_create(big, &m, &w) == 0, "create on a tiny tmpfs");
			rc = 0;
			for (int i = 0; i < 200000 && rc == 0; i++) {
				char p[64];
				uint64_t one[] = { (uint64_t)i % 7, 1 };
				struct pc_profile_file x = { .path = p, .size = 1 << 20, .runs = one,
							     .nruns = 1, .ino = (uint64_t)i * 2654435761u };

				snprintf(p, sizeof(p), "x/%08x/%d", i * 2654435761u, i);
				rc = pc_profile_add(w, &x);
			}
			if (rc == 0)
				rc = pc_profile_commit(w);
			else
				pc_profile_abort(w);
			ok(rc == -ENOSPC, "a full disk is ENOSPC (%d)", rc);
			rc = pc_profile_open(big, &r, err, sizeof(err));
			ok(rc == 0, "and the previous snapshot is intact");
			if (rc == 0)
				pc_profile_close(r);
			snprintf(cmd, sizeof(cmd), "umount '%s'", mnt);
			if (system(cmd) != 0)
				fprintf(stderr, "# umount failed\n");
		} else {
			skip("cannot mount tmpfs here", "ENOSPC");
		}
	} else {
		skip("needs CAP_SYS_ADMIN: mounting a small tmpfs", "ENOSPC");
	}
	/* a target that is not a regular file is never replaced, at create or at commit */
	{
		char fifo[600], dir[600];
		struct stat st;

		snprintf(fifo, sizeof(fifo), "%s/fifo", scratch_dir());
		snprintf(dir, sizeof(dir), "%s/adir", scratch_dir());
		ok(mkfifo(fifo, 0644) == 0 && mkdir(dir, 0755) == 0, "target: a FIFO and a directory");
		ok(pc_profile_check_target(fifo) == -EEXIST, "target: a FIFO is refused");
		ok(pc_profile_check_target(dir) == -EISDIR, "target: a directory is refused");
		{
			char lnk[600];

			snprintf(lnk, sizeof(lnk), "%s/alink", scratch_dir());
			ok(symlink("/proc/self/fd/1", lnk) == 0 &&
			   pc_profile_check_target(lnk) == -ELOOP &&
			   pc_profile_probe_target(lnk, NULL) == -ELOOP &&
			   pc_profile_create(lnk, &m, &w) == -ELOOP,
			   "target: a symbolic link is refused (check, probe, create)");
			unlink(lnk);
		}
		ok(pc_profile_create(fifo, &m, &w) == -EEXIST, "target: create refuses the FIFO");
		unlink(fifo);
		ok(pc_profile_create(fifo, &m, &w) == 0, "target: create where it was");
		ok(mkfifo(fifo, 0644) == 0, "target: a FIFO put there since");
		ok(pc_profile_commit(w) == -EEXIST, "target: commit refuses it too");
		ok(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "target: the FIFO is still there");
		unlink(fifo);
		rmdir(dir);
	}
	/* probe: the target checked, and a temporary file made beside it and removed */
	{
		char good[700], nodir[700], dir[600];
		DIR *d;
		struct dirent *de;
		int left = 0;

		snprintf(dir, sizeof(dir), "%s/probe", scratch_dir());
		snprintf(good, sizeof(good), "%s/x.snap", dir);
		snprintf(nodir, sizeof(nodir), "%s/none/x.snap", dir);
		ok(mkdir(dir, 0755) == 0, "probe: a directory");
		ok(pc_profile_probe_target(good, NULL) == 0, "probe: a path in it may be written");
		ok(pc_profile_probe_target(nodir, NULL) == -ENOENT, "probe: a missing directory is -ENOENT");
		ok(pc_profile_probe_target(dir, NULL) == -EISDIR, "probe: a directory as target is refused");
		d = opendir(dir);
		while (d && (de = readdir(d)))
			left += de->d_name[0] != '.';
		if (d)
			closedir(d);
		ok(d && left == 0, "probe: leaves nothing behind");
		rmdir(dir);
	}
	/* the directory probed is the one written, whatever its path leads to by then */
	{
		char dir[600], moved[600], other[600], path[700], inmoved[700], inother[700];
		struct stat st;
		int dfd = -1;

		snprintf(dir, sizeof(dir), "%s/pin", scratch_dir());
		snprintf(moved, sizeof(moved), "%s/pin.moved", scratch_dir());
		snprintf(other, sizeof(other), "%s/other", scratch_dir());
		snprintf(path, sizeof(path), "%s/x.snap", dir);
		snprintf(inmoved, sizeof(inmoved), "%s/x.snap", moved);
		snprintf(inother, sizeof(inother), "%s/x.snap", other);
		ok(mkdir(dir, 0755) == 0 && mkdir(other, 0755) == 0 &&
		   pc_profile_probe_target(path, &dfd) == 0 && dfd >= 0,
		   "pin: probed, its directory held");
		ok(rename(dir, moved) == 0 && symlink(other, dir) == 0,
		   "pin: the directory renamed, a link to another put at its path");
		ok(pc_profile_createat(dfd, path, &m, &w) == 0 && pc_profile_commit(w) == 0,
		   "pin: written");
		ok(stat(inmoved, &st) == 0 && S_ISREG(st.st_mode) && lstat(inother, &st) < 0,
		   "pin: in the directory probed, not through the link");
		if (dfd >= 0)
			close(dfd);
		unlink(inmoved);
		unlink(dir);
		rmdir(moved);
		rmdir(other);
	}
	rm_scratch();
	return done_testing();
}
