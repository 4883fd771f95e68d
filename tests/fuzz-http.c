/*
 * fuzz-http - libFuzzer target over what perfhubd reads from a request
 * before a handler acts on it (daemon/http/params.c, access.c and the label
 * check of daemon/intake/labels.c). The first byte picks a parser from the
 * table below (access, query string, Accept-Encoding, the build-id list,
 * a PATCH body), the rest is what that parser reads; a new request parser
 * (selectors) is one more row. A plain main replays
 * tests/fuzz-http/ in every make check (tests/fuzz-http.sh).
 *
 * The parsers reach the request only through MHD_lookup_connection_value
 * and MHD_get_connection_values; this file defines both over a request of
 * its own (so it links no libmicrohttpd), with query strings split and
 * percent-decoded as libmicrohttpd and perfhubd's unescape callback do.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/access.h"
#include "http/params.h"
#include "intake/labels.h"

#define FUZZ_MAX_INPUT (64 * 1024)
#define FUZZ_MAX_ARGS 128

struct MHD_Connection {
	size_t n;
	const char *key[FUZZ_MAX_ARGS], *value[FUZZ_MAX_ARGS];
	enum MHD_ValueKind kind[FUZZ_MAX_ARGS];
};

const char *MHD_lookup_connection_value(struct MHD_Connection *c, enum MHD_ValueKind kind,
					const char *key)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if ((c->kind[i] & kind) && key && !strcasecmp(c->key[i], key))
			return c->value[i];
	return NULL;
}

int MHD_get_connection_values(struct MHD_Connection *c, enum MHD_ValueKind kind,
			      MHD_KeyValueIterator it, void *cls)
{
	size_t i;
	int n = 0;

	for (i = 0; i < c->n; i++) {
		if (!(c->kind[i] & kind))
			continue;
		n++;
		if (it && it(cls, c->kind[i], c->key[i], c->value[i]) != MHD_YES)
			break;
	}
	return n;
}

static void add(struct MHD_Connection *c, enum MHD_ValueKind kind, const char *k, const char *v)
{
	if (c->n < FUZZ_MAX_ARGS) {
		c->kind[c->n] = kind;
		c->key[c->n] = k;
		c->value[c->n++] = v;
	}
}

/* '+' is a space, %XX a byte; a string holding %00 stays encoded whole
 * (perfhubd's unescape callback: a NUL would cut it). */
