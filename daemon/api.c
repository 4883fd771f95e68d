/* api.c - HTTP routing and handlers over the store. */
#include "config.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "api.h"
#include "api-debuginfo.h"
#include "log.h"
#include "qcache.h"
#include "spool.h"
#include "tokens.h"

#define API_MAX_TAGS 32
#define API_MAX_LIST 1000
/* An upload must average at least this many bytes a second once it has
 * run for the connection timeout: a trickling client (1 byte/s) would
 * otherwise hold a thread and a spool file forever, never being idle. */
#define API_MIN_UPLOAD_RATE 1024
#define API_PREFIX "/api/v1/profiles"
#define API_QCACHE_BYTES ((size_t)256 << 20)	/* query answers kept */
#define API_KEY_LEN 1024
/* longest wait for an answer another request is computing */
#define API_CLAIM_WAIT_S 120

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
};

enum req_kind { REQ_PLAIN, REQ_UPLOAD, REQ_DEBUGINFO };

/* Per-request state, kept in MHD's con_cls. */
typedef struct req {
	int kind;
	sp_upload *up;
	int failed;		/* sp_write result once it went wrong */
	int is_tar;
	int encoding;		/* enum sp_encoding, for messages */
	double started;		/* monotonic seconds at the first body byte */
	uint64_t wire_bytes;	/* body bytes received, before decoding */
	void *dbg;		/* api-debuginfo.c's state */
} req;

/* ---- responses ------------------------------------------------------------ */

static void count_status(api *a, unsigned status)
{
	unsigned b = status / 100 - 2;

	atomic_fetch_add(&a->by_status[b < 4 ? b : 4], 1);
}

/* Whether the client takes a gzip body: "gzip", "x-gzip" or "*" in
 * Accept-Encoding, without q=0. */
