/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replay.c: run a libFuzzer harness over its corpus without libFuzzer
 * (gcc, in `make check`): each file of the corpus directories is one TAP
 * test; a harness that finds a fault aborts, which prove reports. No
 * argument: the corpus it was built for (CORPUS).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	char *dflt[] = { argv[0], CORPUS, NULL };
	int n = 0;

	if (argc < 2) {	/* make check: the harness's own corpus */
		argv = dflt;
		argc = 2;
	}
	for (int a = 1; a < argc; a++) {
		struct dirent **ents;
		int k = scandir(argv[a], &ents, NULL, alphasort);

		for (int i = 0; i < k; i++) {
			char p[4096];
			FILE *f;
			uint8_t *buf;
			long len;

			if (ents[i]->d_name[0] == '.') {
				free(ents[i]);
				continue;
			}
			snprintf(p, sizeof(p), "%s/%s", argv[a], ents[i]->d_name);
			f = fopen(p, "rb");
			if (!f || fseek(f, 0, SEEK_END) < 0 || (len = ftell(f)) < 0) {
				printf("not ok %d - cannot read %s\n", ++n, p);
				continue;
			}
			rewind(f);
			buf = malloc((size_t)len + 1);
			if (fread(buf, 1, (size_t)len, f) != (size_t)len)
				len = 0;
			fclose(f);
			LLVMFuzzerTestOneInput(buf, (size_t)len);
			printf("ok %d - %s\n", ++n, p);
			free(buf);
			free(ents[i]);
		}
		free(ents);
	}
	printf("1..%d\n", n);
	return 0;
}
