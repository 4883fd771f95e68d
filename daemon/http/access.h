/*
 * access.h - who may ask what, decided from the request line and headers
 * alone (no libmicrohttpd here, so the fuzzer and tests call it directly).
 *
 * Browsers: a request whose Origin is not the server's own (the origin
 * whose host is the request's Host) is refused unless the Origin is in
 * --allowed-origin, so a page elsewhere cannot make a visitor's browser
 * upload or delete. On a loopback listener the Host must be a localhost
 * name, a loopback address, the listen address or in --allowed-host, so a
 * DNS name rebound to 127.0.0.1 does not reach the API; with
 * --allowed-host set, any listener checks Host.
 *
 * Tokens: the page's own files and /healthz never need one; API reads
 * need one when the token file says require-read-token; writes (POST,
 * PUT, PATCH) need the write role and DELETE the admin role; /metrics is
 * a read unless the token file says protect-metrics (admin then).
 */
#ifndef PERFHUB_DAEMON_HTTP_ACCESS_H
#define PERFHUB_DAEMON_HTTP_ACCESS_H

#include <stddef.h>

#define ACC_MAX_NAME 256	/* longest Host or Origin looked at */

typedef struct acc_policy {
	int check_host;		/* loopback listener, or allowed hosts given */
	int loopback;		/* localhost names are the server's own */
	char listen_host[64];	/* the listen address as a Host names it */
	const char *const *hosts;	/* --allowed-host ("*": any) */
	size_t nr_hosts;
	const char *const *origins;	/* --allowed-origin ("*": any) */
	size_t nr_origins;
} acc_policy;

/* 1 when Host may be served (NULL, as HTTP/1.0 may send, is allowed). */
int acc_host_allowed(const acc_policy *p, const char *host);
/* 1 when a request with this Origin (NULL: none, not a browser's
 * cross-origin request) and Host may be served. */
int acc_origin_allowed(const acc_policy *p, const char *origin, const char *host);

enum acc_need { ACC_OPEN, ACC_READ, ACC_WRITE, ACC_ADMIN };
/* What a request needs when a token file is in use. */
int acc_need(const char *method, const char *url, int reads_need_token, int protect_metrics);

/* 1 when the address (an IPv4 or IPv6 literal) is a loopback one. */
int acc_is_loopback(const char *addr);

#endif
