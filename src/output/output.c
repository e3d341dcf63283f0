/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * output.c: the one writer. Commands fill records; this file renders them
 * as a human table and summary, JSON, Prometheus text or key=value, so no
 * command decides formatting at each print. JSON keys and metric names
 * are an API (tests/cli check them field by field). With --json, stdout is
 * valid JSON on every path: per-file errors go to stderr as text and into
 * the document's "errors" list.
 *
 * Every string reaches the output through this file's escapers, whoever
 * chose it (file names, cgroup names, a process's comm): JSON is strict
 * UTF-8, with a backslash or a byte that is not UTF-8 written as the
 * text \\ or \xNN and the exact bytes beside it (json_chars); a
 * Prometheus label value is that same text (prom_label), with the
 * exposition format's escapes (\\, \" and \n) on top; metrics are only
 * what each command's table (struct ometric) names, with HELP, TYPE and
 * base units; key=value quotes and escapes; people get C escapes (\n,
 * \t, \\, \x1b) for control characters (C1 and bidi controls too), backslashes and bytes
 * that are not UTF-8, so a name cannot forge a row or move the cursor.
 *
 * Unknown values are null in JSON, absent in Prometheus text and
 * "unknown" for people; JSON never holds NaN or infinity (null). A row
 * that cannot grow for want of memory is marked lost, and out_flush says
 * how many were left out and fails: never a silently short list.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "sys.h"		/* write, fsync, rename through the seam: their faults are tested */

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

/*
 * Rows stream: a list holds at most a batch of rows (OUT_BATCH_ROWS, or
 * OUT_BATCH_BYTES of them), then writes the batch and frees it, so memory
 * does not grow with the number of rows. A list of up to a batch comes out
 * whole, sorted (out_sort) and with the table's columns as wide as its
 * widest cell, as before; a longer one comes out batch by batch, each
 * sorted, with the column widths fixed by the first batch (a wider cell
 * later widens its own row only). What streams: in JSON short, every
 * list; in the table, JSON pretty and key=value, the document's first
 * list (what precedes it is written when it starts), the others are held
 * until out_flush. Prometheus text holds every row (render_prom reads
 * them all at the end; per-file series are opt-in there).
 */
#define OUT_BATCH_ROWS 4096
#define OUT_BATCH_BYTES (4u << 20)

struct olist {
	const char *name;
	struct orec *recs;	/* the rows held: not yet written */
	size_t n, cap;
	size_t bytes;		/* about what the held rows take */
	size_t written;		/* rows already written, in earlier batches */
	bool opened;		/* JSON pretty: its "name": [ is written */
	const char *sort_key;	/* out_sort: each batch sorted by this string */
	const struct ocol *cols;
	size_t ncols;
	size_t w[16];		/* the table's column widths, from the first batch */
	const unsigned *fixed;	/* out_column_widths': 0 or NULL, from the cells */
};

/*
 * Each renderer's own state, so one document's table settings never leak
 * into another's JSON: what is shared (the lists, objects, tags) is in
 * struct out_doc itself. key=value has none: each record is its line.
 */
struct out_table {		/* the human table and summary */
	bool noheadings;
	bool keep_header;	/* the header over no rows too (top's) */
	bool raw;		/* -r: no padding, spaces in cells escaped */
	const struct ocol *from;	/* -o: the command's table */
	struct ocol cols[16];		/* what -o picked of it */
	size_t n;
	char **lines;		/* out_human_line's, after the tables */
	size_t nlines;
};

struct out_json {
	bool short_form;	/* --json=short: one compact object a line */
	bool started;		/* the document's start (tags) is written */
	int members;		/* pretty: top-level members written */
};

struct out_prom {
	const char *prefix;
	const struct ometric *m;
	size_t n;
	uint64_t page_size;	/* 0: this system's */
	bool per_file;
	const char *file;	/* --prom-file, NULL: stdout */
	char *labels;		/* --prom-label's, rendered: a="x",b="y"; NULL: none */
	char *label_names;	/* their names, each between commas: ",a,b," */
};

struct out_doc {
	enum out_fmt fmt;
	bool bytes;
	FILE *file;		/* where it is written; NULL: stdout */
	pthread_mutex_t lock;	/* out_list_add is called from the walker's threads */
	struct olist lists[4];
	int nlists;
	struct { const char *name; struct orec rec; } objs[4];
	int nobjs;
	struct { const char *key, *value; } tags[2];
	int ntags;
	int werr;		/* errno of a failed write while streaming */
	bool flushed;		/* rendered once (a usage error may flush early) */
	size_t lost;		/* rows left out for want of memory */
	struct out_table table;
	struct out_json json;
	struct out_prom prom;
};

/*
 * The document the out_* calls fill: a command writes one, the default;
 * out_doc_use points elsewhere. The only state here is this pointer.
 */
static struct out_doc default_doc = { .lock = PTHREAD_MUTEX_INITIALIZER };
static struct out_doc *doc = &default_doc;

struct out_doc *out_doc_new(void)
{
	struct out_doc *d = calloc(1, sizeof(*d));

	if (d)
		pthread_mutex_init(&d->lock, NULL);
	return d;
}

struct out_doc *out_doc_use(struct out_doc *d)
{
	struct out_doc *old = doc;

	doc = d ? d : &default_doc;
	return old;
}

static void doc_release(struct out_doc *d);

static FILE *doc_file(const struct out_doc *d)
{
	return d->file ? d->file : stdout;
}

void out_set_file(FILE *o)
{
	doc->file = o;
}

void out_keep_header(bool on)
{
	doc->table.keep_header = on;
}

void out_doc_free(struct out_doc *d)
{
	if (!d || d == &default_doc)
		return;
	if (doc == d)
		doc = &default_doc;
	doc_release(d);
	free(d->prom.labels);
	free(d->prom.label_names);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

void out_init(enum out_fmt fmt, bool bytes, bool noheadings)
{
	doc->fmt = fmt;
	doc->flushed = false;
	doc->bytes = bytes;
	doc->table.noheadings = noheadings;
}

void out_json_short(bool on)
{
	doc->json.short_form = on;
}

void out_set_raw(bool raw)
{
	doc->table.raw = raw;
}

enum out_fmt out_format(void)
{
	return doc->fmt;
}

bool out_bytes(void)
{
	return doc->bytes;
}

static struct ofield *add(struct orec *r, const char *key, enum ofield_type t, int flags)
{
	struct ofield *f;

	if (r->n == r->cap) {
		int nc = r->cap ? 2 * r->cap : 8;
		struct ofield *nf = realloc(r->f, (size_t)nc * sizeof(*nf));

		if (!nf) {
			/*
			 * Out of memory: the row is marked lost (out_flush says how
			 * many) and the field goes to a scratch one, never a crash.
			 */
			static __thread struct ofield scratch;

			free(scratch.s);
			memset(&scratch, 0, sizeof(scratch));
			r->lost = true;
			return &scratch;
		}
		r->f = nf;
		r->cap = nc;
	}
	f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->key = key;
	f->type = t;
	f->flags = flags;
	return f;
}

void orec_u64(struct orec *r, const char *key, uint64_t v, int flags)
{
	add(r, key, OF_U64, flags)->u = v;
}

void orec_f64(struct orec *r, const char *key, double v)
{
	add(r, key, OF_F64, 0)->d = v;
}

/* A field's string, copied: out of memory, the row is marked lost (said) and the field null */
static void field_str(struct orec *r, struct ofield *f, const char *v)
{
	f->s = strdup(v);
	if (!f->s) {
		f->type = OF_NULL;	/* never a NULL string to write (show crashed) */
		r->lost = true;
	}
}

void orec_str(struct orec *r, const char *key, const char *v, int flags)
{
	field_str(r, add(r, key, OF_STR, flags), v ? v : "");
}

void orec_null(struct orec *r, const char *key)
{
	add(r, key, OF_NULL, 0);
}

void orec_json(struct orec *r, const char *key, const char *json)
{
	field_str(r, add(r, key, OF_JSON, OF_HUMAN), json ? json : "null");
}

void orec_list_add(struct orec *r, const char *key, struct orec *item)
{
	struct ofield *f = NULL;
	struct oitem *ni;

	for (int i = 0; i < r->n && !f; i++)
		if (r->f[i].type == OF_LIST && !strcmp(r->f[i].key, key))
			f = &r->f[i];
	if (!f)
		f = add(r, key, OF_LIST, 0);
	if (!item)
		return;
	ni = realloc(f->items, (f->nitems + 1) * sizeof(*ni));
	if (!ni) {
		orec_release(item);
		return;
	}
	f->items = ni;
	ni = &f->items[f->nitems++];
	ni->f = item->f;	/* the item's fields move, array and all */
	ni->n = item->n;
	item->f = NULL;
	item->n = item->cap = 0;
}

void orec_object(struct orec *r, const char *key, struct orec *item)
{
	struct ofield *f = add(r, key, OF_LIST, OF_OBJECT);
	struct oitem *ni = malloc(sizeof(*ni));

	if (!ni) {
		orec_release(item);
		r->lost = true;
		return;
	}
	ni->f = item->f;	/* the item's fields move, array and all */
	ni->n = item->n;
	item->f = NULL;
	item->n = item->cap = 0;
	f->items = ni;
	f->nitems = 1;
}

void orec_nolimit(struct orec *r, const char *key)
{
	add(r, key, OF_NULL, OF_MAX);
}

void orec_bool(struct orec *r, const char *key, bool v)
{
	add(r, key, OF_BOOL, 0)->u = v;
}

void orec_ranges(struct orec *r, const char *key, uint64_t *pairs, size_t n)
{
	struct ofield *f = add(r, key, OF_RANGES, 0);

	f->ranges = pairs;
	f->nranges = n;
}

/* The array is copied; out of memory, the row is marked lost and the field null. */
static void field_nums(struct orec *r, const char *key, const void *v, size_t n, int flags)
{
	struct ofield *f = add(r, key, OF_NUMS, flags);
	size_t size = sizeof(uint64_t);	/* a double's too */

	f->us = malloc(n ? n * size : 1);
	if (!f->us) {
		f->type = OF_NULL;
		r->lost = true;
		return;
	}
	if (n)
		memcpy(f->us, v, n * size);
	f->nnums = n;
}

void orec_u64s(struct orec *r, const char *key, const uint64_t *v, size_t n, int flags)
{
	field_nums(r, key, v, n, flags | OF_INTS);
}

void orec_f64s(struct orec *r, const char *key, const double *v, size_t n, int flags)
{
	field_nums(r, key, v, n, flags & ~OF_INTS);
}

const struct ofield *orec_get(const struct orec *r, const char *key)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->f[i].key, key))
			return &r->f[i];
	return NULL;
}

