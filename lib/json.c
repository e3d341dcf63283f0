/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json.c: the strict JSON reader and canonical writer of json.h.
 *
 * Recursive descent, depth-limited, over a length-bounded buffer (never
 * reads text[len]). Values being built wait on one growing stack; when a
 * container closes, its children are copied in one piece into an arena
 * that the root owns, so a tree is freed in a few calls and an error
 * half-way leaks nothing. Numbers are read and written in the C locale
 * whatever the program's, so "1.5" means the same everywhere.
 */
#define _GNU_SOURCE
#include "json.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct jkey {
	const char *s;			/* NUL-terminated, in the arena */
	size_t len;
};

struct pc_json {
	enum pc_json_type type;
	bool b;
	double num;
	size_t len;			/* string bytes; elements or members */
	const char *str;		/* strings */
	struct pc_json *items;		/* elements, or member values */
	struct jkey *keys;		/* member names, for objects */
};

struct chunk {
	struct chunk *next;
	size_t cap, used;
	max_align_t data[];
};

/* What pc_json_parse hands out: the root, and the memory of its tree. */
struct jdoc {
	struct chunk *chunks;
	struct pc_json root;
};

#define CHUNK_BYTES 65536

/* ---- the C locale, for numbers ---- */

static locale_t c_loc;
static pthread_once_t c_loc_once = PTHREAD_ONCE_INIT;

static void c_loc_init(void)
{
	c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* Switch this thread to the C locale; returns what to switch back to. */
static locale_t c_locale_enter(void)
{
	pthread_once(&c_loc_once, c_loc_init);
	return c_loc ? uselocale(c_loc) : (locale_t)0;
}

static void c_locale_leave(locale_t old)
{
	if (old)
		uselocale(old);
}

/* ---- the arena ---- */

static void *arena_alloc(struct chunk **head, size_t n)
{
	struct chunk *c = *head;
	size_t a = sizeof(max_align_t);

	n = (n + a - 1) / a * a;
	if (!n)
		n = a;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHUNK_BYTES / 2 ? n : CHUNK_BYTES;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		if (*head && cap == n && (*head)->cap - (*head)->used >= a) {
			/* a big one-off: keep filling the current chunk */
			c->next = (*head)->next;
			(*head)->next = c;
		} else {
			c->next = *head;
			*head = c;
		}
	}
	c->used += n;
	return (char *)c->data + c->used - n;
}

static void arena_free(struct chunk *c)
{
	while (c) {
		struct chunk *next = c->next;

		free(c);
		c = next;
	}
}

/* ---- the parser ---- */

struct pkey {
	struct jkey k;
	size_t off;			/* where the name starts, for errors */
};

struct parser {
	const char *s;
	size_t len, pos;
	unsigned max_depth;
	struct chunk *arena;
	struct pc_json *vals;		/* values waiting for their container */
	size_t nvals, capvals;
	struct pkey *keys;		/* member names waiting likewise */
	size_t nkeys, capkeys;
	struct pc_json_error *err;
	int rc;
};

static int fail(struct parser *p, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct parser *p, size_t off, const char *fmt, ...)
{
	struct pc_json_error *e = p->err;
	va_list ap;

	if (p->rc)
		return p->rc;
	p->rc = -EINVAL;
	if (!e)
		return p->rc;
	e->offset = off;
	e->line = 1;
	e->column = 1;
	for (size_t i = 0; i < off && i < p->len; i++) {
		if (p->s[i] == '\n') {
			e->line++;
			e->column = 1;
		} else {
			e->column++;
		}
	}
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return p->rc;
}

static int nomem(struct parser *p)
{
	if (!p->rc) {
		p->rc = -ENOMEM;
		if (p->err) {
			memset(p->err, 0, sizeof(*p->err));
			snprintf(p->err->msg, sizeof(p->err->msg), "out of memory");
		}
	}
	return p->rc;
}

static int fail_end(struct parser *p, const char *inside)
{
	return fail(p, p->len, "unexpected end of input%s%s", *inside ? " in " : "", inside);
}

