/*
 * store-int.h - the facade's state, shared by store.c (the store, its
 * profiles and jobs), store-query.c (answers), store-many.c (answers about
 * many profiles) and store-writer.c (writing a parse). Internal to store/.
 */
#ifndef PERFHUB_STORE_INT_H
#define PERFHUB_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "engine/cache.h"
#include "store/persist.h"

#define ST_CACHE_BYTES ((size_t)512 << 20)	/* models of profiles kept in memory */

struct st_store {
	const st_persist_ops *ops;	/* the backend, chosen once by st_open */
	st_persist *p;
	pe_cache *cache;
	/* st_summary_backfill: one at a time, newest first from below_id (0:
	 * the top), done once a pass found nothing left */
	atomic_int backfilling, backfill_done;
	atomic_llong backfill_below, backfill_made;
	atomic_ullong models_memory, models_loaded;	/* st_counts */
	/* parses past their last transaction whose model is not in the cache
	 * yet (store-writer.c): a reader finding such a profile ready waits
	 * for that model rather than reading the parse back */
	pthread_mutex_t finish_lock;
	pthread_cond_t finished;
	st_writer *finishing;
	/* st_set_prepare_hook's (make NULL: none); a finishing parse holds
	 * the lock for reading from make() to keep() or drop() */
	pthread_rwlock_t hook_lock;
	st_prepare_hook hook;
};

/* A finishing parse's model, for the prepare hook (store-writer.c). */
struct st_finishing {
	pe_model *m;
};

/* 1 while a parse of profile id is finishing (store-writer.c), else 0. */
int stw_finishing(st_store *st, int64_t id);
/* Returns once no parse of profile id is finishing (its model is in the
 * cache unless the finish failed), or after ST_FINISH_WAIT_S. */
#define ST_FINISH_WAIT_S 60
void stw_await_finish(st_store *st, int64_t id);

/* A ready profile, open for reading (store-query.c): its model, and the
 * backend's snapshot its blocks are read in (NULL once ended). */
typedef struct stq_reading {
	st_store *st;
	st_persist_read *rd;
	pe_model *m;
} stq_reading;

/* 0 and r filled (the model from the cache, else loaded in the snapshot),
 * 1 = not ready, -1 = storage error. */
int stq_open(st_store *st, int64_t id, stq_reading *r);
/* Ends the snapshot (the model stays). */
void stq_end_snapshot(stq_reading *r);
/* Ends the snapshot and releases the model. */
void stq_close(stq_reading *r);
/* pe_blocks.read over r's snapshot (src = r). */
int stq_read_blocks(void *src, uint64_t from_ns, uint64_t to_ns, pe_block_cb cb, void *ctx);
/* Opens profile id and selects what pf asks for; the snapshot is ended
 * (nothing after selecting reads stored data). 0, 1 = not ready, -1. */
int stq_open_selected(st_store *st, int64_t id, const pe_filter *pf, stq_reading *r,
		      pe_selection **sel);

/* Profile r's rows under f (measure, event and other filters as
 * given; pid and tid labels) into b, and its off-CPU rows when it has any.
 * Reads blocks when f has a time range; does not end the snapshot. As
 * pe_pprof_b_add. */
int stq_pprof_add(stq_reading *r, const pe_filter *f, pe_pprof_b *b);

/* st_profile_list_json for a filter with a selector (store-many.c). */
json_t *st_list_selected(st_store *st, const st_list_filter *f);
/* The ready profiles an aggregate with a selector covers, as the backend's
 * ready_profiles hands them (oldest first). 0 or -1 (*out freed). */
int st_pick_ready(st_store *st, const st_agg_filter *f, st_ready_profile **out, size_t *n);

#endif
