/*
 * feat.c - header feature sections: stored raw as the reader finds them,
 * decoded into JSON and pd_header facts.
 *
 * Each section is copied (the reader's buffer may be a stream window) and
 * decoded at once, so that a malformed one leaves its warning while the
 * reader still knows where it was. Every length and count read from a
 * section is checked against the bytes that remain in it; a section that
 * does not hold together decodes to {"error": ...}.
 *
 * This file keeps the set of sections and the facts drawn from them; the
 * decoders are in feat-host.c and feat-events.c (feat-decode.h).
 */
#include "feat-decode.h"

/* ---- the set of sections ------------------------------------------------ */

static const char *const feature_names[] = {
	[PD_FEAT_TRACING_DATA] = "tracing_data",
	[PD_FEAT_BUILD_ID] = "build_id",
	[PD_FEAT_HOSTNAME] = "hostname",
	[PD_FEAT_OSRELEASE] = "osrelease",
	[PD_FEAT_VERSION] = "version",
	[PD_FEAT_ARCH] = "arch",
	[PD_FEAT_NRCPUS] = "nrcpus",
	[PD_FEAT_CPUDESC] = "cpudesc",
	[PD_FEAT_CPUID] = "cpuid",
	[PD_FEAT_TOTAL_MEM] = "total_mem",
	[PD_FEAT_CMDLINE] = "cmdline",
	[PD_FEAT_EVENT_DESC] = "event_desc",
	[PD_FEAT_CPU_TOPOLOGY] = "cpu_topology",
	[PD_FEAT_NUMA_TOPOLOGY] = "numa_topology",
	[PD_FEAT_BRANCH_STACK] = "branch_stack",
	[PD_FEAT_PMU_MAPPINGS] = "pmu_mappings",
	[PD_FEAT_GROUP_DESC] = "group_desc",
	[PD_FEAT_AUXTRACE] = "auxtrace",
	[PD_FEAT_STAT] = "stat",
	[PD_FEAT_CACHE] = "cache",
	[PD_FEAT_SAMPLE_TIME] = "sample_time",
	[PD_FEAT_SAMPLE_TOPOLOGY] = "mem_topology",
	[PD_FEAT_CLOCKID] = "clockid",
	[PD_FEAT_DIR_FORMAT] = "dir_format",
	[PD_FEAT_BPF_PROG_INFO] = "bpf_prog_info",
	[PD_FEAT_BPF_BTF] = "bpf_btf",
	[PD_FEAT_COMPRESSED] = "compressed",
	[PD_FEAT_CPU_PMU_CAPS] = "cpu_pmu_caps",
	[PD_FEAT_CLOCK_DATA] = "clock_data",
	[PD_FEAT_HYBRID_TOPOLOGY] = "hybrid_topology",
	[PD_FEAT_PMU_CAPS] = "pmu_caps",
};

const char *pd_feature_name(int feat)
{
	if (feat < 0 || (size_t)feat >= sizeof(feature_names) / sizeof(feature_names[0]))
		return NULL;
	return feature_names[feat];
}

static void add_warning(feat_set *fs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_warning(feat_set *fs, const char *fmt, ...)
{
	if (fs->nr_warnings >= FEAT_MAX_WARNINGS) {
		fs->dropped_warnings++;
		return;
	}
	char buf[320];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char *copy = strdup(buf);
	char **grown = realloc(fs->warnings, (fs->nr_warnings + 1) * sizeof(*grown));
	if (!copy || !grown) {
		free(copy);
		if (grown)
			fs->warnings = grown;
		fs->dropped_warnings++;
		return;
	}
	fs->warnings = grown;
	fs->warnings[fs->nr_warnings++] = copy;
}

feat_set *feat_new(void)
{
	return calloc(1, sizeof(feat_set));
}

void feat_free_event_descs(feat_set *fs)
{
	for (size_t i = 0; i < fs->nr_descs; i++) {
		free(fs->descs[i].name);
		free(fs->descs[i].ids);
	}
	free(fs->descs);
	free(fs->id_names);
	fs->descs = NULL;
	fs->nr_descs = 0;
	fs->id_names = NULL;
	fs->nr_id_names = 0;
}

void feat_free(feat_set *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < PD_FEAT_MAX; i++) {
		free(fs->sec[i].data);
		json_decref(fs->sec[i].json);
	}
	for (size_t i = 0; i < fs->nr_warnings; i++)
		free(fs->warnings[i]);
	free(fs->warnings);
	feat_free_event_descs(fs);
	free(fs->build_ids);
	free(fs->cmdline);
	free(fs);
}

