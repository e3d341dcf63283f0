/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compare.c: `pagecache bench compare A.json B.json`, two --json results
 * of one bench side by side, as mmtests' compare-kernels does it: A is
 * the baseline, every change is a percentage where positive is better,
 * and a mean whose difference is significant is marked *...*.
 *
 * A result file is {"bench": NAME, "results": [ROW...]}; a row is its
 * identity (every member but "runs" and "metrics", compared as canonical
 * JSON, so member order and number spelling do not matter) plus
 * "metrics": {NAME: {"mean", "stderr", ...}}. Rows of A are matched to
 * rows of B by identity; rows and metrics on one side only are listed in
 * "unmatched". Per-run "values" are used when present (summaries, Hmean);
 * without them stddev is stderr * sqrt(runs) and min, max are what the
 * file says.
 *
 * The mark is Welch's t-test (two-sided, alpha 0.05) on the arithmetic
 * means; the mmtests rule |d| > 1.96 (sd_a + sd_b) on the displayed means
 * is in the JSON too. Higher-is-better metrics show the harmonic mean when
 * both sides have per-run values, all positive (mmtests' Hmean for rates);
 * the test stays on the arithmetic means, which is what it is about.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "bench.h"
#include "json.h"
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA BENCH_CMP_ALPHA
#define MIN_RUNS BENCH_CMP_MIN_RUNS
#define MAX_FILE (64u << 20)

/* One side of a metric, as read from a file (bench.h). */
#define side bench_metric

/* One compared metric, kept until the widths of the table are known. */
struct cmp {
	const char *label;		/* of the row (owned by its struct row) */
	const char *metric;
	struct side a, b;
	bool higher, hmean;
	double mean_a, mean_b;		/* displayed: Amean or Hmean */
	struct pc_welch w;
	bool mm;			/* the mmtests rule */
};

struct row {
	const struct pc_json *v;
	char *id;			/* canonical identity */
	char *label;			/* "seq pc=3 vma=on" */
	bool matched;
};

struct file {
	const char *path;
	struct pc_json *doc;
	bool borrowed;			/* doc is the caller's: not freed here */
	const char *bench;
	struct row *rows;
	size_t nrows;
	int min_runs;			/* over the metrics compared */
};

/* A row, or a metric of a matched row, in one file only. */
struct lone {
	int side;			/* 0 base, 1 new */
	const struct row *row;
	const char *metric;		/* NULL: the whole row */
};

struct bench_cmpset {
	struct file f[2];		/* base, new */
	struct cmp *cmps;
	size_t ncmp, capcmp;
	struct lone *lones;
	size_t nlone, caplone;
	unsigned failures;
	bool quiet;			/* failures counted, not said (report.c says its own) */
};

static void fail_msg(struct bench_cmpset *c, const char *path, const char *what, const char *reason)
{
	if (!c->quiet)
		cli_fail_msg(path, what, reason);
	c->failures++;
}

/* NaN and infinities are not JSON: null instead. */
static void put_num(struct orec *r, const char *key, double v)
{
	if (isfinite(v))
		orec_f64(r, key, v);
	else
		orec_null(r, key);
}

/*
 * Where v holds a string or member name with a NUL in it (\u0000), or
 * NULL: *at gets "results[1].workload". Names, units and labels are C
 * strings from here on, so "a\u0000x" and "a\u0000y" would both be "a":
 * no bench writes a NUL, and a file that has one is refused whole.
 */
static const char *nul_in(const struct pc_json *v, char *at, size_t cap, size_t len)
{
	size_t n = pc_json_count(v);
	const char *s, *r;

	/* len < cap always: a long path is cut short, the walk is not */
	switch (pc_json_type(v)) {
	case PC_JSON_STRING:
		s = pc_json_string(v, &n);
		return memchr(s, 0, n) ? "a string" : NULL;
	case PC_JSON_ARRAY:
		for (size_t i = 0; i < n; i++) {
			snprintf(at + len, cap - len, "[%zu]", i);
			if ((r = nul_in(pc_json_at(v, i), at, cap, strlen(at))))
				return r;
		}
		break;
	case PC_JSON_OBJECT:
		for (size_t i = 0; i < n; i++) {
			size_t kl;

			s = pc_json_key_at(v, i, &kl);
			at[len] = 0;
			if (memchr(s, 0, kl))
				return "a member name";
			snprintf(at + len, cap - len, "%s%s", len ? "." : "", s);
			if ((r = nul_in(pc_json_at(v, i), at, cap, strlen(at))))
				return r;
		}
		break;
	default:
		break;
	}
	at[len] = 0;
	return NULL;
}

int bench_result_read(const char *path, struct pc_json **ret_doc, const char **ret_bench)
{
	const struct pc_json_opts o = { .max_bytes = MAX_FILE };
	struct pc_json_error e;
	struct pc_json *doc = NULL;
	const struct pc_json *results;
	const char *what, *bench;
	char why[400], at[200];
	int rc;

	/* files and pipes (`compare <(cmd) <(cmd)`) alike, to their end */
	rc = pc_json_parse_file(path, &o, &doc, &e);
	if (rc == -EFBIG)
		snprintf(e.msg, sizeof(e.msg), "larger than the limit of %u bytes", MAX_FILE);
	if (rc == -EINVAL || rc == -EFBIG) {
		if (rc == -EINVAL)
			snprintf(why, sizeof(why), "offset %zu (line %u, column %u): %s", e.offset,
				 e.line, e.column, e.msg);
		else
			snprintf(why, sizeof(why), "%s", e.msg);
		cli_fail_msg(path, rc == -EINVAL ? "invalid JSON in" : "cannot read", why);
		return -1;
	}
	if (rc < 0) {
		cli_fail(path, -rc, "cannot read");
		return -1;
	}
	what = nul_in(doc, at, sizeof(at), 0);
	if (what) {
		snprintf(why, sizeof(why), "%s in %s holds a NUL (U+0000), which no bench writes",
			 what, *at ? at : "the top level");
		cli_fail_msg(path, "invalid bench result in", why);
		goto bad;
	}
	results = pc_json_get(doc, "results");
	bench = pc_json_string(pc_json_get(doc, "bench"), NULL);
	if (pc_json_type(results) != PC_JSON_ARRAY) {
		cli_fail_msg(path, "not a bench result in",
			     "no \"results\" list at the top level (`pagecache bench NAME --json` "
			     "writes one)");
		goto bad;
	}
	if (!bench || !*bench) {
		cli_fail_msg(path, "not a bench result in", "no \"bench\" name at the top level");
		goto bad;
	}
	*ret_doc = doc;
	*ret_bench = bench;
	return 0;
bad:
	pc_json_free(doc);
	return -1;
}

static int load(struct bench_cmpset *c, struct file *f)
{
	if (f->doc)
		return 0;	/* the caller's, read and checked by bench_result_read */
	if (bench_result_read(f->path, &f->doc, &f->bench) < 0) {
		c->failures++;
		return -1;
	}
	return 0;
}

/* Short names for the identity members the benches use. */
static const char *short_key(const char *k)
{
	static const char *const alias[][2] = {
		{ "page_cluster", "pc" },
		{ "vma_ra", "vma" },
		{ "limit_bytes", "limit" },
	};

	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (!strcmp(k, alias[i][0]))
			return alias[i][1];
	return k;
}

static bool is_identity_key(const char *k)
{
	return strcmp(k, "runs") && strcmp(k, "metrics");
}

/* "seq pc=3 vma=on": identity members in order, the first string one bare. */
char *bench_row_label(const struct pc_json *row)
{
	char *buf = NULL;
	size_t len = 0;
	bool bare_done = false, first = true;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	/* members only: an array's elements have no name (report.c labels any row) */
	for (size_t i = 0; pc_json_type(row) == PC_JSON_OBJECT && i < pc_json_count(row); i++) {
		const char *k = pc_json_key_at(row, i, NULL);
		const struct pc_json *v = pc_json_at(row, i);
		char *text = NULL;

		if (!is_identity_key(k))
			continue;
		fputs(first ? "" : " ", f);
		first = false;
		if (pc_json_type(v) == PC_JSON_STRING && !bare_done) {
			fputs(pc_json_string(v, NULL), f);
			bare_done = true;
			continue;
		}
		fprintf(f, "%s=", short_key(k));
		if (pc_json_type(v) == PC_JSON_STRING)
			fputs(pc_json_string(v, NULL), f);
		else if (pc_json_canonical(v, NULL, &text) == 0)
			fputs(text, f);
		free(text);
	}
	if (first)
		fputs("(all)", f);	/* a bench with a single, unnamed row */
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int index_rows(struct bench_cmpset *c, struct file *f)
{
	static const char *const omit[] = { "runs", "metrics", NULL };
	const struct pc_json *results = pc_json_get(f->doc, "results");
	size_t n = pc_json_count(results);

	f->rows = calloc(n ? n : 1, sizeof(*f->rows));
	if (!f->rows)
		return -ENOMEM;
	f->min_runs = -1;
	for (size_t i = 0; i < n; i++) {
		const struct pc_json *r = pc_json_at(results, i);
		struct row *row = &f->rows[f->nrows];
		char why[160];

		if (pc_json_type(pc_json_get(r, "metrics")) != PC_JSON_OBJECT) {
			snprintf(why, sizeof(why), "results[%zu] is not an object with a "
				 "\"metrics\" object", i);
			fail_msg(c, f->path, "invalid row in", why);
			continue;
		}
		row->v = r;
		if (pc_json_canonical(r, omit, &row->id) < 0 || !(row->label = bench_row_label(r))) {
			free(row->id);
			return -ENOMEM;
		}
		for (size_t k = 0; k < f->nrows; k++)
			if (!strcmp(f->rows[k].id, row->id)) {
				if (!c->quiet)
					cli_warn("'%s': row '%s' appears twice: the first is compared",
					 f->path, row->label);
				free(row->id);
				free(row->label);
				row->v = NULL;
				break;
			}
		if (row->v)
			f->nrows++;
	}
	return 0;
}

static void release_file(struct file *f)
{
	for (size_t i = 0; i < f->nrows; i++) {
		free(f->rows[i].id);
		free(f->rows[i].label);
	}
	free(f->rows);
	if (!f->borrowed)
		pc_json_free(f->doc);
}

static bool default_higher(const char *name)
{
	static const char *const suffixes[] = { "_per_s", "ratio", "hit_percent" };
	size_t nl = strlen(name);

	if (strstr(name, "mbps"))
		return true;	/* mean_mbps_per_reader, aggregate_mbps */
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t sl = strlen(suffixes[i]);

		if (nl >= sl && !strcmp(name + nl - sl, suffixes[i]))
			return true;
	}
	return false;
}

const char *bench_metric_read(const struct pc_json *m, const struct pc_json *row,
			      struct bench_metric *ret)
{
	const struct pc_json *values = pc_json_get(m, "values"), *v;
	const char *better = pc_json_string(pc_json_get(m, "better"), NULL);
	double runs = pc_json_number(pc_json_get(row, "runs"), NAN), sd, se;

	memset(ret, 0, sizeof(*ret));
	if (pc_json_type(m) != PC_JSON_OBJECT)
		return "not an object";
	ret->better = -1;
	if (better && !strcmp(better, "higher"))
		ret->better = 1;
	else if (better && !strcmp(better, "lower"))
		ret->better = 0;
	else if (pc_json_type(pc_json_get(m, "better")) != PC_JSON_ABSENT)
		return "\"better\" is neither \"higher\" nor \"lower\"";
	ret->unit = pc_json_string(pc_json_get(m, "unit"), NULL);

	if (pc_json_type(values) == PC_JSON_ARRAY && pc_json_count(values) > 0) {
		size_t n = pc_json_count(values);
		double *x = malloc(n * sizeof(*x));

		if (!x)
			return "out of memory";
		for (size_t i = 0; i < n; i++) {
			v = pc_json_at(values, i);
			x[i] = pc_json_number(v, NAN);
			if (!isfinite(x[i])) {
				free(x);
				return "\"values\" holds something not a number";
			}
		}
		pc_summarize(x, n, &ret->s);
		free(x);
		ret->values = ret->minmax = true;
		return NULL;
	}
	if (pc_json_type(values) != PC_JSON_ABSENT && pc_json_type(values) != PC_JSON_ARRAY)
		return "\"values\" is not a list";

	/* the summary as written */
	ret->s.mean = pc_json_number(pc_json_get(m, "mean"), NAN);
	if (!isfinite(ret->s.mean))
		return "no numeric \"mean\" (and no \"values\")";
	if (!(runs >= 1) || runs != floor(runs) || runs > 1e9)
		return "the row has no \"runs\" count (and the metric no \"values\")";
	ret->s.n = (size_t)runs;
	sd = pc_json_number(pc_json_get(m, "stddev"), NAN);
	se = pc_json_number(pc_json_get(m, "stderr"), NAN);
	if (!isfinite(sd)) {
		if (!isfinite(se))
			return "neither \"stddev\" nor \"stderr\"";
		sd = se * sqrt(runs);
	}
	if (sd < 0)
		return "a negative standard deviation";
	ret->s.stddev = ret->s.n > 1 ? sd : 0;
	ret->s.stderr_ = ret->s.stddev / sqrt(runs);
	ret->s.cov = ret->s.mean != 0 ? 100 * ret->s.stddev / ret->s.mean : 0;
	ret->s.min = pc_json_number(pc_json_get(m, "min"), NAN);
	ret->s.max = pc_json_number(pc_json_get(m, "max"), NAN);
	ret->minmax = isfinite(ret->s.min) && isfinite(ret->s.max);
	ret->s.median = NAN;	/* only per-run values tell */
	return NULL;
}

static int add_cmp(struct bench_cmpset *c, const struct cmp *x)
{
	if (c->ncmp == c->capcmp) {
		size_t nc = c->capcmp ? 2 * c->capcmp : 64;
		struct cmp *n = realloc(c->cmps, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->cmps = n;
		c->capcmp = nc;
	}
	c->cmps[c->ncmp++] = *x;
	return 0;
}

static int unmatched(struct bench_cmpset *c, int side, const struct row *row, const char *metric)
{
	if (c->nlone == c->caplone) {
		size_t nc = c->caplone ? 2 * c->caplone : 16;
		struct lone *n = realloc(c->lones, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->lones = n;
		c->caplone = nc;
	}
	c->lones[c->nlone++] = (struct lone){ side, row, metric };
	return 0;
}

static void emit_unmatched(const struct bench_cmpset *c, const struct lone *u)
{
	static const char *const omit[] = { "runs", "metrics", NULL };
	const char *side = u->side ? "new" : "base", *path = c->f[u->side].path;
	struct orec rec = { 0 };
	char *id = NULL;

	orec_str(&rec, "row", u->row->label, 0);
	if (u->metric)
		orec_str(&rec, "metric", u->metric, 0);
	else
		orec_null(&rec, "metric");
	orec_str(&rec, "only_in", side, 0);
	orec_str(&rec, "file", path, 0);
	if (pc_json_canonical(u->row->v, omit, &id) == 0)
		orec_json(&rec, "identity", id);
	free(id);
	out_list_add("unmatched", &rec);
	if (out_format() != OUT_HUMAN)
		return;
	if (u->metric)
		out_human_line("only in %s '%s': %s, metric %s", side, path, u->row->label,
			       u->metric);
	else
		out_human_line("only in %s '%s': %s", side, path, u->row->label);
}

static void note_runs(struct file *f, size_t n)
{
	if (f->min_runs < 0 || (size_t)f->min_runs > n)
		f->min_runs = n > 1000000 ? 1000000 : (int)n;
}

/* Every metric of a matched pair of rows. */
static int compare_rows(struct bench_cmpset *c, struct row *ra, struct row *rb)
{
	const struct pc_json *ma = pc_json_get(ra->v, "metrics"), *mb = pc_json_get(rb->v, "metrics");

	for (size_t i = 0; i < pc_json_count(ma); i++) {
		const char *name = pc_json_key_at(ma, i, NULL);
		const struct pc_json *vb = pc_json_get(mb, name);
		struct cmp x = { .label = ra->label, .metric = name };
		struct pc_summary da, db;
		const char *why;
		char msg[300];

		if (!vb) {
			if (unmatched(c, 0, ra, name) < 0)
				return -ENOMEM;
			continue;
		}
		why = bench_metric_read(pc_json_at(ma, i), ra->v, &x.a);
		if (why) {
			snprintf(msg, sizeof(msg), "row '%s', metric '%s': %s", ra->label, name, why);
			fail_msg(c, c->f[0].path, "invalid metric in", msg);
			continue;
		}
		why = bench_metric_read(vb, rb->v, &x.b);
		if (why) {
			snprintf(msg, sizeof(msg), "row '%s', metric '%s': %s", rb->label, name, why);
			fail_msg(c, c->f[1].path, "invalid metric in", msg);
			continue;
		}
		if (x.a.better >= 0 && x.b.better >= 0 && x.a.better != x.b.better && !c->quiet)
			cli_warn("metric '%s' is %s-is-better in '%s' but not in '%s': the base "
				 "decides", name, x.a.better ? "higher" : "lower", c->f[0].path,
				 c->f[1].path);
		x.higher = x.a.better >= 0 ? x.a.better == 1 :
			   x.b.better >= 0 ? x.b.better == 1 : default_higher(name);
		x.hmean = x.higher && x.a.values && x.b.values && x.a.s.hmean > 0 &&
			  x.b.s.hmean > 0;
		x.mean_a = x.hmean ? x.a.s.hmean : x.a.s.mean;
		x.mean_b = x.hmean ? x.b.s.hmean : x.b.s.mean;
		pc_welch_test(&x.a.s, &x.b.s, &x.w);
		da = x.a.s;
		db = x.b.s;
		da.mean = x.mean_a;
		db.mean = x.mean_b;
		x.mm = pc_mmtests_significant(&da, &db);
		note_runs(&c->f[0], x.a.s.n);
		note_runs(&c->f[1], x.b.s.n);
		if (add_cmp(c, &x) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < pc_json_count(mb); i++) {
		const char *name = pc_json_key_at(mb, i, NULL);

		if (!pc_json_get(ma, name) && unmatched(c, 1, rb, name) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void emit_record(const struct cmp *x)
{
	struct orec rec = { 0 };

	orec_str(&rec, "row", x->label, 0);
	orec_str(&rec, "metric", x->metric, 0);
	if (x->a.unit)
		orec_str(&rec, "unit", x->a.unit, 0);
	else
		orec_null(&rec, "unit");
	orec_str(&rec, "better", x->higher ? "higher" : "lower", 0);
	orec_str(&rec, "mean_kind", x->hmean ? "hmean" : "amean", 0);
	put_num(&rec, "base_mean", x->mean_a);
	put_num(&rec, "new_mean", x->mean_b);
	put_num(&rec, "base_stddev", x->a.s.stddev);
	put_num(&rec, "new_stddev", x->b.s.stddev);
	put_num(&rec, "pdiff", pc_pdiff(x->mean_a, x->mean_b, x->higher));
	if (x->w.valid) {
		put_num(&rec, "welch_t", x->w.t);
		put_num(&rec, "welch_df", x->w.df);
		put_num(&rec, "welch_p", x->w.p);
	} else {
		orec_null(&rec, "welch_t");
		orec_null(&rec, "welch_df");
		orec_null(&rec, "welch_p");
	}
	orec_bool(&rec, "significant", x->w.valid && x->w.p < ALPHA);
	orec_bool(&rec, "mmtests_significant", x->mm);
	orec_u64(&rec, "runs_base", x->a.s.n, 0);
	orec_u64(&rec, "runs_new", x->b.s.n, 0);
	out_list_add("comparisons", &rec);
}

/* The human table: mmtests' stat rows, per compared row of the files. */
enum statrow { ST_MIN, ST_MEAN, ST_STDDEV, ST_COV, ST_MAX, ST_COUNT };

/* The two cells of a stat row; false if the files do not say. */
static bool stat_cells(const struct cmp *x, enum statrow st, double *a, double *b, double *pd)
{
	switch (st) {
	case ST_MIN:
	case ST_MAX:
		if (!x->a.minmax || !x->b.minmax)
			return false;
		*a = st == ST_MIN ? x->a.s.min : x->a.s.max;
		*b = st == ST_MIN ? x->b.s.min : x->b.s.max;
		*pd = pc_pdiff(*a, *b, x->higher);
		return true;
	case ST_MEAN:
		*a = x->mean_a;
		*b = x->mean_b;
		*pd = pc_pdiff(*a, *b, x->higher);
		return true;
	case ST_STDDEV:
		/* spread is better smaller, whatever the metric (mmtests' pndiff) */
		*a = x->a.s.stddev;
		*b = x->b.s.stddev;
		*pd = pc_pdiff(*a, *b, false);
		return true;
	case ST_COV:
		*a = x->a.s.cov;
		*b = x->b.s.cov;
		*pd = pc_pdiff(*a, *b, false);
		return true;
	default:
		return false;
	}
}

static const char *stat_name(const struct cmp *x, enum statrow st)
{
	static const char *const names[] = { "Min", "Amean", "Stddev", "CoeffVar", "Max" };

	return st == ST_MEAN && x->hmean ? "Hmean" : names[st];
}

static int num_width(double v)
{
	char t[64];

	return snprintf(t, sizeof(t), "%.2f", v);
}

static void emit_human(const struct bench_cmpset *c)
{
	int wname = 6, wnum = 8;

	for (size_t i = 0; i < c->ncmp; i++) {
		const struct cmp *x = &c->cmps[i];

		if ((int)strlen(x->metric) > wname)
			wname = (int)strlen(x->metric);
		for (int st = 0; st < ST_COUNT; st++) {
			double a, b, pd;

			if (!stat_cells(x, (enum statrow)st, &a, &b, &pd))
				continue;
			if (num_width(a) > wnum)
				wnum = num_width(a);
			if (num_width(b) > wnum)
				wnum = num_width(b);
		}
	}
	out_human_line("%s: base '%s', new '%s'", c->f[0].bench, c->f[0].path, c->f[1].path);
	out_human_line("%-8s %-*s %*s %10s %*s", "", wname, "", wnum, "base", "", wnum, "new");
	for (size_t i = 0; i < c->ncmp;) {
		size_t end = i;

		while (end < c->ncmp && c->cmps[end].label == c->cmps[i].label)
			end++;
		out_human_line("%s", c->cmps[i].label);
		for (int st = 0; st < ST_COUNT; st++)
			for (size_t k = i; k < end; k++) {
				const struct cmp *x = &c->cmps[k];
				bool mark = st == ST_MEAN && x->w.valid && x->w.p < ALPHA;
				double a, b, pd;

				if (!stat_cells(x, (enum statrow)st, &a, &b, &pd))
					continue;
				out_human_line("%-8s %-*s %*.2f (%7.2f%%) %*.2f %c%7.2f%%%c",
					       stat_name(x, (enum statrow)st), wname, x->metric,
					       wnum, a, 0.0, wnum, b, mark ? '*' : '(',
					       isfinite(pd) ? pd : 0, mark ? '*' : ')');
			}
		out_human_line("%s", "");
		i = end;
	}
}

/* Match the rows of the two files and compare their metrics: 0, EXIT_USAGE, EXIT_PARTIAL (said). */
static int cmpset_fill(struct bench_cmpset *c)
{
	const char *a = c->f[0].path, *b = c->f[1].path;
	int rc = 0;

	if (load(c, &c->f[0]) < 0)
		rc = -1;
	if (load(c, &c->f[1]) < 0)
		rc = -1;
	if (rc < 0)
		return EXIT_PARTIAL;
	if (strcmp(c->f[0].bench, c->f[1].bench))
		return cli_usage_error("'%s' is a result of bench %s and '%s' of bench %s: "
				       "compare two results of one bench", a, c->f[0].bench, b,
				       c->f[1].bench);
	if (index_rows(c, &c->f[0]) < 0 || index_rows(c, &c->f[1]) < 0)
		goto nomem;
	for (size_t i = 0; i < c->f[0].nrows; i++) {
		struct row *ra = &c->f[0].rows[i], *rb = NULL;

		for (size_t k = 0; k < c->f[1].nrows && !rb; k++)
			if (!c->f[1].rows[k].matched && !strcmp(c->f[1].rows[k].id, ra->id))
				rb = &c->f[1].rows[k];
		if (!rb) {
			if (unmatched(c, 0, ra, NULL) < 0)
				goto nomem;
			continue;
		}
		ra->matched = rb->matched = true;
		if (compare_rows(c, ra, rb) < 0)
			goto nomem;
	}
	for (size_t k = 0; k < c->f[1].nrows; k++)
		if (!c->f[1].rows[k].matched && unmatched(c, 1, &c->f[1].rows[k], NULL) < 0)
			goto nomem;
	return 0;
nomem:
	cli_fail(a, ENOMEM, "cannot compare");
	return EXIT_PARTIAL;
}

int bench_cmpset_make(const char *a, struct pc_json *doc_a, const char *b, struct pc_json *doc_b,
		      bool quiet, struct bench_cmpset **ret)
{
	struct bench_cmpset *c = calloc(1, sizeof(*c));
	int rc;

	if (!c) {
		cli_fail(a, ENOMEM, "cannot compare");
		return EXIT_PARTIAL;
	}
	c->quiet = quiet;
	c->f[0] = (struct file){ .path = a, .doc = doc_a, .borrowed = doc_a != NULL };
	c->f[1] = (struct file){ .path = b, .doc = doc_b, .borrowed = doc_b != NULL };
	if (doc_a)
		c->f[0].bench = pc_json_string(pc_json_get(doc_a, "bench"), NULL);
	if (doc_b)
		c->f[1].bench = pc_json_string(pc_json_get(doc_b, "bench"), NULL);
	rc = cmpset_fill(c);
	if (rc == EXIT_USAGE) {
		bench_cmpset_free(c);
		return rc;
	}
	*ret = c;
	return rc;
}

void bench_cmpset_free(struct bench_cmpset *c)
{
	if (!c)
		return;
	free(c->cmps);
	free(c->lones);
	release_file(&c->f[0]);
	release_file(&c->f[1]);
	free(c);
}

size_t bench_cmpset_count(const struct bench_cmpset *c)
{
	return c->ncmp;
}

void bench_cmpset_get(const struct bench_cmpset *c, size_t i, struct bench_cmp *ret)
{
	const struct cmp *x = &c->cmps[i];

	*ret = (struct bench_cmp){
		.row = x->label, .metric = x->metric, .unit = x->a.unit, .higher = x->higher,
		.hmean = x->hmean, .base_mean = x->mean_a, .new_mean = x->mean_b,
		.base_stddev = x->a.s.stddev, .new_stddev = x->b.s.stddev,
		.pdiff = pc_pdiff(x->mean_a, x->mean_b, x->higher), .welch_valid = x->w.valid,
		.welch_p = x->w.valid ? x->w.p : NAN, .significant = x->w.valid && x->w.p < ALPHA,
		.mmtests_significant = x->mm, .runs_base = x->a.s.n, .runs_new = x->b.s.n,
	};
}

int bench_cmpset_min_runs(const struct bench_cmpset *c, int side)
{
	return c->f[side ? 1 : 0].min_runs;
}

size_t bench_cmpset_unmatched(const struct bench_cmpset *c)
{
	return c->nlone;
}

int bench_compare(const char *a, const char *b)
{
	struct bench_cmpset *c = NULL;
	int rc;

	out_list_declare("unmatched");
	rc = bench_cmpset_make(a, NULL, b, NULL, false, &c);
	if (rc == EXIT_USAGE)
		return rc;
	if (rc) {
		bench_cmpset_free(c);
		return rc;
	}
	for (int s = 0; s < 2; s++)
		if (c->f[s].min_runs >= 0 && c->f[s].min_runs < MIN_RUNS)
			cli_warn("'%s' has metrics of %d run%s: with fewer than %d runs the "
				 "marks are noise", c->f[s].path, c->f[s].min_runs,
				 c->f[s].min_runs == 1 ? "" : "s", MIN_RUNS);
	if (!c->ncmp)
		cli_warn("'%s' and '%s' have no row and metric in common", a, b);
	for (size_t i = 0; i < c->ncmp; i++)
		emit_record(&c->cmps[i]);
	{
		struct orec rec = { 0 };

		orec_str(&rec, "bench", c->f[0].bench, 0);
		orec_str(&rec, "base", a, 0);
		orec_str(&rec, "new", b, 0);
		orec_str(&rec, "test", "welch", 0);
		orec_str(&rec, "sided", "two", 0);
		orec_f64(&rec, "alpha", ALPHA);
		orec_str(&rec, "mmtests_rule", "|d| > 1.96 (sd_base + sd_new)", 0);
		out_object("setup", &rec);
	}
	if (out_format() == OUT_HUMAN) {
		if (c->ncmp)
			emit_human(c);
	}
	for (size_t i = 0; i < c->nlone; i++)
		emit_unmatched(c, &c->lones[i]);
	if (out_format() == OUT_HUMAN) {
		if (c->nlone)
			out_human_line("%s", "");
		out_human_line("significance: Welch's t-test, two-sided, alpha 0.05 (marked *...*); "
			       "mmtests' CI rule |d| > 1.96(sd_a+sd_b) is in --json as "
			       "mmtests_significant");
	}
	rc = c->failures ? EXIT_PARTIAL : 0;
	bench_cmpset_free(c);
	return rc;
}
