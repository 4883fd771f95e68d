/*
 * test-roundtrip - synthesize recordings with tests/pdwrite and check that
 * the parser reads back exactly what was written, field by field.
 *
 * Combinations: both byte orders x attr sizes 64..136 x sample_type
 * presets x file/pipe mode x uncompressed/COMPRESSED/COMPRESSED2, plus the
 * legacy PERFFILE v1 header. Every file carries every record type the
 * format defines (kernel 1..21; user 64..83 where they can stand alone in
 * a stream: HEADER_BUILD_ID, FINISHED_ROUND, ID_INDEX, AUXTRACE_INFO,
 * AUXTRACE with its payload, AUXTRACE_ERROR, THREAD_MAP, STAT_CONFIG,
 * STAT, STAT_ROUND, TIME_CONV, FINISHED_INIT; in pipe mode also
 * HEADER_ATTR, EVENT_UPDATE, HEADER_FEATURE; unknown types), sample_id_all
 * trailers, and feature sections.
 *
 * Exit 0 when everything matched, 1 otherwise (the first mismatches are
 * printed with the combination and record index).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pdwrite.h"

#define NR_RECORDS 160		/* records in the body of each file */
#define MAX_PRINTED 40		/* mismatches printed before going quiet */
#define BRANCH_HW_INDEX (1ULL << 17)
#define MISC_SWITCH_OUT_PREEMPT (1 << 14)
#define MISC_BUILD_ID_SIZE (1 << 15)

static unsigned long failures;
static char where[256];		/* the combination being checked */

static void fail(const char *fmt, ...)
{
	va_list ap;
	if (++failures > MAX_PRINTED)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "FAIL %s: ", where);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

#define EQ(what, got, want)                                                            \
	do {                                                                           \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                  \
		if (g_ != w_)                                                          \
			fail("%s: got %" PRIu64 " (0x%" PRIx64 "), want %" PRIu64     \
			     " (0x%" PRIx64 ")", what, g_, g_, w_, w_);                \
	} while (0)

static void eq_str(const char *what, const char *got, const char *want)
{
	if (!got || !want || strcmp(got, want))
		fail("%s: got \"%s\", want \"%s\"", what, got ? got : "(null)",
		     want ? want : "(null)");
}

static void eq_mem(const char *what, const void *got, const void *want, size_t n)
{
	if (n && (!got || memcmp(got, want, n)))
		fail("%s: %zu bytes differ", what, n);
}

/* ---- one combination ---------------------------------------------------- */

typedef struct combo {
	int pipe, big_endian, version1;
	unsigned attr_size;
	int preset;
	int compress;		/* 0, 1 = COMPRESSED, 2 = COMPRESSED2 */
	size_t chunk;		/* compressed payload bytes per record */
	int nr_events;
	int sample_id_all;
} combo;

enum { NR_PRESETS = 9 };

/* sample_type and read_format of each preset; bits the attr size cannot
 * describe (regs masks, branch_sample_type) are dropped in make_events(). */
static const struct {
	uint64_t sample_type, read_format;
} presets[NR_PRESETS] = {
	{ PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_PERIOD, 0 },
	{ PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ID |
		  PD_SAMPLE_CPU | PD_SAMPLE_PERIOD | PD_SAMPLE_CALLCHAIN, 0 },
	{ PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ADDR | PD_SAMPLE_ID |
		  PD_SAMPLE_STREAM_ID | PD_SAMPLE_CPU | PD_SAMPLE_PERIOD | PD_SAMPLE_READ,
	  PD_FORMAT_TOTAL_TIME_ENABLED | PD_FORMAT_TOTAL_TIME_RUNNING | PD_FORMAT_ID },
	{ PD_SAMPLE_IDENTIFIER | PD_SAMPLE_TIME | PD_SAMPLE_RAW | PD_SAMPLE_CALLCHAIN |
		  PD_SAMPLE_BRANCH_STACK, 0 },
	{ PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ID | PD_SAMPLE_REGS_USER |
		  PD_SAMPLE_STACK_USER | PD_SAMPLE_WEIGHT | PD_SAMPLE_DATA_SRC |
		  PD_SAMPLE_TRANSACTION, 0 },
	{ PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TIME | PD_SAMPLE_WEIGHT_STRUCT |
		  PD_SAMPLE_REGS_INTR | PD_SAMPLE_PHYS_ADDR | PD_SAMPLE_CGROUP |
		  PD_SAMPLE_DATA_PAGE_SIZE | PD_SAMPLE_CODE_PAGE_SIZE | PD_SAMPLE_AUX, 0 },
	{ PD_SAMPLE_IDENTIFIER, 0 },
	{ PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ID | PD_SAMPLE_READ,
	  PD_FORMAT_GROUP | PD_FORMAT_ID | PD_FORMAT_LOST | PD_FORMAT_TOTAL_TIME_ENABLED |
		  PD_FORMAT_TOTAL_TIME_RUNNING },
	/* every field the decoder takes from fixed offsets (sample.c) */
	{ PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ADDR |
		  PD_SAMPLE_ID | PD_SAMPLE_STREAM_ID | PD_SAMPLE_CPU | PD_SAMPLE_PERIOD |
		  PD_SAMPLE_CALLCHAIN, 0 },
};

/* A record as written, kept to compare with what the parser returns. The
 * arrays back the pointers in the pd_* values; entries never move. */
typedef struct exp_rec {
	uint32_t type;
	uint16_t misc;
	int ev;			/* event of a sample / trailer; -1 none */
	int outer;		/* written outside compression */
	size_t outer_index;	/* its index among the writer's outer records */
	int has_sid;
	pd_sample_id sid;
	pd_sample sample;
	pd_mmap mmap;
	pd_comm comm;
	pd_task task;
	pd_lost lost;
	pd_ksymbol ksym;
	pd_bpf_event bpf;
	pd_switch sw;
	pd_build_id bid;
	pd_auxtrace aux;
	uint8_t body[96];	/* generic records: the body as written */
	size_t body_len;
	uint64_t cc[8];
	pd_branch_entry br[3];
	uint64_t regs_u[8], regs_i[4];
	uint8_t raw[12];
	uint8_t stack[32];
	uint8_t auxdata[16];
	pd_read_value rv[3];
	char str[48];
} exp_rec;

typedef struct file_exp {
	combo c;
	pdw_event ev[3];
	exp_rec *recs;
	size_t nr_recs;
	uint64_t samples_per_event[3];
	uint64_t count[PD_RECORD_TYPE_MAX];
	uint64_t unknown;
	uint64_t lost, lost_samples;
	uint64_t first_time, last_time;
	size_t nr_outer;	/* outer records written (COMPRESSED excluded) */
} file_exp;

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static const char *event_names[3] = { "cpu-clock:ppp", "instructions:u", "sched:sched_switch" };

/* attr fields past the written size are zero when read back */
static void clip_attr(pd_attr *a, unsigned size)
{
	if (size < 72) a->config2 = 0;
	if (size < 80) a->branch_sample_type = 0;
	if (size < 88) a->sample_regs_user = 0;
	if (size < 92) a->sample_stack_user = 0;
	if (size < 96) a->clockid = 0;
	if (size < 104) a->sample_regs_intr = 0;
	if (size < 108) a->aux_watermark = 0;
	if (size < 110) a->sample_max_stack = 0;
	if (size < 116) a->aux_sample_size = 0;
	if (size < 128) a->sig_data = 0;
	if (size < 136) a->config3 = 0;
}

static void make_events(file_exp *fx)
{
	const combo *c = &fx->c;
	uint64_t st = presets[c->preset].sample_type;
	if (c->attr_size < 88)
		st &= ~(PD_SAMPLE_REGS_USER | PD_SAMPLE_STACK_USER);
	if (c->attr_size < 104)
		st &= ~PD_SAMPLE_REGS_INTR;
	/* several events need an id in every sample to tell them apart */
	if (c->nr_events > 1 && !(st & (PD_SAMPLE_ID | PD_SAMPLE_IDENTIFIER)))
		st |= PD_SAMPLE_IDENTIFIER;
	for (int e = 0; e < c->nr_events; e++) {
		pdw_event *ev = &fx->ev[e];
		pd_attr *a = &ev->attr;
		memset(ev, 0, sizeof(*ev));
		a->type = (uint32_t)e;
		a->config = 0x100 + (uint64_t)e;
		a->sample_period = 4000 + (uint64_t)e;
		a->sample_type = st;
		a->read_format = presets[c->preset].read_format;
		a->flags = (1ULL << 0) | (1ULL << 1) | PD_ATTR_EXCLUDE_HV | (1ULL << 8) /* mmap */ |
			   (1ULL << 9) /* comm */ | (c->sample_id_all ? PD_ATTR_SAMPLE_ID_ALL : 0) |
			   (1ULL << 23) /* mmap2 */;
		a->wakeup_events = 7;
		a->bp_type = 3;
		a->config1 = 0x11;
		a->config2 = 0x22;
		a->branch_sample_type = 0x2 | (c->attr_size >= 80 ? BRANCH_HW_INDEX : 0);
		a->sample_regs_user = 0xff;
		a->sample_stack_user = 32;
		a->clockid = 1;
		a->sample_regs_intr = 0x0f;
		a->aux_watermark = 4096;
		a->sample_max_stack = 127;
		a->aux_sample_size = 16;
		a->sig_data = 0x5151;
		a->config3 = 0x33;
		clip_attr(a, c->attr_size);
		a->size = c->attr_size;
		ev->name = event_names[e];
		ev->nr_ids = 2;
		ev->ids[0] = 1000 + 10 * (uint64_t)e;
		ev->ids[1] = 1001 + 10 * (uint64_t)e;
	}
}

