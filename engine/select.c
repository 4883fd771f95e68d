/* select.c - the samples a question is about: from the aggregate, or from the blocks of a time range. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/log.h"
#include "engine/query-int.h"

const char *pe_fold_event(const pe_model *m, const char *want)
{
	size_t i, wl = want ? strlen(want) : 0;

	/* the aggregate is in first_seq order */
	for (i = 0; i < m->nr_agg; i++) {
		const char *name = pe_event_name(m, m->agg[i].event);
		if (!name)
			continue;
		if (!want || !strcmp(name, want) || (!strncmp(name, want, wl) && name[wl] == ':'))
			return name;
	}
	return NULL;
}

unsigned char *pe_event_set(const pe_model *m, const char *ev)
{
	unsigned char *set = calloc(m->nr_events + 1, 1);
	size_t i;

	if (!set)
		return NULL;
	for (i = 0; i < m->nr_events; i++)
		set[i] = m->event_names[i] && !strcmp(m->event_names[i], ev);
	return set;
}

int pe_weight_parse(const char *name, int *by_samples, int *measure)
{
	*by_samples = !strcmp(name, "samples");
	*measure = !strcmp(name, "offcpu") ? PE_MEASURE_OFFCPU :
		   !strcmp(name, "wall") ? PE_MEASURE_WALL : PE_MEASURE_PERIOD;
	return *by_samples || *measure != PE_MEASURE_PERIOD || !strcmp(name, "period") ? 0 : -1;
}

const char *pe_weight_name(int by_samples, int measure)
{
	static const char *const names[] = { "period", "offcpu", "wall" };

	if (by_samples)
		return "samples";
	return measure >= 0 && measure <= PE_MEASURE_WALL ? names[measure] : "period";
}

const char *pe_offcpu_event(const pe_model *m)
{
	size_t i;

	for (i = 0; i < m->nr_agg; i++)
		if (m->agg[i].offcpu && pe_event_name(m, m->agg[i].event))
			return pe_event_name(m, m->agg[i].event);
	return NULL;
}

/* Periods in nanoseconds: the software clocks perf samples CPU time with. */
static int time_based(const char *ev)
{
	return !strncmp(ev, "cpu-clock", 9) || !strncmp(ev, "task-clock", 10);
}

/* The first sample's event other than `not`, or the one `want` names. */
static const char *on_cpu_event(const pe_model *m, const char *want, const char *not)
{
	size_t i;

	if (want)
		return pe_fold_event(m, want);
	for (i = 0; i < m->nr_agg; i++) {
		const char *name = pe_event_name(m, m->agg[i].event);
		if (name && (!not || strcmp(name, not)))
			return name;
	}
	return NULL;
}

int pe_measure_check(const pe_model *m, const pe_filter *f, const char **why)
{
	const char *off, *on;

	*why = NULL;
	if (f->measure == PE_MEASURE_PERIOD)
		return 0;
	off = f->measure == PE_MEASURE_OFFCPU && f->event ? pe_fold_event(m, f->event) :
	      pe_offcpu_event(m);
	if (!off || (f->measure == PE_MEASURE_OFFCPU && off != pe_offcpu_event(m))) {
		*why = f->event && f->measure == PE_MEASURE_OFFCPU ?
		       "that event carries no off-CPU time" :
		       "no off-CPU time in this profile (record with -e sched:sched_switch"
		       " --switch-events -g, or perf record --off-cpu)";
		return 1;
	}
	if (f->measure == PE_MEASURE_WALL) {
		on = on_cpu_event(m, f->event, off);
		if (!on || !time_based(on) || !strcmp(on, off)) {
			*why = "weight=wall needs a cpu-clock or task-clock event beside the"
			       " off-CPU one";
			return 1;
		}
	}
	return 0;
}

