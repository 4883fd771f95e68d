/*
 * store.h - perfhubd's profile store: what handlers and workers call.
 *
 * Behind it, two halves (store.c joins them): the profile engine
 * (engine/: the in-memory model of a profile and every algorithm
 * that answers from it, no SQL) and a persistence backend chosen at
 * st_open() from --db (store/persist.h, the seam: SQLite in
 * store/sqlite/). No SQL leaves the backend; no caller knows which
 * backend it has.
 *
 * Thread safety: an st_store may be used from any thread. Reads use
 * connections of their own, so queries never wait for an ingest; each
 * st_writer is used by one thread.
 *
 * Returns: 0 on success, -1 on a storage error (logged), 1 for "not found"
 * where stated. A profile is "ready" for questions while it has a complete
 * parse: its status is ready, or it is being parsed again
 * (re-symbolization), when the earlier parse answers until the new one
 * replaces it.
 */
#ifndef PERFHUB_DAEMON_STORE_H
#define PERFHUB_DAEMON_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "engine/builder.h"
#include "engine/export.h"
#include "engine/many.h"
#include "engine/query.h"
#include "engine/selector.h"

typedef struct st_store st_store;

/* How a store is opened; zero means the default of each. */
typedef struct st_options {
	/* PostgreSQL (several nodes): seconds a claimed job stays this node's
	 * without a renewal (--job-lease); ST_JOB_LEASE_S when 0 */
	unsigned job_lease_s;
} st_options;
#define ST_JOB_LEASE_S 30

/* `where` is --db: a file path (SQLite), or a postgresql:// or postgres://
 * URI (PostgreSQL, shared by several perfhubd nodes). NULL and err on
 * failure. st_open is st_open_with default options. */
st_store *st_open(const char *where, char *err, size_t errlen);
st_store *st_open_with(const char *where, const st_options *o, char *err, size_t errlen);
/* 1 when `where` names a database server (postgresql://, postgres://),
 * not a file. */
int st_is_uri(const char *where);
/* `where` fit for a log line: a URI's password is replaced by "***".
 * Returns out. */
const char *st_display(const char *where, char *out, size_t outlen);
/* 1 when the store may be shared by several perfhubd nodes (PostgreSQL). */
int st_shared(const st_store *st);
void st_close(st_store *st);
/* 0 while the database answers (healthz). */
int st_ping(st_store *st);

/* ---- profiles and their jobs ------------------------------------------- */

enum st_status { ST_QUEUED, ST_PARSING, ST_READY, ST_FAILED };
const char *st_status_name(int status);
int st_status_parse(const char *name);	/* -1 if unknown */

typedef struct st_new_profile {
	const char *sha256;	/* of the (decoded) bytes in the spool */
	const char *name;	/* may be NULL */
	const char *kind;	/* "file" or "tar" */
	const char *spool_path;
	uint64_t size;
	size_t nr_tags;
	const char *const *tag_keys, *const *tag_values;
	int local;		/* a recording of this machine (a watched directory's):
				   its files may name symbols as perf's would */
} st_new_profile;

/* Adds a queued profile, or finds the one with the same sha256 and gives
 * it p's name (unless NULL) and tags (a tag key holds one value: the last
 * given). OUT: *id; *existed = 0 for a new profile, 1 when it was already
 * there as p names and tags it, 2 when it was there and its name or tags
 * changed. */
int st_profile_add(st_store *st, const st_new_profile *p, int64_t *id, int *existed);
/* The profile holding these bytes: 0 and *id, or 1 = none. */
int st_profile_by_sha(st_store *st, const char *sha256, int64_t *id);
/* The oldest queued profile -> parsing; the database is the job queue, so
 * nothing is lost when the process dies. OUT: id, spool path and kind
 * (caller frees). 1 = nothing queued. */
int st_profile_claim_next(st_store *st, int64_t *id, char **spool_path, char **kind);
/* 1 when the profile was added as local (st_new_profile.local), 0 when not,
 * -1 on an error or when there is none. */
int st_profile_local(st_store *st, int64_t id);
int st_profile_fail(st_store *st, int64_t id, const char *msg, int64_t offset, int64_t parse_ms);
/* Back to queued (shutdown with the job unfinished). */
int st_profile_requeue(st_store *st, int64_t id);
/* At start: jobs left parsing by a process that died go back to the queue.
 * One process (SQLite): every parsing job; a shared store: only those
 * whose lease ran out (a live node's jobs are never taken). OUT: count. */
