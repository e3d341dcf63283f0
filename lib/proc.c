/*
 * proc.c: which processes map a file, and whether they lock it.
 *
 * Used to explain pages that eviction could not drop. /proc/PID/maps of
 * every process is read (cheap); /proc/PID/smaps only for the few that map
 * the file, to read the VMA's "lo" (mlocked) flag. Processes we may not
 * inspect are skipped: this explains, it does not pry.
 */
#define _GNU_SOURCE
#include "pagecache.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

/* Does this maps/smaps header line name (dev, ino)? */
static bool line_is(const char *line, dev_t dev, ino_t ino)
{
	unsigned long long start, end, pgoff, inode;
	unsigned maj, min;
	char perms[8];

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end, perms, &pgoff,
		   &maj, &min, &inode) != 7)
		return false;
	return inode == (unsigned long long)ino && makedev(maj, min) == dev;
}

static bool smaps_locked(int pid, dev_t dev, ino_t ino)
{
	char path[64], line[512];
	bool in = false, locked = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!locked && fgets(line, sizeof(line), f)) {
		if (isxdigit((unsigned char)line[0]) && strchr(line, '-') &&
		    strchr(line, '-') < strchr(line, ' '))
			in = line_is(line, dev, ino);
		else if (in && !strncmp(line, "VmFlags:", 8) && strstr(line, " lo"))
			locked = true;
	}
	fclose(f);
	return locked;
}

int pc_file_mappers(dev_t dev, ino_t ino, struct pc_mapper *ret, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && found < max) {
		char path[300], line[512];
		int pid = atoi(de->d_name);
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (!line_is(line, dev, ino))
				continue;
			ret[found].pid = pid;
			ret[found].locked = smaps_locked(pid, dev, ino);
			ret[found].comm[0] = 0;
			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			FILE *c = fopen(path, "re");
			if (c) {
				if (fgets(ret[found].comm, sizeof(ret[found].comm), c))
					ret[found].comm[strcspn(ret[found].comm, "\n")] = 0;
				fclose(c);
			}
			found++;
			break;
		}
		fclose(f);
	}
	closedir(d);
	return found;
}
