/* builder.c - interning a parse as it runs, into rows, blocks and the aggregate. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/builder.h"
#include "engine/hashmap.h"

struct pe_builder {
	uint64_t nr_samples, nr_comms, nr_maps, nr_blocks, nr_frame_offsets;
	pe_strmap strings;
	uint32_t next_string;
	pe_u64map frames;	/* (name << 32 | dso) << 1 | 1 -> frame id */
	uint32_t next_frame;
	pe_u64map stacks;	/* parent << 32 | frame -> node id */
	uint32_t next_stack;
	pe_row *rows;		/* rows not stored yet */
	size_t nr_rows, cap_rows;
	pe_block *blk;		/* the block being filled */
	pe_block_packer *packer;
	pe_aggmap agg;		/* (event, pid, tid, comm, stack) -> counts */
	pe_aggmap foffs;	/* (frame, offset) pairs seen: pid = frame,
				   tid:comm = the offset */
	pe_aggmap leaves;	/* (event, frame, address) -> counts: pid = frame,
				   tid:comm = the address */
	size_t leaf_next;	/* leaves made into rows so far */
	uint32_t *leaf_order;	/* the first leaf_ordered leaves by the key
				   they are stored under */
	size_t leaf_ordered;
	uint64_t leaf_dropped;
	pe_builder_flush_fn flush;	/* NULL: the caller takes rows and blocks */
	void *flush_ctx;
	int failed;
};

pe_builder *pe_builder_new(void)
{
	pe_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->blk = calloc(1, sizeof(*b->blk));
	b->packer = pe_block_packer_new();
	if (!b->blk || !b->packer || pe_u64map_grow(&b->frames) < 0 ||
	    pe_u64map_grow(&b->stacks) < 0 || pe_strmap_grow(&b->strings) < 0) {
		pe_builder_free(b);
		return NULL;
	}
	return b;
}

void pe_builder_rows_done(pe_builder *b)
{
	size_t i;

	for (i = 0; i < b->nr_rows; i++)
		if (b->rows[i].owned) {
			free(b->rows[i].text[0]);
			free(b->rows[i].text[1]);
		}
	b->nr_rows = 0;
}

void pe_rows_free(pe_row *rows, size_t n)
{
	size_t i;

	for (i = 0; rows && i < n; i++)
		if (rows[i].owned) {
			free(rows[i].text[0]);
			free(rows[i].text[1]);
		}
	free(rows);
}

pe_row *pe_builder_take_rows(pe_builder *b, size_t *n)
{
	pe_row *r = b->rows;

	*n = b->nr_rows;
	if (!b->nr_rows)
		return NULL;
	b->rows = NULL;
	b->nr_rows = 0;
	b->cap_rows = 0;
	return r;
}

void pe_builder_free(pe_builder *b)
{
	if (!b)
		return;
	pe_builder_rows_done(b);
	free(b->rows);
	pe_strmap_free(&b->strings);
	pe_u64map_free(&b->frames);
	pe_u64map_free(&b->stacks);
	free(b->blk);
	pe_block_packer_free(b->packer);
	pe_aggmap_free(&b->agg);
	pe_aggmap_free(&b->foffs);
	pe_aggmap_free(&b->leaves);
	free(b->leaf_order);
	free(b);
}

int pe_builder_failed(const pe_builder *b)
{
	return b->failed;
}

const pe_row *pe_builder_rows(const pe_builder *b, size_t *n)
{
	*n = b->nr_rows;
	return b->rows;
}

void pe_builder_set_flush(pe_builder *b, pe_builder_flush_fn fn, void *ctx)
{
	b->flush = fn;
	b->flush_ctx = ctx;
}

/* The hook, which fails the builder when it fails. */
static int call_flush(pe_builder *b, int with_block)
{
	if (b->failed || !b->flush || b->flush(b->flush_ctx, b, with_block) < 0) {
		b->failed = 1;
		return -1;
	}
	return 0;
}

int pe_builder_flush(pe_builder *b)
{
	/* every sample is in: the leaf addresses as rows (row_add hands them
	 * to the hook PE_ROWS_MAX at a time), then the last block */
	if (!b->flush || pe_builder_leaf_rows(b, SIZE_MAX) < 0) {
		b->failed = 1;
		return -1;
	}
	return call_flush(b, 1);
}

/* A new row; NULL (failed) out of memory or when the hook failed. Rows
 * made before are complete here, so the hook may take them. */
