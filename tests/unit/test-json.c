/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The strict JSON reader and the canonical writer (json.c). */
#include "json.h"
#include "pagecache.h"
#include "sys.h"		/* the seam: pc_sys_inject (lib/sys.h) */
#include "tap.h"

#include <locale.h>
#include <math.h>
#include <stdint.h>

static struct pc_json_error jerr;

/* Parse a copy in a buffer of exactly len bytes (ASan sees any overread). */
static int parse_n(const char *text, size_t len, struct pc_json **ret)
{
	char *copy = malloc(len ? len : 1);
	int rc;

	memcpy(copy, text, len);
	*ret = NULL;
	rc = pc_json_parse(copy, len, NULL, ret, &jerr);
	free(copy);
	return rc;
}

static int parse(const char *text, struct pc_json **ret)
{
	return parse_n(text, strlen(text), ret);
}

/* Is the text refused as bad JSON, with a message? */
static int refused(const char *text)
{
	struct pc_json *j;
	int rc = parse(text, &j);

	if (rc == 0)
		pc_json_free(j);
	return rc == -EINVAL && jerr.msg[0];
}

/* Refused at this offset, with a message containing this? */
static int refused_at(const char *text, size_t off, const char *msg)
{
	struct pc_json *j;
	int rc = parse(text, &j);

	if (rc == 0)
		pc_json_free(j);
	if (rc != -EINVAL || jerr.offset != off || !strstr(jerr.msg, msg)) {
		printf("# '%s': rc %d, offset %zu, '%s'\n", text, rc, jerr.offset, jerr.msg);
		return 0;
	}
	return 1;
}

/* The canonical text of a document, or "" */
static char canon_buf[4096];
static const char *canon(const char *text)
{
	struct pc_json *j;
	char *out;

	canon_buf[0] = 0;
	if (parse(text, &j) < 0)
		return "(parse error)";
	if (pc_json_canonical(j, NULL, &out) == 0) {
		snprintf(canon_buf, sizeof(canon_buf), "%s", out);
		free(out);
	}
	pc_json_free(j);
	return canon_buf;
}

