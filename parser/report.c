/* report.c - the inspect report of a parsed recording, as JSON and as text. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* How many records between two progress callbacks: cheap enough to keep
 * the loop tight, frequent enough for a tenth-of-a-second refresh. */
#define REPORT_PROGRESS_EVERY 65536

int64_t report_read_all(pd_file *f, report_progress_fn progress, void *ctx, pd_error *err)
{
	pd_record rec;
	int64_t n = 0;
	int rc;
	const pd_info *info = pd_get_info(f);
	uint64_t total = info ? info->file_size : 0;

	while ((rc = pd_next(f, &rec, err)) > 0) {
		n++;
		if (progress && n % REPORT_PROGRESS_EVERY == 0)
			progress(ctx, pd_get_stats(f)->bytes_read, total);
	}
	if (rc < 0)
		return -1;
	if (progress)
		progress(ctx, pd_get_stats(f)->bytes_read, total);
	return n;
}

static uint64_t jnum_u64(const json_t *v);

/* jansson integers are signed 64-bit: larger values become decimal strings
 * so that nothing is silently wrapped to a negative number. */
static json_t *ju64(uint64_t v)
{
	char buf[24];

	if (v <= (uint64_t)INT64_MAX)
		return json_integer((json_int_t)v);
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return json_string(buf);
}

/* Set key to a new value; a NULL value (out of memory) is caught by the
 * caller's final check of the object. */
static void set_new(json_t *obj, const char *key, json_t *val)
{
	if (val)
		json_object_set_new(obj, key, val);
}

/* A string from the file: bytes that are not UTF-8 (the file is untrusted)
 * become '?' so that the report stays valid JSON. */
static json_t *jstring_lossy(const char *s)
{
	json_t *v = json_string(s);
	char *copy;

	if (v)
		return v;
	copy = strdup(s);
	if (!copy)
		return NULL;
	for (unsigned char *p = (unsigned char *)copy; *p; p++)
		if (*p >= 0x80 || *p < 0x20)
			*p = '?';
	v = json_string(copy);
	free(copy);
	return v;
}

static void set_str(json_t *obj, const char *key, const char *s)
{
	if (s)
		set_new(obj, key, jstring_lossy(s));
}

static const char *const sample_type_names[] = {
	"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD",
	"STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT",
	"DATA_SRC", "IDENTIFIER", "TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX",
	"CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
};

