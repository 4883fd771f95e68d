/*
 * upload.h - an upload's body streamed into the spool, and a spooled file
 * made a queued profile (the last step of every intake: HTTP upload and
 * the directory watcher).
 *
 * The HTTP side (http/profiles.c) reads the headers and answers; this
 * module sees only bytes, so nothing here knows libmicrohttpd.
 */
#ifndef PERFHUB_DAEMON_INTAKE_UPLOAD_H
#define PERFHUB_DAEMON_INTAKE_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "intake/spool.h"
#include "jobs/jobs.h"
#include "store/store.h"

/* An upload must average at least this many bytes a second once it has
 * run for the connection timeout: a trickling client (1 byte/s) would
 * otherwise hold a thread and a spool file forever, never being idle. */
#define INTAKE_MIN_UPLOAD_RATE 1024

typedef struct intake_upload intake_upload;


/* The body rate of one request, for the INTAKE_MIN_UPLOAD_RATE floor. */
typedef struct intake_rate {
	double started;		/* monotonic seconds */
	uint64_t bytes;		/* body bytes so far */
} intake_rate;

void intake_rate_start(intake_rate *r);
/* Counts n more bytes: 0, or -1 (logged) when the body averaged less
 * than INTAKE_MIN_UPLOAD_RATE once it ran for `timeout_s` (0: no floor). */
int intake_rate_add(intake_rate *r, size_t n, double timeout_s);

/* A new upload into spool_dir; `encoding` is enum sp_encoding, `max` caps
 * the decoded size, `is_tar` says the body is a tar of a perf.data
 * directory (else a perf.data file): the decoded body must start as one
 * (SP_ERR_MAGIC otherwise, an empty body too). NULL on error (errno). */
intake_upload *intake_upload_begin(spool *sp, int encoding, uint64_t max, int is_tar);
/* More body bytes. After the spool refused them (see intake_upload_failed)
 * the rest of the body is dropped: the HTTP server cannot answer in the
 * middle of a body. 0, or -1 when the client is too slow to be anything
 * but stuck or hostile (less than INTAKE_MIN_UPLOAD_RATE once it ran for
 * `timeout_s`): cut the connection then. timeout_s 0: no rate (a stream,
 * bounded by the caller otherwise). */
int intake_upload_write(intake_upload *u, const void *data, size_t len, double timeout_s);
/* The enum sp_result that made the spool refuse the body, SP_OK if none. */
int intake_upload_failed(const intake_upload *u);
/* enum sp_encoding of the body, for messages. */
int intake_upload_encoding(const intake_upload *u);
/* Ends the body: fsynced and stored in the spool. OUT: sha256, decoded
 * size, malloc'ed spool ref, kind ("file" or "tar"). enum sp_result; the
 * partial file is gone on failure. Frees u. */
int intake_upload_finish(intake_upload *u, char sha256[65], uint64_t *size, char **path,
			 const char **kind);
/* Throws the upload and its partial file away. Frees u; NULL is fine. */
void intake_upload_abort(intake_upload *u);

/* A spooled file becomes a queued profile (or the existing one with the
 * same bytes, which takes this name and these tags), and a worker is
 * woken. `local`: a recording of this machine (a watched directory's),
 * symbolized from its files as perf would; an upload is not
 * (jobs/ingest.h). OUT: id, existed (as st_profile_add: 0 new, 1 there
 * already, 2 there already and relabeled). 0, or -1 (storage), -2 (queue
 * full: the caller removes the spooled file). */
int intake_queue(st_store *st, jobs *j, unsigned queue_size, const char *sha256,
		 const char *path, const char *kind, uint64_t size, const char *name,
		 size_t nr_tags, const char *const *keys, const char *const *values, int local,
		 int64_t *id, int *existed);

#endif
