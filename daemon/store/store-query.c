/*
 * store-query.c - the store's answers: a ready profile's model comes from
 * the engine's cache or, on a miss, from the backend's read snapshot; the
 * engine answers (engine/query.h); this file only joins the two and
 * writes JSON where store.h promises it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/export.h"
#include "engine/query.h"
#include "store/store-int.h"

int stq_open(st_store *st, int64_t id, stq_reading *r)
{
	int64_t gen = 0;
	int rc;

	r->st = st;
	r->m = NULL;
	rc = st->ops->read_begin(st->p, id, &gen, &r->rd);
	if (rc)
		return rc;
	r->m = pe_cache_get(st->cache, id, gen);
	if (!r->m && stw_finishing(st, id)) {
		/* ready a moment before its parse's model was in the cache:
		 * that model, not a second one read back (no snapshot held
		 * meanwhile) */
		st->ops->read_end(r->rd);
		r->rd = NULL;
		stw_await_finish(st, id);
		if ((rc = st->ops->read_begin(st->p, id, &gen, &r->rd)) != 0)
			return rc;
		r->m = pe_cache_get(st->cache, id, gen);
	}
	if (r->m)
		atomic_fetch_add(&st->models_memory, 1);
	if (!r->m) {
		/* loaded without the cache's lock: other profiles' readers go on;
		 * the aggregate is what the sample blocks sum to */
		pe_model *m = pe_model_new(id, gen);
		pe_blocks blocks = { stq_read_blocks, r };
		if (!m || st->ops->read_model(r->rd, m) < 0 ||
		    pe_model_agg_from_blocks(m, &blocks) < 0 || pe_model_seal(m) < 0) {
			pe_model_free(m);
			st->ops->read_end(r->rd);
			r->rd = NULL;
			return -1;
		}
		pe_cache_put(st->cache, m);
		atomic_fetch_add(&st->models_loaded, 1);
		r->m = m;
	}
	return 0;
}

void stq_end_snapshot(stq_reading *r)
{
	if (r->rd)
		r->st->ops->read_end(r->rd);
	r->rd = NULL;
}

void stq_close(stq_reading *r)
{
	stq_end_snapshot(r);
	pe_cache_release(r->st->cache, r->m);
	r->m = NULL;
}

int stq_read_blocks(void *src, uint64_t from_ns, uint64_t to_ns, pe_block_cb cb, void *ctx)
{
	stq_reading *r = src;

	return r->rd ? r->st->ops->read_blocks(r->rd, from_ns, to_ns, cb, ctx) : -1;
}

int stq_open_selected(st_store *st, int64_t id, const pe_filter *pf, stq_reading *r,
		      pe_selection **sel)
{
	pe_blocks blocks = { stq_read_blocks, r };
	int rc = stq_open(st, id, r);

	*sel = NULL;
	if (rc)
		return rc;
	rc = pe_select(r->m, pf, &blocks, sel);
	stq_end_snapshot(r);
	if (rc < 0) {
		stq_close(r);
		return -1;
	}
	return 0;
}

int st_profile_generation(st_store *st, int64_t id, int64_t *gen)
{
	st_persist_read *rd;
	int rc = st->ops->read_begin(st->p, id, gen, &rd);

	if (rc == 0)
		st->ops->read_end(rd);
	return rc;
}

/* st_event_pick's answer from model m. */
static int event_pick_in(pe_model *m, const char *want, char **name, char **names)
{
	const char *ev;

	if (pe_event_pick(m, want, &ev) < 0)
		return -1;
	if (ev || !want)
		return ev && !(*name = strdup(ev)) ? -1 : 0;
	if (names && !(*names = pe_event_names(m)))
		return -1;
	return 2;
}

int st_event_pick(st_store *st, int64_t id, const char *want, char **name, char **names,
		  int64_t *gen)
{
	stq_reading r;
	int rc = stq_open(st, id, &r);

	*name = NULL;
	if (names)
		*names = NULL;
	if (rc)
		return rc;
	stq_end_snapshot(&r);
	if (gen)
		*gen = pe_model_gen(r.m);
	rc = event_pick_in(r.m, want, name, names);
	stq_close(&r);
	return rc;
}

int st_finishing_event(st_finishing *f, const char *want, char **name)
{
	*name = NULL;
	return event_pick_in(f->m, want, name, NULL);
}

