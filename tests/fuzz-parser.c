/*
 * fuzz-parser - libFuzzer target over the perf.data reader: open the input
 * from memory, read every record (touching every decoded pointer, so the
 * sanitizers see any read past what the parser checked), then decode
 * every feature to JSON. Built with --enable-fuzzing as tests/fuzz-parser;
 * tests/fuzz-replay runs the same entry point over tests/fuzz-corpus/ in
 * every `make check`.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata.h"

#define FUZZ_MAX_INPUT (4u << 20)
#define FUZZ_MAX_RECORDS 2000000
#define FUZZ_MAX_DECOMPRESSED (64ULL << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;	/* keeps the reads below from being optimized out */

static void touch(const void *p, size_t n)
{
	const volatile uint8_t *b = p;
	uint64_t s = 0;
	if (!p)
		return;
	for (size_t i = 0; i < n; i++)
		s += b[i];
	sink += s;
}

static void touch_str(const char *s)
{
	if (s)
		touch(s, strlen(s) + 1);
}

static void touch_regs(const pd_regs *r)
{
	if (r->nr)
		touch(r->regs, r->nr * sizeof(uint64_t));
}

static void touch_record(const pd_record *r)
{
	touch(r->raw, r->size);
	switch (r->type) {
	case PD_RECORD_SAMPLE: {
		const pd_sample *s = &r->u.sample;
		if (s->event)
			touch_str(s->event->name);
		if (s->read.values)
			touch(s->read.values, s->read.nr * sizeof(pd_read_value));
		touch(s->callchain, s->nr_callchain * sizeof(uint64_t));
		touch(s->raw, s->raw_size);
		touch(s->branches, s->nr_branches * sizeof(pd_branch_entry));
		touch_regs(&s->regs_user);
		touch_regs(&s->regs_intr);
		touch(s->stack_user, s->stack_user_size);
		touch(s->aux, s->aux_size);
		break;
	}
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2:
		touch_str(r->u.mmap.filename);
		break;
	case PD_RECORD_COMM:
		touch_str(r->u.comm.comm);
		break;
	case PD_RECORD_KSYMBOL:
		touch_str(r->u.ksymbol.name);
		break;
	case PD_RECORD_HEADER_BUILD_ID:
		touch_str(r->u.build_id.filename);
		break;
	case PD_RECORD_HEADER_ATTR:
		if (r->u.attr)
			touch_str(r->u.attr->name);
		break;
	default:
		break;
	}
}

static void read_one(const uint8_t *data, size_t size, int ordered)
{
	pd_options opt = { .ordered = ordered, .max_decompressed = FUZZ_MAX_DECOMPRESSED,
			   .max_ordered_bytes = 8u << 20 };
	pd_error err;
	char buf[300];
	pd_file *f = pd_open_mem(data, size, &opt, &err);
	if (!f) {
		pd_strerror(&err, buf, sizeof(buf));
		return;
	}
	pd_record rec;
	int rc;
	unsigned long n = 0;
	while (n < FUZZ_MAX_RECORDS && (rc = pd_next(f, &rec, &err)) > 0) {
		touch_record(&rec);
		n++;
	}
	for (size_t i = 0; i < pd_nr_events(f); i++) {
		const pd_event *ev = pd_get_event(f, i);
		if (ev) {
			touch_str(ev->name);
			touch(ev->ids, ev->nr_ids * sizeof(uint64_t));
		}
	}
	/* every feature id, present or not, and the unknown ones too */
	for (int feat = 0; feat < PD_FEAT_MAX; feat++) {
		size_t len = 0;
		const void *raw = pd_feature_raw(f, feat, &len);
		touch(raw, len);
		if (feat < 40 || raw) {
			char *js = pd_feature_json(f, feat);
			touch_str(js);
			free(js);
		}
	}
	const pd_header *h = pd_get_header(f);
	if (h) {
		touch_str(h->hostname);
		touch_str(h->os_release);
		touch_str(h->perf_version);
		touch_str(h->arch);
		touch_str(h->cpu_desc);
		touch_str(h->cpuid);
		touch_str(h->cmdline);
		for (size_t i = 0; i < h->nr_build_ids; i++)
			touch_str(h->build_ids[i].filename);
	}
	for (size_t i = 0; i < pd_nr_warnings(f); i++)
		touch_str(pd_warning(f, i));
	pd_close(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	read_one(data, size, 0);
	read_one(data, size, 1);
	return 0;
}
