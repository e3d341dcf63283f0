/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace.c: a read of a known page range is seen as GET_PAGES for exactly
 * that file and range, and ADD for its pages after a DONTNEED; pid mode
 * sees our children only when asked, cgroup mode only the cgroup's tasks;
 * an overflowing ring counts what it lost (handed + lost == made); the
 * errors are clear (no privilege, bad options); pc_inode_open finds the
 * file from (dev, ino); and close leaves no perf fd, no tracefs mount.
 * Before 6.12 (for real, or pretended: PC_SYS_TRACE_USE), the use events
 * are refused saying so, and a trace that may do without them opens on add
 * alone and sees the misses; the use events' checks skip, saying why.
 * pc_task_trace: a child's fork and exec are seen with its name, system-wide
 * and for that pid alone, and nothing of another process in pid mode.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "sys.h"		/* the seam: pc_sys_inject (lib/sys.h) */
#include "tap.h"

#include <dirent.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#define FILE_PAGES 64

struct seen {
	uint64_t dev, ino;
	uint32_t pid;			/* 0: any */
	uint64_t n, nother;		/* events of the file, of others (get_pages) */
	uint64_t lo, hi;		/* union of the file's ranges */
	unsigned kinds;
	uint64_t add_lo, add_hi, nadd;
	uint64_t cgroup;
	uint32_t last_pid;
	bool ino_only;			/* any device (see main: a layer out of reach) */
};

static int collect(const struct pc_trace_event *e, void *arg)
{
	struct seen *s = arg;

	if ((e->dev != s->dev && !s->ino_only) || e->ino != s->ino || (s->pid && e->pid != s->pid)) {
		if (e->kind == PC_TR_GET_PAGES)
			s->nother++;
		return 0;
	}
	s->kinds |= e->kind;
	s->last_pid = e->pid;
	s->cgroup = e->cgroup;
	if (e->kind == PC_TR_ADD) {
		if (!s->nadd++ || e->first < s->add_lo)
			s->add_lo = e->first;
		if (e->last > s->add_hi)
			s->add_hi = e->last;
		return 0;
	}
	if (e->kind != PC_TR_GET_PAGES)
		return 0;
	if (!s->n++ || e->first < s->lo)
		s->lo = e->first;
	if (e->last > s->hi)
		s->hi = e->last;
	return 0;
}

static bool ino_only;

static void seen_init(struct seen *s, const struct stat *st)
{
	memset(s, 0, sizeof(*s));
	s->dev = st->st_dev;
	s->ino = st->st_ino;
	s->ino_only = ino_only;
}

