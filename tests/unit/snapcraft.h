/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapcraft.h: a snapshot encoded by hand, as a hostile writer would make
 * it: what libpagecache's writer refuses (a path twice, active pages that
 * were not cached) goes in as given, so the tests can check that readers
 * refuse it. Follows docs/snapshot-format.md; one FILES section.
 * craft_snapshot writes version 1; craft_snapshot_v writes 1, 2, 3 or 4
 * (version 3: the meta's flags, lost and duration, each record's
 * PC_IDENT_BDEV and used triples as given, in any order: a gap that
 * goes back wraps around, as a hostile writer's would; version 4: the
 * columns, each record's flags as its ident gives them, 32 included,
 * which then stores no runs; version 6: a LAYERS section before the FILES
 * section, of the distinct digests of the records with PC_IDENT_LAYER in
 * the order they first come, and each such record's index after its
 * flags).
 */
#ifndef PC_SNAPCRAFT_H
#define PC_SNAPCRAFT_H

#include "pagecache.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static size_t craft_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static uint64_t craft_zz(uint64_t a, uint64_t prev)
{
	int64_t d = (int64_t)(a - prev);

	return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static size_t craft_section(uint8_t *out, uint32_t type, const uint8_t *raw, size_t len)
{
	uLongf clen = compressBound(len);
	uint32_t v[4];

	compress2(out + 16, &clen, raw, len, 6);
	v[0] = type, v[1] = (uint32_t)len, v[2] = (uint32_t)clen, v[3] = (uint32_t)crc32(0, raw, len);
	for (int i = 0; i < 16; i++)
		out[i] = (uint8_t)(v[i / 4] >> (8 * (i % 4)));
	return 16 + clen;
}

static size_t craft_runs(uint8_t *p, const uint64_t *runs, size_t n)
{
	size_t l = craft_varint(p, n);
	uint64_t end = 0;

	for (size_t i = 0; i < n; i++) {
		l += craft_varint(p + l, runs[2 * i] - end);
		l += craft_varint(p + l, runs[2 * i + 1]);
		end = runs[2 * i] + runs[2 * i + 1];
	}
	return l;
}

static size_t craft_used(uint8_t *p, const uint64_t *u, size_t n)
{
	size_t l = craft_varint(p, n);
	uint64_t end = 0, ms = 0;

	for (size_t i = 0; i < n; i++) {
		l += craft_varint(p + l, u[3 * i] - end);
		l += craft_varint(p + l, u[3 * i + 1]);
		l += craft_varint(p + l, craft_zz(u[3 * i + 2], ms));
		end = u[3 * i] + u[3 * i + 1];
		ms = u[3 * i + 2];
	}
	return l;
}

/*
 * Version 4's FILES contents (docs/snapshot-format.md): the record count,
 * twelve column lengths, the columns. Paths front-coded against the
 * previous one; the rest never empty.
 */
/* record i's index among the distinct layer digests of f[0..i] (the LAYERS section's order) */
static size_t craft_layer_index(const struct pc_profile_file *f, size_t i, size_t *ret_new)
{
	size_t k = 0;

	for (size_t j = 0; j < i; j++) {
		bool first = (f[j].ident & PC_IDENT_LAYER) != 0;

		for (size_t p = 0; first && p < j; p++)
			if ((f[p].ident & PC_IDENT_LAYER) && !memcmp(f[p].layer, f[j].layer, 32))
				first = false;
		if (first && !memcmp(f[j].layer, f[i].layer, 32)) {
			*ret_new = 0;
			return k;
		}
		k += first;
	}
	*ret_new = 1;
	return k;
}

/* version 6's LAYERS contents for f (0: none has a digest) */
static size_t craft_layers(uint8_t *raw, const struct pc_profile_file *f, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t r = 0, count = 0, nw;

	for (size_t i = 0; i < n; i++)
		if (f[i].ident & PC_IDENT_LAYER) {
			craft_layer_index(f, i, &nw);
			count += nw;
		}
	if (!count)
		return 0;
	r = craft_varint(raw, count);
	for (size_t i = 0; i < n; i++) {
		if (!(f[i].ident & PC_IDENT_LAYER))
			continue;
		craft_layer_index(f, i, &nw);
		if (!nw)
			continue;
		raw[r++] = 71;
		memcpy(raw + r, "sha256:", 7);
		r += 7;
		for (int b = 0; b < 32; b++) {
			raw[r++] = (uint8_t)hex[f[i].layer[b] >> 4];
			raw[r++] = (uint8_t)hex[f[i].layer[b] & 15];
		}
	}
	return r;
}

static size_t craft_columns_v4(uint8_t *raw, const struct pc_profile_file *f, size_t n)
{
	enum { NC = 12 };
	size_t cap = 64, l[NC] = { 0 }, r;
	uint8_t *c[NC];
	uint64_t pm = 0, pns = 0, pd = 0, pi = 0, pf = 0;
	const char *prev = "";

	for (size_t i = 0; i < n; i++)
		cap += strlen(f[i].path) + 80 + 20 * (f[i].nruns + f[i].nactive) + 30 * f[i].nused;
	for (int k = 0; k < NC; k++)
		c[k] = malloc(cap);
	for (size_t i = 0; i < n; i++) {
		size_t pl = strlen(f[i].path), pre = 0;
		uint32_t fl = f[i].ident | (f[i].nused ? 16u : 0);

		while (prev[pre] && prev[pre] == f[i].path[pre] && pre + 1 < pl)
			pre++;
		l[0] += craft_varint(c[0] + l[0], pre);
		l[0] += craft_varint(c[0] + l[0], pl - pre);
		memcpy(c[0] + l[0], f[i].path + pre, pl - pre);
		l[0] += pl - pre;
		prev = f[i].path;
		l[1] += craft_varint(c[1] + l[1], fl);
		if (fl & PC_IDENT_LAYER) {
			size_t nw;

			l[1] += craft_varint(c[1] + l[1], craft_layer_index(f, i, &nw));
		}
		l[2] += craft_varint(c[2] + l[2], f[i].size);
		l[3] += craft_varint(c[3] + l[3], craft_zz((uint64_t)f[i].mtime_s, pm));
		l[3] += craft_varint(c[3] + l[3], craft_zz(f[i].mtime_ns, pns));
		l[4] += craft_varint(c[4] + l[4], craft_zz(f[i].dev, pd));
		l[5] += craft_varint(c[5] + l[5], craft_zz(f[i].ino, pi));
		pm = (uint64_t)f[i].mtime_s, pns = f[i].mtime_ns, pd = f[i].dev, pi = f[i].ino;
		if (fl & PC_IDENT_GEN)
			for (int b = 0; b < 4; b++)
				c[6][l[6]++] = (uint8_t)(f[i].gen >> (8 * b));
		if (fl & PC_IDENT_BTIME) {
			l[7] += craft_varint(c[7] + l[7], craft_zz((uint64_t)f[i].btime_s,
								   (uint64_t)f[i].mtime_s));
			l[7] += craft_varint(c[7] + l[7], craft_zz(f[i].btime_ns, f[i].mtime_ns));
		}
		if (fl & PC_IDENT_FSID) {
			l[8] += craft_varint(c[8] + l[8], craft_zz(f[i].fsid, pf));
			pf = f[i].fsid;
		}
		if (!(fl & 32))
			l[9] += craft_runs(c[9] + l[9], f[i].runs, f[i].nruns);
		l[10] += craft_runs(c[10] + l[10], f[i].active, f[i].nactive);
		if (f[i].nused)
			l[11] += craft_used(c[11] + l[11], f[i].used, f[i].nused);
	}
	r = craft_varint(raw, n);
	for (int k = 0; k < NC; k++)
		r += craft_varint(raw + r, l[k]);
	for (int k = 0; k < NC; k++) {
		memcpy(raw + r, c[k], l[k]);
		r += l[k];
		free(c[k]);
	}
	return r;
}

/*
 * A snapshot of the given FILES contents (any bytes: one section, or none
 * when files_len is 0) and END counts: for contents no encoder here makes.
 */
static uint8_t *craft_wrap_layers(const struct pc_profile_meta *m, uint32_t version,
				  const uint8_t *layers, size_t layers_len, const uint8_t *files,
				  size_t files_len, uint64_t nfiles, uint64_t nruns, size_t *ret_len)
{
	size_t rl = strlen(m->root), hl = strlen(m->host), r, o;
	uint8_t *raw = malloc(rl + hl + 64), *out;
	uint8_t hdr[32] = "PCSNAP1\n";

	out = malloc(compressBound(files_len) + compressBound(layers_len) + 4 * 16 + 32 +
		     compressBound(rl + hl + 64) + 64);
	if (!raw || !out) {
		free(raw);
		free(out);
		return NULL;
	}
	for (int i = 0; i < 4; i++) {
		hdr[8 + i] = (uint8_t)(version >> (8 * i));
		hdr[12 + i] = (uint8_t)(m->page_size >> (8 * i));
	}
	for (int i = 0; i < 8; i++)
		hdr[16 + i] = (uint8_t)(m->created >> (8 * i));
	{
		uint32_t c = (uint32_t)crc32(0, hdr, 28);

		for (int i = 0; i < 4; i++)
			hdr[28 + i] = (uint8_t)(c >> (8 * i));
	}
	memcpy(out, hdr, 32);
	o = 32;
	r = craft_varint(raw, rl);
	memcpy(raw + r, m->root, rl);
	r += rl;
	r += craft_varint(raw + r, hl);
	memcpy(raw + r, m->host, hl);
	r += hl;
	if (version >= 3) {
		r += craft_varint(raw + r, m->flags);
		r += craft_varint(raw + r, m->lost);
		r += craft_varint(raw + r, m->duration_ms);
	}
	o += craft_section(out + o, 1, raw, r);
	if (layers_len)
		o += craft_section(out + o, 4, layers, layers_len);
	if (files_len)
		o += craft_section(out + o, 2, files, files_len);
	r = craft_varint(raw, nfiles);
	r += craft_varint(raw + r, nruns);
	o += craft_section(out + o, 3, raw, r);
	free(raw);
	*ret_len = o;
	return out;
}

static __attribute__((unused)) uint8_t *
craft_wrap(const struct pc_profile_meta *m, uint32_t version, const uint8_t *files,
	   size_t files_len, uint64_t nfiles, uint64_t nruns, size_t *ret_len)
{
	return craft_wrap_layers(m, version, NULL, 0, files, files_len, nfiles, nruns, ret_len);
}

/* The snapshot as bytes (malloc'd, *ret_len long), or NULL. */
static uint8_t *craft_snapshot_v(const struct pc_profile_meta *m, const struct pc_profile_file *f,
				 size_t n, size_t *ret_len, uint32_t version)
{
	size_t cap = 4096, r = 0, ll = 0;
	uint8_t *raw, *out, *layers = NULL;
	uint64_t pm = 0, pd = 0, pi = 0, pf = 0, nruns = 0;

	for (size_t i = 0; i < n; i++)
		cap += strlen(f[i].path) + 80 + 20 * (f[i].nruns + f[i].nactive) + 30 * f[i].nused;
	for (size_t i = 0; i < n; i++)
		nruns += f[i].nruns;
	raw = malloc(cap);
	if (!raw)
		return NULL;
	if (version >= 4)
		r = craft_columns_v4(raw, f, n);
	if (version >= 6 && (layers = malloc(16 + 72 * n)))
		ll = craft_layers(layers, f, n);
	for (size_t i = 0; i < n && version < 4; i++) {
		size_t pl = strlen(f[i].path);

		r += craft_varint(raw + r, pl);
		memcpy(raw + r, f[i].path, pl);
		r += pl;
		r += craft_varint(raw + r, f[i].size);
		r += craft_varint(raw + r, craft_zz((uint64_t)f[i].mtime_s, pm));
		r += craft_varint(raw + r, f[i].mtime_ns);
		r += craft_varint(raw + r, craft_zz(f[i].dev, pd));
		r += craft_varint(raw + r, craft_zz(f[i].ino, pi));
		r += craft_varint(raw + r, f[i].gen);
		pm = (uint64_t)f[i].mtime_s, pd = f[i].dev, pi = f[i].ino;
		if (version >= 2) {
			r += craft_varint(raw + r, f[i].ident | (f[i].nused ? 16u : 0));
			if (f[i].ident & PC_IDENT_BTIME) {
				r += craft_varint(raw + r, craft_zz((uint64_t)f[i].btime_s,
								    (uint64_t)f[i].mtime_s));
				r += craft_varint(raw + r, f[i].btime_ns);
			}
			if (f[i].ident & PC_IDENT_FSID) {
				r += craft_varint(raw + r, craft_zz(f[i].fsid, pf));
				pf = f[i].fsid;
			}
		}
		r += craft_runs(raw + r, f[i].runs, f[i].nruns);
		r += craft_runs(raw + r, f[i].active, f[i].nactive);
		if (f[i].nused)
			r += craft_used(raw + r, f[i].used, f[i].nused);
	}
	out = craft_wrap_layers(m, version, layers, ll, raw, r, n, nruns, ret_len);
	free(layers);
	free(raw);
	return out;
}

static __attribute__((unused)) uint8_t *
craft_snapshot(const struct pc_profile_meta *m, const struct pc_profile_file *f, size_t n,
	       size_t *ret_len)
{
	return craft_snapshot_v(m, f, n, ret_len, 1);
}

#endif