static void fields_release(struct ofield *f, int n)
{
	for (int i = 0; i < n; i++) {
		free(f[i].s);
		if (f[i].type == OF_RANGES) {
			free(f[i].ranges);
		} else if (f[i].type == OF_NUMS) {
			free(f[i].us);
		} else if (f[i].type == OF_LIST) {
			for (size_t k = 0; k < f[i].nitems; k++) {
				fields_release(f[i].items[k].f, f[i].items[k].n);
				free(f[i].items[k].f);
			}
			free(f[i].items);
		}
	}
}

void orec_release(struct orec *r)
{
	fields_release(r->f, r->n);
	free(r->f);
	r->f = NULL;
	r->n = r->cap = 0;
	r->lost = false;
}

/* Move r's fields into *to, at their own size; r is left empty. */
static void orec_move(struct orec *to, struct orec *r)
{
	struct ofield *fit = r->n ? realloc(r->f, (size_t)r->n * sizeof(*fit)) : NULL;

	if (fit || !r->n) {
		if (!r->n)
			free(r->f);
		r->f = fit;
		r->cap = r->n;
	}
	if (r->lost)
		doc->lost++;	/* an object keeps what it has; the loss is said */
	*to = *r;
	to->lost = false;
	r->f = NULL;
	r->n = r->cap = 0;
	r->lost = false;
}

static struct olist *list_get(const char *name)
{
	for (int i = 0; i < doc->nlists; i++)
		if (!strcmp(doc->lists[i].name, name))
			return &doc->lists[i];
	if (doc->nlists >= 4)
		abort();
	memset(&doc->lists[doc->nlists], 0, sizeof(doc->lists[0]));
	doc->lists[doc->nlists].name = name;
	return &doc->lists[doc->nlists++];
}

static void list_write(FILE *o, struct olist *l);

/* About what a row's fields hold on the heap (for the batch's bound). */
static size_t fields_bytes(const struct ofield *f, int n)
{
	size_t b = (size_t)n * sizeof(*f) + 32;

	for (int i = 0; i < n; i++) {
		if (f[i].s)
			b += strlen(f[i].s) + 32;
		if (f[i].type == OF_RANGES)
			b += f[i].nranges * 2 * sizeof(uint64_t);
		else if (f[i].type == OF_NUMS)
			b += f[i].nnums * sizeof(uint64_t);
		else if (f[i].type == OF_LIST)
			for (size_t k = 0; k < f[i].nitems; k++)
				b += fields_bytes(f[i].items[k].f, f[i].items[k].n);
	}
	return b;
}

/* May l's rows be written before out_flush (see OUT_BATCH_ROWS)? */
static bool list_streams(const struct olist *l)
{
	if (doc->flushed || doc->fmt == OUT_PROM)
		return false;
	if (doc->fmt == OUT_JSON && doc->json.short_form)
		return true;
	if (l != &doc->lists[0])
		return false;
	return doc->fmt != OUT_HUMAN || l->cols;	/* a table needs its columns */
}

void out_list_declare(const char *list)
{
	pthread_mutex_lock(&doc->lock);
	list_get(list);
	pthread_mutex_unlock(&doc->lock);
}

static bool prom_wants(const char *list);

/* Safe from the walker's threads. */
void out_list_add(const char *list, struct orec *r)
{
	struct olist *l;

	if (doc->fmt == OUT_PROM && !prom_wants(list)) {
		orec_release(r);	/* Prometheus text shows no row of it: none kept */
		return;
	}
	pthread_mutex_lock(&doc->lock);
	l = list_get(list);
	if (r->lost) {
		orec_release(r);
		doc->lost++;
		pthread_mutex_unlock(&doc->lock);
		return;
	}

	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		struct orec *nr = realloc(l->recs, nc * sizeof(*nr));

		if (!nr) {
			orec_release(r);
			doc->lost++;	/* said at out_flush: never a silently short list */
			pthread_mutex_unlock(&doc->lock);
			return;
		}
		l->recs = nr;
		l->cap = nc;
	}
	orec_move(&l->recs[l->n], r);
	l->bytes += sizeof(*r) + fields_bytes(l->recs[l->n].f, l->recs[l->n].n);
	l->n++;
	if ((l->n >= OUT_BATCH_ROWS || l->bytes >= OUT_BATCH_BYTES) && list_streams(l))
		list_write(doc_file(doc), l);
	pthread_mutex_unlock(&doc->lock);
}

void out_object(const char *name, struct orec *r)
{
	if (doc->nobjs >= 4)
		abort();
	doc->objs[doc->nobjs].name = name;
	orec_move(&doc->objs[doc->nobjs++].rec, r);
}

void out_tag(const char *key, const char *value)
{
	if (doc->ntags >= 2)
		abort();
	doc->tags[doc->ntags].key = key;
	doc->tags[doc->ntags++].value = value;
}

static int cmp_rec(const void *a, const void *b, void *key)
{
	const struct ofield *fa = orec_get(a, key), *fb = orec_get(b, key);

	return strcmp(fa && fa->s ? fa->s : "", fb && fb->s ? fb->s : "");
}

