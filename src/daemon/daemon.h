/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.h: what `pagecache daemon` and `pagecache status` share: the
 * configuration file (pagecache.conf(5), read by daemon-conf.c's own INI
 * reader: not inih, which cuts long lines and gives no line numbers), the
 * status socket's wire format and the service metrics' table.
 */
#ifndef PC_DAEMON_H
#define PC_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define DAEMON_CONFIG "/etc/pagecache/pagecache.conf"
#define DAEMON_SOCKET "/run/pagecache/pagecache.sock"
#define DAEMON_STATE_DIR "/var/lib/pagecache"
#define DAEMON_MAX_SERVICES 256
#define DAEMON_MAX_PATHS 1024

/*
 * Who owns a file a snapshot read (snapshot --owners, the daemon's
 * status peers are judged on them): uid, gid, and the group and other
 * write bits (S_IWGRP, S_IWOTH) where they alone rule. At most
 * DAEMON_MAX_OWNERS kinds a snapshot; more are said as "many".
 */
#define DAEMON_MAX_OWNERS 32
struct downer {
	uint32_t uid, gid;
	unsigned w;
};

/*
 * A job's result: what the child that ran a snapshot or a restore writes
 * to its pipe, whole, just before it exits, and the daemon reads back.
 * Fixed and versioned, so both ends are tied at compile time; a result
 * of another size, magic or version is no result (the job "failed").
 */
#define DAEMON_JOB_MAGIC 0x70636a62u	/* "pcjb" */
#define DAEMON_JOB_VERSION 1
enum { DJR_WRITTEN = 1, DJR_KEPT = 2, DJR_BUDGET = 4, DJR_OWNERS = 8 };
struct daemon_job_result {
	uint32_t magic, version, size;	/* DAEMON_JOB_MAGIC, _VERSION, sizeof */
	uint32_t kind;			/* 1 snapshot, 2 restore */
	uint32_t flags;			/* DJR_* */
	uint32_t nowners;		/* DJR_OWNERS: owners[0..nowners) */
	/* snapshot: what was written, or the previous one's pages when kept */
	uint64_t files, pages, bytes, previous_pages;
	/* restore: pages wanted, cached before, read; files that failed */
	uint64_t want, cached, read, failures;
	struct downer owners[DAEMON_MAX_OWNERS];
};

/*
 * A lock set's report: what its child (pc-lock) writes to its pipe, whole,
 * once its first walk is done, after each rescan and when it lets go. Each
 * is the whole picture, so one the pipe has no room for is dropped (the
 * next says it all); the exit status says the rest. Tied like a job's
 * result: the same magic, kind 3, a version of its own.
 */
#define DAEMON_LOCK_VERSION 1
enum { DLS_LOCKED = 1, DLS_WATCHING = 2, DLS_RELEASED = 3 };
struct daemon_lock_report {
	uint32_t magic, version, size;	/* DAEMON_JOB_MAGIC, DAEMON_LOCK_VERSION, sizeof */
	uint32_t kind;			/* 3 lock */
	uint32_t state;			/* DLS_* */
	uint32_t flags;			/* DJR_BUDGET: the budget stopped its first walk */
	int32_t status;			/* DLS_RELEASED: its exit status */
	uint32_t pad;
	uint64_t files, pages;		/* locked now (data, never a hole) */
	uint64_t holes;			/* bytes of holes left unlocked */
	uint64_t relocks, released, rescans, refusals;	/* while watching */
	uint64_t failures;		/* paths that failed (in the log) */
};

/* one [service NAME] section */
struct dsvc {
	char *name;
	char **paths;			/* files and trees (absolute) */
	size_t npaths;
	char *pid_file;			/* select the files of this process and its children */
	char *cgroup;			/* select by (when no paths/pid-file) and charge restores to */
	unsigned cgroup_wait;		/* seconds the start-up restore waits for cgroup to appear */
	char *snapshot;			/* default DAEMON_STATE_DIR/NAME.snap */
	char *recording;		/* restored with the snapshot (record's, of a start); NULL: none */
	char *root;			/* --root for snapshot and restore; NULL: / */
	unsigned interval;		/* seconds between snapshots; 0: only at stop */
	unsigned timeout;		/* a job running longer is stopped; 0: never */
	bool restore;			/* restore when the daemon starts */
	bool active;			/* record active pages (snapshot's default) */
	char *max_mem, *rate;		/* restore's budget, as given (checked) */
	double guard;			/* keep the last snapshot under this ratio while down */
	char **lock;			/* paths kept locked (lock --watch); NULL: none */
	size_t nlock;
	char *lock_max;			/* how far the lock set may grow (its --max-mem); NULL: not past its first size */
	int line;			/* where the section starts, for messages */
};

#define DAEMON_STOP_TIMEOUT 90	/* the default stop-timeout */
/*
 * The default cgroup-wait: a service ordered After=pagecache.service
 * starts once the daemon is ready, seconds later; 5 minutes also covers
 * a slow boot's later services, and a restore that late is still one
 * its budget (max-mem, the cgroup's limit) bounds.
 */
#define DAEMON_CGROUP_WAIT 300

struct dconf {
	char *path;
	char *socket;
	char *metrics;			/* node-exporter textfile; NULL: none */
	unsigned stop_timeout;		/* SIGTERM: the final snapshots end within this */
	struct dsvc *svc;
	size_t nsvc;
};

/*
 * Read and check the whole file: 0, or -1 with every problem said on
 * stderr as "FILE:LINE: ..." (a reload keeps the old configuration then).
 * The file must be root's and not writable by others when we are root.
 */
int dconf_load(const char *path, struct dconf *ret);
void dconf_free(struct dconf *c);
/* Is the service's configuration the same (so its state carries over)? */
bool dsvc_same(const struct dsvc *a, const struct dsvc *b);
bool dsvc_same_lock(const struct dsvc *a, const struct dsvc *b);
/* 1-64 of [A-Za-z0-9-_.@:], not starting with '.' or '-' */
bool dsvc_valid_name(const char *name);

/*
 * The status socket: the daemon writes, on each connection, one header
 * line "pagecache-status 1", a line "fields" TAB NAME..., then a line per
 * service the peer may see: its values TAB-separated in that order, "-"
 * for none, strings with '%', TAB, LF, CR and '-' alone percent-escaped
 * (%25 %09 %0A %0D %2D); then "end". The client maps by field name, so
 * either side may have more fields than the other.
 */
enum dfield_type { DF_STR, DF_U64, DF_F64, DF_TIME, DF_BOOL };
struct dfield {
	const char *name;
	enum dfield_type type;
	int flags;			/* OF_BYTES, OF_PAGES for the client's output */
};
extern const struct dfield dfields[];
extern const size_t ndfields;
void dwire_put(FILE *o, const char *s);	/* one escaped value */
/* undo dwire_put in place; false: a bad escape */
bool dwire_unescape(char *s);

struct ometric;
extern const struct ometric dmetrics[];
extern const size_t ndmetrics;

#endif
