/*
 * views.c - perfhub annotate, callers, callees: one function of a profile
 * on a server (GET .../annotate, .../sandwich) or of a local recording
 * (the engine builds the profile in memory and answers as the server
 * does: the same JSON), printed for a person (as perf annotate --stdio and
 * an indented call tree) or as that JSON.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "annotate-json.h"
#include "api-client.h"
#include "commands.h"
#include "engine/feed.h"
#include "engine/query.h"

#define VW_MAX_QUERY 8192
#define VW_MAX_DEPTH 256	/* tree levels printed */
#define VW_MAX_OTHERS 64	/* other DSOs of a name listed */
#define VW_MAX_TREE_DEPTH 8200	/* tree levels built from a local recording */

typedef struct vw_opts {
	args_server srv;
	const char *target, *function;
	const char *event, *weight, *dso, *comm;
	int json, kernel;
	long long max_depth;
} vw_opts;

static void usage(const char *cmd)
{
	if (!strcmp(cmd, "annotate"))
		fprintf(stderr, "usage: perfhub annotate FILE|ID FUNCTION [--event NAME]"
			" [--weight samples|period|offcpu|wall]\n"
			"                        [--dso PATH] [--json] [--server URL]"
			" [--token-file FILE]\n");
	else
		fprintf(stderr, "usage: perfhub %s FILE|ID FUNCTION [--event NAME]"
			" [--weight samples|period|offcpu|wall]\n"
			"                       [--comm COMM] [--kernel] [--max-depth N] [--json]\n"
			"                       [--server URL] [--token-file FILE]\n", cmd);
}

/* 0, 1 after --help, 2 on a bad option (printed). */
static int parse(int argc, char **argv, vw_opts *o)
{
	const char *cmd = argv[0], *v;
	int i, pos = 0, annotate = !strcmp(cmd, "annotate");

	memset(o, 0, sizeof(*o));
	o->max_depth = VW_MAX_DEPTH;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(cmd);
			return 1;
		}
		if (args_server_option(argc, argv, &i, &o->srv))
			continue;
		if ((v = args_value(argc, argv, &i, "--event")))
			o->event = v;
		else if ((v = args_value(argc, argv, &i, "--weight")))
			o->weight = v;
		else if (annotate && (v = args_value(argc, argv, &i, "--dso")))
			o->dso = v;
		else if (!annotate && (v = args_value(argc, argv, &i, "--comm")))
			o->comm = v;
		else if (!annotate && (v = args_value(argc, argv, &i, "--max-depth"))) {
			char *end;
			o->max_depth = strtoll(v, &end, 10);
			if (*end || o->max_depth < 1 || o->max_depth > VW_MAX_DEPTH) {
				fprintf(stderr, "perfhub %s: --max-depth wants 1..%d\n", cmd, VW_MAX_DEPTH);
				return 2;
			}
		} else if (!strcmp(argv[i], "--json"))
			o->json = 1;
		else if (!annotate && !strcmp(argv[i], "--kernel"))
			o->kernel = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "perfhub %s: unknown option '%s'\n", cmd, argv[i]);
			usage(cmd);
			return 2;
		} else if (pos == 0) {
			o->target = argv[i];
			pos++;
		} else if (pos == 1) {
			o->function = argv[i];
			pos++;
		} else {
			fprintf(stderr, "perfhub %s: one ID and one FUNCTION\n", cmd);
			return 2;
		}
	}
	if (!o->target || !o->function) {
		usage(cmd);
		return 2;
	}
	return 0;
}

/* GET /api/v1/profiles/ID/ENDPOINT?function=...&... from the server. */
static json_t *fetch(const vw_opts *o, const char *cmd, const char *endpoint, int64_t id)
{
	char q[VW_MAX_QUERY], path[VW_MAX_QUERY + 64], what[64];
	ac_client *c;
	json_t *j;

	q[0] = 0;
	if (ac_query_add(q, sizeof(q), "function", o->function) < 0 ||
	    (o->event && ac_query_add(q, sizeof(q), "event", o->event) < 0) ||
	    (o->weight && ac_query_add(q, sizeof(q), "weight", o->weight) < 0) ||
	    (o->dso && ac_query_add(q, sizeof(q), "dso", o->dso) < 0) ||
	    (o->comm && ac_query_add(q, sizeof(q), "comm", o->comm) < 0) ||
	    (o->kernel && ac_query_add(q, sizeof(q), "kernel", "1") < 0)) {
		fprintf(stderr, "perfhub %s: arguments too long\n", cmd);
		return NULL;
	}
	if (!(c = ac_open(&o->srv)))
		return NULL;
	snprintf(path, sizeof(path), "/api/v1/profiles/%lld/%s%s", (long long)id, endpoint, q);
	snprintf(what, sizeof(what), "%s", cmd);
	j = ac_get_json(c, path, what);
	ac_close(c);
	return j;
}

