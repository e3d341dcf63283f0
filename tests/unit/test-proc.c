/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc.c: the maps record parser (every field well formed, or nothing),
 * and pc_file_mappers finding this very process.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "tap.h"

#include <sys/mman.h>
#include <sys/sysmacros.h>

static int parse(const char *text, struct pc_map *m)
{
	static char buf[8192];

	snprintf(buf, sizeof(buf), "%s", text);
	return pc_map_parse(buf, m);
}

int main(void)
{
	struct pc_map m;
	char big[6000];

	ok(parse("55583ee3e000-55583ee40000 r--p 00002000 fe:01 247134"
		 "                     /usr/bin/cat\n", &m) == 0 &&
	   m.start == 0x55583ee3e000ull && m.end == 0x55583ee40000ull && m.offset == 0x2000 &&
	   m.dev == makedev(0xfe, 1) && m.ino == 247134 && !strcmp(m.perms, "r--p") &&
	   !strcmp(m.name, "/usr/bin/cat"), "a file record, every field");
	ok(parse("5636c092d000-5636c093d000 rw-p 00000000 00:00 0 \n", &m) == 0 && m.ino == 0 &&
	   !strcmp(m.name, ""), "an anonymous record: no name");
	ok(parse("7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]", &m) ==
	   0 && !strcmp(m.name, "[stack]"), "no trailing newline, a bracketed name");
	ok(parse("1000-2000 r--s 00000000 08:01 12 /a b\\012c (deleted)\n", &m) == 0 &&
	   !strcmp(m.name, "/a b\\012c (deleted)"), "the name is kept as printed");

	ok(parse("", &m) == -EINVAL, "empty");
	ok(parse("\n", &m) == -EINVAL, "a bare newline");
	ok(parse("/tmp/x/1000-2000 r--p 00000000 08:01 12 /etc/shadow\n", &m) == -EINVAL,
	   "the tail of a long name");
	ok(parse("-1000-2000 r--p 00000000 08:01 12 /etc/shadow\n", &m) == -EINVAL, "a leading dash");
	ok(parse("1000-2000 r--p 00000000 08:01 12\n", &m) == -EINVAL, "no space after the inode");
	ok(parse("1000-2000 r--p 00000000 08:01 /etc/shadow\n", &m) == -EINVAL, "no inode");
	ok(parse("1000-2000 r--q 00000000 08:01 12 /x\n", &m) == -EINVAL, "bad perms");
	ok(parse("1000-2000 r--p 00000000 0801 12 /x\n", &m) == -EINVAL, "no colon in dev");
	ok(parse("1000-2000 r--p 00000000 08:01 12a /x\n", &m) == -EINVAL, "junk in the inode");
	ok(parse("2000-1000 r--p 00000000 08:01 12 /x\n", &m) == -EINVAL, "an empty range");
	ok(parse("1000-2000  r--p 00000000 08:01 12 /x\n", &m) == -EINVAL, "two spaces");
	ok(parse("1000-2000 r--p 00000000 08:01 99999999999999999999999 /x\n", &m) == -EINVAL,
	   "an inode past 64 bits");
	ok(parse("11112222333344445-ffffffffffffffffff r--p 0 08:01 1 /x\n", &m) == -EINVAL,
	   "an address past 64 bits");
	ok(parse("1000-2000 R--P 00000000 08:01 12 /x\n", &m) == -EINVAL, "uppercase perms");
	ok(parse("1000-2000 r--p 00000000 08:01 12 /x\n1000-2000 r--p 0 08:01 13 /y\n", &m) ==
	   -EINVAL, "two lines in one");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	memcpy(big, "1000-2000 r--p 00000000 08:01 12 /", 34);
	ok(parse(big, &m) == 0 && strlen(m.name) == sizeof(big) - 34, "a name past 4 KiB, whole");

	/* pc_file_mappers finds us mapping a file of our own */
	{
		char tmpl[] = "/tmp/pc-test-proc-XXXXXX";
		int fd = mkstemp(tmpl);
		struct pc_mapper mp[8];
		struct stat st;
		void *p;
		int n, self = 0;

		if (fd < 0 || ftruncate(fd, 4096) < 0 || fstat(fd, &st) < 0) {
			skip("cannot make a temporary file", "mappers");
		} else {
			p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
			n = pc_file_mappers(st.st_dev, st.st_ino, mp, 8);
			for (int i = 0; i < n; i++)
				self |= mp[i].pid == getpid() && !mp[i].locked;
			if (!self && pc_fd_stack_ids(fd, (dev_t[2]){ 0 }, (uint64_t[2]){ 0 }, 2,
						     &(bool){ false }) > 0)
				skip("/tmp is on an overlay: maps name its real file, not stat's "
				     "(dev, ino); pc_fd_mappers finds it", "pc_file_mappers finds this process");
			else
				ok(p != MAP_FAILED && self, "pc_file_mappers finds this process (%d found)", n);
			n = pc_fd_mappers(fd, mp, 8);
			self = 0;
			for (int i = 0; i < n; i++)
				self |= mp[i].pid == getpid() && !mp[i].locked;
			ok(p != MAP_FAILED && self, "pc_fd_mappers finds this process (%d found)", n);
			if (p != MAP_FAILED)
				munmap(p, 4096);
		}
		if (fd >= 0) {
			close(fd);
			unlink(tmpl);
		}
	}
	/*
	 * A name long enough that a fixed buffer would split its line: the
	 * piece after the split looks like a record of another file (victim)
	 * that this process never maps. Nobody may be named as its mapper.
	 */
	{
		const char *dir = scratch_dir();
		char *victim = make_file("victim", 4096), path[1024], sub[600], *line = NULL;
		struct pc_mapper mp[8];
		struct stat vst, st;
		size_t cap = 0;
		long name_off = -1;
		int fd, n, self = 0;
		void *p;
		FILE *f;

		snprintf(path, sizeof(path), "%s/short", dir);
		fd = open(path, O_RDWR | O_CREAT, 0600);
		if (fd < 0 || ftruncate(fd, 4096) < 0 || stat(victim, &vst) < 0 || fstat(fd, &st) < 0)
			return ok(0, "cannot make the files"), done_testing();
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		f = fopen("/proc/self/maps", "re");
		while (f && getline(&line, &cap, f) > 0)
			if (strstr(line, path))
				name_off = strstr(line, path) - line;
		if (f)
			fclose(f);
		if (p == MAP_FAILED || name_off < 0 || strlen(dir) > 200) {
			skip("cannot find our mapping in /proc/self/maps", "a split line");
		} else {
			/* the forged record starts at byte 511 of the line */
			long k = 511 - name_off, n1 = 200, n2 = k - (long)strlen(dir) - 2 - n1;
			char forged[128], newpath[1024];

			snprintf(sub, sizeof(sub), "%s/%0*d", dir, (int)n1, 0);
			snprintf(forged, sizeof(forged), "1000-2000 r--p 00000000 %02x:%02x %llu z",
				 major(vst.st_dev), minor(vst.st_dev), (unsigned long long)vst.st_ino);
			snprintf(newpath, sizeof(newpath), "%s/%0*d%s", sub, (int)n2, 0, forged);
			if (n2 < 0 || mkdir(sub, 0700) < 0 || rename(path, newpath) < 0) {
				skip("cannot rename the mapped file", "a split line");
			} else {
				n = pc_file_mappers(vst.st_dev, vst.st_ino, mp, 8);
				for (int i = 0; i < n; i++)
					self |= mp[i].pid == getpid();
				ok(!self, "a long name's tail is not a record of its own");
				n = pc_fd_mappers(fd, mp, 8);	/* on an overlay: by its real file */
				for (int i = 0; i < n; i++)
					self |= mp[i].pid == getpid();
				ok(self, "and the long-named file is still found");
				unlink(newpath);
				rmdir(sub);
			}
			munmap(p, 4096);
		}
		free(line);
		close(fd);
		unlink(path);
		unlink(victim);
		rm_scratch();
	}
	return done_testing();
}
