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
#include <math.h>
#include <linux/loop.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/sysmacros.h>
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
	rc = pc_write_text(k->path, value);
	if (rc == 0)
		k->changed = true;
	return rc;
}

int bench_knob_restore(struct bench_knob *k)
{
	int rc = 0;

	if (k->changed) {
		rc = pc_write_text(k->path, k->orig);
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

/*
 * The file stays open and flock()ed for the whole run: "dead" is exactly
 * "its lock can be taken", whatever the pid now belongs to.
 */
int bench_state_open(struct bench_state *st, const char *kind)
{
	mkdir(STATE_DIR, 0700);
	snprintf(st->path, sizeof(st->path), STATE_DIR "/%s-%d.state", kind, getpid());
	/* a file with our pid is a dead predecessor's: recover it first */
	bench_state_recover(kind, NULL);
	st->fd = open(st->path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (st->fd < 0 || flock(st->fd, LOCK_EX | LOCK_NB) < 0) {
		int rc = -errno;

		if (st->fd >= 0)
			close(st->fd);
		st->fd = -1;
		st->path[0] = 0;
		return rc;
	}
	attached = st;
	return 0;
}

int bench_state_put(struct bench_state *st, const char *key, const char *value)
{
	char line[700];
	int n;

	if (!st || !st->path[0])
		return 0;
	n = snprintf(line, sizeof(line), "%s %s\n", key, value);
	if (write(st->fd, line, (size_t)n) != n)
		return -EIO;
	fdatasync(st->fd);
	return 0;
}

void bench_state_child(struct bench_state *st)
{
	if (st->path[0])
		close(st->fd);	/* a forked child must not hold the run's lock */
	st->path[0] = 0;
	st->fd = -1;
	attached = NULL;
}

int bench_state_reset(struct bench_state *st)
{
	if (!st->path[0])
		return 0;
	return ftruncate(st->fd, 0) < 0 ? -errno : 0;
}

void bench_state_close(struct bench_state *st)
{
	if (!st->path[0])
		return;		/* never opened (a zeroed struct: fd 0 is not ours) */
	unlink(st->path);
	st->path[0] = 0;
	close(st->fd);		/* the lock goes with it */
	st->fd = -1;
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
		return pc_write_text(val, sp + 1);
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
		char p[96], *alg = strchr(val, ' ');	/* borrowed: "ID ALGORITHM" */
		int rc;

		if (alg)
			*alg++ = 0;
		snprintf(p, sizeof(p), "/sys/block/zram%s/reset", val);
		for (int i = 0; i < 50 && (rc = pc_write_text(p, "1")) == -EBUSY; i++)
			usleep(20000);
		if (!strcmp(key, "zram")) {
			rc = pc_write_text("/sys/class/zram-control/hot_remove", val);
		} else if (rc == 0 && alg && *alg) {
			snprintf(p, sizeof(p), "/sys/block/zram%s/comp_algorithm", val);
			pc_write_text(p, alg);	/* its compressor as found */
		}
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
		char path[300], *text, **lines = NULL;
		int n = 0, failed = 0, fd;
		long pid;
		ssize_t got;

		if (strncmp(e->d_name, kind, klen) || e->d_name[klen] != '-')
			continue;
		pid = strtol(e->d_name + klen + 1, NULL, 10);
		snprintf(path, sizeof(path), STATE_DIR "/%s", e->d_name);
		if (attached && !strcmp(path, attached->path))
			continue;	/* our own, held now */
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {	/* its run holds it: alive */
			if (ret_live)
				*ret_live = pid;
			close(fd);
			continue;
		}
		text = malloc(1 << 20);
		got = text ? read(fd, text, (1 << 20) - 1) : -1;
		if (got < 0) {
			free(text);
			close(fd);
			continue;
		}
		text[got] = 0;
		for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
		     l = strtok_r(NULL, "\n", &save)) {
			char **nl = realloc(lines, (size_t)(n + 1) * sizeof(*lines));

			if (!nl)
				break;
			lines = nl;
			lines[n++] = l;
		}
		for (int i = n - 1; i >= 0; i--) {	/* newest first */
			char *sp = strchr(lines[i], ' ');

			if (!sp)
				continue;
			*sp = 0;
			if (undo_line(lines[i], sp + 1) < 0)
				failed++;
		}
		if (!failed)
			unlink(path);
		close(fd);
		free(lines);
		free(text);
		recovered++;
		fprintf(stderr, "pagecache: undid what a killed run (pid %ld) left behind%s\n", pid,
			failed ? " (some of it failed: see " STATE_DIR ")" : "");
	}
	closedir(d);
	return recovered;
}

/* JSON has no NaN or infinity: those are null */
static void json_num(FILE *f, double d)
{
	if (isfinite(d))
		fprintf(f, "%.10g", d);
	else
		fputs("null", f);
}

void bench_metric_json(FILE *f, bool first, const char *name, const double *v, int n,
		       bool higher_better, const char *unit)
{
	struct pc_summary s;

	pc_summarize(v, (size_t)n, &s);
	fprintf(f, "%s\"%s\": {\"mean\": ", first ? "" : ", ", name);
	json_num(f, s.mean);
	fputs(", \"stderr\": ", f);
	json_num(f, s.stderr_);
	fputs(", \"stddev\": ", f);
	json_num(f, s.stddev);
	fputs(", \"min\": ", f);
	json_num(f, s.min);
	fputs(", \"max\": ", f);
	json_num(f, s.max);
	fprintf(f, ", \"better\": \"%s\", \"unit\": \"%s\", \"values\": [",
		higher_better ? "higher" : "lower", unit);
	for (int i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		json_num(f, v[i]);
	}
	fputs("]}", f);
}

int bench_rotational(const char *path)
{
	struct stat st;
	char p[128], v[16];
	dev_t d;

	if (stat(path, &st) < 0)
		return -1;
	d = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;	/* a device, or a file's disk */
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/queue/rotational", major(d), minor(d));
	if (pc_read_text(p, v, sizeof(v)) < 0) {	/* a partition: its disk's queue */
		snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/../queue/rotational", major(d), minor(d));
		if (pc_read_text(p, v, sizeof(v)) < 0)
			return -1;
	}
	return v[0] == '1';
}
