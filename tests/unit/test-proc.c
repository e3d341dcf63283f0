/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc.c: the maps record parser (every field well formed, or nothing),
 * and pc_file_mappers finding this very process. target.c: the files a
 * child process maps and holds open to read, found and pinned, and not
 * one it holds O_PATH only; by its pid, as its parent's child, and as the
 * process of a cgroup.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "internal.h"	/* target.c */
#include "tap.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

static int parse(const char *text, struct pc_map *m)
{
	static char buf[8192];

	snprintf(buf, sizeof(buf), "%s", text);
	return pc_map_parse(buf, m);
}

/* Write text to path (NULL: just make it). */
static void fake_procs(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		if (text)
			fputs(text, f);
		fclose(f);
	}
}

/* What pc_target offered: names, and whether each fd is the file it says. */
struct found {
	char names[32][600];
	int n, fails, last_err, pinned_ok;
	enum pc_target_fail_kind last_kind;
	const char *mapped, *held, *pathonly;	/* the child's files */
	pid_t pid;
};

static int on_file(const struct pc_target_file *f, void *arg)
{
	struct found *fo = arg;
	struct stat st;

	/* only the child's files are taken: the test's own are left (closed) */
	if (f->pid != fo->pid)
		return 0;
	if (fo->n < 32)
		snprintf(fo->names[fo->n++], sizeof(fo->names[0]), "%s", f->name);
	if (fstat(f->fd, &st) == 0 && st.st_dev == f->st->st_dev && st.st_ino == f->st->st_ino &&
	    S_ISREG(st.st_mode))
		fo->pinned_ok++;
	close(f->fd);
	return 1;
}

static void on_fail(const struct pc_target_fail *f, void *arg)
{
	struct found *fo = arg;

	fo->fails++;
	fo->last_err = f->err;
	fo->last_kind = f->kind;
}

/* Was the file at path offered, by its name or a magic link of pid's? */
static bool offered(const struct found *fo, const char *path)
{
	char link[64];

	snprintf(link, sizeof(link), "/proc/%d/map_files/", (int)fo->pid);
	for (int i = 0; i < fo->n; i++)
		if (!strcmp(fo->names[i], path) || (path == fo->mapped &&
						      !strncmp(fo->names[i], link, strlen(link))))
			return true;
	return false;
}

static void test_target(void)
{
	char mapped[600], held[600], pathonly[600], cgdir[700], procs[800];
	struct found fo = { .fails = 0 };
	struct pc_target t = { .file = on_file, .fail = on_fail, .arg = &fo };
	int ready[2], go[2], rc;
	pid_t pid;
	void *a;
	char c;

	snprintf(mapped, sizeof(mapped), "%s", make_file("target-mapped", 8192));
	snprintf(held, sizeof(held), "%s", make_file("target-held", 4096));
	snprintf(pathonly, sizeof(pathonly), "%s", make_file("target-pathonly", 4096));
	if (pipe(ready) < 0 || pipe(go) < 0)
		return (void)ok(0, "pipe");
	pid = fork();
	if (pid == 0) {
		int m, h, p;

		close(go[1]);	/* its end: the parent's close is the child's cue */
		close(ready[0]);
		m = open(mapped, O_RDONLY);
		h = open(held, O_RDONLY);
		p = open(pathonly, O_PATH);
		a = m >= 0 ? mmap(NULL, 8192, PROT_READ, MAP_SHARED, m, 0) : MAP_FAILED;
		if (m >= 0)
			close(m);	/* only the mapping is left of it */
		c = a != MAP_FAILED && h >= 0 && p >= 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (pid < 0 || read(ready[0], &c, 1) != 1 || c != 'y') {
		ok(0, "a child that maps and holds files (%s)", pid < 0 ? strerror(errno) : "not ready");
		goto out;
	}
	fo.pid = pid;
	fo.mapped = mapped;
	fo.held = held;
	fo.pathonly = pathonly;
	rc = pc_target_pid(&t, pid);
	ok(rc == 0 && !fo.fails, "pc_target_pid reads the child's files (%d, %d failures)", rc, fo.fails);
	ok(offered(&fo, mapped), "the file it maps is found (%d found: %s)", fo.n, fo.names[0]);
	ok(offered(&fo, held), "the file it holds open to read is found");
	ok(!offered(&fo, pathonly), "the file it holds O_PATH only is not");
	ok(fo.n && fo.pinned_ok == fo.n, "each is pinned, on the very regular file (%d of %d)",
	   fo.pinned_ok, fo.n);
	fo.n = fo.pinned_ok = 0;
	rc = pc_target_pid(&t, pid);
	ok(rc == 0 && fo.n == 0, "a file taken is not offered again (%d)", fo.n);
	pc_target_release(&t);

	/* as this process's child */
	fo.n = fo.pinned_ok = 0;
	t.children = true;
	rc = pc_target_pid(&t, getpid());
	ok(rc == 0 && offered(&fo, mapped) && offered(&fo, held) && !offered(&fo, pathonly),
	   "with children: the child's files, found from its parent (%d)", fo.n);
	pc_target_release(&t);
	t.children = false;

	/* as the process of a cgroup: a directory of cgroup.procs files */
	snprintf(cgdir, sizeof(cgdir), "%s/cg", scratch_dir());
	snprintf(procs, sizeof(procs), "%s/sub", cgdir);
	mkdir(cgdir, 0755);
	mkdir(procs, 0755);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgdir);
	fake_procs(procs, "");
	snprintf(procs, sizeof(procs), "%s/sub/cgroup.procs", cgdir);
	fake_procs(procs, NULL);
	{
		char line[32];

		snprintf(line, sizeof(line), "%d\n", (int)pid);
		fake_procs(procs, line);
	}
	fo.n = fo.pinned_ok = 0;
	rc = pc_target_cgroup(&t, cgdir);
	ok(rc == 0 && offered(&fo, mapped) && offered(&fo, held) && !offered(&fo, pathonly),
	   "pc_target_cgroup: the files of a process in a cgroup below (%d)", rc);
	pc_target_release(&t);
	snprintf(procs, sizeof(procs), "%s/none", cgdir);
	ok(pc_target_cgroup(&t, procs) == -ENOENT, "a cgroup that is not there: -ENOENT");
	snprintf(procs, sizeof(procs), "rm -rf '%s'", cgdir);
	if (system(procs) != 0)
		fprintf(stderr, "# could not remove %s\n", cgdir);
out:
	close(go[1]);	/* the child ends */
	close(ready[0]);
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		fo.fails = 0;
		rc = pc_target_pid(&t, pid);
		ok(rc == -ENOENT && fo.fails == 1 && fo.last_kind == PC_TARGET_PROCESS &&
		   fo.last_err == ENOENT, "a process gone: a failure of its files, -ENOENT (%d)", rc);
		pc_target_release(&t);
	}
	unlink(mapped);
	unlink(held);
	unlink(pathonly);
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
	test_target();
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
