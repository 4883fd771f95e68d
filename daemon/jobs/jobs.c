/* jobs.c - worker threads that take queued profiles from the store and ingest them. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dso.h"
#include "intake/spool.h"
#include "jobs/ingest.h"
#include "jobs/jobs.h"
#include "log.h"

#define JOBS_IDLE_POLL_S 2	/* also look at the store now and then */

const double jobs_hist_bounds[8] = { 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 1e300 };

struct jobs {
	st_store *st;
	spool *sp;
	pd_symcache *symcache;	/* symbol tables shared by the workers */
	dbg_store *dbg;		/* uploaded debuginfo, NULL = none */
	uint64_t max_bytes;
	unsigned nr;
	pthread_t *threads;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	unsigned pending;	/* notifications not yet consumed */
	atomic_int stop;
	jobs_stats stats;
	atomic_int draining;	/* SIGTERM: take no new job (jobs_drain) */
	unsigned busy;		/* jobs running, under lock */
	void (*on_done)(void *);	/* jobs_on_done */
	void *on_done_ctx;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void run_one(jobs *j, int64_t id, const char *path, const char *kind)
{
	ing_result res;
	int64_t t0 = now_ms(), ms;
	double secs;
	int b;
	char q[LOG_Q_MAX];

	log_info("msg=\"parse start\" id=%lld path=\"%s\"", (long long)id, log_q(q, sizeof(q), path));
	ingest_profile(j->st, j->sp, j->symcache, j->dbg, id, path, kind,
		       st_profile_local(j->st, id) == 1, j->max_bytes, &j->stop, &res);
	ms = now_ms() - t0;
	if (!res.ok && st_job_lost(j->st, id)) {
		/* another node may hold it now: neither failed nor requeued here */
		log_warn("msg=\"parse abandoned\" id=%lld reason=\"this node's lease on the job"
			 " ran out\" parse_ms=%lld", (long long)id, (long long)ms);
		return;
	}
	if (res.cancelled) {
		st_profile_requeue(j->st, id);
		log_info("msg=\"parse requeued\" id=%lld reason=shutdown", (long long)id);
		return;
	}
	if (!res.ok) {
		sp_scrub_paths(res.msg, sizeof(res.msg), j->sp);
		st_profile_fail(j->st, id, res.msg, res.offset, ms);
		/* what a recording that cannot be read decoded is not kept: a
		 * small compressed body could otherwise leave a large file */
		if (res.bad_input)
			sp_remove(j->sp, path);
		log_warn("msg=\"parse failed\" id=%lld offset=%lld error=\"%s\" parse_ms=%lld",
			 (long long)id, (long long)res.offset, log_q(q, sizeof(q), res.msg),
			 (long long)ms);
	} else {
		log_info("msg=\"parse done\" id=%lld samples=%llu records=%llu parse_ms=%lld",
			 (long long)id, (unsigned long long)res.samples,
			 (unsigned long long)res.records, (long long)ms);
		/* where the time went (the per-record phases are estimates) */
		log_info("msg=\"parse phases\" id=%lld open_ms=%.0f read_ms=%.0f symbolize_ms=%.0f"
			 " intern_ms=%.0f sample_ms=%.0f other_ms=%.0f finish_ms=%.0f"
			 " compress_ms=%.0f queue_ms=%.0f lock_ms=%.0f insert_ms=%.0f commit_ms=%.0f"
			 " prepare_ms=%.0f"
			 " blocks=%llu commits=%llu chain_hits=%llu tail_hits=%llu",
			 (long long)id, res.open_ms, res.read_ms, res.symbolize_ms, res.intern_ms,
			 res.sample_ms, res.other_ms, res.finish_ms, (double)res.write.compress_ns / 1e6,
			 (double)res.write.queue_ns / 1e6,
			 (double)res.write.lock_ns / 1e6, (double)res.write.insert_ns / 1e6,
			 (double)res.write.commit_ns / 1e6,
			 (double)res.write.prepare_ns / 1e6, (unsigned long long)res.write.blocks,
			 (unsigned long long)res.write.commits, (unsigned long long)res.chain_hits,
			 (unsigned long long)res.tail_hits);
	}
	secs = (double)ms / 1000.0;
	for (b = 0; b < 7 && secs > jobs_hist_bounds[b]; b++)
		;
	if (res.ok && j->on_done)
		j->on_done(j->on_done_ctx);
	pthread_mutex_lock(&j->lock);
	if (res.ok)
		j->stats.parsed++;
	else
		j->stats.failed++;
	j->stats.parse_seconds += secs;
	j->stats.parse_hist[b]++;
	pthread_mutex_unlock(&j->lock);
	/* the summary series read, once the parse is wholly written, from the
	 * model the next question would load anyway (it stays in the cache);
	 * a series or an idle worker makes it later if this fails */
	if (res.ok && st_summary_make(j->st, id) < 0)
		log_warn("msg=\"summary not stored\" id=%lld", (long long)id);
}

static void *worker(void *arg)
{
	jobs *j = arg;

	while (!atomic_load(&j->stop)) {
		int64_t id;
		char *path = NULL, *kind = NULL;
		int rc;

		pthread_mutex_lock(&j->lock);
		rc = atomic_load(&j->draining) ? 1 : 0;
		if (!rc)
			j->busy++;
		pthread_mutex_unlock(&j->lock);
		if (!rc) {
			rc = st_profile_claim_next(j->st, &id, &path, &kind);
			if (rc == 0)
				run_one(j, id, path, kind);
			free(path);
			free(kind);
			pthread_mutex_lock(&j->lock);
			j->busy--;
			pthread_cond_broadcast(&j->wake);
			pthread_mutex_unlock(&j->lock);
			if (rc == 0)
				continue;
		}
		/* nothing queued: the summary of a profile stored before there
		 * were any (series read them), one at a time */
		if (rc == 1 && !atomic_load(&j->draining) && !atomic_load(&j->stop) &&
		    st_summary_backfill(j->st) == 0)
			continue;
		/* nothing queued (or the store is busy): sleep until notified */
		pthread_mutex_lock(&j->lock);
		if (!j->pending && !atomic_load(&j->stop)) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += JOBS_IDLE_POLL_S;
			pthread_cond_timedwait(&j->wake, &j->lock, &ts);
		}
		if (j->pending)
			j->pending--;
		pthread_mutex_unlock(&j->lock);
	}
	return NULL;
}

