/* respond.c - answers (plain, kept, compressed) and query parameters. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/http.h"

/* ---- responses ------------------------------------------------------------ */

void http_count_status(api *a, unsigned status)
{
	unsigned b = status / 100 - 2;

	atomic_fetch_add(&a->by_status[b < 4 ? b : 4], 1);
}

/* Whether Accept-Encoding takes the coding `name` ("gzip" also as
 * "x-gzip"; "*" takes any), without q=0. */
static int accepts(struct MHD_Connection *conn, const char *name)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding");
	size_t nl = strlen(name);
	char el[128];

	while (h && *h) {
		size_t n = strcspn(h, ","), t;
		char *semi, *q;

		if (n < sizeof(el)) {
			memcpy(el, h, n);
			el[n] = 0;
			semi = strchr(el, ';');
			if (semi)
				*semi = 0;
			q = el + strspn(el, " \t");
			t = strcspn(q, " \t");
			if ((t == nl && !strncasecmp(q, name, nl)) ||
			    (t == nl + 2 && !strcmp(name, "gzip") && !strncasecmp(q, "x-gzip", 6)) ||
			    (t == 1 && *q == '*')) {
				/* a weight of 0 means "not this one" */
				for (q = semi ? semi + 1 : NULL; q; q = strchr(q, ';')) {
					q += strspn(q, " \t;");
					if ((*q == 'q' || *q == 'Q') && q[1] == '=')
						return strtod(q + 2, NULL) > 0;
				}
				return 1;
			}
		}
		h += n;
		h += *h == ',';
	}
	return 0;
}

static void answer_released(void *cls)
{
	qc_answer_release(cls);
}

/* Queues a shared answer: its zstd or gzip form when the client takes one
 * and the body is large enough to gain, else the plain bytes; no copy
 * either way.
 * Takes the caller's reference to ans. */
