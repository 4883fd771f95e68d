/*
 * collapse.c - perfhub collapse FILE [--weight period|samples] [--event NAME]
 *	[--pid] [--tid] [--kernel] [--format=folded|json] [--symfs DIR]
 *
 * Folded stacks as FlameGraph's stackcollapse-perf.pl makes them from
 * `perf script` output of the same file, straight from the recording.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "commands.h"
#include "fold.h"
#include "foldcache.h"
#include "perfdata.h"
#include "symbols.h"

static void usage(FILE *fp)
{
	fprintf(fp, "usage: perfhub collapse FILE [--weight period|samples] [--event NAME]\n"
		    "                        [--pid] [--tid] [--kernel] [--format=folded|json]\n"
		    "                        [--symfs DIR] [--kallsyms FILE]\n");
}

/* "cpu-clock" selects "cpu-clock:ppp" too: modifiers are optional */
static int event_matches(const char *name, const char *want)
{
	size_t n = strlen(want);

	return !strcmp(name, want) || (!strncmp(name, want, n) && name[n] == ':');
}

static int print_line(void *ctx, const char *stack, uint64_t count)
{
	FILE *fp = ctx;

	return fprintf(fp, "%s %llu\n", stack, (unsigned long long)count) < 0;
}

/* the value of --opt=VALUE or --opt VALUE */
static const char *opt_value(int argc, char **argv, int *i, const char *opt)
{
	size_t n = strlen(opt);

	if (!strncmp(argv[*i], opt, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (!strcmp(argv[*i], opt) && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

int cmd_collapse(int argc, char **argv)
{
	const char *path = NULL, *event = NULL, *v;
	int by_samples = 0, json = 0, rc, status = 1, i;
	unsigned flags = 0;
	pd_sym_options so = { 0 };
	pd_options po = { .ordered = 1 };
	pd_error err;
	pd_file *f = NULL;
	pd_symbolizer *sym = NULL;
	pd_fold *fold = NULL;
	const pd_event *chosen = NULL;
	pd_record r;
	char ebuf[400];
	pd_foldcache *cache = NULL;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pid"))
			flags |= PD_FOLD_PID;
		else if (!strcmp(argv[i], "--tid"))
			flags |= PD_FOLD_TID;
		else if (!strcmp(argv[i], "--kernel"))
			flags |= PD_FOLD_KERNEL;
		else if ((v = opt_value(argc, argv, &i, "--weight"))) {
			if (!strcmp(v, "samples"))
				by_samples = 1;
			else if (strcmp(v, "period")) {
				fprintf(stderr, "perfhub collapse: --weight is period or samples, not '%s'\n", v);
				return 2;
			}
		} else if ((v = opt_value(argc, argv, &i, "--event")))
			event = v;
		else if ((v = opt_value(argc, argv, &i, "--format"))) {
			if (!strcmp(v, "json"))
				json = 1;
			else if (strcmp(v, "folded")) {
				fprintf(stderr, "perfhub collapse: --format is folded or json, not '%s'\n", v);
				return 2;
			}
		} else if ((v = opt_value(argc, argv, &i, "--symfs")))
			so.symfs = v;
		else if ((v = opt_value(argc, argv, &i, "--kallsyms")))
			so.kallsyms = v;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "perfhub collapse: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		} else if (!path)
			path = argv[i];
		else {
			usage(stderr);
			return 2;
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	so.recording = path;
	f = pd_open_path(path, &po, &err);
	if (!f)
		goto parse_error;
	sym = pd_symbolizer_new(f, NULL, &so);
	fold = pd_fold_new(flags);
	cache = fold ? pd_foldcache_new(sym, fold) : NULL;
	if (!sym || !fold || !cache) {
		fprintf(stderr, "perfhub collapse: %s: out of memory\n", path);
		goto out;
	}
	while ((rc = pd_next(f, &r, &err)) > 0) {
		const pd_sample *s = &r.u.sample;
		uint64_t w;

		if (r.type != PD_RECORD_SAMPLE) {
			pd_symbolizer_record(sym, &r);
			continue;
		}
		if (!s->event)
			continue;
		/* a dying task samples with pid/tid -1: perf script prints
		 * "-1", which stackcollapse-perf.pl cannot parse as a sample
		 * header, so the pipeline drops it; so do we */
		if ((s->fields & PD_SAMPLE_TID) && (s->tid == UINT32_MAX || s->pid == UINT32_MAX))
			continue;
		/* one event only: the chosen one, else the first that samples */
		if (!chosen) {
			if (event && !event_matches(s->event->name, event))
				continue;
			chosen = s->event;
		} else if (s->event != chosen &&
			   (!event || !event_matches(s->event->name, event) ||
			    strcmp(s->event->name, chosen->name))) {
			continue;
		}
		/* stackcollapse-perf.pl: the period perf script prints, 1 without */
		w = by_samples || !(s->fields & PD_SAMPLE_PERIOD) || !s->period ? 1 : s->period;
		switch (pd_foldcache_add(cache, &r, w)) {
		case -1:
			goto nomem;
		case -2:
			goto too_many;
		}
	}
	if (rc < 0)
		goto parse_error;
	for (i = 0; (size_t)i < pd_symbolizer_nr_warnings(sym); i++)
		fprintf(stderr, "perfhub collapse: warning: %s\n", pd_symbolizer_warning(sym, (size_t)i));
	if (event && !chosen)
		fprintf(stderr, "perfhub collapse: warning: no samples of event '%s'\n", event);
	if (json) {
		json_t *tree = pd_fold_tree(fold);

		if (!tree || json_dumpf(tree, stdout, JSON_COMPACT) < 0) {
			json_decref(tree);
			goto out;
		}
		json_decref(tree);
		putchar('\n');
	} else if (pd_fold_foreach(fold, print_line, stdout)) {
		goto out;
	}
	status = fflush(stdout) ? 1 : 0;
	goto out;
nomem:
	fprintf(stderr, "perfhub collapse: %s: out of memory\n", path);
	goto out;
too_many:
	fprintf(stderr, "perfhub collapse: %s: too many distinct stacks\n", path);
	goto out;
parse_error:
	fprintf(stderr, "perfhub collapse: %s: %s\n", path, pd_strerror(&err, ebuf, sizeof(ebuf)));
out:
	pd_foldcache_free(cache);
	pd_fold_free(fold);
	pd_symbolizer_free(sym);
	pd_close(f);
	return status;
}
