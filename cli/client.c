/*
 * client.c - perfhub upload, ls, show, rm: the command-line clients of
 * perfhubd's API (libcurl). Server from --server, else $PERFHUB_SERVER,
 * else http://127.0.0.1:8080; a token from $PERFHUB_TOKEN is sent as
 * "Authorization: Bearer TOKEN".
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "commands.h"
#include "perfdata.h"
#include "dirpack.h"
#include "elfid.h"

#define CLIENT_MAX_RESPONSE (256u << 20)	/* bytes of an answer kept */
#define CLIENT_MAX_TAGS 32
#define CLIENT_WAIT_POLL_US 200000
#define CLIENT_MAX_BUILD_IDS 4096	/* distinct build-ids asked about */

typedef struct response {
	long status;
	char *body;
	size_t len;
} response;

typedef struct client {
	const char *server;
	struct curl_slist *auth;
} client;

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	response *r = ctx;
	size_t n = size * nmemb;
	char *p;

	if (r->len + n > CLIENT_MAX_RESPONSE)
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

static int client_init(client *c, const char *server)
{
	const char *token = getenv("PERFHUB_TOKEN");

	memset(c, 0, sizeof(*c));
	c->server = server ? server : getenv("PERFHUB_SERVER");
	if (!c->server || !*c->server)
		c->server = "http://127.0.0.1:8080";
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -1;
	if (token && *token) {
		char h[1024];
		snprintf(h, sizeof(h), "Authorization: Bearer %s", token);
		c->auth = curl_slist_append(NULL, h);
	}
	return 0;
}

static void client_done(client *c)
{
	curl_slist_free_all(c->auth);
	curl_global_cleanup();
}

/*
 * One request. `upload` (may be NULL) is sent as the body with its size
 * and content type. Returns 0 with r filled, -1 on a transport error
 * (printed).
 */
static int do_request(client *c, const char *method, const char *path, FILE *upload,
		      curl_off_t upload_size, const char *type, response *r)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL, *a;
	char url[4096], ct[128];
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	if (!h)
		return -1;
	snprintf(url, sizeof(url), "%s%s", c->server, path);
	for (a = c->auth; a; a = a->next)
		hdr = curl_slist_append(hdr, a->data);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	if (upload) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", type);
		hdr = curl_slist_append(hdr, ct);
		/* no "Expect: 100-continue" round trip */
		hdr = curl_slist_append(hdr, "Expect:");
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		if (strcmp(method, "POST"))	/* PUT: the same body, another verb */
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
		curl_easy_setopt(h, CURLOPT_READDATA, upload);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, upload_size);
		if (isatty(STDERR_FILENO) && upload_size > (16 << 20))
			curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);	/* curl's meter */
	} else if (strcmp(method, "GET")) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	else
		fprintf(stderr, "perfhub: %s %s: %s\n", method, url, curl_easy_strerror(rc));
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	if (rc != CURLE_OK) {
		free(r->body);
		r->body = NULL;
		return -1;
	}
	return 0;
}

/* The server's {"error": ...} or the status. */
static void print_error(const char *what, const response *r)
{
	json_t *j = r->body ? json_loads(r->body, 0, NULL) : NULL;
	const char *msg = json_string_value(json_object_get(j, "error"));

	fprintf(stderr, "perfhub %s: HTTP %ld%s%s\n", what, r->status, msg ? ": " : "",
		msg ? msg : "");
	json_decref(j);
}

