/*
 * feat-host.c - decoders of the feature sections that describe the machine
 * a recording was made on: names and versions, CPUs and their topology,
 * memory, caches, clocks, PMU capabilities.
 */
#include "feat-decode.h"

/* perf_header_string: the whole section is one string */
json_t *feat_dec_string(feat_set *fs, struct fcur *c)
{
	(void)fs;
	return fcur_jstr(c, "string");
}

/* NRCPUS: u32 nr_cpus_avail; u32 nr_cpus_online (perf's reading order) */
json_t *feat_dec_nrcpus(feat_set *fs, struct fcur *c)
{
	uint32_t avail = fcur_u32(c, "nr_cpus_avail");
	uint32_t online = fcur_u32(c, "nr_cpus_online");
	if (c->failed)
		return NULL;
	fs->nr_cpus_known = 1;
	fs->nr_cpus_avail = avail;
	fs->nr_cpus_online = online;
	return json_pack("{s:I,s:I}", "nrcpus_online", (json_int_t)online, "nrcpus_avail",
			 (json_int_t)avail);
}

/* TOTAL_MEM: u64 kB */
json_t *feat_dec_total_mem(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t v = fcur_u64(c, "total_mem");
	return c->failed ? NULL : json_integer((json_int_t)v);
}

/* string list: u32 nr; perf_header_string[nr] */
static json_t *dec_string_list(struct fcur *c, const char *what)
{
	uint32_t nr = fcur_count(c, 4, what);
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		json_t *s = fcur_jstr(c, what);
		if (s)
			json_array_append_new(arr, s);
	}
	if (c->failed) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/* CMDLINE: string list of argv; pd_header gets the words joined by ' ' */
json_t *feat_dec_cmdline(feat_set *fs, struct fcur *c)
{
	json_t *arr = dec_string_list(c, "cmdline words");
	if (!arr)
		return NULL;
	size_t total = 1, i;
	json_t *w;
	json_array_foreach(arr, i, w)
		total += json_string_length(w) + 1;
	char *line = malloc(total);
	if (line) {
		size_t at = 0;
		json_array_foreach(arr, i, w) {
			if (i)
				line[at++] = ' ';
			memcpy(line + at, json_string_value(w), json_string_length(w));
			at += json_string_length(w);
		}
		line[at] = 0;
	}
	free(fs->cmdline);
	fs->cmdline = line;
	return arr;
}

/*
 * CPU_TOPOLOGY, in revisions that each append to the last:
 *   1: string list core siblings ("sibling sockets"); string list thread siblings
 *   2: { u32 core_id; u32 socket_id; } [nr_cpus_avail]
 *   3: string list die siblings; u32 die_id[nr_cpus_avail]
 * nr_cpus_avail comes from NRCPUS. A later part is present when bytes
 * remain after the earlier ones (that is how perf tells the revisions apart).
 */
