/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The escapers of src/output/output.c, through its entry points: a JSON string
 * (out_json_str, and out_line's KEY_bytes beside an escaped one), a
 * Prometheus label value (a per-file series and --prom-label), a
 * key=value value (out_line), the text people see (out_escape, table
 * cells). Each is checked on fixed strings and on a few thousand made-up
 * hostile byte strings: the output must be what its format allows (strict
 * UTF-8 JSON, one sample or one record a line, no control character for a
 * terminal) and must read back to exactly the bytes it was given, so no
 * two names print the same.
 */
#include "cli.h"
#include "json.h"
#include "tap.h"

#include <math.h>
#include <stdint.h>

/* ---- running an entry point with stdout (or stderr) into a buffer ---- */

static char *captured(void (*fn)(void *), void *arg)
{
	return tap_capture(1, fn, arg);
}

/* ---- reading the formats back ---- */

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * The text of a JSON string (or Prometheus label value) back to bytes:
 * \\ is a backslash, \xHH (lowercase, 80..ff) byte HH, any other
 * backslash itself (output.c, "JSON strings are strict UTF-8").
 */
static char *text_to_bytes(const char *t)
{
	char *out = malloc(strlen(t) + 1), *o = out;

	while (*t) {
		if (t[0] == '\\' && t[1] == '\\') {
			*o++ = '\\';
			t += 2;
		} else if (t[0] == '\\' && t[1] == 'x' && hexval(t[2]) >= 8 && hexval(t[3]) >= 0) {
			*o++ = (char)(hexval(t[2]) * 16 + hexval(t[3]));
			t += 4;
		} else {
			*o++ = *t++;
		}
	}
	*o = 0;
	return out;
}

/* C escapes (\\ \n \t \r \" \xhh) back to bytes; NULL: an escape no writer makes */
static char *c_unescape(const char *t, size_t len)
{
	char *out = malloc(len + 1), *o = out;
	const char *end = t + len;

	while (t < end) {
		if (*t != '\\') {
			*o++ = *t++;
			continue;
		}
		if (t + 1 >= end)
			goto bad;
		switch (t[1]) {
		case '\\': *o++ = '\\'; t += 2; break;
		case '"': *o++ = '"'; t += 2; break;
		case 'n': *o++ = '\n'; t += 2; break;
		case 't': *o++ = '\t'; t += 2; break;
		case 'r': *o++ = '\r'; t += 2; break;
		case 'x':
			if (t + 3 >= end || hexval(t[2]) < 0 || hexval(t[3]) < 0)
				goto bad;
			*o++ = (char)(hexval(t[2]) * 16 + hexval(t[3]));
			t += 4;
			break;
		default:
			goto bad;
		}
	}
	*o = 0;
	return out;
bad:
	free(out);
	return NULL;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *unbase64(const char *s)
{
	size_t n = strlen(s);
	char *out = calloc(1, n + 1), *o = out;

	for (size_t i = 0; i + 4 <= n; i += 4) {
		uint32_t v = 0;
		int pad = 0;

		for (int k = 0; k < 4; k++) {
			const char *c = strchr(b64, s[i + k]);

			if (s[i + k] == '=') {
				pad++;
				v <<= 6;
			} else if (c && s[i + k]) {
				v = v << 6 | (uint32_t)(c - b64);
			} else {
				free(out);
				return NULL;
			}
		}
		*o++ = (char)(v >> 16);
		if (pad < 2)
			*o++ = (char)(v >> 8);
		if (pad < 1)
			*o++ = (char)v;
	}
	return out;
}

/*
 * Is s valid UTF-8 (shortest form, no surrogates)? With for_terminal,
 * also without a C0, DEL, C1 or bidi control: what a terminal must not get.
 */
static int utf8_clean(const char *s, int for_terminal)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = *p < 0x80 ? 1 : *p >= 0xc2 && *p <= 0xdf ? 2 : *p >= 0xe0 && *p <= 0xef ? 3
			: *p >= 0xf0 && *p <= 0xf4 ? 4 : 0;

		if (!n)
			return 0;
		for (int i = 1; i < n; i++)
			if ((p[i] & 0xc0) != 0x80)
				return 0;
		if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xf0 && p[1] < 0x90) ||
		    (p[0] == 0xed && p[1] >= 0xa0) || (p[0] == 0xf4 && p[1] >= 0x90))
			return 0;
		if (for_terminal &&
		    (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] < 0xa0) ||
		     (p[0] == 0xd8 && p[1] == 0x9c) ||
		     (p[0] == 0xe2 && p[1] == 0x80 &&
		      (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) ||
		     (p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)))
			return 0;	/* C0, DEL, C1, bidi */
		p += n;
	}
	return 1;
}

