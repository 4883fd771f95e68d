/*
 * feat-header.c - print a perf.data file's header facts as
 * `perf report --header-only` prints them, from feat.c's decoding, so a
 * test can compare the two line by line.
 *
 *   feat-header [--json | --build-ids] [--reader] FILE
 *
 * Without options: perf-style lines. With --json: every feature's JSON, one
 * "name: json" a line, then the warnings. With --build-ids: the BUILD_ID
 * feature's entries as `perf buildid-list` prints them. By default it reads the file
 * header and the feature section table itself (file mode, PERFILE2, either
 * byte order), so that it checks feature decoding alone; with --reader it
 * opens the file with the parser (any mode, pipe included) and reads it to
 * the end first, as pipe-mode features arrive as records.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "feat.h"

static uint64_t rd64(const uint8_t *p, int swap)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 20, n = 0;
	uint8_t *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			cap *= 2;
			uint8_t *g = realloc(buf, cap);
			if (!g) {
				free(buf);
				buf = NULL;
			}
			buf = g;
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

/* header: magic[8] size attr_size attrs{off,size} data{off,size}
 * event_types{off,size} flags[4]; feature sections {off,size} follow the
 * data section, one per set bit, in bit order */
static int load_features(feat_set *fs, const uint8_t *buf, size_t len)
{
	if (len < 104 || (memcmp(buf, "PERFILE2", 8) && memcmp(buf, "2ELIFREP", 8))) {
		fprintf(stderr, "not a PERFILE2 file\n");
		return -1;
	}
	int swap = memcmp(buf, "2ELIFREP", 8) == 0;
	uint64_t data_off = rd64(buf + 40, swap), data_size = rd64(buf + 48, swap);
	uint64_t table = data_off + data_size;
	int nsec = 0;
	for (int bit = 0; bit < 256; bit++) {
		uint64_t word = rd64(buf + 72 + 8 * (bit / 64), swap);
		if (!((word >> (bit % 64)) & 1))
			continue;
		uint64_t at = table + 16 * (uint64_t)nsec++;
		if (at > len || len - at < 16) {
			fprintf(stderr, "feature table entry at %" PRIu64 " outside the file\n", at);
			return -1;
		}
		uint64_t off = rd64(buf + at, swap), size = rd64(buf + at + 8, swap);
		if (off > len || size > len - off) {
			fprintf(stderr, "feature %d section outside the file\n", bit);
			continue;
		}
		if (feat_add(fs, bit, buf + off, size, swap, off))
			return -1;
	}
	return 0;
}

/* the features, from feat.c alone or through the reader */
struct source {
	feat_set *fs;
	pd_file *f;
};

static char *source_json(const struct source *src, int id)
{
	return src->f ? pd_feature_json(src->f, id) : feat_json(src->fs, id);
}

static const json_t *feature(const struct source *src, int id, json_t **keep)
{
	char *text = source_json(src, id);
	if (!text)
		return NULL;
	*keep = json_loads(text, JSON_DECODE_ANY, NULL);
	free(text);
	if (*keep && json_is_object(*keep) && json_object_get(*keep, "error"))
		return NULL;
	return *keep;
}

/* perf's unit_number__scnprintf: 1024-based, one letter */
static void human(char *buf, size_t len, uint64_t n)
{
	static const char units[] = "BKMGTPE";
	int i = 0;
	while (n >= 1024 && i < 6) {
		n /= 1024;
		i++;
	}
	snprintf(buf, len, "%" PRIu64 "%c", n, units[i]);
}

/* "name=value, name=value" as perf lists capabilities */
static void print_caps(const json_t *caps)
{
	const char *k;
	const json_t *val;
	int first = 1;
	if (json_object_size(caps) == 0) {
		printf(" not available\n");
		return;
	}
	json_object_foreach((json_t *)caps, k, val) {
		printf("%s%s=%s", first ? " " : ", ", k, json_string_value(val));
		first = 0;
	}
	printf("\n");
}

static const char *clockid_name(int64_t id)
{
	switch (id) {
	case 0: return "realtime";
	case 1: return "monotonic";
	case 4: return "monotonic_raw";
	case 7: return "boottime";
	case 11: return "tai";
	default: return "unknown";
	}
}

