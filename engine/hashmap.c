/* hashmap.c - the engine's interning tables. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/hashmap.h"

int pe_u64map_grow(pe_u64map *m)
{
	size_t ncap = m->cap ? 2 * m->cap : 4096, i;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint32_t *nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;
		if (!m->keys[i])
			continue;
		for (j = pe_mix64(m->keys[i]) & (ncap - 1); nk[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

void pe_u64map_free(pe_u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

int pe_strmap_grow(pe_strmap *m)
{
	size_t ncap = m->cap ? 2 * m->cap : 1024, i;
	char **ns = calloc(ncap, sizeof(*ns));
	uint64_t *nh = calloc(ncap, sizeof(*nh));
	uint32_t *ni = calloc(ncap, sizeof(*ni));

	if (!ns || !nh || !ni) {
		free(ns);
		free(nh);
		free(ni);
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;
		if (!m->strs[i])
			continue;
		for (j = m->hashes[i] & (ncap - 1); ns[j]; j = (j + 1) & (ncap - 1))
			;
		ns[j] = m->strs[i];
		nh[j] = m->hashes[i];
		ni[j] = m->ids[i];
	}
	free(m->strs);
	free(m->hashes);
	free(m->ids);
	m->strs = ns;
	m->hashes = nh;
	m->ids = ni;
	m->cap = ncap;
	return 0;
}

void pe_strmap_free(pe_strmap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->strs[i]);
	free(m->strs);
	free(m->hashes);
	free(m->ids);
	memset(m, 0, sizeof(*m));
}

int pe_strmap_put(pe_strmap *m, const char *s, uint32_t id, size_t *slot)
{
	uint64_t h = pe_hash_str(s);
	size_t j = pe_strmap_slot(m, s, h);

	if (m->strs[j]) {
		*slot = j;
		return 0;
	}
	if (2 * (m->n + 1) > m->cap) {
		if (pe_strmap_grow(m) < 0)
			return -1;
		j = pe_strmap_slot(m, s, h);
	}
	if (!(m->strs[j] = strdup(s)))
		return -1;
	m->hashes[j] = h;
	m->ids[j] = id;
	m->n++;
	*slot = j;
	return 1;
}

static uint64_t agg_hash(uint32_t event, uint32_t pid, uint32_t tid, uint32_t comm,
			 uint32_t stack)
{
	return pe_mix64(((uint64_t)event << 32 | pid) ^ pe_mix64((uint64_t)tid << 32 | comm) ^
			((uint64_t)stack * 0x9e3779b97f4a7c15ULL));
}

static int agg_grow_slots(pe_aggmap *m)
{
	size_t n = m->nr_slots ? 2 * m->nr_slots : 4096, i;
	uint32_t *sl = calloc(n, sizeof(*sl));

	if (!sl)
		return -1;
	for (i = 0; i < m->n; i++) {
		const pe_agg_row *r = &m->rows[i];
		size_t j = agg_hash(r->event, r->pid, r->tid, r->comm, r->stack) & (n - 1);
		while (sl[j])
			j = (j + 1) & (n - 1);
		sl[j] = (uint32_t)i + 1;
	}
	free(m->slots);
	m->slots = sl;
	m->nr_slots = n;
	return 0;
}

/* The row for the key, or NULL and *empty = the free slot where it goes. */
static pe_agg_row *agg_probe(const pe_aggmap *m, uint32_t event, uint32_t pid, uint32_t tid,
			     uint32_t comm, uint32_t stack, size_t *empty)
{
	size_t j;

	for (j = agg_hash(event, pid, tid, comm, stack) & (m->nr_slots - 1); m->slots[j];
	     j = (j + 1) & (m->nr_slots - 1)) {
		pe_agg_row *r = &m->rows[m->slots[j] - 1];
		if (r->stack == stack && r->tid == tid && r->pid == pid && r->comm == comm &&
		    r->event == event)
			return r;
	}
	*empty = j;
	return NULL;
}

pe_agg_row *pe_aggmap_find(const pe_aggmap *m, uint32_t event, uint32_t pid, uint32_t tid,
			   uint32_t comm, uint32_t stack)
{
	size_t j;

	return m->nr_slots ? agg_probe(m, event, pid, tid, comm, stack, &j) : NULL;
}

pe_agg_row *pe_aggmap_get(pe_aggmap *m, uint32_t event, uint32_t pid, uint32_t tid,
			  uint32_t comm, uint32_t stack)
{
	size_t j;
	pe_agg_row *r;

	if (2 * (m->n + 1) > m->nr_slots && (m->n >= UINT32_MAX - 1 || agg_grow_slots(m) < 0))
		return NULL;
	if ((r = agg_probe(m, event, pid, tid, comm, stack, &j)))
		return r;
	if (m->n == m->cap) {
		size_t ncap = m->cap ? 2 * m->cap : 1024;
		pe_agg_row *nr = realloc(m->rows, ncap * sizeof(*nr));
		if (!nr)
			return NULL;
		m->rows = nr;
		m->cap = ncap;
	}
	r = &m->rows[m->n++];
	memset(r, 0, sizeof(*r));
	r->event = event;
	r->pid = pid;
	r->tid = tid;
	r->comm = comm;
	r->stack = stack;
	m->slots[j] = (uint32_t)m->n;
	return r;
}

void pe_aggmap_free(pe_aggmap *m)
{
	free(m->rows);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
