/*
 * summary.c - one profile for a person or as JSON; waiting for its parse.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "summary.h"

#define SM_POLL_US 200000
/* After a first "ready" while debuginfo was arriving: long enough for the
 * server to queue the re-symbolization it decides on as the parse ends. */
#define SM_SETTLE_US 500000

static int is_done(json_t *p, int *ready)
{
	const char *st = json_string_value(json_object_get(p, "status"));

	*ready = st && !strcmp(st, "ready");
	return st && (*ready || !strcmp(st, "failed"));
}

json_t *sm_wait(ac_client *c, int64_t id, int settle, const char *who)
{
	char path[128], what[64];
	json_t *p;
	int ready;

	snprintf(path, sizeof(path), "/api/v1/profiles/%lld", (long long)id);
	snprintf(what, sizeof(what), "%s (waiting for profile %lld)", who, (long long)id);
	for (;;) {
		if (!(p = ac_get_json(c, path, what)))
			return NULL;
		if (is_done(p, &ready)) {
			if (!ready || !settle)
				return p;
			/* look once more: a re-symbolization queued as the
			 * first parse ended is waited for too */
			settle = 0;
			json_decref(p);
			usleep(SM_SETTLE_US);
			continue;
		}
		json_decref(p);
		usleep(SM_POLL_US);
	}
}

char *sm_page_url(const ac_client *c, int64_t id)
{
	size_t n = strlen(ac_server(c)) + 64;
	char *u = malloc(n);

	if (u)
		snprintf(u, n, "%s/#/profile/%lld", ac_server(c), (long long)id);
	return u;
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static long long num(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

void sm_print_tags(FILE *out, json_t *tags)
{
	const char *k;
	json_t *v;

	json_object_foreach(tags, k, v)
		fprintf(out, " %s=%s", k, json_string_value(v) ? json_string_value(v) : "");
}

static void print_events(FILE *out, json_t *events)
{
	json_t *e;
	size_t i;

	if (!json_array_size(events))
		return;
	fprintf(out, "  %-10s", "events");
	json_array_foreach(events, i, e)
		fprintf(out, "%s %s %lld", i ? "," : "", str(e, "name") ? str(e, "name") : "?",
			num(e, "samples"));
	fputc('\n', out);
}

/* host, arch, CPUs, kernel, perf version; the command perf recorded */
static void print_recorded(FILE *out, json_t *h)
{
	const char *cmd = str(h, "cmdline");

	if (!json_is_object(h))
		return;
	fprintf(out, "  %-10s %s", "recorded", str(h, "hostname") ? str(h, "hostname") : "?");
	if (str(h, "arch"))
		fprintf(out, ", %s", str(h, "arch"));
	if (json_is_integer(json_object_get(h, "nr_cpus_online")))
		fprintf(out, ", %lld CPUs", num(h, "nr_cpus_online"));
	if (str(h, "os_release"))
		fprintf(out, ", Linux %s", str(h, "os_release"));
	if (str(h, "perf_version"))
		fprintf(out, ", perf %s", str(h, "perf_version"));
	fputc('\n', out);
	if (cmd)
		fprintf(out, "  %-10s %s\n", "command", cmd);
}

void sm_print(FILE *out, const ac_client *c, json_t *p)
{
	const char *status = str(p, "status") ? str(p, "status") : "?";
	json_t *pct = json_object_get(p, "symbolized_pct");
	int64_t id = (int64_t)num(p, "id");
	char *page = sm_page_url(c, id);

	fprintf(out, "%lld %s", (long long)id, status);
	if (!strcmp(status, "failed"))
		fprintf(out, ": %s", str(p, "error") ? str(p, "error") : "(no message)");
	if (!strcmp(status, "ready")) {
		fprintf(out, ": %lld samples, %lld lost", num(p, "samples"), num(p, "lost"));
		if (json_is_number(pct))
			fprintf(out, ", %.1f%% symbolized", json_number_value(pct));
	}
	fputc('\n', out);
	if (str(p, "name"))
		fprintf(out, "  %-10s %s\n", "name", str(p, "name"));
	if (json_object_size(json_object_get(p, "tags"))) {
		fprintf(out, "  %-10s", "tags");
		sm_print_tags(out, json_object_get(p, "tags"));
		fputc('\n', out);
	}
	print_events(out, json_object_get(p, "events"));
	print_recorded(out, json_object_get(p, "header"));
	fprintf(out, "  %-10s %s, %lld bytes (%s)", "uploaded",
		str(p, "uploaded_at") ? str(p, "uploaded_at") : "?", num(p, "size"),
		str(p, "kind") ? str(p, "kind") : "?");
	if (json_is_integer(json_object_get(p, "parse_ms")) && strcmp(status, "queued"))
		fprintf(out, ", parsed in %lld ms", num(p, "parse_ms"));
	fputc('\n', out);
	if (page)
		fprintf(out, "  %-10s %s\n", "page", page);
	free(page);
}

void sm_print_json(FILE *out, const ac_client *c, json_t *p)
{
	char *page = sm_page_url(c, (int64_t)num(p, "id"));

	if (page)
		json_object_set_new(p, "page", json_string(page));
	free(page);
	json_dumpf(p, out, JSON_INDENT(2));
	fputc('\n', out);
}