/* Name a byte in a message: 'x', or 0xNN when it does not print. */
static const char *byte_name(unsigned char c, char *buf, size_t len)
{
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", c);
	return buf;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

static int push(struct parser *p, const struct pc_json *v)
{
	if (p->nvals == p->capvals) {
		size_t nc = p->capvals ? p->capvals * 2 : 32;
		struct pc_json *nv = realloc(p->vals, nc * sizeof(*nv));

		if (!nv)
			return nomem(p);
		p->vals = nv;
		p->capvals = nc;
	}
	p->vals[p->nvals++] = *v;
	return 0;
}

static int push_key(struct parser *p, const char *s, size_t len, size_t off)
{
	if (p->nkeys == p->capkeys) {
		size_t nc = p->capkeys ? p->capkeys * 2 : 32;
		struct pkey *nk = realloc(p->keys, nc * sizeof(*nk));

		if (!nk)
			return nomem(p);
		p->keys = nk;
		p->capkeys = nc;
	}
	p->keys[p->nkeys++] = (struct pkey){ { s, len }, off };
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The 4 hex digits of a \u escape whose 'u' is at pos - 1. */
static int read_hex4(struct parser *p, unsigned *ret)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		int h;

		if (p->pos >= p->len)
			return fail_end(p, "a \\u escape");
		h = hexval(p->s[p->pos]);
		if (h < 0)
			return fail(p, p->pos, "invalid \\u escape: expected 4 hex digits");
		v = v << 4 | (unsigned)h;
		p->pos++;
	}
	*ret = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * One UTF-8 sequence at pos (first byte >= 0x80): its length, or an error.
 * Overlong forms, encoded surrogates and code points past U+10FFFF are
 * refused (RFC 3629's table).
 */
static int utf8_seq(struct parser *p)
{
	const unsigned char *u = (const unsigned char *)p->s + p->pos;
	unsigned char c = u[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return fail(p, p->pos, "invalid UTF-8 (%s)", c >= 0x80 && c < 0xc0 ?
			    "a continuation byte first" : "not a start byte");
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (size_t i = 1; i < n; i++) {
		if (p->pos + i >= p->len)
			return fail_end(p, "a UTF-8 sequence");
		if (u[i] < (i == 1 ? lo : 0x80) || u[i] > (i == 1 ? hi : 0xbf))
			return fail(p, p->pos, "invalid UTF-8 sequence");
	}
	return (int)n;
}

/* A string at pos (its '"'), decoded into the arena. */
static int parse_string(struct parser *p, const char **ret, size_t *ret_len)
{
	size_t raw = 0, n = 0;
	char *o;

	p->pos++;
	/* its raw length bounds the decoded one; to the end if unterminated */
	while (p->pos + raw < p->len && p->s[p->pos + raw] != '"')
		raw += p->s[p->pos + raw] == '\\' ? 2 : 1;
	o = arena_alloc(&p->arena, raw + 1);
	if (!o)
		return nomem(p);
	for (;;) {
		unsigned char c;

		if (p->pos >= p->len)
			return fail_end(p, "a string");
		c = (unsigned char)p->s[p->pos];
		if (c == '"') {
			p->pos++;
			break;
		}
		if (c < 0x20) {
			return fail(p, p->pos, "control character 0x%02x in a string "
				    "(must be escaped)", c);
		} else if (c < 0x80) {
			if (c != '\\') {
				o[n++] = (char)c;
				p->pos++;
				continue;
			}
		} else {
			int k = utf8_seq(p);

			if (k < 0)
				return k;
			memcpy(o + n, p->s + p->pos, (size_t)k);
			n += (size_t)k;
			p->pos += (size_t)k;
			continue;
		}
		/* an escape */
		if (p->pos + 1 >= p->len)
			return fail_end(p, "an escape");
		c = (unsigned char)p->s[++p->pos];
		p->pos++;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			o[n++] = (char)c;
			break;
		case 'b':
			o[n++] = '\b';
			break;
		case 'f':
			o[n++] = '\f';
			break;
		case 'n':
			o[n++] = '\n';
			break;
		case 'r':
			o[n++] = '\r';
			break;
		case 't':
			o[n++] = '\t';
			break;
		case 'u': {
			size_t at = p->pos - 2;
			unsigned cp, lo;

			if (read_hex4(p, &cp) < 0)
				return p->rc;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return fail(p, at, "unpaired surrogate \\u%04x (a low half first)", cp);
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (p->pos < p->len && p->s[p->pos] != '\\')
					return fail(p, at, "unpaired surrogate \\u%04x "
						    "(no low half follows)", cp);
				if (p->pos + 1 >= p->len)
					return fail_end(p, "a surrogate pair");
				if (p->s[p->pos + 1] != 'u')
					return fail(p, at, "unpaired surrogate \\u%04x "
						    "(no low half follows)", cp);
				p->pos += 2;
				if (read_hex4(p, &lo) < 0)
					return p->rc;
				if (lo < 0xdc00 || lo > 0xdfff)
					return fail(p, at, "unpaired surrogate \\u%04x "
						    "(\\u%04x follows)", cp, lo);
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			n += put_utf8(o + n, cp);
			break;
		}
		default: {
			char b[16];

			return fail(p, p->pos - 2, "invalid escape '\\' then %s",
				    byte_name(c, b, sizeof(b)));
		}
		}
	}
	o[n] = 0;
	*ret = o;
	*ret_len = n;
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int parse_number(struct parser *p)
{
	size_t start = p->pos, n;
	struct pc_json v = { .type = PC_JSON_NUMBER };
	char small[64], *buf = small, *end;

	if (p->s[p->pos] == '-')
		p->pos++;
	if (p->pos >= p->len)
		return fail_end(p, "a number");
	if (p->s[p->pos] == '0') {
		p->pos++;
		if (p->pos < p->len && is_digit(p->s[p->pos]))
			return fail(p, p->pos - 1, "leading zero in a number");
	} else if (is_digit(p->s[p->pos])) {
		while (p->pos < p->len && is_digit(p->s[p->pos]))
			p->pos++;
	} else {
		return fail(p, p->pos, "expected a digit");
	}
	if (p->pos < p->len && p->s[p->pos] == '.') {
		p->pos++;
		if (p->pos >= p->len)
			return fail_end(p, "a number");
		if (!is_digit(p->s[p->pos]))
			return fail(p, p->pos, "expected a digit after '.'");
		while (p->pos < p->len && is_digit(p->s[p->pos]))
			p->pos++;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		p->pos++;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		if (p->pos >= p->len)
			return fail_end(p, "a number");
		if (!is_digit(p->s[p->pos]))
			return fail(p, p->pos, "expected a digit in the exponent");
		while (p->pos < p->len && is_digit(p->s[p->pos]))
			p->pos++;
	}
	/* the grammar is checked: strtod only converts (text has no NUL) */
	n = p->pos - start;
	if (n >= sizeof(small) && !(buf = malloc(n + 1)))
		return nomem(p);
	memcpy(buf, p->s + start, n);
	buf[n] = 0;
	v.num = strtod(buf, &end);
	if (buf != small)
		free(buf);
	if (isinf(v.num))
		return fail(p, start, "number out of range");
	return push(p, &v);
}

static int parse_literal(struct parser *p)
{
	static const struct { const char *word; struct pc_json v; } lits[] = {
		{ "true", { .type = PC_JSON_BOOL, .b = true } },
		{ "false", { .type = PC_JSON_BOOL } },
		{ "null", { .type = PC_JSON_NULL } },
	};

	for (size_t i = 0; i < sizeof(lits) / sizeof(lits[0]); i++) {
		size_t wl = strlen(lits[i].word), have = p->len - p->pos;

		if (lits[i].word[0] != p->s[p->pos])
			continue;
		if (have < wl && !memcmp(p->s + p->pos, lits[i].word, have))
			return fail_end(p, lits[i].word);
		if (have < wl || memcmp(p->s + p->pos, lits[i].word, wl))
			return fail(p, p->pos, "invalid literal (expected '%s')", lits[i].word);
		p->pos += wl;
		return push(p, &lits[i].v);
	}
	return fail(p, p->pos, "invalid literal");
}

static int parse_value(struct parser *p, unsigned depth);

/* Move the values (and names) above the marks into the arena as one container. */
static int close_container(struct parser *p, size_t vmark, size_t kmark, enum pc_json_type t)
{
	struct pc_json v = { .type = t, .len = p->nvals - vmark };

	if (v.len) {
		v.items = arena_alloc(&p->arena, v.len * sizeof(*v.items));
		if (!v.items)
			return nomem(p);
		memcpy(v.items, p->vals + vmark, v.len * sizeof(*v.items));
	}
	if (t == PC_JSON_OBJECT && v.len) {
		v.keys = arena_alloc(&p->arena, v.len * sizeof(*v.keys));
		if (!v.keys)
			return nomem(p);
		for (size_t i = 0; i < v.len; i++)
			v.keys[i] = p->keys[kmark + i].k;
	}
	p->nvals = vmark;
	p->nkeys = kmark;
	return push(p, &v);
}

static int cmp_pkey(const void *a, const void *b)
{
	const struct pkey *x = a, *y = b;
	size_t n = x->k.len < y->k.len ? x->k.len : y->k.len;
	int c = memcmp(x->k.s, y->k.s, n);

	if (c)
		return c;
	if (x->k.len != y->k.len)
		return x->k.len < y->k.len ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Member names must be unique: sort a copy, look at neighbours. */
static int check_duplicates(struct parser *p, size_t kmark)
{
	size_t n = p->nkeys - kmark, dup = SIZE_MAX;
	struct pkey *s;

	if (n < 2)
		return 0;
	if (n == 2) {
		const struct pkey *a = &p->keys[kmark], *b = a + 1;

		if (a->k.len == b->k.len && !memcmp(a->k.s, b->k.s, a->k.len))
			return fail(p, b->off, "duplicate member name");
		return 0;
	}
	s = malloc(n * sizeof(*s));
	if (!s)
		return nomem(p);
	memcpy(s, p->keys + kmark, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_pkey);
	for (size_t i = 1; i < n; i++)
		if (s[i].k.len == s[i - 1].k.len && !memcmp(s[i].k.s, s[i - 1].k.s, s[i].k.len) &&
		    s[i].off < dup)
			dup = s[i].off;
	free(s);
	if (dup != SIZE_MAX)
		return fail(p, dup, "duplicate member name");
	return 0;
}

static int parse_array(struct parser *p, unsigned depth)
{
	size_t vmark = p->nvals;
	char b[16];

	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == ']') {
		p->pos++;
		return close_container(p, vmark, p->nkeys, PC_JSON_ARRAY);
	}
	for (;;) {
		if (parse_value(p, depth) < 0)
			return p->rc;
		skip_ws(p);
		if (p->pos >= p->len)
			return fail_end(p, "an array");
		if (p->s[p->pos] == ']') {
			p->pos++;
			return close_container(p, vmark, p->nkeys, PC_JSON_ARRAY);
		}
		if (p->s[p->pos] != ',')
			return fail(p, p->pos, "expected ',' or ']' after an element, not %s",
				    byte_name((unsigned char)p->s[p->pos], b, sizeof(b)));
		p->pos++;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ']')
			return fail(p, p->pos, "trailing comma in an array");
	}
}

static int parse_object(struct parser *p, unsigned depth)
{
	size_t vmark = p->nvals, kmark = p->nkeys;
	char b[16];

	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == '}') {
		p->pos++;
		return close_container(p, vmark, kmark, PC_JSON_OBJECT);
	}
	for (;;) {
		const char *name;
		size_t nlen, at = p->pos;

		if (p->pos >= p->len)
			return fail_end(p, "an object");
		if (p->s[p->pos] != '"')
			return fail(p, p->pos, "expected a member name (a string), not %s",
				    byte_name((unsigned char)p->s[p->pos], b, sizeof(b)));
		if (parse_string(p, &name, &nlen) < 0 || push_key(p, name, nlen, at) < 0)
			return p->rc;
		skip_ws(p);
		if (p->pos >= p->len)
			return fail_end(p, "an object");
		if (p->s[p->pos] != ':')
			return fail(p, p->pos, "expected ':' after a member name, not %s",
				    byte_name((unsigned char)p->s[p->pos], b, sizeof(b)));
		p->pos++;
		if (parse_value(p, depth) < 0)
			return p->rc;
		skip_ws(p);
		if (p->pos >= p->len)
			return fail_end(p, "an object");
		if (p->s[p->pos] == '}') {
			p->pos++;
			if (check_duplicates(p, kmark) < 0)
				return p->rc;
			return close_container(p, vmark, kmark, PC_JSON_OBJECT);
		}
		if (p->s[p->pos] != ',')
			return fail(p, p->pos, "expected ',' or '}' after a member, not %s",
				    byte_name((unsigned char)p->s[p->pos], b, sizeof(b)));
		p->pos++;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == '}')
			return fail(p, p->pos, "trailing comma in an object");
	}
}

