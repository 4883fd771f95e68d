/*
 * test-hostile - inputs that must fail with a named offset and reason, or
 * end with a warning, never crash or hang: truncations, impossible sizes,
 * sections outside the file or over the header, a zstd bomb, corrupt zstd,
 * trailing garbage after a pipe stream; then thousands of random mutations
 * of valid recordings (run under ASan+UBSan by the sanitizer build).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "perfdata.h"
#include "wbuf.h"
#include "xorshift.h"

static int failures;

#define ST (PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_CALLCHAIN)

static void put_attr(wbuf *b)
{
	size_t s = b->len;

	put32(b, 1);
	put32(b, 112);
	put64(b, 0);
	put64(b, 4000);
	put64(b, ST);
	put64(b, 0);
	put64(b, PD_ATTR_SAMPLE_ID_ALL);
	zeros(b, 112 - (b->len - s));
}

static void put_sample(wbuf *b, uint64_t nr_chain, int truncate_chain)
{
	uint64_t i, n = truncate_chain ? 1 : nr_chain;

	put32(b, PD_RECORD_SAMPLE);
	put16(b, PD_MISC_USER);
	put16(b, (uint16_t)(8 + 8 + 8 + 8 + 8 + 8 * n));
	put64(b, 0x401000);
	put32(b, 1);
	put32(b, 1);
	put64(b, 12345);
	put64(b, nr_chain);
	for (i = 0; i < n; i++)
		put64(b, 0x402000 + i);
}

/* A file-mode recording around `data`; the header fields at 24.. may be
 * overwritten by the caller afterwards. */
static void file_around(wbuf *b, const wbuf *data)
{
	size_t attrs, d;

	put(b, "PERFILE2", 8);
	put64(b, 104);
	put64(b, 112 + 16);
	zeros(b, 104 - 24);
	put64(b, 77);		/* the one id, at 104 */
	attrs = b->len;
	put_attr(b);
	put64(b, 104);
	put64(b, 8);
	d = b->len;
	put(b, data->p, data->len);
	set64(b, 24, attrs);
	set64(b, 32, 128);
	set64(b, 40, d);
	set64(b, 48, data->len);
}

static void pipe_around(wbuf *b, const wbuf *data)
{
	put(b, "PERFILE2", 8);
	put64(b, 16);
	put32(b, PD_RECORD_HEADER_ATTR);
	put16(b, 0);
	put16(b, 8 + 112 + 8);
	put_attr(b);
	put64(b, 77);
	put(b, data->p, data->len);
}

/* Walk to the end; returns pd_next's last result (or -1 from open). */
static int walk(const wbuf *b, const pd_options *opt, pd_error *err, pd_file **keep)
{
	pd_file *f = pd_open_mem(b->p, b->len, opt, err);
	pd_record r;
	int rc;
	long guard = 0;

	if (!f)
		return -1;
	while ((rc = pd_next(f, &r, err)) > 0)
		if (++guard > 10000000) {
			fprintf(stderr, "FAIL: no end after 10M records\n");
			failures++;
			break;
		}
	if (keep)
		*keep = f;
	else
		pd_close(f);
	return rc;
}

static void expect_error(const char *name, const wbuf *b, int code, uint64_t offset, const char *text,
			 const pd_options *opt)
{
	pd_error err;
	char buf[400];
	int rc;

	memset(&err, 0, sizeof(err));
	rc = walk(b, opt, &err, NULL);
	pd_strerror(&err, buf, sizeof(buf));
	if (rc >= 0 || err.code != code || err.offset != offset || !strstr(err.msg, text)) {
		fprintf(stderr, "FAIL %s: rc %d, got \"%s\"; expected %s at offset %" PRIu64
			" mentioning \"%s\"\n", name, rc, buf, pd_errcode_name(code), offset, text);
		failures++;
	} else {
		printf("ok   %s: %s\n", name, buf);
	}
}

