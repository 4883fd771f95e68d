/*
 * http.h - what the files of daemon/http/ share (internal to the folder):
 * the server's state, the request state, answering (JSON, text, kept and
 * compressed answers), query parameters, and the handlers the router in
 * server.c calls, one file per group of endpoints:
 *
 *   routes.c     the table of routes, and finding a request's route
 *   profiles.c   POST/GET /api/v1/profiles, GET/PATCH/DELETE /api/v1/profiles/{id}
 *   queries.c    /collapsed, /flamegraph, /top, /timeline, /threads of one profile
 *   formats.c    /pprof, /speedscope, /perf.data of one profile
 *   openapi.c    /api/v1/openapi.json
 *   views.c      /sandwich (callers and callees), /annotate of one profile
 *   compare.c    /api/v1/diff, /api/v1/aggregate
 *   health.c     /healthz, /metrics
 *   static.c     the web page's files
 *   debuginfo.c  /api/v1/debuginfo/..., /api/v1/profiles/{id}/resymbolize
 *   respond.c    answers and parameters (lib/jsonbuf.c: JSON text without jansson)
 */
#ifndef PERFHUB_DAEMON_HTTP_H
#define PERFHUB_DAEMON_HTTP_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <microhttpd.h>

#include "http/api.h"
#include "http/debuginfo.h"
#include "http/qcache.h"
#include "http/tokens.h"
#include "intake/upload.h"
#include "symbols/code.h"

#define API_MAX_TAGS 32
#define API_MAX_LIST 1000
#define API_PREFIX "/api/v1/profiles"
#define API_QCACHE_BYTES ((size_t)256 << 20)	/* query answers kept */
#define API_KEY_LEN 1024
/* longest wait for an answer another request is computing */
#define API_CLAIM_WAIT_S 120
/* A streamed upload (chunked, no Content-Length: perfhub record, perfhub
 * upload -) comes as perf writes it, and a quiet program writes nothing for
 * a while: such a body may be idle this long (or the connection timeout, if
 * longer) and has no minimum rate. What bounds it instead: at most
 * API_MAX_STREAMS at once; the next one is answered 503. */
#define API_STREAM_IDLE_S 900
#define API_MAX_STREAMS 32

#if MHD_VERSION < 0x00097002
typedef int MHD_Result_t;
#else
typedef enum MHD_Result MHD_Result_t;
#endif

struct api {
	const cfg *c;
	st_store *st;
	jobs *j;
	struct MHD_Daemon *d;
	unsigned port;
	pthread_rwlock_t tok_lock;
	tokens *tok;		/* NULL: no --token-file, everything open */
	apid *dbg;		/* /api/v1/debuginfo/..., .../resymbolize */
	atomic_ullong uploads, duplicates, rejected;
	atomic_ullong by_status[6];	/* 2xx 3xx 4xx 5xx other */
	qcache *qc;		/* answers of per-profile queries (NULL: none) */
	atomic_ullong answers_kept, answers_computed;	/* served from qc, computed */
	atomic_uint streams;	/* streamed uploads under way */
	code_finder *code;	/* /annotate's binaries and sources */
};

enum req_kind { REQ_PLAIN, REQ_UPLOAD, REQ_DEBUGINFO, REQ_BODY };

/* The largest request body kept whole (a PATCH's JSON) */
#define API_MAX_BODY (64u * 1024)

/* Per-request state, kept in MHD's con_cls. */
typedef struct req {
	int kind;
	intake_upload *up;	/* REQ_UPLOAD */
	int stream;		/* a streamed upload, counted in api.streams */
	int refused;		/* a body to read and drop, then answer */
	void *dbg;		/* debuginfo.c's state */
	char *body;		/* REQ_BODY: the body so far, NUL-terminated */
	size_t body_len;
	int body_too_large;
} req;

/* ---- routes (routes.c) ------------------------------------------------------- */

