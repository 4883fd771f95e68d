/*
 * jobs.h - the worker pool. The job queue itself lives in the store (a
 * profile row in state 'queued' is a job), so a crash loses nothing; the
 * pool only wakes its threads and bounds how many jobs may wait.
 */
#ifndef PERFHUB_DAEMON_JOBS_H
#define PERFHUB_DAEMON_JOBS_H

#include <stdint.h>

#include "intake/spool.h"
#include "symbols/debuginfo.h"
#include "store/store.h"

typedef struct jobs jobs;

typedef struct jobs_stats {
	uint64_t parsed, failed;
	double parse_seconds;	/* sum over finished jobs */
	uint64_t parse_hist[8];	/* cumulative-free buckets, see jobs_hist_bounds */
} jobs_stats;

/* Bucket upper bounds in seconds for parse_hist (the last is +Inf). */
extern const double jobs_hist_bounds[8];

/* Starts `workers` threads parsing originals from spool `sp`. `max_bytes`
 * caps unpacked tar contents; `dbg` (may be NULL) is where symbols by
 * build-id are looked for first. */
jobs *jobs_start(st_store *st, spool *sp, unsigned workers, uint64_t max_bytes, dbg_store *dbg);
/* The spool the workers parse from (uploads go there too). */
spool *jobs_spool(jobs *j);
/* The symbol tables the workers share, and the debuginfo store (or NULL). */
pd_symcache *jobs_symcache(jobs *j);
dbg_store *jobs_debuginfo(jobs *j);
/* A job was queued: wake a worker. */
void jobs_notify(jobs *j);
void jobs_get_stats(jobs *j, jobs_stats *out);
/* Stops taking jobs, cancels running ones (they go back to queued), joins. */
void jobs_stop(jobs *j);

/* Called by a worker after each profile it made ready (e.g. retention).
 * Set before any job is queued. */
void jobs_on_done(jobs *j, void (*fn)(void *ctx), void *ctx);
/* Shutdown, first step: take no new job and wait up to `grace_s` seconds for
 * the running ones to finish. Returns how many still run; jobs_stop then
 * requeues them. */
int jobs_drain(jobs *j, unsigned grace_s);

#endif