void out_sort(const char *list, const char *key)
{
	pthread_mutex_lock(&doc->lock);
	list_get(list)->sort_key = key;
	pthread_mutex_unlock(&doc->lock);
}


int out_select_columns(const struct ocol *from, size_t n, const char *list, char *bad,
		       size_t badlen)
{
	const char *p = list;
	size_t k = 0;

	if (*p == '+') {	/* after the defaults */
		for (; k < n && k < 16; k++)
			doc->table.cols[k] = from[k];
		p++;
	}
	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < n; i++)
			if (strlen(from[i].header) == len && !strncasecmp(p, from[i].header, len))
				break;
		if (i == n || k >= 16) {
			snprintf(bad, badlen, "%.*s", (int)len, p);
			return -1;
		}
		doc->table.cols[k++] = from[i];
		p += len + (p[len] == ',');
	}
	if (!k) {
		snprintf(bad, badlen, "%s", list);
		return -1;
	}
	doc->table.from = from;
	doc->table.n = k;
	return 0;
}

void out_columns(const char *list, const struct ocol *cols, size_t n)
{
	struct olist *l;

	if (cols && cols == doc->table.from) {
		cols = doc->table.cols;
		n = doc->table.n;
	}

	pthread_mutex_lock(&doc->lock);
	l = list_get(list);
	l->cols = cols;
	l->ncols = n < 16 ? n : 16;
	pthread_mutex_unlock(&doc->lock);
}

void out_column_widths(const char *list, const unsigned *w)
{
	pthread_mutex_lock(&doc->lock);
	list_get(list)->fixed = w;
	pthread_mutex_unlock(&doc->lock);
}

/* Length of a valid UTF-8 sequence at s (shortest form, no surrogates), or 0. */
static int utf8_len(const unsigned char *s)
{
	int n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* stops at the NUL too */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xf0 && s[1] < 0x90))
		return 0;		/* overlong */
	if ((s[0] == 0xed && s[1] >= 0xa0) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;		/* a surrogate, or past U+10FFFF */
	return n;
}

/*
 * The Unicode bidirectional controls (U+061C, U+200E-F, U+202A-E,
 * U+2066-9): printed as they are, "evil\u202Efdp.exe" shows as
 * "evilexe.pdf" (CVE-2021-42574's trick): people get them as bytes.
 */
static bool is_bidi_control(const unsigned char *p, int n)
{
	if (n == 2)
		return p[0] == 0xd8 && p[1] == 0x9c;
	if (n != 3 || p[0] != 0xe2)
		return false;
	return (p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) ||
	       (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
}

char *out_escape(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = malloc(strlen(s) * 4 + 1), *o = out;

	if (!out)
		return NULL;
	while (*p) {
		int n = *p < 0x80 ? 1 : utf8_len(p), hex = 0;

		if (*p == '\\' || *p == '\n' || *p == '\t' || *p == '\r') {
			*o++ = '\\';
			*o++ = *p == '\n' ? 'n' : *p == '\t' ? 't' : *p == '\r' ? 'r' : '\\';
			p++;
			continue;
		}
		if (*p < 0x20 || *p == 0x7f || n == 0)
			hex = 1;
		else if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
			hex = 2;	/* U+0080..U+009F, the C1 controls (CSI is U+009B) */
		else if (is_bidi_control(p, n))
			hex = n;	/* a name that reads backwards on the screen */
		if (hex) {
			while (hex--)
				o += sprintf(o, "\\x%02x", *p++);
		} else {
			memcpy(o, p, (size_t)n);
			o += n;
			p += n;
		}
	}
	*o = 0;
	return out;
}

void out_human_line(const char *fmt, ...)
{
	va_list ap;
	char *s, *esc, *line = NULL, **nl;
	size_t lead = strspn(fmt, "\n");

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	/* the format's own leading newlines (blank lines) stay; nothing else */
	esc = out_escape(s + lead);
	if (esc && asprintf(&line, "%.*s%s", (int)lead, s, esc) < 0)
		line = NULL;
	free(esc);
	free(s);
	s = line;
	nl = s ? realloc(doc->table.lines, (doc->table.nlines + 1) * sizeof(*nl)) : NULL;
	if (!nl) {
		free(s);
		return;
	}
	doc->table.lines = nl;
	doc->table.lines[doc->table.nlines++] = s;
}

char *fmt_size(uint64_t bytes, char *buf, size_t len)
{
	if (doc->bytes)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		pc_human_size(bytes, buf, len);
	return buf;
}

/* Nothing for no pages (an empty selection is no share of anything), as vmtouch. */
char *fmt_percent(uint64_t part, uint64_t whole, char *buf, size_t len)
{
	double p = whole ? 100.0 * (double)part / (double)whole : 0;

	if (!whole) {
		snprintf(buf, len, "%s", "");
		return buf;
	}

	if (part < whole && p > 99.9)
		p = 99.9;
	if (part && p < 0.1)
		snprintf(buf, len, "<0.1%%");
	else
		snprintf(buf, len, "%.1f%%", p);
	return buf;
}

bool is_json_flag(const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);

	return n >= 3 && n <= 6 && !strncmp(arg, "--json", n);
}

/* ---- JSON ---- */

/*
 * JSON strings are strict UTF-8, and no two byte strings give the same
 * text. Linux names may hold any byte but NUL and '/', so a string that
 * is not valid UTF-8 cannot be written as it is; and \u00XX for a bad
 * byte (what this writer did) reads back as U+00XX, the name of another
 * file. So in the text a byte that is not part of a valid UTF-8 sequence
 * (stray, truncated, overlong, a surrogate, past U+10FFFF: always 0x80
 * or above) is the four characters \xHH, lowercase hex, and a backslash
 * of the string is doubled, \\, wherever it alone would be read as part
 * of such an escape: before another backslash, before a bad byte, or
 * before "x" and two lowercase hex digits 80 to ff. To read the text
 * back, \\ is a backslash, \xHH (HH lowercase, 80..ff) is byte HH, and any
 * other backslash is itself (\xE9, uppercase, too); every string reads
 * back as itself, so no two print the same.
 * Every UTF-8 string without such a backslash is its own text: systemd's
 * escapes (pc\x2dfoo.service: \x00 to \x7f) stay as they are. Control
 * characters are then escaped as RFC 8259 says (\n, \t, \u001b), and DEL
 * and C1 as \u007f..\u009f: they read back as themselves. A string member
 * KEY whose text is not the string is followed by KEY_bytes, its exact
 * bytes in base64 (RFC 4648), and only then: no KEY_bytes means KEY is
 * the bytes.
 */
static bool is_hex(unsigned char c, const char *digits)
{
	return c && strchr(digits, c);
}

/* Would this backslash of the string be misread alone (see above)? */
static bool bs_doubled(const unsigned char *p)
{
	if (p[1] == '\\' || (p[1] >= 0x80 && utf8_len(p + 1) == 0))
		return true;
	return p[1] == 'x' && is_hex(p[2], "89abcdef") && is_hex(p[3], "0123456789abcdef");
}

/* Is the string's text (json_chars) other than the string itself? */
static bool str_escaped(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = *p < 0x80 ? 1 : utf8_len(p);

		if (n == 0 || (*p == '\\' && bs_doubled(p)))
			return true;
		p += n;
	}
	return false;
}

