/*
 * cgroup.c: memory cgroups, v1 and v2 behind one interface. For now what
 * restore needs: move the calling process into a memory cgroup, so the
 * page cache it reads is charged there (a page stays charged to the memcg
 * of the process that first read it, for its whole life).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory of memory cgroup `path` (as under the hierarchy's root). */
int pc_cgroup_dir(const char *path, char *ret, size_t len)
{
	static const char *const bases[] = {
		"/sys/fs/cgroup/memory",	/* v1 */
		"/sys/fs/cgroup",		/* v2, unified */
	};
	struct stat st;

	if (strstr(path, ".."))
		return -EINVAL;
	while (*path == '/')
		path++;
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		char probe[600];

		/* v1 has memory.limit_in_bytes, v2 memory.max */
		snprintf(probe, sizeof(probe), "%s/%s/%s", bases[i], path,
			 i == 0 ? "memory.limit_in_bytes" : "memory.max");
		if (stat(probe, &st) == 0) {
			snprintf(ret, len, "%s/%s", bases[i], path);
			return 0;
		}
	}
	return -ENOENT;
}

int pc_cgroup_join(const char *path)
{
	char dir[512], procs[600], pid[32];
	int fd, rc, n;

	rc = pc_cgroup_dir(path, dir, sizeof(dir));
	if (rc < 0)
		return rc;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	rc = write(fd, pid, (size_t)n) == n ? 0 : -errno;
	close(fd);
	return rc;
}
