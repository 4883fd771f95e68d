/* compare.c - questions about several profiles: the diff tree and the aggregate. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "jsonbuf.h"

/* /diff: the two flame graphs merged into one tree by the store (each node
 * with its base and target value), written as JSON as it is walked. */
static int diff_enter(void *ctx, const char *name, size_t len, const char *dso, uint64_t base,
		      uint64_t target)
{
	jb_tree *w = ctx;
	char num[96];
	int k;

	jb_node_open(w, name, len, dso);
	k = snprintf(num, sizeof(num), ",\"base\":%llu,\"target\":%llu,\"children\":[",
		     (unsigned long long)base, (unsigned long long)target);
	jb_add(&w->b, num, (size_t)k);
	return w->b.oom ? -1 : 0;
}

/* A number parameter in [min, max]; 0 ok (absent leaves *out), -1 bad. */
static int arg_double(struct MHD_Connection *conn, const char *name, double min, double max,
		      double *out)
{
	const char *v = http_arg(conn, name);
	char *end;
	double x;

	if (!v)
		return 0;
	x = strtod(v, &end);
	if (end == v || *end || !(x >= min && x <= max))
		return -1;
	*out = x;
	return 0;
}

/* The ranked changes (a JSON object's members) go into the tree's root. */
static int add_ranked(jb_tree *w, json_t *ranked)
{
	char *text = json_dumps(ranked, JSON_COMPACT | JSON_REAL_PRECISION(12));
	size_t n;

	if (!text || !w->b.p || w->b.len < 2 || w->b.p[w->b.len - 1] != '}') {
		free(text);
		return -1;
	}
	n = strlen(text);
	w->b.len--;	/* the root's '}' */
	jb_add(&w->b, ",", 1);
	jb_add(&w->b, text + 1, n - 1);	/* without the object's '{' */
	free(text);
	return w->b.oom ? -1 : 0;
}

/* The answer-cache key of a diff of two profiles by id: both parse
 * generations and every parameter. 0, or 1 when it is not kept (a side
 * is a selector, whose profiles come and go, or is not ready). */
static int diff_key(api *a, const st_rdiff_req *r, const http_fold_args *fa, int64_t max_nodes,
		    char key[API_KEY_LEN])
{
	int64_t gen;
	size_t n;

	if (r->base.id <= 0 || r->target.id <= 0 ||
	    http_answer_key(a, "diff", r->base.id, fa, max_nodes, key) != 0 ||
	    st_profile_generation(a->st, r->target.id, &gen) != 0)
		return 1;
	n = strlen(key);
	return snprintf(key + n, API_KEY_LEN - n, "|%lld|%lld|%.17g|%.17g|%zu",
			(long long)r->target.id, (long long)gen, r->min_share, r->alpha,
			r->rows) >= (int)(API_KEY_LEN - n);
}

