/*
 * fntab.c - /top rows of many profiles in one table: summed for a merged
 * /top, or set against each other in two sides for the ranked changes of a
 * diff, with a test of whether a change stands out from the noise
 * (stats.h says which and why).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/hashmap.h"
#include "engine/many.h"
#include "engine/stats.h"

typedef struct fn_side {
	double self_w, total_w;			/* weights summed over the side's profiles */
	double self_sh, self_sh2, total_sh, total_sh2;	/* percent shares, and their squares */
} fn_side;

typedef struct fn_ent {
	const char *name;	/* the map's copy */
	char *dso;
	fn_side side[2];
} fn_ent;

typedef struct side_sum {
	double profiles, total, samples, seconds;
	int seconds_known;
	double last_samples;	/* of the latest profile (the one-against-one test) */
} side_sum;

struct pe_fntab {
	pe_strmap idx;		/* name -> entry + 1 */
	fn_ent *e;
	size_t n, cap;
	side_sum side[2];
	pe_fnsum *merged;
};

pe_fntab *pe_fntab_new(void)
{
	pe_fntab *t = calloc(1, sizeof(*t));

	if (!t || pe_strmap_grow(&t->idx) < 0) {
		free(t);
		return NULL;
	}
	t->side[0].seconds_known = t->side[1].seconds_known = 1;
	return t;
}

void pe_fntab_free(pe_fntab *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free(t->e[i].dso);
	free(t->e);
	free(t->merged);
	pe_strmap_free(&t->idx);
	free(t);
}

static fn_ent *entry(pe_fntab *t, const char *name, const char *dso)
{
	size_t slot;
	int added;

	if (t->n == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 256;
		fn_ent *p = realloc(t->e, ncap * sizeof(*p));
		if (!p)
			return NULL;
		t->e = p;
		t->cap = ncap;
	}
	if ((added = pe_strmap_put(&t->idx, name, (uint32_t)t->n + 1, &slot)) < 0)
		return NULL;
	if (added) {
		fn_ent *x = &t->e[t->n++];
		memset(x, 0, sizeof(*x));
		x->name = t->idx.strs[slot];
	}
	return &t->e[t->idx.ids[slot] - 1];
}

int pe_fntab_add(pe_fntab *t, int side, const pe_top_row *rows, size_t n, uint64_t total,
		 uint64_t samples, double seconds)
{
	side_sum *ss = &t->side[side ? 1 : 0];
	size_t i;

	ss->profiles++;
	ss->total += (double)total;
	ss->samples += (double)samples;
	ss->last_samples = (double)samples;
	if (seconds > 0)
		ss->seconds += seconds;
	else
		ss->seconds_known = 0;
	for (i = 0; i < n; i++) {
		fn_ent *x = entry(t, rows[i].name, rows[i].dso);
		fn_side *fs;
		double sh_self, sh_total;

		if (!x)
			return -1;
		if (!x->dso && rows[i].dso && !(x->dso = strdup(rows[i].dso)))
			return -1;
		fs = &x->side[side ? 1 : 0];
		sh_self = total ? 100.0 * (double)rows[i].self / (double)total : 0;
		sh_total = total ? 100.0 * (double)rows[i].total / (double)total : 0;
		fs->self_w += (double)rows[i].self;
		fs->total_w += (double)rows[i].total;
		fs->self_sh += sh_self;
		fs->self_sh2 += sh_self * sh_self;
		fs->total_sh += sh_total;
		fs->total_sh2 += sh_total * sh_total;
	}
	return 0;
}

double pe_fntab_total(const pe_fntab *t, int side)
{
	return t->side[side ? 1 : 0].total;
}

static int cmp_fnsum(const void *x, const void *y)
{
	const pe_fnsum *a = x, *b = y;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return strcmp(a->name, b->name);
}

int pe_fntab_merged(pe_fntab *t, int normalized, const pe_fnsum **rows, size_t *n)
{
	const side_sum *ss = &t->side[0];
	size_t i;

	free(t->merged);
	if (!(t->merged = calloc(t->n + 1, sizeof(*t->merged))))
		return -1;
	for (i = 0; i < t->n; i++) {
		const fn_side *fs = &t->e[i].side[0];
		pe_fnsum *r = &t->merged[i];
		r->name = t->e[i].name;
		r->dso = t->e[i].dso;
		if (normalized) {
			/* each profile weighs one: its counts over its own total */
			r->self = fs->self_sh / 100;
			r->total = fs->total_sh / 100;
			r->self_share = ss->profiles ? fs->self_sh / ss->profiles : 0;
			r->total_share = ss->profiles ? fs->total_sh / ss->profiles : 0;
		} else {
			r->self = fs->self_w;
			r->total = fs->total_w;
			r->self_share = ss->total > 0 ? 100 * fs->self_w / ss->total : 0;
			r->total_share = ss->total > 0 ? 100 * fs->total_w / ss->total : 0;
		}
	}
	qsort(t->merged, t->n, sizeof(*t->merged), cmp_fnsum);
	*rows = t->merged;
	*n = t->n;
	return 0;
}

/* ---- ranked changes ---------------------------------------------------------------- */

static const char *const test_names[] = { "none", "welch-t", "prediction-t", "two-proportion-z" };

const char *pe_test_name(int test)
{
	return test >= 0 && test <= PE_TEST_TWO_PROP ? test_names[test] : "none";
}

/* Which test the sides' sizes allow. */
static int test_for(const pe_fntab *t)
{
	double nb = t->side[0].profiles, nt = t->side[1].profiles;

	if (nb >= 2 && nt >= 2)
		return PE_TEST_WELCH;
	if ((nb == 1 && nt >= 2) || (nt == 1 && nb >= 2))
		return PE_TEST_PREDICT;
	if (nb == 1 && nt == 1)
		return PE_TEST_TWO_PROP;
	return PE_TEST_NONE;
}

