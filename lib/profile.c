/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profile.c: the snapshot file: what was cached, file by file, and what
 * tells later whether a file is still the same. The format is in
 * docs/snapshot-format.md: a fixed header, then zlib-compressed sections,
 * each with the length and CRC-32 of its contents, ending with an END
 * section that repeats the counts, so a truncated file is told from a
 * complete one. Version 4, the one written (5 with directory records,
 * 6 with layer digests: a LAYERS section before a FILES section), keeps a
 * FILES section's records column by column; versions 1 to 3 (records one
 * after another) are still read. A file's pages are runs (a varint gap and length each),
 * not bitmaps: a run costs 2 to 6 bytes before zlib.
 *
 * Promises: writing is atomic (temp file, fsync, rename, fsync of the
 * directory; a full disk leaves the old file intact); reading is
 * streaming, one section (at most SECT_RAW_MAX bytes) in memory, and
 * every length, count and page number is checked before it is used, so a
 * corrupt or hostile file is a clear error, never a crash or a huge
 * allocation.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "spanset.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define MAGIC "PCSNAP1\n"
#define VERSION 6			/* the newest read, written with layer digests */
#define VERSION_DIRS 5			/* written with directory records and no digest */
#define VERSION_PLAIN 4			/* written without either: older builds read it */
#define IDENT_ALL (PC_IDENT_GEN | PC_IDENT_BTIME | PC_IDENT_FSID)
/* version 3: record flags besides the identity's */
#define REC_USED 16u			/* used triples follow the active runs */
#define REC_V3 (PC_IDENT_BDEV | REC_USED)
/* version 4 */
#define REC_WHOLE 32u			/* cached: one run, the whole file; no runs stored */
/* version 5: PC_IDENT_DIR (64), a directory's record */
/* version 6: PC_IDENT_LAYER (128), a layer digest's index follows the flags */
#define LAYERS_MAX 4096			/* digests in one LAYERS section */
#define DIGEST_STR 71			/* "sha256:" and 64 hex digits */
#define META_FLAGS_ALL PC_META_RECORDED
#define MS_MAX (1ull << 42)		/* used times: 139 years in ms; past it, corrupt */
#define BDEV_NAME_MAX 64
#define HDR_LEN 32
#define SECT_HDR 16
#define SECT_RAW_MAX (16u << 20)	/* one section, uncompressed */
#define SECT_FLUSH (1u << 20)		/* the writer closes a section here */
#define PATH_MAX_LEN 4096
#define BOMB_FLOOR (64ull << 20)	/* contents always allowed */
#define BOMB_RATIO 100u			/* past it: at most this times the bytes read */
enum { SECT_META = 1, SECT_FILES = 2, SECT_END = 3, SECT_LAYERS = 4 };
/*
 * Version 4's FILES section: the records' fields column by column, so
 * alike numbers lie together for zlib and the random ones (generations)
 * no longer break its matches of the rest (docs/snapshot-format.md).
 */
enum { COL_PATH, COL_FLAGS, COL_SIZE, COL_MTIME, COL_DEV, COL_INO, COL_GEN, COL_BTIME, COL_FSID,
       COL_RUNS, COL_ACTIVE, COL_USED, NCOLS };
static const char *const col_name[NCOLS] = {
	"path", "flags", "size", "mtime", "device", "inode", "generation", "birth time",
	"filesystem id", "runs", "active runs", "used ranges",
};

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
	return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* zigzag: small signed deltas become small varints */
