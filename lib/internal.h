/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * internal.h: what the library's files share and the public header does
 * not promise.
 */
#ifndef PC_INTERNAL_H
#define PC_INTERNAL_H

#include "pagecache.h"
#include "sys.h"		/* the system call seam */

#include <stdio.h>

/*
 * perf_event_open(2): the fd, or -errno. An event that asks for
 * PERF_FORMAT_LOST meets the "perf_format_lost" fault point (a kernel
 * before 6.0 refuses it with EINVAL).
 */
struct perf_event_attr;
int pc_sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group,
			   unsigned long flags);

/*
 * inode.c: pc_inode_open for a round of many (a recording's new files):
 * the mounts it opens are kept in m, each filesystem's opened once a
 * round, until pc_inode_mnts_close (then nothing is held: no filesystem
 * kept busy between rounds); ret_sx (or NULL) the file's statx, its
 * birth time asked too. m zeroed before the first.
 */
struct pc_inode_mnts {
	uint64_t dev[4];
	int fd[4];
	unsigned n;
};
struct statx;
int pc_inode_open_mnts(struct pc_inode_mnts *m, uint64_t dev, uint64_t ino, int flags,
		       struct statx *ret_sx);
void pc_inode_mnts_close(struct pc_inode_mnts *m);
/* inode.c: mountinfo's octal escapes (\040 for a space) undone in place (overlay.c, trace.c) */
void pc_mnt_unescape(char *s);

/*
 * profile.c: pc_profile_open on an fd the caller opened and checked (a
 * regular file, opened without following a link); the reader owns it,
 * closed by pc_profile_close, or here on failure.
 */
int pc_profile_open_fd(int fd, struct pc_profile_reader **ret, char *err, size_t errlen);

/*
 * profile.c: two records of one path, from two snapshots. same_file: are
 * they of the same file (the identity restore judges by: inode, size,
 * mtime, the filesystem by f_fsid where both know it, else st_dev, and
 * the generation, birth time and layer digest where both know them); a
 * block device's record is never a file's. file_merge: from's pages into
 * `into`, in the same page size: the cached runs united, the active runs
 * united, the used triples united with each page at the earlier of its
 * two times (a recording's times are its own: a snapshot without them
 * keeps the other's); what from knew of the identity and into did not is
 * copied. 0, or -ENOMEM with into as it was.
 */
bool pc_profile_same_file(const struct pc_profile_file *a, const struct pc_profile_file *b);
int pc_profile_file_merge(struct pc_profile_file *into, const struct pc_profile_file *from);

/*
 * cgroup.c: the memory cgroup lines of /proc/PID/cgroup (pid 0: the
 * caller's), read through the seam: v1's "N:CONTROLLERS:PATH" of the
 * hierarchy whose controllers include memory into v1, v2's "0::PATH" into
 * v2; "" where there is no such line. 0 or -errno (-ENOENT: no such
 * process, or no /proc).
 */
int pc_proc_cgroup(pid_t pid, char *v1, size_t v1len, char *v2, size_t v2len);

/*
 * scope.c: a transient scope with Delegate=yes, asked of systemd over
 * D-Bus for a process (cgroup.c nests its memory cgroups in it).
 */
struct pc_scope_req {
	char unit[64];			/* "pagecache-PID.scope" */
	const char *description;	/* what systemctl status shows */
	pid_t pid;			/* moved into it */
	bool user;			/* the user's manager, not the system's */
	char slice[256];		/* put there; "" for the manager's default */
	uint64_t memory_max, memory_high; /* copied limits; UINT64_MAX: none */
};
/* Does systemd manage this host (sd_booted; the "systemd" fault point says no)? */
bool pc_scope_systemd(void);
/* Did systemd delegate cgroup directory dir (its xattr, or the user owns it)? */
bool pc_scope_delegated(const char *dir);
/*
 * The slice of the unit that holds cgroup `self` (as /proc/self/cgroup
 * names it): the last of its leading *.slice components; for the user
 * manager, those below user@UID.service. -ENOENT if there is none.
 */
