/*
 * engine-export: the profile engine's pprof and speedscope encoders on a
 * model built in memory (no database). The pprof answer is gunzipped and
 * decoded again with protobuf-c (the same message definitions pprof reads)
 * and the speedscope answer parsed as JSON; every sample, label, location,
 * function, mapping, frame and weight is compared with the samples below.
 */
#include "config.h"

#include <zlib.h>
#include <jansson.h>

#include "engine_common.h"
#include "engine/export.h"
#include "engine/pprof.pb-c.h"

#define APP_BUILD_ID "0123456789abcdef0123456789abcdef01234567"

/* The shared samples (engine_common.h), after mappings that name a
 * build-id for /bin/app and none for libc. */
static pe_model *scenario(mem_profile *p)
{
	mem_begin(p, 0);
	pe_builder_mmap(p->b, 10, 0x400000, 0x1000, 0, "/bin/app", APP_BUILD_ID, 1);
	pe_builder_mmap(p->b, 10, 0x7f0000, 0x1000, 0, "/lib/libc.so.6", NULL, 1);
	mem_two_events(p);
	return mem_end(p, 1);
}

/* ---- pprof ---- */

/* A gzipped profile.proto decoded (NULL when it is not one). */
static Pprof__Profile *unpack(const uint8_t *gz, size_t gzlen)
{
	uint8_t *raw = NULL;
	uLongf rawlen = 1 << 20;
	z_stream z;
	Pprof__Profile *prof = NULL;

	CHECK(gzlen > 18 && gz[0] == 0x1f && gz[1] == 0x8b, "not gzip");
	raw = malloc(rawlen);
	memset(&z, 0, sizeof(z));
	inflateInit2(&z, 15 + 16);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)gzlen;
	z.next_out = raw;
	z.avail_out = (uInt)rawlen;
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END, "gunzip");
	rawlen = z.total_out;
	inflateEnd(&z);
	prof = pprof__profile__unpack(NULL, rawlen, raw);
	CHECK(prof, "profile.proto does not decode");
	free(raw);
	return prof;
}

static Pprof__Profile *pprof_of(pe_model *m, const pe_filter *f0)
{
	pe_filter f = *f0;
	pe_selection *s = NULL;
	uint8_t *gz = NULL;
	size_t gzlen = 0;
	Pprof__Profile *prof = NULL;

	f.with_pid = f.with_tid = 1;
	if (pe_select(m, &f, NULL, &s) < 0 || pe_pprof(m, &f, s, &gz, &gzlen) < 0) {
		CHECK(0, "pe_pprof failed");
		goto out;
	}
	prof = unpack(gz, gzlen);
out:
	pe_selection_free(s);
	free(gz);
	return prof;
}

static const char *str(const Pprof__Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "(bad index)";
}

static const Pprof__Location *location(const Pprof__Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	return NULL;
}

static const Pprof__Function *function(const Pprof__Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	return NULL;
}

static const Pprof__Mapping *mapping(const Pprof__Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id == id)
			return p->mapping[i];
	return NULL;
}

/* A sample as text: "comm pid/tid leaf<-...<-root samples/period", its
 * mappings as "[dso build-id]" after each function. */
static void sample_text(const Pprof__Profile *p, const Pprof__Sample *s, char *out, size_t cap)
{
	size_t i, n = 0;

	for (i = 0; i < s->n_label; i++) {
		const Pprof__Label *l = s->label[i];
		if (l->str)
			n += (size_t)snprintf(out + n, cap - n, "%s=%s ", str(p, l->key), str(p, l->str));
		else
			n += (size_t)snprintf(out + n, cap - n, "%s=%lld ", str(p, l->key),
					      (long long)l->num);
	}
	for (i = 0; i < s->n_location_id; i++) {
		const Pprof__Location *loc = location(p, s->location_id[i]);
		const Pprof__Function *fn = loc && loc->n_line ?
					    function(p, loc->line[0]->function_id) : NULL;
		const Pprof__Mapping *mp = loc ? mapping(p, loc->mapping_id) : NULL;
		n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? "<-" : "",
				      fn ? str(p, fn->name) : "?");
		if (mp && mp->build_id)
			n += (size_t)snprintf(out + n, cap - n, "[%s]", str(p, mp->build_id));
	}
	snprintf(out + n, cap - n, " %lld/%lld", (long long)s->value[0], (long long)s->value[1]);
}

