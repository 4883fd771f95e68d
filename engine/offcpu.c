/* offcpu.c - switch-out samples held per thread until its switch-in: a linear-probing table by tid. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/offcpu.h"

typedef struct held {
	uint32_t tid;
	int used;
	int preempted;		/* runnable when it switched out */
	pe_sample s;
} held;

struct pe_offcpu {
	held *slots;
	size_t cap, n;		/* cap: a power of 2 */
	size_t drain;		/* where pe_offcpu_drain goes on */
	pe_offcpu_stats st;
};

int pe_offcpu_kind(const char *name)
{
	size_t l = strlen(PE_OFFCPU_SWITCH_EVENT);

	if (!name)
		return PE_OFFCPU_OTHER;
	if (!strncmp(name, PE_OFFCPU_SWITCH_EVENT, l) && (!name[l] || name[l] == ':'))
		return PE_OFFCPU_SWITCH;
	return !strcmp(name, PE_OFFCPU_EVENT) ? PE_OFFCPU_TIME : PE_OFFCPU_OTHER;
}

pe_offcpu *pe_offcpu_new(void)
{
	return calloc(1, sizeof(pe_offcpu));
}

void pe_offcpu_free(pe_offcpu *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

static size_t home(const pe_offcpu *t, uint32_t tid)
{
	return ((uint64_t)tid * 0x9e3779b97f4a7c15ULL >> 20) & (t->cap - 1);
}

static held *find(const pe_offcpu *t, uint32_t tid)
{
	size_t j;

	if (!t->cap)
		return NULL;
	for (j = home(t, tid); t->slots[j].used; j = (j + 1) & (t->cap - 1))
		if (t->slots[j].tid == tid)
			return &t->slots[j];
	return NULL;
}

static int grow(pe_offcpu *t)
{
	size_t ncap = t->cap ? 2 * t->cap : 256, i;
	held *old = t->slots, *nw = calloc(ncap, sizeof(*nw));

	if (!nw)
		return -1;
	t->slots = nw;
	for (i = 0; i < t->cap; i++)
		if (old[i].used) {
			size_t j = ((uint64_t)old[i].tid * 0x9e3779b97f4a7c15ULL >> 20) & (ncap - 1);
			while (nw[j].used)
				j = (j + 1) & (ncap - 1);
			nw[j] = old[i];
		}
	t->cap = ncap;
	free(old);
	return 0;
}

/* Empties slot h, moving later entries of its run back (no tombstones). */
static void take_out(pe_offcpu *t, held *h)
{
	size_t i = (size_t)(h - t->slots), j = i;

	t->slots[i].used = 0;
	t->n--;
	for (;;) {
		size_t k;

		j = (j + 1) & (t->cap - 1);
		if (!t->slots[j].used)
			return;
		k = home(t, t->slots[j].tid);
		/* j's entry may fill the hole at i unless its home lies in (i, j] */
		if ((i < j && (k <= i || k > j)) || (i > j && k <= i && k > j)) {
			t->slots[i] = t->slots[j];
			t->slots[j].used = 0;
			i = j;
		}
	}
}

int pe_offcpu_hold(pe_offcpu *t, const pe_sample *s, pe_sample *out)
{
	held *h;
	size_t j;

	if (s->tid == UINT32_MAX || s->pid == UINT32_MAX)
		return 2;	/* a dying task does not come back */
	if ((h = find(t, s->tid))) {
		/* switched out twice: the switch-in between was not recorded */
		*out = h->s;
		out->offcpu = 0;
		t->st.never_in++;
		h->s = *s;
		h->preempted = 0;
		return 1;
	}
	if (t->n >= PE_OFFCPU_MAX_THREADS)
		return 2;
	if (2 * (t->n + 1) > t->cap && grow(t) < 0)
		return -1;
	for (j = home(t, s->tid); t->slots[j].used; j = (j + 1) & (t->cap - 1))
		;
	t->slots[j].used = 1;
	t->slots[j].preempted = 0;
	t->slots[j].tid = s->tid;
	t->slots[j].s = *s;
	t->n++;
	return 0;
}

void pe_offcpu_out(pe_offcpu *t, uint32_t tid, int preempt)
{
	held *h = find(t, tid);

	if (h && preempt)
		h->preempted = 1;
}

int pe_offcpu_in(pe_offcpu *t, uint32_t tid, uint64_t time, pe_sample *out)
{
	held *h = find(t, tid);

	if (!h) {
		t->st.unmatched_in++;
		return 0;
	}
	*out = h->s;
	out->offcpu = time > h->s.time && !h->preempted ? time - h->s.time : 0;
	t->st.intervals++;
	t->st.preempted += h->preempted;
	t->st.ns += out->offcpu;
	take_out(t, h);
	return 1;
}

int pe_offcpu_drain(pe_offcpu *t, pe_sample *out)
{
	for (; t->drain < t->cap; t->drain++)
		if (t->slots[t->drain].used) {
			*out = t->slots[t->drain].s;
			out->offcpu = 0;
			t->slots[t->drain].used = 0;
			t->n--;
			t->st.never_in++;
			return 1;
		}
	return 0;
}

void pe_offcpu_get_stats(const pe_offcpu *t, pe_offcpu_stats *out)
{
	*out = t->st;
}
