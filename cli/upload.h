/*
 * upload.h - a recording to the server: a file, a perf.data directory (as a
 * tar), a perf archive bundle, or a stream (pipe mode) sent as it comes.
 * cmd_upload is in commands.h; perfhub record streams through up_stream.
 */
#ifndef PERFHUB_CLI_UPLOAD_H
#define PERFHUB_CLI_UPLOAD_H

#include <stdint.h>

#include <jansson.h>

#include "api-client.h"
#include "labels.h"

typedef struct up_opts {
	const char *who;	/* the command, for messages: "upload", "record" */
	const char *name;	/* the profile's name, or NULL */
	const lb_set *labels;	/* its tags */
	int debuginfo;		/* send what the server lacks */
	int verbose;		/* a line per debuginfo file */
} up_opts;

/* What the server answered to an upload. */
typedef struct up_result {
	int64_t id;
	int existed;		/* the same bytes were stored before: its id */
	size_t debuginfo_stored;	/* files the server did not have */
	json_t *answer;		/* the POST answer (owned; json_decref) */
} up_result;

/* Where a stream comes from: fd, read to its end. When `complete` is set
 * it is asked at the end whether the stream is whole: 0 aborts the upload,
 * so the server keeps nothing of it. */
typedef struct up_source {
	int fd;
	int (*complete)(void *ctx);
	void *ctx;
} up_source;

/*
 * Streams a pipe-mode recording to the server as it comes, chunked, once
 * its first bytes are there, reading the stream's build-ids on the way;
 * once it ends, sends the debuginfo the server lacks for them. 0 with
 * *res filled; -1 when the stream was empty or incomplete, or the server
 * refused or could not be reached (printed): the fd may then hold unread
 * bytes.
 */
int up_stream(ac_client *c, const up_source *src, const up_opts *o, up_result *res);

/*
 * The answer after an upload, on stdout: without wait the id (or with
 * json the server's answer, its tags and page); with wait, the final state
 * as perfhub show prints it. OUT: *final the final profile (may be NULL;
 * json_decref). Returns 0, or 1 when the profile failed or the wait did.
 */
int up_report(ac_client *c, const up_opts *o, const up_result *res, int wait, int json,
	      json_t **final);

#endif