static uint64_t zz(uint64_t a, uint64_t prev)
{
	int64_t d = (int64_t)(a - prev);

	return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static uint64_t unzz(uint64_t z, uint64_t prev)
{
	return prev + (uint64_t)((int64_t)(z >> 1) ^ -(int64_t)(z & 1));
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/*
 * The set of paths seen so far, for refusing a path twice: 64-bit hashes
 * in an open-addressed table (8 bytes a path, not the path). FNV-1a from
 * a random basis, so nobody can name two files that collide on purpose;
 * by chance, two of a million paths collide once in 10^7 snapshots.
 */
struct pathset {
	uint64_t *slot;			/* 0: empty */
	size_t cap, n;
	uint64_t basis;
};

static uint64_t path_hash(const struct pathset *s, const char *p, bool bdev)
{
	uint64_t h = s->basis ^ (bdev ? 0x9e3779b97f4a7c15ull : 0);

	for (; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	return h ? h : 1;
}

/* 0: added, -EEXIST: there already, -ENOMEM */
static int pathset_add(struct pathset *s, const char *p, bool bdev)
{
	uint64_t h;
	size_t i;

	if (!s->basis) {
		if (getrandom(&s->basis, sizeof(s->basis), 0) != sizeof(s->basis))
			s->basis = (uint64_t)(uintptr_t)s ^ (uint64_t)time(NULL);
		s->basis = s->basis ^ 0xcbf29ce484222325ull;
	}
	if (2 * (s->n + 1) > s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 1024;
		uint64_t *ns = calloc(nc, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (size_t k = 0; k < s->cap; k++)
			if (s->slot[k]) {
				for (i = s->slot[k] & (nc - 1); ns[i]; i = (i + 1) & (nc - 1))
					;
				ns[i] = s->slot[k];
			}
		free(s->slot);
		s->slot = ns;
		s->cap = nc;
	}
	h = path_hash(s, p, bdev);
	for (i = h & (s->cap - 1); s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == h)
			return -EEXIST;
	s->slot[i] = h;
	s->n++;
	return 0;
}

/*
 * Does every page of `b` (ranges of `stride` numbers: first, count, ...)
 * lie in runs `a`? Both ascending, disjoint.
 */
static bool ranges_cover(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
			 size_t stride)
{
	size_t i = 0;

	for (size_t k = 0; k < nb; k++) {
		uint64_t s = b[stride * k], e = s + b[stride * k + 1];

		while (i < na && a[2 * i] + a[2 * i + 1] <= s)
			i++;
		if (i == na || a[2 * i] > s || a[2 * i] + a[2 * i + 1] < e)
			return false;
	}
	return true;
}

static bool runs_cover(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	return ranges_cover(a, na, b, nb, 2);
}

bool pc_profile_bdev_name_ok(const char *name)
{
	size_t n = strnlen(name, BDEV_NAME_MAX + 1);

	if (n == 0 || n > BDEV_NAME_MAX || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("._+:!-", c)))
			return false;
	}
	return true;
}

uint64_t pc_profile_first_use(const struct pc_profile_file *f)
{
	uint64_t t = UINT64_MAX;

	for (size_t i = 0; i < f->nused; i++)
		if (f->used[3 * i + 2] < t)
			t = f->used[3 * i + 2];
	return t;
}

/*
 * Used triples as the writer takes them and the reader leaves them: each
 * at least a page, ascending, disjoint (touching is fine: two ranges used
 * at two times), inside `pages` and the cached runs, times up to MS_MAX.
 */
static bool used_ok(const struct pc_profile_file *f, uint64_t pages)
{
	uint64_t end = 0;

	for (size_t i = 0; i < f->nused; i++) {
		uint64_t s = f->used[3 * i], n = f->used[3 * i + 1];

		if (n == 0 || s < end || s > pages || n > pages - s || f->used[3 * i + 2] > MS_MAX)
			return false;
		end = s + n;
	}
	return ranges_cover(f->runs, f->nruns, f->used, f->nused, 3);
}

bool pc_profile_same_file(const struct pc_profile_file *a, const struct pc_profile_file *b)
{
	unsigned both = a->ident & b->ident;

	if ((a->ident ^ b->ident) & PC_IDENT_BDEV)
		return false;
	if (a->ino != b->ino || a->size != b->size || a->mtime_s != b->mtime_s ||
	    a->mtime_ns != b->mtime_ns)
		return false;
	/* the filesystem by f_fsid where both know it (st_dev may change at a reboot) */
	if (both & PC_IDENT_FSID ? a->fsid != b->fsid : a->dev != b->dev)
		return false;
	if ((both & PC_IDENT_GEN) && a->gen != b->gen)
		return false;
	if ((both & PC_IDENT_LAYER) && memcmp(a->layer, b->layer, sizeof(a->layer)))
		return false;
	return !(both & PC_IDENT_BTIME) || (a->btime_s == b->btime_s && a->btime_ns == b->btime_ns);
}

/* The union of runs a and b (pairs, ascending, disjoint): a new array; touching runs join. */
static int runs_union(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
		      uint64_t **ret, size_t *ret_n)
{
	uint64_t *v = na + nb ? malloc(2 * (na + nb) * sizeof(*v)) : NULL;
	size_t i = 0, j = 0, n = 0;

	if (na + nb && !v)
		return -ENOMEM;
	while (i < na || j < nb) {
		const uint64_t *p = j == nb || (i < na && a[2 * i] <= b[2 * j]) ? &a[2 * i++]
									      : &b[2 * j++];

		if (n && p[0] <= v[2 * n - 2] + v[2 * n - 1]) {
			if (p[0] + p[1] > v[2 * n - 2] + v[2 * n - 1])
				v[2 * n - 1] = p[0] + p[1] - v[2 * n - 2];
			continue;
		}
		v[2 * n] = p[0];
		v[2 * n + 1] = p[1];
		n++;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/*
 * The union of used triples a and b (ascending, disjoint), each page at
 * the earlier of its two times: a new array. The set is record's own
 * (spanset.c: a page keeps its earliest time, touching spans of one time
 * join); its times are 32-bit ms (49 days), a later one counts as the
 * latest, which only orders it last.
 */
static int used_union(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
		      uint64_t **ret, size_t *ret_n)
{
	struct pc_spanset set;
	struct pc_span *sp = NULL;
	uint64_t *v = NULL;
	size_t n = 0;
	int rc = 0;

	pc_spanset_init(&set);
	for (size_t k = 0; k < na + nb && rc == 0; k++) {
		const uint64_t *t = k < na ? &a[3 * k] : &b[3 * (k - na)];

		rc = pc_spanset_add(&set, t[0], t[0] + t[1] - 1,
				    t[2] > UINT32_MAX ? UINT32_MAX : (uint32_t)t[2]);
	}
	if (rc == 0)
		rc = pc_spanset_array(&set, &sp, &n);
	if (rc == 0 && n && !(v = malloc(3 * n * sizeof(*v))))
		rc = -ENOMEM;
	for (size_t k = 0; rc == 0 && k < n; k++) {
		v[3 * k] = sp[k].first;
		v[3 * k + 1] = sp[k].last - sp[k].first + 1;
		v[3 * k + 2] = sp[k].ms;
	}
	free(sp);
	pc_spanset_release(&set);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*ret = v;
	*ret_n = rc == 0 ? n : 0;
	return 0;
}

int pc_profile_file_merge(struct pc_profile_file *into, const struct pc_profile_file *from)
{
	uint64_t *runs = NULL, *active = NULL, *used = NULL;
	size_t nruns, nactive, nused;
	unsigned more = from->ident & ~into->ident &
			(PC_IDENT_GEN | PC_IDENT_BTIME | PC_IDENT_FSID | PC_IDENT_LAYER);

	if (runs_union(into->runs, into->nruns, from->runs, from->nruns, &runs, &nruns) < 0 ||
	    runs_union(into->active, into->nactive, from->active, from->nactive, &active,
		       &nactive) < 0 ||
	    used_union(into->used, into->nused, from->used, from->nused, &used, &nused) < 0) {
		free(runs);
		free(active);
		return -ENOMEM;
	}
	free(into->runs);
	free(into->active);
	free(into->used);
	into->runs = runs;
	into->nruns = nruns;
	into->active = active;
	into->nactive = nactive;
	into->used = used;
	into->nused = nused;
	/* what one side knew of the identity and the other did not */
	if (more & PC_IDENT_GEN)
		into->gen = from->gen;
	if (more & PC_IDENT_BTIME) {
		into->btime_s = from->btime_s;
		into->btime_ns = from->btime_ns;
	}
	if (more & PC_IDENT_FSID)
		into->fsid = from->fsid;
	if (more & PC_IDENT_LAYER)
		memcpy(into->layer, from->layer, sizeof(into->layer));
	into->ident |= more;
	return 0;
}

void pc_profile_file_release(struct pc_profile_file *f)
{
	if (!f)
		return;
	free(f->path);
	free(f->runs);
	free(f->active);
	free(f->used);
	memset(f, 0, sizeof(*f));
}

void pc_profile_identify(int fd, struct pc_profile_file *f)
{
	struct statx sx;
	struct statfs sf;
	int gen = 0;

	f->ident = 0;
	f->gen = f->fsid = 0;
	f->btime_s = 0;
	f->btime_ns = 0;
	if (ioctl(fd, FS_IOC_GETVERSION, &gen) == 0) {
		f->gen = (uint32_t)gen;
		f->ident |= PC_IDENT_GEN;
	}
	if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &sx) == 0 && (sx.stx_mask & STATX_BTIME) &&
	    sx.stx_btime.tv_nsec < 1000000000) {
		f->btime_s = sx.stx_btime.tv_sec;
		f->btime_ns = sx.stx_btime.tv_nsec;
		f->ident |= PC_IDENT_BTIME;
	}
	/* both words, in a fixed order: the same id on every host */
	if (fstatfs(fd, &sf) == 0) {
		uint64_t id = (uint64_t)(uint32_t)sf.f_fsid.__val[0] |
			      (uint64_t)(uint32_t)sf.f_fsid.__val[1] << 32;

		if (id) {
			f->fsid = id;
			f->ident |= PC_IDENT_FSID;
		}
	}
}

/* ---- writing ---- */

struct colbuf {
	uint8_t *p;
	size_t len, cap;
};

struct pc_profile_writer {
	int fd;
	int dfd;			/* path's directory (O_PATH), pinned */
	char *path, *tmp;		/* tmp: a name in dfd */
	const char *base;		/* path's last name, in dfd */
	uint8_t *raw;			/* a section's contents, as written */
	size_t rawlen, rawcap;
	struct colbuf col[NCOLS];	/* the section being made, column by column */
	uint64_t sect_files;		/* records in it */
	uint64_t nfiles, nruns;
	uint64_t prev_mtime, prev_ns, prev_dev, prev_ino;	/* deltas within a section */
	uint64_t prev_fsid;
	char prev_path[PATH_MAX_LEN + 1];	/* front coding, within a section */
	size_t prev_len;
	struct pathset paths;		/* each path once */
	uint32_t page_size;
	uint64_t created;		/* the header's, rewritten for version 5 or 6 */
	bool dirs;			/* a directory record was added: version 5 */
	bool layers;			/* a layer digest was: version 6 */
	uint8_t (*ltab)[32];		/* the section's layer digests (its LAYERS section) */
	size_t nltab, ltabcap;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		long n = pc_sys_write(fd, p, len);	/* EINTR retried there */

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_section(struct pc_profile_writer *w, uint32_t type, const uint8_t *raw,
			 size_t len)
{
	uLongf clen = compressBound(len);
	uint8_t *buf = malloc(SECT_HDR + clen);
	int rc;

	if (!buf)
		return -ENOMEM;
	if (compress2(buf + SECT_HDR, &clen, raw, len, 6) != Z_OK) {
		free(buf);
		return -EIO;
	}
	put_u32(buf, type);
	put_u32(buf + 4, (uint32_t)len);
	put_u32(buf + 8, (uint32_t)clen);
	put_u32(buf + 12, (uint32_t)crc32(0, raw, (uInt)len));
	rc = write_all(w->fd, buf, SECT_HDR + clen);
	free(buf);
	return rc;
}

static int grow(uint8_t **p, size_t *cap, size_t need)
{
	if (need > *cap) {
		size_t nc = need * 2;
		uint8_t *n = realloc(*p, nc);

		if (!n)
			return -ENOMEM;
		*p = n;
		*cap = nc;
	}
	return 0;
}

static int reserve(struct pc_profile_writer *w, size_t more)
{
	return grow(&w->raw, &w->rawcap, w->rawlen + more);
}

static size_t cols_len(const struct pc_profile_writer *w)
{
	size_t n = 0;

	for (int c = 0; c < NCOLS; c++)
		n += w->col[c].len;
	return n;
}

/* The section made so far: its record count, then each column's length and bytes. */
static int flush_files(struct pc_profile_writer *w)
{
	int rc;

	if (!w->sect_files)
		return 0;
	if (w->nltab) {
		/* the digests its records name, in a section of their own before it */
		w->rawlen = 0;
		rc = reserve(w, 10 + w->nltab * (1 + DIGEST_STR + 1));
		if (rc < 0)
			return rc;
		w->rawlen = put_varint(w->raw, w->nltab);
		for (size_t i = 0; i < w->nltab; i++) {
			w->raw[w->rawlen++] = DIGEST_STR;
			pc_profile_layer_text(w->ltab[i], 64, (char *)w->raw + w->rawlen,
					       DIGEST_STR + 1);
			w->rawlen += DIGEST_STR;
		}
		rc = write_section(w, SECT_LAYERS, w->raw, w->rawlen);
		w->nltab = 0;
		if (rc < 0)
			return rc;
	}
	w->rawlen = 0;
	rc = reserve(w, cols_len(w) + 10 * (NCOLS + 1));
	if (rc < 0)
		return rc;
	w->rawlen = put_varint(w->raw, w->sect_files);
	for (int c = 0; c < NCOLS; c++)
		w->rawlen += put_varint(w->raw + w->rawlen, w->col[c].len);
	for (int c = 0; c < NCOLS; c++) {
		memcpy(w->raw + w->rawlen, w->col[c].p, w->col[c].len);
		w->rawlen += w->col[c].len;
		w->col[c].len = 0;
	}
	rc = write_section(w, SECT_FILES, w->raw, w->rawlen);
	w->rawlen = 0;
	w->sect_files = 0;
	/* sections stand alone */
	w->prev_mtime = w->prev_ns = w->prev_dev = w->prev_ino = w->prev_fsid = 0;
	w->prev_len = 0;
	return rc;
}

int pc_profile_check_target(const char *path)
{
	struct stat st;

	if (!*path)
		return -ENOENT;	/* "" is no file (its ".tmp.XXXXXX" would be) */
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;	/* a missing parent: mkostemp says */
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	/*
	 * A link is refused, neither written through nor replaced: renamed
	 * over, /dev/stdout (-o /dev/stdout, as root) became a 0600 file in
	 * /dev, the system's link gone. pull -o refuses one too.
	 */
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	return S_ISREG(st.st_mode) ? 0 : -EEXIST;
}

/* path's last name (in path), and its directory opened O_PATH (or -errno) */
static int target_dir(const char *path, const char **ret_base)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int dfd;

	if (!slash) {
		*ret_base = path;
		dfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		return dfd < 0 ? -errno : dfd;
	}
	dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	*ret_base = slash + 1;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		dfd = -errno;
	free(dir);
	return dfd;
}

/* pc_profile_check_target, of name in directory dfd */
static int check_target_at(int dfd, const char *name)
{
	struct stat st;

	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EISDIR;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	return S_ISREG(st.st_mode) ? 0 : -EEXIST;
}

int pc_profile_probe_target(const char *path, int *ret_dfd)
{
	const char *base;
	char *tmp;
	int rc = pc_profile_check_target(path), fd, dfd;

	if (rc < 0)
		return rc;
	dfd = target_dir(path, &base);
	if (dfd < 0)
		return dfd;
	rc = check_target_at(dfd, base);
	/* the writer's own way: a fresh name (O_EXCL), beside path, 0600 */
	fd = rc < 0 ? rc : pc_sys_tmp_create(dfd, base, false, &tmp);
	if (fd < 0) {
		rc = fd;
	} else {
		unlinkat(dfd, tmp, 0);
		close(fd);
		free(tmp);
	}
	if (rc < 0 || !ret_dfd)
		close(dfd);
	else
		*ret_dfd = dfd;
	return rc;
}

int pc_profile_create(const char *path, const struct pc_profile_meta *m,
		      struct pc_profile_writer **ret)
{
	return pc_profile_createat(-1, path, m, ret);
}

int pc_profile_createat(int dfd, const char *path, const struct pc_profile_meta *m,
			struct pc_profile_writer **ret)
{
	struct pc_profile_writer *w = calloc(1, sizeof(*w));
	uint8_t hdr[HDR_LEN] = { 0 };
	size_t rl = strnlen(m->root, sizeof(m->root)), hl = strnlen(m->host, sizeof(m->host));
	int rc;

	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->dfd = -1;
	rc = pc_profile_check_target(path);
	if (rc < 0) {
		free(w);
		return rc;
	}
	w->path = strdup(path);
	if (!w->path) {
		rc = -ENOMEM;
		goto fail;
	}
	if (dfd >= 0) {	/* the directory the caller pinned (pc_profile_probe_target) */
		const char *slash = strrchr(w->path, '/');

		w->base = slash ? slash + 1 : w->path;
		w->dfd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
		if (w->dfd < 0)
			rc = -errno;
	} else {
		w->dfd = target_dir(w->path, &w->base);
		rc = w->dfd < 0 ? w->dfd : 0;
	}
	if (rc == 0)
		rc = check_target_at(w->dfd, w->base);
	if (rc < 0)
		goto fail;
	/*
	 * A fresh name nobody could plant a link at (O_EXCL), mode 0600: a
	 * snapshot says what is cached in files its reader may not be allowed
	 * to ask about, so it is its writer's alone (chmod to share it).
	 */
	w->fd = pc_sys_tmp_create(w->dfd, w->base, false, &w->tmp);
	if (w->fd < 0) {
		rc = w->fd;
		w->tmp = NULL;	/* not ours to unlink */
		goto fail;
	}
	if (m->flags & ~META_FLAGS_ALL) {
		rc = -EINVAL;	/* a reader refuses flags it does not know */
		goto fail;
	}
	if (m->page_size < 512 || m->page_size > (1u << 20) || (m->page_size & (m->page_size - 1))) {
		rc = -EINVAL;	/* ... and page sizes it cannot use */
		goto fail;
	}
	w->page_size = m->page_size;
	w->created = m->created;
	memcpy(hdr, MAGIC, 8);
	put_u32(hdr + 8, VERSION_PLAIN);	/* VERSION at commit, if a directory came */
	put_u32(hdr + 12, m->page_size);
	put_u64(hdr + 16, m->created);
	put_u32(hdr + 24, 0);
	put_u32(hdr + 28, (uint32_t)crc32(0, hdr, 28));
	rc = write_all(w->fd, hdr, HDR_LEN);
	if (rc < 0)
		goto fail;
	rc = reserve(w, rl + hl + 80);	/* seven varints of 10 bytes at most */
	if (rc < 0)
		goto fail;
	w->rawlen = put_varint(w->raw, rl);
	memcpy(w->raw + w->rawlen, m->root, rl);
	w->rawlen += rl;
	w->rawlen += put_varint(w->raw + w->rawlen, hl);
	memcpy(w->raw + w->rawlen, m->host, hl);
	w->rawlen += hl;
	/* version 3's fields, always */
	w->rawlen += put_varint(w->raw + w->rawlen, m->flags);
	w->rawlen += put_varint(w->raw + w->rawlen, m->lost);
	w->rawlen += put_varint(w->raw + w->rawlen, m->duration_ms);
	/* appended, in this order: a reader of before skips what it does not know */
	if (m->source || m->active)
		w->rawlen += put_varint(w->raw + w->rawlen, m->source);
	if (m->active)
		w->rawlen += put_varint(w->raw + w->rawlen, m->active);
	rc = write_section(w, SECT_META, w->raw, w->rawlen);
	w->rawlen = 0;
	if (rc < 0)
		goto fail;
	*ret = w;
	return 0;
fail:
	pc_profile_abort(w);
	return rc;
}

static size_t put_runs(uint8_t *p, const uint64_t *runs, size_t n)
{
	size_t len = put_varint(p, n);
	uint64_t prev_end = 0;

	for (size_t i = 0; i < n; i++) {
		len += put_varint(p + len, runs[2 * i] - prev_end);
		len += put_varint(p + len, runs[2 * i + 1]);
		prev_end = runs[2 * i] + runs[2 * i + 1];
	}
	return len;
}

/* used triples: gap from the previous one's end, count, time as a zigzag delta from the previous */
static size_t put_used(uint8_t *p, const uint64_t *used, size_t n)
{
	size_t len = put_varint(p, n);
	uint64_t prev_end = 0, prev_ms = 0;

	for (size_t i = 0; i < n; i++) {
		len += put_varint(p + len, used[3 * i] - prev_end);
		len += put_varint(p + len, used[3 * i + 1]);
		len += put_varint(p + len, zz(used[3 * i + 2], prev_ms));
		prev_end = used[3 * i] + used[3 * i + 1];
		prev_ms = used[3 * i + 2];
	}
	return len;
}

static uint8_t *col_at(struct pc_profile_writer *w, int c)
{
	return w->col[c].p + w->col[c].len;
}

static void col_varint(struct pc_profile_writer *w, int c, uint64_t v)
{
	w->col[c].len += put_varint(col_at(w, c), v);
}

int pc_profile_add(struct pc_profile_writer *w, const struct pc_profile_file *f)
{
	size_t pl = strlen(f->path), pre = 0,
	       need = pl + 10 * (14 + 2 * f->nruns + 2 * f->nactive + 3 * f->nused);
	/* the most each column can take of this record */
	size_t room[NCOLS] = { pl + 20, 20, 10, 20, 10, 10, 4, 20, 10, 10 + 20 * f->nruns,
			       10 + 20 * f->nactive, 10 + 30 * f->nused };
	uint64_t pages;
	uint32_t ident;
	size_t lx = 0;
	int rc;

	if (!pl || pl > PATH_MAX_LEN)
		return -ENAMETOOLONG;
	if (need > SECT_RAW_MAX)
		return -EFBIG;	/* too fragmented for one record */
	if (!runs_cover(f->runs, f->nruns, f->active, f->nactive))
		return -EINVAL;	/* a reader refuses active pages that were not cached */
	/* ... and identity fields it could not read back as given */
	if ((f->ident & ~(IDENT_ALL | PC_IDENT_BDEV | PC_IDENT_DIR | PC_IDENT_LAYER)) ||
	    f->gen > UINT32_MAX ||
	    f->btime_ns >= 1000000000 || (f->ident & PC_IDENT_FSID && !f->fsid))
		return -EINVAL;
	if (f->mtime_ns >= 1000000000)
		return -EINVAL;
	if ((f->ident & PC_IDENT_BDEV) && !pc_profile_bdev_name_ok(f->path))
		return -EINVAL;
	/* a directory: its place and identity, nothing cached (a reader refuses more) */
	if ((f->ident & PC_IDENT_DIR) &&
	    ((f->ident & PC_IDENT_BDEV) || f->size || f->nruns || f->nactive || f->nused))
		return -EINVAL;
	/* a layer is a file's: a directory or device has none */
	if ((f->ident & PC_IDENT_LAYER) && (f->ident & (PC_IDENT_BDEV | PC_IDENT_DIR)))
		return -EINVAL;
	if (f->size > (1ull << 62))
		return -EINVAL;
	pages = (f->size + w->page_size - 1) / w->page_size;
	if (!used_ok(f, pages))
		return -EINVAL;	/* used triples a reader would refuse */
	/* a caller that fills gen alone, as before ident, means it known (version 1's rule) */
	ident = f->ident | (f->gen ? PC_IDENT_GEN : 0) | (f->nused ? REC_USED : 0);
	if (pages && f->nruns == 1 && f->runs[0] == 0 && f->runs[1] == pages)
		ident |= REC_WHOLE;
	rc = pathset_add(&w->paths, f->path, ident & PC_IDENT_BDEV);	/* ... and a path twice */
	if (rc < 0)
		return rc;
	if (ident & PC_IDENT_LAYER) {
		while (lx < w->nltab && memcmp(w->ltab[lx], f->layer, 32))
			lx++;
		if (lx == LAYERS_MAX && w->sect_files) {
			rc = flush_files(w);	/* the section's table is full: a new one */
			if (rc < 0)
				return rc;
			lx = 0;
		}
	}
	if (w->sect_files && cols_len(w) + need > SECT_FLUSH) {
		rc = flush_files(w);
		if (rc < 0)
			return rc;
		lx = 0;
	}
	if ((ident & PC_IDENT_LAYER) && lx == w->nltab) {
		if (pc_grow(&w->ltab, &w->ltabcap, w->nltab, sizeof(*w->ltab)) < 0)
			return -ENOMEM;
		memcpy(w->ltab[w->nltab++], f->layer, 32);
	}
	for (int c = 0; c < NCOLS; c++)
		if ((rc = grow(&w->col[c].p, &w->col[c].cap, w->col[c].len + room[c])) < 0)
			return rc;
	/* the path: what it shares with the previous one, then the rest */
	while (pre < w->prev_len && pre < pl && w->prev_path[pre] == f->path[pre])
		pre++;
	if (pre == pl)
		pre--;	/* the rest is never empty */
	col_varint(w, COL_PATH, pre);
	col_varint(w, COL_PATH, pl - pre);
	memcpy(col_at(w, COL_PATH), f->path + pre, pl - pre);
	w->col[COL_PATH].len += pl - pre;
	memcpy(w->prev_path, f->path, pl);
	w->prev_len = pl;
	col_varint(w, COL_FLAGS, ident);
	if (ident & PC_IDENT_LAYER)
		col_varint(w, COL_FLAGS, lx);	/* its digest in the section's table */
	col_varint(w, COL_SIZE, f->size);
	col_varint(w, COL_MTIME, zz((uint64_t)f->mtime_s, w->prev_mtime));
	col_varint(w, COL_MTIME, zz(f->mtime_ns, w->prev_ns));
	col_varint(w, COL_DEV, zz(f->dev, w->prev_dev));
	col_varint(w, COL_INO, zz(f->ino, w->prev_ino));
	w->prev_mtime = (uint64_t)f->mtime_s;
	w->prev_ns = f->mtime_ns;
	w->prev_dev = f->dev;
	w->prev_ino = f->ino;
	if (ident & PC_IDENT_GEN) {
		put_u32(col_at(w, COL_GEN), (uint32_t)f->gen);
		w->col[COL_GEN].len += 4;
	}
	if (ident & PC_IDENT_BTIME) {
		col_varint(w, COL_BTIME, zz((uint64_t)f->btime_s, (uint64_t)f->mtime_s));
		col_varint(w, COL_BTIME, zz(f->btime_ns, f->mtime_ns));
	}
	if (ident & PC_IDENT_FSID) {
		col_varint(w, COL_FSID, zz(f->fsid, w->prev_fsid));
		w->prev_fsid = f->fsid;
	}
	if (!(ident & REC_WHOLE))
		w->col[COL_RUNS].len += put_runs(col_at(w, COL_RUNS), f->runs, f->nruns);
	w->col[COL_ACTIVE].len += put_runs(col_at(w, COL_ACTIVE), f->active, f->nactive);
	if (ident & REC_USED)
		w->col[COL_USED].len += put_used(col_at(w, COL_USED), f->used, f->nused);
	w->sect_files++;
	w->nfiles++;
	w->nruns += f->nruns;
	w->dirs |= (ident & PC_IDENT_DIR) != 0;
	w->layers |= (ident & PC_IDENT_LAYER) != 0;
	return 0;
}

/*
 * Version 5 only where a directory record is in the file, 6 only where a
 * layer digest is: a snapshot without either is what version 4 always
 * held, and stays readable by the builds that read 4 (one without digests
 * by those that read 5). The header was written first, as 4: rewritten
 * here.
 */
static int header_version(struct pc_profile_writer *w, uint32_t version)
{
	uint8_t hdr[HDR_LEN];

	memcpy(hdr, MAGIC, 8);
	put_u32(hdr + 8, version);
	put_u32(hdr + 12, w->page_size);
	put_u64(hdr + 16, w->created);
	put_u32(hdr + 24, 0);
	put_u32(hdr + 28, (uint32_t)crc32(0, hdr, 28));
	if (pwrite(w->fd, hdr, HDR_LEN, 0) != HDR_LEN)
		return errno ? -errno : -EIO;
	return 0;
}

int pc_profile_commit(struct pc_profile_writer *w)
{
	uint8_t end[32];
	size_t n;
	int rc = 0, dfd;

	rc = flush_files(w);
	n = put_varint(end, w->nfiles);
	n += put_varint(end + n, w->nruns);
	if (rc == 0)
		rc = write_section(w, SECT_END, end, n);
	if (rc == 0 && (w->dirs || w->layers))
		rc = header_version(w, w->layers ? VERSION : VERSION_DIRS);
	if (rc == 0)
		rc = pc_sys_fsync(w->fd);
	if (rc == 0) {
		rc = close(w->fd) < 0 ? -errno : 0;
		w->fd = -1;
	}
	if (rc == 0)	/* again: a device or FIFO put there since is not replaced either */
		rc = check_target_at(w->dfd, w->base);
	if (rc == 0)	/* in the directory pinned at the start, wherever its path leads now */
		rc = pc_sys_renameat(w->dfd, w->tmp, w->dfd, w->base);
	if (rc < 0) {
		pc_profile_abort(w);
		return rc;
	}
	/* the rename itself must reach the disk */
	dfd = openat(w->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(w->tmp);
	w->tmp = NULL;
	pc_profile_abort(w);	/* frees the rest */
	return 0;
}

void pc_profile_abort(struct pc_profile_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp)
		unlinkat(w->dfd, w->tmp, 0);
	if (w->dfd >= 0)
		close(w->dfd);
	free(w->tmp);
	free(w->path);
	free(w->raw);
	for (int c = 0; c < NCOLS; c++)
		free(w->col[c].p);
	free(w->ltab);
	free(w->paths.slot);
	free(w);
}

/* ---- reading ---- */

struct pc_profile_reader {
	int fd;
	const uint8_t *mem;
	size_t memlen, mempos;
	struct pc_profile_meta meta;
	uint8_t *raw, *comp;
	size_t rawlen, pos, end;	/* the section; where the reading is, and its bound */
	size_t rawcap, compcap;		/* grown to the largest section seen */
	uint64_t section, nfiles, nruns;
	uint64_t raw_total, comp_total;	/* contents and bytes read, for BOMB_RATIO */
	uint64_t prev_mtime, prev_ns, prev_dev, prev_ino;	/* deltas within a section */
	uint64_t prev_fsid;
	uint32_t version;		/* 1 to 6 */
	/* version 6: the layer digests of the FILES section being read (or of the next) */
	uint8_t (*ltab)[32];
	size_t nltab;
	bool ltab_next;			/* read from a LAYERS section: the next FILES's */
	/* version 4: the FILES section's columns, and the records left in it */
	struct { size_t pos, end; } col[NCOLS];
	int cur;			/* the column pos and end are of */
	uint64_t left;
	char prev_path[PATH_MAX_LEN + 1];	/* front coding */
	size_t prev_len;
	const char *path;		/* the record being read, for messages */
	bool ended;
	struct pathset paths;		/* each path once */
	char err[512];
};

static int bad(struct pc_profile_reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = r->section ? snprintf(r->err, sizeof(r->err), "section %llu: ",
				      (unsigned long long)r->section)
			   : snprintf(r->err, sizeof(r->err), "header: ");

	char q[PATH_MAX_LEN + 3];

	va_start(ap, fmt);
	n += vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	/* whose record it is, where the message does not say it already */
	if (r->path && (size_t)n < sizeof(r->err)) {
		snprintf(q, sizeof(q), "'%s'", r->path);
		if (!strstr(r->err, q))
			snprintf(r->err + n, sizeof(r->err) - (size_t)n, " (file %.*s)",
				 (int)(sizeof(r->err) - (size_t)n), q);
	}
	return -EBADMSG;
}

/* version 4: read from column c from now on */
static void use_col(struct pc_profile_reader *r, int c)
{
	r->col[r->cur].pos = r->pos;
	r->cur = c;
	r->pos = r->col[c].pos;
	r->end = r->col[c].end;
}

/* 1: read all, 0: clean EOF before any byte, -EBADMSG: truncated, -errno */
static int read_exact(struct pc_profile_reader *r, void *buf, size_t len)
{
	size_t got = 0;

	if (r->mem) {
		if (r->mempos == r->memlen)
			return 0;
		if (r->memlen - r->mempos < len)
			return -EBADMSG;
		memcpy(buf, r->mem + r->mempos, len);
		r->mempos += len;
		return 1;
	}
	while (got < len) {
		ssize_t n = read(r->fd, (uint8_t *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return got ? -EBADMSG : 0;
		got += (size_t)n;
	}
	return 1;
}

static int get_varint(struct pc_profile_reader *r, uint64_t *ret)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (r->pos >= r->end)
			return r->version >= 4 && r->left
				       ? bad(r, "record runs past the end of the %s column",
					     col_name[r->cur])
				       : bad(r, "record runs past the end of the section");
		b = r->raw[r->pos++];
		if (shift == 63 && b > 1)
			return bad(r, "number too large");
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*ret = v;
			return 0;
		}
	}
	return bad(r, "number too long");
}

/* past 64 MiB of contents, at most BOMB_RATIO times the bytes read */
static int bomb_check(struct pc_profile_reader *r)
{
	if (r->raw_total > BOMB_FLOOR && r->raw_total / BOMB_RATIO > r->comp_total)
		return bad(r, "contents over %u times the file's size (%llu bytes from %llu)",
			   BOMB_RATIO, (unsigned long long)r->raw_total,
			   (unsigned long long)r->comp_total);
	return 0;
}

/* Load the next section; its type in *type. 0 at a clean end of file. */
static int load_section(struct pc_profile_reader *r, uint32_t *type)
{
	uint8_t h[SECT_HDR];
	uint32_t rawlen, clen, crc;
	uLongf dlen;
	int rc;

	r->section++;
	rc = read_exact(r, h, SECT_HDR);
	if (rc <= 0)
		return rc == 0 ? 0 : rc == -EBADMSG ? bad(r, "truncated section header") : rc;
	*type = get_u32(h);
	rawlen = get_u32(h + 4);
	clen = get_u32(h + 8);
	crc = get_u32(h + 12);
	if (*type < SECT_META || *type > (r->version >= 6 ? SECT_LAYERS : SECT_END))
		return bad(r, "unknown section type %u", *type);
	if (rawlen > SECT_RAW_MAX || clen == 0 || clen > compressBound(SECT_RAW_MAX))
		return bad(r, "section length out of range (%u, %u)", rawlen, clen);
	/* buffers as big as this section needs, never past the limits above */
	if (clen > r->compcap) {
		uint8_t *n = realloc(r->comp, clen);

		if (!n)
			return -ENOMEM;
		r->comp = n;
		r->compcap = clen;
	}
	if (rawlen + 1 > r->rawcap) {
		uint8_t *n = realloc(r->raw, rawlen + 1);

		if (!n)
			return -ENOMEM;
		r->raw = n;
		r->rawcap = rawlen + 1;
	}
	rc = read_exact(r, r->comp, clen);
	if (rc <= 0)
		return rc == 0 || rc == -EBADMSG ? bad(r, "truncated section") : rc;
	dlen = rawlen;
	if (uncompress(r->raw, &dlen, r->comp, clen) != Z_OK || dlen != rawlen)
		return bad(r, "section does not decompress to its stated length");
	if ((uint32_t)crc32(0, r->raw, rawlen) != crc)
		return bad(r, "checksum mismatch");
	/*
	 * zlib inflates up to ~1000:1, so a small file could stand for a huge
	 * list (long, alike paths) and the memory it takes: past 64 MiB of
	 * contents, they may be at most 100 times what was read. Measured:
	 * 20,000 real files of one deep directory 19:1; 100,000 made-up
	 * records alike but for a number 57:1; 4 KiB alike paths 153:1.
	 */
	r->raw_total += rawlen;
	r->comp_total += SECT_HDR + clen;
	if ((rc = bomb_check(r)) < 0)
		return rc;
	r->rawlen = r->end = rawlen;
	r->pos = 0;
	r->prev_mtime = r->prev_ns = r->prev_dev = r->prev_ino = r->prev_fsid = 0;
	r->prev_len = 0;
	return 1;
}

/*
 * Version 4: a FILES section's record count and column lengths, which
 * must add up to the section exactly; the reading then goes column by
 * column (use_col).
 */
static int load_columns(struct pc_profile_reader *r)
{
	uint64_t n, len[NCOLS], at;
	int rc;

	r->cur = 0;
	if ((rc = get_varint(r, &n)) < 0)
		return rc;
	if (n == 0 || n > r->rawlen)
		return bad(r, "record count %llu out of range", (unsigned long long)n);
	for (int c = 0; c < NCOLS; c++)
		if ((rc = get_varint(r, &len[c])) < 0)
			return rc;
	at = r->pos;
	for (int c = 0; c < NCOLS; c++) {
		if (len[c] > r->rawlen - at)
			return bad(r, "the %s column runs past the end of the section", col_name[c]);
		r->col[c].pos = (size_t)at;
		r->col[c].end = (size_t)(at + len[c]);
		at += len[c];
	}
	if (at != r->rawlen)
		return bad(r, "%llu bytes after the last column", (unsigned long long)(r->rawlen - at));
	r->left = n;
	r->pos = r->col[0].pos;
	r->end = r->col[0].end;
	return 0;
}

/* Version 4: the section's last record read; every column must be used up. */
static int columns_done(struct pc_profile_reader *r)
{
	use_col(r, r->cur);
	for (int c = 0; c < NCOLS; c++)
		if (r->col[c].pos != r->col[c].end)
			return bad(r, "%llu bytes left in the %s column after the last record",
				   (unsigned long long)(r->col[c].end - r->col[c].pos), col_name[c]);
	r->pos = r->end = r->rawlen;
	return 0;
}

/*
 * Version 6: a LAYERS section, the digests the next FILES section's
 * records name by index: a count (1 to LAYERS_MAX), then each as a string,
 * "sha256:" and 64 lowercase hex digits, and nothing after them.
 */
static int load_layers(struct pc_profile_reader *r)
{
	uint64_t n, len;
	int rc;

	if (r->ltab_next)
		return bad(r, "a LAYERS section where its FILES section should be");
	if ((rc = get_varint(r, &n)) < 0)
		return rc;
	if (n == 0 || n > LAYERS_MAX || n > (r->end - r->pos) / (DIGEST_STR + 1))
		return bad(r, "layer digest count %llu out of range", (unsigned long long)n);
	free(r->ltab);
	r->nltab = 0;
	r->ltab = malloc(n * sizeof(*r->ltab));
	if (!r->ltab)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		if ((rc = get_varint(r, &len)) < 0)
			return rc;
		if (len > r->end - r->pos ||
		    !pc_layer_digest_parse((const char *)r->raw + r->pos, (size_t)len, r->ltab[i]))
			return bad(r, "layer digest %llu is not sha256: and 64 lowercase hex digits",
				   (unsigned long long)i);
		r->pos += (size_t)len;
		r->nltab = (size_t)i + 1;
	}
	if (r->pos != r->end)
		return bad(r, "%llu bytes after the layer digests",
			   (unsigned long long)(r->end - r->pos));
	r->ltab_next = true;
	return 0;
}