/* Branch flags are a bitfield word: how a reader lays out the bits of a
 * swapped file is a matter of convention, so the values used read the
 * same under a byte swap and under a bit reversal of the word. */
static const uint64_t branch_flags[3] = { 0, 0x8000000000000001ULL, 0x1800000000000018ULL };

static void fill_sample(file_exp *fx, exp_rec *r, unsigned k, int ev)
{
	pd_sample *s = &r->sample;
	const pd_attr *a = &fx->ev[ev].attr;
	uint64_t h = mix(k * 131 + (unsigned)ev);
	uint64_t rf = a->read_format;
	r->ev = ev;
	r->misc = PD_MISC_USER;
	s->fields = a->sample_type;
	s->identifier = fx->ev[ev].ids[k & 1];
	s->id = s->identifier;
	s->ip = 0x400000 + (h & 0xffff);
	s->pid = 100 + (uint32_t)ev;
	s->tid = 200 + (uint32_t)(k % 5);
	s->time = 1000000 + 100ULL * k;
	s->addr = h ^ 0x5555;
	s->stream_id = 7000 + k;
	s->cpu = k % 3;
	s->period = (a->sample_type & PD_SAMPLE_PERIOD) ? 1 + (h % 100000) : a->sample_period;
	s->read.time_enabled = 111 + k;
	s->read.time_running = 99 + k;
	s->read.nr = (rf & PD_FORMAT_GROUP) ? 1 + k % 3 : 1;
	for (unsigned i = 0; i < 3; i++) {
		r->rv[i].value = h + i;
		r->rv[i].id = (rf & PD_FORMAT_ID) ? 1000 + i : 0;
		r->rv[i].lost = (rf & PD_FORMAT_LOST) ? 5 + i : 0;
	}
	if (!(rf & PD_FORMAT_TOTAL_TIME_ENABLED))
		s->read.time_enabled = 0;
	if (!(rf & PD_FORMAT_TOTAL_TIME_RUNNING))
		s->read.time_running = 0;
	s->read.values = r->rv;
	s->nr_callchain = k % 6;
	for (unsigned i = 0; i < 8; i++)
		r->cc[i] = 0xffffffff81000000ULL + i * 16 + k;
	if (s->nr_callchain > 1)
		r->cc[0] = PD_CONTEXT_KERNEL;
	if (s->nr_callchain > 4)
		r->cc[3] = PD_CONTEXT_USER;
	s->callchain = r->cc;
	s->raw_size = sizeof(r->raw);
	for (unsigned i = 0; i < sizeof(r->raw); i++)
		r->raw[i] = (uint8_t)(h >> (i % 8)) ^ (uint8_t)i;
	s->raw = r->raw;
	s->nr_branches = k % 4;
	s->has_branch_hw_idx = (a->branch_sample_type & BRANCH_HW_INDEX) != 0;
	s->branch_hw_idx = s->has_branch_hw_idx ? 3 + k % 2 : 0;
	for (unsigned i = 0; i < 3; i++) {
		r->br[i].from = 0x401000 + i;
		r->br[i].to = 0x402000 + i + k;
		r->br[i].flags = branch_flags[(i + k) % 3];
	}
	s->branches = r->br;
	s->regs_user.abi = k % 4 == 3 ? 0 : 2;
	s->regs_user.mask = a->sample_regs_user;
	s->regs_user.nr = s->regs_user.abi ? 8 : 0;
	for (unsigned i = 0; i < 8; i++)
		r->regs_u[i] = h + 17 * i;
	s->regs_user.regs = r->regs_u;
	s->stack_user_size = k % 3 == 2 ? 0 : sizeof(r->stack);
	s->stack_user_dyn_size = s->stack_user_size ? 24 : 0;
	for (unsigned i = 0; i < sizeof(r->stack); i++)
		r->stack[i] = (uint8_t)(k + i);
	s->stack_user = r->stack;
	if (a->sample_type & PD_SAMPLE_WEIGHT_STRUCT) {
		s->weight = (uint32_t)h;
		s->weight_var2 = (uint16_t)(h >> 32);
		s->weight_var3 = (uint16_t)(h >> 48);
	} else {
		s->weight = h >> 3;
	}
	s->data_src = h ^ 0xdada;
	s->transaction = k * 3;
	s->regs_intr.abi = k % 2 ? 2 : 1;
	s->regs_intr.mask = a->sample_regs_intr;
	s->regs_intr.nr = 4;
	for (unsigned i = 0; i < 4; i++)
		r->regs_i[i] = ~h + i;
	s->regs_intr.regs = r->regs_i;
	s->phys_addr = h & 0xfffffff000ULL;
	s->cgroup = 42 + k;
	s->data_page_size = 4096;
	s->code_page_size = 2 << 20;
	s->aux_size = (k % 2) * sizeof(r->auxdata);
	for (unsigned i = 0; i < sizeof(r->auxdata); i++)
		r->auxdata[i] = (uint8_t)(0xa0 + i + k);
	s->aux = r->auxdata;
}

static void fill_sid(file_exp *fx, exp_rec *r, unsigned k, int ev)
{
	const pd_attr *a = &fx->ev[ev].attr;
	uint64_t st = a->sample_type;
	r->ev = ev;
	if (!(a->flags & PD_ATTR_SAMPLE_ID_ALL))
		return;
	r->has_sid = 1;
	r->sid.fields = st & (PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ID | PD_SAMPLE_STREAM_ID |
			      PD_SAMPLE_CPU | PD_SAMPLE_IDENTIFIER);
	r->sid.pid = (st & PD_SAMPLE_TID) ? 100 + (uint32_t)ev : 0;
	r->sid.tid = (st & PD_SAMPLE_TID) ? 300 + k : 0;
	r->sid.time = (st & PD_SAMPLE_TIME) ? 1000000 + 100ULL * k - 50 : 0;
	r->sid.id = (st & PD_SAMPLE_ID) ? fx->ev[ev].ids[0] : 0;
	r->sid.stream_id = (st & PD_SAMPLE_STREAM_ID) ? 9000 + k : 0;
	r->sid.cpu = (st & PD_SAMPLE_CPU) ? k % 3 : 0;
	r->sid.identifier = (st & PD_SAMPLE_IDENTIFIER) ? fx->ev[ev].ids[0] : 0;
}

/* Generic body bytes: u64 words in file order via the writer. */
static void put_body_u64s(pdw *w, exp_rec *r, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pdw_put_u64(w, v[i]);
	(void)r;
}

