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

static void answer_released(void *cls)
{
	qc_answer_release(cls);
}

/* Queues a shared answer: its zstd or gzip form when the client takes one
 * and the body is large enough to gain, else the plain bytes; no copy
 * either way; with nh more headers.
 * Takes the caller's reference to ans. */
static MHD_Result_t reply_answer(api *a, struct MHD_Connection *conn, unsigned status,
				 qc_answer *ans, const char *type, const char *const *names,
				 const char *const *values, size_t nh)
{
	size_t i;
	struct MHD_Response *r;
	const char *body = NULL;
	size_t len = 0, plain_len;
	const char *coding = NULL;
	qc_answer_body(ans, &plain_len);
	/* zstd where the client takes it (a fraction of gzip's time to make) */
	if (plain_len >= QC_GZIP_MIN && http_accepts(conn, "zstd") && (body = qc_answer_zstd(ans, &len)))
		coding = "zstd";
	else if (plain_len >= QC_GZIP_MIN && http_accepts(conn, "gzip") &&
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
	for (i = 0; i < nh; i++)
		MHD_add_response_header(r, names[i], values[i]);
	http_count_status(a, status);
	return http_queue(conn, status, r);
}

MHD_Result_t http_reply_answer(api *a, struct MHD_Connection *conn, unsigned status,
				 qc_answer *ans, const char *type)
{
	return reply_answer(a, conn, status, ans, type, NULL, NULL, 0);
}

MHD_Result_t http_reply_headers(api *a, struct MHD_Connection *conn, unsigned status, char *body,
				size_t len, const char *type, const char *const *names,
				const char *const *values, size_t n)
{
	qc_answer *ans = qc_answer_new(body, len);

	if (!ans)
		return http_reply_error(a, conn, 500, "out of memory");
	return reply_answer(a, conn, status, ans, type, names, values, n);
}

/* Takes body (malloc'ed). Large bodies go out compressed to clients that
 * take it. */
MHD_Result_t http_reply(api *a, struct MHD_Connection *conn, unsigned status, char *body,
			  size_t len, const char *type)
{
	struct MHD_Response *r;

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
	return http_queue(conn, status, r);
}

void http_security_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'none'; script-src 'self'; style-src 'self'; "
				"img-src 'self' data:; connect-src 'self'; form-action 'self'; "
				"base-uri 'none'; frame-ancestors 'none'");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
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

/* Seconds a client refused for load should wait before it asks again. */
#define API_RETRY_AFTER "2"

MHD_Result_t http_reply_busy(api *a, struct MHD_Connection *conn)
{
	char *s = NULL;
	struct MHD_Response *r;
	int n = asprintf(&s, "{\"error\":\"%u heavy queries are running (--max-queries); retry "
			 "in " API_RETRY_AFTER " s\"}", a->c->max_queries);

	if (n < 0)
		return MHD_NO;
	r = MHD_create_response_from_buffer((size_t)n, s, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Retry-After", API_RETRY_AFTER);
	http_count_status(a, 503);
	return http_queue(conn, 503, r);
}

MHD_Result_t http_reply_empty(api *a, struct MHD_Connection *conn, unsigned status)
{
	return http_reply(a, conn, status, NULL, 0, NULL);
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

int http_fold_args_parse(api *a, struct MHD_Connection *conn, http_fold_args *fa,
			 MHD_Result_t *ret)
{
	char why[HTTP_WHY_LEN];

	if (http_fold_args_read(conn, fa, why, sizeof(why)) == 0)
		return 0;
	*ret = http_reply_error(a, conn, 400, "%s", why);
	return -1;
}

int http_fold_event_set(http_fold_args *fa, const char *name)
{
	if (!name) {
		fa->f.event = NULL;	/* no samples at all: an empty answer */
		return 0;
	}
	if (strlen(name) >= sizeof(fa->event))
		return -1;
	strcpy(fa->event, name);
	fa->f.event = fa->event;
	return 0;
}

int http_fold_event(api *a, struct MHD_Connection *conn, int64_t id, http_fold_args *fa,
		    MHD_Result_t *ret)
{
	char *name = NULL, *names = NULL;
	const char *want = fa->f.event;
	int rc, ok = 0;

	/* the off-CPU weights have defaults of their own (the engine's) */
	if (!want && fa->f.measure != PE_MEASURE_PERIOD)
		return 0;
	rc = st_event_pick(a->st, id, want, &name, &names, &fa->gen);

	if (rc == 0 && http_fold_event_set(fa, name) == 0) {
		ok = 1;
	} else if (rc == 0) {
		*ret = http_reply_error(a, conn, 400, "the event's name is longer than %d bytes",
					HTTP_EVENT_MAX - 1);
	} else if (rc == 1) {
		*ret = http_reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
	} else if (rc == 2) {
		*ret = http_reply_error(a, conn, 400, "bad parameter 'event': profile %lld has no "
					"event '%.100s' (its events: %.300s)", (long long)id, want,
					names ? names : "none");
	} else {
		*ret = http_reply_error(a, conn, 500, "storage error");
	}
	free(name);
	free(names);
	return ok ? 0 : -1;
}

/* ---- unknown parameters ---------------------------------------------------- */

typedef struct param_scan {
	const char *const *accepted;
	char unknown[64];	/* the first unknown key, cut short */
	int found;
} param_scan;

static MHD_Result_t scan_param(void *cls, enum MHD_ValueKind kind, const char *key,
			       const char *value)
{
	param_scan *ps = cls;
	size_t i;

	(void)kind;
	(void)value;
	if (!*key)
		return MHD_YES;	/* "?&a=1": an empty piece, not a parameter */
	for (i = 0; ps->accepted[i]; i++)
		if (!strcmp(key, ps->accepted[i]))
			return MHD_YES;
	snprintf(ps->unknown, sizeof(ps->unknown), "%s", key);
	ps->found = 1;
	return MHD_NO;	/* one is enough */
}

int http_params_check(api *a, struct MHD_Connection *conn, const char *const *accepted,
		      MHD_Result_t *ret)
{
	param_scan ps = { accepted, "", 0 };
	char list[512] = "";
	size_t i, n = 0;

	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, scan_param, &ps);
	if (!ps.found)
		return 0;
	for (i = 0; accepted[i] && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", accepted[i]);
	*ret = http_reply_error(a, conn, 400, "unknown parameter '%s' (%s%s)", ps.unknown,
				accepted[0] ? "accepted: " : "this endpoint takes none",
				list);
	return -1;
}

int http_tree_args_parse(api *a, struct MHD_Connection *conn, int64_t id, http_fold_args *fa,
			 int64_t *max_nodes, MHD_Result_t *ret)
{
	*max_nodes = 0;
	if (http_fold_args_parse(a, conn, fa, ret) < 0 || http_fold_event(a, conn, id, fa, ret) < 0 ||
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

	if (!a->qc)
		return 1;
	/* the generation the event was resolved in saves a second look */
	if (fa && fa->gen)
		gen = fa->gen;
	else if (st_profile_generation(a->st, id, &gen) != 0)
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
