/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpagecache: see, warm, evict and lock the Linux page cache.
 *
 * The library never prints and never exits. Functions return 0 (or a
 * count) on success and -errno on failure; out-parameters named ret_* are
 * written only on success. Sizes are uint64_t bytes or pages, never off_t.
 * Everything here is safe to call from several threads at once unless a
 * comment says otherwise.
 */
#ifndef PAGECACHE_H
#define PAGECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What this header declares is the library's ABI: libpagecache.so.0 is
 * built with -fvisibility=hidden, and exports these and nothing else (the
 * helpers of lib/internal.h, and lib/sys.h's system call seam with its
 * fault injection, stay inside it).
 */
#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility push(default)
#endif

#define PC_VERSION "0.1.0"

/* ---- sys.c: what this kernel offers ----------------------------------- */

/* Does this kernel have cachestat(2)? Probed once. */
bool pc_have_cachestat(void);
uint64_t pc_page_size(void);

/* ---- beneath.c: opening what a hostile list of paths names ------------ */

/*
 * Open the regular file `path` (relative: no leading '/', no "." or ".."
 * component) beneath the directory `rootfd`, for reading. Nothing outside
 * the root is reached and no symbolic link is followed, on the way or at
 * the end: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS), or where openat2 is missing (before 5.6, or a
 * seccomp filter that refuses it) one component at a time with
 * openat(O_PATH | O_NOFOLLOW). The file is reached with O_PATH and
 * fstat()ed before any real open, so a FIFO, socket or device is never
 * opened; a regular file is then reopened through /proc/self/fd with
 * O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC and `extra_flags` (O_NOATIME
 * is dropped where the kernel refuses it). Returns the fd, or -ELOOP (a
 * symbolic link on the way or at the end), -EXDEV (the path would leave
 * the root), -EINVAL (not a regular file: *ret_st says what it is),
 * -EREMOTEIO (on procfs, sysfs, debugfs or another filesystem of kernel
 * interfaces, where a read can act: never opened),
 * -ENOENT, -ENOTDIR, -EACCES, ... *ret_st is filled on success and on
 * -EINVAL.
 */
int pc_open_beneath(int rootfd, const char *path, int extra_flags, struct stat *ret_st);
/*
 * The first half of pc_open_beneath: an O_PATH fd of what `path` names
 * beneath `rootfd`, reached the same way (no link followed on the way;
 * one at the end is itself what the fd holds), whatever it is: nothing is
 * opened for reading. *ret_st: its fstat. -ELOOP, -EXDEV, -ENOENT, ...
 */
int pc_path_beneath(int rootfd, const char *path, struct stat *ret_st);
/*
 * An absolute path reached the way systemd reads a PIDFile=, one component
 * at a time with O_PATH | O_NOFOLLOW: a symbolic link is followed only
 * where nobody but root (or the caller's euid) could have made or changed
 * it, that is the link is theirs and every directory before it is theirs
 * and writable by nobody else unless sticky; the last component is
 * followed only with PC_TRUSTED_FOLLOW_LAST. With PC_TRUSTED_NO_FUSE no
 * name is looked up on a FUSE mount and no file there is fstat()ed (the
 * mount of each fd is asked of /proc, never of the filesystem, whose
 * server may never answer). At most PC_TRUSTED_MAX_COMPONENTS components
 * and 40 links. Returns an O_PATH fd of what the path names, or -EPERM (a
 * link others could change: ret->link names it), -EREMOTE (a FUSE mount
 * on the way), -ELOOP (too many links or components), -ENOENT, ...
 * ret->dirs_trusted: every directory walked (the last one included, where
 * the path names one) is root's or the caller's and writable by nobody
 * else unless sticky.
 */
#define PC_TRUSTED_FOLLOW_LAST 1u
#define PC_TRUSTED_NO_FUSE 2u
#define PC_TRUSTED_MAX_COMPONENTS 256
struct pc_trusted {
	bool dirs_trusted;		/* the directories on the way: nobody else's to change */
	char link[4096];		/* -EPERM: the link not followed */
};
int pc_path_trusted(const char *path, unsigned flags, struct pc_trusted *ret);
/*
 * Is fd (O_PATH will do) on a filesystem of kernel interfaces (procfs,
 * sysfs, debugfs, tracefs, cgroupfs, configfs, mqueue, hugetlbfs, ...)?
 * Their regular files are interfaces, not data: a read can act (a sysfs
 * resourceN does port I/O, a debugfs counter clears) and nothing there is
 * page cache to see, warm or keep. True also when it cannot tell.
 */
bool pc_fd_kernel_fs(int fd);

/* ---- util.c ---------------------------------------------------------- */

/* "4096", "64k", "1.5G", "2T" (powers of 1024); -EINVAL on junk. */
int pc_parse_size(const char *s, uint64_t *ret_bytes);
/* "1.5G"-style, into buf; returns buf. */
char *pc_human_size(uint64_t bytes, char *buf, size_t len);
double pc_now(void);			/* CLOCK_MONOTONIC seconds */
/* A small file (sysctl, sysfs, cgroup) into buf, trailing newline cut; 0 or -errno. */
int pc_read_text(const char *path, char *buf, size_t len);
/* Write value (whole, or -EIO) to an existing kernel file; 0 or -errno. */
int pc_write_text(const char *path, const char *value);
/* Room for one more element in a growing array (*arrp, *cap; n used); 0 or -ENOMEM. */
int pc_grow(void *arrp, size_t *cap, size_t n, size_t elem);
/*
 * path made absolute (from the working directory), with ".", ".." and
 * "//" resolved lexically, no link followed (a path through /proc/PID/root
 * keeps its meaning); malloc'd, NULL with errno set.
 */
char *pc_abspath(const char *path);

/* ---- residency.c ----------------------------------------------------- */

enum pc_source {
	PC_SRC_NONE,			/* unknown: see `err` */
	PC_SRC_CACHESTAT,
	PC_SRC_MINCORE,
};

struct pc_residency {
	uint64_t pages;			/* pages in the range asked */
	uint64_t cached;		/* meaningful only if source != NONE */
	uint64_t dirty;			/* cachestat only, else 0 */
	uint64_t writeback;
	uint64_t evicted;
	uint64_t recently_evicted;
	enum pc_source source;
	int err;			/* why unknown (EPERM: the kernel refuses) */
	bool stacked;			/* overlayfs: counted from the real file in
					   its layer (or through a mapping of it);
					   err, if set, says why the real file
					   was out of reach */
};

/*
 * Residency of bytes [off, off+len) of an open file of `size` bytes
 * (len == 0: to EOF). Never reports what the kernel would fake: where
 * cachestat says EPERM, or mincore would answer "all resident" for a file
 * the caller may not write, source is NONE and err says why; that is
 * still a return of 0, since the file itself was fine.
 */
int pc_fd_residency(int fd, uint64_t size, uint64_t off, uint64_t len,
		    struct pc_residency *ret);

/* Would the kernel give this caller true residency for this open file? */
bool pc_fd_residency_allowed(int fd, const struct stat *st);

/*
 * Walk the pages of [off, off+len) (page-aligned internally) in runs of the
 * same state, in bounded memory (one window of mincore at a time; windows
 * with nothing cached are skipped through cachestat). cb returns 0 to go on,
 * anything else stops the scan and is returned. Pages beyond EOF are not
 * reported. Needs pc_fd_residency_allowed(); -EPERM otherwise.
 */
typedef int (*pc_run_cb)(uint64_t first_page, uint64_t npages, bool resident, void *arg);
int pc_fd_scan(int fd, uint64_t size, uint64_t off, uint64_t len, pc_run_cb cb, void *arg);
/*
 * The resident runs of [off, off+len) as (first page, count) pairs,
 * ascending, never touching (a snapshot's runs): pc_fd_scan's, collected.
 * *ret is malloc'd (NULL with none).
 */
int pc_fd_resident_runs(int fd, uint64_t size, uint64_t off, uint64_t len, uint64_t **ret,
			size_t *ret_n);

/* ---- budget.c -------------------------------------------------------- */

struct pc_memstat {
	uint64_t mem_total;		/* bytes, /proc/meminfo */
	uint64_t mem_available;
	uint64_t cg_limit;		/* 0: no limit found */
	uint64_t cg_usage;
	char cg_path[256];		/* memory cgroup of the caller, "" if none */
};
int pc_memstat_read(struct pc_memstat *ret);
/*
 * The fields of /proc/meminfo named in keys[0..n) ("MemAvailable",
 * "Cached", "Dirty"), in bytes, into ret[i], as pc_vmstat_read reads
 * /proc/vmstat: those the kernel counts in kB, which is all but
 * HugePages_*. A field this kernel does not show leaves its ret[i] as it
 * was. Returns how many of the keys were found, or -errno.
 */
int pc_meminfo_read(const char *const *keys, uint64_t *ret, size_t n);

/*
 * How much new page cache one job may add. `take` is called before each
 * chunk is read; it re-reads the machine's state every so often and says
 * no once MemAvailable (or the cgroup's headroom) would fall below the
 * reserve, or the explicit maximum is reached.
 */
struct pc_budget {
	uint64_t max_bytes;		/* UINT64_MAX: no explicit maximum */
	uint64_t reserve;		/* keep this much available */
	uint64_t taken;			/* bytes granted so far */
	uint64_t since_check;		/* bytes granted since the last look */
	uint64_t headroom;		/* last seen available - reserve */
	int stopped;			/* 0, or why: PC_BUDGET_* */
	uint64_t rate;			/* bytes/s for pc_budget_pace, 0: no limit */
	uint64_t paced;			/* bytes paced so far */
	double t0;			/* when pacing started */
	void *lock;			/* internal */
};
enum { PC_BUDGET_OK, PC_BUDGET_MAX, PC_BUDGET_MEMORY, PC_BUDGET_CGROUP };
int pc_budget_init(struct pc_budget *b, uint64_t max_bytes, uint64_t reserve);
bool pc_budget_take(struct pc_budget *b, uint64_t bytes);
/*
 * Give back bytes taken before (a lock released: `lock --watch`), and
 * reopen a budget that stopped: the next take is judged afresh, against
 * the same maximum and headroom. bytes 0 only reopens it.
 */
