/*
 * walk.c: every regular file once; FIFOs, sockets and devices never
 * opened; symlinks followed only when asked, loops survived; hardlinks
 * once; patterns, size caps; errors named.
 */
#include "pagecache.h"
#include "tap.h"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

struct seen {
	pthread_mutex_t lock;
	char names[64][256];
	int n;
	int ev[PC_WALK_NEVENTS];
	int last_err;
};

static int on_file(struct pc_walk_entry *e, void *arg)
{
	struct seen *s = arg;
	const char *base = strrchr(e->path, '/');

	pthread_mutex_lock(&s->lock);
	if (s->n < 64)
		snprintf(s->names[s->n++], 256, "%s", base ? base + 1 : e->path);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static void on_event(enum pc_walk_event ev, const char *path, int err, void *arg)
{
	struct seen *s = arg;

	(void)path;
	s->ev[ev]++;
	if (ev == PC_WALK_ERROR)
		s->last_err = err;
}

static int stop_cb(struct pc_walk_entry *e, void *a)
{
	(void)e;
	(void)a;
	return 7;
}

static bool saw(struct seen *s, const char *name)
{
	int k = 0;

	for (int i = 0; i < s->n; i++)
		k += !strcmp(s->names[i], name);
	return k == 1;
}

static void walk(const char *root, struct pc_walk_opts *o, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	o->file = on_file;
	o->event = on_event;
	o->arg = s;
	o->event_arg = s;
	pc_walk(&root, 1, o);
}

static char *p(const char *rel)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", scratch_dir(), rel);
	return buf[i];
}

int main(void)
{
	struct pc_walk_opts o = { 0 };
	struct seen s;
	const char *root = scratch_dir();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sock;

	mkdir(p("d1"), 0755);
	mkdir(p("d1/d2"), 0755);
	mkdir(p("skipme"), 0755);
	make_file("a", 4096);
	make_file("d1/b", 100);
	make_file("d1/d2/c", 70000);
	make_file("skipme/x", 10);
	make_file("big", 1 << 20);
	link(p("a"), p("d1/a-hardlink"));
	mkfifo(p("fifo"), 0644);
	symlink(".", p("d1/loop"));
	symlink("a", p("link-to-a"));
	symlink("nowhere", p("dangling"));
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p("sock"));
	bind(sock, (struct sockaddr *)&sa, sizeof(sa));

	o.threads = 3;
	walk(root, &o, &s);
	ok(s.n == 5, "five regular files by default, got %d", s.n);
	ok(saw(&s, "a") != saw(&s, "a-hardlink"), "a hardlinked file is visited once");
	ok(saw(&s, "b") && saw(&s, "c") && saw(&s, "big") && saw(&s, "x"), "nested files found");
	ok(s.ev[PC_WALK_SKIP_SPECIAL] == 2, "FIFO and socket skipped, not opened (%d)",
	   s.ev[PC_WALK_SKIP_SPECIAL]);
	ok(s.ev[PC_WALK_SKIP_SYMLINK] == 3, "three symlinks skipped without -L (%d)",
	   s.ev[PC_WALK_SKIP_SYMLINK]);
	ok(s.ev[PC_WALK_DUP] == 1, "one hardlink duplicate reported");
	ok(s.ev[PC_WALK_DIR] == 4, "four directories entered (%d)", s.ev[PC_WALK_DIR]);
	ok(s.ev[PC_WALK_ERROR] == 0, "no errors");

	o = (struct pc_walk_opts){ .threads = 2, .follow = true };
	walk(root, &o, &s);
	ok(s.ev[PC_WALK_SKIP_LOOP] >= 1, "with -L the symlink loop is detected and survived");
	ok(saw(&s, "c"), "with -L files are still found once each");
	ok(s.ev[PC_WALK_ERROR] == 1 && s.last_err == ENOENT, "a dangling symlink is an error");

	o = (struct pc_walk_opts){ .threads = 1, .all_links = true };
	walk(root, &o, &s);
	ok(s.n == 6, "--all-links visits every hardlink (%d)", s.n);

	{
		const char *exc[] = { "skipme", NULL }, *inc[] = { "?", NULL };

		o = (struct pc_walk_opts){ .exclude = exc, .include = inc };
		walk(root, &o, &s);
		ok(s.n == 3 && saw(&s, "b") && saw(&s, "c"),
		   "include '?' and exclude 'skipme' prune (%d)", s.n);
	}
	o = (struct pc_walk_opts){ .max_size = 65536 };
	walk(root, &o, &s);
	ok(s.ev[PC_WALK_SKIP_SIZE] == 2 && !saw(&s, "big"), "max_size skips larger files");

	/* explicit roots: a file, a FIFO (error, never opened), a missing path */
	{
		const char *roots[] = { p("a"), p("fifo"), p("nope"), p("link-to-a") };

		memset(&s, 0, sizeof(s));
		pthread_mutex_init(&s.lock, NULL);
		o = (struct pc_walk_opts){ .file = on_file, .event = on_event, .arg = &s,
					   .event_arg = &s };
		pc_walk(roots, 4, &o);
		ok(s.n == 1, "a file named twice (once via symlink) is visited once");
		ok(s.ev[PC_WALK_ERROR] == 2, "FIFO and missing root are errors (%d)",
		   s.ev[PC_WALK_ERROR]);
	}

	/* open failure injected: named, not fatal */
	pc_sys_inject(PC_SYS_OPEN, EIO, 0, 1);
	o = (struct pc_walk_opts){ .threads = 1 };
	walk(root, &o, &s);
	ok(s.ev[PC_WALK_ERROR] == 1 && s.last_err == EIO && s.n >= 4,
	   "an EIO on one file is reported and the walk goes on (%d errors, %d files)",
	   s.ev[PC_WALK_ERROR], s.n);
	pc_sys_inject_reset();

	/* stop on request */
	{
		const char *roots[] = { root };

		o = (struct pc_walk_opts){ .threads = 2, .file = stop_cb };
		ok(pc_walk(roots, 1, &o) == 7, "a non-zero return from file() stops the walk");
	}

	if (geteuid() == 0) {
		pid_t pid;
		int st;

		mkdir(p("locked"), 0700);
		make_file("locked/secret", 10);
		chmod(root, 0755);
		pid = fork();
		if (pid == 0) {
			if (setgid(65534) || setuid(65534))
				_exit(9);
			o = (struct pc_walk_opts){ .threads = 2 };
			walk(root, &o, &s);
			_exit(s.ev[PC_WALK_ERROR] == 1 && s.last_err == EACCES ? 0 : 1);
		}
		waitpid(pid, &st, 0);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		   "an unreadable directory is a named error (EACCES), the rest is walked");
	} else {
		skip("needs root to switch users", "unreadable directory");
	}
	close(sock);
	rm_scratch();
	return done_testing();
}
