/* debuginfo.c - HTTP handlers of symbols by build-id and re-symbolization. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "http/debuginfo.h"
#include "http/http.h"
#include "symbols/debuginfo.h"
#include "dso.h"
#include "log.h"
#include "intake/spool.h"
#include "intake/upload.h"

#define APID_PREFIX "/api/v1/debuginfo/"
#define APID_PROFILES "/api/v1/profiles/"
#define APID_MAX_LIST_BODY (1u << 20)	/* the build-id list of /missing */
#define APID_MAX_LIST 100000

struct apid {
	const cfg *c;
	st_store *st;
	jobs *j;
	dbg_store *dbg;
};

enum apid_kind {
	APID_PUT = 1, APID_MISSING, APID_ARCHIVE, APID_RESYM, APID_GET, APID_DELETE, APID_OTHER
};

typedef struct apid_req {
	int kind;
	sp_upload *up;
	int failed;		/* enum sp_result once the spool refused */
	char hex[DBG_HEX_LEN];
	char *body;		/* /missing only, capped */
	size_t len;
	int too_large;
	intake_rate rate;	/* PUT and archive bodies: the rate floor */
} apid_req;

/* ---- responses ---------------------------------------------------------------- */

static int reply(struct MHD_Connection *conn, unsigned status, json_t *j)
{
	char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	struct MHD_Response *r;

	json_decref(j);
	if (!body)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	return http_queue(conn, status, r);
}

static int reply_empty(struct MHD_Connection *conn, unsigned status)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);

	return r ? http_queue(conn, status, r) : MHD_NO;
}

__attribute__((format(printf, 3, 4)))
static int reply_error(struct MHD_Connection *conn, unsigned status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return reply(conn, status, json_pack("{s:s}", "error", msg));
}

/* ---- routing -------------------------------------------------------------------- */

static int is_resymbolize(const char *url)
{
	const char *p;
	size_t n = sizeof(APID_PROFILES) - 1;

	if (strncmp(url, APID_PROFILES, n))
		return 0;
	p = strchr(url + n, '/');
	return p && !strcmp(p, "/resymbolize");
}

int apid_handles(const char *url, const char *method)
{
	(void)method;
	return !strncmp(url, APID_PREFIX, sizeof(APID_PREFIX) - 1) || is_resymbolize(url);
}

apid *apid_new(const cfg *c, st_store *st, jobs *j)
{
	apid *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->c = c;
	x->st = st;
	x->j = j;
	x->dbg = j ? jobs_debuginfo(j) : NULL;
	return x;
}

void apid_free(apid *x)
{
	free(x);
}

int apid_answered(void *state)
{
	const apid_req *r = state;

	return !r || r->kind == APID_OTHER;
}

void apid_completed(void **state)
{
	apid_req *r = *state;

	if (!r)
		return;
	sp_abort(r->up);
	free(r->body);
	free(r);
	*state = NULL;
}

/* ---- re-symbolization ------------------------------------------------------------- */

/* Symbols for `hex` arrived: tables loaded without them are forgotten and
 * the ready profiles with unresolved frames in it are parsed again. */
static void arrived(apid *x, const char *hex)
{
	uint8_t bid[DBG_MAX_BUILD_ID];
	char norm[DBG_HEX_LEN];
	int64_t *ids = NULL;
	size_t n = 0, i, nb;
	unsigned queued = 0;

	if (dbg_parse_build_id(hex, norm, bid, &nb) < 0)
		return;
	if (x->j)
		pd_dso_cache_forget(jobs_symcache(x->j), bid, nb);
	/* the other nodes of a shared store forget theirs before the jobs come */
	st_announce_debuginfo(x->st, norm);
	/* one node at a time re-queues (waiting its turn: none is lost) */
	if (st_singleton_begin(x->st, "resymbolize", 1) != 1)
		return;
	if (st_profiles_unresolved_in(x->st, norm, &ids, &n) == 0)
		for (i = 0; i < n; i++)
			if (st_profile_resymbolize(x->st, ids[i]) == 0)
				queued++;
	st_singleton_end(x->st, "resymbolize");
	free(ids);
	if (queued) {
		log_info("msg=\"resymbolize\" build_id=%s profiles=%u", norm, queued);
		if (x->j)
			for (i = 0; i < queued; i++)
				jobs_notify(x->j);
	}
}