void pc_budget_put(struct pc_budget *b, uint64_t bytes);
/* Sleep as long as needed to keep all callers together under b->rate. */
void pc_budget_pace(struct pc_budget *b, uint64_t bytes);
void pc_budget_release(struct pc_budget *b);
/*
 * Why a budget stopped (b->stopped), in the library's words, for people: a
 * static string ("the maximum was reached", "MemAvailable would fall below
 * the reserve", ...). A program names its own options when it prints it.
 */
const char *pc_budget_reason(int stopped);
/* The reserve where the caller names none: 5% of MemTotal, at least 256 MiB. */
uint64_t pc_default_reserve(const struct pc_memstat *m);

/* ---- walk.c ---------------------------------------------------------- */

struct pc_walk_entry {
	const char *path;		/* as reached from a root */
	int fd;				/* open O_RDONLY|O_NONBLOCK; the walker
					   closes it unless file() takes it
					   by setting fd to -1 */
	struct stat st;
	unsigned worker;		/* 0..threads-1, for per-thread totals */
};

enum pc_walk_event {
	PC_WALK_ERROR,			/* err: a failure the user must see */
	PC_WALK_VANISHED,		/* gone between listing and opening */
	PC_WALK_SKIP_SPECIAL,		/* FIFO, socket, device in a tree */
	PC_WALK_SKIP_SYMLINK,		/* not followed (no -L) */
	PC_WALK_SKIP_LOOP,		/* directory already on the path (a loop) */
	PC_WALK_SKIP_MOUNT,		/* another filesystem (-x) */
	PC_WALK_SKIP_SIZE,		/* larger than max_size */
	PC_WALK_SKIP_PATTERN,		/* excluded or not included */
	PC_WALK_DUP,			/* hardlink, or directory, seen already */
	PC_WALK_DIR,			/* a directory was entered */
	PC_WALK_NEVENTS
};

struct pc_walk_opts {
	unsigned threads;		/* 0: one per CPU, at least 2 */
	bool one_fs;			/* -x: stay on each root's filesystem */
	bool follow;			/* -L: follow symlinks inside trees */
	bool all_links;			/* count every hardlink */
	uint64_t max_size;		/* 0: no limit */
	const char *const *include;	/* fnmatch on the basename of files */
	const char *const *exclude;	/* ... of files and directories */
	/* called in worker threads; non-zero return stops the walk */
	int (*file)(struct pc_walk_entry *e, void *arg);
	/* called in worker threads, serialised by the walker */
	void (*event)(enum pc_walk_event ev, const char *path, int err, void *arg);
	void *arg;			/* for file() */
	void *event_arg;		/* for event() */
	/*
	 * Optional, one per root: an fd (O_PATH will do) of the root itself,
	 * as the caller reached it, or -1. The walk starts from that inode;
	 * the root's path only names it and is never walked (lock --watch:
	 * a directory on the way swapped for a link leads nowhere).
	 */
	const int *root_fds;
};

/* Walk the roots. Returns 0, or the first non-zero from file(), or -errno. */
int pc_walk(const char *const *roots, size_t nroots, const struct pc_walk_opts *o);
unsigned pc_walk_threads(const struct pc_walk_opts *o);

/*
 * pc_walk whose roots after roots[] come from next() as the walk
 * goes (a list of names read while it is walked: --files-from), so a list
 * of any length holds a few hundred names at once. next() is called from
 * the caller's thread while the workers walk, whenever few roots are left
 * queued; it sets *path (copied before the next call) and *rootfd (what
 * pc_walk_opts.root_fds would give for it, or -1; the walk closes it) and
 * returns 1; 0: no more; -errno stops the walk with it. Each fed root is
 * walked after everything before it, as if all were given at the start.
 */
struct pc_walk_feed {
	int (*next)(void *arg, const char **path, int *rootfd);
	void *arg;
};
int pc_walk_fed(const char *const *roots, size_t nroots, const struct pc_walk_feed *feed,
		const struct pc_walk_opts *o);

/* ---- prefetch.c: warming ---------------------------------------------- */

struct pc_progress {
	uint64_t files;			/* files finished */
	uint64_t bytes;			/* bytes asked for so far, as it goes */
	uint64_t read;			/* bytes brought in (were not cached) */
};

enum pc_engine { PC_ENGINE_AUTO, PC_ENGINE_URING, PC_ENGINE_THREADS };

struct pc_warm_opts {
	struct pc_budget *budget;	/* required; its rate paces the reads */
	uint64_t chunk;			/* 0: the device's per-call cap */
	uint64_t window;		/* bytes in flight per worker, 0: default */
	enum pc_engine engine;
	struct pc_progress *progress;	/* optional, updated atomically */
};

/* Per-worker warming state: one per thread, never shared. */
struct pc_warmer;
int pc_warmer_new(const struct pc_warm_opts *o, struct pc_warmer **ret);
/*
 * Queue [off, off+len) of an open file for warming. The warmer takes fd
 * and closes it when the file is done, on failure too. Reads are issued
 * at once; completion is checked later, so many files are in flight
 * together. Per-file failures are delivered through pc_warmer_next_result().
 * The budget is taken for the pages not cached yet: where only some of
 * them fit, the range is cut where the grant ends (the result's `cut`), the
 * budget stops and the next add returns -ENOSPC; where none fit, -ENOSPC.
 */
int pc_warmer_add(struct pc_warmer *w, int fd, const char *path,
		  const struct stat *st, uint64_t off, uint64_t len);
/* The same for a list of page runs: pairs (first page, count), ascending. */
int pc_warmer_add_runs(struct pc_warmer *w, int fd, const char *path, const struct stat *st,
		       const uint64_t *runs, size_t nruns);
/* Wait for everything queued; returns 0 or a budget stop (-ENOSPC). */
int pc_warmer_drain(struct pc_warmer *w);

struct pc_warm_result {
	char *path;			/* owned by the warmer until next call */
	uint64_t pages;			/* pages in the range */
	uint64_t resident;		/* verified resident after warming */
	uint64_t read;			/* pages that were not cached before */
	int err;			/* 0, or why not all resident */
	bool by_read;			/* proven by reading every page (small
					   files, or mincore not allowed), not
					   by mincore */
	bool denied;			/* the kernel refuses residency to us */
	uint64_t cut;			/* pages of the range left out, not read
					   nor verified, because the budget ran
					   short inside the file (it stopped);
					   those past the cut that were cached
					   count in resident, not here */
};
/* Pop one finished file's result; returns 1 if one was popped, 0 if none. */
int pc_warmer_next_result(struct pc_warmer *w, struct pc_warm_result *ret);
const char *pc_warmer_engine(const struct pc_warmer *w);
void pc_warmer_free(struct pc_warmer *w);

/* Largest length one readahead call honours for this file's device. */
uint64_t pc_fd_readahead_cap(int fd, const struct stat *st);

/* ---- evict.c ---------------------------------------------------------- */

struct pc_evict_result {
	struct pc_residency before;
	struct pc_residency after;
	bool synced;			/* dirty pages were written first */
};
int pc_fd_evict(int fd, uint64_t size, uint64_t off, uint64_t len,
		struct pc_evict_result *ret);

/* ---- proc.c: who maps or locks a file ---------------------------------- */

struct pc_mapper {
	int pid;
	bool locked;			/* the mapping is mlocked */
	char comm[32];			/* as the process set it: any bytes */
};
/* Up to max processes mapping (dev, ino); returns how many were found. */
int pc_file_mappers(dev_t dev, ino_t ino, struct pc_mapper *ret, int max);
/*
 * The same for the file open as fd; through an overlay also the mappings
 * that name its real file (the kernel maps that one: /proc/PID/maps shows
 * the layer's device and inode, or the overlay's device with the real
 * inode number, not what stat says; a file of that number in another layer
 * shows the same there, told apart by /proc/PID/map_files where readable).
 */
int pc_fd_mappers(int fd, struct pc_mapper *ret, int max);
/*
 * The other (dev, ino) pairs under which the kernel may name the file open
 * as fd, where it is a file of an overlay (0 pairs elsewhere): each lower
 * level's file down to the real one, which the page cache events (filemap
 * tracepoints) and its pages belong to; and the overlay's superblock
 * device with the inode number, which maps show from 6.6 where the layers
 * are on other filesystems. Up to max pairs (at least 2); how many, or
 * -errno. *ret_real: the first pair is the real file's (false where it is
 * out of reach, as in a container whose layers are the host's paths).
 */
int pc_fd_stack_ids(int fd, dev_t *ret_devs, uint64_t *ret_inos, int max, bool *ret_real);
/*
 * The other way: the path through one of our overlay mounts of the file
 * open as fd, a file in a layer (what a page cache event names, found by
 * its inode): 0 and a malloc'd path that leads through the overlay to fd's
 * file; -ENOENT where no overlay of ours shows it (a layer path given at
 * mount time is compared as given: one through a symbolic link does not
 * match). Where several do (containers of one image), the first.
 */
int pc_fd_unstack(int fd, char **ret_path);
/*
 * Inside a container the layers are on a filesystem mounted nowhere in
 * our namespace: pc_dev_mounted says whether any mount of ours is on dev
 * (1), none is (0), or -errno. The events then name (such a device, ino),
 * and the overlay file shows that inode number (without xino):
 * pc_pid_stacked_path finds among pid's open and mapped files the one file
 * of an overlay, numbered ino, whose real file is out of reach: 0 and a
 * malloc'd path; -ENOENT where there is none, or more than one.
 */
int pc_dev_mounted(dev_t dev);
int pc_pid_stacked_path(pid_t pid, uint64_t ino, char **ret_path);

/* One record of /proc/PID/maps (or an smaps header line). */
struct pc_map {
	uint64_t start, end;		/* the address range [start, end) */
	uint64_t offset;		/* in the file, bytes */
	dev_t dev;
	uint64_t ino;			/* 0: not a file */
	char perms[5];			/* "r-xp" */
	const char *name;		/* into the line: "" if none; a path
					   as the kernel prints it (a newline
					   as \012, maybe " (deleted)") */
};
/*
 * Parse one whole line (as getline returns it, with or without its '\n'):
 * every field must be there and well formed, or -EINVAL. Never give it a
 * piece of a line: a name may be 4 KiB long.
 */
