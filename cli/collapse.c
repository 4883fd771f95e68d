/*
 * collapse.c - perfhub collapse FILE [--weight period|samples] [--event NAME]
 *	[--pid] [--tid] [--kernel] [--format=folded|json] [--symfs DIR]
 *
 * Folded stacks as FlameGraph's stackcollapse-perf.pl makes them from
 * `perf script` output of the same file, straight from the recording.
 *
 * A file (not a pipe) is folded by one thread per idle CPU but one, up
 * to COLLAPSE_MAX_SHARDS (--threads N to choose): each reads the whole
 * recording and follows every thread, comm and map change, but folds
 * only its share of the samples
 * (those of its processes; dwarf samples by blocks of COLLAPSE_BLOCK in
 * turn); symbol tables and DWARF indexes are shared (pd_symcache), the
 * folds are merged at the end. With a second CPU, the tables the header
 * says the samples hit are loaded ahead meanwhile (preload.h), the
 * kernel's first, and the first thread folds on without waiting for it
 * (foldcache.h, pd_foldcache_defer_kernel).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "args.h"
#include "commands.h"
#include "firstq.h"
#include "fold.h"
#include "foldcache.h"
#include "perfdata.h"
#include "preload.h"
#include "symbols.h"

static void usage(FILE *fp)
{
	fprintf(fp, "usage: perfhub collapse FILE [--weight period|samples] [--event NAME]\n"
		    "                        [--pid] [--tid] [--kernel] [--format=folded|json]\n"
		    "                        [--symfs DIR] [--kallsyms FILE] [--threads N]\n");
}

/* "cpu-clock" selects "cpu-clock:ppp" too: modifiers are optional */
static int event_matches(const char *name, const char *want)
{
	size_t n = strlen(want);

	return !strcmp(name, want) || (!strncmp(name, want, n) && name[n] == ':');
}

/* "stack count\n": tens of megabytes of it, so no format string is read
 * per line */
static int print_line(void *ctx, const char *stack, uint64_t count)
{
	FILE *fp = ctx;
	char num[24];
	size_t n = sizeof(num);

	num[--n] = '\n';
	do
		num[--n] = (char)('0' + count % 10);
	while ((count /= 10));
	num[--n] = ' ';
	return fputs(stack, fp) < 0 ||
	       fwrite(num + n, 1, sizeof(num) - n, fp) != sizeof(num) - n;
}

#define COLLAPSE_MAX_SHARDS	4
#define COLLAPSE_BLOCK		4096	/* samples folded by one shard in a row */

/* builds with a leak checker free everything before exit */
#if defined(__SANITIZE_ADDRESS__)
#define COLLAPSE_FREE_AT_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define COLLAPSE_FREE_AT_EXIT 1
#endif
#endif
#ifndef COLLAPSE_FREE_AT_EXIT
#define COLLAPSE_FREE_AT_EXIT 0
#endif

typedef struct shard {
	/* in */
	const char *path;
	const pd_sym_options *so;
	pd_symcache *cache;
	const char *event;
	unsigned flags;
	int by_samples;
	unsigned index, count;
	unsigned preload;	/* threads loading symbol tables ahead (shard 0) */
	pd_firstq *firstq;	/* binutils' first questions, with 2+ shards */
	/* out */
	pd_preload *loader;
	unsigned char *event_seen;	/* per event index: a sample was let through */
	size_t nevent_seen;
	pd_fold *fold;
	pd_symbolizer *sym;
	pd_file *file;
	int chosen;		/* a sample of the wanted event was seen */
	int status;		/* 0, or one of the failures below */
	pd_error err;
} shard;

enum { SHARD_PARSE = 1, SHARD_NOMEM, SHARD_TOO_MANY };

