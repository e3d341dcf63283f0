/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-profile.c: libFuzzer harness for the snapshot decoder and for what
 * restore does with the paths it decodes. Any input must end in a clean
 * end, a clear -EBADMSG, or -ENOMEM; never a crash, a leak or an
 * unbounded allocation. Every decoded path is then opened the way restore
 * opens it (pc_open_beneath) beneath a scratch root whose tree is hostile:
 * links out of it on the way and at the end, a FIFO, a device (as root).
 * What opens must be one of the root's own regular files, and inotify must
 * see no open of anything outside the root, nor of the FIFO or device.
 * `make fuzz` runs it under libFuzzer; `make check` replays the corpus.
 */
#define _GNU_SOURCE
#include "pagecache.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int rootfd = -1, watch = -1;
static ino_t inside[8];
static size_t ninside;
static char scratch[256];

static void put(const char *rel, int kind, const char *target)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", scratch, rel);
	if (kind == 'd')
		mkdir(p, 0755);
	else if (kind == 'l')
		(void)!symlink(target, p);
	else if (kind == 'p')
		mkfifo(p, 0644);
	else if (kind == 'c')
		mknod(p, S_IFCHR | 0644, makedev(1, 3));
	else {
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		struct stat st;

		if (fd >= 0) {
			(void)!write(fd, "x", 1);
			if (kind == 'f' && fstat(fd, &st) == 0)
				inside[ninside++] = st.st_ino;
			close(fd);
		}
	}
	if (kind == 'o' || kind == 'p' || kind == 'c')
		inotify_add_watch(watch, p, IN_OPEN);
}

static void cleanup(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	(void)!system(cmd);
}

/* root/{a/f,b,f,a/up->../../out,out->../out,fifo,dev}, out/{secret,f} */
static void setup(void)
{
	snprintf(scratch, sizeof(scratch), "%s/pc-fuzz-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(scratch))
		abort();
	atexit(cleanup);
	watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	put("root", 'd', NULL);
	put("out", 'd', NULL);
	put("out/secret", 'o', NULL);
	put("out/f", 'o', NULL);
	put("root/a", 'd', NULL);
	put("root/a/f", 'f', NULL);
	put("root/b", 'f', NULL);
	put("root/f", 'f', NULL);
	put("root/a/up", 'l', "../../out");
	put("root/out", 'l', "../out");
	put("root/a/secret", 'l', "../../out/secret");
	put("root/fifo", 'p', NULL);
	if (geteuid() == 0)
		put("root/dev", 'c', NULL);
	{
		char p[300];

		snprintf(p, sizeof(p), "%s/root", scratch);
		rootfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (rootfd < 0 || watch < 0)
		abort();
}

static void open_as_restore(const char *path)
{
	struct stat st;
	char ev[4096];
	int fd = pc_open_beneath(rootfd, path, O_NOATIME, &st);
	bool ok = false;

	if (fd >= 0) {
		for (size_t i = 0; i < ninside; i++)
			ok |= st.st_ino == inside[i];
		close(fd);
		if (!ok) {
			fprintf(stderr, "'%s' opened a file that is not the root's own\n", path);
			abort();
		}
	}
	if (read(watch, ev, sizeof(ev)) > 0) {
		fprintf(stderr, "'%s' opened something outside the root, a FIFO or a device\n", path);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pc_profile_reader *r;
	struct pc_profile_file f;
	char err[256];

	if (rootfd < 0)
		setup();
	if (pc_profile_open_mem(data, size, &r, err, sizeof(err)) < 0)
		return 0;
	while (pc_profile_next(r, &f) > 0) {
		if (!(f.ident & PC_IDENT_BDEV))	/* a device's name, not a path: restore never opens it so */
			open_as_restore(f.path);
		pc_profile_file_release(&f);
	}
	pc_profile_close(r);
	return 0;
}