static void json_chars(FILE *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = *p < 0x80 ? 1 : utf8_len(p);

		if (n == 0) {
			fprintf(o, "\\\\x%02x", *p++);	/* the text \xHH */
			continue;
		}
		switch (*p) {
		case '\\':	/* the text \\, or \ where that cannot be misread */
			fputs(bs_doubled(p) ? "\\\\\\\\" : "\\\\", o);
			break;
		case '"': fputs("\\\"", o); break;
		case '\b': fputs("\\b", o); break;
		case '\f': fputs("\\f", o); break;
		case '\n': fputs("\\n", o); break;
		case '\r': fputs("\\r", o); break;
		case '\t': fputs("\\t", o); break;
		default:
			/* C0 as RFC 8259 asks; DEL and C1 (CSI) too, for terminals */
			if (*p < 0x20 || *p == 0x7f)
				fprintf(o, "\\u%04x", *p);
			else if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
				fprintf(o, "\\u%04x", p[1]);
			else
				fwrite(p, 1, (size_t)n, o);
		}
		p += n;
	}
}

static void json_str(FILE *o, const char *s)
{
	fputc('"', o);
	json_chars(o, s);
	fputc('"', o);
}

void out_json_str(FILE *o, const char *s)
{
	json_str(o, s);
}

/* RFC 4648 base64, padded: a string's exact bytes */
static void json_base64(FILE *o, const char *s)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	fputc('"', o);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);

		fputc(b64[v >> 18 & 63], o);
		fputc(b64[v >> 12 & 63], o);
		fputc(i + 1 < n ? b64[v >> 6 & 63] : '=', o);
		fputc(i + 2 < n ? b64[v & 63] : '=', o);
	}
	fputc('"', o);
}

/* A number of JSON: never NaN or infinity (null) */
static void json_f64(FILE *o, double d)
{
	if (isfinite(d))
		fprintf(o, "%.10g", d);
	else
		fputs("null", o);	/* JSON has no NaN */
}

static void json_nums(FILE *o, const struct ofield *f)
{
	fputc('[', o);
	for (size_t k = 0; k < f->nnums; k++) {
		fputs(k ? ", " : "", o);
		if (f->flags & OF_INTS)
			fprintf(o, "%llu", (unsigned long long)f->us[k]);
		else
			json_f64(o, f->ds[k]);
	}
	fputc(']', o);
}

/* An object of n fields; indent NULL: on one line. */
static void json_obj(FILE *o, const struct ofield *fields, int n, const char *indent)
{
	bool first = true;

	fputc('{', o);
	for (int i = 0; i < n; i++) {
		const struct ofield *f = &fields[i];

		if ((f->flags & OF_HUMAN) && f->type != OF_JSON)
			continue;
		if (indent)
			fprintf(o, "%s\n%s  ", first ? "" : ",", indent);
		else
			fputs(first ? "" : ", ", o);
		first = false;
		json_str(o, f->key);
		fputs(": ", o);
		switch (f->type) {
		case OF_U64:
			fprintf(o, "%llu", (unsigned long long)f->u);
			break;
		case OF_F64:
			json_f64(o, f->d);
			break;
		case OF_NUMS:
			json_nums(o, f);
			break;
		case OF_STR:
			json_str(o, f->s);
			if (str_escaped(f->s)) {
				/* KEY_bytes: the exact bytes, beside the escaped text */
				fputs(indent ? ",\n" : ", ", o);
				if (indent)
					fprintf(o, "%s  ", indent);
				fputc('"', o);
				json_chars(o, f->key);
				fputs("_bytes\": ", o);
				json_base64(o, f->s);
			}
			break;
		case OF_JSON:
			fputs(f->s, o);
			break;
		case OF_NULL:
			fputs("null", o);
			break;
		case OF_BOOL:
			fputs(f->u ? "true" : "false", o);
			break;
		case OF_RANGES:
			fputc('[', o);
			for (size_t k = 0; k < f->nranges; k++)
				fprintf(o, "%s[%llu, %llu]", k ? ", " : "",
					(unsigned long long)f->ranges[2 * k],
					(unsigned long long)f->ranges[2 * k + 1]);
			fputc(']', o);
			break;
		case OF_LIST:
			if (f->flags & OF_OBJECT) {
				json_obj(o, f->items[0].f, f->items[0].n, NULL);
				break;
			}
			fputc('[', o);
			for (size_t k = 0; k < f->nitems; k++) {
				fputs(k ? ", " : "", o);
				json_obj(o, f->items[k].f, f->items[k].n, NULL);
			}
			fputc(']', o);
			break;
		}
	}
	if (indent)
		fprintf(o, "\n%s}", indent);
	else
		fputc('}', o);
}

static void json_rec(FILE *o, const struct orec *r, const char *indent)
{
	json_obj(o, r->f, r->n, indent);
}

/*
 * The document, written as it goes: its start (the tags) with the first
 * row written or at out_flush, then each list, then the objects.
 *
 * --json=short: one line per element of the pretty document, each an
 * object of one member named as the list or object it belongs to:
 * {"files": {...}} per row, {"errors": {...}} per failure, then
 * {"total": {...}}; a tag is {"bench": "swapin"}. Empty lists write nothing.
 */
static void short_line(FILE *o, const char *name, const struct orec *r, const char *tag)
{
	fputc('{', o);
	json_str(o, name);
	fputs(": ", o);
	if (r)
		json_rec(o, r, NULL);
	else
		json_str(o, tag);
	fputs("}\n", o);
}

/* JSON pretty: "name": at the top level */
static void json_member(FILE *o, const char *name)
{
	fprintf(o, "%s\n  ", doc->json.members++ ? "," : "");
	json_str(o, name);
	fputs(": ", o);
}

static void json_start(FILE *o)
{
	if (doc->json.started)
		return;
	doc->json.started = true;
	if (!doc->json.short_form)
		fputc('{', o);
	for (int i = 0; i < doc->ntags; i++) {
		if (doc->json.short_form) {
			short_line(o, doc->tags[i].key, NULL, doc->tags[i].value);
			continue;
		}
		json_member(o, doc->tags[i].key);
		json_str(o, doc->tags[i].value);
	}
}

static void json_rows(FILE *o, struct olist *l)
{
	json_start(o);
	for (size_t k = 0; k < l->n; k++) {
		if (doc->json.short_form) {
			short_line(o, l->name, &l->recs[k], NULL);
			continue;
		}
		if (!l->opened) {
			json_member(o, l->name);
			fputc('[', o);
			l->opened = true;
		}
		fputs(l->written + k ? ", " : "", o);
		json_rec(o, &l->recs[k], "    ");
	}
}

/* At out_flush: what is left of the lists, then the objects. */
static void json_end(FILE *o)
{
	json_start(o);
	for (int i = 0; i < doc->nlists; i++) {
		struct olist *l = &doc->lists[i];

		list_write(o, l);
		if (doc->json.short_form)
			continue;
		if (!l->opened) {
			json_member(o, l->name);
			fputc('[', o);
		}
		fputc(']', o);
	}
	for (int i = 0; i < doc->nobjs; i++) {
		if (doc->json.short_form) {
			short_line(o, doc->objs[i].name, &doc->objs[i].rec, NULL);
			continue;
		}
		json_member(o, doc->objs[i].name);
		json_rec(o, &doc->objs[i].rec, "  ");
	}
	if (!doc->json.short_form)
		fputs("\n}\n", o);
}

/* ---- Prometheus text ---- */


void out_prom_metrics(const char *prefix, const struct ometric *m, size_t n)
{
	doc->prom.prefix = prefix;
	doc->prom.m = m;
	doc->prom.n = n;
}

void out_prom_page_size(uint64_t page_size)
{
	doc->prom.page_size = page_size;
}

void out_prom_opts(bool per_file, const char *file)
{
	doc->prom.per_file = per_file;
	doc->prom.file = file;
}

static void prom_label(FILE *o, const char *s);

/*
 * The label names the commands give their rows (cmd-*.c's OM_LABEL
 * entries); a --prom-label of one of them would make a series with a
 * label twice, which the format forbids.
 */
static const char *const prom_row_labels[] = { "path", "cgroup", "device", "condition" };

