/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon-conf.c: pagecache.conf(5), the daemon's INI file, the status
 * socket's wire format (daemon.h), and the service metrics' table
 * (dmetrics), which the daemon's textfile and `pagecache status --prom`
 * both print.
 *
 * Written here rather than with inih: Debian's libinih is built with
 * 200-byte lines (a longer one is silently cut and its rest read as a
 * line of its own; container paths under /var/lib/docker/overlay2 come
 * close) and without line numbers for the handler, so a typo could be
 * neither refused reliably nor pointed at. The grammar is small:
 * "[daemon]", "[service NAME]", "key = value", full-line and
 * whitespace-led inline comments (# or ;), double quotes around a value
 * or a list item that holds spaces or comment characters.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "daemon/daemon.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct pstate {
	struct dconf *c;
	const char *file;
	int line;
	int errors;
	enum { SEC_NONE, SEC_DAEMON, SEC_SERVICE } sec;
	bool seen_daemon;
	struct dsvc *s;			/* the current service */
	bool have_lock;			/* lock = given in this section */
	char seen[24][16];		/* the section's one-value keys given so far */
	int nseen;
};

static void perr(struct pstate *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void perr(struct pstate *p, const char *fmt, ...)
{
	char msg[512];
	char *file = out_escape(p->file);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pagecache: %s:%d: %s\n", file ? file : "?", p->line, msg);
	free(file);
	p->errors++;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/*
 * Split a value into items: whitespace between them, double quotes keep
 * spaces, '#' and ';' (and \" \\ inside quotes); an unquoted '#' or ';'
 * after whitespace (or at the start) ends the value. Items are strdup'ed
 * into *items. -1: a quote not closed or no memory (said).
 */
static int split(struct pstate *p, const char *v, char ***items, size_t *n, size_t max)
{
	size_t len = strlen(v);
	char *buf = malloc(len + 1);
	const char *s = v;

	if (!buf)
		return perr(p, "out of memory"), -1;
	for (;;) {
		size_t k = 0;
		bool quoted = false;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#' || *s == ';')
			break;
		while (*s && (quoted || (*s != ' ' && *s != '\t'))) {
			if (*s == '"') {
				quoted = !quoted;
				s++;
				continue;
			}
			if (quoted && *s == '\\' && (s[1] == '"' || s[1] == '\\'))
				s++;
			buf[k++] = *s++;
		}
		if (quoted) {
			free(buf);
			return perr(p, "a double quote is not closed"), -1;
		}
		buf[k] = 0;
		if (*n >= max) {
			free(buf);
			return perr(p, "more than %zu items", max), -1;
		}
		char **grown = realloc(*items, (*n + 1) * sizeof(**items));

		if (!grown || !(grown[*n] = strdup(buf))) {
			if (grown)
				*items = grown;
			free(buf);
			return perr(p, "out of memory"), -1;
		}
		*items = grown;
		(*n)++;
	}
	free(buf);
	return 0;
}

/* a single value: exactly one item */
static char *one(struct pstate *p, const char *key, const char *v)
{
	char **items = NULL, *r = NULL;
	size_t n = 0;

	if (split(p, v, &items, &n, 64) == 0) {
		if (n == 1)
			r = items[0];
		else
			perr(p, "%s: one value expected, %s", key, n ? "got more (quote a name with spaces)" : "got none");
	}
	for (size_t i = r ? 1 : 0; i < n; i++)
		free(items[i]);
	free(items);
	return r;
}

static bool yesno(struct pstate *p, const char *key, const char *v, bool *ret)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "1"))
		*ret = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "0"))
		*ret = false;
	else
		return perr(p, "%s: yes or no, not '%s'", key, v), false;
	return true;
}

static bool absolute(struct pstate *p, const char *key, const char *v)
{
	if (v[0] != '/') {
		perr(p, "%s: '%s' is not an absolute path", key, v);
		return false;
	}
	return true;
}

static void set_str(struct pstate *p, const char *key, char **dst, char *v)
{
	if (*dst) {
		perr(p, "%s given twice", key);
		free(v);
		return;
	}
	*dst = v;
}