/* ---- a local recording --------------------------------------------------------------- */

static void warn(void *ctx, const char *text)
{
	fprintf(stderr, "perfhub %s: warning: %s\n", (const char *)ctx, text);
}

/* The recording as a profile in memory, and the filter o asks for. NULL
 * after printing why. */
static pe_offline *load(const vw_opts *o, const char *cmd, const char *default_weight,
			pe_filter *f, int *by_samples)
{
	char msg[512];
	const char *why;
	pe_offline *p;

	memset(f, 0, sizeof(*f));
	f->pid = f->tid = -1;
	f->event = o->event;
	f->comm = o->comm;
	f->kernel = o->kernel;
	if (pe_weight_parse(o->weight ? o->weight : default_weight, by_samples, &f->measure) < 0) {
		fprintf(stderr, "perfhub %s: --weight wants samples, period, offcpu or wall\n", cmd);
		return NULL;
	}
	if (!(p = pe_feed_load(o->target, NULL, warn, (void *)cmd, msg, sizeof(msg)))) {
		fprintf(stderr, "perfhub %s: %s: %s\n", cmd, o->target, msg);
		return NULL;
	}
	if (pe_measure_check(pe_offline_model(p), f, &why)) {
		fprintf(stderr, "perfhub %s: weight=%s: %s\n", cmd,
			pe_weight_name(*by_samples, f->measure), why);
		pe_offline_free(p);
		return NULL;
	}
	return p;
}

/* Source text of a local recording: the files as they are here. */
static int read_source(void *ctx, const char *file, unsigned first, unsigned last,
		       char ***lines)
{
	(void)ctx;
	return an_source_lines(file, first, last, lines) < 0;
}

/* The function's annotation, as the server's /annotate answers it. */
static json_t *annotate_local(const vw_opts *o)
{
	const char *others[VW_MAX_OTHERS];
	uint64_t self[VW_MAX_OTHERS];
	pd_dso_cache *cache = NULL;
	pd_dso_paths paths = { 0 };
	an_request rq = { 0 };
	const pe_annot_dso *d = NULL;
	an_meta meta = { 0 };
	an_result r;
	pe_annot an;
	pe_filter f;
	pe_offline *p;
	json_t *j = NULL, *src;
	uint64_t *a = NULL, *s = NULL, *v = NULL;
	size_t i;
	int by_samples, rc;

	if (!(p = load(o, "annotate", "samples", &f, &by_samples)))
		return NULL;
	rc = pe_annotate(pe_offline_model(p), &f, o->function, pe_offline_leaves(p), &an);
	if (rc == 1)
		fprintf(stderr, "perfhub annotate: no function '%s' in %s\n", o->function, o->target);
	if (rc)
		goto out;
	for (i = 0; i < an.n && !d; i++)
		if (!o->dso || (an.dsos[i].dso && !strcmp(an.dsos[i].dso, o->dso)))
			d = &an.dsos[i];
	if (!d) {
		fprintf(stderr, "perfhub annotate: '%s' has no samples%s%s\n", o->function,
			o->dso ? " in " : "", o->dso ? o->dso : "");
		goto out;
	}
	meta.function = o->function;
	meta.weight = pe_weight_name(by_samples, f.measure);
	meta.dso = d->dso;
	meta.build_id = pe_offline_build_id(p, d->dso);
	meta.self = by_samples ? d->samples : d->value;
	meta.by_samples = by_samples;
	meta.kernel = d->kernel;
	meta.other_dsos = others;
	meta.other_self = self;
	for (i = 0; i < an.n && meta.nr_other < VW_MAX_OTHERS; i++)
		if (&an.dsos[i] != d) {
			others[meta.nr_other] = an.dsos[i].dso;
			self[meta.nr_other++] = by_samples ? an.dsos[i].samples : an.dsos[i].value;
		}
	a = calloc(d->n + 1, sizeof(*a));
	s = calloc(d->n + 1, sizeof(*s));
	v = calloc(d->n + 1, sizeof(*v));
	if (!a || !s || !v || !(cache = pd_dso_cache_new(0)))
		goto out;
	for (i = 0; i < d->n; i++) {
		a[i] = d->addrs[i].addr;
		s[i] = d->addrs[i].samples;
		v[i] = d->addrs[i].value;
	}
	rq.addrs = a;
	rq.samples = s;
	rq.values = v;
	rq.n = d->n;
	rq.kernel = d->kernel;
	/* the symbolizer's defaults: perf's build-id cache, the debug
	 * directory, the binary where it was recorded */
	if (an_annotate_dso(cache, &paths, d->dso, meta.build_id, &rq, &r) < 0)
		goto out;
	if ((j = an_json(&r, &meta)) && (src = an_source_json(&r, read_source, NULL)))
		json_object_set_new(j, "source", src);
	an_result_free(&r);
out:
	if (!j && !rc && d)
		fprintf(stderr, "perfhub annotate: out of memory\n");
	if (cache)
		pd_dso_cache_free(cache);
	free(a);
	free(s);
	free(v);
	pe_annot_free(&an);
	pe_offline_free(p);
	return j;
}