static void unescape(char *s)
{
	char *o = s, *p;

	if (strstr(s, "%00"))
		return;
	for (p = s; *p; p++) {
		unsigned v;

		if (*p == '+') {
			*o++ = ' ';
		} else if (*p == '%' && p[1] && p[2] && sscanf(p + 1, "%2x", &v) == 1 &&
			   strchr("0123456789abcdefABCDEF", p[1]) &&
			   strchr("0123456789abcdefABCDEF", p[2])) {
			*o++ = (char)v;
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = 0;
}

/* "a=1&b&c=x%3D" as GET arguments (value NULL without '='). */
static void query(struct MHD_Connection *c, char *q)
{
	char *save = NULL, *pair;

	for (pair = strtok_r(q, "&", &save); pair; pair = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(pair, '=');

		if (eq)
			*eq++ = 0;
		unescape(pair);
		if (eq)
			unescape(eq);
		add(c, MHD_GET_ARGUMENT_KIND, pair, eq);
	}
}

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

/* Whether a Host's name (before any port) ends in ".localhost". */
static int localhost_sub(const char *host)
{
	const char *colon = strchr(host, ':');
	size_t n = colon ? (size_t)(colon - host) : strlen(host);

	return n > 10 && !strncasecmp(host + n - 10, ".localhost", 10);
}

/* "METHOD URL\nHost\nOrigin": the Host and Origin checks under a loopback
 * and a public policy, and the role the request needs. */
static void fuzz_access(char *text, size_t len)
{
	static const char *const hosts[] = { "perf.example.org", "*" };
	static const char *const origins[] = { "https://dash.example.org" };
	acc_policy loop = { .check_host = 1, .loopback = 1, .listen_host = "127.0.0.1" };
	acc_policy open = { .check_host = 1, .hosts = hosts, .nr_hosts = 1, .origins = origins,
			    .nr_origins = 1, .listen_host = "192.0.2.1" };
	char *line[3] = { text, NULL, NULL }, *url;
	int i, need;

	(void)len;
	for (i = 1; i < 3 && line[i - 1]; i++)
		if ((line[i] = strchr(line[i - 1], '\n')))
			*line[i]++ = 0;
	url = strchr(line[0], ' ');
	if (url)
		*url++ = 0;
	need = acc_need(line[0], url ? url : "/", text[0] & 1, text[0] & 2);
	check(need >= ACC_OPEN && need <= ACC_ADMIN);
	/* the page's own files never need a token */
	if (url && !strcmp(line[0], "GET") && strncmp(url, "/api/", 5) && strcmp(url, "/metrics"))
		check(need == ACC_OPEN);
	acc_origin_allowed(&loop, line[2], line[1]);
	acc_origin_allowed(&open, line[2], line[1]);
	/* a name that is no localhost name is not served on loopback (one
	 * under .localhost is, RFC 6761: browsers keep it on this machine) */
	if (line[1] && !strncasecmp(line[1], "evil.example", 12) && !localhost_sub(line[1]))
		check(!acc_host_allowed(&loop, line[1]));
	acc_host_allowed(&open, line[1]);
	open.nr_hosts = 2;	/* "*": any well-formed Host */
	if (line[1] && !strcmp(line[1], "any.example:80"))
		check(acc_host_allowed(&open, line[1]));
	acc_is_loopback(line[1] ? line[1] : "");
}

/* A query string: the folded-stack filters, integers, tags, labels. */
static void fuzz_query(char *text, size_t len)
{
	struct MHD_Connection c = { 0 };
	char why[HTTP_WHY_LEN];
	http_fold_args fa;
	http_tags tags = { 0 };
	int64_t v = 7;
	size_t i;

	(void)len;
	query(&c, text);
	if (http_fold_args_read(&c, &fa, why, sizeof(why)) < 0)
		check(strlen(why) < sizeof(why));
	else
		check(fa.by_samples == 0 || fa.by_samples == 1);
	if (http_arg_i64(&c, "limit", 1, 100000, &v) == 0)
		check(v == 7 || (v >= 1 && v <= 100000));
	http_tags_get(&c, &tags);
	check(tags.n <= API_MAX_TAGS);
	for (i = 0; i < tags.n; i++)
		check(tags.keys[i] && tags.values[i] && !strchr(tags.keys[i], '='));
	http_tags_free(&tags);
	if (http_labels_check(&c, why, sizeof(why)) == 0) {
		const char *name = http_arg(&c, "name");
		check(!name || strlen(name) <= INTAKE_MAX_NAME);
	}
}

/* An Accept-Encoding header. */
static void fuzz_accept(char *text, size_t len)
{
	struct MHD_Connection c = { 0 };

	(void)len;
	add(&c, MHD_HEADER_KIND, "Accept-Encoding", text);
	http_accepts(&c, "zstd");
	http_accepts(&c, "gzip");
}

/* A JSON body ({"build_ids": [...]}). */
static void fuzz_json(char *text, size_t len)
{
	char why[HTTP_WHY_LEN];
	json_t *ids = http_json_build_ids(text, len, 1000, why, sizeof(why));

	if (ids)
		check(json_is_array(ids) && json_array_size(ids) <= 1000);
	json_decref(ids);
}

/* A PATCH body ({"name": ..., "tags": {...}}). */
static void fuzz_patch(char *text, size_t len)
{
	char why[HTTP_WHY_LEN];
	http_patch p;
	size_t i;

	if (http_json_patch(text, len, &p, why, sizeof(why)) < 0) {
		check(!p.doc && strlen(why) < sizeof(why));
		return;
	}
	check(p.set_name || p.nr_tags);
	check(!p.name || strlen(p.name) <= INTAKE_MAX_NAME);
	for (i = 0; i < p.nr_tags; i++)
		check(*p.keys[i] && strlen(p.keys[i]) <= INTAKE_MAX_TAG_KEY &&
		      !strchr(p.keys[i], '=') && (!p.values[i] ||
						  strlen(p.values[i]) <= INTAKE_MAX_TAG_VALUE));
	json_decref(p.doc);
}

static const struct {
	const char *what;
	void (*run)(char *text, size_t len);
} targets[] = {
	{ "access", fuzz_access },
	{ "query", fuzz_query },
	{ "accept-encoding", fuzz_accept },
	{ "json", fuzz_json },
	{ "patch", fuzz_patch },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	/* an exact-size copy with a NUL: what libmicrohttpd hands over */
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	targets[data[0] % (sizeof(targets) / sizeof(*targets))].run(text, strlen(text));
	free(text);
	return 0;
}