/* The p-value of a change of one quantity (self or total shares, percent). */
static double p_value(const pe_fntab *t, int test, const fn_ent *x, int total)
{
	pe_moments m[2];
	int s;

	for (s = 0; s < 2; s++) {
		const fn_side *fs = &x->side[s];
		m[s].n = t->side[s].profiles;
		m[s].sum = total ? fs->total_sh : fs->self_sh;
		m[s].sumsq = total ? fs->total_sh2 : fs->self_sh2;
	}
	/* on a side of one profile, the sum is that profile's share (0 when
	 * the function had none there) */
	switch (test) {
	case PE_TEST_WELCH:
		return pe_stat_welch(&m[0], &m[1]);
	case PE_TEST_PREDICT:
		return m[0].n == 1 ? pe_stat_predict(m[0].sum, &m[1]) : pe_stat_predict(m[1].sum, &m[0]);
	case PE_TEST_TWO_PROP:
		return pe_stat_two_prop(m[0].sum / 100, t->side[0].last_samples, m[1].sum / 100,
					t->side[1].last_samples);
	default:
		return 1;
	}
}

static void change_of(const pe_fntab *t, const fn_ent *x, pe_change *c)
{
	const side_sum *b = &t->side[0], *g = &t->side[1];
	const fn_side *xb = &x->side[0], *xt = &x->side[1];

	memset(c, 0, sizeof(*c));
	c->function = x->name;
	c->dso = x->dso;
	c->base_self_share = b->profiles ? xb->self_sh / b->profiles : 0;
	c->target_self_share = g->profiles ? xt->self_sh / g->profiles : 0;
	c->delta_self = c->target_self_share - c->base_self_share;
	c->base_total_share = b->profiles ? xb->total_sh / b->profiles : 0;
	c->target_total_share = g->profiles ? xt->total_sh / g->profiles : 0;
	c->delta_total = c->target_total_share - c->base_total_share;
	c->base_self = b->profiles ? xb->self_w / b->profiles : 0;
	c->target_self = g->profiles ? xt->self_w / g->profiles : 0;
	c->base_total = b->profiles ? xb->total_w / b->profiles : 0;
	c->target_total = g->profiles ? xt->total_w / g->profiles : 0;
	c->base_self_per_s = b->seconds_known && b->seconds > 0 ? xb->self_w / b->seconds : -1;
	c->target_self_per_s = g->seconds_known && g->seconds > 0 ? xt->self_w / g->seconds : -1;
	c->self_change_pct = c->base_self > 0 ?
			     100 * (c->target_self - c->base_self) / c->base_self : -1e300;
}

static int cmp_regression(const void *x, const void *y)
{
	const pe_change *a = x, *b = y;
	double ka = fmax(a->delta_self, a->delta_total), kb = fmax(b->delta_self, b->delta_total);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	return strcmp(a->function, b->function);
}

static int cmp_improvement(const void *x, const void *y)
{
	const pe_change *a = x, *b = y;
	double ka = fmin(a->delta_self, a->delta_total), kb = fmin(b->delta_self, b->delta_total);

	if (ka != kb)
		return ka < kb ? -1 : 1;
	return strcmp(a->function, b->function);
}

int pe_fntab_rank(pe_fntab *t, double min_share, double alpha, size_t limit, pe_ranked *out)
{
	size_t i, nr = 0, ni = 0;
	int s, test = test_for(t);

	memset(out, 0, sizeof(*out));
	out->test = test;
	for (s = 0; s < 2; s++) {
		const side_sum *ss = &t->side[s];
		out->profiles[s] = ss->profiles;
		out->total[s] = ss->profiles ? ss->total / ss->profiles : 0;
		out->samples[s] = ss->profiles ? ss->samples / ss->profiles : 0;
		out->seconds[s] = ss->seconds_known && ss->profiles ? ss->seconds / ss->profiles : -1;
		out->per_s[s] = ss->seconds_known && ss->seconds > 0 ? ss->total / ss->seconds : -1;
	}
	out->regressions = calloc(t->n + 1, sizeof(pe_change));
	out->improvements = calloc(t->n + 1, sizeof(pe_change));
	if (!out->regressions || !out->improvements) {
		pe_ranked_free(out);
		return -1;
	}
	for (i = 0; i < t->n; i++) {
		const fn_ent *x = &t->e[i];
		pe_change c;
		double top;

		change_of(t, x, &c);
		top = fmax(fmax(c.base_self_share, c.target_self_share),
			   fmax(c.base_total_share, c.target_total_share));
		if (top < min_share || top <= 0)
			continue;
		if (c.delta_self > 0 || c.delta_total > 0) {
			pe_change *r = &out->regressions[nr++];
			*r = c;
			r->p_value = p_value(t, test, x, c.delta_total > c.delta_self);
			r->significant = test == PE_TEST_NONE ? -1 : r->p_value < alpha;
		}
		if (c.delta_self < 0 || c.delta_total < 0) {
			pe_change *r = &out->improvements[ni++];
			*r = c;
			r->p_value = p_value(t, test, x, c.delta_total < c.delta_self);
			r->significant = test == PE_TEST_NONE ? -1 : r->p_value < alpha;
		}
	}
	qsort(out->regressions, nr, sizeof(pe_change), cmp_regression);
	qsort(out->improvements, ni, sizeof(pe_change), cmp_improvement);
	out->nr_regressions = limit && nr > limit ? limit : nr;
	out->nr_improvements = limit && ni > limit ? limit : ni;
	return 0;
}

void pe_ranked_free(pe_ranked *r)
{
	free(r->regressions);
	free(r->improvements);
	memset(r, 0, sizeof(*r));
}
