/* ingest.c - a spooled recording into the store: the engine's feed
 * (engine/feed.h) reads and symbolizes it into the writer's builder; this
 * file adds what only the daemon does around it (tar unpacking, debuginfo,
 * the summary, re-symbolization bookkeeping). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

#include "jobs/ingest.h"
#include "engine/feed.h"
#include "log.h"
#include "perfdata.h"
#include "dso.h"
#include "report.h"
#include "symbols.h"
#include "intake/spool.h"

/* The (build-id, dso, unresolved frames) rows re-symbolization looks for. */
static void write_dsos(const pe_feed *in, st_store *st, int64_t id)
{
	size_t i, n = 0, nr;
	const pe_feed_dso *dsos = pe_feed_dsos(in, &nr);
	const char **bids = calloc(nr + 1, sizeof(*bids));
	const char **paths = calloc(nr + 1, sizeof(*paths));
	uint64_t *unres = calloc(nr + 1, sizeof(*unres));

	if (bids && paths && unres) {
		for (i = 0; i < nr; i++) {
			if (!dsos[i].hex[0])
				continue;
			bids[n] = dsos[i].hex;
			paths[n] = dsos[i].path;
			unres[n++] = dsos[i].unresolved;
		}
		if (st_profile_dsos_set(st, id, n, bids, paths, unres) < 0)
			log_warn("msg=\"cannot note unresolved dsos\" id=%lld", (long long)id);
	}
	free(bids);
	free(paths);
	free(unres);
}

/* Symbols that arrived while this parse ran may have come too late for
 * it (the PUT's re-symbolization saw the profile still parsing): once
 * more, then. Only files added in a second after the parse began count,
 * so the next parse (which starts later) cannot repeat this. */
static void requeue_if_late(const pe_feed *in, st_store *st, int64_t id, int64_t started)
{
	size_t i, nr;
	const pe_feed_dso *dsos = pe_feed_dsos(in, &nr);

	for (i = 0; i < nr; i++) {
		if (!dsos[i].hex[0] || !dsos[i].unresolved ||
		    st_debuginfo_added_since(st, dsos[i].hex, started) != 1)
			continue;
		if (st_profile_resymbolize(st, id) == 0)
			log_info("msg=\"resymbolize\" id=%lld build_id=%s reason=\"arrived during the parse\"",
				 (long long)id, dsos[i].hex);
		return;
	}
}

/* The dsos write_dsos notes, for the model the writer keeps in memory. */
static void note_dsos(const pe_feed *in, st_writer *w)
{
	size_t i, nr;
	const pe_feed_dso *dsos = pe_feed_dsos(in, &nr);

	for (i = 0; i < nr; i++)
		if (dsos[i].hex[0] && st_writer_dso(w, dsos[i].path, dsos[i].hex) < 0)
			return;
}