enum http_route_kind {
	ROUTE_PLAIN,		/* answered by fn or fn_id */
	ROUTE_UPLOAD,		/* the body streamed to intake/ (profiles.c) */
	ROUTE_BODY,		/* a small JSON body read whole, then fn_body */
	ROUTE_DEBUGINFO,	/* debuginfo.c reads the request itself */
};

typedef struct http_route {
	const char *method;	/* a GET route answers HEAD too */
	const char *path;	/* '/'-separated: literal, {id} (a profile id), {build_id} */
	int kind;		/* enum http_route_kind */
	MHD_Result_t (*fn)(api *a, struct MHD_Connection *conn);
	MHD_Result_t (*fn_id)(api *a, struct MHD_Connection *conn, int64_t id);
	MHD_Result_t (*fn_body)(api *a, struct MHD_Connection *conn, int64_t id,
				const char *body, size_t len);
} http_route;

/* Every route the server answers (the static page's files aside). */
extern const http_route http_routes[];
extern const size_t http_nr_routes;
/* The route of this method and url (OUT: *id, the {id} segment), or NULL;
 * then `allowed` lists the methods the path takes ("" when none). */
const http_route *http_route_find(const char *method, const char *url, int64_t *id,
				  char *allowed, size_t allowed_len);

/* ---- answers (respond.c) ---------------------------------------------------- */

void http_count_status(api *a, unsigned status);
/* Queues a shared answer, compressed when the client takes it. Takes the
 * caller's reference to ans. */
MHD_Result_t http_reply_answer(api *a, struct MHD_Connection *conn, unsigned status,
			       qc_answer *ans, const char *type);
/* Takes body (malloc'ed). */
MHD_Result_t http_reply(api *a, struct MHD_Connection *conn, unsigned status, char *body,
			size_t len, const char *type);
