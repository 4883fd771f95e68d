/* feat-cursor.c - bounds-checked reads of one feature section, and JSON of untrusted bytes. */
#include "feat-decode.h"

void fcur_fail(struct fcur *c, const char *fmt, ...)
{
	if (c->failed)
		return;
	c->failed = 1;
	int n = snprintf(c->err, sizeof(c->err), "offset %" PRIu64 " (0x%" PRIx64 "): ",
			 c->base + c->off, c->base + c->off);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err + n, sizeof(c->err) - (size_t)n, fmt, ap);
	va_end(ap);
}

size_t fcur_left(const struct fcur *c)
{
	return c->failed ? 0 : c->len - c->off;
}

int fcur_need(struct fcur *c, size_t n, const char *what)
{
	if (c->failed)
		return -1;
	if (c->len - c->off < n) {
		fcur_fail(c, "%s needs %zu bytes, %zu remain in the section", what, n,
			 c->len - c->off);
		return -1;
	}
	return 0;
}

uint16_t feat_get16(const uint8_t *p, int swap)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return swap ? __builtin_bswap16(v) : v;
}

uint32_t feat_get32(const uint8_t *p, int swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

uint64_t feat_get64(const uint8_t *p, int swap)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

uint32_t fcur_u32(struct fcur *c, const char *what)
{
	if (fcur_need(c, 4, what))
		return 0;
	uint32_t v = feat_get32(c->p + c->off, c->swap);
	c->off += 4;
	return v;
}

uint64_t fcur_u64(struct fcur *c, const char *what)
{
	if (fcur_need(c, 8, what))
		return 0;
	uint64_t v = feat_get64(c->p + c->off, c->swap);
	c->off += 8;
	return v;
}

const uint8_t *fcur_bytes(struct fcur *c, size_t n, const char *what)
{
	if (fcur_need(c, n, what))
		return NULL;
	const uint8_t *p = c->p + c->off;
	c->off += n;
	return p;
}

int fcur_spend(struct fcur *c, uint64_t n, const char *what)
{
	if (c->failed)
		return -1;
	if (n > c->budget) {
		fcur_fail(c, "%s: more than %u entries in one section (limit)", what,
			 FEAT_MAX_ENTRIES);
		return -1;
	}
	c->budget -= (size_t)n;
	return 0;
}

uint32_t fcur_count(struct fcur *c, size_t min_item, const char *what)
{
	size_t at = c->off;
	uint32_t n = fcur_u32(c, what);
	if (c->failed)
		return 0;
	if (min_item && n > fcur_left(c) / min_item) {
		c->off = at;
		fcur_fail(c, "%s %" PRIu32 " needs at least %zu bytes, %zu remain", what, n,
			 (size_t)n * min_item, fcur_left(c) - 4);
		return 0;
	}
	if (fcur_spend(c, n, what)) {
		c->off = at;
		return 0;
	}
	return n;
}

json_t *feat_json_bytes(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	if (j)
		return j;
	char *copy = malloc(n + 1);
	if (!copy)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		copy[i] = (ch >= 0x80 || (ch < 0x20 && ch != '\t' && ch != '\n')) ? '?' : (char)ch;
	}
	j = json_stringn(copy, n);
	free(copy);
	return j;
}

json_t *feat_json_u64(uint64_t v)
{
	if (v <= INT64_MAX)
		return json_integer((json_int_t)v);
	char buf[24];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return json_string(buf);
}

const char *fcur_str(struct fcur *c, size_t *slen, const char *what)
{
	uint32_t len = fcur_u32(c, what);
	const uint8_t *s = fcur_bytes(c, len, what);
	if (!s)
		return NULL;
	const uint8_t *nul = memchr(s, 0, len);
	*slen = nul ? (size_t)(nul - s) : len;
	return (const char *)s;
}

json_t *fcur_jstr(struct fcur *c, const char *what)
{
	size_t n;
	const char *s = fcur_str(c, &n, what);
	return s ? feat_json_bytes(s, n) : NULL;
}

json_t *feat_json_hex(const uint8_t *p, size_t n)
{
	char buf[2 * 64 + 1];
	if (n > 64)
		n = 64;
	for (size_t i = 0; i < n; i++)
		snprintf(buf + 2 * i, 3, "%02x", p[i]);
	buf[2 * n] = 0;
	return json_string(buf);
}
