/*
 * builder.h - what a parse writes, interned while it runs: strings, frames
 * and stack nodes get small ids, samples go into blocks of
 * PE_BLOCK_SAMPLES and are counted per (event, pid, tid, comm, stack) for
 * the aggregate. Everything new becomes a row to store; the store hands
 * the rows and each full block to persistence (persist.h), which writes
 * them in one short transaction. The builder knows no backend.
 *
 * Row layouts: each kind has `nvals` parameters after the profile id;
 * parameter k is text when text_mask has bit k (then it is the next of
 * text[]), NULL when null_mask has it, else the integer v[k].
 *
 *   PE_ROW_STRING        id, text
 *   PE_ROW_FRAME         id, name (string id), dso (string id or NULL), resolved, kernel
 *   PE_ROW_STACK         id, parent (0 = root), frame
 *   PE_ROW_FRAME_OFFSET  frame, dso_off
 *   PE_ROW_COMM          seq, pid, tid, time, comm (string id)
 *   PE_ROW_MAP           seq, pid, start, len, pgoff, filename (string id),
 *                        build_id (text or NULL), time
 *   PE_ROW_FEATURE       name (text), json (text or NULL)
 *   PE_ROW_EVENT         idx, name (text or NULL), type, config, sample_type,
 *                        period_or_freq, freq, samples
 *   PE_ROW_RECORD        type (text), count
 *   PE_ROW_LEAF_ADDR     frame, event, addr, samples, period, offcpu: the
 *                        samples whose leaf is that frame at that address
 *                        (a file offset in its DSO, an address in the
 *                        kernel), for annotating a function; made at the end
 *                        by pe_builder_leaf_rows
 */
#ifndef PERFHUB_ENGINE_BUILDER_H
#define PERFHUB_ENGINE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "engine/block.h"
#include "engine/model.h"

#define PE_ROWS_MAX 65536	/* rows waiting for the next transaction, at most */
#define PE_MAX_FRAME_OFFSETS 1000000	/* unresolved offsets kept per profile */
#define PE_MAX_LEAF_ADDRS 2000000	/* distinct (event, leaf frame, address) kept */

enum pe_row_kind {
	PE_ROW_STRING, PE_ROW_FRAME, PE_ROW_STACK, PE_ROW_FRAME_OFFSET, PE_ROW_COMM, PE_ROW_MAP,
	PE_ROW_FEATURE, PE_ROW_EVENT, PE_ROW_RECORD, PE_ROW_LEAF_ADDR, PE_NR_ROW_KINDS
};

#define PE_ROW_VALS 8

typedef struct pe_row {
	uint8_t kind;		/* enum pe_row_kind */
	uint8_t nvals;		/* parameters after the profile id */
	uint8_t null_mask;	/* parameters that are NULL */
	uint8_t text_mask;	/* parameters taken from text[], in order */
	uint8_t owned;		/* text[] to free */
	int64_t v[PE_ROW_VALS];
	char *text[2];
} pe_row;

/* The text of parameter k (text_mask has bit k). */
static inline const char *pe_row_text(const pe_row *r, unsigned k)
{
	return r->text[(r->text_mask & ((1u << k) - 1)) ? 1 : 0];
}

typedef struct pe_sample {
	uint32_t event;		/* event index */
	uint64_t time;
	uint32_t cpu, pid, tid;
	uint64_t period;	/* as stackcollapse-perf weighs it (pd_sample_script_period) */
	uint64_t weight;
	uint32_t stack;		/* leaf stack node (0 = empty stack) */
	uint32_t comm;		/* string id of the thread's comm then */
	uint64_t offcpu;	/* nanoseconds switched out after it (offcpu.h) */
	uint32_t leaf_frame;	/* the leaf node's frame, 0 = no leaf address */
	uint64_t leaf_addr;	/* where in it: file offset in its DSO (kernel: address) */
} pe_sample;

typedef struct pe_builder pe_builder;

pe_builder *pe_builder_new(void);
void pe_builder_free(pe_builder *b);
/* 1 once an allocation failed: the parse cannot be stored. */
int pe_builder_failed(const pe_builder *b);

/* Interned ids; 0 for NULL, or on error (then failed). */
uint32_t pe_builder_string(pe_builder *b, const char *s);
uint32_t pe_builder_frame(pe_builder *b, const char *name, const char *dso, int resolved,
			  int kernel);
