/*
 * query.c - perfhub top and perfhub flamegraph: one profile, every profile
 * a selector picks (merged by the server), or a local perf.data file
 * (answered here by the profile engine); a table, JSON, or an interactive
 * SVG for a CI artifact.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-client.h"
#include "commands.h"
#include "engine/many.h"
#include "jsonbuf.h"
#include "qopts.h"
#include "svg.h"

#define TOP_DEFAULT_ROWS 20

/* ---- the answers of a local file ------------------------------------------------------ */

/* The /api/v1/query/top answer for one file. NULL after printing why. */
static json_t *file_top(pe_offline *p, const qo_opts *o, size_t rows, const char *who)
{
	pe_model *m = pe_offline_model(p);
	int by_samples = qo_by_samples(o, 0);
	pe_selection *sel = NULL;
	pe_top_row *tr = NULL;
	pe_fntab *t = pe_fntab_new();
	const pe_fnsum *r;
	uint64_t samples, period;
	size_t n = 0, nr;
	pe_filter f;
	json_t *out = NULL;

	qo_filter(o, &f);
	if (t && pe_select(m, &f, pe_offline_blocks(p), &sel) == 0 &&
	    pe_top(m, &f, sel, by_samples, &tr, &n) == 0) {
		pe_selection_totals(sel, &samples, &period);
		if (pe_fntab_add(t, 0, tr, n, by_samples ? samples : period, samples, 0) == 0 &&
		    pe_fntab_merged(t, 0, &r, &nr) == 0)
			out = pe_fnsum_json(r, nr, rows, pe_fntab_total(t, 0));
	}
	if (out) {
		json_object_set_new(out, "weight", json_string(by_samples ? "samples" : "period"));
		json_object_set_new(out, "profiles", json_integer(1));
	} else {
		fprintf(stderr, "perfhub %s: cannot answer for the file (out of memory?)\n", who);
	}
	pe_top_free(tr, n);
	pe_selection_free(sel);
	pe_fntab_free(t);
	return out;
}

/* A flame graph of one file into the tree callbacks. -1 after printing why. */
static int file_flame(pe_offline *p, const qo_opts *o, const pe_tree_cb *cb, void *ctx,
		      const char *who)
{
	pe_model *m = pe_offline_model(p);
	pe_selection *sel = NULL;
	pe_filter f;
	int rc;

	qo_filter(o, &f);
	rc = pe_select(m, &f, pe_offline_blocks(p), &sel);
	if (rc == 0)
		rc = pe_flame(m, &f, sel, qo_by_samples(o, 0), cb, ctx);
	pe_selection_free(sel);
	if (rc)
		fprintf(stderr, "perfhub %s: cannot draw the flame graph (out of memory?)\n", who);
	return rc ? -1 : 0;
}

/* ---- perfhub top ---------------------------------------------------------------------- */

static void print_top(json_t *j, const qo_spec *s)
{
	json_t *fns = json_object_get(j, "functions"), *f;
	const char *w = json_string_value(json_object_get(j, "weight"));
	long long profiles = (long long)json_integer_value(json_object_get(j, "profiles"));
	size_t i;

	printf("%s: %lld profile%s, %s %.0f\n", s->text, profiles, profiles == 1 ? "" : "s",
	       w ? w : "weight", json_number_value(json_object_get(j, "total")));
	printf("%7s %7s %12s %12s  %s\n", "SELF%", "TOTAL%", "SELF", "TOTAL", "FUNCTION (DSO)");
	json_array_foreach(fns, i, f) {
		const char *dso = json_string_value(json_object_get(f, "dso"));
		const char *base = dso ? strrchr(dso, '/') : NULL;
		printf("%7.2f %7.2f %12.6g %12.6g  %s%s%s%s\n",
		       json_number_value(json_object_get(f, "self_share")),
		       json_number_value(json_object_get(f, "total_share")),
		       json_number_value(json_object_get(f, "self")),
		       json_number_value(json_object_get(f, "total")),
		       json_string_value(json_object_get(f, "name")), dso ? " (" : "",
		       dso ? (base ? base + 1 : dso) : "", dso ? ")" : "");
	}
}

static const char top_usage[] =
	"usage: perfhub top ID|SELECTOR|FILE [--limit N] [--json] [--normalize]\n"
	"                   [--event NAME] [--comm COMM] [--pid PID] [--tid TID]\n"
	"                   [--weight samples|period] [--kernel]\n"
	"                   [--last N] [--since T] [--until T] [--server URL] [--token-file FILE]\n";

