/*
 * strhash.h - FNV-1a over strings and bytes, for the parser's small hash
 * tables of names and paths (not for anything a client could aim at).
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

#endif