int st_fold(st_store *st, int64_t id, const st_fold_filter *f, st_fold_cb cb, void *ctx)
{
	pe_selection *sel;
	stq_reading r;
	int rc;

	if ((rc = stq_open_selected(st, id, f, &r, &sel)) != 0)
		return rc;
	rc = pe_fold(r.m, f, sel, cb, ctx);
	pe_selection_free(sel);
	stq_close(&r);
	return rc;
}

int st_flame(st_store *st, int64_t id, const st_fold_filter *f, int by_samples,
	     const st_tree_cb *cb, void *ctx)
{
	pe_selection *sel;
	stq_reading r;
	int rc;

	if ((rc = stq_open_selected(st, id, f, &r, &sel)) != 0)
		return rc;
	rc = pe_flame(r.m, f, sel, by_samples, cb, ctx);
	pe_selection_free(sel);
	stq_close(&r);
	return rc;
}

int st_finishing_flame(st_finishing *f, const st_fold_filter *ff, int by_samples,
		       const st_tree_cb *cb, void *ctx)
{
	pe_blocks none = { NULL, NULL };	/* its blocks are not readable yet */
	pe_selection *sel;
	int rc;

	if (pe_select(f->m, ff, &none, &sel) < 0)
		return -1;
	rc = pe_flame(f->m, ff, sel, by_samples, cb, ctx);
	pe_selection_free(sel);
	return rc;
}

int stq_pprof_add(stq_reading *r, const pe_filter *f, pe_pprof_b *b)
{
	pe_blocks blocks = { stq_read_blocks, r };
	pe_filter pf = *f;
	pe_selection *sel = NULL;
	int rc;

	pf.with_pid = pf.with_tid = 1;	/* the pid and tid labels */
	pf.max_nodes = 0;
	pf.any_order = 0;
	rc = pe_select(r->m, &pf, &blocks, &sel);
	if (rc == 0)
		rc = pe_pprof_b_add(b, r->m, &pf, sel, 0);
	pe_selection_free(sel);
	sel = NULL;
	/* off-CPU time "where present": the off-CPU event's own measure,
	 * under the same comm, pid, tid and time filters */
	if (rc == 0 && pe_offcpu_event(r->m)) {
		pf.measure = PE_MEASURE_OFFCPU;
		pf.event = NULL;
		rc = pe_select(r->m, &pf, &blocks, &sel);
		if (rc == 0)
			rc = pe_pprof_b_add(b, r->m, &pf, sel, 1);
		pe_selection_free(sel);
	}
	return rc;
}

int st_pprof_offcpu(st_store *st, int64_t id, const st_fold_filter *f, int default_offcpu,
		    uint8_t **out, size_t *len)
{
	pe_pprof_b *b = pe_pprof_b_new();
	stq_reading r;
	int rc;

	if (!b)
		return -1;
	if ((rc = stq_open(st, id, &r)) != 0) {
		pe_pprof_b_free(b);
		return rc;
	}
	rc = stq_pprof_add(&r, f, b) < 0 ? -1 : 0;
	stq_close(&r);
	if (rc == 0 && default_offcpu && !pe_pprof_b_offcpu(b))
		rc = 2;
	if (rc == 0)
		rc = pe_pprof_b_finish(b, default_offcpu, out, len);
	pe_pprof_b_free(b);
	return rc;
}

int st_pprof(st_store *st, int64_t id, const st_fold_filter *f, uint8_t **out, size_t *len)
{
	return st_pprof_offcpu(st, id, f, 0, out, len);
}

int st_speedscope(st_store *st, int64_t id, const st_fold_filter *f, const st_speedscope_opts *o,
		  char **out, size_t *len)
{
	pe_filter pf = *f;
	pe_selection *sel;
	stq_reading r;
	int rc;

	pf.with_pid = pf.with_tid = !o->by_comm;
	if ((rc = stq_open_selected(st, id, &pf, &r, &sel)) != 0)
		return rc;
	rc = pe_speedscope(r.m, &pf, sel, o, out, len);
	pe_selection_free(sel);
	stq_close(&r);
	return rc;
}

int st_diff(st_store *st, int64_t base, int64_t target, const st_fold_filter *f,
	    const st_fold_filter *f_target, int by_samples, const st_diff_cb *cb, void *ctx)
{
	pe_diff *d = pe_diff_new();
	int rc, side;

	if (!d)
		return -2;
	for (side = 0, rc = 0; side < 2 && rc == 0 && !pe_diff_failed(d); side++) {
		pe_diff_side(d, side);
		rc = st_flame(st, side ? target : base, side && f_target ? f_target : f,
			      by_samples, &pe_diff_tree_cb, d);
	}
	if (rc == 0)
		rc = pe_diff_failed(d) ? -2 : pe_diff_walk(d, cb, ctx);
	pe_diff_free(d);
	return rc;
}

