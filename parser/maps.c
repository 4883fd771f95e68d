/*
 * maps.c - sorted, non-overlapping address maps of a process.
 */
#include "maps.h"

#include <stdlib.h>
#include <string.h>

#define MAPS_MAX 1000000	/* per address space: a file cannot grow it further */

struct pd_maps {
	long refs;
	uint64_t stamp;		/* set by the symbolizer: its last change */
	pd_dso_cache *cache;
	pd_map *v;
	size_t n, cap;
};

pd_maps *pd_maps_new(pd_dso_cache *cache)
{
	pd_maps *m = calloc(1, sizeof(*m));

	if (m) {
		m->refs = 1;
		m->cache = cache;
	}
	return m;
}

static void map_clear(pd_maps *m, pd_map *x)
{
	if (!x->name_is_dso_path)
		free(x->name);
	free(x->fixed_sym);
	pd_dso_put(m->cache, x->dso);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* copy strings; dso reference is taken by the caller. A name that is the
 * dso's path is not copied: the map holds the dso, whose path stays (a
 * system-wide recording maps the same libraries in thousands of
 * processes). */
static int map_copy(pd_map *dst, const pd_map *src)
{
	*dst = *src;
	dst->name_is_dso_path = src->dso && src->name &&
				(src->name_is_dso_path || !strcmp(src->name, pd_dso_path(src->dso)));
	dst->name = dst->name_is_dso_path ? (char *)pd_dso_path(src->dso) : dup_or_null(src->name);
	dst->fixed_sym = dup_or_null(src->fixed_sym);
	if ((src->name && !dst->name) || (src->fixed_sym && !dst->fixed_sym)) {
		if (!dst->name_is_dso_path)
			free(dst->name);
		free(dst->fixed_sym);
		return -1;
	}
	return 0;
}

pd_maps *pd_maps_clone(const pd_maps *src)
{
	pd_maps *m = pd_maps_new(src->cache);
	size_t i;

	if (!m)
		return NULL;
	m->v = calloc(src->n ? src->n : 1, sizeof(*m->v));
	if (!m->v) {
		free(m);
		return NULL;
	}
	m->cap = src->n ? src->n : 1;
	for (i = 0; i < src->n; i++) {
		if (map_copy(&m->v[m->n], &src->v[i]) < 0)
			break;
		pd_dso_ref(src->cache, m->v[m->n].dso);	/* one more holder */
		m->n++;
	}
	return m;
}

void pd_maps_ref(pd_maps *m)
{
	m->refs++;
}

void pd_maps_unref(pd_maps *m)
{
	size_t i;

	if (!m || --m->refs > 0)
		return;
	for (i = 0; i < m->n; i++)
		map_clear(m, &m->v[i]);
	free(m->v);
	free(m);
}

static int reserve(pd_maps *m, size_t extra)
{
	pd_map *p;
	size_t cap;

	if (m->n + extra <= m->cap)
		return 0;
	if (m->n + extra > MAPS_MAX)
		return -1;
	cap = m->cap ? m->cap * 2 : 16;
	while (cap < m->n + extra)
		cap *= 2;
	p = realloc(m->v, cap * sizeof(*p));
	if (!p)
		return -1;
	m->v = p;
	m->cap = cap;
	return 0;
}

/* first map with end > addr */
static size_t lower(const pd_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int pd_maps_insert(pd_maps *m, const pd_map *map)
{
	size_t i, j;
	pd_map nm;

	if (map->end <= map->start || reserve(m, 2) < 0 || map_copy(&nm, map) < 0) {
		pd_dso_put(m->cache, map->dso);
		return -1;
	}
	i = lower(m, map->start);
	/* a map that straddles the new one's start keeps its head and, if it
	 * reaches past the new end, its tail */
	if (i < m->n && m->v[i].start < map->start) {
		pd_map *old = &m->v[i];

		if (old->end > map->end) {
			pd_map tail;

			if (map_copy(&tail, old) < 0) {
				map_clear(m, &nm);
				return -1;
			}
			pd_dso_ref(m->cache, old->dso);
			tail.pgoff += map->end - old->start;
			tail.start = map->end;
			memmove(&m->v[i + 2], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
			m->v[i + 1] = tail;
			m->n++;
		}
		old->end = map->start;
		i++;
	}
	/* maps inside the new one go; one reaching past its end keeps its tail */
	j = i;
	while (j < m->n && m->v[j].end <= map->end)
		j++;
	if (j < m->n && m->v[j].start < map->end) {
		m->v[j].pgoff += map->end - m->v[j].start;
		m->v[j].start = map->end;
	}
	for (size_t k = i; k < j; k++)
		map_clear(m, &m->v[k]);
	if (j != i + 1) {
		memmove(&m->v[i + 1], &m->v[j], (m->n - j) * sizeof(*m->v));
		m->n = m->n - (j - i) + 1;
	}
	m->v[i] = nm;
	return 0;
}

void pd_maps_remove(pd_maps *m, uint64_t start)
{
	size_t i = lower(m, start);

	if (i >= m->n || m->v[i].start != start)
		return;
	map_clear(m, &m->v[i]);
	memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
	m->n--;
}

const pd_map *pd_maps_find(const pd_maps *m, uint64_t addr)
{
	size_t i = lower(m, addr);

	if (i < m->n && m->v[i].start <= addr)
		return &m->v[i];
	return NULL;
}

uint64_t pd_maps_dso_low(const pd_maps *m, const pd_dso *dso)
{
	size_t i;

	/* sorted by start: the first of the dso is the lowest */
	for (i = 0; dso && i < m->n; i++)
		if (m->v[i].dso == dso)
			return m->v[i].start;
	return 0;
}

size_t pd_maps_count(const pd_maps *m)
{
	return m->n;
}

uint64_t pd_maps_stamp(const pd_maps *m)
{
	return m->stamp;
}

void pd_maps_set_stamp(pd_maps *m, uint64_t stamp)
{
	m->stamp = stamp;
}
