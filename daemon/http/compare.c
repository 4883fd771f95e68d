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

MHD_Result_t http_get_diff(api *a, struct MHD_Connection *conn)
{
	static const st_diff_cb cb = { diff_enter, jb_node_close };
	http_fold_args fa;
	jb_tree w;
	MHD_Result_t ret;
	int64_t base = 0, target = 0;
	int rc;

	if (http_arg_i64(conn, "base", 1, INT64_MAX, &base) < 0 || !base)
		return http_reply_error(a, conn, 400, "bad or missing parameter 'base' (a profile id)");
	if (http_arg_i64(conn, "target", 1, INT64_MAX, &target) < 0 || !target)
		return http_reply_error(a, conn, 400, "bad or missing parameter 'target' (a profile id)");
	if (http_fold_args_parse(a, conn, &fa, "period", &ret) < 0)
		return ret;
	memset(&w, 0, sizeof(w));
	rc = st_diff(a->st, base, target, &fa.f, fa.by_samples, &cb, &w);
	if (rc != 0 || w.b.oom || !w.b.p) {
		free(w.b.p);
		if (rc == 1)
			return http_reply_error(a, conn, 404, "base or target is not a ready profile");
		return http_reply_error(a, conn, 500, rc == -1 ? "storage error" : "out of memory");
	}
	return http_reply(a, conn, 200, w.b.p, w.b.len, "application/json");
}

MHD_Result_t http_get_aggregate(api *a, struct MHD_Connection *conn)
{
	st_agg_filter f = { .limit = 100 };
	http_tags tags = { 0 };
	json_t *o;
	int bad = 0;

	f.group_by = http_arg(conn, "group_by");
	if (!f.group_by)
		f.group_by = "comm";
	f.hostname = http_arg(conn, "hostname");
	if (http_arg_i64(conn, "limit", 1, 100000, &f.limit) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'limit' (1..100000)");
	if (http_arg_i64(conn, "since", 0, INT64_MAX, &f.since) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'since' (unix seconds)");
	if (http_arg_i64(conn, "until", 0, INT64_MAX, &f.until) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'until' (unix seconds)");
	http_tags_get(conn, &tags);
	if (tags.bad || tags.n > 1) {
		http_tags_free(&tags);
		return http_reply_error(a, conn, 400, "bad parameter 'tag' (one tag=KEY=VALUE)");
	}
	if (tags.n) {
		f.tag_key = tags.keys[0];
		f.tag_value = tags.values[0];
	}
	o = st_aggregate_json(a->st, &f, &bad);
	http_tags_free(&tags);
	if (bad)
		return http_reply_error(a, conn, 400,
				   "bad parameter 'group_by' (comm, dso, symbol, hostname, event)");
	if (!o)
		return http_reply_error(a, conn, 500, "storage error");
	return http_reply_json(a, conn, 200, o);
}
