/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mksnap: make a snapshot for the CLI tests, as a hostile party could:
 * with libpagecache's own writer (any root, any path it accepts, files
 * that are FIFOs or links on this machine), or with --raw by hand, so what
 * the writer refuses (a path twice, active pages not cached) goes in too.
 *
 *   mksnap [-r ROOT] [-c CREATED] [-R] [-V VERSION] [-I] [-n N] [-M] [-L LOST] [-T MS] OUT ENTRY...
 *   ENTRY: PATH[=RUNS[/ACTIVE]][@USED], RUNS like 0+4,8+2 (first page +
 *          count); default: every page of the file. USED (format version
 *          3) like 0+4:120,8+2:5 (first page + count : ms after the
 *          recording began). With -n N, PATH holds a %d and the entry is
 *          repeated for 0..N-1. dev:NAME[=RUNS][@USED] is a block device
 *          record (PC_IDENT_BDEV) named NAME, 1 GiB, device 7:0.
 *          dir:PATH is a directory record (PC_IDENT_DIR, version 5): no
 *          size, no runs, its identity from lstat(ROOT/PATH) where there.
 *   -M: made by record (PC_META_RECORDED); -L, -T: lost events, duration.
 *   -R writes by hand (version 1, or 3 with any version 3 contents), so
 *   what the writer refuses goes in too; -V VERSION by hand in that
 *   version (1 to 4: the old ones, as older builds wrote them). Without
 *   either, the writer writes version 4.
 * Size, mtime, device and inode come from lstat(ROOT/PATH), so restore
 * takes the file for unchanged; a path that is not there gets 1 MiB.
 * -I: and generation, birth time and filesystem id, as snapshot takes them.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "snapcraft.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t parse_used(const char *s, uint64_t **ret)
{
	size_t n = 0;
	uint64_t *r = NULL;

	while (s && *s) {
		unsigned long long a, b, t;
		int used;

		if (sscanf(s, "%llu+%llu:%llu%n", &a, &b, &t, &used) != 3) {
			fprintf(stderr, "mksnap: bad used ranges '%s'\n", s);
			exit(2);
		}
		r = realloc(r, (n + 1) * 3 * sizeof(*r));
		r[3 * n] = a, r[3 * n + 1] = b, r[3 * n + 2] = t;
		n++;
		s += used;
		if (*s == ',')
			s++;
	}
	*ret = r;
	return n;
}

static size_t parse_runs(const char *s, uint64_t **ret)
{
	size_t n = 0;
	uint64_t *r = NULL;

	while (s && *s && *s != '/' && *s != '@') {
		unsigned long long a, b;
		int used;

		if (sscanf(s, "%llu+%llu%n", &a, &b, &used) != 2) {
			fprintf(stderr, "mksnap: bad runs '%s'\n", s);
			exit(2);
		}
		r = realloc(r, (n + 1) * 2 * sizeof(*r));
		r[2 * n] = a, r[2 * n + 1] = b;
		n++;
		s += used;
		if (*s == ',')
			s++;
	}
	*ret = r;
	return n;
}

