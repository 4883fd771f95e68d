/*
 * export.c - perfhub export: one profile in another tool's format, written
 * to a file (or standard output) as the server sends it.
 *
 *   pprof       GET /api/v1/profiles/ID/pprof       (gzipped profile.proto)
 *   speedscope  GET /api/v1/profiles/ID/speedscope  (speedscope's file format)
 *   folded      GET /api/v1/profiles/ID/collapsed   (folded stacks)
 *   json        GET /api/v1/profiles/ID/flamegraph  (the flame graph tree)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-client.h"
#include "commands.h"

#define EXPORT_MAX_QUERY 2048

static const char export_usage[] =
	"usage: perfhub export ID --format pprof|speedscope|folded|json [-o OUT]\n"
	"                      [--event NAME] [--weight samples|period] [--comm COMM]\n"
	"                      [--pid PID] [--tid TID] [--kernel] [--group thread|comm]\n"
	"                      [--server URL] [--token-file FILE]\n";

static const struct {
	const char *format, *endpoint;
} formats[] = {
	{ "pprof", "pprof" },
	{ "speedscope", "speedscope" },
	{ "folded", "collapsed" },
	{ "json", "flamegraph" },
};

/* The query parameters the options name (each takes a value). */
static const char *const value_opts[] = { "event", "weight", "comm", "pid", "tid", "group" };

int cmd_export(int argc, char **argv)
{
	args_server srv = { 0 };
	const char *format = NULL, *outpath = "-", *what = NULL, *endpoint = NULL, *v;
	char q[EXPORT_MAX_QUERY] = "", path[EXPORT_MAX_QUERY + 128], opt[32];
	ac_client *c = NULL;
	ac_response r = { 0 };
	FILE *out = NULL;
	int64_t id;
	size_t i, k;
	int a, status = 2, matched;

	for (a = 1; a < argc; a++) {
		if (args_server_option(argc, argv, &a, &srv))
			continue;
		if ((v = args_value(argc, argv, &a, "--format"))) {
			format = v;
			continue;
		}
		if ((v = args_value(argc, argv, &a, "-o")) || (v = args_value(argc, argv, &a, "--output"))) {
			outpath = v;
			continue;
		}
		if (!strcmp(argv[a], "--kernel")) {
			ac_query_add(q, sizeof(q), "kernel", "1");
			continue;
		}
		for (k = 0, matched = 0; k < sizeof(value_opts) / sizeof(value_opts[0]); k++) {
			snprintf(opt, sizeof(opt), "--%s", value_opts[k]);
			if ((v = args_value(argc, argv, &a, opt))) {
				if (ac_query_add(q, sizeof(q), value_opts[k], v) < 0) {
					fprintf(stderr, "perfhub export: %s is too long\n", opt);
					return 2;
				}
				matched = 1;
				break;
			}
		}
		if (matched)
			continue;
		if (!what && argv[a][0] != '-') {
			what = argv[a];
			continue;
		}
		fputs(export_usage, strcmp(argv[a], "--help") ? stderr : stdout);
		return strcmp(argv[a], "--help") ? 2 : 0;
	}
	for (i = 0; format && i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(format, formats[i].format))
			endpoint = formats[i].endpoint;
	if (!what || !endpoint) {
		fprintf(stderr, "perfhub export: %s\n%s", !what ? "what to export? (a profile id)" :
			"--format is pprof, speedscope, folded or json", export_usage);
		return 2;
	}
	if (args_parse_id(what, &id) < 0) {
		/* selectors ({...}) and local files need a server with selector
		 * queries and the offline engine; neither is in this version */
		fprintf(stderr, "perfhub export: '%s' is not a profile id (this version exports "
			"profiles on a server by id)\n", what);
		return 2;
	}
	status = 1;
	if (!(c = ac_open(&srv)))
		goto out;
	if (strcmp(outpath, "-") && !(out = fopen(outpath, "wb"))) {
		fprintf(stderr, "perfhub export: cannot write %s: %m\n", outpath);
		goto out;
	}
	snprintf(path, sizeof(path), "/api/v1/profiles/%lld/%s%s", (long long)id, endpoint, q);
	if (ac_download(c, path, out ? out : stdout, &r) < 0)
		goto out;
	if (r.status != 200) {
		ac_print_error("export", &r);
		goto out;
	}
	if (fflush(out ? out : stdout) != 0 || (out && ferror(out))) {
		fprintf(stderr, "perfhub export: cannot write %s: %m\n", outpath);
		goto out;
	}
	status = 0;
out:
	if (out && fclose(out) != 0 && status == 0) {
		fprintf(stderr, "perfhub export: cannot write %s: %m\n", outpath);
		status = 1;
	}
	if (status && out)
		remove(outpath);	/* no half-written file left behind */
	ac_response_free(&r);
	ac_close(c);
	return status;
}