static void expect_warning(const char *name, const wbuf *b, const char *text, uint64_t samples)
{
	pd_error err;
	pd_file *f = NULL;
	int rc = walk(b, NULL, &err, &f);
	size_t i;
	int found = 0;
	char buf[400];

	if (f)
		for (i = 0; i < pd_nr_warnings(f); i++)
			found |= !!strstr(pd_warning(f, i), text);
	if (rc != 0 || !found || pd_get_stats(f)->records[PD_RECORD_SAMPLE] != samples) {
		fprintf(stderr, "FAIL %s: rc %d (%s), warning \"%s\" %s, %" PRIu64 " samples\n", name, rc,
			rc < 0 ? pd_strerror(&err, buf, sizeof(buf)) : "", text,
			found ? "found" : "missing", f ? pd_get_stats(f)->records[PD_RECORD_SAMPLE] : 0);
		failures++;
	} else {
		printf("ok   %s: ends with a warning\n", name);
	}
	pd_close(f);
}

static void reset(wbuf *b) { b->len = 0; }

/* zstd-compress `raw` into one COMPRESSED record (frame left open). */
static void put_compressed(wbuf *out, const void *raw, size_t len)
{
	ZSTD_CCtx *z = ZSTD_createCCtx();
	static uint8_t buf[60000];
	ZSTD_inBuffer in = { raw, len, 0 };
	ZSTD_outBuffer o = { buf, sizeof(buf), 0 };

	ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 19);
	while (in.pos < in.size)
		if (ZSTD_isError(ZSTD_compressStream2(z, &o, &in, ZSTD_e_continue)))
			abort();
	while (ZSTD_compressStream2(z, &o, &in, ZSTD_e_flush) > 0)
		;
	put32(out, PD_RECORD_COMPRESSED);
	put16(out, 0);
	put16(out, (uint16_t)(8 + o.pos));
	put(out, buf, o.pos);
	ZSTD_freeCCtx(z);
}

static uint64_t rnd_state = 0x1234567;

static uint64_t rnd(void)
{
	return xorshift64(&rnd_state);
}

/* Random byte flips, overwrites with boundary values, and truncations. */
static void mutate_and_walk(const wbuf *orig, int rounds, int ordered)
{
	wbuf m = { NULL, 0, 0, 0 };
	pd_options opt;
	pd_error err;
	int i, k;

	memset(&opt, 0, sizeof(opt));
	opt.ordered = ordered;
	for (i = 0; i < rounds; i++) {
		reset(&m);
		put(&m, orig->p, orig->len);
		for (k = 0; k < 1 + (int)(rnd() % 4); k++) {
			size_t at = rnd() % m.len;

			switch (rnd() % 4) {
			case 0:
				m.p[at] ^= (uint8_t)(1u << (rnd() % 8));
				break;
			case 1:
				m.p[at] = (uint8_t)rnd();
				break;
			case 2:
				if (at + 8 <= m.len)
					memset(m.p + at, (rnd() & 1) ? 0xff : 0, 1 + rnd() % 8);
				break;
			default:
				m.len = at;
				break;
			}
			if (!m.len)
				break;
		}
		walk(&m, &opt, &err, NULL);
	}
	free(m.p);
}