const char *report_sample_type_str(uint64_t sample_type, char *buf, size_t len)
{
	size_t used = 0;
	const size_t nnames = sizeof(sample_type_names) / sizeof(sample_type_names[0]);

	if (!len)
		return buf;
	buf[0] = '\0';
	for (unsigned bit = 0; bit < 64; bit++) {
		char unk[16];
		const char *name;
		int w;

		if (!(sample_type & (1ULL << bit)))
			continue;
		if (bit < nnames) {
			name = sample_type_names[bit];
		} else {
			snprintf(unk, sizeof(unk), "BIT%u", bit);
			name = unk;
		}
		w = snprintf(buf + used, len - used, "%s%s", used ? "|" : "", name);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
	return buf;
}

static json_t *format_json(const pd_file *f)
{
	const pd_info *info = pd_get_info(f);
	const pd_stats *st = pd_get_stats(f);
	json_t *o = json_object();

	if (!o || !info)
		return o;
	set_str(o, "mode", info->mode == PD_MODE_PIPE ? "pipe" : "file");
	set_new(o, "version", json_integer(info->version));
	set_str(o, "byte_order", info->big_endian ? "big-endian" : "little-endian");
	set_new(o, "directory", json_boolean(info->is_directory));
	set_new(o, "data_files", json_integer(info->nr_data_files));
	if (st) {
		set_new(o, "bytes_read", ju64(st->bytes_read));
		if (st->bytes_decompressed)
			set_new(o, "decompressed_bytes", ju64(st->bytes_decompressed));
	}
	if (info->mode == PD_MODE_FILE) {
		set_new(o, "file_size", ju64(info->file_size));
		set_new(o, "header_size", ju64(info->header_size));
		set_new(o, "attr_size", ju64(info->attr_size));
		set_new(o, "data_offset", ju64(info->data_offset));
		set_new(o, "data_size", ju64(info->data_size));
		set_new(o, "feat_offset", ju64(info->feat_offset));
	}
	return o;
}

/* The JSON key of a feature: perf's name, or feature_N for ids perf does
 * not define (simpleperf writes 128 and up). */
static const char *feature_key(int feat, char *buf, size_t len)
{
	const char *name = pd_feature_name(feat);

	if (name)
		return name;
	snprintf(buf, len, "feature_%d", feat);
	return buf;
}

static json_t *features_json(const pd_file *f)
{
	int ids[PD_FEAT_MAX];
	size_t n = pd_features(f, ids, PD_FEAT_MAX);
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (n > PD_FEAT_MAX)
		n = PD_FEAT_MAX;
	for (size_t i = 0; i < n; i++) {
		char keybuf[32];
		const char *key = feature_key(ids[i], keybuf, sizeof(keybuf));
		char *text = pd_feature_json(f, ids[i]);
		json_t *val = NULL;

		if (text) {
			json_error_t jerr;

			val = json_loads(text, JSON_DECODE_ANY, &jerr);
			if (!val)
				val = json_pack("{s:s}", "error", "feature decoder produced invalid JSON");
			free(text);
		} else {
			size_t len = 0;

			(void)pd_feature_raw(f, ids[i], &len);
			val = json_pack("{s:i,s:I,s:b}", "id", ids[i], (json_int_t)len, "raw", 1);
		}
		set_new(o, key, val);
	}
	return o;
}

static json_t *header_json(const pd_file *f)
{
	const pd_header *h = pd_get_header(f);
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (h) {
		set_str(o, "hostname", h->hostname);
		set_str(o, "os_release", h->os_release);
		set_str(o, "perf_version", h->perf_version);
		set_str(o, "arch", h->arch);
		if (h->has_nr_cpus) {
			set_new(o, "nr_cpus_online", json_integer(h->nr_cpus_online));
			set_new(o, "nr_cpus_available", json_integer(h->nr_cpus_available));
		}
		set_str(o, "cpu_desc", h->cpu_desc);
		set_str(o, "cpuid", h->cpuid);
		if (h->has_total_mem)
			set_new(o, "total_mem", ju64(h->total_mem));
		set_str(o, "cmdline", h->cmdline);
		if (h->has_sample_time) {
			json_t *st = json_object();

			if (st) {
				set_new(st, "first_ns", ju64(h->first_sample_ns));
				set_new(st, "last_ns", ju64(h->last_sample_ns));
				set_new(o, "sample_time", st);
			}
		}
	}
	set_new(o, "features", features_json(f));
	return o;
}

static json_t *event_json(const pd_event *ev)
{
	json_t *o = json_object();
	json_t *ids = json_array();

	if (!o || !ids) {
		json_decref(o);
		json_decref(ids);
		return NULL;
	}
	set_str(o, "name", ev->name ? ev->name : "unknown");
	set_new(o, "type", json_integer(ev->attr.type));
	set_new(o, "config", ju64(ev->attr.config));
	set_new(o, "sample_type", ju64(ev->attr.sample_type));
	set_new(o, "read_format", ju64(ev->attr.read_format));
	if (ev->attr.flags & PD_ATTR_FREQ)
		set_new(o, "sample_freq", ju64(ev->attr.sample_period));
	else
		set_new(o, "sample_period", ju64(ev->attr.sample_period));
	for (size_t i = 0; i < ev->nr_ids; i++)
		json_array_append_new(ids, ju64(ev->ids[i]));
	set_new(o, "ids", ids);
	set_new(o, "samples", ju64(ev->nr_samples));
	return o;
}

/* Record counts by perf's names, in type order as perf report --stats
 * lists them; types without a name keep their number. */
static json_t *records_json(const pd_stats *st)
{
	json_t *o = json_object();

	if (!o || !st)
		return o;
	for (uint32_t t = 0; t < PD_RECORD_TYPE_MAX; t++) {
		const char *name;
		char buf[32];

		if (!st->records[t])
			continue;
		name = pd_record_name(t);
		if (!name) {
			snprintf(buf, sizeof(buf), "TYPE_%" PRIu32, t);
			name = buf;
		}
		set_new(o, name, ju64(st->records[t]));
	}
	if (st->unknown_records)
		set_new(o, "UNKNOWN", ju64(st->unknown_records));
	return o;
}

json_t *report_json(const pd_file *f)
{
	json_t *rep = json_object();
	json_t *events = json_array();
	json_t *per_event = json_object();
	const pd_stats *st = pd_get_stats(f);
	size_t nev = pd_nr_events(f);
	size_t nwarn = pd_nr_warnings(f);

	if (!rep || !events || !per_event)
		goto nomem;

	set_new(rep, "format", format_json(f));
	set_new(rep, "header", header_json(f));

	for (size_t i = 0; i < nev; i++) {
		const pd_event *ev = pd_get_event(f, i);
		const char *name;
		json_t *prev, *namev;
		uint64_t n;

		if (!ev)
			continue;
		json_array_append_new(events, event_json(ev));
		/* Two events with one name (perf allows it) share one entry:
		 * their samples add up. */
		namev = jstring_lossy(ev->name ? ev->name : "unknown");
		if (!namev)
			goto nomem;
		name = json_string_value(namev);
		n = ev->nr_samples;
		prev = json_object_get(per_event, name);
		if (prev)
			n += jnum_u64(prev);
		set_new(per_event, name, ju64(n));
		json_decref(namev);
	}
	json_object_set_new(rep, "events", events);
	events = NULL;
	set_new(rep, "records", records_json(st));
	if (st)
		set_new(rep, "records_total", ju64(st->total_records));
	json_object_set_new(rep, "samples_per_event", per_event);
	per_event = NULL;
	set_new(rep, "lost", ju64(st ? st->lost + st->lost_samples : 0));
	if (nwarn) {
		json_t *w = json_array();

		for (size_t i = 0; w && i < nwarn; i++) {
			const char *text = pd_warning(f, i);

			if (text)
				json_array_append_new(w, jstring_lossy(text));
		}
		set_new(rep, "warnings", w);
	}
	/* Every part must have made it: a missing one means memory ran out. */
	if (!json_object_get(rep, "header") || !json_object_get(rep, "records") ||
	    !json_object_get(rep, "lost"))
		goto nomem;
	return rep;
nomem:
	json_decref(rep);
	json_decref(events);
	json_decref(per_event);
	return NULL;
}

/* ---- text ------------------------------------------------------------- */

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Integer or big-number string as text. */
static const char *jnum(const json_t *v, char *buf, size_t len)
{
	if (json_is_integer(v))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else
		snprintf(buf, len, "?");
	return buf;
}

static uint64_t jnum_u64(const json_t *v)
{
	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	if (json_is_string(v))
		return strtoull(json_string_value(v), NULL, 10);
	return 0;
}

static void print_kv(FILE *out, const char *label, const char *value)
{
	if (value)
		fprintf(out, "%-18s %s\n", label, value);
}

/* Long feature values are only summarised; --json has them in full. */
#define REPORT_TEXT_FEATURE_MAX 100

static void print_features(FILE *out, const json_t *features)
{
	const char *key;
	json_t *val;

	if (!json_is_object(features) || !json_object_size(features))
		return;
	fprintf(out, "features (%zu):\n", json_object_size(features));
	json_object_foreach((json_t *)features, key, val) {
		char *text = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);

		if (text && strlen(text) <= REPORT_TEXT_FEATURE_MAX)
			fprintf(out, "  %-18s %s\n", key, text);
		else
			fprintf(out, "  %-18s (%zu bytes of JSON; see --json)\n", key,
				text ? strlen(text) : 0);
		free(text);
	}
}