static char *dump(const json_t *j)
{
	return j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

/* Events, features and record counts as rows (the feed's), the report's
 * parts as JSON, and the last commit: w is gone after this. */
static int write_summary(pe_feed *in, st_writer *w, pd_file *f, int64_t parse_ms,
			 st_write_times *times)
{
	const pe_feed_stats *fs = pe_feed_get_stats(in);
	json_t *rep = report_json(f);
	json_t *header, *v;
	st_summary sum;
	char *h = NULL, *e = NULL, *rc = NULL, *sp = NULL, *wn = NULL;
	int ret = -1;

	if (!rep || pe_feed_summary(in, rep) < 0) {
		st_writer_abort(w);
		goto out;
	}
	note_dsos(in, w);
	header = json_object_get(rep, "header");
	h = dump(header);
	e = dump(json_object_get(rep, "events"));
	rc = dump(json_object_get(rep, "records"));
	sp = dump(json_object_get(rep, "samples_per_event"));
	memset(&sum, 0, sizeof(sum));
	sum.hostname = pd_get_header(f)->hostname;
	sum.first_ns = pd_get_stats(f)->first_time;
	sum.last_ns = pd_get_stats(f)->last_time;
	sum.nr_samples = fs->samples;
	sum.symbolized_pct = fs->samples ? 100.0 * (double)fs->resolved_samples /
					   (double)fs->samples : 100.0;
	sum.parse_ms = parse_ms;
	sum.header = h;
	sum.events = e;
	sum.records = rc;
	sum.samples_per_event = sp;
	/* what the parser warned about (an unfinished recording, a broken
	 * feature section), as perfhub inspect shows it */
	if ((v = json_object_get(rep, "warnings")) && !(sum.warnings = wn = dump(v))) {
		st_writer_abort(w);
		goto out;
	}
	v = json_object_get(rep, "lost");
	sum.lost = (uint64_t)json_integer_value(v);
	ret = st_writer_finish(w, &sum, times);
out:
	free(h);
	free(e);
	free(rc);
	free(sp);
	free(wn);
	json_decref(rep);
	return ret;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* wall-clock milliseconds, the unit of the debuginfo table's added_at */
static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The tables of the recorded dsos, loaded before the profile's write
 * transaction starts: a debuginfod fetch (seconds) then holds no lock that
 * uploads wait for. Dsos only MMAP2 records name are fetched during the
 * parse. */
static void prefetch(pd_symcache *cache, dbg_store *dbg, const pd_header *h)
{
	pd_dso_paths paths = { .debuginfo_dir = dbg_dir(dbg) };
	size_t i;

	for (i = 0; h && i < h->nr_build_ids; i++) {
		const pd_build_id *b = &h->build_ids[i];
		pd_dso *d;

		if (!b->filename || b->filename[0] != '/' || !b->size)
			continue;
		d = pd_dso_get(cache, PD_DSO_ELF, b->filename, b->build_id, b->size, &paths);
		if (d) {
			pd_dso_nr_symbols(d);
			pd_dso_put(cache, d);
		}
	}
}

void ingest_profile(st_store *st, spool *sp, pd_symcache *cache, dbg_store *dbg, int64_t id,
		    const char *ref, const char *kind, int local, uint64_t max_bytes,
		    atomic_int *stop, ing_result *res)
{
	char kallsyms[PATH_MAX];
	const pd_header *h;
	const pe_feed_stats *fs;
	size_t i;
	pd_options opt = { .ordered = 1 };
	pd_sym_options so = { 0 };
	pd_symbolizer *sym = NULL;
	pe_feed *in = NULL;
	st_writer *w = NULL;
	pd_error err;
	pd_file *f = NULL;
	sp_local *lc = NULL;
	const char *open_path;
	int64_t t0 = now_ms(), started = wall_ms();
	uint64_t t_open = now_ns(), t_loop, t_fin;
	int rc;

	memset(res, 0, sizeof(*res));
	res->offset = -1;
	/* the original on this node's disk (a tar unpacked); one that is
	 * here but cannot be unpacked is bad input */
	lc = sp_local_open(sp, ref, kind, max_bytes, &res->bad_input, res->msg, sizeof(res->msg));
	if (!lc)
		return;
	open_path = sp_local_path(lc);
	f = pd_open_path(open_path, &opt, &err);
	if (!f)
		goto parse_error;
	/* the debuginfo a bucket holds for the recorded build-ids comes here
	 * before symbols are looked for */
	dbg_prepare(dbg, pd_get_header(f));
	if (dbg_fetches(dbg))
		prefetch(cache, dbg, pd_get_header(f));
	w = st_writer_begin(st, id);
	if (!w) {
		snprintf(res->msg, sizeof(res->msg), "storage error while writing the profile");
		goto out;
	}
	so.recording = open_path;
	so.build_id_files_only = !local;
	h = pd_get_header(f);
	/* an uploaded kallsyms for the recorded kernel comes first */
	for (i = 0; dbg && h && i < h->nr_build_ids; i++) {
		const pd_build_id *b = &h->build_ids[i];

		if (b->filename && !strcmp(b->filename, "[kernel.kallsyms]") &&
		    dbg_kallsyms(dbg, b->build_id, b->size, kallsyms, sizeof(kallsyms)) == 0)
			so.kallsyms = kallsyms;
	}
	if (dbg)
		so.debuginfo_dir = dbg_dir(dbg);
	sym = pd_symbolizer_new(f, cache, &so);
	if (!sym || !(in = pe_feed_new(f, sym, st_writer_builder(w)))) {
		snprintf(res->msg, sizeof(res->msg), "out of memory for the symbolizer");
		goto out;
	}
	t_loop = now_ns();
	res->open_ms = (double)(t_loop - t_open) / 1e6;
	rc = pe_feed_run(in, stop, &err);
	fs = pe_feed_get_stats(in);
	res->records = fs->records;
	if (fs->symbolizer_limits)
		log_debug("msg=\"symbolizer limit\" id=%lld records=%llu", (long long)id,
			  (unsigned long long)fs->symbolizer_limits);
	if (rc == PE_FEED_STOPPED) {
		res->cancelled = 1;
		snprintf(res->msg, sizeof(res->msg), "shutting down");
		goto out;
	}
	if (rc == PE_FEED_PARSE_ERROR)
		goto parse_error;
	if (rc != PE_FEED_DONE) {
		snprintf(res->msg, sizeof(res->msg), "storage error while writing the profile");
		goto out;
	}
	if (fs->offcpu.intervals || fs->offcpu.never_in)
		log_info("msg=\"off-cpu\" id=%lld intervals=%llu preempted=%llu ns=%llu"
			 " switch_ins_unmatched=%llu switch_outs_unmatched=%llu", (long long)id,
			 (unsigned long long)fs->offcpu.intervals,
			 (unsigned long long)fs->offcpu.preempted, (unsigned long long)fs->offcpu.ns,
			 (unsigned long long)fs->offcpu.unmatched_in,
			 (unsigned long long)fs->offcpu.never_in);
	t_fin = now_ns();
	res->read_ms = (double)fs->read_ns / 1e6;
	res->symbolize_ms = (double)fs->symbolize_ns / 1e6;
	res->intern_ms = (double)fs->intern_ns / 1e6;
	res->sample_ms = (double)fs->sample_ns / 1e6;
	res->other_ms = (double)fs->other_ns / 1e6;
	res->chain_hits = fs->chain_hits;
	res->tail_hits = fs->tail_hits;
	res->samples = fs->samples;
	rc = write_summary(in, w, f, now_ms() - t0, &res->write);
	w = NULL;
	if (rc < 0) {
		snprintf(res->msg, sizeof(res->msg), "storage error while writing the profile");
		goto out;
	}
	res->finish_ms = (double)(now_ns() - t_fin) / 1e6;
	res->ok = 1;
	write_dsos(in, st, id);
	if (dbg)
		requeue_if_late(in, st, id, started);
	goto out;
parse_error:
	pd_strerror(&err, res->msg, sizeof(res->msg));
	res->offset = (int64_t)err.offset;
	res->bad_input = 1;
out:
	st_writer_abort(w);
	dbg_flush_index(dbg);
	pe_feed_free(in);
	pd_symbolizer_free(sym);
	pd_close(f);
	sp_local_close(lc);
}