/* a one-value key given twice in a section is an error (set_str's rule for all) */
static bool first_time(struct pstate *p, const char *key)
{
	for (int i = 0; i < p->nseen; i++)
		if (!strcmp(p->seen[i], key)) {
			perr(p, "%s given twice", key);
			return false;
		}
	if (p->nseen < 24 && strlen(key) < 16)
		snprintf(p->seen[p->nseen++], 16, "%s", key);
	return true;
}

static void daemon_key(struct pstate *p, const char *key, const char *val)
{
	char *v;

	if (!first_time(p, key))
		return;
	v = one(p, key, val);

	if (!v)
		return;
	if (!strcmp(key, "socket") && absolute(p, key, v))
		set_str(p, key, &p->c->socket, v);
	else if (!strcmp(key, "metrics") && absolute(p, key, v))
		set_str(p, key, &p->c->metrics, v);
	else if (!strcmp(key, "stop-timeout")) {
		char *end;
		unsigned long n;

		errno = 0;
		n = strtoul(v, &end, 10);
		if (errno || end == v || *end || v[0] == '-' || n < 1 || n > 3600)
			perr(p, "stop-timeout: whole seconds, 1 to 3600, not '%s'", v);
		else
			p->c->stop_timeout = (unsigned)n;
		free(v);
	} else {
		if (strcmp(key, "socket") && strcmp(key, "metrics"))
			perr(p, "unknown key '%s' in [daemon] (socket, metrics, stop-timeout)", key);
		free(v);
	}
}

static void service_key(struct pstate *p, const char *key, const char *val)
{
	struct dsvc *s = p->s;
	char *v;

	if (!strcmp(key, "paths") || !strcmp(key, "path")) {
		size_t from = s->npaths;

		if (split(p, val, &s->paths, &s->npaths, DAEMON_MAX_PATHS) == 0)
			for (size_t i = from; i < s->npaths; i++)
				absolute(p, key, s->paths[i]);
		return;
	}
	if (!strcmp(key, "lock")) {
		char **items = NULL;
		size_t n = 0;

		if (p->have_lock)
			return perr(p, "lock given twice");
		p->have_lock = true;
		if (split(p, val, &items, &n, DAEMON_MAX_PATHS) < 0)
			return;
		if (n == 1 && (!strcmp(items[0], "paths") || !strcmp(items[0], "yes") ||
			       !strcmp(items[0], "no"))) {
			s->nlock = !strcmp(items[0], "no") ? 0 : (size_t)-1;	/* resolved at the end */
			free(items[0]);
			free(items);
			return;
		}
		s->lock = items;
		s->nlock = n;
		for (size_t i = 0; i < n; i++)
			absolute(p, key, items[i]);
		return;
	}
	if (!first_time(p, key))
		return;
	v = one(p, key, val);
	if (!v)
		return;
	if (!strcmp(key, "pid-file")) {
		if (absolute(p, key, v))
			return set_str(p, key, &s->pid_file, v);
	} else if (!strcmp(key, "cgroup")) {
		return set_str(p, key, &s->cgroup, v);
	} else if (!strcmp(key, "snapshot")) {
		if (absolute(p, key, v))
			return set_str(p, key, &s->snapshot, v);
	} else if (!strcmp(key, "recording")) {
		if (absolute(p, key, v))
			return set_str(p, key, &s->recording, v);
	} else if (!strcmp(key, "root")) {
		if (absolute(p, key, v))
			return set_str(p, key, &s->root, v);
	} else if (!strcmp(key, "interval") || !strcmp(key, "timeout") ||
		   !strcmp(key, "cgroup-wait")) {
		char *end;
		unsigned long n;

		errno = 0;
		n = strtoul(v, &end, 10);
		if (errno || end == v || *end || v[0] == '-' || n > 86400 * 365)
			perr(p, "%s: whole seconds (0: %s), not '%s'", key,
			     !strcmp(key, "interval") ? "only when the daemon stops"
			     : !strcmp(key, "timeout") ? "none" : "do not wait", v);
		else if (!strcmp(key, "interval"))
			s->interval = (unsigned)n;
		else if (!strcmp(key, "timeout"))
			s->timeout = (unsigned)n;
		else
			s->cgroup_wait = (unsigned)n;
	} else if (!strcmp(key, "restore")) {
		yesno(p, key, v, &s->restore);
	} else if (!strcmp(key, "active")) {
		yesno(p, key, v, &s->active);
	} else if (!strcmp(key, "max-mem") || !strcmp(key, "rate")) {
		/* what the restore child's --max-mem and --rate take: a plain rate is MiB/s */
		uint64_t bytes = 0;
		char *end;
		double mib = strtod(v, &end);
		bool ok = !strcmp(key, "rate") && end != v && !*end ? mib * 1048576.0 >= 1.0 &&
								     mib <= 1e15
								   : pc_parse_size(v, &bytes) == 0 && bytes;

		if (!ok)
			perr(p, "%s: a size such as %s, not '%s'", key,
			     !strcmp(key, "rate") ? "200M (bytes a second) or 200 (MiB a second)" : "4G",
			     v);
		else
			return set_str(p, key, !strcmp(key, "rate") ? &s->rate : &s->max_mem, v);
	} else if (!strcmp(key, "lock-max")) {
		/* lock --watch's --max-mem: how far the lock set may grow */
		uint64_t bytes = 0;

		if (pc_parse_size(v, &bytes) < 0 || !bytes)
			perr(p, "%s: a size such as 64M, not '%s'", key, v);
		else
			return set_str(p, key, &s->lock_max, v);
	} else if (!strcmp(key, "guard")) {
		if (cli_parse_decimal(v, 0, 1, 0, &s->guard) < 0)
			perr(p, "guard: a ratio from 0 to 1, not '%s'", v);
	} else {
		perr(p, "unknown key '%s' in [service %s] (paths, pid-file, cgroup, snapshot, "
			"recording, root, interval, timeout, restore, active, max-mem, rate, guard, lock, "
			"lock-max, cgroup-wait)", key,
		     s->name);
	}
	free(v);
}