int out_prom_label(const char *nv)
{
	const char *eq = strchr(nv, '=');
	size_t n = eq ? (size_t)(eq - nv) : 0;
	char *name, *add = NULL, *names = NULL;
	size_t alen = 0;
	FILE *m;

	if (!eq || !n) {
		cli_usage_error("--prom-label wants NAME=VALUE, not '%s'", nv);
		return -1;
	}
	name = strndup(nv, n);
	if (!name)
		return cli_usage_error("out of memory"), -1;
	/* the exposition format's label names: [a-zA-Z_][a-zA-Z0-9_]*, __ reserved */
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (i && c >= '0' && c <= '9'))) {
			cli_usage_error("--prom-label '%s': a label name is letters, digits and _, "
					"not starting with a digit", name);
			free(name);
			return -1;
		}
	}
	if (!strncmp(name, "__", 2)) {
		cli_usage_error("--prom-label '%s': names starting with __ are Prometheus's own", name);
		free(name);
		return -1;
	}
	for (size_t i = 0; i < sizeof(prom_row_labels) / sizeof(prom_row_labels[0]); i++)
		if (!strcmp(name, prom_row_labels[i])) {
			cli_usage_error("--prom-label '%s': pagecache labels its own series so", name);
			free(name);
			return -1;
		}
	if (doc->prom.label_names) {
		char *key;

		if (asprintf(&key, ",%s,", name) < 0)
			key = NULL;
		if (key && strstr(doc->prom.label_names, key)) {
			cli_usage_error("--prom-label '%s' given twice", name);
			free(key);
			free(name);
			return -1;
		}
		free(key);
	}
	m = open_memstream(&add, &alen);
	if (m) {
		fprintf(m, "%s%s%s=\"", doc->prom.labels ? doc->prom.labels : "", doc->prom.labels ? "," : "", name);
		prom_label(m, eq + 1);
		fputc('"', m);
	}
	if (!m || fclose(m) != 0 ||
	    asprintf(&names, "%s%s,", doc->prom.label_names ? doc->prom.label_names : ",", name) < 0) {
		free(add);
		free(name);
		cli_usage_error("out of memory");
		return -1;
	}
	free(doc->prom.labels);
	free(doc->prom.label_names);
	doc->prom.labels = add;
	doc->prom.label_names = names;
	free(name);
	return 0;
}

bool out_prom_labelled(void)
{
	return doc->prom.labels != NULL;
}

/*
 * A sample's labels: --prom-label's first, then the row's ({a="x"} or "").
 * Returned in buf, or a malloc'd string in *heap when it does not fit.
 */
static const char *prom_labels(const char *row, char *buf, size_t len, char **heap)
{
	int n;

	*heap = NULL;
	if (!doc->prom.labels)
		return row;
	n = snprintf(buf, len, "{%s%s%s", doc->prom.labels, *row ? "," : "}", *row ? row + 1 : "");
	if (n >= 0 && (size_t)n < len)
		return buf;
	if (asprintf(heap, "{%s%s%s", doc->prom.labels, *row ? "," : "}", *row ? row + 1 : "") < 0) {
		*heap = NULL;
		return row;	/* out of memory: never reached in practice; the row's own */
	}
	return *heap;
}

/* Would the Prometheus output show anything of this list's rows? */
static bool prom_wants(const char *list)
{
	for (size_t i = 0; i < doc->prom.n; i++)
		if (!(doc->prom.m[i].flags & OM_LABEL) && !strcmp(doc->prom.m[i].from, list) &&
		    (doc->prom.per_file || !(doc->prom.m[i].flags & OM_PER_FILE)))
			return true;
	return false;
}

/*
 * A label value. Prometheus takes only UTF-8, while a Linux name is any
 * bytes but '/' and NUL. So the value is the name's text as JSON has it
 * (json_chars): a byte that is not UTF-8 is the text \xHH, and a
 * backslash that could be read as such an escape (before another
 * backslash, such a byte, or x and two hex digits from 80) is doubled;
 * the rest is as it is. That is lossless, two names never give one value,
 * and a label can be joined with the JSON "path". Then the exposition
 * format's escapes, \\, \" and \n: the name a/<0xff>"b is the value
 * a/\xff"b, written "a/\\xff\"b".
 */
static void prom_label(FILE *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = *p < 0x80 ? 1 : utf8_len(p);

		if (n == 0)
			fprintf(o, "\\\\x%02x", *p);	/* the text \xHH, its \ escaped */
		else if (*p == '\\')
			fputs(bs_doubled(p) ? "\\\\\\\\" : "\\\\", o);
		else if (*p == '"')
			fputs("\\\"", o);
		else if (*p == '\n')
			fputs("\\n", o);
		else
			fwrite(p, 1, (size_t)n, o);
		p += n ? n : 1;
	}
}

/* f as a sample value, in base units; false: unknown (absent, never made up). */
static bool prom_value(const struct ometric *m, const struct ofield *f, char *buf, size_t len)
{
	uint64_t ps = doc->prom.page_size ? doc->prom.page_size : pc_page_size();
	double d;

	switch (f->type) {
	case OF_U64:
	case OF_BOOL:
		if (!(m->flags & (OM_MILLI | OM_PERCENT | OM_MEGA | OM_MEBI))) {
			uint64_t v = f->u;

			if ((m->flags & OM_PAGES) && v > UINT64_MAX / ps)
				return false;
			snprintf(buf, len, "%llu", (unsigned long long)(m->flags & OM_PAGES ? v * ps : v));
			return true;
		}
		d = (double)f->u;
		break;
	case OF_F64:
		d = f->d;
		break;
	default:
		return false;	/* null (unknown, or no limit), or not a number */
	}
	if (m->flags & OM_PAGES)
		d *= (double)ps;
	if (m->flags & OM_MILLI)
		d /= 1e3;
	if (m->flags & OM_PERCENT)
		d /= 100;
	if (m->flags & OM_MEGA)
		d *= 1e6;
	if (m->flags & OM_MEBI)
		d *= 1048576;
	if (!isfinite(d))
		return false;
	snprintf(buf, len, "%.10g", d);
	return true;
}

static const struct orec *prom_object(const char *name)
{
	for (int i = 0; i < doc->nobjs; i++)
		if (!strcmp(doc->objs[i].name, name))
			return &doc->objs[i].rec;
	return NULL;
}

static struct olist *prom_list(const char *name)
{
	for (int i = 0; i < doc->nlists; i++)
		if (!strcmp(doc->lists[i].name, name))
			return &doc->lists[i];
	return NULL;
}

static void prom_head(FILE *o, const struct ometric *m, bool *done)
{
	if (*done)
		return;
	*done = true;
	fprintf(o, "# HELP pagecache_%s_%s %s\n# TYPE pagecache_%s_%s %s\n", doc->prom.prefix,
		m->name, m->help, doc->prom.prefix, m->name,
		m->flags & OM_COUNTER ? "counter" : "gauge");
}

/* A list's rows in label order, each label set once (a series is its labels). */
struct prom_row {
	char *labels;		/* {a="x",b="y"}, or "" */
	size_t row;
};

static int cmp_prom_row(const void *a, const void *b)
{
	const struct prom_row *x = a, *y = b;
	int c = strcmp(x->labels, y->labels);

	return c ? c : (x->row > y->row) - (x->row < y->row);
}

static struct prom_row *prom_rows(const char *list, const struct olist *l, size_t *ret_n)
{
	struct prom_row *rows = calloc(l->n ? l->n : 1, sizeof(*rows));
	size_t n = 0;

