/*
 * persist.h - THE SEAM between the profile engine and where rows are kept.
 *
 * A persistence backend keeps profiles, their jobs and their rows, and
 * hands them back; it never folds a stack or walks the stack tree (that is
 * the engine's job, engine/). Each backend fills one st_persist_ops
 * table, like a curl TLS backend or an SQLite VFS: store.c picks the table
 * once, from --db (a path: SQLite, store/sqlite/; "postgresql://" or
 * "postgres://": PostgreSQL), and never asks which one it has.
 *
 * Conventions: 0 on success, -1 on a storage error (logged by the
 * backend), 1 for "not found" or "not ready" where stated. Every op may be
 * called from any thread; a writer and a read snapshot are used by one
 * thread at a time.
 */
#ifndef PERFHUB_STORE_PERSIST_H
#define PERFHUB_STORE_PERSIST_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "engine/block.h"
#include "engine/builder.h"
#include "engine/many.h"
#include "engine/model.h"
#include "engine/query.h"
#include "store/store.h"

typedef struct st_persist st_persist;			/* an opened store */
typedef struct st_persist_writer st_persist_writer;	/* one parse being written */
typedef struct st_persist_read st_persist_read;		/* a read snapshot of one profile */

/* A ready profile an aggregate covers. */
typedef struct st_ready_profile {
	int64_t id;
	char *hostname;		/* NULL when the recording has none */
} st_ready_profile;

/* A profile as a question about many profiles sees it: its labels (what a
 * selector matches) and what the answer needs of it. Valid during the
 * callback only. */
typedef struct st_profile_labels {
	int64_t id;
	const char *name, *hostname;	/* NULL when none */
	int status;
	int64_t uploaded_at;		/* unix seconds */
	int has_summary;		/* summary_put was done for its current parse */
	uint64_t first_ns, last_ns;	/* its samples' span (0 when unknown) */
	size_t nr_tags;
	const char *const *tag_keys, *const *tag_values;
} st_profile_labels;
/* A non-zero return stops the walk and is returned. */
typedef int (*st_labels_cb)(void *ctx, const st_profile_labels *l);

/* Which profiles profiles_labels hands out: a backend may use these to
 * narrow its search (the selector itself is matched above the seam). */
typedef struct st_label_query {
	int64_t id;			/* > 0: this profile only */
	int64_t below_id;		/* > 0: only profiles with a smaller id */
	int status;			/* -1 = any */
	const char *hostname;		/* NULL = any */
	const char *tag_key, *tag_value;	/* a tag it must carry (NULL = none) */
	int64_t since, until;		/* uploaded_at, unix seconds; 0 = open */
} st_label_query;

/* One event of one profile's stored summary, with the values of the key
 * asked for (zeros when the profile has none of it). */
typedef struct st_summary_point {
	int64_t id;
	uint32_t ord;			/* 0: the event folded by default */
	const char *event;
	pe_sum_value v;
} st_summary_point;
typedef int (*st_summary_cb)(void *ctx, const st_summary_point *pt);

