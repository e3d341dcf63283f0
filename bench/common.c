/*
 * common.c: what the experiment runners share: running a helper command,
 * and dropping the page cache between conditions.
 */
#define _GNU_SOURCE
#include "bench.h"
#include "pagecache.h"
#include "stats.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

int bench_run_cmd(char *const argv[], bool quiet)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (quiet) {
			int dn = open("/dev/null", O_WRONLY);

			dup2(dn, STDOUT_FILENO);
			dup2(dn, STDERR_FILENO);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0)
		return -errno;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

int bench_drop_caches(void)
{
	int fd;

	sync();	/* dirty pages cannot be dropped */
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "3\n", 2) != 2) {
		close(fd);
		return -errno;
	}
	close(fd);
	return 0;
}

static struct bench_state *attached;

int bench_write_text(const char *path, const char *value)
{
	size_t n = strlen(value);
	int rc = 0, fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (write(fd, value, n) != (ssize_t)n)
		rc = -errno;
	close(fd);
	return rc;
}

int bench_knob_set(struct bench_knob *k, const char *value)
{
	int rc;

	if (!k->saved) {
		char line[400];

		rc = pc_read_text(k->path, k->orig, sizeof(k->orig));
		if (rc < 0)
			return rc;
		k->saved = true;
		snprintf(line, sizeof(line), "%s %s", k->path, k->orig);
		bench_state_put(attached, "knob", line);
	}
	rc = bench_write_text(k->path, value);
	if (rc == 0)
		k->changed = true;
	return rc;
}

int bench_knob_restore(struct bench_knob *k)
{
	int rc = 0;

	if (k->changed) {
		rc = bench_write_text(k->path, k->orig);
		if (rc == 0)
			k->changed = false;
	}
	return rc;
}

/*
 * ---- surviving a kill -9 ----
 * An experiment that changes the system notes each change, as it makes
 * it, in /run/pagecache/KIND-PID.state ("knob PATH VALUE", "swap DEV",
 * "loop DEV", "zram ID", "file PATH", "cgroup DIR", "mount DIR", "dir DIR"). A clean exit removes
 * the file. The next run of that kind finds the files of dead processes
 * and undoes their lines in reverse order (a SIGKILL cannot be caught).
 */
#define STATE_DIR "/run/pagecache"

int bench_state_open(struct bench_state *st, const char *kind)
{
	int fd;

	mkdir(STATE_DIR, 0700);
	snprintf(st->path, sizeof(st->path), STATE_DIR "/%s-%d.state", kind, getpid());
	fd = open(st->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		st->path[0] = 0;
		return -errno;
	}
	close(fd);
	attached = st;
	return 0;
}

int bench_state_put(struct bench_state *st, const char *key, const char *value)
{
	char line[700];
	int n, fd, rc = 0;

	if (!st || !st->path[0])
		return 0;
	n = snprintf(line, sizeof(line), "%s %s\n", key, value);
	fd = open(st->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, line, (size_t)n) != n)
		rc = -errno;
	fdatasync(fd);
	close(fd);
	return rc;
}

void bench_state_close(struct bench_state *st)
{
	if (st->path[0])
		unlink(st->path);
	st->path[0] = 0;
	if (attached == st)
		attached = NULL;
}

