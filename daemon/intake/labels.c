/* labels.c - the one check of a profile's name and tags. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "intake/labels.h"

/* Length of the UTF-8 sequence at p (1..4), 0 when it is not one. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n, i;
	unsigned c = p[0];
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

int intake_check_label(int what, const char *s, char *why, size_t whylen)
{
	static const char *const names[] = { "name", "tag key", "tag value" };
	static const size_t max[] = { INTAKE_MAX_NAME, INTAKE_MAX_TAG_KEY, INTAKE_MAX_TAG_VALUE };
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), n;

	if (len > max[what]) {
		snprintf(why, whylen, "%s longer than %zu bytes", names[what], max[what]);
		return -1;
	}
	if (what == INTAKE_TAG_KEY && (!len || strchr(s, '='))) {
		snprintf(why, whylen, len ? "'=' in a tag key" : "empty tag key");
		return -1;
	}
	for (; *p; p += n) {
		if (*p < 0x20 || *p == 0x7f) {
			snprintf(why, whylen, "control character in the %s at byte %zu", names[what],
				 (size_t)(p - (const unsigned char *)s));
			return -1;
		}
		if (!(n = utf8_len(p))) {
			snprintf(why, whylen, "the %s is not UTF-8 at byte %zu", names[what],
				 (size_t)(p - (const unsigned char *)s));
			return -1;
		}
	}
	return 0;
}