int pc_scope_slice(const char *self, bool user, char *ret, size_t len);
/* The tightest memory.max and memory.high from self up to its slice. */
void pc_scope_limits(const char *root, const char *self, uint64_t *ret_max, uint64_t *ret_high);
/*
 * StartTransientUnit, then wait for its job's JobRemoved: 0 once req->pid
 * is in the scope; -errno and a sentence in why otherwise. _on: over a
 * bus the caller opened (a test's peer); pc_scope_start opens the system
 * bus, or the user's where req->user.
 */
struct sd_bus;
int pc_scope_start_on(struct sd_bus *bus, const struct pc_scope_req *req, char *why,
		      size_t whylen);
int pc_scope_start(const struct pc_scope_req *req, char *why, size_t whylen);

/*
 * openq.c: many files of one directory opened with one system call, and
 * closed with the next one, through io_uring; or one by one where no ring
 * can be made (see openq.c). One queue belongs to one thread.
 */
struct pc_openq;
/* A queue of at most depth opens a call. -ENOMEM only: no ring is no error. */
int pc_openq_new(unsigned depth, struct pc_openq **ret);
/* Closes what is queued (and waits for it), then frees; NULL-safe. */
void pc_openq_free(struct pc_openq *q);
/* "io_uring", or "syscalls": where the opens go now. */
const char *pc_openq_engine(const struct pc_openq *q);
/*
 * Open names[0..n) (n <= depth) relative to dirfd with flags (O_CLOEXEC
 * added; O_NOATIME dropped where the kernel refuses it, as pc_sys_openat
 * does); ret_fd[i] is the fd or -errno, each through the "open" fault
 * point. No mount is crossed: a name with one on it gives -EXDEV
 * (openat2's RESOLVE_NO_XDEV; where the kernel has no openat2, mounts are
 * crossed). The closes queued so far go first, in the same call. q may
 * be NULL: the same opens one by one. flags may be O_PATH | O_NOFOLLOW
 * (walk.c, in directories others may write: nothing is opened); openat2
 * takes no other flag beside O_PATH but O_CLOEXEC and O_DIRECTORY.
 */
void pc_openq_openat(struct pc_openq *q, int dirfd, const char *const *names, unsigned n,
		     int flags, int *ret_fd);
/* Close fd with the next call (at once without a ring); q may be NULL. */
void pc_openq_close(struct pc_openq *q, int fd);
/* one open as a batch's would be made (mounts not crossed: -EXDEV) */
int pc_openq_open_one(int dirfd, const char *name, int flags);
/* Close what is queued now. */
void pc_openq_flush(struct pc_openq *q);
bool pc_openq_pending(const struct pc_openq *q);
/* For the tests: how many opens the rings of this process have taken. */
unsigned long pc_openq_ring_opens(void);

/*
 * Page runs as (first, count) pairs, grown as they come: a run that
 * starts where the last one ends extends it. pc_runs_add returns 0 or
 * -ENOMEM; the caller frees v.
 */
struct pc_runs {
	uint64_t *v;
	size_t n, cap;
};
int pc_runs_add(struct pc_runs *a, uint64_t first, uint64_t n);

/*
 * pc_fd_scan without asking cachestat first, for ranges expected to be
 * cached. It does not check the permission gate: the caller must already
 * know that the kernel gives it true answers (pc_fd_residency said so).
 */
int pc_fd_scan_mapped(int fd, uint64_t size, uint64_t off, uint64_t len, pc_run_cb cb,
		      void *arg);
/*
 * pc_fd_resident_runs, with each window that is mapped for mincore handed
 * to win while it is (map: the file's pages [first, first + n), vec:
 * mincore's answer for them), so a caller that must map the resident
 * pages anyway (kpage.c) does not map them twice. win cannot fail the scan.
 */
typedef void (*pc_window_cb)(const uint8_t *map, uint64_t first, uint64_t n,
			     const unsigned char *vec, void *arg);
int pc_fd_resident_runs_win(int fd, uint64_t size, uint64_t off, uint64_t len, pc_window_cb win,
			    void *warg, uint64_t **ret, size_t *ret_n);

/* getdents64's record (the kernel's; glibc names none): walk.c and fsmeta.c read them */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/*
 * pc_budget_take that grants what fits when not all does: bytes, or less,
 * rounded down to whole units (pages), 0 when nothing fits. A short grant
 * stops the budget (b->stopped says why), as a refusal does.
 */
