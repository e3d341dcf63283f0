/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot-encodings.c: the measurement behind snapshot format version 4
 * (docs/snapshot-format.md, "What version 4 costs, and why"). It reads any
 * snapshot through libpagecache's reader, re-encodes its records in memory
 * under each coding considered (front-coded paths, mtime nanoseconds as
 * deltas, birth time from the mtime, generations as 4 fixed bytes, a flag
 * for a file cached whole; one stream or a column per field; zlib or zstd
 * at several levels; path or inode order), and prints what each would
 * weigh compressed, in sections of about 1 MiB as the writer cuts them:
 * the cost of each field (the size with it left out, and each column
 * compressed alone), then every variant. A tool for measuring, kept so the
 * format doc's step-by-step figures can be made again; not a writer, and
 * not built by make.
 *
 *   cc -O2 -Iinclude -o snapshot-encodings bench/snapshot-encodings.c \
 *      build/libpagecache.a -luring -lz -ltraceevent -lzstd -lpthread
 *   ./snapshot-encodings FILE.snap [sort]   # "sort": also in inode order
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <zlib.h>
#include <zstd.h>
#include <pagecache.h>

static struct pc_profile_file *F; static size_t NF;
enum { C_PATH, C_SIZE, C_MTS, C_MTNS, C_DEV, C_INO, C_GEN, C_IDENT, C_BTS, C_BTNS, C_FSID, C_RUNS, C_ACT, NCOL };
static const char *cname[NCOL] = {"path","size","mtime_s","mtime_ns","dev","ino","gen","ident","btime_s","btime_ns","fsid","runs","active"};
struct buf { uint8_t *p; size_t n, cap; };
static void put(struct buf *b, const void *s, size_t n) {
	if (b->n + n > b->cap) { b->cap = (b->n + n) * 2 + 1024; b->p = realloc(b->p, b->cap); }
	memcpy(b->p + b->n, s, n); b->n += n; }
static void vput(struct buf *b, uint64_t v) { uint8_t t[10]; size_t n = 0;
	while (v >= 0x80) { t[n++] = (uint8_t)(v | 0x80); v >>= 7; } t[n++] = (uint8_t)v; put(b, t, n); }
static uint64_t zz(uint64_t a, uint64_t p) { int64_t d = (int64_t)(a - p); return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63); }

struct opt { int front, nsdelta, btdelta, genfix, whole, omit, cols, zstd, level, sortino, dirino; };

static size_t comp(const struct opt *o, const uint8_t *p, size_t n) {
	if (!n) return 0;
	if (o->zstd) { size_t cap = ZSTD_compressBound(n); void *d = malloc(cap);
		size_t r = ZSTD_compress(d, cap, p, n, o->level); free(d); return r; }
	uLongf cl = compressBound(n); void *d = malloc(cl); compress2(d, &cl, p, n, o->level); free(d); return cl; }