bool dsvc_valid_name(const char *n)
{
	if (!*n || strlen(n) > 64 || n[0] == '.' || n[0] == '-')
		return false;
	for (const char *c = n; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("-_.@:", *c))
			return false;
	return true;
}

static void section(struct pstate *p, char *h)
{
	h = trim(h);
	p->have_lock = false;
	p->nseen = 0;
	p->s = NULL;
	if (!strcmp(h, "daemon")) {
		if (p->seen_daemon)
			perr(p, "[daemon] given twice");
		p->seen_daemon = true;
		p->sec = SEC_DAEMON;
		return;
	}
	if (!strncmp(h, "service", 7) && (h[7] == ' ' || h[7] == '\t')) {
		char *name = trim(h + 7);
		size_t n = strlen(name);
		struct dsvc *grown;

		if (n >= 2 && name[0] == '"' && name[n - 1] == '"') {
			name[n - 1] = 0;
			name++;
		}
		p->sec = SEC_SERVICE;
		if (!dsvc_valid_name(name)) {
			perr(p, "[service %s]: a name is 1-64 letters, digits and - _ . @ : "
				"(not starting with . or -)", name);
			p->sec = SEC_NONE;
			return;
		}
		for (size_t i = 0; i < p->c->nsvc; i++)
			if (!strcmp(p->c->svc[i].name, name)) {
				perr(p, "[service %s] given twice (first at line %d)", name,
				     p->c->svc[i].line);
				p->sec = SEC_NONE;
				return;
			}
		if (p->c->nsvc >= DAEMON_MAX_SERVICES) {
			perr(p, "more than %d services", DAEMON_MAX_SERVICES);
			p->sec = SEC_NONE;
			return;
		}
		grown = realloc(p->c->svc, (p->c->nsvc + 1) * sizeof(*grown));
		if (!grown) {
			perr(p, "out of memory");
			p->sec = SEC_NONE;
			return;
		}
		p->c->svc = grown;
		p->s = &grown[p->c->nsvc++];
		*p->s = (struct dsvc){ .name = strdup(name), .interval = 300, .restore = true,
				       .guard = 0.5, .timeout = 1800, .active = true,
				       .cgroup_wait = DAEMON_CGROUP_WAIT,
				       .line = p->line };
		return;
	}
	perr(p, "unknown section [%s] ([daemon] or [service NAME])", h);
	p->sec = SEC_NONE;
}

