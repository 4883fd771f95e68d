/*
 * annotate.c - a function's self samples by DSO and address: the leaf
 * rows of every frame with its name (kept per frame, event and address by
 * the builder, read back through pe_leaves) under the question's event and
 * measure, added up per address.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/query-int.h"

typedef struct annot_ctx {
	const pe_model *m;
	const unsigned char *plan;
	pe_annot_dso *dso;	/* the frame's group */
	size_t cap;		/* of dso->addrs */
	int oom;
} annot_ctx;

static int on_leaf(void *ctx, const pe_leaf_row *r)
{
	annot_ctx *c = ctx;
	pe_annot_dso *d = c->dso;
	pe_addr_count *a;

	if (!pe_in_set(c->m, c->plan, r->event))
		return 0;
	if (d->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 64;
		pe_addr_count *p = realloc(d->addrs, ncap * sizeof(*p));
		if (!p) {
			c->oom = 1;
			return -1;
		}
		d->addrs = p;
		c->cap = ncap;
	}
	a = &d->addrs[d->n++];
	a->addr = r->addr;
	a->samples = r->samples;
	a->value = pe_plan_value(c->plan, r->event, r->period, r->offcpu);
	return 0;
}

int pe_leaf_row_of(const pe_row *r, pe_leaf_row *out)
{
	if (r->kind != PE_ROW_LEAF_ADDR || r->nvals < 6)
		return 0;
	out->frame = (uint32_t)r->v[0];
	out->event = (uint32_t)r->v[1];
	out->addr = (uint64_t)r->v[2];
	out->samples = (uint64_t)r->v[3];
	out->period = (uint64_t)r->v[4];
	out->offcpu = (uint64_t)r->v[5];
	return 1;
}

static int cmp_addr(const void *x, const void *y)
{
	uint64_t a = ((const pe_addr_count *)x)->addr, b = ((const pe_addr_count *)y)->addr;

	return a < b ? -1 : a > b;
}

static int cmp_dso(const void *x, const void *y)
{
	const pe_annot_dso *a = x, *b = y;

	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (!a->dso || !b->dso)
		return !a->dso - !b->dso;
	return strcmp(a->dso, b->dso);
}

/* Addresses sorted, one entry each; the group's sums. */
static void merge(pe_annot_dso *d)
{
	size_t i, n = 0;

	if (d->n > 1)
		qsort(d->addrs, d->n, sizeof(*d->addrs), cmp_addr);
	d->samples = d->value = 0;
	for (i = 0; i < d->n; i++) {
		d->samples += d->addrs[i].samples;
		d->value += d->addrs[i].value;
		if (n && d->addrs[n - 1].addr == d->addrs[i].addr) {
			d->addrs[n - 1].samples += d->addrs[i].samples;
			d->addrs[n - 1].value += d->addrs[i].value;
		} else {
			d->addrs[n++] = d->addrs[i];
		}
	}
	d->n = n;
}

int pe_annotate(const pe_model *m, const pe_filter *f, const char *function,
		const pe_leaves *src, pe_annot *out)
{
	uint64_t fkey = pe_function_key(m, f, function);
	unsigned char *plan = NULL;
	annot_ctx c = { m, NULL, NULL, 0, 0 };
	size_t *caps = NULL, fr, i;
	int none, rc = -1;

	memset(out, 0, sizeof(*out));
	if (!fkey)
		return 1;
	if (!(plan = pe_event_plan(m, f, &none)))
		return none ? 0 : -1;
	c.plan = plan;
	for (fr = 1; fr < m->nr_frames; fr++) {
		pe_annot_dso *d = NULL;

		if (pe_frame_key(m, f, (uint32_t)fr) != fkey)
			continue;
		/* frames of one DSO (user and kernel apart) share a group */
		for (i = 0; i < out->n && !d; i++)
			if (pe_str(m, m->frame_dso[fr]) == out->dsos[i].dso &&
			    out->dsos[i].kernel == (int)m->frame_kernel[fr])
				d = &out->dsos[i];
		if (!d) {
			pe_annot_dso *p = realloc(out->dsos, (out->n + 1) * sizeof(*p));
			size_t *pc = realloc(caps, (out->n + 1) * sizeof(*pc));
			if (pc)
				caps = pc;
			if (p)
				out->dsos = p;
			if (!p || !pc)
				goto out;
			d = &out->dsos[out->n];
			memset(d, 0, sizeof(*d));
			d->dso = pe_str(m, m->frame_dso[fr]);
			d->build_id = pe_build_id(m, m->frame_dso[fr]);
			d->kernel = (int)m->frame_kernel[fr];
			caps[out->n++] = 0;
		}
		c.dso = d;
		c.cap = caps[d - out->dsos];
		if (!src || !src->read || src->read(src->src, (uint32_t)fr, on_leaf, &c) < 0)
			goto out;
		caps[d - out->dsos] = c.cap;
	}
	for (i = 0; i < out->n; i++) {
		merge(&out->dsos[i]);
		out->samples += out->dsos[i].samples;
		out->value += out->dsos[i].value;
	}
	if (out->n > 1)
		qsort(out->dsos, out->n, sizeof(*out->dsos), cmp_dso);
	rc = 0;
out:
	if (rc < 0)
		pe_annot_free(out);
	free(plan);
	free(caps);
	return rc;
}

void pe_annot_free(pe_annot *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->dsos[i].addrs);
	free(a->dsos);
	memset(a, 0, sizeof(*a));
}
