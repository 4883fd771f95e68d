/*
 * feat.c - header feature sections: stored raw as the reader finds them,
 * decoded into JSON and pd_header facts.
 *
 * Each section is copied (the reader's buffer may be a stream window) and
 * decoded at once, so that a malformed one leaves its warning while the
 * reader still knows where it was. Every length and count read from a
 * section is checked against the bytes that remain in it; a section that
 * does not hold together decodes to {"error": ...}.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "feat.h"

/* ---- reading a section ---------------------------------------------------- */

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

static void cur_fail(struct fcur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void cur_fail(struct fcur *c, const char *fmt, ...)
{
	if (c->failed)
		return;
	c->failed = 1;
	int n = snprintf(c->err, sizeof(c->err), "offset %" PRIu64 " (0x%" PRIx64 "): ",
			 c->base + c->off, c->base + c->off);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err + n, sizeof(c->err) - (size_t)n, fmt, ap);
	va_end(ap);
}

static size_t cur_left(const struct fcur *c)
{
	return c->failed ? 0 : c->len - c->off;
}

static int cur_need(struct fcur *c, size_t n, const char *what)
{
	if (c->failed)
		return -1;
	if (c->len - c->off < n) {
		cur_fail(c, "%s needs %zu bytes, %zu remain in the section", what, n,
			 c->len - c->off);
		return -1;
	}
	return 0;
}

static uint16_t get16(const uint8_t *p, int swap)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return swap ? __builtin_bswap16(v) : v;
}

static uint32_t get32(const uint8_t *p, int swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t get64(const uint8_t *p, int swap)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

static uint32_t cur_u32(struct fcur *c, const char *what)
{
	if (cur_need(c, 4, what))
		return 0;
	uint32_t v = get32(c->p + c->off, c->swap);
	c->off += 4;
	return v;
}

static uint64_t cur_u64(struct fcur *c, const char *what)
{
	if (cur_need(c, 8, what))
		return 0;
	uint64_t v = get64(c->p + c->off, c->swap);
	c->off += 8;
	return v;
}

static const uint8_t *cur_bytes(struct fcur *c, size_t n, const char *what)
{
	if (cur_need(c, n, what))
		return NULL;
	const uint8_t *p = c->p + c->off;
	c->off += n;
	return p;
}

/*
 * Limits on what one section may decode to: the JSON of a list entry costs
 * far more memory than its bytes, so a hostile section could otherwise
 * make a few MB of input into GBs of JSON. Real files stay far below:
 * BUILD_ID lists a few thousand DSOs, event ids are events x cpus.
 */
#define FEAT_MAX_ENTRIES	(1u << 16)	/* list entries per section */
#define FEAT_MAX_BITMAP_BITS	(1u << 22)	/* MEM_TOPOLOGY bits per node */
#define FEAT_MAX_SECTION	(64u << 20)	/* bytes kept of one section */

static int cur_spend(struct fcur *c, uint64_t n, const char *what)
{
	if (c->failed)
		return -1;
	if (n > c->budget) {
		cur_fail(c, "%s: more than %u entries in one section (limit)", what,
			 FEAT_MAX_ENTRIES);
		return -1;
	}
	c->budget -= (size_t)n;
	return 0;
}

/*
 * A count of items each at least `min_item` bytes long: larger than what
 * the remaining bytes can hold means the section is malformed (and keeps
 * a hostile count from driving an allocation or a long loop).
 */
static uint32_t cur_count(struct fcur *c, size_t min_item, const char *what)
{
	size_t at = c->off;
	uint32_t n = cur_u32(c, what);
	if (c->failed)
		return 0;
	if (min_item && n > cur_left(c) / min_item) {
		c->off = at;
		cur_fail(c, "%s %" PRIu32 " needs at least %zu bytes, %zu remain", what, n,
			 (size_t)n * min_item, cur_left(c) - 4);
		return 0;
	}
	if (cur_spend(c, n, what)) {
		c->off = at;
		return 0;
	}
	return n;
}

/* JSON text from untrusted bytes: jansson wants UTF-8, so anything that is
 * not valid UTF-8 is replaced byte by byte with '?'. */
static json_t *json_bytes(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	if (j)
		return j;
	char *copy = malloc(n + 1);
	if (!copy)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		copy[i] = (ch >= 0x80 || (ch < 0x20 && ch != '\t' && ch != '\n')) ? '?' : (char)ch;
	}
	j = json_stringn(copy, n);
	free(copy);
	return j;
}