/* Write record k of the body; fill *r with what was written. */
static void write_record(pdw *w, file_exp *fx, exp_rec *r, unsigned k)
{
	int ev = (int)(k % (unsigned)fx->c.nr_events);
	unsigned kind = k % 40;
	/* which of the rarer types a slot holds varies by record and by file,
	 * so that all of them appear across the combinations */
	unsigned salt = k / 40 + (unsigned)fx->c.preset * 3 + fx->c.attr_size / 8;
	r->ev = -1;
	/* most records are samples, as in real recordings */
	if (kind >= 20) {
		r->type = PD_RECORD_SAMPLE;
		fill_sample(fx, r, k, ev);
		pdw_sample(w, ev, r->misc, &r->sample);
		return;
	}
	switch (kind) {
	case 0:
		r->type = PD_RECORD_MMAP;
		r->misc = PD_MISC_USER;
		snprintf(r->str, sizeof(r->str), "/usr/lib/libk%u.so", k);
		r->mmap = (pd_mmap){ .pid = 100, .tid = 101, .start = 0x7f0000000000ULL + k * 4096,
				     .len = 8192, .pgoff = 4096 * k, .filename = r->str };
		fill_sid(fx, r, k, ev);
		pdw_mmap(w, ev, &r->mmap, &r->sid);
		return;
	case 1:
	case 2: {
		int bid = kind == 2;
		r->type = PD_RECORD_MMAP2;
		r->misc = PD_MISC_USER | (bid ? PD_MISC_MMAP_BUILD_ID : 0);
		snprintf(r->str, sizeof(r->str), "/opt/app/bin/a-rather-long-name-%u", k);
		r->mmap = (pd_mmap){ .pid = 100, .tid = 102, .start = 0x555500000000ULL + k * 4096,
				     .len = 0x21000, .pgoff = 0x1000, .prot = 5, .flags = 2,
				     .filename = r->str };
		if (bid) {
			r->mmap.build_id_size = 20;
			for (int i = 0; i < 20; i++)
				r->mmap.build_id[i] = (uint8_t)(0xb0 + i + k);
		} else {
			r->mmap.maj = 8;
			r->mmap.min = 3;
			r->mmap.ino = 123456 + k;
			r->mmap.ino_generation = 9;
		}
		fill_sid(fx, r, k, ev);
		pdw_mmap2(w, ev, r->misc, &r->mmap, &r->sid);
		return;
	}
	case 3:
		r->type = PD_RECORD_COMM;
		snprintf(r->str, sizeof(r->str), "task-%u", k);
		r->comm = (pd_comm){ .pid = 100, .tid = 100 + k, .comm = r->str, .exec = k % 80 == 3 };
		r->misc = r->comm.exec ? PD_MISC_COMM_EXEC : 0;
		fill_sid(fx, r, k, ev);
		pdw_comm(w, ev, &r->comm, &r->sid);
		return;
	case 4:
	case 5:
		r->type = kind == 4 ? PD_RECORD_FORK : PD_RECORD_EXIT;
		r->task = (pd_task){ .pid = 100 + k, .ppid = 100, .tid = 100 + k, .ptid = 100,
				     .time = 1000000 + 100ULL * k - 10 };
		fill_sid(fx, r, k, ev);
		pdw_task(w, ev, r->type, &r->task, &r->sid);
		return;
	case 6:
		r->type = PD_RECORD_LOST;
		r->lost = (pd_lost){ .id = fx->ev[ev].ids[0], .lost = 3 + k };
		fill_sid(fx, r, k, ev);
		pdw_lost(w, ev, r->type, &r->lost, &r->sid);
		fx->lost += r->lost.lost;
		return;
	case 7:
		r->type = PD_RECORD_LOST_SAMPLES;
		r->lost = (pd_lost){ .id = 0, .lost = 11 + k };
		fill_sid(fx, r, k, ev);
		pdw_lost(w, ev, r->type, &r->lost, &r->sid);
		fx->lost_samples += r->lost.lost;
		return;
	case 8:
		r->type = PD_RECORD_SWITCH;
		r->misc = (k % 80 == 8) ? PD_MISC_SWITCH_OUT | MISC_SWITCH_OUT_PREEMPT : 0;
		r->sw = (pd_switch){ .out = (r->misc & PD_MISC_SWITCH_OUT) != 0,
				     .preempt = (r->misc & MISC_SWITCH_OUT_PREEMPT) != 0 };
		fill_sid(fx, r, k, ev);
		pdw_record_begin(w, r->type, r->misc);
		pdw_record_end(w, ev, &r->sid);
		return;
	case 9:
		r->type = PD_RECORD_SWITCH_CPU_WIDE;
		r->misc = PD_MISC_SWITCH_OUT;
		r->sw = (pd_switch){ .out = 1, .next_prev_pid = 77, .next_prev_tid = 78 + k };
		fill_sid(fx, r, k, ev);
		pdw_record_begin(w, r->type, r->misc);
		pdw_put_u32(w, r->sw.next_prev_pid);
		pdw_put_u32(w, r->sw.next_prev_tid);
		pdw_record_end(w, ev, &r->sid);
		return;
	case 10:
		r->type = PD_RECORD_KSYMBOL;
		snprintf(r->str, sizeof(r->str), "bpf_prog_%08x_f%u", k * 7919, k);
		r->ksym = (pd_ksymbol){ .addr = 0xffffffffc0000000ULL + k, .len = 300 + k,
					.ksym_type = 1, .flags = 0, .name = r->str };
		fill_sid(fx, r, k, ev);
		pdw_record_begin(w, r->type, 0);
		pdw_put_u64(w, r->ksym.addr);
		pdw_put_u32(w, r->ksym.len);
		pdw_put_u16(w, r->ksym.ksym_type);
		pdw_put_u16(w, r->ksym.flags);
		pdw_put_string(w, r->str, 8);
		pdw_record_end(w, ev, &r->sid);
		return;
	case 11:
		r->type = PD_RECORD_BPF_EVENT;
		r->bpf = (pd_bpf_event){ .type = 1, .flags = 0, .id = 55 + k };
		for (int i = 0; i < 8; i++)
			r->bpf.tag[i] = (uint8_t)(i * 9 + k);
		fill_sid(fx, r, k, ev);
		pdw_record_begin(w, r->type, 0);
		pdw_put_u16(w, r->bpf.type);
		pdw_put_u16(w, r->bpf.flags);
		pdw_put_u32(w, r->bpf.id);
		pdw_put_bytes(w, r->bpf.tag, 8);
		pdw_record_end(w, ev, &r->sid);
		return;
	case 12: {
		/* kernel records without a decoded form: body kept as raw */
		static const uint32_t types[] = { PD_RECORD_THROTTLE, PD_RECORD_UNTHROTTLE,
						  PD_RECORD_AUX, PD_RECORD_CGROUP,
						  PD_RECORD_AUX_OUTPUT_HW_ID, PD_RECORD_ITRACE_START,
						  PD_RECORD_NAMESPACES, PD_RECORD_TEXT_POKE };
		r->type = types[salt % 8];
		fill_sid(fx, r, k, ev);
		pdw_record_begin(w, r->type, 0);
		uint64_t v[4] = { 1000000 + 100ULL * k, fx->ev[ev].ids[0], 5, 0 };
		switch (r->type) {
		case PD_RECORD_THROTTLE:
		case PD_RECORD_UNTHROTTLE:
		case PD_RECORD_AUX:
			put_body_u64s(w, r, v, 3);
			break;
		case PD_RECORD_CGROUP:
			pdw_put_u64(w, 77);
			pdw_put_string(w, "/system.slice/perfhub.service", 8);
			break;
		case PD_RECORD_AUX_OUTPUT_HW_ID:
			pdw_put_u64(w, 3);
			break;
		case PD_RECORD_ITRACE_START:
			pdw_put_u32(w, 100);
			pdw_put_u32(w, 101);
			break;
		case PD_RECORD_NAMESPACES:
			pdw_put_u32(w, 100);
			pdw_put_u32(w, 101);
			pdw_put_u64(w, 2);
			put_body_u64s(w, r, v, 4);
			break;
		case PD_RECORD_TEXT_POKE:
			pdw_put_u64(w, 0xffffffff81000000ULL);
			pdw_put_u16(w, 2);
			pdw_put_u16(w, 2);
			pdw_put_bytes(w, "\x90\x90\xeb\x05", 4);
			break;
		}
		pdw_record_end(w, ev, &r->sid);
		return;
	}
	case 13:
		r->type = PD_RECORD_HEADER_BUILD_ID;
		r->misc = PD_MISC_USER | MISC_BUILD_ID_SIZE;
		snprintf(r->str, sizeof(r->str), "/usr/lib/debug/x%u.so", k);
		r->bid = (pd_build_id){ .pid = 4294967295u, .misc = r->misc, .size = 20,
					.filename = r->str };
		for (int i = 0; i < 20; i++)
			r->bid.build_id[i] = (uint8_t)(i + 3 * k);
		pdw_record_begin(w, r->type, r->misc);
		pdw_put_u32(w, r->bid.pid);
		pdw_put_bytes(w, r->bid.build_id, 20);
		pdw_put_u8(w, r->bid.size);
		pdw_put_u8(w, 0);
		pdw_put_u16(w, 0);
		pdw_put_string(w, r->str, 64);	/* as perf: 36 + 64n bytes */
		pdw_record_end(w, -1, NULL);
		return;
	case 14:
		r->type = PD_RECORD_ID_INDEX;
		pdw_record_begin(w, r->type, 0);
		pdw_put_u64(w, 1);
		pdw_put_u64(w, fx->ev[ev].ids[0]);
		pdw_put_u64(w, (uint64_t)ev);
		pdw_put_u64(w, 0);
		pdw_put_u64(w, 100);
		pdw_record_end(w, -1, NULL);
		return;
	case 15:
		r->type = PD_RECORD_TIME_CONV;
		pdw_record_begin(w, r->type, 0);
		pdw_put_u64(w, 10);
		pdw_put_u64(w, 555);
		pdw_put_u64(w, 1234567);
		pdw_record_end(w, -1, NULL);
		return;
	case 16:
		r->type = PD_RECORD_THREAD_MAP;
		pdw_record_begin(w, r->type, 0);
		pdw_put_u64(w, 1);
		pdw_put_u64(w, 100);
		pdw_put_bytes(w, "thread-map-comm\0", 16);
		pdw_record_end(w, -1, NULL);
		return;
	case 17: {
		/* user records of perf stat and AUX tracing, by their layouts */
		static const uint32_t types[] = { PD_RECORD_STAT_ROUND, PD_RECORD_STAT,
						  PD_RECORD_STAT_CONFIG, PD_RECORD_FINISHED_INIT,
						  PD_RECORD_AUXTRACE_INFO, PD_RECORD_AUXTRACE_ERROR };
		r->type = types[salt % 6];
		pdw_record_begin(w, r->type, 0);
		switch (r->type) {
		case PD_RECORD_STAT_ROUND:	/* type, time */
			pdw_put_u64(w, 1);
			pdw_put_u64(w, 1000000 + 100ULL * k);
			break;
		case PD_RECORD_STAT:		/* id, cpu, thread, val, ena, run */
			pdw_put_u64(w, fx->ev[ev].ids[0]);
			pdw_put_u32(w, 1);
			pdw_put_u32(w, 0);
			pdw_put_u64(w, 12345);
			pdw_put_u64(w, 1000);
			pdw_put_u64(w, 900);
			break;
		case PD_RECORD_STAT_CONFIG:	/* nr, {tag, val}[nr] */
			pdw_put_u64(w, 1);
			pdw_put_u64(w, 0);
			pdw_put_u64(w, 1);
			break;
		case PD_RECORD_AUXTRACE_INFO:	/* type, reserved, priv[] */
			pdw_put_u32(w, 1);
			pdw_put_u32(w, 0);
			pdw_put_u64(w, 0x1111);
			pdw_put_u64(w, 0x2222);
			break;
		case PD_RECORD_AUXTRACE_ERROR: {	/* type, code, cpu, pid, tid, fmt, ip, msg[64] */
			char msg[64] = "decoder error";
			pdw_put_u32(w, 1);
			pdw_put_u32(w, 2);
			pdw_put_u32(w, 0);
			pdw_put_u32(w, 100);
			pdw_put_u32(w, 101);
			pdw_put_u32(w, 0);
			pdw_put_u64(w, 0x400000);
			pdw_put_bytes(w, msg, sizeof(msg));
			break;
		}
		default:			/* FINISHED_INIT: header only */
			break;
		}
		pdw_record_end(w, -1, NULL);
		return;
	}
	case 18:
		/* unknown types: one in the counted range, one beyond it */
		r->type = (k / 40) % 2 ? 200 : 100;
		pdw_record_begin(w, r->type, 0);
		pdw_put_u64(w, 0xdeadbeef);
		pdw_put_u64(w, k);
		pdw_record_end(w, -1, NULL);
		return;
	default:
		r->type = PD_RECORD_FINISHED_ROUND;
		pdw_finished_round(w);
		return;
	}
}

