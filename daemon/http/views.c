/* views.c - deeper views of one profile: callers and callees of a function (/sandwich), its code and source lines with their samples (/annotate). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "jsonbuf.h"

#define API_MAX_FUNCTION 4096		/* bytes of a function name asked for */
#define ST_MAX_ANNOT_OTHERS 64		/* other DSOs of a name listed */

/* The function parameter, or NULL after queuing a 400 (*ret). */
static const char *function_arg(api *a, struct MHD_Connection *conn, MHD_Result_t *ret)
{
	const char *fn = http_arg(conn, "function");

	json_t *utf8;

	if (!fn || !*fn || strlen(fn) > API_MAX_FUNCTION || !(utf8 = json_string(fn))) {
		*ret = http_reply_error(a, conn, 400, "missing or bad parameter 'function' (a name as"
					" /top lists it, UTF-8, at most %d bytes)", API_MAX_FUNCTION);
		return NULL;
	}
	json_decref(utf8);
	return fn;
}

/* The answer key of a view of one function: the query's, the names after.
 * 0, or 1 when nothing is to be kept. */
static int view_key(api *a, const char *endpoint, int64_t id, const http_fold_args *fa,
		    int64_t extra, const char *fn, const char *dso, char key[API_KEY_LEN])
{
	size_t l;
	int n;

	if (http_answer_key(a, endpoint, id, fa, extra, key) != 0)
		return 1;
	l = strlen(key);
	n = snprintf(key + l, API_KEY_LEN - l, "|%zu:%s|%zu:%s", strlen(fn), fn,
		     dso ? strlen(dso) : 0, dso ? dso : "");
	return n < 0 || (size_t)n >= API_KEY_LEN - l;
}

/* ---- /sandwich ---------------------------------------------------------------------- */

static MHD_Result_t sandwich_answer(api *a, struct MHD_Connection *conn, int64_t id,
				    const http_fold_args *fa, const char *fn, const char *key)
{
	static const st_tree_cb cb = { jb_value_node_open, jb_node_close };
	jb_tree up, down;
	jbuf b = { 0 };
	int rc;

	memset(&up, 0, sizeof(up));
	memset(&down, 0, sizeof(down));
	rc = st_sandwich(a->st, id, &fa->f, fa->by_samples, fn, &cb, &up, &cb, &down);
	if (rc == 0 && !up.b.oom && !down.b.oom && up.b.p && down.b.p) {
		jb_add(&b, "{\"function\":", 12);
		jb_json_str(&b, fn, strlen(fn));
		jb_add(&b, ",\"weight\":\"", 11);
		jb_add(&b, http_weight_name(fa), strlen(http_weight_name(fa)));
		jb_add(&b, "\",\"callers\":", 12);
		jb_add(&b, up.b.p, up.b.len);
		jb_add(&b, ",\"callees\":", 11);
		jb_add(&b, down.b.p, down.b.len);
		jb_add(&b, "}", 1);
	}
	free(up.b.p);
	free(down.b.p);
	if (rc != 0 || b.oom || !b.p) {
		free(b.p);
		if (rc == 1)
			return http_reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
		if (rc == 2)
			return http_reply_error(a, conn, 404, "no function '%.200s' in profile %lld", fn,
						(long long)id);
		return http_reply_error(a, conn, 500, rc < 0 ? "storage error" : "out of memory");
	}
	b.p[b.len] = 0;
	return http_reply_keep(a, conn, b.p, b.len, "application/json", key);
}

MHD_Result_t http_get_sandwich(api *a, struct MHD_Connection *conn, int64_t id)
{
	http_fold_args fa;
	MHD_Result_t ret;
	char key[API_KEY_LEN];
	int64_t max_nodes = 0;
	const char *fn;
	int keep, claimed = 0;

	if (!(fn = function_arg(a, conn, &ret)))
		return ret;
	if (http_tree_args_parse(a, conn, id, &fa, &max_nodes, &ret) < 0)
		return ret;
	keep = view_key(a, "sandwich", id, &fa, max_nodes, fn, NULL, key) == 0;
	if (keep && http_reply_kept(a, conn, key, "application/json", &ret, &claimed))
		return ret;
	ret = sandwich_answer(a, conn, id, &fa, fn, keep ? key : NULL);
	if (claimed)
		qc_unclaim(a->qc, key);
	return ret;
}