uint64_t pc_budget_take_some(struct pc_budget *b, uint64_t bytes, uint64_t unit);

/*
 * pc_warmer_add_runs with flags. PC_WARM_WHOLE: all the runs or none, as
 * for a block device's (its metadata blocks are worth little in part);
 * without it a short budget cuts the runs where the grant ends.
 */
enum { PC_WARM_WHOLE = 1 };
int pc_warmer_add_runs_flags(struct pc_warmer *w, int fd, const char *path, const struct stat *st,
			     const uint64_t *runs, size_t nruns, unsigned flags);

/*
 * pfd: an O_PATH fd whose fstat (*st) said regular file. Open that very
 * inode for reading through /proc/self/fd/PFD (O_RDONLY | O_NONBLOCK |
 * O_NOCTTY | extra_flags), whatever happened to its path since: no FIFO or
 * device is ever opened. -ESTALE if what opened is not that file; -ENOENT
 * where /proc is not mounted. pfd stays open.
 */
int pc_reopen_checked(int pfd, const struct stat *st, int extra_flags, struct stat *ret_st);
/*
 * The same, through fddir: an fd of /proc/self/fd (pc_proc_fd_dir), which
 * saves the lookup of /proc/self at each reopen (a walk makes thousands);
 * fddir < 0: as pc_reopen_checked. ret_st NULL: no fstat after the open,
 * *st stands for it (the magic link opens the very file pfd holds; a walk
 * saves a system call a file). pc_proc_fd_dir (inode.c): an O_PATH fd of
 * /proc/self/fd, checked to be procfs; where /proc is not mounted, of
 * self/fd in a procfs of our own mounted nowhere (root only); or -errno
 * (-ENOENT: no /proc).
 */
int pc_reopen_at(int fddir, int pfd, const struct stat *st, int extra_flags, struct stat *ret_st);
int pc_proc_fd_dir(void);

/*
 * walk.c: may anyone but the caller (euid; root counts as the caller)
 * change the names in a directory (st: its fstat, f_type: its statfs)?
 * Its files are then reached with O_PATH first (walk.c, file_opened).
 */
bool pc_dir_others_write(const struct stat *st, unsigned long f_type, uid_t euid);

/* beneath.c: pc_fd_kernel_fs for a statfs f_type the caller has already. */
bool pc_fs_type_kernel(unsigned long f_type);

/*
 * overlay.c: files of a stacking filesystem (overlayfs) keep their pages in
 * the cache of the real file in a layer; the overlay inode's own mapping is
 * empty. pc_fd_is_stacked: is fd such a file. pc_fd_real: an O_RDONLY fd of
 * the real file, found through the mount's layers as the kernel's lookup
 * does (the caller closes it), or -errno: why it is out of reach (EPERM: the
 * overlay's trusted xattrs need CAP_SYS_ADMIN; EXDEV: a mount outside our
 * mount namespace; EOPNOTSUPP: a redirect; ENOTDIR: layers named by relative
 * paths; ESTALE: what the layers hold is not what the overlay shows).
 */
bool pc_fd_is_stacked(int fd);
/* The walk, around file(): fd is a plain directory's file (-1: forget it). */
void pc_stack_hint(int fd);
int pc_fd_real(int fd);

/*
 * overlay.c: the layer fd's data comes from (fd: a file of an overlay):
 * its directory as the mount names it (malloc'd), and whether it is the
 * upper layer (the container's own); -errno as pc_fd_real, -EXDEV where
 * fd is not stacked, -ELOOP where the layer is an overlay itself.
 */
int pc_fd_layer(int fd, char **ret_dir, bool *ret_upper);

/*
 * layers.c: the digest of a container image's layer (sha256 of its
 * uncompressed tar, "diff-digest" / docker's diff ID: the same layer has
 * the same on every host), from the storage that holds it:
 * containers/storage (podman, CRI-O, buildah) and docker's overlay2.
 * PC_LAYER_KNOWN: *digest is it; PC_LAYER_UPPER: the file is in the
 * overlay's upper layer (the container's own: no digest); PC_LAYER_UNKNOWN:
 * not an overlay, a layout not known, or files that decide it not root's:
 * never an error. pc_layer_dir_digest: of a layer directory as a mount
 * names it (KNOWN or UNKNOWN).
 */