int pc_map_parse(char *line, struct pc_map *ret);

/* ---- lock.c ----------------------------------------------------------- */

struct pc_lock {
	void *addr;
	size_t len;
	uint64_t maps;			/* mappings (VMAs) it split into; 0: none */
};
/* A file's data in more pieces than this is locked up to the last of them. */
#define PC_LOCK_MAX_RANGES 1024
/*
 * Map [off, off+len) of fd and mlock its data, never a hole (what SEEK_DATA
 * finds there, in whole pages): a hole's page would be allocated, zeroed
 * and pinned. The lock lasts until pc_unlock(). A file that is all holes
 * gives a lock of nothing (addr NULL).
 */
int pc_fd_lock(int fd, uint64_t size, uint64_t off, uint64_t len, struct pc_lock *ret);
/* The same, at most max bytes locked (0: no limit); *ret_locked: the bytes locked. */
int pc_fd_lock_max(int fd, uint64_t size, uint64_t off, uint64_t len, uint64_t max,
		   struct pc_lock *ret, uint64_t *ret_locked);
/*
 * The bytes pc_fd_lock would lock of [off, off+len) of fd now: its data in
 * whole pages. 0, 1 if data lies past the first PC_LOCK_MAX_RANGES pieces
 * (not counted, never locked), or -errno.
 */
int pc_fd_data_bytes(int fd, uint64_t size, uint64_t off, uint64_t len, uint64_t *ret);
/*
 * The same, and in *ret_maps (may be NULL) the mappings its lock would
 * split into: a piece of data each, and the gap between two: 2 a piece,
 * less 1. A process may hold vm.max_map_count mappings in all.
 */
int pc_fd_data_maps(int fd, uint64_t size, uint64_t off, uint64_t len, uint64_t *ret_bytes,
		    uint64_t *ret_maps);
/* vm.max_map_count: the mappings a process may hold (65530 where it cannot be read). */
uint64_t pc_max_map_count(void);
void pc_unlock(struct pc_lock *l);

/* ---- cgroup.c: memory cgroups, v1 and v2 ------------------------------ */

/*
 * The directory of the memory cgroup a user names with `spec`, in the first
 * of these forms that fits:
 *   the cgroupfs directory     /sys/fs/cgroup/memory/a/b (v1), /sys/fs/cgroup/a/b (v2);
 *                              another v1 hierarchy's (/sys/fs/cgroup/systemd/a/b):
 *                              the same path in the memory hierarchy
 *   the path in the hierarchy  /a/b (systemctl show -p ControlGroup), a/b, b
 *   a cgroup's name            mariadb.service, user.slice, foo\x2dbar.service:
 *                              a directory of exactly that name anywhere below
 *   a container ID             12 to 64 lowercase hex digits, the start of the ID
 *                              in libpod-ID.scope, docker-ID.scope,
 *                              cri-containerd-ID.scope, crio-ID.scope, libpod-ID
 *                              (podman's cgroupfs driver) or a directory named ID
 *                              (other cgroupfs drivers)
 * The search goes 16 levels down and looks at 100,000 cgroups at most; it
 * follows no link, and nothing resolving outside the hierarchy is taken.
 * 0, or -EINVAL ('..', empty), -ENOENT, -EXDEV (outside), -ENOTUNIQ (more
 * than one match), -E2BIG (too many cgroups to search); why (may be NULL)
 * gets what was tried, or the candidates.
 */
int pc_cgroup_resolve(const char *spec, char *ret, size_t len, char *why, size_t whylen);
/* The same, in a hierarchy given (tests; one mounted elsewhere). */
struct pc_cgroup_fs {
	const char *base;		/* where hierarchies are mounted (/sys/fs/cgroup); may be NULL */
	const char *root;		/* the memory hierarchy's root directory */
	int version;			/* 1 or 2 */
	unsigned max_seen;		/* cgroups searched, at most (0: 100,000) */
};
int pc_cgroup_resolve_in(const struct pc_cgroup_fs *fs, const char *spec, char *ret, size_t len,
			 char *why, size_t whylen);
/*
 * Where to watch (inotify) for the cgroup `spec` names to appear: the
 * nearest directory that exists at or above where it would be, inside
 * the memory hierarchy. -EINVAL: a bare name (looked for anywhere, so no
 * one place), or '..'; -EXDEV: a link leads out of the hierarchy.
 */
int pc_cgroup_watch_dir(const char *spec, char *ret, size_t len);
int pc_cgroup_watch_dir_in(const struct pc_cgroup_fs *fs, const char *spec, char *ret, size_t len);
/*
 * A running container, named as users have it: the ID of a process in it,
 * or what pc_cgroup_resolve takes (the container's ID or a prefix of it,
 * its cgroup's path or name). Sets *ret_pid to a process in it (the PID
 * given, or the first in cgroup.procs of the cgroup or, where that has
 * none, of the first below it that has one) and cgdir to its memory
 * cgroup's directory; the container's root is then /proc/PID/root. 0, or
 * pc_cgroup_resolve's errors, -ESRCH (no process in it: not running).
 */
int pc_container_find(const char *spec, pid_t *ret_pid, char *cgdir, size_t len, char *why,
		      size_t whylen);
/* pc_cgroup_resolve without the reason. */
int pc_cgroup_dir(const char *path, char *ret, size_t len);
/* Move the calling process into it (cgroup.procs). */
int pc_cgroup_join(const char *path);

struct pc_cgroup_stat {
	int version;			/* 1 or 2 */
	uint64_t file;			/* page cache, bytes (hierarchical) */
	uint64_t active_file, inactive_file, dirty, writeback, shmem, mapped, anon;
	uint64_t refault_file;		/* workingset refaults (events) */
	uint64_t activate_file;		/* workingset activations (events) */
	bool has_activate;		/* v1 has no activation counter */
	uint64_t limit;			/* bytes; UINT64_MAX: none */
	uint64_t usage;
	bool has_usage;			/* the v2 root has no memory.current */
	bool has_psi;
	double psi_some10, psi_full10;	/* memory.pressure avg10, % */
};
/* The memory hierarchy's mount, and whether it is v1 or v2. */
int pc_cgroup_root(char *ret, size_t len, int *ret_version);
/* The caller's memory cgroup, as under the root ("/a/b"). */
int pc_cgroup_self(char *ret, size_t len);
/* Process pid's memory cgroup, the same way (pid 0: the caller's); -ENOENT: none. */
int pc_cgroup_of(pid_t pid, char *ret, size_t len);
/* Parse a memory.stat text (v1 or v2); the tests feed recorded files. */
int pc_cgroup_parse_stat(int version, const char *stat, struct pc_cgroup_stat *ret);
/* Read one cgroup directory's memory.stat, limit, usage and PSI. */
int pc_cgroup_read(const char *dir, int version, struct pc_cgroup_stat *ret);
/*
 * Where this process can make memory cgroups of its own, as things stand:
 * its own cgroup (v1: always; v2: only if its cgroup.subtree_control
 * already has memory, else -EOPNOTSUPP). Never an ancestor: a child there
 * would escape the caller's limits. pc_cgroup_nest_init makes the room
 * where v2 does not have it yet.
 */
int pc_cgroup_child_parent(char *ret, size_t len, int *ret_version);
/*
 * v2: what it takes to give children of the caller's cgroup `dir` a
 * controller ("memory"), from dir's cgroup.subtree_control, cgroup.controllers,
 * cgroup.type (absent at the root) and cgroup.procs; reads only.
 * -EOPNOTSUPP: the controller is not delegated to dir (its parent keeps it);
 * -EBUSY: a process other than `self` is in dir, and a non-root cgroup
 * with processes may not hand controllers on (v2's no-internal-process rule).
 */
struct pc_cgroup_plan {
	bool leaf;			/* move self into a leaf beneath dir first */
	bool enable;			/* write +memory to dir's cgroup.subtree_control */
};
int pc_cgroup_plan_v2(const char *dir, const char *controller, pid_t self,
		      struct pc_cgroup_plan *ret);
/*
 * Room for memory cgroups beneath the caller's own: v1, its memory cgroup
 * as it is; v2, made as pc_cgroup_plan_v2 says (the caller moved into
 * PARENT/pagecache-run-PID-self, memory turned on in PARENT's
 * subtree_control). _release undoes it, once the children are gone.
 * v2 where systemd manages the host: unless the caller's cgroup is
 * delegated and holds only the caller, the caller first asks systemd for
 * a transient scope pagecache-PID.scope with Delegate=yes (in the slice of
 * the unit it was in, with that unit's memory.max/high) and moves into it;
 * PARENT is then the scope, which systemd removes once the caller exits.
 * No scope to be had (no bus): as before, and n->why says why.
 * pc_cgroup_nest_at: the v2 part, for cgroup dir and any controller (the
 * tests use hugetlb where the v2 memory controller cannot be had).
 */
struct pc_cgroup_nest {
	int version;			/* 1 or 2 */
	char parent[512];		/* the caller's cgroup: children go here */
	char leaf[600];			/* v2: where the caller moved to; "" if it did not */
	bool enabled;			/* v2: we turned it on in parent's subtree_control */
	char controller[16];		/* v2: which ("memory") */
	char scope[64];			/* v2: the scope systemd made for us; "" if none */
	char why[256];			/* v2: why systemd gave none, when asked; or "" */
};
int pc_cgroup_nest_init(struct pc_cgroup_nest *n);
int pc_cgroup_nest_at(struct pc_cgroup_nest *n, const char *dir, const char *controller);
int pc_cgroup_nest_release(struct pc_cgroup_nest *n);
/* Move every process in cgroup `from` to `to`; how many moved, or -errno. */
int pc_cgroup_move_procs(const char *from, const char *to);
/*
 * Empty and remove a cgroup that a dead run left: a lowered v1 limit lifted,
 * its processes killed, its page cache dropped, rmdir. 0 or -errno.
 */
