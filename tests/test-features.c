/*
 * test-features.c - feature sections built in memory, in both byte orders,
 * decoded by feat.c and checked field by field (JSON and pd_header), plus
 * malformed, truncated and randomly damaged sections that must decode to
 * {"error": ...} with a warning naming the offset, never crash (run it
 * under ASan+UBSan).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "feat.h"
#include "xorshift.h"

static int failures;

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                               \
			failures++;                                                   \
		}                                                                     \
	} while (0)

/* ---- a writer of sections in a chosen byte order ------------------------ */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
	int swap;	/* write in the byte order opposite to the host's */
};

static void w_bytes(struct wbuf *w, const void *src, size_t n)
{
	if (w->len + n > w->cap) {
		w->cap = 2 * (w->len + n) + 64;
		w->p = realloc(w->p, w->cap);
		if (!w->p)
			abort();
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

static void w_u16(struct wbuf *w, uint16_t v)
{
	if (w->swap)
		v = __builtin_bswap16(v);
	w_bytes(w, &v, 2);
}

static void w_u32(struct wbuf *w, uint32_t v)
{
	if (w->swap)
		v = __builtin_bswap32(v);
	w_bytes(w, &v, 4);
}

static void w_u64(struct wbuf *w, uint64_t v)
{
	if (w->swap)
		v = __builtin_bswap64(v);
	w_bytes(w, &v, 8);
}

static void w_zero(struct wbuf *w, size_t n)
{
	static const uint8_t zeros[256];
	while (n) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);
		w_bytes(w, zeros, k);
		n -= k;
	}
}

/* perf_header_string as perf writes it: length padded to 64 with NULs */
static void w_str(struct wbuf *w, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t padded = (n + 63) / 64 * 64;
	w_u32(w, (uint32_t)padded);
	w_bytes(w, s, n - 1);
	w_zero(w, padded - (n - 1));
}

static void w_reset(struct wbuf *w, int swap)
{
	w->len = 0;
	w->swap = swap;
}

/* ---- helpers ------------------------------------------------------------ */

static json_t *decoded(feat_set *fs, int id)
{
	char *text = feat_json(fs, id);
	if (!text)
		return NULL;
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &e);
	if (!j)
		fprintf(stderr, "feature %d: bad JSON %s\n", id, text);
	free(text);
	return j;
}

static int64_t jint(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "(none)";
}

static int has_error(feat_set *fs, int id)
{
	json_t *j = decoded(fs, id);
	int bad = j && json_is_object(j) && json_object_get(j, "error");
	json_decref(j);
	return bad;
}

/* ---- the tests, each run in both byte orders ---------------------------- */

static void test_strings(struct wbuf *w, int swap)
{
	static const struct {
		int id;
		const char *value;
	} cases[] = {
		{ PD_FEAT_HOSTNAME, "build-17.example" },
		{ PD_FEAT_OSRELEASE, "6.1.0-18-amd64" },
		{ PD_FEAT_VERSION, "6.1.76" },
		{ PD_FEAT_ARCH, "x86_64" },
		{ PD_FEAT_CPUDESC, "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz" },
		{ PD_FEAT_CPUID, "GenuineIntel,6,85,4" },
	};
	feat_set *fs = feat_new();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		w_reset(w, swap);
		w_str(w, cases[i].value);
		CHECK(feat_add(fs, cases[i].id, w->p, w->len, swap, 1000 + i) == 0);
		json_t *j = decoded(fs, cases[i].id);
		CHECK(j && json_is_string(j) && !strcmp(json_string_value(j), cases[i].value));
		json_decref(j);
	}
	const pd_header *h = feat_header(fs);
	CHECK(h->hostname && !strcmp(h->hostname, "build-17.example"));
	CHECK(h->os_release && !strcmp(h->os_release, "6.1.0-18-amd64"));
	CHECK(h->perf_version && !strcmp(h->perf_version, "6.1.76"));
	CHECK(h->arch && !strcmp(h->arch, "x86_64"));
	CHECK(h->cpu_desc && !strcmp(h->cpu_desc, "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz"));
	CHECK(h->cpuid && !strcmp(h->cpuid, "GenuineIntel,6,85,4"));
	CHECK(feat_nr_warnings(fs) == 0);

	int ids[PD_FEAT_MAX];
	CHECK(feat_list(fs, ids, PD_FEAT_MAX) == 6);
	CHECK(ids[0] == PD_FEAT_HOSTNAME && ids[5] == PD_FEAT_CPUID);
	size_t len;
	CHECK(feat_raw(fs, PD_FEAT_ARCH, &len) != NULL && len == 4 + 64);
	CHECK(!feat_has(fs, PD_FEAT_CMDLINE) && feat_json(fs, PD_FEAT_CMDLINE) == NULL);

	/* a string whose length runs past the section */
	w_reset(w, swap);
	w_u32(w, 200);
	w_bytes(w, "abc", 4);
	feat_add(fs, PD_FEAT_HOSTNAME, w->p, w->len, swap, 0x4000);
	CHECK(has_error(fs, PD_FEAT_HOSTNAME));
	CHECK(feat_header(fs)->hostname == NULL);
	CHECK(feat_nr_warnings(fs) == 1);
	/* the length field sits at 0x4000; the bytes it claims start at 0x4004 */
	CHECK(feat_warning(fs, 0) && strstr(feat_warning(fs, 0), "0x4004") &&
	      strstr(feat_warning(fs, 0), "hostname"));

	/* no NUL inside the length: the string is all len bytes, not more */
	w_reset(w, swap);
	w_u32(w, 3);
	w_bytes(w, "xyz", 3);
	feat_add(fs, PD_FEAT_ARCH, w->p, w->len, swap, 0);
	CHECK(feat_header(fs)->arch && !strcmp(feat_header(fs)->arch, "xyz"));

	/* bytes that are not UTF-8 still give valid JSON */
	w_reset(w, swap);
	w_u32(w, 8);
	w_bytes(w, "a\xff\xfe" "b\0\0\0\0", 8);
	feat_add(fs, PD_FEAT_CPUDESC, w->p, w->len, swap, 0);
	json_t *j = decoded(fs, PD_FEAT_CPUDESC);
	CHECK(j && json_is_string(j) && !strcmp(json_string_value(j), "a??b"));
	json_decref(j);
	feat_free(fs);
}

