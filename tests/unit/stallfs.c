/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stallfs.c: a stalled place for the tests (t-record's end phase). A FUSE
 * file system of one empty directory, its root, whose attributes are never
 * cached; once CTL/arm exists, the next request for them is held until
 * CTL/release exists, and CTL/stalled says it is being held. The request
 * is taken off the device first, so the kernel waits it out: no signal,
 * not even SIGKILL, ends the caller's stat before the answer, which is
 * what a hung FUSE server does to a walk.
 *
 * stallfs MOUNTPOINT CTL: it mounts, runs in the foreground, and ends when
 * it is unmounted or killed (which aborts whatever is held).
 *
 * --any-user (t-daemon-hostile): a hostile user's server, as the daemon
 * meets it: mounted allow_other (any user may ask, as under a user's
 * fusermount3 mount with user_allow_other), and once armed its lookups
 * are held too, so a stat or open of MOUNTPOINT/NAME hangs.
 *
 * stallfs --swap FILE OTHER CTL: the trick of a user who mounts FUSE on a
 * regular file it owns (t-stat-uring, issue 21). Mounted on FILE, its root
 * is an empty regular file; CTL/mounted says the mount is up. Once
 * CTL/arm exists, the first request for its attributes made by uid 0 is
 * answered "regular file" only after the server has detached its own
 * mount (umount2 MNT_DETACH) and exchanged FILE with OTHER (a FIFO) as
 * uid 65534 (setfsuid): whoever then opens FILE by name opens the FIFO.
 * CTL/swapped says it was done. It ends when the detached mount's last
 * user lets it go.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ctl;
static int any_user;		/* --any-user: allow_other, lookups held too */
static const char *swap_file, *swap_other;	/* --swap: FILE, OTHER */

static int ctl_has(const char *name)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", ctl, name);
	return access(p, F_OK) == 0;
}

static void ctl_touch(const char *name)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", ctl, name);
	f = fopen(p, "w");
	if (f)
		fclose(f);
}

/* armed: say so in CTL/stalled, and hold the request until CTL/release */
static void hold(void)
{
	if (!ctl_has("arm"))
		return;
	ctl_touch("stalled");
	while (!ctl_has("release"))
		usleep(20000);
}

/* --swap: once armed, root's first getattr finds FILE swapped for OTHER */
static void swap_getattr(fuse_req_t req)
{
	struct stat st = { .st_ino = FUSE_ROOT_ID, .st_mode = S_IFREG | 0644, .st_nlink = 1 };

	if (fuse_req_ctx(req)->uid == 0 && ctl_has("arm") && !ctl_has("swapped")) {
		uid_t was = (uid_t)setfsuid(65534);
		bool done = umount2(swap_file, MNT_DETACH) == 0 &&
			    renameat2(AT_FDCWD, swap_file, AT_FDCWD, swap_other,
				      RENAME_EXCHANGE) == 0;

		setfsuid(was);
		if (done)
			ctl_touch("swapped");
	}
	fuse_reply_attr(req, &st, 0.0);
}

static void sf_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st = { 0 };

	(void)fi;
	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (swap_file) {
		swap_getattr(req);
		return;
	}
	hold();
	st.st_ino = FUSE_ROOT_ID;
	st.st_mode = S_IFDIR | 0755;
	st.st_nlink = 2;
	fuse_reply_attr(req, &st, 0.0);
}

static void sf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent;
	(void)name;
	if (any_user)
		hold();
	fuse_reply_err(req, ENOENT);
}

static void sf_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)ino;
	(void)size;
	(void)off;
	(void)fi;
	fuse_reply_buf(req, NULL, 0);	/* empty */
}

static const struct fuse_lowlevel_ops ops = {
	.getattr = sf_getattr,
	.lookup = sf_lookup,
	.readdir = sf_readdir,
};

int main(int argc, char **argv)
{
	char *fargv[] = { argv[0], "-o", "fsname=pc-stallfs,subtype=pc-stallfs", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se;
	const char *mnt;
	int rc;

	if (argc == 4 && !strcmp(argv[1], "--any-user")) {
		any_user = 1;
		fargv[2] = "fsname=pc-stallfs,subtype=pc-stallfs,allow_other";
		argv++;
		argc--;
	}
	if (argc == 5 && !strcmp(argv[1], "--swap")) {
		swap_file = argv[2];
		swap_other = argv[3];
		ctl = argv[4];
		mnt = swap_file;
	} else if (argc == 3) {
		ctl = argv[2];
		mnt = argv[1];
	} else {
		fprintf(stderr, "usage: stallfs [--any-user] MOUNTPOINT CTL | "
				"stallfs --swap FILE OTHER CTL\n");
		return 2;
	}
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	fuse_opt_free_args(&args);
	if (!se)
		return 1;
	if (fuse_session_mount(se, mnt) != 0) {
		fuse_session_destroy(se);
		return 1;
	}
	if (swap_file)
		ctl_touch("mounted");
	rc = fuse_session_loop(se);
	fuse_session_unmount(se);
	fuse_session_destroy(se);
	return rc ? 1 : 0;
}
