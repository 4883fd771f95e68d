/* tlmerge.c - timelines of many profiles summed by the time since each one's first sample. */
#include "config.h"

#include <stdlib.h>

#include "engine/hashmap.h"
#include "engine/many.h"

struct pe_tlmerge {
	uint64_t bucket_ns;
	pe_u64map idx;		/* bucket number + 1 -> index + 1 */
	pe_tlbucket *b;
	size_t n, cap;
	int done;		/* handed out sorted: the index is stale */
};

pe_tlmerge *pe_tlmerge_new(uint64_t bucket_ns)
{
	pe_tlmerge *t = calloc(1, sizeof(*t));

	if (!t || pe_u64map_grow(&t->idx) < 0) {
		free(t);
		return NULL;
	}
	t->bucket_ns = bucket_ns ? bucket_ns : 1;
	return t;
}

void pe_tlmerge_free(pe_tlmerge *t)
{
	if (!t)
		return;
	pe_u64map_free(&t->idx);
	free(t->b);
	free(t);
}

int pe_tlmerge_add(pe_tlmerge *t, const pe_timeline *tl, size_t max_buckets)
{
	size_t i;

	if (t->done)
		return -1;
	for (i = 0; i < tl->n; i++) {
		uint64_t off = tl->buckets[i].t_ns - tl->start_ns, key = off / t->bucket_ns + 1;
		pe_tlbucket *b;
		size_t slot;
		int found;

		if (2 * (t->idx.n + 1) > t->idx.cap && pe_u64map_grow(&t->idx) < 0)
			return -1;
		slot = pe_u64map_slot(&t->idx, key, &found);
		if (!found) {
			if (t->n >= max_buckets)
				return -1;
			if (t->n == t->cap) {
				size_t ncap = t->cap ? 2 * t->cap : 1024;
				pe_tlbucket *p = realloc(t->b, ncap * sizeof(*p));
				if (!p)
					return -1;
				t->b = p;
				t->cap = ncap;
			}
			t->idx.keys[slot] = key;
			t->idx.vals[slot] = (uint32_t)t->n + 1;
			t->idx.n++;
			t->b[t->n] = (pe_tlbucket){ (key - 1) * t->bucket_ns, 0, 0, 0 };
			t->n++;
		}
		b = &t->b[t->idx.vals[slot] - 1];
		b->samples += tl->buckets[i].samples;
		b->period += tl->buckets[i].period;
		b->profiles++;
	}
	return 0;
}

static int cmp_offset(const void *x, const void *y)
{
	uint64_t a = ((const pe_tlbucket *)x)->offset_ns, b = ((const pe_tlbucket *)y)->offset_ns;

	return a < b ? -1 : a > b;
}

const pe_tlbucket *pe_tlmerge_buckets(pe_tlmerge *t, size_t *n)
{
	qsort(t->b, t->n, sizeof(*t->b), cmp_offset);
	t->done = 1;
	*n = t->n;
	return t->b;
}
