/* routes.c - the table of every route the server answers, and finding a request's route in it. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"

/* Every route. The OpenAPI description (docs/openapi.json) describes
 * each of them; tests/http-routes prints this table and the test of the
 * description checks the two against each other. */
const http_route http_routes[] = {
	{ "GET", "/", ROUTE_PLAIN, http_get_page, NULL, NULL },
	{ "GET", "/healthz", ROUTE_PLAIN, http_get_healthz, NULL, NULL },
	{ "GET", "/metrics", ROUTE_PLAIN, http_get_metrics, NULL, NULL },
	{ "GET", "/api/v1/openapi.json", ROUTE_PLAIN, http_get_openapi, NULL, NULL },
	{ "GET", "/api/v1/profiles", ROUTE_PLAIN, http_profiles_list, NULL, NULL },
	{ "POST", "/api/v1/profiles", ROUTE_UPLOAD, NULL, NULL, NULL },
	{ "GET", "/api/v1/profiles/{id}", ROUTE_PLAIN, NULL, http_profile_get, NULL },
	{ "PATCH", "/api/v1/profiles/{id}", ROUTE_BODY, NULL, NULL, http_profile_patch },
	{ "DELETE", "/api/v1/profiles/{id}", ROUTE_PLAIN, NULL, http_profile_delete, NULL },
	{ "GET", "/api/v1/profiles/{id}/collapsed", ROUTE_PLAIN, NULL, http_get_collapsed, NULL },
	{ "GET", "/api/v1/profiles/{id}/flamegraph", ROUTE_PLAIN, NULL, http_get_flamegraph, NULL },
	{ "GET", "/api/v1/profiles/{id}/top", ROUTE_PLAIN, NULL, http_get_top, NULL },
	{ "GET", "/api/v1/profiles/{id}/timeline", ROUTE_PLAIN, NULL, http_get_timeline, NULL },
	{ "GET", "/api/v1/profiles/{id}/threads", ROUTE_PLAIN, NULL, http_get_threads, NULL },
	{ "GET", "/api/v1/profiles/{id}/sandwich", ROUTE_PLAIN, NULL, http_get_sandwich, NULL },
	{ "GET", "/api/v1/profiles/{id}/annotate", ROUTE_PLAIN, NULL, http_get_annotate, NULL },
	{ "GET", "/api/v1/profiles/{id}/pprof", ROUTE_PLAIN, NULL, http_get_pprof, NULL },
	{ "GET", "/api/v1/profiles/{id}/speedscope", ROUTE_PLAIN, NULL, http_get_speedscope, NULL },
	{ "GET", "/api/v1/profiles/{id}/perf.data", ROUTE_PLAIN, NULL, http_get_perf_data, NULL },
	{ "POST", "/api/v1/profiles/{id}/resymbolize", ROUTE_DEBUGINFO, NULL, NULL, NULL },
	{ "GET", "/api/v1/diff", ROUTE_PLAIN, http_get_diff, NULL, NULL },
	{ "GET", "/api/v1/aggregate", ROUTE_PLAIN, http_get_aggregate, NULL, NULL },
	{ "POST", "/api/v1/debuginfo/missing", ROUTE_DEBUGINFO, NULL, NULL, NULL },
	{ "POST", "/api/v1/debuginfo/archive", ROUTE_DEBUGINFO, NULL, NULL, NULL },
	{ "GET", "/api/v1/debuginfo/{build_id}", ROUTE_DEBUGINFO, NULL, NULL, NULL },
	{ "PUT", "/api/v1/debuginfo/{build_id}", ROUTE_DEBUGINFO, NULL, NULL, NULL },
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
