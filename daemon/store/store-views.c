/*
 * store-views.c - the deeper views of one profile: whether a measure
 * (off-CPU, on+off-CPU) applies, the timeline under a measure, callers
 * and callees of a function, and a function's self samples by address
 * with the build-id of its DSO. The engine answers; the leaf rows come
 * from the backend's read snapshot.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store-int.h"

int st_measure_check(st_store *st, int64_t id, const st_fold_filter *f, char *why,
		     size_t whylen)
{
	const char *w = NULL;
	stq_reading r;
	int rc = stq_open(st, id, &r);

	if (rc)
		return rc;
	stq_end_snapshot(&r);
	if (pe_measure_check(r.m, f, &w)) {
		snprintf(why, whylen, "%s", w);
		rc = 2;
	}
	stq_close(&r);
	return rc;
}

json_t *st_timeline_measured_json(st_store *st, int64_t id, const st_fold_filter *f,
				  uint64_t bucket_ns, int *notfound)
{
	pe_blocks blocks;
	pe_timeline t;
	json_t *out = NULL, *buckets;
	stq_reading r;
	size_t i;
	int rc = stq_open(st, id, &r);

	*notfound = rc == 1;
	if (rc)
		return NULL;
	blocks.read = stq_read_blocks;
	blocks.src = &r;
	rc = pe_timeline_measured(r.m, f, bucket_ns, &blocks, &t);
	stq_end_snapshot(&r);
	if (rc == 0 && (buckets = json_array())) {
		for (i = 0; i < t.n; i++) {
			json_t *b = json_pack("{s:I,s:I,s:I}", "t_ns", (json_int_t)t.buckets[i].t_ns,
					      "samples", (json_int_t)t.buckets[i].samples,
					      "period", (json_int_t)t.buckets[i].period);
			if (f->measure != PE_MEASURE_PERIOD)
				json_object_set_new(b, "offcpu",
						    json_integer((json_int_t)t.buckets[i].offcpu));
			json_array_append_new(buckets, b);
		}
		out = json_pack("{s:s?,s:I,s:I,s:o}", "event", t.event, "start_ns",
				(json_int_t)t.start_ns, "bucket_ns", (json_int_t)t.bucket_ns,
				"buckets", buckets);
		pe_timeline_free(&t);
	}
	stq_close(&r);
	return out;
}

int st_sandwich(st_store *st, int64_t id, const st_fold_filter *f, int by_samples,
		const char *function, const st_tree_cb *callers, void *callers_ctx,
		const st_tree_cb *callees, void *callees_ctx)
{
	pe_selection *sel;
	stq_reading r;
	int rc;

	if ((rc = stq_open_selected(st, id, f, &r, &sel)) != 0)
		return rc;
	rc = pe_sandwich(r.m, f, sel, by_samples, function, callers, callers_ctx, callees,
			 callees_ctx);
	pe_selection_free(sel);
	stq_close(&r);
	return rc == 1 ? 2 : rc;
}

static int read_leaves(void *src, uint32_t frame, pe_leaf_cb cb, void *ctx)
{
	stq_reading *r = src;

	return r->rd ? r->st->ops->read_leaf_addrs(r->rd, frame, cb, ctx) : -1;
}

void st_annotation_free(st_annotation *a)
{
	size_t i;

	for (i = 0; a && i < a->n; i++) {
		free(a->dsos[i].dso);
		free(a->dsos[i].addrs);
	}
	if (a) {
		free(a->dsos);
		memset(a, 0, sizeof(*a));
	}
}

int st_annotate(st_store *st, int64_t id, const st_fold_filter *f, const char *function,
		st_annotation *out)
{
	pe_leaves src;
	pe_annot a;
	stq_reading r;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = stq_open(st, id, &r)) != 0)
		return rc;
	src.read = read_leaves;
	src.src = &r;
	rc = pe_annotate(r.m, f, function, &src, &a);
	stq_end_snapshot(&r);
	if (rc == 1) {
		stq_close(&r);
		return 2;
	}
	if (rc == 0 && a.n && !(out->dsos = calloc(a.n, sizeof(*out->dsos))))
		rc = -1;
	for (i = 0; rc == 0 && i < a.n; i++) {
		st_annot_dso *d = &out->dsos[out->n++];

		/* the answer outlives the model: copies, and the addresses taken */
		d->kernel = a.dsos[i].kernel;
		d->samples = a.dsos[i].samples;
		d->value = a.dsos[i].value;
		d->addrs = a.dsos[i].addrs;
		d->n = a.dsos[i].n;
		a.dsos[i].addrs = NULL;
		if (a.dsos[i].dso && !(d->dso = strdup(a.dsos[i].dso)))
			rc = -1;
		/* the model's own (its parse noted them before ready); the
		 * profile's dso rows are written a moment after ready */
		if (a.dsos[i].build_id)
			snprintf(d->build_id, sizeof(d->build_id), "%s", a.dsos[i].build_id);
		else if (d->dso && st->ops->profile_dso_build_id(st->p, id, d->dso, d->build_id,
								 sizeof(d->build_id)) < 0)
			d->build_id[0] = 0;
	}
	out->samples = a.samples;
	out->value = a.value;
	pe_annot_free(&a);
	stq_close(&r);
	if (rc < 0)
		st_annotation_free(out);
	return rc;
}
