/*
 * test-readback - synthesize perf.data recordings with chosen sample types,
 * attr sizes, byte order, mode (file/pipe) and zstd compression, parse them
 * back with libperfhub-parse and require every field to be what was written.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "perfdata.h"
#include "wbuf.h"

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d [%s] ", __FILE__, __LINE__, cfg_name); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static char cfg_name[160];

static uint64_t mirror(uint64_t v)
{
	uint64_t r = 0;
	int i;

	for (i = 0; i < 64; i++, v >>= 1)
		r = (r << 1) | (v & 1);
	return r;
}

/* ---- what gets written ------------------------------------------------------ */

#define NR_EVENTS	2
#define NR_SAMPLES	300
#define BR_HW_INDEX	(1ULL << 17)

typedef struct cfg {
	int swap, pipe, zstd;
	uint32_t attr_size;	/* perf_event_attr bytes written */
	uint64_t sample_type, read_format;
	int hw_idx;
} cfg;

static const uint64_t regs_mask = 0x2f;	/* 5 registers */

static void put_attr(wbuf *b, const cfg *c, int ev)
{
	size_t start = b->len;
	uint64_t flags = PD_ATTR_SAMPLE_ID_ALL | PD_ATTR_EXCLUDE_KERNEL | (ev ? PD_ATTR_FREQ : 0);

	put32(b, ev ? 0 : 1);			/* type: hardware / software */
	put32(b, c->attr_size);
	put64(b, ev ? 1 : 0);			/* config */
	put64(b, ev ? 4000 : 100003);		/* sample_period / freq */
	put64(b, c->sample_type);
	put64(b, c->read_format);
	put64(b, c->swap ? mirror(flags) : flags);
	put32(b, 1);				/* wakeup_events */
	put32(b, 0);				/* bp_type */
	put64(b, 0x11);				/* config1 */
	if (c->attr_size >= 72)
		put64(b, 0x22);
	if (c->attr_size >= 80)
		put64(b, c->hw_idx ? BR_HW_INDEX : 0);
	if (c->attr_size >= 96) {
		put64(b, regs_mask);		/* sample_regs_user */
		put32(b, 4096);			/* sample_stack_user */
		put32(b, 1);			/* clockid */
	}
	if (c->attr_size >= 104)
		put64(b, regs_mask << 1);	/* sample_regs_intr */
	if (c->attr_size >= 112) {
		put32(b, 0);
		put16(b, 127);			/* sample_max_stack */
		put16(b, 0);
	}
	if (c->attr_size >= 120) {
		put32(b, 0);
		put32(b, 0);
	}
	if (c->attr_size >= 128)
		put64(b, 0);
	if (c->attr_size >= 136)
		put64(b, 0x33);			/* config3 */
	zeros(b, c->attr_size - (b->len - start));	/* a future ABI's bytes */
}

static uint64_t ev_id(int ev, int k) { return 1000 + 10 * ev + k; }

static uint64_t sample_time(int i) { return 1000000 + (uint64_t)i * 1000; }

/* The trailer for non-sample records of event 0. */
static void put_sample_id(wbuf *b, const cfg *c, uint32_t pid, uint64_t time)
{
	uint64_t st = c->sample_type;

	if (st & PD_SAMPLE_TID) { put32(b, pid); put32(b, pid + 1); }
	if (st & PD_SAMPLE_TIME) put64(b, time);
	if (st & PD_SAMPLE_ID) put64(b, ev_id(0, 0));
	if (st & PD_SAMPLE_STREAM_ID) put64(b, 77);
	if (st & PD_SAMPLE_CPU) { put32(b, 3); put32(b, 0); }
	if (st & PD_SAMPLE_IDENTIFIER) put64(b, ev_id(0, 0));
}

static void begin(wbuf *b, uint32_t type, uint16_t misc, size_t *start)
{
	*start = b->len;
	put32(b, type);
	put16(b, misc);
	put16(b, 0);
}

static void end(wbuf *b, size_t start)
{
	while ((b->len - start) % 8)
		put8(b, 0);
	set16(b, start + 6, (uint16_t)(b->len - start));
}

static void put_comm(wbuf *b, const cfg *c, uint32_t pid, const char *comm)
{
	size_t s;

	begin(b, PD_RECORD_COMM, PD_MISC_COMM_EXEC, &s);
	put32(b, pid);
	put32(b, pid + 1);
	put(b, comm, strlen(comm) + 1);
	while ((b->len - s) % 8)
		put8(b, 0);
	put_sample_id(b, c, pid, 5);
	end(b, s);
}

