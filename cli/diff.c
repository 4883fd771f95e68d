/*
 * diff.c - perfhub diff: two sides, each a profile id or a selector (the
 * server ranks the changes: GET /api/v1/diff) or both local perf.data
 * files (ranked here by the same engine, no server); the table, or JSON;
 * the exit status of the gate.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "diff.h"
#include "engine/many.h"
#include "qopts.h"

#define DF_NAME_W 40		/* columns of a function's name in the table */

void df_opts_init(df_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->fail_over = DF_DEFAULT_FAIL_OVER;
	o->alpha = DF_DEFAULT_ALPHA;
	o->rows = DF_DEFAULT_ROWS;
}

/* ---- two local files, ranked here ------------------------------------------------------- */

/* One file into side `side` of t. -1 after printing why. */
static int add_file(pe_fntab *t, int side, pe_offline *p, const qo_opts *o, int by_samples)
{
	pe_model *m = pe_offline_model(p);
	pe_selection *sel = NULL;
	pe_top_row *rows = NULL;
	uint64_t samples, period;
	size_t n = 0;
	pe_filter f;
	int rc = -1;

	qo_filter(o, &f);
	if (pe_select(m, &f, pe_offline_blocks(p), &sel) == 0 &&
	    pe_top(m, &f, sel, by_samples, &rows, &n) == 0) {
		pe_selection_totals(sel, &samples, &period);
		rc = pe_fntab_add(t, side, rows, n, by_samples ? samples : period, samples,
				  qo_seconds(p, &f));
	}
	if (rc < 0)
		fprintf(stderr, "perfhub diff: cannot rank the files (out of memory?)\n");
	pe_top_free(rows, n);
	pe_selection_free(sel);
	return rc;
}

/* The ranked changes of two files, as the API gives them. NULL printed. */
static json_t *files_ranked(const qo_spec s[2], const qo_opts *qo, const df_opts *o)
{
	pe_offline *p[2] = { NULL, NULL };
	pe_fntab *t = pe_fntab_new();
	pe_ranked rk = { 0 };
	json_t *out = NULL;
	int by_samples = qo_by_samples(qo, 0), i;

	for (i = 0; i < 2 && t; i++)
		if (!(p[i] = qo_load(s[i].text, "diff")) || add_file(t, i, p[i], qo, by_samples) < 0)
			goto out;
	if (t && pe_fntab_rank(t, o->min_share, o->alpha, 0, &rk) == 0)
		out = pe_ranked_json(&rk, by_samples ? "samples" : "period", o->alpha, o->min_share);
	if (!out)
		fprintf(stderr, "perfhub diff: out of memory\n");
out:
	pe_ranked_free(&rk);
	pe_fntab_free(t);
	pe_offline_free(p[0]);
	pe_offline_free(p[1]);
	return out;
}

/* ---- the server's ----------------------------------------------------------------------- */

static json_t *server_ranked(ac_client *c, const qo_spec s[2], const qo_opts *qo,
			     const df_opts *o)
{
	char q[QO_MAX_QUERY], path[QO_MAX_QUERY + 64], num[64];
	json_t *j, *out;

	q[0] = 0;
	/* every row: the gate looks at all, the table at the first few */
	ac_query_add(q, sizeof(q), "rows", "0");
	snprintf(num, sizeof(num), "%.17g", o->min_share);
	ac_query_add(q, sizeof(q), "min_share", num);
	snprintf(num, sizeof(num), "%.17g", o->alpha);
	ac_query_add(q, sizeof(q), "alpha", num);
	if (qo_pick_query(qo, &s[0], "base_", 0, q, sizeof(q)) < 0 ||
	    qo_pick_query(qo, &s[1], "target_", 0, q, sizeof(q)) < 0 ||
	    qo_filter_query(qo, q, sizeof(q)) < 0) {
		fprintf(stderr, "perfhub diff: the question is too long\n");
		return NULL;
	}
	snprintf(path, sizeof(path), "/api/v1/diff%s", q);
	if (!(j = ac_get_json(c, path, "diff")))
		return NULL;
	/* the tree stays on the server's side of this */
	out = json_pack("{s:O,s:O,s:O}", "regressions", json_object_get(j, "regressions"),
			"improvements", json_object_get(j, "improvements"), "summary",
			json_object_get(j, "summary"));
	json_decref(j);
	if (!out)
		fprintf(stderr, "perfhub diff: the server's answer has no ranked changes\n");
	return out;
}

/* ---- the gate and the table ------------------------------------------------------------- */

static double num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* The first regression over the threshold (with significant_only, that the
 * test does not rule out as noise); NULL: none. Rows come worst first. */
static json_t *gate(json_t *ranked, const df_opts *o)
{
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(ranked, "regressions"), i, r) {
		double grew = fmax(num(r, "delta_self"), num(r, "delta_total"));
		if (grew <= o->fail_over)
			break;
		if (!o->significant_only || !json_is_false(json_object_get(r, "significant")))
			return r;
	}
	return NULL;
}

