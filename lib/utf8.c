/* utf8.c - validating and repairing UTF-8. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	size_t k, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, c = s[0] & 0x07;
	else
		return 0;
	if (k > n)
		return 0;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((k == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (k == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return k;
}

int utf8_valid(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;

	while (i < n) {
		size_t k = u[i] < 0x80 ? 1 : utf8_seq_len(u + i, n - i);

		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

char *utf8_fix(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, o = 0;
	char *out = malloc(3 * n + 1);	/* each byte at most one U+FFFD */

	if (!out)
		return NULL;
	while (i < n) {
		size_t k = utf8_seq_len(u + i, n - i);

		if (k) {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	out[o] = 0;
	return out;
}
