/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * overlay.c: the real file behind an overlayfs file.
 *   1. mountinfo lines: escapes, both lowerdir forms, data-only layers,
 *      optional fields, other filesystems, other mounts;
 *   2. the lookup through the layers, on plain directories shaped like an
 *      overlay's (no mount needed): upper before lowers, whiteouts (device
 *      and xattr), opaque directories, files hiding directories, metacopy,
 *      redirects, links never followed, sizes checked;
 *   3. a real overlay mount (root): residency through it is the real file's,
 *      before and after a copy-up, and an evict through it is counted.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "../../lib/internal.h"
#include "tap.h"

#include <linux/capability.h>

#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

/* cachestat where the kernel has it (6.5), else mincore */
static enum pc_source want_src;
static char T[256];

static void put(const char *rel, const char *data)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data))
		perror(p);
	close(fd);
}

static void dir(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		perror(p);
}

static int xset(const char *rel, const char *key, const char *val)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	return lsetxattr(p, key, val, strlen(val), 0);
}

static ino_t ino(const char *rel)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	return lstat(p, &st) == 0 ? st.st_ino : 0;
}

/* A mount of the layers named in `opts`, at `point`, root `root`. */
static struct ovl_mount *mnt(const char *point, const char *root, const char *opts)
{
	char line[4096];
	struct ovl_mount *m = NULL;
	int rc;

	snprintf(line, sizeof(line), "77 26 0:99 %s %s rw,relatime shared:3 - overlay overlay %s\n",
		 root, point, opts);
	rc = pc_ovl_parse_mountinfo_line(line, 77, &m);
	return rc == 1 ? m : NULL;
}


/*
 * Look up `path` as the overlay file of inode `oino` would be (0: no
 * identity check, as for the plain layer trees): the real file's inode, or
 * -errno.
 */
static long look_id(const struct ovl_mount *m, const char *path, uint64_t size, ino_t oino)
{
	struct stat ost = { .st_ino = oino, .st_size = (off_t)size };
	int fd = pc_ovl_lookup_in(m, path, size, oino ? &ost : NULL);
	struct stat st;
	long r;

	if (fd < 0)
		return fd;
	r = fstat(fd, &st) == 0 ? (long)st.st_ino : -errno;
	close(fd);
	return r;
}

static long look(const struct ovl_mount *m, const char *path, uint64_t size)
{
	return look_id(m, path, size, 0);
}

static void parse_lines(void)
{
	char line[512];
	struct ovl_mount *m = NULL;
	int rc;

	strcpy(line, "77 26 0:99 / /m rw - ext4 /dev/sda1 rw\n");
	ok(pc_ovl_parse_mountinfo_line(line, 77, &m) == -EXDEV, "not an overlay: -EXDEV");
	strcpy(line, "78 26 0:99 / /m rw - overlay overlay rw,lowerdir=/a\n");
	ok(pc_ovl_parse_mountinfo_line(line, 77, &m) == 0, "another mount's line: 0");
	strcpy(line, "77 26 0:99 / /m rw\n");
	ok(pc_ovl_parse_mountinfo_line(line, 77, &m) < 0, "a line cut short: an error");
	strcpy(line, "77 26 0:99 / /m rw - overlay overlay rw,workdir=/w\n");
	ok(pc_ovl_parse_mountinfo_line(line, 77, &m) == -ENOENT, "no layer at all: -ENOENT");
	strcpy(line, "77 26 0:99 / /m rw - overlay overlay rw,lowerdir=/a:/b\n");
	rc = pc_ovl_parse_mountinfo_line(line, 77, &m);
	ok(rc == 1 && m, "no optional fields: parsed");
	pc_ovl_mount_free(m);
}

