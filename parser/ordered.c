/*
 * ordered.c - time-ordered delivery between FINISHED_ROUNDs; see ordered.h.
 *
 * Queued records are copied, in arrival order, into blocks of OE_BLOCK
 * bytes (no allocation per record); a block is reused once every record in
 * it has been delivered. Their keys (time, record) wait unsorted until a
 * round ends, then are sorted together with those still held back by a
 * natural merge sort: perf writes each CPU's buffer in time order, so a
 * round is a few ascending runs and sorting costs about n log(runs).
 * A sample is decoded only up to its time when queued, fully when delivered.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ordered.h"
#include "pdfile.h"
#include "perr.h"

#define OE_BLOCK	(1u << 20)	/* holds at least one largest record */
#define OE_SPARE_BLOCKS	4		/* empty blocks kept for reuse */

typedef struct oe_block oe_block;

typedef struct oe_item {
	oe_block *block;
	uint64_t offset;
	uint32_t size;
	uint32_t data_file;
	int32_t compressed;
	uint32_t pad;
	uint8_t bytes[];	/* the record, file byte order, 8-aligned */
} oe_item;

_Static_assert(offsetof(oe_item, bytes) % 8 == 0, "queued records stay 8-aligned");

struct oe_block {
	oe_block *prev, *next;	/* in the list of blocks in use, or spare */
	size_t used, live;	/* bytes handed out; records not yet delivered */
	uint8_t data[];
};

_Static_assert(offsetof(oe_block, data) % 8 == 0, "items start 8-aligned");

typedef struct oe_key {
	uint64_t time;
	oe_item *it;
} oe_key;

struct pd_ordered {
	oe_block *fill;		/* the block new records go to */
	oe_block *inuse;	/* blocks holding records, fill included */
	oe_block *spare;	/* empty blocks */
	size_t nr_spare;
	uint64_t bytes;		/* record bytes queued */
	uint64_t mem;		/* bytes of blocks in use (fill included) */
	uint64_t max_bytes, max_mem;
	/* queued keys: [head, nsorted) ascending, [nsorted, n) arrival order */
	oe_key *keys, *tmp;
	size_t head, nsorted, n, cap;
	uint64_t max_ts;	/* newest timestamp queued so far */
	uint64_t next_flush;	/* newest of the round before: flushable */
	uint64_t limit;		/* deliver queued records up to this time */
	int eof, overflow_warned, forcing;
	oe_item *current;	/* delivered last; released on the next call */
	oe_item *round;		/* a FINISHED_ROUND held until the flush is done */
	pd_record rec;		/* a record as read, before it is queued */
};

pd_ordered *ordered_new(uint64_t max_bytes)
{
	pd_ordered *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->max_bytes = max_bytes;
	/* blocks partly held by late records must not grow without bound */
	o->max_mem = 2 * max_bytes > 4ULL * OE_BLOCK ? 2 * max_bytes : 4ULL * OE_BLOCK;
	return o;
}

static void block_free_list(oe_block *b)
{
	while (b) {
		oe_block *next = b->next;

		free(b);
		b = next;
	}
}

void ordered_free(pd_ordered *o)
{
	if (!o)
		return;
	block_free_list(o->inuse);
	block_free_list(o->spare);
	free(o->keys);
	free(o->tmp);
	free(o);
}

static void block_unlink(pd_ordered *o, oe_block *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		o->inuse = b->next;
	if (b->next)
		b->next->prev = b->prev;
}

/* An empty block leaves the in-use list: kept as a spare, or freed. */
static void block_retire(pd_ordered *o, oe_block *b)
{
	block_unlink(o, b);
	o->mem -= OE_BLOCK;
	if (o->nr_spare < OE_SPARE_BLOCKS) {
		b->next = o->spare;
		o->spare = b;
		o->nr_spare++;
	} else {
		free(b);
	}
}

/* A delivered record is done with: its block is reused once empty. */
static void item_release(pd_ordered *o, oe_item *it)
{
	oe_block *b;

	if (!it)
		return;
	b = it->block;
	if (--b->live)
		return;
	if (b == o->fill)
		b->used = 0;	/* empty: fill it again from the start */
	else
		block_retire(o, b);
}

