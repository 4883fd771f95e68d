/* params.c - query parameters, Accept-Encoding and JSON bodies, read without trusting them. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/params.h"
#include "intake/labels.h"

#if MHD_VERSION < 0x00097002
typedef int params_result;
#else
typedef enum MHD_Result params_result;
#endif

/* ---- query parameters ------------------------------------------------------ */

const char *http_arg(struct MHD_Connection *conn, const char *name)
{
	return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
}

int http_arg_i64(struct MHD_Connection *conn, const char *name, int64_t min, int64_t max,
		   int64_t *out)
{
	const char *v = http_arg(conn, name);
	char *end;
	long long x;

	if (!v)
		return 0;
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || end == v || *end || x < min || x > max)
		return -1;
	*out = x;
	return 0;
}

static params_result collect_tag(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	http_tags *t = cls;
	char *copy, *eq;

	(void)kind;
	if (strcmp(key, "tag"))
		return MHD_YES;
	if (!value || !(eq = strchr(value, '=')) || eq == value || t->n >= API_MAX_TAGS) {
		t->bad = 1;
		return MHD_YES;
	}
	copy = strdup(value);
	if (!copy) {
		t->bad = 1;
		return MHD_YES;
	}
	copy[eq - value] = 0;
	t->owned[t->n] = copy;
	t->keys[t->n] = copy;
	t->values[t->n] = copy + (eq - value) + 1;
	t->n++;
	return MHD_YES;
}

void http_tags_get(struct MHD_Connection *conn, http_tags *t)
{
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_tag, t);
}

void http_tags_free(http_tags *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->owned[i]);
}

/* ---- the filters of folded-stack queries ------------------------------------ */

#define FOLD_BAD(...) do { snprintf(why, whylen, __VA_ARGS__); return -1; } while (0)
void http_fold_args_init(http_fold_args *fa)
{
	memset(fa, 0, sizeof(*fa));
	fa->f.pid = fa->f.tid = -1;
	pe_weight_parse(HTTP_DEFAULT_WEIGHT, &fa->by_samples, &fa->f.measure);
}

int http_fold_args_read(struct MHD_Connection *conn, http_fold_args *fa, char *why,
			size_t whylen)
{
	const char *w = http_arg(conn, "weight");
	int64_t v;

	http_fold_args_init(fa);
	fa->f.event = http_arg(conn, "event");
	if (fa->f.event && !*fa->f.event)
		fa->f.event = NULL;	/* event= is the default event */
	fa->f.comm = http_arg(conn, "comm");
	if (http_arg_i64(conn, "pid", 0, UINT32_MAX, &fa->f.pid) < 0)
		FOLD_BAD("bad parameter 'pid'");
	if (http_arg_i64(conn, "tid", 0, UINT32_MAX, &fa->f.tid) < 0)
		FOLD_BAD("bad parameter 'tid'");
	v = 0;
	if (http_arg_i64(conn, "from_ns", 0, INT64_MAX, &v) < 0)
		FOLD_BAD("bad parameter 'from_ns'");
	fa->f.from_ns = (uint64_t)v;
	v = 0;
	if (http_arg_i64(conn, "to_ns", 0, INT64_MAX, &v) < 0)
		FOLD_BAD("bad parameter 'to_ns'");
	fa->f.to_ns = (uint64_t)v;
	if (w && pe_weight_parse(w, &fa->by_samples, &fa->f.measure) < 0)
		FOLD_BAD("bad parameter 'weight' (samples, period, offcpu or wall)");
	fa->f.with_pid = http_arg(conn, "with_pid") != NULL;
	fa->f.with_tid = http_arg(conn, "with_tid") != NULL;
	fa->f.kernel = http_arg(conn, "kernel") != NULL;
	return 0;
}

/* ---- an upload's labels ------------------------------------------------------- */

int http_labels_check(struct MHD_Connection *conn, char *why, size_t whylen)
{
	http_tags tags = { 0 };
	const char *name = http_arg(conn, "name");
	size_t i;
	int rc = 0;

	http_tags_get(conn, &tags);
	if (tags.bad) {
		snprintf(why, whylen, "bad tag: want tag=KEY=VALUE (at most %d)", API_MAX_TAGS);
		rc = -1;
	} else if (name && intake_check_label(INTAKE_NAME, name, why, whylen) < 0) {
		rc = -1;
	}
	for (i = 0; i < tags.n && !rc; i++)
		if (intake_check_label(INTAKE_TAG_KEY, tags.keys[i], why, whylen) < 0 ||
		    intake_check_label(INTAKE_TAG_VALUE, tags.values[i], why, whylen) < 0)
			rc = -1;
	http_tags_free(&tags);
	return rc;
}

/* ---- headers -------------------------------------------------------------------- */

