/*
 * retention.h - deletes old profiles in the background: those uploaded more
 * than --retain-days ago, and the oldest while the data exceed
 * --max-db-size (never the newest upload). Rows go through
 * st_profile_delete, then the spooled original is removed. A pass runs at
 * start, every --retention-interval seconds and after each ingest; queued
 * and parsing profiles are never touched. On a store shared by several
 * nodes a pass runs on one node at a time (st_singleton_begin); the others
 * skip theirs.
 */
#ifndef PERFHUB_DAEMON_RETENTION_H
#define PERFHUB_DAEMON_RETENTION_H

#include <stdint.h>

#include "intake/spool.h"
#include "store/store.h"

typedef struct retention retention;

/* Starts the thread; NULL on failure (logged). */
retention *ret_start(st_store *st, spool *sp, unsigned retain_days, uint64_t max_db_size,
		     unsigned interval_s);
/* New limits (SIGHUP); a pass follows at once. */
void ret_set_policy(retention *r, unsigned retain_days, uint64_t max_db_size,
		    unsigned interval_s);
/* Asks for a pass soon (after an ingest). Safe from any thread. */
void ret_kick(void *r);
void ret_stop(retention *r);

#endif