static void test_valid(void)
{
	static const char doc[] =
		" {\"bench\": \"swapin\", \"n\": -12.5e-1, \"t\": true, \"f\": false, \"z\": null,\r\n"
		"\t\"list\": [1, [], {}, \"x\"], \"obj\": {\"b\": 2, \"a\": 1}} ";
	const struct pc_json *list, *obj;
	struct pc_json *j;
	size_t len;

	ok(parse(doc, &j) == 0, "a document with every kind of value parses");
	ok(pc_json_type(j) == PC_JSON_OBJECT && pc_json_count(j) == 7, "an object of 7 members");
	ok(!strcmp(pc_json_string(pc_json_get(j, "bench"), &len), "swapin") && len == 6,
	   "a string member");
	ok(pc_json_number(pc_json_get(j, "n"), 0) == -1.25, "a number with fraction and exponent");
	ok(pc_json_bool(pc_json_get(j, "t"), false) && !pc_json_bool(pc_json_get(j, "f"), true),
	   "true and false");
	ok(pc_json_type(pc_json_get(j, "z")) == PC_JSON_NULL, "null");
	ok(pc_json_type(pc_json_get(j, "nope")) == PC_JSON_ABSENT && !pc_json_get(j, "nope"),
	   "a missing member is absent");
	list = pc_json_get(j, "list");
	ok(pc_json_type(list) == PC_JSON_ARRAY && pc_json_count(list) == 4 &&
	   pc_json_number(pc_json_at(list, 0), 0) == 1 &&
	   pc_json_type(pc_json_at(list, 1)) == PC_JSON_ARRAY &&
	   pc_json_count(pc_json_at(list, 1)) == 0 &&
	   pc_json_type(pc_json_at(list, 2)) == PC_JSON_OBJECT &&
	   !strcmp(pc_json_string(pc_json_at(list, 3), NULL), "x") && !pc_json_at(list, 4),
	   "an array, empty containers inside");
	obj = pc_json_get(j, "obj");
	ok(!strcmp(pc_json_key_at(obj, 0, NULL), "b") && !strcmp(pc_json_key_at(obj, 1, NULL), "a") &&
	   pc_json_number(pc_json_at(obj, 0), 0) == 2 && !pc_json_key_at(obj, 2, NULL),
	   "members keep document order");
	ok(!strcmp(pc_json_key_at(j, 6, &len), "obj") && len == 3, "key_at gives the length");
	/* the accessors tolerate the wrong type and NULL */
	ok(pc_json_number(pc_json_get(j, "bench"), 7) == 7 && !pc_json_string(pc_json_get(j, "n"), NULL) &&
	   pc_json_count(pc_json_get(j, "n")) == 0 && !pc_json_get(list, "x") &&
	   !pc_json_at(NULL, 0) && pc_json_type(NULL) == PC_JSON_ABSENT &&
	   pc_json_number(pc_json_get(pc_json_get(j, "nope"), "deeper"), -1) == -1,
	   "accessors are NULL- and type-safe");
	pc_json_free(j);
	pc_json_free(NULL);

	ok(parse("0", &j) == 0 && pc_json_number(j, 1) == 0, "a bare number is a document");
	pc_json_free(j);
	ok(parse("\"s\"", &j) == 0 && !strcmp(pc_json_string(j, NULL), "s"), "a bare string");
	pc_json_free(j);
	ok(parse(" null \n", &j) == 0 && pc_json_type(j) == PC_JSON_NULL, "null with whitespace");
	pc_json_free(j);
	ok(parse("-0", &j) == 0 && pc_json_number(j, 1) == 0 && signbit(pc_json_number(j, 1)),
	   "-0 reads as negative zero");
	pc_json_free(j);
	ok(parse("[1.7976931348623157e308, 5e-324, 1e-400, 123456789012345678901234567890]", &j) == 0 &&
	   pc_json_number(pc_json_at(j, 0), 0) == 1.7976931348623157e308 &&
	   pc_json_number(pc_json_at(j, 1), 0) == 5e-324 &&
	   pc_json_number(pc_json_at(j, 2), 1) == 0 &&
	   pc_json_number(pc_json_at(j, 3), 0) == 1.2345678901234568e29,
	   "numbers at the edges of double (underflow reads as 0)");
	pc_json_free(j);
	ok(parse("[0.1, 1E2, 1e+2, 1e-2, -0.0e0]", &j) == 0 &&
	   pc_json_number(pc_json_at(j, 0), 0) == 0.1 && pc_json_number(pc_json_at(j, 1), 0) == 100 &&
	   pc_json_number(pc_json_at(j, 2), 0) == 100 && pc_json_number(pc_json_at(j, 3), 0) == 0.01,
	   "exponent spellings");
	pc_json_free(j);
}

