/*
 * http.h - what the files of daemon/http/ share (internal to the folder):
 * the server's state, the request state, answering (JSON, text, kept and
 * compressed answers), query parameters, and the handlers the router in
 * server.c calls, one file per group of endpoints:
 *
 *   profiles.c   POST/GET /api/v1/profiles, GET/DELETE /api/v1/profiles/{id}
 *   queries.c    /collapsed, /flamegraph, /top, /timeline, /threads of one profile
 *   compare.c    /api/v1/diff, /api/v1/aggregate
 *   many.c       /api/v1/query/..., /api/v1/series; the selector parameters
 *   health.c     /healthz, /metrics
 *   static.c     the web page's files
 *   debuginfo.c  /api/v1/debuginfo/..., /api/v1/profiles/{id}/resymbolize
 *   respond.c    answers and parameters; jsonbuf.c JSON text without jansson
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
};

enum req_kind { REQ_PLAIN, REQ_UPLOAD, REQ_DEBUGINFO };

/* Per-request state, kept in MHD's con_cls. */
typedef struct req {
	int kind;
	intake_upload *up;	/* REQ_UPLOAD */
	int stream;		/* a streamed upload, counted in api.streams */
	int refused;		/* a body to read and drop, then answer */
	void *dbg;		/* debuginfo.c's state */
} req;

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
/* http_reply with n more headers. Takes body. */
MHD_Result_t http_reply_headers(api *a, struct MHD_Connection *conn, unsigned status, char *body,
				size_t len, const char *type, const char *const *names,
				const char *const *values, size_t n);

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

/* The filters every folded-stack query takes. */
typedef struct http_fold_args {
	st_fold_filter f;
	int by_samples;		/* weight=samples */
} http_fold_args;
/* 0, or -1 when a 400 answer was queued (its result in *ret). */
int http_fold_args_parse(api *a, struct MHD_Connection *conn, http_fold_args *fa,
			 const char *default_weight, MHD_Result_t *ret);

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
 * seconds), PREFIXlimit (the newest N) and, with_id, PREFIX-less-"_" id
 * ("base" for "base_"). */
typedef struct http_pick {
	st_pick pick;
	pe_sel *sel;		/* owned */
	int given;		/* the selector or the id was there */
} http_pick;
/* 0, or -1 when a 400 answer was queued (naming the selector's position). */
int http_pick_parse(api *a, struct MHD_Connection *conn, const char *prefix, int with_id,
		    http_pick *hp, MHD_Result_t *ret);
void http_pick_free(http_pick *hp);
/* The answer to a failed st_query_* or st_rdiff (its return value). */
MHD_Result_t http_many_error(api *a, struct MHD_Connection *conn, int rc);

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

/* queries.c */
MHD_Result_t http_get_collapsed(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_get_flamegraph(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_get_top(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_get_timeline(api *a, struct MHD_Connection *conn, int64_t id);
MHD_Result_t http_get_threads(api *a, struct MHD_Connection *conn, int64_t id);

/* compare.c */
MHD_Result_t http_get_diff(api *a, struct MHD_Connection *conn);
MHD_Result_t http_get_aggregate(api *a, struct MHD_Connection *conn);

/* many.c */
MHD_Result_t http_query_flamegraph(api *a, struct MHD_Connection *conn);
MHD_Result_t http_query_collapsed(api *a, struct MHD_Connection *conn);
MHD_Result_t http_query_top(api *a, struct MHD_Connection *conn);
MHD_Result_t http_query_timeline(api *a, struct MHD_Connection *conn);
MHD_Result_t http_get_series(api *a, struct MHD_Connection *conn);

/* health.c */
MHD_Result_t http_get_healthz(api *a, struct MHD_Connection *conn);
MHD_Result_t http_get_metrics(api *a, struct MHD_Connection *conn);

/* static.c */
MHD_Result_t http_get_static(api *a, struct MHD_Connection *conn, const char *url);

#endif
