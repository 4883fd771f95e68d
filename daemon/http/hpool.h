/*
 * hpool.h - the threads that run request handlers which may block (SQLite
 * queries, fsync, flame graphs and diffs, debuginfo imports), so that
 * libmicrohttpd's few event-loop threads never wait on them.
 *
 * Work comes in two classes. At most `max_heavy` heavy jobs (queries whose
 * time and memory grow with a profile) run at once; up to
 * HPOOL_HEAVY_WAITING times as many more wait for a turn, and beyond that
 * hpool_reserve() says no (the caller answers 503). Light work is always
 * admitted and goes first: each job belongs to a connection that waits for
 * it, so the connection limit bounds that queue. There are
 * max_heavy + HPOOL_LIGHT_THREADS threads, so heavy jobs never take every
 * thread from light ones.
 *
 * Thread safety: every call may come from any thread.
 */
#ifndef PERFHUB_DAEMON_HPOOL_H
#define PERFHUB_DAEMON_HPOOL_H

#include <stdint.h>

#define HPOOL_LIGHT_THREADS 4
#define HPOOL_HEAVY_WAITING 4

typedef struct hpool hpool;

/* A unit of work, kept by the caller (no allocation per job). */
typedef struct hpool_job {
	void (*run)(struct hpool_job *job);
	int heavy;
	struct hpool_job *next;
} hpool_job;

/* NULL when threads cannot start. */
hpool *hpool_new(unsigned max_heavy);
/* Runs what is queued, then stops the threads and frees p. */
void hpool_free(hpool *p);

/* Admission: 0 and a place held for one job of that class, or -1 when
 * the heavy jobs running and waiting are at their bound (only heavy work
 * is refused). */
int hpool_reserve(hpool *p, int heavy);
/* Queues a job whose place was reserved; job->heavy must match. */
void hpool_submit(hpool *p, hpool_job *job);

/* OUT: heavy jobs refused so far, heavy jobs now waiting or running. */
void hpool_stats(hpool *p, uint64_t *refused, unsigned *heavy);

#endif