int st_requeue_parsing(st_store *st, int *count);
/* fn(ctx) runs when a job was queued by another node or came back to the
 * queue (a shared store's wake-ups; never called on SQLite, whose only
 * process wakes its workers itself). Set before the workers start. */
void st_set_wakeup(st_store *st, void (*fn)(void *ctx), void *ctx);
/* Symbols for a build-id arrived: every node of a shared store forgets the
 * tables it loaded without them (fn(ctx, build_id) runs on each, on a
 * thread of the backend's; SQLite: nothing to tell, the one process knows).
 * The hook is set before the workers start. */
void st_set_debuginfo_hook(st_store *st, void (*fn)(void *ctx, const char *build_id),
			   void *ctx);
int st_announce_debuginfo(st_store *st, const char *build_id);
/* After a parse that did not finish: 1 when this node lost the job (its
 * lease ran out and another node may hold it): the caller neither fails
 * nor requeues it. 0 = still this node's (always, on SQLite). */
int st_job_lost(st_store *st, int64_t id);
/* Work only one node may do at a time (retention, re-symbolization): 1 =
 * go ahead, then st_singleton_end; 0 = another node does it now (with
 * `wait`, blocks until this node may instead); -1 on error. Always 1 on
 * SQLite. */
int st_singleton_begin(st_store *st, const char *name, int wait);
void st_singleton_end(st_store *st, const char *name);
/* 1 = not found. OUT: the spool path to remove (caller frees). */
int st_profile_delete(st_store *st, int64_t id, char **spool_path);

/* What was uploaded: the spool file holding the bytes (a tar for a
 * directory), its kind ("file" or "tar") and the profile's name (NULL when
 * it has none). OUT: malloc'ed. 1 = no such profile. */
int st_profile_file(st_store *st, int64_t id, char **spool_path, char **kind, char **name);

/* A change of a profile's labels (PATCH /api/v1/profiles/{id}): with
 * set_name the name becomes `name` (NULL removes it); each tag key gets
 * its value, replacing any earlier one, or loses it when the value is
 * NULL. */
typedef struct st_profile_patch {
	int set_name;
	const char *name;
	size_t nr_tags;
	const char *const *tag_keys, *const *tag_values;
} st_profile_patch;
/* All of it or nothing. 1 = no such profile. */
int st_profile_update(st_store *st, int64_t id, const st_profile_patch *patch);

/* The profile as GET /api/v1/profiles/{id} shows it; NULL and *notfound=1
 * when there is none. */
json_t *st_profile_json(st_store *st, int64_t id, int *notfound);

typedef struct st_list_filter {
	int64_t limit, offset;
	int status;			/* -1 = any */
	const char *hostname;		/* NULL = any */
	const char *tag_key, *tag_value;
	int64_t since, until;		/* uploaded_at, unix seconds; 0 = open */
	const pe_sel *sel;		/* a selector (q) they must match; NULL = any */
} st_list_filter;
/* {"profiles": [...], "total": N}, newest first. */
json_t *st_profile_list_json(st_store *st, const st_list_filter *f);

typedef struct st_counts {
	int64_t queued, parsing, ready, failed;
	int64_t db_bytes;
	/* the profile models questions were answered from: kept in memory
	 * (the parse left it, or an earlier question loaded it) or read back
	 * from the backend (filled by the store, not the backend) */
	uint64_t models_memory, models_loaded;
} st_counts;
int st_counts_get(st_store *st, st_counts *c);

/* ---- folded stacks ------------------------------------------------------ */

/* The filters of a folded-stack question (engine/query.h says what
 * each field means): event, comm, pid, tid, from_ns/to_ns, with_pid,
 * with_tid, kernel, any_order (st_fold: lines may come unsorted and a text
 * more than once; the caller adds them up), max_nodes (st_flame only). */
typedef pe_filter st_fold_filter;