	if (!rows)
		return NULL;
	for (size_t r = 0; r < l->n; r++) {
		char *buf = NULL;
		size_t blen = 0;
		FILE *m = open_memstream(&buf, &blen);
		bool first = true;

		if (!m)
			break;
		for (size_t i = 0; i < doc->prom.n; i++) {
			const struct ofield *f;

			if (!(doc->prom.m[i].flags & OM_LABEL) || strcmp(doc->prom.m[i].from, list))
				continue;
			f = orec_get(&l->recs[r], doc->prom.m[i].key);
			if (!f || f->type != OF_STR)
				continue;
			fprintf(m, "%c%s=\"", first ? '{' : ',', doc->prom.m[i].name);
			prom_label(m, f->s);
			fputc('"', m);
			first = false;
		}
		if (!first)
			fputc('}', m);
		if (fclose(m) != 0 || !buf) {
			free(buf);
			break;
		}
		rows[n].labels = buf;
		rows[n++].row = r;
	}
	if (n < l->n)
		doc->lost += l->n - n;	/* out of memory: said, never silently short */
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_prom_row);
	*ret_n = n;
	return rows;
}

/*
 * The exposition format wants each metric's samples together, after its
 * HELP and TYPE: metric by metric, then row by row. So a list whose rows
 * are exported (--prom-per-file, cgroups) is kept whole until out_flush
 * (list_streams never streams Prometheus text); a list nothing of which is
 * exported keeps no row at all (out_list_add, prom_wants).
 */
static void render_prom(FILE *o)
{
	const char *lists[8];
	struct prom_row *rows[8] = { 0 };
	size_t nrows[8] = { 0 };
	int nl = 0;
	char val[64];
	struct timespec now;

	if (!doc->prom.prefix)
		doc->prom.prefix = cli_cmd;
	for (size_t i = 0; i < doc->prom.n; i++) {
		const struct ometric *m = &doc->prom.m[i];
		bool head = false;

		if (m->flags & OM_LABEL)
			continue;
		if ((m->flags & OM_PER_FILE) && !doc->prom.per_file)
			continue;
		{
			const struct orec *r = prom_object(m->from);
			const struct ofield *f = r ? orec_get(r, m->key) : NULL;

			if (r) {
				if (f && prom_value(m, f, val, sizeof(val))) {
					char lb[512], *heap;
					const char *ls = prom_labels("", lb, sizeof(lb), &heap);

					prom_head(o, m, &head);
					fprintf(o, "pagecache_%s_%s%s %s\n", doc->prom.prefix, m->name, ls, val);
					free(heap);
				}
				continue;
			}
		}
		{
			struct olist *l = prom_list(m->from);
			int li;

			if (!l)
				continue;
			for (li = 0; li < nl && strcmp(lists[li], m->from); li++)
				;
			if (li == nl) {
				if (nl == 8)
					continue;
				lists[nl] = m->from;
				rows[nl] = prom_rows(m->from, l, &nrows[nl]);
				nl++;
			}
			for (size_t k = 0; k < nrows[li]; k++) {
				const struct ofield *f = orec_get(&l->recs[rows[li][k].row], m->key);

				/* one sample a label set: a name given twice (-H) is one series */
				if (k && !strcmp(rows[li][k].labels, rows[li][k - 1].labels))
					continue;
				if (!f || !prom_value(m, f, val, sizeof(val)))
					continue;
				{
					char lb[512], *heap;
					const char *ls = prom_labels(rows[li][k].labels, lb, sizeof(lb),
								     &heap);

					prom_head(o, m, &head);
					fprintf(o, "pagecache_%s_%s%s %s\n", doc->prom.prefix, m->name, ls, val);
					free(heap);
				}
			}
		}
	}
	for (int li = 0; li < nl; li++) {
		for (size_t k = 0; k < nrows[li]; k++)
			free(rows[li][k].labels);
		free(rows[li]);
	}
	clock_gettime(CLOCK_REALTIME, &now);
	{
		char lb[512], *heap;
		const char *ls = prom_labels("", lb, sizeof(lb), &heap);

		fprintf(o, "# HELP pagecache_%s_last_run_timestamp_seconds When the run that "
			"wrote this ended, in seconds since the epoch.\n"
			"# TYPE pagecache_%s_last_run_timestamp_seconds gauge\n"
			"pagecache_%s_last_run_timestamp_seconds%s %lld.%03ld\n", doc->prom.prefix,
			doc->prom.prefix, doc->prom.prefix, ls, (long long)now.tv_sec, now.tv_nsec / 1000000);
		free(heap);
	}
}

/*
 * out_write_file, for --prom-file and bench report's -o: the text goes to
 * a temp file in FILE's directory (a fresh
 * name, O_EXCL | O_NOFOLLOW, so nothing planted there is followed or
 * reused; named .FILE.tmp.XXXXXX, which the textfile collector, reading
 * only *.prom, skips), is fsync'ed and renamed over FILE, and the
 * directory is fsync'ed: a scrape sees the old file or the new one, never
 * half of one. On any failure the temp file goes and FILE stays as it
 * was. Writes go through lib/sys.c, so the tests can fail them
 * (PAGECACHE_FAULT=write:ENOSPC, fsync:EIO, rename:EIO).
 *
 * Mode 0644 for totals (what a textfile collector running as another user
 * must read), 0640 with --prom-per-file: then the labels name files, and
 * which files are cached, of other users too, is not for everyone (give
 * the collector the directory's group, e.g. a setgid directory).
 */
static ssize_t prom_cookie_write(void *c, const char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		long n = pc_sys_write((int)(intptr_t)c, buf + done, len - done);

		if (n < 0) {
			errno = (int)-n;
			return done ? (ssize_t)done : -1;
		}
		if (n == 0) {
			errno = EIO;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)len;
}

int out_write_file(const char *path, mode_t mode, int (*fill)(FILE *o, void *arg), void *arg)
{
	static const cookie_io_functions_t io = { .write = prom_cookie_write };
	char *dir = NULL, *base, *tmp = NULL, *copy = strdup(path);
	int dfd = -1, fd = -1, rc = 0;
	const char *what = "cannot write";
	bool made = false;	/* a temp file was made: FILE is said to stay as it was */
	FILE *o = NULL;

	if (!copy)
		return -ENOMEM;
	base = strrchr(copy, '/');
	if (base) {
		*base++ = 0;
		dir = *copy ? copy : "/";
	} else {
		base = copy;
		dir = ".";
	}
	if (!*base) {
		rc = -EISDIR;
		goto out;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		rc = -errno;
		what = "cannot open the directory of";
		goto out;
	}
	{	/* a device node, FIFO or directory there is never replaced */
		struct stat st;

		if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) &&
		    !S_ISLNK(st.st_mode)) {
			rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
			what = "refusing to replace what is not a regular file:";
			goto out;
		}
	}
	fd = pc_sys_tmp_create(dfd, base, true, &tmp);
	if (fd < 0) {
		rc = fd;
		tmp = NULL;	/* not ours: never unlinked */
		what = "cannot create a temporary file for";
		goto out;
	}
	made = true;
	if (fchmod(fd, mode) < 0) {
		rc = -errno;
		goto out;
	}
	o = fopencookie((void *)(intptr_t)fd, "w", io);
	if (!o) {
		rc = -ENOMEM;
		goto out;
	}
	errno = 0;
	rc = fill(o, arg);
	if (rc < 0)
		goto out;
	if (fflush(o) != 0 || ferror(o)) {
		rc = -(errno ? errno : EIO);
		goto out;
	}
	rc = pc_sys_fsync(fd);
	if (rc == 0 && close(fd) < 0)
		rc = -errno;
	fd = -1;
	if (rc == 0)
		rc = pc_sys_renameat(dfd, tmp, dfd, base);
	if (rc == 0) {
		free(tmp);
		tmp = NULL;	/* it is FILE now */
		fsync(dfd);	/* the rename itself must reach the disk */
	}
out:
	if (o)
		fclose(o);	/* the cookie has no close: fd is closed here */
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlinkat(dfd, tmp, 0);
	if (dfd >= 0)
		close(dfd);
	if (rc < 0)	/* cli_warn escapes the name */
		cli_warn("%s '%s': %s%s", what, path, strerror(-rc),
			 made ? " (the file, if any, is as it was)" : "");
	free(tmp);
	free(copy);
	return rc;
}

