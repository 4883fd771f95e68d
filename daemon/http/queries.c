/* queries.c - questions about one profile: folded stacks, flame graph, top, timeline, threads. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "jsonbuf.h"

/* ---- folded stacks: collapsed text and the flame graph tree ------------------ */

typedef struct textbuf {
	char *p;
	size_t len, cap;
	int by_samples;
	int oom;
} textbuf;

static int collapsed_line(void *ctx, const char *line, uint64_t samples, uint64_t period)
{
	textbuf *b = ctx;
	size_t need = strlen(line) + 32;
	int n;

	if (b->len + need > b->cap) {
		size_t ncap = b->cap ? 2 * b->cap : 65536;
		char *p;
		while (ncap < b->len + need)
			ncap *= 2;
		if (!(p = realloc(b->p, ncap))) {
			b->oom = 1;
			return -1;
		}
		b->p = p;
		b->cap = ncap;
	}
	n = snprintf(b->p + b->len, b->cap - b->len, "%s %llu\n", line,
		     (unsigned long long)(b->by_samples ? samples : period));
	b->len += (size_t)n;
	return 0;
}

/* /collapsed computed; kept under key unless NULL. */
static MHD_Result_t collapsed_answer(api *a, struct MHD_Connection *conn, int64_t id,
				     const http_fold_args *fa, const char *key)
{
	textbuf b = { 0 };
	int rc;

	b.by_samples = fa->by_samples;
	rc = st_fold(a->st, id, &fa->f, collapsed_line, &b);
	if (rc == 1) {
		free(b.p);
		return http_reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
	}
	if (rc < 0 || b.oom) {
		free(b.p);
		return http_reply_error(a, conn, 500, "storage error");
	}
	if (!b.p)
		b.p = strdup("");
	if (!b.p)
		return http_reply_error(a, conn, 500, "out of memory");
	return http_reply_keep(a, conn, b.p, b.len, "text/plain; charset=utf-8", key);
}

MHD_Result_t http_get_collapsed(api *a, struct MHD_Connection *conn, int64_t id)
{
	static const char type[] = "text/plain; charset=utf-8";
	http_fold_args fa;
	MHD_Result_t ret;
	char key[API_KEY_LEN];
	int keep, claimed = 0;

	if (http_fold_args_parse(a, conn, &fa, "period", &ret) < 0 ||
	    http_measure_check(a, conn, id, &fa, &ret) < 0)
		return ret;
	keep = http_answer_key(a, "collapsed", id, &fa, 0, key) == 0;
	if (keep && http_reply_kept(a, conn, key, type, &ret, &claimed))
		return ret;
	ret = collapsed_answer(a, conn, id, &fa, keep ? key : NULL);
	if (claimed)
		qc_unclaim(a->qc, key);
	return ret;
}

/* /flamegraph computed; kept under key unless NULL. */
static MHD_Result_t flamegraph_answer(api *a, struct MHD_Connection *conn, int64_t id,
				      const http_fold_args *fa, const char *key)
{
	static const st_tree_cb cb = { jb_value_node_open, jb_node_close };
	jb_tree w;
	int rc;

	memset(&w, 0, sizeof(w));
	rc = st_flame(a->st, id, &fa->f, fa->by_samples, &cb, &w);
	if (rc != 0 || w.b.oom || !w.b.p) {
		free(w.b.p);
		if (rc == 1)
			return http_reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
		return http_reply_error(a, conn, 500, rc < 0 ? "storage error" : "out of memory");
	}
	w.b.p[w.b.len] = 0;
	return http_reply_keep(a, conn, w.b.p, w.b.len, "application/json", key);
}

MHD_Result_t http_get_flamegraph(api *a, struct MHD_Connection *conn, int64_t id)
{
	http_fold_args fa;
	MHD_Result_t ret;
	char key[API_KEY_LEN];
	int64_t max_nodes = 0;
	int keep, claimed = 0;

	if (http_tree_args_parse(a, conn, id, &fa, &max_nodes, &ret) < 0)
		return ret;
	keep = http_answer_key(a, "flamegraph", id, &fa, max_nodes, key) == 0;
	if (keep && http_reply_kept(a, conn, key, "application/json", &ret, &claimed))
		return ret;
	ret = flamegraph_answer(a, conn, id, &fa, keep ? key : NULL);
	if (claimed)
		qc_unclaim(a->qc, key);
	return ret;
}


/* ---- query endpoints ------------------------------------------------------------- */

