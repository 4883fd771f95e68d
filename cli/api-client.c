/*
 * api-client.c - perfhubd's API over libcurl: the server, the token, one
 * request at a time, answers kept up to a cap.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "api-client.h"
#include "dynlib.h"

#define AC_MAX_RESPONSE (256u << 20)	/* bytes of an answer kept */
#define AC_CONNECT_TIMEOUT_S 30L
#define AC_TOKEN_LINE 1024		/* longest token file line read */
#define AC_PROGRESS_FROM (16 << 20)	/* curl's meter for bodies this large */

struct ac_client {
	char *server;
	char *auth;		/* "Authorization: Bearer TOKEN", or NULL */
	int curl_ready;		/* curl_global_init succeeded */
};

/* libcurl, opened by the first client (dynlib.h): the commands that never
 * talk to a server do not pay for loading it and what it links */
#define AC_CURL_FUNCS(X) \
	X(global_init, curl_global_init) \
	X(global_cleanup, curl_global_cleanup) \
	X(easy_init, curl_easy_init) \
	X(easy_cleanup, curl_easy_cleanup) \
	X(easy_setopt, curl_easy_setopt) \
	X(easy_getinfo, curl_easy_getinfo) \
	X(easy_perform, curl_easy_perform) \
	X(easy_strerror, curl_easy_strerror) \
	X(easy_escape, curl_easy_escape) \
	X(free, curl_free) \
	X(slist_append, curl_slist_append) \
	X(slist_free_all, curl_slist_free_all)

DYNLIB_TABLE(cu, AC_CURL_FUNCS)

static dynlib curl_lib = DYNLIB_INIT(CURL_SONAME, "libcurl4", cu_bind);

/* 0 with cu filled, else -1 and a line on stderr */
static int curl_loaded(void)
{
	if (dynlib_ready(&curl_lib) == 0)
		return 0;
	fprintf(stderr, "perfhub: %s\n", dynlib_error(&curl_lib));
	return -1;
}

/* What a request's answer goes to: r, or `sink` once the status is 200. */
typedef struct ac_answer {
	ac_response *r;
	FILE *sink;
	CURL *h;
} ac_answer;

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	ac_answer *ans = ctx;
	ac_response *r = ans->r;
	size_t n = size * nmemb;
	long status = 0;
	char *p;

	if (ans->sink) {
		cu.easy_getinfo(ans->h, CURLINFO_RESPONSE_CODE, &status);
		if (status == 200)
			return fwrite(data, 1, n, ans->sink);
	}
	if (n > AC_MAX_RESPONSE - r->len)
		return 0;
	p = realloc(r->body, r->len + n + 1);
	if (!p)
		return 0;
	memcpy(p + r->len, data, n);
	r->body = p;
	r->len += n;
	r->body[r->len] = 0;
	return n;
}

/* A token is 1..AC_MAX_TOKEN visible ASCII characters: nothing that could
 * end the header line or be mistaken for another field. */
static int token_ok(const char *t)
{
	size_t n = strlen(t), i;

	if (!n || n > AC_MAX_TOKEN)
		return 0;
	for (i = 0; i < n; i++)
		if (t[i] <= 0x20 || t[i] >= 0x7f)
			return 0;
	return 1;
}

/* The first word of the first line that is neither blank nor a comment: a
 * file holding just the token, or a line of the server's token file
 * ("TOKEN ROLE"). OUT: *token malloc'ed. The token is never printed. */