static void arrived_cb(void *ctx, const char *hex)
{
	arrived(ctx, hex);
}

static int resymbolize(apid *x, struct MHD_Connection *conn, const char *url)
{
	const char *p = url + sizeof(APID_PROFILES) - 1;
	char *end;
	long long id;
	int rc;

	errno = 0;
	id = strtoll(p, &end, 10);
	if (errno || id <= 0 || end == p || strcmp(end, "/resymbolize"))
		return reply_error(conn, 404, "no such profile");
	rc = st_profile_resymbolize(x->st, id);
	if (rc < 0)
		return reply_error(conn, 500, "storage error");
	if (rc == 1)
		return reply_error(conn, 404, "no such profile");
	if (rc == 3)
		return reply_error(conn, 409, "the profile failed to parse; nothing to re-symbolize");
	if (x->j) {
		/* a fresh look at every table the parse will need */
		if (rc == 0)
			log_info("msg=\"resymbolize\" id=%lld reason=request", id);
		jobs_notify(x->j);
	}
	return reply(conn, 202, json_pack("{s:I,s:s}", "id", (json_int_t)id, "status",
					  rc == 0 ? "queued" : "already queued"));
}

/* ---- debuginfo ---------------------------------------------------------------------- */

/* DELETE (admin): the files go, and tables loaded from them are forgotten
 * so that later parses do not use them. */
static int delete_file(apid *x, struct MHD_Connection *conn, const char *hex)
{
	int rc = dbg_delete(x->dbg, hex, NULL);

	if (rc < 0)
		return reply_error(conn, 500, "storage error");
	if (rc == 1)
		return reply_error(conn, 404, "no debuginfo for build-id %s", hex);
	return reply_empty(conn, 204);
}

static int get_file(apid *x, struct MHD_Connection *conn, const char *hex)
{
	char path[4096];
	uint64_t size = 0;
	struct MHD_Response *r;
	struct stat st;
	int fd, rc;

	rc = dbg_lookup(x->dbg, hex, path, sizeof(path), &size);
	if (rc < 0)
		return reply_error(conn, 500, "storage error");
	if (rc == 1)
		return reply_error(conn, 404, "no debuginfo for build-id %s", hex);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return reply_error(conn, 500, "the stored file is gone");
	}
	r = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/octet-stream");
	return http_queue(conn, 200, r);
}

static int put_end(apid *x, struct MHD_Connection *conn, apid_req *r)
{
	char sha[65], *path = NULL, hex[DBG_HEX_LEN], msg[320], q[LOG_Q_MAX];
	uint64_t size = 0;
	int rc;

	if (r->failed == SP_ERR_TOO_LARGE)
		return reply_error(conn, 413, "debuginfo larger than the limit of %llu bytes",
				   (unsigned long long)x->c->max_debuginfo);
	if (r->failed)
		return reply_error(conn, 500, "cannot write to the spool");
	/* checked before it is stored: a temporary of this node until then */
	rc = sp_finish_local(r->up, sha, &size, &path);
	r->up = NULL;
	if (rc == SP_ERR_TOO_LARGE)
		return reply_error(conn, 413, "debuginfo larger than the limit of %llu bytes",
				   (unsigned long long)x->c->max_debuginfo);
	if (rc != SP_OK)
		return reply_error(conn, 500, "cannot write to the spool");
	rc = dbg_add_file(x->dbg, path, 1, r->hex, "upload", hex, msg, sizeof(msg));
	free(path);
	sp_scrub_paths(msg, sizeof(msg), jobs_spool(x->j));
	switch (rc) {
	case DBG_STORED:
		arrived(x, hex);
		return reply(conn, 201, json_pack("{s:s,s:s,s:I}", "build_id", hex, "status",
						  "stored", "size", (json_int_t)size));
	case DBG_EXISTS:
		return reply(conn, 200, json_pack("{s:s,s:s}", "build_id", hex, "status",
						  "exists"));
	case DBG_ERR_IO:
		log_warn("msg=\"debuginfo\" build_id=%s error=\"%s\"", r->hex,
			 log_q(q, sizeof(q), msg));
		return reply_error(conn, 500, "%s", msg);
	default:
		log_info("msg=\"debuginfo refused\" build_id=%s error=\"%s\"", r->hex,
			 log_q(q, sizeof(q), msg));
		return reply_error(conn, 400, "%s", msg);
	}
}

