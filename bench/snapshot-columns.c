/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot-columns.c: where a version 4 snapshot's bytes go. For each
 * FILES section it splits the contents into their twelve columns
 * (docs/snapshot-format.md, "Version 4's columns") and compresses each
 * alone with zlib at the writer's level, so the sum per column says what
 * each field costs after compression; the file's own size beside it.
 * A tool for measuring, not a reader: it trusts lengths only as far as
 * the buffer goes and stops at anything else.
 *
 *   cc -O2 -o snapshot-columns bench/snapshot-columns.c -lz
 *   ./snapshot-columns FILE.snap
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *const names[12] = {
	"path", "flags", "size", "mtime", "device", "inode", "generation", "birth time",
	"filesystem id", "runs", "active runs", "used ranges",
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *pos < len; s += 7) {
		uint8_t b = p[(*pos)++];

		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

static size_t zsize(const uint8_t *p, size_t n)
{
	uLongf cl = compressBound(n);
	uint8_t *d = malloc(cl);

	if (!d || compress2(d, &cl, p, n, 6) != Z_OK)
		cl = 0;
	free(d);
	return cl;
}

int main(int argc, char **argv)
{
	uint64_t raw[12] = { 0 }, z[12] = { 0 }, files = 0, rawall = 0;
	size_t len, pos = 32;
	uint8_t *buf;
	FILE *f;
	long n;

	if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: snapshot-columns FILE.snap\n");
		return 2;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		return 1;
	fclose(f);
	len = (size_t)n;
	if (len < 32 || memcmp(buf, "PCSNAP1\n", 8) || le32(buf + 8) != 4) {
		fprintf(stderr, "snapshot-columns: '%s' is not a version 4 snapshot\n", argv[1]);
		return 1;
	}
	while (pos + 16 <= len) {
		uint32_t type = le32(buf + pos), rl = le32(buf + pos + 4), cl = le32(buf + pos + 8);
		uLongf dl = rl;
		uint8_t *d = malloc(rl + 1);
		uint64_t nrec, cl12[12];
		size_t p = 0;

		if (!d || pos + 16 + cl > len || uncompress(d, &dl, buf + pos + 16, cl) != Z_OK) {
			fprintf(stderr, "snapshot-columns: bad section at byte %zu\n", pos);
			return 1;
		}
		pos += 16 + cl;
		if (type != 2) {
			free(d);
			continue;
		}
		rawall += rl;
		if (varint(d, rl, &p, &nrec) < 0)
			return 1;
		files += nrec;
		for (int c = 0; c < 12; c++)
			if (varint(d, rl, &p, &cl12[c]) < 0)
				return 1;
		for (int c = 0; c < 12; c++) {
			if (cl12[c] > rl - p)
				return 1;
			raw[c] += cl12[c];
			z[c] += cl12[c] ? zsize(d + p, cl12[c]) : 0;
			p += cl12[c];
		}
		free(d);
	}
	printf("%s: %zu bytes, %llu files (%.2f a file), %llu bytes of FILES contents\n", argv[1],
	       len, (unsigned long long)files, files ? (double)len / files : 0,
	       (unsigned long long)rawall);
	printf("%-14s %12s %12s %10s\n", "column", "raw", "zlib alone", "a file");
	for (int c = 0; c < 12; c++)
		printf("%-14s %12llu %12llu %10.2f\n", names[c], (unsigned long long)raw[c],
		       (unsigned long long)z[c], files ? (double)z[c] / files : 0);
	free(buf);
	return 0;
}
