/*
 * http-routes: checks that the routing table perfhubd uses
 * (daemon/http/routes.c) finds each of its own routes ({id} as 7,
 * {build_id} as ab12, a trailing slash, HEAD for GET) and lists the
 * allowed methods for a wrong one. With --list it prints every route,
 * "METHOD PATH" a line: tests/api-openapi.py compares them with
 * docs/openapi.json.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "http/http.h"

/* The path with example values for its variable segments. */
static void concrete(const char *pattern, char *out, size_t cap)
{
	size_t n = 0;

	while (*pattern && n + 8 < cap) {
		if (!strncmp(pattern, "{id}", 4)) {
			n += (size_t)snprintf(out + n, cap - n, "7");
			pattern += 4;
		} else if (*pattern == '{') {
			n += (size_t)snprintf(out + n, cap - n, "ab12");
			pattern = strchr(pattern, '}') + 1;
		} else {
			out[n++] = *pattern++;
		}
	}
	out[n] = 0;
}

int main(int argc, char **argv)
{
	char url[512], allowed[64];
	int64_t id;
	size_t i;

	if (argc > 1 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < http_nr_routes; i++)
			printf("%s %s\n", http_routes[i].method, http_routes[i].path);
		return 0;
	}
	for (i = 0; i < http_nr_routes; i++) {
		const http_route *r = &http_routes[i], *got;
		concrete(r->path, url, sizeof(url));
		got = http_route_find(r->method, url, &id, allowed, sizeof(allowed));
		CHECK(got == r, "%s %s: found %s", r->method, url, got ? got->path : "nothing");
		if (strstr(r->path, "{id}"))
			CHECK(id == 7, "%s: id %lld", url, (long long)id);
		/* one trailing slash is the same route */
		strcat(url, "/");
		if (strcmp(url, "//"))
			CHECK(http_route_find(r->method, url, &id, allowed, sizeof(allowed)) == r,
			      "%s %s", r->method, url);
		if (!strcmp(r->method, "GET"))
			CHECK(http_route_find("HEAD", url, &id, allowed, sizeof(allowed)) == r,
			      "HEAD %s", url);
	}
	CHECK(!http_route_find("POST", "/api/v1/profiles/7/top", &id, allowed, sizeof(allowed)) &&
	      !strcmp(allowed, "GET"), "POST top: allowed '%s'", allowed);
	CHECK(!http_route_find("PUT", "/api/v1/profiles/7", &id, allowed, sizeof(allowed)) &&
	      !strcmp(allowed, "GET, PATCH, DELETE"), "PUT profile: allowed '%s'", allowed);
	CHECK(!http_route_find("GET", "/api/v1/profiles/0/top", &id, allowed, sizeof(allowed)) &&
	      !allowed[0], "profile 0");
	CHECK(!http_route_find("GET", "/api/v1/profiles/7x/top", &id, allowed, sizeof(allowed)),
	      "7x");
	CHECK(!http_route_find("GET", "/api/v1/profiles/99999999999999999999999/top", &id, allowed,
			       sizeof(allowed)), "a number too large");
	CHECK(!http_route_find("GET", "/api/v1/profiles/7/top/x", &id, allowed, sizeof(allowed)),
	      "a segment too many");
	CHECK(!http_route_find("GET", "/api/v1/debuginfo/", &id, allowed, sizeof(allowed)),
	      "an empty build-id");
	return check_done("http-routes");
}