/* ---- made-up hostile names ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* A NUL-terminated string of the pieces escapers trip over, 0 to ~30 bytes. */
static void hostile(char *buf, size_t len)
{
	static const char *const pieces[] = {
		"\\", "\\", "x", "8", "9", "a", "f", "0", "e", "\"", "\n", "\t", "\r", " ", "=",
		"\x1b", "\x7f", "\x01", "\xc2\x9b", "\xc2\x85", "\xc3\xa9", "\xe6\x97\xa5",
		"\xe2\x80\xae", "\xd8\x9c", "\xf0\x9f\x98\x80", "\xc0\xaf", "\xed\xa0\x80",
		"\xf4\x90\x80\x80", "\xe6\x97", "A", "/", "{", "}", "%", "-", "#", ",", "'",
	};
	size_t n = 0, want = rnd(12);

	for (size_t i = 0; i < want; i++) {
		const char *p;
		char b[2] = { 0 };

		if (rnd(6) == 0) {
			b[0] = (char)(0x80 + rnd(128));	/* a stray high byte */
			p = b;
		} else {
			p = pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))];
		}
		if (n + strlen(p) + 1 > len)
			break;
		memcpy(buf + n, p, strlen(p));
		n += strlen(p);
	}
	buf[n] = 0;
}

#define NRANDOM 3000

/* ---- JSON ---- */

static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	out_json_str(m, s);
	fclose(m);
	return buf;
}

/* The JSON string's decoded value (NULL: not valid JSON), its length in *n */
static char *json_value(const char *json, size_t *n)
{
	struct pc_json *j;
	const char *v;
	char *r = NULL;

	if (pc_json_parse(json, strlen(json), NULL, &j, NULL) < 0)
		return NULL;
	v = pc_json_string(j, n);
	if (v) {
		r = malloc(*n + 1);
		memcpy(r, v, *n + 1);
	}
	pc_json_free(j);
	return r;
}

static void json_is(const char *s, const char *want, const char *name)
{
	char *got = json_of(s);

	if (!ok(!strcmp(got, want), "json: %s", name))
		printf("#   got  %s\n#   want %s\n", got, want);
	free(got);
}

static void test_json_fixed(void)
{
	json_is("plain/name.db", "\"plain/name.db\"", "plain ASCII as it is");
	json_is("caf\xc3\xa9 \xe6\x97\xa5", "\"caf\xc3\xa9 \xe6\x97\xa5\"", "UTF-8 as it is");
	json_is("a\"b", "\"a\\\"b\"", "a quote escaped");
	json_is("a\\b", "\"a\\\\b\"", "a lone backslash is the text \\");
	json_is("a\\\\b", "\"a\\\\\\\\\\\\b\"", "two backslashes: the first doubled in the text");
	json_is("\xff", "\"\\\\xff\"", "a stray byte is the text \\xff");
	json_is("\\xff", "\"\\\\\\\\xff\"", "the four characters \\xff get a doubled backslash");
	json_is("\\xE9", "\"\\\\xE9\"", "uppercase \\xE9 is no escape: as it is");
	json_is("pc\\x2dfoo.service", "\"pc\\\\x2dfoo.service\"", "systemd's \\x2d as it is");
	json_is("\xc0\xaf", "\"\\\\xc0\\\\xaf\"", "an overlong sequence is two stray bytes");
	json_is("\xed\xa0\x80", "\"\\\\xed\\\\xa0\\\\x80\"", "an encoded surrogate is bytes");
	json_is("\xe6\x97", "\"\\\\xe6\\\\x97\"", "a truncated sequence is bytes");
	json_is("\n\t\r\b\f", "\"\\n\\t\\r\\b\\f\"", "C0 controls by their short escapes");
	json_is("\x1b[2J\x01", "\"\\u001b[2J\\u0001\"", "other C0 controls as \\u00XX");
	json_is("\x7f\xc2\x9b", "\"\\u007f\\u009b\"", "DEL and C1 (CSI) as \\u00XX too");
	json_is("", "\"\"", "the empty string");
}

