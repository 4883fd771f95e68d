/*
 * summary.c - a profile's summary for series: per event, the self and
 * total samples and period of every function, DSO and comm, counted as
 * /top counts them (pe_keysum) over what `perfhub collapse` folds; and the
 * value of a series point from it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/many.h"
#include "engine/query-int.h"

typedef struct sum_buf {
	pe_sum_row *rows;
	size_t n, cap;
} sum_buf;

static pe_sum_row *row_add(sum_buf *b)
{
	if (b->n == b->cap) {
		size_t ncap = b->cap ? 2 * b->cap : 1024;
		pe_sum_row *p = realloc(b->rows, ncap * sizeof(*p));
		if (!p)
			return NULL;
		b->rows = p;
		b->cap = ncap;
	}
	memset(&b->rows[b->n], 0, sizeof(pe_sum_row));
	return &b->rows[b->n++];
}

static int add_keyed(sum_buf *b, uint32_t ord, int kind, const char *key, const char *dso,
		     const pe_keysum *k)
{
	pe_sum_row *r = row_add(b);

	if (!r)
		return -1;
	r->ord = ord;
	r->kind = (uint8_t)kind;
	r->key = key;
	r->dso = dso;
	r->self_samples = k->self_samples;
	r->self_period = k->self_period;
	r->total_samples = k->total_samples;
	r->total_period = k->total_period;
	return 0;
}

/* The last component of a DSO path (the path itself without a '/'). */
static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* Functions, DSOs and comms of one event's selection. */
static int summarize(const pe_model *m, const pe_selection *s, uint32_t ord, sum_buf *b)
{
	size_t nkeys = m->nr_strs + 1, i;
	pe_keysum *fn = calloc(nkeys, sizeof(*fn)), *dso = calloc(nkeys, sizeof(*dso));
	pe_keysum *comm = calloc(nkeys, sizeof(*comm));
	uint32_t *fn_key = malloc((m->nr_frames + 1) * sizeof(*fn_key));
	uint32_t *dso_key = malloc((m->nr_frames + 1) * sizeof(*dso_key));
	uint32_t *fn_dso = calloc(nkeys, sizeof(*fn_dso));
	int rc = -1;

	if (!fn || !dso || !comm || !fn_key || !dso_key || !fn_dso)
		goto out;
	fn_key[0] = dso_key[0] = PE_NO_KEY;
	/* a function's DSO: that of its first frame, as /top has it */
	for (i = m->nr_frames; i-- > 1;) {
		uint32_t nm = m->frame_name[i], d = m->frame_dso[i];
		fn_key[i] = nm < m->nr_strs && pe_str(m, nm) ? nm : PE_NO_KEY;
		dso_key[i] = d && d < m->nr_strs && pe_str(m, d) ? d : PE_NO_KEY;
		if (fn_key[i] != PE_NO_KEY && d)
			fn_dso[nm] = d;
	}
	if (pe_keysum_add(m, s, fn_key, nkeys, fn) < 0 || pe_keysum_add(m, s, dso_key, nkeys, dso) < 0)
		goto out;
	for (i = 0; i < s->groups.n; i++) {
		const pe_agg_row *r = &s->groups.rows[i];
		if (r->comm < nkeys && pe_str(m, r->comm)) {
			comm[r->comm].self_samples += r->samples;
			comm[r->comm].self_period += r->period;
		}
	}
	for (i = 0; i < nkeys; i++) {
		const char *text = pe_str(m, (uint32_t)i), *base;
		if (fn[i].total_samples &&
		    add_keyed(b, ord, PE_SUM_FUNCTION, text, pe_str(m, fn_dso[i]), &fn[i]) < 0)
			goto out;
		if (dso[i].total_samples) {
			if (add_keyed(b, ord, PE_SUM_DSO, text, NULL, &dso[i]) < 0)
				goto out;
			base = basename_of(text);
			if (add_keyed(b, ord, PE_SUM_DSO_BASE, base, NULL, &dso[i]) < 0)
				goto out;
		}
		if (comm[i].self_samples) {
			comm[i].total_samples = comm[i].self_samples;
			comm[i].total_period = comm[i].self_period;
			if (add_keyed(b, ord, PE_SUM_COMM, text, NULL, &comm[i]) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(fn);
	free(dso);
	free(comm);
	free(fn_key);
	free(dso_key);
	free(fn_dso);
	return rc;
}

int pe_summary_make(const pe_model *m, pe_summary *out)
{
	sum_buf b = { 0 };
	const char **names = NULL;
	size_t nr_names = 0, i, k;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	/* the events by their first sample: the aggregate is in file order */
	names = calloc(m->nr_events + 1, sizeof(*names));
	if (!names)
		return -1;
	for (i = 0; i < m->nr_agg; i++) {
		const char *ev = pe_event_name(m, m->agg[i].event);
		if (!ev)
			continue;
		for (k = 0; k < nr_names && strcmp(names[k], ev); k++)
			;
		if (k == nr_names && nr_names < m->nr_events)
			names[nr_names++] = ev;
	}
	if (!(out->events = calloc(nr_names + 1, sizeof(*out->events))))
		goto out;
	for (k = 0; k < nr_names; k++) {
		pe_filter f;
		pe_selection *s;
		pe_sum_event *e = &out->events[out->nr_events];

		memset(&f, 0, sizeof(f));
		f.pid = f.tid = -1;
		f.event = names[k];
		/* no time range: the aggregate alone, no blocks read */
		if (pe_select(m, &f, NULL, &s) < 0)
			goto out;
		e->ord = (uint32_t)k;
		e->name = names[k];
		pe_selection_totals(s, &e->samples, &e->period);
		rc = summarize(m, s, (uint32_t)k, &b);
		pe_selection_free(s);
		if (rc < 0)
			goto out;
		rc = -1;
		out->nr_events++;
	}
	out->rows = b.rows;
	out->nr_rows = b.n;
	b.rows = NULL;
	rc = 0;
out:
	free(names);
	free(b.rows);
	if (rc < 0)
		pe_summary_free(out);
	return rc;
}

void pe_summary_free(pe_summary *s)
{
	free(s->events);
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

/* ---- series ------------------------------------------------------------------------------ */

static const char *const metric_names[PE_M_NR] = {
	"self_share", "total_share", "samples", "period", "self_samples", "self_period",
};

int pe_metric_parse(const char *name)
{
	int i;

	for (i = 0; name && i < PE_M_NR; i++)
		if (!strcmp(name, metric_names[i]))
			return i;
	return -1;
}

const char *pe_metric_name(int metric)
{
	return metric >= 0 && metric < PE_M_NR ? metric_names[metric] : "?";
}

double pe_metric_value(int metric, const pe_sum_value *v)
{
	double all = (double)v->event_samples;

	switch (metric) {
	case PE_M_SELF_SHARE:
		return all > 0 ? 100.0 * (double)v->self_samples / all : 0;
	case PE_M_TOTAL_SHARE:
		return all > 0 ? 100.0 * (double)v->total_samples / all : 0;
	case PE_M_SAMPLES:
		return (double)v->total_samples;
	case PE_M_PERIOD:
		return (double)v->total_period;
	case PE_M_SELF_SAMPLES:
		return (double)v->self_samples;
	case PE_M_SELF_PERIOD:
		return (double)v->self_period;
	default:
		return 0;
	}
}