static void write_features(pdw *w, const file_exp *fx)
{
	pdw_feature_string(w, PD_FEAT_HOSTNAME, "roundtrip-host");
	pdw_feature_string(w, PD_FEAT_OSRELEASE, "6.1.0-27-amd64");
	pdw_feature_string(w, PD_FEAT_VERSION, "6.1.123");
	pdw_feature_string(w, PD_FEAT_ARCH, fx->c.big_endian ? "ppc64" : "x86_64");
	pdw_feature_string(w, PD_FEAT_CPUDESC, "Synthetic CPU @ 1.00GHz");
	pdw_feature_string(w, PD_FEAT_CPUID, "GenuineIntel,6,85,7");
	pdw_feature_begin(w, PD_FEAT_NRCPUS);
	pdw_put_u32(w, 8);	/* nr_cpus_available */
	pdw_put_u32(w, 6);	/* nr_cpus_online */
	pdw_feature_end(w);
	pdw_feature_begin(w, PD_FEAT_TOTAL_MEM);
	pdw_put_u64(w, 32768000);
	pdw_feature_end(w);
	pdw_feature_begin(w, PD_FEAT_CMDLINE);
	pdw_put_u32(w, 4);
	pdw_put_header_string(w, "/usr/bin/perf");
	pdw_put_header_string(w, "record");
	pdw_put_header_string(w, "-g");
	pdw_put_header_string(w, "./a.out");
	pdw_feature_end(w);
	pdw_feature_event_desc(w);
	pdw_feature_begin(w, PD_FEAT_SAMPLE_TIME);
	pdw_put_u64(w, 1000000);
	pdw_put_u64(w, 1000000 + 100ULL * NR_RECORDS);
	pdw_feature_end(w);
	pdw_feature_begin(w, PD_FEAT_CLOCKID);
	pdw_put_u64(w, 1);
	pdw_feature_end(w);
	pdw_feature_begin(w, PD_FEAT_BUILD_ID);
	pdw_put_u32(w, PD_RECORD_HEADER_BUILD_ID);	/* a build_id record: header... */
	pdw_put_u16(w, PD_MISC_KERNEL | MISC_BUILD_ID_SIZE);
	pdw_put_u16(w, 8 + 4 + 24 + 64);
	pdw_put_u32(w, 4294967295u);			/* pid -1: kernel */
	for (int i = 0; i < 20; i++)
		pdw_put_u8(w, (uint8_t)(0x10 + i));
	pdw_put_u8(w, 20);
	pdw_put_u8(w, 0);
	pdw_put_u16(w, 0);
	pdw_put_string(w, "[kernel.kallsyms]", 64);
	pdw_feature_end(w);
	if (fx->c.compress) {
		pdw_feature_begin(w, PD_FEAT_COMPRESSED);
		pdw_put_u32(w, 0);
		pdw_put_u32(w, 1);	/* zstd */
		pdw_put_u32(w, 3);
		pdw_put_u32(w, 4);
		pdw_put_u32(w, 528384);
		pdw_feature_end(w);
	}
	/* an id perf does not define (simpleperf writes 128+): kept raw */
	pdw_feature_begin(w, 130);
	pdw_put_bytes(w, "simpleperf-meta\0", 16);
	pdw_feature_end(w);
}

static const int written_features[] = {
	PD_FEAT_BUILD_ID, PD_FEAT_HOSTNAME, PD_FEAT_OSRELEASE, PD_FEAT_VERSION, PD_FEAT_ARCH,
	PD_FEAT_NRCPUS, PD_FEAT_CPUDESC, PD_FEAT_CPUID, PD_FEAT_TOTAL_MEM, PD_FEAT_CMDLINE,
	PD_FEAT_EVENT_DESC, PD_FEAT_SAMPLE_TIME, PD_FEAT_CLOCKID, PD_FEAT_COMPRESSED, 130,
};

/* The recording: a few records before compression starts, the body
 * (compressed when asked, flushed every 16 records), an AUXTRACE with its
 * payload and a few records after. */
static int build(file_exp *fx, uint8_t **buf, size_t *len, pdw **wout)
{
	pdw_config cfg = { .pipe = fx->c.pipe, .big_endian = fx->c.big_endian,
			   .version1 = fx->c.version1, .attr_size = fx->c.attr_size };
	pdw *w = pdw_new(&cfg);
	if (!w)
		return -1;
	make_events(fx);
	for (int e = 0; e < fx->c.nr_events; e++)
		pdw_add_event(w, &fx->ev[e]);
	if (!fx->c.version1)
		write_features(w, fx);
	fx->nr_recs = NR_RECORDS + 8;
	fx->recs = calloc(fx->nr_recs, sizeof(*fx->recs));
	if (!fx->recs) {
		pdw_free(w);
		return -1;
	}
	size_t n = 0;
	/* lead: COMM and MMAP2 of the task, uncompressed */
	static const unsigned lead[] = { 1003, 1041 };	/* COMM, MMAP2 */
	for (size_t j = 0; j < 2; j++) {
		unsigned k = lead[j];
		exp_rec *r = &fx->recs[n++];
		size_t before = pdw_nr_records(w);
		write_record(w, fx, r, k);
		r->outer = 1;
		r->outer_index = before;
	}
	if (fx->c.compress)
		pdw_compress_begin(w, fx->c.compress == 2, fx->c.chunk, 1);
	for (unsigned k = 0; k < NR_RECORDS; k++) {
		exp_rec *r = &fx->recs[n++];
		size_t before = pdw_nr_records(w);
		write_record(w, fx, r, k);
		if (!fx->c.compress) {
			r->outer = 1;
			r->outer_index = before;
		} else if (k % 16 == 15) {
			pdw_compress_flush(w);
		}
	}
	if (fx->c.compress)
		pdw_compress_end(w);
	/* AUXTRACE: its payload follows the record, outside header.size */
	{
		exp_rec *r = &fx->recs[n++];
		r->type = PD_RECORD_AUXTRACE;
		r->ev = -1;
		r->outer = 1;
		r->outer_index = pdw_nr_records(w);
		r->aux = (pd_auxtrace){ .size = 24, .offset = 4096, .reference = 0xfeed,
					.idx = 1, .tid = 101, .cpu = 2 };
		pdw_record_begin(w, r->type, 0);
		pdw_put_u64(w, r->aux.size);
		pdw_put_u64(w, r->aux.offset);
		pdw_put_u64(w, r->aux.reference);
		pdw_put_u32(w, r->aux.idx);
		pdw_put_u32(w, r->aux.tid);
		pdw_put_u32(w, r->aux.cpu);
		pdw_put_u32(w, 0);
		pdw_record_end(w, -1, NULL);
		pdw_raw(w, "AUXTRACE-PAYLOAD-24bytes", 24);
	}
	{
		exp_rec *r = &fx->recs[n++];
		r->outer = 1;
		r->outer_index = pdw_nr_records(w);
		write_record(w, fx, r, 1005);	/* EXIT */
		r = &fx->recs[n++];
		r->outer = 1;
		r->outer_index = pdw_nr_records(w);
		write_record(w, fx, r, 1019);	/* FINISHED_ROUND */
	}
	fx->nr_recs = n;
	for (size_t i = 0; i < n; i++) {
		const exp_rec *r = &fx->recs[i];
		if (r->type < PD_RECORD_TYPE_MAX)
			fx->count[r->type]++;
		else
			fx->unknown++;
		if (r->outer)
			fx->nr_outer++;
		if (r->type == PD_RECORD_SAMPLE) {
			fx->samples_per_event[r->ev]++;
			if (r->sample.fields & PD_SAMPLE_TIME) {
				if (!fx->first_time || r->sample.time < fx->first_time)
					fx->first_time = r->sample.time;
				if (r->sample.time > fx->last_time)
					fx->last_time = r->sample.time;
			}
		}
	}
	if (pdw_finish(w, buf, len)) {
		pdw_free(w);
		return -1;
	}
	*wout = w;
	return 0;
}