int pc_cgroup_remove(const char *dir);
/* mkdir; then check the memory controller is there (-EOPNOTSUPP, removed). */
int pc_cgroup_create(const char *parent_dir, const char *name, char *ret, size_t len);
int pc_cgroup_enter(const char *dir, pid_t pid);
/* Drop the page cache charged to it: v1 force_empty, v2 memory.reclaim. */
int pc_cgroup_drop_cache(const char *dir, int version);
int pc_cgroup_write(const char *dir, const char *file, const char *value);
/*
 * Set the memory limit (v1 memory.limit_in_bytes, v2 memory.max; UINT64_MAX:
 * none) and read back what the kernel keeps (v1 rounds down to a page) into
 * *ret_set (may be NULL). -EIO if it did not take the value asked.
 */
int pc_cgroup_set_limit(const char *dir, int version, uint64_t bytes, uint64_t *ret_set);
/*
 * What a limit did to a cgroup, as counters since it was made (v2's count
 * its descendants too): v1 memory.failcnt and memory.oom_control, v2
 * memory.events. An OOM kill in a memory cgroup kills a process of that
 * cgroup (or beneath it) only.
 */
struct pc_cgroup_events {
	uint64_t limit_hits;		/* charges that hit the limit (v1 failcnt, v2 "max") */
	uint64_t oom;			/* v2: OOMs; v1: 1 while under OOM now (under_oom) */
	uint64_t oom_kills;		/* processes the OOM killer killed in it */
	bool has_oom_kills;		/* v1 before Linux 4.13 does not count them */
};
int pc_cgroup_events_read(const char *dir, int version, struct pc_cgroup_events *ret);
/*
 * Has the cgroup `dir` a process in it or beneath it? 1 yes, 0 no, or
 * -errno (-ENOENT: gone, as systemd removes a stopped unit's). v2 reads
 * cgroup.events' populated; v1, which has none, each cgroup.procs down,
 * 16 levels and PC_CGROUP_POPULATED_MAX cgroups at most (past that with
 * no process found: -E2BIG).
 */
#define PC_CGROUP_POPULATED_MAX 4096
int pc_cgroup_populated(const char *dir, int version);

/*
 * Every cgroup at and below directory dir, each before those below it:
 * cb(e, arg). No link is followed below dir, and a cgroup removed on the
 * way is left out. Paths are on the heap: cgroups nest as deep as whoever
 * may make them likes. cb returns 0 to go on, PC_CGROUP_WALK_SKIP to leave
 * out what is below e, anything else (-errno, PC_CGROUP_WALK_STOP) to end
 * the walk, which returns it. 0, or -errno: dir cannot be opened, -ENOMEM.
 */
struct pc_cgroup_entry {
	const char *path;		/* dir, then dir/a, dir/a/b, ... */
	const char *rel;		/* below dir: "" for dir itself, then "/a", "/a/b" */
	const char *name;		/* the last component of path */
	int fd;				/* the directory, open (O_RDONLY): for *at() calls */
	unsigned depth;			/* 0 for dir */
};
#define PC_CGROUP_WALK_SKIP 1
#define PC_CGROUP_WALK_STOP 2
typedef int (*pc_cgroup_walk_cb)(const struct pc_cgroup_entry *e, void *arg);
int pc_cgroup_walk(const char *dir, pc_cgroup_walk_cb cb, void *arg);

/* ---- vmstat.c: /proc/vmstat, and the swap readahead controller -------- */

#define PC_VMSTAT_MISSING UINT64_MAX
/*
 * Fill vals[i] with the counter names[i] from a /proc/vmstat text (missing
 * ones: PC_VMSTAT_MISSING). Returns how many were found, or -EBADMSG.
 */
int pc_vmstat_parse(const char *text, const char *const *names, uint64_t *vals, size_t n);
int pc_vmstat_read(const char *const *names, uint64_t *vals, size_t n);

/*
 * A controller for vm.page-cluster in the spirit of Konstantin Khlebnikov's
 * 2012 RFC: readahead hits push the window up, misses pull it down. Fed,
 * once an interval, the deltas of swap_ra, swap_ra_hit and pswpin, it
 * returns the page-cluster to use. Hysteresis: a move needs `confirm`
 * intervals in a row beyond a threshold, and between the thresholds it
 * holds. An interval with fewer than `min_swapins` swap-ins is added to
 * the next (up to 4 together: a slow device at page-cluster 0 swaps in
 * little each interval); fewer over 4 is idle, and forgotten. At 0 (no readahead, so no hits to see) it probes 1 after
 * `probe_wait` intervals of swapping: `probe_after` (1) at first, doubled
 * after each probe that found no hits, up to `probe_max` (32), and back to
 * `probe_after` when a probe pays. While climbing from a probe that paid,
 * one interval of hits is enough to move up. `settled_at` is the interval
 * (1, 2, ... of `intervals` fed so far) of the last move that was not a
 * fruitless probe or its return: the time it took to converge.
 */
struct pc_swap_tuner {
	int pc;				/* current page-cluster */
	int min_pc, max_pc;		/* 0 and 5 by default */
	double up_ratio, down_ratio;	/* hit ratio thresholds: 0.75, 0.40 */
	uint64_t min_swapins;		/* fewer pswpin (over up to 4 intervals): no decision (64) */
	int confirm;			/* intervals in a row to move (2) */
	int probe_after;		/* intervals at 0 before the first probe (1) */
	int up, down, idle_at_zero;	/* streaks */
	double last_ratio;		/* the last interval's hit ratio; -1: none */
	int probe_max;			/* the longest wait between probes (32) */
	int probe_wait;			/* intervals at 0 before the next probe */
	int probing;			/* 1: at 1 by a probe not yet judged; 2: climbing from one */
	uint64_t intervals;		/* intervals fed */
	uint64_t probe_at;		/* the interval of the last probe */
	uint64_t settled_at;		/* the interval of the last move that stayed; 0: none */
	uint64_t probes, fruitless;	/* probes made, and those that found no hits */
	uint64_t acc_ra, acc_hit, acc_swpin;	/* intervals too thin to judge, summed */
	int acc_n;			/* how many (a slow device at 0 swaps in little) */
};
void pc_swap_tuner_init(struct pc_swap_tuner *t, int page_cluster);
int pc_swap_tuner_step(struct pc_swap_tuner *t, uint64_t d_ra, uint64_t d_hit, uint64_t d_swpin);

/* ---- caps.c ----------------------------------------------------------- */

/*
 * Does this thread hold capability `cap` (CAP_IPC_LOCK, ... from
 * <linux/capability.h>) in its effective set? Privilege is capabilities,
 * never uid 0. False is a definite no; true means the kernel may allow
 * it (a check against the initial user namespace can still refuse a
 * container's root), so callers still report what the kernel answers.
 */
bool pc_have_cap(int cap);

/* ---- kpage.c ---------------------------------------------------------- */

/*
 * Of the resident page runs given (from pc_fd_scan), which pages are on the
 * active LRU list: runs in *ret (malloc'd). Errors as pc_fd_probe_pages,
 * and -EOPNOTSUPP where the multi-gen LRU is on (or its state cannot be
 * read): it keeps pages in generations and clears PG_active on them, so
 * there is no active list to report.
 */
int pc_fd_active_runs(int fd, uint64_t size, const uint64_t *runs, size_t nruns,
		      uint64_t **ret, size_t *ret_n);
/*
 * For each resident page of the runs: its /proc/kpageflags bits and, with
 * want_cgroup, the inode of the memory cgroup it is charged to
 * (/proc/kpagecgroup; 0: none). cb returns non-zero to stop. -EPERM
 * without CAP_SYS_ADMIN (in the initial user namespace: pagemap hides page
 * frame numbers otherwise), checked before any page is touched; -EACCES
 * where the caller may not read /proc/kpageflags or /proc/kpagecgroup
 * (root's, mode 0400: uid 0 or CAP_DAC_READ_SEARCH); -ENOENT where the
 * kernel has neither (CONFIG_PROC_PAGE_MONITOR).
 */
typedef int (*pc_page_cb)(uint64_t page, uint64_t flags, uint64_t cgroup_ino, void *arg);
int pc_fd_probe_pages(int fd, uint64_t size, const uint64_t *runs, size_t nruns,
		      bool want_cgroup, pc_page_cb cb, void *arg);
/*
 * Why a probe failed, for people: "needs CAP_SYS_ADMIN (kpageflags)" and
 * the like (kpagecgroup with want_cgroup). A static string.
 */
const char *pc_kpage_reason(int err, bool want_cgroup);
/*
 * The multi-gen LRU's switch: 1 on, 0 off or not built (no
 * /sys/kernel/mm/lru_gen/enabled), -errno if unreadable. _parse reads the
 * file's text ("0x0007\n": bit 0, LRU_GEN_CORE, is the switch); -EINVAL
 * for anything else.
 */
int pc_lru_gen_enabled(void);
int pc_lru_gen_parse(const char *text);

/* ---- trace.c: the filemap tracepoints through perf_event_open ----------- */

/*
 * Which file pages are used, brought in and dropped, as the kernel's
 * filemap tracepoints say (no BPF, no kprobes: these events are an ABI the
 * kernel keeps). Needs CAP_PERFMON (or CAP_SYS_ADMIN) unless
 * kernel.perf_event_paranoid is -1, and tracefs to read the events' ids and
 * formats: where it is not mounted, a short-lived child mounts it in a
 * mount namespace of its own, so nothing is left mounted, even after a
 * kill -9. Field offsets come from each event's format (libtraceevent).
 */