static int has_line(const char *all, const char *line)
{
	const char *at = strstr(all, line);

	return at && (at == all || at[-1] == '\n') && at[strlen(line)] == '\n';
}

static void test_pprof(pe_model *m)
{
	pe_filter f = filter_all();
	Pprof__Profile *p;
	char all[4096], one[512];
	size_t i, n = 0;

	f.kernel = 1;
	if (!(p = pprof_of(m, &f)))
		return;
	CHECK(p->n_string_table && !strcmp(p->string_table[0], ""), "string_table[0]");
	CHECK(p->n_sample_type == 2 && !strcmp(str(p, p->sample_type[0]->type), "samples") &&
	      !strcmp(str(p, p->sample_type[0]->unit), "count") &&
	      !strcmp(str(p, p->sample_type[1]->type), "cpu-clock") &&
	      !strcmp(str(p, p->sample_type[1]->unit), "nanoseconds"), "sample types");
	CHECK(p->period_type && !strcmp(str(p, p->period_type->type), "cpu-clock"), "period type");
	all[0] = 0;
	for (i = 0; i < p->n_sample; i++) {
		sample_text(p, p->sample[i], one, sizeof(one));
		n += (size_t)snprintf(all + n, sizeof(all) - n, "%s\n", one);
	}
	/* the dying task's sample is left out, as every folded answer leaves it */
	CHECK(p->n_sample == 4, "samples: %zu\n%s", p->n_sample, all);
	CHECK(has_line(all, "comm=make pid=10 tid=10 lex[" APP_BUILD_ID "]<-parse[" APP_BUILD_ID
		       "]<-main[" APP_BUILD_ID "] 2/200"), "%s", all);
	CHECK(has_line(all, "comm=make pid=10 tid=11 parse[" APP_BUILD_ID "]<-main[" APP_BUILD_ID
		       "] 1/50"), "%s", all);
	CHECK(has_line(all, "comm=cc1 x pid=20 tid=20 sys_write_[k]<-write<-emit[" APP_BUILD_ID
		       "]<-main[" APP_BUILD_ID "] 1/10"), "%s", all);
	/* one function per name: lex appears in two stacks, one function */
	CHECK(p->n_function == 6, "functions: %zu", p->n_function);
	CHECK(p->n_mapping == 3, "mappings (app, libc, kernel): %zu", p->n_mapping);
	for (i = 0; i < p->n_mapping; i++)
		CHECK(p->mapping[i]->has_functions, "mapping %zu without has_functions", i);
	pprof__profile__free_unpacked(p, NULL);

	/* a tracepoint keeps its whole name; other events count */
	f = filter_all();
	f.event = "sched:sched_switch";
	if (!(p = pprof_of(m, &f)))
		return;
	CHECK(p->n_sample == 2 && !strcmp(str(p, p->sample_type[1]->type), "sched:sched_switch") &&
	      !strcmp(str(p, p->sample_type[1]->unit), "count"), "tracepoint sample type");
	pprof__profile__free_unpacked(p, NULL);

	/* no such event: a valid, empty profile */
	f.event = "cycles";
	if (!(p = pprof_of(m, &f)))
		return;
	CHECK(p->n_sample == 0 && p->n_sample_type == 2, "empty profile");
	pprof__profile__free_unpacked(p, NULL);
	CHECK(!strcmp(pe_event_unit("task-clock"), "nanoseconds") &&
	      !strcmp(pe_event_unit("cycles:u"), "count") && !strcmp(pe_event_unit(NULL), "count"),
	      "units");
}

/* A second profile: cpu-clock in /bin/app, and a sched_switch sample that
 * blocked 500 us (off-CPU time, as the feed stores it). */
static pe_model *offcpu_scenario(mem_profile *p)
{
	pe_sample s = { .event = EV_SWITCH, .time = 3000, .pid = 30, .tid = 30, .period = 1,
			.offcpu = 500000 };

	mem_begin(p, 0);
	pe_builder_event(p->b, EV_CLOCK, "cpu-clock", 1, 0, 0, 4000, 1, 2);
	pe_builder_event(p->b, EV_SWITCH, "sched:sched_switch", 2, 0, 0, 1, 0, 1);
	mem_sample(p, EV_CLOCK, 1000, 30, 30, "srv", "main@/bin/app;parse@/bin/app", 70);
	mem_sample(p, EV_CLOCK, 2000, 30, 30, "srv", "main@/bin/app;poll@/bin/app", 30);
	s.stack = mem_stack(p, "main@/bin/app;poll@/bin/app;schedule@[kernel.kallsyms]!");
	s.comm = pe_builder_string(p->b, "srv");
	pe_builder_sample(p->b, &s, NULL);
	return mem_end(p, 2);
}