/* depth: containers already open around this value */
static int parse_value(struct parser *p, unsigned depth)
{
	struct pc_json v = { .type = PC_JSON_STRING };
	char b[16];
	char c;

	skip_ws(p);
	if (p->pos >= p->len)
		return fail_end(p, depth ? "a value" : "");
	c = p->s[p->pos];
	switch (c) {
	case '{':
	case '[':
		if (depth >= p->max_depth)
			return fail(p, p->pos, "nested deeper than %u", p->max_depth);
		return c == '{' ? parse_object(p, depth + 1) : parse_array(p, depth + 1);
	case '"':
		if (parse_string(p, &v.str, &v.len) < 0)
			return p->rc;
		return push(p, &v);
	case 't':
	case 'f':
	case 'n':
		return parse_literal(p);
	default:
		if (c == '-' || is_digit(c))
			return parse_number(p);
		return fail(p, p->pos, "expected a value, not %s",
			    byte_name((unsigned char)c, b, sizeof(b)));
	}
}

int pc_json_parse(const char *text, size_t len, const struct pc_json_opts *o,
		  struct pc_json **ret_root, struct pc_json_error *err)
{
	struct parser p = { .s = text, .len = len, .err = err, .max_depth = PC_JSON_MAX_DEPTH };
	struct jdoc *d = NULL;
	locale_t old;

