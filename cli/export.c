/*
 * export.c - perfhub export: one profile in another tool's format, written
 * to a file (or standard output).
 *
 * A profile on a server (ID) comes as the API answers it, streamed into
 * the file:
 *
 *   pprof       GET /api/v1/profiles/ID/pprof       (gzipped profile.proto)
 *   speedscope  GET /api/v1/profiles/ID/speedscope  (speedscope's file format)
 *   folded      GET /api/v1/profiles/ID/collapsed   (folded stacks)
 *   json        GET /api/v1/profiles/ID/flamegraph  (the flame graph tree)
 *
 * The profiles a selector picks come merged by the server:
 *
 *   pprof       GET /api/v1/query/pprof?q=SELECTOR
 *   folded      GET /api/v1/query/collapsed?q=SELECTOR
 *   json        GET /api/v1/query/flamegraph?q=SELECTOR
 *
 * (speedscope has no merged form: one profile per thread of one recording).
 *
 * A local perf.data file or directory is read into the profile engine in
 * memory (engine/feed.h) and encoded by the same code the server runs, so
 * the two give the same answer for the same recording.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api-client.h"
#include "commands.h"
#include "engine/export.h"
#include "engine/feed.h"
#include "engine/offline.h"
#include "engine/query.h"
#include "jsonbuf.h"

#define EXPORT_MAX_QUERY 16384	/* a selector of 4096 bytes, escaped */

static const char export_usage[] =
	"usage: perfhub export ID|SELECTOR|FILE --format pprof|speedscope|folded|json [-o OUT]\n"
	"                      [--event NAME] [--weight samples|period] [--comm COMM]\n"
	"                      [--pid PID] [--tid TID] [--kernel] [--group thread|comm]\n"
	"                      [--since WHEN] [--until WHEN] [--limit N]\n"
	"                      [--server URL] [--token-file FILE]\n"
	"  SELECTOR: {label=\"value\", ...}: the profiles it picks, merged by the server\n"
	"  (pprof, folded, json; --since, --until, --limit narrow it)\n";

static const struct {
	const char *format, *endpoint;
} formats[] = {
	{ "pprof", "pprof" },
	{ "speedscope", "speedscope" },
	{ "folded", "collapsed" },
	{ "json", "flamegraph" },
};

/* What to export and how: the command line, for either route. */
typedef struct export_opts {
	const char *what, *format, *endpoint, *outpath;
	const char *event, *weight, *comm, *pid, *tid, *group;
	const char *since, *until, *limit;	/* a selector's */
	int kernel;
	args_server srv;
} export_opts;

/* 0, or 2 after printing the usage (1 for --help). */
static int parse(int argc, char **argv, export_opts *o)
{
	struct {
		const char *opt, **val;
	} vals[] = {
		{ "--format", &o->format }, { "-o", &o->outpath }, { "--output", &o->outpath },
		{ "--event", &o->event }, { "--weight", &o->weight }, { "--comm", &o->comm },
		{ "--pid", &o->pid }, { "--tid", &o->tid }, { "--group", &o->group },
		{ "--since", &o->since }, { "--until", &o->until }, { "--limit", &o->limit },
	};
	size_t i, k;
	int a;

	o->outpath = "-";
	for (a = 1; a < argc; a++) {
		const char *v = NULL;
		if (args_server_option(argc, argv, &a, &o->srv))
			continue;
		if (!strcmp(argv[a], "--kernel")) {
			o->kernel = 1;
			continue;
		}
		for (k = 0; k < sizeof(vals) / sizeof(vals[0]) && !v; k++)
			if ((v = args_value(argc, argv, &a, vals[k].opt)))
				*vals[k].val = v;
		if (v)
			continue;
		if (!o->what && (argv[a][0] != '-' || !argv[a][1])) {
			o->what = argv[a];
			continue;
		}
		fputs(export_usage, strcmp(argv[a], "--help") ? stderr : stdout);
		return strcmp(argv[a], "--help") ? 2 : 1;
	}
	for (i = 0; o->format && i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(o->format, formats[i].format))
			o->endpoint = formats[i].endpoint;
	if (!o->what || !o->endpoint) {
		fprintf(stderr, "perfhub export: %s\n%s", !o->what ?
			"what to export? (a profile id or a perf.data file)" :
			"--format is pprof, speedscope, folded or json", export_usage);
		return 2;
	}
	return 0;
}

/* ---- a profile on a server ------------------------------------------------------- */

