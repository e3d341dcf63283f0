/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reader.c: the readers nocache's LD_PRELOAD cannot see (t-compat-nocache).
 * Built twice: as it is, and static (reader-static), which no LD_PRELOAD
 * reaches at all.
 *
 * reader read FILE: read(2) it all. reader mmap FILE: open it, map it,
 * close the descriptor (where nocache drops the file's pages, before any
 * is read), then touch every page through the mapping and _exit without
 * unmapping, so no close or exit hook runs after the reads. Either way it
 * prints the bytes seen and a sum of them, for the caller to compare.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uint64_t sum = 0, n = 0;
	struct stat st;
	int fd;

	if (argc != 3 || (strcmp(argv[1], "read") && strcmp(argv[1], "mmap"))) {
		fprintf(stderr, "usage: reader read|mmap FILE\n");
		return 2;
	}
	fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "read")) {
		unsigned char buf[65536];
		ssize_t r;

		while ((r = read(fd, buf, sizeof(buf))) > 0)
			for (ssize_t i = 0; i < r; i++, n++)
				sum += buf[i];
		if (r < 0) {
			perror(argv[2]);
			return 1;
		}
		close(fd);
	} else if (st.st_size > 0) {
		const volatile unsigned char *p = mmap(NULL, (size_t)st.st_size, PROT_READ,
						       MAP_SHARED, fd, 0);

		if (p == MAP_FAILED) {
			perror(argv[2]);
			return 1;
		}
		close(fd);
		for (; n < (uint64_t)st.st_size; n++)
			sum += p[n];
	}
	printf("%llu %llu\n", (unsigned long long)n, (unsigned long long)sum);
	fflush(stdout);
	_exit(0);
}