	if (err)
		memset(err, 0, sizeof(*err));
	if (o && o->max_depth && o->max_depth < PC_JSON_MAX_DEPTH)
		p.max_depth = o->max_depth;
	if (o && o->max_bytes && len > o->max_bytes) {
		fail(&p, o->max_bytes, "larger than the limit of %zu bytes", o->max_bytes);
		return -EFBIG;
	}
	if (!text && len)
		return -EINVAL;
	old = c_locale_enter();
	if (parse_value(&p, 0) == 0) {
		skip_ws(&p);
		if (p.pos < p.len) {
			char b[16];

			fail(&p, p.pos, "%s after the document",
			     byte_name((unsigned char)p.s[p.pos], b, sizeof(b)));
		}
	}
	c_locale_leave(old);
	if (!p.rc) {
		d = malloc(sizeof(*d));
		if (!d) {
			nomem(&p);
		} else {
			d->chunks = p.arena;
			d->root = p.vals[0];
		}
	}
	free(p.vals);
	free(p.keys);
	if (p.rc) {
		arena_free(p.arena);
		return p.rc;
	}
	*ret_root = &d->root;
	return 0;
}

int pc_json_parse_file(const char *path, const struct pc_json_opts *o,
		       struct pc_json **ret_root, struct pc_json_error *err)
{
	int fd, rc;