/* The event folded-stack questions about a profile fold for `want` (the
 * filter's event; NULL: the default), as pe_event_pick (engine/query.h)
 * picks it: the recording's own event order, the first event answering to
 * `want` that has samples; the default is the first that has samples.
 * OUT: *name malloc'ed (NULL when the profile has no samples at all); on 2,
 * *names (unless `names` is NULL) the profile's event names joined by ", ",
 * malloc'ed; *gen (unless NULL) the parse generation it was picked in
 * (st_profile_generation's). 0 found; 1 not ready; 2 no event answers to
 * `want`; -1 error. */
int st_event_pick(st_store *st, int64_t id, const char *want, char **name, char **names,
		  int64_t *gen);

/* One call per distinct folded stack, in the order stackcollapse-perf
 * prints them (sorted bytewise): `line` is "comm;outer;...;leaf" (comm as
 * with_pid/with_tid ask), with no ';' inside a frame. */
typedef pe_fold_cb st_fold_cb;
/* 1 = no such profile or not ready. Without a time range the answer comes
 * from the profile's aggregate (kept in memory); a time range reads the
 * sample blocks it overlaps. */
int st_fold(st_store *st, int64_t id, const st_fold_filter *f, st_fold_cb cb, void *ctx);

/* The flame graph of what st_fold would print, as a tree handed out depth
 * first: enter() for a node (the root is "all", then comms, then frames
 * outermost first; children in bytewise name order), then its children,
 * then leave(). A node's value is the sum of its lines' samples or period;
 * `dso` is the path of a frame node's DSO as the recording names it (NULL
 * for the root, comms and frames without one; when frames of one name come
 * from several DSOs, that of the earliest sample). With f->max_nodes only
 * that many nodes are handed out, the largest by value (the root always):
 * smaller subtrees are left out, their values still counted in their
 * parents'. 1 = not ready. Built from the stack tree, no folded text in
 * between. */
typedef pe_tree_cb st_tree_cb;	/* enter(ctx, name, len, dso, value), leave(ctx) */
int st_flame(st_store *st, int64_t id, const st_fold_filter *f, int by_samples,
	     const st_tree_cb *cb, void *ctx);

/* /top: [{"name", "dso", "self", "total"}] per function (frame name, with
 * "_[k]" under f->kernel), unsorted; self counts the leaf frame, total each
 * stack once per function on it. Filters as st_fold (with_pid/with_tid are
 * ignored). NULL and *notfound = 1 when not ready. */
json_t *st_top_json(st_store *st, int64_t id, const st_fold_filter *f, int by_samples,
		    int *notfound);

/* The profile in other tools' formats (engine/export.h says what
 * each holds), filters as st_fold. pprof: gzipped profile.proto, one
 * sample per (thread, comm, stack) with comm, pid and tid labels.
 * speedscope: its file format, a sampled profile per thread (or per comm
 * with o->by_comm). OUT: malloc'ed bytes. 1 = not ready. */
int st_pprof(st_store *st, int64_t id, const st_fold_filter *f, uint8_t **out, size_t *len);
/* The same with its off-CPU time (a third sample type) when the profile
 * has some; default_offcpu makes it the default sample type. 1 = not
 * ready, 2 = default_offcpu and no off-CPU time, -1. */
int st_pprof_offcpu(st_store *st, int64_t id, const st_fold_filter *f, int default_offcpu,
		    uint8_t **out, size_t *len);
typedef pe_speedscope_opts st_speedscope_opts;
int st_speedscope(st_store *st, int64_t id, const st_fold_filter *f, const st_speedscope_opts *o,
		  char **out, size_t *len);

/* 0 and the profile's generation while it is ready (it changes with every
 * parse, so answers cached under it stay right); 1 = not ready. */
int st_profile_generation(st_store *st, int64_t id, int64_t *gen);

/* The flame graphs of base and target (filters as st_flame: f, and for the
 * target f_target unless NULL) merged into one tree, handed out depth first like st_flame's, each node with both
 * values (0 where a profile lacks it). 1 = either is not a ready profile;
 * -2 out of memory. */
typedef pe_diff_cb st_diff_cb;	/* enter(ctx, name, len, dso, base, target), leave(ctx) */
int st_diff(st_store *st, int64_t base, int64_t target, const st_fold_filter *f,
	    const st_fold_filter *f_target, int by_samples, const st_diff_cb *cb, void *ctx);

/* ---- per-profile and cross-profile aggregates ---------------------------- */

/* {"threads": [{"pid", "tid", "comms": [...], "samples"}]}, most samples
 * first. NULL and *notfound = 1 when the profile is not ready. */