static void layers(void)
{
	char opts[2048], p[512];
	struct ovl_mount *m;
	long l1x, l2y;
	/* Without CAP_SYS_ADMIN trusted.overlay.* cannot be read, and lookups
	 * on such a mount are -EPERM by design: the same layers, as a
	 * userxattr mount (user.overlay.*), which we may read. */
	const char *ux = pc_have_cap(CAP_SYS_ADMIN) ? "" : ",userxattr";

	/* layers with a space, a colon and a comma in their names */
	dir("u");
	dir("l1 sp:c,o");
	dir("l2");
	dir("data");
	put("u/top", "upper\n");
	put("l1 sp:c,o/top", "lower\n");
	put("l1 sp:c,o/x", "l1\n");
	put("l2/x", "l2\n");
	put("l2/y", "y2\n");
	put("data/onlydata", "d\n");
	l1x = (long)ino("l1 sp:c,o/x");
	l2y = (long)ino("l2/y");
	/* mountinfo escapes: space \040, backslash \134, comma \054 */
	snprintf(opts, sizeof(opts),
		 "rw,lowerdir=%s/l1\\040sp\\134:c\\134\\054o:%s/l2::%s/data,upperdir=%s/u,workdir=%s/w%s",
		 T, T, T, T, T, ux);
	if (*ux)
		printf("# no CAP_SYS_ADMIN: layer lookups on a userxattr mount\n");
	m = mnt("/m", "/", opts);
	ok(m != NULL, "lowerdir= list with escapes: parsed");
	if (!m)
		return;
	ok(look(m, "/m/top", 6) == (long)ino("u/top"), "upper before the lowers");
	ok(look(m, "/m/x", 3) == l1x, "first lower before the second (its name unescaped)");
	ok(look(m, "/m/y", 3) == l2y, "second lower");
	ok(look(m, "/m/onlydata", 2) == -ENOENT, "data-only layers hold no names");
	ok(look(m, "/m/top", 7) == -ESTALE, "a size other than the overlay's: -ESTALE");
	ok(look(m, "/m/none", 0) == -ENOENT, "in no layer: -ENOENT");
	ok(look(m, "/elsewhere/x", 3) == -EXDEV, "a path outside the mount point: -EXDEV");
	ok(look(m, "/m/../m/x", 3) == -EINVAL, "'..' in the path: -EINVAL");
	ok(look(m, "/mx", 3) == -EXDEV, "a mount point prefix of another name is not it");

	/* a file that hides a lower directory; a link is never followed */
	put("u/hid", "f\n");
	dir("l2/hid");
	put("l2/hid/z", "z\n");
	ok(look(m, "/m/hid/z", 2) == -ENOENT, "a file in the upper hides a lower directory");
	snprintf(p, sizeof(p), "%s/l2", T);
	if (symlinkat(p, AT_FDCWD, (snprintf(p, sizeof(p), "%s/u/ln", T), p)) == 0) {
		dir("l1 sp:c,o/ln");
		put("l1 sp:c,o/ln/x", "lx\n");
		ok(look(m, "/m/ln/x", 3) == -ENOENT, "a link in the upper is not followed (it hides)");
	}
	snprintf(p, sizeof(p), "%s/u/lf", T);
	if (symlink("/etc/passwd", p) == 0)
		ok(look(m, "/m/lf", 3) == -ESTALE, "a link where the file should be: -ESTALE");
	/* a merged directory */
	dir("u/d");
	dir("l1 sp:c,o/d");
	dir("l2/d");
	put("l2/d/deep", "deep\n");
	put("u/d/up", "up\n");
	ok(look(m, "/m/d/deep", 5) == (long)ino("l2/d/deep"), "through a merged directory");
	ok(look(m, "/m/d/up", 3) == (long)ino("u/d/up"), "and the upper's own file in it");
	/* a copy-up while the directory's layers are remembered */
	dir("l2/cu");
	put("l2/cu/f", "old\n");
	put("l2/cu/g", "old\n");
	ok(look(m, "/m/cu/f", 4) == (long)ino("l2/cu/f"), "a directory only in a lower");
	dir("u/cu");
	put("u/cu/f", "new\n");
	ok(look(m, "/m/cu/f", 4) == (long)ino("u/cu/f"),
	   "copied up since the last lookup in that directory: the upper file");
	ok(look(m, "/m/cu/g", 4) == (long)ino("l2/cu/g"), "and its other files still the lower's");
	/* the file found must be the one the overlay shows */
	ok(look_id(m, "/m/y", 3, (ino_t)l2y) == l2y, "identity: the overlay's inode number is the real one's");
	ok(look_id(m, "/m/y", 3, (ino_t)l2y + 1) == -ESTALE,
	   "another inode number (a layer path pointed elsewhere, a stale name): -ESTALE");
	put("l1 sp:c,o/cp", "cp\n");
	put("u/cp", "cp\n");
	ok(look_id(m, "/m/cp", 3, ino("l1 sp:c,o/cp")) == (long)ino("u/cp"),
	   "a copy-up shows its origin's number: the lower file of that name has it");
	ok(look_id(m, "/m/top", 6, ino("u/d/up")) == -ESTALE, "an upper file with neither number: -ESTALE");
	/* a FIFO or device where the file was: looked at, never opened */
	snprintf(p, sizeof(p), "%s/u/fifo", T);
	if (mkfifo(p, 0644) == 0) {
		int in = inotify_init1(IN_NONBLOCK), wd = in >= 0 ? inotify_add_watch(in, p, IN_OPEN) : -1;
		char ev[256];

		ok(look(m, "/m/fifo", 0) == -ESTALE, "a FIFO where the file is: -ESTALE");
		ok(wd >= 0 && read(in, ev, sizeof(ev)) < 0 && errno == EAGAIN, "and it was never opened");
		if (in >= 0)
			close(in);
	}
	pc_ovl_mount_free(m);

	/* the fsconfig form, and a bind mount of a subdirectory */
	snprintf(opts, sizeof(opts), "rw,lowerdir+=%s/l1\\040sp:c\\054o,lowerdir+=%s/l2,datadir+=%s/data%s",
		 T, T, T, ux);
	m = mnt("/b", "/d", opts);
	ok(m != NULL, "lowerdir+= form: parsed");
	if (m) {
		ok(look(m, "/b/deep", 5) == (long)ino("l2/d/deep"),
		   "a mount of a subdirectory: its root prefixes the path");
		ok(look(m, "/b/up", 3) == -ENOENT, "no upper in this one");
		pc_ovl_mount_free(m);
	}
	m = mnt("/m", "/", "rw,lowerdir=l/ABC:l/DEF");
	ok(m && look(m, "/m/x", 3) == -ENOTDIR, "layers by relative paths: -ENOTDIR, never guessed");
	pc_ovl_mount_free(m);
}

