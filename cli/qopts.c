/* qopts.c - what a question is about (id, selector, file) and the options that narrow it. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api-client.h"
#include "args.h"
#include "engine/feed.h"
#include "qopts.h"

int qo_spec_parse(const char *arg, qo_spec *s, const char *who)
{
	struct stat sb;
	size_t k = strspn(arg, " \t");

	s->text = arg;
	s->id = 0;
	if (arg[k] == '{') {
		s->kind = QO_SELECTOR;
		return 0;
	}
	if (args_parse_id(arg, &s->id) == 0) {
		s->kind = QO_ID;
		return 0;
	}
	if (stat(arg, &sb) == 0) {
		s->kind = QO_FILE;
		return 0;
	}
	fprintf(stderr, "perfhub %s: '%s' is neither a profile id, a selector ({label=\"value\", "
		"...}) nor a file: %s\n", who, arg, strerror(errno));
	return -1;
}

void qo_init(qo_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->pid = o->tid = o->last = -1;
}

/* A number >= min: 0, or -1 printed. */
static int number(const char *v, long long min, long long *out, const char *opt, const char *who)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || end == v || *end || x < min) {
		fprintf(stderr, "perfhub %s: %s wants a whole number from %lld\n", who, opt, min);
		return -1;
	}
	*out = x;
	return 0;
}

int qo_option(int argc, char **argv, int *i, qo_opts *o, const char *who)
{
	const char *v;

	if ((v = args_value(argc, argv, i, "--event")))
		o->event = v;
	else if ((v = args_value(argc, argv, i, "--comm")))
		o->comm = v;
	else if ((v = args_value(argc, argv, i, "--since")))
		o->since = v;
	else if ((v = args_value(argc, argv, i, "--until")))
		o->until = v;
	else if ((v = args_value(argc, argv, i, "--weight"))) {
		if (strcmp(v, "samples") && strcmp(v, "period")) {
			fprintf(stderr, "perfhub %s: --weight is samples or period\n", who);
			return -1;
		}
		o->weight = v;
	} else if ((v = args_value(argc, argv, i, "--pid")))
		return number(v, 0, &o->pid, "--pid", who) < 0 ? -1 : 1;
	else if ((v = args_value(argc, argv, i, "--tid")))
		return number(v, 0, &o->tid, "--tid", who) < 0 ? -1 : 1;
	else if ((v = args_value(argc, argv, i, "--last")))
		return number(v, 1, &o->last, "--last", who) < 0 ? -1 : 1;
	else if (!strcmp(argv[*i], "--kernel"))
		o->kernel = 1;
	else if (!strcmp(argv[*i], "--normalize"))
		o->normalize = 1;
	else
		return 0;
	return 1;
}

/* Appends key=value when value is not NULL; -1 when it does not fit. */
static int add(char *q, size_t len, const char *key, const char *value)
{
	return value ? ac_query_add(q, len, key, value) : 0;
}

static int add_num(char *q, size_t len, const char *key, long long v)
{
	char num[32];

	if (v < 0)
		return 0;
	snprintf(num, sizeof(num), "%lld", v);
	return ac_query_add(q, len, key, num);
}

int qo_filter_query(const qo_opts *o, char *q, size_t len)
{
	if (add(q, len, "event", o->event) < 0 || add(q, len, "comm", o->comm) < 0 ||
	    add(q, len, "weight", o->weight) < 0 || add_num(q, len, "pid", o->pid) < 0 ||
	    add_num(q, len, "tid", o->tid) < 0 || (o->kernel && add(q, len, "kernel", "1") < 0) ||
	    (o->normalize && add(q, len, "normalize", "profile") < 0))
		return -1;
	return 0;
}

int qo_pick_query(const qo_opts *o, const qo_spec *s, const char *prefix, int as_selector,
		  char *q, size_t len)
{
	char key[32], sel[48];
	size_t n = strlen(prefix);

	if (s->kind == QO_ID && !as_selector) {
		snprintf(key, sizeof(key), "%.*s", (int)(n ? n - 1 : 0), prefix);
		return add_num(q, len, key, s->id);
	}
	snprintf(key, sizeof(key), "%sq", prefix);
	if (s->kind == QO_ID) {
		snprintf(sel, sizeof(sel), "{id=\"%lld\"}", (long long)s->id);
		return ac_query_add(q, len, key, sel);
	}
	if (ac_query_add(q, len, key, s->text) < 0)
		return -1;
	snprintf(key, sizeof(key), "%ssince", prefix);
	if (add(q, len, key, o->since) < 0)
		return -1;
	snprintf(key, sizeof(key), "%suntil", prefix);
	if (add(q, len, key, o->until) < 0)
		return -1;
	snprintf(key, sizeof(key), "%slimit", prefix);
	return add_num(q, len, key, o->last);
}

int qo_by_samples(const qo_opts *o, int dflt)
{
	return o->weight ? !strcmp(o->weight, "samples") : dflt;
}

void qo_filter(const qo_opts *o, pe_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->event = o->event;
	f->comm = o->comm;
	f->pid = o->pid;
	f->tid = o->tid;
	f->kernel = o->kernel;
}

static void warn(void *ctx, const char *text)
{
	fprintf(stderr, "perfhub %s: warning: %s\n", (const char *)ctx, text);
}

pe_offline *qo_load(const char *path, const char *who)
{
	char msg[512];
	pe_offline *p = pe_feed_load(path, NULL, warn, (void *)who, msg, sizeof(msg));

	if (!p)
		fprintf(stderr, "perfhub %s: %s: %s\n", who, path, msg);
	return p;
}

double qo_seconds(pe_offline *p, const pe_filter *f)
{
	pe_timeline t;
	double s = 0;

	/* millisecond buckets of the folded event: its first to its last */
	if (pe_timeline_make(pe_offline_model(p), f->event, 1000000, pe_offline_blocks(p), &t) < 0)
		return 0;
	if (t.n)
		s = (double)(t.buckets[t.n - 1].t_ns - t.start_ns + t.bucket_ns) / 1e9;
	pe_timeline_free(&t);
	return s;
}