int http_accepts(struct MHD_Connection *conn, const char *name)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding");
	size_t nl = strlen(name);
	char el[128];

	while (h && *h) {
		size_t n = strcspn(h, ","), t;
		char *semi, *q;

		if (n < sizeof(el)) {
			memcpy(el, h, n);
			el[n] = 0;
			semi = strchr(el, ';');
			if (semi)
				*semi = 0;
			q = el + strspn(el, " \t");
			t = strcspn(q, " \t");
			if ((t == nl && !strncasecmp(q, name, nl)) ||
			    (t == nl + 2 && !strcmp(name, "gzip") && !strncasecmp(q, "x-gzip", 6)) ||
			    (t == 1 && *q == '*')) {
				/* a weight of 0 means "not this one" */
				for (q = semi ? semi + 1 : NULL; q; q = strchr(q, ';')) {
					q += strspn(q, " \t;");
					if ((*q == 'q' || *q == 'Q') && q[1] == '=')
						return strtod(q + 2, NULL) > 0;
				}
				return 1;
			}
		}
		h += n;
		h += *h == ',';
	}
	return 0;
}

/* ---- JSON bodies -------------------------------------------------------------------- */

json_t *http_json_build_ids(const char *body, size_t len, size_t max, char *why,
			    size_t whylen)
{
	json_error_t je;
	json_t *in = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &je);
	json_t *ids = json_object_get(in, "build_ids"), *v;
	size_t i;

	if (!json_is_array(ids)) {
		snprintf(why, whylen, "want {\"build_ids\": [\"hex\", ...]}%s%.80s",
			 in ? "" : ": ", in ? "" : je.text);
		json_decref(in);
		return NULL;
	}
	if (json_array_size(ids) > max) {
		snprintf(why, whylen, "more than %zu build-ids", max);
		json_decref(in);
		return NULL;
	}
	json_array_foreach(ids, i, v) {
		if (!json_is_string(v)) {
			snprintf(why, whylen, "build_ids[%zu] is not a string", i);
			json_decref(in);
			return NULL;
		}
	}
	json_incref(ids);
	json_decref(in);
	return ids;
}

/* The body's problem into why; -1. */
static int patch_bad(http_patch *out, char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int patch_bad(http_patch *out, char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	json_decref(out->doc);
	memset(out, 0, sizeof(*out));
	return -1;
}

int http_json_patch(const char *body, size_t len, http_patch *out, char *why, size_t whylen)
{
	json_error_t je;
	const char *k;
	char lwhy[HTTP_WHY_LEN];
	json_t *v, *tags;

	memset(out, 0, sizeof(*out));
	out->doc = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(out->doc))
		return patch_bad(out, why, whylen, "the body must be a JSON object {\"name\": ...,"
				 " \"tags\": {...}}%s%.80s", out->doc ? "" : ": ",
				 out->doc ? "" : je.text);
	json_object_foreach(out->doc, k, v)
		if (strcmp(k, "name") && strcmp(k, "tags"))
			return patch_bad(out, why, whylen, "unknown field '%.64s' (name, tags)", k);
	if ((v = json_object_get(out->doc, "name"))) {
		if (!json_is_null(v) && !json_is_string(v))
			return patch_bad(out, why, whylen, "'name' must be a string or null");
		if (json_is_string(v) &&
		    intake_check_label(INTAKE_NAME, json_string_value(v), lwhy, sizeof(lwhy)) < 0)
			return patch_bad(out, why, whylen, "'name': %s", lwhy);
		out->set_name = 1;
		out->name = json_string_value(v);
	}
	tags = json_object_get(out->doc, "tags");
	if (tags && (!json_is_object(tags) || json_object_size(tags) > API_MAX_TAGS))
		return patch_bad(out, why, whylen, "'tags' must be an object of at most %d keys",
				 API_MAX_TAGS);
	json_object_foreach(tags, k, v) {
		if (!json_is_null(v) && !json_is_string(v))
			return patch_bad(out, why, whylen, "bad tag '%.64s': its value must be a"
					 " string (null removes it)", k);
		if (intake_check_label(INTAKE_TAG_KEY, k, lwhy, sizeof(lwhy)) < 0 ||
		    (json_is_string(v) && intake_check_label(INTAKE_TAG_VALUE, json_string_value(v),
							      lwhy, sizeof(lwhy)) < 0))
			return patch_bad(out, why, whylen, "bad tag '%.64s': %s", k, lwhy);
		out->keys[out->nr_tags] = k;
		out->values[out->nr_tags++] = json_string_value(v);
	}
	if (!out->set_name && !out->nr_tags)
		return patch_bad(out, why, whylen, "nothing to change: give 'name' or 'tags'");
	return 0;
}