/* encode all records into columns (cols) or one stream col[0]; sections of ~1 MiB raw */
static size_t encode(const struct opt *o, size_t *percol) {
	struct buf c[NCOL] = {0}; size_t total = 0, raw = 0;
	uint64_t pm = 0, pns = 0, pd = 0, pi = 0, pf = 0; const char *pp = "";
	for (size_t i = 0; i <= NF; i++) {
		size_t secraw = 0; for (int k = 0; k < NCOL; k++) secraw += c[k].n;
		if (i == NF || secraw > (1u << 20) - 200) {
			if (o->cols == 1) { for (int k = 0; k < NCOL; k++) { size_t z = comp(o, c[k].p, c[k].n); if (percol) percol[k] += z; total += z + (c[k].n ? 4 : 0); } }
			else { struct buf all = {0}; for (int k = 0; k < NCOL; k++) put(&all, c[k].p, c[k].n); total += comp(o, all.p, all.n) + 16; free(all.p); }
			raw += secraw;
			for (int k = 0; k < NCOL; k++) c[k].n = 0;
			pm = pns = pd = pi = pf = 0; pp = "";
			if (i == NF) break;
		}
		const struct pc_profile_file *f = &F[i];
#define B(k) (o->cols ? &c[k] : &c[0])
#define SKIP(k) (o->omit == (k) + 1)
		if (!SKIP(C_PATH)) {
			size_t l = strlen(f->path);
			if (o->front) { size_t s = 0; while (pp[s] && pp[s] == f->path[s]) s++;
				vput(B(C_PATH), s); vput(B(C_PATH), l - s); put(B(C_PATH), f->path + s, l - s); }
			else { vput(B(C_PATH), l); put(B(C_PATH), f->path, l); }
		}
		pp = f->path;
		if (!SKIP(C_SIZE)) vput(B(C_SIZE), f->size);
		if (!SKIP(C_MTS)) vput(B(C_MTS), zz((uint64_t)f->mtime_s, pm));
		if (!SKIP(C_MTNS)) vput(B(C_MTNS), o->nsdelta ? zz(f->mtime_ns, pns) : f->mtime_ns);
		pm = (uint64_t)f->mtime_s; pns = f->mtime_ns;
		if (!SKIP(C_DEV)) vput(B(C_DEV), zz(f->dev, pd));
		if (!SKIP(C_INO)) vput(B(C_INO), zz(f->ino, pi));
		pd = f->dev; pi = f->ino;
		if (!SKIP(C_GEN)) { if (o->genfix) { if (f->ident & 1) { uint8_t g[4] = { f->gen, f->gen >> 8, f->gen >> 16, f->gen >> 24 }; put(B(C_GEN), g, 4); } }
			else vput(B(C_GEN), f->gen); }
		if (!SKIP(C_IDENT)) vput(B(C_IDENT), f->ident);
		if (f->ident & 2) {
			if (!SKIP(C_BTS)) vput(B(C_BTS), zz((uint64_t)f->btime_s, (uint64_t)f->mtime_s));
			if (!SKIP(C_BTNS)) vput(B(C_BTNS), o->btdelta ? zz(f->btime_ns, f->mtime_ns) : f->btime_ns);
		}
		if (f->ident & 4) { if (!SKIP(C_FSID)) vput(B(C_FSID), zz(f->fsid, pf)); pf = f->fsid; }
		if (!SKIP(C_RUNS)) {
			uint64_t pages = (f->size + 4095) / 4096;
			if (o->whole && f->nruns == 1 && f->runs[0] == 0 && f->runs[1] == pages) vput(B(C_RUNS), 1);
			else { vput(B(C_RUNS), o->whole ? f->nruns << 1 : f->nruns); uint64_t pe = 0;
				for (size_t k = 0; k < f->nruns; k++) { vput(B(C_RUNS), f->runs[2*k] - pe); vput(B(C_RUNS), f->runs[2*k+1]); pe = f->runs[2*k] + f->runs[2*k+1]; } }
		}
		if (!SKIP(C_ACT)) { vput(B(C_ACT), f->nactive); uint64_t pe = 0;
			for (size_t k = 0; k < f->nactive; k++) { vput(B(C_ACT), f->active[2*k] - pe); vput(B(C_ACT), f->active[2*k+1]); pe = f->active[2*k] + f->active[2*k+1]; } }
	}
	for (int k = 0; k < NCOL; k++) free(c[k].p);
	(void)raw;
	return total + 32 + 40;
}

static int byino(const void *a, const void *b) { const struct pc_profile_file *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino; }