static void test_strings(void)
{
	struct pc_json *j;
	size_t len;
	const char *s;

	ok(parse("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", &j) == 0 &&
	   !strcmp(pc_json_string(j, NULL), "\" \\ / \b \f \n \r \t"), "the two-character escapes");
	pc_json_free(j);
	ok(parse("\"\\u00e9\\u20AC\\u0041\"", &j) == 0 &&
	   !strcmp(pc_json_string(j, NULL), "\xc3\xa9\xe2\x82\xac" "A"),
	   "\\u escapes to UTF-8 (2 and 3 bytes, either case of hex)");
	pc_json_free(j);
	ok(parse("\"\\uD83D\\uDE00 \\udbff\\udfff\"", &j) == 0 &&
	   !strcmp(pc_json_string(j, NULL), "\xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"),
	   "surrogate pairs join into one 4-byte character (U+1F600, U+10FFFF)");
	pc_json_free(j);
	ok(parse("\"a\\u0000b\"", &j) == 0 && (s = pc_json_string(j, &len)) && len == 3 &&
	   !memcmp(s, "a\0b", 4), "\\u0000 is kept: the length says where the string ends");
	pc_json_free(j);
	ok(parse("\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf\"", &j) == 0 &&
	   !strcmp(pc_json_string(j, NULL), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf"),
	   "raw UTF-8 passes through");
	pc_json_free(j);
	ok(parse("{\"k\\u0000\": 1, \"k\": 2}", &j) == 0 &&
	   pc_json_number(pc_json_get(j, "k"), 0) == 2, "names differing after a NUL are distinct");
	pc_json_free(j);

	ok(refused_at("\"\\x\"", 1, "invalid escape"), "an unknown escape");
	ok(refused_at("\"\\u12G4\"", 5, "4 hex digits"), "a bad hex digit");
	ok(refused_at("\"\\u12\"", 5, "4 hex digits"), "a short \\u escape");
	ok(refused_at("\"\\uD83D\"", 1, "unpaired surrogate"), "a high surrogate alone");
	ok(refused_at("\"\\uD83Dx\"", 1, "unpaired surrogate"), "a high surrogate then a letter");
	ok(refused_at("\"\\uD83D\\u0041\"", 1, "unpaired surrogate"),
	   "a high surrogate then a non-surrogate");
	ok(refused_at("\"\\uD83D\\n\"", 1, "unpaired surrogate"), "a high surrogate then \\n");
	ok(refused_at("\"\\uDE00\"", 1, "low half first"), "a low surrogate alone");
	ok(refused_at("\"a\tb\"", 2, "control character"), "a raw tab in a string");
	ok(refused_at("\"a\nb\"", 2, "control character"), "a raw newline in a string");
	ok(refused_at("\"\xc0\xaf\"", 1, "UTF-8"), "an overlong UTF-8 '/'");
	ok(refused_at("\"\xe0\x80\xaf\"", 1, "UTF-8"), "an overlong 3-byte form");
	ok(refused_at("\"\xed\xa0\x80\"", 1, "UTF-8"), "a surrogate encoded in UTF-8");
	ok(refused_at("\"\xf4\x90\x80\x80\"", 1, "UTF-8"), "past U+10FFFF");
	ok(refused_at("\"\xf5\x80\x80\x80\"", 1, "UTF-8"), "0xf5 never starts a character");
	ok(refused_at("\"a\x80\"", 2, "continuation"), "a stray continuation byte");
	ok(refused_at("\"\xc3(\"", 1, "UTF-8"), "a sequence cut by an ASCII byte");
	ok(refused_at("\"\xff\"", 1, "UTF-8"), "0xff");
	ok(refused_at("\"abc", 4, "end of input in a string"), "an unterminated string");
	ok(refused_at("\"\xe2\x82", 3, "end of input"), "input ends inside a UTF-8 sequence");
}

static void test_malformed(void)
{
	struct pc_json *j;

	ok(refused_at("", 0, "unexpected end of input"), "empty input");
	ok(refused_at("  \n ", 4, "unexpected end of input"), "whitespace only");
	ok(refused_at("{} x", 3, "after the document"), "trailing garbage");
	ok(refused_at("{\"a\":1}}", 7, "after the document"), "a second closing brace");
	ok(refused_at("1 2", 2, "after the document"), "two documents");
	ok(refused_at("[1,2,x]", 5, "expected a value"), "a bare word in an array");
	ok(refused_at("[1,]", 3, "trailing comma"), "a trailing comma in an array");
	ok(refused_at("{\"a\":1,}", 7, "trailing comma"), "a trailing comma in an object");
	ok(refused_at("[1 2]", 3, "expected ',' or ']'"), "a missing comma");
	ok(refused_at("{\"a\" 1}", 5, "expected ':'"), "a missing colon");
	ok(refused_at("{\"a\":}", 5, "expected a value"), "a missing member value");
	ok(refused_at("{1:2}", 1, "member name"), "a number as a member name");
	ok(refused_at("{'a':1}", 1, "member name"), "single quotes");
	ok(refused_at("{\"a\":1 \"b\":2}", 7, "expected ',' or '}'"), "members without a comma");
	ok(refused_at("[,1]", 1, "expected a value"), "a leading comma");
	ok(refused_at("{\"a\":1,\"b\":2,\"a\":3}", 13, "duplicate member"), "a duplicate member name");
	ok(refused_at("{\"x\":1,\"y\":2,\"z\":3,\"y\":4,\"x\":5}", 19, "duplicate member"),
	   "duplicates among several: the first repeat is named");
	ok(refused_at("[tru]", 1, "invalid literal"), "a misspelt true");
	ok(refused_at("[nul", 4, "end of input in null"), "a cut null");
	ok(refused_at("[True]", 1, "expected a value"), "True is not true");
	ok(refused_at("NaN", 0, "expected a value"), "NaN");
	ok(refused_at("[Infinity]", 1, "expected a value"), "Infinity");
	ok(refused_at("[-Infinity]", 2, "expected a digit"), "-Infinity");
	ok(refused_at("01", 0, "leading zero"), "a leading zero");
	ok(refused_at("-01", 1, "leading zero"), "a leading zero after a minus");
	ok(refused_at("1.", 2, "end of input"), "a number ending in a point");
	ok(refused_at("[1.]", 3, "digit after '.'"), "a point without digits");
	ok(refused_at(".5", 0, "expected a value"), "a leading point");
	ok(refused_at("+1", 0, "expected a value"), "a plus sign");
	ok(refused_at("[-]", 2, "expected a digit"), "a lone minus");
	ok(refused_at("[1e]", 3, "exponent"), "an empty exponent");
	ok(refused_at("[1e+]", 4, "exponent"), "an exponent with only a sign");
	ok(refused_at("[0x10]", 2, "expected ',' or ']'"), "hex");
	ok(refused_at("[1e309]", 1, "out of range"), "a number past double");
	ok(refused_at("[-1e309]", 1, "out of range"), "a negative number past double");
	ok(refused_at("\xef\xbb\xbf{}", 0, "byte 0xef"), "a byte-order mark");
	ok(refused_at("[1] // c", 4, "after the document"), "a comment");
	ok(parse_n("{\"a\":1}\0", 8, &j) == -EINVAL && jerr.offset == 7 &&
	   strstr(jerr.msg, "byte 0x00"), "a NUL after the document");
	ok(refused_at("[\f1]", 1, "expected a value"), "form feed is not JSON whitespace");
	ok(refused_at("{\n  \"a\": tru\n}", 9, "invalid literal") && jerr.line == 2 &&
	   jerr.column == 8, "line and column of an error (2:8)");
	/* NUL inside: the length is what counts */
	ok(parse_n("[1]\0", 3, &j) == 0, "the length ends the text, not a NUL");
	pc_json_free(j);
}

static void test_truncations(void)
{
	static const char doc[] =
		"{\"bench\": \"swapin\", \"results\": [{\"workload\": \"seq\", \"page_cluster\": 3, "
		"\"vma_ra\": \"on\", \"runs\": 5, \"metrics\": {\"real\": {\"mean\": 1.23e0, "
		"\"stderr\": 0.01, \"better\": \"lower\", \"values\": [1.2, -0.5, 1E+2, true, false, "
		"null]}}}], \"s\": \"\\u00e9\\uD83D\\uDE00\\n\xc3\xa9\", \"e\": {}, \"a\": []}";
	size_t n = strlen(doc), bad = 0, crashed = 0;
	struct pc_json *j;
	static const char subst[] = { '"', '\\', '{', '}', '[', ']', ',', ':', 0, 'u', '0', ' ',
				      '\x80', '\xff', 'e', '-' };

	ok(parse_n(doc, n, &j) == 0, "the whole document parses");
	pc_json_free(j);
	for (size_t len = 0; len < n; len++) {
		int rc = parse_n(doc, len, &j);

		if (rc == 0)
			pc_json_free(j);
		if (rc != -EINVAL || jerr.offset > len || !jerr.msg[0]) {
			printf("# prefix of %zu bytes: rc %d offset %zu\n", len, rc, jerr.offset);
			bad++;
		}
	}
	ok(bad == 0, "every one of the %zu truncations is refused, the offset within it", n);

	/* one byte changed, everywhere: a clean answer either way, and never a crash */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof(subst); k++) {
			char copy[sizeof(doc)];
			int rc;

			memcpy(copy, doc, n);
			copy[i] = subst[k];
			rc = parse_n(copy, n, &j);
			if (rc == 0)
				pc_json_free(j);
			else if (rc != -EINVAL || jerr.offset > n || !jerr.msg[0])
				crashed++;
		}
	ok(crashed == 0, "every one-byte corruption is parsed or refused cleanly");
}

