/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * walk.c: every regular file once; FIFOs, sockets and devices never
 * opened; symlinks followed only when asked, loops survived; hardlinks
 * once; patterns, size caps; errors named. A directory swapped for a
 * symlink mid-walk never leads outside the tree; special files named as
 * roots are refused unopened; deep trees walk within a few descriptors.
 * Roots fed as the walk goes (pc_walk_fed) are walked once each, a few
 * hundred read ahead at most, their fds closed, the feed left on a stop.
 */
#define _GNU_SOURCE
#include "internal.h"		/* pc_openq_*: which engine opened the files */
#include "tap.h"

#include <dirent.h>
#include <liburing.h>

#include <linux/capability.h>

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>

struct seen {
	pthread_mutex_t lock;
	char names[256][256];
	char facts[256][160];		/* name, size, inode, links, as handed over */
	int n;
	int ev[PC_WALK_NEVENTS];
	int last_err;
};

static int on_file(struct pc_walk_entry *e, void *arg)
{
	struct seen *s = arg;
	const char *base = strrchr(e->path, '/');

	pthread_mutex_lock(&s->lock);
	if (s->n < 256) {
		snprintf(s->facts[s->n], 160, "%s size=%lld ino=%llu nlink=%llu regular=%d",
			 e->path, (long long)e->st.st_size, (unsigned long long)e->st.st_ino,
			 (unsigned long long)e->st.st_nlink, S_ISREG(e->st.st_mode));
		snprintf(s->names[s->n++], 256, "%s", base ? base + 1 : e->path);
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static void on_event(enum pc_walk_event ev, const char *path, int err, void *arg)
{
	struct seen *s = arg;

	(void)path;
	s->ev[ev]++;
	if (ev == PC_WALK_ERROR)
		s->last_err = err;
}

static int stop_cb(struct pc_walk_entry *e, void *a)
{
	(void)e;
	(void)a;
	return 7;
}

static bool saw(struct seen *s, const char *name)
{
	int k = 0;

	for (int i = 0; i < s->n; i++)
		k += !strcmp(s->names[i], name);
	return k == 1;
}

/* Walk the roots with o, counting files and events in s. */
static void walk_roots(const char *const *roots, size_t n, struct pc_walk_opts *o, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	o->file = on_file;
	o->event = on_event;
	o->arg = s;
	o->event_arg = s;
	pc_walk(roots, n, o);
}

static void walk(const char *root, struct pc_walk_opts *o, struct seen *s)
{
	walk_roots(&root, 1, o, s);
}

static char *p(const char *rel)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", scratch_dir(), rel);
	return buf[i];
}


static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0)
		close(fd);
}

/*
 * The race: root/a holds b0..b15 (each with a file f); out/ (outside the
 * tree) holds b0..b15 each with SENTINEL; lnk is a symlink to out. One
 * thread keeps exchanging root/a and lnk while the walk runs: a walker
 * that reopens root/a/bN by path follows the symlink out of the tree.
 */
struct race {
	char root[512], a[600], lnk[512], hold[512], out[512];
	atomic_int stop;
	atomic_int swaps;
	atomic_int sentinels, files;
};

static void *swapper(void *arg)
{
	struct race *r = arg;
	bool exchange = true;

	while (!atomic_load(&r->stop)) {
		if (exchange && renameat2(AT_FDCWD, r->a, AT_FDCWD, r->lnk, RENAME_EXCHANGE) == 0) {
			atomic_fetch_add(&r->swaps, 1);
			continue;
		}
		exchange = false;	/* no RENAME_EXCHANGE here: the same in three steps */
		if (rename(r->a, r->hold) == 0) {
			if (symlink(r->out, r->a) == 0) {
				atomic_fetch_add(&r->swaps, 1);
				unlink(r->a);
			}
			rename(r->hold, r->a);
		}
	}
	/* leave the real directory in place */
	{
		struct stat st;

		if (lstat(r->a, &st) == 0 && S_ISLNK(st.st_mode))
			renameat2(AT_FDCWD, r->a, AT_FDCWD, r->lnk, RENAME_EXCHANGE);
	}
	return NULL;
}

static int race_file(struct pc_walk_entry *e, void *arg)
{
	struct race *r = arg;

	if (strstr(e->path, "SENTINEL"))
		atomic_fetch_add(&r->sentinels, 1);
	else
		atomic_fetch_add(&r->files, 1);
	return 0;
}

static void race_test(void)
{
	struct race r = { 0 };
	pthread_t t;
	char path[700];
	const char *roots[1] = { r.root };
	int walks = 300;

	snprintf(r.root, sizeof(r.root), "%s/race/root", scratch_dir());
	snprintf(r.a, sizeof(r.a), "%s/a", r.root);
	snprintf(r.lnk, sizeof(r.lnk), "%s/race/lnk", scratch_dir());
	snprintf(r.hold, sizeof(r.hold), "%s/race/hold", scratch_dir());
	snprintf(r.out, sizeof(r.out), "%s/race/out", scratch_dir());
	snprintf(path, sizeof(path), "%s/race", scratch_dir());
	mkdir(path, 0755);
	mkdir(r.root, 0755);
	mkdir(r.a, 0755);
	mkdir(r.out, 0755);
	symlink(r.out, r.lnk);
	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "%s/b%d", r.a, i);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/b%d/f", r.a, i);
		touch(path);
		snprintf(path, sizeof(path), "%s/b%d", r.out, i);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/b%d/SENTINEL", r.out, i);
		touch(path);
	}
	pthread_create(&t, NULL, swapper, &r);
	for (int i = 0; i < walks; i++) {
		struct pc_walk_opts o = { .threads = 2, .file = race_file, .arg = &r };

		pc_walk(roots, 1, &o);
	}
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	ok(atomic_load(&r.swaps) > 0 && atomic_load(&r.files) > 0,
	   "the race ran: %d swaps, %d files found in %d walks", atomic_load(&r.swaps),
	   atomic_load(&r.files), walks);
	ok(atomic_load(&r.sentinels) == 0,
	   "a directory swapped for a symlink mid-walk never leads outside the tree "
	   "(%d files from outside)", atomic_load(&r.sentinels));
}

