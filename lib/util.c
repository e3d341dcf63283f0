/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util.c: sizes in and out, the clock, and paths made absolute. Sizes use
 * powers of 1024 with the suffixes people type (k, M, G, T, P; an optional
 * "iB" or "B"), and fractions ("1.5G"). Anything else is -EINVAL, never a
 * silent zero.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int pc_parse_size(const char *s, uint64_t *ret_bytes)
{
	static const char units[] = "bkmgtpe";
	char *end;
	double v, mul = 1;
	const char *u;

	if (!s || !*s || isspace((unsigned char)*s) || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	if (*end) {
		u = strchr(units, tolower((unsigned char)*end));
		if (!u)
			return -EINVAL;
		mul = ldexp(1.0, 10 * (int)(u - units));
		end++;
		if (u != units) {
			if (*end == 'i' || *end == 'I')
				end++;
			if (*end == 'b' || *end == 'B')
				end++;
		}
		if (*end)
			return -EINVAL;
	}
	v *= mul;
	if (v >= 18446744073709551615.0)
		return -ERANGE;
	*ret_bytes = (uint64_t)v;
	return 0;
}

char *pc_human_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "BKMGTPE";
	double v = (double)bytes;
	int i = 0;

	while (v >= 1024 && i < 6) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else if (v < 10 && v != floor(v))
		snprintf(buf, len, "%.1f%c", v, units[i]);
	else
		snprintf(buf, len, "%.0f%c", v, units[i]);
	return buf;
}

double pc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int pc_read_text(const char *path, char *buf, size_t len)
{
	long got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	got = pc_sys_read(fd, buf, len - 1);	/* the "read" fault point */
	close(fd);
	if (got < 0)
		return (int)got;
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		got--;
	buf[got] = 0;
	return 0;
}

int pc_write_text(const char *path, const char *value)
{
	size_t n = strlen(value);
	long got;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	got = pc_sys_write(fd, value, n);	/* the "write" fault point */
	close(fd);
	if (got < 0)
		return (int)got;
	return (size_t)got == n ? 0 : -EIO;	/* a short write is a failure too */
}

int pc_grow(void *arrp, size_t *cap, size_t n, size_t elem)
{
	void **arr = arrp;
	size_t nc;
	void *na;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 64;
	na = realloc(*arr, nc * elem);
	if (!na)
		return -ENOMEM;
	*arr = na;
	*cap = nc;
	return 0;
}

char *pc_abspath(const char *path)
{
	char cwd[4096], *buf, *out;
	size_t o = 0;

	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&buf, "%s/%s", path[0] == '/' ? "" : cwd, path) < 0)
		return NULL;
	out = malloc(strlen(buf) + 2);
	if (!out) {
		free(buf);
		return NULL;
	}
	/* lexical: drop "." and empty parts, let ".." take one back */
	for (char *save = NULL, *part = strtok_r(buf, "/", &save); part;
	     part = strtok_r(NULL, "/", &save)) {
		if (!strcmp(part, "."))
			continue;
		if (!strcmp(part, "..")) {
			while (o > 0 && out[--o] != '/')
				;
			continue;
		}
		out[o++] = '/';
		memcpy(out + o, part, strlen(part));
		o += strlen(part);
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = 0;
	free(buf);
	return out;
}
