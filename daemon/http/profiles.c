/* profiles.c - uploading, listing, showing and deleting profiles. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/http.h"
#include "intake/spool.h"
#include "log.h"

/* ---- uploads: the body goes to intake/ ------------------------------------------ */

/* The answer to an upload the spool refused (enum sp_result rc). */
static MHD_Result_t upload_failed(api *a, struct MHD_Connection *conn, int encoding, int rc)
{
	const char *enc = encoding == SP_GZIP ? "gzip" : "zstd";

	atomic_fetch_add(&a->rejected, 1);
	switch (rc) {
	case SP_ERR_TOO_LARGE:
		return http_reply_error(a, conn, 413, "upload exceeds the limit of %llu bytes",
					(unsigned long long)a->c->max_upload);
	case SP_ERR_ENCODING:
		return http_reply_error(a, conn, 400, "the %s stream is corrupt or truncated", enc);
	case SP_ERR_FULL:
		log_warn("msg=\"spool full\" dir=\"%s\"", a->c->spool_dir);
		return http_reply_error(a, conn, 507, "no space left for uploads; retry later");
	default:
		log_warn("msg=\"spool\" error=\"%s\"", strerror(errno));
		return http_reply_error(a, conn, 500, "cannot write to the spool");
	}
}

static int stream_begin(api *a, struct MHD_Connection *conn, req *r);

MHD_Result_t http_upload_begin(api *a, struct MHD_Connection *conn, req *r)
{
	const char *len = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	const char *enc = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Encoding");
	const char *type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	int encoding = SP_IDENTITY;

	/* refuse before reading a byte of the body */
	if (len && !enc && strtoull(len, NULL, 10) > a->c->max_upload) {
		atomic_fetch_add(&a->rejected, 1);
		return http_reply_error(a, conn, 413, "upload of %s bytes exceeds the limit of %llu",
					len, (unsigned long long)a->c->max_upload);
	}
	if (enc && !strcasecmp(enc, "zstd"))
		encoding = SP_ZSTD;
	else if (enc && (!strcasecmp(enc, "gzip") || !strcasecmp(enc, "x-gzip")))
		encoding = SP_GZIP;
	else if (enc && strcasecmp(enc, "identity"))
		return http_reply_error(a, conn, 415,
					"unsupported Content-Encoding '%s' (use zstd or gzip)", enc);
	if (!len && stream_begin(a, conn, r) < 0)
		return http_reply_error(a, conn, 503, "%d streamed uploads are under way, the most "
					"taken at once; retry later", API_MAX_STREAMS);
	r->up = intake_upload_begin(jobs_spool(a->j), encoding, a->c->max_upload,
				    type && !strncasecmp(type, "application/x-tar", 17));
	if (!r->up)
		return upload_failed(a, conn, encoding, errno == ENOSPC || errno == EDQUOT ?
				     SP_ERR_FULL : SP_ERR_IO);
	r->kind = REQ_UPLOAD;
	return MHD_YES;
}

/* A body without Content-Length (chunked) is a stream: counted, and its
 * connection may stay idle for API_STREAM_IDLE_S. -1 when too many are
 * under way. */
static int stream_begin(api *a, struct MHD_Connection *conn, req *r)
{
	unsigned idle = a->c->connection_timeout > API_STREAM_IDLE_S ?
			a->c->connection_timeout : API_STREAM_IDLE_S;

	if (atomic_fetch_add(&a->streams, 1) >= API_MAX_STREAMS) {
		atomic_fetch_sub(&a->streams, 1);
		atomic_fetch_add(&a->rejected, 1);
		return -1;
	}
	r->stream = 1;
	MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, idle);
	return 0;
}

void http_upload_completed(api *a, req *r)
{
	if (r->stream)
		atomic_fetch_sub(&a->streams, 1);
	r->stream = 0;
}

/* More body bytes: spooled, or dropped after a failure. MHD_NO cuts the
 * connection of a client too slow to be anything but stuck or hostile. */
MHD_Result_t http_upload_data(api *a, struct MHD_Connection *conn, req *r, const char *data,
			      size_t *data_size)
{
	(void)conn;
	/* a stream has no minimum rate: perf writes nothing while the
	 * recorded program sleeps */
	if (intake_upload_write(r->up, data, *data_size,
				r->stream ? 0 : a->c->connection_timeout) < 0) {
		atomic_fetch_add(&a->rejected, 1);
		return MHD_NO;	/* on_completed removes the partial spool file */
	}
	*data_size = 0;
	return MHD_YES;
}