int cmd_top(int argc, char **argv)
{
	args_server srv = { 0 };
	qo_opts o;
	qo_spec s;
	const char *what = NULL, *v;
	long long limit = TOP_DEFAULT_ROWS;
	char q[QO_MAX_QUERY], path[QO_MAX_QUERY + 64], num[32];
	ac_client *c = NULL;
	pe_offline *p = NULL;
	json_t *j = NULL;
	int a, json = 0, status = 2, rc;

	qo_init(&o);
	for (a = 1; a < argc; a++) {
		if (args_server_option(argc, argv, &a, &srv))
			continue;
		if ((rc = qo_option(argc, argv, &a, &o, "top")) != 0) {
			if (rc < 0)
				return 2;
		} else if ((v = args_value(argc, argv, &a, "--limit"))) {
			if ((limit = strtoll(v, NULL, 10)) <= 0) {
				fprintf(stderr, "perfhub top: --limit wants a positive number\n");
				return 2;
			}
		} else if (!strcmp(argv[a], "--json")) {
			json = 1;
		} else if (!what && (argv[a][0] != '-' || !argv[a][1])) {
			what = argv[a];
		} else {
			fputs(top_usage, strcmp(argv[a], "--help") ? stderr : stdout);
			return strcmp(argv[a], "--help") ? 2 : 0;
		}
	}
	if (!what) {
		fputs(top_usage, stderr);
		return 2;
	}
	if (qo_spec_parse(what, &s, "top") < 0)
		return 2;
	status = 1;
	if (s.kind == QO_FILE) {
		if (!(p = qo_load(s.text, "top")) || !(j = file_top(p, &o, (size_t)limit, "top")))
			goto out;
	} else {
		q[0] = 0;
		snprintf(num, sizeof(num), "%lld", limit);
		if (qo_pick_query(&o, &s, "", 1, q, sizeof(q)) < 0 ||
		    qo_filter_query(&o, q, sizeof(q)) < 0 || ac_query_add(q, sizeof(q), "rows", num) < 0) {
			fprintf(stderr, "perfhub top: the question is too long\n");
			goto out;
		}
		snprintf(path, sizeof(path), "/api/v1/query/top%s", q);
		if (!(c = ac_open(&srv)) || !(j = ac_get_json(c, path, "top")))
			goto out;
		if (!json_integer_value(json_object_get(j, "profiles"))) {
			fprintf(stderr, "perfhub top: no ready profile is %s\n", s.text);
			goto out;
		}
	}
	if (json) {
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
		putchar('\n');
	} else {
		print_top(j, &s);
	}
	status = 0;
out:
	json_decref(j);
	pe_offline_free(p);
	ac_close(c);
	return status;
}

/* ---- perfhub flamegraph ----------------------------------------------------------------- */

static const char flame_usage[] =
	"usage: perfhub flamegraph ID|SELECTOR|FILE [--svg] [--title TEXT] [--width PIXELS]\n"
	"                          [--max-nodes N] [--normalize]\n"
	"                          [--event NAME] [--comm COMM] [--pid PID] [--tid TID]\n"
	"                          [--weight samples|period] [--kernel]\n"
	"                          [--last N] [--since T] [--until T] [--server URL] [--token-file FILE]\n";

typedef struct flame_args {
	qo_opts o;
	qo_spec s;
	const char *title, *max_nodes;
	unsigned width;
	int svg;
} flame_args;

/* The tree from the server: the API's JSON. NULL after printing why. */
static json_t *server_flame(ac_client *c, const flame_args *fa)
{
	char q[QO_MAX_QUERY], path[QO_MAX_QUERY + 64];
	/* one profile's own endpoint, unless it is to be normalized */
	int own = fa->s.kind == QO_ID && !fa->o.normalize;

	q[0] = 0;
	if ((!own && qo_pick_query(&fa->o, &fa->s, "", 1, q, sizeof(q)) < 0) ||
	    qo_filter_query(&fa->o, q, sizeof(q)) < 0 ||
	    (fa->max_nodes && ac_query_add(q, sizeof(q), "max_nodes", fa->max_nodes) < 0)) {
		fprintf(stderr, "perfhub flamegraph: the question is too long\n");
		return NULL;
	}
	if (own)
		snprintf(path, sizeof(path), "/api/v1/profiles/%lld/flamegraph%s",
			 (long long)fa->s.id, q);
	else
		snprintf(path, sizeof(path), "/api/v1/query/flamegraph%s", q);
	return ac_get_json(c, path, "flamegraph");
}

