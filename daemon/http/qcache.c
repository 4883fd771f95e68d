/* qcache.c - a byte-bounded LRU of query answers (a hash table over a list)
 * holding shared, reference-counted response bodies. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zlib.h>
#include <zstd.h>

#include "http/qcache.h"

#define QC_BUCKETS 4096		/* hash chains (a power of 2) */
/* zlib level of the gzip form: level 1 keeps a 40 MB flame graph's first
 * compressed answer near a quarter of a second; JSON still shrinks ~8x */
#define QC_GZIP_LEVEL 1
/* zstd level and window of the zstd form: a 2^20 window stays well within
 * the 8 MB that HTTP's zstd content coding lets a decoder demand (RFC 9659) */
#define QC_ZSTD_LEVEL 1
#define QC_ZSTD_WINDOW_LOG 20

struct qc_answer {
	atomic_uint refs;
	char *body;
	size_t len;
	pthread_mutex_t gz_lock;	/* held while a compressed form is made */
	int gz_done, zst_done;		/* tried (the form may still be NULL) */
	char *gz, *zst;
	size_t gz_len, zst_len;
};

typedef struct qc_entry {
	struct qc_entry *prev, *next;	/* LRU list, most recent first */
	struct qc_entry *chain;		/* hash chain */
	uint64_t hash;
	char *key;
	qc_answer *ans;
	size_t bytes;
} qc_entry;

qc_answer *qc_answer_new(char *body, size_t len)
{
	qc_answer *a = calloc(1, sizeof(*a));

	if (!a) {
		free(body);
		return NULL;
	}
	atomic_init(&a->refs, 1);
	pthread_mutex_init(&a->gz_lock, NULL);
	a->body = body;
	a->len = len;
	return a;
}

qc_answer *qc_answer_ref(qc_answer *a)
{
	atomic_fetch_add(&a->refs, 1);
	return a;
}

void qc_answer_release(qc_answer *a)
{
	if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&a->gz_lock);
	free(a->body);
	free(a->gz);
	free(a->zst);
	free(a);
}

const char *qc_answer_body(const qc_answer *a, size_t *len)
{
	*len = a->len;
	return a->body ? a->body : "";
}

/* gzip (windowBits 16 + 15) of the body in one deflate() call. */
static void make_gzip(qc_answer *a)
{
	z_stream z;
	uLong bound;
	char *out;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, QC_GZIP_LEVEL, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return;
	bound = deflateBound(&z, (uLong)a->len) + 32;
	out = malloc(bound);
	if (!out) {
		deflateEnd(&z);
		return;
	}
	z.next_in = (Bytef *)a->body;
	z.avail_in = (uInt)a->len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)bound;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END || z.total_out >= a->len) {
		deflateEnd(&z);
		free(out);
		return;
	}
	a->gz_len = z.total_out;
	deflateEnd(&z);
	a->gz = realloc(out, a->gz_len);
	if (!a->gz)
		a->gz = out;
}

const char *qc_answer_gzip(qc_answer *a, size_t *len)
{
	const char *gz;

	/* one deflate() call takes uInt sizes */
	if (a->len < QC_GZIP_MIN || a->len > (size_t)UINT32_MAX / 2)
		return NULL;
	pthread_mutex_lock(&a->gz_lock);
	if (!a->gz_done) {
		make_gzip(a);
		a->gz_done = 1;
	}
	gz = a->gz;
	*len = a->gz_len;
	pthread_mutex_unlock(&a->gz_lock);
	return gz;
}

/* A key some request is computing now (qc_get_or_claim). */
typedef struct qc_claim {
	struct qc_claim *next;
	uint64_t hash;
	char *key;
} qc_claim;

struct qcache {
	pthread_mutex_t lock;
	pthread_cond_t claims_done;	/* a claim went away */
	qc_claim *claims;
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
	pthread_cond_init(&q->claims_done, NULL);
	q->max = max_bytes;
	return q;
}

