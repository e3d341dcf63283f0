/*
 * fuzz-profile.c: libFuzzer harness for the snapshot decoder. Any input
 * must end in a clean end, a clear -EBADMSG, or -ENOMEM; never a crash,
 * a leak or an unbounded allocation. `make fuzz` builds and runs it.
 */
#include "pagecache.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pc_profile_reader *r;
	struct pc_profile_file f;
	char err[256];

	if (pc_profile_open_mem(data, size, &r, err, sizeof(err)) < 0)
		return 0;
	while (pc_profile_next(r, &f) > 0)
		pc_profile_file_release(&f);
	pc_profile_close(r);
	return 0;
}
