/*
 * feat-events.c - decoders of the feature sections that describe the
 * events and what ran: event descriptions and their attrs, PMU mappings,
 * groups, build-ids, tracing data, AUX areas, BPF programs, compression,
 * the directory format.
 */
#include "feat-decode.h"

/* TRACING_DATA: tracefs format files and kallsyms; only its size is reported */
json_t *feat_dec_tracing_data(feat_set *fs, struct fcur *c)
{
	(void)fs;
	return json_pack("{s:I}", "size", (json_int_t)c->len);
}

#define BUILD_ID_MISC_SIZE (1u << 15)	/* PERF_RECORD_MISC_BUILD_ID_SIZE */

/*
 * BUILD_ID: a sequence of build_id_event records:
 *   u32 type; u16 misc; u16 size;   (perf_event_header; size = whole entry)
 *   s32 pid; u8 build_id[20]; u8 id_size; u8 reserved[3];
 *   char filename[size - 36], NUL-padded
 * id_size is meaningful when misc has BUILD_ID_SIZE, else the id is 20 bytes.
 */
json_t *feat_dec_build_id(feat_set *fs, struct fcur *c)
{
	json_t *arr = json_array();
	size_t n = 0, cap = 0;
	pd_build_id *ids = NULL;

	while (fcur_left(c) > 0) {
		size_t start = c->off;
		if (fcur_need(c, 36, "build_id entry"))
			break;
		const uint8_t *e = c->p + c->off;
		uint16_t misc = feat_get16(e + 4, c->swap);
		uint16_t size = feat_get16(e + 6, c->swap);
		if (size < 36 || size > fcur_left(c)) {
			fcur_fail(c, "build_id entry size %u outside 36..%zu", size, fcur_left(c));
			break;
		}
		if (fcur_spend(c, 1, "build_id entries"))
			break;
		uint32_t pid = feat_get32(e + 8, c->swap);
		uint8_t idlen = (misc & BUILD_ID_MISC_SIZE) ? e[32] : 20;
		if (idlen > 20)
			idlen = 20;
		const char *fname = (const char *)e + 36;
		size_t flen = strnlen(fname, size - 36u);
		json_t *fj = feat_json_bytes(fname, flen);
		json_t *entry = json_pack("{s:i,s:i,s:o,s:O}", "pid", (int32_t)pid, "misc", misc,
					  "build_id", feat_json_hex(e + 12, idlen), "filename", fj);
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
			fcur_fail(c, "out of memory decoding build ids");
			break;
		}
		if (json_array_append_new(arr, entry)) {
			fcur_fail(c, "out of memory decoding build ids");
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
	a->type = feat_get32(p + 0, swap);
	a->size = feat_get32(p + 4, swap);
	a->config = feat_get64(p + 8, swap);
	a->sample_period = feat_get64(p + 16, swap);
	a->sample_type = feat_get64(p + 24, swap);
	a->read_format = feat_get64(p + 32, swap);
	/* the bitfield word is not byte-swapped: the other byte order's
	 * compiler laid its bits out from the other end of each byte */
	a->flags = feat_get64(p + 40, 0);
	if (swap)
		a->flags = swap_bitfield(a->flags);
	a->wakeup_events = feat_get32(p + 48, swap);
	a->bp_type = feat_get32(p + 52, swap);
	a->config1 = feat_get64(p + 56, swap);
	if (size >= 72)
		a->config2 = feat_get64(p + 64, swap);
	if (size >= 80)
		a->branch_sample_type = feat_get64(p + 72, swap);
	if (size >= 96) {
		a->sample_regs_user = feat_get64(p + 80, swap);
		a->sample_stack_user = feat_get32(p + 88, swap);
		a->clockid = (int32_t)feat_get32(p + 92, swap);
	}
	if (size >= 104)
		a->sample_regs_intr = feat_get64(p + 96, swap);
	if (size >= 112) {
		a->aux_watermark = feat_get32(p + 104, swap);
		a->sample_max_stack = feat_get16(p + 108, swap);
	}
	if (size >= 120)
		a->aux_sample_size = feat_get32(p + 112, swap);
	if (size >= 128)
		a->sig_data = feat_get64(p + 120, swap);
	if (size >= 136)
		a->config3 = feat_get64(p + 128, swap);
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
json_t *feat_dec_event_desc(feat_set *fs, struct fcur *c)
{
	uint32_t nr = fcur_u32(c, "event count");
	uint32_t attr_size = fcur_u32(c, "attr_size");
	if (c->failed)
		return NULL;
	if (attr_size < ATTR_SIZE_VER0 || attr_size > fcur_left(c)) {
		size_t left = fcur_left(c);
		c->off -= 4;
		fcur_fail(c, "attr_size %" PRIu32 " outside %d..%zu", attr_size, ATTR_SIZE_VER0,
			 left);
		return NULL;
	}
	size_t min_event = (size_t)attr_size + 8;
	if (nr > fcur_left(c) / min_event) {
		c->off -= 8;
		fcur_fail(c, "event count %" PRIu32 " needs at least %zu bytes each, %zu remain", nr,
			 min_event, fcur_left(c) - 8);
		return NULL;
	}
	if (fcur_spend(c, nr, "events"))
		return NULL;
	struct event_desc *descs = calloc(nr ? nr : 1, sizeof(*descs));
	json_t *arr = json_array();
	size_t nr_ids_total = 0;
	uint32_t i;
	for (i = 0; i < nr && descs; i++) {
		struct event_desc *d = &descs[i];
		const uint8_t *ap = fcur_bytes(c, attr_size, "attr");
		if (!ap)
			break;
		decode_attr(ap, attr_size, c->swap, &d->attr);
		uint32_t nr_ids = fcur_u32(c, "nr_ids");
		size_t slen;
		const char *name = fcur_str(c, &slen, "event name");
		if (!name)
			break;
		if (nr_ids > fcur_left(c) / 8) {
			fcur_fail(c, "nr_ids %" PRIu32 " needs %zu bytes, %zu remain", nr_ids,
				 (size_t)nr_ids * 8, fcur_left(c));
			break;
		}
		if (fcur_spend(c, nr_ids, "event ids"))
			break;
		d->name = strndup(name, slen);
		d->ids = malloc((nr_ids ? nr_ids : 1) * sizeof(uint64_t));
		if (!d->name || !d->ids)
			break;
		json_t *ids = json_array();
		for (uint32_t k = 0; k < nr_ids; k++) {
			d->ids[k] = fcur_u64(c, "id");
			json_array_append_new(ids, feat_json_u64(d->ids[k]));
		}
		d->nr_ids = nr_ids;
		nr_ids_total += nr_ids;
		pd_attr *a = &d->attr;
		json_t *ev = json_pack(
			"{s:o,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o}", "name", feat_json_bytes(name, slen), "type",
			(json_int_t)a->type, "size", (json_int_t)a->size, "config", feat_json_u64(a->config),
			(a->flags & PD_ATTR_FREQ) ? "sample_freq" : "sample_period",
			feat_json_u64(a->sample_period), "sample_type", feat_json_u64(a->sample_type),
			"read_format", feat_json_u64(a->read_format), "flags", feat_json_u64(a->flags), "ids",
			ids);
		json_array_append_new(arr, ev);
	}
	if (!descs || i < nr || c->failed) {
		if (!c->failed)
			fcur_fail(c, "out of memory decoding event %" PRIu32, i);
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
	feat_free_event_descs(fs);
	fs->descs = descs;
	fs->nr_descs = nr;
	fs->id_names = map;
	fs->nr_id_names = map ? m : 0;
	return arr;
}

/* BRANCH_STACK, STAT: flags without content */
json_t *feat_dec_flag(feat_set *fs, struct fcur *c)
{
	(void)fs;
	(void)c;
	return json_true();
}

/* PMU_MAPPINGS: u32 nr; { u32 type; string name; } [nr] */
json_t *feat_dec_pmu_mappings(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = fcur_count(c, 8, "pmu count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t type = fcur_u32(c, "pmu type");
		json_t *name = fcur_jstr(c, "pmu name");
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
json_t *feat_dec_group_desc(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = fcur_count(c, 12, "group count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		json_t *name = fcur_jstr(c, "group name");
		uint32_t leader = fcur_u32(c, "leader_idx");
		uint32_t members = fcur_u32(c, "nr_members");
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
json_t *feat_dec_auxtrace(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t nr = fcur_u64(c, "auxtrace index count");
	if (!c->failed && nr > fcur_left(c) / 16) {
		c->off -= 8;
		fcur_fail(c, "auxtrace index count %" PRIu64 " needs %" PRIu64 " bytes, %zu remain",
			 nr, nr * 16, fcur_left(c) - 8);
	}
	if (fcur_spend(c, nr, "auxtrace index entries"))
		return NULL;
	json_t *entries = json_array();
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t off = fcur_u64(c, "file_offset");
		uint64_t sz = fcur_u64(c, "size");
		json_array_append_new(entries, json_pack("{s:I,s:I}", "file_offset",
							 (json_int_t)off, "size", (json_int_t)sz));
	}
	return json_pack("{s:I,s:o}", "nr", (json_int_t)nr, "entries", entries);
}

/* DIR_FORMAT: u64 version */
json_t *feat_dec_dir_format(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint64_t v = fcur_u64(c, "dir_format version");
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
	uint32_t nr = feat_get32(info + 104, c->swap);
	uint32_t nr_lens = feat_get32(info + 108, c->swap);
	uint32_t nr_tags = feat_get32(info + 180, c->swap);
	const uint8_t *ksyms = bpf_array(data, data_len, feat_get64(info + 112, c->swap), nr, 8);
	const uint8_t *lens = nr_lens == nr
				      ? bpf_array(data, data_len, feat_get64(info + 120, c->swap), nr, 4)
				      : NULL;
	const uint8_t *tags = nr_tags == nr
				      ? bpf_array(data, data_len, feat_get64(info + 184, c->swap), nr, 8)
				      : NULL;
	if (!ksyms || fcur_spend(c, nr, "bpf sub-programs"))
		return NULL;
	json_t *arr = json_array();
	for (uint32_t k = 0; k < nr; k++) {
		char addr[24];
		snprintf(addr, sizeof(addr), "0x%" PRIx64, feat_get64(ksyms + 8 * k, c->swap));
		json_t *sp = json_pack("{s:s}", "addr", addr);	/* kernel addresses: hex */
		if (lens)
			json_object_set_new(sp, "size", json_integer(feat_get32(lens + 4 * k, c->swap)));
		if (tags)
			json_object_set_new(sp, "tag", feat_json_hex(tags + 8 * k, 8));
		json_array_append_new(arr, sp);
	}
	return arr;
}
json_t *feat_dec_bpf_prog_info(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = fcur_count(c, 16, "bpf program count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t info_len = fcur_u32(c, "info_len");
		uint32_t data_len = fcur_u32(c, "data_len");
		fcur_u64(c, "arrays");
		const uint8_t *info = fcur_bytes(c, info_len, "bpf_prog_info");
		const uint8_t *data = fcur_bytes(c, data_len, "bpf program data");
		if (c->failed)
			break;
		json_t *p = json_pack("{s:I,s:I}", "info_len", (json_int_t)info_len, "data_len",
				      (json_int_t)data_len);
		if (info_len >= 16) {
			json_object_set_new(p, "type", json_integer(feat_get32(info, c->swap)));
			json_object_set_new(p, "id", json_integer(feat_get32(info + 4, c->swap)));
			json_object_set_new(p, "tag", feat_json_hex(info + 8, 8));
		}
		if (info_len >= BPF_INFO_SUBPROGS_LEN) {
			const char *name = (const char *)info + 64;
			json_object_set_new(p, "name", feat_json_bytes(name, strnlen(name, 16)));
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
json_t *feat_dec_bpf_btf(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t nr = fcur_count(c, 8, "btf count");
	json_t *arr = json_array();
	for (uint32_t i = 0; i < nr && !c->failed; i++) {
		uint32_t id = fcur_u32(c, "btf id");
		uint32_t size = fcur_u32(c, "btf data_size");
		if (fcur_bytes(c, size, "btf data"))
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
json_t *feat_dec_compressed(feat_set *fs, struct fcur *c)
{
	(void)fs;
	uint32_t v[5];
	static const char *const what[5] = { "version", "type", "level", "ratio", "mmap_len" };
	for (int i = 0; i < 5; i++)
		v[i] = fcur_u32(c, what[i]);
	if (c->failed)
		return NULL;
	return json_pack("{s:I,s:I,s:s,s:I,s:I,s:I}", "version", (json_int_t)v[0], "type",
			 (json_int_t)v[1], "type_name", v[1] == 1 ? "zstd" : "unknown", "level",
			 (json_int_t)v[2], "ratio", (json_int_t)v[3], "mmap_len", (json_int_t)v[4]);
}