/* v in three significant digits with k, M, G, T: 1.36e+08 as "136M". */
static const char *si(double v, char *buf, size_t len)
{
	static const char units[] = " kMGT";
	int u = 0;

	while (fabs(v) >= 999.5 && u < 4) {
		v /= 1000;
		u++;
	}
	if (u)
		snprintf(buf, len, "%.3g%c", v, units[u]);
	else
		snprintf(buf, len, "%.3g", v);
	return buf;
}

static void print_side(FILE *out, const char *side, const char *what, json_t *sum, int target)
{
	char k[32], b[32];
	double seconds;
	json_t *chg;

	snprintf(k, sizeof(k), "%s_profiles", side);
	fprintf(out, "%-7s %s: %lld profile%s, %s %s per profile", side, what,
		(long long)json_integer_value(json_object_get(sum, k)),
		json_integer_value(json_object_get(sum, k)) == 1 ? "" : "s",
		si(num(sum, target ? "target_total" : "base_total"), b, sizeof(b)),
		json_string_value(json_object_get(sum, "weight")));
	snprintf(k, sizeof(k), "%s_seconds", side);
	seconds = num(sum, k);
	if (seconds > 0)
		fprintf(out, " over %.3f s", seconds);
	chg = json_object_get(sum, "total_change_pct");
	if (target && json_is_number(chg))
		fprintf(out, " (%+.1f%%)", json_number_value(chg));
	fputc('\n', out);
}

static void print_rows(FILE *out, const char *title, json_t *rows, size_t max)
{
	json_t *r;
	size_t i;

	fprintf(out, "\n%-*s  ---- self share %% ---  --- total share %% ---  self per profile\n",
		DF_NAME_W, "");
	fprintf(out, "%-*s  %6s %6s %8s  %6s %6s %8s  %-24s %s\n", DF_NAME_W, title, "base",
		"target", "delta", "base", "target", "delta", "base -> target", "sig");
	if (!json_array_size(rows))
		fprintf(out, "(none)\n");
	json_array_foreach(rows, i, r) {
		const char *fn = json_string_value(json_object_get(r, "function"));
		const char *dso = json_string_value(json_object_get(r, "dso"));
		const char *base = dso ? strrchr(dso, '/') : NULL;
		json_t *sig = json_object_get(r, "significant"), *pct;
		char name[256], change[32], per[80], b1[32], b2[32];

		if (i >= max) {
			fprintf(out, "... %zu more\n", json_array_size(rows) - max);
			break;
		}
		snprintf(name, sizeof(name), "%s%s%s%s", fn ? fn : "?", dso ? " (" : "",
			 dso ? (base ? base + 1 : dso) : "", dso ? ")" : "");
		pct = json_object_get(r, "self_change_pct");
		if (json_is_number(pct))
			snprintf(change, sizeof(change), " (%+.0f%%)", json_number_value(pct));
		else
			change[0] = 0;
		snprintf(per, sizeof(per), "%s -> %s%s", si(num(r, "base_self"), b1, sizeof(b1)),
			 si(num(r, "target_self"), b2, sizeof(b2)), change);
		fprintf(out, "%-*.*s  %6.2f %6.2f %+8.2f  %6.2f %6.2f %+8.2f  %-24s %s\n", DF_NAME_W,
			DF_NAME_W, name, num(r, "base_self_share"), num(r, "target_self_share"),
			num(r, "delta_self"), num(r, "base_total_share"), num(r, "target_total_share"),
			num(r, "delta_total"), per,
			json_is_null(sig) ? "-" : json_is_true(sig) ? "yes" : "no");
	}
}

