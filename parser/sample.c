/*
 * sample.c - PERF_RECORD_SAMPLE, field by field from the event's sample_type
 * (the order of perf_event_open(2)'s "struct { ... } && PERF_RECORD_SAMPLE"):
 *
 *   u64 identifier; u64 ip; u32 pid, tid; u64 time; u64 addr; u64 id;
 *   u64 stream_id; u32 cpu, res; u64 period; read_format values;
 *   u64 nr, ips[nr]; u32 raw_size, raw[]; u64 bnr, [hw_idx], lbr[bnr];
 *   u64 abi, regs[weight(mask)]; u64 size, data[size], dyn_size;
 *   u64 weight | weight_struct; u64 data_src; u64 transaction;
 *   u64 abi, regs[weight(mask)]; u64 phys_addr; u64 cgroup;
 *   u64 data_page_size; u64 code_page_size; u64 size, aux[size]
 */
#include <string.h>

#include "cursor.h"
#include "pdfile.h"
#include "perr.h"

#define PD_BRANCH_HW_INDEX	(1ULL << 17)	/* PERF_SAMPLE_BRANCH_HW_INDEX */

static uint64_t mirror_bits64(uint64_t v)
{
	uint64_t r = 0;
	int i;

	for (i = 0; i < 64; i++, v >>= 1)
		r = (r << 1) | (v & 1);
	return r;
}

/* An array of n u64 at p in host order: p itself when aligned and in host
 * order, else a converted copy in the record's scratch. */
static const uint64_t *u64_array(pd_file *f, const uint8_t *p, size_t n)
{
	uint64_t *out;
	size_t i;

	if (!f->swap && ((uintptr_t)p & 7) == 0)
		return (const uint64_t *)(const void *)p;
	out = pd_scratch(f, n * 8);
	if (!out)
		return NULL;
	for (i = 0; i < n; i++)
		out[i] = load_u64(p + 8 * i, f->swap);
	return out;
}

const pd_event *sample_event(pd_file *f, const uint8_t *rec, uint32_t size)
{
	uint64_t off, id;

	if (f->nr_events == 1)
		return f->events[0];
	if (f->nr_events == 0 || f->id_pos < 0)
		return f->nr_events ? f->events[0] : NULL;
	off = 8 + 8 * (uint64_t)f->id_pos;
	if (off + 8 > size)
		return NULL;
	id = load_u64(rec + off, f->swap);
	/* consecutive samples mostly share an id: skip the hash lookup */
	if (id != f->last_id || !f->last_ev) {
		f->last_ev = ev_by_id(f, id);
		f->last_id = id;
	}
	return f->last_ev;
}

/* A sample's time without decoding the rest (ordered delivery). */
uint64_t sample_time_of(pd_file *f, const uint8_t *rec, uint32_t size, int *has_time)
{
	const pd_event *ev = sample_event(f, rec, size);
	uint64_t st, off = 8;

	*has_time = 0;
	if (!ev)
		return 0;
	st = ev->attr.sample_type;
	if (!(st & PD_SAMPLE_TIME))
		return 0;
	if (st & PD_SAMPLE_IDENTIFIER)
		off += 8;
	if (st & PD_SAMPLE_IP)
		off += 8;
	if (st & PD_SAMPLE_TID)
		off += 8;
	if (off + 8 > size)
		return 0;
	*has_time = 1;
	return load_u64(rec + off, f->swap);
}

/* The layouts perf record writes most (-g, -a, --call-graph fp): fields
 * of fixed size, then perhaps a callchain, nothing after it. */
#define FAST_FIXED	(PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | \
			 PD_SAMPLE_ADDR | PD_SAMPLE_ID | PD_SAMPLE_STREAM_ID | PD_SAMPLE_CPU | \
			 PD_SAMPLE_PERIOD)
#define FAST_TYPES	(FAST_FIXED | PD_SAMPLE_CALLCHAIN)

enum { FO_IDENT, FO_IP, FO_TID, FO_TIME, FO_ADDR, FO_ID, FO_STREAM, FO_CPU, FO_PERIOD, FO_CHAIN };

