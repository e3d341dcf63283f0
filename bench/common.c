/*
 * common.c: what the experiment runners share: running a helper command,
 * and dropping the page cache between conditions.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
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