static void test_json_random(void)
{
	int bad_json = 0, not_back = 0;
	char s[64];

	for (int i = 0; i < NRANDOM; i++) {
		char *json, *val, *back;
		size_t n;

		hostile(s, sizeof(s));
		json = json_of(s);
		val = json_value(json, &n);
		if (!val || strlen(val) != n) {
			if (!bad_json++)
				printf("#   not strict JSON (or a NUL in it): %s\n", json);
			free(json);
			free(val);
			continue;
		}
		back = text_to_bytes(val);
		if (strcmp(back, s) && !not_back++)
			printf("#   %s reads back as other bytes\n", json);
		free(back);
		free(val);
		free(json);
	}
	ok(!bad_json, "json: %d hostile names are strict UTF-8 JSON strings (%d not)", NRANDOM,
	   bad_json);
	ok(!not_back, "json: each reads back to its own bytes (%d did not)", not_back);
}

/* out_line in JSON: {"path": TEXT} and "path_bytes" exactly where TEXT is not the bytes */
static const char *line_arg;

static void line_json(void *arg)
{
	struct orec r = { 0 };

	(void)arg;
	out_init(OUT_JSON, false, false);
	orec_str(&r, "path", line_arg, 0);
	orec_u64(&r, "n", 1, 0);
	out_line(&r);
}

static int check_bytes_member(const char *s, int verbose)
{
	char *out, *bytes = NULL, *text = NULL;
	struct pc_json *j;
	const struct pc_json *p, *b;
	int good = 0;

	line_arg = s;
	out = captured(line_json, NULL);
	if (pc_json_parse(out, strlen(out), NULL, &j, NULL) < 0) {
		if (verbose)
			printf("#   not JSON: %s", out);
		free(out);
		return 0;
	}
	p = pc_json_get(j, "path");
	b = pc_json_get(j, "path_bytes");
	if (pc_json_string(p, NULL)) {
		text = strdup(pc_json_string(p, NULL));
		if (b)
			bytes = unbase64(pc_json_string(b, NULL) ? pc_json_string(b, NULL) : "!");
		char *back = text_to_bytes(text);

		if (!strcmp(text, s))
			good = !b;		/* the text is the bytes: no path_bytes */
		else
			good = bytes && !strcmp(bytes, s);
		good = good && !strcmp(back, s);	/* and the text reads back to them */
		free(back);
		/* one line, and nothing else in it */
		good = good && pc_json_number(pc_json_get(j, "n"), 0) == 1 &&
		       pc_json_count(j) == 2u + !!b && strchr(out, '\n') == out + strlen(out) - 1;
	}
	if (!good && verbose)
		printf("#   %s", out);
	pc_json_free(j);
	free(text);
	free(bytes);
	free(out);
	return good;
}

static void test_json_bytes(void)
{
	char s[64];
	int bad = 0;
	char *out;

	ok(check_bytes_member("plain", 1), "json: no path_bytes where the text is the name");
	ok(check_bytes_member("caf\xc3\xa9\n\x1b", 1), "json: none for UTF-8 and controls either");
	ok(check_bytes_member("a\xff" "b", 1), "json: path_bytes beside a stray byte's \\xff");
	ok(check_bytes_member("a\\\\b", 1), "json: path_bytes beside a doubled backslash");
	line_arg = "a\xff";
	out = captured(line_json, NULL);
	ok(strstr(out, "\"path_bytes\": \"Yf8=\"") != NULL, "json: path_bytes is base64 (Yf8=)");
	free(out);
	for (int i = 0; i < NRANDOM / 3; i++) {
		hostile(s, sizeof(s));
		bad += !check_bytes_member(s, !bad);
	}
	ok(!bad, "json: out_line of %d hostile names: one line, path_bytes exactly where needed "
	   "and right (%d not)", NRANDOM / 3, bad);
}

static void line_f64(void *arg)
{
	struct orec r = { 0 };

	out_init(OUT_JSON, false, false);
	orec_f64(&r, "x", *(double *)arg);
	out_line(&r);
}

static void test_json_numbers(void)
{
	double v[] = { 0.0 / 0.0, 1.0 / 0.0, -1.0 / 0.0, 0.5 };
	const char *want[] = { "{\"x\": null}\n", "{\"x\": null}\n", "{\"x\": null}\n",
			       "{\"x\": 0.5}\n" };

	for (int i = 0; i < 4; i++) {
		char *out = captured(line_f64, &v[i]);

		ok(!strcmp(out, want[i]), "json: %g is %s", v[i], want[i][6] == 'n' ? "null" : "0.5");
		free(out);
	}
}