/* Each field's offset for samples of type st, in perf_event_open's order. */
static void fast_plan(pd_file *f, uint64_t st)
{
	static const uint64_t order[] = {
		PD_SAMPLE_IDENTIFIER, PD_SAMPLE_IP, PD_SAMPLE_TID, PD_SAMPLE_TIME, PD_SAMPLE_ADDR,
		PD_SAMPLE_ID, PD_SAMPLE_STREAM_ID, PD_SAMPLE_CPU, PD_SAMPLE_PERIOD,
		PD_SAMPLE_CALLCHAIN,
	};
	unsigned i, off = 8;

	f->fast_st = st;
	f->fast_ok = !f->swap && !(st & ~(uint64_t)FAST_TYPES);
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		f->fast_off[i] = (int16_t)((st & order[i]) ? (int)off : -1);
		if ((st & order[i]) && order[i] != PD_SAMPLE_CALLCHAIN)
			off += 8;
	}
	f->fast_fixed = off;
}

/* The first and last sample times, unless re-decoding a queued record. */
static void count_time(pd_file *f, uint64_t t)
{
	if (f->quiet)
		return;
	if (!f->stats.first_time || t < f->stats.first_time)
		f->stats.first_time = t;
	if (t > f->stats.last_time)
		f->stats.last_time = t;
}

static inline uint64_t fast_u64(const uint8_t *rec, int off)
{
	return off >= 0 ? load_u64(rec + off, 0) : 0;
}

/* A sample of a planned layout, each field loaded from its offset (one
 * bounds check for the record, not a test, a check and a step per
 * field). 0 when the record is too short for it: the field-by-field
 * decoding then says where. */
static int decode_fast(pd_file *f, const uint8_t *rec, uint32_t size, pd_sample *s)
{
	const int16_t *o = f->fast_off;
	uint64_t nr = 0;

	if (size < f->fast_fixed + (o[FO_CHAIN] >= 0 ? 8 : 0))
		return 0;
	if (o[FO_CHAIN] >= 0) {
		nr = load_u64(rec + o[FO_CHAIN], 0);
		if (nr > (size - f->fast_fixed - 8) / 8)
			return 0;
	}
	s->identifier = fast_u64(rec, o[FO_IDENT]);
	s->ip = fast_u64(rec, o[FO_IP]);
	if (o[FO_TID] >= 0) {
		s->pid = load_u32(rec + o[FO_TID], 0);
		s->tid = load_u32(rec + o[FO_TID] + 4, 0);
	}
	if (o[FO_TIME] >= 0) {
		s->time = load_u64(rec + o[FO_TIME], 0);
		count_time(f, s->time);
	}
	if (f->opt.no_decode_samples)
		return 1;
	s->addr = fast_u64(rec, o[FO_ADDR]);
	s->id = fast_u64(rec, o[FO_ID]);
	s->stream_id = fast_u64(rec, o[FO_STREAM]);
	if (o[FO_CPU] >= 0)
		s->cpu = load_u32(rec + o[FO_CPU], 0);
	s->period = o[FO_PERIOD] >= 0 ? load_u64(rec + o[FO_PERIOD], 0) : s->event->attr.sample_period;
	if (o[FO_CHAIN] >= 0) {
		s->nr_callchain = nr;
		s->callchain = u64_array(f, rec + o[FO_CHAIN] + 8, (size_t)nr);
	}
	return 1;
}

/* perf script's default fields print the period for every type of event
 * but PERF_TYPE_TRACEPOINT (2), sample_type or not; stackcollapse-perf.pl
 * finds it after the time's colon, so without a time (a --per-thread
 * recording) it finds none */
uint64_t pd_sample_script_period(const pd_sample *s)
{
	if (!s->event || s->event->attr.type == 2 ||
	    !(s->event->attr.sample_type & PD_SAMPLE_TIME) || !s->period)
		return 1;
	return s->period;
}

