/* routes.c - the table of every route the server answers, and finding a request's route in it. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"

/* The query parameters each route takes (a typo such as wieght=samples
 * would otherwise give the default answer without a word). */
static const char *const none[] = { NULL };
/* a selector and its time bounds (http_pick_parse) */
#define PICK_PARAMS "q", "since", "until", "limit"
static const char *const list_params[] = { "limit", "offset", "status", "hostname", "tag",
					   "since", "until", "q", NULL };
static const char *const upload_params[] = { "name", "tag", NULL };
static const char *const collapsed_params[] = { HTTP_FOLD_PARAMS, NULL };
static const char *const flamegraph_params[] = { HTTP_FOLD_PARAMS, "max_nodes", NULL };
static const char *const top_params[] = { HTTP_FILTER_PARAMS, "limit", NULL };
static const char *const timeline_params[] = { "event", "bucket_ms", "weight", NULL };
static const char *const sandwich_params[] = { "function", HTTP_FOLD_PARAMS, "max_nodes", NULL };
static const char *const annotate_params[] = { "function", "event", "weight", "dso", NULL };
static const char *const pprof_params[] = { HTTP_FILTER_PARAMS, NULL };
static const char *const speedscope_params[] = { HTTP_FILTER_PARAMS, "group", NULL };
static const char *const diff_params[] = { "base", "base_q", "base_since", "base_until",
					   "base_limit", "target", "target_q", "target_since",
					   "target_until", "target_limit", HTTP_FOLD_PARAMS,
					   "max_nodes", "min_share", "alpha", "rows", NULL };
static const char *const aggregate_params[] = { "group_by", "hostname", "tag", "since", "until",
						"limit", "q", NULL };
static const char *const series_params[] = { PICK_PARAMS, "function", "dso", "comm", "metric",
					     "event", "group_by", NULL };
static const char *const query_flamegraph_params[] = { PICK_PARAMS, HTTP_FOLD_PARAMS, "max_nodes",
						       "normalize", NULL };
static const char *const query_collapsed_params[] = { PICK_PARAMS, HTTP_FOLD_PARAMS, NULL };
static const char *const query_top_params[] = { PICK_PARAMS, HTTP_FILTER_PARAMS, "rows",
						"normalize", NULL };
static const char *const query_pprof_params[] = { PICK_PARAMS, HTTP_FILTER_PARAMS, NULL };
static const char *const query_timeline_params[] = { PICK_PARAMS, "event", "bucket_ms", NULL };

/* Every route. The OpenAPI description (docs/openapi.json) describes
 * each of them and its query parameters; tests/http-routes prints this
 * table and the test of the description checks the two against each
 * other. The run field says where the answer is made (enum
 * http_route_run): heavy queries are bounded by --max-queries; inline
 * ones never block the event loop. */
