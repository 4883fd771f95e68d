/* speedscope.c - a profile in speedscope's file format: sampled profiles, one per thread or per comm. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonbuf.h"
#include "engine/export.h"
#include "engine/query-int.h"

#define ADD_LIT(b, lit) jb_add((b), (lit), sizeof(lit) - 1)
#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* A selected row and the profile it goes to. */
typedef struct ss_row {
	uint64_t key;		/* comm string id, or pid << 32 | tid */
	size_t idx;		/* the row, in selection order */
} ss_row;

/* One profile: rows [first, first + n) of the sorted rows. */
typedef struct ss_prof {
	size_t first, n;
	uint64_t total;
} ss_prof;

static int cmp_row(const void *x, const void *y)
{
	const ss_row *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_prof(const void *x, const void *y)
{
	const ss_prof *a = x, *b = y;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

static void add_str(jbuf *b, const char *s)
{
	jb_json_str(b, s, strlen(s));
}

static void add_u64(jbuf *b, uint64_t v)
{
	char num[24], *d = jb_u64_dec(num + sizeof(num), v);

	jb_add(b, d, (size_t)(num + sizeof(num) - d));
}


static void frame_json(jbuf *b, const pe_model *m, const pe_filter *f, uint32_t fr)
{
	const char *name = fr < m->nr_frames ? pe_str(m, m->frame_name[fr]) : NULL;
	const char *dso = fr < m->nr_frames ? pe_str(m, m->frame_dso[fr]) : NULL;

	ADD_LIT(b, "{\"name\":");
	if (!name)
		name = "[unknown]";
	if (f->kernel && fr < m->nr_frames && m->frame_kernel[fr]) {
		size_t l = strlen(name);
		char *t = malloc(l + 5);
		if (!t) {
			b->oom = 1;
			return;
		}
		memcpy(t, name, l);
		memcpy(t + l, "_[k]", 5);
		add_str(b, t);
		free(t);
	} else {
		add_str(b, name);
	}
	if (dso) {
		ADD_LIT(b, ",\"file\":");
		add_str(b, dso);
	}
	ADD_LIT(b, "}");
}

/* What the profiles share while they are written. */
typedef struct ss_out {
	jbuf b;
	const pe_model *m;
	const pe_aggmap *g;
	const ss_row *rows;
	uint32_t *idx_of;	/* frame id -> shared frame index + 1 */
	uint32_t *order;	/* shared frames: their frame ids */
	size_t nframes;
	uint32_t *path;		/* PE_MAX_DEPTH */
} ss_out;

/* The shared frame of frame id fr: its index, made on first use. */
static uint32_t frame_index(ss_out *w, uint32_t fr)
{
	if (!w->idx_of[fr]) {
		w->order[w->nframes] = fr;
		w->idx_of[fr] = (uint32_t)++w->nframes;
	}
	return w->idx_of[fr] - 1;
}

/* One profile: {"type":"sampled", name, unit, start and end, samples, weights}. */
static void profile_json(ss_out *w, const pe_filter *f, const pe_speedscope_opts *o,
			 const char *unit, const ss_prof *pr)
{
	const pe_model *m = w->m;
	const pe_agg_row *r0 = &w->g->rows[w->rows[pr->first].idx];
	const char *comm = pe_str(m, r0->comm);
	char num[64];
	size_t i;

	ADD_LIT(&w->b, "{\"type\":\"sampled\",\"name\":");
	if (o->by_comm || !f->with_tid) {
		add_str(&w->b, comm ? comm : "");
	} else {
		pe_sbuf name = { 0 };
		snprintf(num, sizeof(num), " %lu/%lu", (unsigned long)r0->pid,
			 (unsigned long)r0->tid);
		if (pe_sbuf_add(&name, comm ? comm : "", comm ? strlen(comm) : 0) < 0 ||
		    pe_sbuf_add(&name, num, strlen(num)) < 0)
			w->b.oom = 1;
		else
			add_str(&w->b, name.p);
		free(name.p);
	}
	ADD_LIT(&w->b, ",\"unit\":");
	add_str(&w->b, unit);
	ADD_LIT(&w->b, ",\"startValue\":0,\"endValue\":");
	add_u64(&w->b, pr->total);
	ADD_LIT(&w->b, ",\"samples\":[");
	for (i = 0; i < pr->n; i++) {
		const pe_agg_row *r = &w->g->rows[w->rows[pr->first + i].idx];
		uint32_t node = r->stack;
		size_t depth = 0;

		while (node && node < m->nr_stacks && depth < PE_MAX_DEPTH) {
			w->path[depth++] = m->stack_frame[node];
			if (m->stack_parent[node] >= node)
				break;
			node = m->stack_parent[node];
		}
		if (i)
			ADD_LIT(&w->b, ",");
		ADD_LIT(&w->b, "[");
		/* outermost first */
		while (depth--) {
			uint32_t fr = w->path[depth];
			if (fr >= m->nr_frames)
				fr = 0;	/* a damaged row: "[unknown]" */
			add_u64(&w->b, frame_index(w, fr));
			if (depth)
				ADD_LIT(&w->b, ",");
		}
		ADD_LIT(&w->b, "]");
	}
	ADD_LIT(&w->b, "],\"weights\":[");
	for (i = 0; i < pr->n; i++) {
		const pe_agg_row *r = &w->g->rows[w->rows[pr->first + i].idx];
		if (i)
			ADD_LIT(&w->b, ",");
		add_u64(&w->b, o->by_samples ? r->samples : r->period);
	}
	ADD_LIT(&w->b, "]}");
}

int pe_speedscope(const pe_model *m, const pe_filter *f, const pe_selection *s,
		  const pe_speedscope_opts *o, char **out, size_t *len)
{
	const pe_aggmap *g = &s->groups;
	const char *ev = pe_fold_event(m, f->event);
	/* the off-CPU measures weigh in nanoseconds whatever the event */
	const char *unit = !o->by_samples && (f->measure != PE_MEASURE_PERIOD ||
					      !strcmp(pe_event_unit(ev), "nanoseconds")) ?
			   "nanoseconds" : "none";
	ss_row *rows = malloc((g->n + 1) * sizeof(*rows));
	ss_prof *profs = malloc((g->n + 1) * sizeof(*profs));
	size_t nprofs = 0, i;
	ss_out w;
	int rc = -1;

	memset(&w, 0, sizeof(w));
	w.m = m;
	w.g = g;
	w.rows = rows;
	w.idx_of = calloc(m->nr_frames + 1, sizeof(*w.idx_of));
	w.order = malloc((m->nr_frames + 1) * sizeof(*w.order));
	w.path = malloc(PE_MAX_DEPTH * sizeof(*w.path));
	*out = NULL;
	*len = 0;
	if (!rows || !profs || !w.idx_of || !w.order || !w.path)
		goto out;
	/* rows by profile, in selection order within one */
	for (i = 0; i < g->n; i++) {
		const pe_agg_row *r = &g->rows[i];
		rows[i].key = o->by_comm || !f->with_tid ? r->comm : (uint64_t)r->pid << 32 | r->tid;
		rows[i].idx = i;
	}
	qsort(rows, g->n, sizeof(*rows), cmp_row);
	for (i = 0; i < g->n; i++) {
		const pe_agg_row *r = &g->rows[rows[i].idx];
		if (!i || rows[i].key != rows[i - 1].key) {
			profs[nprofs].first = i;
			profs[nprofs].n = 0;
			profs[nprofs++].total = 0;
		}
		profs[nprofs - 1].n++;
		profs[nprofs - 1].total += o->by_samples ? r->samples : r->period;
	}
	qsort(profs, nprofs, sizeof(*profs), cmp_prof);
	/* the profiles first (they name the frames they use), then the file
	 * around them: shared frames, then the profiles' text */
	for (i = 0; i < nprofs; i++) {
		if (i)
			ADD_LIT(&w.b, ",");
		profile_json(&w, f, o, unit, &profs[i]);
	}
	{
		jbuf head = { 0 };
		ADD_LIT(&head, "{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\"exporter\":");
		add_str(&head, o->exporter ? o->exporter : "perfhub");
		ADD_LIT(&head, ",\"name\":");
		add_str(&head, o->name ? o->name : "perfhub profile");
		ADD_LIT(&head, ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
		for (i = 0; i < w.nframes; i++) {
			if (i)
				ADD_LIT(&head, ",");
			frame_json(&head, m, f, w.order[i]);
		}
		ADD_LIT(&head, "]},\"profiles\":[");
		if (w.b.len)
			jb_add(&head, w.b.p, w.b.len);
		ADD_LIT(&head, "]}\n");
		if (head.oom || w.b.oom) {
			free(head.p);
			goto out;
		}
		head.p[head.len] = 0;
		*out = head.p;
		*len = head.len;
	}
	rc = 0;
out:
	free(rows);
	free(profs);
	free(w.idx_of);
	free(w.order);
	free(w.path);
	free(w.b.p);
	return rc;
}
