/* preload.c - symbol tables loaded ahead; see preload.h. */
#include "preload.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "dso.h"

#define PRELOAD_MAX_DSOS	4096	/* perf's list is bounded the same way */
#define PRELOAD_MAX_THREADS	8

struct pd_preload {
	pd_symcache *cache;
	pd_dso **dsos;
	size_t n;
	atomic_size_t next;	/* the next table to load */
	atomic_size_t loaded;
	atomic_int stop;
	int inlines;		/* open the DWARF naming inlined frames too */
	pthread_t tid[PRELOAD_MAX_THREADS];
	unsigned nthreads;
};

static void *preload_run(void *arg)
{
	pd_preload *p = arg;
	size_t i;

	while (!atomic_load(&p->stop) && (i = atomic_fetch_add(&p->next, 1)) < p->n) {
		/* under the dso's own lock: a reader that needs the table
		 * meanwhile waits for this load only */
		pd_dso_prepare(p->dsos[i]);
		if (p->inlines)
			pd_dso_prepare_inlines(p->dsos[i]);
		atomic_fetch_add(&p->loaded, 1);
	}
	return NULL;
}

pd_preload *pd_preload_start(pd_symbolizer *s, unsigned threads)
{
	pd_preload *p = calloc(1, sizeof(*p));
	unsigned t;

	if (!p)
		return NULL;
	p->cache = pd_symbolizer_cache(s);
	/* unwound frames are named from DWARF: opening it is part of what
	 * their first lookup in each file costs */
	p->inlines = pd_symbolizer_unwinds(s);
	p->dsos = malloc(PRELOAD_MAX_DSOS * sizeof(*p->dsos));
	if (p->dsos)
		p->n = pd_symbolizer_header_dsos(s, p->dsos, PRELOAD_MAX_DSOS);
	if (!p->n)
		goto none;
	if (threads > PRELOAD_MAX_THREADS)
		threads = PRELOAD_MAX_THREADS;
	for (t = 0; t < threads; t++)
		if (pthread_create(&p->tid[p->nthreads], NULL, preload_run, p) == 0)
			p->nthreads++;
	if (p->nthreads)
		return p;
none:
	pd_preload_stop(p);
	return NULL;
}

void pd_preload_stop(pd_preload *p)
{
	unsigned t;
	size_t i;

	if (!p)
		return;
	atomic_store(&p->stop, 1);
	for (t = 0; t < p->nthreads; t++)
		pthread_join(p->tid[t], NULL);
	for (i = 0; i < p->n; i++)
		pd_dso_put(p->cache, p->dsos[i]);
	free(p->dsos);
	free(p);
}

size_t pd_preload_loaded(const pd_preload *p)
{
	return p ? atomic_load(&p->loaded) : 0;
}