const http_route http_routes[] = {
	{ "GET", "/", ROUTE_PLAIN, http_get_page, NULL, NULL, RUN_INLINE,
	  NULL },
	{ "GET", "/healthz", ROUTE_PLAIN, http_get_healthz, NULL, NULL, RUN_INLINE,
	  none },
	{ "GET", "/metrics", ROUTE_PLAIN, http_get_metrics, NULL, NULL, RUN_LIGHT,
	  none },
	{ "GET", "/api/v1/openapi.json", ROUTE_PLAIN, http_get_openapi, NULL, NULL, RUN_INLINE,
	  none },
	{ "GET", "/api/v1/profiles", ROUTE_PLAIN, http_profiles_list, NULL, NULL, RUN_LIGHT,
	  list_params },
	{ "POST", "/api/v1/profiles", ROUTE_UPLOAD, NULL, NULL, NULL, RUN_LIGHT,
	  upload_params },
	{ "GET", "/api/v1/profiles/{id}", ROUTE_PLAIN, NULL, http_profile_get, NULL, RUN_LIGHT,
	  none },
	{ "PATCH", "/api/v1/profiles/{id}", ROUTE_BODY, NULL, NULL, http_profile_patch, RUN_LIGHT,
	  none },
	{ "DELETE", "/api/v1/profiles/{id}", ROUTE_PLAIN, NULL, http_profile_delete, NULL, RUN_LIGHT,
	  none },
	{ "GET", "/api/v1/profiles/{id}/collapsed", ROUTE_PLAIN, NULL, http_get_collapsed, NULL, RUN_HEAVY,
	  collapsed_params },
	{ "GET", "/api/v1/profiles/{id}/flamegraph", ROUTE_PLAIN, NULL, http_get_flamegraph, NULL, RUN_HEAVY,
	  flamegraph_params },
	{ "GET", "/api/v1/profiles/{id}/top", ROUTE_PLAIN, NULL, http_get_top, NULL, RUN_HEAVY,
	  top_params },
	{ "GET", "/api/v1/profiles/{id}/timeline", ROUTE_PLAIN, NULL, http_get_timeline, NULL, RUN_HEAVY,
	  timeline_params },
	{ "GET", "/api/v1/profiles/{id}/threads", ROUTE_PLAIN, NULL, http_get_threads, NULL, RUN_HEAVY,
	  none },
	{ "GET", "/api/v1/profiles/{id}/sandwich", ROUTE_PLAIN, NULL, http_get_sandwich, NULL, RUN_HEAVY,
	  sandwich_params },
	{ "GET", "/api/v1/profiles/{id}/annotate", ROUTE_PLAIN, NULL, http_get_annotate, NULL, RUN_HEAVY,
	  annotate_params },
	{ "GET", "/api/v1/profiles/{id}/pprof", ROUTE_PLAIN, NULL, http_get_pprof, NULL, RUN_HEAVY,
	  pprof_params },
	{ "GET", "/api/v1/profiles/{id}/speedscope", ROUTE_PLAIN, NULL, http_get_speedscope, NULL, RUN_HEAVY,
	  speedscope_params },
	{ "GET", "/api/v1/profiles/{id}/perf.data", ROUTE_PLAIN, NULL, http_get_perf_data, NULL, RUN_LIGHT,
	  none },
	{ "POST", "/api/v1/profiles/{id}/resymbolize", ROUTE_DEBUGINFO, NULL, NULL, NULL, RUN_LIGHT,
	  none },
	{ "GET", "/api/v1/diff", ROUTE_PLAIN, http_get_diff, NULL, NULL, RUN_HEAVY,
	  diff_params },
	{ "GET", "/api/v1/aggregate", ROUTE_PLAIN, http_get_aggregate, NULL, NULL, RUN_HEAVY,
	  aggregate_params },
	{ "GET", "/api/v1/series", ROUTE_PLAIN, http_get_series, NULL, NULL, RUN_HEAVY,
	  series_params },
	{ "GET", "/api/v1/query/flamegraph", ROUTE_PLAIN, http_query_flamegraph, NULL, NULL, RUN_HEAVY,
	  query_flamegraph_params },
	{ "GET", "/api/v1/query/collapsed", ROUTE_PLAIN, http_query_collapsed, NULL, NULL, RUN_HEAVY,
	  query_collapsed_params },
	{ "GET", "/api/v1/query/pprof", ROUTE_PLAIN, http_query_pprof, NULL, NULL, RUN_HEAVY,
	  query_pprof_params },
	{ "GET", "/api/v1/query/top", ROUTE_PLAIN, http_query_top, NULL, NULL, RUN_HEAVY,
	  query_top_params },
	{ "GET", "/api/v1/query/timeline", ROUTE_PLAIN, http_query_timeline, NULL, NULL, RUN_HEAVY,
	  query_timeline_params },
	{ "POST", "/api/v1/debuginfo/missing", ROUTE_DEBUGINFO, NULL, NULL, NULL, RUN_LIGHT,
	  none },
	{ "POST", "/api/v1/debuginfo/archive", ROUTE_DEBUGINFO, NULL, NULL, NULL, RUN_HEAVY,
	  none },
	{ "GET", "/api/v1/debuginfo/{build_id}", ROUTE_DEBUGINFO, NULL, NULL, NULL, RUN_LIGHT,
	  none },
	{ "PUT", "/api/v1/debuginfo/{build_id}", ROUTE_DEBUGINFO, NULL, NULL, NULL, RUN_LIGHT,
	  none },
	{ "DELETE", "/api/v1/debuginfo/{build_id}", ROUTE_DEBUGINFO, NULL, NULL, NULL, RUN_LIGHT,
	  none },
};
const size_t http_nr_routes = sizeof(http_routes) / sizeof(http_routes[0]);

/* "123" -> 123 (a profile id: 1 or more). -1 when it is not one. */
static int parse_id(const char *p, size_t n, int64_t *id)
{
	char buf[24], *end;
	long long v;

	if (!n || n >= sizeof(buf) || *p < '0' || *p > '9')
		return -1;
	memcpy(buf, p, n);
	buf[n] = 0;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || v <= 0 || *end)
		return -1;
	*id = v;
	return 0;
}

/* Whether url has the shape of pattern (one trailing '/' allowed); the
 * {id} segment's value into *id. */
static int path_matches(const char *pattern, const char *url, int64_t *id)
{
	const char *p = pattern, *u = url;

	for (;;) {
		size_t pn, un;
		if (*p != '/' || *u != '/')
			return 0;
		p++;
		u++;
		pn = strcspn(p, "/");
		un = strcspn(u, "/");
		if (!strncmp(p, "{id}", 4) && pn == 4) {
			if (parse_id(u, un, id) < 0)
				return 0;
		} else if (*p == '{') {
			if (!un)
				return 0;
		} else if (pn != un || strncmp(p, u, pn)) {
			return 0;
		}
		p += pn;
		u += un;
		if (!*p)
			return !*u || !strcmp(u, "/");
	}
}

static int method_matches(const char *route, const char *method)
{
	return !strcmp(route, method) || (!strcmp(route, "GET") && !strcmp(method, "HEAD"));
}

const http_route *http_route_find(const char *method, const char *url, int64_t *id,
				  char *allowed, size_t allowed_len)
{
	size_t i, n = 0;

	*id = 0;
	if (allowed_len)
		allowed[0] = 0;
	for (i = 0; i < http_nr_routes; i++) {
		const http_route *r = &http_routes[i];
		if (!path_matches(r->path, url, id))
			continue;
		if (method_matches(r->method, method))
			return r;
		if (n < allowed_len) {
			size_t l = strlen(r->method);
			if (n && n + 2 < allowed_len) {
				memcpy(allowed + n, ", ", 2);
				n += 2;
			}
			if (n + l < allowed_len) {
				memcpy(allowed + n, r->method, l);
				n += l;
			}
			allowed[n] = 0;
		}
	}
	return NULL;
}