	if (err)
		memset(err, 0, sizeof(*err));
	fd = pc_sys_openat(AT_FDCWD, path, O_RDONLY);
	if (fd < 0)
		return fd;
	rc = pc_json_parse_fd(fd, o, ret_root, err);
	close(fd);
	return rc;
}

int pc_json_parse_fd(int fd, const struct pc_json_opts *o, struct pc_json **ret_root,
		     struct pc_json_error *err)
{
	size_t max = o && o->max_bytes ? o->max_bytes : SIZE_MAX - 1, len = 0, cap = 4096;
	struct stat st;
	char *buf = NULL;
	int rc = 0;

	if (err)
		memset(err, 0, sizeof(*err));
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (S_ISDIR(st.st_mode))
		rc = -EISDIR;
	else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max)
		rc = -EFBIG;
	else if (S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (size_t)st.st_size + 1;	/* a hint: the file may grow */
	if (!rc && !(buf = malloc(cap)))
		rc = -ENOMEM;
	/* to EOF, whatever the size said (pipes, /proc); max + 1 bytes at most */
	while (!rc) {
		long n;

		if (len == cap) {
			size_t nc = cap > max / 2 ? max + 1 : cap * 2;
			char *nb;

			if (cap > max) {
				rc = -EFBIG;
				break;
			}
			nb = realloc(buf, nc);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap = nc;
		}
		/* a pipe cannot pread: read it (the seam's faults are for files) */
		if (S_ISREG(st.st_mode))
			n = pc_sys_pread(fd, buf + len, cap - len, len);
		else
			do
				n = read(fd, buf + len, cap - len);
			while (n < 0 && errno == EINTR);
		if (n < 0 && !S_ISREG(st.st_mode))
			n = -errno;
		if (n <= 0) {
			rc = (int)n;
			break;
		}
		len += (size_t)n;
	}
	if (!rc && len > max)
		rc = -EFBIG;
	if (!rc)
		rc = pc_json_parse(buf, len, o, ret_root, err);
	else if (rc == -EFBIG && err)
		snprintf(err->msg, sizeof(err->msg), "larger than the limit of %zu bytes", max);
	if (rc == -EFBIG && err)
		err->offset = max;
	free(buf);
	return rc;
}