/* ---- /annotate ---------------------------------------------------------------------- */

/* The answer of one DSO's addresses, code and lines annotated. */
static json_t *annotate_json(api *a, const http_fold_args *fa, const char *fn,
			     const st_annotation *an, const st_annot_dso *d)
{
	const char *others[ST_MAX_ANNOT_OTHERS];
	uint64_t self[ST_MAX_ANNOT_OTHERS];
	an_meta m = { fn, http_weight_name(fa), d->dso, d->build_id,
		      fa->by_samples ? d->samples : d->value, fa->by_samples, d->kernel,
		      others, self, 0 };
	an_result r;
	json_t *o, *src;
	size_t i;

	for (i = 0; i < an->n && m.nr_other < ST_MAX_ANNOT_OTHERS; i++)
		if (&an->dsos[i] != d) {
			others[m.nr_other] = an->dsos[i].dso;
			self[m.nr_other++] = fa->by_samples ? an->dsos[i].samples : an->dsos[i].value;
		}
	if (code_annotate(a->code, d->dso, d->build_id, d->kernel, d->addrs, d->n, &r) < 0)
		return NULL;
	o = an_json(&r, &m);
	if (o && (src = an_source_json(&r, code_source, a->code)))
		json_object_set_new(o, "source", src);
	an_result_free(&r);
	return o;
}

MHD_Result_t http_get_annotate(api *a, struct MHD_Connection *conn, int64_t id)
{
	http_fold_args fa;
	MHD_Result_t ret;
	char key[API_KEY_LEN];
	st_annotation an;
	const st_annot_dso *d = NULL;
	const char *fn, *want;
	json_t *o;
	size_t i;
	int keep, claimed = 0, rc;

	if (!(fn = function_arg(a, conn, &ret)))
		return ret;
	if (http_fold_args_parse(a, conn, &fa, "samples", &ret) < 0)
		return ret;
	if (fa.f.comm || fa.f.pid >= 0 || fa.f.tid >= 0 || fa.f.from_ns || fa.f.to_ns)
		return http_reply_error(a, conn, 400, "annotate takes function, event, weight and"
					" dso (no comm, pid, tid or time range)");
	if (http_measure_check(a, conn, id, &fa, &ret) < 0)
		return ret;
	want = http_arg(conn, "dso");
	if (want && (strlen(want) > API_MAX_FUNCTION || !(o = json_string(want))))
		return http_reply_error(a, conn, 400, "bad parameter 'dso' (a DSO's path, UTF-8)");
	if (want)
		json_decref(o);
	keep = view_key(a, "annotate", id, &fa, 0, fn, want, key) == 0;
	if (keep && http_reply_kept(a, conn, key, "application/json", &ret, &claimed))
		return ret;
	rc = st_annotate(a->st, id, &fa.f, fn, &an);
	if (rc == 1 || rc == 2) {
		ret = rc == 1 ? http_reply_error(a, conn, 404, "no ready profile %lld", (long long)id) :
		      http_reply_error(a, conn, 404, "no function '%.200s' in profile %lld", fn,
				       (long long)id);
		goto out;
	}
	if (rc < 0) {
		ret = http_reply_error(a, conn, 500, "storage error");
		goto out;
	}
	/* the DSO asked for, else the one with the most samples */
	for (i = 0; i < an.n && !d; i++)
		if (!want || (an.dsos[i].dso && !strcmp(an.dsos[i].dso, want)))
			d = &an.dsos[i];
	if (!d) {
		ret = want ? http_reply_error(a, conn, 404, "function '%.200s' has no samples in dso"
					      " '%.200s'", fn, want) :
		      http_reply_json(a, conn, 200, json_pack("{s:s,s:s,s:I,s:[],s:[]}", "function",
					fn, "weight", http_weight_name(&fa), "self", (json_int_t)0,
					"lines", "instructions"));
		goto out;
	}
	o = annotate_json(a, &fa, fn, &an, d);
	ret = o ? http_reply_json_keep(a, conn, o, keep ? key : NULL) :
	      http_reply_error(a, conn, 500, "out of memory");
out:
	st_annotation_free(&an);
	if (claimed)
		qc_unclaim(a->qc, key);
	return ret;
}
