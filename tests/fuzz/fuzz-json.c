/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-json.c: libFuzzer harness for the strict JSON reader (lib/json.c),
 * which `bench compare` runs on files anyone may hand it. Any input is a
 * tree or a clear error, never a crash, a leak or a read past the input;
 * a tree it accepts prints canonically, and the print parses back to the
 * same print. `make fuzz` runs it under libFuzzer; `make check` replays
 * the corpus.
 */
#include "json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pc_json_opts o = { .max_bytes = 1 << 20 };
	struct pc_json *root, *again;
	struct pc_json_error e;
	char *a = NULL, *b = NULL;

	if (pc_json_parse((const char *)data, size, &o, &root, &e) < 0)
		return 0;
	if (pc_json_canonical(root, NULL, &a) == 0) {
		if (pc_json_parse(a, strlen(a), NULL, &again, &e) != 0)
			abort();	/* we wrote what we cannot read */
		if (pc_json_canonical(again, NULL, &b) != 0 || strcmp(a, b))
			abort();	/* canonical is not a fixed point */
		pc_json_free(again);
	}
	free(a);
	free(b);
	pc_json_free(root);
	return 0;
}