/*
 * A FIFO with no writer (an open without O_NONBLOCK would block), a
 * character and a block device named as roots: refused, never opened
 * (inotify sees no open), file() never called.
 */
static void special_roots_test(void)
{
	char fifo[600], chr[600], blk[600];
	const char *roots[3] = { fifo, chr, blk };
	struct pc_walk_opts o = { .threads = 2 };
	struct seen s;
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), nroots = 1, opened = 0;
	char buf[4096];

	snprintf(fifo, sizeof(fifo), "%s/root-fifo", scratch_dir());
	snprintf(chr, sizeof(chr), "%s/root-chr", scratch_dir());
	snprintf(blk, sizeof(blk), "%s/root-blk", scratch_dir());
	mkfifo(fifo, 0600);
	if (mknod(chr, S_IFCHR | 0600, makedev(1, 3)) == 0 &&	/* /dev/null */
	    mknod(blk, S_IFBLK | 0600, makedev(7, 0)) == 0)	/* /dev/loop0 */
		nroots = 3;
	for (int i = 0; i < nroots; i++)
		if (in < 0 || inotify_add_watch(in, roots[i], IN_OPEN) < 0)
			opened = -1;
	walk_roots(roots, (size_t)nroots, &o, &s);
	if (opened == 0)
		while (read(in, buf, sizeof(buf)) > 0)
			opened++;
	ok(s.n == 0 && s.ev[PC_WALK_ERROR] == nroots && s.last_err == EINVAL,
	   "%s named as roots are refused (%d errors, %d files)",
	   nroots == 3 ? "a FIFO, a character and a block device" : "a FIFO",
	   s.ev[PC_WALK_ERROR], s.n);
	ok(opened == 0, "and never opened (%d inotify opens)", opened);
	if (nroots < 3)
		skip("mknod refused (EPERM: no CAP_MKNOD, or devices not allowed here)",
		     "device nodes named as roots");
	if (in >= 0)
		close(in);
}

/*
 * Roots given as fds (root_fds, lock --watch's): the walk starts from the
 * inode held, whatever the path is now (renamed, a link put in its place),
 * and the path only names what it hands over.
 */
static void root_fds_test(void)
{
	char tree[600], file[600], moved[600], other[600];
	const char *roots[2] = { tree, file };
	int fds[2];
	struct pc_walk_opts o = { .threads = 2, .root_fds = fds };
	struct seen s;
	bool named = true;

	snprintf(tree, sizeof(tree), "%s/rf-tree", scratch_dir());
	snprintf(file, sizeof(file), "%s/rf-file", scratch_dir());
	snprintf(moved, sizeof(moved), "%s/rf-tree.old", scratch_dir());
	snprintf(other, sizeof(other), "%s/rf-other", scratch_dir());
	mkdir(tree, 0755);
	mkdir(other, 0755);
	touch(p("rf-tree/held"));
	touch(p("rf-other/elsewhere"));
	touch(file);
	fds[0] = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fds[1] = open(file, O_PATH | O_CLOEXEC);
	rename(tree, moved);		/* the tree's path now: a link elsewhere */
	(void)!symlink(other, tree);
	unlink(file);			/* the file's: gone */
	walk_roots(roots, 2, &o, &s);
	for (int i = 0; i < s.n; i++)
		named &= !strncmp(s.facts[i], tree, strlen(tree)) ||
			 !strncmp(s.facts[i], file, strlen(file));
	ok(s.n == 2 && saw(&s, "held") && saw(&s, "rf-file") && !saw(&s, "elsewhere"),
	   "roots given as fds: the inodes held are walked, not their paths now (%d files)",
	   s.n);
	ok(named, "  and what is handed over is named by the paths given");
	close(fds[0]);
	close(fds[1]);
}

/*
 * Names that a thread keeps pointing at a device or a FIFO and back at a
 * regular file while the tree is walked: with -L, a link retargeted (the
 * link's owner needs no permission on a device to point at it); without,
 * a FIFO renamed over the file. Every open is watched with inotify: the
 * device and the FIFO must never be opened, however the race falls.
 */
struct flipper {
	char dir[600];
	atomic_int stop, flips;
	bool follow;
};

static void *flip(void *arg)
{
	struct flipper *f = arg;
	char a[700], b[700], name[700], reg[700], spec[700];

	snprintf(name, sizeof(name), "%s/t/x", f->dir);
	snprintf(a, sizeof(a), "%s/t/.a", f->dir);
	snprintf(b, sizeof(b), "%s/t/.b", f->dir);
	snprintf(reg, sizeof(reg), "%s/reg", f->dir);
	snprintf(spec, sizeof(spec), "%s/%s", f->dir, f->follow ? "dev" : "t/.fifo");
	while (!atomic_load(&f->stop)) {
		if (f->follow) {	/* x -> reg, x -> dev */
			unlink(a);
			(void)!symlink(spec, a);
			rename(a, name);
			unlink(b);
			(void)!symlink(reg, b);
			rename(b, name);
		} else {		/* x is the FIFO, then a file */
			(void)!link(spec, a);
			rename(a, name);
			(void)!link(reg, b);
			rename(b, name);
		}
		atomic_fetch_add(&f->flips, 1);
	}
	return NULL;
}

