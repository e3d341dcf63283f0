/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * layers.c: the image layer a container's file comes from, by its digest.
 *
 * A container's root is an overlay of its image's layers (read-only, the
 * lower directories) and its own (the upper). A layer's digest is the
 * sha256 of its uncompressed tar (containers/storage's "diff-digest",
 * docker's diff ID, the image config's rootfs.diff_ids): the same layer
 * has the same digest on every host, so a snapshot taken on one node can
 * say which layer each file was in, and a restore on another can tell the
 * same file from another of the same path (docs/snapshot-format.md).
 * overlay.c finds the layer a file's data comes from (pc_fd_layer); this
 * file maps the layer's directory to its digest:
 *   - containers/storage (podman, CRI-O, buildah): lower directories are
 *     GRAPHROOT/overlay/l/SHORT (a link to ../ID/diff) or
 *     GRAPHROOT/overlay/ID/diff; GRAPHROOT/overlay-layers/layers.json (an
 *     array of {"id", "diff-digest", ...}) has the digest;
 *   - docker's overlay2: ROOT/overlay2/l/SHORT or ROOT/overlay2/CACHEID/diff;
 *     ROOT/image/overlay2/layerdb/sha256/CHAIN/cache-id names CACHEID, and
 *     the diff file beside it holds the digest;
 *   - containerd keeps its snapshots' parents in a bolt database
 *     (metadata.db), which is not read: unknown.
 * These files decide what a restore takes for the same file, so they are
 * hostile unless root's (or the caller's own): each is opened beneath its
 * directory without following a link, must be a regular file (directories
 * along the way: directories) owned by root or the caller and not
 * writable by group or others, and of a bounded size. Anything else,
 * like any layout not known, is "unknown", never an error: a snapshot
 * records no digest, a restore falls back on its other rules.
 *
 * Lookups are cached for the process: a layer directory (by its name and
 * inode) has one digest for as long as it exists (layers are
 * content-addressed and never change); layers.json and docker's layer
 * database are read again when their file or directory changed.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "json.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LAYERS_JSON_MAX (16u << 20)	/* thousands of layers take a few MiB */
#define SMALL_MAX 512			/* docker's cache-id and diff files */
#define ID_MAX 128
#define CACHE_MAX 4096			/* layer directories remembered */
#define DB_MAX 100000			/* layers of one store */

enum store { STORE_CS, STORE_DOCKER };

/* one store's layers: ID (containers/storage) or cache ID (docker) -> digest */
struct table {
	char *root;
	enum store kind;
	dev_t dev;			/* what it was read from (layers.json, the sha256 dir) */
	ino_t ino;
	off_t size;
	struct timespec mtime;
	char **ids;
	uint8_t (*digests)[32];
	size_t n, cap;
	struct table *next;
};

