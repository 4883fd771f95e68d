/*
 * many.c - questions about many profiles: the selector parameters every
 * such question takes (q, since, until, limit), the merged views
 * /api/v1/query/{flamegraph,collapsed,top,timeline} and /api/v1/series.
 * The ranked diff is in compare.c, the list by selector in profiles.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/http.h"
#include "jsonbuf.h"

#define API_MAX_ROWS 100000
#define API_MAX_MERGED_BUCKETS 100000

/* ---- the selector parameters -------------------------------------------------------- */

#define PICK_BAD(...) do { *ret = http_reply_error(a, conn, 400, __VA_ARGS__); goto fail; } while (0)

int http_pick_parse(api *a, struct MHD_Connection *conn, const char *prefix, int flags,
		    http_pick *hp, MHD_Result_t *ret)
{
	char name[32];
	const char *v;
	pe_sel_error err;
	int64_t now = (int64_t)time(NULL);

	memset(hp, 0, sizeof(*hp));
	snprintf(name, sizeof(name), "%sq", prefix);
	if ((v = http_arg(conn, name))) {
		hp->sel = pe_sel_parse(v, strlen(v), &err);
		if (!hp->sel) {
			char msg[400];
			/* the position too, for a page to point at */
			snprintf(msg, sizeof(msg), "bad selector in '%s' %s", name, err.msg);
			*ret = http_reply_json(a, conn, 400, json_pack("{s:s,s:s,s:I}", "error", msg,
								       "parameter", name, "position",
								       (json_int_t)err.pos));
			return -1;
		}
		hp->given = 1;
	}
	hp->pick.sel = hp->sel;
	if (flags & HTTP_PICK_ID) {
		snprintf(name, sizeof(name), "%s", prefix);
		name[strlen(name) ? strlen(name) - 1 : 0] = 0;	/* "base_" -> "base" */
		if (http_arg_i64(conn, name, 1, INT64_MAX, &hp->pick.id) < 0)
			PICK_BAD("bad parameter '%s' (a profile id)", name);
		if (hp->pick.id && hp->given)
			PICK_BAD("give '%s' or '%sq', not both", name, prefix);
		hp->given |= hp->pick.id > 0;
	}
	snprintf(name, sizeof(name), "%ssince", prefix);
	if ((v = http_arg(conn, name)) && pe_sel_time(v, now, &hp->pick.since, &err) < 0)
		PICK_BAD("bad parameter '%s' %s", name, err.msg);
	snprintf(name, sizeof(name), "%suntil", prefix);
	if ((v = http_arg(conn, name)) && pe_sel_time(v, now, &hp->pick.until, &err) < 0)
		PICK_BAD("bad parameter '%s' %s", name, err.msg);
	snprintf(name, sizeof(name), "%slimit", prefix);
	if (!(flags & HTTP_PICK_NO_LIMIT) &&
	    http_arg_i64(conn, name, 1, INT32_MAX, &hp->pick.limit) < 0)
		PICK_BAD("bad parameter '%s' (the newest N profiles: 1..%d)", name, INT32_MAX);
	return 0;
fail:
	http_pick_free(hp);
	return -1;
}

void http_pick_free(http_pick *hp)
{
	pe_sel_free(hp->sel);
	hp->sel = NULL;
	hp->pick.sel = NULL;
}

/* normalize=profile|none; -1 when bad (answered). */
static int normalize_arg(api *a, struct MHD_Connection *conn, MHD_Result_t *ret)
{
	const char *v = http_arg(conn, "normalize");

	if (!v || !strcmp(v, "none"))
		return 0;
	if (!strcmp(v, "profile"))
		return 1;
	*ret = http_reply_error(a, conn, 400, "bad parameter 'normalize' (profile or none)");
	return -1;
}

/* The answer to a failed merge (st_query_* return values). */
MHD_Result_t http_many_error(api *a, struct MHD_Connection *conn, int rc)
{
	switch (rc) {
	case 1:
		return http_reply_error(a, conn, 404, "not a ready profile");
	case -2:
		return http_reply_error(a, conn, 500, "out of memory");
	case -3:
		return http_reply_error(a, conn, 413, "the merged tree passed %u nodes: pick fewer "
					"profiles (limit, since, a narrower q) or filter more",
					PE_DIFF_MAX_NODES);
	default:
		return http_reply_error(a, conn, 500, "storage error");
	}
}

/* "profiles", "matched", "capped" (a JSON fragment, with a leading comma). */
static void info_fields(jbuf *b, const st_many_info *info)
{
	char num[128];
	int k = snprintf(num, sizeof(num), ",\"profiles\":%zu,\"matched\":%zu,\"capped\":%s",
			 info->used, info->matched, info->capped ? "true" : "false");

	jb_add(b, num, (size_t)k);
}

/* An answer with how many profiles went in, its shares and means in 12
 * significant digits (not 17: 79.476034, not 79.476033999999999). Takes o. */