static int prom_fill(FILE *o, void *arg)
{
	(void)arg;
	render_prom(o);
	return 0;
}

static int prom_write_file(const char *path)
{
	return out_write_file(path, doc->prom.per_file ? 0640 : 0644, prom_fill, NULL);
}

/* ---- key=value and human ---- */

/* A number for people and key=value: 32767, not 3.277e+04 */
static void f64_text(double d, char *buf, size_t len)
{
	if (d > -1e15 && d < 1e15 && d == (double)(long long)d)
		snprintf(buf, len, "%lld", (long long)d);
	else
		snprintf(buf, len, "%.4g", d);
}

static void u64_text(uint64_t u, int flags, char *buf, size_t len)
{
	if (flags & OF_BYTES)
		fmt_size(u, buf, len);
	else
		snprintf(buf, len, "%llu", (unsigned long long)u);
}

/* An array's numbers, comma-separated, cut with ",..." where len is short. */
static void nums_text(const struct ofield *f, char *buf, size_t len)
{
	size_t used = 0, k;

	buf[0] = 0;
	for (k = 0; k < f->nnums && used + 48 < len; k++) {
		char num[40];

		if (f->flags & OF_INTS)
			u64_text(f->us[k], f->flags, num, sizeof(num));
		else
			f64_text(f->ds[k], num, sizeof(num));
		used += (size_t)snprintf(buf + used, len - used, "%s%s", k ? "," : "", num);
	}
	if (k < f->nnums)
		snprintf(buf + used, len - used, ",...");
}

/* Numbers, ranges and such; strings are f->s itself (not copied). */
static const char *field_text(const struct ofield *f, char *buf, size_t len)
{
	switch (f->type) {
	case OF_U64:
		u64_text(f->u, f->flags, buf, len);
		break;
	case OF_F64:
		f64_text(f->d, buf, len);
		break;
	case OF_NUMS:
		nums_text(f, buf, len);
		break;
	case OF_STR:
	case OF_JSON:
		return f->s;
	case OF_NULL:
		snprintf(buf, len, "%s", f->flags & OF_MAX ? "max" : "unknown");
		break;
	case OF_BOOL:
		snprintf(buf, len, "%s", f->u ? "yes" : "no");
		break;
	case OF_LIST:	/* JSON only: commands give people a text field */
		snprintf(buf, len, "-");
		break;
	case OF_RANGES: {
		size_t used = 0;

		buf[0] = 0;
		for (size_t k = 0; k < f->nranges && used + 48 < len; k++) {
			unsigned long long a = f->ranges[2 * k], n = f->ranges[2 * k + 1];

			used += (size_t)snprintf(buf + used, len - used, "%s%llu", k ? "," : "", a);
			if (n > 1)
				used += (size_t)snprintf(buf + used, len - used, "-%llu", a + n - 1);
		}
		if (f->nranges && used + 48 >= len)
			snprintf(buf + used, len - used, ",...");
		break;
	}
	}
	return buf;
}

/*
 * key=value: a value with a space, quote, backslash, control
 * character or a byte that is not UTF-8 is quoted, with \" \\ \n \t \r
 * and \xNN inside; so one record stays one line of pairs.
 */
static void kv_value(FILE *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	bool quote = !*p;

	for (const unsigned char *q = p; *q && !quote;) {
		int n = *q < 0x80 ? 1 : utf8_len(q);

		/* C1 controls (U+0080..U+009F: \xc2\x80..\xc2\x9f) are controls too */
		quote = n == 0 || *q <= ' ' || *q == 0x7f || *q == '"' || *q == '\\' ||
			(n == 2 && q[0] == 0xc2 && q[1] < 0xa0);
		q += n ? n : 1;
	}
	if (!quote) {
		fputs(s, o);
		return;
	}
	fputc('"', o);
	while (*p) {
		int n = *p < 0x80 ? 1 : utf8_len(p);

		if (*p == '"' || *p == '\\')
			fprintf(o, "\\%c", *p);
		else if (*p == '\n' || *p == '\t' || *p == '\r')
			fprintf(o, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
		else if (n == 0 || *p < 0x20 || *p == 0x7f)
			fprintf(o, "\\x%02x", *p);
		else if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
			fprintf(o, "\\xc2\\x%02x", p[1]);
		else
			fwrite(p, 1, (size_t)n, o);
		p += n ? n : 1;
	}
	fputc('"', o);
}

/* An array whole, never cut as a cell is: exact integers, numbers as F64's */
static void kv_nums(FILE *o, const struct ofield *f)
{
	if (!f->nnums)
		fputs("\"\"", o);
	for (size_t k = 0; k < f->nnums; k++) {
		char num[40];

		if (f->flags & OF_INTS)
			snprintf(num, sizeof(num), "%llu", (unsigned long long)f->us[k]);
		else
			f64_text(f->ds[k], num, sizeof(num));
		fprintf(o, "%s%s", k ? "," : "", num);
	}
}

/*
 * A record's pairs; prefix "" or "cgroups.0." for a nested list's item.
 * A list is KEY.count=N, then each item's fields as KEY.I.SUBKEY=value
 * (I from 0), on the record's one line: stat --by-cgroup's
 * "cgroups.count=1 cgroups.0.path=/a cgroups.0.cached=25".
 */
static void kv_fields(FILE *o, const char *prefix, const struct ofield *fs, int n, bool *first)
{
	char buf[4096];

	for (int i = 0; i < n; i++) {
		const struct ofield *f = &fs[i];

		if (f->flags & OF_HUMAN)
			continue;
		if (f->type == OF_LIST && (f->flags & OF_OBJECT)) {
			char *sub = NULL;	/* an object: KEY.SUBKEY=value */

			if (asprintf(&sub, "%s%s.", prefix, f->key) >= 0)
				kv_fields(o, sub, f->items[0].f, f->items[0].n, first);
			free(sub);
			continue;
		}
		fprintf(o, "%s%s%s", *first ? "" : " ", prefix, f->key);
		*first = false;
		if (f->type == OF_LIST) {
			fprintf(o, ".count=%zu", f->nitems);
			for (size_t k = 0; k < f->nitems; k++) {
				char *sub = NULL;

				if (asprintf(&sub, "%s%s.%zu.", prefix, f->key, k) < 0)
					break;
				kv_fields(o, sub, f->items[k].f, f->items[k].n, first);
				free(sub);
			}
			continue;
		}
		fputc('=', o);
		if (f->type == OF_NUMS) {
			kv_nums(o, f);
			continue;
		}
		if (f->type == OF_U64)
			snprintf(buf, sizeof(buf), "%llu", (unsigned long long)f->u);
		kv_value(o, f->type == OF_U64 ? buf : field_text(f, buf, sizeof(buf)));
	}
}

static void kv_rec(FILE *o, const struct orec *r)
{
	bool first = true;

	kv_fields(o, "", r->f, r->n, &first);
	fputc('\n', o);
}

/* A table cell for people, escaped; malloc'd (NULL: out of memory). */
static char *cell_text(const struct ofield *f)
{
	char buf[4096], *e, *r;
	size_t n = 0;

	if (!f)
		return strdup("-");
	e = out_escape(field_text(f, buf, sizeof(buf)));
	if (!e || !doc->table.raw || !strchr(e, ' '))
		return e;
	/* raw: a space would split the cell, so it is \x20, as util-linux writes it */
	r = malloc(strlen(e) * 4 + 1);
	if (r)
		for (const char *c = e; *c; c++)
			n += (size_t)(*c == ' ' ? sprintf(r + n, "\\x20") : sprintf(r + n, "%c", *c));
	free(e);
	return r;
}

static locale_t utf8_locale;

static void utf8_locale_init(void)
{
	utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/*
 * The screen columns of a cell: a cell is UTF-8 (cell_text escapes any
 * other byte and the controls), read in C.UTF-8 whatever the program's
 * locale, each character counted by wcwidth: "é" is one column, "日" two,
 * a combining accent none. Without that locale, one column a character.
 * Bytes would pad "café" one short and "日本語" three short of "cafe".
 */
static size_t text_width(const char *s)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	locale_t old;
	mbstate_t st;
	size_t w = 0;

	pthread_once(&once, utf8_locale_init);
	if (!utf8_locale) {
		for (; *s; s++)
			w += ((unsigned char)*s & 0xc0) != 0x80;
		return w;
	}
	old = uselocale(utf8_locale);
	memset(&st, 0, sizeof(st));
	while (*s) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s, strlen(s), &st);
		int cw;

		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			memset(&st, 0, sizeof(st));	/* cannot happen: one column */
			w++;
			s++;
			continue;
		}
		cw = wcwidth(wc);
		w += cw < 0 ? 1 : (size_t)cw;
		s += n;
	}
	uselocale(old);
	return w;
}