json_t *st_threads_json(st_store *st, int64_t id, int *notfound);

/* {"event", "start_ns", "bucket_ns", "buckets": [{"t_ns", "samples",
 * "period"}]}: samples of the folded event per time bucket, from the first
 * sample on. */
json_t *st_timeline_json(st_store *st, int64_t id, const char *event, uint64_t bucket_ns,
			 int *notfound);

/* ---- deeper views of one profile (store-views.c) -------------------------- */

/* Whether f->measure (off-CPU, on+off-CPU) applies to the profile: 0; 1 =
 * not ready; 2 = it does not (why: a sentence for the client); -1. */
int st_measure_check(st_store *st, int64_t id, const st_fold_filter *f, char *why,
		     size_t whylen);

/* st_timeline_json under f's event and measure: with a measure other than
 * period, each bucket also has "offcpu" (nanoseconds switched out that
 * fell in it). */
json_t *st_timeline_measured_json(st_store *st, int64_t id, const st_fold_filter *f,
				  uint64_t bucket_ns, int *notfound);

/* Callers and callees of `function` (a frame name as /top shows it) under
 * the filters of st_flame: the callers tree (the function at the root,
 * then each caller outwards, the comm last) through callers, then the
 * callees tree (the function at the root, what it called below) through
 * callees; both roots are the function's total, a stack counted once.
 * 0; 1 = not ready; 2 = no frame of that name; -1. */
int st_sandwich(st_store *st, int64_t id, const st_fold_filter *f, int by_samples,
		const char *function, const st_tree_cb *callers, void *callers_ctx,
		const st_tree_cb *callees, void *callees_ctx);

/* A function's self samples by DSO and address (engine/query.h,
 * pe_annotate), each DSO with the build-id the recording gave it. */
typedef struct st_annot_dso {
	char *dso;		/* as the recording names it; NULL = frames without one */
	char build_id[41];	/* hex, "" when unknown */
	int kernel;
	uint64_t samples, value;
	pe_addr_count *addrs;	/* by address: file offsets (kernel: addresses) */
	size_t n;
} st_annot_dso;
typedef struct st_annotation {
	st_annot_dso *dsos;	/* most value first */
	size_t n;
	uint64_t samples, value;	/* /top's self of the function */
} st_annotation;
/* Under f's event and measure. 0; 1 = not ready; 2 = no frame of that
 * name; -1. Free with st_annotation_free. */
int st_annotate(st_store *st, int64_t id, const st_fold_filter *f, const char *function,
		st_annotation *out);
void st_annotation_free(st_annotation *a);

typedef struct st_agg_filter {
	const char *group_by;		/* comm, dso, symbol, hostname, event */
	const char *hostname;
	const char *tag_key, *tag_value;
	int64_t since, until;		/* uploaded_at, unix seconds; 0 = open */
	int64_t limit;
	const pe_sel *sel;		/* a selector (q) they must match; NULL = any */
} st_agg_filter;
/* {"group_by", "rows": [{"key", "samples", "period", "profiles"}]} over all
 * ready profiles, most samples first; symbol and dso are of the leaf frame.
 * NULL on a bad group_by (*bad = 1) or a storage error. */
json_t *st_aggregate_json(st_store *st, const st_agg_filter *f, int *bad);

/* ---- questions about many profiles (store-many.c) ------------------------- */

/* Profiles one merged answer (and each side of a diff) takes at most: the
 * newest that match. Bounds the time and, with the model cache, the memory
 * of one question. */
#define ST_MAX_MERGE 500
/* Points one series answers at most (the newest profiles). */
#define ST_MAX_SERIES 10000
/* Summaries one series makes at most for profiles that have none. */
#define ST_SERIES_MAKE 32

/* Which ready profiles a question is about. */
typedef struct st_pick {
	const pe_sel *sel;	/* NULL = every ready profile */
	int64_t since, until;	/* uploaded_at, unix seconds; 0 = open */
	int64_t limit;		/* the newest N; 0 = no limit */
	int64_t id;		/* > 0: this one profile (a diff's base=ID), sel ignored */
} st_pick;

/* How many profiles went in: `matched` the ready profiles the pick
 * selected, `used` those the answer covers (the newest, limit and the cap
 * allowing; `capped` when the cap left some out). */
