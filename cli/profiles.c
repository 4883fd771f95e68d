/*
 * profiles.c - perfhub ls, show, rm: the profiles on a server.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-client.h"
#include "commands.h"
#include "labels.h"
#include "summary.h"

#define LS_PAGE 1000		/* the server's largest page */
#define LS_DEFAULT_LIMIT 1000
#define LS_MAX_QUERY 16384	/* a selector of 4096 bytes, escaped */

static const char ls_usage[] =
	"usage: perfhub ls [SELECTOR] [--since T] [--until T] [--status STATUS]\n"
	"                  [--tag KEY=VALUE]... [--name NAME]\n"
	"                  [--limit N] [--json] [--server URL] [--token-file FILE]\n"
	"  SELECTOR: {label=\"value\", label=~\"regex\", label!=\"v\", label!~\"regex\"}\n"
	"  over tags, name, hostname, id; T: RFC 3339, 7d, 36h, or unix seconds\n";

typedef struct ls_filter {
	const char *status, *name;
	const char *selector, *since, *until;	/* the server's q, since, until */
	lb_set *tags;
	long long limit;
} ls_filter;

/* The tags after the first (the server filters by one) and the name. */
static int matches(json_t *p, const ls_filter *f)
{
	json_t *tags = json_object_get(p, "tags");
	const char *name = json_string_value(json_object_get(p, "name"));
	size_t i;

	if (f->name && (!name || strcmp(name, f->name)))
		return 0;
	for (i = 1; i < lb_count(f->tags); i++) {
		const char *v = json_string_value(json_object_get(tags, lb_key(f->tags, i)));
		if (!v || strcmp(v, lb_value(f->tags, i)))
			return 0;
	}
	return 1;
}

static void print_row(json_t *p)
{
	json_t *smp = json_object_get(p, "samples");
	const char *name = json_string_value(json_object_get(p, "name"));
	const char *up = json_string_value(json_object_get(p, "uploaded_at"));
	const char *st = json_string_value(json_object_get(p, "status"));
	char samples[32] = "-";

	if (json_is_integer(smp))
		snprintf(samples, sizeof(samples), "%lld", (long long)json_integer_value(smp));
	printf("%-8lld %-8s %-20s %10lld %12s  %s\n",
	       (long long)json_integer_value(json_object_get(p, "id")), st ? st : "?",
	       up ? up : "?", (long long)json_integer_value(json_object_get(p, "size")), samples,
	       name ? name : "");
}

/* Pages through the list (newest first) until `limit` profiles matched.
 * OUT: *out a JSON array of them. */
static int list(ac_client *c, const ls_filter *f, json_t *out)
{
	long long offset = 0, total = 1;
	char kv[LB_MAX_KEY + LB_MAX_VALUE + 2], offs[32], page[32], q[LS_MAX_QUERY];
	char path[LS_MAX_QUERY + 32];
	json_t *j, *p;
	size_t i;

	while (offset < total && (long long)json_array_size(out) < f->limit) {
		q[0] = 0;
		snprintf(offs, sizeof(offs), "%lld", offset);
		snprintf(page, sizeof(page), "%d", LS_PAGE);
		ac_query_add(q, sizeof(q), "limit", page);
		ac_query_add(q, sizeof(q), "offset", offs);
		if (f->status)
			ac_query_add(q, sizeof(q), "status", f->status);
		if ((f->selector && ac_query_add(q, sizeof(q), "q", f->selector) < 0) ||
		    (f->since && ac_query_add(q, sizeof(q), "since", f->since) < 0) ||
		    (f->until && ac_query_add(q, sizeof(q), "until", f->until) < 0)) {
			fprintf(stderr, "perfhub ls: the selector is too long\n");
			return -1;
		}
		if (lb_count(f->tags)) {
			snprintf(kv, sizeof(kv), "%s=%s", lb_key(f->tags, 0), lb_value(f->tags, 0));
			if (ac_query_add(q, sizeof(q), "tag", kv) < 0)
				return -1;
		}
		snprintf(path, sizeof(path), "/api/v1/profiles%s", q);
		if (!(j = ac_get_json(c, path, "ls")))
			return -1;
		total = (long long)json_integer_value(json_object_get(j, "total"));
		if (!json_array_size(json_object_get(j, "profiles")))
			total = 0;	/* nothing more, whatever total said */
		json_array_foreach(json_object_get(j, "profiles"), i, p) {
			if ((long long)json_array_size(out) < f->limit && matches(p, f))
				json_array_append(out, p);
		}
		offset += LS_PAGE;
		json_decref(j);
	}
	return 0;
}