/* A tree as the server's JSON: a node object per enter(), its children's array open. */
typedef struct jtree {
	json_t *stack[VW_MAX_TREE_DEPTH];
	size_t depth;
	json_t *root;
	int oom;
} jtree;

static int jt_enter(void *ctx, const char *name, size_t len, const char *dso, uint64_t value)
{
	jtree *t = ctx;
	json_t *n = json_object(), *kids = json_array();

	if (!n || !kids || t->depth >= VW_MAX_TREE_DEPTH) {
		json_decref(n);
		json_decref(kids);
		t->oom = 1;
		return -1;
	}
	json_object_set_new(n, "name", json_stringn(name, len));
	if (dso)
		json_object_set_new(n, "dso", json_string(dso));
	json_object_set_new(n, "value", json_integer((json_int_t)value));
	json_object_set_new(n, "children", kids);
	if (t->depth)
		json_array_append_new(json_object_get(t->stack[t->depth - 1], "children"), n);
	else
		t->root = n;
	t->stack[t->depth++] = n;
	return 0;
}

static int jt_leave(void *ctx)
{
	jtree *t = ctx;

	if (t->depth)
		t->depth--;
	return 0;
}

/* Callers and callees, as the server's /sandwich answers them. */
static json_t *sandwich_local(const vw_opts *o, const char *cmd)
{
	static const pe_tree_cb cb = { jt_enter, jt_leave };
	jtree up = { .depth = 0 }, down = { .depth = 0 };
	pe_selection *sel = NULL;
	json_t *j = NULL;
	pe_filter f;
	pe_offline *p;
	int by_samples, rc;

	if (!(p = load(o, cmd, "period", &f, &by_samples)))
		return NULL;
	if (pe_select(pe_offline_model(p), &f, pe_offline_blocks(p), &sel) < 0) {
		fprintf(stderr, "perfhub %s: out of memory\n", cmd);
		goto out;
	}
	rc = pe_sandwich(pe_offline_model(p), &f, sel, by_samples, o->function, &cb, &up, &cb,
			 &down);
	if (rc == 1)
		fprintf(stderr, "perfhub %s: no function '%s' in %s\n", cmd, o->function, o->target);
	else if (rc || up.oom || down.oom)
		fprintf(stderr, "perfhub %s: out of memory\n", cmd);
	else
		j = json_pack("{s:s,s:s,s:O,s:O}", "function", o->function, "weight",
			      pe_weight_name(by_samples, f.measure), "callers", up.root, "callees",
			      down.root);
out:
	json_decref(up.root);
	json_decref(down.root);
	pe_selection_free(sel);
	pe_offline_free(p);
	return j;
}

/* The answer for o's target: a server's (an id), or a local recording's. */
static json_t *answer(const vw_opts *o, const char *cmd, const char *endpoint)
{
	struct stat st;
	int64_t id;

	if (args_parse_id(o->target, &id) == 0 && stat(o->target, &st) != 0)
		return fetch(o, cmd, endpoint, id);
	if (stat(o->target, &st) != 0) {
		fprintf(stderr, "perfhub %s: '%s' is neither a profile id nor a recording\n", cmd,
			o->target);
		return NULL;
	}
	return !strcmp(endpoint, "annotate") ? annotate_local(o) : sandwich_local(o, cmd);
}

/* ---- annotate ------------------------------------------------------------------------ */

