/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.c: which processes map a file, and whether they lock it; and the
 * one parser of /proc/PID/maps records.
 *
 * Used to explain pages that eviction could not drop. /proc/PID/maps of
 * every process is read (cheap); /proc/PID/smaps only for the few that map
 * the file, to read the VMA's "lo" (mlocked) flag. Processes we may not
 * inspect are skipped: this explains, it does not pry.
 *
 * A maps line ends with a path the process chose (up to PATH_MAX bytes),
 * so lines are read whole (getline) and a record is taken only when every
 * field is well formed: a piece of a long name can never pass for a record
 * of its own. Reads go through the seam (pc_sys_fopen_read): a process we
 * may not see, or that is gone, is skipped; any other failure to read is
 * the answer, never a short list that looks complete.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

/* Lowercase hex, 1 to 16 digits (the kernel pads to 8 or 2). */
static const char *hex_field(const char *p, uint64_t *ret)
{
	uint64_t v = 0;
	int n = 0;

	for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++, n++) {
		if (n == 16)
			return NULL;
		v = v << 4 | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	}
	*ret = v;
	return n ? p : NULL;
}

static const char *dec_field(const char *p, uint64_t *ret)
{
	uint64_t v = 0;
	int n = 0;

	for (; *p >= '0' && *p <= '9'; p++, n++) {
		if (v > (UINT64_MAX - 9) / 10)
			return NULL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*ret = v;
	return n ? p : NULL;
}

/*
 * START-END PERMS OFFSET MAJ:MIN INODE, a space, then padding and the name
 * (or nothing), as show_map_vma() prints them.
 */
int pc_map_parse(char *line, struct pc_map *ret)
{
	struct pc_map m = { 0 };
	uint64_t maj, min;
	const char *p = line;
	size_t len = strlen(line);

	if (len && line[len - 1] == '\n')
		line[--len] = 0;
	if (memchr(line, '\n', len))
		return -EINVAL;
	if (!(p = hex_field(p, &m.start)) || *p++ != '-' || !(p = hex_field(p, &m.end)) ||
	    *p++ != ' ' || m.end <= m.start)
		return -EINVAL;
	for (int i = 0; i < 4; i++, p++) {
		static const char ok[4][3] = { "r-", "w-", "x-", "sp" };

		if (!*p || !strchr(ok[i], *p))
			return -EINVAL;
		m.perms[i] = *p;
	}
	if (*p++ != ' ' || !(p = hex_field(p, &m.offset)) || *p++ != ' ' ||
	    !(p = hex_field(p, &maj)) || *p++ != ':' || !(p = hex_field(p, &min)) ||
	    *p++ != ' ' || !(p = dec_field(p, &m.ino)) || *p++ != ' ')
		return -EINVAL;
	if (maj > 0xfff || min > 0xfffff)
		return -EINVAL;
	m.dev = makedev((unsigned)maj, (unsigned)min);
	while (*p == ' ')
		p++;
	m.name = p;
	*ret = m;
	return 0;
}

/* The identities one file's mappings may show: (dev, ino) pairs. */
struct ids {
	dev_t dev[6];
	uint64_t ino[6];
	int n;
};

static bool ids_has(const struct ids *id, dev_t dev, uint64_t ino)
{
	for (int i = 0; i < id->n; i++)
		if (id->ino[i] == ino && id->dev[i] == dev)
			return true;
	return false;
}

/*
 * Does this whole maps line of pid name the file? Through an overlay whose
 * layers are on several filesystems, maps shows the overlay's device with
 * the real inode number, which a file of another layer (another
 * filesystem) may have too: where map_files tells (the kernel lets root
 * see it), the file mapped there must be one of its names.
 */
static bool line_is(int pid, char *line, const struct ids *id)
{
	struct pc_map m;
	struct statx st;
	char path[96];

	if (pc_map_parse(line, &m) != 0 || !ids_has(id, m.dev, m.ino))
		return false;
	if (id->n < 2)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)m.start, (unsigned long long)m.end);
	/* the cached attributes: no round trip to a FUSE layer's daemon */
	return statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_INO, &st) < 0 ||
	       ids_has(id, makedev(st.stx_dev_major, st.stx_dev_minor), st.stx_ino);
}

/* Is "lo" one of the words of this "VmFlags: rd ex mr ..." line? */
static bool has_lo(const char *flags)
{
	for (const char *p = flags; *p;) {
		size_t n;

		p += strspn(p, " \t\n");
		n = strcspn(p, " \t\n");
		if (n == 2 && !strncmp(p, "lo", 2))
			return true;
		p += n;
	}
	return false;
}

/* Gone or not ours to see: skip it. Anything else is a failure to report. */
static bool skippable(int err)
{
	return err == -ENOENT || err == -ESRCH || err == -EACCES || err == -EPERM;
}

/* 1: a mapping of the file in pid is mlocked, 0: none is, or -errno. */
static int smaps_locked(int pid, const struct ids *id)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	bool in = false, locked = false;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = pc_sys_fopen_read(path, &err);
	if (!f)
		return skippable(err) ? 0 : err;
	errno = 0;
	while (!locked && getline(&line, &cap, f) > 0) {
		struct pc_map m;

		if (!strncmp(line, "VmFlags:", 8))
			locked = in && has_lo(line + 8);
		else if (isxdigit((unsigned char)line[0]) && pc_map_parse(line, &m) == 0)
			in = ids_has(id, m.dev, m.ino);
	}
	if (!locked && ferror(f) && !skippable(-errno))
		err = -errno;
	free(line);
	fclose(f);
	return err ? err : locked;
}

static int mappers(const struct ids *id, struct pc_mapper *ret, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char *line = NULL;
	size_t cap = 0;
	int found = 0, rc = 0;

	if (!d)
		return -errno;
	while (!rc && (de = readdir(d)) && found < max) {
		char path[300];
		int pid = atoi(de->d_name), err = 0;
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
		f = pc_sys_fopen_read(path, &err);
		if (!f) {
			rc = skippable(err) ? 0 : err;
			continue;
		}
		errno = 0;
		while (getline(&line, &cap, f) > 0) {
			if (!line_is(pid, line, id))
				continue;
			err = smaps_locked(pid, id);
			if (err < 0)
				break;
			ret[found].pid = pid;
			ret[found].locked = err == 1;
			ret[found].comm[0] = 0;
			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			FILE *c = pc_sys_fopen_read(path, &err);
			err = 0;
			if (c) {
				if (fgets(ret[found].comm, sizeof(ret[found].comm), c))
					ret[found].comm[strcspn(ret[found].comm, "\n")] = 0;
				fclose(c);
			}
			found++;
			break;
		}
		if (err < 0)
			rc = err;
		else if (ferror(f) && !skippable(-errno))
			rc = -errno;
		fclose(f);
	}
	free(line);
	closedir(d);
	return rc ? rc : found;
}

int pc_file_mappers(dev_t dev, ino_t ino, struct pc_mapper *ret, int max)
{
	struct ids id = { .dev = { dev }, .ino = { (uint64_t)ino }, .n = 1 };

	return mappers(&id, ret, max);
}

int pc_fd_mappers(int fd, struct pc_mapper *ret, int max)
{
	struct ids id = { .n = 1 };
	struct stat st;
	bool real;
	int n;

	if (fstat(fd, &st) < 0)
		return -errno;
	id.dev[0] = st.st_dev;
	id.ino[0] = (uint64_t)st.st_ino;
	if ((n = pc_fd_stack_ids(fd, id.dev + 1, id.ino + 1, 5, &real)) > 0)
		id.n += n;
	return mappers(&id, ret, max);
}