/* A shared store's wake-up: another node queued a job. */
static void woken(void *ctx)
{
	jobs_notify(ctx);
}

/* A shared store's news: symbols for a build-id arrived on some node; the
 * tables loaded here without them go. */
static void symbols_arrived(void *ctx, const char *hex)
{
	jobs *j = ctx;
	uint8_t bid[DBG_MAX_BUILD_ID];
	char norm[DBG_HEX_LEN];
	size_t n;

	if (dbg_parse_build_id(hex, norm, bid, &n) == 0)
		pd_dso_cache_forget(j->symcache, bid, n);
}

jobs *jobs_start(st_store *st, spool *sp, unsigned workers, uint64_t max_bytes, dbg_store *dbg)
{
	jobs *j = calloc(1, sizeof(*j));
	unsigned i;

	if (!j)
		return NULL;
	j->st = st;
	j->sp = sp;
	j->max_bytes = max_bytes;
	j->symcache = pd_symcache_new(0);
	j->dbg = dbg;
	if (j->symcache)
		dbg_attach(dbg, j->symcache);
	j->threads = calloc(workers, sizeof(*j->threads));
	pthread_mutex_init(&j->lock, NULL);
	pthread_cond_init(&j->wake, NULL);
	atomic_init(&j->stop, 0);
	if (!j->threads || !j->symcache) {
		pd_symcache_free(j->symcache);
		free(j->threads);
		free(j);
		return NULL;
	}
	for (i = 0; i < workers; i++) {
		if (pthread_create(&j->threads[i], NULL, worker, j) == 0)
			pthread_setname_np(j->threads[i], "ph-parse");	/* for top -H */
		else
			break;
		j->nr++;
	}
	if (!j->nr) {
		pd_symcache_free(j->symcache);
		free(j->threads);
		free(j);
		return NULL;
	}
	st_set_wakeup(st, woken, j);
	st_set_debuginfo_hook(st, symbols_arrived, j);
	return j;
}

void jobs_notify(jobs *j)
{
	pthread_mutex_lock(&j->lock);
	if (j->pending < j->nr)
		j->pending++;
	pthread_cond_signal(&j->wake);
	pthread_mutex_unlock(&j->lock);
}

pd_symcache *jobs_symcache(jobs *j)
{
	return j->symcache;
}

dbg_store *jobs_debuginfo(jobs *j)
{
	return j->dbg;
}

spool *jobs_spool(jobs *j)
{
	return j->sp;
}

void jobs_get_stats(jobs *j, jobs_stats *out)
{
	pthread_mutex_lock(&j->lock);
	*out = j->stats;
	pthread_mutex_unlock(&j->lock);
}

void jobs_stop(jobs *j)
{
	unsigned i;

	if (!j)
		return;
	st_set_wakeup(j->st, NULL, NULL);
	st_set_debuginfo_hook(j->st, NULL, NULL);
	atomic_store(&j->stop, 1);
	pthread_mutex_lock(&j->lock);
	pthread_cond_broadcast(&j->wake);
	pthread_mutex_unlock(&j->lock);
	for (i = 0; i < j->nr; i++)
		pthread_join(j->threads[i], NULL);
	pthread_mutex_destroy(&j->lock);
	pthread_cond_destroy(&j->wake);
	pd_symcache_free(j->symcache);
	free(j->threads);
	free(j);
}

void jobs_on_done(jobs *j, void (*fn)(void *ctx), void *ctx)
{
	j->on_done = fn;
	j->on_done_ctx = ctx;
}

int jobs_drain(jobs *j, unsigned grace_s)
{
	struct timespec until;
	unsigned left;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += grace_s;
	pthread_mutex_lock(&j->lock);
	atomic_store(&j->draining, 1);
	pthread_cond_broadcast(&j->wake);
	while (j->busy)
		if (pthread_cond_timedwait(&j->wake, &j->lock, &until) != 0)
			break;
	left = j->busy;
	pthread_mutex_unlock(&j->lock);
	return (int)left;
}
