/*
 * s3xml.h - reads the XML answers of an S3-compatible store as they arrive
 * (expat, no DOM): error bodies, CreateMultipartUpload, CompleteMultipart-
 * Upload and ListObjectsV2 results. The caller feeds the bytes and is told
 * of each element it asked for, with the element's text.
 *
 * Untrusted input: the whole answer is capped (S3X_MAX_BYTES), each text
 * is cut at S3X_MAX_TEXT bytes, elements may nest at most S3X_MAX_DEPTH
 * deep; no external entity or DTD is ever loaded.
 */
#ifndef PERFHUB_INTAKE_S3XML_H
#define PERFHUB_INTAKE_S3XML_H

#include <stddef.h>

#define S3X_MAX_BYTES ((size_t)8 << 20)	/* a list page of 1,000 long keys fits */
#define S3X_MAX_TEXT 2048		/* keys are at most 1,024 bytes in S3 */
#define S3X_MAX_DEPTH 16

typedef struct s3x_reader s3x_reader;

/* Called at the end of each element whose name is in the reader's list:
 * `name` is that name, `text` the element's own character data (NUL-ended,
 * `len` bytes, cut at S3X_MAX_TEXT; empty for an element that only holds
 * others, such as `Contents`), `depth` its depth (the root is 1). Nonzero
 * stops the parse as an error. */
typedef int (*s3x_element_cb)(void *ctx, const char *name, const char *text, size_t len,
			      int depth);

/* `names` is a NULL-ended list of element names, kept by reference; NULL
 * names every element. */
s3x_reader *s3x_new(const char *const *names, s3x_element_cb cb, void *ctx);
void s3x_free(s3x_reader *r);
/* Feeds bytes; `last` = 1 on the final call (may come with len 0).
 * 0, or -1 with the reason in s3x_error(). */
int s3x_feed(s3x_reader *r, const void *data, size_t len, int last);
/* Why the last s3x_feed failed: "line 3: mismatched tag", "more than ...". */
const char *s3x_error(const s3x_reader *r);
/* The name of the root element seen ("" before it), e.g. "Error". */
const char *s3x_root(const s3x_reader *r);

#endif