/* Each value type's sum over the samples. */
static void sums(const Pprof__Profile *p, int64_t out[3])
{
	size_t i, k;

	out[0] = out[1] = out[2] = 0;
	for (i = 0; i < p->n_sample; i++)
		for (k = 0; k < p->sample[i]->n_value && k < 3; k++)
			out[k] += p->sample[i]->value[k];
}

static size_t functions_named(const Pprof__Profile *p, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < p->n_function; i++)
		n += !strcmp(str(p, p->function[i]->name), name);
	return n;
}

/* Two models into one builder (the second with its off-CPU rows): their
 * samples and periods add up, the off-CPU type holds the off-CPU time
 * only, and functions of the same name and DSO are one. */
static void test_pprof_merge(pe_model *m1)
{
	mem_profile p2;
	pe_model *m2 = offcpu_scenario(&p2);
	pe_filter f = filter_all(), off;
	pe_selection *s1 = NULL, *s2 = NULL, *s3 = NULL;
	pe_pprof_b *b = pe_pprof_b_new();
	Pprof__Profile *one, *two, *all = NULL;
	uint8_t *gz = NULL;
	size_t gzlen = 0;
	int64_t v1[3], v2[3], v[3];

	f.with_pid = f.with_tid = 1;
	off = f;
	off.measure = PE_MEASURE_OFFCPU;
	CHECK(b && pe_offcpu_event(m2) && !pe_offcpu_event(m1), "the off-CPU event");
	if (!b || pe_select(m1, &f, NULL, &s1) < 0 || pe_select(m2, &f, NULL, &s2) < 0 ||
	    pe_select(m2, &off, NULL, &s3) < 0 || pe_pprof_b_add(b, m1, &f, s1, 0) < 0 ||
	    pe_pprof_b_add(b, m2, &f, s2, 0) < 0 || pe_pprof_b_add(b, m2, &off, s3, 1) < 0 ||
	    pe_pprof_b_finish(b, 1, &gz, &gzlen) < 0) {
		CHECK(0, "the builder failed");
		goto out;
	}
	one = pprof_of(m1, &f);
	two = pprof_of(m2, &f);
	if (!(all = unpack(gz, gzlen)) || !one || !two)
		goto out_free;
	sums(one, v1);
	sums(two, v2);
	sums(all, v);
	CHECK(all->n_sample_type == 3 && !strcmp(str(all, all->sample_type[2]->type), "offcpu") &&
	      !strcmp(str(all, all->sample_type[2]->unit), "nanoseconds") &&
	      !strcmp(str(all, all->sample_type[1]->type), "cpu-clock") &&
	      all->default_sample_type == all->sample_type[2]->type, "merged sample types");
	CHECK(v[0] == v1[0] + v2[0] && v[1] == v1[1] + v2[1],
	      "samples %lld = %lld + %lld, period %lld = %lld + %lld", (long long)v[0],
	      (long long)v1[0], (long long)v2[0], (long long)v[1], (long long)v1[1],
	      (long long)v2[1]);
	CHECK(v[2] == 500000, "off-CPU ns: %lld", (long long)v[2]);
	CHECK(all->n_sample == one->n_sample + two->n_sample + 1, "samples: %zu", all->n_sample);
	CHECK(functions_named(all, "main") == 1 && functions_named(all, "parse") == 1,
	      "one function per name and DSO: main %zu parse %zu", functions_named(all, "main"),
	      functions_named(all, "parse"));
	CHECK(two->n_sample_type == 2, "pe_pprof alone adds no off-CPU type");
out_free:
	if (one)
		pprof__profile__free_unpacked(one, NULL);
	if (two)
		pprof__profile__free_unpacked(two, NULL);
	if (all)
		pprof__profile__free_unpacked(all, NULL);
out:
	free(gz);
	pe_selection_free(s1);
	pe_selection_free(s2);
	pe_selection_free(s3);
	pe_pprof_b_free(b);
	mem_free(&p2);
}

/* ---- speedscope ---- */