static void put_mmap2(wbuf *b, const cfg *c, uint32_t pid)
{
	size_t s;

	begin(b, PD_RECORD_MMAP2, PD_MISC_USER, &s);
	put32(b, pid);
	put32(b, pid + 1);
	put64(b, 0x400000);
	put64(b, 0x1000);
	put64(b, 0x200);
	put32(b, 8);
	put32(b, 1);
	put64(b, 123456);
	put64(b, 9);
	put32(b, 5);
	put32(b, 2);
	put(b, "/usr/bin/roundtrip", 19);
	while ((b->len - s) % 8)
		put8(b, 0);
	put_sample_id(b, c, pid, 6);
	end(b, s);
}

static void put_sample(wbuf *b, const cfg *c, int i)
{
	uint64_t st = c->sample_type, rf = c->read_format;
	int ev = i % NR_EVENTS, k, nr = 1 + i % 5;
	uint64_t id = ev_id(ev, i % 2);
	size_t s;

	begin(b, PD_RECORD_SAMPLE, PD_MISC_USER, &s);
	if (st & PD_SAMPLE_IDENTIFIER) put64(b, id);
	if (st & PD_SAMPLE_IP) put64(b, 0x400000 + (uint64_t)i);
	if (st & PD_SAMPLE_TID) { put32(b, 100 + (uint32_t)i); put32(b, 200 + (uint32_t)i); }
	if (st & PD_SAMPLE_TIME) put64(b, sample_time(i));
	if (st & PD_SAMPLE_ADDR) put64(b, 0xdead0000 + (uint64_t)i);
	if (st & PD_SAMPLE_ID) put64(b, id);
	if (st & PD_SAMPLE_STREAM_ID) put64(b, 77);
	if (st & PD_SAMPLE_CPU) { put32(b, (uint32_t)i % 4); put32(b, 0); }
	if (st & PD_SAMPLE_PERIOD) put64(b, 5000 + (uint64_t)i);
	if (st & PD_SAMPLE_READ) {
		int n = (rf & PD_FORMAT_GROUP) ? 2 : 1;

		if (rf & PD_FORMAT_GROUP) put64(b, (uint64_t)n);
		if (!(rf & PD_FORMAT_GROUP)) put64(b, 10 + (uint64_t)i);
		if (rf & PD_FORMAT_TOTAL_TIME_ENABLED) put64(b, 111);
		if (rf & PD_FORMAT_TOTAL_TIME_RUNNING) put64(b, 222);
		for (k = 0; k < n; k++) {
			if (rf & PD_FORMAT_GROUP) put64(b, 10 + (uint64_t)i + (uint64_t)k);
			if (rf & PD_FORMAT_ID) put64(b, ev_id(k, 0));
			if (rf & PD_FORMAT_LOST) put64(b, (uint64_t)k);
		}
	}
	if (st & PD_SAMPLE_CALLCHAIN) {
		put64(b, (uint64_t)nr + 1);
		put64(b, PD_CONTEXT_USER);
		for (k = 0; k < nr; k++) put64(b, 0x500000 + (uint64_t)k);
	}
	if (st & PD_SAMPLE_RAW) {
		put32(b, 12);	/* 4 + 12 = 16: keeps u64 alignment */
		put(b, "raw-payload!", 12);
	}
	if (st & PD_SAMPLE_BRANCH_STACK) {
		put64(b, (uint64_t)nr);
		if (c->hw_idx) put64(b, 42);
		for (k = 0; k < nr; k++) {
			put64(b, 0x600000 + (uint64_t)k);
			put64(b, 0x700000 + (uint64_t)k);
			put64(b, c->swap ? mirror(1) : 1);	/* flags: mispred */
		}
	}
	if (st & PD_SAMPLE_REGS_USER) {
		put64(b, 2);	/* abi 64 */
		for (k = 0; k < 5; k++) put64(b, 0xa0 + (uint64_t)k);
	}
	if (st & PD_SAMPLE_STACK_USER) {
		put64(b, 64);
		for (k = 0; k < 64; k++) put8(b, (uint8_t)k);
		put64(b, 48);
	}
	if (st & PD_SAMPLE_WEIGHT_STRUCT) put64(b, 0x0003000200000001ULL);
	else if (st & PD_SAMPLE_WEIGHT) put64(b, 900 + (uint64_t)i);
	if (st & PD_SAMPLE_DATA_SRC) put64(b, 0x1234);
	if (st & PD_SAMPLE_TRANSACTION) put64(b, 0x5678);
	if (st & PD_SAMPLE_REGS_INTR) {
		put64(b, 2);
		for (k = 0; k < 5; k++) put64(b, 0xb0 + (uint64_t)k);
	}
	if (st & PD_SAMPLE_PHYS_ADDR) put64(b, 0xfeed);
	if (st & PD_SAMPLE_CGROUP) put64(b, 7);
	if (st & PD_SAMPLE_DATA_PAGE_SIZE) put64(b, 4096);
	if (st & PD_SAMPLE_CODE_PAGE_SIZE) put64(b, 8192);
	if (st & PD_SAMPLE_AUX) { put64(b, 8); put64(b, 0x0102030405060708ULL); }
	end(b, s);
}