static pe_row *row_add(pe_builder *b, int kind, unsigned nvals)
{
	pe_row *r;

	if (b->failed)
		return NULL;
	if (b->flush && b->nr_rows >= PE_ROWS_MAX && call_flush(b, 0) < 0)
		return NULL;
	if (b->nr_rows == b->cap_rows) {
		size_t nc = b->cap_rows ? 2 * b->cap_rows : 1024;
		pe_row *nr = realloc(b->rows, nc * sizeof(*nr));

		if (!nr) {
			b->failed = 1;
			return NULL;
		}
		b->rows = nr;
		b->cap_rows = nc;
	}
	r = &b->rows[b->nr_rows++];
	memset(r, 0, sizeof(*r));
	r->kind = (uint8_t)kind;
	r->nvals = (uint8_t)nvals;
	return r;
}

/* Parameter k is text t (a copy when `copy`, else it must outlive the row). */
static int row_text(pe_builder *b, pe_row *r, unsigned k, unsigned t, const char *text,
		    int copy)
{
	if (!text) {
		r->null_mask |= (uint8_t)(1u << k);
		return 0;
	}
	r->text_mask |= (uint8_t)(1u << k);
	if (!copy) {
		r->text[t] = (char *)text;
		return 0;
	}
	r->owned = 1;
	if (!(r->text[t] = strdup(text))) {
		b->failed = 1;
		return -1;
	}
	return 0;
}

uint32_t pe_builder_string(pe_builder *b, const char *s)
{
	pe_strmap *m = &b->strings;
	size_t j;
	pe_row *r;
	int added;

	if (!s)
		return 0;
	added = pe_strmap_put(m, s, b->next_string + 1, &j);
	if (added < 0) {
		b->failed = 1;
		return 0;
	}
	if (!added)
		return m->ids[j];
	b->next_string++;
	/* the map's copy lives as long as the builder */
	if (!(r = row_add(b, PE_ROW_STRING, 2)))
		return 0;
	r->v[0] = m->ids[j];
	row_text(b, r, 1, 0, m->strs[j], 0);
	return m->ids[j];
}

/* Interns key in map m; a new entry gets ++*next and *added = 1. */
static uint32_t intern(pe_builder *b, pe_u64map *m, uint64_t key, uint32_t *next, int *added)
{
	int found;
	size_t j;

	*added = 0;
	if (2 * (m->n + 1) > m->cap && pe_u64map_grow(m) < 0) {
		b->failed = 1;
		return 0;
	}
	j = pe_u64map_slot(m, key, &found);
	if (found)
		return m->vals[j];
	if (*next >= PE_MAX_NODES)
		return 0;
	m->keys[j] = key;
	m->vals[j] = ++*next;
	m->n++;
	*added = 1;
	return m->vals[j];
}

uint32_t pe_builder_frame(pe_builder *b, const char *name, const char *dso, int resolved,
			  int kernel)
{
	uint32_t n = pe_builder_string(b, name), d = pe_builder_string(b, dso), id;
	pe_row *r;
	int added;

	if (!n)
		return 0;
	/* the low bit keeps the key non-zero */
	id = intern(b, &b->frames, ((uint64_t)n << 32 | d) << 1 | 1, &b->next_frame, &added);
	if (!added)
		return id;
	if (!(r = row_add(b, PE_ROW_FRAME, 5)))
		return 0;
	r->v[0] = id;
	r->v[1] = n;
	r->v[2] = d;
	if (!d)
		r->null_mask |= 1u << 2;
	r->v[3] = resolved ? 1 : 0;
	r->v[4] = kernel ? 1 : 0;
	return id;
}

uint32_t pe_builder_stack(pe_builder *b, uint32_t parent, uint32_t frame)
{
	pe_row *r;
	uint32_t id;
	int added;

	if (!frame)
		return 0;
	id = intern(b, &b->stacks, (uint64_t)parent << 32 | frame, &b->next_stack, &added);
	if (!added)
		return id;
	if (!(r = row_add(b, PE_ROW_STACK, 3)))
		return 0;
	r->v[0] = id;
	r->v[1] = parent;
	r->v[2] = frame;
	return id;
}

/* The sample's leaf address counted (dying tasks are not: the folded
 * answers leave them out too). 0, or -1 out of memory. */
static int count_leaf(pe_builder *b, const pe_sample *x)
{
	pe_agg_row *l;

	if (b->leaves.n >= PE_MAX_LEAF_ADDRS) {
		/* full: only addresses kept already count on */
		l = pe_aggmap_find(&b->leaves, x->event, x->leaf_frame,
				   (uint32_t)(x->leaf_addr >> 32), (uint32_t)x->leaf_addr, 0);
		if (!l) {
			b->leaf_dropped++;
			return 0;
		}
	} else {
		l = pe_aggmap_get(&b->leaves, x->event, x->leaf_frame,
				  (uint32_t)(x->leaf_addr >> 32), (uint32_t)x->leaf_addr, 0);
	}
	if (!l) {
		b->failed = 1;
		return -1;
	}
	l->samples++;
	l->period += x->period;
	l->offcpu += x->offcpu;
	return 0;
}