enum pc_trace_kind {
	PC_TR_ADD       = 1,  /* filemap:mm_filemap_add_to_page_cache: pages brought in (a miss) */
	PC_TR_DELETE    = 2,  /* filemap:mm_filemap_delete_from_page_cache: pages dropped (evicted) */
	PC_TR_GET_PAGES = 4,  /* filemap:mm_filemap_get_pages: read()/splice asked for [first,last] */
	PC_TR_MAP_PAGES = 8,  /* filemap:mm_filemap_map_pages: fault-around over [first,last] */
	PC_TR_FAULT     = 16, /* filemap:mm_filemap_fault: a fault at first (== last) */
	PC_TR_DIRTY     = 32, /* writeback:writeback_dirty_folio: a page dirtied (dev may be 0) */
};
#define PC_TR_ALL	63u
/* The use events (Linux 6.12); add and delete are there since 4.x, writeback_dirty_folio 5.17. */
#define PC_TR_USE	(PC_TR_GET_PAGES | PC_TR_MAP_PAGES | PC_TR_FAULT)
struct pc_trace_event {
	unsigned kind;          /* one PC_TR_ */
	uint64_t time_ns;       /* perf's clock (CLOCK_MONOTONIC: use_clockid) */
	uint32_t pid, tid, cpu;
	uint64_t cgroup;        /* cgroup id of the task (PERF_SAMPLE_CGROUP), 0 if unknown */
	uint64_t dev;           /* userspace st_dev (makedev(s_dev>>20, s_dev&0xfffff)); 0 if the event has none */
	uint64_t ino;
	uint64_t first, last;   /* page indexes, inclusive; ADD/DELETE: the folio (index .. index+2^order-1) */
};
struct pc_trace_opts {
	unsigned kinds;         /* PC_TR_ mask */
	pid_t pid;              /* 0: system-wide; else this process only ... */
	bool children;          /* ... and the children it forks later (perf inherit) */
	int cgroup_fd;          /* -1, or an open cgroup directory: only its tasks (PERF_FLAG_PID_CGROUP) */
	unsigned ring_pages;    /* data pages per CPU ring (power of two); 0: a default */
	unsigned optional;      /* kinds of `kinds` this kernel may lack: opened without them
				   (pc_trace_kinds says which are open); 0: all are needed */
	bool count_accessed;    /* where get_pages is asked for but missing (before 6.12): count
				   pages marked accessed instead, if kprobes exist (pc_trace_accessed) */
};
struct pc_trace;
/*
 * -errno with err saying why (no CAP_PERFMON/SYS_ADMIN and
 * perf_event_paranoid > -1, an event missing on this kernel, tracefs
 * neither mounted nor mountable...). pid mode covers the process's threads,
 * those it starts later included; with children, the processes it forks
 * after this call too. cgroup_fd mode covers the cgroup and those below it.
 */
int pc_trace_open(const struct pc_trace_opts *o, struct pc_trace **ret, char *err, size_t errlen);
/*
 * An fd to poll(2) for POLLIN: some ring is a quarter full (the kernel
 * wakes readers at a watermark, not per event: drain on a timer too).
 */
int pc_trace_fd(const struct pc_trace *t);
/*
 * The kinds open: opts.kinds less the optional ones this kernel lacks.
 * Before 6.12 there is no PC_TR_USE: what was brought in (ADD) and dropped
 * (DELETE) is all the kernel says, so a use of a page already cached (a
 * hit) is not seen; from a cold cache, the misses are the pages used.
 */
unsigned pc_trace_kinds(const struct pc_trace *t);
/*
 * With count_accessed, before 6.12: the calls of folio_mark_accessed (else
 * mark_page_accessed) so far, one a folio read (a hit or a miss), as bcc's
 * cachestat counts them: a kprobe through perf's kprobe PMU, counted, not
 * sampled, so totals only (no file, no process). ret_func: the function.
 * 0, or -errno: -ENOENT none (not asked for, the use events are there,
 * or no kprobe PMU: a kernel without CONFIG_KPROBES), -EOPNOTSUPP in pid
 * mode without children (the counter follows the processes forked too and
 * cannot tell them), or neither function could be probed. A kprobe is no ABI: an approximation where the use
 * events (6.12) are missing.
 */
int pc_trace_accessed(const struct pc_trace *t, uint64_t *ret_count, const char **ret_func);
/* Hand every event now in the rings to fn (per CPU in order); fn's nonzero return stops and is
   returned. >= 0: events handed; -errno. Never blocks. */
int pc_trace_drain(struct pc_trace *t, int (*fn)(const struct pc_trace_event *e, void *arg), void *arg);
uint64_t pc_trace_lost(const struct pc_trace *t);   /* events lost to ring overflow so far */
void pc_trace_close(struct pc_trace *t);            /* NULL-safe; undoes everything open did */
/*
 * The names processes take and the processes forked, as perf record keeps
 * them: a dummy software event a CPU with comm and task records, so that a
 * process too short-lived for /proc to be read in time (cat, grep) still
 * has a name. pid 0: every process; else that one, and with children those
 * it forks from now on. The same privilege as pc_trace_open. Open is best
 * effort: a CPU whose event cannot be opened (offline) is left out, and
 * -errno only where none could be. Drain hands every record now in the
 * rings to fn (per CPU in order: a fork on one CPU and the exec after it on
 * another come in either order); fn's nonzero return stops and is returned.
 * >= 0: records handed; -errno. Never blocks.
 */
enum pc_task_kind {
	PC_TASK_COMM = 1,	/* PERF_RECORD_COMM: a thread took a name (exec, prctl) */
	PC_TASK_FORK = 2,	/* PERF_RECORD_FORK: a process or thread was made */
};
struct pc_task_event {
	unsigned kind;		/* one PC_TASK_ */
	uint32_t pid, tid;	/* COMM: the thread named; FORK: the new one */
	uint32_t ppid;		/* FORK: the parent process */
	char comm[16];		/* COMM: the name (TASK_COMM_LEN) */
};
struct pc_task_trace;
int pc_task_trace_open(pid_t pid, bool children, struct pc_task_trace **ret);
int pc_task_trace_drain(struct pc_task_trace *t,
			int (*fn)(const struct pc_task_event *e, void *arg), void *arg);
void pc_task_trace_close(struct pc_task_trace *t);	/* NULL-safe */
/* (dev, ino) -> an open file: open_by_handle_at on a mount of dev (FILEID_INO32_GEN, gen 0: ext4's
   wildcard), checked by fstat (same dev and ino, regular file). -errno (-ESTALE, -EOPNOTSUPP...).
   Needs CAP_DAC_READ_SEARCH. -ENODEV: no mount of dev in this mount namespace. */
int pc_inode_open(uint64_t dev, uint64_t ino, int flags);
/*
 * The cgroup a user names (any form pc_cgroup_resolve takes, or a directory
 * of the perf_event hierarchy) as an open directory of the hierarchy
 * perf_event is on (v1's perf_event, else cgroup v2), for
 * pc_trace_opts.cgroup_fd. A memory cgroup of v1 is looked for at the
 * same path there. -errno, why says what was tried.
 */
int pc_trace_cgroup_open(const char *spec, char *why, size_t whylen);
/* The kernel's dev_t of an event (MAJOR<<20 | MINOR) as userspace's st_dev. */
uint64_t pc_trace_dev(uint32_t kdev);

/* ---- profile.c: the snapshot file (docs/snapshot-format.md) ------------ */

struct pc_profile_meta {
	uint64_t created;		/* unix seconds */
	uint32_t page_size;
	char root[4096];		/* paths in the file are relative to it */
	char host[256];
	/* format version 3 (0 in older files) */
#define PC_META_RECORDED 1u		/* made by `record`: used ranges carry times */
	uint32_t flags;			/* PC_META_ */
	uint64_t lost;			/* record: events lost (ring overflow) */
	uint64_t duration_ms;		/* record: how long it recorded */
	/* appended to META after version 4's fields (older files: 0, old readers skip it) */
#define PC_META_SRC_USE 1u		/* record saw every use: the 6.12 use events */
#define PC_META_SRC_MISSES 2u		/* record saw misses only (pages brought in): hits unseen */
	uint32_t source;		/* record: PC_META_SRC_; 0 unknown (a file of before) */
	/* appended after source (older files: 0, old readers skip it) */
#define PC_META_ACTIVE_UNKNOWN 1u	/* active pages could not be read (no CAP_SYS_ADMIN, the
					 * multi-gen LRU): the file's none means unknown, not 0 */
	uint32_t active;		/* PC_META_ACTIVE_; 0: as the files say */
};

struct pc_profile_file {
	char *path;			/* relative to the root, no "..", no leading / */
	uint64_t size;
	int64_t mtime_s;
	uint32_t mtime_ns;
	uint64_t dev, ino, gen;		/* identity on the snapshot's host */
	uint64_t *runs;			/* pairs (first page, count), ascending */
	size_t nruns;
	uint64_t *active;		/* pairs: pages on the active LRU (root only) */
	size_t nactive;
	/*
	 * What tells the same file from a new one later (format version 2):
	 * `ident` says which of gen, btime and fsid were known (0 in a
	 * version 1 file, but PC_IDENT_GEN where its gen is not 0). fsid is
	 * statfs's f_fsid: unlike st_dev, stable across reboots on ext4 and
	 * btrfs (their UUID) and overlayfs (its own UUID).
	 */
#define PC_IDENT_GEN	1u		/* gen: FS_IOC_GETVERSION answered */
#define PC_IDENT_BTIME	2u		/* btime: statx STATX_BTIME */
#define PC_IDENT_FSID	4u		/* fsid: f_fsid, not 0 */
	uint32_t ident;
	int64_t btime_s;		/* birth time */
	uint32_t btime_ns;
	uint64_t fsid;			/* the filesystem's f_fsid */
	/*
	 * Format version 3: triples (first page, count, ms after the
	 * recording began): when each range was first used; ascending by
	 * page, disjoint (they may touch), inside the cached runs; pages of
	 * runs no triple covers have no known time.
	 */
	uint64_t *used;
	size_t nused;
	/*
	 * PC_IDENT_BDEV (version 3): the record is a block device's own cache
	 * (filesystem metadata): path is the device's kernel name ("loop0",
	 * one component), dev its device number (st_rdev; == st_dev of the
	 * files on it), fsid the filesystem on it (if known), size its size
	 * in bytes (BLKGETSIZE64), runs its cached pages. Not a path under
	 * the root: never open it as one.
	 */
#define PC_IDENT_BDEV	8u
	/*
	 * PC_IDENT_DIR (version 5): the record is a directory beneath the
	 * root (snapshot --metadata: every directory its walk entered), path
	 * as a file's, dev, ino, mtime and identity its own; size 0 and no
	 * runs. restore reads it (getdents, statx of its entries) where the
	 * filesystem's metadata was not read through its block device. Not a
	 * file: counts of files leave it out.
	 */
#define PC_IDENT_DIR	64u
	/*
	 * PC_IDENT_LAYER (version 6): the file's data came from a container
	 * image's layer (read through an overlay), whose digest is `layer`:
	 * the sha256 of the layer's uncompressed tar, the same on every host
	 * (containers/storage's diff-digest, docker's diff ID). restore takes
	 * a file of the same layer for the same file wherever it is.
	 */
#define PC_IDENT_LAYER	128u
	uint8_t layer[32];
};
/* A block device record's name: one component of [A-Za-z0-9._+:!-], not starting with '.' */
bool pc_profile_bdev_name_ok(const char *name);
/*
 * A layer digest (PC_IDENT_LAYER) as text, "sha256:" and `chars` of its
 * 64 hex digits (all at 64 or more): PC_LAYER_TEXT bytes hold the whole.
 */