/* ---- Prometheus ---- */

static const struct ometric prom_m[] = {
	{ "files", "path", "path", OM_LABEL | OM_PER_FILE, "" },
	{ "files", "cached", "cached_pages", OM_PER_FILE, "Test pages." },
};

static void prom_doc(void *arg)
{
	struct orec r = { 0 };

	out_init(OUT_PROM, false, false);
	out_prom_metrics("t", prom_m, 2);
	out_prom_opts(true, NULL);
	orec_str(&r, "path", arg, 0);
	orec_u64(&r, "cached", 7, 0);
	out_list_add("files", &r);
	out_flush();
}

/*
 * The label value of the one sample of pagecache_t_cached_pages, with
 * the exposition format's escapes undone; NULL: not one well-formed line.
 */
static char *prom_value_of(const char *doc, const char *label)
{
	char key[64];
	const char *line = strstr(doc, "\npagecache_t_cached_pages{"), *v, *e;

	if (!line || strstr(line + 1, "\npagecache_t_cached_pages"))
		return NULL;
	snprintf(key, sizeof(key), "%s=\"", label);
	v = strstr(line, key);
	if (!v || v > strchr(line + 1, '\n'))
		return NULL;
	v += strlen(key);
	for (e = v; *e && *e != '"' && *e != '\n'; e += *e == '\\' ? 2 : 1)
		if (*e == '\\' && e[1] != '\\' && e[1] != '"' && e[1] != 'n')
			return NULL;
	if (*e != '"')
		return NULL;
	return c_unescape(v, (size_t)(e - v));
}

static void test_prom(void)
{
	static const struct { const char *in, *want; } fixed[] = {
		{ "/srv/db", "{path=\"/srv/db\"} 7\n" },
		{ "a\"b", "{path=\"a\\\"b\"} 7\n" },
		{ "a\nb", "{path=\"a\\nb\"} 7\n" },
		{ "a\\b", "{path=\"a\\\\b\"} 7\n" },
		{ "a/\xff\"b", "{path=\"a/\\\\xff\\\"b\"} 7\n" },
		{ "\\xff", "{path=\"\\\\\\\\xff\"} 7\n" },
		{ "caf\xc3\xa9", "{path=\"caf\xc3\xa9\"} 7\n" },
	};
	char s[64];
	int bad = 0;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		char *out = captured(prom_doc, (void *)fixed[i].in);

		if (!ok(strstr(out, fixed[i].want) != NULL, "prom: label value %.*s",
			(int)strlen(fixed[i].want) - 3, fixed[i].want))
			printf("#   got: %s", out);
		free(out);
	}
	for (int i = 0; i < NRANDOM; i++) {
		char *out, *val, *back = NULL;

		hostile(s, sizeof(s));
		out = captured(prom_doc, s);
		val = prom_value_of(out, "path");
		if (val)
			back = text_to_bytes(val);
		/* the label reads back, and the whole text is UTF-8 (Prometheus takes nothing else) */
		if ((!back || strcmp(back, s) || !utf8_clean(out, 0)) && !bad++)
			printf("#   %s", out);
		free(back);
		free(val);
		free(out);
	}
	ok(!bad, "prom: %d hostile names: one sample each, label values read back to their "
	   "bytes (%d not)", NRANDOM, bad);
}

struct label_call {
	const char *nv;
	int rc;
};

static void label_call(void *arg)
{
	struct label_call *c = arg;

	c->rc = out_prom_label(c->nv);
}

/* out_prom_label's result, what it said on stderr in *err (NULL: dropped) */
static int prom_label_rc(const char *nv, char **err)
{
	struct label_call c = { nv, 0 };
	char *e = tap_capture(2, label_call, &c);

	if (err)
		*err = e;
	else
		free(e);
	return c.rc;
}