/* The data records: COMM, MMAP2, samples in a shuffled time order within
 * rounds, FINISHED_ROUND after every 50. */
static void put_records(wbuf *b, const cfg *c)
{
	int i;
	size_t s;

	put_comm(b, c, 100, "roundtrip");
	put_mmap2(b, c, 100);
	for (i = 0; i < NR_SAMPLES; i++) {
		/* swap neighbours so ordered delivery has work to do */
		int j = (i % 2) ? i - 1 : (i + 1 < NR_SAMPLES ? i + 1 : i);

		put_sample(b, c, j);
		if (i % 50 == 49) {
			begin(b, PD_RECORD_FINISHED_ROUND, 0, &s);
			end(b, s);
		}
	}
}

/* Cut `raw` into COMPRESSED records of one zstd stream, frames never
 * closed, with payloads small enough that records straddle them. */
static void put_compressed(wbuf *out, const wbuf *raw)
{
	ZSTD_CCtx *z = ZSTD_createCCtx();
	size_t off = 0, chunk = 700;
	uint8_t buf[4096];

	while (off < raw->len) {
		size_t n = raw->len - off < chunk ? raw->len - off : chunk;
		ZSTD_inBuffer in = { raw->p + off, n, 0 };

		while (in.pos < in.size || off + n >= raw->len) {
			ZSTD_outBuffer o = { buf, sizeof(buf), 0 };
			size_t rem = ZSTD_compressStream2(z, &o, &in,
							  off + n >= raw->len ? ZSTD_e_flush : ZSTD_e_flush);
			size_t s;

			if (ZSTD_isError(rem))
				abort();
			if (o.pos) {
				begin(out, PD_RECORD_COMPRESSED, 0, &s);
				put(out, buf, o.pos);
				/* COMPRESSED is not padded: its size is exact */
				set16(out, s + 6, (uint16_t)(out->len - s));
			}
			if (rem == 0 && in.pos == in.size)
				break;
		}
		off += n;
	}
	ZSTD_freeCCtx(z);
}

static void build(wbuf *b, const cfg *c)
{
	wbuf data = { NULL, 0, 0, c->swap };
	int ev, k;

	put_records(&data, c);
	if (c->pipe) {
		put(b, c->swap ? "2ELIFREP" : "PERFILE2", 8);
		put64(b, 16);
		for (ev = 0; ev < NR_EVENTS; ev++) {
			size_t s;

			begin(b, PD_RECORD_HEADER_ATTR, 0, &s);
			put_attr(b, c, ev);
			for (k = 0; k < 2; k++)
				put64(b, ev_id(ev, k));
			end(b, s);
		}
		if (c->zstd)
			put_compressed(b, &data);
		else
			put(b, data.p, data.len);
	} else {
		size_t ids_at, attrs_at, data_at;
		wbuf body = { NULL, 0, 0, c->swap };

		if (c->zstd)
			put_compressed(&body, &data);
		else
			put(&body, data.p, data.len);
		put(b, c->swap ? "2ELIFREP" : "PERFILE2", 8);
		put64(b, 104);
		put64(b, c->attr_size + 16);
		zeros(b, 104 - 24);
		ids_at = b->len;
		for (ev = 0; ev < NR_EVENTS; ev++)
			for (k = 0; k < 2; k++)
				put64(b, ev_id(ev, k));
		attrs_at = b->len;
		for (ev = 0; ev < NR_EVENTS; ev++) {
			put_attr(b, c, ev);
			put64(b, ids_at + 16 * (size_t)ev);
			put64(b, 16);
		}
		data_at = b->len;
		put(b, body.p, body.len);
		set64(b, 24, attrs_at);
		set64(b, 32, b->len - body.len - attrs_at);
		set64(b, 40, data_at);
		set64(b, 48, body.len);
		free(body.p);
	}
	free(data.p);
}

