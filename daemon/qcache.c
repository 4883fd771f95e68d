/* qcache.c - a byte-bounded LRU of query answers (a hash table over a list). */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qcache.h"

#define QC_BUCKETS 4096		/* hash chains (a power of 2) */

typedef struct qc_entry {
	struct qc_entry *prev, *next;	/* LRU list, most recent first */
	struct qc_entry *chain;		/* hash chain */
	uint64_t hash;
	char *key;
	char *body;
	size_t len, bytes;
} qc_entry;

struct qcache {
	pthread_mutex_t lock;
	size_t max, used;
	qc_entry *head, *tail;
	qc_entry *buckets[QC_BUCKETS];
};

static uint64_t qc_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

qcache *qc_new(size_t max_bytes)
{
	qcache *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	pthread_mutex_init(&q->lock, NULL);
	q->max = max_bytes;
	return q;
}

static void entry_free(qc_entry *e)
{
	free(e->key);
	free(e->body);
	free(e);
}

void qc_free(qcache *q)
{
	qc_entry *e, *n;

	if (!q)
		return;
	for (e = q->head; e; e = n) {
		n = e->next;
		entry_free(e);
	}
	pthread_mutex_destroy(&q->lock);
	free(q);
}

static void list_unlink(qcache *q, qc_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		q->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		q->tail = e->prev;
	e->prev = e->next = NULL;
}

static void list_push(qcache *q, qc_entry *e)
{
	e->prev = NULL;
	e->next = q->head;
	if (q->head)
		q->head->prev = e;
	q->head = e;
	if (!q->tail)
		q->tail = e;
}

static qc_entry *find(qcache *q, const char *key, uint64_t h)
{
	qc_entry *e;

	for (e = q->buckets[h & (QC_BUCKETS - 1)]; e; e = e->chain)
		if (e->hash == h && !strcmp(e->key, key))
			return e;
	return NULL;
}

/* Unlinks e from its hash chain and the list, and frees it. */
static void drop(qcache *q, qc_entry *e)
{
	qc_entry **pp = &q->buckets[e->hash & (QC_BUCKETS - 1)];

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
	list_unlink(q, e);
	q->used -= e->bytes;
	entry_free(e);
}

char *qc_get(qcache *q, const char *key, size_t *len)
{
	uint64_t h = qc_hash(key);
	qc_entry *e;
	char *copy = NULL;

	if (!q || !q->max)
		return NULL;
	pthread_mutex_lock(&q->lock);
	e = find(q, key, h);
	if (e) {
		list_unlink(q, e);
		list_push(q, e);
		copy = malloc(e->len + 1);
		if (copy) {
			memcpy(copy, e->body, e->len);
			copy[e->len] = 0;
			*len = e->len;
		}
	}
	pthread_mutex_unlock(&q->lock);
	return copy;
}

void qc_put(qcache *q, const char *key, const char *body, size_t len)
{
	uint64_t h = qc_hash(key);
	qc_entry *e;

	if (!q || !q->max || len > q->max / 4)
		return;
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->hash = h;
	e->key = strdup(key);
	e->body = malloc(len ? len : 1);
	e->len = len;
	e->bytes = len + strlen(key) + sizeof(*e) + 64;
	if (!e->key || !e->body) {
		entry_free(e);
		return;
	}
	memcpy(e->body, body, len);
	pthread_mutex_lock(&q->lock);
	{
		qc_entry *old = find(q, key, h);
		if (old)
			drop(q, old);
	}
	e->chain = q->buckets[h & (QC_BUCKETS - 1)];
	q->buckets[h & (QC_BUCKETS - 1)] = e;
	list_push(q, e);
	q->used += e->bytes;
	while (q->used > q->max && q->tail && q->tail != e)
		drop(q, q->tail);
	pthread_mutex_unlock(&q->lock);
}