struct layer_ent {
	char *dir;
	dev_t dev;
	ino_t ino;
	int known;			/* PC_LAYER_KNOWN or PC_LAYER_UNKNOWN */
	uint8_t digest[32];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct table *tables;
static struct layer_ent *ents;
static size_t nents, capents;

bool pc_layer_digest_parse(const char *s, size_t len, uint8_t digest[32])
{
	if (len != 7 + 64 || strncmp(s, "sha256:", 7))
		return false;
	for (size_t i = 0; i < 64; i++) {
		char c = s[7 + i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (v < 0)
			return false;	/* OCI: lowercase hex only */
		if (i % 2 == 0)
			digest[i / 2] = (uint8_t)(v << 4);
		else
			digest[i / 2] |= (uint8_t)v;
	}
	return true;
}

void pc_profile_layer_text(const uint8_t digest[32], unsigned chars, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	char buf[7 + 64 + 1] = "sha256:";

	if (chars > 64)
		chars = 64;
	for (unsigned i = 0; i < chars; i++)
		buf[7 + i] = hex[i % 2 ? digest[i / 2] & 15 : digest[i / 2] >> 4];
	buf[7 + chars] = 0;
	snprintf(out, outlen, "%s", buf);
}

/* a layer ID, cache ID or short name: one plain component */
static bool id_ok(const char *s, size_t len)
{
	if (len == 0 || len > ID_MAX || s[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

/* what may decide a restore: root's or the caller's own, and nobody else may write it */
static bool trusted(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* name in dfd, no link followed: a trusted directory or regular file; an fd or -errno */
static int open_checked(int dfd, const char *name, bool dir, struct stat *st)
{
	int fd = openat(dfd, name,
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (dir ? O_DIRECTORY : O_NONBLOCK | O_NOCTTY));

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0 || (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode)) ||
	    !trusted(st)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* a checked file's contents (at most max bytes; more: -EFBIG), NUL-terminated, malloc'd */
static int read_checked(int dfd, const char *name, size_t max, char **ret, size_t *ret_len)
{
	struct stat st;
	int fd = open_checked(dfd, name, false, &st);
	size_t len = 0;
	char *buf;

	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > max || !(buf = malloc((size_t)st.st_size + 2))) {
		close(fd);
		return (uint64_t)st.st_size > max ? -EFBIG : -ENOMEM;
	}
	/* to the size fstat said, and one byte more: a file that grew is not read */
	while (len < (size_t)st.st_size + 1) {
		long n = pc_sys_pread(fd, buf + len, (size_t)st.st_size + 1 - len, (off_t)len);

		if (n < 0) {
			free(buf);
			close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len != (size_t)st.st_size) {
		free(buf);
		return -ESTALE;
	}
	buf[len] = 0;
	*ret = buf;
	*ret_len = len;
	return 0;
}

static void table_clear(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->ids[i]);
	free(t->ids);
	free(t->digests);
	t->ids = NULL;
	t->digests = NULL;
	t->n = t->cap = 0;
}

static int table_add(struct table *t, const char *id, size_t len, const uint8_t digest[32])
{
	if (t->n >= DB_MAX)
		return -E2BIG;
	if (t->n == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 64;
		char **ni = realloc(t->ids, nc * sizeof(*ni));
		uint8_t(*nd)[32];

		if (!ni)
			return -ENOMEM;
		t->ids = ni;
		nd = realloc(t->digests, nc * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		t->digests = nd;
		t->cap = nc;
	}
	if (!(t->ids[t->n] = strndup(id, len)))
		return -ENOMEM;
	memcpy(t->digests[t->n], digest, 32);
	t->n++;
	return 0;
}

static bool table_find(const struct table *t, const char *id, uint8_t digest[32])
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->ids[i], id)) {
			memcpy(digest, t->digests[i], 32);
			return true;
		}
	return false;
}

/* the store at root of this kind, as read from what st describes; read again if it changed */
static struct table *table_get(const char *root, enum store kind, const struct stat *st, bool *fresh)
{
	struct table *t;

	for (t = tables; t; t = t->next)
		if (t->kind == kind && !strcmp(t->root, root))
			break;
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || !(t->root = strdup(root))) {
			free(t);
			return NULL;
		}
		t->kind = kind;
		t->next = tables;
		tables = t;
	} else if (t->dev == st->st_dev && t->ino == st->st_ino && t->size == st->st_size &&
		   t->mtime.tv_sec == st->st_mtim.tv_sec && t->mtime.tv_nsec == st->st_mtim.tv_nsec) {
		*fresh = false;
		return t;
	}
	table_clear(t);
	t->dev = st->st_dev;
	t->ino = st->st_ino;
	t->size = st->st_size;
	t->mtime = st->st_mtim;
	*fresh = true;
	return t;
}

/* containers/storage: layers.json's "diff-digest" of layer `id` */
static int cs_digest(int rootfd, const char *root, const char *id, uint8_t digest[32])
{
	struct pc_json_opts jo = { .max_bytes = LAYERS_JSON_MAX };
	struct pc_json *doc = NULL;
	struct table *t;
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	bool fresh;
	int dfd = open_checked(rootfd, "overlay-layers", true, &st), fd, rc;

	if (dfd < 0)
		return PC_LAYER_UNKNOWN;
	fd = open_checked(dfd, "layers.json", false, &st);
	if (fd < 0 || (uint64_t)st.st_size > LAYERS_JSON_MAX) {
		if (fd >= 0)
			close(fd);
		close(dfd);
		return PC_LAYER_UNKNOWN;
	}
	close(fd);
	t = table_get(root, STORE_CS, &st, &fresh);
	if (t && fresh) {
		rc = read_checked(dfd, "layers.json", LAYERS_JSON_MAX, &text, &len);
		if (rc == 0 && pc_json_parse(text, len, &jo, &doc, NULL) == 0 &&
		    pc_json_type(doc) == PC_JSON_ARRAY) {
			for (size_t i = 0; i < pc_json_count(doc); i++) {
				const struct pc_json *l = pc_json_at(doc, i);
				size_t il, dl;
				const char *lid = pc_json_string(pc_json_get(l, "id"), &il);
				const char *dd = pc_json_string(pc_json_get(l, "diff-digest"), &dl);
				uint8_t d[32];

				if (lid && dd && id_ok(lid, il) && strlen(lid) == il &&
				    pc_layer_digest_parse(dd, dl, d) && table_add(t, lid, il, d) < 0)
					break;
			}
		}
		pc_json_free(doc);
		free(text);
	}
	close(dfd);
	return t && table_find(t, id, digest) ? PC_LAYER_KNOWN : PC_LAYER_UNKNOWN;
}

/* docker: the layer database's entry whose cache-id is `id`, its diff */
static int docker_digest(int rootfd, const char *root, const char *id, uint8_t digest[32])
{
	static const char *const path[] = { "image", "overlay2", "layerdb", "sha256" };
	struct table *t;
	struct stat st;
	bool fresh;
	int dfd = rootfd;

	for (size_t i = 0; i < sizeof(path) / sizeof(path[0]); i++) {
		int nfd = open_checked(dfd, path[i], true, &st);

		if (dfd != rootfd)
			close(dfd);
		if (nfd < 0)
			return PC_LAYER_UNKNOWN;
		dfd = nfd;
	}
	t = table_get(root, STORE_DOCKER, &st, &fresh);
	if (t && fresh) {
		int sfd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
		DIR *d = sfd >= 0 ? fdopendir(sfd) : NULL;
		struct dirent *de;

		if (!d && sfd >= 0)
			close(sfd);
		while (d && (de = readdir(d))) {
			char *cid = NULL, *diff = NULL;
			size_t cl = 0, dl = 0;
			uint8_t dg[32];
			int cfd;

			if (!id_ok(de->d_name, strlen(de->d_name)))
				continue;
			cfd = open_checked(dfd, de->d_name, true, &st);
			if (cfd < 0)
				continue;
			if (read_checked(cfd, "cache-id", SMALL_MAX, &cid, &cl) == 0 &&
			    read_checked(cfd, "diff", SMALL_MAX, &diff, &dl) == 0) {
				while (cl && (cid[cl - 1] == '\n' || cid[cl - 1] == ' '))
					cid[--cl] = 0;
				while (dl && (diff[dl - 1] == '\n' || diff[dl - 1] == ' '))
					diff[--dl] = 0;
				if (id_ok(cid, cl) && strlen(cid) == cl &&
				    pc_layer_digest_parse(diff, dl, dg) && table_add(t, cid, cl, dg) < 0)
					cfd = -cfd - 1;	/* full: stop */
			}
			free(cid);
			free(diff);
			if (cfd < 0)
				break;
			close(cfd);
		}
		if (d)
			closedir(d);
	}
	close(dfd);
	return t && table_find(t, id, digest) ? PC_LAYER_KNOWN : PC_LAYER_UNKNOWN;
}

/*
 * The layer directory `dir` (as the mount names it) in a store we know:
 * its store's root, kind and layer ID, checked to be the very directory
 * (dev, ino: st) the store's ID/diff is.
 */
static int layer_digest(const char *dir, const struct stat *lst, uint8_t digest[32])
{
	char *copy = strdup(dir), *comp[3] = { 0 }, *root, *id = NULL, link[ID_MAX + 16];
	const char *drv;
	enum store kind;
	struct stat st;
	int rootfd = -1, drvfd = -1, fd, rc = PC_LAYER_UNKNOWN;

	if (!copy)
		return PC_LAYER_UNKNOWN;
	/* the last three components: DRIVER/ID/diff or DRIVER/l/SHORT */
	for (size_t l = strlen(copy); l > 1 && copy[l - 1] == '/'; l--)
		copy[l - 1] = 0;
	for (int i = 2; i >= 0; i--) {
		char *s = strrchr(copy, '/');

		if (!s || !s[1])
			goto out;
		comp[i] = s + 1;
		*s = 0;
	}
	root = *copy ? copy : "/";
	drv = comp[0];
	if (!strcmp(drv, "overlay"))
		kind = STORE_CS;
	else if (!strcmp(drv, "overlay2"))
		kind = STORE_DOCKER;
	else
		goto out;
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || (drvfd = open_checked(rootfd, drv, true, &st)) < 0)
		goto out;
	if (!strcmp(comp[2], "diff") && id_ok(comp[1], strlen(comp[1]))) {
		id = comp[1];
	} else if (!strcmp(comp[1], "l") && id_ok(comp[2], strlen(comp[2]))) {
		/* l/SHORT -> ../ID/diff, a link of the store's own */
		int lfd = open_checked(drvfd, "l", true, &st);
		ssize_t n = -1;

		if (lfd >= 0 && fstatat(lfd, comp[2], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode) && (st.st_uid == 0 || st.st_uid == geteuid()))
			n = readlinkat(lfd, comp[2], link, sizeof(link) - 1);
		if (lfd >= 0)
			close(lfd);
		if (n < 9 || (size_t)n >= sizeof(link) - 1)
			goto out;
		link[n] = 0;
		if (strncmp(link, "../", 3) || strcmp(link + n - 5, "/diff"))
			goto out;
		link[n - 5] = 0;
		if (!id_ok(link + 3, strlen(link + 3)))
			goto out;
		id = link + 3;
	} else {
		goto out;
	}
	/* the mount's layer is that ID's diff, whatever name led to it */
	fd = open_checked(drvfd, id, true, &st);
	if (fd < 0)
		goto out;
	if (fstatat(fd, "diff", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_dev != lst->st_dev || st.st_ino != lst->st_ino) {
		close(fd);
		goto out;
	}
	close(fd);
	rc = kind == STORE_CS ? cs_digest(rootfd, root, id, digest)
			      : docker_digest(rootfd, root, id, digest);
out:
	if (drvfd >= 0)
		close(drvfd);
	if (rootfd >= 0)
		close(rootfd);
	free(copy);
	return rc;
}

int pc_layer_dir_digest(const char *dir, uint8_t digest[32])
{
	struct stat st;
	int rc;

	/* the layer as the kernel took it at the mount (links followed) */
	if (!dir || dir[0] != '/' || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return PC_LAYER_UNKNOWN;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nents; i++)
		if (ents[i].dev == st.st_dev && ents[i].ino == st.st_ino && !strcmp(ents[i].dir, dir)) {
			rc = ents[i].known;
			memcpy(digest, ents[i].digest, 32);
			pthread_mutex_unlock(&lock);
			return rc;
		}
	rc = layer_digest(dir, &st, digest);
	if (nents < CACHE_MAX && pc_grow(&ents, &capents, nents, sizeof(*ents)) == 0 &&
	    (ents[nents].dir = strdup(dir))) {
		ents[nents].dev = st.st_dev;
		ents[nents].ino = st.st_ino;
		ents[nents].known = rc;
		if (rc == PC_LAYER_KNOWN)
			memcpy(ents[nents].digest, digest, 32);
		else
			memset(ents[nents].digest, 0, 32);
		nents++;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

int pc_fd_layer_digest(int fd, uint8_t digest[32])
{
	char *dir = NULL;
	bool upper = false;
	int rc;

	if (pc_fd_layer(fd, &dir, &upper) < 0)
		return PC_LAYER_UNKNOWN;
	rc = upper ? PC_LAYER_UPPER : pc_layer_dir_digest(dir, digest);
	free(dir);
	return rc;
}
