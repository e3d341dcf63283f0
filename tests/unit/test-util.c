/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sizes in and out (util.c), and the fault-injection parser (sys.c). */
#include "pagecache.h"
#include "sys.h"		/* the seam: pc_sys_inject, pc_sys_* (lib/sys.h) */
#include "tap.h"

int main(void)
{
	uint64_t v = 0;
	char buf[32];

	ok(pc_parse_size("4096", &v) == 0 && v == 4096, "plain bytes");
	ok(pc_parse_size("64k", &v) == 0 && v == 65536, "k suffix");
	ok(pc_parse_size("1.5G", &v) == 0 && v == 1610612736ull, "fraction with G");
	ok(pc_parse_size("2T", &v) == 0 && v == 2ull << 40, "T suffix (vmtouch lacks it)");
	ok(pc_parse_size("8MiB", &v) == 0 && v == 8ull << 20, "MiB spelling");
	ok(pc_parse_size("", &v) == -EINVAL, "empty is an error");
	ok(pc_parse_size("12q", &v) == -EINVAL, "unknown suffix is an error");
	ok(pc_parse_size("-1", &v) == -EINVAL, "negative is an error");
	ok(pc_parse_size("1Gx", &v) == -EINVAL, "trailing junk is an error");
	ok(pc_parse_size("99999E", &v) == -ERANGE, "overflow is an error");
	ok(!strcmp(pc_human_size(1536ull << 20, buf, sizeof(buf)), "1.5G"), "human 1.5G");
	ok(!strcmp(pc_human_size(512, buf, sizeof(buf)), "512"), "human bytes");
	ok(!strcmp(pc_human_size(8ull << 20, buf, sizeof(buf)), "8M"), "human whole M");

	ok(pc_sys_inject_env("cachestat:EPERM,readahead:short:2:3") == 0, "fault spec parses");
	ok(pc_sys_inject_env("nosuch:EPERM") == -EINVAL, "unknown call rejected");
	ok(pc_sys_inject_env("mincore:EWHAT") == -EINVAL, "unknown error rejected");
	ok(pc_sys_inject_env("mincore:EIO:x") == -EINVAL, "a bad count is rejected");
	ok(pc_sys_inject_env("pread:short") == -EINVAL, "short is only for readahead");
	pc_sys_inject_reset();

	/* after/times: the 2nd and 3rd calls fail, then it heals */
	pc_sys_inject(PC_SYS_FADVISE, EIO, 1, 2);
	int fd = open("/proc/self/exe", O_RDONLY);
	int r1 = pc_sys_fadvise(fd, 0, 0, POSIX_FADV_NORMAL);
	int r2 = pc_sys_fadvise(fd, 0, 0, POSIX_FADV_NORMAL);
	int r3 = pc_sys_fadvise(fd, 0, 0, POSIX_FADV_NORMAL);
	int r4 = pc_sys_fadvise(fd, 0, 0, POSIX_FADV_NORMAL);
	ok(r1 == 0 && r2 == -EIO && r3 == -EIO && r4 == 0,
	   "injection honours after=1 times=2 (%d %d %d %d)", r1, r2, r3, r4);
	pc_sys_inject(PC_SYS_PREAD, EINTR, 0, 3);
	ok(pc_sys_pread(fd, buf, 1, 0) == 1, "pread retries EINTR (three injected)");
	pc_sys_inject(PC_SYS_PREAD, EIO, 0, 1);
	ok(pc_sys_pread(fd, buf, 1, 0) == -EIO, "pread passes EIO on");
	close(fd);
	pc_sys_inject_reset();
	return done_testing();
}