/* ---- comparing ---------------------------------------------------------- */

static void check_attr(const pd_attr *g, const pd_attr *x)
{
	EQ("attr.type", g->type, x->type);
	EQ("attr.size", g->size, x->size);
	EQ("attr.config", g->config, x->config);
	EQ("attr.sample_period", g->sample_period, x->sample_period);
	EQ("attr.sample_type", g->sample_type, x->sample_type);
	EQ("attr.read_format", g->read_format, x->read_format);
	EQ("attr.flags", g->flags, x->flags);
	EQ("attr.wakeup_events", g->wakeup_events, x->wakeup_events);
	EQ("attr.bp_type", g->bp_type, x->bp_type);
	EQ("attr.config1", g->config1, x->config1);
	EQ("attr.config2", g->config2, x->config2);
	EQ("attr.branch_sample_type", g->branch_sample_type, x->branch_sample_type);
	EQ("attr.sample_regs_user", g->sample_regs_user, x->sample_regs_user);
	EQ("attr.sample_stack_user", g->sample_stack_user, x->sample_stack_user);
	EQ("attr.clockid", (uint32_t)g->clockid, (uint32_t)x->clockid);
	EQ("attr.sample_regs_intr", g->sample_regs_intr, x->sample_regs_intr);
	EQ("attr.aux_watermark", g->aux_watermark, x->aux_watermark);
	EQ("attr.sample_max_stack", g->sample_max_stack, x->sample_max_stack);
	EQ("attr.aux_sample_size", g->aux_sample_size, x->aux_sample_size);
	EQ("attr.sig_data", g->sig_data, x->sig_data);
	EQ("attr.config3", g->config3, x->config3);
}

static void check_regs(const char *what, const pd_regs *g, const pd_regs *x)
{
	char b[64];
	snprintf(b, sizeof(b), "%s.abi", what);
	EQ(b, g->abi, x->abi);
	if (!x->abi)
		return;
	snprintf(b, sizeof(b), "%s.nr", what);
	EQ(b, g->nr, x->nr);
	snprintf(b, sizeof(b), "%s.mask", what);
	EQ(b, g->mask, x->mask);
	if (g->nr == x->nr) {
		snprintf(b, sizeof(b), "%s.regs", what);
		eq_mem(b, g->regs, x->regs, x->nr * 8);
	}
}

static void check_sample(const file_exp *fx, const pd_sample *g, const exp_rec *r)
{
	const pd_sample *x = &r->sample;
	uint64_t st = x->fields;
	const pd_attr *a = &fx->ev[r->ev].attr;
	if (!g->event) {
		fail("sample.event is NULL");
		return;
	}
	EQ("sample.event->index", g->event->index, (unsigned)r->ev);
	EQ("sample.fields", g->fields, st);
	if (st & PD_SAMPLE_IDENTIFIER) EQ("sample.identifier", g->identifier, x->identifier);
	if (st & PD_SAMPLE_IP) EQ("sample.ip", g->ip, x->ip);
	if (st & PD_SAMPLE_TID) {
		EQ("sample.pid", g->pid, x->pid);
		EQ("sample.tid", g->tid, x->tid);
	}
	if (st & PD_SAMPLE_TIME) EQ("sample.time", g->time, x->time);
	if (st & PD_SAMPLE_ADDR) EQ("sample.addr", g->addr, x->addr);
	if (st & PD_SAMPLE_ID) EQ("sample.id", g->id, x->id);
	if (st & PD_SAMPLE_STREAM_ID) EQ("sample.stream_id", g->stream_id, x->stream_id);
	if (st & PD_SAMPLE_CPU) EQ("sample.cpu", g->cpu, x->cpu);
	EQ("sample.period", g->period, x->period);
	if (st & PD_SAMPLE_READ) {
		uint64_t rf = a->read_format;
		EQ("sample.read.nr", g->read.nr, x->read.nr);
		if (rf & PD_FORMAT_TOTAL_TIME_ENABLED)
			EQ("sample.read.time_enabled", g->read.time_enabled, x->read.time_enabled);
		if (rf & PD_FORMAT_TOTAL_TIME_RUNNING)
			EQ("sample.read.time_running", g->read.time_running, x->read.time_running);
		for (uint64_t i = 0; g->read.values && i < g->read.nr && i < x->read.nr; i++) {
			EQ("sample.read.value", g->read.values[i].value, x->read.values[i].value);
			if (rf & PD_FORMAT_ID)
				EQ("sample.read.id", g->read.values[i].id, x->read.values[i].id);
			if (rf & PD_FORMAT_LOST)
				EQ("sample.read.lost", g->read.values[i].lost, x->read.values[i].lost);
		}
		if (!g->read.values)
			fail("sample.read.values is NULL");
	}
	if (st & PD_SAMPLE_CALLCHAIN) {
		EQ("sample.nr_callchain", g->nr_callchain, x->nr_callchain);
		if (g->nr_callchain == x->nr_callchain)
			eq_mem("sample.callchain", g->callchain, x->callchain, x->nr_callchain * 8);
	}
	if (st & PD_SAMPLE_RAW) {
		EQ("sample.raw_size", g->raw_size, x->raw_size);
		if (g->raw_size == x->raw_size)
			eq_mem("sample.raw", g->raw, x->raw, x->raw_size);
	}
	if (st & PD_SAMPLE_BRANCH_STACK) {
		EQ("sample.nr_branches", g->nr_branches, x->nr_branches);
		EQ("sample.has_branch_hw_idx", g->has_branch_hw_idx, x->has_branch_hw_idx);
		if (x->has_branch_hw_idx)
			EQ("sample.branch_hw_idx", g->branch_hw_idx, x->branch_hw_idx);
		for (uint64_t i = 0; g->branches && i < g->nr_branches && i < x->nr_branches; i++) {
			EQ("sample.branches.from", g->branches[i].from, x->branches[i].from);
			EQ("sample.branches.to", g->branches[i].to, x->branches[i].to);
			EQ("sample.branches.flags", g->branches[i].flags, x->branches[i].flags);
		}
	}
	if (st & PD_SAMPLE_REGS_USER)
		check_regs("sample.regs_user", &g->regs_user, &x->regs_user);
	if (st & PD_SAMPLE_STACK_USER) {
		EQ("sample.stack_user_size", g->stack_user_size, x->stack_user_size);
		EQ("sample.stack_user_dyn_size", g->stack_user_dyn_size, x->stack_user_dyn_size);
		if (g->stack_user_size == x->stack_user_size)
			eq_mem("sample.stack_user", g->stack_user, x->stack_user, x->stack_user_size);
	}
	if (st & (PD_SAMPLE_WEIGHT | PD_SAMPLE_WEIGHT_STRUCT))
		EQ("sample.weight", g->weight, x->weight);
	if (st & PD_SAMPLE_WEIGHT_STRUCT) {
		EQ("sample.weight_var2", g->weight_var2, x->weight_var2);
		EQ("sample.weight_var3", g->weight_var3, x->weight_var3);
	}
	if (st & PD_SAMPLE_DATA_SRC) EQ("sample.data_src", g->data_src, x->data_src);
	if (st & PD_SAMPLE_TRANSACTION) EQ("sample.transaction", g->transaction, x->transaction);
	if (st & PD_SAMPLE_REGS_INTR)
		check_regs("sample.regs_intr", &g->regs_intr, &x->regs_intr);
	if (st & PD_SAMPLE_PHYS_ADDR) EQ("sample.phys_addr", g->phys_addr, x->phys_addr);
	if (st & PD_SAMPLE_CGROUP) EQ("sample.cgroup", g->cgroup, x->cgroup);
	if (st & PD_SAMPLE_DATA_PAGE_SIZE)
		EQ("sample.data_page_size", g->data_page_size, x->data_page_size);
	if (st & PD_SAMPLE_CODE_PAGE_SIZE)
		EQ("sample.code_page_size", g->code_page_size, x->code_page_size);
	if (st & PD_SAMPLE_AUX) {
		EQ("sample.aux_size", g->aux_size, x->aux_size);
		if (g->aux_size == x->aux_size)
			eq_mem("sample.aux", g->aux, x->aux, x->aux_size);
	}
}

