/* block.c - encoding, compressing and decoding sample blocks. */
#include "config.h"

#include <stdlib.h>

#include <zstd.h>

#include "engine/log.h"
#include "engine/block.h"

struct pe_block_packer {
	ZSTD_CCtx *zc;
	uint8_t *raw, *zbuf;
	size_t zcap;
};

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	return p + 4;
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	return put32(put32(p, (uint32_t)v), (uint32_t)(v >> 32));
}

/* OUT: raw bytes (PE_BLOCK_RAW_MAX room); returns their length. */
static size_t encode(const pe_block *b, uint8_t *raw)
{
	uint8_t *p = put32(put32(raw, PE_BLOCK_MAGIC), b->n);
	const uint32_t *u32cols[] = { b->event, b->cpu, b->pid, b->tid };
	uint64_t prev = 0;
	uint32_t i, c;

	for (i = 0; i < b->n; i++) {
		p = put64(p, b->time[i] - prev);
		prev = b->time[i];
	}
	for (c = 0; c < 4; c++)
		for (i = 0; i < b->n; i++)
			p = put32(p, u32cols[c][i]);
	for (i = 0; i < b->n; i++)
		p = put64(p, b->period[i]);
	for (i = 0; i < b->n; i++)
		p = put64(p, b->weight[i]);
	for (i = 0; i < b->n; i++)
		p = put64(p, b->offcpu[i]);
	for (i = 0; i < b->n; i++)
		p = put32(p, b->stack[i]);
	for (i = 0; i < b->n; i++)
		p = put32(p, b->comm[i]);
	return (size_t)(p - raw);
}

pe_block_packer *pe_block_packer_new(void)
{
	pe_block_packer *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->zcap = ZSTD_compressBound(PE_BLOCK_RAW_MAX);
	k->raw = malloc(PE_BLOCK_RAW_MAX);
	k->zbuf = malloc(k->zcap);
	k->zc = ZSTD_createCCtx();
	if (!k->raw || !k->zbuf || !k->zc) {
		pe_block_packer_free(k);
		return NULL;
	}
	return k;
}

void pe_block_packer_free(pe_block_packer *k)
{
	if (!k)
		return;
	free(k->raw);
	free(k->zbuf);
	ZSTD_freeCCtx(k->zc);
	free(k);
}

int pe_block_pack(pe_block_packer *k, const pe_block *b, uint64_t seq, pe_packed_block *out)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t raw_len, z;
	uint32_t i;

	for (i = 0; i < b->n; i++) {
		if (b->time[i] < lo)
			lo = b->time[i];
		if (b->time[i] > hi)
			hi = b->time[i];
	}
	raw_len = encode(b, k->raw);
	z = ZSTD_compressCCtx(k->zc, k->zbuf, k->zcap, k->raw, raw_len, PE_BLOCK_ZLEVEL);
	if (ZSTD_isError(z)) {
		pe_warn("msg=\"zstd\" what=\"sample block\" error=\"%s\"", ZSTD_getErrorName(z));
		return -1;
	}
	out->seq = seq;
	out->nr = b->n;
	out->min_time = lo;
	out->max_time = hi;
	out->data = k->zbuf;
	out->len = z;
	return 0;
}

int pe_block_view_of(const void *data, size_t len, int64_t nr, uint8_t *raw, pe_block_view *v)
{
	unsigned long long want;
	size_t got, n;
	int v1;

	if (nr <= 0 || nr > PE_BLOCK_SAMPLES || !data)
		return -1;
	n = (size_t)nr;
	want = ZSTD_getFrameContentSize(data, len);
	v1 = want == 8 + n * PE_BLOCK_ROW_BYTES_V1;
	if (want != 8 + n * PE_BLOCK_ROW_BYTES && !v1)
		return -1;
	got = ZSTD_decompress(raw, PE_BLOCK_RAW_MAX, data, len);
	if (ZSTD_isError(got) || got != want ||
	    pe_get32(raw) != (v1 ? PE_BLOCK_MAGIC_V1 : PE_BLOCK_MAGIC) || pe_get32(raw + 4) != n)
		return -1;
	v->n = n;
	v->time = raw + 8;
	v->event = v->time + 8 * n;
	v->cpu = v->event + 4 * n;
	v->pid = v->cpu + 4 * n;
	v->tid = v->pid + 4 * n;
	v->period = v->tid + 4 * n;
	v->weight = v->period + 8 * n;
	v->offcpu = v1 ? NULL : v->weight + 8 * n;
	v->stack = v->weight + (v1 ? 8 : 16) * n;
	v->comm = v->stack + 4 * n;
	return 0;
}

int pe_block_decode(const void *data, size_t len, int64_t nr, uint8_t *raw, pe_block *b)
{
	pe_block_view v;
	uint64_t t = 0;
	size_t i;

	if (pe_block_view_of(data, len, nr, raw, &v) < 0)
		return -1;
	b->n = (uint32_t)v.n;
	for (i = 0; i < v.n; i++) {
		b->time[i] = t += pe_get64(v.time + 8 * i);
		b->event[i] = pe_get32(v.event + 4 * i);
		b->cpu[i] = pe_get32(v.cpu + 4 * i);
		b->pid[i] = pe_get32(v.pid + 4 * i);
		b->tid[i] = pe_get32(v.tid + 4 * i);
		b->period[i] = pe_get64(v.period + 8 * i);
		b->weight[i] = pe_get64(v.weight + 8 * i);
		b->offcpu[i] = pe_block_offcpu(&v, i);
		b->stack[i] = pe_get32(v.stack + 4 * i);
		b->comm[i] = pe_get32(v.comm + 4 * i);
	}
	return 0;
}