static void print_events(FILE *out, const json_t *events)
{
	size_t i;
	json_t *ev;

	if (!json_is_array(events))
		return;
	fprintf(out, "events (%zu):\n", json_array_size(events));
	json_array_foreach(events, i, ev) {
		char st[256], a[24], b[24], c[24], d[24];
		const json_t *freq = json_object_get(ev, "sample_freq");

		report_sample_type_str(jnum_u64(json_object_get(ev, "sample_type")), st, sizeof(st));
		fprintf(out, "  %s\n", jstr(ev, "name") ? jstr(ev, "name") : "unknown");
		fprintf(out, "    type %s, config %s, %s %s, ids %zu, samples %s\n",
			jnum(json_object_get(ev, "type"), a, sizeof(a)),
			jnum(json_object_get(ev, "config"), b, sizeof(b)),
			freq ? "sample_freq" : "sample_period",
			jnum(freq ? freq : json_object_get(ev, "sample_period"), c, sizeof(c)),
			json_array_size(json_object_get(ev, "ids")),
			jnum(json_object_get(ev, "samples"), d, sizeof(d)));
		fprintf(out, "    sample_type %s\n", st[0] ? st : "(none)");
	}
}

static void print_counts(FILE *out, const char *title, const json_t *obj)
{
	const char *key;
	json_t *val;
	char buf[24];

	if (!json_is_object(obj))
		return;
	fprintf(out, "%s:\n", title);
	json_object_foreach((json_t *)obj, key, val)
		fprintf(out, "  %-24s %12s\n", key, jnum(val, buf, sizeof(buf)));
}