static void test_prom_label(void)
{
	static const char *const refused[] = {
		"novalue", "=x", "1a=x", "a-b=x", "__name=x", "path=x", "cgroup=x",
	};
	const char *site = "site=r\xff\"1\n\\x";
	char *out, *err, *val, *back;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int rc = prom_label_rc(refused[i], &err);

		ok(rc == -1 && strstr(err, "--prom-label"), "prom: --prom-label %s refused (%s)",
		   refused[i], rc == -1 ? "said" : "taken");
		free(err);
	}
	ok(prom_label_rc(site, NULL) == 0, "prom: --prom-label with a hostile value is taken");
	ok(prom_label_rc("site=other", &err) == -1 && strstr(err, "twice"),
	   "prom: the same label name twice is refused");
	free(err);
	out = captured(prom_doc, "f");
	val = prom_value_of(out, "site");
	back = val ? text_to_bytes(val) : NULL;
	ok(back && !strcmp(back, strchr(site, '=') + 1),
	   "prom: --prom-label's value is escaped as a name is, and reads back");
	ok(strstr(out, "pagecache_t_cached_pages{site=\"") != NULL &&
	   strstr(out, ",path=\"f\"} ") != NULL, "prom: --prom-label first, the row's label after");
	ok(strstr(out, "pagecache_t_last_run_timestamp_seconds{site=") != NULL,
	   "prom: and on the last-run series too");
	free(back);
	free(val);
	free(out);
}

/* ---- key=value ---- */

static void line_kv(void *arg)
{
	struct orec r = { 0 };

	out_init(OUT_KV, false, false);
	orec_str(&r, "path", arg, 0);
	orec_u64(&r, "n", 3, 0);
	out_line(&r);
}

/* path=VALUE n=3\n: VALUE read back, NULL if the line is not that */
static char *kv_value_of(const char *line)
{
	const char *v = line + 5, *e;

	if (strncmp(line, "path=", 5) || strchr(line, '\n') != line + strlen(line) - 1)
		return NULL;
	if (*v != '"') {
		e = strchr(v, ' ');
		if (!e || strcmp(e, " n=3\n"))
			return NULL;
		return strndup(v, (size_t)(e - v));
	}
	for (e = v + 1; *e && *e != '"'; e += *e == '\\' ? 2 : 1)
		;
	if (*e != '"' || strcmp(e + 1, " n=3\n"))
		return NULL;
	return c_unescape(v + 1, (size_t)(e - v - 1));
}

static void kv_is(const char *s, const char *want, const char *name)
{
	char *out = captured(line_kv, (void *)s);

	if (!ok(!strncmp(out, want, strlen(want)) && !strcmp(out + strlen(want), " n=3\n"),
		"kv: %s", name))
		printf("#   got %s", out);
	free(out);
}

static void test_kv(void)
{
	char s[64];
	int bad = 0;

	kv_is("/srv/db", "path=/srv/db", "a plain value as it is");
	kv_is("caf\xc3\xa9", "path=caf\xc3\xa9", "UTF-8 as it is");
	kv_is("", "path=\"\"", "the empty string quoted");
	kv_is("a b", "path=\"a b\"", "a space quoted");
	kv_is("a\"b\\c", "path=\"a\\\"b\\\\c\"", "quote and backslash escaped");
	kv_is("a\nb\tc\rd", "path=\"a\\nb\\tc\\rd\"", "newline, tab, CR escaped");
	kv_is("\x1b\x7f\xff", "path=\"\\x1b\\x7f\\xff\"", "ESC, DEL, a stray byte as \\xNN");
	kv_is("\xc2\x9b", "path=\"\\xc2\\x9b\"", "C1 (CSI) as bytes");
	kv_is("a=b", "path=a=b", "an '=' in a value needs no quotes (the first splits)");
	for (int i = 0; i < NRANDOM; i++) {
		char *out, *val;

		hostile(s, sizeof(s));
		out = captured(line_kv, s);
		val = kv_value_of(out);
		if ((!val || strcmp(val, s)) && !bad++)
			printf("#   %s", out);
		free(val);
		free(out);
	}
	ok(!bad, "kv: %d hostile values: one line of pairs, each reads back (%d not)", NRANDOM,
	   bad);
}

/* ---- for people ---- */

static void esc_is(const char *s, const char *want, const char *name)
{
	char *got = out_escape(s);

	if (!ok(got && !strcmp(got, want), "human: %s", name))
		printf("#   got %s\n", got ? got : "(null)");
	free(got);
}