/* GET path into out; closes c. 0, or 1 after printing the server's error. */
static int fetch_into(ac_client *c, const char *path, FILE *out)
{
	ac_response r = { 0 };
	int status = 1;

	if (ac_download(c, path, out, &r) == 0) {
		if (r.status == 200)
			status = 0;
		else
			ac_print_error("export", &r);
	}
	ac_response_free(&r);
	ac_close(c);
	return status;
}

static int export_online(const export_opts *o, int64_t id, FILE *out)
{
	const char *names[] = { "event", "weight", "comm", "pid", "tid", "group" };
	const char *values[] = { o->event, o->weight, o->comm, o->pid, o->tid, o->group };
	char q[EXPORT_MAX_QUERY] = "", path[EXPORT_MAX_QUERY + 128];
	ac_client *c;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (values[i] && ac_query_add(q, sizeof(q), names[i], values[i]) < 0) {
			fprintf(stderr, "perfhub export: --%s is too long\n", names[i]);
			return 1;
		}
	if (o->kernel)
		ac_query_add(q, sizeof(q), "kernel", "1");
	if (!(c = ac_open(&o->srv)))
		return 1;
	snprintf(path, sizeof(path), "/api/v1/profiles/%lld/%s%s", (long long)id, o->endpoint, q);
	return fetch_into(c, path, out);
}

/* ---- the profiles a selector picks, merged by the server -------------------------------- */

static int is_selector(const char *what)
{
	return what[strspn(what, " \t")] == '{';
}

static int export_selected(const export_opts *o, FILE *out)
{
	const char *names[] = { "q", "since", "until", "limit", "event", "weight", "comm", "pid",
				"tid" };
	const char *values[] = { o->what, o->since, o->until, o->limit, o->event, o->weight,
				 o->comm, o->pid, o->tid };
	char q[EXPORT_MAX_QUERY] = "", path[EXPORT_MAX_QUERY + 128];
	const char *endpoint = !strcmp(o->format, "pprof") ? "pprof" :
			       !strcmp(o->format, "folded") ? "collapsed" :
			       !strcmp(o->format, "json") ? "flamegraph" : NULL;
	ac_client *c;
	size_t i;

	if (!endpoint)
		return 2;	/* refused by cmd_export */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (values[i] && ac_query_add(q, sizeof(q), names[i], values[i]) < 0) {
			fprintf(stderr, "perfhub export: %s is too long\n",
				i ? names[i] : "the selector");
			return 2;
		}
	if (o->kernel)
		ac_query_add(q, sizeof(q), "kernel", "1");
	if (!(c = ac_open(&o->srv)))
		return 1;
	snprintf(path, sizeof(path), "/api/v1/query/%s%s", endpoint, q);
	return fetch_into(c, path, out);
}

/* ---- a local recording -------------------------------------------------------------- */

static void on_warning(void *ctx, const char *text)
{
	(void)ctx;
	fprintf(stderr, "perfhub export: warning: %s\n", text);
}

typedef struct fold_out {
	FILE *fp;
	int by_samples;
} fold_out;

static int fold_line(void *ctx, const char *line, uint64_t samples, uint64_t period)
{
	fold_out *f = ctx;

	return fprintf(f->fp, "%s %llu\n", line,
		       (unsigned long long)(f->by_samples ? samples : period)) < 0;
}

/* A number option: 0 and *out, or -1 (printed). */
static int number(const char *opt, const char *v, int64_t *out)
{
	char *end;
	long long n;

	if (!v)
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 0 || n > UINT32_MAX) {
		fprintf(stderr, "perfhub export: %s wants a number, not '%s'\n", opt, v);
		return -1;
	}
	*out = n;
	return 0;
}