static void print_perf_style(const struct source *fs)
{
	const pd_header *h = fs->f ? pd_get_header(fs->f) : feat_header(fs->fs);
	json_t *j = NULL;
	const json_t *v;

	if (h->hostname)
		printf("# hostname : %s\n", h->hostname);
	if (h->os_release)
		printf("# os release : %s\n", h->os_release);
	if (h->perf_version)
		printf("# perf version : %s\n", h->perf_version);
	if (h->arch)
		printf("# arch : %s\n", h->arch);
	if (h->has_nr_cpus) {
		printf("# nrcpus online : %" PRIu32 "\n", h->nr_cpus_online);
		printf("# nrcpus avail : %" PRIu32 "\n", h->nr_cpus_available);
	}
	if (h->cpu_desc)
		printf("# cpudesc : %s\n", h->cpu_desc);
	if (h->cpuid)
		printf("# cpuid : %s\n", h->cpuid);
	if (h->has_total_mem)
		printf("# total memory : %" PRIu64 " kB\n", h->total_mem);
	if (h->cmdline)
		printf("# cmdline : %s\n", h->cmdline);

	if ((v = feature(fs, PD_FEAT_CPU_TOPOLOGY, &j))) {
		size_t i;
		const json_t *s;
		json_array_foreach(json_object_get(v, "sibling_sockets"), i, s)
			printf("# sibling sockets : %s\n", json_string_value(s));
		json_array_foreach(json_object_get(v, "sibling_dies"), i, s)
			printf("# sibling dies    : %s\n", json_string_value(s));
		json_array_foreach(json_object_get(v, "sibling_threads"), i, s)
			printf("# sibling threads : %s\n", json_string_value(s));
		int dies = json_object_get(v, "sibling_dies") != NULL;
		json_array_foreach(json_object_get(v, "cpus"), i, s) {
			if (dies)
				printf("# CPU %d: Core ID %d, Die ID %d, Socket ID %d\n",
				       (int)json_integer_value(json_object_get(s, "cpu")),
				       (int)json_integer_value(json_object_get(s, "core_id")),
				       (int)json_integer_value(json_object_get(s, "die_id")),
				       (int)json_integer_value(json_object_get(s, "socket_id")));
			else
				printf("# CPU %d: Core ID %d, Socket ID %d\n",
				       (int)json_integer_value(json_object_get(s, "cpu")),
				       (int)json_integer_value(json_object_get(s, "core_id")),
				       (int)json_integer_value(json_object_get(s, "socket_id")));
		}
	}
	json_decref(j);
	j = NULL;
	if ((v = feature(fs, PD_FEAT_NUMA_TOPOLOGY, &j))) {
		size_t i;
		const json_t *n;
		json_array_foreach(v, i, n) {
			unsigned node = (unsigned)json_integer_value(json_object_get(n, "node"));
			printf("# node%u meminfo  : total = %" PRIu64 " kB, free = %" PRIu64 " kB\n",
			       node, (uint64_t)json_integer_value(json_object_get(n, "mem_total")),
			       (uint64_t)json_integer_value(json_object_get(n, "mem_free")));
			printf("# node%u cpu list : %s\n", node,
			       json_string_value(json_object_get(n, "cpus")));
		}
	}
	json_decref(j);
	j = NULL;
	if ((v = feature(fs, PD_FEAT_PMU_MAPPINGS, &j))) {
		size_t i;
		const json_t *m;
		printf("# pmu mappings:");
		json_array_foreach(v, i, m)
			printf("%s %s = %" PRIu64, i ? "," : "",
			       json_string_value(json_object_get(m, "name")),
			       (uint64_t)json_integer_value(json_object_get(m, "type")));
		printf("\n");
	}
	json_decref(j);
	j = NULL;
	/* groups as perf lists them: {leader,member,...} by the events' names */
	json_t *descs = NULL;
	const json_t *events = feature(fs, PD_FEAT_EVENT_DESC, &descs);
	if ((v = feature(fs, PD_FEAT_GROUP_DESC, &j)) && events) {
		size_t i;
		const json_t *g;
		json_array_foreach(v, i, g) {
			const char *name = json_string_value(json_object_get(g, "name"));
			size_t leader = (size_t)json_integer_value(json_object_get(g, "leader_idx"));
			size_t nr = (size_t)json_integer_value(json_object_get(g, "nr_members"));
			if (nr < 2 || leader + nr > json_array_size(events))
				continue;
			printf("# group: %s{", name && strcmp(name, "{anon_group}") ? name : "");
			for (size_t k = 0; k < nr; k++)
				printf("%s%s", k ? "," : "",
				       json_string_value(json_object_get(
					       json_array_get(events, leader + k), "name")));
			printf("}\n");
		}
	}
	json_decref(j);
	json_decref(descs);
	j = NULL;
	if (fs->f ? pd_has_feature(fs->f, PD_FEAT_AUXTRACE) : feat_has(fs->fs, PD_FEAT_AUXTRACE))
		printf("# contains AUX area data (e.g. instruction trace)\n");
	if (fs->f ? pd_has_feature(fs->f, PD_FEAT_BRANCH_STACK)
		  : feat_has(fs->fs, PD_FEAT_BRANCH_STACK))
		printf("# contains samples with branch stack\n");
	if ((v = feature(fs, PD_FEAT_CACHE, &j))) {
		size_t i;
		const json_t *c;
		printf("# CPU cache info:\n");
		json_array_foreach(v, i, c)
			printf("#  L%d %-15s %8s [%s]\n",
			       (int)json_integer_value(json_object_get(c, "level")),
			       json_string_value(json_object_get(c, "type")),
			       json_string_value(json_object_get(c, "size")),
			       json_string_value(json_object_get(c, "map")));
	}
	json_decref(j);
	j = NULL;
	if (h->has_sample_time) {
		printf("# time of first sample : %" PRIu64 ".%06" PRIu64 "\n",
		       h->first_sample_ns / 1000000000, h->first_sample_ns % 1000000000 / 1000);
		printf("# time of last sample : %" PRIu64 ".%06" PRIu64 "\n",
		       h->last_sample_ns / 1000000000, h->last_sample_ns % 1000000000 / 1000);
		printf("# sample duration : %10.3f ms\n",
		       (double)(h->last_sample_ns - h->first_sample_ns) / 1e6);
	}
	if ((v = feature(fs, PD_FEAT_SAMPLE_TOPOLOGY, &j))) {
		const json_t *nodes = json_object_get(v, "nodes"), *n;
		size_t i;
		printf("# memory nodes (nr %zu, block size 0x%" PRIx64 "):\n", json_array_size(nodes),
		       (uint64_t)json_integer_value(json_object_get(v, "block_size")));
		json_array_foreach(nodes, i, n) {
			char size[32];
			human(size, sizeof(size),
			      (uint64_t)json_integer_value(json_object_get(n, "size_bytes")));
			printf("#  %3" PRIu64 " [%s]: %s\n",
			       (uint64_t)json_integer_value(json_object_get(n, "node")), size,
			       json_string_value(json_object_get(n, "blocks")));
		}
	}
	json_decref(j);
	j = NULL;
	if ((v = feature(fs, PD_FEAT_HYBRID_TOPOLOGY, &j))) {
		size_t i;
		const json_t *p;
		printf("# hybrid cpu system:\n");
		json_array_foreach(v, i, p)
			printf("# %s cpu list : %s\n", json_string_value(json_object_get(p, "pmu_name")),
			       json_string_value(json_object_get(p, "cpus")));
	}
	json_decref(j);
	j = NULL;
	if ((v = feature(fs, PD_FEAT_CPU_PMU_CAPS, &j))) {
		printf("# cpu pmu capabilities:");
		print_caps(v);
	}
	json_decref(j);
	j = NULL;
	if ((v = feature(fs, PD_FEAT_PMU_CAPS, &j))) {
		size_t i;
		const json_t *p;
		json_array_foreach(v, i, p) {
			printf("# %s pmu capabilities:",
			       json_string_value(json_object_get(p, "pmu_name")));
			print_caps(json_object_get(p, "caps"));
		}
	}
	json_decref(j);
	j = NULL;
	if ((v = feature(fs, PD_FEAT_CLOCK_DATA, &j))) {
		int64_t id = json_integer_value(json_object_get(v, "clockid"));
		uint64_t tod = (uint64_t)json_integer_value(json_object_get(v, "wall_clock_ns"));
		uint64_t clk = (uint64_t)json_integer_value(json_object_get(v, "clockid_ns"));
		time_t secs = (time_t)(tod / 1000000000);
		struct tm tm;
		char date[64];
		localtime_r(&secs, &tm);
		strftime(date, sizeof(date), "%F %T", &tm);
		printf("# clockid: %s (%d)\n", clockid_name(id), (int)id);
		printf("# reference time: %s.%06" PRIu64 " = %" PRIu64 ".%06" PRIu64
		       " (TOD) = %" PRIu64 ".%09" PRIu64 " (%s)\n",
		       date, tod % 1000000000 / 1000, tod / 1000000000, tod % 1000000000 / 1000,
		       clk / 1000000000, clk % 1000000000, clockid_name(id));
	}
	json_decref(j);
	j = NULL;
	if (h->has_clockid)
		printf("# clockid frequency: %" PRIu64 " MHz\n",
		       h->clockid_res_ns ? 1000 / h->clockid_res_ns : 0);
	if ((v = feature(fs, PD_FEAT_DIR_FORMAT, &j)))
		printf("# directory data version : %" PRIu64 "\n",
		       (uint64_t)json_integer_value(json_object_get(v, "version")));
	json_decref(j);
	j = NULL;
	if ((v = feature(fs, PD_FEAT_COMPRESSED, &j)))
		printf("# compressed : %s, level = %d, ratio = %d\n",
		       h->comp_type == 1 ? "Zstd" : "Unknown", (int)h->comp_level,
		       (int)json_integer_value(json_object_get(v, "ratio")));
	json_decref(j);
}

