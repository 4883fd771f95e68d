/*
 * qcache.h - answers of read-only queries kept in memory, bounded by bytes
 * and dropped least recently used first. Keys name everything an answer
 * depends on (a stored profile's generation included), so an entry never
 * goes stale: a new parse makes new keys and the old ones age out.
 *
 * An answer is the final response body, immutable and reference counted:
 * every request serving it shares the same bytes (no copy per request),
 * and an answer dropped from the cache lives until its last reader lets
 * go. Its gzip and zstd forms are made once, by the first request that asks
 * for each.
 *
 * Thread safety: all calls may come from any thread.
 */
#ifndef PERFHUB_DAEMON_QCACHE_H
#define PERFHUB_DAEMON_QCACHE_H

#include <stddef.h>

typedef struct qcache qcache;
typedef struct qc_answer qc_answer;

/* Bodies shorter than this are not worth compressing. */
#define QC_GZIP_MIN 1024

/* Takes ownership of body (malloc'ed; len bytes). NULL out of memory (body
 * is freed then). The caller holds the one reference. */
qc_answer *qc_answer_new(char *body, size_t len);
/* One more reference (returns a). */
qc_answer *qc_answer_ref(qc_answer *a);
/* Drops a reference; the last one frees. NULL is fine. */
void qc_answer_release(qc_answer *a);
const char *qc_answer_body(const qc_answer *a, size_t *len);
/* The body as a gzip stream (RFC 1952), compressed on the first call; NULL
 * when the body is too short to gain or compression failed. */
const char *qc_answer_gzip(qc_answer *a, size_t *len);

/* The body as one zstd frame (RFC 9659 content coding: window <= 8 MB),
 * made on the first call; NULL as for qc_answer_gzip. zstd costs a fraction
 * of gzip's time for a smaller body. */
const char *qc_answer_zstd(qc_answer *a, size_t *len);

/* max_bytes 0: nothing is kept. */
qcache *qc_new(size_t max_bytes);
void qc_free(qcache *q);
/* The answer under key with a reference for the caller, or NULL. */
qc_answer *qc_get(qcache *q, const char *key);
/* Like qc_get, but when another request has claimed the key (it is
 * computing that answer) waits up to wait_s seconds for its answer rather
 * than computing it again. NULL and *claimed = 1: the caller now holds the
 * claim, computes, and ends it with qc_put() or qc_unclaim(). NULL and
 * *claimed = 0: compute without a claim (nothing kept, or waited long
 * enough). */
qc_answer *qc_get_or_claim(qcache *q, const char *key, unsigned wait_s, int *claimed);
/* Ends the caller's claim on key without an answer (a no-op without one). */
void qc_unclaim(qcache *q, const char *key);
/* Keeps a reference to a under key (answers larger than a quarter of the
 * bound are not kept) and ends any claim on key. The caller keeps its own
 * reference. 1 kept, 0 not. */
int qc_put(qcache *q, const char *key, qc_answer *a);
/* 1 when an answer of len bytes would be kept (qc_put), 0 when not. */
int qc_would_keep(const qcache *q, size_t len);

#endif