MHD_Result_t http_reply_error(api *a, struct MHD_Connection *conn, unsigned status,
			      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A 200 answer, kept under key (if any) for the next request. Takes body. */
MHD_Result_t http_reply_keep(api *a, struct MHD_Connection *conn, char *body, size_t len,
			     const char *type, const char *key);
/* Takes the reference to j. */
MHD_Result_t http_reply_json(api *a, struct MHD_Connection *conn, unsigned status, json_t *j);
MHD_Result_t http_reply_json_keep(api *a, struct MHD_Connection *conn, json_t *j,
				  const char *key);
MHD_Result_t http_reply_empty(api *a, struct MHD_Connection *conn, unsigned status);
/* A 200 answer streamed from an open regular file of `size` bytes, with
 * a Content-Disposition unless NULL (static.c). Takes fd. */
MHD_Result_t http_reply_fd(api *a, struct MHD_Connection *conn, int fd, uint64_t size,
			   const char *type, const char *disposition);

/* ---- query parameters (respond.c) --------------------------------------------- */

const char *http_arg(struct MHD_Connection *conn, const char *name);
/* Parses an integer parameter; 0 ok (absent leaves *out), -1 bad. */
int http_arg_i64(struct MHD_Connection *conn, const char *name, int64_t min, int64_t max,
		 int64_t *out);

/* tag=KEY=VALUE parameters, at most API_MAX_TAGS. */
typedef struct http_tags {
	size_t n;
	const char *keys[API_MAX_TAGS], *values[API_MAX_TAGS];
	char *owned[API_MAX_TAGS];
	int bad;
} http_tags;
/* Fills *t (zeroed by the caller) from the request; t->bad on a bad one. */
void http_tags_get(struct MHD_Connection *conn, http_tags *t);
void http_tags_free(http_tags *t);

/* The filters every folded-stack query takes. weight is samples, period,
 * offcpu (f.measure PE_MEASURE_OFFCPU: nanoseconds switched out) or wall
 * (PE_MEASURE_WALL: on-CPU plus off-CPU nanoseconds). */
typedef struct http_fold_args {
	st_fold_filter f;
	int by_samples;		/* weight=samples */
} http_fold_args;
/* The weight's name ("samples", "period", "offcpu", "wall"). */
const char *http_weight_name(const http_fold_args *fa);
/* With weight offcpu or wall: 0 when the profile has what it needs, else
 * -1 and a 400 (why not), 404 or 500 queued (its result in *ret). */
int http_measure_check(api *a, struct MHD_Connection *conn, int64_t id,
		       const http_fold_args *fa, MHD_Result_t *ret);
/* 0, or -1 when a 400 answer was queued (its result in *ret). */
int http_fold_args_parse(api *a, struct MHD_Connection *conn, http_fold_args *fa,
			 const char *default_weight, MHD_Result_t *ret);

/* The parameters of a tree answer (/flamegraph, /sandwich): the filters,
 * default weight period, the weight checked against the profile, and
 * max_nodes (0 = every node; also in fa->f). 0, or -1 with the error
 * answer queued (*ret). */
int http_tree_args_parse(api *a, struct MHD_Connection *conn, int64_t id, http_fold_args *fa,
			 int64_t *max_nodes, MHD_Result_t *ret);

/* The answer cache key of a per-profile query. 0, or 1 when the profile is
 * not ready (nothing is kept then). */
int http_answer_key(api *a, const char *endpoint, int64_t id, const http_fold_args *fa,
		    int64_t extra, char key[API_KEY_LEN]);
/* 1 and the kept answer queued (*ret), or 0 when there is none. With
 * `claimed`, waits for an answer another request is computing; *claimed = 1
 * then says this request must end its claim (qc_unclaim). */
int http_reply_kept(api *a, struct MHD_Connection *conn, const char *key, const char *type,
		    MHD_Result_t *ret, int *claimed);

/* ---- handlers --------------------------------------------------------------- */

/* profiles.c: an upload's three steps, as MHD calls the access handler */
MHD_Result_t http_upload_begin(api *a, struct MHD_Connection *conn, req *r);
MHD_Result_t http_upload_data(api *a, struct MHD_Connection *conn, req *r, const char *data,
			      size_t *data_size);
MHD_Result_t http_upload_end(api *a, struct MHD_Connection *conn, req *r);
/* The request ended (answered or cut): a stream no longer counts. */
void http_upload_completed(api *a, req *r);
MHD_Result_t http_profiles_list(api *a, struct MHD_Connection *conn);
MHD_Result_t http_profile_get(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_profile_delete(api *a, struct MHD_Connection *conn, int64_t id);
/* PATCH: {"name": ..., "tags": {"k": "v" or null}} */
MHD_Result_t http_profile_patch(api *a, struct MHD_Connection *conn, int64_t id,
				const char *body, size_t len);

/* formats.c: one profile in other tools' formats, and its original bytes */
MHD_Result_t http_get_pprof(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_get_speedscope(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_get_perf_data(api *a, struct MHD_Connection *conn, int64_t id);

/* queries.c */
MHD_Result_t http_get_collapsed(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_get_flamegraph(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_get_top(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_get_timeline(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_get_threads(api *a, struct MHD_Connection *conn, int64_t id);

/* views.c: /sandwich and /annotate of one profile */
MHD_Result_t http_get_sandwich(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_get_annotate(api *a, struct MHD_Connection *conn, int64_t id);

/* compare.c */
MHD_Result_t http_get_diff(api *a, struct MHD_Connection *conn);
MHD_Result_t http_get_aggregate(api *a, struct MHD_Connection *conn);

/* health.c */
MHD_Result_t http_get_healthz(api *a, struct MHD_Connection *conn);
MHD_Result_t http_get_metrics(api *a, struct MHD_Connection *conn);

/* static.c */
MHD_Result_t http_get_static(api *a, struct MHD_Connection *conn, const char *url);
/* "/": the page's index.html */
MHD_Result_t http_get_page(api *a, struct MHD_Connection *conn);

/* openapi.c: GET /api/v1/openapi.json, the description of this API */
MHD_Result_t http_get_openapi(api *a, struct MHD_Connection *conn);

#endif