/* ---- reading back ------------------------------------------------------------- */

static void verify_sample(const cfg *c, const pd_sample *s, int i)
{
	uint64_t st = c->sample_type, rf = c->read_format;
	int ev = i % NR_EVENTS, k, nr = 1 + i % 5;

	CHECK(s->event && s->event->index == (unsigned)ev, "sample %d: event %d", i,
	      s->event ? (int)s->event->index : -1);
	if (st & PD_SAMPLE_IP) CHECK(s->ip == 0x400000 + (uint64_t)i, "ip");
	if (st & PD_SAMPLE_TID) CHECK(s->pid == 100 + (uint32_t)i && s->tid == 200 + (uint32_t)i, "tid");
	if (st & PD_SAMPLE_ADDR) CHECK(s->addr == 0xdead0000 + (uint64_t)i, "addr");
	if (st & PD_SAMPLE_CPU) CHECK(s->cpu == (uint32_t)i % 4, "cpu %u", s->cpu);
	if (st & PD_SAMPLE_PERIOD) CHECK(s->period == 5000 + (uint64_t)i, "period");
	else CHECK(s->period == (ev ? 4000u : 100003u), "attr period %" PRIu64, s->period);
	if (st & PD_SAMPLE_READ) {
		uint64_t n = (rf & PD_FORMAT_GROUP) ? 2 : 1;

		CHECK(s->read.nr == n, "read nr %" PRIu64, s->read.nr);
		for (k = 0; k < (int)n && k < (int)s->read.nr; k++) {
			CHECK(s->read.values[k].value == 10 + (uint64_t)i + (uint64_t)k, "read value");
			if (rf & PD_FORMAT_ID) CHECK(s->read.values[k].id == ev_id(k, 0), "read id");
			if (rf & PD_FORMAT_LOST) CHECK(s->read.values[k].lost == (uint64_t)k, "read lost");
		}
		if (rf & PD_FORMAT_TOTAL_TIME_ENABLED) CHECK(s->read.time_enabled == 111, "enabled");
		if (rf & PD_FORMAT_TOTAL_TIME_RUNNING) CHECK(s->read.time_running == 222, "running");
	}
	if (st & PD_SAMPLE_CALLCHAIN) {
		CHECK(s->nr_callchain == (uint64_t)nr + 1, "callchain nr");
		if (s->nr_callchain == (uint64_t)nr + 1) {
			CHECK(s->callchain[0] == PD_CONTEXT_USER, "context marker");
			for (k = 0; k < nr; k++)
				CHECK(s->callchain[k + 1] == 0x500000 + (uint64_t)k, "callchain[%d]", k);
		}
	}
	if (st & PD_SAMPLE_RAW)
		CHECK(s->raw_size == 12 && !memcmp(s->raw, "raw-payload!", 12), "raw");
	if (st & PD_SAMPLE_BRANCH_STACK) {
		CHECK(s->nr_branches == (uint64_t)nr, "branches nr");
		CHECK(s->has_branch_hw_idx == c->hw_idx && (!c->hw_idx || s->branch_hw_idx == 42), "hw_idx");
		for (k = 0; k < nr && (uint64_t)k < s->nr_branches; k++)
			CHECK(s->branches[k].from == 0x600000 + (uint64_t)k &&
			      s->branches[k].to == 0x700000 + (uint64_t)k && s->branches[k].flags == 1,
			      "branch %d", k);
	}
	if (st & PD_SAMPLE_REGS_USER) {
		CHECK(s->regs_user.abi == 2 && s->regs_user.nr == 5, "regs_user");
		for (k = 0; k < 5 && k < (int)s->regs_user.nr; k++)
			CHECK(s->regs_user.regs[k] == 0xa0 + (uint64_t)k, "regs_user[%d]", k);
	}
	if (st & PD_SAMPLE_STACK_USER)
		CHECK(s->stack_user_size == 64 && s->stack_user_dyn_size == 48 &&
		      ((const uint8_t *)s->stack_user)[63] == 63, "stack_user");
	if (st & PD_SAMPLE_WEIGHT_STRUCT)
		CHECK(s->weight == 1 && s->weight_var2 == 2 && s->weight_var3 == 3, "weight_struct");
	else if (st & PD_SAMPLE_WEIGHT)
		CHECK(s->weight == 900 + (uint64_t)i, "weight");
	if (st & PD_SAMPLE_DATA_SRC) CHECK(s->data_src == 0x1234, "data_src");
	if (st & PD_SAMPLE_TRANSACTION) CHECK(s->transaction == 0x5678, "transaction");
	if (st & PD_SAMPLE_REGS_INTR) {
		CHECK(s->regs_intr.abi == 2 && s->regs_intr.nr == 5, "regs_intr");
		for (k = 0; k < 5 && k < (int)s->regs_intr.nr; k++)
			CHECK(s->regs_intr.regs[k] == 0xb0 + (uint64_t)k, "regs_intr[%d]", k);
	}
	if (st & PD_SAMPLE_PHYS_ADDR) CHECK(s->phys_addr == 0xfeed, "phys_addr");
	if (st & PD_SAMPLE_CGROUP) CHECK(s->cgroup == 7, "cgroup");
	if (st & PD_SAMPLE_DATA_PAGE_SIZE) CHECK(s->data_page_size == 4096, "data_page_size");
	if (st & PD_SAMPLE_CODE_PAGE_SIZE) CHECK(s->code_page_size == 8192, "code_page_size");
	if (st & PD_SAMPLE_AUX) CHECK(s->aux_size == 8, "aux");
}