/* A u64 as JSON: jansson's integers are signed, so the rare value above
 * INT64_MAX (a raw config with bit 63) is given as a decimal string. */
static json_t *json_u64(uint64_t v)
{
	if (v <= INT64_MAX)
		return json_integer((json_int_t)v);
	char buf[24];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return json_string(buf);
}

/*
 * perf_header_string: u32 len; char str[len], NUL-terminated and padded.
 * Returns the string (up to its first NUL, or all len bytes), not copied.
 */
static const char *cur_str(struct fcur *c, size_t *slen, const char *what)
{
	uint32_t len = cur_u32(c, what);
	const uint8_t *s = cur_bytes(c, len, what);
	if (!s)
		return NULL;
	const uint8_t *nul = memchr(s, 0, len);
	*slen = nul ? (size_t)(nul - s) : len;
	return (const char *)s;
}

static json_t *cur_jstr(struct fcur *c, const char *what)
{
	size_t n;
	const char *s = cur_str(c, &n, what);
	return s ? json_bytes(s, n) : NULL;
}

/* ---- the set of sections ------------------------------------------------ */

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

static void free_event_descs(feat_set *fs)
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
	free_event_descs(fs);
	free(fs->build_ids);
	free(fs->cmdline);
	free(fs);
}

/* ---- decoders: one per feature, each reading the layout in its comment ---- */

typedef json_t *(*decode_fn)(feat_set *fs, struct fcur *c);

/* perf_header_string: the whole section is one string */
static json_t *dec_string(feat_set *fs, struct fcur *c)
{
	(void)fs;
	return cur_jstr(c, "string");
}

/* TRACING_DATA: tracefs format files and kallsyms; only its size is reported */
static json_t *dec_tracing_data(feat_set *fs, struct fcur *c)
{
	(void)fs;
	return json_pack("{s:I}", "size", (json_int_t)c->len);
}

static json_t *hex_json(const uint8_t *p, size_t n)
{
	char buf[2 * 64 + 1];
	if (n > 64)
		n = 64;
	for (size_t i = 0; i < n; i++)
		snprintf(buf + 2 * i, 3, "%02x", p[i]);
	buf[2 * n] = 0;
	return json_string(buf);
}

#define BUILD_ID_MISC_SIZE (1u << 15)	/* PERF_RECORD_MISC_BUILD_ID_SIZE */

/*
 * BUILD_ID: a sequence of build_id_event records:
 *   u32 type; u16 misc; u16 size;   (perf_event_header; size = whole entry)
 *   s32 pid; u8 build_id[20]; u8 id_size; u8 reserved[3];
 *   char filename[size - 36], NUL-padded
 * id_size is meaningful when misc has BUILD_ID_SIZE, else the id is 20 bytes.
 */
static json_t *dec_build_id(feat_set *fs, struct fcur *c)
{
	json_t *arr = json_array();
	size_t n = 0, cap = 0;
	pd_build_id *ids = NULL;

	while (cur_left(c) > 0) {
		size_t start = c->off;
		if (cur_need(c, 36, "build_id entry"))
			break;
		const uint8_t *e = c->p + c->off;
		uint16_t misc = get16(e + 4, c->swap);
		uint16_t size = get16(e + 6, c->swap);
		if (size < 36 || size > cur_left(c)) {
			cur_fail(c, "build_id entry size %u outside 36..%zu", size, cur_left(c));
			break;
		}
		if (cur_spend(c, 1, "build_id entries"))
			break;
		uint32_t pid = get32(e + 8, c->swap);
		uint8_t idlen = (misc & BUILD_ID_MISC_SIZE) ? e[32] : 20;
		if (idlen > 20)
			idlen = 20;
		const char *fname = (const char *)e + 36;
		size_t flen = strnlen(fname, size - 36u);
		json_t *fj = json_bytes(fname, flen);
		json_t *entry = json_pack("{s:i,s:i,s:o,s:O}", "pid", (int32_t)pid, "misc", misc,
					  "build_id", hex_json(e + 12, idlen), "filename", fj);
		json_decref(fj);	/* the entry holds it now (or nothing does) */
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			pd_build_id *g = realloc(ids, ncap * sizeof(*g));
			if (g) {
				ids = g;
				cap = ncap;
			}
		}
		if (!entry || n == cap) {
			json_decref(entry);
			cur_fail(c, "out of memory decoding build ids");
			break;
		}
		if (json_array_append_new(arr, entry)) {
			cur_fail(c, "out of memory decoding build ids");
			break;
		}
		pd_build_id *b = &ids[n++];
		memset(b, 0, sizeof(*b));
		b->pid = pid;
		b->misc = misc;
		memcpy(b->build_id, e + 12, 20);
		b->size = idlen;
		b->filename = json_string_value(fj);	/* owned by the section's JSON */
		c->off = start + size;
	}
	if (c->failed) {
		free(ids);
		json_decref(arr);
		return NULL;
	}
	free(fs->build_ids);
	fs->build_ids = ids;
	fs->nr_build_ids = n;
	return arr;
}

