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

#endif
