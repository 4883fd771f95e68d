/*
 * wbuf.h - a growable byte buffer for tests that write perf.data bytes by
 * hand: values in host order, written in the host's byte order or, with
 * swap set, in the other one. Aborts when out of memory.
 */
#ifndef PERFHUB_TESTS_WBUF_H
#define PERFHUB_TESTS_WBUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct wbuf {
	uint8_t *p;
	size_t len, cap;
	int swap;		/* write in the other byte order */
} wbuf;

static inline void put(wbuf *b, const void *src, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 4096;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static inline void put8(wbuf *b, uint8_t v) { put(b, &v, 1); }
static inline void put16(wbuf *b, uint16_t v) { if (b->swap) v = __builtin_bswap16(v); put(b, &v, 2); }
static inline void put32(wbuf *b, uint32_t v) { if (b->swap) v = __builtin_bswap32(v); put(b, &v, 4); }
static inline void put64(wbuf *b, uint64_t v) { if (b->swap) v = __builtin_bswap64(v); put(b, &v, 8); }
static inline void set16(wbuf *b, size_t at, uint16_t v) { if (b->swap) v = __builtin_bswap16(v); memcpy(b->p + at, &v, 2); }
static inline void set64(wbuf *b, size_t at, uint64_t v) { if (b->swap) v = __builtin_bswap64(v); memcpy(b->p + at, &v, 8); }
static inline void zeros(wbuf *b, size_t n) { while (n--) put8(b, 0); }

#endif /* PERFHUB_TESTS_WBUF_H */