static oe_item *item_copy(pd_ordered *o, const pd_record *r)
{
	size_t need = (sizeof(oe_item) + r->size + 7) & ~(size_t)7;
	oe_item *it;

	if (need > OE_BLOCK)
		return NULL;
	if (!o->fill || OE_BLOCK - o->fill->used < need) {
		oe_block *b = o->spare, *old = o->fill;

		if (b) {
			o->spare = b->next;
			o->nr_spare--;
		} else if (!(b = malloc(sizeof(*b) + OE_BLOCK))) {
			return NULL;
		}
		b->used = b->live = 0;
		b->prev = NULL;
		b->next = o->inuse;
		if (o->inuse)
			o->inuse->prev = b;
		o->inuse = b;
		o->mem += OE_BLOCK;
		o->fill = b;
		/* the block left behind goes when its last record does */
		if (old && !old->live)
			block_retire(o, old);
	}
	it = (oe_item *)(void *)(o->fill->data + o->fill->used);
	o->fill->used += need;
	o->fill->live++;
	it->block = o->fill;
	it->offset = r->offset;
	it->size = r->size;
	it->data_file = r->data_file;
	it->compressed = r->compressed;
	it->pad = 0;
	memcpy(it->bytes, r->raw, r->size);
	return it;
}

/* Stable merge of the ascending runs src[a, b) and src[b, c) into dst[a, c). */
static void merge_runs(const oe_key *src, oe_key *dst, size_t a, size_t b, size_t c)
{
	size_t i = a, j = b, k = a;

	while (i < b && j < c)
		dst[k++] = src[j].time < src[i].time ? src[j++] : src[i++];
	while (i < b)
		dst[k++] = src[i++];
	while (j < c)
		dst[k++] = src[j++];
}

/* The end of the ascending run that starts at a. */
static size_t run_end(const oe_key *k, size_t a, size_t n)
{
	size_t b = a + 1;

	while (b < n && k[b].time >= k[b - 1].time)
		b++;
	return b;
}

/* Sort every queued key by time, arrival order kept among equal times. */
static int sort_queue(pd_ordered *o)
{
	oe_key *src, *dst, *t;
	size_t n, a, b, c, runs;

	if (o->head) {
		memmove(o->keys, o->keys + o->head, (o->n - o->head) * sizeof(*o->keys));
		o->n -= o->head;
		o->nsorted -= o->head;
		o->head = 0;
	}
	n = o->n;
	if (o->nsorted == n)
		return 0;
	if (!o->tmp) {
		o->tmp = malloc(o->cap * sizeof(*o->tmp));
		if (!o->tmp)
			return -1;
	}
	src = o->keys;
	dst = o->tmp;
	do {
		runs = 0;
		for (a = 0; a < n; a = c) {
			b = run_end(src, a, n);
			c = b < n ? run_end(src, b, n) : n;
			merge_runs(src, dst, a, b, c);
			runs++;
		}
		t = src;
		src = dst;
		dst = t;
	} while (runs > 1);
	if (src != o->keys) {
		/* the sorted keys are in the other buffer: swap the buffers */
		o->tmp = o->keys;
		o->keys = src;
	}
	o->nsorted = n;
	return 0;
}

static int queue_push(pd_ordered *o, uint64_t time, oe_item *it)
{
	if (o->n == o->cap) {
		size_t ncap = o->cap ? o->cap * 2 : 4096;
		oe_key *nk;

		if (o->head && o->head >= o->n / 2) {
			/* room at the front: move the queue down instead */
			memmove(o->keys, o->keys + o->head, (o->n - o->head) * sizeof(*o->keys));
			o->n -= o->head;
			o->nsorted -= o->head;
			o->head = 0;
		} else {
			nk = realloc(o->keys, ncap * sizeof(*nk));
			if (!nk)
				return -1;
			o->keys = nk;
			free(o->tmp);	/* sized again by the next sort */
			o->tmp = NULL;
			o->cap = ncap;
		}
	}
	o->keys[o->n].time = time;
	o->keys[o->n].it = it;
	o->n++;
	return 0;
}

static int emit(pd_file *f, oe_item *it, pd_record *r, pd_error *err)
{
	f->ordered->current = it;
	r->offset = it->offset;
	r->data_file = it->data_file;
	r->compressed = it->compressed;
	if (pd_redecode(f, it->bytes, it->size, r, err) < 0)
		return -1;
	r->offset = it->offset;
	r->data_file = it->data_file;
	r->compressed = it->compressed;
	return 1;
}

/* Read the next record into o->rec, samples decoded up to their time
 * only, leaving the caller's record (and the decoder's knowledge that it
 * holds a clean sample) as it was. */
