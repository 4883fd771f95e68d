/* ordered.c - time-ordered delivery between FINISHED_ROUNDs; see ordered.h. */
#include <stdlib.h>
#include <string.h>

#include "ordered.h"
#include "pdfile.h"
#include "perr.h"

typedef struct oe_item {
	uint64_t time, seq, offset;
	unsigned data_file;
	int compressed;
	uint32_t size;
	uint8_t bytes[];	/* the record, file byte order */
} oe_item;

struct pd_ordered {
	oe_item **heap;
	size_t n, cap;
	uint64_t bytes, max_bytes, seq;
	uint64_t max_ts;	/* newest timestamp queued so far */
	uint64_t next_flush;	/* newest of the round before: flushable */
	uint64_t limit;		/* deliver queued records up to this time */
	int eof, overflow_warned, forcing;
	oe_item *current;	/* delivered last; freed on the next call */
	oe_item *round;		/* a FINISHED_ROUND held until the flush is done */
};

pd_ordered *ordered_new(uint64_t max_bytes)
{
	pd_ordered *o = calloc(1, sizeof(*o));

	if (o)
		o->max_bytes = max_bytes;
	return o;
}

void ordered_free(pd_ordered *o)
{
	size_t i;

	if (!o)
		return;
	for (i = 0; i < o->n; i++)
		free(o->heap[i]);
	free(o->heap);
	free(o->current);
	free(o->round);
	free(o);
}

static int before(const oe_item *a, const oe_item *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static int heap_push(pd_ordered *o, oe_item *it)
{
	size_t i;

	if (o->n == o->cap) {
		size_t ncap = o->cap ? o->cap * 2 : 1024;
		oe_item **nh = realloc(o->heap, ncap * sizeof(*nh));

		if (!nh)
			return -1;
		o->heap = nh;
		o->cap = ncap;
	}
	i = o->n++;
	while (i > 0 && before(it, o->heap[(i - 1) / 2])) {
		o->heap[i] = o->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	o->heap[i] = it;
	return 0;
}

static oe_item *heap_pop(pd_ordered *o)
{
	oe_item *top = o->heap[0], *last = o->heap[--o->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= o->n)
			break;
		if (c + 1 < o->n && before(o->heap[c + 1], o->heap[c]))
			c++;
		if (!before(o->heap[c], last))
			break;
		o->heap[i] = o->heap[c];
		i = c;
	}
	if (o->n)
		o->heap[i] = last;
	o->bytes -= top->size;
	return top;
}

static oe_item *copy_item(const pd_record *r, uint64_t time, uint64_t seq)
{
	oe_item *it = malloc(sizeof(*it) + r->size);

	if (!it)
		return NULL;
	it->time = time;
	it->seq = seq;
	it->offset = r->offset;
	it->data_file = r->data_file;
	it->compressed = r->compressed;
	it->size = r->size;
	memcpy(it->bytes, r->raw, r->size);
	return it;
}

static int emit(pd_file *f, oe_item *it, pd_record *r, pd_error *err)
{
	f->ordered->current = it;
	if (pd_redecode(f, it->bytes, it->size, r, err) < 0)
		return -1;
	r->offset = it->offset;
	r->data_file = it->data_file;
	r->compressed = it->compressed;
	return 1;
}

int ordered_next(pd_file *f, pd_record *r, pd_error *err)
{
	pd_ordered *o = f->ordered;

	free(o->current);
	o->current = NULL;
	for (;;) {
		uint64_t t;
		int rc, has = 0;
		oe_item *it;

		if (o->n && (o->forcing || o->eof || o->heap[0]->time <= o->limit)) {
			it = heap_pop(o);
			if (o->forcing && o->bytes <= o->max_bytes / 2)
				o->forcing = 0;
			return emit(f, it, r, err);
		}
		if (o->round) {
			it = o->round;
			o->round = NULL;
			return emit(f, it, r, err);
		}
		if (o->eof)
			return 0;
		rc = pd_next_unordered(f, r, err);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			o->eof = 1;
			continue;
		}
		if (r->type == PD_RECORD_FINISHED_ROUND) {
			o->limit = o->next_flush;
			o->next_flush = o->max_ts;
			if (!o->n)
				return 1;
			o->round = copy_item(r, 0, 0);
			if (!o->round)
				goto nomem;
			continue;
		}
		if (r->type == PD_RECORD_SAMPLE) {
			has = r->u.sample.event && (r->u.sample.fields & PD_SAMPLE_TIME);
			t = r->u.sample.time;
		} else {
			has = r->has_sample_id && (r->sample_id.fields & PD_SAMPLE_TIME);
			t = r->sample_id.time;
		}
		if (!has)
			return 1;
		it = copy_item(r, t, o->seq++);
		if (!it || heap_push(o, it) < 0) {
			free(it);
			goto nomem;
		}
		o->bytes += it->size;
		if (t > o->max_ts)
			o->max_ts = t;
		if (o->bytes > o->max_bytes) {
			if (!o->overflow_warned) {
				pd_warn(f, "ordered events: more than %llu bytes between rounds; "
					"delivering early, order may suffer",
					(unsigned long long)o->max_bytes);
				o->overflow_warned = 1;
			}
			o->forcing = 1;
		}
	}
nomem:
	pd_set_error(err, PD_ERR_NOMEM, r->offset, "out of memory queueing ordered events");
	return -1;
}