static void check_sid(const pd_record *g, const exp_rec *r)
{
	EQ("has_sample_id", g->has_sample_id, r->has_sid);
	if (!r->has_sid || !g->has_sample_id)
		return;
	const pd_sample_id *s = &g->sample_id, *x = &r->sid;
	EQ("sample_id.fields", s->fields, x->fields);
	if (x->fields & PD_SAMPLE_TID) {
		EQ("sample_id.pid", s->pid, x->pid);
		EQ("sample_id.tid", s->tid, x->tid);
	}
	if (x->fields & PD_SAMPLE_TIME) EQ("sample_id.time", s->time, x->time);
	if (x->fields & PD_SAMPLE_ID) EQ("sample_id.id", s->id, x->id);
	if (x->fields & PD_SAMPLE_STREAM_ID) EQ("sample_id.stream_id", s->stream_id, x->stream_id);
	if (x->fields & PD_SAMPLE_CPU) EQ("sample_id.cpu", s->cpu, x->cpu);
	if (x->fields & PD_SAMPLE_IDENTIFIER)
		EQ("sample_id.identifier", s->identifier, x->identifier);
}

static void check_record(const file_exp *fx, const pd_record *g, const exp_rec *r)
{
	EQ("record.type", g->type, r->type);
	if (g->type != r->type)
		return;
	EQ("record.misc", g->misc, r->misc);
	EQ("record.data_file", g->data_file, 0);
	if (!g->raw)
		fail("record.raw is NULL");
	switch (r->type) {
	case PD_RECORD_SAMPLE:
		check_sample(fx, &g->u.sample, r);
		return;
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2: {
		const pd_mmap *m = &g->u.mmap, *x = &r->mmap;
		EQ("mmap.pid", m->pid, x->pid);
		EQ("mmap.tid", m->tid, x->tid);
		EQ("mmap.start", m->start, x->start);
		EQ("mmap.len", m->len, x->len);
		EQ("mmap.pgoff", m->pgoff, x->pgoff);
		eq_str("mmap.filename", m->filename, x->filename);
		if (r->type == PD_RECORD_MMAP2) {
			EQ("mmap.prot", m->prot, x->prot);
			EQ("mmap.flags", m->flags, x->flags);
			EQ("mmap.build_id_size", m->build_id_size, x->build_id_size);
			if (x->build_id_size) {
				eq_mem("mmap.build_id", m->build_id, x->build_id, 20);
			} else {
				EQ("mmap.maj", m->maj, x->maj);
				EQ("mmap.min", m->min, x->min);
				EQ("mmap.ino", m->ino, x->ino);
				EQ("mmap.ino_generation", m->ino_generation, x->ino_generation);
			}
		}
		break;
	}
	case PD_RECORD_COMM:
		EQ("comm.pid", g->u.comm.pid, r->comm.pid);
		EQ("comm.tid", g->u.comm.tid, r->comm.tid);
		EQ("comm.exec", g->u.comm.exec, r->comm.exec);
		eq_str("comm.comm", g->u.comm.comm, r->comm.comm);
		break;
	case PD_RECORD_FORK:
	case PD_RECORD_EXIT:
		EQ("task.pid", g->u.task.pid, r->task.pid);
		EQ("task.ppid", g->u.task.ppid, r->task.ppid);
		EQ("task.tid", g->u.task.tid, r->task.tid);
		EQ("task.ptid", g->u.task.ptid, r->task.ptid);
		EQ("task.time", g->u.task.time, r->task.time);
		break;
	case PD_RECORD_LOST:
		EQ("lost.id", g->u.lost.id, r->lost.id);
		EQ("lost.lost", g->u.lost.lost, r->lost.lost);
		break;
	case PD_RECORD_LOST_SAMPLES:
		EQ("lost_samples.lost", g->u.lost.lost, r->lost.lost);
		break;
	case PD_RECORD_SWITCH:
	case PD_RECORD_SWITCH_CPU_WIDE:
		EQ("switch.out", g->u.sw.out, r->sw.out);
		EQ("switch.preempt", g->u.sw.preempt, r->sw.preempt);
		if (r->type == PD_RECORD_SWITCH_CPU_WIDE) {
			EQ("switch.next_prev_pid", g->u.sw.next_prev_pid, r->sw.next_prev_pid);
			EQ("switch.next_prev_tid", g->u.sw.next_prev_tid, r->sw.next_prev_tid);
		}
		break;
	case PD_RECORD_KSYMBOL:
		EQ("ksymbol.addr", g->u.ksymbol.addr, r->ksym.addr);
		EQ("ksymbol.len", g->u.ksymbol.len, r->ksym.len);
		EQ("ksymbol.ksym_type", g->u.ksymbol.ksym_type, r->ksym.ksym_type);
		EQ("ksymbol.flags", g->u.ksymbol.flags, r->ksym.flags);
		eq_str("ksymbol.name", g->u.ksymbol.name, r->ksym.name);
		break;
	case PD_RECORD_BPF_EVENT:
		EQ("bpf_event.type", g->u.bpf_event.type, r->bpf.type);
		EQ("bpf_event.flags", g->u.bpf_event.flags, r->bpf.flags);
		EQ("bpf_event.id", g->u.bpf_event.id, r->bpf.id);
		eq_mem("bpf_event.tag", g->u.bpf_event.tag, r->bpf.tag, 8);
		break;
	case PD_RECORD_HEADER_BUILD_ID:
		EQ("build_id.pid", g->u.build_id.pid, r->bid.pid);
		EQ("build_id.size", g->u.build_id.size, r->bid.size);
		eq_mem("build_id.build_id", g->u.build_id.build_id, r->bid.build_id, 20);
		eq_str("build_id.filename", g->u.build_id.filename, r->bid.filename);
		break;
	case PD_RECORD_AUXTRACE:
		EQ("auxtrace.size", g->u.auxtrace.size, r->aux.size);
		EQ("auxtrace.offset", g->u.auxtrace.offset, r->aux.offset);
		EQ("auxtrace.reference", g->u.auxtrace.reference, r->aux.reference);
		EQ("auxtrace.idx", g->u.auxtrace.idx, r->aux.idx);
		EQ("auxtrace.tid", g->u.auxtrace.tid, r->aux.tid);
		EQ("auxtrace.cpu", g->u.auxtrace.cpu, r->aux.cpu);
		break;
	default:
		break;
	}
	if (r->type >= 1 && r->type <= 21)
		check_sid(g, r);
}

static void check_json(const pd_file *f, int feat)
{
	char *js = pd_feature_json(f, feat);
	if (!js) {
		fail("feature %d: pd_feature_json is NULL", feat);
		return;
	}
	json_error_t jerr;
	json_t *j = json_loads(js, JSON_DECODE_ANY, &jerr);
	if (!j) {
		fail("feature %d: JSON does not parse (%s): %.80s", feat, jerr.text, js);
	} else {
		if (json_is_object(j) && json_object_get(j, "error"))
			fail("feature %d: decoded to an error: %.120s", feat, js);
		if (feat == 130 && (!json_is_object(j) ||
				    json_integer_value(json_object_get(j, "id")) != 130 ||
				    json_integer_value(json_object_get(j, "size")) != 16))
			fail("unknown feature 130: JSON %.120s", js);
		json_decref(j);
	}
	free(js);
}