static char *nested(char open, char close, int depth)
{
	char *s = malloc((size_t)depth * 8 + 16), *p = s;

	for (int i = 0; i < depth; i++) {
		if (open == '{')
			p += sprintf(p, "{\"a\":");
		else
			*p++ = open;
	}
	*p++ = '1';
	for (int i = 0; i < depth; i++)
		*p++ = close;
	*p = 0;
	return s;
}

static void test_limits(void)
{
	struct pc_json_opts o = { 0 };
	struct pc_json *j;
	char *s;
	int rc;

	s = nested('[', ']', 64);
	ok(parse(s, &j) == 0, "64 nested arrays parse");
	pc_json_free(j);
	free(s);
	s = nested('[', ']', 65);
	ok(refused_at(s, 64, "nested deeper than 64"), "65 nested arrays are refused");
	free(s);
	s = nested('{', '}', 65);
	ok(refused_at(s, 64 * 5, "nested deeper than 64"), "65 nested objects are refused");
	free(s);
	s = nested('[', ']', 100000);
	ok(refused(s), "100000 nested arrays: refused, no stack overflow");
	free(s);
	o.max_depth = 2;
	rc = pc_json_parse("[[1]]", 5, &o, &j, &jerr);
	ok(rc == 0, "a caller's depth limit: 2 levels pass");
	pc_json_free(j);
	ok(pc_json_parse("[[[1]]]", 7, &o, &j, &jerr) == -EINVAL && strstr(jerr.msg, "deeper than 2"),
	   "and 3 are refused");
	o.max_depth = 0;
	o.max_bytes = 6;
	ok(pc_json_parse("[1,2]", 5, &o, &j, &jerr) == 0, "a size limit above the length");
	pc_json_free(j);
	ok(pc_json_parse("[1,2,3]", 7, &o, &j, &jerr) == -EFBIG && strstr(jerr.msg, "limit"),
	   "a size limit below the length: -EFBIG");
	ok(pc_json_parse("[1]", 3, NULL, &j, NULL) == 0, "opts and err may be NULL");
	pc_json_free(j);
	ok(pc_json_parse("[1", 2, NULL, &j, NULL) == -EINVAL, "and errors still come back");
}

