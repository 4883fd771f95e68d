/*
 * strhash.h - the parser's hashes: FNV-1a over strings and bytes, for its
 * small hash tables of names and paths (not for anything a client could
 * aim at), and the second word hash that, beside a table's own, names a
 * callchain or a stack without a copy of it (foldcache.c, fold.c).
 */
#ifndef PERFHUB_STRHASH_H
#define PERFHUB_STRHASH_H

#include <stddef.h>
#include <stdint.h>

#define PD_FNV_BASIS 0xcbf29ce484222325ULL

static inline uint64_t pd_fnv_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

static inline uint64_t pd_fnv_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* One word into the second hash: another multiplier than the tables'
 * (0xff51afd7ed558ccd, xor then multiply), the word added, the state
 * rotated, so that the two agree by chance about once in 2^64 each. */
static inline uint64_t pd_hash2_step(uint64_t k, uint64_t v)
{
	k = (k + v) * 0xc2b2ae3d27d4eb4fULL;
	k ^= k >> 29;
	return k << 17 | k >> 47;
}

#define PD_HASH2_SEED 0x6a09e667f3bcc909ULL

#endif