int main(void)
{
	wbuf b = { NULL, 0, 0, 0 }, d = { NULL, 0, 0, 0 }, raw = { NULL, 0, 0, 0 };
	pd_options opt;
	int i;
	uint8_t *zero;

	memset(&opt, 0, sizeof(opt));

	expect_error("empty input", &b, PD_ERR_TRUNCATED, 0, "too short", NULL);
	put(&b, "NOTPERF!", 8);
	put64(&b, 104);
	expect_error("bad magic", &b, PD_ERR_MAGIC, 0, "bad magic", NULL);

	for (i = 0; i < 3; i++)
		put_sample(&d, 2, 0);
	reset(&b);
	file_around(&b, &d);
	{
		pd_error err;

		if (walk(&b, NULL, &err, NULL) != 0) {
			fprintf(stderr, "FAIL: the valid base file does not parse\n");
			failures++;
		}
	}
	set64(&b, 48, 1 << 20);
	expect_error("data section past the end", &b, PD_ERR_BAD_OFFSET, 40, "data section", NULL);
	reset(&b);
	file_around(&b, &d);
	set64(&b, 24, 16);
	expect_error("attrs over the header", &b, PD_ERR_BAD_OFFSET, 24, "overlaps the header", NULL);
	reset(&b);
	file_around(&b, &d);
	set64(&b, 16, 8);
	expect_error("attr_size 8", &b, PD_ERR_BAD_SIZE, 16, "attr_size 8", NULL);
	reset(&b);
	file_around(&b, &d);
	set64(&b, 112 + 112, 1 << 30);	/* the attr's ids offset */
	expect_error("ids outside the file", &b, PD_ERR_BAD_OFFSET, 224, "ids section", NULL);
	reset(&b);
	file_around(&b, &d);
	b.len -= 20;
	expect_error("truncated file", &b, PD_ERR_BAD_OFFSET, 40, "outside", NULL);

	/* a record that claims more than the data section holds */
	reset(&b);
	file_around(&b, &d);
	set64(&b, 48, d.len - 20);
	expect_error("record past the data section", &b, PD_ERR_TRUNCATED, 240 + 2 * 56,
		     "runs past the end", NULL);
	/* record size 0 */
	reset(&b);
	file_around(&b, &d);
	memset(b.p + 240 + 56 + 6, 0, 2);
	expect_error("record size 0", &b, PD_ERR_BAD_RECORD, 240 + 56, "smaller than its 8-byte header",
		     NULL);
	/* a callchain longer than its sample */
	reset(&d);
	put_sample(&d, 1000, 1);
	reset(&b);
	file_around(&b, &d);
	expect_error("callchain past the sample", &b, PD_ERR_BAD_RECORD, 240, "CALLCHAIN", NULL);

	/* a zstd bomb: 256 MiB of valid 8-byte records in one small payload */
	zero = malloc(256u << 20);
	for (i = 0; i < (int)((256u << 20) / 8); i++) {
		uint32_t t = PD_RECORD_FINISHED_ROUND;
		uint16_t misc = 0, sz = 8;

		memcpy(zero + 8 * (size_t)i, &t, 4);
		memcpy(zero + 8 * (size_t)i + 4, &misc, 2);
		memcpy(zero + 8 * (size_t)i + 6, &sz, 2);
	}
	reset(&d);
	put_compressed(&d, zero, 256u << 20);
	free(zero);
	reset(&b);
	file_around(&b, &d);
	expect_error("zstd bomb", &b, PD_ERR_DECOMPRESS, 240, "exceeds the limit", NULL);
	opt.max_decompressed = 1000;
	reset(&raw);
	for (i = 0; i < 100; i++)
		put_sample(&raw, 2, 0);
	reset(&d);
	put_compressed(&d, raw.p, raw.len);
	reset(&b);
	file_around(&b, &d);
	expect_error("max_decompressed", &b, PD_ERR_DECOMPRESS, 240, "exceeds the limit", &opt);
	/* corrupt zstd payload */
	b.p[240 + 8 + 2] ^= 0xff;
	b.p[240 + 8 + 3] ^= 0xff;
	expect_error("corrupt zstd", &b, PD_ERR_DECOMPRESS, 240, "zstd", NULL);

	/* pipe mode: the stream ends inside a record, or text follows it */
	reset(&d);
	for (i = 0; i < 3; i++)
		put_sample(&d, 2, 0);
	reset(&b);
	pipe_around(&b, &d);
	b.len -= 10;
	expect_warning("pipe cut inside a record", &b, "trailing garbage", 2);
	reset(&b);
	pipe_around(&b, &d);
	put(&b, "[ perf record: Woken up 1 times to write data ]\n", 48);
	expect_warning("pipe trailing text", &b, "trailing garbage", 3);
	/* a HEADER_ATTR whose attr does not fit */
	reset(&b);
	pipe_around(&b, &d);
	memset(b.p + 16 + 12, 0xff, 2);
	expect_error("pipe attr size", &b, PD_ERR_BAD_RECORD, 16, "does not fit", NULL);

	/* random mutations of valid recordings, plain and compressed */
	reset(&d);
	for (i = 0; i < 40; i++)
		put_sample(&d, (uint64_t)(i % 6), 0);
	reset(&b);
	file_around(&b, &d);
	mutate_and_walk(&b, 3000, 0);
	mutate_and_walk(&b, 1000, 1);
	reset(&b);
	pipe_around(&b, &d);
	mutate_and_walk(&b, 3000, 0);
	reset(&raw);
	put(&raw, d.p, d.len);
	reset(&d);
	put_compressed(&d, raw.p, raw.len);
	reset(&b);
	file_around(&b, &d);
	mutate_and_walk(&b, 3000, 0);
	printf("mutations done\n");

	free(b.p);
	free(d.p);
	free(raw.p);
	printf("%d failures\n", failures);
	return failures ? 1 : 0;
}