json_t *st_top_json(st_store *st, int64_t id, const st_fold_filter *f, int by_samples,
		    int *notfound)
{
	pe_filter pf = *f;
	pe_selection *sel;
	pe_top_row *rows = NULL;
	json_t *arr = NULL;
	stq_reading r;
	size_t n = 0, i;
	int rc;

	pf.with_pid = pf.with_tid = 0;
	rc = stq_open_selected(st, id, &pf, &r, &sel);
	*notfound = rc == 1;
	if (rc)
		return NULL;
	if (pe_top(r.m, &pf, sel, by_samples, &rows, &n) == 0 && (arr = json_array()))
		for (i = 0; i < n; i++)
			json_array_append_new(arr, json_pack("{s:s,s:s?,s:I,s:I}", "name",
							     rows[i].name, "dso", rows[i].dso,
							     "self", (json_int_t)rows[i].self,
							     "total", (json_int_t)rows[i].total));
	pe_top_free(rows, n);
	pe_selection_free(sel);
	stq_close(&r);
	return arr;
}

json_t *st_threads_json(st_store *st, int64_t id, int *notfound)
{
	pe_thread *t = NULL;
	json_t *arr = NULL;
	stq_reading r;
	size_t n = 0, i, k;
	int rc = stq_open(st, id, &r);

	*notfound = rc == 1;
	if (rc)
		return NULL;
	stq_end_snapshot(&r);
	if (pe_threads(r.m, &t, &n) == 0 && (arr = json_array()))
		for (i = 0; i < n; i++) {
			json_t *comms = json_array();
			for (k = 0; k < t[i].nr_comms; k++)
				json_array_append_new(comms, json_string(t[i].comms[k]));
			json_array_append_new(arr, json_pack("{s:I,s:I,s:o,s:I}", "pid",
							     (json_int_t)t[i].pid, "tid",
							     (json_int_t)t[i].tid, "comms", comms,
							     "samples", (json_int_t)t[i].samples));
		}
	pe_threads_free(t, n);
	stq_close(&r);
	return arr ? json_pack("{s:o}", "threads", arr) : NULL;
}

json_t *st_timeline_json(st_store *st, int64_t id, const char *event, uint64_t bucket_ns,
			 int *notfound)
{
	pe_filter f;

	memset(&f, 0, sizeof(f));
	f.event = event;
	f.pid = f.tid = -1;
	return st_timeline_measured_json(st, id, &f, bucket_ns, notfound);
}

json_t *st_aggregate_json(st_store *st, const st_agg_filter *f, int *bad)
{
	pe_aggregate *a = pe_aggregate_new(f->group_by, bad);
	const pe_aggregate_row *rows;
	st_ready_profile *ids = NULL;
	json_t *arr, *out = NULL;
	size_t nr_ids = 0, n, i;

	if (!a)
		return NULL;
	/* the profiles, then each one's aggregate (from memory when cached) */
	if ((f->sel ? st_pick_ready(st, f, &ids, &nr_ids) :
		      st->ops->ready_profiles(st->p, f, &ids, &nr_ids)) < 0)
		goto out;
	for (i = 0; i < nr_ids; i++) {
		stq_reading r;
		int rc = stq_open(st, ids[i].id, &r);
		if (rc == 1)
			continue;	/* deleted or parsed again meanwhile */
		if (rc < 0)
			goto out;
		stq_end_snapshot(&r);
		rc = pe_aggregate_add(a, r.m, ids[i].hostname);
		stq_close(&r);
		if (rc < 0)
			goto out;
	}
	if (!(rows = pe_aggregate_rows(a, &n)) || !(arr = json_array()))
		goto out;
	for (i = 0; i < n && (f->limit < 0 || (int64_t)i < f->limit); i++)
		json_array_append_new(arr, json_pack("{s:s?,s:I,s:I,s:I}", "key", rows[i].key,
			"samples", (json_int_t)rows[i].samples,
			"period", (json_int_t)rows[i].period,
			"profiles", (json_int_t)rows[i].profiles));
	out = json_pack("{s:s,s:o}", "group_by", pe_aggregate_group(a), "rows", arr);
out:
	for (i = 0; i < nr_ids; i++)
		free(ids[i].hostname);
	free(ids);
	pe_aggregate_free(a);
	return out;
}