static void flip_test(bool follow)
{
	struct flipper f = { .follow = follow };
	char p[700], root[700], buf[4096];
	const char *roots[1] = { root };
	struct pc_walk_opts o = { .threads = 2, .follow = follow };
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), opened = 0, found = 0;
	pthread_t t;

	snprintf(f.dir, sizeof(f.dir), "%s/flip%d", scratch_dir(), follow);
	mkdir(f.dir, 0755);
	snprintf(root, sizeof(root), "%s/t", f.dir);
	mkdir(root, 0755);
	snprintf(p, sizeof(p), "%s/reg", f.dir);
	close(open(p, O_WRONLY | O_CREAT, 0644));
	if (follow) {
		snprintf(p, sizeof(p), "%s/dev", f.dir);
		if (mknod(p, S_IFCHR | 0600, makedev(1, 3)) < 0) {	/* /dev/null */
			if (errno == EPERM)
				skip("mknod refused (EPERM: no CAP_MKNOD, or devices not allowed here)",
				     "-L: a link retargeted at a device");
			else
				ok(0, "-L: make a device node to retarget at (%s)", strerror(errno));
			return;
		}
	} else {
		snprintf(p, sizeof(p), "%s/t/.fifo", f.dir);
		mkfifo(p, 0600);
	}
	inotify_add_watch(in, p, IN_OPEN);
	pthread_create(&t, NULL, flip, &f);
	for (int i = 0; i < 400; i++) {
		struct seen s;

		walk_roots(roots, 1, &o, &s);
		found += s.n;
	}
	atomic_store(&f.stop, 1);
	pthread_join(t, NULL);
	while (read(in, buf, sizeof(buf)) > 0)
		opened++;
	close(in);
	ok(opened == 0 && atomic_load(&f.flips) > 0,
	   "%s: never opened in 400 walks (%d opens; %d flips, %d files found)",
	   follow ? "-L, a link retargeted at a device" : "a FIFO renamed over a file",
	   opened, atomic_load(&f.flips), found);
}

/*
 * Who may change a directory's names (pc_dir_others_write): the caller
 * and root only, or anyone else too. Judged on the directory's fstat.
 */