static void test_human(void)
{
	char s[64];
	int bad = 0;

	esc_is("plain caf\xc3\xa9 \xe6\x97\xa5", "plain caf\xc3\xa9 \xe6\x97\xa5",
	       "text and UTF-8 as they are");
	esc_is("a\\b", "a\\\\b", "a backslash doubled");
	esc_is("a\nb\tc\rd", "a\\nb\\tc\\rd", "newline, tab, CR");
	esc_is("\x1b[2J\x7f", "\\x1b[2J\\x7f", "ESC and DEL");
	esc_is("\xc2\x9b" "1m", "\\xc2\\x9b1m", "C1's CSI as its bytes");
	esc_is("evil\xe2\x80\xae" "fdp.exe", "evil\\xe2\\x80\\xaefdp.exe",
	       "a bidi override as its bytes");
	esc_is("\xd8\x9c", "\\xd8\\x9c", "the Arabic letter mark (bidi) as its bytes");
	esc_is("\xff\xc0\xaf", "\\xff\\xc0\\xaf", "bytes that are not UTF-8");
	for (int i = 0; i < NRANDOM; i++) {
		char *got, *back;

		hostile(s, sizeof(s));
		got = out_escape(s);
		back = got ? c_unescape(got, strlen(got)) : NULL;
		if ((!back || strcmp(back, s) || !utf8_clean(got, 1)) && !bad++)
			printf("#   %s\n", got ? got : "(null)");
		free(back);
		free(got);
	}
	ok(!bad, "human: %d hostile names: nothing a terminal acts on, and each reads back "
	   "(%d not)", NRANDOM, bad);
}

static const struct ocol tcols[] = {
	{ "path", "FILE", true },
	{ "cached", "CACHED", false },
};

struct table_call {
	bool raw;
	const char *name;
};

static void table_doc(void *arg)
{
	struct table_call *c = arg;
	struct orec r = { 0 };

	out_init(OUT_HUMAN, true, false);
	out_set_raw(c->raw);
	out_columns("files", tcols, 2);
	orec_str(&r, "path", c->name, 0);
	orec_u64(&r, "cached", 5, OF_BYTES);
	out_list_add("files", &r);
	out_flush();
	out_set_raw(false);
}

static void test_table(void)
{
	struct table_call aligned = { false, "x\ny\x1b[2J" }, raw = { true, "a b\\x20" };
	char *out = captured(table_doc, &aligned);

	if (!ok(!strcmp(out, "FILE        CACHED\nx\\ny\\x1b[2J      5\n"),
		"table: a cell with a newline and ESC is one escaped row"))
		printf("#   got %s", out);
	free(out);
	out = captured(table_doc, &raw);
	if (!ok(!strcmp(out, "FILE CACHED\na\\x20b\\\\x20 5\n"),
		"table, raw: a space is \\x20, a name's own \\x20 stays distinct"))
		printf("#   got %s", out);
	free(out);
}

/*
 * Two documents filled in turn: each keeps its own lists and renderer
 * settings (-r, the table's columns), and the default one is untouched.
 */
static void two_docs(void *arg)
{
	struct out_doc *a = out_doc_new(), *b = out_doc_new(), *old;
	struct orec r = { 0 };

	(void)arg;
	old = out_doc_use(a);
	out_init(OUT_HUMAN, true, false);
	out_set_raw(true);
	out_columns("files", tcols, 2);
	out_doc_use(b);
	out_init(OUT_KV, true, false);
	orec_str(&r, "path", "b c", 0);
	orec_u64(&r, "cached", 2, OF_BYTES);
	out_list_add("files", &r);
	out_doc_use(a);
	orec_str(&r, "path", "a", 0);
	orec_u64(&r, "cached", 1, OF_BYTES);
	out_list_add("files", &r);
	out_flush();
	out_doc_use(b);
	out_flush();
	out_doc_use(old);
	out_doc_free(a);
	out_doc_free(b);
	out_doc_free(NULL);
}

static void test_docs(void)
{
	char *out = captured(two_docs, NULL);

	if (!ok(!strcmp(out, "FILE CACHED\na 1\npath=\"b c\" cached=2\n"),
		"documents: two filled in turn render apart, each with its own settings"))
		printf("#   got %s", out);
	free(out);
}

/* An array of numbers in each format: arg is the format */
static void nums_doc(void *arg)
{
	static const struct ocol cols[] = { { "v", "V", true }, { "u", "U", false } };
	const double v[] = { 1, 2.5, NAN };
	const uint64_t u[] = { 1024, 3 };
	struct orec r = { 0 };

	out_init(*(enum out_fmt *)arg, false, false);
	out_prom_metrics("t", NULL, 0);
	out_columns("rows", cols, 2);
	orec_f64s(&r, "v", v, 3, 0);
	orec_u64s(&r, "u", u, 2, OF_BYTES);
	orec_u64s(&r, "none", NULL, 0, 0);
	out_list_add("rows", &r);
	out_flush();
}

