/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * caps.c: whether this thread holds a capability, as the kernel judges it.
 *
 * The kernel's privilege checks look at capabilities, never at uid 0:
 * root in a container often lacks CAP_SYS_ADMIN or CAP_IPC_LOCK, and a
 * service manager can give a non-root user one (ambient capabilities).
 * So the library asks for the capability itself.
 *
 * capget(2), not CapEff in /proc/self/status: one system call and no
 * text to parse; it needs no procfs (a container may mount none, or mask
 * it), and it answers for the calling thread, whose set is the one the
 * kernel checks (/proc/self is the thread group leader's). Not cached: a
 * process may drop capabilities as it runs.
 *
 * The effective set holds capabilities in our own user namespace. Some
 * checks are against the initial one (pagemap's page frame numbers,
 * swapon): a container's root can hold CAP_SYS_ADMIN here and still be
 * refused. So false is a definite no, true only "the kernel may allow
 * it": callers still take the kernel's answer and report it.
 */
#define _GNU_SOURCE
#include "pagecache.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

bool pc_have_cap(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

	if (cap < 0 || cap >= 32 * _LINUX_CAPABILITY_U32S_3)
		return false;
	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return data[cap / 32].effective & (1u << (cap % 32));
}