static void test_big(void)
{
	size_t n = 200000, at = 0, cap = n * 12 + 300000;
	char *s = malloc(cap);
	struct pc_json *j;
	const char *str;
	size_t len;
	int rc;

	/* a long array, then a string longer than an arena chunk */
	at += (size_t)sprintf(s + at, "{\"list\": [");
	for (size_t i = 0; i < n; i++)
		at += (size_t)sprintf(s + at, "%s%zu", i ? "," : "", i);
	at += (size_t)sprintf(s + at, "], \"long\": \"");
	memset(s + at, 'x', 200000);
	at += 200000;
	at += (size_t)sprintf(s + at, "\", \"after\": \"y\"}");
	rc = parse_n(s, at, &j);
	ok(rc == 0 && pc_json_count(pc_json_get(j, "list")) == n &&
	   pc_json_number(pc_json_at(pc_json_get(j, "list"), n - 1), 0) == (double)(n - 1),
	   "200000 elements");
	str = pc_json_string(pc_json_get(j, "long"), &len);
	ok(str && len == 200000 && str[0] == 'x' && str[len - 1] == 'x' && !str[len],
	   "a 200 KB string");
	ok(!strcmp(pc_json_string(pc_json_get(j, "after"), NULL), "y"), "and what follows it");
	pc_json_free(j);

	/* many members: the duplicate check is not quadratic, and finds the last one */
	at = (size_t)sprintf(s, "{");
	for (size_t i = 0; i < 20000; i++)
		at += (size_t)sprintf(s + at, "%s\"k%zu\":%zu", i ? "," : "", i, i);
	ok(parse_n(s, at + (size_t)sprintf(s + at, "}"), &j) == 0 &&
	   pc_json_number(pc_json_get(j, "k19999"), 0) == 19999, "20000 members");
	pc_json_free(j);
	at += (size_t)sprintf(s + at, ",\"k123\":0}");
	ok(parse_n(s, at, &j) == -EINVAL && strstr(jerr.msg, "duplicate"),
	   "20000 members and one repeat: refused");
	free(s);
}

