/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lockset.c: a lock set keeps its files locked as they change. A file
 * renamed over is locked again and the old inode's mapping released; a
 * new file in a tree is locked; a file that grew is locked again; a file
 * deleted is released; a link put at a named path is not followed; a
 * file the budget refuses is said once; the inotify watch brings a
 * rescan through pc_lockset_dispatch; the end releases everything.
 * Locking needs CAP_IPC_LOCK or a large enough RLIMIT_MEMLOCK: skipped
 * without.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "internal.h"	/* lockset.c */
#include "tap.h"

#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>

/* What the set said: a count of each kind, and the last of each's path and bytes. */
struct heard {
	unsigned n[PC_LOCKSET_UNWATCHED + 1];
	char path[PC_LOCKSET_UNWATCHED + 1][512];
	uint64_t locked[PC_LOCKSET_UNWATCHED + 1], previous[PC_LOCKSET_UNWATCHED + 1];
	enum pc_lockset_why why;
};

static pthread_mutex_t heard_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_event(const struct pc_lockset_event *e, void *arg)
{
	struct heard *h = arg;

	pthread_mutex_lock(&heard_lock);	/* the first walk's threads too */
	h->n[e->kind]++;
	snprintf(h->path[e->kind], sizeof(h->path[0]), "%s", e->path ? e->path : "");
	h->locked[e->kind] = e->locked;
	h->previous[e->kind] = e->previous;
	if (e->kind == PC_LOCKSET_REFUSED || e->kind == PC_LOCKSET_FAILED)
		h->why = e->why;
	pthread_mutex_unlock(&heard_lock);
}

/* Does this process map inode ino (maps' 5th field)? */
static bool mapped(uint64_t ino)
{
	char line[1024];
	unsigned long long i;
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %llu", &i) == 1 && i == ino)
			found = true;
	if (f)
		fclose(f);
	return found;
}

static uint64_t ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static char *at(const char *name)
{
	static char p[4][600];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", scratch_dir(), name);
	return p[i];
}

