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
		g->period += r->period;
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
		a->period += pe_get64(v.period + 8 * i);
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

int pe_select(const pe_model *m, const pe_filter *f, const pe_blocks *blocks,
	      pe_selection **out)
{
	pe_selection *s = calloc(1, sizeof(*s));
	unsigned char *set = NULL;
	const char *ev;
	int rc = -1;

	*out = NULL;
	if (!s)
		return -1;
	ev = pe_fold_event(m, f->event);
	if (!ev) {
		rc = 0;		/* no such event or no samples: nothing to fold */
		goto out;
	}
	if (!(set = pe_event_set(m, ev)))
		goto out;
	if (f->from_ns || f->to_ns)
		rc = scan_blocks(m, f, set, blocks, &s->groups);
	else
		rc = group_rows(m, f, set, &s->groups);
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

void pe_selection_totals(const pe_selection *s, uint64_t *samples, uint64_t *period)
{
	size_t i;

	*samples = *period = 0;
	for (i = 0; s && i < s->groups.n; i++) {
		*samples += s->groups.rows[i].samples;
		*period += s->groups.rows[i].period;
	}
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
