/*
 * engine_common.h - what the profile engine's unit tests share: a check
 * macro, and a small profile built in memory with the engine's own builder
 * (no database): its rows load the model as a backend's loader would, its
 * packed blocks are kept in memory and handed back through pe_blocks with
 * the backend's time-range rule (a block may hold [from, to) when
 * max_time >= from and min_time < to).
 */
#ifndef PERFHUB_TESTS_ENGINE_COMMON_H
#define PERFHUB_TESTS_ENGINE_COMMON_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine/builder.h"
#include "engine/model.h"
#include "engine/query.h"

/* got is evaluated once */
#define CHECK_STR(got, want) do { \
	const char *got_ = (got); \
	CHECK(got_ && !strcmp(got_, (want)), "\n  got  %s\n  want %s", \
	      got_ ? got_ : "(null)", (want)); \
} while (0)

typedef struct mem_block {
	int64_t nr;
	uint64_t min_time, max_time;
	void *data;
	size_t len;
} mem_block;

/* A profile in memory: the builder while it is filled, then the model and
 * the stored blocks. */
typedef struct mem_profile {
	pe_builder *b;
	pe_model *m;
	mem_block blocks[64];
	size_t nr_blocks;
	unsigned every;		/* pack a block after this many samples (0: when full) */
	unsigned in_block;
} mem_profile;

static inline void mem_pack(mem_profile *p)
{
	pe_packed_block pb;

	if (pe_builder_pack_block(p->b, &pb) == 0 && p->nr_blocks < 64) {
		mem_block *k = &p->blocks[p->nr_blocks++];
		k->nr = pb.nr;
		k->min_time = pb.min_time;
		k->max_time = pb.max_time;
		k->data = malloc(pb.len);
		memcpy(k->data, pb.data, pb.len);
		k->len = pb.len;
	}
	p->in_block = 0;
}

static inline void mem_begin(mem_profile *p, unsigned every)
{
	memset(p, 0, sizeof(*p));
	p->b = pe_builder_new();
	p->every = every;
	if (!p->b) {
		printf("FAIL: no builder\n");
		exit(1);
	}
}

/* The stack node of "outer;...;leaf" (frames "name@dso", a trailing "!"
 * marks a kernel frame; "" is the empty stack). */
static inline uint32_t mem_stack(mem_profile *p, const char *folded)
{
	char buf[1024], *save = NULL, *tok;
	uint32_t node = 0;

	snprintf(buf, sizeof(buf), "%s", folded);
	for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		char *at = strchr(tok, '@');
		size_t l = strlen(tok);
		int kernel = l && tok[l - 1] == '!';
		if (kernel)
			tok[l - 1] = 0;
		if (at)
			*at++ = 0;
		node = pe_builder_stack(p->b, node, pe_builder_frame(p->b, tok, at, 1, kernel));
	}
	return node;
}

static inline void mem_sample(mem_profile *p, uint32_t event, uint64_t time, uint32_t pid,
		       uint32_t tid, const char *comm, const char *folded, uint64_t period)
{
	pe_sample s = { .event = event, .time = time, .pid = pid, .tid = tid, .period = period };

	/* frames first, then the comm: the string ids the tests expect */
	s.stack = mem_stack(p, folded);
	s.comm = pe_builder_string(p->b, comm);

	if (pe_builder_sample(p->b, &s, NULL) > 0 || (p->every && ++p->in_block == p->every))
		mem_pack(p);
}

#define EV_CLOCK 0
#define EV_SWITCH 1
#define DYING UINT32_MAX

/* The samples the engine tests share: two events, three threads of two
 * processes, a comm with a space, a kernel leaf, a dying task (pid/tid -1)
 * and an empty stack. */
static inline void mem_two_events(mem_profile *p)
{
	pe_builder_event(p->b, EV_CLOCK, "cpu-clock:ppp", 1, 0, 0, 4000, 1, 6);
	pe_builder_event(p->b, EV_SWITCH, "sched:sched_switch", 2, 0, 0, 1, 0, 2);
	mem_sample(p, EV_CLOCK, 1000, 10, 10, "make", "main@/bin/app;parse@/bin/app;lex@/bin/app", 100);
	mem_sample(p, EV_CLOCK, 2000, 10, 10, "make", "main@/bin/app;parse@/bin/app;lex@/bin/app", 100);
	mem_sample(p, EV_CLOCK, 3000, 10, 11, "make", "main@/bin/app;parse@/bin/app", 50);
	mem_sample(p, EV_CLOCK, 4000, 20, 20, "cc1 x",
		   "main@/bin/app;emit@/bin/app;write@/lib/libc.so.6;sys_write@[kernel.kallsyms]!", 10);
	mem_sample(p, EV_CLOCK, 5000, 20, 20, "cc1 x", "main@/bin/app;parse@/bin/app;lex@/bin/app", 10);
	mem_sample(p, EV_CLOCK, 6000, DYING, DYING, "make", "main@/bin/app;parse@/bin/app;lex@/bin/app", 5);
	mem_sample(p, EV_SWITCH, 7000, 10, 10, "make", "main@/bin/app;parse@/bin/app", 1);
	mem_sample(p, EV_SWITCH, 8000, 20, 20, "cc1 x", "", 1);
}

