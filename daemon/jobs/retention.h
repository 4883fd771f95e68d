/*
 * retention.h - deletes old profiles in the background: those uploaded more
 * than --retain-days ago, and, while the data exceed --max-db-size, first
 * debuginfo no profile names (added more than RET_ORPHAN_GRACE_S ago, so an
 * upload's symbols that precede its recording stay), then the oldest
 * profiles (never the newest upload). The data are the database, the spool
 * (originals, unpacked directories, uploads under way) and the debuginfo
 * files, as far as they are on this node's disk (a bucket's objects are
 * not: only its local directory counts). Rows go through
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
#include "symbols/debuginfo.h"

#define RET_ORPHAN_GRACE_S 3600

typedef struct retention retention;

/* Starts the thread; NULL on failure (logged). `dbg` may be NULL. */
retention *ret_start(st_store *st, spool *sp, dbg_store *dbg, unsigned retain_days,
		     uint64_t max_db_size, unsigned interval_s);
/* New limits (SIGHUP); a pass follows at once. */
void ret_set_policy(retention *r, unsigned retain_days, uint64_t max_db_size,
		    unsigned interval_s);
/* Asks for a pass soon (after an ingest). Safe from any thread. */
void ret_kick(void *r);
void ret_stop(retention *r);

#endif
