/* retention.c - the background thread that prunes old profiles. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "jobs/retention.h"
#include "intake/spool.h"

#define RET_BATCH 64	/* expired ids fetched per query */

struct retention {
	st_store *st;
	spool *sp;
	dbg_store *dbg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	unsigned retain_days, interval_s;
	uint64_t max_db_size;
	int kicked, stop;
};

/* OUT: freed, the spool bytes the profile's files took. */
static int delete_one(retention *r, int64_t id, const char *why, uint64_t *freed)
{
	char *ref = NULL;
	int rc = st_profile_delete(r->st, id, &ref);

	*freed = 0;
	if (rc == 0) {
		if (ref && *ref) {
			*freed = sp_spooled_usage(r->sp, ref);
			sp_remove(r->sp, ref);
		}
		log_info("msg=\"retention: profile deleted\" id=%lld reason=%s", (long long)id, why);
	}
	free(ref);
	return rc;
}

/* The oldest debuginfo no profile names, if added before the grace. OUT:
 * bytes freed. 0 deleted, 1 none. */
static int delete_orphan(retention *r, uint64_t *freed)
{
	char hex[41];
	struct timespec now;

	*freed = 0;
	if (!r->dbg)
		return 1;
	clock_gettime(CLOCK_REALTIME, &now);
	if (st_debuginfo_orphan(r->st, ((int64_t)now.tv_sec - RET_ORPHAN_GRACE_S) * 1000,
				hex) != 0)
		return 1;
	if (dbg_delete(r->dbg, hex, freed) < 0)
		return 1;
	log_info("msg=\"retention: debuginfo deleted\" build_id=%s reason=size", hex);
	return 0;
}

/* One pass with the limits of the moment. Returns the profiles deleted. */
static unsigned prune(retention *r, unsigned days, uint64_t max_size)
{
	unsigned deleted = 0;

	if (!days && !max_size)
		return 0;
	if (days) {
		int64_t before = (int64_t)time(NULL) - (int64_t)days * 86400;
		int64_t ids[RET_BATCH];
		size_t n, i;

		do {
			if (st_expired(r->st, before, ids, RET_BATCH, &n) < 0) {
				log_warn("msg=\"retention: query failed\"");
				break;
			}
			for (i = 0; i < n; i++) {
				uint64_t freed;

				if (delete_one(r, ids[i], "age", &freed) == 0)
					deleted++;
			}
		} while (n == RET_BATCH && deleted);
	}
	if (max_size) {
		/* the spool is measured once a pass, then less what goes: what
		 * is on this node's disk (a bucket's objects are not counted,
		 * only its local directory) */
		uint64_t on_disk = sp_usage(r->sp), freed;
		int64_t db, id;

		while (st_used_bytes(r->st, &db) == 0 && (uint64_t)db + on_disk > max_size) {
			log_debug("msg=\"retention: size\" db=%lld spool=%llu max=%llu", (long long)db,
				  (unsigned long long)on_disk, (unsigned long long)max_size);
			if (delete_orphan(r, &freed) != 0) {
				if (st_oldest_prunable(r->st, &id) != 0 ||
				    delete_one(r, id, "size", &freed) != 0) {
					log_warn("msg=\"retention: over max-db-size with nothing left to"
						 " prune\" db=%lld spool=%llu max=%llu", (long long)db,
						 (unsigned long long)on_disk, (unsigned long long)max_size);
					break;
				}
				deleted++;
			}
			on_disk -= freed < on_disk ? freed : on_disk;
		}
	}
	return deleted;
}

static void *run(void *arg)
{
	retention *r = arg;

	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		unsigned days = r->retain_days, n;
		uint64_t max_size = r->max_db_size;
		struct timespec until;

		r->kicked = 0;
		pthread_mutex_unlock(&r->lock);
		n = 0;
		/* one node at a time on a shared store; SQLite: always this one */
		if ((days || max_size) && st_singleton_begin(r->st, "retention", 0) == 1) {
			n = prune(r, days, max_size);
			st_singleton_end(r->st, "retention");
		}
		if (n)
			log_info("msg=\"retention pass\" deleted=%u retain_days=%u max_db_size=%llu",
				 n, days, (unsigned long long)max_size);
		pthread_mutex_lock(&r->lock);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += r->interval_s;
		while (!r->stop && !r->kicked)
			if (pthread_cond_timedwait(&r->wake, &r->lock, &until) != 0)
				break;
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

retention *ret_start(st_store *st, spool *sp, dbg_store *dbg, unsigned retain_days,
		     uint64_t max_db_size, unsigned interval_s)
{
	retention *r = calloc(1, sizeof(*r));

	if (!r) {
		log_warn("msg=\"retention: out of memory\"");
		free(r);
		return NULL;
	}
	r->st = st;
	r->sp = sp;
	r->dbg = dbg;
	r->retain_days = retain_days;
	r->max_db_size = max_db_size;
	r->interval_s = interval_s ? interval_s : 1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->wake, NULL);
	if (pthread_create(&r->thread, NULL, run, r) != 0) {
		log_warn("msg=\"retention: cannot start its thread\"");
		pthread_mutex_destroy(&r->lock);
		pthread_cond_destroy(&r->wake);
		free(r);
		return NULL;
	}
	return r;
}

void ret_set_policy(retention *r, unsigned retain_days, uint64_t max_db_size,
		    unsigned interval_s)
{
	pthread_mutex_lock(&r->lock);
	r->retain_days = retain_days;
	r->max_db_size = max_db_size;
	r->interval_s = interval_s ? interval_s : 1;
	r->kicked = 1;
	pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->lock);
}

void ret_kick(void *arg)
{
	retention *r = arg;

	pthread_mutex_lock(&r->lock);
	r->kicked = 1;
	pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->lock);
}

void ret_stop(retention *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = 1;
	pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->wake);
	free(r);
}
