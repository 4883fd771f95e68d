/*
 * upload.c - perfhub upload: a recording to the server, with the debuginfo
 * it needs and the CI job's labels.
 *
 * A file or directory goes up with its size known, after its debuginfo (so
 * the first parse has the symbols). A stream ("-", or perfhub record's
 * pipe from perf) goes up chunked as perf writes it; a thread reads the
 * same bytes with the parser to learn the build-ids, and the debuginfo
 * follows the end of the stream.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "debuginfo-up.h"
#include "summary.h"
#include "upload.h"
#include "dirpack.h"

/* name and tags, URL-escaped (each byte at most 3) */
#define UP_MAX_QUERY (64 + 3 * (LB_MAX_TAGS * (LB_MAX_KEY + LB_MAX_VALUE + 8) + 1024))
#define UP_SCAN_BUF 65536

static const char upload_usage[] =
	"usage: perfhub upload PATH|- [--name NAME] [--tag KEY=VALUE]... [--no-ci-labels]\n"
	"                      [--wait] [--json] [--no-debuginfo] [-v] [--server URL]\n"
	"                      [--token-file FILE]\n";

/* ?name=...&tag=k=v... for POST /api/v1/profiles (malloc'ed) */
static char *profile_query(const up_opts *o)
{
	char *q = calloc(1, UP_MAX_QUERY), kv[LB_MAX_KEY + LB_MAX_VALUE + 2];
	size_t i, n = o->labels ? lb_count(o->labels) : 0;

	if (!q)
		return NULL;
	if (o->name && ac_query_add(q, UP_MAX_QUERY, "name", o->name) < 0)
		goto fail;
	for (i = 0; i < n; i++) {
		snprintf(kv, sizeof(kv), "%s=%s", lb_key(o->labels, i), lb_value(o->labels, i));
		if (ac_query_add(q, UP_MAX_QUERY, "tag", kv) < 0)
			goto fail;
	}
	return q;
fail:
	fprintf(stderr, "perfhub %s: the name and tags are too long\n", o->who);
	free(q);
	return NULL;
}

/* POST the body as a new profile. 0 with res->id, -1 (printed). */
static int post_profile(ac_client *c, const up_opts *o, const ac_body *body, up_result *res)
{
	char *query = profile_query(o), *path = NULL;
	ac_response r = { 0 };
	json_t *id;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	if (!query || !(path = malloc(strlen(query) + 32)))
		goto out;
	sprintf(path, "/api/v1/profiles%s", query);
	if (ac_request(c, "POST", path, body, &r) < 0)
		goto out;
	if (r.status != 200 && r.status != 202) {
		ac_print_error(o->who, &r);
		goto out;
	}
	res->answer = json_loads(r.body ? r.body : "", 0, NULL);
	id = json_object_get(res->answer, "id");
	if (!json_is_integer(id) || json_integer_value(id) <= 0) {
		fprintf(stderr, "perfhub %s: unexpected answer from the server\n", o->who);
		json_decref(res->answer);
		res->answer = NULL;
		goto out;
	}
	res->id = json_integer_value(id);
	res->existed = r.status == 200;
	rc = 0;
out:
	ac_response_free(&r);
	free(path);
	free(query);
	return rc;
}

/* ---- a stream: the bytes go to the server and to a build-id reader ---------- */

typedef struct up_tee {
	const up_source *src;
	char *first;		/* the first bytes, read before the request */
	size_t first_len, first_off;
	int scan;		/* write end of the pipe to the reader; -1 once closed */
	int err;		/* errno of a failed read */
	int cut;		/* the source said it is not whole */
} up_tee;

