/*
 * store-many.c - questions about many profiles: which ready profiles a
 * selector picks (the backend hands out labels, the engine's selector
 * matches them), each one's model from the engine's cache, the engine's
 * merges (engine/many.h, the merged pe_diff); series from the
 * per-profile summaries the backend keeps, made after every parse (or on
 * first need for profiles stored before there were any).
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "engine/many.h"
#include "store/store-int.h"

/* ---- picking profiles ------------------------------------------------------------- */

typedef struct picked {
	int64_t id, uploaded_at;
	uint64_t first_ns, last_ns;
	int has_summary;
	/* kept for series only */
	char *name, *hostname;
	size_t nr_tags;
	char **keys, **values;
} picked;

typedef struct pick_set {
	const pe_sel *sel;
	size_t max;		/* kept at most (the newest) */
	int labels;		/* keep name, hostname and tags */
	const struct pick_set *exclude;	/* profiles left out (a diff's other side) */
	picked *v;
	size_t n, cap, matched;
	int oom;
} pick_set;

static void picked_free(picked *p)
{
	size_t i;

	for (i = 0; i < p->nr_tags; i++) {
		free(p->keys[i]);
		free(p->values[i]);
	}
	free(p->keys);
	free(p->values);
	free(p->name);
	free(p->hostname);
}