static void test_canonical(void)
{
	static const char *const omit[] = { "runs", "metrics", NULL };
	struct pc_json *j, *k;
	char *out, *out2;
	int rc;

	ok(!strcmp(canon("{\"b\": [1, 2.50, {\"y\": null, \"x\": true}], \"a\": \"\\u00e9\\n\", "
			 "\"c\": -0.0, \"d\": 1e2, \"e\": false}"),
		   "{\"a\":\"\xc3\xa9\\n\",\"b\":[1,2.5,{\"x\":true,\"y\":null}],\"c\":0,\"d\":100,"
		   "\"e\":false}"),
	   "compact, sorted, numbers in one spelling (got %s)", canon_buf);
	ok(!strcmp(canon("[0.1, 0.3333333333333333, 1e300, 123456789012, -2.5e-7, 1e15, 1e21]"),
		   "[0.1,0.3333333333333333,1e+300,123456789012,-2.5e-07,1e+15,1e+21]"),
	   "shortest round-trip numbers (got %s)", canon_buf);
	ok(!strcmp(canon("\"\\u0001\\u001f\\\"\\\\\\/\\b\\f\\r\\t \\u007f\""),
		   "\"\\u0001\\u001f\\\"\\\\/\\b\\f\\r\\t \\u007f\""),
	   "escapes only where JSON needs them, and DEL (got %s)", canon_buf);
	ok(!strcmp(canon("[\"c1\\u009b[2J\\u0080\\u009f\\u00a0\xc2\x85\", \"\\u00c2\"]"),
		   "[\"c1\\u009b[2J\\u0080\\u009f\xc2\xa0\\u0085\",\"\xc3\x82\"]"),
	   "C1 controls (U+0080..U+009F) as \\u00XX, U+00A0 and U+00C2 as they are (got %s)",
	   canon_buf);
	ok(!strcmp(canon("{\"b\":1,\"a\":2,\"ab\":3,\"\":4}"), "{\"\":4,\"a\":2,\"ab\":3,\"b\":1}"),
	   "member names in byte order, shorter first (got %s)", canon_buf);
	ok(!strcmp(canon("{\"a\\u0000\":1}"), "{\"a\\u0000\":1}"), "a NUL in a name survives");
	ok(!strcmp(canon("[]"), "[]") && !strcmp(canon("{}"), "{}") && !strcmp(canon("null"), "null"),
	   "empty containers and null");

	/* equal values, different spelling and order: equal text */
	ok(parse("{\"workload\": \"seq\", \"page_cluster\": 3, \"runs\": 5, \"metrics\": {}}", &j) == 0 &&
	   parse("{\"metrics\": {\"x\": 1}, \"page_cluster\": 3.0, \"runs\": 3, \"workload\": \"seq\"}",
		 &k) == 0, "two rows parse");
	out = out2 = NULL;
	rc = pc_json_canonical(j, omit, &out) | pc_json_canonical(k, omit, &out2);
	ok(rc == 0 && !strcmp(out, out2) &&
	   !strcmp(out, "{\"page_cluster\":3,\"workload\":\"seq\"}"),
	   "omit leaves out runs and metrics: the rows' identities match (%s)", out);
	free(out);
	free(out2);
	pc_json_free(j);
	pc_json_free(k);
	ok(pc_json_canonical(NULL, NULL, &out) == -EINVAL, "NULL is -EINVAL");

	/* the canonical text reads back to itself */
	out = out2 = NULL;
	rc = parse("{\"z\": [1.5, \"\\uD83D\\uDE00\", {\"q\": [[], {}]}], \"a\": 1e-5}", &j);
	rc = rc ? rc : pc_json_canonical(j, NULL, &out);
	rc = rc ? rc : parse(out, &k);
	rc = rc ? rc : pc_json_canonical(k, NULL, &out2);
	ok(rc == 0 && !strcmp(out, out2) && !strcmp(out, "{\"a\":1e-05,\"z\":[1.5,"
	   "\"\xf0\x9f\x98\x80\",{\"q\":[[],{}]}]}"), "canonical text is a fixed point (%s)", out);
	free(out);
	free(out2);
	pc_json_free(j);
	pc_json_free(k);
}