static const char *opt_value(int argc, char **argv, int *i, const char *opt)
{
	size_t n = strlen(opt);

	if (!strncmp(argv[*i], opt, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (!strcmp(argv[*i], opt) && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

/* query-string escaping of one value */
static void append_arg(char *q, size_t len, const char *key, const char *value)
{
	char *e = curl_easy_escape(NULL, value, 0);
	size_t n = strlen(q);

	snprintf(q + n, len - n, "%c%s=%s", n ? '&' : '?', key, e ? e : "");
	curl_free(e);
}

static int tar_to_file(void *ctx, const void *data, size_t len)
{
	return fwrite(data, 1, len, ctx) != len;
}

static int parse_id(const char *s, long long *id)
{
	char *end;

	errno = 0;
	*id = strtoll(s, &end, 10);
	return errno || end == s || *end || *id <= 0 ? -1 : 0;
}

static int wait_done(client *c, long long id)
{
	char path[128];

	snprintf(path, sizeof(path), "/api/v1/profiles/%lld", id);
	for (;;) {
		response r;
		json_t *j;
		const char *status;
		int done;

		if (do_request(c, "GET", path, NULL, 0, NULL, &r) < 0)
			return 1;
		j = r.status == 200 ? json_loads(r.body, 0, NULL) : NULL;
		if (!j) {
			print_error("upload --wait", &r);
			free(r.body);
			return 1;
		}
		status = json_string_value(json_object_get(j, "status"));
		done = status && (!strcmp(status, "ready") || !strcmp(status, "failed"));
		if (done) {
			int ok = !strcmp(status, "ready");
			if (!ok)
				fprintf(stderr, "perfhub upload: profile %lld failed: %s\n", id,
					json_string_value(json_object_get(j, "error")) ?
					json_string_value(json_object_get(j, "error")) : "?");
			json_decref(j);
			free(r.body);
			return ok ? 0 : 1;
		}
		json_decref(j);
		free(r.body);
		usleep(CLIENT_WAIT_POLL_US);
	}
}

/* ---- debuginfo: what the server lacks, from this machine ------------------------ */

typedef struct dbg_want {
	char hex[41];
	char *path;		/* as the recording names the dso */
} dbg_want;

typedef struct dbg_list {
	dbg_want *v;
	size_t n;
} dbg_list;

static void want_add(dbg_list *l, const char *path, const uint8_t *bid, size_t n)
{
	char hex[41];
	size_t i;

	if (!path || !n || l->n >= CLIENT_MAX_BUILD_IDS)
		return;
	for (i = 0; i < n && i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].hex, hex))
			return;
	if (!l->v && !(l->v = calloc(CLIENT_MAX_BUILD_IDS, sizeof(*l->v))))
		return;
	memcpy(l->v[l->n].hex, hex, sizeof(hex));
	l->v[l->n].path = strdup(path);
	if (l->v[l->n].path)
		l->n++;
}

static void wants_free(dbg_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
}

/* The build-ids of the BUILD_ID feature, HEADER_BUILD_ID and MMAP2 records.
 * OUT: the recording's os_release (malloc'ed, may be NULL). */
static int recording_build_ids(const char *path, dbg_list *l, char **os_release)
{
	pd_options opt = { 0 };
	pd_error err;
	pd_record r;
	pd_file *f = pd_open_path(path, &opt, &err);
	const pd_header *h;
	size_t i;
	int rc, scan;

	*os_release = NULL;
	if (!f)
		return -1;
	h = pd_get_header(f);
	scan = !h || !h->nr_build_ids;
	for (i = 0; h && i < h->nr_build_ids; i++)
		want_add(l, h->build_ids[i].filename, h->build_ids[i].build_id,
			 h->build_ids[i].size);
	/* perf writes the BUILD_ID feature unless it recorded build-ids in
	 * MMAP2 (--buildid-mmap) or streams (pipe mode): read the records
	 * only then, a large file costs seconds */
	while (scan && (rc = pd_next(f, &r, &err)) > 0) {
		if (r.type == PD_RECORD_MMAP2 && r.u.mmap.build_id_size)
			want_add(l, r.u.mmap.filename, r.u.mmap.build_id, r.u.mmap.build_id_size);
		else if (r.type == PD_RECORD_HEADER_BUILD_ID)
			want_add(l, r.u.build_id.filename, r.u.build_id.build_id,
				 r.u.build_id.size);
	}
	h = pd_get_header(f);	/* pipe mode: the features came as records */
	if (h && h->os_release)
		*os_release = strdup(h->os_release);
	pd_close(f);
	return 0;
}

/* 1 when `path` is an ELF file whose build-id starts with hex; *symbols
 * says whether it has .symtab (or is a debug file). */
static int file_matches(const char *path, const char *hex, int *symbols)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char have[41];
	elfid id;
	size_t i;

	if (fd < 0)
		return 0;
	elfid_of_fd(fd, &id);
	close(fd);
	if (!id.elf || !id.bid_size)
		return 0;
	for (i = 0; i < id.bid_size; i++)
		snprintf(have + 2 * i, 3, "%02x", id.bid[i]);
	*symbols = id.has_symtab;
	return !strncmp(have, hex, strlen(hex));
}

/* PUT one file (a FILE already positioned) for a build-id. 0 stored or
 * there already, -1 refused or failed (printed). */
static int put_debuginfo(client *c, const char *hex, FILE *fp, curl_off_t size,
			 const char *what)
{
	char url[128];
	response r;
	int ok;

	snprintf(url, sizeof(url), "/api/v1/debuginfo/%s", hex);
	if (do_request(c, "PUT", url, fp, size, "application/octet-stream", &r) < 0)
		return -1;
	ok = r.status == 200 || r.status == 201;
	if (ok)
		fprintf(stderr, "perfhub upload: debuginfo %s %s (%s)\n", hex,
			r.status == 201 ? "sent" : "already there", what);
	else
		print_error("upload (debuginfo)", &r);
	free(r.body);
	return ok ? 0 : -1;
}

static int put_path(client *c, const char *hex, const char *path)
{
	FILE *fp = fopen(path, "rb");
	struct stat st;
	int rc;

	if (!fp)
		return -1;
	if (fstat(fileno(fp), &st) < 0) {
		fclose(fp);
		return -1;
	}
	rc = put_debuginfo(c, hex, fp, (curl_off_t)st.st_size, path);
	fclose(fp);
	return rc;
}

/* The running kernel's symbols, when the recording was made under it. */
static int put_kallsyms(client *c, const char *hex, const char *os_release)
{
	struct utsname u;
	FILE *in, *tmp;
	char line[512];
	int nonzero = 0, rc;
	long size;

	if (!os_release || uname(&u) < 0 || strcmp(u.release, os_release))
		return -1;
	in = fopen("/proc/kallsyms", "r");
	if (!in)
		return -1;
	tmp = tmpfile();
	while (tmp && fgets(line, sizeof(line), in)) {
		/* hidden addresses (kptr_restrict) read as zeros: useless */
		if (!nonzero && strspn(line, "0") < 8)
			nonzero = 1;
		fputs(line, tmp);
	}
	fclose(in);
	if (!tmp || !nonzero || fflush(tmp) || (size = ftell(tmp)) <= 0) {
		if (tmp)
			fclose(tmp);
		return -1;
	}
	rewind(tmp);
	rc = put_debuginfo(c, hex, tmp, (curl_off_t)size, "/proc/kallsyms");
	fclose(tmp);
	return rc;
}

/* Sends what the server has no symbols for: the file at its recorded path
 * when its build-id matches, else /usr/lib/debug/.build-id/, else perf's
 * ~/.debug cache (the [vdso] image too); a stripped file is sent and the search goes on for one
 * with symbols. Problems are reported, never fatal to the upload. */
static void upload_debuginfo(client *c, const char *path)
{
	dbg_list l = { 0 };
	char *os_release = NULL;
	json_t *req, *ids, *ans = NULL, *v;
	char *text = NULL;
	const char *home = getenv("HOME");
	FILE *fp = NULL;
	response r = { 0 };
	size_t i, k, sent = 0, nmissing = 0;

	if (recording_build_ids(path, &l, &os_release) < 0 || !l.n)
		goto out;
	req = json_object();
	ids = json_array();
	for (i = 0; i < l.n; i++)
		json_array_append_new(ids, json_string(l.v[i].hex));
	json_object_set_new(req, "build_ids", ids);
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	fp = text ? fmemopen(text, strlen(text), "r") : NULL;
	if (!fp || do_request(c, "POST", "/api/v1/debuginfo/missing", fp,
			      (curl_off_t)strlen(text), "application/json", &r) < 0)
		goto out;
	if (r.status != 200 || !(ans = json_loads(r.body, 0, NULL))) {
		print_error("upload (debuginfo/missing)", &r);
		goto out;
	}
	json_array_foreach(json_object_get(ans, "missing"), k, v) {
		const char *hex = json_string_value(v);
		const dbg_want *w = NULL;
		char cand[4096];
		int symbols = 0, done = 0, j;

		for (i = 0; hex && i < l.n && !w; i++)
			if (!strcmp(l.v[i].hex, hex))
				w = &l.v[i];
		if (!w)
			continue;
		nmissing++;
		if (!strncmp(w->path, "[kernel.kallsyms]", 17)) {	/* MMAP2: "..._text" */
			if (put_kallsyms(c, hex, os_release) == 0)
				sent++;
			continue;
		}
		if (w->path[0] == '/' && file_matches(w->path, hex, &symbols) &&
		    put_path(c, hex, w->path) == 0) {
			sent++;
			done = symbols;
		}
		/* the cache's "vdso" is the [vdso] image perf record saved */
		for (j = 0; j < 4 && !done; j++) {
			static const char *const cached[] = { "debug", "elf", "vdso" };

			if (j == 0)
				snprintf(cand, sizeof(cand), "/usr/lib/debug/.build-id/%.2s/%s.debug",
					 hex, hex + 2);
			else
				snprintf(cand, sizeof(cand), "%s/.debug/.build-id/%.2s/%s/%s",
					 home ? home : "/root", hex, hex + 2, cached[j - 1]);
			if (file_matches(cand, hex, &symbols) && put_path(c, hex, cand) == 0) {
				sent++;
				done = symbols;
			}
		}
	}
	fprintf(stderr, "perfhub upload: debuginfo: %zu build-ids, %zu missing on the server, "
		"%zu files sent\n", l.n, nmissing, sent);
out:
	if (fp)
		fclose(fp);
	free(text);
	free(r.body);
	json_decref(ans);
	free(os_release);
	wants_free(&l);
}

/* A perf archive bundle (perf.data.tar.bz2) into the server's debuginfo. */
static int upload_archive(client *c, const char *path)
{
	FILE *fp = fopen(path, "rb");
	struct stat st;
	response r;
	json_t *j;
	int rc = -1;

	if (!fp || fstat(fileno(fp), &st) < 0) {
		fprintf(stderr, "perfhub upload: %s: %s\n", path, strerror(errno));
		if (fp)
			fclose(fp);
		return -1;
	}
	if (do_request(c, "POST", "/api/v1/debuginfo/archive", fp, (curl_off_t)st.st_size,
		       "application/x-bzip2", &r) == 0) {
		if (r.status == 200 && (j = json_loads(r.body, 0, NULL))) {
			fprintf(stderr, "perfhub upload: %s: %lld debuginfo files, %lld new\n", path,
				(long long)json_integer_value(json_object_get(j, "found")),
				(long long)json_integer_value(json_object_get(j, "stored")));
			json_decref(j);
			rc = 0;
		} else {
			print_error("upload (archive)", &r);
		}
		free(r.body);
	}
	fclose(fp);
	return rc;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int cmd_upload(int argc, char **argv)
{
	const char *path = NULL, *server = NULL, *name = NULL, *tags[CLIENT_MAX_TAGS], *v;
	size_t nr_tags = 0, k;
	int wait = 0, i, status = 1, debuginfo = 1;
	char query[8192] = "", url[8400];
	struct stat st;
	FILE *body = NULL;
	const char *type = "application/octet-stream";
	curl_off_t size;
	client c;
	response r = { 0 };
	json_t *j = NULL;
	long long id;

	for (i = 1; i < argc; i++) {
		if ((v = opt_value(argc, argv, &i, "--server")))
			server = v;
		else if ((v = opt_value(argc, argv, &i, "--name")))
			name = v;
		else if ((v = opt_value(argc, argv, &i, "--tag"))) {
			if (!strchr(v, '=') || v[0] == '=' || nr_tags >= CLIENT_MAX_TAGS) {
				fprintf(stderr, "perfhub upload: --tag wants KEY=VALUE\n");
				return 2;
			}
			tags[nr_tags++] = v;
		} else if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (!strcmp(argv[i], "--no-debuginfo"))
			debuginfo = 0;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "usage: perfhub upload PATH [--server URL] [--name NAME] "
					"[--tag KEY=VALUE]... [--wait] [--no-debuginfo]\n");
			return 2;
		} else if (!path)
			path = argv[i];
		else {
			fprintf(stderr, "perfhub upload: one PATH only\n");
			return 2;
		}
	}
	if (!path) {
		fprintf(stderr, "usage: perfhub upload PATH [--server URL] [--name NAME] "
				"[--tag KEY=VALUE]... [--wait] [--no-debuginfo]\n");
		return 2;
	}
	if (ends_with(path, ".tar.bz2")) {
		/* a perf archive bundle: symbols only, no profile */
		if (client_init(&c, server) < 0)
			return 1;
		status = upload_archive(&c, path) < 0;
		client_done(&c);
		return status;
	}
	if (stat(path, &st) < 0) {
		fprintf(stderr, "perfhub upload: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		/* a perf.data directory goes up as a tar */
		body = tmpfile();
		if (!body || dirpack_write(path, tar_to_file, body) < 0 || fflush(body) ||
		    fseeko(body, 0, SEEK_END) < 0) {
			fprintf(stderr, "perfhub upload: %s: cannot pack the directory: %s\n", path,
				strerror(errno));
			goto out_nocurl;
		}
		size = (curl_off_t)ftello(body);
		rewind(body);
		type = "application/x-tar";
	} else {
		body = fopen(path, "rb");
		if (!body) {
			fprintf(stderr, "perfhub upload: %s: %s\n", path, strerror(errno));
			return 1;
		}
		size = (curl_off_t)st.st_size;
	}
	if (client_init(&c, server) < 0)
		goto out_nocurl;
	if (debuginfo) {
		/* symbols first, so the first parse already has them */
		char bundle[4096];
		struct stat bst;

		snprintf(bundle, sizeof(bundle), "%s.tar.bz2", path);
		if (stat(bundle, &bst) == 0 && S_ISREG(bst.st_mode))
			upload_archive(&c, bundle);
		upload_debuginfo(&c, path);
	}
	append_arg(query, sizeof(query), "name", name ? name : path);
	for (k = 0; k < nr_tags; k++)
		append_arg(query, sizeof(query), "tag", tags[k]);
	snprintf(url, sizeof(url), "/api/v1/profiles%s", query);
	if (do_request(&c, "POST", url, body, size, type, &r) < 0)
		goto out;
	if (r.status != 200 && r.status != 202) {
		print_error("upload", &r);
		goto out;
	}
	j = json_loads(r.body, 0, NULL);
	if (!j || !json_is_integer(json_object_get(j, "id"))) {
		fprintf(stderr, "perfhub upload: unexpected answer from the server\n");
		goto out;
	}
	id = json_integer_value(json_object_get(j, "id"));
	printf("%lld\n", id);
	fflush(stdout);
	status = wait ? wait_done(&c, id) : 0;
out:
	client_done(&c);
out_nocurl:
	json_decref(j);
	free(r.body);
	if (body)
		fclose(body);
	return status;
}

int cmd_ls(int argc, char **argv)
{
	const char *server = NULL, *v, *st_filter = NULL;
	char query[1024] = "", path[1200];
	client c;
	response r;
	json_t *j, *p;
	size_t i;
	int a, status = 1;

	for (a = 1; a < argc; a++) {
		if ((v = opt_value(argc, argv, &a, "--server")))
			server = v;
		else if ((v = opt_value(argc, argv, &a, "--status")))
			st_filter = v;
		else {
			fprintf(stderr, "usage: perfhub ls [--server URL] [--status STATUS]\n");
			return 2;
		}
	}
	if (client_init(&c, server) < 0)
		return 1;
	append_arg(query, sizeof(query), "limit", "1000");
	if (st_filter)
		append_arg(query, sizeof(query), "status", st_filter);
	snprintf(path, sizeof(path), "/api/v1/profiles%s", query);
	if (do_request(&c, "GET", path, NULL, 0, NULL, &r) < 0)
		goto out;
	if (r.status != 200 || !(j = json_loads(r.body, 0, NULL))) {
		print_error("ls", &r);
		free(r.body);
		goto out;
	}
	printf("%-8s %-8s %-20s %10s %12s  %s\n", "ID", "STATUS", "UPLOADED", "SIZE", "SAMPLES",
	       "NAME");
	json_array_foreach(json_object_get(j, "profiles"), i, p) {
		json_t *smp = json_object_get(p, "samples");
		char samples[32] = "-";
		if (json_is_integer(smp))
			snprintf(samples, sizeof(samples), "%lld", (long long)json_integer_value(smp));
		printf("%-8lld %-8s %-20s %10lld %12s  %s\n",
		       (long long)json_integer_value(json_object_get(p, "id")),
		       json_string_value(json_object_get(p, "status")),
		       json_string_value(json_object_get(p, "uploaded_at")),
		       (long long)json_integer_value(json_object_get(p, "size")), samples,
		       json_string_value(json_object_get(p, "name")) ?
		       json_string_value(json_object_get(p, "name")) : "");
	}
	json_decref(j);
	free(r.body);
	status = 0;
out:
	client_done(&c);
	return status;
}

/* show and rm: one profile id, an optional --server */
static int one_id(int argc, char **argv, const char **server, long long *id)
{
	const char *v, *ids = NULL;
	int a;

	*server = NULL;
	for (a = 1; a < argc; a++) {
		if ((v = opt_value(argc, argv, &a, "--server")))
			*server = v;
		else if (!ids && argv[a][0] != '-')
			ids = argv[a];
		else
			ids = NULL, a = argc;
	}
	if (!ids || parse_id(ids, id) < 0) {
		fprintf(stderr, "usage: perfhub %s ID [--server URL]\n", argv[0]);
		return -1;
	}
	return 0;
}

int cmd_show(int argc, char **argv)
{
	const char *server;
	long long id;
	char path[128];
	client c;
	response r;
	json_t *j;
	int status = 1;

	if (one_id(argc, argv, &server, &id) < 0)
		return 2;
	if (client_init(&c, server) < 0)
		return 1;
	snprintf(path, sizeof(path), "/api/v1/profiles/%lld", id);
	if (do_request(&c, "GET", path, NULL, 0, NULL, &r) == 0) {
		if (r.status == 200 && (j = json_loads(r.body, 0, NULL))) {
			json_dumpf(j, stdout, JSON_INDENT(2));
			putchar('\n');
			json_decref(j);
			status = 0;
		} else {
			print_error("show", &r);
		}
		free(r.body);
	}
	client_done(&c);
	return status;
}

int cmd_rm(int argc, char **argv)
{
	const char *server;
	long long id;
	char path[128];
	client c;
	response r;
	int status = 1;

	if (one_id(argc, argv, &server, &id) < 0)
		return 2;
	if (client_init(&c, server) < 0)
		return 1;
	snprintf(path, sizeof(path), "/api/v1/profiles/%lld", id);
	if (do_request(&c, "DELETE", path, NULL, 0, NULL, &r) == 0) {
		if (r.status == 204)
			status = 0;
		else
			print_error("rm", &r);
		free(r.body);
	}
	client_done(&c);
	return status;
}