static void run(const cfg *c, int ordered)
{
	wbuf b = { NULL, 0, 0, c->swap };
	pd_options opt;
	pd_error err;
	pd_file *f;
	pd_record r;
	int rc, seen = 0, comm = 0, mmap2 = 0;
	uint64_t last = 0;
	char eb[300];
	size_t ev;

	build(&b, c);
	memset(&opt, 0, sizeof(opt));
	opt.ordered = ordered;
	f = pd_open_mem(b.p, b.len, &opt, &err);
	CHECK(f, "open: %s", pd_strerror(&err, eb, sizeof(eb)));
	if (!f) {
		free(b.p);
		return;
	}
	CHECK(pd_get_info(f)->swapped == c->swap, "swapped flag");
	CHECK(pd_get_info(f)->mode == (c->pipe ? PD_MODE_PIPE : PD_MODE_FILE), "mode");
	while ((rc = pd_next(f, &r, &err)) > 0) {
		if (r.type == PD_RECORD_SAMPLE) {
			int i = (int)(r.u.sample.time - sample_time(0)) / 1000;

			if (c->sample_type & PD_SAMPLE_TIME) {
				CHECK(i >= 0 && i < NR_SAMPLES, "time %" PRIu64, r.u.sample.time);
				if (ordered)
					CHECK(r.u.sample.time >= last, "order: %" PRIu64 " after %" PRIu64,
					      r.u.sample.time, last);
				last = r.u.sample.time;
				verify_sample(c, &r.u.sample, i);
			}
			seen++;
		} else if (r.type == PD_RECORD_COMM) {
			comm++;
			CHECK(!strcmp(r.u.comm.comm, "roundtrip") && r.u.comm.pid == 100 &&
			      r.u.comm.tid == 101 && r.u.comm.exec, "comm");
			if (c->sample_type & PD_SAMPLE_TIME)
				CHECK(r.has_sample_id && r.sample_id.time == 5 && r.sample_id.pid == 100,
				      "comm sample_id");
		} else if (r.type == PD_RECORD_MMAP2) {
			mmap2++;
			CHECK(r.u.mmap.start == 0x400000 && r.u.mmap.len == 0x1000 &&
			      r.u.mmap.pgoff == 0x200 && r.u.mmap.maj == 8 && r.u.mmap.min == 1 &&
			      r.u.mmap.ino == 123456 && r.u.mmap.ino_generation == 9 &&
			      r.u.mmap.prot == 5 && r.u.mmap.flags == 2 &&
			      !strcmp(r.u.mmap.filename, "/usr/bin/roundtrip"), "mmap2");
			CHECK(r.compressed == c->zstd, "compressed flag");
		}
	}
	CHECK(rc == 0, "pd_next: %s", pd_strerror(&err, eb, sizeof(eb)));
	CHECK(seen == NR_SAMPLES && comm == 1 && mmap2 == 1, "records: %d samples %d comm %d mmap2",
	      seen, comm, mmap2);
	CHECK(pd_get_stats(f)->records[PD_RECORD_SAMPLE] == NR_SAMPLES, "sample count");
	CHECK(pd_get_stats(f)->records[PD_RECORD_FINISHED_ROUND] == NR_SAMPLES / 50, "rounds");
	CHECK(!c->zstd || pd_get_stats(f)->records[PD_RECORD_COMPRESSED] > 2, "compressed records");
	CHECK(pd_nr_events(f) == NR_EVENTS, "events");
	for (ev = 0; ev < pd_nr_events(f); ev++) {
		const pd_event *e = pd_get_event(f, ev);

		CHECK(e->nr_samples == NR_SAMPLES / NR_EVENTS, "event %zu samples %" PRIu64, ev,
		      e->nr_samples);
		CHECK(e->attr.sample_type == c->sample_type && e->attr.size == c->attr_size &&
		      e->attr.config1 == 0x11, "attr fields");
		CHECK(e->attr.flags & PD_ATTR_SAMPLE_ID_ALL, "attr bitfield sample_id_all");
		CHECK(e->attr.flags & PD_ATTR_EXCLUDE_KERNEL, "attr bitfield exclude_kernel");
		CHECK(!!(e->attr.flags & PD_ATTR_FREQ) == (ev == 1), "attr bitfield freq");
		CHECK(c->attr_size < 136 || e->attr.config3 == 0x33, "config3");
		CHECK(c->attr_size < 112 || e->attr.sample_max_stack == 127, "sample_max_stack");
		CHECK(e->nr_ids == 2 && e->ids[1] == ev_id((int)ev, 1), "ids");
		CHECK(pd_event_by_id(f, ev_id((int)ev, 1)) == e, "event by id");
	}
	/* perf's name for software event 0 with exclude_kernel only */
	CHECK(!strcmp(pd_get_event(f, 0)->name, "cpu-clock:uh"), "fallback name '%s'",
	      pd_get_event(f, 0)->name);
	pd_close(f);
	free(b.p);
}