static int read_partial(pd_file *f, pd_ordered *o, pd_error *err)
{
	const pd_record *clean_rec = f->clean_rec;
	const pd_event *clean_ev = f->clean_ev;
	int saved = f->opt.no_decode_samples, rc;

	f->opt.no_decode_samples = 1;
	f->prefix_only = 1;
	rc = pd_next_unordered(f, &o->rec, err);
	f->prefix_only = 0;
	f->opt.no_decode_samples = saved;
	f->clean_rec = clean_rec == &o->rec ? NULL : clean_rec;
	f->clean_ev = clean_ev;
	return rc;
}

/* Hand o->rec to the caller as it is (not queued). */
static int pass_through(pd_file *f, pd_ordered *o, pd_record *r, pd_error *err)
{
	if (o->rec.type == PD_RECORD_SAMPLE && !f->opt.no_decode_samples) {
		/* decoded only partly: decode it fully where the caller wants it */
		r->offset = o->rec.offset;
		if (pd_redecode(f, o->rec.raw, o->rec.size, r, err) < 0)
			return -1;
		r->offset = o->rec.offset;
		r->data_file = o->rec.data_file;
		r->compressed = o->rec.compressed;
		return 1;
	}
	if (f->clean_rec == r)
		f->clean_rec = NULL;
	*r = o->rec;
	if (r->type == PD_RECORD_SAMPLE)	/* decoded up to its time only */
		memset(&r->u.sample.addr, 0, sizeof(r->u.sample) - offsetof(pd_sample, addr));
	return 1;
}

static int queue_empty(const pd_ordered *o)
{
	return o->head == o->n;
}

int ordered_next(pd_file *f, pd_record *r, pd_error *err)
{
	pd_ordered *o = f->ordered;

	item_release(o, o->current);
	o->current = NULL;
	for (;;) {
		uint64_t t;
		int rc, has = 0;
		oe_item *it;

		if (o->forcing && (queue_empty(o) ||
				   (o->bytes <= o->max_bytes / 2 && o->mem <= o->max_mem / 2)))
			o->forcing = 0;
		if (o->head < o->nsorted &&
		    (o->forcing || o->eof || o->keys[o->head].time <= o->limit)) {
			it = o->keys[o->head++].it;
			o->bytes -= it->size;
			/* the queued records were copied long ago, out of the
			 * caches by now: ask for the next one's lines early */
			if (o->head + 1 < o->nsorted) {
				const uint8_t *nx = o->keys[o->head + 1].it->bytes;

				__builtin_prefetch(nx);
				__builtin_prefetch(nx + 64);
				__builtin_prefetch(nx + 128);
			}
			return emit(f, it, r, err);
		}
		if (o->round) {
			it = o->round;
			o->round = NULL;
			return emit(f, it, r, err);
		}
		if (o->eof)
			return 0;
		rc = read_partial(f, o, err);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			o->eof = 1;
			if (sort_queue(o) < 0)
				goto nomem;
			continue;
		}
		if (o->rec.type == PD_RECORD_FINISHED_ROUND) {
			o->limit = o->next_flush;
			o->next_flush = o->max_ts;
			if (queue_empty(o))
				return pass_through(f, o, r, err);
			o->round = item_copy(o, &o->rec);
			if (!o->round || sort_queue(o) < 0)
				goto nomem;
			continue;
		}
		if (o->rec.type == PD_RECORD_SAMPLE) {
			/* one the reader does not want is neither copied nor sorted */
			if (f->opt.keep_sample && o->rec.u.sample.event &&
			    !f->opt.keep_sample(f->opt.keep_ctx, &o->rec.u.sample))
				continue;
			has = o->rec.u.sample.event && (o->rec.u.sample.fields & PD_SAMPLE_TIME);
			t = o->rec.u.sample.time;
		} else {
			has = o->rec.has_sample_id && (o->rec.sample_id.fields & PD_SAMPLE_TIME);
			t = o->rec.sample_id.time;
		}
		if (!has)
			return pass_through(f, o, r, err);
		it = item_copy(o, &o->rec);
		if (!it)
			goto nomem;
		if (queue_push(o, t, it) < 0) {
			item_release(o, it);
			goto nomem;
		}
		o->bytes += it->size;
		if (t > o->max_ts)
			o->max_ts = t;
		if (o->bytes > o->max_bytes || o->mem > o->max_mem) {
			if (!o->overflow_warned) {
				pd_warn(f, "ordered events: more than %llu bytes between rounds; "
					"delivering early, order may suffer",
					(unsigned long long)o->max_bytes);
				o->overflow_warned = 1;
			}
			o->forcing = 1;
			if (sort_queue(o) < 0)
				goto nomem;
		}
	}
nomem:
	pd_set_error(err, PD_ERR_NOMEM, o->rec.offset, "out of memory queueing ordered events");
	return -1;
}