enum { PC_LAYER_UNKNOWN, PC_LAYER_KNOWN, PC_LAYER_UPPER };
int pc_fd_layer_digest(int fd, uint8_t digest[32]);
int pc_layer_dir_digest(const char *dir, uint8_t digest[32]);
/* "sha256:" and 64 hex digits, into digest; false if s is not that */
bool pc_layer_digest_parse(const char *s, size_t len, uint8_t digest[32]);

/* For the tests: one line of mountinfo text for mount `id`; lookups in it. */
struct ovl_mount;
int pc_ovl_parse_mountinfo_line(char *line, int id, struct ovl_mount **ret);
/*
 * overlay.c: fd's mount ID as /proc/self/fdinfo says it (mountinfo's),
 * never asking the filesystem (beneath.c: a FUSE server may not answer);
 * -errno, -ENOENT where fdinfo has none.
 */
int pc_fdinfo_mnt_id(int fd);
struct stat;
int pc_ovl_lookup_in(const struct ovl_mount *m, const char *path, uint64_t size,
		     const struct stat *ost);	/* ost NULL: no identity check */
void pc_ovl_mount_free(struct ovl_mount *m);

/*
 * target.c: the files processes use, for --pid and --cgroup: what each
 * maps (/proc/PID/maps, map_files) or holds open to read or write
 * (/proc/PID/fd), with its children's (t->children, 64 generations), or
 * every process's of a memory cgroup and those below it. Each file is
 * pinned with O_PATH, never opened for reading, and offered once to
 * file(): a regular file, not of procfs, sysfs and kin, the process's
 * very file (map_files, pidfd_getfd, else a name that leads to that
 * (dev, ino); an fd only where the process opened it to read or write).
 * file() returns 1 to take f->fd (the file is then never offered again),
 * 0 to leave it (closed). Failures go to fail() (may be NULL). One
 * struct pc_target serves several calls: a file is offered once across
 * them. pc_target_release frees what it remembers. With `every`, deleted
 * files and those of /dev and memfds are offered too, f->name the
 * process's name for it as is (" (deleted)" and all): record's scan, which
 * judges the names itself (record.c).
 */
struct pc_target_file {
	pid_t pid;			/* the process that uses it */
	int fd;				/* O_PATH, on the regular file */
	const struct stat *st;
	/*
	 * How to name it: the process's name for it where that leads here
	 * to this very file; else through /proc/PID/root (a container, a
	 * chroot); else the magic link (/proc/PID/map_files/A-B, fd/N)
	 */
	const char *name;
};
enum pc_target_fail_kind {
	PC_TARGET_PROCESS,		/* the process's files cannot be read (gone, refused) */
	PC_TARGET_KEEP,			/* a file cannot be kept open (EMFILE, ENFILE) */
};
struct pc_target_fail {
	enum pc_target_fail_kind kind;
	pid_t pid;
	const char *subject;		/* KEEP: the file's name, or /proc/PID/fd/N */
	int err;			/* errno */
};
struct pc_target_id;
struct pc_target {
	bool children;			/* each process's children too */
	bool every;			/* every regular file, named as is (above) */
	int (*file)(const struct pc_target_file *f, void *arg);
	void (*fail)(const struct pc_target_fail *f, void *arg);
	void *arg;
	struct pc_target_id *taken;	/* the engine's: files taken so far */
	size_t ntaken, cap;
};
/* 0, or -errno where the process's files cannot be read (fail() said so) */
int pc_target_pid(struct pc_target *t, pid_t pid);
/* 0, or -errno where cgroup directory dir cannot be read (not said) */
int pc_target_cgroup(struct pc_target *t, const char *dir);
void pc_target_release(struct pc_target *t);

/*
 * lockset.c: a set of files locked in the page cache, kept locked as they
 * are replaced, within a memory budget and a budget of mappings (see
 * lockset.c). pc_lockset_add locks one file (thread-safe: a walk's file
 * callback); watched (pc_lockset_watch), the set is walked from the named
 * paths (pc_lockset_walk), and then again after each burst of changes
 * inotify reports there, or on a timer: the caller polls pc_lockset_fd
 * (-1: none) for at most pc_lockset_timeout ms (-1: no limit), then calls
 * pc_lockset_dispatch, which rescans when one is due (1) or not (0).
 * Everything that happens is said through opts.event.
 */