/* NRCPUS: u32 nr_cpus_avail; u32 nr_cpus_online (perf's reading order) */
static json_t *dec_nrcpus(feat_set *fs, struct fcur *c)
{
	uint32_t avail = cur_u32(c, "nr_cpus_avail");
	uint32_t online = cur_u32(c, "nr_cpus_online");
	if (c->failed)
		return NULL;
	fs->nr_cpus_known = 1;
	fs->nr_cpus_avail = avail;
	fs->nr_cpus_online = online;
	return json_pack("{s:I,s:I}", "nrcpus_online", (json_int_t)online, "nrcpus_avail",
			 (json_int_t)avail);
}

/* TOTAL_MEM: u64 kB */
static json_t *dec_total_mem(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t v = cur_u64(c, "total_mem");
	return c->failed ? NULL : json_integer((json_int_t)v);
}

/* string list: u32 nr; perf_header_string[nr] */
static json_t *dec_string_list(struct fcur *c, const char *what)
{
	uint32_t nr = cur_count(c, 4, what);
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		json_t *s = cur_jstr(c, what);
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
static json_t *dec_cmdline(feat_set *fs, struct fcur *c)
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

#define ATTR_SIZE_VER0 64

/* Reverse the bits of each byte of a bitfield word, as perf does for attrs
 * written by a machine of the other byte order. */
static uint64_t swap_bitfield(uint64_t v)
{
	uint8_t b[8];
	memcpy(b, &v, 8);
	for (int i = 0; i < 8; i++) {
		uint8_t x = b[i], r = 0;
		for (int k = 0; k < 8; k++)
			r |= (uint8_t)(((x >> k) & 1) << (7 - k));
		b[i] = r;
	}
	memcpy(&v, b, 8);
	return v;
}

/* perf_event_attr of `size` bytes (>= 64) at p: fields beyond size stay 0 */
static void decode_attr(const uint8_t *p, size_t size, int swap, pd_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = get32(p + 0, swap);
	a->size = get32(p + 4, swap);
	a->config = get64(p + 8, swap);
	a->sample_period = get64(p + 16, swap);
	a->sample_type = get64(p + 24, swap);
	a->read_format = get64(p + 32, swap);
	/* the bitfield word is not byte-swapped: the other byte order's
	 * compiler laid its bits out from the other end of each byte */
	a->flags = get64(p + 40, 0);
	if (swap)
		a->flags = swap_bitfield(a->flags);
	a->wakeup_events = get32(p + 48, swap);
	a->bp_type = get32(p + 52, swap);
	a->config1 = get64(p + 56, swap);
	if (size >= 72)
		a->config2 = get64(p + 64, swap);
	if (size >= 80)
		a->branch_sample_type = get64(p + 72, swap);
	if (size >= 96) {
		a->sample_regs_user = get64(p + 80, swap);
		a->sample_stack_user = get32(p + 88, swap);
		a->clockid = (int32_t)get32(p + 92, swap);
	}
	if (size >= 104)
		a->sample_regs_intr = get64(p + 96, swap);
	if (size >= 112) {
		a->aux_watermark = get32(p + 104, swap);
		a->sample_max_stack = get16(p + 108, swap);
	}
	if (size >= 120)
		a->aux_sample_size = get32(p + 112, swap);
	if (size >= 128)
		a->sig_data = get64(p + 120, swap);
	if (size >= 136)
		a->config3 = get64(p + 128, swap);
}

static int cmp_id_name(const void *a, const void *b)
{
	uint64_t x = ((const struct id_name *)a)->id, y = ((const struct id_name *)b)->id;
	return x < y ? -1 : x > y;
}

/*
 * EVENT_DESC:
 *   u32 nr; u32 attr_size;
 *   { perf_event_attr attr (attr_size bytes); u32 nr_ids;
 *     perf_header_string name; u64 ids[nr_ids]; } [nr]
 */
static json_t *dec_event_desc(feat_set *fs, struct fcur *c)
{
	uint32_t nr = cur_u32(c, "event count");
	uint32_t attr_size = cur_u32(c, "attr_size");
	if (c->failed)
		return NULL;
	if (attr_size < ATTR_SIZE_VER0 || attr_size > cur_left(c)) {
		size_t left = cur_left(c);
		c->off -= 4;
		cur_fail(c, "attr_size %" PRIu32 " outside %d..%zu", attr_size, ATTR_SIZE_VER0,
			 left);
		return NULL;
	}
	size_t min_event = (size_t)attr_size + 8;
	if (nr > cur_left(c) / min_event) {
		c->off -= 8;
		cur_fail(c, "event count %" PRIu32 " needs at least %zu bytes each, %zu remain", nr,
			 min_event, cur_left(c) - 8);
		return NULL;
	}
	if (cur_spend(c, nr, "events"))
		return NULL;
	struct event_desc *descs = calloc(nr ? nr : 1, sizeof(*descs));
	json_t *arr = json_array();
	size_t nr_ids_total = 0;
	uint32_t i;
	for (i = 0; i < nr && descs; i++) {
		struct event_desc *d = &descs[i];
		const uint8_t *ap = cur_bytes(c, attr_size, "attr");
		if (!ap)
			break;
		decode_attr(ap, attr_size, c->swap, &d->attr);
		uint32_t nr_ids = cur_u32(c, "nr_ids");
		size_t slen;
		const char *name = cur_str(c, &slen, "event name");
		if (!name)
			break;
		if (nr_ids > cur_left(c) / 8) {
			cur_fail(c, "nr_ids %" PRIu32 " needs %zu bytes, %zu remain", nr_ids,
				 (size_t)nr_ids * 8, cur_left(c));
			break;
		}
		if (cur_spend(c, nr_ids, "event ids"))
			break;
		d->name = strndup(name, slen);
		d->ids = malloc((nr_ids ? nr_ids : 1) * sizeof(uint64_t));
		if (!d->name || !d->ids)
			break;
		json_t *ids = json_array();
		for (uint32_t k = 0; k < nr_ids; k++) {
			d->ids[k] = cur_u64(c, "id");
			json_array_append_new(ids, json_u64(d->ids[k]));
		}
		d->nr_ids = nr_ids;
		nr_ids_total += nr_ids;
		pd_attr *a = &d->attr;
		json_t *ev = json_pack(
			"{s:o,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o}", "name", json_bytes(name, slen), "type",
			(json_int_t)a->type, "size", (json_int_t)a->size, "config", json_u64(a->config),
			(a->flags & PD_ATTR_FREQ) ? "sample_freq" : "sample_period",
			json_u64(a->sample_period), "sample_type", json_u64(a->sample_type),
			"read_format", json_u64(a->read_format), "flags", json_u64(a->flags), "ids",
			ids);
		json_array_append_new(arr, ev);
	}
	if (!descs || i < nr || c->failed) {
		if (!c->failed)
			cur_fail(c, "out of memory decoding event %" PRIu32, i);
		for (uint32_t k = 0; descs && k < nr; k++) {
			free(descs[k].name);
			free(descs[k].ids);
		}
		free(descs);
		json_decref(arr);
		return NULL;
	}
	struct id_name *map = malloc((nr_ids_total ? nr_ids_total : 1) * sizeof(*map));
	size_t m = 0;
	for (i = 0; i < nr && map; i++)
		for (size_t k = 0; k < descs[i].nr_ids; k++)
			map[m++] = (struct id_name){ descs[i].ids[k], i };
	if (map)
		qsort(map, m, sizeof(*map), cmp_id_name);
	free_event_descs(fs);
	fs->descs = descs;
	fs->nr_descs = nr;
	fs->id_names = map;
	fs->nr_id_names = map ? m : 0;
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
static json_t *dec_cpu_topology(feat_set *fs, struct fcur *c)
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
	if (cur_left(c) == 0)
		return o;
	if (!fs->nr_cpus_known) {
		/* without NRCPUS the per-cpu tail cannot be split; keep its size */
		json_object_set_new(o, "undecoded_bytes", json_integer((json_int_t)cur_left(c)));
		return o;
	}
	uint32_t n = fs->nr_cpus_avail;
	if (n > cur_left(c) / 8) {
		cur_fail(c, "core/socket ids for %" PRIu32 " cpus need %zu bytes, %zu remain", n,
			 (size_t)n * 8, cur_left(c));
		json_decref(o);
		return NULL;
	}
	json_t *cpus = json_array();
	for (uint32_t i = 0; i < n; i++) {
		int32_t core = (int32_t)cur_u32(c, "core_id");
		int32_t socket = (int32_t)cur_u32(c, "socket_id");
		json_array_append_new(cpus, json_pack("{s:I,s:i,s:i}", "cpu", (json_int_t)i,
						      "core_id", core, "socket_id", socket));
	}
	json_object_set_new(o, "cpus", cpus);
	if (cur_left(c) == 0)
		return o;
	json_t *dies = dec_string_list(c, "die sibling count");
	if (!dies) {
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "sibling_dies", dies);
	if (n > cur_left(c) / 4) {
		cur_fail(c, "die ids for %" PRIu32 " cpus need %zu bytes, %zu remain", n,
			 (size_t)n * 4, cur_left(c));
		json_decref(o);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		json_object_set_new(json_array_get(cpus, i), "die_id",
				    json_integer((int32_t)cur_u32(c, "die_id")));
	return o;
}

/* NUMA_TOPOLOGY: u32 nr; { u32 node; u64 mem_total; u64 mem_free; string cpus; } [nr] */
static json_t *dec_numa_topology(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = cur_count(c, 24, "numa node count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t node = cur_u32(c, "node");
		uint64_t total = cur_u64(c, "mem_total");
		uint64_t fr = cur_u64(c, "mem_free");
		json_t *cpus = cur_jstr(c, "cpu list");
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

/* BRANCH_STACK, STAT: flags without content */
static json_t *dec_flag(feat_set *fs, struct fcur *c)
{
	(void)fs;
	(void)c;
	return json_true();
}

/* PMU_MAPPINGS: u32 nr; { u32 type; string name; } [nr] */
static json_t *dec_pmu_mappings(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = cur_count(c, 8, "pmu count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t type = cur_u32(c, "pmu type");
		json_t *name = cur_jstr(c, "pmu name");
		if (name)
			json_array_append_new(arr, json_pack("{s:o,s:I}", "name", name, "type",
							     (json_int_t)type));
	}
	if (c->failed) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/* GROUP_DESC: u32 nr; { string name; u32 leader_idx; u32 nr_members; } [nr] */
static json_t *dec_group_desc(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = cur_count(c, 12, "group count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		json_t *name = cur_jstr(c, "group name");
		uint32_t leader = cur_u32(c, "leader_idx");
		uint32_t members = cur_u32(c, "nr_members");
		if (!c->failed)
			json_array_append_new(arr, json_pack("{s:o,s:I,s:I}", "name", name,
							     "leader_idx", (json_int_t)leader,
							     "nr_members", (json_int_t)members));
		else
			json_decref(name);
	}
	if (c->failed) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/* AUXTRACE: u64 nr; { u64 file_offset; u64 size; } [nr] (the AUX area index) */
static json_t *dec_auxtrace(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t nr = cur_u64(c, "auxtrace index count");
	if (!c->failed && nr > cur_left(c) / 16) {
		c->off -= 8;
		cur_fail(c, "auxtrace index count %" PRIu64 " needs %" PRIu64 " bytes, %zu remain",
			 nr, nr * 16, cur_left(c) - 8);
	}
	if (cur_spend(c, nr, "auxtrace index entries"))
		return NULL;
	json_t *entries = json_array();
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t off = cur_u64(c, "file_offset");
		uint64_t sz = cur_u64(c, "size");
		json_array_append_new(entries, json_pack("{s:I,s:I}", "file_offset",
							 (json_int_t)off, "size", (json_int_t)sz));
	}
	return json_pack("{s:I,s:o}", "nr", (json_int_t)nr, "entries", entries);
}

/*
 * CACHE: u32 version (1); u32 nr;
 *   { u32 level; u32 line_size; u32 sets; u32 ways;
 *     string type; string size; string map; } [nr]
 */
static json_t *dec_cache(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t version = cur_u32(c, "cache version");
	if (!c->failed && version != 1) {
		c->off -= 4;
		cur_fail(c, "cache version %" PRIu32 ", expected 1", version);
	}
	uint32_t nr = cur_count(c, 28, "cache count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t level = cur_u32(c, "level");
		uint32_t line = cur_u32(c, "line_size");
		uint32_t sets = cur_u32(c, "sets");
		uint32_t ways = cur_u32(c, "ways");
		json_t *type = cur_jstr(c, "cache type");
		json_t *size = cur_jstr(c, "cache size");
		json_t *map = cur_jstr(c, "cache map");
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
static json_t *dec_sample_time(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t first = cur_u64(c, "first sample time");
	uint64_t last = cur_u64(c, "last sample time");
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
static json_t *dec_mem_topology(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t version = cur_u64(c, "mem_topology version");
	uint64_t bsize = cur_u64(c, "block_size");
	uint64_t nr = cur_u64(c, "node count");
	if (!c->failed && nr > cur_left(c) / 24) {
		c->off -= 8;
		cur_fail(c, "node count %" PRIu64 " needs at least %" PRIu64 " bytes, %zu remain",
			 nr, nr * 24, cur_left(c) - 8);
	}
	if (cur_spend(c, nr, "memory nodes"))
		return NULL;
	json_t *nodes = json_array();
	for (uint64_t i = 0; i < nr && !c->failed; i++) {
		uint64_t node = cur_u64(c, "node");
		uint64_t size = cur_u64(c, "node size");
		uint64_t nbits = cur_u64(c, "bitmap size");
		if (c->failed)
			break;
		if (nbits > FEAT_MAX_BITMAP_BITS) {
			c->off -= 8;
			cur_fail(c, "bitmap of %" PRIu64 " bits, more than the %u-bit limit", nbits,
				 FEAT_MAX_BITMAP_BITS);
			break;
		}
		uint64_t nwords = nbits / 64 + (nbits % 64 != 0);
		if (nwords > cur_left(c) / 8) {
			c->off -= 8;
			cur_fail(c, "bitmap of %" PRIu64 " bits needs %" PRIu64 " bytes, %zu remain",
				 nbits, nwords * 8, cur_left(c) - 8);
			break;
		}
		uint64_t *words = malloc((nwords ? nwords : 1) * 8);
		if (!words) {
			cur_fail(c, "out of memory for a %" PRIu64 "-bit bitmap", nbits);
			break;
		}
		for (uint64_t k = 0; k < nwords; k++)
			words[k] = cur_u64(c, "bitmap word");
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
static json_t *dec_clockid(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t res = cur_u64(c, "clockid resolution");
	if (c->failed)
		return NULL;
	return json_pack("{s:I,s:I}", "res_ns", (json_int_t)res, "frequency_mhz",
			 (json_int_t)(res ? 1000 / res : 0));
}

/* DIR_FORMAT: u64 version */
static json_t *dec_dir_format(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t v = cur_u64(c, "dir_format version");
	return c->failed ? NULL : json_pack("{s:I}", "version", (json_int_t)v);
}

/*
 * BPF_PROG_INFO: u32 nr;
 *   { u32 info_len; u32 data_len; u64 arrays; u8 info[info_len]; u8 data[data_len]; } [nr]
 * info is the kernel's struct bpf_prog_info: u32 type @0; u32 id @4; u8 tag[8] @8;
 * char name[16] @64; u32 nr_jited_ksyms @104; u32 nr_jited_func_lens @108;
 * u64 jited_ksyms @112; u64 jited_func_lens @120; u32 nr_prog_tags @180;
 * u64 prog_tags @184. perf stores the array pointers as offsets into data.
 * Decoded: the summary and each jited sub-program's address, size and tag.
 */
#define BPF_INFO_SUBPROGS_LEN 192	/* info bytes needed for the arrays above */

/* nr elements of elem bytes at offset off of a data_len-byte area, or NULL */
static const uint8_t *bpf_array(const uint8_t *data, uint32_t data_len, uint64_t off, uint64_t nr,
				size_t elem)
{
	if (off > data_len || nr > (data_len - off) / elem)
		return NULL;
	return data + off;
}

static json_t *bpf_sub_progs(struct fcur *c, const uint8_t *info, const uint8_t *data,
			     uint32_t data_len)
{
	uint32_t nr = get32(info + 104, c->swap);
	uint32_t nr_lens = get32(info + 108, c->swap);
	uint32_t nr_tags = get32(info + 180, c->swap);
	const uint8_t *ksyms = bpf_array(data, data_len, get64(info + 112, c->swap), nr, 8);
	const uint8_t *lens = nr_lens == nr
				      ? bpf_array(data, data_len, get64(info + 120, c->swap), nr, 4)
				      : NULL;
	const uint8_t *tags = nr_tags == nr
				      ? bpf_array(data, data_len, get64(info + 184, c->swap), nr, 8)
				      : NULL;
	if (!ksyms || cur_spend(c, nr, "bpf sub-programs"))
		return NULL;
	json_t *arr = json_array();
	for (uint32_t k = 0; k < nr; k++) {
		char addr[24];
		snprintf(addr, sizeof(addr), "0x%" PRIx64, get64(ksyms + 8 * k, c->swap));
		json_t *sp = json_pack("{s:s}", "addr", addr);	/* kernel addresses: hex */
		if (lens)
			json_object_set_new(sp, "size", json_integer(get32(lens + 4 * k, c->swap)));
		if (tags)
			json_object_set_new(sp, "tag", hex_json(tags + 8 * k, 8));
		json_array_append_new(arr, sp);
	}
	return arr;
}
static json_t *dec_bpf_prog_info(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = cur_count(c, 16, "bpf program count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t info_len = cur_u32(c, "info_len");
		uint32_t data_len = cur_u32(c, "data_len");
		cur_u64(c, "arrays");
		const uint8_t *info = cur_bytes(c, info_len, "bpf_prog_info");
		const uint8_t *data = cur_bytes(c, data_len, "bpf program data");
		if (c->failed)
			break;
		json_t *p = json_pack("{s:I,s:I}", "info_len", (json_int_t)info_len, "data_len",
				      (json_int_t)data_len);
		if (info_len >= 16) {
			json_object_set_new(p, "type", json_integer(get32(info, c->swap)));
			json_object_set_new(p, "id", json_integer(get32(info + 4, c->swap)));
			json_object_set_new(p, "tag", hex_json(info + 8, 8));
		}
		if (info_len >= BPF_INFO_SUBPROGS_LEN) {
			const char *name = (const char *)info + 64;
			json_object_set_new(p, "name", json_bytes(name, strnlen(name, 16)));
			json_t *subs = bpf_sub_progs(c, info, data, data_len);
			if (subs)
				json_object_set_new(p, "sub_progs", subs);
		}
		json_array_append_new(arr, p);
	}
	if (c->failed) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/* BPF_BTF: u32 nr; { u32 id; u32 data_size; u8 data[data_size]; } [nr] */
static json_t *dec_bpf_btf(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = cur_count(c, 8, "btf count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t id = cur_u32(c, "btf id");
		uint32_t size = cur_u32(c, "btf data_size");
		if (cur_bytes(c, size, "btf data"))
			json_array_append_new(arr, json_pack("{s:I,s:I}", "id", (json_int_t)id,
							     "data_size", (json_int_t)size));
	}
	if (c->failed) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/* COMPRESSED: u32 version; u32 type (1 = zstd); u32 level; u32 ratio; u32 mmap_len */
static json_t *dec_compressed(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t v[5];
	static const char *const what[5] = { "version", "type", "level", "ratio", "mmap_len" };
	for (int i = 0; i < 5; i++)
		v[i] = cur_u32(c, what[i]);
	if (c->failed)
		return NULL;
	return json_pack("{s:I,s:I,s:s,s:I,s:I,s:I}", "version", (json_int_t)v[0], "type",
			 (json_int_t)v[1], "type_name", v[1] == 1 ? "zstd" : "unknown", "level",
			 (json_int_t)v[2], "ratio", (json_int_t)v[3], "mmap_len", (json_int_t)v[4]);
}

/* { string name; string value; } [nr] into an object name -> value */
static json_t *dec_caps(struct fcur *c, uint32_t nr)
{
	json_t *o = json_object();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		size_t nlen;
		const char *name = cur_str(c, &nlen, "capability name");
		json_t *val = cur_jstr(c, "capability value");
		if (!name || !val) {
			json_decref(val);
			break;
		}
		/* keys must be UTF-8 too: the sanitised form */
		json_t *kj = json_bytes(name, nlen);
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
static json_t *dec_cpu_pmu_caps(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = cur_count(c, 8, "capability count");
	return c->failed ? NULL : dec_caps(c, nr);
}

/* CLOCK_DATA: u32 version (1); u32 clockid; u64 wall_clock_ns; u64 clockid_ns */
static json_t *dec_clock_data(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t version = cur_u32(c, "clock_data version");
	uint32_t clockid = cur_u32(c, "clockid");
	uint64_t tod = cur_u64(c, "wall_clock_ns");
	uint64_t clk = cur_u64(c, "clockid_ns");
	if (c->failed)
		return NULL;
	return json_pack("{s:I,s:I,s:I,s:I}", "version", (json_int_t)version, "clockid",
			 (json_int_t)clockid, "wall_clock_ns", (json_int_t)tod, "clockid_ns",
			 (json_int_t)clk);
}

/* HYBRID_TOPOLOGY: u32 nr; { string pmu_name; string cpus; } [nr] */
static json_t *dec_hybrid_topology(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = cur_count(c, 8, "hybrid pmu count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		json_t *name = cur_jstr(c, "pmu_name");
		json_t *cpus = cur_jstr(c, "cpus");
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
static json_t *dec_pmu_caps(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = cur_count(c, 8, "pmu count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t ncaps = cur_count(c, 8, "capability count");
		json_t *caps = c->failed ? NULL : dec_caps(c, ncaps);
		json_t *name = caps ? cur_jstr(c, "pmu_name") : NULL;
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

static const decode_fn decoders[] = {
	[PD_FEAT_TRACING_DATA] = dec_tracing_data,
	[PD_FEAT_BUILD_ID] = dec_build_id,
	[PD_FEAT_HOSTNAME] = dec_string,
	[PD_FEAT_OSRELEASE] = dec_string,
	[PD_FEAT_VERSION] = dec_string,
	[PD_FEAT_ARCH] = dec_string,
	[PD_FEAT_NRCPUS] = dec_nrcpus,
	[PD_FEAT_CPUDESC] = dec_string,
	[PD_FEAT_CPUID] = dec_string,
	[PD_FEAT_TOTAL_MEM] = dec_total_mem,
	[PD_FEAT_CMDLINE] = dec_cmdline,
	[PD_FEAT_EVENT_DESC] = dec_event_desc,
	[PD_FEAT_CPU_TOPOLOGY] = dec_cpu_topology,
	[PD_FEAT_NUMA_TOPOLOGY] = dec_numa_topology,
	[PD_FEAT_BRANCH_STACK] = dec_flag,
	[PD_FEAT_PMU_MAPPINGS] = dec_pmu_mappings,
	[PD_FEAT_GROUP_DESC] = dec_group_desc,
	[PD_FEAT_AUXTRACE] = dec_auxtrace,
	[PD_FEAT_STAT] = dec_flag,
	[PD_FEAT_CACHE] = dec_cache,
	[PD_FEAT_SAMPLE_TIME] = dec_sample_time,
	[PD_FEAT_SAMPLE_TOPOLOGY] = dec_mem_topology,
	[PD_FEAT_CLOCKID] = dec_clockid,
	[PD_FEAT_DIR_FORMAT] = dec_dir_format,
	[PD_FEAT_BPF_PROG_INFO] = dec_bpf_prog_info,
	[PD_FEAT_BPF_BTF] = dec_bpf_btf,
	[PD_FEAT_COMPRESSED] = dec_compressed,
	[PD_FEAT_CPU_PMU_CAPS] = dec_cpu_pmu_caps,
	[PD_FEAT_CLOCK_DATA] = dec_clock_data,
	[PD_FEAT_HYBRID_TOPOLOGY] = dec_hybrid_topology,
	[PD_FEAT_PMU_CAPS] = dec_pmu_caps,
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
		cur_fail(&c, "out of memory");
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
		free_event_descs(fs);
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