/* {"id", "status", "sha256", "size", "name", "tags"}: the name and tags as
 * stored, so an uploader sees the labels its profile carries (for the same
 * bytes uploaded before: that profile's). */
static json_t *upload_answer(api *a, int64_t id, int existed, const char *sha, uint64_t size)
{
	json_t *ans = json_pack("{s:I,s:s,s:s,s:I}", "id", (json_int_t)id, "status",
				existed ? "exists" : "queued", "sha256", sha, "size",
				(json_int_t)size);
	int notfound = 0;
	json_t *p = st_profile_json(a->st, id, &notfound);

	if (ans && p) {
		json_object_set(ans, "name", json_object_get(p, "name"));
		json_object_set(ans, "tags", json_object_get(p, "tags"));
	}
	json_decref(p);
	return ans;
}

MHD_Result_t http_upload_end(api *a, struct MHD_Connection *conn, req *r)
{
	char sha[65], *path = NULL;
	uint64_t size = 0;
	http_tags tags = { 0 };
	const char *kind;
	int64_t id = 0;
	int existed = 0, rc, encoding = intake_upload_encoding(r->up);

	/* on failure the partial file goes before the answer does: a client
	 * that sees the error finds no trace of its upload in the spool */
	rc = intake_upload_finish(r->up, sha, &size, &path, &kind);
	r->up = NULL;
	if (rc != SP_OK)
		return upload_failed(a, conn, encoding, rc);
	http_tags_get(conn, &tags);
	if (tags.bad) {
		http_tags_free(&tags);
		free(path);
		return http_reply_error(a, conn, 400, "bad tag: want tag=KEY=VALUE (at most %d)",
					API_MAX_TAGS);
	}
	rc = intake_queue(a->st, a->j, a->c->queue_size, sha, path, kind, size,
			  http_arg(conn, "name"), tags.n, tags.keys, tags.values, &id, &existed);
	http_tags_free(&tags);
	if (rc == -2) {
		/* the spooled bytes belong to no profile */
		sp_remove(jobs_spool(a->j), path);
		free(path);
		return http_reply_error(a, conn, 503, "the job queue is full; retry later");
	}
	if (rc < 0) {
		free(path);
		return http_reply_error(a, conn, 500, "storage error");
	}
	atomic_fetch_add(existed ? &a->duplicates : &a->uploads, 1);
	log_info("msg=\"upload\" id=%lld sha256=%s bytes=%llu kind=%s duplicate=%d",
		 (long long)id, sha, (unsigned long long)size, kind, existed);
	free(path);
	return http_reply_json(a, conn, existed ? 200 : 202, upload_answer(a, id, existed, sha,
									   size));
}

/* ---- profiles ------------------------------------------------------------------ */