#define PC_LAYER_TEXT 72
void pc_profile_layer_text(const uint8_t layer[32], unsigned chars, char *out, size_t outlen);
/* The earliest time in f->used (UINT64_MAX if none). */
uint64_t pc_profile_first_use(const struct pc_profile_file *f);
/*
 * Fill f's gen, btime and fsid (and ident) from the open file fd, as far
 * as its filesystem tells them: ext4, xfs and btrfs have a generation;
 * tmpfs and overlayfs do not (ENOTTY), but have a birth time.
 */
void pc_profile_identify(int fd, struct pc_profile_file *f);
void pc_profile_file_release(struct pc_profile_file *f);

/*
 * Writing is atomic: records go to a temporary file beside `path`, which
 * is fsynced and renamed over it only by pc_profile_commit. Any failure
 * (a full disk included) leaves the previous file as it was.
 */
struct pc_profile_writer;
/*
 * Whether a snapshot may be written at path: 0 if nothing is there, or a
 * regular file; -ELOOP for a symbolic link (neither written through nor
 * replaced: `-o /dev/stdout` must not turn the system's link into a
 * root-only file), -EISDIR for a directory, -EEXIST for anything else (a
 * device, FIFO or socket is never replaced: nor must `-o /dev/null`). create and
 * commit both check; a command checks first too, before its long work.
 */
int pc_profile_check_target(const char *path);
/*
 * pc_profile_check_target, and a temporary file made beside path as the
 * writer makes it (then removed): a missing or read-only directory, or
 * one the caller may not write, is -errno now, before a long recording,
 * not at its end. With ret_dfd, path's directory (O_PATH) on success, for
 * pc_profile_createat: the snapshot goes where it was probed, even if the
 * directory is renamed or a link put at its path meanwhile. Close it.
 */
int pc_profile_probe_target(const char *path, int *ret_dfd);
int pc_profile_create(const char *path, const struct pc_profile_meta *m,
		      struct pc_profile_writer **ret);
/* pc_profile_create in dfd, path's directory as pc_profile_probe_target gave it (-1: path's) */
int pc_profile_createat(int dfd, const char *path, const struct pc_profile_meta *m,
			struct pc_profile_writer **ret);
/*
 * The file is created 0600. A path already added is -EEXIST, active runs
 * that are not inside the cached runs -EINVAL: readers refuse both; so
 * are used triples out of order, overlapping, empty or not inside the
 * cached runs, and a PC_IDENT_BDEV record whose name is not one safe
 * component, and mtime or birth time nanoseconds past a second. The file
 * is format version 4 (docs/snapshot-format.md); readers take 1 to 4.
 */
int pc_profile_add(struct pc_profile_writer *w, const struct pc_profile_file *f);
int pc_profile_commit(struct pc_profile_writer *w);	/* frees w */
void pc_profile_abort(struct pc_profile_writer *w);	/* frees w, NULL-safe */

/*
 * Reading treats the file as hostile: every length and offset is checked,
 * memory stays bounded (one section at a time, and 16 bytes a file for the
 * set of paths seen), and a bad file is -EBADMSG with pc_profile_error()
 * saying what and where: a path listed twice, or active pages outside the
 * cached runs, are bad too.
 */
struct pc_profile_reader;
/* On -EBADMSG, err (if given) says what is wrong and where. */
int pc_profile_open(const char *path, struct pc_profile_reader **ret, char *err, size_t errlen);
/* Same, from memory (for the fuzzer); the buffer must outlive the reader. */
int pc_profile_open_mem(const void *buf, size_t len, struct pc_profile_reader **ret,
			char *err, size_t errlen);
const struct pc_profile_meta *pc_profile_get_meta(const struct pc_profile_reader *r);
/* 1: a file in *ret (release it), 0: the end, verified; -errno. */
int pc_profile_next(struct pc_profile_reader *r, struct pc_profile_file *ret);
const char *pc_profile_error(const struct pc_profile_reader *r);
void pc_profile_close(struct pc_profile_reader *r);

/* ---- bdev.c: a filesystem's block device, whose cache holds its metadata -- */

/*
 * Inode tables, directory and extent blocks live in the page cache of the
 * block device under a filesystem, not in any file's; so do pages anyone
 * read through /dev/X. The device is only ever found from a filesystem's
 * st_dev (sysfs names it, /dev/NAME must be a block device of that
 * number), never from a name a snapshot holds.
 */
#define PC_BDEV_NAME_MAX 64
struct pc_bdev {
	int fd;				/* the device, O_RDONLY */
	uint64_t dev;			/* its number: st_rdev, == st_dev of its files */
	uint64_t size;			/* bytes (BLKGETSIZE64; its st_size is 0) */
	char name[PC_BDEV_NAME_MAX];	/* the kernel's name, one component ("loop0",
					   "nvme0n1p2"; a '/' in it as '!', as sysfs) */
	struct stat st;			/* fstat of fd, st_size set to size */
};
/*
 * May this caller open block devices (root's, 0660) and be told their
 * residency? CAP_DAC_READ_SEARCH and CAP_FOWNER (root has both; so do
 * pagecache's units). False is a definite no.
 */
bool pc_bdev_allowed(void);
/* The words for what pc_bdev_allowed's no means. */
#define PC_BDEV_NEEDS_ROOT \
	"needs root (CAP_DAC_READ_SEARCH and CAP_FOWNER: block devices are root's)"
/* Why a device could not be had (ENODEV, ESTALE, ENOMEDIUM: said in words; else strerror). */
const char *pc_bdev_strerror(int err);
/* The filesystem of an open file (O_PATH will do): st_dev and f_fsid (0: none). */
int pc_fd_fs(int fd, uint64_t *ret_dev, uint64_t *ret_fsid);
/* The kernel's name of block device dev, one component; -ENODEV: no block device has it. */
int pc_bdev_name(uint64_t dev, char *ret, size_t len);
/*
 * Open block device number dev (a filesystem's st_dev) for reading:
 * /sys/dev/block/MAJ:MIN/uevent's DEVNAME, /dev/NAME reached with O_PATH |
 * O_NOFOLLOW and fstat()ed (a block device, st_rdev == dev, else -ESTALE),
 * then opened through /proc/self/fd (-ENOMEDIUM without /proc). -ENODEV:
 * dev is no block device (tmpfs, overlayfs, btrfs, NFS: anonymous);
 * -EPERM, -EACCES: the kernel refuses (a VM's root disk may). _close is
 * NULL-safe.
 */
int pc_bdev_open(uint64_t dev, struct pc_bdev *ret);
void pc_bdev_close(struct pc_bdev *b);
/* Its cached pages: pairs (first page, count) in *ret (malloc'd); -EPERM if not told. */
int pc_bdev_cached_runs(const struct pc_bdev *b, uint64_t **ret, size_t *ret_n);
/*
 * A snapshot's record of device dev's cache (PC_IDENT_BDEV): path its name,
 * dev, size, runs, and fsid (PC_IDENT_FSID) when not 0: the filesystem on
 * it, as its files' f_fsid says. Release with pc_profile_file_release.
 */
int pc_bdev_snapshot(uint64_t dev, uint64_t fsid, struct pc_profile_file *ret);
/*
 * Is a filesystem (its st_dev and f_fsid, 0: none) the one a BDEV record
 * was taken of? By fsid where the record has one, else by device number,
 * unless fsid_only (a copy elsewhere: a device number there means nothing).
 */
bool pc_bdev_matches(const struct pc_profile_file *rec, uint64_t dev, uint64_t fsid,
		     bool fsid_only);
struct pc_bdev_result {
	char name[PC_BDEV_NAME_MAX];	/* the device read, as the kernel names it now */
	uint64_t size;			/* its size now, bytes */
	uint64_t pages;			/* recorded pages that lie on it */
	uint64_t cached;		/* of those, cached before */
	uint64_t read;			/* brought in */
	uint64_t resident;		/* verified resident at the end */
	int err;			/* 0, or why not all (ENOSPC: the budget) */
};
/*
 * Read a BDEV record's pages back through block device dev (found by the
 * caller from a file on the filesystem: pc_fd_fs, pc_bdev_matches), runs
 * clipped to its size now, through the warming engine within budget (its
 * rate paces). dry: only count what is cached. -errno when nothing could
 * be done (open, permission); a short result says why in err.
 */
int pc_bdev_restore(uint64_t dev, const struct pc_profile_file *rec, struct pc_budget *budget,
		    bool dry, struct pc_bdev_result *ret);

/* ---- restore.c: a snapshot's pages back into the cache ------------------ */

/*
 * What `pagecache restore` does, for a program: the whole snapshot is read
 * first (nothing is opened from one that is not whole); its block device
 * records (filesystem metadata) are read back first, as root; then each
 * file is opened beneath the root (pc_open_beneath: no link followed, no
 * FIFO or device opened), judged (the same inode, generation or birth
 * time is the same file, restored even if modified in place, its runs
 * clipped to its size; one replaced, or not a regular file, is skipped),
 * and its recorded pages are read through the warming engine, verified
 * resident, within the memory budget, in disk order (FIEMAP), the
 * snapshot's order, or the order a recording saw them used. Active pages
 * are read twice, so the kernel activates them again.
 *
 * The pages are charged to the memory cgroup of the process that reads:
 * to restore into a service's cgroup, call it in a child that joined it
 * (pc_cgroup_resolve, pc_cgroup_enter), as the CLI and the daemon do.
 * Callbacks run in the calling thread, in the order things happen.
 */
enum pc_restore_order {
	PC_RESTORE_DISK,		/* by position on disk (FIEMAP) */
	PC_RESTORE_FILE,		/* the snapshot's order */
	PC_RESTORE_ACCESS,		/* used pages by first use, then the rest by disk */
};