static void check_features(const file_exp *fx, const pd_file *f)
{
	const pd_header *h = pd_get_header(f);
	if (!h) {
		fail("pd_get_header is NULL");
		return;
	}
	eq_str("header.hostname", h->hostname, "roundtrip-host");
	eq_str("header.os_release", h->os_release, "6.1.0-27-amd64");
	eq_str("header.perf_version", h->perf_version, "6.1.123");
	eq_str("header.arch", h->arch, fx->c.big_endian ? "ppc64" : "x86_64");
	eq_str("header.cpu_desc", h->cpu_desc, "Synthetic CPU @ 1.00GHz");
	eq_str("header.cpuid", h->cpuid, "GenuineIntel,6,85,7");
	eq_str("header.cmdline", h->cmdline, "/usr/bin/perf record -g ./a.out");
	EQ("header.has_nr_cpus", h->has_nr_cpus, 1);
	EQ("header.nr_cpus_available", h->nr_cpus_available, 8);
	EQ("header.nr_cpus_online", h->nr_cpus_online, 6);
	EQ("header.has_total_mem", h->has_total_mem, 1);
	EQ("header.total_mem", h->total_mem, 32768000);
	EQ("header.has_sample_time", h->has_sample_time, 1);
	EQ("header.first_sample_ns", h->first_sample_ns, 1000000);
	EQ("header.last_sample_ns", h->last_sample_ns, 1000000 + 100ULL * NR_RECORDS);
	EQ("header.has_clockid", h->has_clockid, 1);
	EQ("header.clockid_res_ns", h->clockid_res_ns, 1);
	EQ("header.compressed", h->compressed, fx->c.compress != 0);
	if (fx->c.compress) {
		EQ("header.comp_type", h->comp_type, 1);
		EQ("header.comp_level", h->comp_level, 3);
	}
	EQ("header.nr_build_ids", h->nr_build_ids, 1);
	if (h->nr_build_ids == 1 && h->build_ids) {
		const pd_build_id *b = &h->build_ids[0];
		EQ("header.build_ids[0].pid", b->pid, 4294967295u);
		EQ("header.build_ids[0].size", b->size, 20);
		EQ("header.build_ids[0].build_id[19]", b->build_id[19], 0x10 + 19);
		eq_str("header.build_ids[0].filename", b->filename, "[kernel.kallsyms]");
	}
	int ids[PD_FEAT_MAX];
	size_t want = 0, got = pd_features(f, ids, PD_FEAT_MAX);
	for (size_t i = 0; i < sizeof(written_features) / sizeof(int); i++) {
		int id = written_features[i];
		if (id == PD_FEAT_COMPRESSED && !fx->c.compress)
			continue;
		want++;
		if (!pd_has_feature(f, id))
			fail("feature %d not present", id);
		check_json(f, id);
	}
	EQ("pd_features count", got, want);
	size_t len = 0;
	const void *raw = pd_feature_raw(f, 130, &len);
	EQ("feature 130 raw length", len, 16);
	if (len == 16)
		eq_mem("feature 130 raw bytes", raw, "simpleperf-meta\0", 16);
	if (pd_has_feature(f, PD_FEAT_GROUP_DESC))
		fail("GROUP_DESC reported present, never written");
	char *js = pd_feature_json(f, PD_FEAT_GROUP_DESC);
	if (js)
		fail("pd_feature_json of an absent feature is not NULL");
	free(js);
}

static void check_events(const file_exp *fx, const pd_file *f, int after)
{
	EQ("pd_nr_events", pd_nr_events(f), (size_t)fx->c.nr_events);
	for (int e = 0; e < fx->c.nr_events && (size_t)e < pd_nr_events(f); e++) {
		const pd_event *ev = pd_get_event(f, (size_t)e);
		if (!ev) {
			fail("pd_get_event(%d) is NULL", e);
			continue;
		}
		EQ("event.index", ev->index, (unsigned)e);
		check_attr(&ev->attr, &fx->ev[e].attr);
		EQ("event.nr_ids", ev->nr_ids, fx->ev[e].nr_ids);
		if (ev->nr_ids == fx->ev[e].nr_ids)
			eq_mem("event.ids", ev->ids, fx->ev[e].ids, 8 * ev->nr_ids);
		if (!fx->c.version1)
			eq_str("event.name", ev->name, fx->ev[e].name);
		else if (!ev->name)
			fail("event.name is NULL");
		if (pd_event_by_id(f, fx->ev[e].ids[1]) != ev)
			fail("pd_event_by_id(%" PRIu64 ") is not event %d", fx->ev[e].ids[1], e);
		if (after)
			EQ("event.nr_samples", ev->nr_samples, fx->samples_per_event[e]);
	}
	if (pd_event_by_id(f, 999999))
		fail("pd_event_by_id of an unknown id is not NULL");
}

static void check_file(file_exp *fx, const uint8_t *buf, size_t len, const pdw *w,
		       const pd_options *opt)
{
	pd_error err;
	char eb[400];
	memset(&err, 0, sizeof(err));
	pd_file *f = pd_open_mem(buf, len, opt, &err);
	if (!f) {
		fail("pd_open_mem: %s", pd_strerror(&err, eb, sizeof(eb)));
		return;
	}
	const pd_info *in = pd_get_info(f);
	EQ("info.mode", in->mode, fx->c.pipe ? PD_MODE_PIPE : PD_MODE_FILE);
	EQ("info.version", in->version, fx->c.version1 ? 1 : 2);
	EQ("info.big_endian", in->big_endian, fx->c.big_endian);
	EQ("info.swapped", in->swapped, fx->c.big_endian != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__));
	if (!fx->c.pipe) {
		EQ("info.file_size", in->file_size, len);
		EQ("info.header_size", in->header_size, fx->c.version1 ? 72 : 104);
		EQ("info.attr_size", in->attr_size, fx->c.attr_size + 16);
		EQ("info.data_offset", in->data_offset, pdw_data_offset(w));
		EQ("info.data_size", in->data_size, pdw_data_size(w));
		check_events(fx, f, 0);
		if (!fx->c.version1)
			check_features(fx, f);
	}

	pd_record rec;
	int rc;
	size_t i = 0, nr_compressed = 0, nr_attr = 0, nr_feat = 0, nr_update = 0;
	uint64_t first_compressed_offset = UINT64_MAX, last_compressed_offset = 0;
	unsigned long before = failures;
	while ((rc = pd_next(f, &rec, &err)) > 0) {
		if (rec.type == PD_RECORD_COMPRESSED || rec.type == PD_RECORD_COMPRESSED2) {
			EQ("COMPRESSED record type", rec.type,
			   fx->c.compress == 2 ? PD_RECORD_COMPRESSED2 : PD_RECORD_COMPRESSED);
			if (first_compressed_offset == UINT64_MAX)
				first_compressed_offset = rec.offset;
			last_compressed_offset = rec.offset;
			nr_compressed++;
			continue;
		}
		if (fx->c.pipe && rec.type == PD_RECORD_HEADER_ATTR) {
			/* the event it defined, in the order written */
			if (!rec.u.attr || rec.u.attr->index != nr_attr)
				fail("HEADER_ATTR #%zu: u.attr is not event %zu", nr_attr, nr_attr);
			else
				check_attr(&rec.u.attr->attr, &fx->ev[nr_attr].attr);
			nr_attr++;
			continue;
		}
		if (fx->c.pipe && rec.type == PD_RECORD_HEADER_FEATURE) {
			nr_feat++;
			continue;
		}
		if (fx->c.pipe && rec.type == PD_RECORD_EVENT_UPDATE) {
			nr_update++;
			continue;
		}
		if (i >= fx->nr_recs) {
			fail("record %zu: type %u beyond the %zu written", i, rec.type, fx->nr_recs);
			break;
		}
		const exp_rec *r = &fx->recs[i];
		snprintf(where + strlen(where), 40, " rec#%zu", i);
		check_record(fx, &rec, r);
		if (r->outer) {
			EQ("record.offset", rec.offset, pdw_record_offset(w, r->outer_index));
			EQ("record.compressed", rec.compressed, 0);
		} else {
			EQ("record.compressed", rec.compressed, 1);
			/* the COMPRESSED record it started or ended in */
			if (rec.offset < first_compressed_offset || rec.offset > last_compressed_offset)
				fail("record.offset %" PRIu64 " is no COMPRESSED record's", rec.offset);
		}
		*strrchr(where, ' ') = '\0';
		i++;
		if (failures - before > 10)
			break;	/* one combination need not flood the log */
	}
	if (rc < 0)
		fail("pd_next after %zu records: %s", i, pd_strerror(&err, eb, sizeof(eb)));
	EQ("records read back", i, fx->nr_recs);
	size_t outer_total = pdw_nr_records(w);
	EQ("COMPRESSED records", nr_compressed, outer_total - fx->nr_outer);
	if (fx->c.pipe) {
		EQ("HEADER_ATTR records", nr_attr, (size_t)fx->c.nr_events);
		EQ("HEADER_FEATURE records", nr_feat, sizeof(written_features) / sizeof(int) -
							      (fx->c.compress ? 0 : 1));
		EQ("EVENT_UPDATE records", nr_update, (size_t)fx->c.nr_events);
		check_events(fx, f, 1);
		check_features(fx, f);
	} else {
		check_events(fx, f, 1);
	}
	const pd_stats *st = pd_get_stats(f);
	for (unsigned t = 1; t < PD_RECORD_TYPE_MAX; t++) {
		uint64_t want = fx->count[t];
		if (t == PD_RECORD_COMPRESSED || t == PD_RECORD_COMPRESSED2)
			want = (fx->c.compress == 1) == (t == PD_RECORD_COMPRESSED) ? nr_compressed : 0;
		if (fx->c.pipe && t == PD_RECORD_HEADER_ATTR) want = nr_attr;
		if (fx->c.pipe && t == PD_RECORD_HEADER_FEATURE) want = nr_feat;
		if (fx->c.pipe && t == PD_RECORD_EVENT_UPDATE) want = nr_update;
		if (fx->c.compress == 0 && (t == PD_RECORD_COMPRESSED || t == PD_RECORD_COMPRESSED2))
			want = 0;
		char what[48];
		snprintf(what, sizeof(what), "stats.records[%u]", t);
		EQ(what, st->records[t], want);
	}
	EQ("stats.unknown_records", st->unknown_records, fx->unknown);
	EQ("stats.lost", st->lost, fx->lost);
	EQ("stats.lost_samples", st->lost_samples, fx->lost_samples);
	if (fx->first_time) {
		EQ("stats.first_time", st->first_time, fx->first_time);
		EQ("stats.last_time", st->last_time, fx->last_time);
	}
	if (st->bytes_read > len)
		fail("stats.bytes_read %" PRIu64 " beyond the %zu bytes", st->bytes_read, len);
	/* the unknown feature 130 may be mentioned; nothing else is wrong */
	for (size_t k = 0; k < pd_nr_warnings(f); k++) {
		const char *wt = pd_warning(f, k);
		if (!wt || !strstr(wt, "130"))
			fail("unexpected warning: %s", wt ? wt : "(null)");
	}
	pd_close(f);
}