typedef struct st_many_info {
	size_t matched, used;
	int capped;
} st_many_info;

/* The flame graphs of the picked profiles (filters as st_flame) merged into
 * one tree, handed out depth first: through cb with each node's summed
 * value as `base` (target 0) or, normalized (each profile weighs one: its
 * values divided by its own root), through ncb. max_nodes as st_flame's,
 * over the merged tree. 0 (also when nothing matched: the root alone),
 * 1 = pk->id is not a ready profile, -1 storage error, -2 out of memory,
 * -3 the merged tree passed PE_DIFF_MAX_NODES. */
int st_query_flame(st_store *st, const st_pick *pk, const st_fold_filter *f, int by_samples,
		   int normalize, st_many_info *info, const st_diff_cb *cb,
		   const pe_norm_cb *ncb, void *ctx);
/* Their folded stacks summed: one call per line, sorted bytewise, with the
 * summed weight (by_samples: samples, else period) in both counts. Returns
 * as st_query_flame. */
int st_query_fold(st_store *st, const st_pick *pk, const st_fold_filter *f, int by_samples,
		  st_many_info *info, st_fold_cb cb, void *ctx);
/* Their pprof profiles merged into one (engine/export.h's builder), with
 * off-CPU time where a profile has it (default_offcpu: as for
 * st_pprof_offcpu). Returns as st_query_flame, -3 past the pprof caps,
 * 2 = default_offcpu and none of them has off-CPU time. */
int st_query_pprof(st_store *st, const st_pick *pk, const st_fold_filter *f, int default_offcpu,
		   st_many_info *info, uint8_t **out, size_t *len);
/* {"functions": [{"name", "dso", "self", "total", "self_share",
 * "total_share"}], "total"}: their /top rows summed, most self first (at
 * most `rows`); normalized: self and total in profiles, shares the mean of
 * the per-profile shares. NULL on an error (*notfound when pk->id is not a
 * ready profile). */
json_t *st_query_top_json(st_store *st, const st_pick *pk, const st_fold_filter *f,
			  int by_samples, int normalize, int64_t rows, st_many_info *info,
			  int *notfound);
/* {"event", "bucket_ns", "buckets": [{"t_ns", "samples", "period",
 * "profiles"}]}: their timelines summed by the time since each one's first
 * sample (t_ns). NULL on an error (*too_many: more than max_buckets). */
json_t *st_query_timeline_json(st_store *st, const st_pick *pk, const char *event,
			       uint64_t bucket_ns, size_t max_buckets, st_many_info *info,
			       int *too_many);

/* A series: one point per picked profile, oldest first, from the stored
 * summaries (made on first need for profiles that have none yet). */
typedef struct st_series_req {
	st_pick pick;
	int kind;		/* enum pe_sum_kind; -1: the whole event */
	const char *key;	/* function, DSO (path or file name) or comm */
	const char *event;	/* NULL: each profile's default event */
	int metric;		/* enum pe_metric */
	const char *group_by;	/* a label: one series per value; NULL = one */
} st_series_req;
/* {"metric", "event", "points": [{"id", "name", "uploaded_at", "tags",
 * "value"}], "pending"} or, with group_by, {"group_by", "series": [{"label",
 * "points"}], "pending"}. A profile without a summary has one made, at most
 * ST_SERIES_MAKE per question (the idle workers make the rest,
 * st_summary_backfill); those beyond have no point yet and are counted in
 * "pending". NULL on a storage error. */
json_t *st_series_json(st_store *st, const st_series_req *r, st_many_info *info);

/* The diff of two picks: the tree as st_diff hands it (each side the sum of
 * its profiles' flame graphs; profiles picked on both sides count as the
 * target's only; f->max_nodes of its largest nodes, 0 = all), and in *ranked {"regressions", "improvements",
 * "summary"} (engine/many.h, pe_fntab_rank). 0, 1 = an id on either
 * side is not a ready profile, -1, -2, -3 as st_query_flame. */
typedef struct st_rdiff_req {
	st_pick base, target;
	double min_share;	/* percent: functions below it on both sides left out */
	double alpha;		/* the significance level */
	size_t rows;		/* of each list; 0 = all */
} st_rdiff_req;
int st_rdiff(st_store *st, const st_rdiff_req *r, const st_fold_filter *f, int by_samples,
	     const st_diff_cb *cb, void *ctx, json_t **ranked, st_many_info info[2]);