static int perf_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d))) {
		char p[300], l[256];
		ssize_t k;

		snprintf(p, sizeof(p), "/proc/self/fd/%s", de->d_name);
		k = readlink(p, l, sizeof(l) - 1);
		if (k > 0) {
			l[k] = 0;
			n += strstr(l, "perf_event") != NULL;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static int tracefs_mounts(void)
{
	char *s = slurp("/proc/self/mountinfo"), *p = s;
	int n = 0;

	while (p && (p = strstr(p, " - tracefs "))) {
		n++;
		p++;
	}
	return n;
}

static void read_pages(int fd, uint64_t first, uint64_t count)
{
	uint64_t ps = pc_page_size();
	char *buf = malloc(count * ps);

	if (pread(fd, buf, count * ps, (off_t)(first * ps)) != (ssize_t)(count * ps))
		perror("pread");
	free(buf);
}

static int open_trace(unsigned kinds, pid_t pid, bool children, int cgfd, unsigned ring,
		      struct pc_trace **t, char *err, size_t errlen)
{
	struct pc_trace_opts o = { .kinds = kinds, .pid = pid, .children = children,
				   .cgroup_fd = cgfd, .ring_pages = ring };

	return pc_trace_open(&o, t, err, errlen);
}

/* A child of ours that takes away CAP_PERFMON and CAP_SYS_ADMIN, then opens. */
static int unprivileged_open(char *err, size_t errlen)
{
	int p[2];
	pid_t c;
	int rc = 0;

	if (pipe(p) < 0)
		return -errno;
	c = fork();
	if (c == 0) {
		struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		struct pc_trace *t;
		char e[512] = "";

		syscall(SYS_capget, &hdr, d);
		for (int cap = 0; cap < 64; cap++)
			if (cap == CAP_PERFMON || cap == CAP_SYS_ADMIN)
				d[cap / 32].effective &= ~(1u << (cap % 32));
		syscall(SYS_capset, &hdr, d);
		rc = open_trace(PC_TR_GET_PAGES, 0, false, -1, 0, &t, e, sizeof(e));
		if (!rc)
			pc_trace_close(t);
		(void)!write(p[1], &rc, sizeof(rc));
		(void)!write(p[1], e, strlen(e) + 1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &rc, sizeof(rc)) != sizeof(rc))
		rc = 1;
	err[read(p[0], err, errlen - 1) > 0 ? errlen - 1 : 0] = 0;
	close(p[0]);
	waitpid(c, NULL, 0);
	return rc;
}

/*
 * A kernel without the use events (before 6.12): pretended here through
 * the fault seam, and true there. Asked for, they are refused saying why;
 * optional, the trace opens without them and still sees the misses.
 */
static void before_612(int fd, const struct stat *st)
{
	struct pc_trace *t = NULL;
	struct pc_trace_opts o = { .kinds = PC_TR_ADD | PC_TR_USE, .optional = PC_TR_USE,
				   .pid = getpid(), .cgroup_fd = -1 };
	struct seen s;
	char err[512] = "";
	int rc;

	pc_sys_inject(PC_SYS_TRACE_USE, ENOENT, 0, 0);
	rc = open_trace(PC_TR_GET_PAGES | PC_TR_ADD, getpid(), false, -1, 0, &t, err, sizeof(err));
	ok(rc == -ENOENT && strstr(err, "mm_filemap_get_pages") && strstr(err, "6.12"),
	   "before 6.12: the use events asked for are refused, saying so (%s)", err);
	if (!rc)
		pc_trace_close(t);
	rc = pc_trace_open(&o, &t, err, sizeof(err));
	if (ok(rc == 0, "before 6.12: optional use events: it opens without them (%s)",
	       rc ? err : "ok")) {
		ok(pc_trace_kinds(t) == PC_TR_ADD, "pc_trace_kinds says: add only (%#x)",
		   pc_trace_kinds(t));
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		read_pages(fd, 44, 3);	/* pages 44..46, a miss each */
		seen_init(&s, st);
		pc_trace_drain(t, collect, &s);
		ok(s.nadd > 0 && s.add_lo <= 44 && s.add_hi >= 46 && s.n == 0,
		   "before 6.12: the misses of 44..46 are seen, and no use event (%llu adds, "
		   "%llu..%llu)", (unsigned long long)s.nadd, (unsigned long long)s.add_lo,
		   (unsigned long long)s.add_hi);
		pc_trace_close(t);
	}
	/*
	 * Without children, pid mode keeps this process's events only; the
	 * kprobe counter is inherited by every process it forks and cannot
	 * tell them apart: a child's 150 hits must not be counted as ours.
	 */
	o.count_accessed = true;
	rc = pc_trace_open(&o, &t, err, sizeof(err));
	if (!rc) {
		uint64_t n0 = 0, n1 = 0;
		int arc = pc_trace_accessed(t, &n0, NULL);
		pid_t kid;

		read_pages(fd, 44, 3);	/* cached */
		if ((kid = fork()) == 0) {
			for (int i = 0; i < 50; i++)
				read_pages(fd, 44, 3);
			_exit(0);
		}
		waitpid(kid, NULL, 0);
		if (arc == 0)
			pc_trace_accessed(t, &n1, NULL);
		ok(arc != 0 || n1 - n0 < 150, "pid mode without children: a child's 150 hits are not "
		   "counted as the process's (%d, %llu)", arc, (unsigned long long)(n1 - n0));
		pc_trace_close(t);
	}
	/* the hits' fallback: a kprobe counter where the kernel has kprobes */
	o.children = true;
	rc = pc_trace_open(&o, &t, err, sizeof(err));
	if (!rc) {
		uint64_t n0 = 0, n1 = 0;
		const char *func = "?";
		int arc = pc_trace_accessed(t, &n0, &func);

		if (access("/sys/bus/event_source/devices/kprobe", F_OK) < 0) {
			ok(arc == -ENOENT, "no kprobe PMU: no count of pages accessed, -ENOENT (%d)", arc);
		} else if (ok(arc == 0, "a kprobe counts pages accessed (%s: %d)", func, arc)) {
			read_pages(fd, 44, 3);	/* cached now: three hits */
			pc_trace_accessed(t, &n1, NULL);
			ok(n1 - n0 >= 3, "  our read of 3 cached pages counts 3 or more (%llu)",
			   (unsigned long long)(n1 - n0));
		}
		pc_trace_close(t);
	}
	o.count_accessed = false;
	o.children = false;
	o.kinds = o.optional = PC_TR_USE;
	rc = pc_trace_open(&o, &t, err, sizeof(err));
	ok(rc == -ENOENT, "before 6.12: nothing left to open: -ENOENT (%s)", err);
	if (!rc)
		pc_trace_close(t);
	pc_sys_inject_reset();
}

struct tasks_seen {
	pid_t child;
	bool fork, comm, other;
};

static int task_seen(const struct pc_task_event *e, void *arg)
{
	struct tasks_seen *s = arg;

	if (e->kind == PC_TASK_FORK && e->pid == (uint32_t)s->child && e->ppid == (uint32_t)getpid())
		s->fork = true;
	else if (e->kind == PC_TASK_COMM && e->pid == (uint32_t)s->child && !strcmp(e->comm, "true"))
		s->comm = true;
	else if (e->pid != (uint32_t)s->child)
		s->other = true;
	return 0;
}

/* A child that execs true once go[] is written to (pid mode: opened before it may). */
static pid_t true_child(int go[2])
{
	pid_t c;

	if (pipe(go) < 0)
		return -1;
	c = fork();
	if (c == 0) {
		char b;

		close(go[1]);
		if (read(go[0], &b, 1) == 1)
			execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	return c;
}

static void task_names(void)
{
	struct pc_task_trace *tt = NULL;
	struct tasks_seen s = { 0 };
	int go[2], rc;

	ok(pc_task_trace_open(-1, false, &tt) == -EINVAL, "task trace: a negative pid is refused");
	rc = pc_task_trace_open(0, false, &tt);
	if (!ok(rc == 0, "task trace: opens system-wide (%d)", rc))
		return;
	s.child = true_child(go);
	if (write(go[1], "g", 1) != 1)
		s.child = -1;
	close(go[1]);
	waitpid(s.child, NULL, 0);
	rc = pc_task_trace_drain(tt, task_seen, &s);
	ok(rc > 0 && s.fork && s.comm, "system-wide: the child's fork and its exec's name 'true' "
	   "(%d records; fork %d, comm %d)", rc, s.fork, s.comm);
	pc_task_trace_close(tt);

	memset(&s, 0, sizeof(s));
	s.child = true_child(go);
	rc = pc_task_trace_open(s.child, false, &tt);
	if (write(go[1], "g", 1) != 1)
		rc = -EIO;
	close(go[1]);
	waitpid(s.child, NULL, 0);
	if (ok(rc == 0, "task trace: opens for one pid (%d)", rc)) {
		rc = pc_task_trace_drain(tt, task_seen, &s);
		ok(rc > 0 && s.comm && !s.other, "pid mode: its name 'true', nothing of others "
		   "(%d records; comm %d, other %d)", rc, s.comm, s.other);
		pc_task_trace_close(tt);
	}
	pc_task_trace_close(NULL);
}

int main(void)
{
	char *path, err[512], ppath[600], link[4096];
	struct pc_trace *t = NULL;
	struct seen s;
	struct stat st;
	int fd, rc, fds0, mounts0;
	uint64_t ps = pc_page_size();
	bool stacked = false;

	if (!pc_have_cap(CAP_PERFMON) && !pc_have_cap(CAP_SYS_ADMIN)) {
		skip("needs CAP_PERFMON or CAP_SYS_ADMIN (run as root)", "tracing the filemap events");
		return done_testing();
	}
	fds0 = perf_fds();
	mounts0 = tracefs_mounts();
	path = make_file("traced", FILE_PAGES * ps);
	fd = open(path, O_RDONLY);
	fstat(fd, &st);
	{
		/* on an overlay the events name the real file in its layer */
		dev_t d[6];
		uint64_t i[6];
		bool real;
		int n = pc_fd_stack_ids(fd, d, i, 6, &real);
		struct statfs sf;

		if (n > 0 && real) {
			st.st_dev = d[0];
			st.st_ino = (ino_t)i[0];
			stacked = true;
		} else if (fstatfs(fd, &sf) == 0 && sf.f_type == OVERLAYFS_SUPER_MAGIC) {
			/*
			 * The real file is out of reach (a container's layers,
			 * the host's paths): the events name its device, which
			 * we cannot tell, but the overlay shows its inode number
			 * (without xino): the events are matched by that alone
			 */
			ino_only = true;
		}
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);	/* no readahead: only what we ask */
	drop_file(path);

	before_612(fd, &st);
	rc = open_trace(PC_TR_GET_PAGES | PC_TR_ADD, getpid(), false, -1, 0, &t, err, sizeof(err));
	if (rc == -ENOENT && strstr(err, "6.12")) {
		skip(err, "the checks of the use events (get_pages, map_pages, fault)");
		close(fd);
		rm_scratch();
		task_names();
		ok(perf_fds() == fds0, "no perf fd left open (%d before, %d after)", fds0, perf_fds());
		return done_testing();
	}
	if (!ok(rc == 0, "open pid mode for ourselves (%s)", rc ? err : "ok")) {
		rm_scratch();
		return done_testing();
	}
	ok(pc_trace_fd(t) >= 0, "a poll fd");
	read_pages(fd, 8, 4);			/* pages 8..11 */
	seen_init(&s, &st);
	rc = pc_trace_drain(t, collect, &s);
	ok(rc > 0, "drain hands events (%d)", rc);
	ok(s.n > 0 && s.lo == 8 && s.hi == 11,
	   "GET_PAGES for exactly this dev/ino covers pages 8..11 (%llu events, %llu..%llu)",
	   (unsigned long long)s.n, (unsigned long long)s.lo, (unsigned long long)s.hi);
	ok(s.nadd > 0 && s.add_lo <= 8 && s.add_hi >= 11,
	   "ADD after DONTNEED brings in 8..11 (%llu events, %llu..%llu)",
	   (unsigned long long)s.nadd, (unsigned long long)s.add_lo, (unsigned long long)s.add_hi);
	ok(s.last_pid == (uint32_t)getpid(), "the events name our pid");
	ok(pc_trace_drain(t, collect, &s) == 0, "a second drain has nothing left");
	ok(pc_trace_lost(t) == 0, "nothing lost on a quiet ring");

	/* a child is not ours without children */
	seen_init(&s, &st);
	if (fork() == 0) {
		read_pages(fd, 20, 1);
		_exit(0);
	}
	wait(NULL);
	pc_trace_drain(t, collect, &s);
	ok(s.n == 0, "pid mode without children: a child's read is not seen (%llu)",
	   (unsigned long long)s.n);
	pc_trace_close(t);

	rc = open_trace(PC_TR_GET_PAGES, getpid(), true, -1, 0, &t, err, sizeof(err));
	ok(rc == 0, "open pid mode with children (%s)", rc ? err : "ok");
	if (!rc) {
		pid_t c;

		seen_init(&s, &st);
		c = fork();
		if (c == 0) {
			read_pages(fd, 20, 1);
			_exit(0);
		}
		waitpid(c, NULL, 0);
		pc_trace_drain(t, collect, &s);
		ok(s.n > 0 && s.lo == 20 && s.hi == 20 && s.last_pid == (uint32_t)c,
		   "with children: the child's read of page 20 is seen, with its pid");
		pc_trace_close(t);
	}

	/* system-wide */
	rc = open_trace(PC_TR_GET_PAGES, 0, false, -1, 0, &t, err, sizeof(err));
	ok(rc == 0, "open system-wide (%s)", rc ? err : "ok");
	if (!rc) {
		seen_init(&s, &st);
		read_pages(fd, 30, 2);
		pc_trace_drain(t, collect, &s);
		ok(s.n > 0 && s.lo == 30 && s.hi == 31, "system-wide sees our read of 30..31");
		pc_trace_close(t);
	}

	/* cgroup mode: a cgroup of the perf_event hierarchy (v2 here, or v1's perf_event) */
	{
		const char *roots[] = { "/sys/fs/cgroup/perf_event", "/sys/fs/cgroup/unified",
					"/sys/fs/cgroup" };
		char cg[512] = "", procs[600];
		struct statfs sf;

		for (size_t i = 0; i < 3 && !cg[0]; i++) {
			if (statfs(roots[i], &sf) < 0)
				continue;
			if (sf.f_type != 0x63677270 /* cgroup2 */ &&
			    !(i == 0 && sf.f_type == 0x27e0eb /* cgroup */))
				continue;
			snprintf(cg, sizeof(cg), "%s/pc-test-trace-%d", roots[i], (int)getpid());
			if (mkdir(cg, 0755) < 0)
				cg[0] = 0;
		}
		if (!cg[0]) {
			skip("no perf_event cgroup hierarchy we may make a cgroup in", "cgroup mode");
		} else {
			int cgfd = open(cg, O_RDONLY | O_DIRECTORY);
			int go[2];
			pid_t c;

			rc = open_trace(PC_TR_GET_PAGES, 0, false, cgfd, 0, &t, err, sizeof(err));
			ok(rc == 0, "open cgroup mode (%s)", rc ? err : "ok");
			(void)!pipe(go);
			c = fork();
			if (c == 0) {
				char b;

				close(go[1]);
				(void)!read(go[0], &b, 1);
				read_pages(fd, 40, 1);
				_exit(0);
			}
			close(go[0]);
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
			snprintf(ppath, sizeof(ppath), "%d", (int)c);
			pc_write_text(procs, ppath);
			read_pages(fd, 41, 1);	/* ours: outside the cgroup */
			(void)!write(go[1], "x", 1);
			close(go[1]);
			waitpid(c, NULL, 0);
			if (!rc) {
				struct {
					struct file_handle fh;
					uint64_t id;
				} h = { .fh.handle_bytes = 8 };
				int mnt;

				seen_init(&s, &st);
				pc_trace_drain(t, collect, &s);
				ok(s.n > 0 && s.lo == 40 && s.hi == 40,
				   "cgroup mode: the cgroup's read of page 40 only, not ours of 41");
				if (name_to_handle_at(AT_FDCWD, cg, &h.fh, &mnt, 0) == 0)
					ok(s.cgroup == h.id, "the event's cgroup id is the cgroup's (%llu)",
					   (unsigned long long)s.cgroup);
				else
					skip("no cgroup id by name_to_handle_at", "the event's cgroup id");
				pc_trace_close(t);
			}
			close(cgfd);
			rmdir(cg);
		}
	}

	/* overflow: a one-page ring, many events, no drain until the end */
	rc = open_trace(PC_TR_GET_PAGES, getpid(), false, -1, 1, &t, err, sizeof(err));
	ok(rc == 0, "open with a one-page ring (%s)", rc ? err : "ok");
	if (!rc) {
		const uint64_t made = 5000;

		seen_init(&s, &st);
		for (uint64_t i = 0; i < made; i++)
			read_pages(fd, i % FILE_PAGES, 1);
		pc_trace_drain(t, collect, &s);
		ok(pc_trace_lost(t) > 0, "an overflowing ring counts lost events (%llu)",
		   (unsigned long long)pc_trace_lost(t));
		ok(s.n + s.nother + pc_trace_lost(t) == made,
		   "handed + lost == made (%llu + %llu + %llu of %llu)", (unsigned long long)s.n,
		   (unsigned long long)s.nother, (unsigned long long)pc_trace_lost(t),
		   (unsigned long long)made);
		pc_trace_close(t);
	}

	/* errors */
	ok(open_trace(0, 0, false, -1, 0, &t, err, sizeof(err)) == -EINVAL,
	   "no kinds: -EINVAL");
	ok(open_trace(PC_TR_FAULT, 0, false, -1, 3, &t, err, sizeof(err)) == -EINVAL,
	   "ring pages not a power of two: -EINVAL (%s)", err);
	ok(open_trace(PC_TR_FAULT, 999999999, false, -1, 0, &t, err, sizeof(err)) == -ESRCH,
	   "a pid that does not exist: -ESRCH (%s)", err);
	rc = unprivileged_open(err, sizeof(err));
	{
		char para[16] = "";

		pc_read_text("/proc/sys/kernel/perf_event_paranoid", para, sizeof(para));
		if (atoi(para) > -1)
			ok((rc == -EACCES || rc == -EPERM) && strstr(err, "CAP_PERFMON") &&
			   strstr(err, "perf_event_paranoid"),
			   "without CAP_PERFMON and CAP_SYS_ADMIN: refused, saying why (%s)", err);
		else
			skip("perf_event_paranoid is -1: anyone may trace", "refused without privilege");
	}

	/* (dev, ino) -> the file */
	rc = pc_inode_open(st.st_dev, st.st_ino, O_RDONLY);
	if (rc == -EOPNOTSUPP || rc == -ESTALE) {
		skip("this filesystem's handles need the generation", "pc_inode_open");
	} else if (ok(rc >= 0, "pc_inode_open finds the file (%d)", rc)) {
		struct stat st2;
		ssize_t k;

		fstat(rc, &st2);
		ok(st2.st_ino == st.st_ino && st2.st_dev == st.st_dev, "it is the same inode");
		snprintf(ppath, sizeof(ppath), "/proc/self/fd/%d", rc);
		k = readlink(ppath, link, sizeof(link) - 1);
		link[k > 0 ? k : 0] = 0;
		if (stacked) {
			/* a layer's file: back through the overlay to ours */
			char *op = NULL;

			ok(pc_fd_unstack(rc, &op) == 0 && !strcmp(op, path),
			   "a layer's file: pc_fd_unstack leads back to the overlay's (%s)",
			   op ? op : link);
			free(op);
		} else {
			ok(k > 0 && !strcmp(link, path), "its path is the file's (%s)", link);
		}
		close(rc);
	}
	ok(pc_inode_open(st.st_dev, 0x7fffff00, O_RDONLY) < 0, "an inode that is not there: -errno");
	ok(pc_sys_inject_env("open_by_handle_at:ESTALE") == 0, "PAGECACHE_FAULT=open_by_handle_at:ESTALE parses");
	ok(pc_inode_open(st.st_dev, st.st_ino, O_RDONLY) == -ESTALE,
	   "and pc_inode_open meets it: -ESTALE (the fault seam, lib/sys.c)");
	pc_sys_inject_reset();
	ok(pc_inode_open(makedev(0, 3), 1, O_RDONLY) == -ENODEV, "a dev with no mount: -ENODEV");

	task_names();
	ok(perf_fds() == fds0, "no perf fd left open (%d before, %d after)", fds0, perf_fds());
	ok(tracefs_mounts() == mounts0, "no tracefs mount left or made (%d before)", mounts0);
	close(fd);
	rm_scratch();
	return done_testing();
}
