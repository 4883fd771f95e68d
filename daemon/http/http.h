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
 *   many.c       /api/v1/query/..., /api/v1/series; the selector parameters
 *   health.c     /healthz, /metrics
 *   static.c     the web page's files
 *   debuginfo.c  /api/v1/debuginfo/..., /api/v1/profiles/{id}/resymbolize
 *   respond.c    answers and parameters (lib/jsonbuf.c: JSON text without jansson)
 *   prepare.c    the flame graphs first asked, made as a parse finishes
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

#include "http/access.h"
#include "http/api.h"
#include "http/deadline.h"
#include "http/debuginfo.h"
#include "http/hpool.h"
#include "http/params.h"
#include "http/qcache.h"
#include "http/tokens.h"
#include "intake/upload.h"
#include "symbols/code.h"

#define API_MAX_LIST 1000
#define API_PREFIX "/api/v1/profiles"
#define API_QCACHE_BYTES ((size_t)256 << 20)	/* query answers kept */
#define API_KEY_LEN 1024
/* libmicrohttpd's event-loop threads: they only move bytes, handlers that
 * may block run in the hpool */
#define API_IO_THREADS 4
/* descriptors beyond the connections: spool files, the database, logs */
#define API_SPARE_FDS 128
/* nodes a /diff keeps of each side (the largest): what bounds its memory */
#define API_DIFF_MAX_NODES 100000
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
	atomic_ullong answers_prepared;	/* made as parses finished, kept in qc */
	int preparing;		/* the store's prepare hook is ours (prepare.c) */
	atomic_uint streams;	/* streamed uploads under way */
	code_finder *code;	/* /annotate's binaries and sources */
	acc_policy acc;		/* Origin and Host checks */
	hpool *pool;		/* handler threads */
	hd_watch *hd;		/* the request headers' deadline */
};

enum req_kind { REQ_PLAIN, REQ_UPLOAD, REQ_DEBUGINFO, REQ_BODY };
enum req_phase { PHASE_READING, PHASE_RUNNING, PHASE_ANSWERED, PHASE_DONE };

/* The largest request body kept whole (a PATCH's JSON) */
#define API_MAX_BODY (64u * 1024)

/* Per-request state, kept in MHD's con_cls. */
typedef struct req {
	int kind;
	int phase;		/* enum req_phase */
	const char *url, *method;	/* MHD's, valid for the request */
	intake_upload *up;	/* REQ_UPLOAD */
	int stream;		/* a streamed upload, counted in api.streams */
	void *dbg;		/* debuginfo.c's state */
	char *body;		/* REQ_BODY: the body so far, NUL-terminated */
	size_t body_len;
	int body_too_large;
	/* run in a handler thread (server.c): the answer waits here until
	 * the connection is resumed */
	api *a;
	struct MHD_Connection *conn;
	hpool_job job;
	struct MHD_Response *resp;
	unsigned status;
	int close;		/* the handler said MHD_NO: close the connection */
} req;

/* Queues r with the status (or, in a handler thread, keeps it for when the
 * connection resumes) with the security headers every answer carries.
 * Takes r (NULL: out of memory, MHD_NO). */
MHD_Result_t http_queue(struct MHD_Connection *conn, unsigned status, struct MHD_Response *r);
/* Content-Security-Policy (the page has no inline script or style),
 * nosniff, no framing, no referrer. */
void http_security_headers(struct MHD_Response *r);

/* ---- routes (routes.c) ------------------------------------------------------- */

enum http_route_kind {
	ROUTE_PLAIN,		/* answered by fn or fn_id */
	ROUTE_UPLOAD,		/* the body streamed to intake/ (profiles.c) */
	ROUTE_BODY,		/* a small JSON body read whole, then fn_body */
	ROUTE_DEBUGINFO,	/* debuginfo.c reads the request itself */
};

/* Where a route's last step runs (server.c, api.h): in a handler thread,
 * light or heavy (time and memory grow with a profile: at most
 * --max-queries at once), or at once in the event loop (never blocks). */
enum http_route_run { RUN_LIGHT = 0, RUN_HEAVY, RUN_INLINE };