void pc_json_free(struct pc_json *root)
{
	struct jdoc *d;

	if (!root)
		return;
	d = (struct jdoc *)((char *)root - offsetof(struct jdoc, root));
	arena_free(d->chunks);
	free(d);
}

/* ---- accessors ---- */

enum pc_json_type pc_json_type(const struct pc_json *v)
{
	return v ? v->type : PC_JSON_ABSENT;
}

double pc_json_number(const struct pc_json *v, double dflt)
{
	return v && v->type == PC_JSON_NUMBER ? v->num : dflt;
}

bool pc_json_bool(const struct pc_json *v, bool dflt)
{
	return v && v->type == PC_JSON_BOOL ? v->b : dflt;
}

const char *pc_json_string(const struct pc_json *v, size_t *ret_len)
{
	if (!v || v->type != PC_JSON_STRING)
		return NULL;
	if (ret_len)
		*ret_len = v->len;
	return v->str;
}

size_t pc_json_count(const struct pc_json *v)
{
	return v && (v->type == PC_JSON_ARRAY || v->type == PC_JSON_OBJECT) ? v->len : 0;
}

const struct pc_json *pc_json_at(const struct pc_json *v, size_t i)
{
	return i < pc_json_count(v) ? &v->items[i] : NULL;
}

const char *pc_json_key_at(const struct pc_json *obj, size_t i, size_t *ret_len)
{
	if (!obj || obj->type != PC_JSON_OBJECT || i >= obj->len)
		return NULL;
	if (ret_len)
		*ret_len = obj->keys[i].len;
	return obj->keys[i].s;
}

const struct pc_json *pc_json_get(const struct pc_json *obj, const char *key)
{
	size_t kl;

	if (!obj || obj->type != PC_JSON_OBJECT || !key)
		return NULL;
	kl = strlen(key);
	for (size_t i = 0; i < obj->len; i++)
		if (obj->keys[i].len == kl && !memcmp(obj->keys[i].s, key, kl))
			return &obj->items[i];
	return NULL;
}

/* ---- the canonical writer ---- */