/* The answer of the format, from the profile in memory, into out. */
static int encode(const export_opts *o, pe_offline *p, pe_filter *f, int by_samples, FILE *out)
{
	pe_model *m = pe_offline_model(p);
	pe_selection *sel = NULL;
	pe_speedscope_opts so = { o->what, "perfhub " PACKAGE_VERSION, by_samples, 0 };
	uint8_t *bytes = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc = -1;

	/* pprof labels threads; speedscope profiles per thread unless per comm */
	so.by_comm = o->group && !strcmp(o->group, "comm");
	if (!strcmp(o->format, "pprof") || (!strcmp(o->format, "speedscope") && !so.by_comm))
		f->with_pid = f->with_tid = 1;
	if (pe_select(m, f, pe_offline_blocks(p), &sel) < 0)
		goto out;
	if (!strcmp(o->format, "pprof")) {
		if ((rc = pe_pprof(m, f, sel, &bytes, &len)) == 0)
			rc = fwrite(bytes, 1, len, out) == len ? 0 : -1;
	} else if (!strcmp(o->format, "speedscope")) {
		if ((rc = pe_speedscope(m, f, sel, &so, &text, &len)) == 0)
			rc = fwrite(text, 1, len, out) == len ? 0 : -1;
	} else if (!strcmp(o->format, "folded")) {
		fold_out fo = { out, by_samples };
		rc = pe_fold(m, f, sel, fold_line, &fo) ? -1 : 0;
	} else {
		static const pe_tree_cb cb = { jb_value_node_open, jb_node_close };
		jb_tree w;
		memset(&w, 0, sizeof(w));
		rc = pe_flame(m, f, sel, by_samples, &cb, &w);
		if (rc == 0 && (w.b.oom || fwrite(w.b.p, 1, w.b.len, out) != w.b.len))
			rc = -1;
		free(w.b.p);
	}
out:
	if (rc < 0)
		fprintf(stderr, "perfhub export: %s: cannot encode the profile (out of memory or "
			"a write error)\n", o->what);
	pe_selection_free(sel);
	free(bytes);
	free(text);
	return rc < 0 ? 1 : 0;
}

static int export_offline(const export_opts *o, FILE *out)
{
	pe_filter f;
	pe_offline *p;
	char msg[512];
	int by_samples = o->weight && !strcmp(o->weight, "samples"), status;

	memset(&f, 0, sizeof(f));
	f.pid = f.tid = -1;
	f.event = o->event;
	f.comm = o->comm;
	f.kernel = o->kernel;
	if (number("--pid", o->pid, &f.pid) < 0 || number("--tid", o->tid, &f.tid) < 0)
		return 2;
	if ((o->weight && !by_samples && strcmp(o->weight, "period")) ||
	    (o->group && strcmp(o->group, "thread") && strcmp(o->group, "comm"))) {
		fprintf(stderr, "perfhub export: --weight is samples or period, --group thread or "
			"comm\n");
		return 2;
	}
	if (!(p = pe_feed_load(o->what, NULL, on_warning, NULL, msg, sizeof(msg)))) {
		fprintf(stderr, "perfhub export: %s: %s\n", o->what, msg);
		return 1;
	}
	status = encode(o, p, &f, by_samples, out);
	pe_offline_free(p);
	return status;
}

int cmd_export(int argc, char **argv)
{
	export_opts o;
	struct stat st;
	FILE *out = NULL;
	int64_t id = 0;
	int status;

	memset(&o, 0, sizeof(o));
	if ((status = parse(argc, argv, &o)) != 0)
		return status == 1 ? 0 : status;
	if (!is_selector(o.what) && (o.since || o.until || o.limit)) {
		fprintf(stderr, "perfhub export: --since, --until and --limit narrow a selector\n");
		return 2;
	}
	if (!is_selector(o.what) && args_parse_id(o.what, &id) < 0 && stat(o.what, &st) < 0) {
		fprintf(stderr, "perfhub export: '%s' is neither a profile id, a selector nor a "
			"perf.data file or directory here\n", o.what);
		return 2;
	}
	/* speedscope's file is one recording's threads: no merged form
	 * (refused before the output file is made) */
	if (is_selector(o.what) && (!strcmp(o.format, "speedscope") || o.group)) {
		fprintf(stderr, "perfhub export: %s of a selector: the server merges many profiles "
			"into pprof, folded or json only; export one profile id for it\n",
			o.group ? "--group" : "--format speedscope");
		return 2;
	}
	if (strcmp(o.outpath, "-") && !(out = fopen(o.outpath, "wb"))) {
		fprintf(stderr, "perfhub export: cannot write %s: %s\n", o.outpath, strerror(errno));
		return 1;
	}
	status = is_selector(o.what) ? export_selected(&o, out ? out : stdout) :
		 id ? export_online(&o, id, out ? out : stdout) :
		      export_offline(&o, out ? out : stdout);
	if (status == 0 && fflush(out ? out : stdout) != 0) {
		fprintf(stderr, "perfhub export: cannot write %s: %s\n", o.outpath, strerror(errno));
		status = 1;
	}
	if (out && fclose(out) != 0 && status == 0) {
		fprintf(stderr, "perfhub export: cannot write %s: %s\n", o.outpath, strerror(errno));
		status = 1;
	}
	if (status && out)
		remove(o.outpath);	/* no half-written file left behind */
	return status;
}