json_t *feat_dec_cpu_topology(feat_set *fs, struct fcur *c)
{
	json_t *o = json_object();
	json_t *cores = dec_string_list(c, "core sibling count");
	json_t *threads = cores ? dec_string_list(c, "thread sibling count") : NULL;
	if (!threads) {
		json_decref(cores);
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "sibling_sockets", cores);
	json_object_set_new(o, "sibling_threads", threads);
	if (fcur_left(c) == 0)
		return o;
	if (!fs->nr_cpus_known) {
		/* without NRCPUS the per-cpu tail cannot be split; keep its size */
		json_object_set_new(o, "undecoded_bytes", json_integer((json_int_t)fcur_left(c)));
		return o;
	}
	uint32_t n = fs->nr_cpus_avail;
	if (n > fcur_left(c) / 8) {
		fcur_fail(c, "core/socket ids for %" PRIu32 " cpus need %zu bytes, %zu remain", n,
			 (size_t)n * 8, fcur_left(c));
		json_decref(o);
		return NULL;
	}
	json_t *cpus = json_array();
	for (uint32_t i = 0; i < n; i++) {
		int32_t core = (int32_t)fcur_u32(c, "core_id");
		int32_t socket = (int32_t)fcur_u32(c, "socket_id");
		json_array_append_new(cpus, json_pack("{s:I,s:i,s:i}", "cpu", (json_int_t)i,
						      "core_id", core, "socket_id", socket));
	}
	json_object_set_new(o, "cpus", cpus);
	if (fcur_left(c) == 0)
		return o;
	json_t *dies = dec_string_list(c, "die sibling count");
	if (!dies) {
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "sibling_dies", dies);
	if (n > fcur_left(c) / 4) {
		fcur_fail(c, "die ids for %" PRIu32 " cpus need %zu bytes, %zu remain", n,
			 (size_t)n * 4, fcur_left(c));
		json_decref(o);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		json_object_set_new(json_array_get(cpus, i), "die_id",
				    json_integer((int32_t)fcur_u32(c, "die_id")));
	return o;
}

/* NUMA_TOPOLOGY: u32 nr; { u32 node; u64 mem_total; u64 mem_free; string cpus; } [nr] */
json_t *feat_dec_numa_topology(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = fcur_count(c, 24, "numa node count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t node = fcur_u32(c, "node");
		uint64_t total = fcur_u64(c, "mem_total");
		uint64_t fr = fcur_u64(c, "mem_free");
		json_t *cpus = fcur_jstr(c, "cpu list");
		if (cpus)
			json_array_append_new(arr, json_pack("{s:I,s:I,s:I,s:o}", "node",
							     (json_int_t)node, "mem_total",
							     (json_int_t)total, "mem_free",
							     (json_int_t)fr, "cpus", cpus));
	}
	if (c->failed) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/*
 * CACHE: u32 version (1); u32 nr;
 *   { u32 level; u32 line_size; u32 sets; u32 ways;
 *     string type; string size; string map; } [nr]
 */
json_t *feat_dec_cache(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t version = fcur_u32(c, "cache version");
	if (!c->failed && version != 1) {
		c->off -= 4;
		fcur_fail(c, "cache version %" PRIu32 ", expected 1", version);
	}
	uint32_t nr = fcur_count(c, 28, "cache count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t level = fcur_u32(c, "level");
		uint32_t line = fcur_u32(c, "line_size");
		uint32_t sets = fcur_u32(c, "sets");
		uint32_t ways = fcur_u32(c, "ways");
		json_t *type = fcur_jstr(c, "cache type");
		json_t *size = fcur_jstr(c, "cache size");
		json_t *map = fcur_jstr(c, "cache map");
		if (!c->failed) {
			json_array_append_new(
				arr, json_pack("{s:I,s:I,s:I,s:I,s:o,s:o,s:o}", "level",
					       (json_int_t)level, "line_size", (json_int_t)line, "sets",
					       (json_int_t)sets, "ways", (json_int_t)ways, "type", type,
					       "size", size, "map", map));
		} else {
			json_decref(type);
			json_decref(size);
			json_decref(map);
		}
	}
	if (c->failed) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/* SAMPLE_TIME: u64 first; u64 last (ns, the recording's clock) */
json_t *feat_dec_sample_time(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t first = fcur_u64(c, "first sample time");
	uint64_t last = fcur_u64(c, "last sample time");
	if (c->failed)
		return NULL;
	return json_pack("{s:I,s:I}", "first_ns", (json_int_t)first, "last_ns", (json_int_t)last);
}

/* "0-23,32-199" from a bitmap of nbits bits */
static json_t *bitmap_list(const uint64_t *words, uint64_t nbits)
{
	size_t cap = 64, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return NULL;
	buf[0] = 0;
	uint64_t i = 0;
	while (i < nbits) {
		if (!((words[i / 64] >> (i % 64)) & 1)) {
			i++;
			continue;
		}
		uint64_t start = i;
		while (i + 1 < nbits && ((words[(i + 1) / 64] >> ((i + 1) % 64)) & 1))
			i++;
		char part[48];
		int n = start == i ? snprintf(part, sizeof(part), "%s%" PRIu64, len ? "," : "", start)
				   : snprintf(part, sizeof(part), "%s%" PRIu64 "-%" PRIu64,
					      len ? "," : "", start, i);
		if (len + (size_t)n + 1 > cap) {
			cap = 2 * (len + (size_t)n + 1);
			char *g = realloc(buf, cap);
			if (!g) {
				free(buf);
				return NULL;
			}
			buf = g;
		}
		memcpy(buf + len, part, (size_t)n + 1);
		len += (size_t)n;
		i++;
	}
	json_t *j = json_string(buf);
	free(buf);
	return j;
}

/*
 * MEM_TOPOLOGY (id 22): u64 version (1); u64 block_size; u64 nr;
 *   { u64 node; u64 size; u64 nbits; u64 bitmap[(nbits + 63) / 64]; } [nr]
 * `size` is the number of memory blocks the bitmap spans (as nbits); bit
 * i set means /sys/devices/system/node/nodeN/memory<i> belongs to the node.
 * The node's memory is block_size times the number of bits set.
 */
json_t *feat_dec_mem_topology(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t version = fcur_u64(c, "mem_topology version");
	uint64_t bsize = fcur_u64(c, "block_size");
	uint64_t nr = fcur_u64(c, "node count");
	if (!c->failed && nr > fcur_left(c) / 24) {
		c->off -= 8;
		fcur_fail(c, "node count %" PRIu64 " needs at least %" PRIu64 " bytes, %zu remain",
			 nr, nr * 24, fcur_left(c) - 8);
	}
	if (fcur_spend(c, nr, "memory nodes"))
		return NULL;
	json_t *nodes = json_array();
	for (uint64_t i = 0; i < nr && !c->failed; i++) {
		uint64_t node = fcur_u64(c, "node");
		uint64_t size = fcur_u64(c, "node size");
		uint64_t nbits = fcur_u64(c, "bitmap size");
		if (c->failed)
			break;
		if (nbits > FEAT_MAX_BITMAP_BITS) {
			c->off -= 8;
			fcur_fail(c, "bitmap of %" PRIu64 " bits, more than the %u-bit limit", nbits,
				 FEAT_MAX_BITMAP_BITS);
			break;
		}
		uint64_t nwords = nbits / 64 + (nbits % 64 != 0);
		if (nwords > fcur_left(c) / 8) {
			c->off -= 8;
			fcur_fail(c, "bitmap of %" PRIu64 " bits needs %" PRIu64 " bytes, %zu remain",
				 nbits, nwords * 8, fcur_left(c) - 8);
			break;
		}
		uint64_t *words = malloc((nwords ? nwords : 1) * 8);
		if (!words) {
			fcur_fail(c, "out of memory for a %" PRIu64 "-bit bitmap", nbits);
			break;
		}
		for (uint64_t k = 0; k < nwords; k++)
			words[k] = fcur_u64(c, "bitmap word");
		json_t *list = bitmap_list(words, nbits);
		uint64_t set = 0;
		for (uint64_t k = 0; k < nwords; k++) {
			uint64_t wv = words[k];
			if (k == nwords - 1 && nbits % 64)
				wv &= (1ULL << (nbits % 64)) - 1;
			set += (uint64_t)__builtin_popcountll(wv);
		}
		free(words);
		json_array_append_new(nodes, json_pack("{s:I,s:I,s:I,s:o*}", "node",
						       (json_int_t)node, "size", (json_int_t)size,
						       "size_bytes", (json_int_t)(set * bsize),
						       "blocks", list));
	}
	if (c->failed) {
		json_decref(nodes);
		return NULL;
	}
	return json_pack("{s:I,s:I,s:o}", "version", (json_int_t)version, "block_size",
			 (json_int_t)bsize, "nodes", nodes);
}

/* CLOCKID: u64 clock resolution in ns (perf prints 1000/res as MHz) */
json_t *feat_dec_clockid(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t res = fcur_u64(c, "clockid resolution");
	if (c->failed)
		return NULL;
	return json_pack("{s:I,s:I}", "res_ns", (json_int_t)res, "frequency_mhz",
			 (json_int_t)(res ? 1000 / res : 0));
}

/* { string name; string value; } [nr] into an object name -> value */
static json_t *dec_caps(struct fcur *c, uint32_t nr)
{
	json_t *o = json_object();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		size_t nlen;
		const char *name = fcur_str(c, &nlen, "capability name");
		json_t *val = fcur_jstr(c, "capability value");
		if (!name || !val) {
			json_decref(val);
			break;
		}
		/* keys must be UTF-8 too: the sanitised form */
		json_t *kj = feat_json_bytes(name, nlen);
		if (kj)
			json_object_set_new(o, json_string_value(kj), val);
		else
			json_decref(val);
		json_decref(kj);
	}
	if (c->failed) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* CPU_PMU_CAPS: u32 nr; { string name; string value; } [nr] */
json_t *feat_dec_cpu_pmu_caps(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = fcur_count(c, 8, "capability count");
	return c->failed ? NULL : dec_caps(c, nr);
}

/* CLOCK_DATA: u32 version (1); u32 clockid; u64 wall_clock_ns; u64 clockid_ns */
json_t *feat_dec_clock_data(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t version = fcur_u32(c, "clock_data version");
	uint32_t clockid = fcur_u32(c, "clockid");
	uint64_t tod = fcur_u64(c, "wall_clock_ns");
	uint64_t clk = fcur_u64(c, "clockid_ns");
	if (c->failed)
		return NULL;
	return json_pack("{s:I,s:I,s:I,s:I}", "version", (json_int_t)version, "clockid",
			 (json_int_t)clockid, "wall_clock_ns", (json_int_t)tod, "clockid_ns",
			 (json_int_t)clk);
}

/* HYBRID_TOPOLOGY: u32 nr; { string pmu_name; string cpus; } [nr] */
json_t *feat_dec_hybrid_topology(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = fcur_count(c, 8, "hybrid pmu count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		json_t *name = fcur_jstr(c, "pmu_name");
		json_t *cpus = fcur_jstr(c, "cpus");
		if (name && cpus) {
			json_array_append_new(arr, json_pack("{s:o,s:o}", "pmu_name", name, "cpus",
							     cpus));
		} else {
			json_decref(name);
			json_decref(cpus);
		}
	}
	if (c->failed) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/* PMU_CAPS: u32 nr_pmu; { u32 nr_caps; { string name; string value; } [nr_caps];
 *   string pmu_name; } [nr_pmu] */
json_t *feat_dec_pmu_caps(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = fcur_count(c, 8, "pmu count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t ncaps = fcur_count(c, 8, "capability count");
		json_t *caps = c->failed ? NULL : dec_caps(c, ncaps);
		json_t *name = caps ? fcur_jstr(c, "pmu_name") : NULL;
		if (caps && name) {
			json_array_append_new(arr, json_pack("{s:o,s:I,s:o}", "pmu_name", name,
							     "nr_caps", (json_int_t)ncaps, "caps",
							     caps));
		} else {
			json_decref(caps);
			json_decref(name);
		}
	}
	if (c->failed) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}