/* a service's defaults and the rules between its keys */
static void finish(struct pstate *p, struct dsvc *s)
{
	int sel = (s->npaths > 0) + (s->pid_file != NULL);

	p->line = s->line;
	if (!s->name) {
		perr(p, "out of memory");
		return;
	}
	if (!sel && !s->cgroup)
		perr(p, "[service %s]: say what to snapshot: paths, pid-file or cgroup", s->name);
	if (sel > 1)
		perr(p, "[service %s]: paths and pid-file: give one of them", s->name);
	if (s->nlock == (size_t)-1) {
		s->nlock = 0;
		if (!s->npaths) {
			perr(p, "[service %s]: lock = paths needs paths", s->name);
		} else {
			s->lock = calloc(s->npaths, sizeof(*s->lock));
			for (size_t i = 0; s->lock && i < s->npaths; i++)
				if ((s->lock[i] = strdup(s->paths[i])))
					s->nlock++;
			if (s->nlock != s->npaths)
				perr(p, "out of memory");
		}
	}
	if (s->lock_max && !s->nlock)
		perr(p, "[service %s]: lock-max = needs lock =", s->name);
	if (!s->snapshot && asprintf(&s->snapshot, "%s/%s.snap", DAEMON_STATE_DIR, s->name) < 0) {
		s->snapshot = NULL;
		perr(p, "out of memory");
	}
	for (size_t i = 0; i < p->c->nsvc && s->snapshot; i++) {
		struct dsvc *o = &p->c->svc[i];

		if (o < s && o->snapshot && !strcmp(o->snapshot, s->snapshot))
			perr(p, "[service %s]: its snapshot is [service %s]'s too", s->name, o->name);
	}
	/* a recording a snapshot job writes over would be lost at the first interval */
	for (size_t i = 0; i < p->c->nsvc; i++) {
		struct dsvc *o = &p->c->svc[i];

		if (o <= s && s->recording && o->snapshot && !strcmp(o->snapshot, s->recording))
			perr(p, "[service %s]: its recording is [service %s]'s snapshot", s->name,
			     o->name);
		else if (o < s && o->recording && s->snapshot && !strcmp(o->recording, s->snapshot))
			perr(p, "[service %s]: its recording is [service %s]'s snapshot", o->name,
			     s->name);
	}
}

/*
 * The file as root may read it: a regular file, not a link, owned by us
 * or root and writable by nobody else (sshd's StrictModes), at most 1 MiB.
 */
static char *read_conf(const char *path, char *why, size_t whylen)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		snprintf(why, whylen, "%s", errno == ELOOP ? "it is a symbolic link" : strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file");
		goto fail;
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		snprintf(why, whylen, "it must be owned by root (or us) and writable by nobody else "
			 "(it is uid %u, mode %04o)", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		goto fail;
	}
	if (st.st_size > 1 << 20) {
		snprintf(why, whylen, "larger than 1 MiB");
		goto fail;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		snprintf(why, whylen, "out of memory");
		goto fail;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		len += (size_t)n;
	}
	buf[len] = 0;
	if (memchr(buf, 0, len)) {
		snprintf(why, whylen, "it holds a NUL byte");
		free(buf);
		buf = NULL;
	}
	close(fd);
	return buf;
fail:
	close(fd);
	return NULL;
}