/* Undo one recorded change; 0 when done (or nothing left to do). */
static int undo_line(const char *key, char *val)
{
	if (!strcmp(key, "knob")) {
		char *sp = strchr(val, ' ');

		if (!sp)
			return -EINVAL;
		*sp = 0;
		return bench_write_text(val, sp + 1);
	}
	if (!strcmp(key, "cgroup")) {
		char procs[800], buf[4096], *p, *end;

		/* the workload may outlive us: kill what is left in it first */
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", val);
		for (int i = 0; i < 50 && pc_read_text(procs, buf, sizeof(buf)) == 0 && buf[0]; i++) {
			for (p = buf; *p; p = end) {
				long pid = strtol(p, &end, 10);

				if (end == p)
					break;
				if (pid > 0)
					kill((pid_t)pid, SIGKILL);
			}
			usleep(20000);
		}
		return rmdir(val) == 0 || errno == ENOENT ? 0 : -errno;
	}
	if (!strcmp(key, "swap"))
		return swapoff(val) == 0 || errno == EINVAL || errno == ENOENT ? 0 : -errno;
	if (!strcmp(key, "loop")) {
		int fd = open(val, O_RDWR | O_CLOEXEC);

		if (fd < 0)
			return errno == ENOENT ? 0 : -errno;
		ioctl(fd, LOOP_CLR_FD, 0);
		close(fd);
		return 0;
	}
	if (!strcmp(key, "zram") || !strcmp(key, "zram-borrowed")) {
		char p[96];
		int rc;

		snprintf(p, sizeof(p), "/sys/block/zram%s/reset", val);
		for (int i = 0; i < 50 && (rc = bench_write_text(p, "1")) == -EBUSY; i++)
			usleep(20000);
		if (!strcmp(key, "zram"))
			rc = bench_write_text("/sys/class/zram-control/hot_remove", val);
		return rc == -ENOENT ? 0 : rc;
	}
	if (!strcmp(key, "file"))
		return unlink(val) == 0 || errno == ENOENT ? 0 : -errno;
	if (!strcmp(key, "mount"))	/* a loop mount's device goes with it (autoclear) */
		return umount2(val, MNT_DETACH) == 0 || errno == EINVAL || errno == ENOENT ? 0 : -errno;
	if (!strcmp(key, "dir"))
		return rmdir(val) == 0 || errno == ENOENT ? 0 : -errno;
	return -EINVAL;
}

int bench_state_recover(const char *kind, long *ret_live)
{
	DIR *d = opendir(STATE_DIR);
	struct dirent *e;
	size_t klen = strlen(kind);
	int recovered = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[300], text[16384], *lines[256];
		int n = 0, failed = 0;
		long pid;

		if (strncmp(e->d_name, kind, klen) || e->d_name[klen] != '-')
			continue;
		pid = strtol(e->d_name + klen + 1, NULL, 10);
		if (pid <= 0 || pid == getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) {
			char comm[64], cp[64];

			/* alive, and pagecache: running now (else a reused pid) */
			snprintf(cp, sizeof(cp), "/proc/%ld/comm", pid);
			if (pc_read_text(cp, comm, sizeof(comm)) < 0 || !strcmp(comm, "pagecache")) {
				if (ret_live)
					*ret_live = pid;
				continue;
			}
		}
		snprintf(path, sizeof(path), STATE_DIR "/%s", e->d_name);
		if (pc_read_text(path, text, sizeof(text)) < 0)
			continue;
		for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && n < 256;
		     l = strtok_r(NULL, "\n", &save))
			lines[n++] = l;
		for (int i = n - 1; i >= 0; i--) {
			char *sp = strchr(lines[i], ' ');

			if (!sp)
				continue;
			*sp = 0;
			if (undo_line(lines[i], sp + 1) < 0)
				failed++;
		}
		if (!failed)
			unlink(path);
		recovered++;
		fprintf(stderr, "pagecache: undid what a killed run (pid %ld) left behind%s\n", pid,
			failed ? " (some of it failed: see " STATE_DIR ")" : "");
	}
	closedir(d);
	return recovered;
}

void bench_metric_json(FILE *f, bool first, const char *name, const double *v, int n,
		       bool higher_better, const char *unit)
{
	struct pc_summary s;

	pc_summarize(v, (size_t)n, &s);
	fprintf(f, "%s\"%s\": {\"mean\": %.10g, \"stderr\": %.10g, \"stddev\": %.10g, "
		"\"min\": %.10g, \"max\": %.10g, \"better\": \"%s\", \"unit\": \"%s\", \"values\": [",
		first ? "" : ", ", name, s.mean, s.stderr_, s.stddev, s.min, s.max,
		higher_better ? "higher" : "lower", unit);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%.10g", i ? ", " : "", v[i]);
	fputs("]}", f);
}