int cmd_ls(int argc, char **argv)
{
	args_server srv = { 0 };
	ls_filter f = { .limit = LS_DEFAULT_LIMIT };
	const char *v;
	ac_client *c = NULL;
	json_t *out = json_array(), *p;
	int a, json = 0, status = 2;
	size_t i;
	char *end;

	f.tags = lb_new();
	if (!f.tags || !out)
		goto out;
	for (a = 1; a < argc; a++) {
		if (args_server_option(argc, argv, &a, &srv))
			continue;
		if ((v = args_value(argc, argv, &a, "--status")))
			f.status = v;
		else if ((v = args_value(argc, argv, &a, "--name")))
			f.name = v;
		else if ((v = args_value(argc, argv, &a, "--since")))
			f.since = v;
		else if ((v = args_value(argc, argv, &a, "--until")))
			f.until = v;
		else if (!f.selector && argv[a][strspn(argv[a], " \t")] == '{')
			f.selector = argv[a];
		else if ((v = args_value(argc, argv, &a, "--tag"))) {
			if (lb_add_tag(f.tags, v, "ls") < 0)
				goto out;
		} else if ((v = args_value(argc, argv, &a, "--limit"))) {
			f.limit = strtoll(v, &end, 10);
			if (*end || f.limit <= 0) {
				fprintf(stderr, "perfhub ls: --limit wants a positive number\n");
				goto out;
			}
		} else if (!strcmp(argv[a], "--json"))
			json = 1;
		else {
			fputs(ls_usage, strcmp(argv[a], "--help") ? stderr : stdout);
			status = strcmp(argv[a], "--help") ? 2 : 0;
			goto out;
		}
	}
	status = 1;
	if (!(c = ac_open(&srv)) || list(c, &f, out) < 0)
		goto out;
	if (json) {
		json_dumpf(out, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		printf("%-8s %-8s %-20s %10s %12s  %s\n", "ID", "STATUS", "UPLOADED", "SIZE",
		       "SAMPLES", "NAME");
		json_array_foreach(out, i, p)
			print_row(p);
	}
	status = 0;
out:
	json_decref(out);
	lb_free(f.tags);
	ac_close(c);
	return status;
}

/* show and rm: one profile id; the server options; show's --json. */
static int one_id(int argc, char **argv, args_server *srv, int64_t *id, int *json)
{
	const char *ids = NULL;
	int a;

	for (a = 1; a < argc; a++) {
		if (args_server_option(argc, argv, &a, srv))
			continue;
		if (json && !strcmp(argv[a], "--json"))
			*json = 1;
		else if (!ids && argv[a][0] != '-')
			ids = argv[a];
		else
			break;
	}
	if (a < argc || !ids || args_parse_id(ids, id) < 0) {
		fprintf(stderr, "usage: perfhub %s ID%s [--server URL] [--token-file FILE]\n", argv[0],
			json ? " [--json]" : "");
		return -1;
	}
	return 0;
}

int cmd_show(int argc, char **argv)
{
	args_server srv = { 0 };
	int64_t id;
	char path[128];
	ac_client *c;
	json_t *j;
	int json = 0, ok;

	if (one_id(argc, argv, &srv, &id, &json) < 0)
		return 2;
	if (!(c = ac_open(&srv)))
		return 1;
	snprintf(path, sizeof(path), "/api/v1/profiles/%lld", (long long)id);
	j = ac_get_json(c, path, "show");
	if (j && json) {
		json_dumpf(j, stdout, JSON_INDENT(2));
		putchar('\n');
	} else if (j) {
		sm_print(stdout, c, j);
	}
	ok = j != NULL;
	json_decref(j);
	ac_close(c);
	return ok ? 0 : 1;
}

int cmd_rm(int argc, char **argv)
{
	args_server srv = { 0 };
	int64_t id;
	char path[128];
	ac_client *c;
	ac_response r;
	int status = 1;

	if (one_id(argc, argv, &srv, &id, NULL) < 0)
		return 2;
	if (!(c = ac_open(&srv)))
		return 1;
	snprintf(path, sizeof(path), "/api/v1/profiles/%lld", (long long)id);
	if (ac_request(c, "DELETE", path, NULL, &r) == 0) {
		if (r.status == 204)
			status = 0;
		else
			ac_print_error("rm", &r);
		ac_response_free(&r);
	}
	ac_close(c);
	return status;
}