static MHD_Result_t reply_many(api *a, struct MHD_Connection *conn, json_t *o,
			       const st_many_info *info)
{
	char *s;

	json_object_set_new(o, "profiles", json_integer((json_int_t)info->used));
	json_object_set_new(o, "matched", json_integer((json_int_t)info->matched));
	json_object_set_new(o, "capped", json_boolean(info->capped));
	s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(12));
	json_decref(o);
	if (!s)
		return http_reply_error(a, conn, 500, "out of memory");
	return http_reply(a, conn, 200, s, strlen(s), "application/json");
}

/* ---- /api/v1/query/flamegraph ---------------------------------------------------------- */

typedef struct merged_tree {
	jb_tree w;
	const st_many_info *info;
	int normalize;
} merged_tree;

/* The root carries how many profiles went in. */
static void tree_value(merged_tree *t, const char *num, int root)
{
	jb_add(&t->w.b, num, strlen(num));
	if (root) {
		info_fields(&t->w.b, t->info);
		const char *nm = t->normalize ? ",\"normalize\":\"profile\"" :
						 ",\"normalize\":\"none\"";
		jb_add(&t->w.b, nm, strlen(nm));
	}
	jb_add(&t->w.b, ",\"children\":[", 13);
}

/* A node: its name and DSO, its value (JSON text) and, on the root, how
 * many profiles went in. */
static int mt_node(merged_tree *t, const char *name, size_t len, const char *dso,
		   const char *value)
{
	int root = !t->w.b.len;

	jb_node_open(&t->w, name, len, dso);
	jb_add(&t->w.b, ",\"value\":", 9);
	tree_value(t, value, root);
	return t->w.b.oom ? -1 : 0;
}

static int mt_enter(void *ctx, const char *name, size_t len, const char *dso, uint64_t value,
		    uint64_t unused)
{
	char num[32];

	(void)unused;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)value);
	return mt_node(ctx, name, len, dso, num);
}

static int mt_enter_norm(void *ctx, const char *name, size_t len, const char *dso, double value,
			 double unused)
{
	char num[48];

	(void)unused;
	snprintf(num, sizeof(num), "%.10g", value);
	return mt_node(ctx, name, len, dso, num);
}