MHD_Result_t http_reply_answer(api *a, struct MHD_Connection *conn, unsigned status,
				 qc_answer *ans, const char *type)
{
	struct MHD_Response *r;
	const char *body = NULL;
	size_t len = 0, plain_len;
	const char *coding = NULL;
	MHD_Result_t rc;

	qc_answer_body(ans, &plain_len);
	/* zstd where the client takes it (a fraction of gzip's time to make) */
	if (plain_len >= QC_GZIP_MIN && accepts(conn, "zstd") && (body = qc_answer_zstd(ans, &len)))
		coding = "zstd";
	else if (plain_len >= QC_GZIP_MIN && accepts(conn, "gzip") &&
		 (body = qc_answer_gzip(ans, &len)))
		coding = "gzip";
	else
		body = qc_answer_body(ans, &len);
#if MHD_VERSION >= 0x00097302
	r = MHD_create_response_from_buffer_with_free_callback_cls(len, (void *)(uintptr_t)body,
								   answer_released, ans);
	if (!r) {
		qc_answer_release(ans);
		return MHD_NO;
	}
#else
	r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	answer_released(ans);
	if (!r)
		return MHD_NO;
#endif
	if (type)
		MHD_add_response_header(r, "Content-Type", type);
	if (plain_len >= QC_GZIP_MIN)
		MHD_add_response_header(r, "Vary", "Accept-Encoding");
	if (coding)
		MHD_add_response_header(r, "Content-Encoding", coding);
	http_count_status(a, status);
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* Takes body (malloc'ed). Large bodies go out compressed to clients that
 * take it. */
MHD_Result_t http_reply(api *a, struct MHD_Connection *conn, unsigned status, char *body,
			  size_t len, const char *type)
{
	struct MHD_Response *r;
	MHD_Result_t rc;

	if (len >= QC_GZIP_MIN) {
		qc_answer *ans = qc_answer_new(body, len);
		return ans ? http_reply_answer(a, conn, status, ans, type) : MHD_NO;
	}
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (type)
		MHD_add_response_header(r, "Content-Type", type);
	http_count_status(a, status);
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}


/* A 200 answer, kept under key (if any) for the next request. Takes body. */
MHD_Result_t http_reply_keep(api *a, struct MHD_Connection *conn, char *body, size_t len,
			       const char *type, const char *key)
{
	qc_answer *ans = qc_answer_new(body, len);

	if (!ans)
		return http_reply_error(a, conn, 500, "out of memory");
	if (key)
		qc_put(a->qc, key, ans);
	return http_reply_answer(a, conn, 200, ans, type);
}

MHD_Result_t http_reply_json(api *a, struct MHD_Connection *conn, unsigned status, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	if (!s)
		return http_reply(a, conn, 500, strdup("{\"error\":\"out of memory\"}"), 25,
			     "application/json");
	return http_reply(a, conn, status, s, strlen(s), "application/json");
}

/* http_reply_json for a 200 answer that is also kept under key (if any). */
MHD_Result_t http_reply_json_keep(api *a, struct MHD_Connection *conn, json_t *j,
				    const char *key)
{
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	if (!s)
		return http_reply(a, conn, 500, strdup("{\"error\":\"out of memory\"}"), 25,
			     "application/json");
	return http_reply_keep(a, conn, s, strlen(s), "application/json", key);
}

MHD_Result_t http_reply_error(api *a, struct MHD_Connection *conn, unsigned status,
				const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return http_reply_json(a, conn, status, json_pack("{s:s}", "error", msg));
}

MHD_Result_t http_reply_empty(api *a, struct MHD_Connection *conn, unsigned status)
{
	return http_reply(a, conn, status, NULL, 0, NULL);
}

/* ---- query parameters ------------------------------------------------------ */

const char *http_arg(struct MHD_Connection *conn, const char *name)
{
	return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
}

/* Parses an integer parameter; 0 ok (absent leaves *out), -1 bad. */
int http_arg_i64(struct MHD_Connection *conn, const char *name, int64_t min, int64_t max,
		   int64_t *out)
{
	const char *v = http_arg(conn, name);
	char *end;
	long long x;

	if (!v)
		return 0;
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || end == v || *end || x < min || x > max)
		return -1;
	*out = x;
	return 0;
}

static MHD_Result_t collect_tag(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	http_tags *t = cls;
	char *copy, *eq;

	(void)kind;
	if (strcmp(key, "tag"))
		return MHD_YES;
	if (!value || !(eq = strchr(value, '=')) || eq == value || t->n >= API_MAX_TAGS) {
		t->bad = 1;
		return MHD_YES;
	}
	copy = strdup(value);
	if (!copy) {
		t->bad = 1;
		return MHD_YES;
	}
	copy[eq - value] = 0;
	t->owned[t->n] = copy;
	t->keys[t->n] = copy;
	t->values[t->n] = copy + (eq - value) + 1;
	t->n++;
	return MHD_YES;
}

void http_tags_get(struct MHD_Connection *conn, http_tags *t)
{
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_tag, t);
}

void http_tags_free(http_tags *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->owned[i]);
}

/* ---- the filters of folded-stack queries ------------------------------------ */

const char *http_weight_name(const http_fold_args *fa)
{
	return pe_weight_name(fa->by_samples, fa->f.measure);
}

int http_measure_check(api *a, struct MHD_Connection *conn, int64_t id,
		       const http_fold_args *fa, MHD_Result_t *ret)
{
	char why[256];
	int rc;

	if (fa->f.measure == PE_MEASURE_PERIOD)
		return 0;
	rc = st_measure_check(a->st, id, &fa->f, why, sizeof(why));
	if (rc == 0)
		return 0;
	if (rc == 1)
		*ret = http_reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
	else if (rc == 2)
		*ret = http_reply_error(a, conn, 400, "weight=%s: %s", http_weight_name(fa), why);
	else
		*ret = http_reply_error(a, conn, 500, "storage error");
	return -1;
}