static int run_combo(const combo *c)
{
	file_exp fx;
	memset(&fx, 0, sizeof(fx));
	fx.c = *c;
	snprintf(where, sizeof(where), "[%s %s%s attr=%u preset=%d events=%d%s%s chunk=%zu]",
		 c->pipe ? "pipe" : "file", c->big_endian ? "BE" : "LE",
		 c->version1 ? " v1" : "", c->attr_size, c->preset, c->nr_events,
		 c->sample_id_all ? " sample_id_all" : "",
		 c->compress == 2 ? " COMPRESSED2" : c->compress ? " COMPRESSED" : "", c->chunk);
	uint8_t *buf = NULL;
	size_t len = 0;
	pdw *w = NULL;
	if (build(&fx, &buf, &len, &w)) {
		fail("the writer failed");
		free(fx.recs);
		return -1;
	}
	unsigned long before = failures;
	check_file(&fx, buf, len, w, NULL);
	/* ROUNDTRIP_DUMP=DIR: keep the synthesized files (fuzz seeds) */
	const char *dump = getenv("ROUNDTRIP_DUMP");
	if (dump) {
		char path[512];
		snprintf(path, sizeof(path), "%s/rt-%s-%s-a%u-p%d-e%d-c%d%s.data", dump,
			 c->pipe ? "pipe" : "file", c->big_endian ? "be" : "le", c->attr_size,
			 c->preset, c->nr_events, c->compress, c->version1 ? "-v1" : "");
		pdw_write_file(path, buf, len);
	}
	if (getenv("ROUNDTRIP_SAVE") && failures != before) {
		pdw_write_file(getenv("ROUNDTRIP_SAVE"), buf, len);
		fprintf(stderr, "saved %s to %s\n", where, getenv("ROUNDTRIP_SAVE"));
	}
	free(buf);
	free(fx.recs);
	pdw_free(w);
	return failures != before;
}

/*
 * Time-ordered delivery: rounds of samples whose times are shuffled
 * within each round (round j holds times j*1000 .. j*1000+999) must come
 * out ascending with options.ordered, every sample once, its fields
 * intact (ip = 0x400000 + time). With no_decode_samples the counts stay.
 */
enum { ORDER_ROUNDS = 12, ORDER_PER_ROUND = 60 };

static void check_ordered(int be, int pipe, int compress)
{
	snprintf(where, sizeof(where), "[ordered %s %s%s]", pipe ? "pipe" : "file", be ? "BE" : "LE",
		 compress ? " COMPRESSED" : "");
	pdw_config cfg = { .pipe = pipe, .big_endian = be, .attr_size = 128 };
	pdw *w = pdw_new(&cfg);
	pdw_add_cpu_clock(w, PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME, 7);
	if (compress)
		pdw_compress_begin(w, 0, 8192, 1);
	for (unsigned j = 0; j < ORDER_ROUNDS; j++) {
		for (unsigned i = 0; i < ORDER_PER_ROUND; i++) {
			/* a permutation of 0..ORDER_PER_ROUND-1 (7 is coprime to 60) */
			unsigned t = (i * 7 + j) % ORDER_PER_ROUND;
			pd_sample smp = { .identifier = 7, .pid = 1, .tid = 2 };
			smp.time = 1000ULL * (j + 1) + t;
			smp.ip = 0x400000 + smp.time;
			pdw_sample(w, 0, PD_MISC_USER, &smp);
		}
		if (compress)
			pdw_compress_flush(w);
		pdw_finished_round(w);
	}
	if (compress)
		pdw_compress_end(w);
	uint8_t *buf;
	size_t len;
	if (pdw_finish(w, &buf, &len)) {
		fail("the writer failed");
		pdw_free(w);
		return;
	}
	pdw_free(w);
	for (int mode = 0; mode < 2; mode++) {
		pd_options opt = { .ordered = mode == 0, .no_decode_samples = mode == 1 };
		pd_error err;
		char eb[400];
		pd_file *f = pd_open_mem(buf, len, &opt, &err);
		if (!f) {
			fail("pd_open_mem: %s", pd_strerror(&err, eb, sizeof(eb)));
			continue;
		}
		pd_record rec;
		int rc;
		uint64_t last = 0, n = 0, bad = 0;
		while ((rc = pd_next(f, &rec, &err)) > 0) {
			if (rec.type != PD_RECORD_SAMPLE)
				continue;
			n++;
			if (mode == 1)
				continue;
			const pd_sample *sm = &rec.u.sample;
			if (sm->time < last || sm->ip != 0x400000 + sm->time)
				bad++;
			last = sm->time;
		}
		if (rc < 0)
			fail("%s: pd_next: %s", mode ? "no_decode_samples" : "ordered",
			     pd_strerror(&err, eb, sizeof(eb)));
		EQ(mode ? "no_decode_samples: samples" : "ordered: samples", n,
		   ORDER_ROUNDS * ORDER_PER_ROUND);
		EQ("ordered: samples out of order or altered", bad, 0);
		EQ("stats.records[SAMPLE]", pd_get_stats(f)->records[PD_RECORD_SAMPLE],
		   ORDER_ROUNDS * ORDER_PER_ROUND);
		EQ("stats.records[FINISHED_ROUND]",
		   pd_get_stats(f)->records[PD_RECORD_FINISHED_ROUND], ORDER_ROUNDS);
		if (mode == 0)
			EQ("ordered: last time", last, 1000ULL * ORDER_ROUNDS + ORDER_PER_ROUND - 1);
		pd_close(f);
	}
	free(buf);
}

int main(int argc, char **argv)
{
	static const unsigned sizes[] = { 64, 72, 80, 88, 96, 104, 112, 120, 128, 136 };
	unsigned long combos = 0, bad = 0;
	int quick = argc > 1 && !strcmp(argv[1], "--quick");
	for (int be = 0; be < 2; be++)
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
			for (int p = 0; p < NR_PRESETS; p++)
				for (int pipe = 0; pipe < 2; pipe++)
					for (int comp = 0; comp < 3; comp++) {
						combo c = { .pipe = pipe, .big_endian = be,
							    .attr_size = sizes[si], .preset = p,
							    .compress = comp,
							    .nr_events = 1 + (int)((si + p) % 3),
							    .sample_id_all = (si + p + pipe) % 4 != 3,
							    .chunk = (p % 2) ? 4096 : 1000 };
						if (quick && (si + p) % 5)
							continue;
						bad += run_combo(&c) != 0;
						combos++;
					}
	/* the legacy PERFFILE header: no features; attr sizes perf 3.x wrote */
	static const unsigned v1_sizes[] = { 64, 72, 80, 96 };
	for (int be = 0; be < 2; be++)
		for (size_t si = 0; si < 4; si++) {
			combo c = { .big_endian = be, .version1 = 1, .attr_size = v1_sizes[si],
				    .preset = (int)si, .nr_events = 1 + (int)si % 2,
				    .sample_id_all = 1 };
			bad += run_combo(&c) != 0;
			combos++;
		}
	for (int be = 0; be < 2; be++)
		for (int pipe = 0; pipe < 2; pipe++)
			for (int comp = 0; comp < 2; comp++) {
				unsigned long before = failures;
				check_ordered(be, pipe, comp);
				bad += failures != before;
				combos++;
			}
	printf("%lu combinations, %lu with mismatches, %lu mismatches in all\n", combos, bad,
	       failures);
	return failures ? 1 : 0;
}
