/* threads.c - every thread with samples, its comms and their counts, from the aggregate. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/query-int.h"

typedef struct tcomm {
	uint32_t pid, tid, comm;
	uint64_t samples;
} tcomm;

/* by thread, then most samples first; of two comms with as many, the one
 * interned later (the name a thread took last, e.g. after exec) first */
static int cmp_tcomm(const void *x, const void *y)
{
	const tcomm *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a->comm > b->comm ? -1 : a->comm < b->comm;
}

/* most samples first; threads with as many in pid, tid order */
static int cmp_thread(const void *x, const void *y)
{
	const pe_thread *a = x, *b = y;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int pe_threads(const pe_model *m, pe_thread **out, size_t *n)
{
	pe_aggmap by = { 0 };
	tcomm *tc = NULL;
	pe_thread *th = NULL;
	const char **names = NULL;
	size_t i, nt = 0;

	*out = NULL;
	*n = 0;
	/* samples per (pid, tid, comm), any event */
	for (i = 0; i < m->nr_agg; i++) {
		const pe_agg_row *r = &m->agg[i];
		pe_agg_row *g = pe_aggmap_get(&by, 0, r->pid, r->tid, r->comm, 0);
		if (!g)
			goto fail;
		g->samples += r->samples;
	}
	tc = malloc((by.n + 1) * sizeof(*tc));
	th = calloc(by.n + 1, sizeof(*th));
	names = malloc((by.n + 1) * sizeof(*names));
	if (!tc || !th || !names)
		goto fail;
	for (i = 0; i < by.n; i++) {
		tc[i].pid = by.rows[i].pid;
		tc[i].tid = by.rows[i].tid;
		tc[i].comm = by.rows[i].comm;
		tc[i].samples = by.rows[i].samples;
	}
	qsort(tc, by.n, sizeof(*tc), cmp_tcomm);
	for (i = 0; i < by.n; i++) {
		const char *cs = pe_str(m, tc[i].comm);
		pe_thread *t;

		if (!nt || th[nt - 1].pid != tc[i].pid || th[nt - 1].tid != tc[i].tid) {
			t = &th[nt++];
			t->pid = tc[i].pid;
			t->tid = tc[i].tid;
			t->comms = names + i;	/* a thread's comms are consecutive */
		}
		t = &th[nt - 1];
		t->comms[t->nr_comms++] = cs ? cs : "";
		t->samples += tc[i].samples;
	}
	qsort(th, nt, sizeof(*th), cmp_thread);
	th[nt].comms = names;	/* the one allocation of every thread's comms */
	free(tc);
	pe_aggmap_free(&by);
	*out = th;
	*n = nt;
	return 0;
fail:
	free(tc);
	free(th);
	free(names);
	pe_aggmap_free(&by);
	return -1;
}

void pe_threads_free(pe_thread *t, size_t n)
{
	if (t)
		free((void *)t[n].comms);
	free(t);
}
