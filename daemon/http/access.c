/* access.c - Origin and Host checks, and the role a request needs. */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/access.h"

/* "name[:port]" or "[v6]:port" -> lowercase name (brackets dropped) and
 * the port (0 when absent). -1 when it is not a host. */
static int split_authority(const char *in, size_t len, char name[ACC_MAX_NAME],
			   unsigned *port)
{
	const char *end = in + len, *colon = NULL, *p;
	size_t n;

	*port = 0;
	if (!len || len >= ACC_MAX_NAME)
		return -1;
	if (*in == '[') {
		const char *close = memchr(in, ']', len);

		if (!close || close == in + 1)
			return -1;
		n = (size_t)(close - in - 1);
		memcpy(name, in + 1, n);
		name[n] = 0;
		for (p = name; *p; p++)
			if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
				return -1;
		if (close + 1 < end && close[1] != ':')
			return -1;
		colon = close + 1 < end ? close + 1 : NULL;
	} else {
		colon = memchr(in, ':', len);
		n = (size_t)((colon ? colon : end) - in);
		if (!n)
			return -1;
		memcpy(name, in, n);
		name[n] = 0;
		for (p = name; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_')
				return -1;
		/* no empty label: "a..localhost" or ".localhost" is no name */
		if (name[0] == '.' || strstr(name, ".."))
			return -1;
	}
	for (char *q = name; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	if (colon) {
		unsigned long v = 0;

		if (colon + 1 == end || end - colon - 1 > 5)
			return -1;
		for (p = colon + 1; p < end; p++) {
			if (!isdigit((unsigned char)*p))
				return -1;
			v = v * 10 + (unsigned)(*p - '0');
		}
		if (v == 0 || v > 65535)
			return -1;
		*port = (unsigned)v;
	}
	return 0;
}

int acc_is_loopback(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &a6) != 1)
		return 0;
	if (IN6_IS_ADDR_LOOPBACK(&a6))
		return 1;
	return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
}

/* localhost, *.localhost (RFC 6761) and loopback addresses */
static int is_localhost_name(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, "localhost") ||
	    (n > 10 && !strcmp(name + n - 10, ".localhost")))
		return 1;
	return acc_is_loopback(name);
}

static int listed(const char *const *list, size_t n, const char *whole, size_t whole_len,
		  const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *e = list[i];
		size_t el = strlen(e);

		while (el && e[el - 1] == '/')
			el--;
		if ((el == 1 && *e == '*') || (el == whole_len && !strncasecmp(e, whole, el)) ||
		    (name && el == strlen(name) && !strncasecmp(e, name, el)))
			return 1;
	}
	return 0;
}

int acc_host_allowed(const acc_policy *p, const char *host)
{
	char name[ACC_MAX_NAME];
	unsigned port;

	if (!host || !p->check_host)
		return 1;
	if (split_authority(host, strlen(host), name, &port) < 0)
		return 0;
	if (p->loopback && is_localhost_name(name))
		return 1;
	if (p->listen_host[0] && !strcasecmp(name, p->listen_host))
		return 1;
	return listed(p->hosts, p->nr_hosts, host, strlen(host), name);
}

int acc_origin_allowed(const acc_policy *p, const char *origin, const char *host)
{
	char oname[ACC_MAX_NAME], hname[ACC_MAX_NAME];
	unsigned oport, hport, def;
	const char *auth;

	if (!origin)
		return 1;
	if (listed(p->origins, p->nr_origins, origin, strlen(origin), NULL))
		return 1;
	if (!strncasecmp(origin, "http://", 7)) {
		auth = origin + 7;
		def = 80;
	} else if (!strncasecmp(origin, "https://", 8)) {
		auth = origin + 8;
		def = 443;
	} else {
		return 0;	/* "null", other schemes */
	}
	if (!host || !acc_host_allowed(p, host) ||
	    split_authority(auth, strlen(auth), oname, &oport) < 0 ||
	    split_authority(host, strlen(host), hname, &hport) < 0)
		return 0;
	return !strcmp(oname, hname) && (oport ? oport : def) == (hport ? hport : def);
}

int acc_need(const char *method, const char *url, int reads_need_token, int protect_metrics)
{
	int read = !strcmp(method, "GET") || !strcmp(method, "HEAD");

	if (!strcmp(url, "/healthz"))
		return ACC_OPEN;
	if (!strcmp(url, "/metrics"))
		return protect_metrics ? ACC_ADMIN : reads_need_token ? ACC_READ : ACC_OPEN;
	if (strncmp(url, "/api/", 5))
		return read ? ACC_OPEN : ACC_WRITE;	/* the page's own files */
	if (read)
		return reads_need_token ? ACC_READ : ACC_OPEN;
	if (!strcmp(method, "DELETE"))
		return ACC_ADMIN;
	return ACC_WRITE;
}
