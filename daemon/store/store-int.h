/*
 * store-int.h - the facade's state, shared by store.c (the store, its
 * profiles and jobs), store-query.c (answers) and store-writer.c (writing
 * a parse). Internal to store/.
 */
#ifndef PERFHUB_STORE_INT_H
#define PERFHUB_STORE_INT_H

#include "engine/cache.h"
#include "store/persist.h"

#define ST_CACHE_BYTES ((size_t)512 << 20)	/* models of profiles kept in memory */

struct st_store {
	const st_persist_ops *ops;	/* the backend, chosen once by st_open */
	st_persist *p;
	pe_cache *cache;
};

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

#endif