static void set_free(pick_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		picked_free(&s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int in_set(const pick_set *s, int64_t id)
{
	size_t i;

	for (i = 0; s && i < s->n; i++)
		if (s->v[i].id == id)
			return 1;
	return 0;
}

static char *dup_or_null(const char *s, int *oom)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*oom = 1;
	return d;
}

static int keep_labels(picked *p, const st_profile_labels *l, int *oom)
{
	size_t i;

	p->name = dup_or_null(l->name, oom);
	p->hostname = dup_or_null(l->hostname, oom);
	p->keys = calloc(l->nr_tags + 1, sizeof(char *));
	p->values = calloc(l->nr_tags + 1, sizeof(char *));
	if (!p->keys || !p->values) {
		*oom = 1;
		return -1;
	}
	for (i = 0; i < l->nr_tags; i++) {
		p->keys[i] = dup_or_null(l->tag_keys[i], oom);
		p->values[i] = dup_or_null(l->tag_values[i], oom);
		p->nr_tags = i + 1;
	}
	return *oom ? -1 : 0;
}

static int collect(void *ctx, const st_profile_labels *l)
{
	pick_set *s = ctx;
	pe_labels lb = { l->id, l->name, l->hostname, l->nr_tags, l->tag_keys, l->tag_values };
	picked *p;

	if (!pe_sel_match(s->sel, &lb) || in_set(s->exclude, l->id))
		return 0;
	s->matched++;
	if (s->n >= s->max)
		return 0;	/* older than the newest max: counted only */
	if (s->n == s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 64;
		picked *v = realloc(s->v, ncap * sizeof(*v));
		if (!v) {
			s->oom = 1;
			return -1;
		}
		s->v = v;
		s->cap = ncap;
	}
	p = &s->v[s->n++];
	memset(p, 0, sizeof(*p));
	p->id = l->id;
	p->uploaded_at = l->uploaded_at;
	p->first_ns = l->first_ns;
	p->last_ns = l->last_ns;
	p->has_summary = l->has_summary;
	return s->labels && keep_labels(p, l, &s->oom) < 0 ? -1 : 0;
}

/* What the backend may narrow its search by: the first tag (or hostname)
 * a selector wants equal to a value. */
static void narrow(const pe_sel *sel, st_label_query *q)
{
	size_t i;

	for (i = 0; sel && i < pe_sel_count(sel); i++) {
		const char *lbl, *val;
		int op;

		pe_sel_matcher(sel, i, &lbl, &op, &val);
		if (op != PE_SEL_EQ || !*val || !strcmp(lbl, "id") || !strcmp(lbl, "name"))
			continue;
		if (!strcmp(lbl, "hostname")) {
			if (!q->hostname)
				q->hostname = val;
		} else if (!q->tag_key) {
			q->tag_key = lbl;
			q->tag_value = val;
		}
	}
}

/* The profiles q and sel pick, newest first, the first `max` kept (out's
 * sel, max, labels and exclude set by the caller). 0 or -1. */
static int pick_query(st_store *st, st_label_query *q, pick_set *out)
{
	int rc;

	narrow(out->sel, q);
	rc = st->ops->profiles_labels(st->p, q, collect, out);
	if (rc < 0 || out->oom) {
		if (out->oom)
			log_warn("msg=\"out of memory\" what=\"profiles picked\"");
		set_free(out);
		return -1;
	}
	return 0;
}

/* The ready profiles pk picks, newest first, at most `cap` (and pk->limit)
 * kept. 0, 1 = pk->id is not a ready profile, -1. */
static int pick(st_store *st, const st_pick *pk, size_t cap, int labels,
		const pick_set *exclude, pick_set *out, st_many_info *info)
{
	st_label_query q = { .status = ST_READY };

	memset(out, 0, sizeof(*out));
	out->sel = pk->id > 0 ? NULL : pk->sel;
	out->labels = labels;
	out->exclude = pk->id > 0 ? NULL : exclude;
	out->max = pk->limit > 0 && (uint64_t)pk->limit < cap ? (size_t)pk->limit : cap;
	if (pk->id > 0) {
		q.id = pk->id;
	} else {
		q.since = pk->since;
		q.until = pk->until;
	}
	if (pick_query(st, &q, out) < 0)
		return -1;
	if (info) {
		info->matched = out->matched;
		info->used = out->n;
		info->capped = out->n < out->matched && (pk->limit <= 0 ||
							 (uint64_t)pk->limit > out->n);
	}
	return pk->id > 0 && !out->n ? 1 : 0;
}

json_t *st_list_selected(st_store *st, const st_list_filter *f)
{
	st_label_query q = { .status = f->status, .hostname = f->hostname, .tag_key = f->tag_key,
			     .tag_value = f->tag_value, .since = f->since, .until = f->until };
	pick_set s;
	json_t *rows = NULL, *out = NULL;
	int64_t *ids = NULL;
	size_t i, first = (size_t)f->offset, n = 0;

	memset(&s, 0, sizeof(s));
	s.sel = f->sel;
	/* the newest offset + limit kept; the page is the last limit of them */
	s.max = f->offset < INT64_MAX - f->limit ? (size_t)(f->offset + f->limit) : SIZE_MAX;
	if (pick_query(st, &q, &s) < 0)
		return NULL;
	if (!(ids = malloc((s.n + 1) * sizeof(*ids))))
		goto out;
	for (i = first; i < s.n; i++)
		ids[n++] = s.v[i].id;
	if ((rows = st->ops->profiles_rows_json(st->p, ids, n)))
		out = json_pack("{s:o,s:I}", "profiles", rows, "total", (json_int_t)s.matched);
out:
	free(ids);
	set_free(&s);
	return out;
}

int st_pick_ready(st_store *st, const st_agg_filter *f, st_ready_profile **out, size_t *n)
{
	st_label_query q = { .status = ST_READY, .hostname = f->hostname, .tag_key = f->tag_key,
			     .tag_value = f->tag_value, .since = f->since, .until = f->until };
	pick_set s;
	size_t i;
	int oom = 0;

	memset(&s, 0, sizeof(s));
	s.sel = f->sel;
	s.max = SIZE_MAX;
	s.labels = 1;
	*out = NULL;
	*n = 0;
	if (pick_query(st, &q, &s) < 0)
		return -1;
	if (!(*out = calloc(s.n + 1, sizeof(**out)))) {
		set_free(&s);
		return -1;
	}
	/* oldest first, as the backend's ready_profiles hands them */
	for (i = 0; i < s.n; i++) {
		(*out)[i].id = s.v[s.n - 1 - i].id;
		(*out)[i].hostname = dup_or_null(s.v[s.n - 1 - i].hostname, &oom);
	}
	*n = s.n;
	set_free(&s);
	if (oom) {
		for (i = 0; i < *n; i++)
			free((*out)[i].hostname);
		free(*out);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

/* The seconds a profile's answer covers: its samples' span, within the
 * filter's time range. 0 when unknown. */
static double seconds_of(const picked *p, const pe_filter *f)
{
	uint64_t a = p->first_ns, b = p->last_ns;

	if (f->from_ns && f->from_ns > a)
		a = f->from_ns;
	if (f->to_ns && f->to_ns < b)
		b = f->to_ns;
	return b > a ? (double)(b - a) / 1e9 : 0;
}

/*
 * One profile, open in r (its model and snapshot), into a merge: its flame
 * graph into side `side` of d and its /top rows into t (either may be
 * NULL), or with pp its pprof samples into pp alone. The filter's
 * max_nodes is for the merged tree, not each. r is closed. 0, -1, or -3
 * past pp's caps.
 */
static int merge_one(stq_reading *r, const picked *p, const pe_filter *f, int by_samples,
		     pe_diff *d, int side, pe_fntab *t, pe_pprof_b *pp)
{
	pe_blocks blocks = { stq_read_blocks, r };
	pe_filter pf = *f;
	pe_selection *sel = NULL;
	int rc;

	if (pp) {
		rc = stq_pprof_add(r, f, pp);
		stq_close(r);
		return rc == -3 ? -3 : rc < 0 ? -1 : 0;
	}
	pf.max_nodes = 0;
	pf.any_order = 0;
	rc = pe_select(r->m, &pf, &blocks, &sel);
	stq_end_snapshot(r);	/* nothing after selecting reads stored data */
	if (rc == 0 && d) {
		pe_diff_side(d, side);
		rc = pe_flame(r->m, &pf, sel, by_samples, &pe_diff_tree_cb, d);
	}
	if (t && rc == 0) {
		pe_filter tf = pf;
		pe_top_row *rows = NULL;
		uint64_t samples, period;
		size_t n = 0;

		tf.with_pid = tf.with_tid = 0;
		pe_selection_totals(sel, &samples, &period);
		rc = pe_top(r->m, &tf, sel, by_samples, &rows, &n);
		if (rc == 0)
			rc = pe_fntab_add(t, side, rows, n, by_samples ? samples : period, samples,
					  seconds_of(p, f));
		pe_top_free(rows, n);
	}
	pe_selection_free(sel);
	stq_close(r);
	return rc < 0 ? -1 : 0;
}

/*
 * Models are opened ahead of the merge by ST_MERGE_READERS threads, each on
 * a connection of its own (a cold model is read from the backend: most of
 * a cold merge's time), at most ST_MERGE_AHEAD of them waiting, so memory
 * stays that of a few models; the merge itself takes them in order.
 */
#define ST_MERGE_READERS 2
#define ST_MERGE_AHEAD 8
#define ST_MERGE_THREADED 4	/* profiles from which readers are worth starting */

typedef struct opener {
	st_store *st;
	const pick_set *s;	/* opened oldest first: order k is v[n - 1 - k] */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t next, taken;	/* the next order to open; those the merge took */
	stq_reading *r;
	int *rc;
	unsigned char *ready;
	int stop;
} opener;

static void *opener_main(void *arg)
{
	opener *o = arg;

	for (;;) {
		size_t k;
		int rc;

		pthread_mutex_lock(&o->lock);
		while (!o->stop && o->next < o->s->n && o->next >= o->taken + ST_MERGE_AHEAD)
			pthread_cond_wait(&o->cond, &o->lock);
		if (o->stop || o->next >= o->s->n) {
			pthread_mutex_unlock(&o->lock);
			return NULL;
		}
		k = o->next++;
		pthread_mutex_unlock(&o->lock);
		rc = stq_open(o->st, o->s->v[o->s->n - 1 - k].id, &o->r[k]);
		pthread_mutex_lock(&o->lock);
		o->rc[k] = rc;
		o->ready[k] = 1;
		pthread_cond_broadcast(&o->cond);
		pthread_mutex_unlock(&o->lock);
	}
}

/* Every picked profile, oldest first (a node's DSO is its earliest
 * profile's), into d and t (or pp). 0, 1 = the one profile asked for by id
 * went, -1, -2 out of memory, -3 too many nodes (or pprof samples). */
static int merge_set(st_store *st, const pick_set *s, int by_id, const pe_filter *f,
		     int by_samples, pe_diff *d, int side, pe_fntab *t, pe_pprof_b *pp)
{
	opener o;
	pthread_t th[ST_MERGE_READERS];
	size_t k, nth = 0;
	int rc = 0;

	memset(&o, 0, sizeof(o));
	o.st = st;
	o.s = s;
	o.r = calloc(s->n + 1, sizeof(*o.r));
	o.rc = calloc(s->n + 1, sizeof(*o.rc));
	o.ready = calloc(s->n + 1, 1);
	if (!o.r || !o.rc || !o.ready) {
		rc = -2;
		goto out;
	}
	pthread_mutex_init(&o.lock, NULL);
	pthread_cond_init(&o.cond, NULL);
	if (s->n >= ST_MERGE_THREADED)
		while (nth < ST_MERGE_READERS && pthread_create(&th[nth], NULL, opener_main, &o) == 0)
			nth++;
	for (k = 0; k < s->n && rc == 0; k++) {
		int orc;

		if (nth) {
			pthread_mutex_lock(&o.lock);
			while (!o.ready[k])
				pthread_cond_wait(&o.cond, &o.lock);
			pthread_mutex_unlock(&o.lock);
			orc = o.rc[k];
		} else {
			orc = stq_open(st, s->v[s->n - 1 - k].id, &o.r[k]);
		}
		if (orc == 0) {
			rc = merge_one(&o.r[k], &s->v[s->n - 1 - k], f, by_samples, d, side, t, pp);
			if (d && pe_diff_failed(d))
				rc = pe_diff_failed(d) == 2 ? -3 : -2;
		} else if (orc < 0 || by_id) {
			rc = orc;	/* 1: the one asked for went */
		}
		/* else gone since it was picked: the others still answer */
		pthread_mutex_lock(&o.lock);
		o.taken = k + 1;
		pthread_cond_broadcast(&o.cond);
		pthread_mutex_unlock(&o.lock);
	}
	pthread_mutex_lock(&o.lock);
	o.stop = 1;
	pthread_cond_broadcast(&o.cond);
	pthread_mutex_unlock(&o.lock);
	while (nth)
		pthread_join(th[--nth], NULL);
	/* what was opened ahead of an error */
	for (; k < s->n; k++)
		if (o.ready[k] && o.rc[k] == 0)
			stq_close(&o.r[k]);
	pthread_cond_destroy(&o.cond);
	pthread_mutex_destroy(&o.lock);
out:
	free(o.r);
	free(o.rc);
	free(o.ready);
	return rc;
}

/* ---- merged flame graphs, folded stacks, /top, timelines ------------------------------------ */

/* The flame graphs of the profiles pk picks merged into *out (the caller
 * frees it). Returns as st_query_flame. */
static int merged(st_store *st, const st_pick *pk, const pe_filter *f, int by_samples,
		  int normalize, st_many_info *info, pe_diff **out)
{
	pick_set s;
	pe_diff *d = NULL;
	int rc = pick(st, pk, ST_MAX_MERGE, 0, NULL, &s, info);

	*out = NULL;
	if (rc)
		return rc;
	if (!(d = pe_diff_new())) {
		rc = -2;
		goto out;
	}
	if (normalize)
		pe_diff_normalize(d);
	rc = merge_set(st, &s, pk->id > 0, f, by_samples, d, 0, NULL, NULL);
out:
	set_free(&s);
	if (rc)
		pe_diff_free(d);
	else
		*out = d;
	return rc;
}

int st_query_flame(st_store *st, const st_pick *pk, const st_fold_filter *f, int by_samples,
		   int normalize, st_many_info *info, const st_diff_cb *cb,
		   const pe_norm_cb *ncb, void *ctx)
{
	pe_diff *d = NULL;
	int rc = merged(st, pk, f, by_samples, normalize, info, &d);

	if (rc)
		return rc;
	if (pe_diff_prune(d, f->max_nodes) < 0)
		rc = -2;
	else
		rc = normalize ? pe_diff_walk_norm(d, ncb, ctx) : pe_diff_walk(d, cb, ctx);
	pe_diff_free(d);
	return rc;
}

int st_query_fold(st_store *st, const st_pick *pk, const st_fold_filter *f, int by_samples,
		  st_many_info *info, st_fold_cb cb, void *ctx)
{
	pe_diff *d = NULL;
	int rc = merged(st, pk, f, by_samples, 0, info, &d);

	if (rc == 0)
		rc = pe_diff_fold(d, 0, cb, ctx) < 0 ? -2 : 0;
	pe_diff_free(d);
	return rc;
}

int st_query_pprof(st_store *st, const st_pick *pk, const st_fold_filter *f, int default_offcpu,
		   st_many_info *info, uint8_t **out, size_t *len)
{
	pick_set s;
	pe_pprof_b *b = NULL;
	int rc = pick(st, pk, ST_MAX_MERGE, 0, NULL, &s, info);

	*out = NULL;
	*len = 0;
	if (rc)
		return rc;
	if (!(b = pe_pprof_b_new()))
		rc = -2;
	else
		rc = merge_set(st, &s, pk->id > 0, f, 0, NULL, 0, NULL, b);
	if (rc == 0 && default_offcpu && !pe_pprof_b_offcpu(b))
		rc = 2;
	if (rc == 0 && pe_pprof_b_finish(b, default_offcpu, out, len) < 0)
		rc = -2;
	pe_pprof_b_free(b);
	set_free(&s);
	return rc;
}

json_t *st_query_top_json(st_store *st, const st_pick *pk, const st_fold_filter *f,
			  int by_samples, int normalize, int64_t rows, st_many_info *info,
			  int *notfound)
{
	pick_set s;
	pe_fntab *t = NULL;
	const pe_fnsum *r;
	json_t *out = NULL;
	size_t n;
	int rc = pick(st, pk, ST_MAX_MERGE, 0, NULL, &s, info);

	*notfound = rc == 1;
	if (rc)
		return NULL;
	if ((t = pe_fntab_new()) &&
	    merge_set(st, &s, pk->id > 0, f, by_samples, NULL, 0, t, NULL) == 0 &&
	    pe_fntab_merged(t, normalize, &r, &n) == 0)
		/* normalized: each profile weighs one */
		out = pe_fnsum_json(r, n, rows > 0 ? (size_t)rows : 0,
				    normalize ? (double)s.n : pe_fntab_total(t, 0));
	pe_fntab_free(t);
	set_free(&s);
	return out;
}

#define ST_MAX_EVENT_NAME 512	/* an event's name, as a merged timeline keeps it */

/* A profile's timeline (free with pe_timeline_free), its event's name
 * copied into ev (the model's text goes with the model). 0, 1 = not
 * ready, -1. */
static int timeline_of(st_store *st, int64_t id, const char *event, uint64_t bucket_ns,
		       pe_timeline *t, char *ev, size_t evlen)
{
	pe_blocks blocks;
	stq_reading r;
	int rc = stq_open(st, id, &r);

	if (rc)
		return rc;
	blocks.read = stq_read_blocks;
	blocks.src = &r;
	rc = pe_timeline_make(r.m, event, bucket_ns, &blocks, t);
	if (rc == 0 && t->event) {
		snprintf(ev, evlen, "%s", t->event);
		t->event = ev;
	}
	stq_close(&r);
	return rc;
}

json_t *st_query_timeline_json(st_store *st, const st_pick *pk, const char *event,
			       uint64_t bucket_ns, size_t max_buckets, st_many_info *info,
			       int *too_many)
{
	pe_tlmerge *m = pe_tlmerge_new(bucket_ns);
	const pe_tlbucket *b;
	json_t *arr = NULL, *out = NULL;
	char ev[ST_MAX_EVENT_NAME] = "", first[ST_MAX_EVENT_NAME] = "";
	pick_set s;
	size_t i, n;
	int rc = pick(st, pk, ST_MAX_MERGE, 0, NULL, &s, info);

	*too_many = 0;
	if (rc || !m)
		goto out;
	for (i = s.n; i-- > 0;) {
		pe_timeline t;
		rc = timeline_of(st, s.v[i].id, event, bucket_ns, &t, ev, sizeof(ev));
		if (rc == 1)
			continue;
		if (rc < 0)
			goto out;
		if (!first[0] && t.event)
			snprintf(first, sizeof(first), "%s", t.event);
		rc = pe_tlmerge_add(m, &t, max_buckets);
		pe_timeline_free(&t);
		if (rc < 0) {
			*too_many = 1;
			goto out;
		}
	}
	b = pe_tlmerge_buckets(m, &n);
	if (!(arr = json_array()))
		goto out;
	for (i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:I,s:I,s:I,s:I}", "t_ns",
			(json_int_t)b[i].offset_ns, "samples", (json_int_t)b[i].samples,
			"period", (json_int_t)b[i].period, "profiles", (json_int_t)b[i].profiles));
	out = json_pack("{s:s?,s:I,s:o}", "event", first[0] ? first : NULL, "bucket_ns",
			(json_int_t)bucket_ns, "buckets", arr);
out:
	pe_tlmerge_free(m);
	set_free(&s);
	return out;
}

/* ---- summaries and series -------------------------------------------------------------- */

int st_summary_make(st_store *st, int64_t id)
{
	pe_summary s;
	stq_reading r;
	int rc = stq_open(st, id, &r);

	if (rc)
		return rc;
	stq_end_snapshot(&r);
	if (pe_summary_make(r.m, &s) < 0) {
		log_warn("msg=\"out of memory\" what=\"summary\" profile=%lld", (long long)id);
		stq_close(&r);
		return -1;
	}
	rc = st->ops->summary_put(st->p, id, pe_model_gen(r.m), &s);
	pe_summary_free(&s);
	stq_close(&r);
	return rc;
}

/* Each profile's chosen event's values, by its place among the ids. */
typedef struct series_read {
	const int64_t *ids;
	size_t n, at;
	const char *event;	/* NULL: ord 0 */
	pe_sum_value *v;
	unsigned char *have;
} series_read;

static int event_matches(const char *name, const char *want)
{
	size_t wl = strlen(want);

	return !strcmp(name, want) || (!strncmp(name, want, wl) && name[wl] == ':');
}

static int series_point(void *ctx, const st_summary_point *pt)
{
	series_read *r = ctx;

	/* the points come in the order of the ids */
	while (r->at < r->n && r->ids[r->at] != pt->id)
		r->at++;
	if (r->at == r->n || r->have[r->at])
		return 0;
	if (r->event ? event_matches(pt->event, r->event) : pt->ord == 0) {
		r->v[r->at] = pt->v;
		r->have[r->at] = 1;
	}
	return 0;
}

static void rfc3339(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A point; a name or tag that is not UTF-8 (JSON cannot carry it) is left
 * out rather than the point. */
static json_t *point_json(const picked *p, double value)
{
	json_t *o = json_object(), *tags = json_object();
	char when[32];
	size_t i;

	if (!o || !tags) {
		json_decref(o);
		json_decref(tags);
		return NULL;
	}
	for (i = 0; i < p->nr_tags; i++)
		json_object_set_new(tags, p->keys[i], json_string(p->values[i]));
	rfc3339(p->uploaded_at, when);
	json_object_set_new(o, "id", json_integer((json_int_t)p->id));
	json_object_set_new(o, "name", p->name ? json_string(p->name) : json_null());
	json_object_set_new(o, "uploaded_at", json_string(when));
	json_object_set_new(o, "tags", tags);
	json_object_set_new(o, "value", json_real(value));
	return o;
}

/* Points oldest first, split by the group_by label's value (first seen,
 * first listed) when asked. */
static json_t *series_answer(const st_series_req *r, const pick_set *s, const series_read *rd)
{
	json_t *groups = json_object(), *series = json_array(), *points = json_array(), *out;
	char idbuf[24];
	size_t i;

	if (!groups || !series || !points)
		goto fail;
	for (i = 0; i < rd->n; i++) {
		const picked *p = &s->v[s->n - 1 - i];	/* rd's ids are oldest first */
		json_t *pt, *arr = points;

		if (!rd->have[i])
			continue;	/* no summary, or not that event */
		if (!(pt = point_json(p, pe_metric_value(r->metric, &rd->v[i]))))
			goto fail;
		if (r->group_by) {
			pe_labels lb = { p->id, p->name, p->hostname, p->nr_tags,
					 (const char *const *)p->keys,
					 (const char *const *)p->values };
			const char *g = pe_sel_label(&lb, r->group_by, idbuf);
			json_t *label = json_string(g);
			/* a value JSON cannot carry (not UTF-8) groups as one */
			if (!label) {
				g = "(not UTF-8)";
				label = json_string(g);
			}
			if (!(arr = json_object_get(groups, g))) {
				json_t *one = json_pack("{s:O,s:[]}", "label", label, "points");
				arr = json_object_get(one, "points");
				if (!one || json_object_set(groups, g, arr) < 0 ||
				    json_array_append_new(series, one) < 0) {
					json_decref(label);
					json_decref(pt);
					goto fail;
				}
			}
			json_decref(label);
		}
		json_array_append_new(arr, pt);
	}
	if (r->group_by)
		out = json_pack("{s:s,s:s,s:s?,s:O}", "metric", pe_metric_name(r->metric), "group_by",
				r->group_by, "event", r->event, "series", series);
	else
		out = json_pack("{s:s,s:s?,s:O}", "metric", pe_metric_name(r->metric), "event",
				r->event, "points", points);
	json_decref(groups);
	json_decref(series);
	json_decref(points);
	return out;
fail:
	json_decref(groups);
	json_decref(series);
	json_decref(points);
	return NULL;
}

json_t *st_series_json(st_store *st, const st_series_req *r, st_many_info *info)
{
	series_read rd = { 0 };
	int64_t *ids = NULL;
	json_t *out = NULL;
	pick_set s;
	size_t i, made = 0, pending = 0;

	if (pick(st, &r->pick, ST_MAX_SERIES, 1, NULL, &s, info) != 0)
		return NULL;
	ids = malloc((s.n + 1) * sizeof(*ids));
	rd.v = calloc(s.n + 1, sizeof(*rd.v));
	rd.have = calloc(s.n + 1, 1);
	if (!ids || !rd.v || !rd.have)
		goto out;
	/* stored before summaries were made: a few made now, the newest first
	 * (the idle workers make the others) */
	for (i = 0; i < s.n; i++) {
		picked *p = &s.v[i];
		int rc;
		if (p->has_summary)
			continue;
		if (made == ST_SERIES_MAKE) {
			pending++;
			continue;
		}
		if ((rc = st_summary_make(st, p->id)) < 0)
			goto out;
		made++;
		p->has_summary = rc == 0;
		pending += rc != 0;
	}
	if (made)
		log_info("msg=\"summaries made\" profiles=%zu reason=\"first series\" pending=%zu",
			 made, pending);
	for (i = 0; i < s.n; i++)
		ids[i] = s.v[s.n - 1 - i].id;
	rd.ids = ids;
	rd.n = s.n;
	rd.event = r->event;
	if (st->ops->summary_read(st->p, ids, s.n, r->kind, r->kind < 0 ? NULL : r->key,
				  series_point, &rd) < 0)
		goto out;
	if ((out = series_answer(r, &s, &rd)))
		json_object_set_new(out, "pending", json_integer((json_int_t)pending));
out:
	free(ids);
	free(rd.v);
	free(rd.have);
	set_free(&s);
	return out;
}

/* The first profile (newest first) without a summary stops the walk. */
typedef struct missing {
	int64_t id;
} missing;

static int first_missing(void *ctx, const st_profile_labels *l)
{
	missing *m = ctx;

	if (l->has_summary)
		return 0;
	m->id = l->id;
	return 1;
}

int st_summary_backfill(st_store *st)
{
	st_label_query q = { .status = ST_READY };
	missing m = { 0 };
	int rc, idle = 0;

	if (atomic_load(&st->backfill_done) ||
	    !atomic_compare_exchange_strong(&st->backfilling, &idle, 1))
		return 1;
	q.below_id = atomic_load(&st->backfill_below);
	rc = st->ops->profiles_labels(st->p, &q, first_missing, &m);
	if (rc == 0) {
		/* none left: no more passes (new parses make their own) */
		atomic_store(&st->backfill_done, 1);
		if (atomic_load(&st->backfill_made))
			log_info("msg=\"summaries made\" profiles=%lld reason=\"stored before "
				 "summaries\"", (long long)atomic_load(&st->backfill_made));
		rc = 1;
	} else if (rc > 0) {
		/* the next pass starts below it, whatever becomes of it */
		atomic_store(&st->backfill_below, m.id);
		rc = st_summary_make(st, m.id) < 0 ? -1 : 0;
		if (rc == 0)
			atomic_fetch_add(&st->backfill_made, 1);
	}
	atomic_store(&st->backfilling, 0);
	return rc;
}

/* ---- the ranked diff --------------------------------------------------------------------- */

/* The ranked changes as the API answers them, with how many profiles
 * each side matched. */
static json_t *ranked_json(const pe_ranked *rk, const st_rdiff_req *r, int by_samples,
			   int measure, const st_many_info info[2])
{
	json_t *o = pe_ranked_json(rk, pe_weight_name(by_samples, measure), r->alpha, r->min_share);
	json_t *sum = json_object_get(o, "summary");

	if (sum) {
		json_object_set_new(sum, "base_matched", json_integer((json_int_t)info[0].matched));
		json_object_set_new(sum, "target_matched", json_integer((json_int_t)info[1].matched));
		json_object_set_new(sum, "base_capped", json_boolean(info[0].capped));
		json_object_set_new(sum, "target_capped", json_boolean(info[1].capped));
	}
	return o;
}

int st_rdiff(st_store *st, const st_rdiff_req *r, const st_fold_filter *f, int by_samples,
	     const st_diff_cb *cb, void *ctx, json_t **ranked, st_many_info info[2])
{
	pick_set sb = { 0 }, sg = { 0 };
	pe_diff *d = NULL;
	pe_fntab *t = NULL;
	pe_ranked rk = { 0 };
	int rc;

	*ranked = NULL;
	/* a profile on both sides counts as the target's */
	if ((rc = pick(st, &r->target, ST_MAX_MERGE, 0, NULL, &sg, &info[1])) != 0 ||
	    (rc = pick(st, &r->base, ST_MAX_MERGE, 0, &sg, &sb, &info[0])) != 0)
		goto out;
	if (!(d = pe_diff_new()) || !(t = pe_fntab_new())) {
		rc = -2;
		goto out;
	}
	if ((rc = merge_set(st, &sb, r->base.id > 0, f, by_samples, d, 0, t, NULL)) != 0 ||
	    (rc = merge_set(st, &sg, r->target.id > 0, f, by_samples, d, 1, t, NULL)) != 0)
		goto out;
	if (pe_fntab_rank(t, r->min_share, r->alpha, r->rows, &rk) < 0 ||
	    !(*ranked = ranked_json(&rk, r, by_samples, f->measure, info))) {
		rc = -2;
		goto out;
	}
	/* the tree handed out keeps its largest f->max_nodes nodes (0: all);
	 * the ranked lists above were made from all of them */
	rc = pe_diff_prune(d, f->max_nodes) < 0 ? -2 : pe_diff_walk(d, cb, ctx);
out:
	if (rc) {
		json_decref(*ranked);
		*ranked = NULL;
	}
	pe_ranked_free(&rk);
	pe_fntab_free(t);
	pe_diff_free(d);
	set_free(&sb);
	set_free(&sg);
	return rc;
}