static json_t *speedscope_of(pe_model *m, int by_comm, int by_samples)
{
	pe_filter f = filter_all();
	pe_speedscope_opts o = { "test", "perfhub test", by_samples, by_comm };
	pe_selection *s = NULL;
	json_error_t err;
	json_t *j = NULL;
	char *out = NULL;
	size_t len = 0;

	f.with_pid = f.with_tid = !by_comm;
	if (pe_select(m, &f, NULL, &s) < 0 || pe_speedscope(m, &f, s, &o, &out, &len) < 0)
		CHECK(0, "pe_speedscope failed");
	else if (!(j = json_loadb(out, len, 0, &err)))
		CHECK(0, "speedscope JSON: %s\n%s", err.text, out);
	pe_selection_free(s);
	free(out);
	return j;
}

/* A profile as "name unit end: stack weight; ..." (frames by name, root first). */
static void profile_text(json_t *file, json_t *prof, char *out, size_t cap)
{
	json_t *frames = json_object_get(json_object_get(file, "shared"), "frames");
	json_t *samples = json_object_get(prof, "samples");
	json_t *weights = json_object_get(prof, "weights");
	size_t i, k, n;

	n = (size_t)snprintf(out, cap, "%s %s %lld:", json_string_value(json_object_get(prof, "name")),
			     json_string_value(json_object_get(prof, "unit")),
			     (long long)json_integer_value(json_object_get(prof, "endValue")));
	for (i = 0; i < json_array_size(samples); i++) {
		json_t *st = json_array_get(samples, i);
		n += (size_t)snprintf(out + n, cap - n, " ");
		for (k = 0; k < json_array_size(st); k++) {
			json_t *fr = json_array_get(frames, (size_t)json_integer_value(json_array_get(st, k)));
			n += (size_t)snprintf(out + n, cap - n, "%s%s", k ? ";" : "",
					      json_string_value(json_object_get(fr, "name")));
		}
		n += (size_t)snprintf(out + n, cap - n, " %lld",
				      (long long)json_integer_value(json_array_get(weights, i)));
	}
}

static void test_speedscope(pe_model *m)
{
	json_t *j = speedscope_of(m, 0, 0), *profs, *frames, *fr;
	char t[1024];
	size_t i;

	if (!j)
		return;
	CHECK_STR(json_string_value(json_object_get(j, "$schema")),
		  "https://www.speedscope.app/file-format-schema.json");
	CHECK_STR(json_string_value(json_object_get(j, "exporter")), "perfhub test");
	profs = json_object_get(j, "profiles");
	frames = json_object_get(json_object_get(j, "shared"), "frames");
	CHECK(json_array_size(profs) == 3, "one profile per thread: %zu", json_array_size(profs));
	/* heaviest first; stacks outermost first; weights are the period */
	profile_text(j, json_array_get(profs, 0), t, sizeof(t));
	CHECK_STR(t, "make 10/10 nanoseconds 200: main;parse;lex 200");
	profile_text(j, json_array_get(profs, 1), t, sizeof(t));
	CHECK_STR(t, "make 10/11 nanoseconds 50: main;parse 50");
	profile_text(j, json_array_get(profs, 2), t, sizeof(t));
	CHECK_STR(t, "cc1 x 20/20 nanoseconds 20: main;emit;write;sys_write 10 main;parse;lex 10");
	json_array_foreach(frames, i, fr)
		if (!strcmp(json_string_value(json_object_get(fr, "name")), "write"))
			CHECK_STR(json_string_value(json_object_get(fr, "file")), "/lib/libc.so.6");
	CHECK(json_array_size(frames) == 6, "frames: %zu", json_array_size(frames));
	json_decref(j);

	/* per comm, weights as samples (unit none) */
	if (!(j = speedscope_of(m, 1, 1)))
		return;
	profs = json_object_get(j, "profiles");
	CHECK(json_array_size(profs) == 2, "one profile per comm: %zu", json_array_size(profs));
	profile_text(j, json_array_get(profs, 0), t, sizeof(t));
	CHECK_STR(t, "make none 3: main;parse;lex 2 main;parse 1");
	profile_text(j, json_array_get(profs, 1), t, sizeof(t));
	CHECK_STR(t, "cc1 x none 2: main;emit;write;sys_write 1 main;parse;lex 1");
	json_decref(j);
}

int main(void)
{
	mem_profile p;
	pe_model *m = scenario(&p);

	test_pprof(m);
	test_pprof_merge(m);
	test_speedscope(m);
	mem_free(&p);
	return check_done("engine-export");
}
