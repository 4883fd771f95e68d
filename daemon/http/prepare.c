/*
 * prepare.c - the flame graphs a profile is first asked for, made as its
 * parse finishes (the store's prepare hook): the API's default (no
 * parameters) and the page's first one (kernel=1), both with the default
 * event and weight and no filter. They are computed from the parse's
 * model beside its last transaction and kept in the answer cache under
 * the keys those requests make before the model goes into the cache (the
 * store holds questions until then): the first flame graph after ready is
 * sent, not computed. Answers too large for the cache are given up as
 * soon as they outgrow it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "jsonbuf.h"

/* The kernel= forms made: the API's default, then the page's. */
static const int prepared_kernel[] = { 0, 1 };
#define NR_PREPARED (sizeof(prepared_kernel) / sizeof(prepared_kernel[0]))

typedef struct prep_flame {
	http_fold_args fa;	/* as a request without filters resolves them */
	char *body;
	size_t len;
} prep_flame;

typedef struct prepared {
	prep_flame fl[NR_PREPARED];
	size_t n;
} prepared;

/* A flame graph's JSON, stopped once the cache would not keep it. */
typedef struct capped_tree {
	jb_tree w;
	const qcache *qc;
	int over;
} capped_tree;

static int capped_enter(void *ctx, const char *name, size_t len, const char *dso, uint64_t value)
{
	capped_tree *c = ctx;

	if (!qc_would_keep(c->qc, c->w.b.len)) {
		c->over = 1;
		return 1;
	}
	return jb_value_node_open(&c->w, name, len, dso, value);
}

static int capped_leave(void *ctx)
{
	capped_tree *c = ctx;

	return jb_node_close(&c->w);
}

/* /flamegraph[?kernel=1] of the finishing parse, as flamegraph_answer
 * (queries.c) writes it. 0, or -1 when there is nothing to keep. */
static int flame_make(api *a, st_finishing *f, int kernel, prep_flame *out)
{
	static const st_tree_cb cb = { capped_enter, capped_leave };
	capped_tree c;
	char *name = NULL;
	int rc;

	http_fold_args_init(&out->fa);
	out->fa.f.kernel = kernel;
	/* the default event, as http_fold_event picks it */
	rc = st_finishing_event(f, NULL, &name);
	if (rc == 0)
		rc = http_fold_event_set(&out->fa, name);
	free(name);
	if (rc != 0)
		return -1;
	memset(&c, 0, sizeof(c));
	c.qc = a->qc;
	rc = st_finishing_flame(f, &out->fa.f, out->fa.by_samples, &cb, &c);
	if (rc != 0 || c.over || c.w.b.oom || !c.w.b.p) {
		free(c.w.b.p);
		return -1;
	}
	c.w.b.p[c.w.b.len] = 0;
	out->body = c.w.b.p;
	out->len = c.w.b.len;
	return 0;
}

static void prepared_free(prepared *p)
{
	size_t i;

	for (i = 0; p && i < p->n; i++)
		free(p->fl[i].body);
	free(p);
}

static void *prepare_make(void *ctx, st_finishing *f)
{
	api *a = ctx;
	prepared *p = calloc(1, sizeof(*p));
	size_t i;

	if (!p)
		return NULL;
	for (i = 0; i < NR_PREPARED; i++)
		if (flame_make(a, f, prepared_kernel[i], &p->fl[p->n]) == 0)
			p->n++;
	if (!p->n) {
		prepared_free(p);
		return NULL;
	}
	return p;
}

/* Under the keys the requests make in generation gen (http_answer_key asks
 * the store nothing when fa->gen is set: the profile's model is not in the
 * cache yet, and a question about it would wait for this very parse). */
static void prepare_keep(void *ctx, int64_t id, int64_t gen, void *made)
{
	api *a = ctx;
	prepared *p = made;
	char key[API_KEY_LEN];
	size_t i;

	for (i = 0; i < p->n; i++) {
		prep_flame *fl = &p->fl[i];
		qc_answer *ans;

		fl->fa.gen = gen;
		if (http_answer_key(a, "flamegraph", id, &fl->fa, 0, key) != 0)
			continue;
		ans = qc_answer_new(fl->body, fl->len);
		fl->body = NULL;	/* the answer's now, or freed */
		if (ans && qc_put(a->qc, key, ans))
			atomic_fetch_add(&a->answers_prepared, 1);
		qc_answer_release(ans);
	}
	prepared_free(p);
}

static void prepare_drop(void *ctx, void *made)
{
	(void)ctx;
	prepared_free(made);
}

void http_prepare_start(api *a)
{
	st_prepare_hook h = { prepare_make, prepare_keep, prepare_drop, a };

	if (!a->qc)
		return;	/* nowhere to keep them */
	st_set_prepare_hook(a->st, &h);
	a->preparing = 1;
}

void http_prepare_stop(api *a)
{
	if (a->preparing)
		st_set_prepare_hook(a->st, NULL);
	a->preparing = 0;
}
