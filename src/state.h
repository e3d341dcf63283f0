/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * state.h: what a run of pagecache changes in the system (kernel knobs,
 * cgroups, swap and loop devices, mounts, files), noted as it goes so that
 * the next run can undo what a killed one left; the work directories root
 * may keep such things in; and exec hygiene for the programs it starts.
 * `run`, `tune`, `record`, `push` and `pull` use it, and so do the
 * experiments of pagecache-bench (bench/), which is why the names say
 * bench_: they were the first. It
 * lives in src/ because dependencies point one way, bench/ -> src/ -> lib/.
 */
#ifndef PC_STATE_H
#define PC_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* In a forked child before exec: SIGPIPE and SIGCHLD default, no signal blocked. */
void bench_exec_prep(void);

/*
 * Work directories root keeps files in. bench_workdir_open: an O_DIRECTORY
 * fd of DIR (made 0700 if missing, with BENCH_WD_CREATE), which must be no
 * symbolic link, the caller's own and not writable by group or others
 * (BENCH_WD_SHARED: root's or the caller's, and sticky if others may write,
 * like /var/tmp: only fresh directories are made in it); every directory
 * above it must be root's or the caller's, and sticky if others may write.
 * Its path without symbolic links in ret_path (if given). -errno, and why
 * in why[], otherwise.
 */
#define BENCH_WD_CREATE 1u
#define BENCH_WD_SHARED 2u
int bench_workdir_open(const char *dir, unsigned flags, char *ret_path, size_t plen, char *why,
		       size_t wlen);
/* A fresh directory PREFIX + 6 random characters (0700) in parentfd: its fd, name in ret_name. */
int bench_workdir_fresh(int parentfd, const char *prefix, char *ret_name, size_t nlen);
/* openat(O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags): an fd or -errno. */
int bench_file_create(int dirfd, const char *name, int flags, mode_t mode);
/* 0 if name in dirfd is a regular file of ours that only we can write (no link), else -errno. */
int bench_file_ours(int dirfd, const char *name);
/* the names of what the benches make, which a state file's lines must match */
#define READTWICE_TOP_PREFIX "/var/tmp/pagecache-readtwice-"
#define SWAP_DIR_PREFIX "pagecache-swapin-"

/*
 * A kernel knob changed for an experiment: the first set remembers the
 * value found, restore puts it back (only if it was changed).
 */
struct bench_knob {
	const char *path;
	char orig[64];
	bool saved, changed;
};
/*
 * What an experiment changed, noted as it goes in /run/pagecache/KIND-PID.state,
 * so that the next run of that kind undoes what a killed one (SIGKILL)
 * left: knobs (noted by bench_knob_set once a state is open), "swap DEV",
 * "loop DEV", "zram ID", "zram-borrowed ID", "file PATH", "cgroup DIR",
 * "mount DIR" (detached), "fuse DIR" (the slow swap device's mount point:
 * detached, which ends its daemon, and removed), "dir DIR" (removed if empty).
 */
struct bench_state {
	char path[128];
	int fd;				/* open and flock()ed while the run lives */
};
int bench_state_open(struct bench_state *st, const char *kind);
int bench_state_put(struct bench_state *st, const char *key, const char *value);
void bench_state_close(struct bench_state *st);	/* a clean end: forget it */
/* In a forked child: let go of the file (its lock means "the run lives"). */
void bench_state_child(struct bench_state *st);
/* Empty it, to note again only what a failed teardown left. */
int bench_state_reset(struct bench_state *st);
/* Undo the state files of dead processes of this kind; how many. A live one's pid: *ret_live. */
int bench_state_recover(const char *kind, long *ret_live);
int bench_knob_set(struct bench_knob *k, const char *value);
int bench_knob_restore(struct bench_knob *k);

/* Is the device behind path (a block device, or a file's filesystem) rotational? 1, 0, -1 unknown. */
int bench_rotational(const char *path);

#endif