static int get_string(struct pc_profile_reader *r, char *out, size_t cap)
{
	uint64_t n;
	int rc = get_varint(r, &n);

	if (rc < 0)
		return rc;
	if (n >= cap || n > r->end - r->pos)
		return bad(r, "string length %llu out of range", (unsigned long long)n);
	memcpy(out, r->raw + r->pos, n);
	out[n] = 0;
	r->pos += n;
	if (strlen(out) != n)
		return bad(r, "NUL inside a string");
	return 0;
}

static int open_common(struct pc_profile_reader *r)
{
	uint8_t h[HDR_LEN];
	uint32_t type, ps;
	int rc;

	rc = read_exact(r, h, HDR_LEN);
	if (rc < 0 && rc != -EBADMSG)
		return rc;
	if (rc <= 0) {
		/* short: still say whether it even starts like a snapshot */
		size_t have = r->mem ? r->memlen : 0;

		if (!r->mem)
			have = (size_t)pread(r->fd, h, HDR_LEN, 0);
		else if (have)
			memcpy(h, r->mem, have < HDR_LEN ? have : HDR_LEN);
		if (have > HDR_LEN)
			have = 0;
		if (memcmp(h, MAGIC, have < 8 ? have : 8) || have == 0)
			return bad(r, "not a pagecache snapshot (bad magic)");
		return bad(r, "too short for a snapshot");
	}
	if (memcmp(h, MAGIC, 8))
		return bad(r, "not a pagecache snapshot (bad magic)");
	if ((uint32_t)crc32(0, h, 28) != get_u32(h + 28))
		return bad(r, "header checksum mismatch");
	r->version = get_u32(h + 8);
	if (r->version < 1 || r->version > VERSION)
		return bad(r, "unsupported version %u (this build reads 1 to %u)", r->version, VERSION);
	ps = get_u32(h + 12);
	if (ps < 512 || ps > (1u << 20) || (ps & (ps - 1)))
		return bad(r, "bad page size %u", ps);
	r->meta.page_size = ps;
	r->meta.created = get_u64(h + 16);
	rc = load_section(r, &type);
	if (rc <= 0 || type != SECT_META)
		return rc < 0 ? rc : bad(r, "the first section is not META");
	rc = get_string(r, r->meta.root, sizeof(r->meta.root));
	if (rc == 0)
		rc = get_string(r, r->meta.host, sizeof(r->meta.host));
	if (rc == 0 && r->version >= 3) {
		uint64_t fl;

		if ((rc = get_varint(r, &fl)) < 0 || (rc = get_varint(r, &r->meta.lost)) < 0 ||
		    (rc = get_varint(r, &r->meta.duration_ms)) < 0)
			return rc;
		if (fl & ~(uint64_t)META_FLAGS_ALL)
			return bad(r, "unknown meta flags %#llx", (unsigned long long)fl);
		r->meta.flags = (uint32_t)fl;
		if (r->pos < r->end) {	/* appended later: record's source */
			uint64_t src;

			if ((rc = get_varint(r, &src)) < 0)
				return rc;
			r->meta.source = src <= UINT32_MAX ? (uint32_t)src : 0;
		}
		if (r->pos < r->end) {	/* appended after it: active pages unknown */
			uint64_t act;

			if ((rc = get_varint(r, &act)) < 0)
				return rc;
			/* a value this reader does not know: the files' word stands */
			r->meta.active = act == PC_META_ACTIVE_UNKNOWN ? PC_META_ACTIVE_UNKNOWN : 0;
		}
	}
	r->pos = r->end;	/* later fields are for later versions */
	return rc;
}