#define PC_LOCKSET_FALLBACK_INTERVAL 30	/* seconds, where a directory cannot be watched */
struct pc_lockset;
enum pc_lockset_kind {
	PC_LOCKSET_LOCKED,	/* pc_lockset_add (the first walk) locked it: locked */
	PC_LOCKSET_PARTIAL,	/* its data lies in more than PC_LOCK_MAX_RANGES pieces:
				   the rest is not locked */
	PC_LOCKSET_FAILED,	/* not locked: why, err (pc_lockset_add; a rescan: NOMEM) */
	PC_LOCKSET_NEW,		/* a rescan locked a file new in a tree, or at a name */
	PC_LOCKSET_REPLACED,	/* ... a new inode at a name; previous: the old one's
				   bytes, whose lock was released first */
	PC_LOCKSET_RESIZED,	/* ... a file whose data changed, locked again (new mapping
				   first); previous: what it held */
	PC_LOCKSET_REFUSED,	/* ... could not lock it: why, wanted; not said again until
				   it changes */
	PC_LOCKSET_RELEASED,	/* ... gone from where it was: its lock (previous) released */
	PC_LOCKSET_RESCAN,	/* a rescan changed the set: stats */
	PC_LOCKSET_WALK_FAILED,	/* a rescan's walk failed (err): the locks stay as they are */
	PC_LOCKSET_UNRESOLVED,	/* a named path cannot be resolved (err): never walked */
	PC_LOCKSET_LINK,	/* a named path is a symbolic link now: not followed, its
				   lock released (said once) */
	PC_LOCKSET_UNOPENED,	/* a named path cannot be opened for a walk (err) */
	PC_LOCKSET_UNWATCHED,	/* a directory (path; NULL: inotify itself) cannot be
				   watched (err): everything walked again every interval s */
};
enum pc_lockset_why {
	PC_LOCKSET_WHY_DATA,	/* its data could not be found (err) */
	PC_LOCKSET_WHY_PIECES,	/* its mappings (maps) would pass the set's budget of them */
	PC_LOCKSET_WHY_BUDGET,	/* the memory budget (its `stopped` says which cap) */
	PC_LOCKSET_WHY_MLOCK,	/* the kernel said no (err) */
	PC_LOCKSET_WHY_NOMEM,	/* no memory to keep it */
};
struct pc_lockset_stats {
	size_t files;			/* locked */
	uint64_t bytes;			/* locked: data, never a hole */
	uint64_t holes;			/* bytes of holes in the ranges, left unlocked */
	uint64_t maps, max_maps;	/* mappings the locks take, and the set's cap */
	bool stopped;			/* the budget stopped pc_lockset_add */
	uint64_t relocks, released, rescans;	/* watched */
	uint64_t refusals, refused_bytes;	/* what the caps and mlock refused */
};
struct pc_lockset_event {
	enum pc_lockset_kind kind;
	const char *path;		/* as the walk reached it, or as named */
	const struct stat *st;		/* the file's; NULL when gone or none */
	uint64_t locked;		/* bytes of it locked now */
	uint64_t previous;		/* ... before (this inode's, or the one replaced) */
	uint64_t wanted;		/* REFUSED: bytes its lock would take */
	enum pc_lockset_why why;	/* FAILED, REFUSED */
	int err;			/* errno, where one says why */
	uint64_t maps, maps_taken, maps_max;	/* WHY_PIECES: its, the set's, the cap */
	bool kept;			/* REFUSED: the part locked before stays locked */
	bool replaced;			/* REFUSED: a new inode at a name, the old one released */
	unsigned interval;		/* UNWATCHED: seconds between walks now */
	const struct pc_lockset_stats *stats;	/* RESCAN */
};
struct pc_lockset_opts {
	struct pc_budget *budget;	/* required: what is locked is taken from it */
	uint64_t off, len;		/* of each file; len 0: to its end */
	uint64_t max_maps;		/* 0: half of vm.max_map_count */
	/* from the walk's threads too (serialise what needs it); may be NULL */
	void (*event)(const struct pc_lockset_event *e, void *arg);
	void *arg;
};
int pc_lockset_new(const struct pc_lockset_opts *o, struct pc_lockset **ret);
/* Releases every lock, then frees; NULL-safe. */
void pc_lockset_free(struct pc_lockset *s);
/* 0: locked, or refused (said); 1: the budget is spent: stop adding (a walk). */
int pc_lockset_add(struct pc_lockset *s, int fd, const struct stat *st, const char *path);
void pc_lockset_stats(struct pc_lockset *s, struct pc_lockset_stats *ret);
/*
 * Watch paths (resolved now; failures said) with inotify, and walk them
 * with walk's options and events (its file callback is the set's).
 * interval: seconds between rescans besides those changes cause (0: none).
 * 0, or -ENOMEM.
 */