int main(int argc, char **argv)
{
	struct pc_profile_meta m = { .created = 1700000000, .page_size = (uint32_t)pc_page_size() };
	struct pc_profile_file *fs = NULL;
	size_t nf = 0, cap = 0;
	const char *root = "/", *out;
	bool raw = false, v3 = false, ident = false;
	unsigned version = 0;
	long rep = 0;
	int opt, rc;

	while ((opt = getopt(argc, argv, "r:c:n:RV:IML:T:")) != -1) {
		if (opt == 'r')
			root = optarg;
		else if (opt == 'c')
			m.created = strtoull(optarg, NULL, 0);
		else if (opt == 'n')
			rep = strtol(optarg, NULL, 10);
		else if (opt == 'R')
			raw = true;
		else if (opt == 'I')
			ident = true;
		else if (opt == 'V')
			version = (unsigned)strtoul(optarg, NULL, 10), raw = true;
		else if (opt == 'M')
			m.flags |= PC_META_RECORDED, v3 = true;
		else if (opt == 'L')
			m.lost = strtoull(optarg, NULL, 0), v3 = true;
		else if (opt == 'T')
			m.duration_ms = strtoull(optarg, NULL, 0), v3 = true;
		else
			return 2;
	}
	if (argc - optind < 1)
		return 2;
	out = argv[optind++];
	snprintf(m.root, sizeof(m.root), "%s", root);
	snprintf(m.host, sizeof(m.host), "testhost");
	for (int a = optind; a < argc; a++)
		for (long k = 0; k < (rep ? rep : 1); k++) {
			char *spec = strdup(argv[a]), *eq, *at = strchr(spec, '@'), full[8192];
			struct pc_profile_file f = { 0 };
			struct stat st;

			if (at) {
				*at++ = 0;
				f.nused = parse_used(at, &f.used);
				v3 = true;
			}
			eq = strchr(spec, '=');
			if (eq)
				*eq++ = 0;
			if (!strncmp(spec, "dir:", 4)) {
				memmove(spec, spec + 4, strlen(spec + 4) + 1);
				f.ident = PC_IDENT_DIR;
			}
			if (!strncmp(spec, "dev:", 4)) {
				memmove(spec, spec + 4, strlen(spec + 4) + 1);
				f.ident = PC_IDENT_BDEV;
				v3 = true;
			}
			if (rep) {
				char *p;

				if (asprintf(&p, spec, (int)k) < 0)
					return 1;
				f.path = p;
			} else {
				f.path = strdup(spec);
			}
			snprintf(full, sizeof(full), "%s/%s", root, f.path);
			if (f.ident & PC_IDENT_BDEV) {
				f.size = 1ull << 30;
				f.dev = 0x700;
			} else if (f.ident & PC_IDENT_DIR) {
				if (lstat(full, &st) == 0) {
					f.mtime_s = st.st_mtim.tv_sec;
					f.dev = st.st_dev;
					f.ino = st.st_ino;
				}
			} else if (lstat(full, &st) == 0) {
				f.size = (uint64_t)st.st_size;
				f.mtime_s = st.st_mtim.tv_sec;
				f.mtime_ns = (uint32_t)st.st_mtim.tv_nsec;
				f.dev = st.st_dev;
				f.ino = st.st_ino;
				if (ident && S_ISREG(st.st_mode)) {
					int fd = open(full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

					if (fd >= 0) {
						pc_profile_identify(fd, &f);
						close(fd);
					}
				}
			} else {
				f.size = 1 << 20;
			}
			if (eq) {
				char *slash = strchr(eq, '/');

				f.nruns = parse_runs(eq, &f.runs);
				if (slash)
					f.nactive = parse_runs(slash + 1, &f.active);
				/* a hostile writer may give any file pages */
				for (size_t i = 0; i < f.nruns; i++)
					if ((f.runs[2 * i] + f.runs[2 * i + 1]) * m.page_size > f.size)
						f.size = (f.runs[2 * i] + f.runs[2 * i + 1]) * m.page_size;
			} else if (f.size && !(f.ident & PC_IDENT_DIR)) {
				f.runs = malloc(2 * sizeof(*f.runs));
				f.runs[0] = 0;
				f.runs[1] = (f.size + m.page_size - 1) / m.page_size;
				f.nruns = 1;
			}
			if (nf == cap) {	/* doubling: 100,000 entries under ASan too */
				cap = cap ? 2 * cap : 64;
				fs = realloc(fs, cap * sizeof(*fs));
			}
			fs[nf++] = f;
			free(spec);
		}
	if (raw) {
		size_t len;
		uint8_t *b = craft_snapshot_v(&m, fs, nf, &len, version ? version : v3 ? 3 : 1);
		FILE *o = fopen(out, "wb");

		if (!b || !o || fwrite(b, 1, len, o) != len || fclose(o) != 0) {
			perror(out);
			return 1;
		}
		free(b);
	} else {
		struct pc_profile_writer *w;

		rc = pc_profile_create(out, &m, &w);
		for (size_t i = 0; rc == 0 && i < nf; i++)
			rc = pc_profile_add(w, &fs[i]);
		if (rc == 0)
			rc = pc_profile_commit(w);
		else
			pc_profile_abort(w);
		if (rc < 0) {
			fprintf(stderr, "mksnap: %s\n", strerror(-rc));
			return 1;
		}
	}
	for (size_t i = 0; i < nf; i++)
		pc_profile_file_release(&fs[i]);
	free(fs);
	return 0;
}
