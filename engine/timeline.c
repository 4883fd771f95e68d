/* timeline.c - samples of the folded event per time bucket, from the blocks; off-CPU time spread over the buckets it covers. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/log.h"
#include "engine/query-int.h"

#define PE_TIMELINE_DENSE 4000000	/* buckets counted in an array up to this */

typedef struct tpoint {
	uint64_t time, period, offcpu;
} tpoint;

static int cmp_tpoint(const void *a, const void *b)
{
	uint64_t x = ((const tpoint *)a)->time, y = ((const tpoint *)b)->time;

	return x < y ? -1 : x > y;
}

typedef struct points {
	const pe_model *m;
	const unsigned char *plan;
	pe_block *b;
	uint8_t *raw;
	tpoint *p;
	size_t n, cap;
	uint64_t start, last;	/* first sample, last sample or end of an off-CPU interval */
} points;

/* The matching samples' times, periods and off-CPU time of one block. */
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
		uint64_t end;

		if (!pe_in_set(c->m, c->plan, b->event[k]))
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
		/* an event counts its period or its off-CPU time, as pe_select does */
		c->p[c->n].period = c->plan[b->event[k]] == PE_PLAN_OFFCPU ? 0 : b->period[k];
		c->p[c->n++].offcpu = b->offcpu[k];
		if (b->time[k] < c->start)
			c->start = b->time[k];
		end = b->time[k] + b->offcpu[k] < b->time[k] ? UINT64_MAX : b->time[k] + b->offcpu[k];
		if (end > c->last)
			c->last = end;
	}
	return 0;
}

/* A non-empty bucket; -1 out of memory. */
static int bucket_add(pe_timeline *t, size_t *cap, uint64_t t_ns, uint64_t samples,
		      uint64_t period, uint64_t offcpu)
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
	t->buckets[t->n].period = period;
	t->buckets[t->n++].offcpu = offcpu;
	return 0;
}

/* Too many buckets to count in arrays: in time order, non-empty buckets
 * only, each sample's off-CPU time in its own bucket. */
static int sparse_buckets(points *c, pe_timeline *t)
{
	uint64_t bucket_ns = t->bucket_ns;
	size_t cap = 0, i;

	qsort(c->p, c->n, sizeof(*c->p), cmp_tpoint);
	for (i = 0; i < c->n; ) {
		uint64_t k = (c->p[i].time - c->start) / bucket_ns, n = 0, p = 0, o = 0;
		for (; i < c->n && (c->p[i].time - c->start) / bucket_ns == k; i++) {
			n++;
			p += c->p[i].period;
			o += c->p[i].offcpu;
		}
		if (bucket_add(t, &cap, c->start + k * bucket_ns, n, p, o) < 0)
			return -1;
	}
	return 0;
}

/* The interval [time, time + offcpu) into off[]: a part of its first and
 * last buckets, whole ones between (through the difference array whole[]). */
static void spread(const tpoint *p, uint64_t start, uint64_t bucket_ns, uint64_t nb,
		   uint64_t *off, int64_t *whole)
{
	uint64_t a = p->time - start, b = a + p->offcpu, ka = a / bucket_ns, kb;

	if (b < a || b > nb * bucket_ns)
		b = nb * bucket_ns;
	kb = b / bucket_ns;
	if (ka == kb || (kb == ka + 1 && b % bucket_ns == 0)) {
		off[ka] += b - a;
		return;
	}
	off[ka] += (ka + 1) * bucket_ns - a;
	if (kb < nb)
		off[kb] += b - kb * bucket_ns;
	/* whole buckets ka + 1 .. kb - 1 */
	whole[ka + 1]++;
	whole[kb]--;
}

static int make_buckets(points *c, pe_timeline *t)
{
	uint64_t bucket_ns = t->bucket_ns, nb = (c->last - c->start) / bucket_ns + 1;
	uint64_t *cnt, *per, *off;
	int64_t *whole, run = 0;
	size_t cap = 0, i;
	int rc = -1;

	t->start_ns = c->start;
	if (nb > PE_TIMELINE_DENSE)
		return sparse_buckets(c, t);
	cnt = calloc(nb, sizeof(*cnt));
	per = calloc(nb, sizeof(*per));
	off = calloc(nb, sizeof(*off));
	whole = calloc(nb + 1, sizeof(*whole));
	if (!cnt || !per || !off || !whole)
		goto out;
	for (i = 0; i < c->n; i++) {
		uint64_t k = (c->p[i].time - c->start) / bucket_ns;
		cnt[k]++;
		per[k] += c->p[i].period;
		if (c->p[i].offcpu)
			spread(&c->p[i], c->start, bucket_ns, nb, off, whole);
	}
	for (i = 0; i < nb; i++) {
		run += whole[i];
		off[i] += (uint64_t)run * bucket_ns;
		if ((cnt[i] || off[i]) &&
		    bucket_add(t, &cap, c->start + i * bucket_ns, cnt[i], per[i], off[i]) < 0)
			goto out;
	}
	rc = 0;
out:
	free(cnt);
	free(per);
	free(off);
	free(whole);
	return rc;
}

int pe_timeline_measured(const pe_model *m, const pe_filter *f, uint64_t bucket_ns,
			 const pe_blocks *blocks, pe_timeline *out)
{
	points c;
	unsigned char *plan = NULL;
	size_t i;
	int rc = -1, none;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	out->bucket_ns = bucket_ns ? bucket_ns : 1;
	if (!(plan = pe_event_plan(m, f, &none)))
		return none ? 0 : -1;
	/* the event named: the one whose period counts, else the off-CPU one */
	for (i = 0; i < m->nr_events && !out->event; i++)
		if (plan[i] == PE_PLAN_PERIOD)
			out->event = m->event_names[i];
	for (i = 0; i < m->nr_events && !out->event; i++)
		if (plan[i])
			out->event = m->event_names[i];
	c.m = m;
	c.start = UINT64_MAX;
	c.plan = plan;
	c.b = malloc(sizeof(*c.b));
	c.raw = malloc(PE_BLOCK_RAW_MAX);
	if (!c.b || !c.raw || !blocks || !blocks->read)
		goto out;
	/* the matching samples' times first: buckets count from the earliest */
	if (blocks->read(blocks->src, 0, 0, block_points, &c))
		goto out;
	rc = c.n ? make_buckets(&c, out) : 0;
out:
	if (rc < 0)
		pe_timeline_free(out);
	free(plan);
	free(c.b);
	free(c.raw);
	free(c.p);
	return rc;
}

int pe_timeline_make(const pe_model *m, const char *event, uint64_t bucket_ns,
		     const pe_blocks *blocks, pe_timeline *out)
{
	pe_filter f;

	memset(&f, 0, sizeof(f));
	f.event = event;
	f.pid = f.tid = -1;
	return pe_timeline_measured(m, &f, bucket_ns, blocks, out);
}

void pe_timeline_free(pe_timeline *t)
{
	free(t->buckets);
	t->buckets = NULL;
	t->n = 0;
}
