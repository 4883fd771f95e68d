/*
 * block.h - the sample-block codec: up to PE_BLOCK_SAMPLES samples, column
 * by column, little-endian, zstd compressed:
 *
 *   u32 magic "PHS2", u32 n, then n times each of: u64 time (delta from the
 *   previous sample's), u32 event, cpu, pid, tid, u64 period, weight,
 *   offcpu, u32 stack, comm
 *
 * Blocks written before off-CPU time was kept have the magic "PHSB" and no
 * offcpu column; they decode with offcpu 0.
 *
 * A stored block keeps its sample count and min/max time beside the bytes
 * so that a time range reads only the blocks it overlaps. Decoding trusts
 * nothing: the frame's declared size must be exactly that of n samples.
 */
#ifndef PERFHUB_ENGINE_BLOCK_H
#define PERFHUB_ENGINE_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#define PE_BLOCK_SAMPLES 4096	/* samples per stored block */
#define PE_BLOCK_MAGIC 0x32534850u	/* "PHS2": with the offcpu column */
#define PE_BLOCK_MAGIC_V1 0x42534850u	/* "PHSB": without it */
#define PE_BLOCK_ZLEVEL 1	/* zstd level: fast, the columns compress well anyway */
#define PE_BLOCK_ROW_BYTES 56
#define PE_BLOCK_ROW_BYTES_V1 48
#define PE_BLOCK_RAW_MAX (8 + (size_t)PE_BLOCK_SAMPLES * PE_BLOCK_ROW_BYTES)

/* One block's samples, decoded. */
typedef struct pe_block {
	uint32_t n;
	uint64_t time[PE_BLOCK_SAMPLES], period[PE_BLOCK_SAMPLES], weight[PE_BLOCK_SAMPLES],
		 offcpu[PE_BLOCK_SAMPLES];
	uint32_t event[PE_BLOCK_SAMPLES], cpu[PE_BLOCK_SAMPLES], pid[PE_BLOCK_SAMPLES],
		 tid[PE_BLOCK_SAMPLES], stack[PE_BLOCK_SAMPLES], comm[PE_BLOCK_SAMPLES];
} pe_block;

/* A block as persistence stores it; `data` is the compressed bytes. */
typedef struct pe_packed_block {
	uint64_t seq;		/* from 1, in file order */
	uint32_t nr;		/* samples */
	uint64_t min_time, max_time;
	const void *data;
	size_t len;
} pe_packed_block;

/* A stored block handed to the engine (persistence -> engine): its sample
 * count and bytes as stored. Returns 0 to go on, non-zero to stop. */
typedef int (*pe_block_cb)(void *ctx, int64_t nr, const void *data, size_t len);

/* The column arrays of a decompressed block, read in place; offcpu is NULL
 * in a block of the first format (read it with pe_block_offcpu). */
typedef struct pe_block_view {
	size_t n;
	const uint8_t *time, *event, *cpu, *pid, *tid, *period, *weight, *stack, *comm;
	const uint8_t *offcpu;
} pe_block_view;

static inline uint32_t pe_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t pe_get64(const uint8_t *p)
{
	return (uint64_t)pe_get32(p) | (uint64_t)pe_get32(p + 4) << 32;
}

/* Sample i's off-CPU nanoseconds (0 in a block of the first format). */
static inline uint64_t pe_block_offcpu(const pe_block_view *v, size_t i)
{
	return v->offcpu ? pe_get64(v->offcpu + 8 * i) : 0;
}

/* Compresses blocks; one per writer (its buffers are reused). */
typedef struct pe_block_packer pe_block_packer;

pe_block_packer *pe_block_packer_new(void);
void pe_block_packer_free(pe_block_packer *k);
/* Encodes and compresses b (n > 0). OUT: *out, whose data stays valid until
 * the next call. 0, or -1 (zstd error, logged). */
int pe_block_pack(pe_block_packer *k, const pe_block *b, uint64_t seq, pe_packed_block *out);

/* Decompresses and checks a stored block of `nr` samples into raw
 * (PE_BLOCK_RAW_MAX bytes of room) and points v at its columns. -1 when
 * the bytes are not such a block. */
int pe_block_view_of(const void *data, size_t len, int64_t nr, uint8_t *raw, pe_block_view *v);
/* The same, decoded into b. */
int pe_block_decode(const void *data, size_t len, int64_t nr, uint8_t *raw, pe_block *b);

#endif
