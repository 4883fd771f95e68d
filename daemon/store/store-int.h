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

/* A ready profile, open for reading (store-query.c): its model (from the
 * engine's cache, or loaded from the backend's snapshot and put there),
 * and the snapshot its blocks are read in (NULL once ended). */
typedef struct st_reading {
	st_store *st;
	st_persist_read *rd;
	pe_model *m;
} st_reading;

/* 0 and r filled, 1 = not ready, -1 = storage error. */
int st_reading_open(st_store *st, int64_t id, st_reading *r);
/* Opens profile id and selects what pf asks for; the snapshot is ended
 * (nothing after selecting reads stored data). 0, 1 = not ready, -1. */
int st_reading_select(st_store *st, int64_t id, const pe_filter *pf, st_reading *r,
		      pe_selection **sel);
/* Ends the snapshot (the model stays). */
void st_reading_end(st_reading *r);
/* Ends the snapshot and releases the model. */
void st_reading_close(st_reading *r);
/* pe_blocks' reader over an open st_reading (src). */
int st_reading_blocks(void *src, uint64_t from_ns, uint64_t to_ns, pe_block_cb cb, void *ctx);

#define ST_MAX_EVENT_NAME 512	/* an event's name, as a timeline keeps it */

/* A profile's timeline (pe_timeline_make; free with pe_timeline_free), its
 * event's name copied into ev. 0, 1 = not ready, -1. */
int st_timeline_make(st_store *st, int64_t id, const char *event, uint64_t bucket_ns,
		     pe_timeline *t, char *ev, size_t evlen);

/* st_profile_list_json for a filter with a selector (store-many.c). */
json_t *st_list_selected(st_store *st, const st_list_filter *f);
/* The ready profiles an aggregate with a selector covers, as the backend's
 * ready_profiles hands them (oldest first). 0 or -1 (*out freed). */
int st_pick_ready(st_store *st, const st_agg_filter *f, st_ready_profile **out, size_t *n);

/* The summary series read, made from the profile's model and stored
 * (store-many.c): after every parse, and for profiles stored before
 * summaries existed when a series first needs them. 0, 1 = not ready, -1. */
int st_summary_make(st_store *st, int64_t id);

#endif
