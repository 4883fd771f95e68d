/* model.c - loading a profile's model, and the name order flame graphs share. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/hashmap.h"
#include "engine/log.h"
#include "engine/model-int.h"
#include "engine/query.h"

pe_model *pe_model_new(int64_t id, int64_t gen)
{
	pe_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	pthread_mutex_init(&m->rank_lock, NULL);
	m->id = id;
	m->gen = gen;
	return m;
}

void pe_model_free(pe_model *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_strs; i++)
		free(m->strs[i]);
	free(m->strs);
	for (i = 0; i < m->nr_events; i++)
		free(m->event_names[i]);
	free(m->event_names);
	for (i = 0; i < m->nr_build_ids; i++)
		free(m->build_ids[i]);
	free(m->build_ids);
	free(m->frame_name);
	free(m->frame_kernel);
	free(m->frame_dso);
	free(m->stack_parent);
	free(m->stack_frame);
	free(m->agg);
	free(m->rank);
	pthread_mutex_destroy(&m->rank_lock);
	free(m);
}

/* Room for index k in `nr` arrays of `size`-byte elements (zeroed), capacity
 * *cap. 0, 1 when k is out of range, -1 out of memory. */
static int make_room(size_t k, size_t *cap, size_t size, int nr, void **arrays[])
{
	size_t ncap = *cap ? *cap : 1024;
	int i;

	if (k >= PE_MAX_NODES)
		return 1;
	if (k < *cap)
		return 0;
	while (ncap <= k)
		ncap *= 2;
	for (i = 0; i < nr; i++) {
		char *p = realloc(*arrays[i], ncap * size);
		if (!p)
			return -1;
		memset(p + *cap * size, 0, (ncap - *cap) * size);
		*arrays[i] = p;
	}
	*cap = ncap;
	return 0;
}

static int set_text(char ***a, size_t *n, size_t *cap, uint32_t k, const char *text)
{
	void **arr[] = { (void **)a };
	char *copy;
	int rc = make_room(k, cap, sizeof(char *), 1, arr);

	if (rc)
		return rc < 0 ? -1 : 0;
	if (!(copy = strdup(text ? text : "")))
		return -1;
	free((*a)[k]);
	(*a)[k] = copy;
	if (k + 1 > *n)
		*n = k + 1;
	return 0;
}

int pe_model_add_string(pe_model *m, uint32_t id, const char *text)
{
	return set_text(&m->strs, &m->nr_strs, &m->cap_strs, id, text);
}

int pe_model_add_event(pe_model *m, uint32_t idx, const char *name)
{
	return set_text(&m->event_names, &m->nr_events, &m->cap_events, idx, name);
}

uint32_t pe_model_string_id(const pe_model *m, const char *text)
{
	size_t i;

	for (i = 1; i < m->nr_strs; i++)
		if (m->strs[i] && !strcmp(m->strs[i], text))
			return (uint32_t)i;
	return 0;
}

int pe_model_add_build_id(pe_model *m, uint32_t dso, const char *hex)
{
	if (!dso || !hex || !*hex)
		return 0;
	return set_text(&m->build_ids, &m->nr_build_ids, &m->cap_build_ids, dso, hex);
}

int pe_model_add_frame(pe_model *m, uint32_t id, uint32_t name, uint32_t dso, int kernel)
{
	void **arr[] = { (void **)&m->frame_name, (void **)&m->frame_kernel,
			 (void **)&m->frame_dso };
	int rc = make_room(id, &m->cap_frames, sizeof(uint32_t), 3, arr);

	if (rc)
		return rc < 0 ? -1 : 0;
	m->frame_name[id] = name;
	m->frame_kernel[id] = kernel != 0;
	m->frame_dso[id] = dso;
	if (id + 1 > m->nr_frames)
		m->nr_frames = id + 1;
	return 0;
}

int pe_model_add_stack(pe_model *m, uint32_t id, uint32_t parent, uint32_t frame)
{
	void **arr[] = { (void **)&m->stack_parent, (void **)&m->stack_frame };
	int rc = make_room(id, &m->cap_stacks, sizeof(uint32_t), 2, arr);

	if (rc)
		return rc < 0 ? -1 : 0;
	m->stack_parent[id] = parent;
	m->stack_frame[id] = frame;
	if (id + 1 > m->nr_stacks)
		m->nr_stacks = id + 1;
	return 0;
}

int pe_model_add_agg(pe_model *m, const pe_agg_row *r)
{
	if (m->nr_agg == m->cap_agg) {
		size_t ncap = m->cap_agg ? 2 * m->cap_agg : 1024;
		pe_agg_row *p = realloc(m->agg, ncap * sizeof(*p));
		if (!p)
			return -1;
		m->agg = p;
		m->cap_agg = ncap;
	}
	m->agg[m->nr_agg++] = *r;
	return 0;
}

/* Summing the blocks: the running sample number gives first_seq. */
typedef struct agg_scan {
	const pe_model *m;
	pe_aggmap map;
	uint64_t seq;
	uint8_t *raw;
} agg_scan;

