/*
 * feat-decode.h - what the feature-section decoders share (internal to
 * libperfhub-parse): the bounds-checked cursor over one section, the set of
 * sections with the facts decoded from them, and one decoder per feature.
 * feat.c keeps the set; feat-host.c decodes the sections that describe the
 * machine, feat-events.c those that describe the events and what ran.
 */
#ifndef PERFHUB_FEAT_DECODE_H
#define PERFHUB_FEAT_DECODE_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "feat.h"

/* A bounds-checked cursor over one section; the first failure sticks. */
struct fcur {
	const uint8_t *p;
	size_t len, off;
	int swap;
	uint64_t base;		/* input offset of p[0], for messages */
	size_t budget;		/* list entries this section may still decode to */
	int failed;
	char err[200];
};

/*
 * Limits on what one section may decode to: the JSON of a list entry costs
 * far more memory than its bytes, so a hostile section could otherwise
 * make a few MB of input into GBs of JSON. Real files stay far below:
 * BUILD_ID lists a few thousand DSOs, event ids are events x cpus.
 */
#define FEAT_MAX_ENTRIES	(1u << 16)	/* list entries per section */
#define FEAT_MAX_BITMAP_BITS	(1u << 22)	/* MEM_TOPOLOGY bits per node */
#define FEAT_MAX_SECTION	(64u << 20)	/* bytes kept of one section */

/* feat-cursor.c: reads that check the bytes left first; each failure names
 * the offset and `what` was expected, and sticks. */
void fcur_fail(struct fcur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t fcur_left(const struct fcur *c);
int fcur_need(struct fcur *c, size_t n, const char *what);
uint32_t fcur_u32(struct fcur *c, const char *what);
uint64_t fcur_u64(struct fcur *c, const char *what);
const uint8_t *fcur_bytes(struct fcur *c, size_t n, const char *what);
/* Takes n list entries from the section's budget (FEAT_MAX_ENTRIES). */
int fcur_spend(struct fcur *c, uint64_t n, const char *what);
/* A count of items each at least `min_item` bytes long: larger than what
 * the remaining bytes can hold means the section is malformed (and keeps
 * a hostile count from driving an allocation or a long loop). */
uint32_t fcur_count(struct fcur *c, size_t min_item, const char *what);
/* perf_header_string: u32 len; char str[len], NUL-terminated and padded.
 * Returns the string (up to its first NUL, or all len bytes), not copied. */
const char *fcur_str(struct fcur *c, size_t *slen, const char *what);
json_t *fcur_jstr(struct fcur *c, const char *what);

/* Loads at the file's byte order. */
uint16_t feat_get16(const uint8_t *p, int swap);
uint32_t feat_get32(const uint8_t *p, int swap);
uint64_t feat_get64(const uint8_t *p, int swap);

/* JSON text from untrusted bytes: jansson wants UTF-8, so anything that is
 * not valid UTF-8 is replaced byte by byte with '?'. */
json_t *feat_json_bytes(const char *s, size_t n);
/* A u64 as JSON: jansson's integers are signed, so the rare value above
 * INT64_MAX (a raw config with bit 63) is given as a decimal string. */
json_t *feat_json_u64(uint64_t v);
/* At most 64 bytes as lower-case hex. */
json_t *feat_json_hex(const uint8_t *p, size_t n);

struct event_desc {
	char *name;
	pd_attr attr;
	uint64_t *ids;
	size_t nr_ids;
};

struct id_name {
	uint64_t id;
	size_t desc;		/* index into event_descs */
};

struct feat_section {
	uint8_t *data;		/* owned copy, file byte order */
	size_t len;
	int swap;
	uint64_t offset;	/* where the section starts in the input */
	int present;
	json_t *json;		/* decoded value, or {"error": ...} */
	int malformed;
};

#define FEAT_MAX_WARNINGS 256	/* beyond this, warnings are only counted */

struct feat_set {
	struct feat_section sec[PD_FEAT_MAX];
	char **warnings;
	size_t nr_warnings;
	uint64_t dropped_warnings;

	/* decoded facts */
	int nr_cpus_known;
	uint32_t nr_cpus_avail, nr_cpus_online;
	struct event_desc *descs;
	size_t nr_descs;
	struct id_name *id_names;	/* sorted by id */
	size_t nr_id_names;
	pd_build_id *build_ids;
	size_t nr_build_ids;
	char *cmdline;
	pd_header header;
};

/* A decoder reads the layout in the comment above it; NULL (with c->failed
 * set, or out of memory) when the section does not hold together. */
typedef json_t *(*decode_fn)(feat_set *fs, struct fcur *c);

/* feat.c: forgets EVENT_DESC's names and ids (before a new one is decoded). */
void feat_free_event_descs(feat_set *fs);

/* feat-host.c */
json_t *feat_dec_string(feat_set *fs, struct fcur *c);
json_t *feat_dec_nrcpus(feat_set *fs, struct fcur *c);
json_t *feat_dec_total_mem(feat_set *fs, struct fcur *c);
json_t *feat_dec_cmdline(feat_set *fs, struct fcur *c);
json_t *feat_dec_cpu_topology(feat_set *fs, struct fcur *c);
json_t *feat_dec_numa_topology(feat_set *fs, struct fcur *c);
json_t *feat_dec_cache(feat_set *fs, struct fcur *c);
json_t *feat_dec_sample_time(feat_set *fs, struct fcur *c);
json_t *feat_dec_mem_topology(feat_set *fs, struct fcur *c);
json_t *feat_dec_clockid(feat_set *fs, struct fcur *c);
json_t *feat_dec_cpu_pmu_caps(feat_set *fs, struct fcur *c);
json_t *feat_dec_clock_data(feat_set *fs, struct fcur *c);
json_t *feat_dec_hybrid_topology(feat_set *fs, struct fcur *c);
json_t *feat_dec_pmu_caps(feat_set *fs, struct fcur *c);

/* feat-events.c */
json_t *feat_dec_tracing_data(feat_set *fs, struct fcur *c);
json_t *feat_dec_build_id(feat_set *fs, struct fcur *c);
json_t *feat_dec_event_desc(feat_set *fs, struct fcur *c);
json_t *feat_dec_flag(feat_set *fs, struct fcur *c);
json_t *feat_dec_pmu_mappings(feat_set *fs, struct fcur *c);
json_t *feat_dec_group_desc(feat_set *fs, struct fcur *c);
json_t *feat_dec_auxtrace(feat_set *fs, struct fcur *c);
json_t *feat_dec_dir_format(feat_set *fs, struct fcur *c);
json_t *feat_dec_bpf_prog_info(feat_set *fs, struct fcur *c);
json_t *feat_dec_bpf_btf(feat_set *fs, struct fcur *c);
json_t *feat_dec_compressed(feat_set *fs, struct fcur *c);

#endif