/* why a file of the snapshot is not restored (on_skip) */
enum pc_restore_skip {
	PC_RESTORE_CHANGED,		/* replaced, not a regular file, a link, outside the root */
	PC_RESTORE_MISSING,		/* not found */
};

/* how far a file got (struct pc_restore_file) */
enum pc_restore_status {
	PC_RESTORE_OK,			/* read whole */
	PC_RESTORE_PARTLY,		/* some pieces not reached (max_time) */
	PC_RESTORE_NOT_REACHED,		/* none reached */
	PC_RESTORE_FAILED,		/* err says why */
	PC_RESTORE_LISTED,		/* dry run: counted, not read */
};

/* one file's outcome (on_file), in the order of its first read */
struct pc_restore_file {
	const char *path;		/* the root and the snapshot's path */
	uint64_t pages;			/* recorded pages inside its size now */
	uint64_t runs;			/* of them */
	uint64_t cached;		/* dry run: of pages, cached now */
	uint64_t read;			/* pages read into the cache */
	uint64_t resident;		/* pages resident when it was done */
	enum pc_restore_status status;
	int err;			/* PC_RESTORE_FAILED: errno */
	bool has_first_use;		/* PC_RESTORE_ACCESS: first_use_ms is known */
	uint64_t first_use_ms;		/* ms into the recording it was first used */
	uint64_t cut;			/* PC_RESTORE_PARTLY: pages of it not read
					   (the budget or max_time stopped first) */
};

/* a block device record's outcome (filesystem metadata) */
struct pc_meta_row {
	char name[PC_BDEV_NAME_MAX];	/* the kernel's name (now), or as recorded */
	uint64_t dev, size, pages, cached, read;
	bool has_cached, has_read;
	bool done;			/* recorded, or read back (counted: dry run) */
	char status[256];		/* "recorded", "ok", "dry run", or why not */
};
/*
 * Append a row to *rows (n used, cap allocated; pc_grow): done is set for
 * "recorded" or where cached is known. 0, or -ENOMEM (nothing added).
 */
int pc_meta_row_add(struct pc_meta_row **rows, size_t *n, size_t *cap, const char *name,
		    uint64_t dev, uint64_t size, uint64_t pages, const uint64_t *cached,
		    const uint64_t *read, const char *status);

struct pc_restore_opts {
	size_t size;			/* sizeof(struct pc_restore_opts) */
	const char *root;		/* the paths are beneath it; NULL: "/", and a
					   snapshot taken beneath another root is
					   refused (say where: root) */
	int root_fd;			/* > 2: the root itself, as the caller reached
					   it (O_PATH will do: a daemon that trusts
					   no link there); root then only names it.
					   Else root is opened by name */
	enum pc_restore_order order;
	bool strict;			/* skip files whose size or mtime changed */
	bool allow_changed;		/* restore replaced regular files too */
	bool dry_run;			/* read nothing: on_file says what would be */
	bool no_metadata;		/* leave block device records alone */
	bool idle;			/* idle I/O priority for this process */
	double max_time;		/* seconds; < 0: no limit (0 hands out nothing) */
	uint64_t max_mem;		/* bytes to add at most; 0: no maximum */
	uint64_t reserve;		/* keep available; UINT64_MAX: the default */
	uint64_t rate;			/* bytes/s; 0: no limit */
	struct pc_progress *progress;	/* optional, updated as it reads */
	/* all optional; arg is passed to each */
	void (*on_reading)(void *arg, uint64_t bytes);	/* reads begin: their total */
	void (*on_read)(void *arg);			/* the reads are done */
	void (*on_skip)(void *arg, const char *path, enum pc_restore_skip kind, const char *why);
	void (*on_file)(void *arg, const struct pc_restore_file *f);
	/* a failure: errno err, or 0 and a reason in why */
	void (*on_error)(void *arg, const char *path, const char *what, int err, const char *why);
	void (*on_warn)(void *arg, const char *msg);	/* metadata left out, ... */
	void *arg;
};
#define PC_RESTORE_OPTS_INIT { .size = sizeof(struct pc_restore_opts), .max_time = -1, \
			       .reserve = UINT64_MAX }

/* one snapshot of those restored together (pc_restore_open_many), as read */
struct pc_restore_input {
	const char *path;		/* as given */
	const char *root;		/* the root it was taken beneath */
	uint64_t created;		/* unix seconds: when it was made (its META) */
	bool recorded;			/* made by record: its used ranges carry times */
	uint64_t files;			/* file records */
	uint64_t devices;		/* block device records (metadata) */
	uint64_t pages;			/* recorded pages of its files, in ours */
	uint64_t shared;		/* of its files, those an earlier one had too, the
					   same file: their pages united */
	uint64_t superseded;		/* of its files, those another had as a different
					   file (changed between them) and newer: left out */
};

struct pc_restore_result {
	char root[4096];		/* the root restored beneath */
	bool dry_run;
	enum pc_restore_order order;	/* as done: ACCESS becomes DISK without times */
	bool no_access_times;		/* ACCESS was asked of a snapshot without them */
	uint64_t files;			/* restored whole (dry run: listed) */
	uint64_t pages;			/* wanted: recorded pages inside the files now */
	uint64_t cached_before;
	uint64_t read;			/* pages read */
	uint64_t resident;		/* pages resident at the end */
	uint64_t changed, modified, missing, failures;
	int budget_stopped;		/* 0, or PC_BUDGET_* */
	bool time_stopped;		/* max_time ran out */
	uint64_t files_not_done, pages_not_done;
	uint64_t meta_devices, meta_pages, meta_cached, meta_read, meta_skipped;
	const struct pc_meta_row *meta_rows;	/* the restore's own, until pc_restore_free */
	size_t meta_nrows;
	double elapsed;			/* seconds */
	uint64_t files_partly;		/* of files_not_done, those read in part */
	bool prioritized;		/* the budget was short of the plan: the
					   active pages first, then by first use,
					   then in the order asked (disk, file) */
	const struct pc_restore_input *inputs;	/* each snapshot, in the order given
						   (the restore's own, until pc_restore_free) */
	size_t ninputs;
	/*
	 * Metadata through the filesystem, where a device was not read
	 * (snapshot --metadata's directory records; the directories of the
	 * recorded files): directories to read (dry run: would), read,
	 * entries statx()ed, directories gone or not directories, entries
	 * or directories that failed; recorded directories whose device
	 * was read instead.
	 */
	uint64_t meta_dirs_wanted, meta_dirs, meta_entries, meta_dirs_skipped, meta_stat_failed;
	uint64_t meta_dirs_by_device;
};

struct pc_restore;
/*
 * Read the snapshot whole and settle the root. -errno (-EBADMSG: corrupt)
 * with on_error told why; *ret is set on success only.
 */
int pc_restore_open(const char *snapshot, const struct pc_restore_opts *o, struct pc_restore **ret);
/*
 * Several snapshots restored as one (a recording of a service's start and
 * a snapshot of it running): all are read whole first, and one that
 * cannot be read fails the open (on_error names it). They must have been
 * taken beneath one root unless o->root says where (-EXDEV). A path is
 * one file: records of it that are of the same file (inode, size, mtime,
 * filesystem, generation and birth time where known) are united: cached
 * and active pages, and each used page at its earliest time (each
 * recording's times count from its own start); records of two files (it
 * changed between them) leave the newer whole: the later creation time
 * (META), of two in the same second the later in snapshots. Block device
 * records: one a device, pages united. The budget, the order and the
 * plan then work on the merged set. n 1: pc_restore_open.
 */
int pc_restore_open_many(const char *const *snapshots, size_t n, const struct pc_restore_opts *o,
			 struct pc_restore **ret);
/*
 * Restore: metadata, then the files, as the options say. 0 when all was
 * done; > 0 when something was skipped, missing, failed or the budget
 * stopped it (the totals say which); -errno when nothing could be read.
 */
int pc_restore_run(struct pc_restore *r);
const struct pc_restore_result *pc_restore_totals(const struct pc_restore *r);
void pc_restore_free(struct pc_restore *r);	/* NULL-safe */

/* ---- snapshot.c: capture, the engine of `pagecache snapshot` ----------- */

/*
 * Which pages of files and trees are cached, recorded into a snapshot
 * file (pc_profile_*) that restore reads: each file that has any page
 * cached, with what tells later whether it is still the same file and
 * whether it changed (size, mtime, inode, generation, birth time, f_fsid),
 * and, with CAP_SYS_ADMIN, which pages were on the active list. Paths are
 * recorded relative to a root, without symbolic links (restore follows
 * none); a path through /proc (a process's root, a pinned file) is kept
 * as given. The file is written as pc_profile_create writes: a fresh
 * temporary name beside it (O_EXCL | O_NOFOLLOW, mode 0600: it says what
 * is cached in files others may not ask about), fsynced, renamed over the
 * old one; any failure, a full disk included, leaves the old one intact.
 *
 * All at once: pc_snapshot_write() walks opts.paths (pc_walk). With a
 * walk of the caller's own (the files of processes, a list): check the
 * output with pc_profile_check_target() first, before the long work, then
 * pc_snapshot_begin(), pc_snapshot_trust_roots() where wanted,
 * pc_snapshot_add() for each file (from any thread), and
 * pc_snapshot_finish().
 *
 * Both structs start with their size (sizeof, set by the caller): fields
 * added later are read as 0 from a caller built before them, and a result
 * is written only as far as its caller's size.
 */
#define PC_SNAPSHOT_NO_ACTIVE	1u	/* do not record active pages */
#define PC_SNAPSHOT_OWNERS	2u	/* say who owns the files read (result.owners) */
#define PC_SNAPSHOT_METADATA	4u	/* record the directories, and the block devices' cache
					   (that with pc_bdev_allowed) */
#define PC_SNAPSHOT_SAFE_LINKS	8u	/* pc_snapshot_write: roots as pc_snapshot_trust_roots */
#define PC_SNAPSHOT_GUARD	16u	/* keep the old file against a new one too small (guard) */

enum pc_snapshot_event_kind {
	PC_SNAPSHOT_RECORDED,		/* a file recorded: file */
	PC_SNAPSHOT_UNCACHED,		/* a file left out: nothing of it cached (no failure) */
	PC_SNAPSHOT_FAILED,		/* a file or root left out, counted: failure, why */
	PC_SNAPSHOT_DEVICE,		/* metadata: a block device recorded or left out: device */
};

