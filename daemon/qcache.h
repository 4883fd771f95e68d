/*
 * qcache.h - answers of read-only queries kept in memory, bounded by bytes
 * and dropped least recently used first. Keys name everything an answer
 * depends on (a stored profile's generation included), so an entry never
 * goes stale: a new parse makes new keys and the old ones age out.
 *
 * Thread safety: all calls may come from any thread.
 */
#ifndef PERFHUB_DAEMON_QCACHE_H
#define PERFHUB_DAEMON_QCACHE_H

#include <stddef.h>

typedef struct qcache qcache;

/* max_bytes 0: nothing is kept. */
qcache *qc_new(size_t max_bytes);
void qc_free(qcache *q);
/* A copy of the answer under `key` (caller frees), or NULL. */
char *qc_get(qcache *q, const char *key, size_t *len);
/* Keeps a copy of body under key (answers larger than a quarter of the
 * bound are not kept). */
void qc_put(qcache *q, const char *key, const char *body, size_t len);

#endif
