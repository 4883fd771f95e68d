/*
 * utf8.h - UTF-8 as text must be where bytes from a recording or a request
 * meet something that insists on it (JSON, a database's text columns): the
 * length of a valid sequence, and a copy in which each byte that starts no
 * valid sequence is U+FFFD, as the JSON writer shows it.
 */
#ifndef PERFHUB_LIB_UTF8_H
#define PERFHUB_LIB_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (of at most n bytes; n > 0),
 * 0 when none starts there. */
size_t utf8_seq_len(const unsigned char *s, size_t n);
/* 1 when s (NUL-terminated) is valid UTF-8. */
int utf8_valid(const char *s);
/* A malloc'ed copy of s with every invalid byte replaced by U+FFFD; NULL
 * when out of memory. */
char *utf8_fix(const char *s);

#endif