static void print_json(const struct source *src)
{
	int ids[PD_FEAT_MAX];
	size_t n = src->f ? pd_features(src->f, ids, PD_FEAT_MAX)
			  : feat_list(src->fs, ids, PD_FEAT_MAX);
	for (size_t i = 0; i < n && i < PD_FEAT_MAX; i++) {
		char *text = source_json(src, ids[i]);
		const char *name = pd_feature_name(ids[i]);
		if (name)
			printf("%s: %s\n", name, text);
		else
			printf("feature %d: %s\n", ids[i], text);
		free(text);
	}
	if (src->f) {
		for (size_t i = 0; i < pd_nr_warnings(src->f); i++)
			printf("warning: %s\n", pd_warning(src->f, i));
	} else {
		for (size_t i = 0; i < feat_nr_warnings(src->fs); i++)
			printf("warning: %s\n", feat_warning(src->fs, i));
	}
}

static void print_build_ids(const struct source *src)
{
	const pd_header *h = src->f ? pd_get_header(src->f) : feat_header(src->fs);
	for (size_t i = 0; i < h->nr_build_ids; i++) {
		const pd_build_id *b = &h->build_ids[i];
		for (unsigned k = 0; k < b->size; k++)
			printf("%02x", b->build_id[k]);
		printf(" %s\n", b->filename);
	}
}