MHD_Result_t http_query_flamegraph(api *a, struct MHD_Connection *conn)
{
	static const st_diff_cb cb = { mt_enter, jb_node_close };
	static const pe_norm_cb ncb = { mt_enter_norm, jb_node_close };
	http_fold_args fa;
	http_pick hp;
	st_many_info info = { 0 };
	merged_tree t;
	MHD_Result_t ret;
	int64_t max_nodes = 0;
	int rc;

	memset(&t, 0, sizeof(t));
	if (http_fold_args_parse(a, conn, &fa, "period", &ret) < 0 ||
	    (t.normalize = normalize_arg(a, conn, &ret)) < 0)
		return ret;
	if (http_arg_i64(conn, "max_nodes", 1, INT32_MAX, &max_nodes) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'max_nodes' (1..%d)", INT32_MAX);
	fa.f.max_nodes = (size_t)max_nodes;
	if (http_pick_parse(a, conn, "", 0, &hp, &ret) < 0)
		return ret;
	t.info = &info;
	rc = st_query_flame(a->st, &hp.pick, &fa.f, fa.by_samples, t.normalize, &info, &cb, &ncb,
			    &t);
	http_pick_free(&hp);
	if (rc == 0 && (t.w.b.oom || !t.w.b.p))
		rc = -2;
	if (rc) {
		free(t.w.b.p);
		return http_many_error(a, conn, rc);
	}
	return http_reply(a, conn, 200, t.w.b.p, t.w.b.len, "application/json");
}

/* ---- /api/v1/query/collapsed ------------------------------------------------------------- */

typedef struct lines {
	jbuf b;
} lines;

static int fold_line(void *ctx, const char *line, uint64_t samples, uint64_t period)
{
	lines *l = ctx;
	char num[32];
	int k = snprintf(num, sizeof(num), " %llu\n", (unsigned long long)samples);

	(void)period;
	jb_add(&l->b, line, strlen(line));
	jb_add(&l->b, num, (size_t)k);
	return l->b.oom ? -1 : 0;
}

MHD_Result_t http_query_collapsed(api *a, struct MHD_Connection *conn)
{
	http_fold_args fa;
	http_pick hp;
	st_many_info info = { 0 };
	lines l;
	MHD_Result_t ret;
	char used[24], matched[24];
	const char *names[] = { "X-Perfhub-Profiles", "X-Perfhub-Matched" };
	const char *values[] = { used, matched };
	int rc;

	memset(&l, 0, sizeof(l));
	if (http_fold_args_parse(a, conn, &fa, "period", &ret) < 0)
		return ret;
	if (http_arg(conn, "normalize"))
		return http_reply_error(a, conn, 400, "'normalize' applies to /query/flamegraph and "
					"/query/top: folded counts are whole samples or periods");
	if (http_pick_parse(a, conn, "", 0, &hp, &ret) < 0)
		return ret;
	rc = st_query_fold(a->st, &hp.pick, &fa.f, fa.by_samples, &info, fold_line, &l);
	http_pick_free(&hp);
	if (rc == 0 && l.b.oom)
		rc = -2;
	if (rc) {
		free(l.b.p);
		return http_many_error(a, conn, rc);
	}
	if (!l.b.p && !(l.b.p = strdup("")))
		return http_reply_error(a, conn, 500, "out of memory");
	/* text has no room for it: how many profiles went in, as headers */
	snprintf(used, sizeof(used), "%zu", info.used);
	snprintf(matched, sizeof(matched), "%zu", info.matched);
	return http_reply_headers(a, conn, 200, l.b.p, l.b.len, "text/plain; charset=utf-8", names,
				  values, 2);
}

/* ---- /api/v1/query/top and /api/v1/query/timeline ----------------------------------------- */

MHD_Result_t http_query_top(api *a, struct MHD_Connection *conn)
{
	http_fold_args fa;
	http_pick hp;
	st_many_info info = { 0 };
	MHD_Result_t ret;
	int64_t rows = 100;
	json_t *o;
	int normalize, notfound = 0;

	if (http_fold_args_parse(a, conn, &fa, "samples", &ret) < 0 ||
	    (normalize = normalize_arg(a, conn, &ret)) < 0)
		return ret;
	if (http_arg_i64(conn, "rows", 1, API_MAX_ROWS, &rows) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'rows' (1..%d)", API_MAX_ROWS);
	if (http_pick_parse(a, conn, "", 0, &hp, &ret) < 0)
		return ret;
	o = st_query_top_json(a->st, &hp.pick, &fa.f, fa.by_samples, normalize, rows, &info,
			      &notfound);
	http_pick_free(&hp);
	if (!o)
		return http_many_error(a, conn, notfound ? 1 : -1);
	json_object_set_new(o, "weight", json_string(pe_weight_name(fa.by_samples, fa.f.measure)));
	json_object_set_new(o, "normalize", json_string(normalize ? "profile" : "none"));
	return reply_many(a, conn, o, &info);
}

MHD_Result_t http_query_timeline(api *a, struct MHD_Connection *conn)
{
	http_pick hp;
	st_many_info info = { 0 };
	MHD_Result_t ret;
	int64_t bucket_ms = 100;
	json_t *o;
	int too_many = 0;

	if (http_arg_i64(conn, "bucket_ms", 1, 86400000, &bucket_ms) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'bucket_ms' (1..86400000)");
	if (http_pick_parse(a, conn, "", 0, &hp, &ret) < 0)
		return ret;
	o = st_query_timeline_json(a->st, &hp.pick, http_arg(conn, "event"),
				   (uint64_t)bucket_ms * 1000000, API_MAX_MERGED_BUCKETS, &info,
				   &too_many);
	http_pick_free(&hp);
	if (too_many)
		return http_reply_error(a, conn, 400, "bad parameter 'bucket_ms': more than %d buckets",
					API_MAX_MERGED_BUCKETS);
	if (!o)
		return http_reply_error(a, conn, 500, "storage error");
	json_object_set_new(o, "bucket_ms", json_integer(bucket_ms));
	return reply_many(a, conn, o, &info);
}

/* ---- /api/v1/series --------------------------------------------------------------------- */

MHD_Result_t http_get_series(api *a, struct MHD_Connection *conn)
{
	static const char *const keys[] = { "function", "dso", "comm" };
	st_series_req r;
	st_many_info info = { 0 };
	http_pick hp;
	MHD_Result_t ret;
	const char *m;
	json_t *o;
	int i;

	memset(&r, 0, sizeof(r));
	r.kind = -1;
	for (i = 0; i < 3; i++) {
		const char *v = http_arg(conn, keys[i]);
		if (!v)
			continue;
		if (r.key)
			return http_reply_error(a, conn, 400, "give one of 'function', 'dso', 'comm'");
		if (!*v)
			return http_reply_error(a, conn, 400, "empty parameter '%s'", keys[i]);
		r.key = v;
		r.kind = i == 0 ? PE_SUM_FUNCTION : i == 2 ? PE_SUM_COMM :
			 strchr(v, '/') ? PE_SUM_DSO : PE_SUM_DSO_BASE;
	}
	m = http_arg(conn, "metric");
	r.metric = m ? pe_metric_parse(m) : r.key ? PE_M_SELF_SHARE : PE_M_SAMPLES;
	if (r.metric < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'metric' (self_share, total_share, "
					"samples, period, self_samples, self_period)");
	r.event = http_arg(conn, "event");
	r.group_by = http_arg(conn, "group_by");
	if (r.group_by && !*r.group_by)
		return http_reply_error(a, conn, 400, "empty parameter 'group_by' (a label)");
	if (http_pick_parse(a, conn, "", 0, &hp, &ret) < 0)
		return ret;
	r.pick = hp.pick;
	o = st_series_json(a->st, &r, &info);
	http_pick_free(&hp);
	if (!o)
		return http_reply_error(a, conn, 500, "storage error");
	if (r.key)
		json_object_set_new(o, keys[r.kind == PE_SUM_FUNCTION ? 0 : r.kind == PE_SUM_COMM ? 2 : 1],
				    json_string(r.key));
	return reply_many(a, conn, o, &info);
}