static void others_write_test(void)
{
	static const struct {
		uid_t uid;
		mode_t mode;
		unsigned long fs;
		bool shared;
		const char *what;
	} c[] = {
		{ 0, 040755, 0xEF53, false, "root's 0755 (ext4)" },
		{ 1000, 040755, 0xEF53, false, "the caller's own 0755" },
		{ 1000, 040700, 0x9123683E, false, "the caller's own 0700 (btrfs)" },
		{ 65534, 040755, 0xEF53, true, "another user's 0755: its owner writes it" },
		{ 65534, 040555, 0xEF53, true, "another user's 0555: its owner may chmod it" },
		{ 0, 040775, 0xEF53, true, "root's, group-writable (or an ACL's mask)" },
		{ 0, 040757, 0xEF53, true, "root's, others-writable" },
		{ 0, 041777, 0x01021994, true, "root's 1777 (/tmp, tmpfs): sticky still counts" },
		{ 1000, 040775, 0xEF53, true, "the caller's own, group-writable" },
		{ 0, 040755, 0x65735546, true, "root's 0755 on FUSE (its server answers)" },
		{ 0, 040755, 0xFE534D42, true, "root's 0755 on SMB2" },
		{ 0, 040755, 0x01021997, true, "root's 0755 on 9p" },
		{ 0, 040755, 0x6969, true, "root's 0755 on NFS (another client writes)" },
		{ 0, 040755, 0x5346414F, true, "root's 0755 on OpenAFS" },
		{ 0, 040755, 0x6B414653, true, "root's 0755 on kAFS" },
		{ 0, 040755, 0x00C36400, true, "root's 0755 on CephFS" },
		{ 0, 040755, 0x0BD00BD0, true, "root's 0755 on Lustre" },
		{ 0, 040755, 0x47504653, true, "root's 0755 on GPFS" },
		{ 0, 040755, 0x7461636F, true, "root's 0755 on OCFS2 (another node writes)" },
		{ 0, 040755, 0x01161970, true, "root's 0755 on GFS2" },
		{ 0, 040755, 0x58465342, false, "root's 0755 on XFS (local)" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct stat st = { .st_uid = c[i].uid, .st_mode = c[i].mode };

		ok(pc_dir_others_write(&st, c[i].fs, 1000) == c[i].shared,
		   "caller 1000, %s: %s", c[i].what, c[i].shared ? "shared" : "not shared");
	}
	{
		struct stat st = { .st_uid = 1000, .st_mode = 040755 };

		ok(pc_dir_others_write(&st, 0xEF53, 0),
		   "caller root, a user's 0755: shared (the user may swap its names)");
	}
}

/*
 * The issue-21 race: in a directory another user may write, a thread
 * exchanges (renameat2 RENAME_EXCHANGE) a regular file with a FIFO, and
 * another regular file with a character device, while the tree is walked
 * again and again. The listing sees a regular file; the batch's open,
 * later, finds the FIFO or the device. A FIFO's open is seen by a writer
 * blocked in open(O_WRONLY) on another name of it (released when anyone
 * opens it for reading: what the threat is, a writer told when root
 * walked); the device's by inotify. Neither may ever be opened (main
 * opened the FIFO in about half the walks).
 */
struct xchg {
	char dir[600], x[700], fifo[700], y[700], dev[700], keep[700];
	bool have_dev;
	atomic_int stop, swaps, released, wdone;
};

static void *xchg_swap(void *arg)
{
	struct xchg *r = arg;

	while (!atomic_load(&r->stop))
		if (renameat2(AT_FDCWD, r->x, AT_FDCWD, r->fifo, RENAME_EXCHANGE) == 0)
			atomic_fetch_add(&r->swaps, 1);
	return NULL;
}

static void *xchg_swap_dev(void *arg)
{
	struct xchg *r = arg;

	while (!atomic_load(&r->stop))
		if (renameat2(AT_FDCWD, r->y, AT_FDCWD, r->dev, RENAME_EXCHANGE) == 0)
			atomic_fetch_add(&r->swaps, 1);
	return NULL;
}

static void *xchg_writer(void *arg)
{
	struct xchg *r = arg;

	for (;;) {
		int fd = open(r->keep, O_WRONLY | O_CLOEXEC);	/* blocks until a reader */

		if (atomic_load(&r->stop)) {
			if (fd >= 0)
				close(fd);
			break;
		}
		if (fd >= 0) {
			struct pollfd pf = { .fd = fd, .events = POLLOUT };

			/* one reader's open, however long held: until POLLERR (no reader) */
			atomic_fetch_add(&r->released, 1);
			while (!atomic_load(&r->stop) && poll(&pf, 1, 100) >= 0 &&
			       !(pf.revents & POLLERR))
				;
			close(fd);
		} else if (errno != EINTR) {
			break;
		}
	}
	atomic_store(&r->wdone, 1);
	return NULL;
}

static void exchange_test(void)
{
	struct xchg r = { 0 };
	const char *roots[1] = { r.dir };
	char name[700], buf[4096];
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), walks = 2000, found = 0;
	int fifo_walks = 0, dev_walks = 0;
	pthread_t ts, td, tw;
	bool owned;

	snprintf(r.dir, sizeof(r.dir), "%s/xchg", scratch_dir());
	mkdir(r.dir, 0755);
	/* a user's directory where we are root, else one anyone may write */
	owned = geteuid() == 0 && chown(r.dir, 65534, 65534) == 0;
	if (!owned)
		chmod(r.dir, 01777);
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "%s/f%d", r.dir, i);
		touch(name);
	}
	snprintf(r.x, sizeof(r.x), "%s/x", r.dir);
	snprintf(r.fifo, sizeof(r.fifo), "%s/x.fifo", r.dir);
	snprintf(r.y, sizeof(r.y), "%s/y", r.dir);
	snprintf(r.dev, sizeof(r.dev), "%s/y.dev", r.dir);
	snprintf(r.keep, sizeof(r.keep), "%s/xchg-fifo", scratch_dir());	/* outside */
	touch(r.x);
	touch(r.y);
	mkfifo(r.keep, 0666);
	if (link(r.keep, r.fifo) < 0) {
		ok(0, "a FIFO with a second name in the walked directory (%s)", strerror(errno));
		return;
	}
	r.have_dev = mknod(r.dev, S_IFCHR | 0666, makedev(1, 3)) == 0;	/* /dev/null */
	if (r.have_dev && (in < 0 || inotify_add_watch(in, r.dev, IN_OPEN) < 0))
		r.have_dev = false;
	pthread_create(&tw, NULL, xchg_writer, &r);
	pthread_create(&ts, NULL, xchg_swap, &r);
	if (r.have_dev)
		pthread_create(&td, NULL, xchg_swap_dev, &r);
	for (int i = 0; i < walks; i++) {
		struct pc_walk_opts o = { .threads = 2 };
		int before = atomic_load(&r.released);
		struct seen s;

		walk_roots(roots, 1, &o, &s);
		found += s.n;
		fifo_walks += atomic_load(&r.released) > before;	/* the writer may lag a walk */
		/* inotify merges an event into the same one queued last: read them per walk */
		if (r.have_dev && read(in, buf, sizeof(buf)) > 0)
			dev_walks++;
	}
	atomic_store(&r.stop, 1);
	pthread_join(ts, NULL);
	if (r.have_dev)
		pthread_join(td, NULL);
	while (!atomic_load(&r.wdone)) {	/* release the writer: our own opens */
		int fd = open(r.keep, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
		usleep(1000);
	}
	pthread_join(tw, NULL);
	ok(atomic_load(&r.swaps) > 0 && found > 0,
	   "the exchange race ran (%s): %d swaps, %d files in %d walks",
	   owned ? "a directory nobody owns" : "a 1777 directory", atomic_load(&r.swaps), found, walks);
	ok(atomic_load(&r.released) == 0,
	   "a FIFO exchanged with a listed file is never opened: its blocked writer let through "
	   "%d times, in %d of %d walks", atomic_load(&r.released), fifo_walks, walks);
	if (r.have_dev)
		ok(dev_walks == 0, "nor a device exchanged so (inotify saw it opened in %d of %d walks)",
		   dev_walks, walks);
	else
		skip("mknod refused (EPERM: no CAP_MKNOD, or devices not allowed here)",
		     "a device exchanged with a listed file");
	if (in >= 0)
		close(in);
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "%s/f%d", r.dir, i);
		unlink(name);
	}
	unlink(r.x);
	unlink(r.y);
	unlink(r.fifo);
	unlink(r.dev);
	unlink(r.keep);
	rmdir(r.dir);
}

/*
 * A comb 200 levels deep (each level: the next level and four leaf
 * directories, each with a file) under RLIMIT_NOFILE 40: a walker that
 * held a descriptor for every directory with children still queued would
 * run out; this one finds every file without an error.
 */