MHD_Result_t http_profiles_list(api *a, struct MHD_Connection *conn)
{
	st_list_filter f = { .limit = 100, .offset = 0, .status = -1 };
	http_tags tags = { 0 };
	const char *s;
	json_t *out;

	if (http_arg_i64(conn, "limit", 0, API_MAX_LIST, &f.limit) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'limit' (0..%d)", API_MAX_LIST);
	if (http_arg_i64(conn, "offset", 0, INT64_MAX, &f.offset) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'offset'");
	if (http_arg_i64(conn, "since", 0, INT64_MAX, &f.since) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'since' (unix seconds)");
	if (http_arg_i64(conn, "until", 0, INT64_MAX, &f.until) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'until' (unix seconds)");
	if ((s = http_arg(conn, "status")) && (f.status = st_status_parse(s)) < 0)
		return http_reply_error(a, conn, 400,
				   "bad parameter 'status' (queued, parsing, ready, failed)");
	f.hostname = http_arg(conn, "hostname");
	http_tags_get(conn, &tags);
	if (tags.bad || tags.n > 1) {
		http_tags_free(&tags);
		return http_reply_error(a, conn, 400, "bad parameter 'tag' (one tag=KEY=VALUE)");
	}
	if (tags.n) {
		f.tag_key = tags.keys[0];
		f.tag_value = tags.values[0];
	}
	out = st_profile_list_json(a->st, &f);
	http_tags_free(&tags);
	if (!out)
		return http_reply_error(a, conn, 500, "storage error");
	return http_reply_json(a, conn, 200, out);
}

MHD_Result_t http_profile_get(api *a, struct MHD_Connection *conn, int64_t id)
{
	int notfound = 0;
	json_t *o = st_profile_json(a->st, id, &notfound);

	if (notfound)
		return http_reply_error(a, conn, 404, "no profile %lld", (long long)id);
	if (!o)
		return http_reply_error(a, conn, 500, "storage error");
	return http_reply_json(a, conn, 200, o);
}

MHD_Result_t http_profile_delete(api *a, struct MHD_Connection *conn, int64_t id)
{
	char *path = NULL;
	int rc = st_profile_delete(a->st, id, &path);

	if (rc == 1)
		return http_reply_error(a, conn, 404, "no profile %lld", (long long)id);
	if (rc < 0)
		return http_reply_error(a, conn, 500, "storage error");
	if (path)
		sp_remove(jobs_spool(a->j), path);
	log_info("msg=\"delete\" id=%lld", (long long)id);
	free(path);
	return http_reply_empty(a, conn, 204);
}

/* ---- PATCH: a profile's name and tags ---------------------------------------------- */

#define API_MAX_NAME 256	/* bytes of a profile's name */
#define API_MAX_TAG_KEY 128
#define API_MAX_TAG_VALUE 256

/* A label text is UTF-8 (jansson checked) without control characters. */
static int label_ok(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (n > max)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

/* {"name": "..." | null, "tags": {"key": "value" | null, ...}}: the name
 * set or removed, each tag key set (its earlier value replaced) or
 * removed; anything else is refused before a thing changes. */
MHD_Result_t http_profile_patch(api *a, struct MHD_Connection *conn, int64_t id,
				const char *body, size_t len)
{
	const char *keys[API_MAX_TAGS], *values[API_MAX_TAGS], *k;
	st_profile_patch patch = { 0 };
	json_error_t jerr;
	json_t *in = json_loadb(body, len, 0, &jerr), *v, *tags;
	int notfound = 0, rc;
	MHD_Result_t ret;
	json_t *out;

	if (!in || !json_is_object(in)) {
		json_decref(in);
		return http_reply_error(a, conn, 400, "the body must be a JSON object "
					"{\"name\": ..., \"tags\": {...}}%s%s", in ? "" : ": ",
					in ? "" : jerr.text);
	}
	json_object_foreach(in, k, v)
		if (strcmp(k, "name") && strcmp(k, "tags")) {
			/* k belongs to in: answered before in goes */
			ret = http_reply_error(a, conn, 400, "unknown field '%.64s' (name, tags)", k);
			json_decref(in);
			return ret;
		}
	if ((v = json_object_get(in, "name"))) {
		if (!json_is_null(v) && (!json_is_string(v) ||
					 !label_ok(json_string_value(v), API_MAX_NAME))) {
			json_decref(in);
			return http_reply_error(a, conn, 400, "'name' must be a string of at most %d "
						"bytes without control characters, or null",
						API_MAX_NAME);
		}
		patch.set_name = 1;
		patch.name = json_string_value(v);
	}
	tags = json_object_get(in, "tags");
	if (tags && (!json_is_object(tags) || json_object_size(tags) > API_MAX_TAGS)) {
		json_decref(in);
		return http_reply_error(a, conn, 400, "'tags' must be an object of at most %d "
					"keys", API_MAX_TAGS);
	}
	json_object_foreach(tags, k, v) {
		if (!*k || strchr(k, '=') || !label_ok(k, API_MAX_TAG_KEY) ||
		    (!json_is_null(v) && (!json_is_string(v) ||
					  !label_ok(json_string_value(v), API_MAX_TAG_VALUE)))) {
			ret = http_reply_error(a, conn, 400, "bad tag '%.64s': a key of 1 to %d "
					       "bytes without '=' and a string value of at most %d "
					       "bytes (null removes it)", k, API_MAX_TAG_KEY,
					       API_MAX_TAG_VALUE);
			json_decref(in);
			return ret;
		}
		keys[patch.nr_tags] = k;
		values[patch.nr_tags++] = json_string_value(v);
	}
	if (!patch.set_name && !patch.nr_tags) {
		json_decref(in);
		return http_reply_error(a, conn, 400, "nothing to change: give 'name' or 'tags'");
	}
	patch.tag_keys = keys;
	patch.tag_values = values;
	rc = st_profile_update(a->st, id, &patch);
	json_decref(in);
	if (rc == 1)
		return http_reply_error(a, conn, 404, "no profile %lld", (long long)id);
	if (rc < 0)
		return http_reply_error(a, conn, 500, "storage error");
	log_info("msg=\"labels changed\" id=%lld", (long long)id);
	out = st_profile_json(a->st, id, &notfound);
	if (!out)
		return http_reply_error(a, conn, notfound ? 404 : 500, "profile %lld is gone",
					(long long)id);
	return http_reply_json(a, conn, 200, out);
}