static void test_nums(void)
{
	static const struct { enum out_fmt fmt; const char *want, *name; } c[] = {
		{ OUT_JSON, "{\n  \"rows\": [{\n      \"v\": [1, 2.5, null],\n"
			    "      \"u\": [1024, 3],\n      \"none\": []\n    }]\n}\n",
		  "arrays: JSON [1, 2.5, null], integers exact, empty []" },
		{ OUT_KV, "v=1,2.5,nan u=1024,3 none=\"\"\n",
		  "arrays: key=value comma-separated, exact, empty \"\"" },
		{ OUT_HUMAN, "V            U\n1,2.5,nan 1K,3\n",
		  "arrays: the table comma-separated, sizes for people" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *out = captured(nums_doc, (void *)&c[i].fmt);

		if (!ok(!strcmp(out, c[i].want), "%s", c[i].name))
			printf("#   got %s", out);
		free(out);
	}
}

/*
 * top's table: fixed widths (a wider cell widens its own row only), the
 * header over no rows, written to a memory stream, not stdout.
 */
static void fixed_doc(void *arg)
{
	static const unsigned w[] = { 6, 0 };
	static const struct ocol cols[] = { { "n", "N", false }, { "name", "NAME", true } };
	const char *const names[] = { "a", "b" };
	const uint64_t n[] = { 7, 12345678 };
	int rows = *(int *)arg;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct out_doc *d = out_doc_new(), *old = out_doc_use(d);

	out_init(OUT_HUMAN, false, false);
	out_keep_header(true);
	out_set_file(m);
	out_columns("rows", cols, 2);
	out_column_widths("rows", w);
	for (int i = 0; i < rows; i++) {
		struct orec r = { 0 };

		orec_u64(&r, "n", n[i], 0);
		orec_str(&r, "name", names[i], 0);
		out_list_add("rows", &r);
	}
	out_flush();
	out_doc_use(old);
	out_doc_free(d);
	fclose(m);
	printf("[%s]", buf);
	free(buf);
}

static void test_fixed(void)
{
	int two = 2, none = 0;
	char *out = captured(fixed_doc, &two);

	if (!ok(!strcmp(out, "[     N NAME\n     7 a\n12345678 b\n]"),
		"table: fixed widths, a wider cell widens its own row, into a stream"))
		printf("#   got %s\n", out);
	free(out);
	out = captured(fixed_doc, &none);
	if (!ok(!strcmp(out, "[     N NAME\n]"), "table: the header kept over no rows"))
		printf("#   got %s\n", out);
	free(out);
}

/* ---- small pure helpers ---- */

static void test_helpers(void)
{
	char buf[32];

	ok(!strcmp(fmt_percent(999999, 1000000, buf, sizeof(buf)), "99.9%"),
	   "fmt_percent: a partial residency is never 100%%");
	ok(!strcmp(fmt_percent(1, 1000000000, buf, sizeof(buf)), "<0.1%"),
	   "fmt_percent: a few pages are <0.1%%, not 0.0%%");
	ok(!strcmp(fmt_percent(0, 10, buf, sizeof(buf)), "0.0%"), "fmt_percent: none is 0.0%%");
	ok(!strcmp(fmt_percent(10, 10, buf, sizeof(buf)), "100.0%"), "fmt_percent: all is 100.0%%");
	ok(!strcmp(fmt_percent(0, 0, buf, sizeof(buf)), "-"),
	   "fmt_percent: a share of nothing is -, never 100%% (issue 27)");
	ok(is_json_flag("--json") && is_json_flag("--json=short") && is_json_flag("--js"),
	   "is_json_flag: --json, --json=STYLE and a prefix getopt takes");
	ok(!is_json_flag("--jsonx") && !is_json_flag("--") && !is_json_flag("-J") &&
	   !is_json_flag("--kv"), "is_json_flag: not --jsonx, --, -J (a letter), --kv");
}

int main(void)
{
	cli_cmd = "test";
	test_json_fixed();
	test_json_random();
	test_json_bytes();
	test_json_numbers();
	test_prom();
	test_prom_label();
	test_kv();
	test_human();
	test_table();
	test_docs();
	test_nums();
	test_fixed();
	test_helpers();
	return done_testing();
}