int dconf_load(const char *path, struct dconf *ret)
{
	struct pstate p = { .c = ret, .file = path };
	char why[256] = "", *buf, *line, *next;

	*ret = (struct dconf){ 0 };
	buf = read_conf(path, why, sizeof(why));
	if (!buf) {
		char *e = out_escape(path);

		fprintf(stderr, "pagecache: cannot read the configuration '%s': %s\n", e ? e : "?", why);
		free(e);
		return -1;
	}
	ret->path = strdup(path);
	ret->stop_timeout = DAEMON_STOP_TIMEOUT;
	for (line = buf; line; line = next) {
		char *eq, *l;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		p.line++;
		l = trim(line);
		if (p.line == 1 && !strncmp(l, "\xef\xbb\xbf", 3))
			l += 3;
		if (!*l || *l == '#' || *l == ';')
			continue;
		if (*l == '[') {
			char *end = strchr(l, ']');

			if (!end || (*trim(end + 1) && *trim(end + 1) != '#' && *trim(end + 1) != ';')) {
				perr(&p, "a section header is [daemon] or [service NAME]");
				p.sec = SEC_NONE;
				continue;
			}
			*end = 0;
			section(&p, l + 1);
			continue;
		}
		eq = strchr(l, '=');
		if (!eq) {
			perr(&p, "expected 'key = value' or a [section]");
			continue;
		}
		*eq = 0;
		l = trim(l);
		if (p.sec == SEC_DAEMON)
			daemon_key(&p, l, trim(eq + 1));
		else if (p.sec == SEC_SERVICE && p.s)
			service_key(&p, l, trim(eq + 1));
		else if (p.sec == SEC_NONE && !p.errors)
			perr(&p, "'%s' outside a section ([daemon] or [service NAME])", l);
	}
	free(buf);
	for (size_t i = 0; i < ret->nsvc; i++)
		finish(&p, &ret->svc[i]);
	if (!ret->socket)
		ret->socket = strdup(DAEMON_SOCKET);
	if (!ret->path || !ret->socket) {
		perr(&p, "out of memory");
	}
	if (p.errors) {
		dconf_free(ret);
		return -1;
	}
	return 0;
}