static int archive_end(apid *x, struct MHD_Connection *conn, apid_req *r)
{
	char sha[65], *path = NULL, msg[320];
	uint64_t size = 0;
	unsigned stored = 0, found = 0;
	int rc;

	if (r->failed == SP_ERR_TOO_LARGE)
		return reply_error(conn, 413, "bundle larger than the limit of %llu bytes",
				   (unsigned long long)x->c->max_upload);
	if (r->failed)
		return reply_error(conn, 500, "cannot write to the spool");
	rc = sp_finish_local(r->up, sha, &size, &path);
	r->up = NULL;
	if (rc == SP_ERR_TOO_LARGE)
		return reply_error(conn, 413, "bundle larger than the limit of %llu bytes",
				   (unsigned long long)x->c->max_upload);
	if (rc != SP_OK)
		return reply_error(conn, 500, "cannot write to the spool");
	rc = dbg_import_archive(x->dbg, path, x->c->max_debuginfo, x->c->max_upload, arrived_cb, x,
				&stored, &found, msg, sizeof(msg));
	unlink(path);
	free(path);
	sp_scrub_paths(msg, sizeof(msg), jobs_spool(x->j));
	if (rc < 0)
		return reply_error(conn, 400, "%s", msg);
	log_info("msg=\"debuginfo archive\" bytes=%llu files=%u stored=%u",
		 (unsigned long long)size, found, stored);
	return reply(conn, 200, json_pack("{s:I,s:I,s:s?}", "found", (json_int_t)found, "stored",
					  (json_int_t)stored, "warning", msg[0] ? msg : NULL));
}

static int missing_end(apid *x, struct MHD_Connection *conn, apid_req *r)
{
	char why[HTTP_WHY_LEN];
	json_t *ids, *out, *v;
	size_t i;

	if (r->too_large)
		return reply_error(conn, 413, "the build-id list is larger than %u bytes",
				   APID_MAX_LIST_BODY);
	ids = http_json_build_ids(r->body, r->len, APID_MAX_LIST, why, sizeof(why));
	if (!ids)
		return reply_error(conn, 400, "%s", why);
	out = json_array();
	json_array_foreach(ids, i, v) {
		char hex[DBG_HEX_LEN];
		int has;

		if (dbg_parse_build_id(json_string_value(v), hex, NULL, NULL) < 0) {
			json_decref(ids);
			json_decref(out);
			return reply_error(conn, 400, "build_ids[%zu] is not a build-id", i);
		}
		has = dbg_has_symbols(x->dbg, hex);
		if (has < 0) {
			json_decref(ids);
			json_decref(out);
			return reply_error(conn, 500, "storage error");
		}
		if (!has)
			json_array_append_new(out, json_string(hex));
	}
	json_decref(ids);
	return reply(conn, 200, json_pack("{s:o}", "missing", out));
}