static void xattrs(void)
{
	char opts[2048], p[512];
	struct ovl_mount *m, *mu;

	if (!pc_have_cap(CAP_SYS_ADMIN)) {
		skip("needs CAP_SYS_ADMIN: trusted.* xattrs", "whiteouts, opaque, metacopy");
		return;
	}
	dir("xu");
	dir("xl");
	snprintf(opts, sizeof(opts), "rw,lowerdir=%s/xl,upperdir=%s/xu,workdir=%s/w,metacopy=on", T, T, T);
	m = mnt("/m", "/", opts);
	snprintf(opts, sizeof(opts), "rw,lowerdir=%s/xl,upperdir=%s/xu,workdir=%s/w,userxattr", T, T, T);
	mu = mnt("/m", "/", opts);
	if (!m || !mu)
		return;
	put("xl/gone", "g\n");
	snprintf(p, sizeof(p), "%s/xu/gone", T);
	if (mknod(p, S_IFCHR | 0600, makedev(0, 0)) == 0)
		ok(look(m, "/m/gone", 2) == -ENOENT, "a whiteout (0:0 device) hides the lower file");
	else if (errno == EPERM)	/* no CAP_MKNOD, or this test dir is on an overlay */
		skip("mknod of a 0:0 device refused (EPERM: no CAP_MKNOD, or the test dir is on "
		     "an overlay)", "a whiteout device hides the lower file");
	else
		ok(0, "make a 0:0 device (%s)", strerror(errno));
	put("xl/gone2", "g\n");
	put("xu/gone2", "");
	ok(xset("xu/gone2", "trusted.overlay.whiteout", "") == 0, "made an xattr whiteout");
	ok(look(m, "/m/gone2", 2) == -ENOENT, "an empty file with overlay.whiteout hides too");
	dir("xu/op");
	dir("xl/op");
	put("xl/op/below", "b\n");
	put("xu/op/above", "a\n");
	xset("xu/op", "trusted.overlay.opaque", "y");
	ok(look(m, "/m/op/below", 2) == -ENOENT, "an opaque directory hides the lowers");
	ok(look(m, "/m/op/above", 2) == (long)ino("xu/op/above"), "but not its own files");
	ok(look(mu, "/m/op/below", 2) == (long)ino("xl/op/below"),
	   "userxattr mount: trusted.* opacity is not its own");
	dir("xu/uop");
	dir("xl/uop");
	put("xl/uop/below", "b\n");
	xset("xu/uop", "user.overlay.opaque", "y");
	ok(look(mu, "/m/uop/below", 2) == -ENOENT, "userxattr mount: user.overlay.opaque hides");
	dir("xu/xw");
	dir("xl/xw");
	put("xl/xw/f", "f\n");
	xset("xu/xw", "trusted.overlay.opaque", "x");	/* "has xattr whiteouts", not opaque */
	ok(look(m, "/m/xw/f", 2) == (long)ino("xl/xw/f"), "opaque=x is not opaque");
	put("xl/meta", "the data\n");
	put("xu/meta", "");
	truncate((snprintf(p, sizeof(p), "%s/xu/meta", T), p), 9);
	xset("xu/meta", "trusted.overlay.metacopy", "");
	ok(look(m, "/m/meta", 9) == (long)ino("xl/meta"), "metacopy: the data is in the lower");
	put("xu/meta2", "");
	truncate((snprintf(p, sizeof(p), "%s/xu/meta2", T), p), 9);
	xset("xu/meta2", "trusted.overlay.metacopy", "");
	xset("xu/meta2", "trusted.overlay.redirect", "/elsewhere");
	ok(look(m, "/m/meta2", 9) == -EOPNOTSUPP, "metacopy with a redirect: -EOPNOTSUPP");
	dir("xu/rd");
	put("xu/rd/f", "f\n");
	xset("xu/rd", "trusted.overlay.redirect", "/old");
	ok(look(m, "/m/rd/f", 2) == -EOPNOTSUPP, "a redirected directory: -EOPNOTSUPP");
	pc_ovl_mount_free(m);
	pc_ovl_mount_free(mu);
}