int pc_lockset_watch(struct pc_lockset *s, const char *const *paths, size_t n,
		     const struct pc_walk_opts *walk, unsigned interval);
/* The first walk, which locks: pc_walk's return (1: the budget stopped it). */
int pc_lockset_walk(struct pc_lockset *s);
/* Walk again now and bring the locks in line: 1 if the set changed, else 0. */
int pc_lockset_rescan(struct pc_lockset *s);
int pc_lockset_fd(const struct pc_lockset *s);
int pc_lockset_timeout(const struct pc_lockset *s);
int pc_lockset_dispatch(struct pc_lockset *s);

/*
 * fsmeta.c: metadata through the filesystem (restore, where the block
 * device was not read): each directory reached beneath rootfd, in inode
 * order; a whole one read (getdents64) and every entry statx()ed in inode
 * order; another only its named entries statx()ed. Never an entry opened,
 * never a link followed. dirs is sorted (by ino) in place. 0, or -ENOMEM.
 */
struct pc_fsmeta_dir {
	const char *path;		/* beneath the root; "" is the root itself */
	uint64_t ino;			/* as recorded: the order */
	bool whole;			/* a recorded directory: every entry */
	const char **names;		/* else: the entries to statx */
	const uint64_t *inos;		/* their recorded inodes (the order), or NULL */
	size_t nnames;
};
struct pc_fsmeta_result {
	uint64_t dirs;			/* directories read whole */
	uint64_t parents;		/* directories whose named entries were statted */
	uint64_t entries;		/* entries statted */
	uint64_t skipped;		/* directories gone, not directories, refused */
	uint64_t failed;		/* entries gone meanwhile, directories unreadable */
	bool time_stopped;		/* the deadline came first */
};
int pc_fsmeta_read(int rootfd, struct pc_fsmeta_dir *dirs, size_t n, double deadline,
		   struct pc_fsmeta_result *ret);

/*
 * kpage.c: the page probe (pc_fd_probe_pages, pc_fd_active_runs) set up
 * once for many files: the multi-gen LRU's switch (active), the capability
 * and the opens of pagemap, kpageflags (and kpagecgroup) done at open, and
 * their failure kept in err, which every probe through it returns, as the
 * single-file calls would; the fds are shared by threads, not by
 * processes (pagemap's is the opener's memory: a forked child must open
 * its own). Closed by pc_kpage_close, whether err is set or not.
 */
struct pc_kpage {
	int err;
	int pmfd, kfd, cfd;
};
void pc_kpage_open(struct pc_kpage *k, bool active, bool want_cgroup);
void pc_kpage_close(struct pc_kpage *k);
/*
 * pc_fd_resident_runs and, through k, pc_fd_active_runs of those runs in
 * one pass: each window's resident pages are probed in the mapping made
 * for mincore, not mapped again. Returns what pc_fd_resident_runs does;
 * the active runs in *active (malloc'd; none where the probe failed), the
 * probe's failure, as pc_fd_active_runs would return it, in *active_err
 * (0: none; k->err whether or not any page was cached).
 */
int pc_kpage_resident_runs(const struct pc_kpage *k, int fd, uint64_t size, uint64_t off,
			   uint64_t len, uint64_t **runs, size_t *nruns, uint64_t **active,
			   size_t *nactive, int *active_err);

#endif
