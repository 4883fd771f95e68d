/*
 * decomp.h - the zstd stream of PERF_RECORD_COMPRESSED / COMPRESSED2.
 *
 * perf record -z writes ONE zstd frame for the whole recording, cut into
 * the payloads of many COMPRESSED records and usually never closed. So one
 * streaming context lives as long as the file; each payload is fed to it in
 * turn, and the records it yields may straddle payload boundaries: an
 * incomplete record at the end of one payload waits for the next.
 *
 * Output is bounded: total output may not exceed the configured cap nor
 * DECOMP_MAX_RATIO times the compressed bytes fed (a zstd bomb fails fast).
 */
#ifndef PERFHUB_DECOMP_H
#define PERFHUB_DECOMP_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"

#define DECOMP_MAX_RATIO	2000
#define DECOMP_RATIO_SLACK	(1u << 20)	/* allowed before the ratio applies */

typedef struct pd_decomp pd_decomp;

pd_decomp *decomp_new(uint64_t cap);
void decomp_free(pd_decomp *d);

/* Hand over the next payload (copied). `offset` is the COMPRESSED record's
 * offset in the input, for messages. Any earlier payload must have been
 * drained (decomp_next returned 0). */
int decomp_feed(pd_decomp *d, const void *payload, size_t len, uint64_t offset, pd_error *err);

/* The next complete record: 1 with rec and size set (valid until the next
 * call), 0 when the current payload is used up, -1 on error. swap: the
 * file's byte order differs from the host's. */
int decomp_next(pd_decomp *d, int swap, const uint8_t **rec, uint32_t *size, pd_error *err);

/* Bytes of an incomplete record held back at the end of the stream. */
size_t decomp_pending(const pd_decomp *d);
uint64_t decomp_total_out(const pd_decomp *d);

#endif