static int accepts_gzip(struct MHD_Connection *conn)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding");
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
			if ((t == 4 && !strncasecmp(q, "gzip", 4)) ||
			    (t == 6 && !strncasecmp(q, "x-gzip", 6)) || (t == 1 && *q == '*')) {
				/* a weight of 0 means "not this one" */
				for (q = semi ? semi + 1 : NULL; q; q = strchr(q, ';') ? strchr(q, ';') + 1 : NULL) {
					q += strspn(q, " \t");
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

/* Queues a shared answer: its gzip form when the client takes gzip and the
 * body is large enough to gain, else the plain bytes; no copy either way.
 * Takes the caller's reference to ans. */
static MHD_Result_t reply_answer(api *a, struct MHD_Connection *conn, unsigned status,
				 qc_answer *ans, const char *type)
{
	struct MHD_Response *r;
	const char *body = NULL;
	size_t len = 0, plain_len;
	int gz = 0;
	MHD_Result_t rc;

	qc_answer_body(ans, &plain_len);
	if (plain_len >= QC_GZIP_MIN && accepts_gzip(conn) && (body = qc_answer_gzip(ans, &len)))
		gz = 1;
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
	if (gz)
		MHD_add_response_header(r, "Content-Encoding", "gzip");
	count_status(a, status);
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* Takes body (malloc'ed). Large bodies go out gzip'ed to clients that
 * take it. */
static MHD_Result_t reply(api *a, struct MHD_Connection *conn, unsigned status, char *body,
			  size_t len, const char *type)
{
	struct MHD_Response *r;
	MHD_Result_t rc;

	if (len >= QC_GZIP_MIN) {
		qc_answer *ans = qc_answer_new(body, len);
		return ans ? reply_answer(a, conn, status, ans, type) : MHD_NO;
	}
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (type)
		MHD_add_response_header(r, "Content-Type", type);
	count_status(a, status);
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

static MHD_Result_t reply_error(api *a, struct MHD_Connection *conn, unsigned status,
				const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A 200 answer, kept under key (if any) for the next request. Takes body. */
static MHD_Result_t reply_keep(api *a, struct MHD_Connection *conn, char *body, size_t len,
			       const char *type, const char *key)
{
	qc_answer *ans = qc_answer_new(body, len);

	if (!ans)
		return reply_error(a, conn, 500, "out of memory");
	if (key)
		qc_put(a->qc, key, ans);
	return reply_answer(a, conn, 200, ans, type);
}

/* Takes the reference to j. */
static MHD_Result_t reply_json(api *a, struct MHD_Connection *conn, unsigned status, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	if (!s)
		return reply(a, conn, 500, strdup("{\"error\":\"out of memory\"}"), 25,
			     "application/json");
	return reply(a, conn, status, s, strlen(s), "application/json");
}

/* reply_json for a 200 answer that is also kept under key (if any). */
static MHD_Result_t reply_json_keep(api *a, struct MHD_Connection *conn, json_t *j,
				    const char *key)
{
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	if (!s)
		return reply(a, conn, 500, strdup("{\"error\":\"out of memory\"}"), 25,
			     "application/json");
	return reply_keep(a, conn, s, strlen(s), "application/json", key);
}

static MHD_Result_t reply_error(api *a, struct MHD_Connection *conn, unsigned status,
				const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static MHD_Result_t reply_error(api *a, struct MHD_Connection *conn, unsigned status,
				const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return reply_json(a, conn, status, json_pack("{s:s}", "error", msg));
}

static MHD_Result_t reply_empty(api *a, struct MHD_Connection *conn, unsigned status)
{
	return reply(a, conn, status, NULL, 0, NULL);
}

/* ---- query parameters ------------------------------------------------------ */

static const char *arg(struct MHD_Connection *conn, const char *name)
{
	return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
}

/* Parses an integer parameter; 0 ok (absent leaves *out), -1 bad. */
static int arg_i64(struct MHD_Connection *conn, const char *name, int64_t min, int64_t max,
		   int64_t *out)
{
	const char *v = arg(conn, name);
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

typedef struct tag_args {
	size_t n;
	const char *keys[API_MAX_TAGS], *values[API_MAX_TAGS];
	char *owned[API_MAX_TAGS];
	int bad;
} tag_args;

static MHD_Result_t collect_tag(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	tag_args *t = cls;
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

static void tags_free(tag_args *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->owned[i]);
}

/* ---- intake ------------------------------------------------------------------ */

int api_intake(st_store *st, jobs *j, unsigned queue_size, const char *sha256,
	       const char *path, const char *kind, uint64_t size, const char *name,
	       size_t nr_tags, const char *const *keys, const char *const *values, int64_t *id,
	       int *existed)
{
	st_new_profile p = { sha256, name, kind, path, size, nr_tags, keys, values };
	st_counts c;

	if (st_counts_get(st, &c) < 0)
		return -1;
	if (c.queued >= (int64_t)queue_size) {
		/* a duplicate is still answered; only new work is refused */
		int rc = st_profile_by_sha(st, sha256, id);
		if (rc < 0)
			return -1;
		*existed = rc == 0;
		return rc == 0 ? 0 : -2;
	}
	if (st_profile_add(st, &p, id, existed) < 0)
		return -1;
	if (!*existed && j)
		jobs_notify(j);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The answer to an upload the spool refused (enum sp_result rc). */
static MHD_Result_t upload_failed(api *a, struct MHD_Connection *conn, req *r, int rc)
{
	const char *enc = r->encoding == SP_GZIP ? "gzip" : "zstd";

	/* the partial file goes before the answer does: a client that sees
	 * the error finds no trace of its upload in the spool */
	sp_abort(r->up);
	r->up = NULL;
	atomic_fetch_add(&a->rejected, 1);
	switch (rc) {
	case SP_ERR_TOO_LARGE:
		return reply_error(a, conn, 413, "upload exceeds the limit of %llu bytes",
				   (unsigned long long)a->c->max_upload);
	case SP_ERR_ENCODING:
		return reply_error(a, conn, 400, "the %s stream is corrupt or truncated", enc);
	case SP_ERR_FULL:
		log_warn("msg=\"spool full\" dir=\"%s\"", a->c->spool_dir);
		return reply_error(a, conn, 507, "no space left for uploads; retry later");
	default:
		log_warn("msg=\"spool\" error=\"%s\"", strerror(errno));
		return reply_error(a, conn, 500, "cannot write to the spool");
	}
}

static MHD_Result_t upload_begin(api *a, struct MHD_Connection *conn, req *r)
{
	const char *len = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	const char *enc = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Encoding");
	const char *type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	int encoding = SP_IDENTITY;

	/* refuse before reading a byte of the body */
	if (len && !enc && strtoull(len, NULL, 10) > a->c->max_upload) {
		atomic_fetch_add(&a->rejected, 1);
		return reply_error(a, conn, 413, "upload of %s bytes exceeds the limit of %llu",
				   len, (unsigned long long)a->c->max_upload);
	}
	if (enc && !strcasecmp(enc, "zstd"))
		encoding = SP_ZSTD;
	else if (enc && (!strcasecmp(enc, "gzip") || !strcasecmp(enc, "x-gzip")))
		encoding = SP_GZIP;
	else if (enc && strcasecmp(enc, "identity"))
		return reply_error(a, conn, 415,
				   "unsupported Content-Encoding '%s' (use zstd or gzip)", enc);
	r->is_tar = type && !strncasecmp(type, "application/x-tar", 17);
	r->encoding = encoding;
	r->up = sp_begin(a->c->spool_dir, encoding, a->c->max_upload);
	if (!r->up)
		return upload_failed(a, conn, r, errno == ENOSPC || errno == EDQUOT ?
				     SP_ERR_FULL : SP_ERR_IO);
	r->kind = REQ_UPLOAD;
	r->started = now_s();
	return MHD_YES;
}

/* More body bytes: spooled, or dropped after a failure. MHD_NO cuts the
 * connection of a client too slow to be anything but stuck or hostile. */
static MHD_Result_t upload_data(api *a, struct MHD_Connection *conn, req *r, const char *data,
				size_t *data_size)
{
	double t = now_s() - r->started;

	(void)conn;
	r->wire_bytes += *data_size;
	if (t > a->c->connection_timeout && r->wire_bytes < t * API_MIN_UPLOAD_RATE) {
		log_warn("msg=\"upload too slow\" bytes=%llu seconds=%.0f",
			 (unsigned long long)r->wire_bytes, t);
		atomic_fetch_add(&a->rejected, 1);
		return MHD_NO;	/* on_completed removes the partial spool file */
	}
	/* after a failure the rest of the body is read and dropped:
	 * this MHD cannot answer in the middle of an upload */
	if (!r->failed && (r->failed = sp_write(r->up, data, *data_size)) != SP_OK) {
		/* the partial file goes now, not when the connection ends */
		sp_abort(r->up);
		r->up = NULL;
	}
	*data_size = 0;
	return MHD_YES;
}

static MHD_Result_t upload_end(api *a, struct MHD_Connection *conn, req *r)
{
	char sha[65], *path = NULL;
	uint64_t size = 0;
	tag_args tags = { 0 };
	const char *kind = r->is_tar ? "tar" : "file";
	int64_t id = 0;
	int existed = 0, rc;
	MHD_Result_t ret;

	rc = sp_finish(r->up, kind, sha, &size, &path);
	r->up = NULL;
	if (rc != SP_OK)
		return upload_failed(a, conn, r, rc);
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_tag, &tags);
	if (tags.bad) {
		tags_free(&tags);
		free(path);
		return reply_error(a, conn, 400, "bad tag: want tag=KEY=VALUE (at most %d)",
				   API_MAX_TAGS);
	}
	rc = api_intake(a->st, a->j, a->c->queue_size, sha, path, kind, size, arg(conn, "name"),
			tags.n, tags.keys, tags.values, &id, &existed);
	tags_free(&tags);
	if (rc == -2) {
		/* the spooled bytes belong to no profile */
		sp_remove(path);
		free(path);
		return reply_error(a, conn, 503, "the job queue is full; retry later");
	}
	if (rc < 0) {
		free(path);
		return reply_error(a, conn, 500, "storage error");
	}
	atomic_fetch_add(existed ? &a->duplicates : &a->uploads, 1);
	log_info("msg=\"upload\" id=%lld sha256=%s bytes=%llu kind=%s duplicate=%d",
		 (long long)id, sha, (unsigned long long)size, kind, existed);
	free(path);
	ret = reply_json(a, conn, existed ? 200 : 202,
			 json_pack("{s:I,s:s,s:s,s:I}", "id", (json_int_t)id, "status",
				   existed ? "exists" : "queued", "sha256", sha, "size",
				   (json_int_t)size));
	return ret;
}

/* ---- profiles ------------------------------------------------------------------ */

static MHD_Result_t list_profiles(api *a, struct MHD_Connection *conn)
{
	st_list_filter f = { .limit = 100, .offset = 0, .status = -1 };
	tag_args tags = { 0 };
	const char *s;
	json_t *out;

	if (arg_i64(conn, "limit", 0, API_MAX_LIST, &f.limit) < 0)
		return reply_error(a, conn, 400, "bad parameter 'limit' (0..%d)", API_MAX_LIST);
	if (arg_i64(conn, "offset", 0, INT64_MAX, &f.offset) < 0)
		return reply_error(a, conn, 400, "bad parameter 'offset'");
	if (arg_i64(conn, "since", 0, INT64_MAX, &f.since) < 0)
		return reply_error(a, conn, 400, "bad parameter 'since' (unix seconds)");
	if (arg_i64(conn, "until", 0, INT64_MAX, &f.until) < 0)
		return reply_error(a, conn, 400, "bad parameter 'until' (unix seconds)");
	if ((s = arg(conn, "status")) && (f.status = st_status_parse(s)) < 0)
		return reply_error(a, conn, 400,
				   "bad parameter 'status' (queued, parsing, ready, failed)");
	f.hostname = arg(conn, "hostname");
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_tag, &tags);
	if (tags.bad || tags.n > 1) {
		tags_free(&tags);
		return reply_error(a, conn, 400, "bad parameter 'tag' (one tag=KEY=VALUE)");
	}
	if (tags.n) {
		f.tag_key = tags.keys[0];
		f.tag_value = tags.values[0];
	}
	out = st_profile_list_json(a->st, &f);
	tags_free(&tags);
	if (!out)
		return reply_error(a, conn, 500, "storage error");
	return reply_json(a, conn, 200, out);
}

static MHD_Result_t get_profile(api *a, struct MHD_Connection *conn, int64_t id)
{
	int notfound = 0;
	json_t *o = st_profile_json(a->st, id, &notfound);

	if (notfound)
		return reply_error(a, conn, 404, "no profile %lld", (long long)id);
	if (!o)
		return reply_error(a, conn, 500, "storage error");
	return reply_json(a, conn, 200, o);
}

static MHD_Result_t delete_profile(api *a, struct MHD_Connection *conn, int64_t id)
{
	char *path = NULL;
	int rc = st_profile_delete(a->st, id, &path);

	if (rc == 1)
		return reply_error(a, conn, 404, "no profile %lld", (long long)id);
	if (rc < 0)
		return reply_error(a, conn, 500, "storage error");
	if (path)
		sp_remove(path);
	log_info("msg=\"delete\" id=%lld", (long long)id);
	free(path);
	return reply_empty(a, conn, 204);
}

/* ---- folded stacks: collapsed text and the flame graph tree ------------------ */

typedef struct fold_args {
	st_fold_filter f;
	int by_samples;		/* weight=samples */
} fold_args;

#define FOLD_BAD(...) do { *ret = reply_error(a, conn, 400, __VA_ARGS__); return -1; } while (0)
/* 0, or -1 when a 400 answer was queued (its result in *ret). */
static int parse_fold_args(api *a, struct MHD_Connection *conn, fold_args *fa,
			   const char *default_weight, MHD_Result_t *ret)
{
	const char *w = arg(conn, "weight");
	int64_t v;

	memset(fa, 0, sizeof(*fa));
	fa->f.pid = fa->f.tid = -1;
	fa->f.event = arg(conn, "event");
	fa->f.comm = arg(conn, "comm");
	if (arg_i64(conn, "pid", 0, UINT32_MAX, &fa->f.pid) < 0)
		FOLD_BAD("bad parameter 'pid'");
	if (arg_i64(conn, "tid", 0, UINT32_MAX, &fa->f.tid) < 0)
		FOLD_BAD("bad parameter 'tid'");
	v = 0;
	if (arg_i64(conn, "from_ns", 0, INT64_MAX, &v) < 0)
		FOLD_BAD("bad parameter 'from_ns'");
	fa->f.from_ns = (uint64_t)v;
	v = 0;
	if (arg_i64(conn, "to_ns", 0, INT64_MAX, &v) < 0)
		FOLD_BAD("bad parameter 'to_ns'");
	fa->f.to_ns = (uint64_t)v;
	if (!w)
		w = default_weight;
	if (!strcmp(w, "samples"))
		fa->by_samples = 1;
	else if (strcmp(w, "period"))
		FOLD_BAD("bad parameter 'weight' (samples or period)");
	fa->f.with_pid = arg(conn, "with_pid") != NULL;
	fa->f.with_tid = arg(conn, "with_tid") != NULL;
	fa->f.kernel = arg(conn, "kernel") != NULL;
	return 0;
}

/*
 * Per-profile answers are kept under a key naming the endpoint, the profile,
 * its generation (a new parse makes new keys) and every parameter. OUT: key;
 * returns 0, or 1 when the profile is not ready (nothing is cached then).
 */
static int answer_key(api *a, const char *endpoint, int64_t id, const fold_args *fa,
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
			     "%d%d%d%d", endpoint, (long long)id, (long long)gen, (long long)extra,
			     strlen(ev), ev, strlen(comm), comm, (long long)fa->f.pid,
			     (long long)fa->f.tid, (unsigned long long)fa->f.from_ns,
			     (unsigned long long)fa->f.to_ns, fa->by_samples, fa->f.with_pid,
			     fa->f.with_tid, fa->f.kernel);
	}
	return n < 0 || n >= API_KEY_LEN;
}

/* The kept answer for key, queued; 0 when there is none. */
/* With `claimed`, a request finding the same answer being computed by
 * another waits for it (up to API_CLAIM_WAIT_S) instead of computing it
 * again; *claimed = 1 then says this request must end its claim. */
static int reply_kept(api *a, struct MHD_Connection *conn, const char *key, const char *type,
		      MHD_Result_t *ret, int *claimed)
{
	qc_answer *ans = claimed ? qc_get_or_claim(a->qc, key, API_CLAIM_WAIT_S, claimed) :
				   qc_get(a->qc, key);

	if (!ans) {
		atomic_fetch_add(&a->answers_computed, 1);
		return 0;
	}
	atomic_fetch_add(&a->answers_kept, 1);
	*ret = reply_answer(a, conn, 200, ans, type);
	return 1;
}

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
				     const fold_args *fa, const char *key)
{
	textbuf b = { 0 };
	int rc;

	b.by_samples = fa->by_samples;
	rc = st_fold(a->st, id, &fa->f, collapsed_line, &b);
	if (rc == 1) {
		free(b.p);
		return reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
	}
	if (rc < 0 || b.oom) {
		free(b.p);
		return reply_error(a, conn, 500, "storage error");
	}
	if (!b.p)
		b.p = strdup("");
	if (!b.p)
		return reply_error(a, conn, 500, "out of memory");
	return reply_keep(a, conn, b.p, b.len, "text/plain; charset=utf-8", key);
}

static MHD_Result_t get_collapsed(api *a, struct MHD_Connection *conn, int64_t id)
{
	static const char type[] = "text/plain; charset=utf-8";
	fold_args fa;
	MHD_Result_t ret;
	char key[API_KEY_LEN];
	int keep, claimed = 0;

	if (parse_fold_args(a, conn, &fa, "period", &ret) < 0)
		return ret;
	keep = answer_key(a, "collapsed", id, &fa, 0, key) == 0;
	if (keep && reply_kept(a, conn, key, type, &ret, &claimed))
		return ret;
	ret = collapsed_answer(a, conn, id, &fa, keep ? key : NULL);
	if (claimed)
		qc_unclaim(a->qc, key);
	return ret;
}

typedef struct obuf {
	char *p;
	size_t len, cap;
	int oom;
} obuf;

static void ob_add(obuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 65536;
		char *p;
		while (ncap < b->len + n + 1)
			ncap *= 2;
		if (!(p = realloc(b->p, ncap))) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* Length of the valid UTF-8 sequence at s (of at most n bytes), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t k, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, c = s[0] & 0x07;
	else
		return 0;
	if (k > n)
		return 0;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((k == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (k == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return k;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void ob_json_str(obuf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0;

	/* most names are printable ASCII: one copy */
	while (i < n && u[i] >= 0x20 && u[i] < 0x80 && u[i] != '"' && u[i] != '\\')
		i++;
	if (i == n && !b->oom && b->len + n + 3 <= b->cap) {
		b->p[b->len] = '"';
		memcpy(b->p + b->len + 1, s, n);
		b->p[b->len + n + 1] = '"';
		b->len += n + 2;
		return;
	}
	i = 0;
	ob_add(b, "\"", 1);
	while (i < n) {
		size_t k = utf8_len(u + i, n - i);
		if (k && u[i] >= 0x20 && u[i] != '"' && u[i] != '\\') {
			i += k;
			run += k;
			continue;
		}
		ob_add(b, s + i - run, run);
		run = 0;
		if (!k) {
			ob_add(b, "\\ufffd", 6);
		} else if (u[i] == '"' || u[i] == '\\') {
			char e[2] = { '\\', (char)u[i] };
			ob_add(b, e, 2);
		} else {
			char e[8];
			snprintf(e, sizeof(e), "\\u%04x", u[i]);
			ob_add(b, e, 6);
		}
		i += k ? k : 1;
	}
	ob_add(b, s + i - run, run);
	ob_add(b, "\"", 1);
}

/* The store's depth-first tree as JSON text. */
typedef struct fg_writer {
	obuf b;
	int comma;		/* a sibling was written before */
} fg_writer;

/* Decimal digits of v, written backwards from end; returns the start. */
static char *u64_dec(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

static int fg_enter(void *ctx, const char *name, size_t len, const char *dso, uint64_t value)
{
	static const char tail[] = ",\"children\":[";
	fg_writer *w = ctx;
	char num[64], *d;

	if (w->comma)
		ob_add(&w->b, ",{\"name\":", 9);
	else
		ob_add(&w->b, "{\"name\":", 8);
	ob_json_str(&w->b, name, len);
	if (dso) {
		ob_add(&w->b, ",\"dso\":", 7);
		ob_json_str(&w->b, dso, strlen(dso));
	}
	/* ,"value":N,"children":[ without printf */
	memcpy(num + sizeof(num) - sizeof(tail), tail, sizeof(tail) - 1);
	d = u64_dec(num + sizeof(num) - sizeof(tail), value);
	d -= 9;
	memcpy(d, ",\"value\":", 9);
	ob_add(&w->b, d, (size_t)(num + sizeof(num) - 1 - d));
	w->comma = 0;
	return w->b.oom ? -1 : 0;
}

static int fg_leave(void *ctx)
{
	fg_writer *w = ctx;

	ob_add(&w->b, "]}", 2);
	w->comma = 1;
	return w->b.oom ? -1 : 0;
}

/* /flamegraph computed; kept under key unless NULL. */
static MHD_Result_t flamegraph_answer(api *a, struct MHD_Connection *conn, int64_t id,
				      const fold_args *fa, const char *key)
{
	static const st_tree_cb cb = { fg_enter, fg_leave };
	fg_writer w;
	int rc;

	memset(&w, 0, sizeof(w));
	rc = st_flame(a->st, id, &fa->f, fa->by_samples, &cb, &w);
	if (rc != 0 || w.b.oom || !w.b.p) {
		free(w.b.p);
		if (rc == 1)
			return reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
		return reply_error(a, conn, 500, rc < 0 ? "storage error" : "out of memory");
	}
	w.b.p[w.b.len] = 0;
	return reply_keep(a, conn, w.b.p, w.b.len, "application/json", key);
}

static MHD_Result_t get_flamegraph(api *a, struct MHD_Connection *conn, int64_t id)
{
	fold_args fa;
	MHD_Result_t ret;
	char key[API_KEY_LEN];
	int64_t max_nodes = 0;
	int keep, claimed = 0;

	if (parse_fold_args(a, conn, &fa, "period", &ret) < 0)
		return ret;
	/* opt-in: the default answer is every node (each leaf path = its
	 * collapsed count) */
	if (arg_i64(conn, "max_nodes", 1, INT32_MAX, &max_nodes) < 0)
		return reply_error(a, conn, 400, "bad parameter 'max_nodes' (1..%d)", INT32_MAX);
	fa.f.max_nodes = (size_t)max_nodes;
	keep = answer_key(a, "flamegraph", id, &fa, max_nodes, key) == 0;
	if (keep && reply_kept(a, conn, key, "application/json", &ret, &claimed))
		return ret;
	ret = flamegraph_answer(a, conn, id, &fa, keep ? key : NULL);
	if (claimed)
		qc_unclaim(a->qc, key);
	return ret;
}


/* ---- query endpoints ------------------------------------------------------------- */

static MHD_Result_t get_threads(api *a, struct MHD_Connection *conn, int64_t id)
{
	int notfound = 0;
	char key[API_KEY_LEN];
	int keep = answer_key(a, "threads", id, NULL, 0, key) == 0;
	MHD_Result_t ret;
	json_t *o;

	if (keep && reply_kept(a, conn, key, "application/json", &ret, NULL))
		return ret;
	o = st_threads_json(a->st, id, &notfound);
	if (notfound)
		return reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
	if (!o)
		return reply_error(a, conn, 500, "storage error");
	return reply_json_keep(a, conn, o, keep ? key : NULL);
}

#define API_MAX_BUCKETS 100000

static MHD_Result_t get_timeline(api *a, struct MHD_Connection *conn, int64_t id)
{
	int64_t bucket_ms = 100;
	int notfound = 0;
	json_t *o;

	char key[API_KEY_LEN];
	fold_args ev_only;
	MHD_Result_t ret;
	int keep;

	if (arg_i64(conn, "bucket_ms", 1, 86400000, &bucket_ms) < 0)
		return reply_error(a, conn, 400, "bad parameter 'bucket_ms' (1..86400000)");
	memset(&ev_only, 0, sizeof(ev_only));
	ev_only.f.event = arg(conn, "event");
	keep = answer_key(a, "timeline", id, &ev_only, bucket_ms, key) == 0;
	if (keep && reply_kept(a, conn, key, "application/json", &ret, NULL))
		return ret;
	o = st_timeline_json(a->st, id, arg(conn, "event"), (uint64_t)bucket_ms * 1000000,
			     &notfound);
	if (notfound)
		return reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
	if (!o)
		return reply_error(a, conn, 500, "storage error");
	if (json_array_size(json_object_get(o, "buckets")) > API_MAX_BUCKETS) {
		json_decref(o);
		return reply_error(a, conn, 400, "bad parameter 'bucket_ms': more than %d buckets",
				   API_MAX_BUCKETS);
	}
	json_object_set_new(o, "bucket_ms", json_integer(bucket_ms));
	return reply_json_keep(a, conn, o, keep ? key : NULL);
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

static MHD_Result_t get_top(api *a, struct MHD_Connection *conn, int64_t id)
{
	fold_args fa;
	MHD_Result_t ret;
	int64_t limit = 100;
	json_t **rows, *arr, *all;
	char key[API_KEY_LEN];
	size_t n, i;
	int keep, notfound = 0;

	if (parse_fold_args(a, conn, &fa, "samples", &ret) < 0)
		return ret;
	if (arg_i64(conn, "limit", 1, 100000, &limit) < 0)
		return reply_error(a, conn, 400, "bad parameter 'limit' (1..100000)");
	keep = answer_key(a, "top", id, &fa, limit, key) == 0;
	if (keep && reply_kept(a, conn, key, "application/json", &ret, NULL))
		return ret;
	all = st_top_json(a->st, id, &fa.f, fa.by_samples, &notfound);
	if (notfound)
		return reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
	if (!all)
		return reply_error(a, conn, 500, "storage error");
	n = json_array_size(all);
	rows = malloc((n + 1) * sizeof(*rows));
	if (!rows) {
		json_decref(all);
		return reply_error(a, conn, 500, "out of memory");
	}
	for (i = 0; i < n; i++)
		rows[i] = json_array_get(all, i);
	qsort(rows, n, sizeof(*rows), cmp_self);
	arr = json_array();
	for (i = 0; i < n && (int64_t)i < limit; i++)
		json_array_append(arr, rows[i]);
	free(rows);
	json_decref(all);
	return reply_json_keep(a, conn, json_pack("{s:s,s:o}", "weight",
						   fa.by_samples ? "samples" : "period",
						   "functions", arr), keep ? key : NULL);
}

/* /diff: the two flame graphs merged into one tree, each node with its base
 * and target value. Both come depth first with children in bytewise name
 * order, so each level merges like two sorted lists: a cursor per open node
 * remembers where the last child was found or put. */
typedef struct dnode {
	char *name;
	size_t len;
	char *dso;
	uint64_t base, target;
	uint32_t first_child, next;
} dnode;

#define DIFF_MAX_DEPTH 8200	/* beyond the store's folded depth */

typedef struct diff_tree {
	dnode *n;
	size_t nr, cap;
	int side;		/* 0 base, 1 target */
	size_t sp;		/* open nodes */
	uint32_t open[DIFF_MAX_DEPTH], cursor[DIFF_MAX_DEPTH];	/* cursor: last child, 0 = none */
	int oom;
} diff_tree;

static int name_cmp(const char *a, size_t la, const char *b, size_t lb)
{
	int r = memcmp(a, b, la < lb ? la : lb);

	if (r)
		return r;
	return la < lb ? -1 : la > lb;
}

/* A new node, unlinked. OUT: *id; -1 out of memory. */
static int diff_new(diff_tree *t, const char *name, size_t len, const char *dso, uint32_t *id)
{
	dnode *x;

	if (t->nr == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 4096;
		dnode *p = t->nr < UINT32_MAX ? realloc(t->n, ncap * sizeof(*p)) : NULL;
		if (!p)
			return -1;
		t->n = p;
		t->cap = ncap;
	}
	x = &t->n[t->nr];
	memset(x, 0, sizeof(*x));
	x->name = malloc(len + 1);
	x->dso = dso ? strdup(dso) : NULL;
	if (!x->name || (dso && !x->dso)) {
		free(x->name);
		free(x->dso);
		return -1;
	}
	memcpy(x->name, name, len);
	x->name[len] = 0;
	x->len = len;
	*id = (uint32_t)t->nr++;
	return 0;
}

static int diff_enter(void *ctx, const char *name, size_t len, const char *dso, uint64_t value)
{
	diff_tree *t = ctx;
	uint32_t node, parent, prev, c;

	if (t->sp == 0) {
		node = 0;	/* the root, made before the first profile */
	} else {
		if (t->sp >= DIFF_MAX_DEPTH)
			return -1;
		parent = t->open[t->sp - 1];
		prev = t->cursor[t->sp - 1];
		/* the first child not before name, from the cursor on */
		c = prev ? t->n[prev].next : t->n[parent].first_child;
		while (c && name_cmp(t->n[c].name, t->n[c].len, name, len) < 0) {
			prev = c;
			c = t->n[c].next;
		}
		if (c && !name_cmp(t->n[c].name, t->n[c].len, name, len)) {
			node = c;
		} else {
			if (diff_new(t, name, len, dso, &node) < 0) {
				t->oom = 1;
				return -1;
			}
			t->n[node].next = c;
			if (prev)
				t->n[prev].next = node;
			else
				t->n[parent].first_child = node;
		}
		t->cursor[t->sp - 1] = node;
		if (!t->n[node].dso && dso && !(t->n[node].dso = strdup(dso))) {
			t->oom = 1;
			return -1;
		}
	}
	if (t->side)
		t->n[node].target += value;
	else
		t->n[node].base += value;
	t->open[t->sp] = node;
	t->cursor[t->sp] = 0;
	t->sp++;
	return 0;
}

static int diff_leave(void *ctx)
{
	diff_tree *t = ctx;

	if (!t->sp)
		return -1;
	t->sp--;
	return 0;
}

static void diff_free(diff_tree *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++) {
		free(t->n[i].name);
		free(t->n[i].dso);
	}
	free(t->n);
	free(t);
}

/* The merged tree as compact JSON, depth first without recursion. */
static void diff_json(const diff_tree *t, obuf *b)
{
	uint32_t *stack = malloc(DIFF_MAX_DEPTH * sizeof(*stack));
	size_t sp = 0;
	uint32_t node = 0;

	if (!stack) {
		b->oom = 1;
		return;
	}
	for (;;) {
		const dnode *x = &t->n[node];
		char num[96];
		int k;

		ob_add(b, "{\"name\":", 8);
		ob_json_str(b, x->name, x->len);
		if (x->dso) {
			ob_add(b, ",\"dso\":", 7);
			ob_json_str(b, x->dso, strlen(x->dso));
		}
		k = snprintf(num, sizeof(num), ",\"base\":%llu,\"target\":%llu,\"children\":[",
			     (unsigned long long)x->base, (unsigned long long)x->target);
		ob_add(b, num, (size_t)k);
		if (x->first_child && sp < DIFF_MAX_DEPTH) {
			stack[sp++] = node;
			node = x->first_child;
			continue;
		}
		for (;;) {
			ob_add(b, "]}", 2);
			if (!sp)
				goto done;
			if (t->n[node].next) {
				node = t->n[node].next;
				ob_add(b, ",", 1);
				break;
			}
			node = stack[--sp];
		}
	}
done:
	free(stack);
}

static MHD_Result_t get_diff(api *a, struct MHD_Connection *conn)
{
	static const st_tree_cb cb = { diff_enter, diff_leave };
	fold_args fa;
	diff_tree *t;
	obuf b = { 0 };
	MHD_Result_t ret;
	int64_t base = 0, target = 0;
	uint32_t root;
	int rc;

	if (arg_i64(conn, "base", 1, INT64_MAX, &base) < 0 || !base)
		return reply_error(a, conn, 400, "bad or missing parameter 'base' (a profile id)");
	if (arg_i64(conn, "target", 1, INT64_MAX, &target) < 0 || !target)
		return reply_error(a, conn, 400, "bad or missing parameter 'target' (a profile id)");
	if (parse_fold_args(a, conn, &fa, "period", &ret) < 0)
		return ret;
	t = calloc(1, sizeof(*t));
	/* the root is node 0 */
	if (!t || diff_new(t, "all", 3, NULL, &root) < 0) {
		if (t)
			diff_free(t);
		return reply_error(a, conn, 500, "out of memory");
	}
	t->side = 0;
	rc = st_flame(a->st, base, &fa.f, fa.by_samples, &cb, t);
	if (rc == 0 && !t->oom) {
		t->side = 1;
		t->sp = 0;
		rc = st_flame(a->st, target, &fa.f, fa.by_samples, &cb, t);
	}
	if (rc != 0 || t->oom) {
		diff_free(t);
		if (rc == 1)
			return reply_error(a, conn, 404, "base or target is not a ready profile");
		return reply_error(a, conn, 500, rc < 0 ? "storage error" : "out of memory");
	}
	diff_json(t, &b);
	diff_free(t);
	if (b.oom || !b.p) {
		free(b.p);
		return reply_error(a, conn, 500, "out of memory");
	}
	return reply(a, conn, 200, b.p, b.len, "application/json");
}

static MHD_Result_t get_aggregate(api *a, struct MHD_Connection *conn)
{
	st_agg_filter f = { .limit = 100 };
	tag_args tags = { 0 };
	json_t *o;
	int bad = 0;

	f.group_by = arg(conn, "group_by");
	if (!f.group_by)
		f.group_by = "comm";
	f.hostname = arg(conn, "hostname");
	if (arg_i64(conn, "limit", 1, 100000, &f.limit) < 0)
		return reply_error(a, conn, 400, "bad parameter 'limit' (1..100000)");
	if (arg_i64(conn, "since", 0, INT64_MAX, &f.since) < 0)
		return reply_error(a, conn, 400, "bad parameter 'since' (unix seconds)");
	if (arg_i64(conn, "until", 0, INT64_MAX, &f.until) < 0)
		return reply_error(a, conn, 400, "bad parameter 'until' (unix seconds)");
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_tag, &tags);
	if (tags.bad || tags.n > 1) {
		tags_free(&tags);
		return reply_error(a, conn, 400, "bad parameter 'tag' (one tag=KEY=VALUE)");
	}
	if (tags.n) {
		f.tag_key = tags.keys[0];
		f.tag_value = tags.values[0];
	}
	o = st_aggregate_json(a->st, &f, &bad);
	tags_free(&tags);
	if (bad)
		return reply_error(a, conn, 400,
				   "bad parameter 'group_by' (comm, dso, symbol, hostname, event)");
	if (!o)
		return reply_error(a, conn, 500, "storage error");
	return reply_json(a, conn, 200, o);
}

/* ---- health and metrics --------------------------------------------------------- */

static MHD_Result_t get_healthz(api *a, struct MHD_Connection *conn)
{
	if (st_ping(a->st) < 0)
		return reply_error(a, conn, 503, "the store does not answer");
	return reply_json(a, conn, 200, json_pack("{s:s,s:s}", "status", "ok", "version", VERSION));
}

static MHD_Result_t get_metrics(api *a, struct MHD_Connection *conn)
{
	st_counts c;
	jobs_stats js;
	char *buf;
	size_t cap = 8192, n = 0;
	int i;
	uint64_t cum = 0;
	static const char *const classes[] = { "2xx", "3xx", "4xx", "5xx", "other" };

	if (st_counts_get(a->st, &c) < 0)
		return reply_error(a, conn, 503, "the store does not answer");
	jobs_get_stats(a->j, &js);
	buf = malloc(cap);
	if (!buf)
		return MHD_NO;
#define OUT(...) n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__)
	OUT("# HELP perfhub_uploads_total Uploads accepted as new profiles.\n"
	    "# TYPE perfhub_uploads_total counter\nperfhub_uploads_total %llu\n",
	    (unsigned long long)atomic_load(&a->uploads));
	OUT("# HELP perfhub_upload_duplicates_total Uploads of bytes already stored.\n"
	    "# TYPE perfhub_upload_duplicates_total counter\nperfhub_upload_duplicates_total %llu\n",
	    (unsigned long long)atomic_load(&a->duplicates));
	OUT("# HELP perfhub_parses_total Recordings parsed successfully.\n"
	    "# TYPE perfhub_parses_total counter\nperfhub_parses_total %llu\n",
	    (unsigned long long)js.parsed);
	OUT("# HELP perfhub_parse_failures_total Recordings that failed to parse.\n"
	    "# TYPE perfhub_parse_failures_total counter\nperfhub_parse_failures_total %llu\n",
	    (unsigned long long)js.failed);
	OUT("# HELP perfhub_queue_depth Profiles waiting to be parsed.\n"
	    "# TYPE perfhub_queue_depth gauge\nperfhub_queue_depth %lld\n", (long long)c.queued);
	OUT("# HELP perfhub_profiles Profiles by status.\n# TYPE perfhub_profiles gauge\n"
	    "perfhub_profiles{status=\"queued\"} %lld\nperfhub_profiles{status=\"parsing\"} %lld\n"
	    "perfhub_profiles{status=\"ready\"} %lld\nperfhub_profiles{status=\"failed\"} %lld\n",
	    (long long)c.queued, (long long)c.parsing, (long long)c.ready, (long long)c.failed);
	OUT("# HELP perfhub_parse_seconds Time to parse and store a recording.\n"
	    "# TYPE perfhub_parse_seconds histogram\n");
	for (i = 0; i < 8; i++) {
		cum += js.parse_hist[i];
		if (i < 7)
			OUT("perfhub_parse_seconds_bucket{le=\"%g\"} %llu\n", jobs_hist_bounds[i],
			    (unsigned long long)cum);
		else
			OUT("perfhub_parse_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
	}
	OUT("perfhub_parse_seconds_sum %.3f\nperfhub_parse_seconds_count %llu\n", js.parse_seconds,
	    (unsigned long long)cum);
	OUT("# HELP perfhub_database_bytes Size of the SQLite database.\n"
	    "# TYPE perfhub_database_bytes gauge\nperfhub_database_bytes %lld\n",
	    (long long)c.db_bytes);
	OUT("# HELP perfhub_query_answers_total Per-profile query answers by where they came "
	    "from.\n# TYPE perfhub_query_answers_total counter\n"
	    "perfhub_query_answers_total{source=\"kept\"} %llu\n"
	    "perfhub_query_answers_total{source=\"computed\"} %llu\n",
	    (unsigned long long)atomic_load(&a->answers_kept),
	    (unsigned long long)atomic_load(&a->answers_computed));
	OUT("# HELP perfhub_http_responses_total HTTP responses by status class.\n"
	    "# TYPE perfhub_http_responses_total counter\n");
	for (i = 0; i < 5; i++)
		OUT("perfhub_http_responses_total{code=\"%s\"} %llu\n", classes[i],
		    (unsigned long long)atomic_load(&a->by_status[i]));
#undef OUT
	if (n >= cap) {
		free(buf);
		return reply_error(a, conn, 500, "metrics too large");
	}
	return reply(a, conn, 200, buf, n, "text/plain; version=0.0.4");
}

/* ---- static files --------------------------------------------------------------- */

static const char *mime_of(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (!dot)
		return "application/octet-stream";
	if (!strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (!strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (!strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	if (!strcmp(dot, ".svg"))
		return "image/svg+xml";
	if (!strcmp(dot, ".json"))
		return "application/json";
	if (!strcmp(dot, ".png"))
		return "image/png";
	return "application/octet-stream";
}

static MHD_Result_t get_static(api *a, struct MHD_Connection *conn, const char *url)
{
	char want[PATH_MAX], real[PATH_MAX], root[PATH_MAX];
	struct MHD_Response *r;
	struct stat st;
	size_t rl;
	int fd;

	if (strstr(url, "..") || !a->c->web_root || !realpath(a->c->web_root, root))
		return reply_error(a, conn, 404, "not found");
	if (strlen(root) + strlen(url) + 12 > sizeof(want))
		return reply_error(a, conn, 404, "not found");
	strcpy(want, root);
	strcat(want, url);
	if (url[strlen(url) - 1] == '/')
		strcat(want, "index.html");
	/* the resolved file must still be inside the web root (no symlinks out) */
	rl = strlen(root);
	if (!realpath(want, real) || strncmp(real, root, rl) || (real[rl] && real[rl] != '/'))
		return reply_error(a, conn, 404, "not found");
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return reply_error(a, conn, 404, "not found");
	}
	r = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", mime_of(real));
	count_status(a, 200);
	{
		MHD_Result_t rc = MHD_queue_response(conn, 200, r);
		MHD_destroy_response(r);
		return rc;
	}
}

/* ---- routing -------------------------------------------------------------------- */

/* "/api/v1/profiles/123/rest" -> id 123 and rest "/rest" (or ""). */
static int parse_id(const char *p, int64_t *id, const char **rest)
{
	char *end;
	long long v;

	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	v = strtoll(p, &end, 10);
	if (errno || v <= 0 || (*end && *end != '/'))
		return -1;
	*id = v;
	*rest = end;
	return 0;
}

static MHD_Result_t route(api *a, struct MHD_Connection *conn, const char *url,
			  const char *method)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	int64_t id;
	const char *rest;

	if (!strcmp(url, "/healthz"))
		return get ? get_healthz(a, conn) : reply_error(a, conn, 405, "use GET");
	if (!strcmp(url, "/metrics"))
		return get ? get_metrics(a, conn) : reply_error(a, conn, 405, "use GET");
	if (!strcmp(url, API_PREFIX) || !strcmp(url, API_PREFIX "/"))
		return get ? list_profiles(a, conn) : reply_error(a, conn, 405, "use GET or POST");
	if (!strncmp(url, API_PREFIX "/", sizeof(API_PREFIX))) {
		if (parse_id(url + sizeof(API_PREFIX), &id, &rest) < 0)
			return reply_error(a, conn, 404, "no such profile");
		if (!*rest || !strcmp(rest, "/")) {
			if (get)
				return get_profile(a, conn, id);
			if (!strcmp(method, "DELETE"))
				return delete_profile(a, conn, id);
			return reply_error(a, conn, 405, "use GET or DELETE");
		}
		if (!get)
			return reply_error(a, conn, 405, "use GET");
		if (!strcmp(rest, "/collapsed"))
			return get_collapsed(a, conn, id);
		if (!strcmp(rest, "/flamegraph"))
			return get_flamegraph(a, conn, id);
		if (!strcmp(rest, "/top"))
			return get_top(a, conn, id);
		if (!strcmp(rest, "/timeline"))
			return get_timeline(a, conn, id);
		if (!strcmp(rest, "/threads"))
			return get_threads(a, conn, id);
		return reply_error(a, conn, 404, "no such endpoint");
	}
	if (!strcmp(url, "/api/v1/diff"))
		return get ? get_diff(a, conn) : reply_error(a, conn, 405, "use GET");
	if (!strcmp(url, "/api/v1/aggregate"))
		return get ? get_aggregate(a, conn) : reply_error(a, conn, 405, "use GET");
	if (!strncmp(url, "/api/", 5))
		return reply_error(a, conn, 404, "no such endpoint");
	if (get)
		return get_static(a, conn, url);
	return reply_error(a, conn, 405, "method not allowed");
}

/* 0 when allowed; else the status to answer (401, 403). */
static unsigned check_access(api *a, struct MHD_Connection *conn, int write)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	const char *token = NULL;
	unsigned status = 0;
	int role;

	pthread_rwlock_rdlock(&a->tok_lock);
	if (!a->tok)
		goto out;
	if (h && !strncasecmp(h, "Bearer ", 7))
		token = h + 7;
	role = tok_role(a->tok, token);
	if (write)
		status = role == TOK_NONE ? 401 : role < TOK_WRITE ? 403 : 0;
	else if (tok_reads_need_token(a->tok))
		status = role == TOK_NONE ? 401 : 0;
out:
	pthread_rwlock_unlock(&a->tok_lock);
	return status;
}

static MHD_Result_t on_request(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_size, void **con_cls)
{
	api *a = cls;
	req *r = *con_cls;

	(void)version;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		*con_cls = r;
		{
			int write = strcmp(method, "GET") && strcmp(method, "HEAD");
			unsigned deny = check_access(a, conn, write);
			if (deny)
				return reply_error(a, conn, deny, deny == 401 ?
						   "a valid token is needed (Authorization: Bearer)" :
						   "this token may only read");
		}
		if (!strcmp(method, "POST") &&
		    (!strcmp(url, API_PREFIX) || !strcmp(url, API_PREFIX "/")))
			return upload_begin(a, conn, r);
		if (apid_handles(url, method)) {
			r->kind = REQ_DEBUGINFO;
			return (MHD_Result_t)apid_request(a->dbg, conn, url, method, data,
							  data_size, &r->dbg);
		}
		if (!strcmp(method, "POST") || !strcmp(method, "PUT"))
			r->failed = 1;	/* consume any body, then answer */
		else
			return route(a, conn, url, method);
		return MHD_YES;
	}
	if (r->kind == REQ_DEBUGINFO)
		return (MHD_Result_t)apid_request(a->dbg, conn, url, method, data, data_size,
						  &r->dbg);
	if (r->kind == REQ_UPLOAD) {
		if (*data_size)
			return upload_data(a, conn, r, data, data_size);
		if (r->failed)
			return upload_failed(a, conn, r, r->failed);
		return upload_end(a, conn, r);
	}
	if (*data_size) {
		*data_size = 0;
		return MHD_YES;
	}
	return route(a, conn, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	req *r = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (!r)
		return;
	sp_abort(r->up);	/* an interrupted upload leaves nothing behind */
	apid_completed(&r->dbg);
	free(r);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	log_warn("msg=\"http\" detail=\"%s\"", msg);
}

/* URL and argument decoding. A "%00" would decode to a NUL that silently
 * cuts the string ("/index.html%00.png" became "/index.html"): such a
 * string is left encoded, so it matches no file, route or number. */
static size_t unescape_no_nul(void *cls, struct MHD_Connection *conn, char *s)
{
	(void)cls;
	(void)conn;
	if (strstr(s, "%00"))
		return strlen(s);
	return MHD_http_unescape(s);
}

/* systemd socket activation (perfhubd.socket): the first fd passed in
 * LISTEN_FDS, when LISTEN_PID names this process; else -1. The variables
 * are cleared so that nothing started later takes them for its own. */
static int activation_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int fd = -1;

	if (pid && fds && strtol(pid, NULL, 10) == (long)getpid() && strtol(fds, NULL, 10) >= 1) {
		fd = 3;	/* SD_LISTEN_FDS_START */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return fd;
}

api *api_start(const cfg *c, st_store *st, jobs *j)
{
	api *a = calloc(1, sizeof(*a));
	int listen_fd;
	struct sockaddr_storage ss;
	socklen_t sl;
	const union MHD_DaemonInfo *info;
	char host[256];
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG;

	if (!a)
		return NULL;
	a->c = c;
	a->st = st;
	a->j = j;
	a->qc = qc_new(API_QCACHE_BYTES);	/* NULL: answers are not kept */
	pthread_rwlock_init(&a->tok_lock, NULL);
	a->dbg = apid_new(c, st, j);
	if (!a->dbg || api_reload_tokens(a) < 0) {
		apid_free(a->dbg);
		qc_free(a->qc);
		free(a);
		return NULL;
	}
	memset(&ss, 0, sizeof(ss));
	/* "[::1]" or "::1" are IPv6, anything else IPv4 */
	snprintf(host, sizeof(host), "%s", c->listen_addr);
	if (host[0] == '[') {
		size_t n = strlen(host);
		memmove(host, host + 1, n);
		if (n > 1 && host[n - 2] == ']')
			host[n - 2] = 0;
	}
	if (strchr(host, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)c->listen_port);
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			goto bad_addr;
		sl = sizeof(*s6);
		flags |= MHD_USE_IPv6;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)c->listen_port);
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			goto bad_addr;
		sl = sizeof(*s4);
	}
	(void)sl;
	listen_fd = activation_socket();
	if (listen_fd >= 0) {
		log_info("msg=\"socket activation\" fd=%d", listen_fd);
		a->d = MHD_start_daemon(flags & ~(unsigned)MHD_USE_IPv6, 0, NULL, NULL, on_request, a,
					MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
					MHD_OPTION_UNESCAPE_CALLBACK, unescape_no_nul, NULL,
					MHD_OPTION_LISTEN_SOCKET, listen_fd,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, a,
					MHD_OPTION_CONNECTION_LIMIT, c->max_connections,
					MHD_OPTION_CONNECTION_TIMEOUT, c->connection_timeout,
					MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
					MHD_OPTION_END);
	} else
	a->d = MHD_start_daemon(flags, (uint16_t)c->listen_port, NULL, NULL, on_request, a,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				MHD_OPTION_UNESCAPE_CALLBACK, unescape_no_nul, NULL,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, a,
				MHD_OPTION_CONNECTION_LIMIT, c->max_connections,
				MHD_OPTION_CONNECTION_TIMEOUT, c->connection_timeout,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
				MHD_OPTION_END);
	if (!a->d) {
		log_warn("msg=\"cannot listen\" addr=%s port=%u error=\"%s\"", c->listen_addr,
			 c->listen_port, strerror(errno));
		apid_free(a->dbg);
		qc_free(a->qc);
		free(a);
		return NULL;
	}
	info = MHD_get_daemon_info(a->d, MHD_DAEMON_INFO_BIND_PORT);
	a->port = info ? info->port : c->listen_port;
	return a;
bad_addr:
	log_warn("msg=\"bad listen address\" addr=\"%s\"", c->listen_addr);
	apid_free(a->dbg);
	qc_free(a->qc);
	free(a);
	return NULL;
}

int api_reload_tokens(api *a)
{
	tokens *t = NULL, *old;
	char err[512];

	if (a->c->token_file) {
		t = tok_load(a->c->token_file, err, sizeof(err));
		if (!t) {
			log_warn("msg=\"token file\" error=\"%s\"", err);
			return -1;
		}
	}
	pthread_rwlock_wrlock(&a->tok_lock);
	old = a->tok;
	a->tok = t;
	pthread_rwlock_unlock(&a->tok_lock);
	tok_free(old);
	if (t)
		log_info("msg=\"tokens loaded\" file=\"%s\"", a->c->token_file);
	return 0;
}

unsigned api_port(const api *a)
{
	return a->port;
}

void api_stop(api *a)
{
	if (!a)
		return;
	MHD_stop_daemon(a->d);
	apid_free(a->dbg);
	tok_free(a->tok);
	pthread_rwlock_destroy(&a->tok_lock);
	qc_free(a->qc);
	free(a);
}