static const decode_fn decoders[] = {
	[PD_FEAT_TRACING_DATA] = feat_dec_tracing_data,
	[PD_FEAT_BUILD_ID] = feat_dec_build_id,
	[PD_FEAT_HOSTNAME] = feat_dec_string,
	[PD_FEAT_OSRELEASE] = feat_dec_string,
	[PD_FEAT_VERSION] = feat_dec_string,
	[PD_FEAT_ARCH] = feat_dec_string,
	[PD_FEAT_NRCPUS] = feat_dec_nrcpus,
	[PD_FEAT_CPUDESC] = feat_dec_string,
	[PD_FEAT_CPUID] = feat_dec_string,
	[PD_FEAT_TOTAL_MEM] = feat_dec_total_mem,
	[PD_FEAT_CMDLINE] = feat_dec_cmdline,
	[PD_FEAT_EVENT_DESC] = feat_dec_event_desc,
	[PD_FEAT_CPU_TOPOLOGY] = feat_dec_cpu_topology,
	[PD_FEAT_NUMA_TOPOLOGY] = feat_dec_numa_topology,
	[PD_FEAT_BRANCH_STACK] = feat_dec_flag,
	[PD_FEAT_PMU_MAPPINGS] = feat_dec_pmu_mappings,
	[PD_FEAT_GROUP_DESC] = feat_dec_group_desc,
	[PD_FEAT_AUXTRACE] = feat_dec_auxtrace,
	[PD_FEAT_STAT] = feat_dec_flag,
	[PD_FEAT_CACHE] = feat_dec_cache,
	[PD_FEAT_SAMPLE_TIME] = feat_dec_sample_time,
	[PD_FEAT_SAMPLE_TOPOLOGY] = feat_dec_mem_topology,
	[PD_FEAT_CLOCKID] = feat_dec_clockid,
	[PD_FEAT_DIR_FORMAT] = feat_dec_dir_format,
	[PD_FEAT_BPF_PROG_INFO] = feat_dec_bpf_prog_info,
	[PD_FEAT_BPF_BTF] = feat_dec_bpf_btf,
	[PD_FEAT_COMPRESSED] = feat_dec_compressed,
	[PD_FEAT_CPU_PMU_CAPS] = feat_dec_cpu_pmu_caps,
	[PD_FEAT_CLOCK_DATA] = feat_dec_clock_data,
	[PD_FEAT_HYBRID_TOPOLOGY] = feat_dec_hybrid_topology,
	[PD_FEAT_PMU_CAPS] = feat_dec_pmu_caps,
};

/* Decode section `id` into its JSON, leaving a warning when it is malformed. */
static void decode_section(feat_set *fs, int id)
{
	struct feat_section *s = &fs->sec[id];
	json_decref(s->json);
	s->json = NULL;
	s->malformed = 0;

	decode_fn fn = (size_t)id < sizeof(decoders) / sizeof(decoders[0]) ? decoders[id] : NULL;
	if (!fn) {
		s->json = json_pack("{s:i,s:I,s:b}", "id", id, "size", (json_int_t)s->len, "raw", 1);
		add_warning(fs,
			    "offset %" PRIu64 " (0x%" PRIx64 "): unknown feature %d (%zu bytes) "
			    "kept raw",
			    s->offset, s->offset, id, s->len);
		return;
	}
	if (!s->data && id != PD_FEAT_TRACING_DATA) {
		s->malformed = 1;
		char msg[160];
		snprintf(msg, sizeof(msg),
			 "offset %" PRIu64 " (0x%" PRIx64 "): section of %zu bytes, more than the "
			 "%u-byte limit; not decoded",
			 s->offset, s->offset, s->len, FEAT_MAX_SECTION);
		s->json = json_pack("{s:s}", "error", msg);
		add_warning(fs, "feature %s: %s", pd_feature_name(id), msg);
		return;
	}
	struct fcur c = { .p = s->data,
			  .len = s->len,	/* no data: only TRACING_DATA, which reads none */
			  .swap = s->swap,
			  .base = s->offset,
			  .budget = FEAT_MAX_ENTRIES };
	json_t *j = fn(fs, &c);
	if (!j && !c.failed)
		fcur_fail(&c, "out of memory");
	if (c.failed) {
		json_decref(j);
		s->malformed = 1;
		s->json = json_pack("{s:s}", "error", c.err);
		add_warning(fs, "feature %s: %s", pd_feature_name(id), c.err);
	} else {
		s->json = j;
	}
}

/* Forget what a section contributed to the decoded facts before it is
 * replaced, so a facts pointer never outlives its storage. */
static void forget_section(feat_set *fs, int id)
{
	switch (id) {
	case PD_FEAT_BUILD_ID:
		free(fs->build_ids);
		fs->build_ids = NULL;
		fs->nr_build_ids = 0;
		break;
	case PD_FEAT_CMDLINE:
		free(fs->cmdline);
		fs->cmdline = NULL;
		break;
	case PD_FEAT_EVENT_DESC:
		feat_free_event_descs(fs);
		break;
	case PD_FEAT_NRCPUS:
		fs->nr_cpus_known = 0;
		break;
	}
}