static int open_finish(struct pc_profile_reader *r, struct pc_profile_reader **ret, char *err,
		       size_t errlen)
{
	int rc = open_common(r);

	if (rc < 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s", r->err[0] ? r->err : strerror(-rc));
		pc_profile_close(r);
		return rc;
	}
	*ret = r;
	return 0;
}

int pc_profile_open(const char *path, struct pc_profile_reader **ret, char *err, size_t errlen)
{
	struct pc_profile_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		int e = -errno;

		if (err && errlen)
			snprintf(err, errlen, "%s", strerror(-e));
		free(r);
		return e;
	}
	return open_finish(r, ret, err, errlen);
}

int pc_profile_open_fd(int fd, struct pc_profile_reader **ret, char *err, size_t errlen)
{
	struct pc_profile_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		close(fd);
		return -ENOMEM;
	}
	r->fd = fd;
	return open_finish(r, ret, err, errlen);
}

int pc_profile_open_mem(const void *buf, size_t len, struct pc_profile_reader **ret,
			char *err, size_t errlen)
{
	struct pc_profile_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->fd = -1;
	r->mem = buf;
	r->memlen = len;
	return open_finish(r, ret, err, errlen);
}

const struct pc_profile_meta *pc_profile_get_meta(const struct pc_profile_reader *r)
{
	return &r->meta;
}