/* Throws away what the shard folded, for another event. 0 or -1. */
static int restart_fold(shard *sh, pd_foldcache **fc)
{
	pd_foldcache_free(*fc);
	pd_fold_free(sh->fold);
	*fc = NULL;
	sh->fold = pd_fold_new(sh->flags);
	if (!sh->fold || !(*fc = pd_foldcache_new(sh->sym, sh->fold)))
		return -1;
	pd_foldcache_defer_kernel(*fc, sh->loader ? PD_FOLDCACHE_WAIT_MAX : 0);
	return 0;
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

/* The shard of a sample's process (dwarf samples: decided when folded). */
static int shard_of_pid(const shard *sh, uint32_t pid)
{
	return (pid * 2654435761u >> 16) % sh->count == sh->index;
}

/* pd_options.keep_sample of a shard: the samples of other shards'
 * processes are not even queued for time order, except the first of each
 * event, which every shard sees so that all choose the same event. */
static int shard_keeps(void *ctx, const pd_sample *s)
{
	shard *sh = ctx;
	size_t ev = s->event->index;

	if ((s->event->attr.sample_type & PD_SAMPLE_STACK_USER) || !(s->fields & PD_SAMPLE_TID))
		return 1;
	if (ev >= sh->nevent_seen) {
		size_t n = ev + 16;
		unsigned char *v = realloc(sh->event_seen, n);

		if (!v)
			return 1;
		memset(v + sh->nevent_seen, 0, n - sh->nevent_seen);
		sh->event_seen = v;
		sh->nevent_seen = n;
	}
	if (!sh->event_seen[ev]) {
		sh->event_seen[ev] = 1;
		return 1;
	}
	return shard_of_pid(sh, s->pid);
}

/* A fold cache's failure (-1 out of memory, -2 too many distinct stacks)
 * as the shard's status: 1 if rc is one, else 0. */
static int fold_failed(shard *sh, int rc)
{
	if (rc >= 0)
		return 0;
	sh->status = rc == -1 ? SHARD_NOMEM : SHARD_TOO_MANY;
	return 1;
}

/* Read the whole recording; fold this shard's blocks of samples. */
static void *shard_run(void *arg)
{
	shard *sh = arg;
	pd_options po = { .ordered = 1 };

	if (sh->count > 1) {
		po.keep_sample = shard_keeps;
		po.keep_ctx = sh;
	}
	const pd_event *chosen = NULL;
	pd_foldcache *fc = NULL;
	uint64_t nsample = 0, nunwound = 0;
	pd_record r;
	int rc;

	sh->file = pd_open_path(sh->path, &po, &sh->err);
	if (!sh->file) {
		sh->status = SHARD_PARSE;
		return NULL;
	}
	sh->sym = pd_symbolizer_new(sh->file, sh->cache, sh->so);
	if (sh->sym && sh->firstq)
		pd_symbolizer_share_firstq(sh->sym, sh->firstq, sh->index);
	sh->fold = pd_fold_new(sh->flags);
	fc = sh->sym && sh->fold ? pd_foldcache_new(sh->sym, sh->fold) : NULL;
	if (fc && sh->preload)
		sh->loader = pd_preload_start(sh->sym, sh->preload);
	if (!fc) {
		sh->status = SHARD_NOMEM;
		goto out;
	}
	/* the loader takes the kernel's table first (35-45 ms of reading
	 * /proc/kallsyms): this thread folds on without it meanwhile */
	pd_foldcache_defer_kernel(fc, sh->loader ? PD_FOLDCACHE_WAIT_MAX : 0);
	while ((rc = pd_next(sh->file, &r, &sh->err)) > 0) {
		const pd_sample *s = &r.u.sample;
		uint64_t w;

		if (r.type != PD_RECORD_SAMPLE) {
			/* fails only folding the samples kept for the kernel */
			if (fold_failed(sh, pd_foldcache_record(fc, &r)))
				goto out;
			continue;
		}
		if (!s->event)
			continue;
		/* every shard sees every dwarf sample (shard_keeps): their
		 * count is where it is in time order for the others */
		if (sh->firstq && (s->event->attr.sample_type & PD_SAMPLE_STACK_USER))
			pd_firstq_at(sh->firstq, sh->index, ++nunwound);
		/* a dying task samples with pid/tid -1: perf script prints
		 * "-1", which stackcollapse-perf.pl cannot parse as a sample
		 * header, so the pipeline drops it; so do we */
		if ((s->fields & PD_SAMPLE_TID) && (s->tid == UINT32_MAX || s->pid == UINT32_MAX))
			continue;
		/* one event only: the first in the recording's own event order
		 * (perf report's) that answers to --event and has samples. Every
		 * shard sees every sample here, so all choose alike. */
		if (sh->event && !event_matches(s->event->name, sh->event))
			continue;
		if (!chosen || (s->event->index < chosen->index &&
				strcmp(s->event->name, chosen->name))) {
			/* an event earlier in that order has its first sample:
			 * it is the one, and what was folded goes */
			if (chosen && restart_fold(sh, &fc) < 0) {
				sh->status = SHARD_NOMEM;
				goto out;
			}
			chosen = s->event;
			nsample = 0;
		} else if (s->event != chosen && strcmp(s->event->name, chosen->name)) {
			continue;
		}
		/* dwarf samples by blocks in turn (each is unwound on its own);
		 * callchains by process, so that each process's addresses are
		 * named and cached by one shard only */
		if (s->event->attr.sample_type & PD_SAMPLE_STACK_USER) {
			if ((nsample++ / COLLAPSE_BLOCK) % sh->count != sh->index)
				continue;
		} else if (!shard_of_pid(sh, s->pid)) {
			continue;
		}
		w = sh->by_samples ? 1 : pd_sample_script_period(s);
		if (fold_failed(sh, pd_foldcache_add(fc, &r, w)))
			goto out;
	}
	if (rc < 0)
		sh->status = SHARD_PARSE;
	else
		fold_failed(sh, pd_foldcache_finish(fc));
out:
	/* the other shards may wait for this one to pass a sample */
	if (sh->firstq)
		pd_firstq_done(sh->firstq, sh->index);
	sh->chosen = chosen != NULL;
	free(sh->event_seen);
	sh->event_seen = NULL;
	pd_foldcache_free(fc);
	return NULL;
}

/* Other threads runnable now (/proc/loadavg's "R/T" less this one), else
 * the 1-minute load average. The average counts what ran a minute ago:
 * right after another run (a benchmark, a script folding file after
 * file) it said a CPU was busy that was idle, and dwarf folding took one
 * thread where two were there. */
static long busy_cpus(void)
{
	FILE *fp = fopen("/proc/loadavg", "r");
	double load[1];
	long running = 0;
	int ok = fp && fscanf(fp, "%*s %*s %*s %ld/", &running) == 1 && running >= 1;

	if (fp)
		fclose(fp);
	if (ok)
		return running - 1;
	return getloadavg(load, 1) == 1 ? (long)load[0] : 0;
}

/* Threads to fold with: as asked (--threads), else one per idle CPU (the
 * CPUs less the threads runnable now), up to COLLAPSE_MAX_SHARDS, for a
 * file that can be read again; one for a pipe or stdin. One idle CPU is
 * left to the threads that load symbol tables and read the file ahead:
 * each more folding thread reads and follows the whole recording again,
 * which costs about what it saves (2 CPUs, one thread against two, the
 * same wall time: the system-wide build 1.07 s of CPU against 1.56 s; a
 * dwarf recording, since unwinding walks cached CFI rows, 0.39 s against
 * 0.46 s). */
static unsigned shard_count(const char *path, unsigned asked)
{
	struct stat st;
	long n = asked;

	if (!strcmp(path, "-") || stat(path, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
		return 1;
	/* on a machine already busy, a second reader of the whole file only
	 * takes CPU from the first */
	if (!n) {
		n = sysconf(_SC_NPROCESSORS_ONLN) - busy_cpus();
		if (n > 1)
			n--;
	}
	if (n < 1)
		return 1;
	return n > COLLAPSE_MAX_SHARDS ? COLLAPSE_MAX_SHARDS : (unsigned)n;
}

int cmd_collapse(int argc, char **argv)
{
	const char *path = NULL, *event = NULL, *v;
	int by_samples = 0, json = 0, status = 1, i;
	unsigned flags = 0, nsh = 0, started, u, threads = 0;
	pd_sym_options so = { 0 };
	pd_error err;
	char ebuf[400];
	pd_symcache *cache = NULL;
	pd_firstq *firstq = NULL;
	shard sh[COLLAPSE_MAX_SHARDS] = { 0 };
	pthread_t tid[COLLAPSE_MAX_SHARDS];

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
		else if ((v = args_value(argc, argv, &i, "--threads"))) {
			char *end;
			long n = strtol(v, &end, 10);

			if (*end || n < 1 || n > COLLAPSE_MAX_SHARDS) {
				fprintf(stderr, "perfhub collapse: --threads is 1 to %d, not '%s'\n",
					COLLAPSE_MAX_SHARDS, v);
				return 2;
			}
			threads = (unsigned)n;
		}
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
	nsh = shard_count(path, threads);
	cache = pd_symcache_new(0);
	if (!cache)
		goto nomem;
	/* shards fold dwarf samples by blocks in turn: binutils' naming
	 * depends on the order of the questions, settled together */
	if (nsh > 1 && !(firstq = pd_firstq_new(nsh)))
		goto nomem;
	for (u = 0; u < nsh; u++)
		sh[u] = (shard){ .path = path, .so = &so, .cache = cache, .event = event,
				 .flags = flags, .by_samples = by_samples, .index = u, .count = nsh,
				 .firstq = firstq };
	/* a second CPU loads the symbol tables the samples need while the
	 * records are read (the same loads, off the readers' path) */
	sh[0].preload = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
	/* shard 0 runs here; the others on their own threads */
	for (u = 1; u < nsh; u++)
		if (pthread_create(&tid[u], NULL, shard_run, &sh[u]) != 0)
			break;
	started = u;
	if (started < nsh) {	/* no more threads: the shards that run do it all */
		for (u = 0; u < started; u++)
			sh[u].count = started;
		for (u = started; u < nsh; u++)
			pd_firstq_done(firstq, u);
		nsh = started;
	}
	shard_run(&sh[0]);
	for (u = 1; u < started; u++)
		pthread_join(tid[u], NULL);
	pd_preload_stop(sh[0].loader);
	for (u = 0; u < nsh; u++) {
		if (sh[u].status == SHARD_PARSE) {
			err = sh[u].err;
			goto parse_error;
		}
		if (sh[u].status == SHARD_NOMEM)
			goto nomem;
		if (sh[u].status == SHARD_TOO_MANY)
			goto too_many;
	}
	for (u = 1; u < nsh; u++)
		if (pd_fold_merge(sh[0].fold, sh[u].fold) < 0)
			goto too_many;
	/* every shard followed the whole recording: shard 0's warnings are
	 * everyone's, but a shard warns only of tables it looked at */
	for (u = 0; u < nsh; u++)
		for (i = 0; (size_t)i < pd_symbolizer_nr_warnings(sh[u].sym); i++) {
			const char *w = pd_symbolizer_warning(sh[u].sym, (size_t)i);
			unsigned k;
			size_t j;
			int seen = 0;

			for (k = 0; k < u && !seen; k++)
				for (j = 0; j < pd_symbolizer_nr_warnings(sh[k].sym) && !seen; j++)
					seen = !strcmp(w, pd_symbolizer_warning(sh[k].sym, j));
			if (!seen)
				fprintf(stderr, "perfhub collapse: warning: %s\n", w);
		}
	if (event && !sh[0].chosen) {
		if (!any_event_named(sh[0].file, event)) {
			fprintf(stderr, "perfhub collapse: %s: no event '%s' (its events:", path, event);
			for (i = 0; (size_t)i < pd_nr_events(sh[0].file); i++)
				fprintf(stderr, "%s %s", i ? "," : "",
					pd_get_event(sh[0].file, (size_t)i)->name);
			fprintf(stderr, ")\n");
			goto out;
		}
		fprintf(stderr, "perfhub collapse: warning: no samples of event '%s'\n", event);
	}
	if (json) {
		json_t *tree = pd_fold_tree(sh[0].fold);

		if (!tree || json_dumpf(tree, stdout, JSON_COMPACT) < 0) {
			json_decref(tree);
			goto out;
		}
		json_decref(tree);
		putchar('\n');
	} else if (setvbuf(stdout, NULL, _IOFBF, 1 << 20),
		   pd_fold_foreach(sh[0].fold, print_line, stdout)) {
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
	/* the process ends here: its memory goes back whole, and freeing a
	 * system-wide recording's threads, maps and symbol tables one by one
	 * took 30 ms. Builds that look for leaks free it all. */
	if (!COLLAPSE_FREE_AT_EXIT)
		return status;
	for (u = 0; u < nsh; u++) {
		pd_fold_free(sh[u].fold);
		pd_symbolizer_free(sh[u].sym);
		pd_close(sh[u].file);
	}
	pd_symcache_free(cache);
	pd_firstq_free(firstq);
	return status;
}