int sample_decode(pd_file *f, const uint8_t *rec, uint32_t size, pd_record *r, pd_error *err)
{
	pd_sample *s = &r->u.sample;
	const pd_event *ev = sample_event(f, rec, size);
	const pd_attr *a;
	const uint8_t *p = rec + 8, *e = rec + size;
	const char *field = "";
	int swap = f->swap;
	uint64_t st;

	/* Zero the sample unless this very record struct already holds a
	 * sample of the same event: then every field the event has is
	 * overwritten below and every other one is still zero. The memset
	 * alone was an eighth of the decoding time. */
	if (f->prefix_only) {
		/* only what is decoded below is read (352 bytes cleared
		 * for every record queued were a tenth of the reading) */
		s->identifier = s->ip = s->time = 0;
		s->pid = s->tid = 0;
	} else if (r != f->clean_rec || ev != f->clean_ev || !ev) {
		memset(s, 0, sizeof(*s));
	}
	f->clean_rec = NULL;
	s->event = ev;
	if (!ev) {
		/* perf stops here too ("Can't parse sample") */
		if (f->nr_events)
			pd_set_error(err, PD_ERR_BAD_RECORD, r->offset,
				     "sample id matches none of the %zu events' ids", f->nr_events);
		else
			pd_set_error(err, PD_ERR_BAD_RECORD, r->offset,
				     "sample before any event was defined");
		return -1;
	}
	a = &ev->attr;
	st = a->sample_type;
	s->fields = st;
	if (!f->quiet)
		((pd_event *)ev)->nr_samples++;
	if (f->opt.no_decode_samples && !(st & PD_SAMPLE_TIME))
		return 0;
	if (st != f->fast_st)
		fast_plan(f, st);
	if (f->fast_ok && decode_fast(f, rec, size, s)) {
		if (!f->opt.no_decode_samples) {
			f->clean_rec = r;
			f->clean_ev = ev;
		}
		return 0;
	}

#define NEED(n, what) do { field = (what); if ((uint64_t)(e - p) < (uint64_t)(n)) goto short_; } while (0)
#define U64(what) ({ NEED(8, what); p += 8; load_u64(p - 8, swap); })

	if (st & PD_SAMPLE_IDENTIFIER)
		s->identifier = U64("IDENTIFIER");
	if (st & PD_SAMPLE_IP)
		s->ip = U64("IP");
	if (st & PD_SAMPLE_TID) {
		NEED(8, "TID");
		s->pid = load_u32(p, swap);
		s->tid = load_u32(p + 4, swap);
		p += 8;
	}
	if (st & PD_SAMPLE_TIME) {
		s->time = U64("TIME");
		count_time(f, s->time);
	}
	if (f->opt.no_decode_samples)
		return 0;
	if (st & PD_SAMPLE_ADDR)
		s->addr = U64("ADDR");
	if (st & PD_SAMPLE_ID)
		s->id = U64("ID");
	if (st & PD_SAMPLE_STREAM_ID)
		s->stream_id = U64("STREAM_ID");
	if (st & PD_SAMPLE_CPU) {
		NEED(8, "CPU");
		s->cpu = load_u32(p, swap);
		p += 8;
	}
	if (st & PD_SAMPLE_PERIOD)
		s->period = U64("PERIOD");
	else
		s->period = a->sample_period;
	if (st & PD_SAMPLE_READ) {
		uint64_t rf = a->read_format, nr = 1, i;
		size_t per = 1 + !!(rf & PD_FORMAT_ID) + !!(rf & PD_FORMAT_LOST);
		pd_read_value *v;

		if (rf & PD_FORMAT_GROUP)
			nr = U64("READ");
		if (rf & PD_FORMAT_GROUP) {
			if (rf & PD_FORMAT_TOTAL_TIME_ENABLED)
				s->read.time_enabled = U64("READ");
			if (rf & PD_FORMAT_TOTAL_TIME_RUNNING)
				s->read.time_running = U64("READ");
		}
		field = "READ";
		if (nr > (uint64_t)(e - p) / (8 * per))
			goto short_;
		v = pd_scratch(f, (size_t)nr * sizeof(*v) + 1);
		if (!v)
			goto short_;
		for (i = 0; i < nr; i++) {
			v[i].value = U64("READ");
			if (!(rf & PD_FORMAT_GROUP)) {
				if (rf & PD_FORMAT_TOTAL_TIME_ENABLED)
					s->read.time_enabled = U64("READ");
				if (rf & PD_FORMAT_TOTAL_TIME_RUNNING)
					s->read.time_running = U64("READ");
			}
			v[i].id = (rf & PD_FORMAT_ID) ? U64("READ") : 0;
			v[i].lost = (rf & PD_FORMAT_LOST) ? U64("READ") : 0;
		}
		s->read.nr = nr;
		s->read.values = v;
	}
	if (st & PD_SAMPLE_CALLCHAIN) {
		uint64_t nr = U64("CALLCHAIN");

		field = "CALLCHAIN";
		if (nr > (uint64_t)(e - p) / 8)
			goto short_;
		s->nr_callchain = nr;
		s->callchain = u64_array(f, p, (size_t)nr);
		p += nr * 8;
	}
	if (st & PD_SAMPLE_RAW) {
		uint32_t sz;

		NEED(4, "RAW");
		sz = load_u32(p, swap);
		p += 4;
		NEED(sz, "RAW");
		s->raw_size = sz;
		s->raw = p;
		p += sz;
	}
	if (st & PD_SAMPLE_BRANCH_STACK) {
		uint64_t nr = U64("BRANCH_STACK"), i;
		pd_branch_entry *b;

		if (a->branch_sample_type & PD_BRANCH_HW_INDEX) {
			s->branch_hw_idx = U64("BRANCH_STACK");
			s->has_branch_hw_idx = 1;
		}
		field = "BRANCH_STACK";
		if (nr > (uint64_t)(e - p) / 24)
			goto short_;
		s->nr_branches = nr;
		if (!swap && ((uintptr_t)p & 7) == 0) {
			s->branches = (const pd_branch_entry *)(const void *)p;
		} else {
			b = pd_scratch(f, (size_t)nr * sizeof(*b) + 1);
			if (!b)
				goto short_;
			for (i = 0; i < nr; i++) {
				b[i].from = load_u64(p + 24 * i, swap);
				b[i].to = load_u64(p + 24 * i + 8, swap);
				b[i].flags = load_u64(p + 24 * i + 16, swap);
				if (swap)
					b[i].flags = mirror_bits64(b[i].flags);
			}
			s->branches = b;
		}
		p += nr * 24;
	}
	if (st & PD_SAMPLE_REGS_USER) {
		s->regs_user.abi = U64("REGS_USER");
		s->regs_user.mask = a->sample_regs_user;
		if (s->regs_user.abi) {
			unsigned n = (unsigned)__builtin_popcountll(a->sample_regs_user);

			NEED((uint64_t)n * 8, "REGS_USER");
			s->regs_user.nr = n;
			s->regs_user.regs = u64_array(f, p, n);
			p += (size_t)n * 8;
		} else {
			s->regs_user.nr = 0;
			s->regs_user.regs = NULL;
		}
	}
	if (st & PD_SAMPLE_STACK_USER) {
		uint64_t sz = U64("STACK_USER");

		NEED(sz, "STACK_USER");
		s->stack_user_size = sz;
		s->stack_user = p;
		p += sz;
		s->stack_user_dyn_size = 0;
		if (sz) {
			s->stack_user_dyn_size = U64("STACK_USER");
			if (s->stack_user_dyn_size > sz)
				s->stack_user_dyn_size = sz;
		}
	}
	if (st & (PD_SAMPLE_WEIGHT | PD_SAMPLE_WEIGHT_STRUCT)) {
		uint64_t w = U64("WEIGHT");

		if (st & PD_SAMPLE_WEIGHT_STRUCT) {
			s->weight = (uint32_t)w;
			s->weight_var2 = (uint16_t)(w >> 32);
			s->weight_var3 = (uint16_t)(w >> 48);
		} else {
			s->weight = w;
		}
	}
	if (st & PD_SAMPLE_DATA_SRC)
		s->data_src = U64("DATA_SRC");
	if (st & PD_SAMPLE_TRANSACTION)
		s->transaction = U64("TRANSACTION");
	if (st & PD_SAMPLE_REGS_INTR) {
		s->regs_intr.abi = U64("REGS_INTR");
		s->regs_intr.mask = a->sample_regs_intr;
		if (s->regs_intr.abi) {
			unsigned n = (unsigned)__builtin_popcountll(a->sample_regs_intr);

			NEED((uint64_t)n * 8, "REGS_INTR");
			s->regs_intr.nr = n;
			s->regs_intr.regs = u64_array(f, p, n);
			p += (size_t)n * 8;
		} else {
			s->regs_intr.nr = 0;
			s->regs_intr.regs = NULL;
		}
	}
	if (st & PD_SAMPLE_PHYS_ADDR)
		s->phys_addr = U64("PHYS_ADDR");
	if (st & PD_SAMPLE_CGROUP)
		s->cgroup = U64("CGROUP");
	if (st & PD_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = U64("DATA_PAGE_SIZE");
	if (st & PD_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = U64("CODE_PAGE_SIZE");
	if (st & PD_SAMPLE_AUX) {
		uint64_t sz = U64("AUX");

		NEED(sz, "AUX");
		s->aux_size = sz;
		s->aux = p;
		p += sz;
	}
	f->clean_rec = r;
	f->clean_ev = ev;
	return 0;
#undef U64
#undef NEED
short_:
	pd_set_error(err, PD_ERR_BAD_RECORD, r->offset,
		     "sample of %u bytes ends inside its %s field (event '%s', sample_type 0x%llx)",
		     size, field, ev->name, (unsigned long long)st);
	return -1;
}