static int token_from_file(const char *path, char **token)
{
	FILE *fp = fopen(path, "r");
	char line[AC_TOKEN_LINE + 2];
	int rc = -1;

	*token = NULL;
	if (!fp) {
		fprintf(stderr, "perfhub: token file %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), fp)) {
		size_t n = strlen(line);
		char *w, *end;

		if (n > AC_TOKEN_LINE) {
			fprintf(stderr, "perfhub: token file %s: a line longer than %d bytes\n", path,
				AC_TOKEN_LINE);
			goto out;
		}
		if (strchr(line, '#'))
			*strchr(line, '#') = 0;
		w = line + strspn(line, " \t\r\n");
		if (!*w)
			continue;
		end = w + strcspn(w, " \t\r\n");
		*end = 0;
		if (!token_ok(w)) {
			fprintf(stderr, "perfhub: token file %s: the token is not 1-%d visible ASCII "
				"characters\n", path, AC_MAX_TOKEN);
			goto out;
		}
		*token = strdup(w);
		rc = *token ? 0 : -1;
		goto out;
	}
	fprintf(stderr, "perfhub: token file %s holds no token\n", path);
out:
	explicit_bzero(line, sizeof(line));
	fclose(fp);
	return rc;
}

/* --token-file, else $PERFHUB_TOKEN, else $PERFHUB_TOKEN_FILE; none is fine. */
static int token_find(const args_server *opt, char **token)
{
	const char *env = getenv("PERFHUB_TOKEN");
	const char *file = getenv("PERFHUB_TOKEN_FILE");

	*token = NULL;
	if (opt->token_file)
		return token_from_file(opt->token_file, token);
	if (env && *env) {
		if (!token_ok(env)) {
			fprintf(stderr, "perfhub: $PERFHUB_TOKEN is not 1-%d visible ASCII "
				"characters\n", AC_MAX_TOKEN);
			return -1;
		}
		*token = strdup(env);
		return *token ? 0 : -1;
	}
	if (file && *file)
		return token_from_file(file, token);
	return 0;
}

ac_client *ac_open(const args_server *opt)
{
	const char *server = opt->server ? opt->server : getenv("PERFHUB_SERVER");
	ac_client *c = calloc(1, sizeof(*c));
	char *token = NULL;
	size_t n;

	if (!c)
		return NULL;
	if (!server || !*server)
		server = AC_DEFAULT_SERVER;
	c->server = strdup(server);
	if (!c->server || token_find(opt, &token) < 0)
		goto fail;
	n = strlen(c->server);
	while (n > 0 && c->server[n - 1] == '/')
		c->server[--n] = 0;
	if (token) {
		n = strlen(token) + sizeof("Authorization: Bearer ");
		c->auth = malloc(n);
		if (!c->auth)
			goto fail;
		snprintf(c->auth, n, "Authorization: Bearer %s", token);
		explicit_bzero(token, strlen(token));
		free(token);
		token = NULL;
	}
	if (curl_loaded() < 0 || cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		goto fail;
	c->curl_ready = 1;
	return c;
fail:
	if (token)
		explicit_bzero(token, strlen(token));
	free(token);
	ac_close(c);
	return NULL;
}

void ac_close(ac_client *c)
{
	if (!c)
		return;
	if (c->auth)
		explicit_bzero(c->auth, strlen(c->auth));
	free(c->auth);
	free(c->server);
	if (c->curl_ready)
		cu.global_cleanup();
	free(c);
}

const char *ac_server(const ac_client *c)
{
	return c->server;
}

void ac_response_free(ac_response *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

static size_t on_read(char *buf, size_t size, size_t nitems, void *ctx)
{
	const ac_body *b = ctx;
	long n = b->read(b->ctx, buf, size * nitems);

	return n < 0 ? CURL_READFUNC_ABORT : (size_t)n;
}

static int request(ac_client *c, const char *method, const char *path, const ac_body *body,
		   ac_response *r, FILE *sink)
{
	size_t ulen = strlen(c->server) + strlen(path) + 1;
	CURL *h = cu.easy_init();
	struct curl_slist *hdr = NULL;
	char *url = malloc(ulen), ct[256];
	ac_answer ans = { r, sink, h };
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	if (!h || !url) {
		cu.easy_cleanup(h);
		free(url);
		return -1;
	}
	snprintf(url, ulen, "%s%s", c->server, path);
	if (c->auth)
		hdr = cu.slist_append(hdr, c->auth);
	cu.easy_setopt(h, CURLOPT_URL, url);
	cu.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	cu.easy_setopt(h, CURLOPT_WRITEDATA, &ans);
	cu.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	cu.easy_setopt(h, CURLOPT_CONNECTTIMEOUT, AC_CONNECT_TIMEOUT_S);
	if (body) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", body->type);
		hdr = cu.slist_append(hdr, ct);
		cu.easy_setopt(h, CURLOPT_POST, 1L);
		if (strcmp(method, "POST"))	/* PUT: the same body, another verb */
			cu.easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
		if (body->read) {
			/* a stream: chunked, and the server may refuse (401, 413)
			 * before the first byte goes out */
			hdr = cu.slist_append(hdr, "Transfer-Encoding: chunked");
			hdr = cu.slist_append(hdr, "Expect: 100-continue");
			cu.easy_setopt(h, CURLOPT_READFUNCTION, on_read);
			cu.easy_setopt(h, CURLOPT_READDATA, body);
		} else {
			/* no "Expect: 100-continue" round trip */
			hdr = cu.slist_append(hdr, "Expect:");
			cu.easy_setopt(h, CURLOPT_READDATA, body->fp);
			cu.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->size);
			if (isatty(STDERR_FILENO) && body->size > AC_PROGRESS_FROM)
				cu.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
		}
	} else if (strcmp(method, "GET")) {
		cu.easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	}
	cu.easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	rc = cu.easy_perform(h);
	if (rc == CURLE_OK)
		cu.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	else if (rc != CURLE_ABORTED_BY_CALLBACK)	/* the callback's owner says why */
		fprintf(stderr, "perfhub: %s %s: %s\n", method, url, cu.easy_strerror(rc));
	cu.slist_free_all(hdr);
	cu.easy_cleanup(h);
	free(url);
	if (rc != CURLE_OK) {
		ac_response_free(r);
		return -1;
	}
	return 0;
}

int ac_request(ac_client *c, const char *method, const char *path, const ac_body *body,
	       ac_response *r)
{
	return request(c, method, path, body, r, NULL);
}

int ac_download(ac_client *c, const char *path, FILE *out, ac_response *r)
{
	return request(c, "GET", path, NULL, r, out);
}

void ac_print_error(const char *what, const ac_response *r)
{
	json_t *j = r->body ? json_loads(r->body, 0, NULL) : NULL;
	const char *msg = json_string_value(json_object_get(j, "error"));

	fprintf(stderr, "perfhub %s: HTTP %ld%s%s\n", what, r->status, msg ? ": " : "",
		msg ? msg : "");
	json_decref(j);
}

json_t *ac_get_json(ac_client *c, const char *path, const char *what)
{
	ac_response r;
	json_t *j = NULL;

	if (ac_request(c, "GET", path, NULL, &r) < 0)
		return NULL;
	if (r.status != 200 || !(j = json_loads(r.body ? r.body : "", 0, NULL)))
		ac_print_error(what, &r);
	ac_response_free(&r);
	return j;
}

int ac_query_add(char *q, size_t len, const char *key, const char *value)
{
	size_t n = strlen(q);
	char *e;
	int w;

	if (curl_loaded() < 0 || !(e = cu.easy_escape(NULL, value, 0)))
		return -1;
	w = snprintf(q + n, len - n, "%c%s=%s", n ? '&' : '?', key, e);
	cu.free(e);
	if (w < 0 || (size_t)w >= len - n) {
		q[n] = 0;
		return -1;
	}
	return 0;
}