static int open_with_reader(struct source *src, const char *path)
{
	pd_error err;
	char msg[320];
	pd_options opt = { .no_decode_samples = 1 };
	src->f = pd_open_path(path, &opt, &err);
	if (!src->f) {
		fprintf(stderr, "%s: %s\n", path, pd_strerror(&err, msg, sizeof(msg)));
		return -1;
	}
	pd_record r;
	int rc;
	while ((rc = pd_next(src->f, &r, &err)) > 0)
		;
	if (rc < 0) /* the features seen before the error are still shown */
		fprintf(stderr, "%s: %s\n", path, pd_strerror(&err, msg, sizeof(msg)));
	return 0;
}

int main(int argc, char **argv)
{
	int as_json = 0, build_ids = 0, reader = 0, i;
	for (i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--json"))
			as_json = 1;
		else if (!strcmp(argv[i], "--build-ids"))
			build_ids = 1;
		else if (!strcmp(argv[i], "--reader"))
			reader = 1;
		else
			break;
	}
	if (i != argc - 1) {
		fprintf(stderr, "usage: feat-header [--json | --build-ids] [--reader] FILE\n");
		return 2;
	}
	const char *path = argv[i];
	struct source src = { 0 };
	uint8_t *buf = NULL;
	int rc;
	if (reader) {
		rc = open_with_reader(&src, path);
	} else {
		size_t len;
		buf = slurp(path, &len);
		if (!buf) {
			perror(path);
			return 1;
		}
		src.fs = feat_new();
		rc = load_features(src.fs, buf, len);
	}
	if (rc == 0) {
		if (as_json)
			print_json(&src);
		else if (build_ids)
			print_build_ids(&src);
		else
			print_perf_style(&src);
	}
	if (src.f)
		pd_close(src.f);
	feat_free(src.fs);
	free(buf);
	return rc ? 1 : 0;
}