/* Makes and stores the per-profile summary series read (after each
 * parse: jobs.c). 0, 1 = not ready, -1. */
int st_summary_make(st_store *st, int64_t id);

/* The summary of one ready profile that has none (stored before summaries
 * existed, or its making failed), the newest first: what idle workers do
 * until none is left, so series never wait for many of them. One caller
 * at a time (others get 1). 0 made one, 1 nothing to do, -1 error. */
int st_summary_backfill(st_store *st);

/* ---- writing a parsed profile ------------------------------------------ */

typedef struct st_writer st_writer;

/* Removes whatever an earlier attempt left for this profile, then opens a
 * transaction; rows become visible with st_writer_finish() only. */
st_writer *st_writer_begin(st_store *st, int64_t id);
/* The engine's builder the parse is written through (engine/builder.h;
 * engine/feed.h feeds it from a recording): each full block and the rows
 * made since the last one go to the backend in one short transaction as
 * the builder fills up. Owned by w. */
pe_builder *st_writer_builder(st_writer *w);

typedef struct st_summary {
	const char *hostname;
	uint64_t first_ns, last_ns, nr_samples;
	double symbolized_pct;
	int64_t parse_ms;
	/* JSON texts, exactly as perfhub inspect --json reports them */
	const char *header, *events, *records, *samples_per_event;
	uint64_t lost;
	const char *warnings;	/* the parser's warnings, a JSON array; NULL: none */
} st_summary;
/* Where the writer's time went so far (nanoseconds, wall clock): encoding
 * and compressing sample blocks, the parse waiting for the writer thread
 * (its queue full, or its last batches at the end), waiting for the write
 * lock, inserting rows and committing. */
typedef struct st_write_times {
	uint64_t compress_ns, queue_ns, lock_ns, insert_ns, commit_ns;
	uint64_t blocks, commits;
	int64_t generation;	/* the parse generation the finish made (0: the
				   backend does not say; its model is not cached) */
	uint64_t prepare_ns;	/* the prepare hook's answers (beside the last
				   transaction) */
} st_write_times;
/* A dso of the recording with its build-id (hex), as st_profile_dsos_set
 * will note it: the model of the profile kept in memory after the finish
 * knows it as one read back from the backend would. 0, or -1 out of memory
 * (the model is then read back at the first question). */
int st_writer_dso(st_writer *w, const char *path, const char *build_id_hex);
/* Writes the summary, marks the profile ready and commits. Frees w. When
 * `times` is not NULL it gets the writer's times, the finish's included. */
int st_writer_finish(st_writer *w, const st_summary *s, st_write_times *times);
/* Rolls back and frees w. */
void st_writer_abort(st_writer *w);

/* ---- answers made while a parse finishes ---------------------------------- */

/* The sealed model of a parse that is finishing: its profile is not ready
 * yet. */
typedef struct st_finishing st_finishing;

/* Answers made from a parse's model beside the backend's last transaction
 * and kept the moment the profile is ready, before its model goes into the
 * cache (questions that find the profile ready meanwhile wait): the first
 * questions find them made. Answers not made by the end of that
 * transaction hold nothing back: the model goes into the cache first and
 * keep() comes when they are done. make() runs on a thread of the
 * writer's and returns what it made (NULL: nothing); then keep() (the
 * profile is ready as parse generation gen) or drop() (it is not) takes
 * that, on the parsing thread; keep() must not ask the store about the
 * profile. Only when the model stays in memory (backends that say the
 * generation). */
typedef struct st_prepare_hook {
	void *(*make)(void *ctx, st_finishing *f);
	void (*keep)(void *ctx, int64_t id, int64_t gen, void *made);
	void (*drop)(void *ctx, void *made);
	void *ctx;
} st_prepare_hook;
/* Sets the hook (NULL: none); returns once no parse uses the one before. */
void st_set_prepare_hook(st_store *st, const st_prepare_hook *h);
/* As st_event_pick (without the list of names) and st_flame, on the model
 * of a finishing parse. */
int st_finishing_event(st_finishing *f, const char *want, char **name);
int st_finishing_flame(st_finishing *f, const st_fold_filter *ff, int by_samples,
		       const st_tree_cb *cb, void *ctx);

