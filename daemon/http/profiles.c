/* profiles.c - uploading, listing, showing and deleting profiles. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/http.h"
#include "intake/labels.h"
#include "intake/spool.h"
#include "log.h"

/* ---- uploads: the body goes to intake/ ------------------------------------------ */

/* The answer to an upload the spool refused (enum sp_result rc). */
static MHD_Result_t upload_failed(api *a, struct MHD_Connection *conn, int encoding, int is_tar,
				  int rc)
{
	const char *enc = encoding == SP_GZIP ? "gzip" : "zstd";

	atomic_fetch_add(&a->rejected, 1);
	switch (rc) {
	case SP_ERR_MAGIC:
		return http_reply_error(a, conn, 400, is_tar ?
					"not a tar of a perf.data directory (empty, or no ustar header)" :
					"not a perf.data file (empty, or it does not start with PERFILE2 "
					"or PERFFILE)");
	case SP_ERR_TOO_LARGE:
		return http_reply_error(a, conn, 413, "upload exceeds the limit of %llu bytes",
					(unsigned long long)a->c->max_upload);
	case SP_ERR_RATIO:
		return http_reply_error(a, conn, 413, "the %s body decodes to more than %d times its"
					" size: refused as a decompression bomb", enc, SP_MAX_RATIO);
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
	char why[HTTP_WHY_LEN];
	const char *len = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	const char *enc = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Encoding");
	const char *type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	int encoding = SP_IDENTITY, is_tar = type && !strncasecmp(type, "application/x-tar", 17);

	/* refuse before reading a byte of the body */
	if (len && !enc && strtoull(len, NULL, 10) > a->c->max_upload) {
		atomic_fetch_add(&a->rejected, 1);
		return http_reply_error(a, conn, 413, "upload of %.32s bytes exceeds the limit of %llu",
					len, (unsigned long long)a->c->max_upload);
	}
	if (enc && !strcasecmp(enc, "zstd"))
		encoding = SP_ZSTD;
	else if (enc && (!strcasecmp(enc, "gzip") || !strcasecmp(enc, "x-gzip")))
		encoding = SP_GZIP;
	else if (enc && strcasecmp(enc, "identity"))
		return http_reply_error(a, conn, 415,
					"unsupported Content-Encoding '%.64s' (use zstd or gzip)", enc);
	if (http_labels_check(conn, why, sizeof(why)) < 0) {
		atomic_fetch_add(&a->rejected, 1);
		return http_reply_error(a, conn, 400, "%s", why);
	}
	if (!len && stream_begin(a, conn, r) < 0)
		return http_reply_error(a, conn, 503, "%d streamed uploads are under way, the most "
					"taken at once; retry later", API_MAX_STREAMS);
	r->up = intake_upload_begin(jobs_spool(a->j), encoding, a->c->max_upload, is_tar);
	if (!r->up)
		return upload_failed(a, conn, encoding, is_tar, errno == ENOSPC ||
				     errno == EDQUOT ? SP_ERR_FULL : SP_ERR_IO);
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
 * bytes uploaded before: that profile's, with this upload's name and tags
 * applied, and "relabeled": true when they changed it). */
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
	/* the same bytes again under another name or tags: applied, and said */
	if (ans && existed == 2)
		json_object_set_new(ans, "relabeled", json_true());
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
		return upload_failed(a, conn, encoding, !strcmp(kind, "tar"), rc);
	http_tags_get(conn, &tags);
	if (tags.bad) {
		http_tags_free(&tags);
		free(path);
		return http_reply_error(a, conn, 400, "bad tag: want tag=KEY=VALUE (at most %d)",
					API_MAX_TAGS);
	}
	rc = intake_queue(a->st, a->j, a->c->queue_size, sha, path, kind, size,
			  http_arg(conn, "name"), tags.n, tags.keys, tags.values,
			  a->c->local_uploads, &id, &existed);
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
	log_info("msg=\"upload\" id=%lld sha256=%s bytes=%llu kind=%s duplicate=%d relabeled=%d",
		 (long long)id, sha, (unsigned long long)size, kind, existed != 0, existed == 2);
	free(path);
	return http_reply_json(a, conn, existed ? 200 : 202, upload_answer(a, id, existed, sha,
									   size));
}

/* ---- profiles ------------------------------------------------------------------ */

MHD_Result_t http_profiles_list(api *a, struct MHD_Connection *conn)
{
	st_list_filter f = { .limit = 100, .offset = 0, .status = -1 };
	http_tags tags = { 0 };
	http_pick hp;
	MHD_Result_t ret;
	const char *s;
	json_t *out;

	if (http_arg_i64(conn, "limit", 0, API_MAX_LIST, &f.limit) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'limit' (0..%d)", API_MAX_LIST);
	if (http_arg_i64(conn, "offset", 0, INT64_MAX, &f.offset) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'offset'");
	if ((s = http_arg(conn, "status")) && (f.status = st_status_parse(s)) < 0)
		return http_reply_error(a, conn, 400,
				   "bad parameter 'status' (queued, parsing, ready, failed)");
	/* q, and since/until as RFC 3339, a duration back from now or unix
	 * seconds (limit stays the page size) */
	if (http_pick_parse(a, conn, "", HTTP_PICK_NO_LIMIT, &hp, &ret) < 0)
		return ret;
	f.since = hp.pick.since;
	f.until = hp.pick.until;
	f.sel = hp.sel;
	f.hostname = http_arg(conn, "hostname");
	http_tags_get(conn, &tags);
	if (tags.bad || tags.n > 1) {
		http_tags_free(&tags);
		http_pick_free(&hp);
		return http_reply_error(a, conn, 400, "bad parameter 'tag' (one tag=KEY=VALUE)");
	}
	if (tags.n) {
		f.tag_key = tags.keys[0];
		f.tag_value = tags.values[0];
	}
	out = st_profile_list_json(a->st, &f);
	http_tags_free(&tags);
	http_pick_free(&hp);
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

/* PATCH: the name and tags http_json_patch read, all or nothing. */
MHD_Result_t http_profile_patch(api *a, struct MHD_Connection *conn, int64_t id,
				const char *body, size_t len)
{
	char why[HTTP_WHY_LEN];
	http_patch in;
	st_profile_patch patch = { 0 };
	int notfound = 0, rc;
	json_t *out;

	if (http_json_patch(body, len, &in, why, sizeof(why)) < 0)
		return http_reply_error(a, conn, 400, "%s", why);
	patch.set_name = in.set_name;
	patch.name = in.name;
	patch.nr_tags = in.nr_tags;
	patch.tag_keys = in.keys;
	patch.tag_values = in.values;
	rc = st_profile_update(a->st, id, &patch);
	json_decref(in.doc);
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