static void test_numbers(struct wbuf *w, int swap)
{
	feat_set *fs = feat_new();
	w_reset(w, swap);
	w_u32(w, 8);	/* avail */
	w_u32(w, 6);	/* online */
	feat_add(fs, PD_FEAT_NRCPUS, w->p, w->len, swap, 0);
	w_reset(w, swap);
	w_u64(w, 24683620);
	feat_add(fs, PD_FEAT_TOTAL_MEM, w->p, w->len, swap, 0);
	w_reset(w, swap);
	w_u64(w, 502816273000ULL);
	w_u64(w, 502821993000ULL);
	feat_add(fs, PD_FEAT_SAMPLE_TIME, w->p, w->len, swap, 0);
	w_reset(w, swap);
	w_u64(w, 1);
	feat_add(fs, PD_FEAT_CLOCKID, w->p, w->len, swap, 0);
	w_reset(w, swap);
	w_u64(w, 1);
	feat_add(fs, PD_FEAT_DIR_FORMAT, w->p, w->len, swap, 0);
	w_reset(w, swap);
	w_u32(w, 2);
	w_u32(w, 1);
	w_u32(w, 3);
	w_u32(w, 7);
	w_u32(w, 65536);
	feat_add(fs, PD_FEAT_COMPRESSED, w->p, w->len, swap, 0);
	w_reset(w, swap);
	w_u32(w, 1);
	w_u32(w, 1);
	w_u64(w, 1795426353327974000ULL);
	w_u64(w, 549455886057ULL);
	feat_add(fs, PD_FEAT_CLOCK_DATA, w->p, w->len, swap, 0);
	w_reset(w, swap);
	feat_add(fs, PD_FEAT_BRANCH_STACK, w->p, 0, swap, 0);
	feat_add(fs, PD_FEAT_STAT, w->p, 0, swap, 0);
	w_reset(w, swap);
	w_zero(w, 333);
	feat_add(fs, PD_FEAT_TRACING_DATA, w->p, w->len, swap, 0);

	const pd_header *h = feat_header(fs);
	CHECK(h->has_nr_cpus && h->nr_cpus_available == 8 && h->nr_cpus_online == 6);
	CHECK(h->has_total_mem && h->total_mem == 24683620);
	CHECK(h->has_sample_time && h->first_sample_ns == 502816273000ULL &&
	      h->last_sample_ns == 502821993000ULL);
	CHECK(h->has_clockid && h->clockid_res_ns == 1);
	CHECK(h->compressed && h->comp_type == 1 && h->comp_level == 3);

	json_t *j = decoded(fs, PD_FEAT_NRCPUS);
	CHECK(jint(j, "nrcpus_online") == 6 && jint(j, "nrcpus_avail") == 8);
	json_decref(j);
	j = decoded(fs, PD_FEAT_TOTAL_MEM);
	CHECK(json_integer_value(j) == 24683620);
	json_decref(j);
	j = decoded(fs, PD_FEAT_CLOCKID);
	CHECK(jint(j, "res_ns") == 1 && jint(j, "frequency_mhz") == 1000);
	json_decref(j);
	j = decoded(fs, PD_FEAT_DIR_FORMAT);
	CHECK(jint(j, "version") == 1);
	json_decref(j);
	j = decoded(fs, PD_FEAT_COMPRESSED);
	CHECK(jint(j, "version") == 2 && !strcmp(jstr(j, "type_name"), "zstd") &&
	      jint(j, "level") == 3 && jint(j, "ratio") == 7 && jint(j, "mmap_len") == 65536);
	json_decref(j);
	j = decoded(fs, PD_FEAT_CLOCK_DATA);
	CHECK(jint(j, "clockid") == 1 && jint(j, "wall_clock_ns") == 1795426353327974000LL &&
	      jint(j, "clockid_ns") == 549455886057LL);
	json_decref(j);
	j = decoded(fs, PD_FEAT_BRANCH_STACK);
	CHECK(json_is_true(j));
	json_decref(j);
	j = decoded(fs, PD_FEAT_TRACING_DATA);
	CHECK(jint(j, "size") == 333);
	json_decref(j);
	CHECK(feat_nr_warnings(fs) == 0);

	/* short fixed-size sections */
	w_reset(w, swap);
	w_u32(w, 8);
	feat_add(fs, PD_FEAT_NRCPUS, w->p, w->len, swap, 0x100);
	CHECK(has_error(fs, PD_FEAT_NRCPUS) && !feat_header(fs)->has_nr_cpus);
	feat_add(fs, PD_FEAT_SAMPLE_TIME, w->p, w->len, swap, 0x200);
	CHECK(has_error(fs, PD_FEAT_SAMPLE_TIME) && !feat_header(fs)->has_sample_time);
	feat_add(fs, PD_FEAT_COMPRESSED, w->p, w->len, swap, 0x300);
	CHECK(has_error(fs, PD_FEAT_COMPRESSED) && !feat_header(fs)->compressed);
	CHECK(feat_nr_warnings(fs) == 3);
	CHECK(strstr(feat_warning(fs, 0), "0x104") != NULL);
	feat_free(fs);
}

