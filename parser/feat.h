/*
 * feat.h - header feature sections: kept raw, decoded on demand
 * (internal to libperfhub-parse; the public face is in perfdata.h).
 *
 * The reader hands every feature section it finds to feat_add(): in file
 * mode from the feature section table after the data, in pipe mode from
 * HEADER_FEATURE records. Decoding never fails the recording: a malformed
 * section decodes to {"error": ...} and leaves a warning.
 */
#ifndef PERFHUB_FEAT_H
#define PERFHUB_FEAT_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"

/* (not "pd_features": perfdata.h has a function of that name) */
typedef struct feat_set feat_set;

feat_set *feat_new(void);
void feat_free(feat_set *fs);

/* Keep a copy of feature `id`'s section bytes (file byte order; `swap` set
 * when that differs from the host's). `offset` is where the section starts
 * in the input, for messages. A second section with the same id replaces
 * the first. Returns 0, or -1 only when out of memory. */
int feat_add(feat_set *fs, int id, const void *data, size_t len, int swap, uint64_t offset);

int feat_has(const feat_set *fs, int id);
size_t feat_list(const feat_set *fs, int *out, size_t max);
/* The section's bytes; NULL if absent or larger than the 64 MiB kept of
 * one section (then it decodes to {"error"}, TRACING_DATA to its size). */
const void *feat_raw(const feat_set *fs, int id, size_t *len);

/*
 * Decoded JSON text of feature `id` (malloc'ed; caller frees), NULL if absent.
 * Shapes (event_desc's u64 fields above INT64_MAX are decimal strings):
 *   tracing_data     {"size"}
 *   build_id         [{"pid", "misc", "build_id" (hex, its size), "filename"}]
 *   hostname, osrelease, version, arch, cpudesc, cpuid   "string"
 *   nrcpus           {"nrcpus_online", "nrcpus_avail"}
 *   total_mem        kB (number)
 *   cmdline          ["word", ...]
 *   event_desc       [{"name", "type", "size", "config", "sample_period" or
 *                      "sample_freq", "sample_type", "read_format", "flags", "ids"}]
 *   cpu_topology     {"sibling_sockets", "sibling_threads" [, "cpus": [{"cpu",
 *                      "core_id", "socket_id" [, "die_id"]}] [, "sibling_dies"]]}
 *                    (without NRCPUS, the per-cpu part as "undecoded_bytes")
 *   numa_topology    [{"node", "mem_total", "mem_free" (kB), "cpus"}]
 *   branch_stack, stat   true
 *   pmu_mappings     [{"name", "type"}]
 *   group_desc       [{"name", "leader_idx", "nr_members"}]
 *   auxtrace         {"nr", "entries": [{"file_offset", "size"}]}
 *   cache            [{"level", "line_size", "sets", "ways", "type", "size", "map"}]
 *   sample_time      {"first_ns", "last_ns"}
 *   mem_topology     {"version", "block_size", "nodes": [{"node", "size",
 *                      "size_bytes", "blocks" ("0-23,32-199")}]}
 *   clockid          {"res_ns", "frequency_mhz"}
 *   dir_format       {"version"}
 *   bpf_prog_info    [{"info_len", "data_len" [, "type", "id", "tag"] [, "name",
 *                      "sub_progs": [{"addr" ("0x..."), ["size"], ["tag"]}]]}]
 *   bpf_btf          [{"id", "data_size"}]
 *   compressed       {"version", "type", "type_name", "level", "ratio", "mmap_len"}
 *   cpu_pmu_caps     {"cap": "value", ...}
 *   clock_data       {"version", "clockid", "wall_clock_ns", "clockid_ns"}
 *   hybrid_topology  [{"pmu_name", "cpus"}]
 *   pmu_caps         [{"pmu_name", "nr_caps", "caps": {"cap": "value", ...}}]
 *   an unknown id    {"id", "size", "raw": true}
 *   a malformed one  {"error": "offset N (0xN): what was expected"}
 */
char *feat_json(const feat_set *fs, int id);

/* Header facts decoded from the features seen so far. */
const pd_header *feat_header(feat_set *fs);

/* EVENT_DESC: the event name recorded for sample id `id`, or NULL.
 * Used by the reader to name attrs in file mode. */
const char *feat_event_name_by_id(feat_set *fs, uint64_t id);
/* EVENT_DESC: the name of the i-th described event (order as stored), or
 * NULL; with its attr's config/type for matching when ids are missing. */
size_t feat_nr_event_desc(feat_set *fs);
const char *feat_event_desc(feat_set *fs, size_t i, uint32_t *type, uint64_t *config);

/* Warnings produced while decoding (malformed sections, unknown ids). */
size_t feat_nr_warnings(const feat_set *fs);
const char *feat_warning(const feat_set *fs, size_t i);

#endif