struct sbuf {
	char *s;
	size_t n, cap;
	bool oom;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->cap - b->n < n + 1) {
		size_t nc = b->cap ? b->cap : 256;
		char *ns;

		while (nc - b->n < n + 1)
			nc *= 2;
		ns = realloc(b->s, nc);
		if (!ns) {
			b->oom = true;
			return;
		}
		b->s = ns;
		b->cap = nc;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

static void sb_str(struct sbuf *b, const char *s, size_t n)
{
	size_t run = 0;

	sb_put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[8];

		/*
		 * DEL and the C1 controls (U+0080..U+009F, \xc2\x80..\xc2\x9f:
		 * CSI is U+009B) as \u00XX too, like the CLI's escaper: a
		 * canonical text printed on a terminal cannot drive it.
		 */
		if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] < 0xa0 &&
		    (unsigned char)s[i + 1] >= 0x80) {
			sb_put(b, s + run, i - run);
			snprintf(e, sizeof(e), "\\u%04x", (unsigned char)s[i + 1]);
			sb_put(b, e, 6);
			run = i + 2;
			i++;
			continue;
		}
		if (c >= 0x20 && c != 0x7f && c != '"' && c != '\\')
			continue;
		sb_put(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': sb_put(b, "\\\"", 2); break;
		case '\\': sb_put(b, "\\\\", 2); break;
		case '\b': sb_put(b, "\\b", 2); break;
		case '\f': sb_put(b, "\\f", 2); break;
		case '\n': sb_put(b, "\\n", 2); break;
		case '\r': sb_put(b, "\\r", 2); break;
		case '\t': sb_put(b, "\\t", 2); break;
		default:
			snprintf(e, sizeof(e), "\\u%04x", c);
			sb_put(b, e, 6);
		}
	}
	sb_put(b, s + run, n - run);
	sb_put(b, "\"", 1);
}

/* The shortest text that reads back as the same double. */
static void sb_num(struct sbuf *b, double v)
{
	char t[40];

	if (v == 0) {
		sb_put(b, "0", 1);	/* -0 too */
		return;
	}
	if (fabs(v) < 1e15 && v == trunc(v)) {
		snprintf(t, sizeof(t), "%.0f", v);
	} else {
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(t, sizeof(t), "%.*g", prec, v);
			if (strtod(t, NULL) == v)
				break;
		}
	}
	sb_put(b, t, strlen(t));
}

struct member {
	const struct jkey *k;
	const struct pc_json *v;
};

static int cmp_member(const void *a, const void *b)
{
	const struct jkey *x = ((const struct member *)a)->k, *y = ((const struct member *)b)->k;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static bool omitted(const struct jkey *k, const char *const *omit)
{
	for (; omit && *omit; omit++)
		if (strlen(*omit) == k->len && !memcmp(*omit, k->s, k->len))
			return true;
	return false;
}

static void sb_value(struct sbuf *b, const struct pc_json *v, const char *const *omit)
{
	struct member *m;
	size_t n = 0;

	switch (v->type) {
	case PC_JSON_ABSENT:
	case PC_JSON_NULL:
		sb_put(b, "null", 4);
		return;
	case PC_JSON_BOOL:
		sb_put(b, v->b ? "true" : "false", v->b ? 4 : 5);
		return;
	case PC_JSON_NUMBER:
		sb_num(b, v->num);
		return;
	case PC_JSON_STRING:
		sb_str(b, v->str, v->len);
		return;
	case PC_JSON_ARRAY:
		sb_put(b, "[", 1);
		for (size_t i = 0; i < v->len; i++) {
			if (i)
				sb_put(b, ",", 1);
			sb_value(b, &v->items[i], NULL);
		}
		sb_put(b, "]", 1);
		return;
	case PC_JSON_OBJECT:
		break;
	}
	m = malloc((v->len ? v->len : 1) * sizeof(*m));
	if (!m) {
		b->oom = true;
		return;
	}
	for (size_t i = 0; i < v->len; i++)
		if (!omitted(&v->keys[i], omit))
			m[n++] = (struct member){ &v->keys[i], &v->items[i] };
	qsort(m, n, sizeof(*m), cmp_member);
	sb_put(b, "{", 1);
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_put(b, ",", 1);
		sb_str(b, m[i].k->s, m[i].k->len);
		sb_put(b, ":", 1);
		sb_value(b, m[i].v, NULL);
	}
	sb_put(b, "}", 1);
	free(m);
}

int pc_json_canonical(const struct pc_json *v, const char *const *omit, char **ret)
{
	struct sbuf b = { 0 };
	locale_t old;

	if (!v)
		return -EINVAL;
	old = c_locale_enter();
	sb_value(&b, v, omit);
	c_locale_leave(old);
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	*ret = b.s;
	return 0;
}