int feat_add(feat_set *fs, int id, const void *data, size_t len, int swap, uint64_t offset)
{
	if (id < 0 || id >= PD_FEAT_MAX) {
		add_warning(fs,
			    "offset %" PRIu64 " (0x%" PRIx64 "): feature id %d outside 0..%d "
			    "ignored",
			    offset, offset, id, PD_FEAT_MAX - 1);
		return 0;
	}
	/* a section beyond the limit is noted (present, its size) but not kept */
	uint8_t *copy = NULL;
	if (len <= FEAT_MAX_SECTION) {
		copy = malloc(len ? len : 1);
		if (!copy)
			return -1;
		if (len)
			memcpy(copy, data, len);
	}
	struct feat_section *s = &fs->sec[id];
	forget_section(fs, id);
	free(s->data);
	s->data = copy;
	s->len = len;
	s->swap = swap;
	s->offset = offset;
	s->present = 1;
	decode_section(fs, id);
	/* the per-cpu part of CPU_TOPOLOGY is sized by NRCPUS */
	if (id == PD_FEAT_NRCPUS && fs->sec[PD_FEAT_CPU_TOPOLOGY].present)
		decode_section(fs, PD_FEAT_CPU_TOPOLOGY);
	return 0;
}

int feat_has(const feat_set *fs, int id)
{
	return id >= 0 && id < PD_FEAT_MAX && fs->sec[id].present;
}

size_t feat_list(const feat_set *fs, int *out, size_t max)
{
	size_t n = 0;
	for (int id = 0; id < PD_FEAT_MAX; id++) {
		if (!fs->sec[id].present)
			continue;
		if (n < max)
			out[n] = id;
		n++;
	}
	return n;
}

const void *feat_raw(const feat_set *fs, int id, size_t *len)
{
	if (!feat_has(fs, id) || !fs->sec[id].data)
		return NULL;
	if (len)
		*len = fs->sec[id].len;
	return fs->sec[id].data;
}

char *feat_json(const feat_set *fs, int id)
{
	if (!feat_has(fs, id) || !fs->sec[id].json)
		return NULL;
	return json_dumps(fs->sec[id].json, JSON_COMPACT | JSON_ENCODE_ANY);
}

static const char *good_string(const feat_set *fs, int id)
{
	const struct feat_section *s = &fs->sec[id];
	if (!s->present || s->malformed)
		return NULL;
	return json_string_value(s->json);
}

static const json_t *good_json(const feat_set *fs, int id)
{
	const struct feat_section *s = &fs->sec[id];
	return s->present && !s->malformed ? s->json : NULL;
}

const pd_header *feat_header(feat_set *fs)
{
	pd_header *h = &fs->header;
	memset(h, 0, sizeof(*h));
	h->hostname = good_string(fs, PD_FEAT_HOSTNAME);
	h->os_release = good_string(fs, PD_FEAT_OSRELEASE);
	h->perf_version = good_string(fs, PD_FEAT_VERSION);
	h->arch = good_string(fs, PD_FEAT_ARCH);
	h->cpu_desc = good_string(fs, PD_FEAT_CPUDESC);
	h->cpuid = good_string(fs, PD_FEAT_CPUID);
	h->cmdline = fs->cmdline;
	if (fs->nr_cpus_known) {
		h->has_nr_cpus = 1;
		h->nr_cpus_online = fs->nr_cpus_online;
		h->nr_cpus_available = fs->nr_cpus_avail;
	}
	const json_t *j = good_json(fs, PD_FEAT_TOTAL_MEM);
	if (j) {
		h->has_total_mem = 1;
		h->total_mem = (uint64_t)json_integer_value(j);
	}
	if ((j = good_json(fs, PD_FEAT_SAMPLE_TIME))) {
		h->has_sample_time = 1;
		h->first_sample_ns = (uint64_t)json_integer_value(json_object_get(j, "first_ns"));
		h->last_sample_ns = (uint64_t)json_integer_value(json_object_get(j, "last_ns"));
	}
	if ((j = good_json(fs, PD_FEAT_CLOCKID))) {
		h->has_clockid = 1;
		h->clockid_res_ns = (uint64_t)json_integer_value(json_object_get(j, "res_ns"));
	}
	if ((j = good_json(fs, PD_FEAT_COMPRESSED))) {
		h->compressed = 1;
		h->comp_type = (uint32_t)json_integer_value(json_object_get(j, "type"));
		h->comp_level = (uint32_t)json_integer_value(json_object_get(j, "level"));
	}
	h->nr_build_ids = fs->nr_build_ids;
	h->build_ids = fs->build_ids;
	return h;
}

const char *feat_event_name_by_id(feat_set *fs, uint64_t id)
{
	size_t lo = 0, hi = fs->nr_id_names;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fs->id_names[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < fs->nr_id_names && fs->id_names[lo].id == id)
		return fs->descs[fs->id_names[lo].desc].name;
	return NULL;
}

size_t feat_nr_event_desc(feat_set *fs)
{
	return fs->nr_descs;
}

const char *feat_event_desc(feat_set *fs, size_t i, uint32_t *type, uint64_t *config)
{
	if (i >= fs->nr_descs)
		return NULL;
	if (type)
		*type = fs->descs[i].attr.type;
	if (config)
		*config = fs->descs[i].attr.config;
	return fs->descs[i].name;
}

size_t feat_nr_warnings(const feat_set *fs)
{
	return fs->nr_warnings;
}

const char *feat_warning(const feat_set *fs, size_t i)
{
	return i < fs->nr_warnings ? fs->warnings[i] : NULL;
}