/* Pages of a file read through fd, one byte a page. */
static void touch_all(int fd, size_t len)
{
	char *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	volatile char c = 0;

	if (p == MAP_FAILED)
		return;
	for (size_t i = 0; i < len; i += pc_page_size())
		c += p[i];
	(void)c;
	munmap(p, len);
}

/* A mount of ours failed: a skip where the kernel refuses it here, else a failure. */
static void mount_failed(const char *what)
{
	if (errno == EPERM)
		skip("mount refused (EPERM: no CAP_SYS_ADMIN in the initial namespace)", what);
	else if (errno == EINVAL)	/* an overlay's upper cannot be on an overlay */
		skip("mount refused (EINVAL: the test dir is on a filesystem an upper layer "
		     "cannot be on, such as an overlay)", what);
	else
		ok(0, "%s: mount (%s)", what, strerror(errno));
}

static int mnt_id(int fd)
{
	char p[64], line[128];
	FILE *f;
	int id = -1;

	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
	f = fopen(p, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "mnt_id: %d", &id) == 1)
			break;
	if (f)
		fclose(f);
	return id;
}

/*
 * The mount ID comes back for another overlay at the same place: its own
 * layers answer (with no_unique: as on a kernel before 6.8, where only that
 * reusable ID keys the parsed mounts).
 */