const char *pc_profile_error(const struct pc_profile_reader *r)
{
	return r && r->err[0] ? r->err : "no error";
}

static int get_runs(struct pc_profile_reader *r, uint64_t pages, uint64_t **ret, size_t *ret_n)
{
	uint64_t n, prev_end = 0, *runs;
	int rc = get_varint(r, &n);

	if (rc < 0)
		return rc;
	/* each run takes at least two bytes: no allocation beyond the section */
	if (n > pages || n > (r->end - r->pos) / 2)
		return bad(r, "run count %llu out of range", (unsigned long long)n);
	runs = n ? malloc(n * 2 * sizeof(*runs)) : NULL;
	if (n && !runs)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t gap, len;

		if ((rc = get_varint(r, &gap)) < 0 || (rc = get_varint(r, &len)) < 0) {
			free(runs);
			return rc;
		}
		if (len == 0 || gap > pages || prev_end + gap > pages || len > pages - prev_end - gap ||
		    (i && gap == 0)) {
			free(runs);
			return bad(r, "page run outside the file or out of order");
		}
		runs[2 * i] = prev_end + gap;
		runs[2 * i + 1] = len;
		prev_end += gap + len;
	}
	*ret = runs;
	*ret_n = (size_t)n;
	return 0;
}

/*
 * Version 3's used triples (REC_USED): a count (at least 1), then per
 * triple the gap from the previous one's end, the count of pages (at
 * least 1) and the time as a zigzag delta from the previous triple's.
 * The encoding cannot put them out of order or overlapping; what it can
 * say wrong (past the file, past the cached runs, counts that overflow,
 * times past MS_MAX or before 0) is refused.
 */
