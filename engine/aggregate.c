/* aggregate.c - samples and period across many profiles, grouped by comm, event, hostname, or the leaf frame's symbol or DSO. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/query-int.h"

enum { G_COMM, G_EVENT, G_HOSTNAME, G_SYMBOL, G_DSO, G_NR };

static const char *const group_names[G_NR] = { "comm", "event", "hostname", "symbol", "dso" };

typedef struct agg_key {
	const char *key;	/* NULL: profiles without the key (hostname) */
	uint64_t samples, period, profiles;
	uint64_t last_profile;	/* counts each profile once: its number + 1 */
} agg_key;

struct pe_aggregate {
	int group;
	pe_strmap idx;		/* key -> index + 1 */
	agg_key *keys;
	size_t n, cap;
	agg_key null_key;
	int has_null;
	uint64_t nr_profiles;	/* added so far */
	pe_aggregate_row *rows;
};

pe_aggregate *pe_aggregate_new(const char *group_by, int *bad)
{
	pe_aggregate *a;
	int g;

	*bad = 0;
	for (g = 0; g < G_NR; g++)
		if (group_by && !strcmp(group_by, group_names[g]))
			break;
	if (g == G_NR) {
		*bad = 1;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a || pe_strmap_grow(&a->idx) < 0) {
		free(a);
		return NULL;
	}
	a->group = g;
	return a;
}

void pe_aggregate_free(pe_aggregate *a)
{
	if (!a)
		return;
	pe_strmap_free(&a->idx);
	free(a->keys);
	free(a->rows);
	free(a);
}

const char *pe_aggregate_group(const pe_aggregate *a)
{
	return group_names[a->group];
}

static agg_key *key_get(pe_aggregate *a, const char *k)
{
	size_t j;
	int added;

	if (!k) {
		a->has_null = 1;
		return &a->null_key;
	}
	if (a->n == a->cap) {
		size_t ncap = a->cap ? 2 * a->cap : 256;
		agg_key *p = realloc(a->keys, ncap * sizeof(*p));
		if (!p)
			return NULL;
		a->keys = p;
		a->cap = ncap;
	}
	added = pe_strmap_put(&a->idx, k, (uint32_t)a->n + 1, &j);
	if (added < 0)
		return NULL;
	if (added) {
		memset(&a->keys[a->n], 0, sizeof(agg_key));
		a->keys[a->n++].key = a->idx.strs[j];
	}
	return &a->keys[a->idx.ids[j] - 1];
}

/* The group key of one aggregate row; `skip` when the row has none. */
static const char *group_key(const pe_model *m, int g, const pe_agg_row *r, const char *host,
			     int *skip)
{
	const char *k;
	uint32_t fr;

	*skip = 0;
	switch (g) {
	case G_COMM:
		k = pe_str(m, r->comm);
		break;
	case G_EVENT:
		k = pe_event_name(m, r->event);
		break;
	case G_HOSTNAME:
		return host;
	default:
		/* of the leaf frame */
		if (!r->stack || r->stack >= m->nr_stacks ||
		    (fr = m->stack_frame[r->stack]) >= m->nr_frames) {
			*skip = 1;
			return NULL;
		}
		k = pe_str(m, g == G_SYMBOL ? m->frame_name[fr] : m->frame_dso[fr]);
		break;
	}
	*skip = !k;
	return k;
}

int pe_aggregate_add(pe_aggregate *a, const pe_model *m, const char *hostname)
{
	uint64_t profile = ++a->nr_profiles;
	size_t k;

	for (k = 0; k < m->nr_agg; k++) {
		const pe_agg_row *r = &m->agg[k];
		int skip;
		const char *key = group_key(m, a->group, r, hostname, &skip);
		agg_key *e;

		if (skip)
			continue;
		if (!(e = key_get(a, key)))
			return -1;
		e->samples += r->samples;
		e->period += r->period;
		if (e->last_profile != profile) {
			e->last_profile = profile;
			e->profiles++;
		}
	}
	return 0;
}

static int cmp_row(const void *x, const void *y)
{
	const pe_aggregate_row *a = x, *b = y;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	/* NULL first, as SQL orders it */
	if (!a->key || !b->key)
		return !a->key ? (b->key ? -1 : 0) : 1;
	return strcmp(a->key, b->key);
}

const pe_aggregate_row *pe_aggregate_rows(pe_aggregate *a, size_t *n)
{
	size_t i, k = 0;

	free(a->rows);
	if (!(a->rows = malloc((a->n + 1) * sizeof(*a->rows))))
		return NULL;
	for (i = 0; i < a->n + (size_t)a->has_null; i++) {
		const agg_key *e = i < a->n ? &a->keys[i] : &a->null_key;
		a->rows[k].key = e->key;
		a->rows[k].samples = e->samples;
		a->rows[k].period = e->period;
		a->rows[k++].profiles = e->profiles;
	}
	qsort(a->rows, k, sizeof(*a->rows), cmp_row);
	*n = k;
	return a->rows;
}
