/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapcraft.h: a snapshot encoded by hand, as a hostile writer would make
 * it: what libpagecache's writer refuses (a path twice, active pages that
 * were not cached) goes in as given, so the tests can check that readers
 * refuse it. Follows docs/snapshot-format.md; one FILES section.
 * craft_snapshot writes version 1; craft_snapshot_v writes 1, 2 or 3
 * (version 3: the meta's flags, lost and duration, each record's
 * PC_IDENT_BDEV and used triples as given, in any order: a gap that
 * goes back wraps around, as a hostile writer's would).
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

/* The snapshot as bytes (malloc'd, *ret_len long), or NULL. */
static uint8_t *craft_snapshot_v(const struct pc_profile_meta *m, const struct pc_profile_file *f,
				 size_t n, size_t *ret_len, uint32_t version)
{
	size_t cap = 4096, r = 0, o, rl = strlen(m->root), hl = strlen(m->host);
	uint8_t *raw, *out;
	uint64_t pm = 0, pd = 0, pi = 0, pf = 0, nruns = 0;
	uint8_t hdr[32] = "PCSNAP1\n";

	for (size_t i = 0; i < n; i++)
		cap += strlen(f[i].path) + 80 + 20 * (f[i].nruns + f[i].nactive) + 30 * f[i].nused;
	raw = malloc(cap);
	out = malloc(compressBound(cap) + 3 * 16 + 32 + compressBound(rl + hl + 20));
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
	r = 0;
	for (size_t i = 0; i < n; i++) {
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
		nruns += f[i].nruns;
	}
	o += craft_section(out + o, 2, raw, r);
	r = craft_varint(raw, n);
	r += craft_varint(raw + r, nruns);
	o += craft_section(out + o, 3, raw, r);
	free(raw);
	*ret_len = o;
	return out;
}

static __attribute__((unused)) uint8_t *
craft_snapshot(const struct pc_profile_meta *m, const struct pc_profile_file *f, size_t n,
	       size_t *ret_len)
{
	return craft_snapshot_v(m, f, n, ret_len, 1);
}

#endif