int main(void)
{
	struct heard h;
	struct pc_budget b;
	struct pc_lockset_opts o = { .budget = &b, .event = on_event, .arg = &h };
	struct pc_walk_opts wo = { .threads = 2 };
	struct pc_lockset_stats st;
	struct pc_lockset *s;
	const char *paths[2];
	uint64_t ps = pc_page_size(), old, new;
	struct rlimit rl;
	int rc;

	memset(&h, 0, sizeof(h));
	if (!pc_have_cap(CAP_IPC_LOCK) &&
	    (getrlimit(RLIMIT_MEMLOCK, &rl) < 0 ||
	     (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 8 << 20))) {
		skip("no CAP_IPC_LOCK and RLIMIT_MEMLOCK under 8 MiB", "lock set");
		return done_testing();
	}
	make_file("f", 16 * ps);
	mkdir(at("tree"), 0755);
	make_file("tree/a", 8 * ps);
	paths[0] = at("f");
	paths[1] = at("tree");
	if (pc_budget_init(&b, 64 << 20, 0) < 0 || pc_lockset_new(&o, &s) < 0)
		return ok(0, "a budget and a lock set"), done_testing();

	/* the first walk locks what the named paths hold */
	rc = pc_lockset_watch(s, paths, 2, &wo, 0);
	ok(rc == 0 && pc_lockset_fd(s) >= 0, "watched: inotify on the named paths (%d)", rc);
	rc = pc_lockset_walk(s);
	pc_lockset_stats(s, &st);
	ok(rc == 0 && st.files == 2 && st.bytes == 24 * ps && h.n[PC_LOCKSET_LOCKED] == 2,
	   "the first walk locks both files (%zu files, %llu bytes)", st.files,
	   (unsigned long long)st.bytes);
	ok(mapped(ino_of(at("f"))) && mapped(ino_of(at("tree/a"))), "both are mapped");
	ok(pc_lockset_timeout(s) == -1, "nothing due: no timeout");

	/* renamed over, as dpkg does */
	old = ino_of(at("f"));
	make_file("f.new", 32 * ps);
	rename(at("f.new"), at("f"));
	new = ino_of(at("f"));
	rc = pc_lockset_rescan(s);
	ok(rc == 1 && h.n[PC_LOCKSET_REPLACED] == 1 && !strcmp(h.path[PC_LOCKSET_REPLACED], at("f")) &&
	   h.locked[PC_LOCKSET_REPLACED] == 32 * ps && h.previous[PC_LOCKSET_REPLACED] == 16 * ps,
	   "a file renamed over is locked again (%u replaced)", h.n[PC_LOCKSET_REPLACED]);
	ok(mapped(new) && !mapped(old), "  the new inode is mapped, the old one's mapping released");
	pc_lockset_stats(s, &st);
	ok(st.files == 2 && st.bytes == 40 * ps && st.relocks == 1, "  the set's totals follow");

	/* a new file in the tree, a file that grew, a file deleted */
	make_file("tree/b", 4 * ps);
	rc = pc_lockset_rescan(s);
	ok(rc == 1 && h.n[PC_LOCKSET_NEW] == 1 && mapped(ino_of(at("tree/b"))),
	   "a new file in a tree is locked");
	{
		int fd = open(at("tree/a"), O_WRONLY | O_APPEND);
		char page[65536];

		memset(page, 1, sizeof(page));
		ok(fd >= 0 && write(fd, page, ps) == (ssize_t)ps, "tree/a grows a page");
		if (fd >= 0)
			close(fd);
	}
	rc = pc_lockset_rescan(s);
	ok(rc == 1 && h.n[PC_LOCKSET_RESIZED] == 1 && h.locked[PC_LOCKSET_RESIZED] == 9 * ps &&
	   h.previous[PC_LOCKSET_RESIZED] == 8 * ps, "a file that grew is locked again (%llu)",
	   (unsigned long long)h.locked[PC_LOCKSET_RESIZED]);
	old = ino_of(at("tree/b"));
	unlink(at("tree/b"));
	rc = pc_lockset_rescan(s);
	ok(rc == 1 && h.n[PC_LOCKSET_RELEASED] == 1 && !mapped(old),
	   "a file deleted is released, its mapping gone");
	rc = pc_lockset_rescan(s);
	ok(rc == 0, "a rescan with nothing changed changes nothing");

	/* the budget: the set may not grow past its cap; said once */
	b.max_bytes = b.taken;
	{
		int fd = open(at("tree/a"), O_WRONLY | O_APPEND);
		char page[65536];

		memset(page, 2, sizeof(page));
		if (fd < 0 || write(fd, page, ps) != (ssize_t)ps)
			ok(0, "tree/a grows again");
		if (fd >= 0)
			close(fd);
	}
	pc_lockset_rescan(s);
	ok(h.n[PC_LOCKSET_REFUSED] == 1 && h.why == PC_LOCKSET_WHY_BUDGET &&
	   h.locked[PC_LOCKSET_REFUSED] == 9 * ps, "past the budget: refused, the old lock kept");
	pc_lockset_rescan(s);
	ok(h.n[PC_LOCKSET_REFUSED] == 1, "  and not said again while it has not changed");
	b.max_bytes = 64 << 20;

	/* a link put at a named path is not followed */
	old = ino_of(at("f"));
	unlink(at("f"));
	if (symlink(at("tree/a"), at("f")) < 0)
		fprintf(stderr, "# symlink: %s\n", strerror(errno));
	pc_lockset_rescan(s);
	ok(h.n[PC_LOCKSET_LINK] == 1 && !mapped(old), "a link at a named path: not followed, "
	   "its lock released");
	pc_lockset_rescan(s);
	ok(h.n[PC_LOCKSET_LINK] == 1, "  said once");
	unlink(at("f"));

	/* the watch: a change brings a rescan through dispatch */
	{
		double t0 = pc_now();
		unsigned before = h.n[PC_LOCKSET_NEW];

		make_file("tree/c", 2 * ps);
		rc = 0;
		while (!rc && pc_now() - t0 < 5) {
			struct pollfd pf = { pc_lockset_fd(s), POLLIN, 0 };
			int to = pc_lockset_timeout(s);

			poll(&pf, 1, to < 0 || to > 500 ? 500 : to);
			rc = pc_lockset_dispatch(s);
		}
		ok(rc == 1 && h.n[PC_LOCKSET_NEW] == before + 1 && mapped(ino_of(at("tree/c"))),
		   "inotify: a new file in the tree is locked after the burst (%.2f s)",
		   pc_now() - t0);
	}
	pc_lockset_stats(s, &st);
	old = ino_of(at("tree/c"));
	pc_lockset_free(s);
	ok(st.files == 2 && !mapped(old) && !mapped(ino_of(at("tree/a"))),
	   "freed: every lock released (%zu held before)", st.files);
	pc_budget_release(&b);

	/* unwatched: pc_lockset_add alone */
	memset(&h, 0, sizeof(h));
	if (pc_budget_init(&b, 4 * ps, 0) == 0 && pc_lockset_new(&o, &s) == 0) {
		int fd = open(at("tree/a"), O_RDONLY);
		struct stat fst;

		ok(fd >= 0 && fstat(fd, &fst) == 0 && pc_lockset_add(s, fd, &fst, "a") == 1 &&
		   h.n[PC_LOCKSET_LOCKED] == 0, "pc_lockset_add: past the budget, 1 (stop)");
		pc_lockset_stats(s, &st);
		ok(st.stopped && st.files == 0, "  the set says it stopped");
		if (fd >= 0)
			close(fd);
		pc_lockset_free(s);
		pc_budget_release(&b);
	}
	rm_scratch();
	return done_testing();
}