static int get_used(struct pc_profile_reader *r, uint64_t pages, struct pc_profile_file *f,
		    const char *path)
{
	uint64_t n, prev_end = 0, prev_ms = 0, *u;
	int rc = get_varint(r, &n);

	if (rc < 0)
		return rc;
	/* each triple takes at least three bytes: no allocation beyond the section */
	if (n == 0 || n > pages || n > (r->end - r->pos) / 3)
		return bad(r, "used range count %llu of '%s' out of range", (unsigned long long)n,
			   path);
	u = malloc(n * 3 * sizeof(*u));
	if (!u)
		return -ENOMEM;
	f->used = u;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t gap, len, z, ms;

		if ((rc = get_varint(r, &gap)) < 0 || (rc = get_varint(r, &len)) < 0 ||
		    (rc = get_varint(r, &z)) < 0)
			return rc;
		if (len == 0 || gap > pages || prev_end + gap > pages || len > pages - prev_end - gap)
			return bad(r, "used range of '%s' outside the file or empty", path);
		ms = unzz(z, prev_ms);
		if (ms > MS_MAX)
			return bad(r, "used time of '%s' out of range", path);
		u[3 * i] = prev_end + gap;
		u[3 * i + 1] = len;
		u[3 * i + 2] = ms;
		prev_end += gap + len;
		prev_ms = ms;
		f->nused = (size_t)i + 1;
	}
	if (!ranges_cover(f->runs, f->nruns, u, f->nused, 3))
		return bad(r, "used pages of '%s' that are not cached", path);
	return 0;
}