int pe_builder_sample(pe_builder *b, const pe_sample *x, uint32_t *agg_hint)
{
	pe_block *k = b->blk;
	pe_agg_row *a = NULL;

	if (b->failed)
		return -1;
	if (agg_hint && *agg_hint && *agg_hint <= b->agg.n) {
		a = &b->agg.rows[*agg_hint - 1];
		if (a->stack != x->stack || a->tid != x->tid || a->pid != x->pid ||
		    a->comm != x->comm || a->event != x->event)
			a = NULL;
	}
	if (!a)
		a = pe_aggmap_get(&b->agg, x->event, x->pid, x->tid, x->comm, x->stack);
	if (!a) {
		b->failed = 1;
		return -1;
	}
	if (agg_hint)
		*agg_hint = (uint32_t)(a - b->agg.rows) + 1;
	++b->nr_samples;
	if (!a->samples)
		a->first_seq = b->nr_samples;
	a->samples++;
	a->period += x->period;
	a->offcpu += x->offcpu;
	if (x->leaf_frame && x->pid != UINT32_MAX && x->tid != UINT32_MAX &&
	    count_leaf(b, x) < 0)
		return -1;
	k->time[k->n] = x->time;
	k->event[k->n] = x->event;
	k->cpu[k->n] = x->cpu;
	k->pid[k->n] = x->pid;
	k->tid[k->n] = x->tid;
	k->period[k->n] = x->period;
	k->weight[k->n] = x->weight;
	k->offcpu[k->n] = x->offcpu;
	k->stack[k->n] = x->stack;
	k->comm[k->n] = x->comm;
	if (++k->n < PE_BLOCK_SAMPLES)
		return 0;
	if (!b->flush)
		return 1;
	return call_flush(b, 1);
}

int pe_builder_pack_block(pe_builder *b, pe_packed_block *out)
{
	if (b->failed)
		return -1;
	if (!b->blk->n)
		return 1;
	if (pe_block_pack(b->packer, b->blk, ++b->nr_blocks, out) < 0) {
		b->failed = 1;
		return -1;
	}
	b->blk->n = 0;
	return 0;
}

int pe_builder_frame_offset(pe_builder *b, uint32_t frame, uint64_t dso_off)
{
	pe_agg_row *seen;
	pe_row *r;

	if (!frame || b->nr_frame_offsets >= PE_MAX_FRAME_OFFSETS)
		return 0;
	/* each pair once: the same frames come back with every new stack */
	seen = pe_aggmap_get(&b->foffs, 0, frame, (uint32_t)(dso_off >> 32), (uint32_t)dso_off, 0);
	if (!seen) {
		b->failed = 1;
		return -1;
	}
	if (seen->samples++)
		return 0;
	b->nr_frame_offsets++;
	if (!(r = row_add(b, PE_ROW_FRAME_OFFSET, 2)))
		return -1;
	r->v[0] = frame;
	r->v[1] = (int64_t)dso_off;
	return 0;
}

int pe_builder_comm(pe_builder *b, uint32_t pid, uint32_t tid, uint64_t time, const char *comm)
{
	uint32_t c = pe_builder_string(b, comm);
	pe_row *r = row_add(b, PE_ROW_COMM, 5);

	if (!r)
		return -1;
	r->v[0] = (int64_t)++b->nr_comms;
	r->v[1] = pid;
	r->v[2] = tid;
	r->v[3] = (int64_t)time;
	r->v[4] = c;
	return 0;
}

int pe_builder_mmap(pe_builder *b, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *filename, const char *build_id_hex, uint64_t time)
{
	uint32_t f = pe_builder_string(b, filename);
	pe_row *r = row_add(b, PE_ROW_MAP, 8);

	if (!r)
		return -1;
	r->v[0] = (int64_t)++b->nr_maps;
	r->v[1] = pid;
	r->v[2] = (int64_t)start;
	r->v[3] = (int64_t)len;
	r->v[4] = (int64_t)pgoff;
	r->v[5] = f;
	r->v[7] = (int64_t)time;
	return row_text(b, r, 6, 0, build_id_hex, 1);
}

int pe_builder_feature(pe_builder *b, const char *name, const char *json)
{
	pe_row *r = row_add(b, PE_ROW_FEATURE, 2);

	if (!r || row_text(b, r, 0, 0, name, 1) < 0)
		return -1;
	return row_text(b, r, 1, 1, json, 1);
}

