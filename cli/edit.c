/*
 * edit.c - perfhub tag and perfhub rename: a profile's labels changed
 * with PATCH /api/v1/profiles/ID ({"name": ..., "tags": {...}}).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-client.h"
#include "commands.h"
#include "labels.h"

/* Sends the patch; prints the profile's labels as they are now. 0 or 1. */
static int patch(ac_client *c, int64_t id, json_t *body, const char *who)
{
	char path[128], *text = json_dumps(body, JSON_COMPACT);
	ac_body b = { "application/json", NULL, 0, NULL, NULL };
	ac_response r = { 0 };
	json_t *p = NULL, *v;
	const char *k, *name;
	int status = 1;

	if (!text || !(b.fp = fmemopen(text, strlen(text), "r")))
		goto out;
	b.size = (int64_t)strlen(text);
	snprintf(path, sizeof(path), "/api/v1/profiles/%lld", (long long)id);
	if (ac_request(c, "PATCH", path, &b, &r) < 0)
		goto out;
	if (r.status != 200 || !(p = json_loads(r.body ? r.body : "", 0, NULL))) {
		ac_print_error(who, &r);
		goto out;
	}
	name = json_string_value(json_object_get(p, "name"));
	printf("%lld %s\n", (long long)id, name ? name : "(no name)");
	json_object_foreach(json_object_get(p, "tags"), k, v)
		printf("  %s=%s\n", k, json_string_value(v));
	status = 0;
out:
	if (b.fp)
		fclose(b.fp);
	free(text);
	json_decref(p);
	ac_response_free(&r);
	return status;
}

/* The id, then the rest of the words (the server options taken out). */
static int id_and_words(int argc, char **argv, args_server *srv, int64_t *id, char **words,
			int *nwords)
{
	int a, have_id = 0;

	*nwords = 0;
	for (a = 1; a < argc; a++) {
		if (args_server_option(argc, argv, &a, srv))
			continue;
		if (!strcmp(argv[a], "--help"))
			return 1;
		if (!have_id) {
			if (args_parse_id(argv[a], id) < 0)
				return -1;
			have_id = 1;
		} else {
			words[(*nwords)++] = argv[a];
		}
	}
	return have_id ? 0 : -1;
}

int cmd_tag(int argc, char **argv)
{
	static const char usage[] =
		"usage: perfhub tag ID KEY=VALUE... [KEY-]... [--server URL] [--token-file FILE]\n"
		"  KEY=VALUE sets a tag (replacing its value), KEY- removes it\n";
	args_server srv = { 0 };
	char **words = calloc((size_t)argc + 1, sizeof(*words));
	json_t *tags = json_object(), *body = NULL;
	ac_client *c = NULL;
	int64_t id;
	int i, n, rc, status = 2;

	if (!words || !tags)
		goto out;
	rc = id_and_words(argc, argv, &srv, &id, words, &n);
	if (rc || !n) {
		fputs(usage, rc == 1 ? stdout : stderr);
		status = rc == 1 ? 0 : 2;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const char *eq = strchr(words[i], '=');
		size_t l = strlen(words[i]);
		if (!eq && l > 1 && words[i][l - 1] == '-') {
			words[i][l - 1] = 0;
			json_object_set_new(tags, words[i], json_null());
		} else if (eq && eq > words[i] && (size_t)(eq - words[i]) <= LB_MAX_KEY &&
			   strlen(eq + 1) <= LB_MAX_VALUE) {
			char key[LB_MAX_KEY + 1];
			memcpy(key, words[i], (size_t)(eq - words[i]));
			key[eq - words[i]] = 0;
			json_object_set_new(tags, key, json_string(eq + 1));
		} else {
			fprintf(stderr, "perfhub tag: '%s' is neither KEY=VALUE nor KEY-\n%s",
				words[i], usage);
			goto out;
		}
	}
	status = 1;
	body = json_pack("{s:O}", "tags", tags);
	if (body && (c = ac_open(&srv)))
		status = patch(c, id, body, "tag");
out:
	json_decref(tags);
	json_decref(body);
	free(words);
	ac_close(c);
	return status;
}

int cmd_rename(int argc, char **argv)
{
	static const char usage[] =
		"usage: perfhub rename ID NAME [--server URL] [--token-file FILE]\n"
		"  an empty NAME (\"\") removes the name\n";
	args_server srv = { 0 };
	char **words = calloc((size_t)argc + 1, sizeof(*words));
	json_t *body = NULL;
	ac_client *c = NULL;
	int64_t id;
	int n, rc, status = 2;

	if (!words)
		goto out;
	rc = id_and_words(argc, argv, &srv, &id, words, &n);
	if (rc || n != 1) {
		fputs(usage, rc == 1 ? stdout : stderr);
		status = rc == 1 ? 0 : 2;
		goto out;
	}
	status = 1;
	body = json_pack("{s:o}", "name", *words[0] ? json_string(words[0]) : json_null());
	if (body && (c = ac_open(&srv)))
		status = patch(c, id, body, "rename");
out:
	json_decref(body);
	free(words);
	ac_close(c);
	return status;
}