static bool path_ok(const char *p)
{
	if (!*p || *p == '/')
		return false;
	for (const char *s = p; s;) {
		const char *e = strchr(s, '/');
		size_t l = e ? (size_t)(e - s) : strlen(s);

		if (l == 0 || (l == 2 && s[0] == '.' && s[1] == '.') || (l == 1 && s[0] == '.'))
			return false;
		s = e ? e + 1 : NULL;
	}
	return true;
}

/*
 * Version 2's identity fields: which of gen, btime, fsid are known, and
 * those that are. Strict: a flag this build does not know, a generation
 * given as unknown but not 0, or an fsid of 0 said to be known are errors,
 * so one snapshot has one reading.
 */
static int get_identity(struct pc_profile_reader *r, struct pc_profile_file *f)
{
	uint64_t v;
	int rc;

	if ((rc = get_varint(r, &v)) < 0)
		return rc;
	if (v & ~(uint64_t)(IDENT_ALL | (r->version >= 3 ? REC_V3 : 0)))
		return bad(r, "unknown identity flags %#llx", (unsigned long long)v);
	f->ident = (uint32_t)v;
	if (f->gen > UINT32_MAX || (!(f->ident & PC_IDENT_GEN) && f->gen))
		return bad(r, "inode generation out of range");
	if (f->ident & PC_IDENT_BTIME) {
		if ((rc = get_varint(r, &v)) < 0)
			return rc;
		f->btime_s = (int64_t)unzz(v, (uint64_t)f->mtime_s);
		if ((rc = get_varint(r, &v)) < 0)
			return rc;
		if (v >= 1000000000)
			return bad(r, "birth time nanoseconds out of range");
		f->btime_ns = (uint32_t)v;
	}
	if (f->ident & PC_IDENT_FSID) {
		if ((rc = get_varint(r, &v)) < 0)
			return rc;
		f->fsid = unzz(v, r->prev_fsid);
		if (!f->fsid)
			return bad(r, "filesystem id 0 given as known");
	}
	return 0;
}

/* Versions 1 to 3: a record's fields one after another, up to its runs. */
static int get_row(struct pc_profile_reader *r, struct pc_profile_file *f, char *path)
{
	uint64_t v;
	int rc;

	if ((rc = get_string(r, path, PATH_MAX_LEN + 1)) < 0)
		return rc;
	if (!path_ok(path))
		return bad(r, "unsafe path '%s' (absolute, empty, '.' or '..')", path);
	r->path = path;
	if ((rc = get_varint(r, &f->size)) < 0)
		return rc;
	if (f->size > (1ull << 62))
		return bad(r, "file size out of range");
	if ((rc = get_varint(r, &v)) < 0)
		return rc;
	f->mtime_s = (int64_t)unzz(v, r->prev_mtime);
	if ((rc = get_varint(r, &v)) < 0)
		return rc;
	if (v >= 1000000000)
		return bad(r, "mtime nanoseconds out of range");
	f->mtime_ns = (uint32_t)v;
	if ((rc = get_varint(r, &f->dev)) < 0 || (rc = get_varint(r, &f->ino)) < 0 ||
	    (rc = get_varint(r, &f->gen)) < 0)
		return rc;
	f->dev = unzz(f->dev, r->prev_dev);
	f->ino = unzz(f->ino, r->prev_ino);
	if (r->version == 1) {
		/* no field says whether gen was known: 0 is what a failed ioctl left */
		if (f->gen > UINT32_MAX)
			return bad(r, "inode generation out of range");
		f->ident = f->gen ? PC_IDENT_GEN : 0;
		return 0;
	}
	return get_identity(r, f);
}

/*
 * Version 4: a record's fields from their columns, up to its active runs
 * (docs/snapshot-format.md). The path is what it shares with the
 * previous one and the rest; paths are counted whole against BOMB_RATIO,
 * so a small file of long, alike paths stands for no more than before.
 */