typedef struct st_persist_ops {
	const char *name;	/* "sqlite", "postgresql" */

	/* ---- the store ---- */
	/* Opens (creating and migrating the schema when needed) the store
	 * `where` names, with o's settings (never NULL). NULL and err on
	 * failure. */
	st_persist *(*open)(const char *where, const st_options *o, char *err, size_t errlen);
	void (*close)(st_persist *p);
	/* 0 while the store answers (healthz). */
	int (*ping)(st_persist *p);

	/* ---- profiles and their jobs: as the st_* functions of store.h ---- */
	int (*profile_add)(st_persist *p, const st_new_profile *np, int64_t *id, int *existed);
	int (*profile_by_sha)(st_persist *p, const char *sha256, int64_t *id);
	int (*profile_claim_next)(st_persist *p, int64_t *id, char **spool_path, char **kind);
	int (*profile_local)(st_persist *p, int64_t id);
	int (*profile_fail)(st_persist *p, int64_t id, const char *msg, int64_t offset,
			    int64_t parse_ms);
	int (*profile_requeue)(st_persist *p, int64_t id);
	int (*requeue_parsing)(st_persist *p, int *count);
	int (*profile_delete)(st_persist *p, int64_t id, char **spool_path);
	int (*profile_resymbolize)(st_persist *p, int64_t id);
	json_t *(*profile_json)(st_persist *p, int64_t id, int *notfound);
	int (*profile_file)(st_persist *p, int64_t id, char **spool_path, char **kind,
			    char **name);
	/* in one transaction: all of the patch or none of it */
	int (*profile_update)(st_persist *p, int64_t id, const st_profile_patch *patch);
	json_t *(*profile_list_json)(st_persist *p, const st_list_filter *f);
	int (*counts)(st_persist *p, st_counts *c);
	/* The ready profiles f selects (hostname, tag, since, until; its
	 * group_by and limit are not the backend's business), by id. OUT:
	 * malloc'ed array (free each hostname). */
	int (*ready_profiles)(st_persist *p, const st_agg_filter *f, st_ready_profile **out,
			      size_t *n);

	/* ---- profiles by their labels (selectors), and their summaries ----
	 * profiles_labels hands every profile q selects to cb with its tags,
	 * newest (highest id) first. profiles_rows_json answers the rows
	 * profile_list_json would list for these ids, in their order (ids no
	 * longer there left out). summary_put stores the summary of profile
	 * id as parsed in generation gen, replacing an earlier one, in one
	 * transaction; a profile parsed again or deleted meanwhile is left
	 * alone. summary_read hands cb, for each of ids that has a stored
	 * summary and each of its events, the event's totals and the values
	 * of (kind, key) - key NULL: the event's totals as the values. */
	int (*profiles_labels)(st_persist *p, const st_label_query *q, st_labels_cb cb,
			       void *ctx);
	json_t *(*profiles_rows_json)(st_persist *p, const int64_t *ids, size_t n);
	int (*summary_put)(st_persist *p, int64_t id, int64_t gen, const pe_summary *s);
	int (*summary_read)(st_persist *p, const int64_t *ids, size_t n, int kind,
			    const char *key, st_summary_cb cb, void *ctx);

	/* ---- writing one parse ----
	 * writer_begin removes whatever an earlier attempt at this profile
	 * left. Each writer_write stores the rows (engine/builder.h
	 * says what each kind holds) and the block, if any, in one short
	 * transaction: parsing never holds the store's write lock. Nothing is
	 * visible to readers before writer_finish, which stores the summary,
	 * marks the profile ready with a new parse generation, and frees w -
	 * unless the profile
	 * was deleted meanwhile: then its rows go and it stays deleted.
	 * writer_abort removes what was written and frees w. Each adds the
	 * time it waited for the lock, inserted and committed to *t;
	 * writer_finish sets t->generation to
	 * the generation it made (a backend that leaves it 0 has the model of
	 * a new parse read back at the first question instead of kept). */
	st_persist_writer *(*writer_begin)(st_persist *p, int64_t id);
	int (*writer_write)(st_persist_writer *w, const pe_row *rows, size_t n,
			    const pe_packed_block *block, st_write_times *t);
	int (*writer_finish)(st_persist_writer *w, const st_summary *s, st_write_times *t);
	void (*writer_abort)(st_persist_writer *w);

	/* ---- reading one ready profile ----
	 * read_begin opens a consistent snapshot of profile id: 0 and its
	 * parse generation, 1 when it is not ready (nothing left open), -1.
	 * read_model fills m with pe_model_add_* (strings, frames, stack
	 * nodes, event names, the build-ids of its DSOs as the parse noted
	 * them (st_profile_dsos_set)); the store sums the aggregate from the
	 * blocks (no backend keeps one). read_blocks hands every stored
	 * block that may hold samples in [from_ns, to_ns) (0 = open) to cb in
	 * file order, stopping (and returning cb's value) when cb returns
	 * non-zero. read_end closes the snapshot. */
	int (*read_begin)(st_persist *p, int64_t id, int64_t *gen, st_persist_read **rd);
	int (*read_model)(st_persist_read *rd, pe_model *m);
	int (*read_blocks)(st_persist_read *rd, uint64_t from_ns, uint64_t to_ns,
			   pe_block_cb cb, void *ctx);
	void (*read_end)(st_persist_read *rd);
	/* Hands the leaf rows of one frame (builder.h, PE_ROW_LEAF_ADDR) to cb
	 * in any order, stopping (and returning cb's value) when cb returns
	 * non-zero. 0 or -1. */
	int (*read_leaf_addrs)(st_persist_read *rd, uint32_t frame, pe_leaf_cb cb, void *ctx);

	/* ---- debuginfo index: as the st_debuginfo_* functions of store.h ---- */
	int (*debuginfo_init)(st_persist *p);
	int (*debuginfo_put)(st_persist *p, const char *build_id, const char *kind,
			     const char *path, uint64_t size, int symbols, const char *source);
	int (*debuginfo_get)(st_persist *p, const char *build_id, char **path, char **kind,
			     uint64_t *size);
	int (*debuginfo_has_symbols)(st_persist *p, const char *build_id);
	int (*debuginfo_added_since)(st_persist *p, const char *build_id, int64_t since);
	int (*debuginfo_delete)(st_persist *p, const char *build_id);
	int (*debuginfo_orphan)(st_persist *p, int64_t before, char hex[41]);
	int (*profile_dsos_set)(st_persist *p, int64_t id, size_t n,
				const char *const *build_ids, const char *const *paths,
				const uint64_t *unresolved);
	int (*profiles_unresolved_in)(st_persist *p, const char *build_id, int64_t **ids,
				      size_t *n);
	/* The build-id (hex) profile_dsos_set noted for the dso path `path` of
	 * profile id: 0 and hex, 1 = none, -1. */
	int (*profile_dso_build_id)(st_persist *p, int64_t id, const char *path, char *hex,
				    size_t hexlen);

	/* ---- retention: as st_used_bytes, st_expired, st_oldest_prunable ---- */
	int (*used_bytes)(st_persist *p, int64_t *bytes);
	int (*expired)(st_persist *p, int64_t before, int64_t *ids, size_t max, size_t *n);
	int (*oldest_prunable)(st_persist *p, int64_t *id);

	/* ---- several nodes on one store; NULL in a backend that serves one
	 * process only (store.c then does what one process needs) ----
	 * set_wakeup: fn(ctx) runs, on a thread of the backend's, when any
	 * node queued a job (or one came back to the queue).
	 * job_lost: 1 when this node's claim on job id was taken back (its
	 * lease ran out; another node may parse it now): the caller neither
	 * fails nor requeues it, and the backend forgets it. 0 while held.
	 * singleton_begin: 1 when this node may now run the work `name` (until
	 * singleton_end), 0 when another node runs it (wait: block until this
	 * one may), -1 on error. */
	void (*set_wakeup)(st_persist *p, void (*fn)(void *ctx), void *ctx);
	/* announce_debuginfo tells every node (this one too) that symbols for
	 * a build-id arrived; each calls its hook fn(ctx, build_id) */
	void (*set_debuginfo_hook)(st_persist *p, void (*fn)(void *ctx, const char *build_id),
				   void *ctx);
	int (*announce_debuginfo)(st_persist *p, const char *build_id);
	int (*job_lost)(st_persist *p, int64_t id);
	int (*singleton_begin)(st_persist *p, const char *name, int wait);
	void (*singleton_end)(st_persist *p, const char *name);

	/* ---- the operator's tools, on the store `where` names (no daemon's
	 * st_persist needed); NULL when the backend has none ---- */
	int (*backup)(const char *where, const char *dest, char *err, size_t errlen);
	int (*vacuum)(const char *where, int64_t *before, int64_t *after, char *err,
		      size_t errlen);
} st_persist_ops;

/* The backends built in. */
extern const st_persist_ops st_sqlite_ops;	/* store/sqlite/ */
extern const st_persist_ops st_pg_ops;		/* store/pg/ */

/* st_copy_to: an SQLite file into an empty PostgreSQL store (pgcopy.c). */
int pg_copy_from_sqlite(const char *from, const char *to, st_relocate_fn relocate, void *ctx,
			st_copy_stats *stats, char *err, size_t errlen);

#endif
