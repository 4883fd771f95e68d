/*
 * firstq.c - first questions settled in time order across threads (see
 * firstq.h). A question missing from the table waits until every other
 * thread is at or past its sample: each has then asked everything it had
 * to ask before it, so nothing earlier can come. Entries are only made
 * once every other thread is past, so one found is final: a question
 * that finds its function needs no wait, and one thread never waits.
 */
#include "firstq.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "table.h"

#define FIRSTQ_MAX	(1u << 20)	/* functions kept */
#define FIRSTQ_NAP_NS	50000	/* between looks at the others' positions */

typedef struct fq_entry {
	uint64_t serial, func;	/* serial 0: free */
	pd_firstq_answer a;
} fq_entry;

struct pd_firstq {
	unsigned n;
	uint64_t *pos;		/* per thread, atomic; UINT64_MAX: done */
	pthread_mutex_t lock;	/* the table */
	fq_entry *tab;
	size_t used, cap;
};

pd_firstq *pd_firstq_new(unsigned nthreads)
{
	pd_firstq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->n = nthreads;
	q->pos = calloc(nthreads ? nthreads : 1, sizeof(*q->pos));
	if (!q->pos) {
		free(q);
		return NULL;
	}
	pthread_mutex_init(&q->lock, NULL);
	return q;
}

void pd_firstq_free(pd_firstq *q)
{
	if (!q)
		return;
	pthread_mutex_destroy(&q->lock);
	free(q->tab);
	free(q->pos);
	free(q);
}

void pd_firstq_at(pd_firstq *q, unsigned who, uint64_t pos)
{
	if (who < q->n)
		__atomic_store_n(&q->pos[who], pos, __ATOMIC_RELEASE);
}

void pd_firstq_done(pd_firstq *q, unsigned who)
{
	pd_firstq_at(q, who, UINT64_MAX);
}

static size_t slot_of(uint64_t serial, uint64_t func, size_t cap)
{
	uint64_t h = (func ^ serial * 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;

	return (size_t)(h >> 24) & (cap - 1);
}

/* The entry for (serial, func), or the free slot where it goes; NULL when
 * the table is full or cannot grow. Under the lock. */
static fq_entry *find(pd_firstq *q, uint64_t serial, uint64_t func)
{
	size_t i;

	if (q->used * 2 >= q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		fq_entry *t;

		if (q->used >= FIRSTQ_MAX || !(t = pd_table_new(cap, sizeof(*t))))
			return NULL;
		for (i = 0; i < q->cap; i++)
			if (q->tab[i].serial) {
				size_t j = slot_of(q->tab[i].serial, q->tab[i].func, cap);

				while (t[j].serial)
					j = (j + 1) & (cap - 1);
				t[j] = q->tab[i];
			}
		free(q->tab);
		q->tab = t;
		q->cap = cap;
	}
	for (i = slot_of(serial, func, q->cap);; i = (i + 1) & (q->cap - 1))
		if (!q->tab[i].serial || (q->tab[i].serial == serial && q->tab[i].func == func))
			return &q->tab[i];
}

/* Whether every other thread is at or past pos. */
static int others_past(pd_firstq *q, unsigned who, uint64_t pos)
{
	unsigned j;

	for (j = 0; j < q->n; j++)
		if (j != who && __atomic_load_n(&q->pos[j], __ATOMIC_ACQUIRE) < pos)
			return 0;
	return 1;
}

int pd_firstq_ask(pd_firstq *q, unsigned who, uint64_t serial, uint64_t func,
		  pd_firstq_answer *a)
{
	uint64_t pos = who < q->n ? __atomic_load_n(&q->pos[who], __ATOMIC_RELAXED) : 0;
	struct timespec nap = { 0, FIRSTQ_NAP_NS };
	fq_entry *e;

	for (;;) {
		pthread_mutex_lock(&q->lock);
		e = find(q, serial, func);
		if (!e) {
			pthread_mutex_unlock(&q->lock);
			return -1;
		}
		if (e->serial) {
			*a = e->a;
			pthread_mutex_unlock(&q->lock);
			return 0;
		}
		if (others_past(q, who, pos)) {
			/* nothing earlier can come: this is the first */
			*e = (fq_entry){ .serial = serial, .func = func, .a = *a };
			q->used++;
			pthread_mutex_unlock(&q->lock);
			return 0;
		}
		pthread_mutex_unlock(&q->lock);
		/* rare (once per function) and short (the others fold the same
		 * recording at the same pace): a nap rather than a wake-up on
		 * every sample of every thread */
		while (!others_past(q, who, pos))
			nanosleep(&nap, NULL);
	}
}
