/*
 * api-client.h - perfhubd's API over libcurl, for the perfhub subcommands.
 *
 * The server is --server, else $PERFHUB_SERVER, else http://127.0.0.1:8080.
 * The token is read from --token-file FILE, else $PERFHUB_TOKEN, else the
 * file $PERFHUB_TOKEN_FILE names, and sent as "Authorization: Bearer" only:
 * it is never printed, never put on a command line, never passed on.
 */
#ifndef PERFHUB_CLI_API_CLIENT_H
#define PERFHUB_CLI_API_CLIENT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "args.h"

#define AC_DEFAULT_SERVER "http://127.0.0.1:8080"
#define AC_MAX_TOKEN 255	/* the server's limit */

typedef struct ac_client ac_client;

typedef struct ac_response {
	long status;		/* HTTP status */
	char *body;		/* NUL-terminated; owned, free with ac_response_free */
	size_t len;
} ac_response;

/* Reads up to len bytes of a streamed body: the count, 0 at its end, -1 on
 * an error (the request is aborted). May block. */
typedef long (*ac_read_fn)(void *ctx, char *buf, size_t len);

/* A request body: a FILE of `size` bytes, or a stream through `read`
 * (size -1) sent with chunked transfer encoding as it comes. */
typedef struct ac_body {
	const char *type;	/* Content-Type */
	FILE *fp;
	int64_t size;
	ac_read_fn read;
	void *ctx;
} ac_body;

/* NULL after printing why (no token where one was named, a bad token). */
ac_client *ac_open(const args_server *opt);
void ac_close(ac_client *c);

/* The server's base URL, without a trailing slash. */
const char *ac_server(const ac_client *c);

/* One request to server + path. 0 with *r filled (any HTTP status), -1 on
 * a transport error (printed; *r empty). */
int ac_request(ac_client *c, const char *method, const char *path, const ac_body *body,
	       ac_response *r);
void ac_response_free(ac_response *r);
/* GET path; a 200 answer's body is written to `out` as it arrives (never
 * kept), any other's kept in *r as ac_request keeps it. As ac_request. */
int ac_download(ac_client *c, const char *path, FILE *out, ac_response *r);

/* "perfhub WHAT: HTTP 404: no profile 7" from the server's {"error"}. */
void ac_print_error(const char *what, const ac_response *r);

/* GET path answered 200 with JSON: the object; else NULL (printed). */
json_t *ac_get_json(ac_client *c, const char *path, const char *what);

/* Appends "?key=value" or "&key=value" (value URL-escaped) to q (len bytes).
 * -1 when it does not fit (q unchanged). */
int ac_query_add(char *q, size_t len, const char *key, const char *value);

#endif
