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
 * A directory record (version 5) is read as restore reads it
 * (pc_fsmeta_read: its entries statx()ed): that must open, list or stat
 * nothing outside the root either (inotify watches "out" for IN_OPEN and
 * IN_ACCESS: a directory listed is opened and read).
 * Each input is read twice: as a snapshot, and as the contents of one
 * FILES section (its first byte picks the version, 1 + byte % 5) put
 * into a snapshot with the right lengths and checksum, so mutations reach
 * the records' decoder, not only the checksums in front of it.
 * `make fuzz` runs it under libFuzzer; `make check` replays the corpus.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "internal.h"	/* pc_fsmeta_read: restore's directory reads */

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
#include <zlib.h>

static int rootfd = -1, watch = -1;
static ino_t inside[8];
static size_t ninside;
static char scratch[256];

static void put(const char *rel, int kind, const char *target)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", scratch, rel);
	if (kind == 'd' || kind == 'D')
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
	if (kind == 'D')	/* a directory outside: never opened or listed */
		inotify_add_watch(watch, p, IN_OPEN | IN_ACCESS);
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
	put("out", 'D', NULL);
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
	{	/* what making the tree did in the watched directory is not restore's */
		char ev[4096];

		while (read(watch, ev, sizeof(ev)) > 0)
			;
	}
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

static void decode(const uint8_t *data, size_t size)
{
	struct pc_profile_reader *r;
	struct pc_profile_file f;
	char err[256];

	if (pc_profile_open_mem(data, size, &r, err, sizeof(err)) < 0)
		return;
	while (pc_profile_next(r, &f) > 0) {
		if (f.ident & PC_IDENT_DIR) {
			struct pc_fsmeta_dir d = { .path = f.path, .whole = true };
			struct pc_fsmeta_result res;
			char ev[4096];

			pc_fsmeta_read(rootfd, &d, 1, 0, &res);
			if (read(watch, ev, sizeof(ev)) > 0) {
				fprintf(stderr, "'%s' read something outside the root\n", f.path);
				abort();
			}
		} else if (!(f.ident & PC_IDENT_BDEV)) {	/* a device's name: never opened so */
			open_as_restore(f.path);
		}
		pc_profile_file_release(&f);
	}
	pc_profile_close(r);
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static size_t section(uint8_t *out, uint32_t type, const uint8_t *raw, size_t len)
{
	uLongf clen = compressBound(len);

	if (compress2(out + 16, &clen, raw, len, 1) != Z_OK)
		return 0;
	le32(out, type);
	le32(out + 4, (uint32_t)len);
	le32(out + 8, (uint32_t)clen);
	le32(out + 12, (uint32_t)crc32(0, raw, len));
	return 16 + clen;
}

/* header, META (root "r", host "h", version 3's fields), FILES (the input), END (1, 1) */
static void decode_as_files(const uint8_t *data, size_t size)
{
	static const uint8_t meta[] = { 1, 'r', 1, 'h', 0, 0, 0 }, end[] = { 1, 1 };
	uint32_t version = 1 + data[0] % 5;
	uint8_t *out = malloc(32 + 3 * 16 + compressBound(size) + 64);
	size_t o = 32;

	if (!out)
		return;
	memset(out, 0, 32);
	memcpy(out, "PCSNAP1\n", 8);
	le32(out + 8, version);
	le32(out + 12, 4096);
	le32(out + 28, (uint32_t)crc32(0, out, 28));
	o += section(out + o, 1, meta, version >= 3 ? sizeof(meta) : 4);
	o += section(out + o, 2, data + 1, size - 1);
	o += section(out + o, 3, end, sizeof(end));
	decode(out, o);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (rootfd < 0)
		setup();
	decode(data, size);
	if (size > 1 && size < (1u << 20))
		decode_as_files(data, size);
	return 0;
}