int main(void)
{
	const uint64_t all = PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME |
			     PD_SAMPLE_ADDR | PD_SAMPLE_ID | PD_SAMPLE_STREAM_ID | PD_SAMPLE_CPU |
			     PD_SAMPLE_PERIOD | PD_SAMPLE_READ | PD_SAMPLE_CALLCHAIN | PD_SAMPLE_RAW |
			     PD_SAMPLE_BRANCH_STACK | PD_SAMPLE_REGS_USER | PD_SAMPLE_STACK_USER |
			     PD_SAMPLE_WEIGHT_STRUCT | PD_SAMPLE_DATA_SRC | PD_SAMPLE_TRANSACTION |
			     PD_SAMPLE_REGS_INTR | PD_SAMPLE_PHYS_ADDR | PD_SAMPLE_CGROUP |
			     PD_SAMPLE_DATA_PAGE_SIZE | PD_SAMPLE_CODE_PAGE_SIZE | PD_SAMPLE_AUX;
	const uint64_t old = PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ID |
			     PD_SAMPLE_CPU | PD_SAMPLE_PERIOD | PD_SAMPLE_CALLCHAIN;
	static const struct {
		uint32_t attr_size;
		uint64_t sample_type, read_format;
		int hw_idx;
	} shapes[] = {
		{ 64, old, 0, 0 },
		{ 96, old | PD_SAMPLE_READ | PD_SAMPLE_RAW | PD_SAMPLE_WEIGHT, PD_FORMAT_ID, 0 },
		{ 136, all, PD_FORMAT_GROUP | PD_FORMAT_ID | PD_FORMAT_TOTAL_TIME_ENABLED |
				    PD_FORMAT_TOTAL_TIME_RUNNING | PD_FORMAT_LOST, 1 },
		{ 144, all & ~PD_SAMPLE_WEIGHT_STRUCT, PD_FORMAT_TOTAL_TIME_ENABLED |
				    PD_FORMAT_TOTAL_TIME_RUNNING, 0 },
	};
	size_t i;
	int swap, pipe, zstd, ordered;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (swap = 0; swap < 2; swap++)
			for (pipe = 0; pipe < 2; pipe++)
				for (zstd = 0; zstd < 2; zstd++)
					for (ordered = 0; ordered < 2; ordered++) {
						cfg c = { swap, pipe, zstd, shapes[i].attr_size,
							  shapes[i].sample_type, shapes[i].read_format,
							  shapes[i].hw_idx };

						snprintf(cfg_name, sizeof(cfg_name),
							 "attr %u st 0x%llx %s %s%s%s", c.attr_size,
							 (unsigned long long)c.sample_type,
							 swap ? "swapped" : "native", pipe ? "pipe" : "file",
							 zstd ? " zstd" : "", ordered ? " ordered" : "");
						run(&c, ordered);
					}
	printf("%d failures\n", failures);
	return failures ? 1 : 0;
}