static void test_cmdline(struct wbuf *w, int swap)
{
	feat_set *fs = feat_new();
	const char *argv[] = { "/usr/bin/perf", "record", "-g", "-o", "x.data", "--", "sleep",
			       "1" };
	w_reset(w, swap);
	w_u32(w, 8);
	for (int i = 0; i < 8; i++)
		w_str(w, argv[i]);
	feat_add(fs, PD_FEAT_CMDLINE, w->p, w->len, swap, 0);
	const pd_header *h = feat_header(fs);
	CHECK(h->cmdline && !strcmp(h->cmdline, "/usr/bin/perf record -g -o x.data -- sleep 1"));
	json_t *j = decoded(fs, PD_FEAT_CMDLINE);
	CHECK(json_array_size(j) == 8 && !strcmp(json_string_value(json_array_get(j, 6)), "sleep"));
	json_decref(j);

	/* a count no section could hold */
	w_reset(w, swap);
	w_u32(w, 0x40000000);
	w_str(w, "perf");
	feat_add(fs, PD_FEAT_CMDLINE, w->p, w->len, swap, 0x2000);
	CHECK(has_error(fs, PD_FEAT_CMDLINE) && feat_header(fs)->cmdline == NULL);
	CHECK(feat_nr_warnings(fs) == 1 && strstr(feat_warning(fs, 0), "0x2000"));
	feat_free(fs);
}

/* an attr of `size` bytes with type, config, sample_type and flags set */
static void w_attr(struct wbuf *w, uint32_t size, uint32_t type, uint64_t config)
{
	w_u32(w, type);
	w_u32(w, size);
	w_u64(w, config);
	w_u64(w, 4000);		/* sample_freq */
	w_u64(w, 0x107);	/* sample_type IP|TID|TIME|PERIOD */
	w_u64(w, 0x14);		/* read_format ID|LOST */
	/* the flags word is a bitfield: a machine of the other byte order
	 * lays its bits out from the other end of each byte, and perf only
	 * reverses the bits of each byte; freq is bit 10 */
	uint64_t flags = (1ULL << 10) | 1;
	if (w->swap) {
		uint8_t b[8];
		memcpy(b, &flags, 8);
		for (int i = 0; i < 8; i++) {
			uint8_t r = 0;
			for (int k = 0; k < 8; k++)
				r |= (uint8_t)(((b[i] >> k) & 1) << (7 - k));
			b[i] = r;
		}
		memcpy(&flags, b, 8);
		w_bytes(w, &flags, 8);	/* not byte-swapped: only the bits move */
	} else {
		w_u64(w, flags);
	}
	w_zero(w, size - 48);
}

static void test_event_desc(struct wbuf *w, int swap)
{
	feat_set *fs = feat_new();
	w_reset(w, swap);
	w_u32(w, 2);
	w_u32(w, 136);
	w_attr(w, 136, 1, 0);
	w_u32(w, 2);
	w_str(w, "cpu-clock:ppp");
	w_u64(w, 25);
	w_u64(w, 26);
	w_attr(w, 136, 2, 316);
	w_u32(w, 2);
	w_str(w, "sched:sched_switch");
	w_u64(w, 7);
	w_u64(w, 0x8000000000000001ULL);	/* above INT64_MAX */
	feat_add(fs, PD_FEAT_EVENT_DESC, w->p, w->len, swap, 0);
	CHECK(feat_nr_warnings(fs) == 0);
	CHECK(feat_nr_event_desc(fs) == 2);
	uint32_t type = 99;
	uint64_t config = 99;
	const char *name = feat_event_desc(fs, 1, &type, &config);
	CHECK(name && !strcmp(name, "sched:sched_switch") && type == 2 && config == 316);
	CHECK(feat_event_desc(fs, 2, NULL, NULL) == NULL);
	CHECK(feat_event_name_by_id(fs, 26) && !strcmp(feat_event_name_by_id(fs, 26), "cpu-clock:ppp"));
	CHECK(feat_event_name_by_id(fs, 7) && !strcmp(feat_event_name_by_id(fs, 7), "sched:sched_switch"));
	CHECK(feat_event_name_by_id(fs, 8) == NULL);
	json_t *j = decoded(fs, PD_FEAT_EVENT_DESC);
	json_t *e0 = json_array_get(j, 0);
	CHECK(json_array_size(j) == 2 && !strcmp(jstr(e0, "name"), "cpu-clock:ppp"));
	CHECK(jint(e0, "type") == 1 && jint(e0, "sample_freq") == 4000 &&
	      jint(e0, "sample_type") == 0x107 && jint(e0, "read_format") == 0x14 &&
	      jint(e0, "size") == 136);
	CHECK(json_array_size(json_object_get(e0, "ids")) == 2);
	const char *big =
		json_string_value(json_array_get(json_object_get(json_array_get(j, 1), "ids"), 1));
	CHECK(big && !strcmp(big, "9223372036854775809"));
	json_decref(j);
	CHECK(feat_event_name_by_id(fs, 0x8000000000000001ULL) &&
	      !strcmp(feat_event_name_by_id(fs, 0x8000000000000001ULL), "sched:sched_switch"));

	/* an old 64-byte attr */
	w_reset(w, swap);
	w_u32(w, 1);
	w_u32(w, 64);
	w_attr(w, 64, 0, 1);
	w_u32(w, 0);
	w_str(w, "instructions");
	feat_add(fs, PD_FEAT_EVENT_DESC, w->p, w->len, swap, 0);
	CHECK(feat_nr_event_desc(fs) == 1 && feat_event_name_by_id(fs, 26) == NULL);
	name = feat_event_desc(fs, 0, &type, &config);
	CHECK(name && !strcmp(name, "instructions") && type == 0 && config == 1);

	/* malformed: attr_size too small, nr_ids too large, event count too large */
	w_reset(w, swap);
	w_u32(w, 1);
	w_u32(w, 8);
	w_zero(w, 64);
	feat_add(fs, PD_FEAT_EVENT_DESC, w->p, w->len, swap, 0x500);
	CHECK(has_error(fs, PD_FEAT_EVENT_DESC) && feat_nr_event_desc(fs) == 0);
	w_reset(w, swap);
	w_u32(w, 1);
	w_u32(w, 64);
	w_attr(w, 64, 0, 1);
	w_u32(w, 1000000);
	w_str(w, "x");
	w_u64(w, 1);
	feat_add(fs, PD_FEAT_EVENT_DESC, w->p, w->len, swap, 0x600);
	CHECK(has_error(fs, PD_FEAT_EVENT_DESC) && feat_nr_event_desc(fs) == 0);
	w_reset(w, swap);
	w_u32(w, 0xffffffff);
	w_u32(w, 64);
	w_attr(w, 64, 0, 1);
	feat_add(fs, PD_FEAT_EVENT_DESC, w->p, w->len, swap, 0x700);
	CHECK(has_error(fs, PD_FEAT_EVENT_DESC));
	CHECK(feat_nr_warnings(fs) == 3);
	CHECK(strstr(feat_warning(fs, 0), "0x504") && strstr(feat_warning(fs, 1), "0x") &&
	      strstr(feat_warning(fs, 2), "0x700"));
	feat_free(fs);
}