/* ---- debuginfo index and re-symbolization -------------------------------- */

/* Creates the debuginfo tables when missing (idempotent; they are added
 * beside the profile schema, whatever its migration level). */
int st_debuginfo_init(st_store *st);
/* Indexes a stored file: `kind` "elf", "debug" or "kallsyms"; `symbols`
 * whether names can come from it (.symtab, a debug file, kallsyms). */
int st_debuginfo_put(st_store *st, const char *build_id, const char *kind, const char *path,
		     uint64_t size, int symbols, const char *source);
/* The file to serve for a build-id, the one with symbols first. OUT:
 * malloc'ed path and kind, size. 1 = none. */
int st_debuginfo_get(st_store *st, const char *build_id, char **path, char **kind,
		     uint64_t *size);
/* 1 when a file with symbols is indexed for it, 0 when not, -1 on error. */
int st_debuginfo_has_symbols(st_store *st, const char *build_id);

/* Forgets every file of a build-id. 0, or 1 when none was indexed. */
int st_debuginfo_delete(st_store *st, const char *build_id);
/* The build-id of the oldest file added before `before` (unix
 * milliseconds) that no profile names (orphaned debuginfo, which retention
 * prunes first). 0 and hex, 1 = none. */
int st_debuginfo_orphan(st_store *st, int64_t before, char hex[41]);

/* 1 when a file with symbols for it was uploaded (not fetched) at or after
 * `since` (unix milliseconds), 0 when not, -1 on error. */
int st_debuginfo_added_since(st_store *st, const char *build_id, int64_t since);

/* What a parse left unresolved: per build-id (hex) and dso path, the
 * frames without a name. Replaces the profile's earlier rows. */
int st_profile_dsos_set(st_store *st, int64_t id, size_t n, const char *const *build_ids,
			const char *const *paths, const uint64_t *unresolved);
/* Ready profiles with unresolved frames in that build-id. OUT: malloc'ed ids. */
int st_profiles_unresolved_in(st_store *st, const char *build_id, int64_t **ids, size_t *n);
/* A ready profile goes back to the queue to be parsed again with the
 * symbols the server has now (the parse replaces its rows).
 * 0 queued; 1 no such profile; 2 already queued or parsing; 3 failed. */
int st_profile_resymbolize(st_store *st, int64_t id);

/* ---- retention and the operator's tools ------------------------------------ */

/* Bytes the data take (space freed by deleted profiles does not count
 * until --vacuum). */
int st_used_bytes(st_store *st, int64_t *bytes);
/* Up to `max` ready or failed profiles uploaded before `before` (unix
 * seconds), oldest first. OUT: ids, count. */
int st_expired(st_store *st, int64_t before, int64_t *ids, size_t max, size_t *n);
/* The oldest ready or failed profile that is not the newest profile of all
 * (the last upload is never pruned for size). 0 and *id, 1 = none. */
int st_oldest_prunable(st_store *st, int64_t *id);

/* On the store --db names, without opening it for serving (perfhubd
 * --backup, --vacuum); -1 and err also when the backend has no such tool.
 * backup: one consistent copy written beside `dest`, renamed over it when
 * complete, while others may be writing. vacuum: the store compacted.
 * OUT: sizes before and after. */
int st_backup(const char *where, const char *dest, char *err, size_t errlen);

/* perfhubd --copy-to: the SQLite store `from` (a file) into the empty
 * PostgreSQL store `to` (a URI), in one transaction: everything or nothing.
 * A parse that was under way arrives queued. Every spooled file the source
 * names goes through relocate(ctx, what, path, ref, reflen, err, errlen)
 * ("original" or "debuginfo"; 0 and the ref the copy keeps, or -1). OUT:
 * counts. 0 or -1 with err. */
typedef int (*st_relocate_fn)(void *ctx, const char *what, const char *path, char *ref,
			      size_t reflen, char *err, size_t errlen);
typedef struct st_copy_stats {
	int64_t profiles, rows, files;
} st_copy_stats;
int st_copy_to(const char *from, const char *to, st_relocate_fn relocate, void *ctx,
	       st_copy_stats *stats, char *err, size_t errlen);
int st_vacuum(const char *where, int64_t *before, int64_t *after, char *err, size_t errlen);

#endif
