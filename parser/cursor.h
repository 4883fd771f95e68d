/*
 * cursor.h - bounds-checked reads of untrusted bytes at the file's byte order.
 *
 * Two layers: load_*() read one field at an address the caller has already
 * checked; the cursor (pd_cur) checks `len - off >= n` before every read and
 * keeps a sticky error with the offset of the first short read. Every field
 * is swapped at its own width, so u32 pairs and u16s inside u64 slots come
 * out right in either byte order.
 */
#ifndef PERFHUB_CURSOR_H
#define PERFHUB_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t load_u16(const void *p, int swap)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t load_u32(const void *p, int swap)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t load_u64(const void *p, int swap)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap64(v) : v;
}

typedef struct pd_cur {
	const uint8_t *buf;
	size_t len, off;
	int swap;
	int err;		/* set once a read ran past len */
	size_t err_off;		/* where that read started */
} pd_cur;

static inline void cur_init(pd_cur *c, const void *buf, size_t len, int swap)
{
	c->buf = buf;
	c->len = len;
	c->off = 0;
	c->swap = swap;
	c->err = 0;
	c->err_off = 0;
}

static inline size_t cur_left(const pd_cur *c)
{
	return c->err ? 0 : c->len - c->off;
}

/* Pointer to the next n bytes and advance, or NULL (sticky error). */
static inline const uint8_t *cur_take(pd_cur *c, size_t n)
{
	const uint8_t *p;

	if (c->err || c->len - c->off < n) {
		if (!c->err) {
			c->err = 1;
			c->err_off = c->off;
		}
		return NULL;
	}
	p = c->buf + c->off;
	c->off += n;
	return p;
}

static inline uint64_t cur_u64(pd_cur *c)
{
	const uint8_t *p = cur_take(c, 8);
	return p ? load_u64(p, c->swap) : 0;
}

static inline uint32_t cur_u32(pd_cur *c)
{
	const uint8_t *p = cur_take(c, 4);
	return p ? load_u32(p, c->swap) : 0;
}

static inline uint16_t cur_u16(pd_cur *c)
{
	const uint8_t *p = cur_take(c, 2);
	return p ? load_u16(p, c->swap) : 0;
}

static inline uint8_t cur_u8(pd_cur *c)
{
	const uint8_t *p = cur_take(c, 1);
	return p ? p[0] : 0;
}

#endif
