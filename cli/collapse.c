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

#include "args.h"
#include "commands.h"
#include "fold.h"
#include "perfdata.h"
#include "symbols.h"

/* Recently folded stacks by raw callchain: the same ips in the same thread
 * fold to the same line while nothing that thread's stacks depend on has
 * changed (pd_symbolizer_stamp), so most samples skip symbolizing and
 * folding and just add to the stack's count by its id. Direct-mapped,
 * bounded. */
#define RAW_CACHE_SLOTS 8192

typedef struct raw_entry {
	uint64_t hash, gen, nr;
	uint32_t pid, tid;
	uint16_t misc;
	const pd_event *event;
	uint64_t *ips;
	size_t cap;		/* ips allocated */
	size_t id;		/* the folded stack (pd_fold_last_id) */
} raw_entry;

static uint64_t raw_hash(const pd_sample *s, uint16_t misc)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)s->pid << 32 | s->tid) ^ misc;
	uint64_t i;

	for (i = 0; i < s->nr_callchain; i++) {
		h = (h ^ s->callchain[i]) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return h;
}

/* The entry for this callchain when it is still right: stored at a
 * generation no older than the thread's last relevant change. */
static raw_entry *raw_find(raw_entry *cache, const pd_sample *s, uint16_t misc,
			   uint64_t stamp, uint64_t h)
{
	raw_entry *e = &cache[h & (RAW_CACHE_SLOTS - 1)];

	if (e->ips && e->hash == h && e->gen >= stamp && e->pid == s->pid &&
	    e->tid == s->tid && e->misc == misc && e->event == s->event &&
	    e->nr == s->nr_callchain &&
	    !memcmp(e->ips, s->callchain, s->nr_callchain * sizeof(uint64_t)))
		return e;
	return NULL;
}

static void raw_store(raw_entry *cache, const pd_sample *s, uint16_t misc,
		      uint64_t gen, uint64_t h, size_t id)
{
	raw_entry *e = &cache[h & (RAW_CACHE_SLOTS - 1)];
	uint64_t *ips = e->ips;
	size_t cap = e->cap;

	if (!ips || cap < s->nr_callchain) {
		cap = s->nr_callchain > 16 ? s->nr_callchain : 16;
		ips = malloc(cap * sizeof(uint64_t));
		if (!ips)
			return;
		free(e->ips);
	}
	memcpy(ips, s->callchain, s->nr_callchain * sizeof(uint64_t));
	*e = (raw_entry){ .hash = h, .gen = gen, .nr = s->nr_callchain, .pid = s->pid,
			  .tid = s->tid, .misc = misc, .event = s->event, .ips = ips,
			  .cap = cap, .id = id };
}

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

/* Whether any event of the recording answers to `want`. */
static int any_event_named(const pd_file *f, const char *want)
{
	size_t i;

	for (i = 0; i < pd_nr_events(f); i++)
		if (event_matches(pd_get_event(f, i)->name, want))
			return 1;
	return 0;
}

/* Throws away what was folded (and the raw callchains that name its
 * stacks), for another event. 0 or -1 out of memory. */
static int restart_fold(pd_fold **fold, unsigned flags, raw_entry *cache)
{
	size_t i;

	pd_fold_free(*fold);
	*fold = pd_fold_new(flags);
	for (i = 0; i < RAW_CACHE_SLOTS; i++) {
		free(cache[i].ips);
		memset(&cache[i], 0, sizeof(cache[i]));
	}
	return *fold ? 0 : -1;
}

