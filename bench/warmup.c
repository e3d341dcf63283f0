/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * warmup.c: `pagecache bench warmup`, the mailing-list experiment that
 * started this project (Dominique Martinet, linux-mm, January 2019:
 * MariaDB 350 ms cold, 60 ms warm, 150 ms after a partial prefetch),
 * rebuilt on SQLite so it runs anywhere.
 *
 * A database with an indexed table (by default about 1.8 GB, 15.6 million
 * rows of 100 random bytes; --quick: 1.5 million, 170 MB) and four fixed sets of
 * 1000 random ids are made once and kept. Each trial runs the conditions
 * in a shuffled order, each in a new process (this binary, exec'd, so its
 * own text is cold too when the cache is), which opens the database with
 * an empty 64 MiB SQLite cache and times Q1, Q2, Q3 (1000 ids each):
 *   cold      drop_caches, then the queries;
 *   restored  drop_caches, one cold run, snapshot of what it left cached
 *             (the database, this binary, its libraries), drop_caches,
 *             pagecache restore (timed), then the queries;
 *   peer      drop_caches, vmtouch -t of the database file alone, then
 *             the queries (skipped if vmtouch is missing);
 *   warm      no drop, the queries.
 * Medians and ranges per condition and query, as a table or JSON. It
 * needs root (drop_caches). Timings are this machine's; the test suite
 * checks only that it runs and reports.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "bench.h"
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NSETS 4
#define SETSZ 1000
#define NQ 3

enum { C_COLD, C_RESTORED, C_PEER, C_WARM, NCOND };
static const char *const cond_names[NCOND] = { "cold", "restored", "peer", "warm" };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * The database and its ids, made once in the work directory dfd (path dir)
 * and kept. Every name is made fresh (O_EXCL, no symbolic link followed)
 * under a temporary name and renamed into place, which replaces whatever
 * was there, never writes through it.
 */
static int build_db(int dfd, const char *dir, uint64_t rows, char *db, size_t len)
{
	char name[64], tmp[80], ids[80], idstmp[96], tmppath[PATH_MAX + 100], sql[512];
	sqlite3 *h;
	FILE *f;
	int rc, fd;

	snprintf(name, sizeof(name), "warmup-%llu.db", (unsigned long long)rows);
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	snprintf(ids, sizeof(ids), "%s.ids", name);
	snprintf(idstmp, sizeof(idstmp), "%s.tmp", ids);
	snprintf(db, len, "%s/%s", dir, name);
	snprintf(tmppath, sizeof(tmppath), "%s/%s", dir, tmp);
	if (bench_file_ours(dfd, name) == 0 && bench_file_ours(dfd, ids) == 0)
		return 0;	/* made before: kept across runs */
	fprintf(stderr, "pagecache: building %s (%llu rows; once, then kept)...\n", db,
		(unsigned long long)rows);
	unlinkat(dfd, tmp, 0);		/* a name, not what it may point to */
	fd = bench_file_create(dfd, tmp, O_RDWR, 0644);
	if (fd < 0)
		return fd;
	close(fd);
	/* the path has no symbolic link, and SQLite is told to follow none */
	if (sqlite3_open_v2(tmppath, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) !=
	    SQLITE_OK) {
		sqlite3_close(h);
		unlinkat(dfd, tmp, 0);
		return -EIO;
	}
	snprintf(sql, sizeof(sql),
		 "PRAGMA page_size=4096; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		 "CREATE TABLE mytable(id INTEGER PRIMARY KEY, payload BLOB NOT NULL);"
		 "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<%llu)"
		 " INSERT INTO mytable SELECT x, randomblob(100) FROM c;",
		 (unsigned long long)rows);
	rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
	sqlite3_close(h);
	if (rc != SQLITE_OK || renameat(dfd, tmp, dfd, name) < 0) {
		unlinkat(dfd, tmp, 0);
		return -EIO;
	}
	unlinkat(dfd, idstmp, 0);
	fd = bench_file_create(dfd, idstmp, O_WRONLY, 0644);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	/* four disjoint sets of 1000 distinct ids, uniform over [1, rows] */
	{
		uint64_t *all = calloc(NSETS * SETSZ, sizeof(*all));
		int n = 0;

		while (all && n < NSETS * SETSZ) {
			uint64_t id = next_rand() % rows + 1;
			bool dup = false;

			for (int i = 0; i < n && !dup; i++)
				dup = all[i] == id;
			if (!dup)
				all[n++] = id;
		}
		for (int i = 0; all && i < NSETS * SETSZ; i++)
			fprintf(f, "%llu%c", (unsigned long long)all[i], (i + 1) % SETSZ ? ',' : '\n');
		free(all);
	}
	if (fclose(f) != 0 || renameat(dfd, idstmp, dfd, ids) < 0) {
		unlinkat(dfd, idstmp, 0);
		return -EIO;
	}
	return 0;
}