static void free_list(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

void dconf_free(struct dconf *c)
{
	for (size_t i = 0; i < c->nsvc; i++) {
		struct dsvc *s = &c->svc[i];

		free(s->name);
		free_list(s->paths, s->npaths);
		free_list(s->lock, s->nlock == (size_t)-1 ? 0 : s->nlock);
		free(s->pid_file);
		free(s->cgroup);
		free(s->snapshot);
		free(s->recording);
		free(s->root);
		free(s->max_mem);
		free(s->rate);
		free(s->lock_max);
	}
	free(c->svc);
	free(c->path);
	free(c->socket);
	free(c->metrics);
	*c = (struct dconf){ 0 };
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_list(char **a, size_t na, char **b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

bool dsvc_same_lock(const struct dsvc *a, const struct dsvc *b)
{
	return same_list(a->lock, a->nlock, b->lock, b->nlock) &&
	       same_str(a->lock_max, b->lock_max);
}

bool dsvc_same(const struct dsvc *a, const struct dsvc *b)
{
	return same_str(a->name, b->name) && same_list(a->paths, a->npaths, b->paths, b->npaths) &&
	       same_str(a->pid_file, b->pid_file) && same_str(a->cgroup, b->cgroup) &&
	       same_str(a->snapshot, b->snapshot) && same_str(a->recording, b->recording) &&
	       same_str(a->root, b->root) &&
	       a->interval == b->interval && a->timeout == b->timeout && a->restore == b->restore &&
	       a->cgroup_wait == b->cgroup_wait &&
	       a->active == b->active &&
	       same_str(a->max_mem, b->max_mem) && same_str(a->rate, b->rate) &&
	       a->guard == b->guard && dsvc_same_lock(a, b);
}

/*
 * The metrics, by status field name: the daemon's textfile and `status
 * --prom` print the same series (docs/metrics.md).
 */
const struct ometric dmetrics[] = {
	{ "services", "service", "service", OM_LABEL | OM_PER_FILE, "" },
	{ "services", "up", "up", OM_PER_FILE,
	  "1 if the service runs (pid-file or cgroup), 0 if not; absent when unknown." },
	{ "services", "snapshot_pages", "snapshot_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of page cache the last snapshot written recorded." },
	{ "services", "snapshot_files", "snapshot_files", OM_PER_FILE,
	  "Files the last snapshot written recorded." },
	{ "services", "snapshot_time", "last_snapshot_timestamp_seconds", OM_PER_FILE,
	  "When the last snapshot was taken (written or kept), unix seconds." },
	{ "services", "snapshot_seconds", "snapshot_duration_seconds", OM_PER_FILE,
	  "How long the last snapshot took." },
	{ "services", "snapshots", "snapshots_total", OM_COUNTER | OM_PER_FILE,
	  "Snapshots taken since the daemon started." },
	{ "services", "snapshot_failures", "snapshot_failures_total", OM_COUNTER | OM_PER_FILE,
	  "Snapshots that failed since the daemon started." },
	{ "services", "restore_seconds", "restore_seconds", OM_PER_FILE,
	  "How long the start-up restore took." },
	{ "services", "restore_read_pages", "restore_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes the start-up restore read into the page cache." },
	{ "services", "locked", "locked", OM_PER_FILE,
	  "1 if the lock set is held, 0 if not; absent without one." },
	{ "services", "cgroup_file", "cgroup_cache_bytes", OM_PER_FILE,
	  "Page cache charged to the service's memory cgroup." },
	{ "services", "cgroup_refaults", "cgroup_refaults_total", OM_COUNTER | OM_PER_FILE,
	  "Workingset refaults of file pages in the service's memory cgroup." },
};
const size_t ndmetrics = sizeof(dmetrics) / sizeof(dmetrics[0]);

/* ---- the status socket's wire format ------------------------------------ */

const struct dfield dfields[] = {
	{ "service", DF_STR, 0 },
	{ "state", DF_STR, 0 },
	{ "up", DF_BOOL, 0 },
	{ "snapshot", DF_STR, 0 },
	{ "interval", DF_U64, 0 },
	{ "snapshot_time", DF_TIME, 0 },
	{ "snapshot_result", DF_STR, 0 },
	{ "snapshot_files", DF_U64, 0 },
	{ "snapshot_pages", DF_U64, OF_PAGES },
	{ "snapshot_bytes", DF_U64, OF_BYTES },
	{ "snapshot_seconds", DF_F64, 0 },
	{ "next_snapshot_time", DF_TIME, 0 },
	{ "snapshots", DF_U64, 0 },
	{ "snapshot_failures", DF_U64, 0 },
	{ "restore_time", DF_TIME, 0 },
	{ "restore_result", DF_STR, 0 },
	{ "restore_seconds", DF_F64, 0 },
	{ "restore_pages", DF_U64, OF_PAGES },
	{ "restore_read_pages", DF_U64, OF_PAGES },
	{ "restore_read_bytes", DF_U64, OF_BYTES },
	{ "locked", DF_BOOL, 0 },
	{ "lock_pid", DF_U64, 0 },
};
const size_t ndfields = sizeof(dfields) / sizeof(dfields[0]);

void dwire_put(FILE *o, const char *s)
{
	if (!s) {
		fputc('-', o);
		return;
	}
	if (!strcmp(s, "-")) {
		fputs("%2D", o);
		return;
	}
	for (; *s; s++) {
		if (*s == '%' || *s == '\t' || *s == '\n' || *s == '\r')
			fprintf(o, "%%%02X", (unsigned char)*s);
		else
			fputc(*s, o);
	}
}

bool dwire_unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (*s == '%') {
			int hi, lo;

			if (!isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]))
				return false;
			hi = isdigit((unsigned char)s[1]) ? s[1] - '0' : (tolower(s[1]) - 'a' + 10);
			lo = isdigit((unsigned char)s[2]) ? s[2] - '0' : (tolower(s[2]) - 'a' + 10);
			*w++ = (char)(hi * 16 + lo);
			s += 2;
		} else {
			*w++ = *s;
		}
	}
	*w = 0;
	return true;
}