/* First call of a request: what it is, and refusals before the body. */
static int begin(apid *x, struct MHD_Connection *conn, const char *url, const char *method,
		 apid_req *r)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	const char *key = url + sizeof(APID_PREFIX) - 1;

	if (is_resymbolize(url)) {
		r->kind = APID_RESYM;
		if (strcmp(method, "POST")) {
			r->kind = APID_OTHER;
			return reply_error(conn, 405, "use POST");
		}
		return MHD_YES;
	}
	if (!x->dbg) {
		r->kind = APID_OTHER;
		return reply_error(conn, 503, "no debuginfo store");
	}
	if (!strcmp(key, "missing") || !strcmp(key, "archive")) {
		if (strcmp(method, "POST")) {
			r->kind = APID_OTHER;
			return reply_error(conn, 405, "use POST");
		}
		r->kind = !strcmp(key, "missing") ? APID_MISSING : APID_ARCHIVE;
		if (r->kind == APID_ARCHIVE) {
			r->up = sp_begin(jobs_spool(x->j), SP_IDENTITY, x->c->max_upload);
			if (!r->up)
				return reply_error(conn, 500, "cannot write to the spool");
			intake_rate_start(&r->rate);
		}
		return MHD_YES;
	}
	r->kind = APID_OTHER;
	if (dbg_parse_build_id(key, r->hex, NULL, NULL) < 0)
		return reply_error(conn, 400, "'%.64s' is not a build-id (%d to %d hex digits)", key,
				   2 * DBG_MIN_BUILD_ID, 2 * DBG_MAX_BUILD_ID);
	if (get || !strcmp(method, "DELETE")) {
		r->kind = get ? APID_GET : APID_DELETE;	/* answered by the last call */
		return MHD_YES;
	}
	if (strcmp(method, "PUT"))
		return reply_error(conn, 405, "use HEAD, GET, PUT or DELETE");
	{
		const char *len = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							      "Content-Length");
		if (len && strtoull(len, NULL, 10) > x->c->max_debuginfo)
			return reply_error(conn, 413, "debuginfo of %s bytes exceeds the limit of %llu",
					   len, (unsigned long long)x->c->max_debuginfo);
	}
	r->up = sp_begin(jobs_spool(x->j), SP_IDENTITY, x->c->max_debuginfo);
	if (!r->up)
		return reply_error(conn, 500, "cannot write to the spool");
	intake_rate_start(&r->rate);
	r->kind = APID_PUT;
	return MHD_YES;
}

int apid_request(apid *x, struct MHD_Connection *conn, const char *url, const char *method,
		 const char *data, size_t *data_size, void **state)
{
	apid_req *r = *state;

	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		*state = r;
		return begin(x, conn, url, method, r);
	}
	if (*data_size) {
		if (r->kind == APID_PUT || r->kind == APID_ARCHIVE) {
			/* a trickling client would hold a spool file forever */
			if (intake_rate_add(&r->rate, *data_size, x->c->connection_timeout) < 0)
				return MHD_NO;
			if (!r->failed)
				r->failed = sp_write(r->up, data, *data_size);
		} else if (r->kind == APID_MISSING && !r->too_large) {
			if (r->len + *data_size > APID_MAX_LIST_BODY) {
				r->too_large = 1;
			} else {
				char *p = realloc(r->body, r->len + *data_size + 1);
				if (!p)
					return MHD_NO;
				memcpy(p + r->len, data, *data_size);
				r->body = p;
				r->len += *data_size;
			}
		}
		*data_size = 0;
		return MHD_YES;
	}
	switch (r->kind) {
	case APID_PUT:
		return put_end(x, conn, r);
	case APID_ARCHIVE:
		return archive_end(x, conn, r);
	case APID_MISSING:
		return missing_end(x, conn, r);
	case APID_RESYM:
		return resymbolize(x, conn, url);
	case APID_GET:
		return get_file(x, conn, r->hex);
	case APID_DELETE:
		return delete_file(x, conn, r->hex);
	default:
		/* answered on the first call; nothing more to say */
		return MHD_YES;
	}
}