/* The table's widths from the header and the rows held (the first batch). */
static void table_start(struct olist *l)
{
	for (size_t c = 0; c < l->ncols; c++) {
		if (l->fixed && l->fixed[c]) {	/* a wider cell widens its own row only */
			l->w[c] = l->fixed[c];
			continue;
		}
		l->w[c] = doc->table.noheadings ? 0 : text_width(l->cols[c].header);
		for (size_t r = 0; r < l->n; r++) {
			const struct ofield *f = orec_get(&l->recs[r], l->cols[c].key);
			char *text = f ? cell_text(f) : NULL;
			size_t w = text ? text_width(text) : 0;

			if (w > l->w[c])
				l->w[c] = w;
			free(text);
		}
	}
}

static void pad(FILE *o, size_t w, size_t have)
{
	for (; have < w; have++)
		fputc(' ', o);
}

/* One line: the header (r NULL) or a row. */
static void table_line(FILE *o, const struct olist *l, const struct orec *r)
{
	for (size_t c = 0; c < l->ncols; c++) {
		bool last = c + 1 == l->ncols;
		char *cell = r ? cell_text(orec_get(r, l->cols[c].key)) : NULL;
		const char *text = r ? (cell ? cell : "?") : l->cols[c].header;

		/* padded to screen columns, not bytes: printf's %*s counts bytes */
		if (doc->table.raw) {
			fprintf(o, "%s%s", text, last ? "" : " ");
		} else if (l->cols[c].left && last) {
			fputs(text, o);
		} else if (l->cols[c].left) {
			fputs(text, o);
			pad(o, l->w[c], text_width(text));
			fputc(' ', o);
		} else {
			pad(o, l->w[c], text_width(text));
			fprintf(o, "%s%s", text, last ? "" : " ");
		}
		free(cell);
	}
	fputc('\n', o);
}

/*
 * Write the rows l holds, sorted, in the document's format, and free
 * them. Under doc->lock, or from out_flush.
 */
static void list_write(FILE *o, struct olist *l)
{
	if (l->sort_key && l->n > 1) {
		qsort_r(l->recs, l->n, sizeof(*l->recs), cmp_rec, (void *)l->sort_key);
	}
	switch (doc->fmt) {
	case OUT_JSON:
		json_rows(o, l);
		break;
	case OUT_KV:
		if (strcmp(l->name, "errors"))	/* errors: on stderr only */
			for (size_t r = 0; r < l->n; r++)
				kv_rec(o, &l->recs[r]);
		break;
	case OUT_HUMAN:
		if (!l->cols || (!l->n && !(doc->table.keep_header && !l->written)))
			break;
		if (!l->written) {
			table_start(l);
			if (!doc->table.noheadings)
				table_line(o, l, NULL);
		}
		for (size_t r = 0; r < l->n; r++)
			table_line(o, l, &l->recs[r]);
		break;
	case OUT_PROM:	/* render_prom reads them all at out_flush */
		return;
	}
	for (size_t r = 0; r < l->n; r++)
		orec_release(&l->recs[r]);
	l->written += l->n;
	l->n = 0;
	l->bytes = 0;
	if (ferror(o) && !doc->werr)
		doc->werr = errno ? errno : EIO;
}

int out_event(const char *name, struct orec *r, const char *human)
{
	FILE *o = doc_file(doc);
	char *esc;
	int rc = 0;

	pthread_mutex_lock(&doc->lock);
	switch (doc->fmt) {
	case OUT_JSON:
		short_line(o, name, r, NULL);
		break;
	case OUT_KV:
		kv_rec(o, r);
		break;
	case OUT_HUMAN:
		esc = human ? out_escape(human) : NULL;
		if (esc)
			fprintf(o, "%s\n", esc);
		free(esc);
		break;
	case OUT_PROM:
		break;
	}
	pthread_mutex_unlock(&doc->lock);
	orec_release(r);
	if (fflush(o) != 0 || ferror(o))
		rc = errno == EPIPE ? 0 : -(errno ? errno : EIO);
	return rc;
}

int out_line(struct orec *r)
{
	FILE *o = doc_file(doc);
	int rc = 0;

	pthread_mutex_lock(&doc->lock);
	if (doc->fmt == OUT_JSON) {
		json_rec(o, r, NULL);
		fputc('\n', o);
	} else if (doc->fmt == OUT_KV) {
		kv_rec(o, r);
	}
	pthread_mutex_unlock(&doc->lock);
	orec_release(r);
	if (fflush(o) != 0 || ferror(o))
		rc = -(errno ? errno : EIO);
	return rc;
}

/*
 * What a document holds between out_init and out_flush; its settings
 * (format, -o, --json=short, Prometheus options) stay for the next one.
 */
static void doc_release(struct out_doc *d)
{
	for (int i = 0; i < d->nlists; i++) {
		for (size_t r = 0; r < d->lists[i].n; r++)
			orec_release(&d->lists[i].recs[r]);
		free(d->lists[i].recs);
	}
	for (int i = 0; i < d->nobjs; i++)
		orec_release(&d->objs[i].rec);
	for (size_t i = 0; i < d->table.nlines; i++)
		free(d->table.lines[i]);
	free(d->table.lines);
	d->nlists = d->nobjs = d->ntags = 0;
	d->table.nlines = 0;
	d->table.lines = NULL;
	d->json.started = false;
	d->json.members = 0;
}

int out_flush(void)
{
	FILE *o = doc_file(doc);
	int werr;
	int prom_rc = 0;

	pthread_mutex_lock(&doc->lock);
	if (doc->flushed) {
		pthread_mutex_unlock(&doc->lock);
		return 0;	/* one document per run: never a second {} */
	}
	switch (doc->fmt) {
	case OUT_JSON:
		json_end(o);
		break;
	case OUT_PROM:
		if (doc->prom.file)
			prom_rc = prom_write_file(doc->prom.file);
		else
			render_prom(o);
		break;
	case OUT_KV:
		for (int i = 0; i < doc->nlists; i++)
			list_write(o, &doc->lists[i]);
		for (int i = 0; i < doc->nobjs; i++)
			kv_rec(o, &doc->objs[i].rec);
		break;
	case OUT_HUMAN:
		for (int i = 0; i < doc->nlists; i++)
			list_write(o, &doc->lists[i]);
		for (size_t i = 0; i < doc->table.nlines; i++)
			fprintf(o, "%s\n", doc->table.lines[i]);
		break;
	}
	doc->flushed = true;
	doc_release(doc);
	werr = doc->werr;
	doc->werr = 0;
	pthread_mutex_unlock(&doc->lock);
	if (doc->lost) {
		cli_warn("out of memory: %zu rows left out of the output", doc->lost);
		doc->lost = 0;
		fflush(o);
		return -ENOMEM;
	}
	if (fflush(o) != 0 || ferror(o) || werr)
		return errno == EPIPE || werr == EPIPE ? 0 : -(werr ? werr : errno ? errno : EIO);
	return prom_rc;
}
