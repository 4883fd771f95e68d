/*
 * views.c - perfhub annotate, callers, callees: one function of a profile
 * on a server (GET .../annotate, .../sandwich), printed for a person (as
 * perf annotate --stdio and an indented call tree) or as the API's JSON.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-client.h"
#include "commands.h"

#define VW_MAX_QUERY 8192
#define VW_MAX_DEPTH 256	/* tree levels printed */

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
		fprintf(stderr, "usage: perfhub annotate ID FUNCTION [--event NAME]"
			" [--weight samples|period|offcpu|wall]\n"
			"                        [--dso PATH] [--json] [--server URL]"
			" [--token-file FILE]\n");
	else
		fprintf(stderr, "usage: perfhub %s ID FUNCTION [--event NAME]"
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

/* The profile the target names: an id. -1 (printed) for anything else. */
static int target_id(const vw_opts *o, const char *cmd, int64_t *id)
{
	if (args_parse_id(o->target, id) == 0)
		return 0;
	fprintf(stderr, "perfhub %s: '%s' is not a profile id (a local recording is read by the"
		" offline engine, which this perfhub does not have yet)\n", cmd, o->target);
	return -1;
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
	int64_t id;
	json_t *j;
	int rc = parse(argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : 2;
	if (target_id(&o, "annotate", &id) < 0)
		return 2;
	if (!(j = fetch(&o, "annotate", "annotate", id)))
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
	int64_t id;
	json_t *j, *tree;
	int rc = parse(argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : 2;
	if (target_id(&o, cmd, &id) < 0)
		return 2;
	if (!(j = fetch(&o, cmd, "sandwich", id)))
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