#define FOLD_BAD(...) do { *ret = http_reply_error(a, conn, 400, __VA_ARGS__); return -1; } while (0)
int http_fold_args_parse(api *a, struct MHD_Connection *conn, http_fold_args *fa,
			   const char *default_weight, MHD_Result_t *ret)
{
	const char *w = http_arg(conn, "weight");
	int64_t v;

	memset(fa, 0, sizeof(*fa));
	fa->f.pid = fa->f.tid = -1;
	fa->f.event = http_arg(conn, "event");
	fa->f.comm = http_arg(conn, "comm");
	if (http_arg_i64(conn, "pid", 0, UINT32_MAX, &fa->f.pid) < 0)
		FOLD_BAD("bad parameter 'pid'");
	if (http_arg_i64(conn, "tid", 0, UINT32_MAX, &fa->f.tid) < 0)
		FOLD_BAD("bad parameter 'tid'");
	v = 0;
	if (http_arg_i64(conn, "from_ns", 0, INT64_MAX, &v) < 0)
		FOLD_BAD("bad parameter 'from_ns'");
	fa->f.from_ns = (uint64_t)v;
	v = 0;
	if (http_arg_i64(conn, "to_ns", 0, INT64_MAX, &v) < 0)
		FOLD_BAD("bad parameter 'to_ns'");
	fa->f.to_ns = (uint64_t)v;
	if (!w)
		w = default_weight;
	if (pe_weight_parse(w, &fa->by_samples, &fa->f.measure) < 0)
		FOLD_BAD("bad parameter 'weight' (samples, period, offcpu or wall)");
	fa->f.with_pid = http_arg(conn, "with_pid") != NULL;
	fa->f.with_tid = http_arg(conn, "with_tid") != NULL;
	fa->f.kernel = http_arg(conn, "kernel") != NULL;
	return 0;
}

int http_tree_args_parse(api *a, struct MHD_Connection *conn, int64_t id, http_fold_args *fa,
			 int64_t *max_nodes, MHD_Result_t *ret)
{
	*max_nodes = 0;
	if (http_fold_args_parse(a, conn, fa, "period", ret) < 0 ||
	    http_measure_check(a, conn, id, fa, ret) < 0)
		return -1;
	/* opt-in: the default answer is every node (each leaf path = its
	 * collapsed count) */
	if (http_arg_i64(conn, "max_nodes", 1, INT32_MAX, max_nodes) < 0) {
		*ret = http_reply_error(a, conn, 400, "bad parameter 'max_nodes' (1..%d)", INT32_MAX);
		return -1;
	}
	fa->f.max_nodes = (size_t)*max_nodes;
	return 0;
}

/* ---- the answer cache ------------------------------------------------------- */

/*
 * Per-profile answers are kept under a key naming the endpoint, the profile,
 * its generation (a new parse makes new keys) and every parameter. OUT: key;
 * returns 0, or 1 when the profile is not ready (nothing is cached then).
 */
int http_answer_key(api *a, const char *endpoint, int64_t id, const http_fold_args *fa,
		      int64_t extra, char key[API_KEY_LEN])
{
	int64_t gen;
	const char *ev = fa && fa->f.event ? fa->f.event : "";
	const char *comm = fa && fa->f.comm ? fa->f.comm : "";
	int n;

	if (!a->qc || st_profile_generation(a->st, id, &gen) != 0)
		return 1;
	if (!fa) {
		n = snprintf(key, API_KEY_LEN, "%s|%lld|%lld|%lld", endpoint, (long long)id,
			     (long long)gen, (long long)extra);
	} else {
		/* strings with their lengths: no two parameter sets share a key */
		n = snprintf(key, API_KEY_LEN, "%s|%lld|%lld|%lld|%zu:%s|%zu:%s|%lld|%lld|%llu|%llu|"
			     "%d%d%d%d%d", endpoint, (long long)id, (long long)gen, (long long)extra,
			     strlen(ev), ev, strlen(comm), comm, (long long)fa->f.pid,
			     (long long)fa->f.tid, (unsigned long long)fa->f.from_ns,
			     (unsigned long long)fa->f.to_ns, fa->by_samples, fa->f.with_pid,
			     fa->f.with_tid, fa->f.kernel, fa->f.measure);
	}
	return n < 0 || n >= API_KEY_LEN;
}

/* The kept answer for key, queued; 0 when there is none.
 * With `claimed`, a request finding the same answer being computed by
 * another waits for it (up to API_CLAIM_WAIT_S) instead of computing it
 * again; *claimed = 1 then says this request must end its claim. */
int http_reply_kept(api *a, struct MHD_Connection *conn, const char *key, const char *type,
		      MHD_Result_t *ret, int *claimed)
{
	qc_answer *ans = claimed ? qc_get_or_claim(a->qc, key, API_CLAIM_WAIT_S, claimed) :
				   qc_get(a->qc, key);

	if (!ans) {
		atomic_fetch_add(&a->answers_computed, 1);
		return 0;
	}
	atomic_fetch_add(&a->answers_kept, 1);
	*ret = http_reply_answer(a, conn, 200, ans, type);
	return 1;
}