MHD_Result_t http_get_threads(api *a, struct MHD_Connection *conn, int64_t id)
{
	int notfound = 0;
	char key[API_KEY_LEN];
	int keep = http_answer_key(a, "threads", id, NULL, 0, key) == 0;
	MHD_Result_t ret;
	json_t *o;

	if (keep && http_reply_kept(a, conn, key, "application/json", &ret, NULL))
		return ret;
	o = st_threads_json(a->st, id, &notfound);
	if (notfound)
		return http_reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
	if (!o)
		return http_reply_error(a, conn, 500, "storage error");
	return http_reply_json_keep(a, conn, o, keep ? key : NULL);
}

#define API_MAX_BUCKETS 100000

MHD_Result_t http_get_timeline(api *a, struct MHD_Connection *conn, int64_t id)
{
	int64_t bucket_ms = 100;
	int notfound = 0;
	json_t *o;

	char key[API_KEY_LEN];
	http_fold_args ev_only;
	MHD_Result_t ret;
	const char *w = http_arg(conn, "weight");
	int keep;

	if (http_arg_i64(conn, "bucket_ms", 1, 86400000, &bucket_ms) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'bucket_ms' (1..86400000)");
	memset(&ev_only, 0, sizeof(ev_only));
	ev_only.f.pid = ev_only.f.tid = -1;
	ev_only.f.event = http_arg(conn, "event");
	/* the buckets count samples and period whatever the weight; offcpu
	 * and wall add each bucket's off-CPU nanoseconds */
	if (w && pe_weight_parse(w, &ev_only.by_samples, &ev_only.f.measure) < 0)
		return http_reply_error(a, conn, 400,
					"bad parameter 'weight' (samples, period, offcpu or wall)");
	ev_only.by_samples = 0;
	if (http_measure_check(a, conn, id, &ev_only, &ret) < 0)
		return ret;
	keep = http_answer_key(a, "timeline", id, &ev_only, bucket_ms, key) == 0;
	if (keep && http_reply_kept(a, conn, key, "application/json", &ret, NULL))
		return ret;
	o = st_timeline_measured_json(a->st, id, &ev_only.f, (uint64_t)bucket_ms * 1000000,
				      &notfound);
	if (notfound)
		return http_reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
	if (!o)
		return http_reply_error(a, conn, 500, "storage error");
	if (json_array_size(json_object_get(o, "buckets")) > API_MAX_BUCKETS) {
		json_decref(o);
		return http_reply_error(a, conn, 400, "bad parameter 'bucket_ms': more than %d buckets",
				   API_MAX_BUCKETS);
	}
	json_object_set_new(o, "bucket_ms", json_integer(bucket_ms));
	return http_reply_json_keep(a, conn, o, keep ? key : NULL);
}

/* /top: self (leaf) and total (anywhere on the stack, once per stack) per
 * function with its DSO, computed by the store from the stack tree */
static int cmp_self(const void *x, const void *y)
{
	json_int_t a = json_integer_value(json_object_get(*(json_t *const *)x, "self"));
	json_int_t b = json_integer_value(json_object_get(*(json_t *const *)y, "self"));

	if (a != b)
		return a > b ? -1 : 1;
	return strcmp(json_string_value(json_object_get(*(json_t *const *)x, "name")),
		      json_string_value(json_object_get(*(json_t *const *)y, "name")));
}

MHD_Result_t http_get_top(api *a, struct MHD_Connection *conn, int64_t id)
{
	http_fold_args fa;
	MHD_Result_t ret;
	int64_t limit = 100;
	json_t **rows, *arr, *all;
	char key[API_KEY_LEN];
	size_t n, i;
	int keep, notfound = 0;

	if (http_fold_args_parse(a, conn, &fa, "samples", &ret) < 0 ||
	    http_measure_check(a, conn, id, &fa, &ret) < 0)
		return ret;
	if (http_arg_i64(conn, "limit", 1, 100000, &limit) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'limit' (1..100000)");
	keep = http_answer_key(a, "top", id, &fa, limit, key) == 0;
	if (keep && http_reply_kept(a, conn, key, "application/json", &ret, NULL))
		return ret;
	all = st_top_json(a->st, id, &fa.f, fa.by_samples, &notfound);
	if (notfound)
		return http_reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
	if (!all)
		return http_reply_error(a, conn, 500, "storage error");
	n = json_array_size(all);
	rows = malloc((n + 1) * sizeof(*rows));
	if (!rows) {
		json_decref(all);
		return http_reply_error(a, conn, 500, "out of memory");
	}
	for (i = 0; i < n; i++)
		rows[i] = json_array_get(all, i);
	qsort(rows, n, sizeof(*rows), cmp_self);
	arr = json_array();
	for (i = 0; i < n && (int64_t)i < limit; i++)
		json_array_append(arr, rows[i]);
	free(rows);
	json_decref(all);
	return http_reply_json_keep(a, conn, json_pack("{s:s,s:o}", "weight",
						   http_weight_name(&fa),
						   "functions", arr), keep ? key : NULL);
}