static unsigned mem_reads;	/* blocks handed out, to see the range rule at work */

static inline int mem_read(void *src, uint64_t from, uint64_t to, pe_block_cb cb, void *ctx)
{
	mem_profile *p = src;
	size_t i;
	int rc;

	for (i = 0; i < p->nr_blocks; i++) {
		const mem_block *k = &p->blocks[i];
		if ((from && k->max_time < from) || (to && k->min_time >= to))
			continue;
		mem_reads++;
		if ((rc = cb(ctx, k->nr, k->data, k->len)) != 0)
			return rc;
	}
	return 0;
}

/* Ends the building: the model of profile `id`, generation 1. */
static inline pe_model *mem_end(mem_profile *p, int64_t id)
{
	pe_blocks src = { mem_read, p };
	const pe_row *rows;
	size_t n;

	mem_pack(p);
	p->m = pe_model_new(id, 1);
	rows = pe_builder_rows(p->b, &n);
	if (!p->m || pe_model_load_rows(p->m, rows, n) < 0) {
		printf("FAIL: model rows\n");
		exit(1);
	}
	/* the aggregate as a store's model has it: summed from the blocks */
	if (pe_model_agg_from_blocks(p->m, &src) < 0) {
		printf("FAIL: the aggregate from the blocks\n");
		exit(1);
	}
	pe_model_seal(p->m);
	pe_builder_free(p->b);
	p->b = NULL;
	return p->m;
}

/* The base of the several-profile tests: two comms, three functions of two
 * DSOs, 4 samples, period 13. */
static inline pe_model *mem_base_profile(mem_profile *p)
{
	mem_begin(p, 0);
	pe_builder_event(p->b, 0, "cpu-clock", 1, 0, 0, 1, 0, 4);
	mem_sample(p, 0, 1, 1, 1, "app", "main@/bin/app;alpha@/bin/app", 5);
	mem_sample(p, 0, 2, 1, 1, "app", "main@/bin/app;alpha@/bin/app", 5);
	mem_sample(p, 0, 3, 1, 1, "app", "main@/bin/app;common@/lib/libc.so.6", 2);
	mem_sample(p, 0, 4, 2, 2, "sh", "run@/bin/sh", 1);
	return mem_end(p, 1);
}

static inline void mem_free(mem_profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_blocks; i++)
		free(p->blocks[i].data);
	pe_model_free(p->m);
	pe_builder_free(p->b);
}

static inline pe_filter filter_all(void)
{
	pe_filter f;

	memset(&f, 0, sizeof(f));
	f.pid = f.tid = -1;
	return f;
}

/* ---- answers as text, to compare with what they must be ---- */

typedef struct text {
	char s[8192];
	size_t len;
} text;

static inline void text_add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void text_add(text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->s + t->len, sizeof(t->s) - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n < sizeof(t->s) - t->len ? (size_t)n : sizeof(t->s) - t->len - 1;
}

static inline int fold_line(void *ctx, const char *line, uint64_t samples, uint64_t period)
{
	text_add(ctx, "%s %llu/%llu\n", line, (unsigned long long)samples,
		 (unsigned long long)period);
	return 0;
}

/* t emptied, and the selection of m under f (NULL when it failed: t says so). */
static inline pe_selection *pick(pe_model *m, const pe_filter *f, mem_profile *p, text *t)
{
	pe_blocks src = { mem_read, p };
	pe_selection *s;

	t->len = 0;
	t->s[0] = 0;
	if (pe_select(m, f, &src, &s) < 0) {
		text_add(t, "(select failed)");
		return NULL;
	}
	return s;
}

/* The folded lines of m under f: "line samples/period\n" each. */
static inline const char *folded(pe_model *m, const pe_filter *f, mem_profile *p, text *t)
{
	pe_selection *s = pick(m, f, p, t);

	if (s && pe_fold(m, f, s, fold_line, t) < 0)
		text_add(t, "(fold failed)");
	pe_selection_free(s);
	return t->s;
}

static inline int tree_enter(void *ctx, const char *name, size_t len, const char *dso, uint64_t value)
{
	text_add(ctx, "%.*s%s%s=%llu(", (int)len, name, dso ? "@" : "", dso ? dso : "",
		 (unsigned long long)value);
	return 0;
}

static inline int tree_leave(void *ctx)
{
	text_add(ctx, ")");
	return 0;
}

/* The flame graph of m under f as "name@dso=value(children...)". */
static inline const char *flamed(pe_model *m, const pe_filter *f, int by_samples, mem_profile *p,
				 text *t)
{
	static const pe_tree_cb cb = { tree_enter, tree_leave };
	pe_selection *s = pick(m, f, p, t);

	if (s && pe_flame(m, f, s, by_samples, &cb, t) < 0)
		text_add(t, "(flame failed)");
	pe_selection_free(s);
	return t->s;
}

#endif