unsigned char *pe_event_plan(const pe_model *m, const pe_filter *f, int *none)
{
	const char *ev, *off = NULL, *why;
	unsigned char *plan;
	size_t i;

	*none = 1;
	if (pe_measure_check(m, f, &why))
		return NULL;
	if (f->measure == PE_MEASURE_PERIOD) {
		ev = pe_fold_event(m, f->event);
	} else {
		off = f->measure == PE_MEASURE_OFFCPU && f->event ? pe_fold_event(m, f->event) :
		      pe_offcpu_event(m);
		ev = f->measure == PE_MEASURE_WALL ? on_cpu_event(m, f->event, off) : NULL;
	}
	if (!ev && !off)
		return NULL;	/* no such event or no samples: nothing to fold */
	*none = 0;
	if (!(plan = calloc(m->nr_events + 1, 1)))
		return NULL;
	for (i = 0; i < m->nr_events; i++) {
		const char *name = m->event_names[i];
		if (name && ev && !strcmp(name, ev))
			plan[i] = PE_PLAN_PERIOD;
		else if (name && off && !strcmp(name, off))
			plan[i] = PE_PLAN_OFFCPU;
	}
	return plan;
}

/* The string id whose text is `text` (strings are interned: at most one),
 * or 0 when the profile has none. */
static uint32_t string_id(const pe_model *m, const char *text)
{
	size_t i;

	for (i = 1; i < m->nr_strs; i++)
		if (m->strs[i] && !strcmp(m->strs[i], text))
			return (uint32_t)i;
	return 0;
}

uint64_t pe_function_key(const pe_model *m, const pe_filter *f, const char *function)
{
	size_t len = strlen(function), i;
	int mark = 0;
	uint32_t id = 0;

	if (f->kernel && len > 4 && !strcmp(function + len - 4, "_[k]")) {
		mark = 1;
		len -= 4;
	}
	for (i = 1; i < m->nr_strs && !id; i++)
		if (m->strs[i] && !strncmp(m->strs[i], function, len) && !m->strs[i][len])
			id = (uint32_t)i;
	for (i = 1; id && i < m->nr_frames; i++)
		if (m->frame_name[i] == id && (!f->kernel || m->frame_kernel[i] == (uint32_t)mark))
			return (uint64_t)id << 1 | (uint64_t)mark;
	return 0;
}

/* Rows grouped as the folded text distinguishes them. */
static int group_rows(const pe_model *m, const pe_filter *f, const unsigned char *set,
		      pe_aggmap *out)
{
	size_t i;

	for (i = 0; i < m->nr_agg; i++) {
		const pe_agg_row *r = &m->agg[i];
		pe_agg_row *g;
		const char *cs;

		if (!pe_in_set(m, set, r->event))
			continue;
		if (pe_dying_task(r->pid, r->tid))
			continue;
		if ((f->pid >= 0 && r->pid != (uint64_t)f->pid) ||
		    (f->tid >= 0 && r->tid != (uint64_t)f->tid))
			continue;
		if (f->comm) {
			cs = pe_str(m, r->comm);
			if (strcmp(f->comm, cs ? cs : ""))
				continue;
		}
		g = pe_aggmap_get(out, 0, f->with_pid || f->with_tid ? r->pid : 0,
				  f->with_tid ? r->tid : 0, r->comm, r->stack);
		if (!g)
			return -1;
		g->samples += r->samples;
		g->period += pe_plan_value(set, r->event, r->period, r->offcpu);
	}
	return 0;
}

typedef struct block_scan {
	const pe_model *m;
	const pe_filter *f;
	const unsigned char *set;
	uint64_t to;
	uint32_t want_comm;
	int by_pid, by_tid;
	uint8_t *raw;
	pe_aggmap *out;
} block_scan;

/* The matching samples of one block, grouped; only the columns a fold
 * uses are read, straight from the decompressed block. */