static void test_file(void)
{
	struct pc_json_opts o = { .max_bytes = 64 };
	struct pc_json *j;
	const char *dir = scratch_dir();
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/r.json", dir);
	f = fopen(path, "w");
	fputs("{\"bench\": \"readtwice\", \"results\": []}\n", f);
	fclose(f);
	ok(pc_json_parse_file(path, NULL, &j, &jerr) == 0 &&
	   !strcmp(pc_json_string(pc_json_get(j, "bench"), NULL), "readtwice"), "a file parses");
	pc_json_free(j);
	o.max_bytes = 16;
	ok(pc_json_parse_file(path, &o, &j, &jerr) == -EFBIG && jerr.offset == 16,
	   "a file over the limit: -EFBIG");
	ok(pc_json_parse_file("/proc/self/status", &o, &j, &jerr) == -EFBIG,
	   "a /proc file (size 0) over the limit: -EFBIG after reading");
	o.max_bytes = 1 << 20;
	ok(pc_json_parse_file("/proc/self/status", &o, &j, &jerr) == -EINVAL && jerr.offset == 0,
	   "a /proc file that is not JSON: -EINVAL at offset 0");
	ok(pc_json_parse_file("/nonexistent/x.json", NULL, &j, &jerr) == -ENOENT,
	   "a missing file: -ENOENT");
	ok(pc_json_parse_file(dir, NULL, &j, &jerr) == -EISDIR, "a directory: -EISDIR");
	pc_sys_inject(PC_SYS_PREAD, EIO, 0, 1);
	ok(pc_json_parse_file(path, NULL, &j, &jerr) == -EIO, "a read error: -EIO");
	pc_sys_inject(PC_SYS_OPEN, EACCES, 0, 1);
	ok(pc_json_parse_file(path, NULL, &j, &jerr) == -EACCES, "an open error: -EACCES");
	pc_sys_inject(PC_SYS_PREAD, EINTR, 0, 3);
	ok(pc_json_parse_file(path, NULL, &j, &jerr) == 0, "EINTR is retried");
	pc_json_free(j);
	pc_sys_inject_reset();
	snprintf(path, sizeof(path), "%s/empty.json", dir);
	fclose(fopen(path, "w"));
	ok(pc_json_parse_file(path, NULL, &j, &jerr) == -EINVAL, "an empty file: -EINVAL");
	rm_scratch();
}

static void test_locale(void)
{
	static const char *const names[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", NULL };
	const char *got = NULL;
	struct pc_json *j;
	char *out;

	for (int i = 0; names[i] && !got; i++)
		got = setlocale(LC_NUMERIC, names[i]);
	if (!got) {
		skip("no locale with a decimal comma installed", "numbers ignore the locale");
		return;
	}
	ok(parse("[1.5]", &j) == 0 && pc_json_number(pc_json_at(j, 0), 0) == 1.5 &&
	   pc_json_canonical(j, NULL, &out) == 0 && !strcmp(out, "[1.5]"),
	   "numbers ignore the locale (%s)", got);
	free(out);
	pc_json_free(j);
	setlocale(LC_NUMERIC, "C");
}

int main(void)
{
	test_valid();
	test_strings();
	test_malformed();
	test_truncations();
	test_limits();
	test_big();
	test_canonical();
	test_file();
	test_locale();
	return done_testing();
}