static int agg_block(void *ctx, int64_t nr, const void *data, size_t len)
{
	agg_scan *c = ctx;
	pe_block_view v;
	size_t i;

	if (pe_block_view_of(data, len, nr, c->raw, &v) < 0) {
		pe_warn("msg=\"corrupt sample block\" profile=%lld", (long long)c->m->id);
		return -1;
	}
	for (i = 0; i < v.n; i++) {
		pe_agg_row *a = pe_aggmap_get(&c->map, pe_get32(v.event + 4 * i),
					      pe_get32(v.pid + 4 * i), pe_get32(v.tid + 4 * i),
					      pe_get32(v.comm + 4 * i), pe_get32(v.stack + 4 * i));

		if (!a)
			return -1;
		if (!a->samples++)
			a->first_seq = c->seq + i + 1;
		a->period += pe_get64(v.period + 8 * i);
		a->offcpu += pe_block_offcpu(&v, i);
	}
	c->seq += v.n;
	return 0;
}

int pe_model_agg_from_blocks(pe_model *m, const pe_blocks *src)
{
	agg_scan c = { .m = m };
	int rc = -1;

	if (!src || !src->read || m->nr_agg || !(c.raw = malloc(PE_BLOCK_RAW_MAX)))
		goto out;
	if (src->read(src->src, 0, 0, agg_block, &c) != 0)
		goto out;
	/* the rows are in the order their keys were first seen: first_seq's */
	free(m->agg);
	m->agg = c.map.rows;
	m->nr_agg = c.map.n;
	m->cap_agg = c.map.cap;
	c.map.rows = NULL;
	rc = 0;
out:
	free(c.raw);
	pe_aggmap_free(&c.map);
	return rc;
}

static int cmp_first_seq(const void *x, const void *y)
{
	const pe_agg_row *a = x, *b = y;

	return a->first_seq < b->first_seq ? -1 : a->first_seq > b->first_seq;
}

int pe_model_seal(pe_model *m)
{
	size_t i, sorted = 1;

	for (i = 1; i < m->nr_agg && sorted; i++)
		sorted = m->agg[i - 1].first_seq <= m->agg[i].first_seq;
	if (!sorted)
		qsort(m->agg, m->nr_agg, sizeof(*m->agg), cmp_first_seq);
	/* with the name order a flame graph may add (pe_model_ranks) */
	m->bytes = sizeof(*m) + m->nr_strs * sizeof(char *) + m->nr_frames * 12 +
		   m->nr_stacks * 8 + m->cap_agg * sizeof(pe_agg_row) +
		   m->nr_events * sizeof(char *) + (2 * m->nr_strs + 2) * sizeof(uint32_t);
	for (i = 0; i < m->nr_strs; i++)
		m->bytes += m->strs[i] ? strlen(m->strs[i]) + 17 : 0;
	for (i = 0; i < m->nr_build_ids; i++)
		m->bytes += sizeof(char *) + (m->build_ids[i] ? strlen(m->build_ids[i]) + 17 : 0);
	return 0;
}

int pe_model_order_names(pe_model *m)
{
	return pe_model_ranks(m) ? 0 : -1;
}

void pe_model_set_gen(pe_model *m, int64_t gen)
{
	m->gen = gen;
}

int64_t pe_model_id(const pe_model *m)
{
	return m->id;
}

int64_t pe_model_gen(const pe_model *m)
{
	return m->gen;
}

size_t pe_model_bytes(const pe_model *m)
{
	return m->bytes;
}

/* A frame name as the tree prints it; marked names are made in buf. */
typedef struct rank_ent {
	const char *s;
	uint32_t key;
} rank_ent;

static int cmp_rank_ent(const void *x, const void *y)
{
	const rank_ent *a = x, *b = y;
	int r = strcmp(a->s, b->s);

	return r ? r : a->key < b->key ? -1 : a->key > b->key;
}

const uint32_t *pe_model_ranks(pe_model *m)
{
	size_t nkeys = 2 * m->nr_strs + 2, n = 0, i;
	rank_ent *e = NULL;
	char **marked = NULL;
	unsigned char *kmark = NULL;
	uint32_t *rank = NULL;

	pthread_mutex_lock(&m->rank_lock);
	if (m->rank)
		goto out;
	e = malloc(nkeys * sizeof(*e));
	marked = calloc(nkeys / 2, sizeof(*marked));
	kmark = calloc(nkeys / 2, 1);
	rank = calloc(nkeys, sizeof(*rank));
	if (!e || !marked || !kmark || !rank)
		goto fail;
	/* "_[k]" forms exist for names of kernel frames only */
	for (i = 1; i < m->nr_frames; i++)
		if (m->frame_kernel[i] && m->frame_name[i] < nkeys / 2)
			kmark[m->frame_name[i]] = 1;
	for (i = 0; i < nkeys / 2; i++) {
		const char *name = pe_str(m, (uint32_t)i);
		if (!name)
			name = "[unknown]";	/* as the flame graph prints it */
		e[n].s = name;
		e[n++].key = (uint32_t)(2 * i);
		if (kmark[i]) {
			size_t l = strlen(name);
			if (!(marked[i] = malloc(l + 5)))
				goto fail;
			memcpy(marked[i], name, l);
			memcpy(marked[i] + l, "_[k]", 5);
			e[n].s = marked[i];
			e[n++].key = (uint32_t)(2 * i + 1);
		}
	}
	qsort(e, n, sizeof(*e), cmp_rank_ent);
	for (i = 0; i < n; i++)
		rank[e[i].key] = (uint32_t)i;
	m->rank = rank;
	rank = NULL;
	goto out;
fail:
	pe_warn("msg=\"out of memory\" what=\"frame name order\" profile=%lld", (long long)m->id);
out:
	if (marked)
		for (i = 0; i < nkeys / 2; i++)
			free(marked[i]);
	free(marked);
	free(kmark);
	free(e);
	free(rank);
	pthread_mutex_unlock(&m->rank_lock);
	return m->rank;
}