uint32_t pe_builder_stack(pe_builder *b, uint32_t parent, uint32_t frame);

/* A sample into the block being filled and the aggregate. *agg_hint (0 at
 * first; may be NULL) remembers the sample's aggregate row so that the
 * next sample with the same key skips the lookup (a wrong hint only costs
 * the lookup). 1 when the block is full: pack it (pe_builder_pack_block)
 * before the next sample; 0; -1 on error. */
int pe_builder_sample(pe_builder *b, const pe_sample *s, uint32_t *agg_hint);
/* A file offset seen for an unresolved frame, each pair once, at most
 * PE_MAX_FRAME_OFFSETS. 0 or -1. */
int pe_builder_frame_offset(pe_builder *b, uint32_t frame, uint64_t dso_off);
int pe_builder_comm(pe_builder *b, uint32_t pid, uint32_t tid, uint64_t time, const char *comm);
int pe_builder_mmap(pe_builder *b, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *filename, const char *build_id_hex, uint64_t time);
int pe_builder_feature(pe_builder *b, const char *name, const char *json);
int pe_builder_event(pe_builder *b, uint32_t idx, const char *name, uint32_t type,
		     uint64_t config, uint64_t sample_type, uint64_t period_or_freq, int freq,
		     uint64_t samples);
int pe_builder_record_count(pe_builder *b, const char *type, uint64_t count);

/* A builder that hands its work on as it goes: with a flush hook, fn(ctx,
 * b, 0) runs before a row is added while PE_ROWS_MAX rows wait, and fn(ctx,
 * b, 1) when a sample filled the block (pe_builder_sample then returns 0,
 * not 1). The hook takes the rows (pe_builder_rows, pe_builder_rows_done)
 * and, with with_block, the block (pe_builder_pack_block); a negative
 * return fails the builder. Without a hook the caller does both. */
typedef int (*pe_builder_flush_fn)(void *ctx, pe_builder *b, int with_block);
void pe_builder_set_flush(pe_builder *b, pe_builder_flush_fn fn, void *ctx);
/* The hook once more, after the leaf addresses are made into rows
 * (pe_builder_leaf_rows), with the last block however full: call it before
 * the last look at the aggregate. 0, or -1 (no hook, or it failed). */
int pe_builder_flush(pe_builder *b);

/* The rows made since the last pe_builder_rows_done(), in the order they
 * were made; valid until then. */
const pe_row *pe_builder_rows(const pe_builder *b, size_t *n);
void pe_builder_rows_done(pe_builder *b);

/* The same rows handed over, for a hook that stores them on another
 * thread: the caller owns the array and frees it with pe_rows_free (the
 * texts of string rows belong to the builder and stay valid while it
 * lives); the builder starts a new array. NULL when there are none. */
pe_row *pe_builder_take_rows(pe_builder *b, size_t *n);
void pe_rows_free(pe_row *rows, size_t n);

/* The block being filled, encoded and compressed (OUT: valid until the
 * next pack), and emptied. 1 when it holds no sample, 0, -1 on error. */
int pe_builder_pack_block(pe_builder *b, pe_packed_block *out);

/* The leaf addresses counted so far (samples with a leaf_frame, dying
 * tasks left out, at most PE_MAX_LEAF_ADDRS) as PE_ROW_LEAF_ADDR rows, at
 * most `max` per call; call after the last sample (pe_builder_flush does,
 * for a builder with a hook). 1 when more remain (store the rows and call
 * again), 0 when all were made, -1 on error. */
int pe_builder_leaf_rows(pe_builder *b, size_t max);
/* The id string s was interned under, 0 when it never was (nothing is
 * added). */
uint32_t pe_builder_string_find(const pe_builder *b, const char *s);

/* The aggregate rows so far, in the order their keys were first seen
 * (first_seq order); valid until the next sample. */
const pe_agg_row *pe_builder_agg_rows(const pe_builder *b, size_t *n);

/* Samples whose leaf address was not kept (the cap was reached). */
uint64_t pe_builder_leaf_dropped(const pe_builder *b);

uint64_t pe_builder_nr_samples(const pe_builder *b);

/* Loads what a model needs from rows (strings, frames, stack nodes,
 * events): what a persistence backend's loader does from its tables,
 * here straight from a builder's rows (tests, tools). 0 or -1. */
int pe_model_load_rows(pe_model *m, const pe_row *rows, size_t n);

#endif
