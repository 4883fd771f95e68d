/* timeline.c - samples of the folded event per time bucket, from the blocks. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/log.h"
#include "engine/query-int.h"

#define PE_TIMELINE_DENSE 4000000	/* buckets counted in an array up to this */

typedef struct tpoint {
	uint64_t time, period;
} tpoint;

static int cmp_tpoint(const void *a, const void *b)
{
	uint64_t x = ((const tpoint *)a)->time, y = ((const tpoint *)b)->time;

	return x < y ? -1 : x > y;
}

typedef struct points {
	const pe_model *m;
	const unsigned char *set;
	pe_block *b;
	uint8_t *raw;
	tpoint *p;
	size_t n, cap;
	uint64_t start, last;
} points;

/* The matching samples' times and periods of one block. */
static int block_points(void *ctx, int64_t nr, const void *data, size_t len)
{
	points *c = ctx;
	pe_block *b = c->b;
	uint32_t k;

	if (pe_block_decode(data, len, nr, c->raw, b) < 0) {
		pe_warn("msg=\"corrupt sample block\" profile=%lld", (long long)c->m->id);
		return -1;
	}
	for (k = 0; k < b->n; k++) {
		if (!pe_in_set(c->m, c->set, b->event[k]))
			continue;
		if (c->n == c->cap) {
			size_t ncap = c->cap ? 2 * c->cap : 65536;
			tpoint *p = realloc(c->p, ncap * sizeof(*p));
			if (!p)
				return -1;
			c->p = p;
			c->cap = ncap;
		}
		c->p[c->n].time = b->time[k];
		c->p[c->n++].period = b->period[k];
		if (b->time[k] < c->start)
			c->start = b->time[k];
		if (b->time[k] > c->last)
			c->last = b->time[k];
	}
	return 0;
}

/* A non-empty bucket; -1 out of memory. */
static int bucket_add(pe_timeline *t, size_t *cap, uint64_t t_ns, uint64_t samples,
		      uint64_t period)
{
	if (t->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 1024;
		pe_bucket *p = realloc(t->buckets, ncap * sizeof(*p));
		if (!p)
			return -1;
		t->buckets = p;
		*cap = ncap;
	}
	t->buckets[t->n].t_ns = t_ns;
	t->buckets[t->n].samples = samples;
	t->buckets[t->n++].period = period;
	return 0;
}

static int make_buckets(points *c, pe_timeline *t)
{
	uint64_t bucket_ns = t->bucket_ns, nb = (c->last - c->start) / bucket_ns + 1;
	uint64_t *cnt, *per;
	size_t cap = 0, i;

	t->start_ns = c->start;
	if (nb > PE_TIMELINE_DENSE) {
		/* sparse: bucket in time order, non-empty buckets only */
		qsort(c->p, c->n, sizeof(*c->p), cmp_tpoint);
		for (i = 0; i < c->n; ) {
			uint64_t k = (c->p[i].time - c->start) / bucket_ns, n = 0, p = 0;
			for (; i < c->n && (c->p[i].time - c->start) / bucket_ns == k; i++) {
				n++;
				p += c->p[i].period;
			}
			if (bucket_add(t, &cap, c->start + k * bucket_ns, n, p) < 0)
				return -1;
		}
		return 0;
	}
	cnt = calloc(nb, sizeof(*cnt));
	per = calloc(nb, sizeof(*per));
	if (!cnt || !per) {
		free(cnt);
		free(per);
		return -1;
	}
	for (i = 0; i < c->n; i++) {
		uint64_t k = (c->p[i].time - c->start) / bucket_ns;
		cnt[k]++;
		per[k] += c->p[i].period;
	}
	for (i = 0; i < nb; i++)
		if (cnt[i] && bucket_add(t, &cap, c->start + i * bucket_ns, cnt[i], per[i]) < 0)
			break;
	free(cnt);
	free(per);
	return i < nb ? -1 : 0;
}

int pe_timeline_make(const pe_model *m, const char *event, uint64_t bucket_ns,
		     const pe_blocks *blocks, pe_timeline *out)
{
	points c;
	unsigned char *set = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	out->bucket_ns = bucket_ns ? bucket_ns : 1;
	out->event = pe_fold_event(m, event);
	if (!out->event)
		return 0;
	c.m = m;
	c.start = UINT64_MAX;
	c.set = set = pe_event_set(m, out->event);
	c.b = malloc(sizeof(*c.b));
	c.raw = malloc(PE_BLOCK_RAW_MAX);
	if (!set || !c.b || !c.raw || !blocks || !blocks->read)
		goto out;
	/* the matching samples' times first: buckets count from the earliest */
	if (blocks->read(blocks->src, 0, 0, block_points, &c))
		goto out;
	rc = c.n ? make_buckets(&c, out) : 0;
out:
	if (rc < 0)
		pe_timeline_free(out);
	free(set);
	free(c.b);
	free(c.raw);
	free(c.p);
	return rc;
}

void pe_timeline_free(pe_timeline *t)
{
	free(t->buckets);
	t->buckets = NULL;
	t->n = 0;
}