static void deep_tree_test(void)
{
	char path[8192];
	size_t len;
	pid_t pid;
	int st;

	len = (size_t)snprintf(path, sizeof(path), "%s/comb", scratch_dir());
	mkdir(path, 0755);
	for (int d = 0; d < 200; d++) {
		for (int l = 0; l < 4; l++) {
			snprintf(path + len, sizeof(path) - len, "/l%d", l);
			mkdir(path, 0755);
			snprintf(path + len, sizeof(path) - len, "/l%d/f", l);
			touch(path);
		}
		len += (size_t)snprintf(path + len, sizeof(path) - len, "/d");
		mkdir(path, 0755);
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 40, 40 };
		struct pc_walk_opts o = { .threads = 3 };
		struct seen s;
		char root[600];

		snprintf(root, sizeof(root), "%s/comb", scratch_dir());
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(9);
		walk(root, &o, &s);
		_exit(s.ev[PC_WALK_ERROR] == 0 && s.ev[PC_WALK_DIR] == 1 + 200 * 5 ? 0 :
		      s.ev[PC_WALK_ERROR] ? 2 : 3);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "a 200-deep tree is walked whole under RLIMIT_NOFILE 40 (exit %d)",
	   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* One walk's files (sorted facts) and events, to compare two walks by. */
static void summary(struct seen *s, char *out, size_t len)
{
	size_t k = 0;

	qsort(s->facts, (size_t)s->n, sizeof(s->facts[0]), cmp_str);
	k += (size_t)snprintf(out + k, len - k, "%d files;", s->n);
	for (int i = 0; i < s->n && k < len; i++)
		k += (size_t)snprintf(out + k, len - k, " %s;", s->facts[i]);
	for (int i = 0; i < PC_WALK_NEVENTS && k < len; i++)
		k += (size_t)snprintf(out + k, len - k, " ev%d=%d", i, s->ev[i]);
	if (k < len)
		snprintf(out + k, len - k, " err=%d", s->ev[PC_WALK_ERROR] ? s->last_err : 0);
}

/*
 * The opens of a tree's files go through io_uring (lib/openq.c) where a
 * ring can be made, else one by one: the same files, sizes, inodes and
 * events either way, whether the ring is refused at the start ("uring"
 * fault point) or fails in the middle ("uring_enter"); no descriptor is
 * left open; a failing batched open or fstat is one named error.
 */
static void engines_test(const char *root)
{
	static char with[16384], without[16384], broken[16384];
	struct pc_walk_opts o;
	struct io_uring r;
	bool ring = io_uring_queue_init(4, &r, 0) == 0;	/* asked apart from openq.c */
	unsigned long before;
	int fds0, fds1, fds2, fds3;
	struct seen s;

	if (ring)
		io_uring_queue_exit(&r);
	fds0 = open_fds();
	before = pc_openq_ring_opens();
	o = (struct pc_walk_opts){ .threads = 2 };
	walk(root, &o, &s);
	summary(&s, with, sizeof(with));
	fds1 = open_fds();
	if (ring)
		ok(pc_openq_ring_opens() - before >= (unsigned long)s.n && s.n > 0,
		   "io_uring: the files' opens went through the rings (%lu opens, %d files)",
		   pc_openq_ring_opens() - before, s.n);
	else
		skip("no io_uring here (kernel.io_uring_disabled, seccomp, ENOSYS)",
		     "the opens through the ring");

	pc_sys_inject(PC_SYS_URING, ENOSYS, 0, 0);
	before = pc_openq_ring_opens();
	o = (struct pc_walk_opts){ .threads = 2 };
	walk(root, &o, &s);
	pc_sys_inject_reset();
	summary(&s, without, sizeof(without));
	fds2 = open_fds();
	ok(pc_openq_ring_opens() == before, "uring:ENOSYS: no ring, the opens one by one (%lu)",
	   pc_openq_ring_opens() - before);
	ok(!strcmp(with, without), "the same files and events with io_uring and without");
	if (strcmp(with, without))
		printf("#  with:    %s\n#  without: %s\n", with, without);

	/* the ring fails at its second io_uring_enter: the rest one by one */
	pc_sys_inject(PC_SYS_URING_ENTER, EIO, 1, 0);
	o = (struct pc_walk_opts){ .threads = 1 };
	walk(root, &o, &s);
	pc_sys_inject_reset();
	summary(&s, broken, sizeof(broken));
	fds3 = open_fds();
	ok(!strcmp(with, broken), "a ring failing mid-walk: the same files and events");
	if (strcmp(with, broken))
		printf("#  with:    %s\n#  broken:  %s\n", with, broken);
	ok(fds1 == fds0 && fds2 == fds0 && fds3 == fds0,
	   "no descriptor left open by any of them (%d, %d, %d, %d)", fds0, fds1, fds2, fds3);

	/*
	 * opens the dcache cannot answer (RESOLVE_CACHED's EAGAIN, the
	 * "uring_cached" point): made by openat(2) instead, and after a batch
	 * of them the next ones by hand: 200 files, batches of at most 64
	 */
	{
		char many[600], name[700];
		static char plain[65536], missed[65536];

		snprintf(many, sizeof(many), "%s/many", scratch_dir());
		mkdir(many, 0755);
		for (int i = 0; i < 200; i++) {
			snprintf(name, sizeof(name), "%s/f%d", many, i);
			touch(name);
		}
		o = (struct pc_walk_opts){ .threads = 1 };
		walk(many, &o, &s);
		summary(&s, plain, sizeof(plain));
		before = pc_openq_ring_opens();
		pc_sys_inject(PC_SYS_URING_CACHED, EAGAIN, 0, 0);
		o = (struct pc_walk_opts){ .threads = 1 };
		walk(many, &o, &s);
		pc_sys_inject_reset();
		summary(&s, missed, sizeof(missed));
		ok(!strcmp(plain, missed) && s.n == 200 && open_fds() == fds0,
		   "opens the dcache cannot answer: made by openat(2), the same 200 files, no fd left");
		if (ring)
			ok(pc_openq_ring_opens() - before > 0 && pc_openq_ring_opens() - before < 200,
			   "and after a batch of them the rest by hand (%lu of 200 tried in the ring)",
			   pc_openq_ring_opens() - before);
		else
			skip("no io_uring here", "opens by hand after a batch the dcache could not answer");
		for (int i = 0; i < 200; i++) {
			snprintf(name, sizeof(name), "%s/f%d", many, i);
			unlink(name);
		}
		rmdir(many);
	}

	/* a batched open that fails: named, the others handed over */
	pc_sys_inject(PC_SYS_OPEN, EACCES, 2, 1);
	o = (struct pc_walk_opts){ .threads = 1 };
	walk(root, &o, &s);
	pc_sys_inject_reset();
	ok(s.ev[PC_WALK_ERROR] == 1 && s.last_err == EACCES && s.n == 4,
	   "%s: the third open refused (EACCES) is one named error, 4 of 5 files handed over "
	   "(%d errors, %d files)", ring ? "io_uring" : "one by one", s.ev[PC_WALK_ERROR], s.n);
	/* and the fstat after it */
	pc_sys_inject(PC_SYS_FSTAT, EIO, 1, 1);
	o = (struct pc_walk_opts){ .threads = 1 };
	walk(root, &o, &s);
	pc_sys_inject_reset();
	ok(s.ev[PC_WALK_ERROR] == 1 && s.last_err == EIO && s.n == 4 && open_fds() == fds0,
	   "an fstat failing after a batched open (EIO): one named error, its fd closed "
	   "(%d errors, %d files)", s.ev[PC_WALK_ERROR], s.n);
}

/*
 * The tree's directories made writable by all (so shared: their files are
 * reached with O_PATH and reopened): the same files, sizes, inodes and
 * events as the batch gives where only the caller may write, with the
 * ring, without it, and with a ring failing mid-walk; no descriptor left
 * open; a failing reopen is one named error.
 */
static void shared_engines_test(const char *root)
{
	static char mine[16384], ring[16384], none[16384], broken[16384];
	const char *dirs[] = { "", "/d1", "/d1/d2", "/skipme" };
	char d[700];
	struct pc_walk_opts o;
	struct seen s;
	int fds0 = open_fds();

	o = (struct pc_walk_opts){ .threads = 2 };
	walk(root, &o, &s);
	summary(&s, mine, sizeof(mine));
	for (size_t i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s%s", root, dirs[i]);
		chmod(d, 0777);
	}
	o = (struct pc_walk_opts){ .threads = 2 };
	walk(root, &o, &s);
	summary(&s, ring, sizeof(ring));
	ok(!strcmp(mine, ring), "shared directories (0777): the same files and events as the batch's");
	if (strcmp(mine, ring))
		printf("#  mine:   %s\n#  shared: %s\n", mine, ring);
	pc_sys_inject(PC_SYS_URING, ENOSYS, 0, 0);
	o = (struct pc_walk_opts){ .threads = 2 };
	walk(root, &o, &s);
	pc_sys_inject_reset();
	summary(&s, none, sizeof(none));
	ok(!strcmp(mine, none), "shared, without io_uring: the same");
	pc_sys_inject(PC_SYS_URING_ENTER, EIO, 1, 0);
	o = (struct pc_walk_opts){ .threads = 1 };
	walk(root, &o, &s);
	pc_sys_inject_reset();
	summary(&s, broken, sizeof(broken));
	ok(!strcmp(mine, broken), "shared, a ring failing mid-walk: the same");
	ok(open_fds() == fds0, "shared: no descriptor left open (%d, %d)", fds0, open_fds());
	/*
	 * each open point refused in turn (a file's O_PATH open, in the
	 * batch, or its reopen): one named error, the others handed over (a
	 * hardlink's other name may stand in), no fd left
	 */
	{
		int good = 0, k;

		for (k = 0; k < 12; k++) {
			pc_sys_inject(PC_SYS_OPEN, EACCES, k, 1);
			o = (struct pc_walk_opts){ .threads = 1 };
			walk(root, &o, &s);
			pc_sys_inject_reset();
			good += s.ev[PC_WALK_ERROR] == 1 && s.last_err == EACCES && s.n >= 4 &&
				open_fds() == fds0;
		}
		ok(good == k, "shared: each of the first %d opens refused (EACCES) is one named "
		   "error, the rest handed over, no fd left (%d of %d)", k, good, k);
	}
	for (size_t i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s%s", root, dirs[i]);
		chmod(d, i ? 0755 : 0700);
	}
}

/* pc_walk_fed: roots from a callback while the walk goes, a few hundred ahead at most */
#define NFED 1000
struct feeder {
	atomic_int next_calls, files, lead, dups;
	int stop_at;			/* file() stops the walk at this many files; 0: never */
	int pathfd;			/* an O_PATH fd given with root 5, for the walk to close */
	char path[600];
};

static int feed_next(void *arg, const char **path, int *rootfd)
{
	struct feeder *f = arg;
	int i = atomic_fetch_add(&f->next_calls, 1);

	if (i > NFED)
		return 0;
	/* root NFED: the first one again, a file named twice */
	snprintf(f->path, sizeof(f->path), "%s/feed/f%04d", scratch_dir(), i == NFED ? 0 : i);
	*path = f->path;
	if (i == 5) {
		f->pathfd = open(f->path, O_PATH | O_CLOEXEC);
		*rootfd = f->pathfd;
	}
	return 1;
}

static int feed_file(struct pc_walk_entry *e, void *arg)
{
	struct feeder *f = arg;
	int done = atomic_fetch_add(&f->files, 1) + 1, lead = atomic_load(&f->next_calls) - done;

	(void)e;
	if (lead > atomic_load(&f->lead))
		atomic_store(&f->lead, lead);
	return f->stop_at && done >= f->stop_at ? 7 : 0;
}

static void feed_event(enum pc_walk_event ev, const char *path, int err, void *arg)
{
	struct feeder *f = arg;

	(void)path;
	(void)err;
	if (ev == PC_WALK_DUP)
		atomic_fetch_add(&f->dups, 1);
}

static void test_feed(void)
{
	struct feeder f = { .pathfd = -1 };
	struct pc_walk_feed feed = { feed_next, &f };
	struct pc_walk_opts o = { .threads = 3, .file = feed_file, .event = feed_event,
				  .arg = &f, .event_arg = &f };
	char root[600];
	const char *first = root;
	int rc;

	snprintf(root, sizeof(root), "%s", p("feedroot"));	/* p()'s buffers are reused */

	mkdir(p("feedroot"), 0755);
	touch(p("feedroot/x"));
	touch(p("feedroot/y"));
	mkdir(p("feed"), 0755);
	for (int i = 0; i < NFED; i++) {
		char n[32];

		snprintf(n, sizeof(n), "feed/f%04d", i);
		touch(p(n));
	}
	rc = pc_walk_fed(&first, 1, &feed, &o);
	ok(rc == 0, "fed: the walk ends (%d)", rc);
	/* the given root's two files, then the 1,000 fed */
	ok(atomic_load(&f.files) == NFED + 2, "fed: every root walked once (%d)",
	   atomic_load(&f.files));
	ok(atomic_load(&f.dups) == 1, "fed: a root named twice is visited once (%d)",
	   atomic_load(&f.dups));
	ok(atomic_load(&f.lead) <= 256 + 3 + 1, "fed: at most 256 roots read ahead (%d)",
	   atomic_load(&f.lead));
	ok(f.pathfd >= 0 && fcntl(f.pathfd, F_GETFD) < 0 && errno == EBADF,
	   "fed: a root's fd is closed by the walk");

	f = (struct feeder){ .pathfd = -1, .stop_at = 10 };
	rc = pc_walk_fed(NULL, 0, &feed, &o);
	ok(rc == 7, "fed: file()'s stop ends the walk (%d)", rc);
	ok(atomic_load(&f.next_calls) < NFED, "fed: and the feed is read no further (%d)",
	   atomic_load(&f.next_calls));
	if (f.pathfd >= 0)
		ok(fcntl(f.pathfd, F_GETFD) < 0, "fed: a root's fd is closed after a stop too");
	for (int i = 0; i < NFED; i++) {
		char n[32];

		snprintf(n, sizeof(n), "feed/f%04d", i);
		unlink(p(n));
	}
	rmdir(p("feed"));
	unlink(p("feedroot/x"));
	unlink(p("feedroot/y"));
	rmdir(p("feedroot"));
}

int main(void)
{
	struct pc_walk_opts o = { 0 };
	struct seen s;
	const char *root = scratch_dir();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sock;

	mkdir(p("d1"), 0755);
	mkdir(p("d1/d2"), 0755);
	mkdir(p("skipme"), 0755);
	make_file("a", 4096);
	make_file("d1/b", 100);
	make_file("d1/d2/c", 70000);
	make_file("skipme/x", 10);
	make_file("big", 1 << 20);
	link(p("a"), p("d1/a-hardlink"));
	mkfifo(p("fifo"), 0644);
	symlink(".", p("d1/loop"));
	symlink("a", p("link-to-a"));
	symlink("nowhere", p("dangling"));
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p("sock"));
	bind(sock, (struct sockaddr *)&sa, sizeof(sa));

	o.threads = 3;
	walk(root, &o, &s);
	ok(s.n == 5, "five regular files by default, got %d", s.n);
	ok(saw(&s, "a") != saw(&s, "a-hardlink"), "a hardlinked file is visited once");
	ok(saw(&s, "b") && saw(&s, "c") && saw(&s, "big") && saw(&s, "x"), "nested files found");
	ok(s.ev[PC_WALK_SKIP_SPECIAL] == 2, "FIFO and socket skipped, not opened (%d)",
	   s.ev[PC_WALK_SKIP_SPECIAL]);
	ok(s.ev[PC_WALK_SKIP_SYMLINK] == 3, "three symlinks skipped without -L (%d)",
	   s.ev[PC_WALK_SKIP_SYMLINK]);
	ok(s.ev[PC_WALK_DUP] == 1, "one hardlink duplicate reported");
	ok(s.ev[PC_WALK_DIR] == 4, "four directories entered (%d)", s.ev[PC_WALK_DIR]);
	ok(s.ev[PC_WALK_ERROR] == 0, "no errors");

	o = (struct pc_walk_opts){ .threads = 2, .follow = true };
	walk(root, &o, &s);
	ok(s.ev[PC_WALK_SKIP_LOOP] >= 1, "with -L the symlink loop is detected and survived");
	ok(saw(&s, "c"), "with -L files are still found once each");
	ok(s.ev[PC_WALK_ERROR] == 1 && s.last_err == ENOENT, "a dangling symlink is an error");
	{
		/* a file with one link, and a symbolic link to it: -L, once */
		char lk[600];

		snprintf(lk, sizeof(lk), "%s/lk", scratch_dir());
		mkdir(lk, 0755);
		touch(p("lk/one"));
		(void)!symlink("one", p("lk/one-link"));
		o = (struct pc_walk_opts){ .threads = 2, .follow = true };
		walk(lk, &o, &s);
		ok(s.n == 1 && s.ev[PC_WALK_DUP] == 1,
		   "with -L a file also reached through a link is visited once (%d, %d dup)",
		   s.n, s.ev[PC_WALK_DUP]);
		unlink(p("lk/one-link"));	/* the tests below count the tree */
		unlink(p("lk/one"));
		rmdir(lk);
	}
	{
		/*
		 * -L: a link to a directory walked elsewhere is a second name
		 * for it (a hardlink's dup, said nowhere), a link back up the
		 * tree a loop; each walked once, whichever name comes first.
		 */
		char sl[600];

		snprintf(sl, sizeof(sl), "%s/sl", scratch_dir());
		mkdir(sl, 0755);
		mkdir(p("sl/a"), 0755);
		mkdir(p("sl/b"), 0755);
		touch(p("sl/a/f"));
		(void)!symlink("../a", p("sl/b/to-a"));
		o = (struct pc_walk_opts){ .threads = 2, .follow = true };
		walk(sl, &o, &s);
		ok(s.n == 1 && s.ev[PC_WALK_SKIP_LOOP] == 0 && s.ev[PC_WALK_DUP] == 1,
		   "with -L a link to a sibling directory is a dup, not a loop (%d files, "
		   "%d loops, %d dups)", s.n, s.ev[PC_WALK_SKIP_LOOP], s.ev[PC_WALK_DUP]);
		(void)!symlink("..", p("sl/a/up"));
		walk(sl, &o, &s);
		ok(s.n == 1 && s.ev[PC_WALK_SKIP_LOOP] == 1,
		   "  a link back up the tree is the loop (%d files, %d loops)", s.n,
		   s.ev[PC_WALK_SKIP_LOOP]);
		unlink(p("sl/a/up"));
		unlink(p("sl/b/to-a"));
		unlink(p("sl/a/f"));
		rmdir(p("sl/a"));
		rmdir(p("sl/b"));
		rmdir(sl);
	}

	o = (struct pc_walk_opts){ .threads = 1, .all_links = true };
	walk(root, &o, &s);
	ok(s.n == 6, "--all-links visits every hardlink (%d)", s.n);

	{
		const char *exc[] = { "skipme", NULL }, *inc[] = { "?", NULL };

		o = (struct pc_walk_opts){ .exclude = exc, .include = inc };
		walk(root, &o, &s);
		ok(s.n == 3 && saw(&s, "b") && saw(&s, "c"),
		   "include '?' and exclude 'skipme' prune (%d)", s.n);
	}
	o = (struct pc_walk_opts){ .max_size = 65536 };
	walk(root, &o, &s);
	ok(s.ev[PC_WALK_SKIP_SIZE] == 2 && !saw(&s, "big"), "max_size skips larger files");

	/* explicit roots: a file, a FIFO (error, never opened), a missing path */
	{
		const char *roots[] = { p("a"), p("fifo"), p("nope"), p("link-to-a") };

		o = (struct pc_walk_opts){ 0 };
		walk_roots(roots, 4, &o, &s);
		ok(s.n == 1, "a file named twice (once via symlink) is visited once");
		ok(s.ev[PC_WALK_ERROR] == 2, "FIFO and missing root are errors (%d)",
		   s.ev[PC_WALK_ERROR]);
	}

	/* open failure injected: named, not fatal */
	pc_sys_inject(PC_SYS_OPEN, EIO, 0, 1);
	o = (struct pc_walk_opts){ .threads = 1 };
	walk(root, &o, &s);
	ok(s.ev[PC_WALK_ERROR] == 1 && s.last_err == EIO && s.n >= 4,
	   "an EIO on one file is reported and the walk goes on (%d errors, %d files)",
	   s.ev[PC_WALK_ERROR], s.n);
	pc_sys_inject_reset();

	engines_test(root);
	shared_engines_test(root);

	/* stop on request */
	{
		const char *roots[] = { root };

		o = (struct pc_walk_opts){ .threads = 2, .file = stop_cb };
		ok(pc_walk(roots, 1, &o) == 7, "a non-zero return from file() stops the walk");
	}

	race_test();
	special_roots_test();
	root_fds_test();
	flip_test(true);
	others_write_test();
	exchange_test();
	deep_tree_test();

	if (pc_have_cap(CAP_SETUID) && pc_have_cap(CAP_SETGID)) {
		pid_t pid;
		int st;

		mkdir(p("locked"), 0700);
		make_file("locked/secret", 10);
		chmod(root, 0755);
		pid = fork();
		if (pid == 0) {
			if (setgid(65534) || setuid(65534))
				_exit(9);
			o = (struct pc_walk_opts){ .threads = 2 };
			walk(root, &o, &s);
			_exit(s.ev[PC_WALK_ERROR] == 1 && s.last_err == EACCES ? 0 : 1);
		}
		waitpid(pid, &st, 0);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		   "an unreadable directory is a named error (EACCES), the rest is walked");
	} else {
		skip("needs CAP_SETUID and CAP_SETGID: becoming nobody", "unreadable directory");
	}
	/* no queue (pc_openq_new had no memory: walk.c goes on without
	   one): the same opens one by one, not a NULL dereference */
	{
		const char *names[] = { "a", "no-such" };
		int fds[2] = { -1, -1 }, dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		pc_openq_openat(NULL, dfd, names, 2, O_RDONLY | O_NOFOLLOW, fds);
		ok(fds[0] >= 0 && fds[1] == -ENOENT, "no queue: the opens one by one (%d, %d)",
		   fds[0], fds[1]);
		pc_openq_close(NULL, fds[0]);
		pc_openq_flush(NULL);
		close(dfd);
	}
	test_feed();
	close(sock);
	rm_scratch();
	return done_testing();
}