typedef struct up_scan {
	int fd;			/* read end of the pipe */
	du_list *l;
	int failed;
	pd_error err;
} up_scan;

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static ssize_t read_some(int fd, char *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

/* curl asks for more of the body: what the recording has now. */
static long tee_read(void *ctx, char *buf, size_t len)
{
	up_tee *t = ctx;
	ssize_t n;

	if (t->first_off < t->first_len) {
		n = (ssize_t)(t->first_len - t->first_off < len ? t->first_len - t->first_off : len);
		memcpy(buf, t->first + t->first_off, (size_t)n);
		t->first_off += (size_t)n;
	} else if ((n = read_some(t->src->fd, buf, len)) < 0) {
		t->err = errno;
		return -1;
	}
	if (n == 0 && t->src->complete && !t->src->complete(t->src->ctx)) {
		t->cut = 1;
		return -1;
	}
	if (n == 0 || (t->scan >= 0 && write_all(t->scan, buf, (size_t)n) < 0)) {
		if (t->scan >= 0)
			close(t->scan);
		t->scan = -1;
	}
	return (long)n;
}

/* The reader thread: build-ids from MMAP2 and HEADER_BUILD_ID records, the
 * header's os_release; then whatever follows is drained, so the uploader
 * never blocks on a reader that stopped. */
static void *scan_main(void *arg)
{
	up_scan *s = arg;
	pd_options opt = { .no_decode_samples = 1 };
	char buf[UP_SCAN_BUF];
	pd_record r;
	pd_file *f = pd_open_fd(s->fd, &opt, &s->err);
	int rc = -1;

	while (f && (rc = pd_next(f, &r, &s->err)) > 0)
		du_note_record(s->l, &r);
	if (f)
		du_note_header(s->l, pd_get_header(f));
	s->failed = rc < 0;
	pd_close(f);
	while (read(s->fd, buf, sizeof(buf)) > 0)
		;
	return NULL;
}

int up_stream(ac_client *c, const up_source *src, const up_opts *o, up_result *res)
{
	up_tee tee = { .src = src, .scan = -1 };
	up_scan scan = { .fd = -1 };
	ac_body body = { .type = "application/octet-stream", .size = -1, .read = tee_read,
			 .ctx = &tee };
	pthread_t th;
	int pfd[2], started = 0, rc = -1;
	ssize_t n;
	char msg[300];

	memset(res, 0, sizeof(*res));
	/* no request before there is a recording: an empty stream or one
	 * that fails at once leaves nothing on the server */
	if (!(tee.first = malloc(UP_SCAN_BUF)))
		return -1;
	n = read_some(src->fd, tee.first, UP_SCAN_BUF);
	if (n <= 0) {
		if (n < 0)
			fprintf(stderr, "perfhub %s: reading the recording: %s\n", o->who,
				strerror(errno));
		else if (!src->complete)
			fprintf(stderr, "perfhub %s: the recording is empty\n", o->who);
		goto out;
	}
	tee.first_len = (size_t)n;
	/* without the reader the stream still goes up, without debuginfo */
	if (o->debuginfo && (scan.l = du_list_new()) && pipe2(pfd, O_CLOEXEC) == 0) {
		scan.fd = pfd[0];
		tee.scan = pfd[1];
		started = pthread_create(&th, NULL, scan_main, &scan) == 0;
		if (!started) {
			close(pfd[0]);
			close(pfd[1]);
			tee.scan = scan.fd = -1;
		}
	}
	rc = post_profile(c, o, &body, res);
	if (tee.err)
		fprintf(stderr, "perfhub %s: reading the recording: %s\n", o->who,
			strerror(tee.err));
	if (tee.scan >= 0)
		close(tee.scan);	/* the reader sees the end, even after a failure */
	if (started) {
		pthread_join(th, NULL);
		close(scan.fd);
	}
	if (tee.cut)
		rc = -1;	/* aborted: the source's owner says why */
	if (rc == 0 && started) {
		if (scan.failed && o->verbose)
			fprintf(stderr, "perfhub %s: reading the stream for build-ids: %s\n", o->who,
				pd_strerror(&scan.err, msg, sizeof(msg)));
		if (!du_list_count(scan.l))
			fprintf(stderr, "perfhub %s: the stream carried no build-ids (perf record "
				"--buildid-mmap puts them in it): no debuginfo sent\n", o->who);
		else
			res->debuginfo_stored = du_send(c, scan.l, o->verbose, o->who);
	}
out:
	du_list_free(scan.l);
	free(tee.first);
	return rc;
}

/* ---- after the upload ------------------------------------------------------- */

int up_report(ac_client *c, const up_opts *o, const up_result *res, int wait, int json,
	      json_t **final)
{
	json_t *p = NULL, *tags;
	const char *status;
	size_t i, n = o->labels ? lb_count(o->labels) : 0;
	int rc = 0;

	if (final)
		*final = NULL;
	if (res->existed)
		fprintf(stderr, "perfhub %s: the same recording is stored as profile %lld: its name "
			"and tags stay as they were\n", o->who, (long long)res->id);
	if (wait) {
		p = sm_wait(c, res->id, res->debuginfo_stored > 0, o->who);
		if (!p)
			return 1;
	} else {
		p = json_deep_copy(res->answer);
		/* the tags this upload asked for, when the server does not
		 * list the profile's */
		if (!json_object_get(p, "tags") && !res->existed) {
			tags = json_object();
			for (i = 0; i < n; i++)
				json_object_set_new(tags, lb_key(o->labels, i),
						    json_string(lb_value(o->labels, i)));
			json_object_set_new(p, "tags", tags);
		}
	}
	status = json_string_value(json_object_get(p, "status"));
	if (status && !strcmp(status, "failed")) {
		rc = 1;
		fprintf(stderr, "perfhub %s: profile %lld failed: %s\n", o->who,
			(long long)res->id, json_string_value(json_object_get(p, "error")) ?
			json_string_value(json_object_get(p, "error")) : "?");
	}
	if (json)
		sm_print_json(stdout, c, p);
	else if (wait)
		sm_print(stdout, c, p);
	else
		printf("%lld\n", (long long)res->id);
	if (!json && !wait && json_object_size(json_object_get(p, "tags"))) {
		/* the labels on stderr: stdout stays the id */
		fprintf(stderr, "perfhub %s: profile %lld tagged", o->who, (long long)res->id);
		sm_print_tags(stderr, json_object_get(p, "tags"));
		fputc('\n', stderr);
	}
	fflush(stdout);
	if (final)
		*final = p;
	else
		json_decref(p);
	return rc;
}

/* ---- perfhub upload ------------------------------------------------------- */

static int tar_to_file(void *ctx, const void *data, size_t len)
{
	return fwrite(data, 1, len, ctx) != len;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* A file, or a directory packed into a temporary tar: OUT the body. */
static int open_body(const char *path, const struct stat *st, ac_body *body)
{
	body->type = "application/octet-stream";
	if (S_ISDIR(st->st_mode)) {
		/* a perf.data directory goes up as a tar */
		body->fp = tmpfile();
		body->type = "application/x-tar";
		if (!body->fp || dirpack_write(path, tar_to_file, body->fp) < 0 ||
		    fflush(body->fp) || fseeko(body->fp, 0, SEEK_END) < 0) {
			fprintf(stderr, "perfhub upload: %s: cannot pack the directory: %s\n", path,
				errno == ELIBACC ? dirpack_lib_error() : strerror(errno));
			return -1;
		}
		body->size = (int64_t)ftello(body->fp);
		rewind(body->fp);
		return 0;
	}
	body->fp = fopen(path, "rb");
	if (!body->fp) {
		fprintf(stderr, "perfhub upload: %s: %s\n", path, strerror(errno));
		return -1;
	}
	body->size = (int64_t)st->st_size;
	return 0;
}

/* A file or directory: debuginfo first, so the first parse has it. */
static int upload_path(ac_client *c, const char *path, const up_opts *o, up_result *res)
{
	ac_body body = { 0 };
	struct stat st;
	int rc = -1;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "perfhub upload: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (open_body(path, &st, &body) < 0)
		goto out;
	if (o->debuginfo) {
		char bundle[4096];
		struct stat bst;
		du_list *l = du_list_new();

		snprintf(bundle, sizeof(bundle), "%s.tar.bz2", path);
		if (stat(bundle, &bst) == 0 && S_ISREG(bst.st_mode))
			du_send_archive(c, bundle, o->who);
		if (l && du_collect_path(l, path) == 0)
			du_send(c, l, o->verbose, o->who);
		du_list_free(l);
	}
	rc = post_profile(c, o, &body, res);
out:
	if (body.fp)
		fclose(body.fp);
	return rc;
}

int cmd_upload(int argc, char **argv)
{
	const char *path = NULL, *v;
	args_server srv = { 0 };
	up_opts o = { .who = "upload", .debuginfo = 1 };
	up_result res = { 0 };
	lb_set *labels = lb_new();
	ac_client *c = NULL;
	int wait = 0, json = 0, ci = 1, i, status = 2;
	struct stat st;

	if (!labels)
		return 1;
	o.labels = labels;
	for (i = 1; i < argc; i++) {
		if (args_server_option(argc, argv, &i, &srv))
			continue;
		if ((v = args_value(argc, argv, &i, "--name")))
			o.name = v;
		else if ((v = args_value(argc, argv, &i, "--tag"))) {
			if (lb_add_tag(labels, v, "upload") < 0)
				goto out;
		} else if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--no-debuginfo"))
			o.debuginfo = 0;
		else if (!strcmp(argv[i], "--no-ci-labels"))
			ci = 0;
		else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			o.verbose = 1;
		else if (!strcmp(argv[i], "--help")) {
			fputs(upload_usage, stdout);
			status = 0;
			goto out;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "perfhub upload: unknown option '%s'\n%s", argv[i],
				upload_usage);
			goto out;
		} else if (!path)
			path = argv[i];
		else {
			fprintf(stderr, "perfhub upload: one PATH only\n");
			goto out;
		}
	}
	if (!path) {
		fputs(upload_usage, stderr);
		goto out;
	}
	status = 1;
	if (ci)
		lb_add_ci(labels, "upload");
	if (!(c = ac_open(&srv)))
		goto out;
	if (ends_with(path, ".tar.bz2")) {
		/* a perf archive bundle: symbols only, no profile */
		status = du_send_archive(c, path, "upload") < 0;
		goto out;
	}
	if (strcmp(path, "-")) {
		if (!o.name)
			o.name = path;
		if (upload_path(c, path, &o, &res) < 0)
			goto out;
	} else if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
		/* "- < perf.data": a file after all, its size known */
		if (upload_path(c, "/dev/stdin", &o, &res) < 0)
			goto out;
	} else if (isatty(STDIN_FILENO)) {
		fprintf(stderr, "perfhub upload: standard input is a terminal; pipe a recording "
			"into it (perf record -o - ... | perfhub upload -)\n");
		goto out;
	} else {
		up_source src = { .fd = STDIN_FILENO };

		if (up_stream(c, &src, &o, &res) < 0)
			goto out;
	}
	status = up_report(c, &o, &res, wait, json, NULL);
out:
	json_decref(res.answer);
	ac_close(c);
	lb_free(labels);
	return status;
}
