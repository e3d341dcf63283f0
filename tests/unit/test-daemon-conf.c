/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * src/daemon/daemon-conf.c: the daemon's INI reader (pagecache.conf(5):
 * sections, comments, quotes, lines of any length, each error said with
 * its file and line, the file's own checks) and the status socket's wire
 * format (dwire_put and dwire_unescape: percent-escaping that keeps a
 * value on its field, and hostile input to the reader), with the field
 * and metric tables the daemon and `pagecache status` share.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "daemon/daemon.h"
#include "tap.h"

#include <stdint.h>
#include <string.h>

static char path[700];

/* ---- loading a configuration from text ---- */

static void put_file(const char *text, size_t len, mode_t mode)
{
	int fd;

	snprintf(path, sizeof(path), "%s/pagecache.conf", scratch_dir());
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || fchmod(fd, mode) < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

struct load {
	struct dconf *c;
	int rc;
};

static void load_run(void *arg)
{
	struct load *l = arg;

	l->rc = dconf_load(path, l->c);
}

/* dconf_load of the file at path: its result, what it said in *err (NULL: dropped) */
static int load_path(struct dconf *c, char **err)
{
	struct load l = { c, 0 };
	char *e = tap_capture(2, load_run, &l);

	if (err)
		*err = e;
	else
		free(e);
	return l.rc;
}

static int load(const char *text, struct dconf *c, char **err)
{
	put_file(text, strlen(text), 0644);
	return load_path(c, err);
}

/* "pagecache: PATH:LINE: ..." with what in it, among the lines said */
static int said_at(const char *err, int line, const char *what)
{
	char head[sizeof(path) + 32];
	const char *at;

	snprintf(head, sizeof(head), "pagecache: %s:%d: ", path, line);
	for (at = strstr(err, head); at; at = strstr(at + 1, head)) {
		const char *eol = strchr(at, '\n');

		if (eol && memmem(at, (size_t)(eol - at), what, strlen(what)))
			return 1;
	}
	return 0;
}

static int lines_in(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_good(void)
{
	static const char text[] =
		"# pagecache.conf\n"
		"; another comment\n"
		"\n"
		"[daemon]\n"
		"socket = /run/x.sock   # where status asks\n"
		"metrics = \"/var/lib/node exporter/pc.prom\"\n"
		"  stop-timeout=30\t; indented, no spaces around =\n"
		"\n"
		"[service db]\n"
		"paths = /srv/db \"/srv/with space\" /srv/a#b\n"
		"path = /srv/more\n"
		"interval = 60\n"
		"restore = no\n"
		"active = off\n"
		"max-mem = 4G\n"
		"rate = 200\n"
		"guard = 0.25\n"
		"lock = paths\n"
		"lock-max = 64M\n"
		"cgroup-wait = 0\n"
		"timeout = 0\n"
		"\n"
		"[ service \"web.service\" ]   # quoted name\n"
		"cgroup = web.service\n"
		"snapshot = /var/tmp/web.snap\n"
		"recording = /var/tmp/web.start.pcs\n"
		"root = /mnt/r\n";
	struct dconf c;
	char *err;
	int rc = load(text, &c, &err);
	struct dsvc *db = c.svc, *web = c.svc + 1;

	if (!ok(rc == 0 && !*err, "a configuration of every key loads, silently"))
		printf("# %s", err);
	free(err);
	if (rc)
		return;
	ok(!strcmp(c.socket, "/run/x.sock") && !strcmp(c.metrics, "/var/lib/node exporter/pc.prom") &&
	   c.stop_timeout == 30, "[daemon]: an inline comment cut, quotes kept a space, no spaces "
	   "around '=' and an indented key read");
	ok(c.nsvc == 2 && !strcmp(db->name, "db") && !strcmp(web->name, "web.service"),
	   "two services, a quoted name unquoted");
	ok(db->npaths == 4 && !strcmp(db->paths[1], "/srv/with space") &&
	   !strcmp(db->paths[2], "/srv/a#b") && !strcmp(db->paths[3], "/srv/more"),
	   "paths: a list, a quoted item, '#' inside a word is no comment, path = adds");
	ok(db->interval == 60 && !db->restore && !db->active && !strcmp(db->max_mem, "4G") &&
	   !strcmp(db->rate, "200") && db->guard == 0.25 && db->cgroup_wait == 0 &&
	   db->timeout == 0 && !strcmp(db->lock_max, "64M"), "each value as given");
	ok(db->nlock == 4 && !strcmp(db->lock[3], "/srv/more"), "lock = paths: the paths");
	ok(!strcmp(db->snapshot, DAEMON_STATE_DIR "/db.snap") &&
	   !strcmp(web->snapshot, "/var/tmp/web.snap") && !strcmp(web->root, "/mnt/r"),
	   "the snapshot by default in " DAEMON_STATE_DIR ", else as given");
	ok(!db->recording && !strcmp(web->recording, "/var/tmp/web.start.pcs"),
	   "a recording only where given");
	ok(web->interval == 300 && web->restore && web->active && web->guard == 0.5 &&
	   web->timeout == 1800 && web->cgroup_wait == DAEMON_CGROUP_WAIT && !web->nlock &&
	   !web->max_mem, "the defaults (interval 300, restore, active, guard 0.5, ...)");
	ok(db->line == 9 && web->line == 23, "each service knows its section's line (%d, %d)",
	   db->line, web->line);
	dconf_free(&c);

	rc = load("[service x]\ncgroup = x\n", &c, NULL);
	ok(rc == 0 && !strcmp(c.socket, DAEMON_SOCKET) && !c.metrics &&
	   c.stop_timeout == DAEMON_STOP_TIMEOUT, "[daemon] may be left out: its defaults");
	if (!rc)
		dconf_free(&c);
}

static void test_forms(void)
{
	struct dconf c, d;
	char *big, *p;
	int rc;

	/* Windows line ends and a byte order mark */
	rc = load("\xef\xbb\xbf[service a]\r\npaths = /x /y\r\ninterval = 5\r\n", &c, NULL);
	ok(rc == 0 && c.nsvc == 1 && c.svc[0].npaths == 2 && !strcmp(c.svc[0].paths[1], "/y") &&
	   c.svc[0].interval == 5, "CRLF line ends and a UTF-8 BOM are read");
	if (!rc)
		dconf_free(&c);

	/* lines far past inih's 200 bytes: a path of 4000, a list of 300 */
	big = malloc(1 << 20);
	p = big + sprintf(big, "[service long]\npaths = /");
	memset(p, 'a', 4000);
	p += 4000;
	for (int i = 0; i < 300; i++)
		p += sprintf(p, " /srv/item-%03d", i);
	sprintf(p, "\ninterval = 7\n");
	rc = load(big, &c, NULL);
	ok(rc == 0 && c.svc[0].npaths == 301 && strlen(c.svc[0].paths[0]) == 4001 &&
	   !strcmp(c.svc[0].paths[300], "/srv/item-299") && c.svc[0].interval == 7,
	   "a 7.6 kB line is read whole, and the line after it too");
	if (!rc)
		dconf_free(&c);
	free(big);

	rc = load("[service q]\npaths = \"/a \\\"q\\\" b\" \"/c\\\\d\" \"/e;f\" /g\\h\n", &c, NULL);
	ok(rc == 0 && c.svc[0].npaths == 4 && !strcmp(c.svc[0].paths[0], "/a \"q\" b") &&
	   !strcmp(c.svc[0].paths[1], "/c\\d") && !strcmp(c.svc[0].paths[2], "/e;f") &&
	   !strcmp(c.svc[0].paths[3], "/g\\h"),
	   "quotes: \\\" and \\\\ inside them, ';' quoted, a backslash outside is itself");
	if (!rc)
		dconf_free(&c);

	rc = load("[service a]\npaths = /x ; a comment\nlock = /x /z\n[daemon] # after\n", &c, NULL);
	ok(rc == 0 && c.svc[0].npaths == 1 && c.svc[0].nlock == 2,
	   "a ';' comment after a list; a comment after a section header");
	if (!rc)
		dconf_free(&c);

	/* the same configuration twice is the same; a changed key is not */
	rc = load("[service a]\npaths = /x\nlock = /x\n", &c, NULL);
	rc |= load("[service a]\npaths = /x\nlock = /x\n", &d, NULL);
	if (!rc) {
		ok(dsvc_same(&c.svc[0], &d.svc[0]) && dsvc_same_lock(&c.svc[0], &d.svc[0]),
		   "dsvc_same: one text, one service");
		d.svc[0].interval++;
		ok(!dsvc_same(&c.svc[0], &d.svc[0]) && dsvc_same_lock(&c.svc[0], &d.svc[0]),
		   "dsvc_same: another interval differs, its lock set does not");
		d.svc[0].interval--;
		free(d.svc[0].lock[0]);
		d.svc[0].lock[0] = strdup("/y");
		ok(!dsvc_same(&c.svc[0], &d.svc[0]) && !dsvc_same_lock(&c.svc[0], &d.svc[0]),
		   "dsvc_same_lock: another lock path differs");
		dconf_free(&c);
		dconf_free(&d);
	} else {
		ok(0, "dsvc_same: the configurations load");
	}
}

static void test_errors(void)
{
	static const struct { const char *text; int line; const char *what; } cases[] = {
		{ "[daemon]\nbogus = 1\n", 2, "unknown key 'bogus' in [daemon]" },
		{ "[service a]\npaths = /x\nbogus = 1\n", 3, "unknown key 'bogus' in [service a]" },
		{ "# top\n[nope]\n", 2, "unknown section [nope]" },
		{ "[daemon] trailing\n", 1, "a section header is" },
		{ "[daemon\n", 1, "a section header is" },
		{ "socket = /x\n", 1, "'socket' outside a section" },
		{ "[daemon]\nsocket\n", 2, "expected 'key = value'" },
		{ "[daemon]\nsocket = /a /b\n", 2, "one value expected" },
		{ "[daemon]\nsocket = run.sock\n", 2, "not an absolute path" },
		{ "[daemon]\nstop-timeout = 0\n", 2, "1 to 3600" },
		{ "[daemon]\nsocket = /a\n\nsocket = /b\n", 4, "socket given twice" },
		{ "[daemon]\n[daemon]\n", 2, "[daemon] given twice" },
		{ "[service a]\npaths = \"/x\n", 2, "a double quote is not closed" },
		{ "[service a]\npaths = /x\ninterval = 1\ninterval = 2\n", 4, "interval given twice" },
		{ "[service a]\npaths = /x\n[service a]\npaths = /y\n", 3,
		  "[service a] given twice (first at line 1)" },
		{ "[service .bad]\n", 1, "a name is 1-64 letters" },
		{ "[service a/b]\n", 1, "a name is 1-64 letters" },
		{ "[service a]\npaths = relative/x\n", 2, "'relative/x' is not an absolute path" },
		{ "[service a]\npaths = /x\ninterval = -5\n", 3, "whole seconds" },
		{ "[service a]\npaths = /x\ntimeout = 1e3\n", 3, "whole seconds" },
		{ "[service a]\npaths = /x\nguard = 1.5\n", 3, "a ratio from 0 to 1" },
		{ "[service a]\npaths = /x\nguard = nan\n", 3, "a ratio from 0 to 1" },
		{ "[service a]\npaths = /x\nrestore = maybe\n", 3, "yes or no" },
		{ "[service a]\npaths = /x\nmax-mem = lots\n", 3, "a size such as" },
		{ "[service a]\npaths = /x\nrate = 0\n", 3, "a size such as" },
		{ "[service a]\npaths = /x\nlock = /x\nlock = /y\n", 4, "lock given twice" },
		{ "[service a]\ninterval = 5\n", 1, "say what to snapshot" },
		{ "[service a]\npaths = /x\npid-file = /run/a.pid\n", 1, "give one of them" },
		{ "[service a]\ncgroup = a\nlock = paths\n", 1, "lock = paths needs paths" },
		{ "[service a]\npaths = /x\nlock-max = 1G\n", 1, "lock-max = needs lock =" },
		{ "[service a]\npaths = /x\nsnapshot = /s\n[service b]\npaths = /y\nsnapshot = /s\n",
		  4, "its snapshot is [service a]'s too" },
		{ "[service a]\npaths = /x\nrecording = rel\n", 3, "'rel' is not an absolute path" },
		{ "[service a]\npaths = /x\nsnapshot = /s\nrecording = /s\n", 1,
		  "its recording is [service a]'s snapshot" },
		{ "[service a]\npaths = /x\nrecording = /s\n[service b]\npaths = /y\nsnapshot = /s\n",
		  4, "[service a]: its recording is [service b]'s snapshot" },
		{ "[service a]\npaths = /x\nrecording = " DAEMON_STATE_DIR "/b.snap\n[service b]\n"
		  "paths = /y\n", 4, "[service a]: its recording is [service b]'s snapshot" },
	};
	struct dconf c;
	char *err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = load(cases[i].text, &c, &err);

		if (!ok(rc == -1 && said_at(err, cases[i].line, cases[i].what) && !c.svc && !c.socket,
			"refused at line %d: %s", cases[i].line, cases[i].what))
			printf("# rc %d, said: %s", rc, err);
		if (rc == 0)
			dconf_free(&c);
		free(err);
	}

	/* every error said, each at its line, not only the first */
	int rc = load("[daemon]\nbogus = 1\n\n[service a]\npaths = rel\n# ok\nguard = 2\n"
		      "[oops]\n", &c, &err);

	ok(rc == -1 && said_at(err, 2, "bogus") && said_at(err, 5, "absolute") &&
	   said_at(err, 7, "ratio") && said_at(err, 8, "[oops]") && lines_in(err) == 4,
	   "four errors: four lines, each with its own line number");
	free(err);
	rc = load("[service \"a\x1b[2Jb\"]\n", &c, &err);
	if (rc == -1 && strchr(err, '\x1b'))
		skip("known: perr() writes the configuration's own text unescaped (only the "
		     "file name goes through out_escape)", "a name in an error is escaped");
	else
		ok(rc == -1 && strstr(err, "a\\x1b[2Jb"), "a name in an error is escaped");
	free(err);
}

static void test_file(void)
{
	struct dconf c;
	char *err, *big, link[sizeof(path)];
	int rc;

	put_file("[service a]\ncgroup = a\n", 23, 0664);
	rc = load_path(&c, &err);
	ok(rc == -1 && strstr(err, "writable by nobody else"), "a group-writable file is refused");
	free(err);
	put_file("[service a]\ncgroup = a\n", 23, 0646);
	rc = load_path(&c, &err);
	ok(rc == -1 && strstr(err, "writable by nobody else"), "a world-writable file is refused");
	free(err);
	put_file("[service a]\ncgroup = a\0\n", 25, 0644);
	rc = load_path(&c, &err);
	ok(rc == -1 && strstr(err, "NUL byte"), "a file with a NUL byte is refused");
	free(err);
	big = malloc((1 << 20) + 2);
	memset(big, '#', (1 << 20) + 1);
	big[(1 << 20) + 1] = '\n';
	put_file(big, (1 << 20) + 2, 0644);
	free(big);
	rc = load_path(&c, &err);
	ok(rc == -1 && strstr(err, "larger than 1 MiB"), "a file over 1 MiB is refused");
	free(err);
	put_file("[service a]\ncgroup = a\n", 23, 0644);
	snprintf(link, sizeof(link), "%s/link.conf", scratch_dir());
	unlink(link);
	if (symlink(path, link) == 0) {
		char real[sizeof(path)];

		snprintf(real, sizeof(real), "%s", path);
		snprintf(path, sizeof(path), "%s", link);
		rc = load_path(&c, &err);
		ok(rc == -1 && strstr(err, "symbolic link"), "a symbolic link is refused");
		free(err);
		unlink(link);
		snprintf(path, sizeof(path), "%s", real);
	} else {
		skip(strerror(errno), "a symbolic link is refused");
	}
	snprintf(path, sizeof(path), "%s", scratch_dir());
	rc = load_path(&c, &err);
	ok(rc == -1 && strstr(err, "not a regular file"), "a directory is refused");
	free(err);
	snprintf(path, sizeof(path), "%s/none.conf", scratch_dir());
	rc = load_path(&c, &err);
	ok(rc == -1 && strstr(err, "No such file"), "a missing file is said");
	free(err);
}

static void test_names(void)
{
	char n64[65], n65[66];

	memset(n64, 'a', 64);
	n64[64] = 0;
	memset(n65, 'a', 65);
	n65[65] = 0;
	ok(dsvc_valid_name("db") && dsvc_valid_name("a.b@c:d-e_f") && dsvc_valid_name(n64) &&
	   dsvc_valid_name("9") && dsvc_valid_name("getty@tty1.service"),
	   "service names: letters, digits, - _ . @ :, up to 64");
	ok(!dsvc_valid_name("") && !dsvc_valid_name(".x") && !dsvc_valid_name("-x") &&
	   !dsvc_valid_name("a b") && !dsvc_valid_name("a/b") && !dsvc_valid_name(n65) &&
	   !dsvc_valid_name("a\tb") && !dsvc_valid_name("caf\xc3\xa9"),
	   "not empty, a leading . or -, a space, a slash, 65 bytes, a tab, UTF-8");
}

/* ---- the status socket's wire format ---- */

static char *wire(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	dwire_put(m, s);
	fclose(m);
	return buf;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* 0 to 23 bytes, none NUL, mostly the ones the format escapes */
static void hostile(char *buf)
{
	static const char pick[] = "%%%\t\t\n\n\r\r--09aAfF \\";
	int n = (int)rnd(24);

	for (int i = 0; i < n; i++)
		buf[i] = rnd(3) ? pick[rnd(sizeof(pick) - 1)] : (char)(1 + rnd(255));
	buf[n] = 0;
}

static void test_wire(void)
{
	static const struct { const char *in, *want; } fixed[] = {
		{ "plain", "plain" },
		{ "-", "%2D" },
		{ "--", "--" },
		{ "a-b", "a-b" },
		{ "", "" },
		{ "100%", "100%25" },
		{ "a\tb\nc\rd", "a%09b%0Ac%0Dd" },
		{ "caf\xc3\xa9 \x1b", "caf\xc3\xa9 \x1b" },
	};
	int bad = 0, lines_bad = 0;
	char s[32], *w;

	w = wire(NULL);
	ok(!strcmp(w, "-"), "wire: no value is '-'");
	free(w);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		char back[64];

		w = wire(fixed[i].in);
		snprintf(back, sizeof(back), "%s", w);
		char *e = out_escape(fixed[i].in);

		ok(!strcmp(w, fixed[i].want) && dwire_unescape(back) && !strcmp(back, fixed[i].in),
		   "wire: '%s' is '%s' and back", e, fixed[i].want);
		free(e);
		free(w);
	}
	for (int i = 0; i < 5000; i++) {
		hostile(s);
		w = wire(s);
		if (strpbrk(w, "\t\n\r") || !strcmp(w, "-") || !dwire_unescape(w) || strcmp(w, s))
			bad++;
		free(w);
	}
	ok(!bad, "wire: 5000 hostile values: no TAB, LF or CR, never '-', each back (%d not)",
	   bad);

	/* a status line: values TAB-separated, "-" for none, split and read back */
	for (int i = 0; i < 500; i++) {
		char vals[6][32], *buf = NULL, *tok, *save;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		int k = 0, good = 1;

		for (int f = 0; f < 6; f++) {
			hostile(vals[f]);
			if (f)
				fputc('\t', m);
			dwire_put(m, f == 3 ? NULL : vals[f]);
		}
		fputc('\n', m);
		fclose(m);
		good = strchr(buf, '\n') == buf + len - 1;
		buf[len - 1] = 0;
		for (char *p = buf; good && (tok = strsep(&p, "\t")); k++) {
			save = tok;
			if (k == 3)
				good = !strcmp(save, "-");
			else
				good = k < 6 && strcmp(save, "-") && dwire_unescape(save) &&
				       !strcmp(save, vals[k]);
		}
		lines_bad += !good || k != 6;
		free(buf);
	}
	ok(!lines_bad, "wire: 500 status lines of hostile values: one line, six fields, each "
	   "read back, none '-' but the missing one (%d not)", lines_bad);
}

static void test_wire_hostile(void)
{
	static const char *const refused[] = { "%", "%4", "%zz", "%g0", "abc%", "%%", "a%4",
					       "%0", "%+1", "% 1", "%-1" };
	char buf[64];
	int bad = 0;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", refused[i]);
		bad += dwire_unescape(buf);
	}
	ok(!bad, "wire: a bad escape is refused (%%, %%4, %%zz, a %% at the end, ...)");
	snprintf(buf, sizeof(buf), "%%41%%62%%0a%%0A%%7e");
	ok(dwire_unescape(buf) && !strcmp(buf, "Ab\n\n~"), "wire: hex in either case");
	snprintf(buf, sizeof(buf), "a%%00b");
	ok(dwire_unescape(buf) && !strcmp(buf, "a"),
	   "wire: %%00 (never written: values hold no NUL) ends the value there");
	{
		size_t n = 3u << 20;
		char *big = malloc(n + 1);

		for (size_t i = 0; i < n; i += 3)
			memcpy(big + i, "%25", 3);
		big[n] = 0;
		ok(dwire_unescape(big) && strlen(big) == n / 3 && strspn(big, "%") == n / 3,
		   "wire: 3 MiB of escapes read in place");
		free(big);
	}
}