typedef struct http_route {
	const char *method;	/* a GET route answers HEAD too */
	const char *path;	/* '/'-separated: literal, {id} (a profile id), {build_id} */
	int kind;		/* enum http_route_kind */
	MHD_Result_t (*fn)(api *a, struct MHD_Connection *conn);
	MHD_Result_t (*fn_id)(api *a, struct MHD_Connection *conn, int64_t id);
	MHD_Result_t (*fn_body)(api *a, struct MHD_Connection *conn, int64_t id,
				const char *body, size_t len);
	int run;		/* enum http_route_run */
	/* the query parameters it takes (NULL-terminated; docs/openapi.json
	 * describes the same): any other is a 400 before the handler runs.
	 * NULL: not checked (the page, and what debuginfo.c reads itself). */
	const char *const *params;
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
/* 503 with Retry-After: --max-queries heavy queries are running. */
MHD_Result_t http_reply_busy(api *a, struct MHD_Connection *conn);
/* http_reply with n more headers. Takes body. */
MHD_Result_t http_reply_headers(api *a, struct MHD_Connection *conn, unsigned status, char *body,
				size_t len, const char *type, const char *const *names,
				const char *const *values, size_t n);
/* A 200 answer streamed from an open regular file of `size` bytes, with
 * a Content-Disposition unless NULL (static.c). Takes fd. */
MHD_Result_t http_reply_fd(api *a, struct MHD_Connection *conn, int fd, uint64_t size,
			   const char *type, const char *disposition);

/* ---- query parameters (params.h; a 400 queued by respond.c) ------------------- */

/* 0 when every query parameter of the request is one of `accepted`
 * (NULL-terminated); else -1 with a 400 answer queued (*ret) that names the
 * unknown parameter and the accepted ones. */
int http_params_check(api *a, struct MHD_Connection *conn, const char *const *accepted,
		      MHD_Result_t *ret);

/* The parameters of the folded-stack questions (http_fold_args_parse),
 * for the routes' lists of the parameters they take (routes.c): the
 * filters, and the first frame's form where the answer has one. */
#define HTTP_FILTER_PARAMS "event", "comm", "pid", "tid", "from_ns", "to_ns", "weight", "kernel"
#define HTTP_FOLD_PARAMS HTTP_FILTER_PARAMS, "with_pid", "with_tid"
/* The weight's name ("samples", "period", "offcpu", "wall"). */
const char *http_weight_name(const http_fold_args *fa);
/* With weight offcpu or wall: 0 when the profile has what it needs, else
 * -1 and a 400 (why not), 404 or 500 queued (its result in *ret). */
int http_measure_check(api *a, struct MHD_Connection *conn, int64_t id,
		       const http_fold_args *fa, MHD_Result_t *ret);
/* 0, or -1 when a 400 answer was queued (its result in *ret). */
int http_fold_args_parse(api *a, struct MHD_Connection *conn, http_fold_args *fa,
			 MHD_Result_t *ret);
/* Makes fa->f.event the event profile `id` answers with: the one the event
 * parameter names, or the profile's default (st_event_pick). 0, or -1 with
 * the answer queued (*ret): 404 not ready, 400 naming the profile's events
 * when none answers to the parameter. */
int http_fold_event(api *a, struct MHD_Connection *conn, int64_t id, http_fold_args *fa,
		    MHD_Result_t *ret);
/* fa->f.event = the event st_event_pick named (NULL: none has samples).
 * 0, or -1 when the name is too long for fa. */
int http_fold_event_set(http_fold_args *fa, const char *name);

/* The parameters of a tree answer (/flamegraph, /sandwich): the filters,
 * the event resolved (http_fold_event), the weight checked against the
 * profile, and
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

/* The profiles a question about many is about: PREFIXq (a selector),
 * PREFIXsince, PREFIXuntil (RFC 3339, a duration back from now, unix
 * seconds), PREFIXlimit (the newest N; not with HTTP_PICK_NO_LIMIT, where
 * limit means something else) and, with HTTP_PICK_ID, the id PREFIX names
 * without its "_" ("base" for "base_"). */
#define HTTP_PICK_ID 1
#define HTTP_PICK_NO_LIMIT 2
typedef struct http_pick {
	st_pick pick;
	pe_sel *sel;		/* owned */
	int given;		/* the selector or the id was there */
} http_pick;
/* 0, or -1 when a 400 answer was queued (naming the selector's position). */
int http_pick_parse(api *a, struct MHD_Connection *conn, const char *prefix, int flags,
		    http_pick *hp, MHD_Result_t *ret);
void http_pick_free(http_pick *hp);
/* The answer to a failed st_query_* or st_rdiff (its return value). */
MHD_Result_t http_many_error(api *a, struct MHD_Connection *conn, int rc);

/* ---- answers made as a parse finishes (prepare.c) ------------------------------ */

/* The store's prepare hook: the flame graphs a profile is first asked for
 * go into the answer cache the moment it is ready. Stop before qc goes. */
void http_prepare_start(api *a);
void http_prepare_stop(api *a);

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

/* many.c */
MHD_Result_t http_query_flamegraph(api *a, struct MHD_Connection *conn);
MHD_Result_t http_query_collapsed(api *a, struct MHD_Connection *conn);
/* formats.c: the picked profiles as one pprof profile */
MHD_Result_t http_query_pprof(api *a, struct MHD_Connection *conn);
MHD_Result_t http_query_top(api *a, struct MHD_Connection *conn);
MHD_Result_t http_query_timeline(api *a, struct MHD_Connection *conn);
MHD_Result_t http_get_series(api *a, struct MHD_Connection *conn);

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