/* The worker: a new process, empty SQLite cache, Q1..Q3 timed. */
int bench_warmup_worker(const char *db)
{
	char ids[4200], *line = NULL, *sql;
	size_t cap = 0;
	double t[NQ];
	sqlite3 *h;
	FILE *f;
	int fd;

	snprintf(ids, sizeof(ids), "%s.ids", db);
	fd = open(ids, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f || sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, NULL) !=
		  SQLITE_OK)
		return 1;
	sqlite3_exec(h, "PRAGMA cache_size=-65536", NULL, NULL, NULL);
	for (int q = 0; q < NQ; q++) {
		sqlite3_stmt *st;
		double t0;

		if (getline(&line, &cap, f) <= 0)
			return 1;
		line[strcspn(line, "\n")] = 0;
		if (asprintf(&sql, "SELECT sum(length(payload)) FROM mytable WHERE id IN (%s)", line) < 0)
			return 1;
		t0 = pc_now();
		if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
			return 1;
		while (sqlite3_step(st) == SQLITE_ROW)
			;
		sqlite3_finalize(st);
		t[q] = (pc_now() - t0) * 1000.0;
		free(sql);
	}
	fclose(f);
	/* what this process needs besides the database: its mapped files */
	printf("%.3f %.3f %.3f\n", t[0], t[1], t[2]);
	f = fopen("/proc/self/maps", "re");
	while (f && getline(&line, &cap, f) > 0) {
		char *p = strchr(line, '/');

		if (p)
			printf("%s", p);
	}
	if (f)
		fclose(f);
	free(line);
	sqlite3_close(h);
	return 0;
}

