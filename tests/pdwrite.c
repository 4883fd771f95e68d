/* pdwrite.c - a small perf.data writer for tests (see pdwrite.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "pdwrite.h"

#define PDW_MAX_EVENTS 64
#define PDW_MAX_FEATS 64
#define PDW_HEADER_SIZE 104	/* perf_file_header with the features bitmap */
#define PDW_V1_HEADER_SIZE 72	/* the legacy header: no features bitmap */
#define PDW_PIPE_HEADER_SIZE 16
#define PDW_BRANCH_HW_INDEX (1ULL << 17)	/* PERF_SAMPLE_BRANCH_HW_INDEX */

typedef struct pdw_buf {
	uint8_t *p;
	size_t len, cap;
} pdw_buf;

typedef struct pdw_feat {
	int id;
	pdw_buf body;
} pdw_feat;

struct pdw {
	pdw_config cfg;
	int failed;			/* sticky: out of memory, misuse, zstd */
	pdw_event events[PDW_MAX_EVENTS];
	char *names[PDW_MAX_EVENTS];
	size_t nr_events;
	pdw_feat feats[PDW_MAX_FEATS];
	size_t nr_feats;
	pdw_buf data;			/* outer records, as they will be in the file */
	pdw_buf rec;			/* the record being built */
	pdw_buf *cur;			/* where pdw_put_* write: rec or a feature body */
	int in_record;
	uint64_t *rec_offs;		/* outer record offsets, relative to data */
	size_t nr_rec_offs, cap_rec_offs;
	uint64_t data_offset;		/* known after pdw_finish */
	uint64_t attrs_offset;
	/* compression */
	ZSTD_CCtx *cctx;
	int compressing, compressed2;
	size_t chunk;
	pdw_buf zin;			/* records waiting to be compressed */
};

