/*
 * fuzz-s3xml - libFuzzer target over the reader of S3's XML answers
 * (daemon/intake/s3xml.c): the input is fed in pieces whose sizes come from
 * its first byte, as answers arrive from the network, to a reader that
 * listens for the elements the S3 client reads. A plain main replays
 * tests/fuzz-s3/ in every make check (tests/fuzz-s3xml.sh).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "s3xml.h"

static const char *const names[] = {
	"Code", "Message", "UploadId", "Contents", "Key", "Size", "IsTruncated",
	"NextContinuationToken", NULL
};

static int on_element(void *ctx, const char *name, const char *text, size_t len, int depth)
{
	size_t *sum = ctx;

	/* the text must be NUL-ended at len and within the cap */
	if (len > S3X_MAX_TEXT || text[len] != 0 || depth < 1 || depth > S3X_MAX_DEPTH)
		__builtin_trap();
	*sum += len + strlen(name);
	return len == 7 && !memcmp(text, "refused", 7);	/* a reader may say stop */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t sum = 0, piece, off = 1;
	s3x_reader *r;

	if (size < 1)
		return 0;
	piece = (size_t)data[0] % 64 + 1;
	r = s3x_new(data[0] & 0x80 ? NULL : names, on_element, &sum);
	if (!r)
		return 0;
	while (off < size) {
		size_t n = size - off < piece ? size - off : piece;

		if (s3x_feed(r, data + off, n, 0) < 0)
			break;
		off += n;
	}
	if (off >= size)
		s3x_feed(r, "", 0, 1);
	if (strlen(s3x_error(r)) > 200 || strlen(s3x_root(r)) >= 64)
		__builtin_trap();
	s3x_free(r);
	return 0;
}