int pe_builder_event(pe_builder *b, uint32_t idx, const char *name, uint32_t type,
		     uint64_t config, uint64_t sample_type, uint64_t period_or_freq, int freq,
		     uint64_t samples)
{
	pe_row *r = row_add(b, PE_ROW_EVENT, 8);

	if (!r)
		return -1;
	r->v[0] = idx;
	r->v[2] = type;
	r->v[3] = (int64_t)config;
	r->v[4] = (int64_t)sample_type;
	r->v[5] = (int64_t)period_or_freq;
	r->v[6] = freq;
	r->v[7] = (int64_t)samples;
	return row_text(b, r, 1, 0, name, 1);
}

int pe_builder_record_count(pe_builder *b, const char *type, uint64_t count)
{
	pe_row *r = row_add(b, PE_ROW_RECORD, 2);

	if (!r)
		return -1;
	r->v[1] = (int64_t)count;
	return row_text(b, r, 0, 0, type, 1);
}

/* The order of leaf_addrs' key: frame, event, address (signed, as the
 * backends compare the integer). */
static int cmp_leaf(const void *pa, const void *pb, void *ctx)
{
	const pe_agg_row *rows = ctx;
	const pe_agg_row *x = &rows[*(const uint32_t *)pa], *y = &rows[*(const uint32_t *)pb];
	int64_t ax = (int64_t)((uint64_t)x->tid << 32 | x->comm);
	int64_t ay = (int64_t)((uint64_t)y->tid << 32 | y->comm);

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	return (ax > ay) - (ax < ay);
}

int pe_builder_leaf_rows(pe_builder *b, size_t max)
{
	size_t end = b->leaf_next + max < b->leaves.n ? b->leaf_next + max : b->leaves.n;
	size_t i;

	/* stored in key order, each insert lands beside the last one: a
	 * system-wide build's 53,000 leaves went into SQLite in 81 ms, against
	 * 95 in the order first seen. Without memory for the order, that. */
	if (!b->leaf_next && !b->leaf_order && b->leaves.n > 1 &&
	    (b->leaf_order = malloc(b->leaves.n * sizeof(*b->leaf_order)))) {
		for (i = 0; i < b->leaves.n; i++)
			b->leaf_order[i] = (uint32_t)i;
		qsort_r(b->leaf_order, b->leaves.n, sizeof(*b->leaf_order), cmp_leaf, b->leaves.rows);
		b->leaf_ordered = b->leaves.n;
	}
	for (; b->leaf_next < end; b->leaf_next++) {
		size_t at = b->leaf_next < b->leaf_ordered ? b->leaf_order[b->leaf_next] : b->leaf_next;
		const pe_agg_row *l = &b->leaves.rows[at];
		pe_row *r = row_add(b, PE_ROW_LEAF_ADDR, 6);

		if (!r)
			return -1;
		r->v[0] = l->pid;
		r->v[1] = l->event;
		r->v[2] = (int64_t)((uint64_t)l->tid << 32 | l->comm);
		r->v[3] = (int64_t)l->samples;
		r->v[4] = (int64_t)l->period;
		r->v[5] = (int64_t)l->offcpu;
	}
	return b->leaf_next < b->leaves.n;
}

uint32_t pe_builder_string_find(const pe_builder *b, const char *s)
{
	size_t j;

	if (!s || !b->strings.cap)
		return 0;
	j = pe_strmap_slot(&b->strings, s, pe_hash_str(s));
	return b->strings.strs[j] ? b->strings.ids[j] : 0;
}

const pe_agg_row *pe_builder_agg_rows(const pe_builder *b, size_t *n)
{
	*n = b->agg.n;
	return b->agg.rows;
}

uint64_t pe_builder_leaf_dropped(const pe_builder *b)
{
	return b->leaf_dropped;
}

uint64_t pe_builder_nr_samples(const pe_builder *b)
{
	return b->nr_samples;
}

int pe_model_load_rows(pe_model *m, const pe_row *rows, size_t n)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		const pe_row *r = &rows[i];
		const int64_t *v = r->v;

		switch (r->kind) {
		case PE_ROW_STRING:
			rc = pe_model_add_string(m, (uint32_t)v[0], pe_row_text(r, 1));
			break;
		case PE_ROW_FRAME:
			rc = pe_model_add_frame(m, (uint32_t)v[0], (uint32_t)v[1],
						r->null_mask & 4 ? 0 : (uint32_t)v[2], (int)v[4]);
			break;
		case PE_ROW_STACK:
			rc = pe_model_add_stack(m, (uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2]);
			break;
		case PE_ROW_EVENT:
			rc = pe_model_add_event(m, (uint32_t)v[0], r->null_mask & 2 ? NULL :
						pe_row_text(r, 1));
			break;
		case PE_ROW_MAP:
			if (!(r->null_mask & 64))
				rc = pe_model_add_build_id(m, (uint32_t)v[5], pe_row_text(r, 6));
			break;
		default:
			break;	/* not part of the model */
		}
	}
	return rc;
}