static int buf_reserve(pdw *w, pdw_buf *b, size_t n)
{
	if (w->failed)
		return -1;
	if (b->cap - b->len >= n)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p) {
		w->failed = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void buf_add(pdw *w, pdw_buf *b, const void *p, size_t n)
{
	if (n == 0 || buf_reserve(w, b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void buf_zero(pdw *w, pdw_buf *b, size_t n)
{
	if (n == 0 || buf_reserve(w, b, n))
		return;
	memset(b->p + b->len, 0, n);
	b->len += n;
}

/* Encode v (host value) as n bytes in the file's byte order at p. */
static void enc(const pdw *w, uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned shift = w->cfg.big_endian ? 8 * (n - 1 - i) : 8 * i;
		p[i] = (uint8_t)(v >> shift);
	}
}

static void buf_uint(pdw *w, pdw_buf *b, uint64_t v, unsigned n)
{
	uint8_t tmp[8];
	enc(w, tmp, v, n);
	buf_add(w, b, tmp, n);
}

static void buf_bytes_at(pdw *w, pdw_buf *b, size_t at, uint64_t v, unsigned n)
{
	if (at + n <= b->len)
		enc(w, b->p + at, v, n);
	else
		w->failed = 1;
}

/* A big-endian compiler allocates bitfields from the most significant bit
 * down: bit k of the little-endian layout is bit 63-k of the stored word. */
static uint64_t flags_word(const pdw *w, uint64_t flags)
{
	if (!w->cfg.big_endian)
		return flags;
	uint64_t r = 0;
	for (unsigned k = 0; k < 64; k++)
		if (flags & (1ULL << k))
			r |= 1ULL << (63 - k);
	return r;
}

pdw *pdw_new(const pdw_config *cfg)
{
	pdw *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->cfg = *cfg;
	if (w->cfg.attr_size == 0)
		w->cfg.attr_size = 136;
	if (w->cfg.attr_size < 64 || w->cfg.attr_size > 136 || w->cfg.attr_size % 8)
		w->failed = 1;
	return w;
}

void pdw_free(pdw *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nr_events; i++)
		free(w->names[i]);
	for (size_t i = 0; i < w->nr_feats; i++)
		free(w->feats[i].body.p);
	free(w->data.p);
	free(w->rec.p);
	free(w->zin.p);
	free(w->rec_offs);
	ZSTD_freeCCtx(w->cctx);
	free(w);
}

int pdw_add_event(pdw *w, const pdw_event *ev)
{
	if (w->nr_events >= PDW_MAX_EVENTS || ev->nr_ids > PDW_MAX_IDS) {
		w->failed = 1;
		return -1;
	}
	size_t i = w->nr_events++;
	w->events[i] = *ev;
	w->names[i] = ev->name ? strdup(ev->name) : NULL;
	w->events[i].name = w->names[i];
	return (int)i;
}

int pdw_add_cpu_clock(pdw *w, uint64_t sample_type, uint64_t id)
{
	pdw_event ev = { .attr = { .type = 1, .sample_period = 1,
				   .sample_type = sample_type,
				   .flags = PD_ATTR_SAMPLE_ID_ALL },
			 .name = "cpu-clock", .ids = { id }, .nr_ids = 1 };

	return pdw_add_event(w, &ev);
}

/* perf_event_attr in file order, cfg.attr_size bytes. */
static void put_attr(pdw *w, pdw_buf *b, const pd_attr *a)
{
	uint8_t full[136];
	struct { unsigned off, n; uint64_t v; } f[] = {
		{ 0, 4, a->type }, { 4, 4, w->cfg.attr_size }, { 8, 8, a->config },
		{ 16, 8, a->sample_period }, { 24, 8, a->sample_type },
		{ 32, 8, a->read_format }, { 40, 8, flags_word(w, a->flags) },
		{ 48, 4, a->wakeup_events }, { 52, 4, a->bp_type }, { 56, 8, a->config1 },
		{ 64, 8, a->config2 }, { 72, 8, a->branch_sample_type },
		{ 80, 8, a->sample_regs_user }, { 88, 4, a->sample_stack_user },
		{ 92, 4, (uint32_t)a->clockid }, { 96, 8, a->sample_regs_intr },
		{ 104, 4, a->aux_watermark }, { 108, 2, a->sample_max_stack },
		{ 112, 4, a->aux_sample_size }, { 120, 8, a->sig_data }, { 128, 8, a->config3 },
	};
	memset(full, 0, sizeof(full));
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		enc(w, full + f[i].off, f[i].v, f[i].n);
	buf_add(w, b, full, w->cfg.attr_size);
}

/* ---- field writers ------------------------------------------------------ */

void pdw_put_u8(pdw *w, uint8_t v) { buf_add(w, w->cur, &v, 1); }
void pdw_put_u16(pdw *w, uint16_t v) { buf_uint(w, w->cur, v, 2); }
void pdw_put_u32(pdw *w, uint32_t v) { buf_uint(w, w->cur, v, 4); }
void pdw_put_u64(pdw *w, uint64_t v) { buf_uint(w, w->cur, v, 8); }
void pdw_put_bytes(pdw *w, const void *p, size_t n) { buf_add(w, w->cur, p, n); }

void pdw_put_string(pdw *w, const char *s, size_t align)
{
	size_t n = strlen(s) + 1;
	size_t padded = (n + align - 1) / align * align;
	buf_add(w, w->cur, s, n - 1);
	buf_zero(w, w->cur, padded - (n - 1));
}

void pdw_put_header_string(pdw *w, const char *s)
{
	size_t n = strlen(s) + 1;
	pdw_put_u32(w, (uint32_t)((n + 63) / 64 * 64));
	pdw_put_string(w, s, 64);
}

void pdw_put_pad8(pdw *w)
{
	buf_zero(w, w->cur, (8 - w->cur->len % 8) % 8);
}

/* ---- features ----------------------------------------------------------- */

void pdw_feature_begin(pdw *w, int feat)
{
	if (w->in_record || feat < 1 || feat >= PD_FEAT_MAX || w->nr_feats >= PDW_MAX_FEATS) {
		w->failed = 1;
		return;
	}
	pdw_feat *f = &w->feats[w->nr_feats++];
	f->id = feat;
	w->cur = &f->body;
}

void pdw_feature_end(pdw *w)
{
	w->cur = NULL;
}

void pdw_feature_string(pdw *w, int feat, const char *s)
{
	pdw_feature_begin(w, feat);
	if (!w->failed)
		pdw_put_header_string(w, s);
	pdw_feature_end(w);
}

void pdw_feature_event_desc(pdw *w)
{
	pdw_feature_begin(w, PD_FEAT_EVENT_DESC);
	if (w->failed)
		return;
	pdw_put_u32(w, (uint32_t)w->nr_events);
	pdw_put_u32(w, w->cfg.attr_size);
	for (size_t i = 0; i < w->nr_events; i++) {
		const pdw_event *e = &w->events[i];
		put_attr(w, w->cur, &e->attr);
		pdw_put_u32(w, (uint32_t)e->nr_ids);
		pdw_put_header_string(w, e->name ? e->name : "");
		for (size_t j = 0; j < e->nr_ids; j++)
			pdw_put_u64(w, e->ids[j]);
	}
	pdw_feature_end(w);
}

/* ---- records ------------------------------------------------------------ */

void pdw_record_begin(pdw *w, uint32_t type, uint16_t misc)
{
	if (w->in_record) {
		w->failed = 1;
		return;
	}
	w->in_record = 1;
	w->rec.len = 0;
	w->cur = &w->rec;
	buf_uint(w, &w->rec, type, 4);
	buf_uint(w, &w->rec, misc, 2);
	buf_uint(w, &w->rec, 0, 2);	/* size, patched at the end */
}

static void put_sample_id(pdw *w, const pd_attr *a, const pd_sample_id *sid)
{
	static const pd_sample_id zero;
	uint64_t st = a->sample_type;
	if (!sid)
		sid = &zero;
	if (st & PD_SAMPLE_TID) {
		pdw_put_u32(w, sid->pid);
		pdw_put_u32(w, sid->tid);
	}
	if (st & PD_SAMPLE_TIME)
		pdw_put_u64(w, sid->time);
	if (st & PD_SAMPLE_ID)
		pdw_put_u64(w, sid->id);
	if (st & PD_SAMPLE_STREAM_ID)
		pdw_put_u64(w, sid->stream_id);
	if (st & PD_SAMPLE_CPU) {
		pdw_put_u32(w, sid->cpu);
		pdw_put_u32(w, 0);
	}
	if (st & PD_SAMPLE_IDENTIFIER)
		pdw_put_u64(w, sid->identifier);
}

static void note_offset(pdw *w)
{
	if (w->nr_rec_offs == w->cap_rec_offs) {
		size_t cap = w->cap_rec_offs ? 2 * w->cap_rec_offs : 64;
		uint64_t *p = realloc(w->rec_offs, cap * sizeof(*p));
		if (!p) {
			w->failed = 1;
			return;
		}
		w->rec_offs = p;
		w->cap_rec_offs = cap;
	}
	w->rec_offs[w->nr_rec_offs++] = w->data.len;
}

/* An outer record goes to the data stream as it is. */
static void emit_outer(pdw *w, const void *p, size_t n)
{
	if (w->failed)
		return;
	note_offset(w);
	buf_add(w, &w->data, p, n);
}

static void compress_pending(pdw *w, ZSTD_EndDirective mode);

void pdw_record_end(pdw *w, int trailer_event, const pd_sample_id *sid)
{
	if (!w->in_record) {
		w->failed = 1;
		return;
	}
	if (trailer_event >= 0 && (size_t)trailer_event < w->nr_events &&
	    (w->events[trailer_event].attr.flags & PD_ATTR_SAMPLE_ID_ALL))
		put_sample_id(w, &w->events[trailer_event].attr, sid);
	w->in_record = 0;
	w->cur = NULL;
	if (w->failed)
		return;
	/* perf keeps records 8-aligned except a few (build-id records and
	 * pipe-mode features are 36 + 64n bytes), so only the u16 limit holds */
	if (w->rec.len > 0xffff) {
		fprintf(stderr, "pdwrite: record of %zu bytes cannot be written\n", w->rec.len);
		w->failed = 1;
		return;
	}
	buf_bytes_at(w, &w->rec, 6, w->rec.len, 2);
	if (w->compressing) {
		buf_add(w, &w->zin, w->rec.p, w->rec.len);
		if (w->zin.len >= (1u << 20))
			compress_pending(w, ZSTD_e_flush);
	} else {
		emit_outer(w, w->rec.p, w->rec.len);
	}
}

void pdw_raw(pdw *w, const void *p, size_t n)
{
	if (w->in_record || w->compressing) {
		w->failed = 1;
		return;
	}
	buf_add(w, &w->data, p, n);
}

static unsigned popcount64(uint64_t v)
{
	unsigned n = 0;
	for (; v; v &= v - 1)
		n++;
	return n;
}

static void put_regs(pdw *w, const pd_regs *r, uint64_t mask)
{
	pdw_put_u64(w, r->abi);
	if (r->abi == 0)
		return;
	unsigned n = popcount64(mask);
	for (unsigned i = 0; i < n; i++)
		pdw_put_u64(w, r->regs && i < r->nr ? r->regs[i] : 0);
}

static void put_read(pdw *w, uint64_t rf, const pd_read *rd)
{
	static const pd_read_value zero;
	if (rf & PD_FORMAT_GROUP) {
		pdw_put_u64(w, rd->nr);
		if (rf & PD_FORMAT_TOTAL_TIME_ENABLED)
			pdw_put_u64(w, rd->time_enabled);
		if (rf & PD_FORMAT_TOTAL_TIME_RUNNING)
			pdw_put_u64(w, rd->time_running);
		for (uint64_t i = 0; i < rd->nr; i++) {
			const pd_read_value *v = rd->values ? &rd->values[i] : &zero;
			pdw_put_u64(w, v->value);
			if (rf & PD_FORMAT_ID)
				pdw_put_u64(w, v->id);
			if (rf & PD_FORMAT_LOST)
				pdw_put_u64(w, v->lost);
		}
		return;
	}
	const pd_read_value *v = rd->values ? &rd->values[0] : &zero;
	pdw_put_u64(w, v->value);
	if (rf & PD_FORMAT_TOTAL_TIME_ENABLED)
		pdw_put_u64(w, rd->time_enabled);
	if (rf & PD_FORMAT_TOTAL_TIME_RUNNING)
		pdw_put_u64(w, rd->time_running);
	if (rf & PD_FORMAT_ID)
		pdw_put_u64(w, v->id);
	if (rf & PD_FORMAT_LOST)
		pdw_put_u64(w, v->lost);
}

/*
 * SAMPLE: { identifier; ip; pid, tid; time; addr; id; stream_id; cpu, res;
 * period; read; callchain nr, ips[]; raw u32 size, data; branch nr,
 * [hw_idx], entries; regs_user abi, regs; stack_user size, data, dyn_size;
 * weight; data_src; transaction; regs_intr; phys_addr; cgroup;
 * data_page_size; code_page_size; aux size, data }, each as sample_type says.
 */
void pdw_sample(pdw *w, int ev, uint16_t misc, const pd_sample *s)
{
	if (ev < 0 || (size_t)ev >= w->nr_events) {
		w->failed = 1;
		return;
	}
	const pd_attr *a = &w->events[ev].attr;
	uint64_t st = a->sample_type;
	pdw_record_begin(w, PD_RECORD_SAMPLE, misc);
	if (st & PD_SAMPLE_IDENTIFIER)
		pdw_put_u64(w, s->identifier);
	if (st & PD_SAMPLE_IP)
		pdw_put_u64(w, s->ip);
	if (st & PD_SAMPLE_TID) {
		pdw_put_u32(w, s->pid);
		pdw_put_u32(w, s->tid);
	}
	if (st & PD_SAMPLE_TIME)
		pdw_put_u64(w, s->time);
	if (st & PD_SAMPLE_ADDR)
		pdw_put_u64(w, s->addr);
	if (st & PD_SAMPLE_ID)
		pdw_put_u64(w, s->id);
	if (st & PD_SAMPLE_STREAM_ID)
		pdw_put_u64(w, s->stream_id);
	if (st & PD_SAMPLE_CPU) {
		pdw_put_u32(w, s->cpu);
		pdw_put_u32(w, 0);
	}
	if (st & PD_SAMPLE_PERIOD)
		pdw_put_u64(w, s->period);
	if (st & PD_SAMPLE_READ)
		put_read(w, a->read_format, &s->read);
	if (st & PD_SAMPLE_CALLCHAIN) {
		pdw_put_u64(w, s->nr_callchain);
		for (uint64_t i = 0; i < s->nr_callchain; i++)
			pdw_put_u64(w, s->callchain[i]);
	}
	if (st & PD_SAMPLE_RAW) {
		/* the kernel pads raw data so that size + data end 8-aligned */
		pdw_put_u32(w, s->raw_size);
		pdw_put_bytes(w, s->raw, s->raw_size);
	}
	if (st & PD_SAMPLE_BRANCH_STACK) {
		pdw_put_u64(w, s->nr_branches);
		if (a->branch_sample_type & PDW_BRANCH_HW_INDEX)
			pdw_put_u64(w, s->branch_hw_idx);
		for (uint64_t i = 0; i < s->nr_branches; i++) {
			pdw_put_u64(w, s->branches[i].from);
			pdw_put_u64(w, s->branches[i].to);
			pdw_put_u64(w, s->branches[i].flags);
		}
	}
	if (st & PD_SAMPLE_REGS_USER)
		put_regs(w, &s->regs_user, a->sample_regs_user);
	if (st & PD_SAMPLE_STACK_USER) {
		pdw_put_u64(w, s->stack_user_size);
		if (s->stack_user_size) {
			pdw_put_bytes(w, s->stack_user, s->stack_user_size);
			pdw_put_u64(w, s->stack_user_dyn_size);
		}
	}
	if (st & PD_SAMPLE_WEIGHT_STRUCT)
		pdw_put_u64(w, (s->weight & 0xffffffffu) | (uint64_t)s->weight_var2 << 32 |
				       (uint64_t)s->weight_var3 << 48);
	else if (st & PD_SAMPLE_WEIGHT)
		pdw_put_u64(w, s->weight);
	if (st & PD_SAMPLE_DATA_SRC)
		pdw_put_u64(w, s->data_src);
	if (st & PD_SAMPLE_TRANSACTION)
		pdw_put_u64(w, s->transaction);
	if (st & PD_SAMPLE_REGS_INTR)
		put_regs(w, &s->regs_intr, a->sample_regs_intr);
	if (st & PD_SAMPLE_PHYS_ADDR)
		pdw_put_u64(w, s->phys_addr);
	if (st & PD_SAMPLE_CGROUP)
		pdw_put_u64(w, s->cgroup);
	if (st & PD_SAMPLE_DATA_PAGE_SIZE)
		pdw_put_u64(w, s->data_page_size);
	if (st & PD_SAMPLE_CODE_PAGE_SIZE)
		pdw_put_u64(w, s->code_page_size);
	if (st & PD_SAMPLE_AUX) {
		pdw_put_u64(w, s->aux_size);
		pdw_put_bytes(w, s->aux, s->aux_size);
	}
	pdw_record_end(w, -1, NULL);
}

void pdw_mmap(pdw *w, int ev, const pd_mmap *m, const pd_sample_id *sid)
{
	pdw_record_begin(w, PD_RECORD_MMAP, PD_MISC_USER);
	pdw_put_u32(w, m->pid);
	pdw_put_u32(w, m->tid);
	pdw_put_u64(w, m->start);
	pdw_put_u64(w, m->len);
	pdw_put_u64(w, m->pgoff);
	pdw_put_string(w, m->filename ? m->filename : "", 8);
	pdw_record_end(w, ev, sid);
}

/* MMAP2: pid, tid, start, len, pgoff, {maj, min, ino, ino_generation |
 * build_id_size, 3 reserved, build_id[20]}, prot, flags, filename. */
void pdw_mmap2(pdw *w, int ev, uint16_t misc, const pd_mmap *m, const pd_sample_id *sid)
{
	pdw_record_begin(w, PD_RECORD_MMAP2, misc);
	pdw_put_u32(w, m->pid);
	pdw_put_u32(w, m->tid);
	pdw_put_u64(w, m->start);
	pdw_put_u64(w, m->len);
	pdw_put_u64(w, m->pgoff);
	if (misc & PD_MISC_MMAP_BUILD_ID) {
		pdw_put_u8(w, m->build_id_size);
		pdw_put_u8(w, 0);
		pdw_put_u16(w, 0);
		pdw_put_bytes(w, m->build_id, 20);
	} else {
		pdw_put_u32(w, m->maj);
		pdw_put_u32(w, m->min);
		pdw_put_u64(w, m->ino);
		pdw_put_u64(w, m->ino_generation);
	}
	pdw_put_u32(w, m->prot);
	pdw_put_u32(w, m->flags);
	pdw_put_string(w, m->filename ? m->filename : "", 8);
	pdw_record_end(w, ev, sid);
}

void pdw_comm(pdw *w, int ev, const pd_comm *c, const pd_sample_id *sid)
{
	pdw_record_begin(w, PD_RECORD_COMM, c->exec ? PD_MISC_COMM_EXEC : 0);
	pdw_put_u32(w, c->pid);
	pdw_put_u32(w, c->tid);
	pdw_put_string(w, c->comm ? c->comm : "", 8);
	pdw_record_end(w, ev, sid);
}

void pdw_task(pdw *w, int ev, uint32_t type, const pd_task *t, const pd_sample_id *sid)
{
	pdw_record_begin(w, type, 0);
	pdw_put_u32(w, t->pid);
	pdw_put_u32(w, t->ppid);
	pdw_put_u32(w, t->tid);
	pdw_put_u32(w, t->ptid);
	pdw_put_u64(w, t->time);
	pdw_record_end(w, ev, sid);
}

/* LOST: id, lost. LOST_SAMPLES: lost (the id is in the trailer). */
void pdw_lost(pdw *w, int ev, uint32_t type, const pd_lost *l, const pd_sample_id *sid)
{
	pdw_record_begin(w, type, 0);
	if (type == PD_RECORD_LOST)
		pdw_put_u64(w, l->id);
	pdw_put_u64(w, l->lost);
	pdw_record_end(w, ev, sid);
}

void pdw_finished_round(pdw *w)
{
	pdw_record_begin(w, PD_RECORD_FINISHED_ROUND, 0);
	pdw_record_end(w, -1, NULL);
}

/* ---- compression -------------------------------------------------------- */

/* COMPRESSED: header, payload. COMPRESSED2: header, u64 data_size,
 * payload, zero padding to 8. */
static void emit_compressed(pdw *w, const uint8_t *p, size_t n)
{
	pdw_buf r = { 0 };
	size_t hdr = w->compressed2 ? 16 : 8;
	size_t size = hdr + n;
	if (w->compressed2)
		size = (size + 7) / 8 * 8;
	if (size > 0xffff) {
		w->failed = 1;
		return;
	}
	buf_uint(w, &r, w->compressed2 ? PD_RECORD_COMPRESSED2 : PD_RECORD_COMPRESSED, 4);
	buf_uint(w, &r, 0, 2);
	buf_uint(w, &r, size, 2);
	if (w->compressed2)
		buf_uint(w, &r, n, 8);
	buf_add(w, &r, p, n);
	buf_zero(w, &r, size - r.len);
	if (!w->failed)
		emit_outer(w, r.p, r.len);
	free(r.p);
}

static void compress_pending(pdw *w, ZSTD_EndDirective mode)
{
	pdw_buf out = { 0 };
	ZSTD_inBuffer in = { w->zin.p, w->zin.len, 0 };
	size_t rc;
	do {
		if (buf_reserve(w, &out, ZSTD_CStreamOutSize()))
			break;
		ZSTD_outBuffer o = { out.p + out.len, out.cap - out.len, 0 };
		rc = ZSTD_compressStream2(w->cctx, &o, &in, mode);
		if (ZSTD_isError(rc)) {
			fprintf(stderr, "pdwrite: zstd: %s\n", ZSTD_getErrorName(rc));
			w->failed = 1;
			break;
		}
		out.len += o.pos;
	} while (rc != 0 || in.pos < in.size);
	w->zin.len = 0;
	for (size_t off = 0; !w->failed && off < out.len; off += w->chunk) {
		size_t n = out.len - off < w->chunk ? out.len - off : w->chunk;
		emit_compressed(w, out.p + off, n);
	}
	free(out.p);
}

void pdw_compress_begin(pdw *w, int compressed2, size_t chunk, int level)
{
	if (w->compressing || w->in_record || chunk == 0 || chunk > 0xffff - 16) {
		w->failed = 1;
		return;
	}
	if (!w->cctx) {
		w->cctx = ZSTD_createCCtx();
		if (!w->cctx) {
			w->failed = 1;
			return;
		}
		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
	}
	w->compressing = 1;
	w->compressed2 = compressed2;
	w->chunk = chunk;
}

void pdw_compress_flush(pdw *w)
{
	if (!w->compressing || w->in_record) {
		w->failed = 1;
		return;
	}
	if (w->zin.len)
		compress_pending(w, ZSTD_e_flush);
}

void pdw_compress_end(pdw *w)
{
	if (!w->compressing) {
		w->failed = 1;
		return;
	}
	/* flushed, not ended: perf leaves the frame open across records */
	compress_pending(w, ZSTD_e_flush);
	w->compressing = 0;
}

/* ---- output ------------------------------------------------------------- */

static int cmp_feat(const void *a, const void *b)
{
	const pdw_feat *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* Pipe mode: header {magic, 16}; HEADER_ATTR records (attr, ids[]);
 * EVENT_UPDATE name records; HEADER_FEATURE records (u64 id, body); data. */
static void finish_pipe(pdw *w, pdw_buf *out)
{
	buf_add(w, out, "PERFILE2", 8);
	if (w->cfg.big_endian) {
		/* the magic is a u64 written in the file's order */
		uint8_t *m = out->p + out->len - 8;
		for (int i = 0; i < 4; i++) {
			uint8_t t = m[i];
			m[i] = m[7 - i];
			m[7 - i] = t;
		}
	}
	buf_uint(w, out, PDW_PIPE_HEADER_SIZE, 8);
	for (size_t i = 0; i < w->nr_events; i++) {
		const pdw_event *e = &w->events[i];
		size_t at = out->len;
		buf_uint(w, out, PD_RECORD_HEADER_ATTR, 4);
		buf_uint(w, out, 0, 2);
		buf_uint(w, out, 0, 2);
		put_attr(w, out, &e->attr);
		for (size_t j = 0; j < e->nr_ids; j++)
			buf_uint(w, out, e->ids[j], 8);
		buf_bytes_at(w, out, at + 6, out->len - at, 2);
	}
	for (size_t i = 0; i < w->nr_events; i++) {
		const pdw_event *e = &w->events[i];
		if (!e->name || !e->nr_ids)
			continue;
		size_t at = out->len;
		size_t n = strlen(e->name) + 1;
		buf_uint(w, out, PD_RECORD_EVENT_UPDATE, 4);
		buf_uint(w, out, 0, 2);
		buf_uint(w, out, 0, 2);
		buf_uint(w, out, 2, 8);	/* PERF_EVENT_UPDATE__NAME */
		buf_uint(w, out, e->ids[0], 8);
		buf_add(w, out, e->name, n);
		buf_zero(w, out, (8 - n % 8) % 8);
		buf_bytes_at(w, out, at + 6, out->len - at, 2);
	}
	for (size_t i = 0; i < w->nr_feats; i++) {
		const pdw_feat *f = &w->feats[i];
		size_t at = out->len;
		buf_uint(w, out, PD_RECORD_HEADER_FEATURE, 4);
		buf_uint(w, out, 0, 2);
		buf_uint(w, out, 0, 2);
		buf_uint(w, out, (uint64_t)f->id, 8);
		/* not padded: perf writes header + id + body as they are */
		buf_add(w, out, f->body.p, f->body.len);
		if (out->len - at > 0xffff)
			w->failed = 1;
		buf_bytes_at(w, out, at + 6, out->len - at, 2);
	}
	w->data_offset = out->len;
	buf_add(w, out, w->data.p, w->data.len);
}

/* File mode: header; ids of each event; attrs (attr, ids section); data;
 * feature section table ({offset, size} per set bit, ascending); bodies. */
static void finish_file(pdw *w, pdw_buf *out)
{
	size_t hsize = w->cfg.version1 ? PDW_V1_HEADER_SIZE : PDW_HEADER_SIZE;
	uint64_t entry = w->cfg.attr_size + 16;
	buf_zero(w, out, hsize);
	if (w->failed)
		return;
	/* "PERFFILE" is compared as bytes; "PERFILE2" is a u64 in file order */
	memcpy(out->p, w->cfg.version1 ? "PERFFILE" : "PERFILE2", 8);
	if (w->cfg.big_endian && !w->cfg.version1)
		for (int i = 0; i < 4; i++) {
			uint8_t t = out->p[i];
			out->p[i] = out->p[7 - i];
			out->p[7 - i] = t;
		}
	uint64_t ids_at[PDW_MAX_EVENTS];
	for (size_t i = 0; i < w->nr_events; i++) {
		ids_at[i] = out->len;
		for (size_t j = 0; j < w->events[i].nr_ids; j++)
			buf_uint(w, out, w->events[i].ids[j], 8);
	}
	w->attrs_offset = out->len;
	for (size_t i = 0; i < w->nr_events; i++) {
		put_attr(w, out, &w->events[i].attr);
		buf_uint(w, out, ids_at[i], 8);
		buf_uint(w, out, w->events[i].nr_ids * 8, 8);
	}
	w->data_offset = out->len;
	buf_add(w, out, w->data.p, w->data.len);
	uint64_t feat_table = out->len;
	size_t nf = w->cfg.version1 ? 0 : w->nr_feats;
	if (nf) {
		qsort(w->feats, nf, sizeof(w->feats[0]), cmp_feat);
		buf_zero(w, out, 16 * nf);
		for (size_t i = 0; i < nf; i++) {
			uint64_t at = out->len;
			buf_add(w, out, w->feats[i].body.p, w->feats[i].body.len);
			buf_bytes_at(w, out, feat_table + 16 * i, at, 8);
			buf_bytes_at(w, out, feat_table + 16 * i + 8, w->feats[i].body.len, 8);
		}
	}
	if (w->failed)
		return;
	buf_bytes_at(w, out, 8, hsize, 8);
	buf_bytes_at(w, out, 16, entry, 8);
	buf_bytes_at(w, out, 24, w->attrs_offset, 8);
	buf_bytes_at(w, out, 32, w->nr_events * entry, 8);
	buf_bytes_at(w, out, 40, w->data_offset, 8);
	buf_bytes_at(w, out, 48, w->data.len, 8);
	/* event_types section (56, 64) stays empty */
	for (size_t i = 0; i < nf; i++) {
		int id = w->feats[i].id;
		size_t word = 72 + 8 * (size_t)(id / 64);
		uint64_t v = 0;
		for (int k = 0; k < 8; k++) {
			unsigned shift = w->cfg.big_endian ? 8 * (7 - k) : 8 * k;
			v |= (uint64_t)out->p[word + k] << shift;
		}
		buf_bytes_at(w, out, word, v | 1ULL << (id % 64), 8);
	}
}

int pdw_finish(pdw *w, uint8_t **buf, size_t *len)
{
	pdw_buf out = { 0 };
	*buf = NULL;
	*len = 0;
	if (w->in_record || w->compressing)
		w->failed = 1;
	if (w->cfg.pipe)
		finish_pipe(w, &out);
	else
		finish_file(w, &out);
	if (w->failed) {
		free(out.p);
		return -1;
	}
	*buf = out.p;
	*len = out.len;
	return 0;
}

uint64_t pdw_data_offset(const pdw *w) { return w->data_offset; }
uint64_t pdw_data_size(const pdw *w) { return w->data.len; }
uint64_t pdw_attrs_offset(const pdw *w) { return w->attrs_offset; }
size_t pdw_nr_records(const pdw *w) { return w->nr_rec_offs; }

uint64_t pdw_record_offset(const pdw *w, size_t i)
{
	return i < w->nr_rec_offs ? w->data_offset + w->rec_offs[i] : 0;
}

int pdw_write_file(const char *path, const void *buf, size_t len)
{
	FILE *fp = fopen(path, "wb");
	if (!fp) {
		fprintf(stderr, "pdwrite: %s: %s\n", path, strerror(errno));
		return -1;
	}
	int rc = fwrite(buf, 1, len, fp) == len ? 0 : -1;
	if (fclose(fp) != 0)
		rc = -1;
	return rc;
}