static int print_line(void *ctx, const char *stack, uint64_t count)
{
	FILE *fp = ctx;

	return fprintf(fp, "%s %llu\n", stack, (unsigned long long)count) < 0;
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
	raw_entry *cache = NULL;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pid"))
			flags |= PD_FOLD_PID;
		else if (!strcmp(argv[i], "--tid"))
			flags |= PD_FOLD_TID;
		else if (!strcmp(argv[i], "--kernel"))
			flags |= PD_FOLD_KERNEL;
		else if ((v = args_value(argc, argv, &i, "--weight"))) {
			if (!strcmp(v, "samples"))
				by_samples = 1;
			else if (strcmp(v, "period")) {
				fprintf(stderr, "perfhub collapse: --weight is period or samples, not '%s'\n", v);
				return 2;
			}
		} else if ((v = args_value(argc, argv, &i, "--event")))
			event = v;
		else if ((v = args_value(argc, argv, &i, "--format"))) {
			if (!strcmp(v, "json"))
				json = 1;
			else if (strcmp(v, "folded")) {
				fprintf(stderr, "perfhub collapse: --format is folded or json, not '%s'\n", v);
				return 2;
			}
		} else if ((v = args_value(argc, argv, &i, "--symfs")))
			so.symfs = v;
		else if ((v = args_value(argc, argv, &i, "--kallsyms")))
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
	cache = calloc(RAW_CACHE_SLOTS, sizeof(*cache));
	if (!sym || !fold || !cache) {
		fprintf(stderr, "perfhub collapse: %s: out of memory\n", path);
		goto out;
	}
	while ((rc = pd_next(f, &r, &err)) > 0) {
		const pd_sample *s = &r.u.sample;
		pd_stack st;
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
		/* one event only: the first in the recording's own event order
		 * (perf report's) that answers to --event and has samples */
		if (event && !event_matches(s->event->name, event))
			continue;
		if (!chosen || (s->event->index < chosen->index &&
				strcmp(s->event->name, chosen->name))) {
			/* an event earlier in that order has its first sample:
			 * it is the one, and what was folded goes */
			if (chosen && restart_fold(&fold, flags, cache) < 0)
				goto nomem;
			chosen = s->event;
		} else if (s->event != chosen && strcmp(s->event->name, chosen->name)) {
			continue;
		}
		/* stackcollapse-perf.pl: the period perf script prints, 1 without */
		w = by_samples || !(s->fields & PD_SAMPLE_PERIOD) || !s->period ? 1 : s->period;
		/* dwarf samples carry their user stack beside the callchain:
		 * those are not cached */
		if ((s->fields & PD_SAMPLE_CALLCHAIN) && s->callchain &&
		    (s->event->attr.sample_type & (PD_SAMPLE_REGS_USER | PD_SAMPLE_STACK_USER)) !=
		    (PD_SAMPLE_REGS_USER | PD_SAMPLE_STACK_USER)) {
			uint16_t misc = r.misc & PD_MISC_CPUMODE_MASK;
			uint64_t h = raw_hash(s, misc);
			raw_entry *e = raw_find(cache, s, misc,
						pd_symbolizer_stamp(sym, s->pid, s->tid), h);

			if (e) {
				if (pd_fold_add_id(fold, e->id, w) < 0)
					goto too_many;
				continue;
			}
			if (pd_symbolize(sym, &r, &st) < 0)
				goto nomem;
			if (pd_fold_add(fold, &st, w) < 0)
				goto too_many;
			raw_store(cache, s, misc, pd_symbolizer_generation(sym), h,
				  pd_fold_last_id(fold));
			continue;
		}
		if (pd_symbolize(sym, &r, &st) < 0)
			goto nomem;
		if (pd_fold_add(fold, &st, w) < 0)
			goto too_many;
	}
	if (rc < 0)
		goto parse_error;
	for (i = 0; (size_t)i < pd_symbolizer_nr_warnings(sym); i++)
		fprintf(stderr, "perfhub collapse: warning: %s\n", pd_symbolizer_warning(sym, (size_t)i));
	if (event && !chosen) {
		if (!any_event_named(f, event)) {
			fprintf(stderr, "perfhub collapse: %s: no event '%s' (its events:", path, event);
			for (i = 0; (size_t)i < pd_nr_events(f); i++)
				fprintf(stderr, "%s %s", i ? "," : "", pd_get_event(f, (size_t)i)->name);
			fprintf(stderr, ")\n");
			goto out;
		}
		fprintf(stderr, "perfhub collapse: warning: no samples of event '%s'\n", event);
	}
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
	for (i = 0; cache && i < RAW_CACHE_SLOTS; i++)
		free(cache[i].ips);
	free(cache);
	pd_fold_free(fold);
	pd_symbolizer_free(sym);
	pd_close(f);
	return status;
}
