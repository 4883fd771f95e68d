/* hpool.c - a fixed set of threads running request handlers that may block. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "http/hpool.h"

typedef struct hpool_queue {
	hpool_job *head, *tail;
} hpool_queue;

struct hpool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	hpool_queue light, heavy_q;
	unsigned heavy;		/* heavy jobs reserved, waiting or running */
	unsigned heavy_running;
	unsigned max_heavy;
	uint64_t refused;
	int stopping;
	unsigned nr_threads;
	pthread_t *threads;
};

static hpool_job *pop(hpool_queue *q)
{
	hpool_job *job = q->head;

	if (job) {
		q->head = job->next;
		if (!q->head)
			q->tail = NULL;
	}
	return job;
}

/* The next job this thread may run: light first, heavy while fewer than
 * max_heavy run. Under p->lock. */
static hpool_job *next_job(hpool *p)
{
	hpool_job *job = pop(&p->light);

	if (!job && p->heavy_running < p->max_heavy && (job = pop(&p->heavy_q)))
		p->heavy_running++;
	return job;
}

static void *worker(void *arg)
{
	hpool *p = arg;

	for (;;) {
		hpool_job *job;
		int heavy;

		pthread_mutex_lock(&p->lock);
		while (!(job = next_job(p)) && !(p->stopping && !p->light.head && !p->heavy_q.head))
			pthread_cond_wait(&p->cond, &p->lock);
		pthread_mutex_unlock(&p->lock);
		if (!job)	/* stopping with nothing left */
			return NULL;
		heavy = job->heavy;
		job->run(job);	/* may free job */
		if (heavy) {
			pthread_mutex_lock(&p->lock);
			p->heavy--;
			p->heavy_running--;
			/* a waiting heavy job may run now */
			pthread_cond_broadcast(&p->cond);
			pthread_mutex_unlock(&p->lock);
		}
	}
}

hpool *hpool_new(unsigned max_heavy)
{
	hpool *p = calloc(1, sizeof(*p));
	unsigned i;

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->max_heavy = max_heavy ? max_heavy : 1;
	p->threads = calloc(p->max_heavy + HPOOL_LIGHT_THREADS, sizeof(*p->threads));
	if (!p->threads)
		goto fail;
	for (i = 0; i < p->max_heavy + HPOOL_LIGHT_THREADS; i++) {
		if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
			goto fail;
		p->nr_threads++;
	}
	return p;
fail:
	hpool_free(p);
	return NULL;
}

void hpool_free(hpool *p)
{
	unsigned i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nr_threads; i++)
		pthread_join(p->threads[i], NULL);
	free(p->threads);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int hpool_reserve(hpool *p, int heavy)
{
	int rc = 0;

	if (!heavy)
		return 0;
	pthread_mutex_lock(&p->lock);
	if (p->heavy >= p->max_heavy * (1 + HPOOL_HEAVY_WAITING)) {
		p->refused++;
		rc = -1;
	} else {
		p->heavy++;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void hpool_submit(hpool *p, hpool_job *job)
{
	hpool_queue *q = job->heavy ? &p->heavy_q : &p->light;

	job->next = NULL;
	pthread_mutex_lock(&p->lock);
	if (q->tail)
		q->tail->next = job;
	else
		q->head = job;
	q->tail = job;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void hpool_stats(hpool *p, uint64_t *refused, unsigned *heavy)
{
	pthread_mutex_lock(&p->lock);
	*refused = p->refused;
	*heavy = p->heavy;
	pthread_mutex_unlock(&p->lock);
}