int report_print_text(FILE *out, const json_t *rep)
{
	const json_t *fmt = json_object_get(rep, "format");
	const json_t *hdr = json_object_get(rep, "header");
	const json_t *warn = json_object_get(rep, "warnings");
	char buf[64], buf2[64];

	if (json_is_object(fmt)) {
		const json_t *df = json_object_get(fmt, "data_files");

		fprintf(out, "%-18s %s mode, %s%s", "format", jstr(fmt, "mode") ? jstr(fmt, "mode") : "?",
			jstr(fmt, "byte_order") ? jstr(fmt, "byte_order") : "?",
			json_is_true(json_object_get(fmt, "directory")) ? ", directory" : "");
		if (json_integer_value(df) > 1)
			fprintf(out, ", %" JSON_INTEGER_FORMAT " data files", json_integer_value(df));
		fputc('\n', out);
		if (json_object_get(fmt, "data_size"))
			fprintf(out, "%-18s %s bytes at offset %s\n", "data",
				jnum(json_object_get(fmt, "data_size"), buf, sizeof(buf)),
				jnum(json_object_get(fmt, "data_offset"), buf2, sizeof(buf2)));
	}
	if (json_is_object(hdr)) {
		const json_t *st = json_object_get(hdr, "sample_time");

		print_kv(out, "hostname", jstr(hdr, "hostname"));
		print_kv(out, "os release", jstr(hdr, "os_release"));
		print_kv(out, "perf version", jstr(hdr, "perf_version"));
		print_kv(out, "arch", jstr(hdr, "arch"));
		if (json_object_get(hdr, "nr_cpus_online")) {
			snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT " online, %" JSON_INTEGER_FORMAT " available",
				 json_integer_value(json_object_get(hdr, "nr_cpus_online")),
				 json_integer_value(json_object_get(hdr, "nr_cpus_available")));
			print_kv(out, "cpus", buf);
		}
		print_kv(out, "cpu desc", jstr(hdr, "cpu_desc"));
		print_kv(out, "cpuid", jstr(hdr, "cpuid"));
		if (json_object_get(hdr, "total_mem")) {
			snprintf(buf2, sizeof(buf2), "%s kB", jnum(json_object_get(hdr, "total_mem"), buf, sizeof(buf)));
			print_kv(out, "total memory", buf2);
		}
		print_kv(out, "cmdline", jstr(hdr, "cmdline"));
		if (json_is_object(st)) {
			uint64_t first = jnum_u64(json_object_get(st, "first_ns"));
			uint64_t last = jnum_u64(json_object_get(st, "last_ns"));

			/* seconds.microseconds, as perf report --header-only */
			snprintf(buf, sizeof(buf), "%" PRIu64 ".%06" PRIu64, first / 1000000000,
				 first % 1000000000 / 1000);
			print_kv(out, "first sample", buf);
			snprintf(buf, sizeof(buf), "%" PRIu64 ".%06" PRIu64, last / 1000000000,
				 last % 1000000000 / 1000);
			print_kv(out, "last sample", buf);
			if (last >= first) {
				snprintf(buf, sizeof(buf), "%.3f ms", (double)(last - first) / 1e6);
				print_kv(out, "sample duration", buf);
			}
		}
		print_features(out, json_object_get(hdr, "features"));
	}
	print_events(out, json_object_get(rep, "events"));
	print_counts(out, "records", json_object_get(rep, "records"));
	if (json_object_get(rep, "records_total"))
		fprintf(out, "  %-24s %12s\n", "TOTAL", jnum(json_object_get(rep, "records_total"), buf, sizeof(buf)));
	print_counts(out, "samples per event", json_object_get(rep, "samples_per_event"));
	fprintf(out, "%-18s %s\n", "lost", jnum(json_object_get(rep, "lost"), buf, sizeof(buf)));
	if (json_is_array(warn)) {
		size_t i;
		json_t *w;

		fprintf(out, "warnings (%zu):\n", json_array_size(warn));
		json_array_foreach(warn, i, w)
			fprintf(out, "  %s\n", json_string_value(w) ? json_string_value(w) : "?");
	}
	return ferror(out) ? -1 : 0;
}