enum pc_snapshot_failure {
	PC_SNAPSHOT_FAIL_RESIDENCY,	/* its residency could not be read (err) */
	PC_SNAPSHOT_FAIL_DENIED,	/* the kernel refuses residency to a caller who neither
					   owns nor may write it */
	PC_SNAPSHOT_FAIL_RESOLVE,	/* its path could not be resolved (err) */
	PC_SNAPSHOT_FAIL_OUTSIDE_ROOT,	/* not under the root */
	PC_SNAPSHOT_FAIL_PAGES,		/* its cached pages could not be listed (err) */
	PC_SNAPSHOT_FAIL_NOMEM,		/* no memory to keep it */
	PC_SNAPSHOT_FAIL_UNTRUSTED,	/* a root through a link others may change (link) */
	PC_SNAPSHOT_FAIL_LOOP,		/* a root through too many links */
	PC_SNAPSHOT_FAIL_OPEN,		/* pc_snapshot_write: the walk could not open it (err) */
};

/* A block device under the files (PC_SNAPSHOT_METADATA), as it went. */
struct pc_snapshot_device {
	char name[PC_BDEV_NAME_MAX];	/* the kernel's name; "MAJ:MIN" where it has none */
	uint64_t dev;			/* its number (the files' st_dev) */
	uint64_t size;			/* bytes; 0 where left out */
	uint64_t pages;			/* pages recorded */
	int err;			/* 0 recorded; else why left out (ENODEV: no block device
					   under tmpfs, overlayfs, btrfs; ESTALE: /dev's node is
					   another; ENOMEDIUM: no /proc; EPERM, EACCES) */
	const char *file;		/* a file of it (absolute), to know it by */
};

/* What opts.event is told; fields not of its kind are 0 (NULL). */
struct pc_snapshot_event {
	enum pc_snapshot_event_kind kind;
	const char *path;		/* the file or root as reached (the walk's path) */
	/* FAILED */
	enum pc_snapshot_failure failure;
	int err;			/* errno, or 0 where reason alone says it */
	const char *what;		/* what failed, in words: "cannot read residency of" */
	const char *reason;		/* why, in words (strerror(err) where err says it) */
	const char *link;		/* PC_SNAPSHOT_FAIL_UNTRUSTED: the link not followed */
	/* RECORDED: what was recorded (paths relative to the root) */
	const struct pc_profile_file *file;
	/* DEVICE */
	const struct pc_snapshot_device *device;
};

struct pc_snapshot_opts {
	uint32_t size;			/* sizeof(struct pc_snapshot_opts) */
	unsigned flags;			/* PC_SNAPSHOT_ */
	const char *root;		/* paths recorded relative to it; NULL: "/" */
	uint64_t off, len;		/* the byte range of each file; len 0: to its end */
	double guard;			/* PC_SNAPSHOT_GUARD: 0 to 1, see pc_snapshot_finish */
	/*
	 * Optional; called from the walk's threads (pc_snapshot_finish's
	 * thread for DEVICE), one call at a time. ev and what it points to
	 * last for the call only.
	 */
	void (*event)(const struct pc_snapshot_event *ev, void *arg);
	void *arg;
	struct pc_progress *progress;	/* optional: files looked at, bytes recorded cached */
	/* pc_snapshot_write only: */
	const char *const *paths;	/* files and trees to walk */
	size_t npaths;
	/*
	 * How to walk (threads, one_fs, follow, patterns, max_size; NULL: the
	 * defaults); its file, arg and root_fds are the engine's; its event,
	 * if set, is told every walk event too.
	 */
	const struct pc_walk_opts *walk;
	/*
	 * The root as the snapshot names it (META's root, which restore takes
	 * when told no other): NULL, root itself. For a root that only lasts
	 * as long as a process (/proc/PID/root of a container), a name that
	 * is no directory ("container:ID"), so that no later process of that
	 * PID is taken for it.
	 */
	const char *root_name;
};

/* Who owns a file read (PC_SNAPSHOT_OWNERS), from the fstat of the very fd. */
#define PC_SNAPSHOT_MAX_OWNERS 32
struct pc_snapshot_owner {
	uint32_t uid, gid;
	uint32_t w;			/* S_IWGRP | S_IWOTH where they alone rule the
					   kernel's write check: 0 for a file with a POSIX
					   ACL, on a read-only mount, or immutable */
};

/* What a snapshot did: no pointers, so it can be sent whole from a child. */
struct pc_snapshot_result {
	uint32_t size;			/* sizeof(struct pc_snapshot_result), set by the caller */
	bool written;			/* the file was written (renamed into place) */
	bool kept;			/* the guard kept the old file: not written */
	int err;			/* not written: -errno (-ENODATA: kept, or nothing
					   recorded and some failed) */
	int64_t previous_pages;		/* PC_SNAPSHOT_GUARD: the old file's pages; -1: none */
	uint64_t files;			/* files recorded */
	uint64_t pages;			/* their pages recorded cached */
	uint64_t bytes;			/* pages * pc_page_size() */
	uint64_t runs;			/* runs of cached pages */
	uint64_t uncached;		/* files left out: nothing of them cached */
	uint64_t failures;		/* FAILED events, and pc_snapshot_count_failures */
	uint64_t active_pages;		/* pages recorded active */
	bool active_unknown;		/* none could be read (written PC_META_ACTIVE_UNKNOWN) */
	bool active_denied;		/* not tried: no CAP_SYS_ADMIN */
	uint64_t active_failed;		/* files whose active pages could not be read ... */
	int active_err;			/* ... and the first one's errno (pc_kpage_reason) */
	uint64_t metadata_devices;	/* PC_SNAPSHOT_METADATA: devices recorded, */
	uint64_t metadata_pages;	/* their pages, */
	uint64_t metadata_skipped;	/* and those left out (DEVICE events say why) */
	bool owners_many;		/* PC_SNAPSHOT_OWNERS: more kinds than fit: not said */
	size_t nowners;			/* 0 and not many: no file read */
	struct pc_snapshot_owner owners[PC_SNAPSHOT_MAX_OWNERS];
	char root[4096];		/* the root the paths are relative to, as recorded */
	uint64_t metadata_dirs;		/* PC_SNAPSHOT_METADATA: directories recorded (the
					   walk's, beneath the root; not files) */
	uint64_t metadata_dirs_failed;	/* ... and those whose identity could not be had */
};

struct pc_snapshot;
/*
 * A capture, for a walk of the caller's own. The root is resolved now
 * (its links, unless it is through /proc); without CAP_SYS_ADMIN active
 * pages are not tried (result.active_denied); without pc_bdev_allowed,
 * PC_SNAPSHOT_METADATA records the directories and leaves every device
 * out (a DEVICE event each, EPERM). -EINVAL (size, guard), -ENOTDIR (the
 * root is no directory, or cannot be resolved), -ENOMEM.
 */
int pc_snapshot_begin(const struct pc_snapshot_opts *o, struct pc_snapshot **ret);
/*
 * The roots a walk will start from, reached as pc_path_trusted reads them
 * (PC_TRUSTED_FOLLOW_LAST): a link on the way is followed only where it is
 * root's (or the caller's) and every directory before it is too and
 * writable by nobody else, so root's snapshot of a path a user owns
 * records what the path names, not what the user pointed it at. In
 * ret_fds[i], one per path: an O_PATH fd of it for pc_walk_opts.root_fds
 * (the caller closes it), so that a link swapped in later leads nowhere;
 * -1 to walk it by name (relative, through /proc, or not there: the
 * walk says why); PC_SNAPSHOT_ROOT_DROPPED where it goes through a link
 * others may change, or too many, or could not be checked (out of
 * descriptors, say): said (FAILED) and counted, not to be walked.
 * Returns how many are to be walked.
 */
#define PC_SNAPSHOT_ROOT_DROPPED (-2)
size_t pc_snapshot_trust_roots(struct pc_snapshot *s, const char *const *paths, size_t n,
			       int *ret_fds);
/*
 * Record one open file (fd, readable; st its fstat) reached as path.
 * From any thread. Returns 0, whether recorded or left out: an event
 * says which, and why. A directory's fd (a walk's PC_WALK_DIR, opened
 * O_DIRECTORY) is recorded as a directory (PC_IDENT_DIR) with
 * PC_SNAPSHOT_METADATA, and left out without it; the root itself is not.
 */
int pc_snapshot_add(struct pc_snapshot *s, int fd, const char *path, const struct stat *st);
/*
 * n paths that failed before they could be added (a walk error, a list
 * that could not be read): counted in result.failures, and a snapshot of
 * no file with failures is not written (see pc_snapshot_finish).
 */
void pc_snapshot_count_failures(struct pc_snapshot *s, uint64_t n);
/*
 * Write the snapshot to out_path and free s. With PC_SNAPSHOT_METADATA,
 * a record of each block device under the files first (DEVICE events; one
 * that cannot be had is left out, no failure). Not written, the old file
 * kept (-ENODATA): with PC_SNAPSHOT_GUARD, where an old snapshot holds
 * pages and the new one holds none or fewer than guard times as many
 * (result.kept: 0 is returned); or where no file was recorded and some
 * failed. Returns 0 (written or kept), or -errno (result.err) with the
 * old file as it was. ret may be NULL.
 */
int pc_snapshot_finish(struct pc_snapshot *s, const char *out_path,
		       struct pc_snapshot_result *ret);
/* Free s, writing nothing; NULL-safe. */
void pc_snapshot_abort(struct pc_snapshot *s);
/*
 * All of it: pc_profile_check_target(out_path) before anything, begin,
 * trust_roots (PC_SNAPSHOT_SAFE_LINKS), a walk of o->paths (a walk error
 * is a FAILED event, PC_SNAPSHOT_FAIL_OPEN), finish. Returns as
 * pc_snapshot_finish, or the first step's -errno (ret->err); a walk that
 * fails as a whole (pc_walk's -errno) writes nothing.
 */
int pc_snapshot_write(const struct pc_snapshot_opts *o, const char *out_path,
		      struct pc_snapshot_result *ret);

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
