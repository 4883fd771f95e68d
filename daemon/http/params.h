/*
 * params.h - what a request says, read without trusting it: query
 * parameters (integers in bounds, tag=KEY=VALUE, the folded-stack filters,
 * an upload's name and tags), Accept-Encoding, and JSON bodies. Nothing
 * here answers: a bad value comes back as -1 and a sentence for the 400.
 *
 * Only MHD_lookup_connection_value and MHD_get_connection_values are used
 * to reach the request, so tests/fuzz-http.c drives these parsers with
 * requests of its own.
 */
#ifndef PERFHUB_DAEMON_HTTP_PARAMS_H
#define PERFHUB_DAEMON_HTTP_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <microhttpd.h>

#include "store/store.h"

#define API_MAX_TAGS 32
#define HTTP_WHY_LEN 160	/* room for the reason of a 400 */

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

/* An upload's name and tags (intake_check_label each). 0, or -1 and why. */
int http_labels_check(struct MHD_Connection *conn, char *why, size_t whylen);

/* The filters every folded-stack query takes. weight is samples, period,
 * offcpu (f.measure PE_MEASURE_OFFCPU: nanoseconds switched out) or wall
 * (PE_MEASURE_WALL: on-CPU plus off-CPU nanoseconds). */
/* One weight default for every answer (the contract's for /collapsed and
 * perfhub collapse): the period, as stackcollapse-perf sums it. */
#define HTTP_DEFAULT_WEIGHT "period"
#define HTTP_EVENT_MAX 1024	/* longest event name a query resolves */

typedef struct http_fold_args {
	st_fold_filter f;
	int by_samples;		/* weight=samples */
	char event[HTTP_EVENT_MAX];	/* f.event once http_fold_event resolved it */
	int64_t gen;		/* the parse generation the event was resolved in; 0 = none */
} http_fold_args;
/* No filter, the default weight, the default event (not resolved yet). */
void http_fold_args_init(http_fold_args *fa);
/* Reads them (strings point into the request). 0, or -1 and why. */
int http_fold_args_read(struct MHD_Connection *conn, http_fold_args *fa, char *why,
			size_t whylen);

/* Whether Accept-Encoding takes the coding `name` ("gzip" also as
 * "x-gzip"; "*" takes any), without q=0. */
int http_accepts(struct MHD_Connection *conn, const char *name);

/* {"build_ids": ["hex", ...]}: the array, at most `max` strings (a new
 * reference). NULL and why when the body is not that. */
json_t *http_json_build_ids(const char *body, size_t len, size_t max, char *why,
			    size_t whylen);

/* A PATCH body, {"name": "..." | null, "tags": {"key": "value" | null}}:
 * the name set or removed, each tag set (its value replaced) or removed;
 * names and tags pass intake_check_label. The strings belong to doc
 * (json_decref it). 0, or -1 and why (nothing to free then). */
typedef struct http_patch {
	json_t *doc;
	int set_name;
	const char *name;	/* NULL: remove the name */
	size_t nr_tags;
	const char *keys[API_MAX_TAGS], *values[API_MAX_TAGS];	/* value NULL: remove */
} http_patch;
int http_json_patch(const char *body, size_t len, http_patch *out, char *why, size_t whylen);

#endif