static void reused_id(const char *mp, const char *f, size_t len, bool no_unique)
{
	char o1[1024], o2[1024], l9[600];
	const char *how = no_unique ? " (no unique mount ID)" : "";
	int f1, f2, id1 = -1, id2 = -1, rfd;
	struct stat a, b;

	dir(no_unique ? "l8" : "l9");
	snprintf(l9, sizeof(l9), "%s/%s/big", T, no_unique ? "l8" : "l9");
	f1 = open(l9, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (f1 >= 0 && ftruncate(f1, (off_t)len) == 0)
		close(f1);
	/* no upper: two lowers, the second empty */
	snprintf(o1, sizeof(o1), "lowerdir=%s/ml:%s/nw", T, T);
	snprintf(o2, sizeof(o2), "lowerdir=%s/%s:%s/nw", T, no_unique ? "l8" : "l9", T);
	if (mount("overlay", mp, "overlay", 0, o1) == 0) {
		f1 = open(f, O_RDONLY);
		rfd = f1 >= 0 ? pc_fd_real(f1) : -1;
		ok(rfd >= 0, "an overlay's file: its real file%s (%s)", how,
		   rfd < 0 ? strerror(-rfd) : "found");
		if (rfd >= 0)
			close(rfd);
		id1 = f1 >= 0 ? mnt_id(f1) : -1;
		if (f1 >= 0)
			close(f1);
		umount2(mp, 0);
	}
	if (mount("overlay", mp, "overlay", 0, o2) == 0) {
		f2 = open(f, O_RDONLY);
		id2 = f2 >= 0 ? mnt_id(f2) : -1;
		rfd = f2 >= 0 ? pc_fd_real(f2) : -1;
		if (no_unique && id1 != id2)
			skip("the kernel did not give the mount ID again", "a recycled mount ID");
		else
			ok(rfd >= 0 && fstat(rfd, &a) == 0 && stat(l9, &b) == 0 &&
				   a.st_ino == b.st_ino,
			   "a second overlay at the same place (mount ID %d, then %d)%s: its own "
			   "lower's file (%s)",
			   id1, id2, how, rfd < 0 ? strerror(-rfd) : "found");
		if (rfd >= 0)
			close(rfd);
		if (f2 >= 0)
			close(f2);
		umount2(mp, MNT_DETACH);
	} else {
		mount_failed("a second overlay at the same place");
	}
}

static void real_mount(void)
{
	char opts[1024], mp[512], f[600], big[600];
	struct pc_residency r;
	struct pc_evict_result er;
	size_t len = 1 << 20;
	char *buf = calloc(1, len);
	int fd, rfd, rc;

	dir("ml");
	dir("mu");
	dir("mw");
	dir("mm");
	snprintf(big, sizeof(big), "%s/ml/big", T);
	fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !buf || write(fd, buf, len) != (ssize_t)len)
		perror(big);
	fsync(fd);
	close(fd);
	free(buf);
	snprintf(opts, sizeof(opts), "lowerdir=%s/ml,upperdir=%s/mu,workdir=%s/mw", T, T, T);
	snprintf(mp, sizeof(mp), "%s/mm", T);
	if (mount("overlay", mp, "overlay", 0, opts) < 0) {
		mount_failed("residency through a real overlay mount");
		return;
	}
	snprintf(f, sizeof(f), "%s/big", mp);
	fd = open(f, O_RDONLY);
	ok(fd >= 0 && pc_fd_is_stacked(fd), "a file through the mount is stacked");
	rfd = pc_fd_real(fd);
	ok(rfd >= 0, "its real file is found (%s)", rfd < 0 ? strerror(-rfd) : "ok");
	if (rfd >= 0) {
		struct stat a, b;

		ok(fstat(rfd, &a) == 0 && stat(big, &b) == 0 && a.st_ino == b.st_ino &&
		   a.st_dev == b.st_dev, "and it is the lower layer's file");
		close(rfd);
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	touch_all(fd, len);
	rc = pc_fd_residency(fd, len, 0, 0, &r);
	ok(rc == 0 && r.source == want_src && r.stacked && r.cached == r.pages &&
	   r.pages == len / pc_page_size(),
	   "read through the overlay: all %llu pages counted (cached %llu, source %d)",
	   (unsigned long long)r.pages, (unsigned long long)r.cached, r.source);
	rc = pc_fd_evict(fd, len, 0, 0, &er);
	ok(rc == 0 && er.before.cached == r.pages && er.after.cached == 0,
	   "evict through it: counted before (%llu) and gone after (%llu)",
	   (unsigned long long)er.before.cached, (unsigned long long)er.after.cached);
	close(fd);
	/* a copy-up: the pages are now the upper file's */
	fd = open(f, O_RDWR);
	ok(fd >= 0 && pwrite(fd, "x", 1, 0) == 1, "written through the overlay (copied up)");
	fsync(fd);
	close(fd);
	fd = open(f, O_RDONLY);
	rfd = fd >= 0 ? pc_fd_real(fd) : -EBADF;
	if (rfd >= 0) {
		struct stat a, b;
		char up[600];

		snprintf(up, sizeof(up), "%s/mu/big", T);
		ok(fstat(rfd, &a) == 0 && stat(up, &b) == 0 && a.st_ino == b.st_ino,
		   "after the copy-up the real file is the upper one");
		close(rfd);
	} else {
		ok(0, "after the copy-up the real file is found (%s)", strerror(-rfd));
	}
	touch_all(fd, len);
	posix_fadvise(fd, len / 2, 0, POSIX_FADV_DONTNEED);
	rc = pc_fd_residency(fd, len, 0, 0, &r);
	ok(rc == 0 && r.stacked && r.cached == r.pages / 2,
	   "half read after the copy-up: half counted (%llu of %llu)",
	   (unsigned long long)r.cached, (unsigned long long)r.pages);
	close(fd);

	/* an overlay whose lower is an overlay: down both */
	dir("nu");
	dir("nw");
	dir("nm");
	{
		char nopts[2048], nmp[512], nf[600];

		snprintf(nopts, sizeof(nopts), "lowerdir=%s,upperdir=%s/nu,workdir=%s/nw", mp, T, T);
		snprintf(nmp, sizeof(nmp), "%s/nm", T);
		snprintf(nf, sizeof(nf), "%s/big", nmp);
		if (mount("overlay", nmp, "overlay", 0, nopts) == 0) {
			fd = open(nf, O_RDONLY);
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			touch_all(fd, len);
			rc = pc_fd_residency(fd, len, 0, 0, &r);
			ok(rc == 0 && r.source == want_src && r.cached == r.pages,
			   "an overlay on an overlay: the real file's count (%llu of %llu, source %d)",
			   (unsigned long long)r.cached, (unsigned long long)r.pages, r.source);
			close(fd);
			umount2(nmp, MNT_DETACH);
		} else {
			mount_failed("an overlay on an overlay");
		}
	}
	umount2(mp, MNT_DETACH);
	reused_id(mp, f, len, false);
	/* before 6.8 the cache has only the reusable ID to go by */
	pc_sys_inject(PC_SYS_STATX_MNT_UNIQUE, ENOSYS, 0, 0);
	reused_id(mp, f, len, true);
	pc_sys_inject_reset();
	pc_sys_inject_env(getenv("PAGECACHE_FAULT"));
}

int main(void)
{
	char cmd[300];

	pc_sys_inject_env(getenv("PAGECACHE_FAULT"));
	want_src = pc_have_cachestat() ? PC_SRC_CACHESTAT : PC_SRC_MINCORE;

	snprintf(T, sizeof(T), "%s/pc-ovl-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp");
	if (!mkdtemp(T))
		return perror("mkdtemp"), 1;
	parse_lines();
	layers();
	xattrs();
	if (pc_have_cap(CAP_SYS_ADMIN))
		real_mount();
	else
		skip("needs CAP_SYS_ADMIN: mounting an overlay", "residency through a real overlay mount");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", T);
	return done_testing();
}