static int get_cols(struct pc_profile_reader *r, struct pc_profile_file *f, char *path,
		    uint64_t *ret_pages)
{
	uint64_t pre, n, v, pages;
	int rc;

	use_col(r, COL_PATH);
	if ((rc = get_varint(r, &pre)) < 0 || (rc = get_varint(r, &n)) < 0)
		return rc;
	if (pre > r->prev_len || n == 0 || n > PATH_MAX_LEN - pre || n > r->end - r->pos)
		return bad(r, "path length out of range (%llu shared, %llu more)",
			   (unsigned long long)pre, (unsigned long long)n);
	memcpy(path, r->prev_path, pre);
	memcpy(path + pre, r->raw + r->pos, n);
	path[pre + n] = 0;
	r->pos += n;
	if (strlen(path) != pre + n)
		return bad(r, "NUL inside a path");
	memcpy(r->prev_path, path, pre + n + 1);
	r->prev_len = pre + n;
	r->raw_total += pre;
	if ((rc = bomb_check(r)) < 0)
		return rc;
	if (!path_ok(path))
		return bad(r, "unsafe path '%s' (absolute, empty, '.' or '..')", path);
	r->path = path;
	use_col(r, COL_FLAGS);
	if ((rc = get_varint(r, &v)) < 0)
		return rc;
	if (v & ~(uint64_t)(IDENT_ALL | REC_V3 | REC_WHOLE | (r->version >= 5 ? PC_IDENT_DIR : 0) |
			    (r->version >= 6 ? PC_IDENT_LAYER : 0)))
		return bad(r, "unknown record flags %#llx", (unsigned long long)v);
	f->ident = (uint32_t)v;
	if (f->ident & PC_IDENT_LAYER) {
		/* its digest: an index into the section's LAYERS */
		if ((rc = get_varint(r, &v)) < 0)
			return rc;
		if (v >= r->nltab)
			return bad(r, "layer index %llu out of range (%zu digests)",
				   (unsigned long long)v, r->nltab);
		memcpy(f->layer, r->ltab[v], sizeof(f->layer));
	}
	use_col(r, COL_SIZE);
	if ((rc = get_varint(r, &f->size)) < 0)
		return rc;
	if (f->size > (1ull << 62))
		return bad(r, "file size out of range");
	use_col(r, COL_MTIME);
	if ((rc = get_varint(r, &v)) < 0)
		return rc;
	f->mtime_s = (int64_t)unzz(v, r->prev_mtime);
	if ((rc = get_varint(r, &v)) < 0)
		return rc;
	v = unzz(v, r->prev_ns);
	if (v >= 1000000000)
		return bad(r, "mtime nanoseconds out of range");
	f->mtime_ns = (uint32_t)v;
	use_col(r, COL_DEV);
	if ((rc = get_varint(r, &v)) < 0)
		return rc;
	f->dev = unzz(v, r->prev_dev);
	use_col(r, COL_INO);
	if ((rc = get_varint(r, &v)) < 0)
		return rc;
	f->ino = unzz(v, r->prev_ino);
	if (f->ident & PC_IDENT_GEN) {
		use_col(r, COL_GEN);
		if (r->end - r->pos < 4)
			return bad(r, "record runs past the end of the %s column", col_name[COL_GEN]);
		f->gen = get_u32(r->raw + r->pos);
		r->pos += 4;
	}
	if (f->ident & PC_IDENT_BTIME) {
		use_col(r, COL_BTIME);
		if ((rc = get_varint(r, &v)) < 0)
			return rc;
		f->btime_s = (int64_t)unzz(v, (uint64_t)f->mtime_s);
		if ((rc = get_varint(r, &v)) < 0)
			return rc;
		v = unzz(v, f->mtime_ns);
		if (v >= 1000000000)
			return bad(r, "birth time nanoseconds out of range");
		f->btime_ns = (uint32_t)v;
	}
	if (f->ident & PC_IDENT_FSID) {
		use_col(r, COL_FSID);
		if ((rc = get_varint(r, &v)) < 0)
			return rc;
		f->fsid = unzz(v, r->prev_fsid);
		if (!f->fsid)
			return bad(r, "filesystem id 0 given as known");
	}
	pages = (f->size + r->meta.page_size - 1) / r->meta.page_size;
	if (f->ident & REC_WHOLE) {
		f->ident &= ~REC_WHOLE;
		if (!pages)
			return bad(r, "an empty file cached whole");
		f->runs = malloc(2 * sizeof(*f->runs));
		if (!f->runs)
			return -ENOMEM;
		f->runs[0] = 0;
		f->runs[1] = pages;
		f->nruns = 1;
	} else {
		use_col(r, COL_RUNS);
		if ((rc = get_runs(r, pages, &f->runs, &f->nruns)) < 0)
			return rc;
	}
	use_col(r, COL_ACTIVE);
	if ((rc = get_runs(r, pages, &f->active, &f->nactive)) < 0)
		return rc;
	*ret_pages = pages;
	return 0;
}

static int next_record(struct pc_profile_reader *r, struct pc_profile_file *ret)
{
	struct pc_profile_file f = { 0 };
	char path[PATH_MAX_LEN + 1];
	uint64_t pages = 0;
	int rc;

	if (r->ended)
		return 0;
	while (r->version >= 4 ? r->left == 0 : r->pos >= r->end) {
		uint32_t type;

		rc = load_section(r, &type);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return bad(r, "truncated: no END section");
		if (type == SECT_META)
			return bad(r, "a second META section");
		if (type == SECT_END) {
			uint64_t nf, nr;
			uint8_t extra;

			if (get_varint(r, &nf) < 0 || get_varint(r, &nr) < 0)
				return -EBADMSG;
			if (nf != r->nfiles || nr != r->nruns)
				return bad(r, "END counts (%llu files) do not match the file (%llu)",
					   (unsigned long long)nf, (unsigned long long)r->nfiles);
			if (read_exact(r, &extra, 1) != 0)
				return bad(r, "data after the END section");
			if (r->ltab_next)
				return bad(r, "a LAYERS section with no FILES section after it");
			r->ended = true;
			return 0;
		}
		if (type == SECT_LAYERS) {
			if ((rc = load_layers(r)) < 0)
				return rc;
			r->left = 0;
			continue;
		}
		/* a FILES section: the digests read just before it are its own, else none */
		if (!r->ltab_next)
			r->nltab = 0;
		r->ltab_next = false;
		if (r->version >= 4 && (rc = load_columns(r)) < 0)
			return rc;
	}
	if (r->version >= 4) {
		rc = get_cols(r, &f, path, &pages);
	} else {
		rc = get_row(r, &f, path);
		pages = (f.size + r->meta.page_size - 1) / r->meta.page_size;
		if (rc == 0)
			rc = get_runs(r, pages, &f.runs, &f.nruns);
		if (rc == 0)
			rc = get_runs(r, pages, &f.active, &f.nactive);
	}
	if (rc == 0 && (f.ident & REC_USED)) {
		f.ident &= ~REC_USED;	/* the file's nused says it */
		if (r->version >= 4)
			use_col(r, COL_USED);
		rc = get_used(r, pages, &f, path);
	}
	if (rc == 0 && (f.ident & PC_IDENT_BDEV) && !pc_profile_bdev_name_ok(path))
		rc = bad(r, "block device name '%s' is not one safe component", path);
	/* a directory has a place and an identity, nothing cached */
	if (rc == 0 && (f.ident & PC_IDENT_DIR) && (f.ident & PC_IDENT_BDEV))
		rc = bad(r, "'%s' is both a directory and a block device", path);
	if (rc == 0 && (f.ident & PC_IDENT_DIR) && (f.size || f.nruns || f.nactive || f.nused))
		rc = bad(r, "directory '%s' has a size or pages", path);
	if (rc == 0 && (f.ident & PC_IDENT_LAYER) && (f.ident & (PC_IDENT_DIR | PC_IDENT_BDEV)))
		rc = bad(r, "'%s' has a layer digest but is not a file", path);
	if (rc == 0 && !runs_cover(f.runs, f.nruns, f.active, f.nactive))
		rc = bad(r, "active pages of '%s' that are not cached", path);
	if (rc == 0 && r->version >= 4 && --r->left == 0)
		rc = columns_done(r);
	if (rc == 0) {
		/* a device's name and a file's path are of two kinds: "loop0" may be both */
		rc = pathset_add(&r->paths, path, f.ident & PC_IDENT_BDEV);
		if (rc == -EEXIST)
			rc = bad(r, "'%s' is listed twice", path);
	}
	if (rc == 0 && !(f.path = strdup(path)))
		rc = -ENOMEM;
	if (rc < 0) {
		pc_profile_file_release(&f);
		return rc;
	}
	r->nfiles++;
	r->nruns += f.nruns;
	r->prev_mtime = (uint64_t)f.mtime_s;
	r->prev_ns = f.mtime_ns;
	r->prev_dev = f.dev;
	r->prev_ino = f.ino;
	if (f.ident & PC_IDENT_FSID)
		r->prev_fsid = f.fsid;
	*ret = f;
	return 1;
}

int pc_profile_next(struct pc_profile_reader *r, struct pc_profile_file *ret)
{
	int rc = next_record(r, ret);

	r->path = NULL;	/* it was next_record's */
	return rc;
}

void pc_profile_close(struct pc_profile_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->raw);
	free(r->comp);
	free(r->ltab);
	free(r->paths.slot);
	free(r);
}