/* The daemon's fields and metrics: names once each, each metric a field. */
static void test_tables(void)
{
	int bad = 0, mbad = 0;

	for (size_t i = 0; i < ndfields; i++) {
		if (strspn(dfields[i].name, "abcdefghijklmnopqrstuvwxyz_") != strlen(dfields[i].name))
			bad++;
		for (size_t k = 0; k < i; k++)
			bad += !strcmp(dfields[i].name, dfields[k].name);
	}
	ok(!bad && ndfields > 10 && !strcmp(dfields[0].name, "service"),
	   "wire: %zu fields, the service first, each named once in [a-z_]", ndfields);
	for (size_t i = 0; i < ndmetrics; i++) {
		int found = 0;

		/* the cgroup's own figures the daemon reads when it writes them, no field */
		found = !strncmp(dmetrics[i].key, "cgroup_", 7);
		for (size_t k = 0; k < ndfields; k++)
			found |= !strcmp(dmetrics[i].key, dfields[k].name);
		for (size_t k = 0; k < i; k++)
			mbad += !strcmp(dmetrics[i].name, dmetrics[k].name);
		mbad += !found || strcmp(dmetrics[i].from, "services") ||
			strpbrk(dmetrics[i].help, "\\\n") != NULL ||
			(!(dmetrics[i].flags & OM_LABEL) && !*dmetrics[i].help) ||
			((dmetrics[i].flags & OM_COUNTER) &&
			 strcmp(dmetrics[i].name + strlen(dmetrics[i].name) - 6, "_total"));
	}
	ok(!mbad && ndmetrics > 5, "metrics: %zu, each a status field (or the cgroup's), named "
	   "once, a HELP line each, counters end in _total", ndmetrics);
}

int main(void)
{
	cli_cmd = "daemon";
	test_good();
	test_forms();
	test_errors();
	test_file();
	test_names();
	test_wire();
	test_wire_hostile();
	test_tables();
	rm_scratch();
	return done_testing();
}