static int write_svg(const flame_args *fa, svg_tree *t, json_t *root)
{
	char sub[512];
	int by_samples = qo_by_samples(&fa->o, 0);
	json_t *np = json_object_get(root, "profiles");
	svg_opts so = { fa->title, sub, by_samples ? "samples" : "period" };

	if (np)
		snprintf(sub, sizeof(sub), "%s - %lld profile%s, weight %s%s", fa->s.text,
			 (long long)json_integer_value(np), json_integer_value(np) == 1 ? "" : "s",
			 by_samples ? "samples" : "period", fa->o.normalize ? ", normalized" : "");
	else
		snprintf(sub, sizeof(sub), "%s - weight %s", fa->s.text,
			 by_samples ? "samples" : "period");
	if (fa->o.normalize)
		so.unit = "profiles";
	if (svg_write(stdout, t, &so) < 0) {
		fprintf(stderr, "perfhub flamegraph: nothing to draw, or stdout failed\n");
		return -1;
	}
	return 0;
}

static int parse_flame_args(int argc, char **argv, flame_args *fa, args_server *srv)
{
	const char *what = NULL, *v;
	int a, rc;

	qo_init(&fa->o);
	for (a = 1; a < argc; a++) {
		if (args_server_option(argc, argv, &a, srv))
			continue;
		if ((rc = qo_option(argc, argv, &a, &fa->o, "flamegraph")) != 0) {
			if (rc < 0)
				return 2;
		} else if ((v = args_value(argc, argv, &a, "--title"))) {
			fa->title = v;
		} else if ((v = args_value(argc, argv, &a, "--max-nodes"))) {
			if (strtoll(v, NULL, 10) <= 0) {
				fprintf(stderr, "perfhub flamegraph: --max-nodes wants a positive number\n");
				return 2;
			}
			fa->max_nodes = v;
		} else if ((v = args_value(argc, argv, &a, "--width"))) {
			long w = strtol(v, NULL, 10);
			if (w < 100 || w > 100000) {
				fprintf(stderr, "perfhub flamegraph: --width is 100..100000 pixels\n");
				return 2;
			}
			fa->width = (unsigned)w;
		} else if (!strcmp(argv[a], "--svg")) {
			fa->svg = 1;
		} else if (!what && (argv[a][0] != '-' || !argv[a][1])) {
			what = argv[a];
		} else {
			fputs(flame_usage, strcmp(argv[a], "--help") ? stderr : stdout);
			return strcmp(argv[a], "--help") ? 2 : -1;
		}
	}
	if (!what) {
		fputs(flame_usage, stderr);
		return 2;
	}
	return qo_spec_parse(what, &fa->s, "flamegraph") < 0 ? 2 : 0;
}

int cmd_flamegraph(int argc, char **argv)
{
	args_server srv = { 0 };
	flame_args fa = { 0 };
	ac_client *c = NULL;
	pe_offline *p = NULL;
	svg_tree *t = NULL;
	json_t *j = NULL;
	int status = 1, rc;

	if ((rc = parse_flame_args(argc, argv, &fa, &srv)) != 0)
		return rc < 0 ? 0 : rc;
	if (!(t = svg_tree_new(fa.width)))
		goto out;
	if (fa.s.kind == QO_FILE) {
		static const pe_tree_cb to_svg = { svg_tree_enter, svg_tree_leave };
		static const pe_tree_cb to_json = { jb_value_node_open, jb_node_close };
		jb_tree jt;
		if (fa.o.normalize || fa.max_nodes)
			fprintf(stderr, "perfhub flamegraph: --normalize and --max-nodes are for the "
				"server's answers; a file is drawn whole\n");
		if (!(p = qo_load(fa.s.text, "flamegraph")))
			goto out;
		if (fa.svg) {
			if (file_flame(p, &fa.o, &to_svg, t, "flamegraph") < 0 ||
			    write_svg(&fa, t, NULL) < 0)
				goto out;
		} else {
			/* the API's JSON, written as the tree is walked */
			memset(&jt, 0, sizeof(jt));
			rc = file_flame(p, &fa.o, &to_json, &jt, "flamegraph");
			if (rc == 0 && !jt.b.oom)
				rc = fwrite(jt.b.p, 1, jt.b.len, stdout) == jt.b.len ? 0 : -1;
			free(jt.b.p);
			if (rc < 0 || jt.b.oom)
				goto out;
			putchar('\n');
		}
	} else {
		if (!(c = ac_open(&srv)) || !(j = server_flame(c, &fa)))
			goto out;
		if (!fa.svg) {
			json_dumpf(j, stdout, JSON_COMPACT);
			putchar('\n');
		} else if (svg_tree_add_json(t, j) < 0) {
			fprintf(stderr, "perfhub flamegraph: the server's answer is not a flame graph\n");
			goto out;
		} else if (write_svg(&fa, t, j) < 0) {
			goto out;
		}
	}
	status = fflush(stdout) ? 1 : 0;
out:
	json_decref(j);
	svg_tree_free(t);
	pe_offline_free(p);
	ac_close(c);
	return status;
}
