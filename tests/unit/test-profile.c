/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * profile.c: a snapshot round-trips; writing is atomic; a truncated,
 * bit-flipped or lying file is a clear error, never a crash or a huge
 * allocation.
 */
#include "pagecache.h"
#include "tap.h"

#include <linux/capability.h>
#include "snapcraft.h"

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

	/* plain contents: version 2, which older builds read */
	ok(pc_profile_create(p3, &m, &w) == 0 && pc_profile_add(w, &plain) == 0 &&
		   pc_profile_commit(w) == 0,
	   "v3: a plain snapshot written");
	ok(header_version(p3) == 2, "without v3 contents the file is version 2 (%u)",
	   header_version(p3));

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
	ok(header_version(p3) == 3, "v3: version 3 (%u)", header_version(p3));
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

	/* learnt late: a plain meta, then one file with times: the header is rewritten */
	m.flags = 0, m.lost = 0, m.duration_ms = 0;
	ok(pc_profile_create(p3, &m, &w) == 0 && pc_profile_add(w, &plain) == 0 &&
		   pc_profile_add(w, &a) == 0 && pc_profile_commit(w) == 0,
	   "v3: plain meta, v3 contents in the second file");
	ok(header_version(p3) == 3, "v3: the header says 3 at commit (%u)", header_version(p3));
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

		b[8] = 4;
		c = (uint32_t)crc32(0, b, 28);
		for (int i = 0; i < 4; i++)
			b[28 + i] = (uint8_t)(c >> (8 * i));
		rc = read_all(b, l, err, sizeof(err));
		ok(rc == -EBADMSG && strstr(err, "unsupported version 4"), "a later version: '%s'", err);
		free(b);
	}

	test_v3(&m);

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
		ok(pc_profile_create(fifo, &m, &w) == -EEXIST, "target: create refuses the FIFO");
		unlink(fifo);
		ok(pc_profile_create(fifo, &m, &w) == 0, "target: create where it was");
		ok(mkfifo(fifo, 0644) == 0, "target: a FIFO put there since");
		ok(pc_profile_commit(w) == -EEXIST, "target: commit refuses it too");
		ok(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "target: the FIFO is still there");
		unlink(fifo);
		rmdir(dir);
	}
	rm_scratch();
	return done_testing();
}