int main(int argc, char **argv) {
	struct pc_profile_reader *r; struct pc_profile_file f; char err[256]; int rc; size_t cap = 0;
	if (argc < 2) { fprintf(stderr, "usage: snapshot-encodings FILE.snap [sort]\n"); return 2; }
	if (pc_profile_open(argv[1], &r, err, sizeof err) < 0) { fprintf(stderr, "%s\n", err); return 1; }
	while ((rc = pc_profile_next(r, &f)) > 0) { if (NF == cap) { cap = cap * 2 + 1024; F = realloc(F, cap * sizeof(*F)); } F[NF++] = f; }
	pc_profile_close(r);
	printf("%zu files\n", NF);
	struct opt base = { .level = 6 };
	size_t b = encode(&base, NULL);
	printf("v2 re-encoded, zlib 6: %zu\n", b);
	printf("\nmarginal cost (zlib 6, v2 encoding, field removed): \n");
	for (int k = 0; k < NCOL; k++) { struct opt o = base; o.omit = k + 1; size_t s = encode(&o, NULL); printf("  %-9s %8zd  (%.2f B/file)\n", cname[k], (ssize_t)b - (ssize_t)s, (double)((ssize_t)b - (ssize_t)s) / NF); }
	size_t pc[NCOL] = {0}; struct opt oc = base; oc.cols = 1; size_t tc = encode(&oc, pc);
	printf("\ncolumns compressed apart (zlib 6): total %zu\n", tc);
	for (int k = 0; k < NCOL; k++) printf("  %-9s %8zu  (%.2f B/file)\n", cname[k], pc[k], (double)pc[k] / NF);
	{ size_t pc2[NCOL] = {0}; struct opt o5 = { 1, 1, 1, 1, 1, 0, 1, 0, 6 }; size_t t5 = encode(&o5, pc2);
	  printf("\nall five codings, columns compressed apart (zlib 6): total %zu\n", t5);
	  for (int k = 0; k < NCOL; k++) printf("  %-9s %8zu  (%.2f B/file)\n", cname[k], pc2[k], (double)pc2[k] / NF); }
	struct { const char *name; struct opt o; } v[] = {
		{"front-coded paths", { .front = 1, .level = 6 }},
		{"mtime_ns delta", { .nsdelta = 1, .level = 6 }},
		{"btime_ns from mtime_ns", { .btdelta = 1, .level = 6 }},
		{"gen 4 fixed bytes", { .genfix = 1, .level = 6 }},
		{"whole-file run", { .whole = 1, .level = 6 }},
		{"all five, zlib 6", { 1, 1, 1, 1, 1, 0, 0, 0, 6 }},
		{"all five, zlib 9", { 1, 1, 1, 1, 1, 0, 0, 0, 9 }},
		{"all five, zstd 3", { 1, 1, 1, 1, 1, 0, 0, 1, 3 }},
		{"all five, zstd 9", { 1, 1, 1, 1, 1, 0, 0, 1, 9 }},
		{"all five, zstd 19", { 1, 1, 1, 1, 1, 0, 0, 1, 19 }},
		{"all five + columns, zlib 6", { 1, 1, 1, 1, 1, 0, 1, 0, 6 }},
		{"all five + columns, zstd 19", { 1, 1, 1, 1, 1, 0, 1, 1, 19 }},
		{"all five + columns one stream, zlib 6", { 1, 1, 1, 1, 1, 0, 2, 0, 6 }},
		{"all five + columns one stream, zlib 9", { 1, 1, 1, 1, 1, 0, 2, 0, 9 }},
		{"all five + columns one stream, zstd 3", { 1, 1, 1, 1, 1, 0, 2, 1, 3 }},
		{"all five + columns one stream, zstd 19", { 1, 1, 1, 1, 1, 0, 2, 1, 19 }},
		{"columns one stream only, zlib 6", { 0, 0, 0, 0, 0, 0, 2, 0, 6 }},
		{"v2, zstd 3", { .zstd = 1, .level = 3 }},
		{"v2, zstd 19", { .zstd = 1, .level = 19 }},
	};
	printf("\nvariants:\n");
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) { size_t s = encode(&v[i].o, NULL); printf("  %-30s %8zu  (%.2f B/file)\n", v[i].name, s, (double)s / NF); }
	if (argc > 2) {
		qsort(F, NF, sizeof *F, byino);
		struct opt o = { 1, 1, 1, 1, 1, 0, 0, 0, 6 };
		printf("  sorted by inode, all five zlib 6: %zu\n", encode(&o, NULL));
	}
	return 0;
}