static int scan_block(void *ctx, int64_t nr, const void *data, size_t len)
{
	block_scan *c = ctx;
	const pe_filter *f = c->f;
	pe_block_view v;
	uint64_t t = 0;
	size_t i;

	if (pe_block_view_of(data, len, nr, c->raw, &v) < 0) {
		pe_warn("msg=\"corrupt sample block\" profile=%lld", (long long)c->m->id);
		return -1;
	}
	for (i = 0; i < v.n; i++) {
		uint32_t pid, tid, comm;
		pe_agg_row *a;

		t += pe_get64(v.time + 8 * i);
		if (t < f->from_ns || t >= c->to || !pe_in_set(c->m, c->set, pe_get32(v.event + 4 * i)))
			continue;
		pid = pe_get32(v.pid + 4 * i);
		tid = pe_get32(v.tid + 4 * i);
		comm = pe_get32(v.comm + 4 * i);
		if (pe_dying_task(pid, tid))
			continue;
		if ((f->pid >= 0 && pid != (uint64_t)f->pid) ||
		    (f->tid >= 0 && tid != (uint64_t)f->tid) || (c->want_comm && comm != c->want_comm))
			continue;
		a = pe_aggmap_get(c->out, 0, c->by_pid ? pid : 0, c->by_tid ? tid : 0, comm,
				  pe_get32(v.stack + 4 * i));
		if (!a)
			return -1;
		a->samples++;
		a->period += pe_plan_value(c->set, pe_get32(v.event + 4 * i),
					pe_get64(v.period + 8 * i), pe_block_offcpu(&v, i));
	}
	return 0;
}

static int scan_blocks(const pe_model *m, const pe_filter *f, const unsigned char *set,
		       const pe_blocks *blocks, pe_aggmap *out)
{
	block_scan c = { m, f, set, f->to_ns ? f->to_ns : UINT64_MAX, 0,
			 f->with_pid || f->with_tid, f->with_tid, NULL, out };
	int rc;

	if (f->comm && !(c.want_comm = string_id(m, f->comm)))
		return 0;	/* no thread ever had that comm */
	if (!blocks || !blocks->read)
		return -1;
	if (!(c.raw = malloc(PE_BLOCK_RAW_MAX)))
		return -1;
	rc = blocks->read(blocks->src, f->from_ns, f->to_ns, scan_block, &c);
	free(c.raw);
	return rc ? -1 : 0;
}

/* Stacks that were never switched out from (or whose switch-in the
 * recording missed) weigh nothing off-CPU: they are left out, so no
 * answer shows a stack of 0. The map is only read from now on. */
static void drop_zero(pe_aggmap *g)
{
	size_t i, n = 0;

	for (i = 0; i < g->n; i++)
		if (g->rows[i].period)
			g->rows[n++] = g->rows[i];
	g->n = n;
	free(g->slots);
	g->slots = NULL;
	g->nr_slots = 0;
}

int pe_select(const pe_model *m, const pe_filter *f, const pe_blocks *blocks,
	      pe_selection **out)
{
	pe_selection *s = calloc(1, sizeof(*s));
	unsigned char *set = NULL;
	int rc = -1, none;

	*out = NULL;
	if (!s)
		return -1;
	if (!(set = pe_event_plan(m, f, &none))) {
		if (none)
			rc = 0;	/* nothing to fold */
		goto out;
	}
	if (f->from_ns || f->to_ns)
		rc = scan_blocks(m, f, set, blocks, &s->groups);
	else
		rc = group_rows(m, f, set, &s->groups);
	if (rc == 0 && f->measure != PE_MEASURE_PERIOD)
		drop_zero(&s->groups);
out:
	free(set);
	if (rc < 0) {
		pe_selection_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

void pe_selection_free(pe_selection *s)
{
	if (!s)
		return;
	pe_aggmap_free(&s->groups);
	free(s);
}

int pe_sbuf_add(pe_sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 256;
		char *p;
		while (ncap < b->len + n + 1)
			ncap *= 2;
		if (!(p = realloc(b->p, ncap)))
			return -1;
		b->p = p;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
	return 0;
}

int pe_comm_text(pe_sbuf *b, const pe_model *m, const pe_filter *f, const pe_agg_row *r)
{
	const char *cs = pe_str(m, r->comm);
	char num[64];
	size_t k;

	b->len = 0;
	if (pe_sbuf_add(b, "", 0) < 0)
		return -1;
	for (k = 0; cs && cs[k]; k++) {
		char c = cs[k] == ' ' ? '_' : cs[k];
		if (pe_sbuf_add(b, &c, 1) < 0)
			return -1;
	}
	if (f->with_tid)
		snprintf(num, sizeof(num), "-%lu/%lu", (unsigned long)r->pid,
			 (unsigned long)r->tid);
	else if (f->with_pid)
		snprintf(num, sizeof(num), "-%lu", (unsigned long)r->pid);
	else
		num[0] = 0;
	return pe_sbuf_add(b, num, strlen(num));
}