/* Prints the answer (table or JSON) and returns the gate's exit status. */
static int report(FILE *out, json_t *ranked, const char *base, const char *target,
		  const df_opts *o)
{
	json_t *sum = json_object_get(ranked, "summary"), *bad = gate(ranked, o);
	double grew = bad ? fmax(num(bad, "delta_self"), num(bad, "delta_total")) : 0;

	if (o->json) {
		json_t *g = json_pack("{s:f,s:b,s:b,s:s?,s:f}", "fail_over", o->fail_over,
				      "significant_only", o->significant_only, "failed", bad != NULL,
				      "function",
				      bad ? json_string_value(json_object_get(bad, "function")) : NULL,
				      "grew", grew);
		size_t n;
		/* the first rows, as in the table */
		while ((n = json_array_size(json_object_get(ranked, "regressions"))) > o->rows)
			json_array_remove(json_object_get(ranked, "regressions"), n - 1);
		while ((n = json_array_size(json_object_get(ranked, "improvements"))) > o->rows)
			json_array_remove(json_object_get(ranked, "improvements"), n - 1);
		json_object_set_new(ranked, "gate", g);
		json_dumpf(ranked, out, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
		fputc('\n', out);
		return bad ? 1 : 0;
	}
	print_side(out, "base", base, sum, 0);
	print_side(out, "target", target, sum, 1);
	fprintf(out, "weight %s; shares in percent, deltas in points; test %s (alpha %g)\n",
		json_string_value(json_object_get(sum, "weight")),
		json_string_value(json_object_get(sum, "test")), num(sum, "alpha"));
	print_rows(out, "REGRESSIONS", json_object_get(ranked, "regressions"), o->rows);
	print_rows(out, "IMPROVEMENTS", json_object_get(ranked, "improvements"), o->rows);
	if (bad)
		fprintf(out, "\nFAIL: %s grew by %.2f points (more than %g)\n",
			json_string_value(json_object_get(bad, "function")), grew, o->fail_over);
	else
		fprintf(out, "\nok: no function's share grew by more than %g points%s\n", o->fail_over,
			o->significant_only ? " beyond the noise" : "");
	return bad ? 1 : 0;
}

int df_gate(ac_client *c, const char *base, long long last, int64_t target, const df_opts *o,
	    FILE *out)
{
	qo_opts qo;
	qo_spec s[2] = { { QO_SELECTOR, 0, base }, { QO_ID, target, NULL } };
	char tname[32];
	json_t *ranked;
	int rc;

	qo_init(&qo);
	qo.last = last > 0 ? last : -1;
	snprintf(tname, sizeof(tname), "%lld", (long long)target);
	s[1].text = tname;
	if (!(ranked = server_ranked(c, s, &qo, o)))
		return 2;
	rc = report(out, ranked, base, tname, o);
	json_decref(ranked);
	return rc;
}

/* ---- perfhub diff ------------------------------------------------------------------------ */

static const char diff_usage[] =
	"usage: perfhub diff BASE TARGET [--fail-over POINTS] [--significant-only] [--alpha A]\n"
	"                    [--min-share PCT] [--limit N] [--json]\n"
	"                    [--event NAME] [--comm COMM] [--pid PID] [--tid TID]\n"
	"                    [--weight samples|period] [--kernel]\n"
	"                    [--last N] [--since T] [--until T] [--server URL] [--token-file FILE]\n"
	"  BASE, TARGET: a profile id, a selector {label=\"value\", ...}, or both local\n"
	"  perf.data files. Exit 0: no function's share grew by more than POINTS\n"
	"  (default 5); 1: one did; 2: an error.\n";

/* A number option in [min, max]: 1 taken, 0 not this option, -1 bad (printed). */
static int double_opt(int argc, char **argv, int *i, const char *opt, double min, double max,
		      double *out)
{
	const char *v = args_value(argc, argv, i, opt);
	char *end;

	if (!v)
		return 0;
	errno = 0;
	*out = strtod(v, &end);
	if (errno || end == v || *end || !(*out >= min && *out <= max)) {
		fprintf(stderr, "perfhub diff: %s wants a number from %g to %g\n", opt, min, max);
		return -1;
	}
	return 1;
}

int cmd_diff(int argc, char **argv)
{
	args_server srv = { 0 };
	df_opts o;
	qo_opts qo;
	qo_spec s[2];
	const char *what[2] = { NULL, NULL };
	ac_client *c = NULL;
	json_t *ranked = NULL;
	double rows = DF_DEFAULT_ROWS;
	int a, rc, status = 2;

	df_opts_init(&o);
	qo_init(&qo);
	for (a = 1; a < argc; a++) {
		if (args_server_option(argc, argv, &a, &srv))
			continue;
		if ((rc = qo_option(argc, argv, &a, &qo, "diff")) != 0 ||
		    (rc = double_opt(argc, argv, &a, "--fail-over", 0, 100, &o.fail_over)) != 0 ||
		    (rc = double_opt(argc, argv, &a, "--min-share", 0, 100, &o.min_share)) != 0 ||
		    (rc = double_opt(argc, argv, &a, "--alpha", 0, 1, &o.alpha)) != 0 ||
		    (rc = double_opt(argc, argv, &a, "--limit", 1, 1e6, &rows)) != 0) {
			if (rc < 0)
				return 2;
		} else if (!strcmp(argv[a], "--json")) {
			o.json = 1;
		} else if (!strcmp(argv[a], "--significant-only")) {
			o.significant_only = 1;
		} else if (!what[1] && (argv[a][0] != '-' || !argv[a][1])) {
			what[what[0] ? 1 : 0] = argv[a];
		} else {
			fputs(diff_usage, strcmp(argv[a], "--help") ? stderr : stdout);
			return strcmp(argv[a], "--help") ? 2 : 0;
		}
	}
	if (!what[1]) {
		fputs(diff_usage, stderr);
		return 2;
	}
	o.rows = (size_t)rows;
	if (qo_spec_parse(what[0], &s[0], "diff") < 0 || qo_spec_parse(what[1], &s[1], "diff") < 0)
		return 2;
	if ((s[0].kind == QO_FILE) != (s[1].kind == QO_FILE)) {
		fprintf(stderr, "perfhub diff: give two local files, or two profiles on the server "
			"(ids or selectors); to compare a file with the server's profiles, upload it "
			"first (perfhub upload --wait) and diff its id\n");
		return 2;
	}
	if (s[0].kind == QO_FILE)
		ranked = files_ranked(s, &qo, &o);
	else if ((c = ac_open(&srv)))
		ranked = server_ranked(c, s, &qo, &o);
	if (ranked)
		status = report(stdout, ranked, s[0].text, s[1].text, &o);
	json_decref(ranked);
	ac_close(c);
	return status;
}