static void entry_free(qc_entry *e)
{
	free(e->key);
	qc_answer_release(e->ans);
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
	while (q->claims) {
		qc_claim *c = q->claims;
		q->claims = c->next;
		free(c->key);
		free(c);
	}
	pthread_cond_destroy(&q->claims_done);
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

/* Unlinks e from its hash chain and the list (the caller frees it). */
static void unlink_entry(qcache *q, qc_entry *e)
{
	qc_entry **pp = &q->buckets[e->hash & (QC_BUCKETS - 1)];

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
	list_unlink(q, e);
	q->used -= e->bytes;
}

/* Under the lock: the answer with a new reference, or NULL. */
static qc_answer *lookup(qcache *q, const char *key, uint64_t h)
{
	qc_entry *e = find(q, key, h);

	if (!e)
		return NULL;
	list_unlink(q, e);
	list_push(q, e);
	return qc_answer_ref(e->ans);
}

qc_answer *qc_get(qcache *q, const char *key)
{
	uint64_t h = qc_hash(key);
	qc_answer *a;

	if (!q || !q->max)
		return NULL;
	pthread_mutex_lock(&q->lock);
	a = lookup(q, key, h);
	pthread_mutex_unlock(&q->lock);
	return a;
}

static qc_claim **claim_find(qcache *q, const char *key, uint64_t h)
{
	qc_claim **pp;

	for (pp = &q->claims; *pp; pp = &(*pp)->next)
		if ((*pp)->hash == h && !strcmp((*pp)->key, key))
			return pp;
	return NULL;
}

/* Under the lock: drops the claim on key, if any, and wakes the waiters. */
static void claim_drop(qcache *q, const char *key, uint64_t h)
{
	qc_claim **pp = claim_find(q, key, h), *c;

	if (!pp)
		return;
	c = *pp;
	*pp = c->next;
	free(c->key);
	free(c);
	pthread_cond_broadcast(&q->claims_done);
}

qc_answer *qc_get_or_claim(qcache *q, const char *key, unsigned wait_s, int *claimed)
{
	uint64_t h = qc_hash(key);
	struct timespec until;
	qc_answer *a;
	qc_claim *c;

	*claimed = 0;
	if (!q || !q->max)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait_s;
	pthread_mutex_lock(&q->lock);
	for (;;) {
		if ((a = lookup(q, key, h)))
			goto out;
		if (!claim_find(q, key, h))
			break;
		/* another request is computing it: its answer will do */
		if (pthread_cond_timedwait(&q->claims_done, &q->lock, &until))
			goto out;	/* waited long enough: compute it too */
	}
	c = calloc(1, sizeof(*c));
	if (c && (c->key = strdup(key))) {
		c->hash = h;
		c->next = q->claims;
		q->claims = c;
		*claimed = 1;
	} else {
		free(c);
	}
out:
	pthread_mutex_unlock(&q->lock);
	return a;
}

void qc_unclaim(qcache *q, const char *key)
{
	if (!q || !q->max)
		return;
	pthread_mutex_lock(&q->lock);
	claim_drop(q, key, qc_hash(key));
	pthread_mutex_unlock(&q->lock);
}

int qc_would_keep(const qcache *q, size_t len)
{
	/* the compressed forms, made later, are counted up front at a quarter
	 * of the body: JSON and folded text shrink 8-15x, and a form that
	 * would not shrink is not kept */
	return q && q->max && len + len / 4 <= q->max / 4;
}

int qc_put(qcache *q, const char *key, qc_answer *a)
{
	uint64_t h = qc_hash(key);
	qc_entry *e, *victims = NULL;

	if (!a || !qc_would_keep(q, a->len)) {
		qc_unclaim(q, key);
		return 0;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !(e->key = strdup(key))) {
		free(e);
		qc_unclaim(q, key);
		return 0;
	}
	e->hash = h;
	e->bytes = a->len + a->len / 4 + strlen(key) + sizeof(*e) + sizeof(*a) + 64;
	e->ans = qc_answer_ref(a);
	pthread_mutex_lock(&q->lock);
	{
		qc_entry *old = find(q, key, h);
		if (old) {
			unlink_entry(q, old);
			old->next = victims;
			victims = old;
		}
	}
	e->chain = q->buckets[h & (QC_BUCKETS - 1)];
	q->buckets[h & (QC_BUCKETS - 1)] = e;
	list_push(q, e);
	q->used += e->bytes;
	while (q->used > q->max && q->tail && q->tail != e) {
		qc_entry *old = q->tail;
		unlink_entry(q, old);
		old->next = victims;
		victims = old;
	}
	claim_drop(q, key, h);
	pthread_mutex_unlock(&q->lock);
	/* freeing a large body is not done under the lock */
	while (victims) {
		e = victims->next;
		entry_free(victims);
		victims = e;
	}
	return 1;
}

/* One zstd frame with the content size, level QC_ZSTD_LEVEL. */
static void make_zstd(qc_answer *a)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t bound = ZSTD_compressBound(a->len), n;
	char *out = cc ? malloc(bound) : NULL;

	if (!out || ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel,
							 QC_ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, QC_ZSTD_WINDOW_LOG)))
		goto out;
	n = ZSTD_compress2(cc, out, bound, a->body, a->len);
	if (ZSTD_isError(n) || n >= a->len)
		goto out;
	a->zst = realloc(out, n);
	if (!a->zst)
		a->zst = out;
	a->zst_len = n;
	out = NULL;
out:
	free(out);
	ZSTD_freeCCtx(cc);
}

const char *qc_answer_zstd(qc_answer *a, size_t *len)
{
	const char *z;

	if (a->len < QC_GZIP_MIN)
		return NULL;
	pthread_mutex_lock(&a->gz_lock);
	if (!a->zst_done) {
		make_zstd(a);
		a->zst_done = 1;
	}
	z = a->zst;
	*len = a->zst_len;
	pthread_mutex_unlock(&a->gz_lock);
	return z;
}
