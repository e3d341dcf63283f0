/*
 * common.c: what the experiment runners share: running a helper command,
 * and dropping the page cache between conditions.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
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

int bench_read_text(const char *path, char *buf, size_t len)
{
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	got = read(fd, buf, len - 1);
	close(fd);
	if (got < 0)
		return -errno;
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		got--;
	buf[got] = 0;
	return 0;
}

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
		rc = bench_read_text(k->path, k->orig, sizeof(k->orig));
		if (rc < 0)
			return rc;
		k->saved = true;
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