MHD_Result_t http_get_diff(api *a, struct MHD_Connection *conn)
{
	static const st_diff_cb cb = { diff_enter, jb_node_close };
	http_fold_args fa;
	http_pick base, target;
	st_rdiff_req r = { .alpha = 0.01, .rows = 50 };
	st_many_info info[2];
	json_t *ranked = NULL;
	int64_t rows = 50, max_nodes = API_DIFF_MAX_NODES;
	jb_tree w;
	MHD_Result_t ret;
	char key[API_KEY_LEN];
	int rc, keep, claimed = 0;

	if (http_fold_args_parse(a, conn, &fa, &ret) < 0)
		return ret;
	/* the merged tree's answer keeps its largest max_nodes nodes: its
	 * JSON and the time to write it are bounded whatever the profiles */
	if (http_arg_i64(conn, "max_nodes", 1, API_DIFF_MAX_NODES, &max_nodes) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'max_nodes' (1..%d)",
					API_DIFF_MAX_NODES);
	fa.f.max_nodes = (size_t)max_nodes;
	if (arg_double(conn, "min_share", 0, 100, &r.min_share) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'min_share' (percent, 0..100)");
	if (arg_double(conn, "alpha", 0, 1, &r.alpha) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'alpha' (0..1)");
	if (http_arg_i64(conn, "rows", 0, 100000, &rows) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'rows' (0..100000; 0: all)");
	r.rows = (size_t)rows;
	if (http_pick_parse(a, conn, "base_", HTTP_PICK_ID, &base, &ret) < 0)
		return ret;
	if (http_pick_parse(a, conn, "target_", HTTP_PICK_ID, &target, &ret) < 0) {
		http_pick_free(&base);
		return ret;
	}
	if (!base.given || !target.given) {
		http_pick_free(&base);
		http_pick_free(&target);
		return http_reply_error(a, conn, 400, "missing parameter '%s' (a profile id) or '%s_q' "
					"(a selector)", base.given ? "target" : "base",
					base.given ? "target" : "base");
	}
	r.base = base.pick;
	r.target = target.pick;
	/* an event a profile picked by id does not have is a 400 naming its
	 * events (a selector's profiles each fold what they have) */
	if (fa.f.event) {
		int64_t ids[2] = { r.base.id, r.target.id };
		int i;

		for (i = 0; i < 2; i++) {
			http_fold_args one = fa;

			if (ids[i] > 0 && http_fold_event(a, conn, ids[i], &one, &ret) < 0) {
				http_pick_free(&base);
				http_pick_free(&target);
				return ret;
			}
		}
	}
	/* two profiles by id: the answer is kept, and the same diff asked at
	 * once by several clients is computed once */
	keep = diff_key(a, &r, &fa, max_nodes, key) == 0;
	if (keep && http_reply_kept(a, conn, key, "application/json", &ret, &claimed)) {
		http_pick_free(&base);
		http_pick_free(&target);
		return ret;
	}
	memset(&w, 0, sizeof(w));
	rc = st_rdiff(a->st, &r, &fa.f, fa.by_samples, &cb, &w, &ranked, info);
	http_pick_free(&base);
	http_pick_free(&target);
	if (rc == 0 && (w.b.oom || add_ranked(&w, ranked) < 0))
		rc = -2;
	json_decref(ranked);
	if (rc != 0) {
		free(w.b.p);
		ret = rc == 1 ? http_reply_error(a, conn, 404, "base or target is not a ready profile")
			      : http_many_error(a, conn, rc);
	} else {
		ret = http_reply_keep(a, conn, w.b.p, w.b.len, "application/json", keep ? key : NULL);
	}
	if (claimed)
		qc_unclaim(a->qc, key);
	return ret;
}

/* Each side keeps its largest max_nodes nodes (API_DIFF_MAX_NODES at
 * most): the merged tree, its JSON and the time to make them are bounded
 * whatever the profiles; parents still count what was dropped. The same
 * diff asked again (or at once by several clients) is computed once. */

MHD_Result_t http_get_aggregate(api *a, struct MHD_Connection *conn)
{
	st_agg_filter f = { .limit = 100 };
	http_tags tags = { 0 };
	http_pick hp;
	MHD_Result_t ret;
	json_t *o;
	int bad = 0;

	f.group_by = http_arg(conn, "group_by");
	if (!f.group_by)
		f.group_by = "comm";
	f.hostname = http_arg(conn, "hostname");
	if (http_arg_i64(conn, "limit", 1, 100000, &f.limit) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'limit' (1..100000)");
	/* q, and since/until as every selector takes them (limit is the rows') */
	if (http_pick_parse(a, conn, "", HTTP_PICK_NO_LIMIT, &hp, &ret) < 0)
		return ret;
	f.since = hp.pick.since;
	f.until = hp.pick.until;
	f.sel = hp.sel;
	http_tags_get(conn, &tags);
	if (tags.bad || tags.n > 1) {
		http_tags_free(&tags);
		http_pick_free(&hp);
		return http_reply_error(a, conn, 400, "bad parameter 'tag' (one tag=KEY=VALUE)");
	}
	if (tags.n) {
		f.tag_key = tags.keys[0];
		f.tag_value = tags.values[0];
	}
	o = st_aggregate_json(a->st, &f, &bad);
	http_tags_free(&tags);
	http_pick_free(&hp);
	if (bad)
		return http_reply_error(a, conn, 400,
				   "bad parameter 'group_by' (comm, dso, symbol, hostname, event)");
	if (!o)
		return http_reply_error(a, conn, 500, "storage error");
	return http_reply_json(a, conn, 200, o);
}
