/* decomp.c - one streaming zstd context per recording; see decomp.h. */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "cursor.h"
#include "decomp.h"
#include "perr.h"

/* A record is at most 64 KiB (u16 size), so 1 MiB leaves room to batch. */
#define DECOMP_OUT_BUF	(1u << 20)
#define DECOMP_IN_BUF	(1u << 16)

struct pd_decomp {
	ZSTD_DStream *zds;
	uint8_t *in;
	size_t in_len, in_pos;
	uint8_t *out;
	size_t rd, wr;		/* undelivered output is out[rd..wr) */
	uint64_t cap, total_in, total_out;
	uint64_t offset;	/* the current payload's record, for messages */
	int ended;		/* the frame was closed; a new one may follow */
	int full;		/* the last call filled out: zstd may hold more */
};

pd_decomp *decomp_new(uint64_t cap)
{
	pd_decomp *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->zds = ZSTD_createDStream();
	d->in = malloc(DECOMP_IN_BUF);
	d->out = malloc(DECOMP_OUT_BUF);
	if (!d->zds || !d->in || !d->out || ZSTD_isError(ZSTD_initDStream(d->zds))) {
		decomp_free(d);
		return NULL;
	}
	d->cap = cap;
	return d;
}

void decomp_free(pd_decomp *d)
{
	if (!d)
		return;
	ZSTD_freeDStream(d->zds);
	free(d->in);
	free(d->out);
	free(d);
}

int decomp_feed(pd_decomp *d, const void *payload, size_t len, uint64_t offset, pd_error *err)
{
	if (len > DECOMP_IN_BUF) {
		pd_set_error(err, PD_ERR_BAD_RECORD, offset,
			     "compressed payload of %zu bytes larger than a record can be", len);
		return -1;
	}
	memcpy(d->in, payload, len);
	d->in_len = len;
	d->in_pos = 0;
	d->offset = offset;
	d->total_in += len;
	return 0;
}

/* Decompress more of the current payload into the free space of out. */
static int fill(pd_decomp *d, pd_error *err)
{
	ZSTD_inBuffer in = { d->in, d->in_len, d->in_pos };
	ZSTD_outBuffer out;
	size_t ret;
	uint64_t limit;

	if (d->rd > 0) {
		memmove(d->out, d->out + d->rd, d->wr - d->rd);
		d->wr -= d->rd;
		d->rd = 0;
	}
	out.dst = d->out;
	out.size = DECOMP_OUT_BUF;
	out.pos = d->wr;
	if (d->ended) {
		/* a new frame may follow a closed one */
		ZSTD_initDStream(d->zds);
		d->ended = 0;
	}
	ret = ZSTD_decompressStream(d->zds, &out, &in);
	if (ZSTD_isError(ret)) {
		pd_set_error(err, PD_ERR_DECOMPRESS, d->offset, "zstd: %s in compressed payload",
			     ZSTD_getErrorName(ret));
		return -1;
	}
	if (ret == 0)
		d->ended = 1;
	d->full = out.pos == out.size;
	d->total_out += out.pos - d->wr;
	d->wr = out.pos;
	d->in_pos = in.pos;
	limit = d->total_in * DECOMP_MAX_RATIO + DECOMP_RATIO_SLACK;
	if (d->total_out > d->cap || d->total_out > limit) {
		pd_set_error(err, PD_ERR_DECOMPRESS, d->offset,
			     "decompressed data exceeds the limit (%llu bytes from %llu compressed)",
			     (unsigned long long)d->total_out, (unsigned long long)d->total_in);
		return -1;
	}
	return 0;
}

int decomp_next(pd_decomp *d, int swap, const uint8_t **rec, uint32_t *size, pd_error *err)
{
	for (;;) {
		size_t avail = d->wr - d->rd;

		if (avail >= 8) {
			uint16_t sz = load_u16(d->out + d->rd + 6, swap);

			if (sz < 8) {
				pd_set_error(err, PD_ERR_BAD_RECORD, d->offset,
					     "record size %u smaller than its header inside compressed data",
					     sz);
				return -1;
			}
			if (avail >= sz) {
				*rec = d->out + d->rd;
				*size = sz;
				d->rd += sz;
				return 1;
			}
		}
		if (d->in_pos >= d->in_len && !d->full)
			return 0;
		{
			size_t before_in = d->in_pos, before_out = d->wr - d->rd;

			if (fill(d, err) < 0)
				return -1;
			if (d->in_pos == before_in && d->wr - d->rd == before_out) {
				if (before_in >= d->in_len) {
					d->full = 0;
					return 0;
				}
				pd_set_error(err, PD_ERR_DECOMPRESS, d->offset,
					     "zstd made no progress on compressed payload");
				return -1;
			}
		}
	}
}

size_t decomp_pending(const pd_decomp *d)
{
	return d->wr - d->rd;
}

uint64_t decomp_total_out(const pd_decomp *d)
{
	return d->total_out;
}
