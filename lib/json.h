/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json.h: a small, strict JSON reader (RFC 8259) into a read-only tree,
 * and a canonical writer. For the files pagecache writes and reads back
 * (bench results, and the OCI manifests `pull` reads); not a general-purpose library.
 * Internal to pagecache: not in pagecache.h, and no part of libpagecache
 * (make builds it into build/libpcinternal.a, which pagecache,
 * pagecache-bench and the tests link). Tested in tests/unit/test-json.c.
 *
 * Strict: exactly one value, only the four whitespace bytes around tokens,
 * UTF-8 checked (no overlongs, no encoded surrogates), no duplicate member
 * names, numbers within double range. Objects keep their member order;
 * numbers are doubles; strings are decoded to UTF-8 (\u escapes included,
 * surrogate pairs joined) and NUL-terminated; a string may hold a NUL
 * (from \u0000): its length says where it ends.
 */
#ifndef PC_JSON_H
#define PC_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define PC_JSON_MAX_DEPTH 64		/* nested arrays and objects */

enum pc_json_type {
	PC_JSON_ABSENT,			/* pc_json_type(NULL): a member not there */
	PC_JSON_NULL,
	PC_JSON_BOOL,
	PC_JSON_NUMBER,
	PC_JSON_STRING,
	PC_JSON_ARRAY,
	PC_JSON_OBJECT,
};

struct pc_json;				/* a value; the root owns the whole tree */

struct pc_json_opts {
	size_t max_bytes;		/* longer text is refused (-EFBIG); 0: no limit */
	unsigned max_depth;		/* 0 or more than PC_JSON_MAX_DEPTH: that */
};

struct pc_json_error {
	size_t offset;			/* byte offset of the problem (0-based) */
	unsigned line, column;		/* the same, 1-based, columns in bytes */
	char msg[96];			/* "expected ',' or '}' after a member" */
};

/*
 * Parse text[0..len) (no NUL needed). 0 and *ret_root set, or -EINVAL (bad
 * JSON: *err says what and where), -EFBIG (over o->max_bytes), -ENOMEM.
 * o and err may be NULL.
 */
int pc_json_parse(const char *text, size_t len, const struct pc_json_opts *o,
		  struct pc_json **ret_root, struct pc_json_error *err);
/*
 * Read and parse a file. As pc_json_parse, plus -errno of open or read;
 * -EFBIG as soon as the file proves longer than o->max_bytes.
 */
int pc_json_parse_file(const char *path, const struct pc_json_opts *o,
		       struct pc_json **ret_root, struct pc_json_error *err);
/* The same, of what is read from fd (a pipe: stdin) to its end; fd stays open. */
int pc_json_parse_fd(int fd, const struct pc_json_opts *o, struct pc_json **ret_root,
		     struct pc_json_error *err);
/* Free a tree from pc_json_parse*(); only the root. NULL-safe. */
void pc_json_free(struct pc_json *root);

/*
 * Accessors. All are NULL-safe, so lookups chain:
 * pc_json_number(pc_json_get(pc_json_get(row, "metrics"), "real"), 0).
 */
enum pc_json_type pc_json_type(const struct pc_json *v);
/* The value if v is of that type, else dflt. */
double pc_json_number(const struct pc_json *v, double dflt);
bool pc_json_bool(const struct pc_json *v, bool dflt);
/* NULL unless v is a string; ret_len (may be NULL): its bytes. */
const char *pc_json_string(const struct pc_json *v, size_t *ret_len);
/* Elements of an array, members of an object, else 0. */
size_t pc_json_count(const struct pc_json *v);
/* The i-th element, or member value, in document order; NULL past the end. */
const struct pc_json *pc_json_at(const struct pc_json *v, size_t i);
/* The i-th member's name (NUL-terminated; ret_len may be NULL); NULL if none. */
const char *pc_json_key_at(const struct pc_json *obj, size_t i, size_t *ret_len);
/* The member named key, or NULL (also when obj is not an object). */
const struct pc_json *pc_json_get(const struct pc_json *obj, const char *key);

/*
 * v as compact canonical JSON, in a malloc'd string: no whitespace, object
 * members sorted by name (bytewise), numbers in their shortest round-trip
 * form (1.0 and 1e0 are both "1", -0 is "0"), strings escaped only where
 * JSON requires ("\"", "\\", control bytes: \b \f \n \r \t or \u00XX) and
 * for DEL and the C1 controls (U+007F..U+009F as \u007f..\u009f), which
 * would otherwise reach a terminal raw.
 * Equal values give equal text, whatever their spelling or member order.
 * omit: NULL, or a NULL-terminated list of v's own member names to leave
 * out (a bench row's identity is the row without "runs" and "metrics").
 * 0 and *ret set, or -ENOMEM, -EINVAL (v NULL).
 */
int pc_json_canonical(const struct pc_json *v, const char *const *omit, char **ret);

#endif