static void w_nrcpus(feat_set *fs, struct wbuf *w, int swap, uint32_t avail)
{
	w_reset(w, swap);
	w_u32(w, avail);
	w_u32(w, avail);
	feat_add(fs, PD_FEAT_NRCPUS, w->p, w->len, swap, 0);
}

/* revision 1, 2 or 3 of CPU_TOPOLOGY for 4 cpus: 2 cores x 2 threads, 2 dies */
static void w_topology(struct wbuf *w, int swap, int revision)
{
	w_reset(w, swap);
	w_u32(w, 1);
	w_str(w, "0-3");
	w_u32(w, 2);
	w_str(w, "0-1");
	w_str(w, "2-3");
	if (revision < 2)
		return;
	for (uint32_t cpu = 0; cpu < 4; cpu++) {
		w_u32(w, cpu / 2);		/* core_id */
		w_u32(w, cpu == 3 ? 0xffffffff : 0); /* socket_id; -1 for an offline cpu */
	}
	if (revision < 3)
		return;
	w_u32(w, 2);
	w_str(w, "0-1");
	w_str(w, "2-3");
	for (uint32_t cpu = 0; cpu < 4; cpu++)
		w_u32(w, cpu / 2);		/* die_id */
}

static void test_cpu_topology(struct wbuf *w, int swap)
{
	for (int rev = 1; rev <= 3; rev++) {
		feat_set *fs = feat_new();
		w_nrcpus(fs, w, swap, 4);
		w_topology(w, swap, rev);
		feat_add(fs, PD_FEAT_CPU_TOPOLOGY, w->p, w->len, swap, 0);
		CHECK(feat_nr_warnings(fs) == 0);
		json_t *j = decoded(fs, PD_FEAT_CPU_TOPOLOGY);
		json_t *sockets = json_object_get(j, "sibling_sockets");
		json_t *threads = json_object_get(j, "sibling_threads");
		json_t *dies = json_object_get(j, "sibling_dies");
		json_t *cpus = json_object_get(j, "cpus");
		CHECK(json_array_size(sockets) == 1 &&
		      !strcmp(json_string_value(json_array_get(sockets, 0)), "0-3"));
		CHECK(json_array_size(threads) == 2 &&
		      !strcmp(json_string_value(json_array_get(threads, 1)), "2-3"));
		CHECK((rev >= 2) == (cpus != NULL));
		CHECK((rev >= 3) == (dies != NULL));
		if (cpus) {
			json_t *c3 = json_array_get(cpus, 3);
			CHECK(json_array_size(cpus) == 4 && jint(c3, "cpu") == 3 &&
			      jint(c3, "core_id") == 1 && jint(c3, "socket_id") == -1);
			CHECK((rev >= 3) == (json_object_get(c3, "die_id") != NULL));
			if (rev >= 3)
				CHECK(jint(c3, "die_id") == 1 && json_array_size(dies) == 2);
		}
		json_decref(j);

		/* the per-cpu part sized for more cpus than NRCPUS says: malformed */
		if (rev >= 2) {
			w_nrcpus(fs, w, swap, 64);
			CHECK(has_error(fs, PD_FEAT_CPU_TOPOLOGY));
			CHECK(feat_nr_warnings(fs) == 1);
		}
		feat_free(fs);
	}
	/* without NRCPUS the tail is kept as a size, not guessed at */
	feat_set *fs = feat_new();
	w_topology(w, swap, 3);
	feat_add(fs, PD_FEAT_CPU_TOPOLOGY, w->p, w->len, swap, 0);
	json_t *j = decoded(fs, PD_FEAT_CPU_TOPOLOGY);
	CHECK(jint(j, "undecoded_bytes") == 4 * 8 + 4 + 2 * 68 + 4 * 4);
	json_decref(j);
	/* NRCPUS arriving later (pipe mode order is not guaranteed) re-decodes it */
	w_nrcpus(fs, w, swap, 4);
	j = decoded(fs, PD_FEAT_CPU_TOPOLOGY);
	CHECK(json_array_size(json_object_get(j, "cpus")) == 4);
	json_decref(j);
	feat_free(fs);
}