/* Run the worker; times in q[], mapped files appended to *files (if given). */
static int run_worker(const char *db, double q[NQ], char **files)
{
	int pfd[2], st;
	pid_t pid;
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int ok = 0;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		bench_exec_prep();
		dup2(pfd[1], STDOUT_FILENO);
		execl("/proc/self/exe", "pagecache-bench", "warmup", "--worker", db, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	if (f && getline(&line, &cap, f) > 0 && sscanf(line, "%lf %lf %lf", &q[0], &q[1], &q[2]) == 3)
		ok = 1;
	while (f && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		if (files && !strstr(line, " (deleted)") && strncmp(line, "/dev/", 5) &&
		    strncmp(line, "/proc/", 6) && (!*files || !strstr(*files, line))) {
			size_t ol = *files ? strlen(*files) : 0;
			char *nf = realloc(*files, ol + strlen(line) + 2);

			if (nf) {
				memcpy(nf + ol, line, strlen(line));
				nf[ol + strlen(line)] = '\n';
				nf[ol + strlen(line) + 1] = 0;
				*files = nf;
			}
		}
	}
	free(line);
	if (f)
		fclose(f);
	if (pid < 0 || bench_wait(pid, &st) < 0)
		return -ECHILD;
	return ok && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* The median of v[0..n), v left in trial order. */
static double median(const double *v, int n)
{
	return pc_median(v, (size_t)n);
}

/* A "results" row for `bench compare`: per-trial times of one condition. */
static void results_row(int c, int n, double q[][NQ], const double *pre, int npre)
{
	static const char *const qn[NQ] = { "q1_ms", "q2_ms", "q3_ms" };
	struct orec rec = { 0 };
	char *js = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&js, &len);

	orec_str(&rec, "condition", cond_names[c], OF_LABEL);
	orec_u64(&rec, "runs", (uint64_t)n, 0);
	if (f) {
		fputc('{', f);
		for (int k = 0; k < NQ; k++) {
			double v[64];

			for (int t = 0; t < n; t++)
				v[t] = q[t][k];
			bench_metric_json(f, k == 0, qn[k], v, n, false, "ms");
		}
		if (pre && npre)
			bench_metric_json(f, false, "prefetch_ms", pre, npre, false, "ms");
		fputc('}', f);
		fclose(f);
	}
	bench_orec_json(&rec, "metrics", js ? js : "{}");
	free(js);
	out_list_add("results", &rec);
}

/*
 * The pagecache that snapshots and restores: the one that ran us (it says
 * so in PAGECACHE_EXE), else the one beside us (a build tree), else PATH's.
 */
static void pagecache_exe(char *exe, size_t len)
{
	const char *env = getenv("PAGECACHE_EXE");
	ssize_t n;
	char *slash;

	if (env && env[0] == '/' && strlen(env) < len) {
		strcpy(exe, env);
		return;
	}
	n = readlink("/proc/self/exe", exe, len - 1);
	exe[n > 0 ? n : 0] = 0;
	slash = strrchr(exe, '/');
	if (slash && (size_t)(slash - exe) + sizeof("/pagecache") <= len) {
		strcpy(slash, "/pagecache");
		if (access(exe, X_OK) == 0)
			return;
	}
	snprintf(exe, len, "pagecache");
}

int bench_warmup(const struct warmup_opts *o)
{
	char db[PATH_MAX + 100], snap[PATH_MAX + 120], exe[4096], dir[PATH_MAX], why[400];
	double q[NCOND][64][NQ] = { { { 0 } } }, rt[64] = { 0 }, rbytes[64] = { 0 }, pt[64] = { 0 };
	int nt[NCOND] = { 0 }, nr = 0, np = 0, failed = 0, trials = o->trials > 64 ? 64 : o->trials;
	bool have_vmtouch = bench_run_cmd((char *const[]){ "sh", "-c", "command -v vmtouch", NULL }, true) == 0;
	int rc, dfd;

	if (geteuid() != 0) {
		cli_fail_msg("bench warmup", "cannot run",
			     "needs root: it drops the page cache between conditions");
		return EXIT_PARTIAL;
	}
	/* root keeps a database there: only in a directory that is its own */
	dfd = bench_workdir_open(o->dir, BENCH_WD_CREATE, dir, sizeof(dir), why, sizeof(why));
	if (dfd < 0) {
		cli_fail_msg(o->dir, "cannot use the work directory", why);
		return EXIT_PARTIAL;
	}
	rc = build_db(dfd, dir, o->rows, db, sizeof(db));
	close(dfd);
	if (rc < 0) {
		cli_fail(o->dir, -rc, "cannot build the database in");
		return EXIT_PARTIAL;
	}
	if (bench_drop_caches() < 0) {
		cli_fail_msg("/proc/sys/vm/drop_caches", "cannot drop the page cache",
			     "cold would not be cold");
		return EXIT_PARTIAL;
	}
	snprintf(snap, sizeof(snap), "%s.snap", db);
	pagecache_exe(exe, sizeof(exe));
	for (int t = 0; t < trials; t++) {
		int ord[NCOND] = { C_COLD, C_RESTORED, C_PEER, C_WARM };

		/* shuffle, but warm last: it needs what the others left */
		for (int i = NCOND - 2; i > 0; i--) {
			int k = (int)(next_rand() % (uint64_t)(i + 1)), x = ord[i];

			ord[i] = ord[k];
			ord[k] = x;
		}
		for (int i = 0; i < NCOND; i++) {
			int c = ord[i];
			double *qq = q[c][nt[c]];

			if (c == C_PEER && !have_vmtouch)
				continue;
			if (c == C_COLD) {
				bench_drop_caches();
			} else if (c == C_RESTORED) {
				char *files = NULL, *argv[64];
				double t0, dq[NQ];
				int na = 0;
				char *save = NULL;

				bench_drop_caches();
				if (run_worker(db, dq, &files) < 0) {
					free(files);
					continue;
				}
				argv[na++] = exe;
				argv[na++] = "snapshot";
				argv[na++] = "--no-active";
				argv[na++] = "-o";
				argv[na++] = snap;
				argv[na++] = db;
				for (char *p = strtok_r(files, "\n", &save); p && na < 62;
				     p = strtok_r(NULL, "\n", &save))
					if (strcmp(p, db))
						argv[na++] = p;
				argv[na] = NULL;
				bench_run_cmd(argv, true);
				free(files);
				bench_drop_caches();
				t0 = pc_now();
				{
					char *rargv[] = { exe, "restore", "-q", "--json", snap, NULL };
					int pfd[2];
					pid_t pid;
					FILE *f;
					char *line = NULL;
					size_t cap = 0;
					unsigned long long rb = 0;

					if (pipe2(pfd, O_CLOEXEC) < 0)
						continue;
					pid = fork();
					if (pid == 0) {
						bench_exec_prep();
						dup2(pfd[1], STDOUT_FILENO);
						execvp(exe, rargv);
						_exit(127);
					}
					close(pfd[1]);
					f = fdopen(pfd[0], "r");
					while (f && getline(&line, &cap, f) > 0)
						sscanf(line, " \"read_bytes\": %llu", &rb);
					if (f)
						fclose(f);
					free(line);
					if (pid > 0)
						bench_wait(pid, NULL);
					rt[nr] = (pc_now() - t0) * 1000.0;
					rbytes[nr++] = (double)rb;
				}
			} else if (c == C_PEER) {
				char *argv[] = { "vmtouch", "-qt", db, NULL };
				double t0;

				bench_drop_caches();
				t0 = pc_now();
				bench_run_cmd(argv, true);
				pt[np++] = (pc_now() - t0) * 1000.0;
			}
			if (run_worker(db, qq, NULL) == 0)
				nt[c]++;
			else
				failed++;
		}
		if (o->progress)
			fprintf(stderr, "\r\033[Kbench warmup: trial %d of %d", t + 1, trials);
	}
	if (o->progress)
		fprintf(stderr, "\r\033[K");

	for (int c = 0; c < NCOND; c++) {
		struct orec rec = { 0 };

		if (!nt[c])
			continue;
		orec_str(&rec, "condition", cond_names[c], OF_LABEL);
		orec_u64(&rec, "trials", (uint64_t)nt[c], 0);
		for (int k = 0; k < NQ; k++) {
			static const char *const keys[NQ][3] = {
				{ "q1_ms", "q1_min_ms", "q1_max_ms" },
				{ "q2_ms", "q2_min_ms", "q2_max_ms" },
				{ "q3_ms", "q3_min_ms", "q3_max_ms" },
			};
			double v[64], lo, hi;

			for (int t = 0; t < nt[c]; t++)
				v[t] = q[c][t][k];
			lo = hi = v[0];
			for (int t = 1; t < nt[c]; t++) {
				lo = v[t] < lo ? v[t] : lo;
				hi = v[t] > hi ? v[t] : hi;
			}
			orec_f64(&rec, keys[k][0], median(v, nt[c]));
			orec_f64(&rec, keys[k][1], lo);
			orec_f64(&rec, keys[k][2], hi);
		}
		if (c == C_RESTORED && nr) {
			orec_f64(&rec, "prefetch_ms", median(rt, nr));
			orec_f64(&rec, "prefetch_mib", median(rbytes, nr) / 1048576.0);
		}
		if (c == C_PEER && np) {
			struct stat st;

			orec_f64(&rec, "prefetch_ms", median(pt, np));
			if (stat(db, &st) == 0)
				orec_f64(&rec, "prefetch_mib", (double)st.st_size / 1048576.0);
		}
		out_list_add("conditions", &rec);
		results_row(c, nt[c], q[c], c == C_RESTORED ? rt : c == C_PEER ? pt : NULL,
			    c == C_RESTORED ? nr : c == C_PEER ? np : 0);
	}
	{
		struct orec rec = { 0 };

		orec_str(&rec, "database", db, 0);
		orec_u64(&rec, "rows", o->rows, 0);
		orec_u64(&rec, "trials", (uint64_t)trials, 0);
		orec_bool(&rec, "peer_vmtouch", have_vmtouch);
		out_object("setup", &rec);
	}
	if (out_format() == OUT_HUMAN) {
		static const struct ocol cols[] = {
			{ "condition", "CONDITION", true }, { "q1_ms", "Q1 ms", false },
			{ "q2_ms", "Q2 ms", false },	     { "q3_ms", "Q3 ms", false },
			{ "q1_min_ms", "Q1 min", false },    { "q1_max_ms", "Q1 max", false },
			{ "prefetch_ms", "PREFETCH ms", false }, { "prefetch_mib", "PREFETCH MiB", false },
		};
		out_columns("conditions", cols, sizeof(cols) / sizeof(cols[0]));
		out_human_line("\nMedians over %d trials of SQLite Q1..Q3 (1000 random ids each) in a new "
			       "process; %s (%llu rows).", trials, db, (unsigned long long)o->rows);
		out_human_line("PREFETCH: restored = pagecache restore of a snapshot of what one cold run "
			       "left cached (database, binary, libraries); peer = vmtouch -t of the "
			       "database file.");
		if (!have_vmtouch)
			out_human_line("peer (vmtouch -t) skipped: vmtouch is not installed");
	}
	if (failed) {
		char why[64];

		snprintf(why, sizeof(why), "%d query runs failed (left out of the medians)", failed);
		cli_fail_msg(db, "bench warmup", why);
		return EXIT_PARTIAL;
	}
	return 0;
}