static double pct(json_int_t v, json_int_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/* The source text of line `line` of the function's file, if the answer has it. */
static const char *source_text(json_t *src, json_int_t line)
{
	json_int_t first = json_integer_value(json_object_get(src, "first_line"));
	json_t *t = json_object_get(src, "text");

	if (!src || line < first || (size_t)(line - first) >= json_array_size(t))
		return NULL;
	return json_string_value(json_array_get(t, (size_t)(line - first)));
}

static void print_annotation(json_t *a)
{
	json_int_t self = json_integer_value(json_object_get(a, "self"));
	const char *file = json_string_value(json_object_get(a, "file"));
	const char *dso = json_string_value(json_object_get(a, "dso"));
	const char *problem = json_string_value(json_object_get(a, "problem"));
	json_t *insns = json_object_get(a, "instructions"), *src = json_object_get(a, "source");
	json_t *in, *prev_line = NULL;
	const char *prev_file = NULL;
	size_t i;

	printf(" Percent |\tSource code & Disassembly of %s in %s (%" JSON_INTEGER_FORMAT
	       " %s)\n", json_string_value(json_object_get(a, "function")), dso ? dso : "?", self,
	       json_string_value(json_object_get(a, "weight")));
	printf("------------------------------------------------------------------------------\n");
	json_array_foreach(insns, i, in) {
		json_t *line = json_object_get(in, "line");
		const char *f = json_string_value(json_object_get(in, "file"));
		const char *text = json_string_value(json_object_get(in, "text"));
		const char *addr = json_string_value(json_object_get(in, "address"));

		if (!f)
			f = file;
		/* a source line header where the line changes */
		if (json_is_integer(line) &&
		    (!json_equal(line, prev_line) || (f != prev_file && (!f || !prev_file ||
								     strcmp(f, prev_file))))) {
			const char *s = f == file ? source_text(src, json_integer_value(line)) : NULL;
			const char *base = f ? strrchr(f, '/') : NULL;

			if (s)
				printf("         : %-6" JSON_INTEGER_FORMAT " %s\n",
				       json_integer_value(line), s);
			else
				printf("         : %-6" JSON_INTEGER_FORMAT " %s\n",
				       json_integer_value(line), base ? base + 1 : f ? f : "");
		}
		prev_line = line;
		prev_file = f;
		printf("%8.2f :   %s:   %s\n",
		       pct(json_integer_value(json_object_get(in, "samples")), self),
		       addr ? addr + 2 : "?", text ? text : "(code not available)");
	}
	if (problem)
		printf("\n(%s)\n", problem);
}

int cmd_annotate(int argc, char **argv)
{
	vw_opts o;
	json_t *j;
	int rc = parse(argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : 2;
	if (!(j = answer(&o, "annotate", "annotate")))
		return 1;
	if (o.json) {
		char *s = json_dumps(j, JSON_INDENT(2));
		if (s)
			printf("%s\n", s);
		free(s);
	} else {
		print_annotation(j);
	}
	json_decref(j);
	return 0;
}

/* ---- callers and callees --------------------------------------------------------------- */

/* One node and its children, depth first, children by value (largest first). */
static int cmp_value(const void *x, const void *y)
{
	json_int_t a = json_integer_value(json_object_get(*(json_t *const *)x, "value"));
	json_int_t b = json_integer_value(json_object_get(*(json_t *const *)y, "value"));

	return a > b ? -1 : a < b;
}

static void print_tree(json_t *node, json_int_t total, int depth, long long max_depth)
{
	json_t *kids = json_object_get(node, "children"), **v;
	const char *dso = json_string_value(json_object_get(node, "dso"));
	json_int_t value = json_integer_value(json_object_get(node, "value"));
	size_t i, n = json_array_size(kids);

	printf("%7.2f%% %14" JSON_INTEGER_FORMAT "  %*s%s%s%s%s\n", pct(value, total), value,
	       2 * depth, "", json_string_value(json_object_get(node, "name")), dso ? "  [" : "",
	       dso ? dso : "", dso ? "]" : "");
	if (depth + 1 >= max_depth || !n || !(v = malloc(n * sizeof(*v))))
		return;
	for (i = 0; i < n; i++)
		v[i] = json_array_get(kids, i);
	qsort(v, n, sizeof(*v), cmp_value);
	for (i = 0; i < n; i++)
		print_tree(v[i], total, depth + 1, max_depth);
	free(v);
}

static int sandwich(int argc, char **argv, const char *side)
{
	const char *cmd = argv[0];
	vw_opts o;
	json_t *j, *tree;
	int rc = parse(argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : 2;
	if (!(j = answer(&o, cmd, "sandwich")))
		return 1;
	tree = json_object_get(j, side);
	if (o.json) {
		char *s = json_dumps(tree, JSON_INDENT(2));
		if (s)
			printf("%s\n", s);
		free(s);
	} else {
		json_int_t total = json_integer_value(json_object_get(tree, "value"));
		printf("%s of %s (weight %s, total %" JSON_INTEGER_FORMAT ")\n", cmd, o.function,
		       json_string_value(json_object_get(j, "weight")), total);
		print_tree(tree, total, 0, o.max_depth);
	}
	json_decref(j);
	return 0;
}

int cmd_callers(int argc, char **argv)
{
	return sandwich(argc, argv, "callers");
}

int cmd_callees(int argc, char **argv)
{
	return sandwich(argc, argv, "callees");
}