static void test_lists(struct wbuf *w, int swap)
{
	feat_set *fs = feat_new();

	w_reset(w, swap);
	w_u32(w, 2);
	w_u32(w, 0);
	w_u64(w, 4286240);
	w_u64(w, 3733764);
	w_str(w, "0-1");
	w_u32(w, 1);
	w_u64(w, 100);
	w_u64(w, 50);
	w_str(w, "2-3");
	feat_add(fs, PD_FEAT_NUMA_TOPOLOGY, w->p, w->len, swap, 0);
	json_t *j = decoded(fs, PD_FEAT_NUMA_TOPOLOGY);
	json_t *n0 = json_array_get(j, 0), *n1 = json_array_get(j, 1);
	CHECK(json_array_size(j) == 2 && jint(n0, "node") == 0 && jint(n0, "mem_total") == 4286240 &&
	      jint(n0, "mem_free") == 3733764 && !strcmp(jstr(n0, "cpus"), "0-1"));
	CHECK(jint(n1, "node") == 1 && !strcmp(jstr(n1, "cpus"), "2-3"));
	json_decref(j);

	w_reset(w, swap);
	w_u32(w, 2);
	w_u32(w, 1);
	w_str(w, "software");
	w_u32(w, 4);
	w_str(w, "cpu");
	feat_add(fs, PD_FEAT_PMU_MAPPINGS, w->p, w->len, swap, 0);
	j = decoded(fs, PD_FEAT_PMU_MAPPINGS);
	CHECK(json_array_size(j) == 2 && !strcmp(jstr(json_array_get(j, 1), "name"), "cpu") &&
	      jint(json_array_get(j, 1), "type") == 4);
	json_decref(j);

	w_reset(w, swap);
	w_u32(w, 1);
	w_str(w, "{cpu-clock,task-clock}");
	w_u32(w, 0);
	w_u32(w, 2);
	feat_add(fs, PD_FEAT_GROUP_DESC, w->p, w->len, swap, 0);
	j = decoded(fs, PD_FEAT_GROUP_DESC);
	CHECK(json_array_size(j) == 1 &&
	      !strcmp(jstr(json_array_get(j, 0), "name"), "{cpu-clock,task-clock}") &&
	      jint(json_array_get(j, 0), "leader_idx") == 0 &&
	      jint(json_array_get(j, 0), "nr_members") == 2);
	json_decref(j);

	w_reset(w, swap);
	w_u64(w, 2);
	w_u64(w, 0x1000);
	w_u64(w, 0x200);
	w_u64(w, 0x3000);
	w_u64(w, 0x400);
	feat_add(fs, PD_FEAT_AUXTRACE, w->p, w->len, swap, 0);
	j = decoded(fs, PD_FEAT_AUXTRACE);
	CHECK(jint(j, "nr") == 2 &&
	      jint(json_array_get(json_object_get(j, "entries"), 1), "file_offset") == 0x3000 &&
	      jint(json_array_get(json_object_get(j, "entries"), 1), "size") == 0x400);
	json_decref(j);

	w_reset(w, swap);
	w_u32(w, 1);
	w_u32(w, 2);
	w_u32(w, 1);
	w_u32(w, 64);
	w_u32(w, 64);
	w_u32(w, 8);
	w_str(w, "Data");
	w_str(w, "32K");
	w_str(w, "0");
	w_u32(w, 3);
	w_u32(w, 64);
	w_u32(w, 16384);
	w_u32(w, 16);
	w_str(w, "Unified");
	w_str(w, "16384K");
	w_str(w, "0-1");
	feat_add(fs, PD_FEAT_CACHE, w->p, w->len, swap, 0);
	j = decoded(fs, PD_FEAT_CACHE);
	json_t *c1 = json_array_get(j, 1);
	CHECK(json_array_size(j) == 2 && jint(c1, "level") == 3 && jint(c1, "line_size") == 64 &&
	      jint(c1, "sets") == 16384 && jint(c1, "ways") == 16 &&
	      !strcmp(jstr(c1, "type"), "Unified") && !strcmp(jstr(c1, "size"), "16384K") &&
	      !strcmp(jstr(c1, "map"), "0-1"));
	json_decref(j);

	/* MEM_TOPOLOGY: one node whose 200-bit bitmap has 0-23 and 32-199 set */
	w_reset(w, swap);
	w_u64(w, 1);
	w_u64(w, 0x8000000);
	w_u64(w, 1);
	w_u64(w, 0);
	w_u64(w, 200);
	w_u64(w, 200);
	w_u64(w, 0xffffffff00ffffffULL);
	w_u64(w, ~0ULL);
	w_u64(w, ~0ULL);
	w_u64(w, 0xff);
	feat_add(fs, PD_FEAT_SAMPLE_TOPOLOGY, w->p, w->len, swap, 0);
	j = decoded(fs, PD_FEAT_SAMPLE_TOPOLOGY);
	json_t *node = json_array_get(json_object_get(j, "nodes"), 0);
	CHECK(jint(j, "block_size") == 0x8000000 && jint(node, "size") == 200 &&
	      jint(node, "size_bytes") == 192LL * 0x8000000 &&
	      !strcmp(jstr(node, "blocks"), "0-23,32-199"));
	json_decref(j);

	w_reset(w, swap);
	w_u32(w, 1);
	w_u32(w, 128);	/* info_len */
	w_u32(w, 16);	/* data_len */
	w_u64(w, 0);
	w_u32(w, 2);	/* type */
	w_u32(w, 42);	/* id */
	w_bytes(w, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	w_zero(w, 128 - 16 + 16);
	feat_add(fs, PD_FEAT_BPF_PROG_INFO, w->p, w->len, swap, 0);
	j = decoded(fs, PD_FEAT_BPF_PROG_INFO);
	CHECK(json_array_size(j) == 1 && jint(json_array_get(j, 0), "id") == 42 &&
	      jint(json_array_get(j, 0), "type") == 2 &&
	      !strcmp(jstr(json_array_get(j, 0), "tag"), "0102030405060708"));
	json_decref(j);

	/* a 192-byte info with two jited sub-programs: the arrays are offsets
	 * into data (ksyms at 0, func lens at 16, tags at 24) */
	w_reset(w, swap);
	w_u32(w, 1);
	w_u32(w, 192);
	w_u32(w, 40);
	w_u64(w, 0);
	w_u32(w, 26);
	w_u32(w, 8);
	w_bytes(w, "\xca\x43\xe5\x74\x20\x11\x3f\x48", 8);
	w_zero(w, 64 - 16);
	w_bytes(w, "fentry_blk_acco\0", 16);
	w_zero(w, 104 - 80);
	w_u32(w, 2);	/* nr_jited_ksyms */
	w_u32(w, 2);	/* nr_jited_func_lens */
	w_u64(w, 0);	/* jited_ksyms */
	w_u64(w, 16);	/* jited_func_lens */
	w_zero(w, 180 - 128);
	w_u32(w, 2);	/* nr_prog_tags */
	w_u64(w, 24);	/* prog_tags */
	w_u64(w, 0xffffffffc021ca70ULL);
	w_u64(w, 0xffffffffc02441b8ULL);
	w_u32(w, 3797);
	w_u32(w, 249);
	w_bytes(w, "\x1b\x71\xec\x96\x33\xe0\xe8\xda\xe4\x78\x65\x57\xe5\x00\xf4\x24", 16);
	feat_add(fs, PD_FEAT_BPF_PROG_INFO, w->p, w->len, swap, 0);
	j = decoded(fs, PD_FEAT_BPF_PROG_INFO);
	json_t *subs = json_object_get(json_array_get(j, 0), "sub_progs");
	CHECK(!strcmp(jstr(json_array_get(j, 0), "name"), "fentry_blk_acco") &&
	      json_array_size(subs) == 2);
	CHECK(!strcmp(jstr(json_array_get(subs, 1), "addr"), "0xffffffffc02441b8") &&
	      jint(json_array_get(subs, 1), "size") == 249 &&
	      !strcmp(jstr(json_array_get(subs, 1), "tag"), "e4786557e500f424"));
	json_decref(j);

	w_reset(w, swap);
	w_u32(w, 2);
	w_u32(w, 7);
	w_u32(w, 3);
	w_bytes(w, "btf", 3);
	w_u32(w, 8);
	w_u32(w, 0);
	feat_add(fs, PD_FEAT_BPF_BTF, w->p, w->len, swap, 0);
	j = decoded(fs, PD_FEAT_BPF_BTF);
	CHECK(json_array_size(j) == 2 && jint(json_array_get(j, 0), "data_size") == 3 &&
	      jint(json_array_get(j, 1), "id") == 8);
	json_decref(j);

	w_reset(w, swap);
	w_u32(w, 2);
	w_str(w, "branches");
	w_str(w, "32");
	w_str(w, "pmu_name");
	w_str(w, "icelake");
	feat_add(fs, PD_FEAT_CPU_PMU_CAPS, w->p, w->len, swap, 0);
	j = decoded(fs, PD_FEAT_CPU_PMU_CAPS);
	CHECK(!strcmp(jstr(j, "branches"), "32") && !strcmp(jstr(j, "pmu_name"), "icelake"));
	json_decref(j);

	w_reset(w, swap);
	w_u32(w, 2);
	w_str(w, "cpu_core");
	w_str(w, "0-15");
	w_str(w, "cpu_atom");
	w_str(w, "16-23");
	feat_add(fs, PD_FEAT_HYBRID_TOPOLOGY, w->p, w->len, swap, 0);
	j = decoded(fs, PD_FEAT_HYBRID_TOPOLOGY);
	CHECK(json_array_size(j) == 2 && !strcmp(jstr(json_array_get(j, 1), "pmu_name"), "cpu_atom") &&
	      !strcmp(jstr(json_array_get(j, 1), "cpus"), "16-23"));
	json_decref(j);

	w_reset(w, swap);
	w_u32(w, 2);
	w_u32(w, 1);
	w_str(w, "max_precise");
	w_str(w, "3");
	w_str(w, "cpu_core");
	w_u32(w, 0);
	w_str(w, "ibs_op");
	feat_add(fs, PD_FEAT_PMU_CAPS, w->p, w->len, swap, 0);
	j = decoded(fs, PD_FEAT_PMU_CAPS);
	json_t *p0 = json_array_get(j, 0);
	CHECK(json_array_size(j) == 2 && !strcmp(jstr(p0, "pmu_name"), "cpu_core") &&
	      !strcmp(jstr(json_object_get(p0, "caps"), "max_precise"), "3") &&
	      !strcmp(jstr(json_array_get(j, 1), "pmu_name"), "ibs_op"));
	json_decref(j);

	CHECK(feat_nr_warnings(fs) == 0);
	for (size_t i = 0; i < feat_nr_warnings(fs); i++)
		fprintf(stderr, "unexpected warning: %s\n", feat_warning(fs, i));
	feat_free(fs);
}

/* BUILD_ID entries: one with a 20-byte id, one with a sized 16-byte id */
static void w_build_id(struct wbuf *w, uint16_t misc, int32_t pid, uint8_t fill, uint8_t size,
		       const char *name)
{
	size_t nlen = (strlen(name) + 1 + 7) / 8 * 8;
	w_u32(w, 67);	/* PERF_RECORD_HEADER_BUILD_ID */
	w_u16(w, misc);
	w_u16(w, (uint16_t)(36 + nlen));
	w_u32(w, (uint32_t)pid);
	uint8_t id[24] = { 0 };
	memset(id, fill, 20);
	id[20] = size;
	w_bytes(w, id, 24);
	w_bytes(w, name, strlen(name));
	w_zero(w, nlen - strlen(name));
}

static void test_build_id(struct wbuf *w, int swap)
{
	feat_set *fs = feat_new();
	w_reset(w, swap);
	w_build_id(w, 1, -1, 0xab, 0, "[kernel.kallsyms]");
	w_build_id(w, 2 | (1u << 15), 1234, 0x5c, 16, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	feat_add(fs, PD_FEAT_BUILD_ID, w->p, w->len, swap, 0);
	const pd_header *h = feat_header(fs);
	CHECK(h->nr_build_ids == 2);
	if (h->nr_build_ids == 2) {
		CHECK(h->build_ids[0].size == 20 && h->build_ids[0].build_id[19] == 0xab &&
		      h->build_ids[0].pid == (uint32_t)-1 &&
		      !strcmp(h->build_ids[0].filename, "[kernel.kallsyms]"));
		CHECK(h->build_ids[1].size == 16 && h->build_ids[1].pid == 1234 &&
		      h->build_ids[1].misc == (2 | (1u << 15)) &&
		      !strcmp(h->build_ids[1].filename, "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	}
	json_t *j = decoded(fs, PD_FEAT_BUILD_ID);
	CHECK(json_array_size(j) == 2 &&
	      !strcmp(jstr(json_array_get(j, 1), "build_id"), "5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c") &&
	      jint(json_array_get(j, 0), "pid") == -1);
	json_decref(j);

	/* an entry whose size runs past the section, and one smaller than its header */
	size_t good = w->len;
	w_build_id(w, 1, 0, 1, 0, "x");
	w->p[good + 6 + (swap ? 0 : 1)] = 0x7f;	/* size high byte: far beyond */
	feat_add(fs, PD_FEAT_BUILD_ID, w->p, w->len, swap, 0x9000);
	CHECK(has_error(fs, PD_FEAT_BUILD_ID) && feat_header(fs)->nr_build_ids == 0);
	char want[32];
	snprintf(want, sizeof(want), "0x%zx", 0x9000 + good);
	CHECK(feat_nr_warnings(fs) == 1 && strstr(feat_warning(fs, 0), want));
	w_reset(w, swap);
	w_u32(w, 67);
	w_u16(w, 0);
	w_u16(w, 0);
	w_zero(w, 40);
	feat_add(fs, PD_FEAT_BUILD_ID, w->p, w->len, swap, 0);
	CHECK(has_error(fs, PD_FEAT_BUILD_ID));
	feat_free(fs);
}

static void test_unknown(struct wbuf *w, int swap)
{
	feat_set *fs = feat_new();
	w_reset(w, swap);
	w_zero(w, 20);
	feat_add(fs, 128, w->p, w->len, swap, 0x77);
	feat_add(fs, 40, w->p, 3, swap, 0x88);
	feat_add(fs, 300, w->p, 3, swap, 0x99);	/* outside the bitmap: dropped */
	CHECK(feat_has(fs, 128) && feat_has(fs, 40) && !feat_has(fs, 300));
	json_t *j = decoded(fs, 128);
	CHECK(jint(j, "id") == 128 && jint(j, "size") == 20 &&
	      json_is_true(json_object_get(j, "raw")));
	json_decref(j);
	CHECK(feat_nr_warnings(fs) == 3 && strstr(feat_warning(fs, 0), "128") &&
	      strstr(feat_warning(fs, 0), "0x77"));
	CHECK(pd_feature_name(128) == NULL && !strcmp(pd_feature_name(PD_FEAT_SAMPLE_TOPOLOGY),
						      "mem_topology"));
	CHECK(!strcmp(pd_feature_name(PD_FEAT_HOSTNAME), "hostname") &&
	      !strcmp(pd_feature_name(PD_FEAT_PMU_CAPS), "pmu_caps") && pd_feature_name(-1) == NULL);
	feat_free(fs);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

/* xorshift64: a fixed sequence, so a failure can be reproduced */
static uint64_t rng_next(void)
{
	return xorshift64(&rng_state);
}

/*
 * Every truncation of every well-formed section, and random damage to it: decoding must not crash
 * or read out of bounds (run under ASan), and what it yields is either an
 * error with a warning or a value (some prefixes are themselves valid).
 */
static void test_truncations(struct wbuf *w, int swap)
{
	struct wbuf sections[PD_FEAT_PMU_CAPS + 1];
	memset(sections, 0, sizeof(sections));
	struct wbuf *s;
	s = &sections[PD_FEAT_CMDLINE];
	w_reset(s, swap);
	w_u32(s, 2);
	w_str(s, "perf");
	w_str(s, "record");
	s = &sections[PD_FEAT_EVENT_DESC];
	w_reset(s, swap);
	w_u32(s, 1);
	w_u32(s, 128);
	w_attr(s, 128, 1, 0);
	w_u32(s, 1);
	w_str(s, "cpu-clock");
	w_u64(s, 5);
	s = &sections[PD_FEAT_CPU_TOPOLOGY];
	w_topology(s, swap, 3);
	s = &sections[PD_FEAT_BUILD_ID];
	w_reset(s, swap);
	w_build_id(s, 1, -1, 0xab, 0, "[kernel.kallsyms]");
	s = &sections[PD_FEAT_PMU_CAPS];
	w_reset(s, swap);
	w_u32(s, 1);
	w_u32(s, 1);
	w_str(s, "a");
	w_str(s, "b");
	w_str(s, "cpu");
	s = &sections[PD_FEAT_SAMPLE_TOPOLOGY];
	w_reset(s, swap);
	w_u64(s, 1);
	w_u64(s, 4096);
	w_u64(s, 1);
	w_u64(s, 0);
	w_u64(s, 4096);
	w_u64(s, 64);
	w_u64(s, 5);
	s = &sections[PD_FEAT_CACHE];
	w_reset(s, swap);
	w_u32(s, 1);
	w_u32(s, 1);
	w_zero(s, 16);
	w_str(s, "Data");
	w_str(s, "32K");
	w_str(s, "0");
	for (int id = 1; id <= PD_FEAT_PMU_CAPS; id++) {
		s = &sections[id];
		if (!s->p) {	/* the rest: some bytes of plausible shape */
			w_reset(s, swap);
			w_u32(s, 1);
			w_u32(s, 1);
			w_u64(s, 4);
			w_str(s, "abc");
			w_str(s, "def");
			w_u64(s, 0);
		}
		/* random damage: bytes overwritten, counts and lengths made huge */
		uint8_t *copy = malloc(s->len ? s->len : 1);
		for (int round = 0; round < 400 && copy && s->len; round++) {
			memcpy(copy, s->p, s->len);
			int edits = 1 + (int)(rng_next() % 4);
			for (int e = 0; e < edits; e++) {
				size_t at = (size_t)(rng_next() % s->len);
				if (rng_next() & 1 || at + 4 > s->len) {
					copy[at] = (uint8_t)rng_next();
				} else {
					static const uint32_t nasty[] = { 0xffffffff, 0x80000000,
									  0x7fffffff, 0x10000, 0 };
					uint32_t v = nasty[rng_next() % 5];
					memcpy(copy + (at & ~(size_t)3), &v, 4);
				}
			}
			feat_set *fs = feat_new();
			w_nrcpus(fs, w, swap, (uint32_t)(rng_next() % 8));
			size_t before = feat_nr_warnings(fs);
			feat_add(fs, id, copy, s->len, swap, 0x20000);
			json_t *j = decoded(fs, id);
			CHECK(j != NULL);
			if (j && json_is_object(j) && json_object_get(j, "error"))
				CHECK(feat_nr_warnings(fs) > before &&
				      strstr(feat_warning(fs, before), "0x2"));
			json_decref(j);
			(void)feat_header(fs);
			for (size_t k = 0; k < feat_nr_event_desc(fs); k++)
				(void)feat_event_desc(fs, k, NULL, NULL);
			feat_free(fs);
		}
		free(copy);
		for (size_t cut = 0; cut <= s->len; cut++) {
			feat_set *fs = feat_new();
			w_nrcpus(fs, w, swap, 4);
			size_t before = feat_nr_warnings(fs);
			feat_add(fs, id, s->p, cut, swap, 0x10000);
			char *text = feat_json(fs, id);
			CHECK(text != NULL);
			if (text && strstr(text, "\"error\""))
				CHECK(feat_nr_warnings(fs) > before &&
				      strstr(feat_warning(fs, before), "0x1"));
			free(text);
			(void)feat_header(fs);
			feat_free(fs);
		}
		free(s->p);
	}
}

/* the limits on what one section may decode to */
static void test_limits(struct wbuf *w, int swap)
{
	feat_set *fs = feat_new();
	w_reset(w, swap);
	for (int i = 0; i < 70000; i++)
		w_build_id(w, 1, i, 1, 0, "x");
	feat_add(fs, PD_FEAT_BUILD_ID, w->p, w->len, swap, 0);
	CHECK(has_error(fs, PD_FEAT_BUILD_ID) && feat_header(fs)->nr_build_ids == 0);
	CHECK(feat_nr_warnings(fs) == 1 && strstr(feat_warning(fs, 0), "limit"));
	/* at the limit it still decodes */
	w_reset(w, swap);
	for (int i = 0; i < 65536; i++)
		w_build_id(w, 1, i, 1, 0, "x");
	feat_add(fs, PD_FEAT_BUILD_ID, w->p, w->len, swap, 0);
	CHECK(feat_header(fs)->nr_build_ids == 65536);

	w_reset(w, swap);
	w_u64(w, 70000);
	w_zero(w, 70000 * 16);
	feat_add(fs, PD_FEAT_AUXTRACE, w->p, w->len, swap, 0);
	CHECK(has_error(fs, PD_FEAT_AUXTRACE));

	w_reset(w, swap);
	w_u64(w, 1);
	w_u64(w, 4096);
	w_u64(w, 1);
	w_u64(w, 0);
	w_u64(w, 1);
	w_u64(w, 1ULL << 23);
	w_zero(w, (1u << 23) / 8);
	feat_add(fs, PD_FEAT_SAMPLE_TOPOLOGY, w->p, w->len, swap, 0);
	CHECK(has_error(fs, PD_FEAT_SAMPLE_TOPOLOGY));

	/* a section over the 64 MiB kept of one: noted, not copied */
	size_t huge = (64u << 20) + 1;
	uint8_t *big = calloc(1, huge);
	if (big) {
		feat_add(fs, PD_FEAT_TRACING_DATA, big, huge, swap, 0);
		size_t len = 0;
		CHECK(feat_has(fs, PD_FEAT_TRACING_DATA) &&
		      feat_raw(fs, PD_FEAT_TRACING_DATA, &len) == NULL);
		json_t *j = decoded(fs, PD_FEAT_TRACING_DATA);
		CHECK(jint(j, "size") == (int64_t)huge);
		json_decref(j);
		feat_add(fs, PD_FEAT_HOSTNAME, big, huge, swap, 0x1234);
		CHECK(has_error(fs, PD_FEAT_HOSTNAME) && feat_header(fs)->hostname == NULL);
		free(big);
	}
	feat_free(fs);
}

int main(void)
{
	struct wbuf w = { 0 };
	for (int swap = 0; swap <= 1; swap++) {
		test_strings(&w, swap);
		test_numbers(&w, swap);
		test_cmdline(&w, swap);
		test_event_desc(&w, swap);
		test_cpu_topology(&w, swap);
		test_lists(&w, swap);
		test_build_id(&w, swap);
		test_unknown(&w, swap);
		test_truncations(&w, swap);
		test_limits(&w, swap);
	}
	free(w.p);
	if (failures) {
		fprintf(stderr, "%d checks failed\n", failures);
		return 1;
	}
	printf("all feature checks passed\n");
	return 0;
}
