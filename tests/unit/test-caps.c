/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pc_have_cap (caps.c): it agrees with the kernel's own account of the
 * effective set (CapEff in /proc/self/status), a capability taken out of
 * the effective set is gone at once (not cached), and a number that is
 * no capability is false, not an error.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "tap.h"

#include <linux/capability.h>
#include <sys/syscall.h>

static unsigned long long cap_eff(void)
{
	char *s = slurp("/proc/self/status"), *p = s ? strstr(s, "\nCapEff:") : NULL;

	return p ? strtoull(p + 8, NULL, 16) : 0;
}

int main(void)
{
	unsigned long long eff = cap_eff();
	int same = 1;

	for (int c = 0; c < 64; c++)
		if (pc_have_cap(c) != !!(eff & (1ull << c)))
			same = 0;
	ok(same, "every capability as CapEff says (%llx)", eff);
	ok(!pc_have_cap(-1) && !pc_have_cap(64) && !pc_have_cap(1 << 20),
	   "a number that is no capability is false");

	if (pc_have_cap(CAP_IPC_LOCK)) {
		struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];

		/* out of the effective set only: permitted keeps it, so it comes back */
		syscall(SYS_capget, &hdr, d);
		d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
		ok(syscall(SYS_capset, &hdr, d) == 0 && !pc_have_cap(CAP_IPC_LOCK) &&
		   !(cap_eff() & (1ull << CAP_IPC_LOCK)),
		   "CAP_IPC_LOCK out of the effective set: false at once");
		d[CAP_IPC_LOCK / 32].effective |= 1u << (CAP_IPC_LOCK % 32);
		ok(syscall(SYS_capset, &hdr, d) == 0 && pc_have_cap(CAP_IPC_LOCK),
		   "and back in: true again");
	} else {
		skip("this process lacks CAP_IPC_LOCK", "dropping a capability");
	}
	return done_testing();
}
