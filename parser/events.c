/* events.c - the recording's events (attrs), their ids and their names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "pdfile.h"
#include "perr.h"

/* The attr bitfield word: on a writer of the other byte order bitfields are
 * laid out from the other end, so after the u64 swap every bit is mirrored
 * (perf's swap_bitfield). */
static uint64_t mirror_bits(uint64_t v)
{
	uint64_t r = 0;
	int i;

	for (i = 0; i < 64; i++, v >>= 1)
		r = (r << 1) | (v & 1);
	return r;
}

/*
 * perf_event_attr (ABI sizes 64 VER0 ... 136 VER8):
 *   u32 type, size; u64 config, sample_period, sample_type, read_format,
 *   flags(bitfield); u32 wakeup_events, bp_type; u64 config1 | 64
 *   u64 config2 | 72  u64 branch_sample_type | 80  u64 sample_regs_user;
 *   u32 sample_stack_user; s32 clockid | 96  u64 sample_regs_intr | 104
 *   u32 aux_watermark; u16 sample_max_stack, reserved | 112
 *   u32 aux_sample_size, reserved | 120  u64 sig_data | 128  u64 config3 | 136
 */
void attr_decode(pd_attr *a, const uint8_t *p, size_t len, int swap)
{
	uint8_t buf[136];

	memset(a, 0, sizeof(*a));
	memset(buf, 0, sizeof(buf));
	memcpy(buf, p, len < sizeof(buf) ? len : sizeof(buf));
	a->type = load_u32(buf + 0, swap);
	a->size = load_u32(buf + 4, swap);
	/* bytes beyond what the writer said its attr holds are not attr */
	if (a->size >= 64 && a->size < sizeof(buf) && a->size < len)
		memset(buf + a->size, 0, sizeof(buf) - a->size);
	a->config = load_u64(buf + 8, swap);
	a->sample_period = load_u64(buf + 16, swap);
	a->sample_type = load_u64(buf + 24, swap);
	a->read_format = load_u64(buf + 32, swap);
	a->flags = load_u64(buf + 40, swap);
	if (swap)
		a->flags = mirror_bits(a->flags);
	a->wakeup_events = load_u32(buf + 48, swap);
	a->bp_type = load_u32(buf + 52, swap);
	a->config1 = load_u64(buf + 56, swap);
	a->config2 = load_u64(buf + 64, swap);
	a->branch_sample_type = load_u64(buf + 72, swap);
	a->sample_regs_user = load_u64(buf + 80, swap);
	a->sample_stack_user = load_u32(buf + 88, swap);
	a->clockid = (int32_t)load_u32(buf + 92, swap);
	a->sample_regs_intr = load_u64(buf + 96, swap);
	a->aux_watermark = load_u32(buf + 104, swap);
	a->sample_max_stack = load_u16(buf + 108, swap);
	a->aux_sample_size = load_u32(buf + 112, swap);
	a->sig_data = load_u64(buf + 120, swap);
	a->config3 = load_u64(buf + 128, swap);
}

static int id_insert(pd_file *f, uint64_t id, uint32_t idx)
{
	size_t i, mask;

	if (id == 0) {
		if (!f->has_zero_id) {
			f->has_zero_id = 1;
			f->zero_id_val = idx;
		}
		return 0;
	}
	if ((f->id_n + 1) * 2 > f->id_cap) {
		size_t ncap = f->id_cap ? f->id_cap * 2 : 64, j;
		uint64_t *nk = calloc(ncap, sizeof(*nk));
		uint32_t *nv = calloc(ncap, sizeof(*nv));

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -1;
		}
		for (j = 0; j < f->id_cap; j++) {
			if (!f->id_keys[j])
				continue;
			i = (size_t)(f->id_keys[j] * 0x9e3779b97f4a7c15ULL) & (ncap - 1);
			while (nk[i])
				i = (i + 1) & (ncap - 1);
			nk[i] = f->id_keys[j];
			nv[i] = f->id_vals[j];
		}
		free(f->id_keys);
		free(f->id_vals);
		f->id_keys = nk;
		f->id_vals = nv;
		f->id_cap = ncap;
	}
	mask = f->id_cap - 1;
	i = (size_t)(id * 0x9e3779b97f4a7c15ULL) & mask;
	while (f->id_keys[i]) {
		if (f->id_keys[i] == id)
			return 0;	/* first definition wins, as in perf */
		i = (i + 1) & mask;
	}
	f->id_keys[i] = id;
	f->id_vals[i] = idx;
	f->id_n++;
	return 0;
}

const pd_event *ev_by_id(const pd_file *f, uint64_t id)
{
	size_t i, mask;

	if (id == 0)
		return f->has_zero_id ? f->events[f->zero_id_val] : NULL;
	if (!f->id_cap)
		return NULL;
	mask = f->id_cap - 1;
	i = (size_t)(id * 0x9e3779b97f4a7c15ULL) & mask;
	while (f->id_keys[i]) {
		if (f->id_keys[i] == id)
			return f->events[f->id_vals[i]];
		i = (i + 1) & mask;
	}
	return NULL;
}

/* perf's id_pos (u64 index of the id from the start of a sample) and
 * is_pos (from the end of a sample_id trailer), from the first event. */
void ev_update_positions(pd_file *f)
{
	uint64_t st;

	f->id_pos = f->is_pos = -1;
	if (!f->nr_events)
		return;
	st = f->events[0]->attr.sample_type;
	if (st & PD_SAMPLE_IDENTIFIER) {
		f->id_pos = 0;
		f->is_pos = 1;
	} else if (st & PD_SAMPLE_ID) {
		f->id_pos = 0;
		if (st & PD_SAMPLE_IP)
			f->id_pos++;
		if (st & PD_SAMPLE_TID)
			f->id_pos++;
		if (st & PD_SAMPLE_TIME)
			f->id_pos++;
		if (st & PD_SAMPLE_ADDR)
			f->id_pos++;
		f->is_pos = 1;
		if (st & PD_SAMPLE_CPU)
			f->is_pos++;
		if (st & PD_SAMPLE_STREAM_ID)
			f->is_pos++;
	}
}

int ev_add(pd_file *f, const pd_attr *attr, const uint8_t *ids, size_t nr_ids, int swap_ids,
	   pd_error *err, uint64_t offset)
{
	pd_event *ev;
	uint64_t *own = NULL;
	size_t i;

	if (f->nr_events >= PD_MAX_EVENTS) {
		pd_set_error(err, PD_ERR_LIMIT, offset, "more than %d events", PD_MAX_EVENTS);
		return -1;
	}
	if (nr_ids > PD_MAX_IDS - f->nr_ids_total) {
		pd_set_error(err, PD_ERR_LIMIT, offset, "more than %u sample ids", PD_MAX_IDS);
		return -1;
	}
	if (f->nr_events == f->cap_events) {
		size_t ncap = f->cap_events ? f->cap_events * 2 : 8;
		pd_event **ne = realloc(f->events, ncap * sizeof(*ne));
		char **nn;
		uint64_t **ni;

		if (!ne)
			goto nomem;
		f->events = ne;
		nn = realloc(f->event_names, ncap * sizeof(*nn));
		if (!nn)
			goto nomem;
		f->event_names = nn;
		ni = realloc(f->event_ids, ncap * sizeof(*ni));
		if (!ni)
			goto nomem;
		f->event_ids = ni;
		{
			unsigned char *nb = realloc(f->event_named, ncap);

			if (!nb)
				goto nomem;
			f->event_named = nb;
		}
		f->cap_events = ncap;
		/* events themselves never move: consumers keep pointers */
	}
	if (nr_ids) {
		own = malloc(nr_ids * sizeof(*own));
		if (!own)
			goto nomem;
		for (i = 0; i < nr_ids; i++)
			own[i] = load_u64(ids + 8 * i, swap_ids);
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev) {
		free(own);
		goto nomem;
	}
	f->events[f->nr_events] = ev;
	ev->index = (unsigned)f->nr_events;
	ev->attr = *attr;
	ev->ids = own;
	ev->nr_ids = nr_ids;
	ev->name = "unknown";
	f->event_names[f->nr_events] = NULL;
	f->event_named[f->nr_events] = 0;
	f->event_ids[f->nr_events] = own;
	f->nr_events++;
	f->nr_ids_total += nr_ids;
	f->last_ev = NULL;	/* a new id may now resolve differently */
	for (i = 0; i < nr_ids; i++)
		if (id_insert(f, own[i], ev->index) < 0)
			goto nomem;
	ev_update_positions(f);
	return 0;
nomem:
	pd_set_error(err, PD_ERR_NOMEM, offset, "out of memory for events");
	return -1;
}

void ev_free_all(pd_file *f)
{
	size_t i;

	for (i = 0; i < f->nr_events; i++) {
		free(f->event_names[i]);
		free(f->event_ids[i]);
		free(f->events[i]);
	}
	free(f->events);
	free(f->event_names);
	free(f->event_ids);
	free(f->event_named);
	free(f->id_keys);
	free(f->id_vals);
	free(f->legacy);
}

int ev_set_name(pd_file *f, size_t idx, const char *name, size_t len, int strong)
{
	char *s;

	if (idx >= f->nr_events)
		return 0;
	len = strnlen(name, len);
	s = malloc(len + 1);
	if (!s)
		return -1;
	memcpy(s, name, len);
	s[len] = 0;
	free(f->event_names[idx]);
	f->event_names[idx] = s;
	f->events[idx]->name = s;
	f->event_named[idx] = !!strong;
	return 0;
}

int legacy_add(pd_file *f, uint64_t id, const char *name, size_t len)
{
	struct pd_legacy_type *n;

	if (f->nr_legacy >= PD_MAX_EVENTS)
		return 0;
	n = realloc(f->legacy, (f->nr_legacy + 1) * sizeof(*n));
	if (!n)
		return -1;
	f->legacy = n;
	n[f->nr_legacy].id = id;
	len = strnlen(name, len < 64 ? len : 64);
	memcpy(n[f->nr_legacy].name, name, len);
	n[f->nr_legacy].name[len] = 0;
	f->nr_legacy++;
	return 0;
}

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
	"ref-cycles",
};
static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};

/* perf's modifier suffix (":u", ":ppp", ":HG") from the attr bits. */
static void add_modifiers(char *bf, size_t size, const pd_attr *a)
{
	size_t r = strlen(bf);
	int colon = 0, excl_default = 0;
	uint64_t fl = a->flags;
	unsigned precise = (unsigned)((fl >> 15) & 3);
	int ex_user = !!(fl & PD_ATTR_EXCLUDE_USER), ex_kernel = !!(fl & PD_ATTR_EXCLUDE_KERNEL);
	int ex_hv = !!(fl & PD_ATTR_EXCLUDE_HV);
	int ex_host = !!(fl & (1ULL << 19)), ex_guest = !!(fl & (1ULL << 20));

#define MOD(excluded, c) do { if (!(excluded) && r + 2 < size) { \
	if (!colon) { bf[r++] = ':'; colon = 1; } bf[r++] = (c); bf[r] = 0; } } while (0)
	if (ex_kernel || ex_user || ex_hv) {
		MOD(ex_kernel, 'k');
		MOD(ex_user, 'u');
		MOD(ex_hv, 'h');
		excl_default = 1;
	}
	if (precise) {
		if (!colon && r + 1 < size) {
			bf[r++] = ':';
			bf[r] = 0;
			colon = 1;
		}
		while (precise-- && r + 1 < size) {
			bf[r++] = 'p';
			bf[r] = 0;
		}
	}
	if (ex_host || ex_guest == excl_default) {
		MOD(ex_host, 'H');
		MOD(ex_guest, 'G');
	}
#undef MOD
}

/* Name every still unnamed event: EVENT_DESC (by id, then by position),
 * the legacy event type table, then perf's own fallback names. */
void ev_name_defaults(pd_file *f)
{
	size_t i, j;
	char buf[128];

	for (i = 0; i < f->nr_events; i++) {
		pd_event *ev = f->events[i];
		const char *n = NULL;

		if (f->event_named[i])
			continue;
		if (f->feats && feat_has(f->feats, PD_FEAT_EVENT_DESC)) {
			for (j = 0; j < ev->nr_ids && !n; j++)
				n = feat_event_name_by_id(f->feats, ev->ids[j]);
			if (!n && i < feat_nr_event_desc(f->feats)) {
				uint32_t t;
				uint64_t c;
				const char *d = feat_event_desc(f->feats, i, &t, &c);

				if (d && t == ev->attr.type && c == ev->attr.config)
					n = d;
			}
		}
		if (!n)
			for (j = 0; j < f->nr_legacy && !n; j++)
				if (f->legacy[j].id == ev->attr.config && f->legacy[j].name[0])
					n = f->legacy[j].name;
		if (n) {
			ev_set_name(f, i, n, strlen(n), 1);
			continue;
		}
		if (f->event_names[i])
			continue;	/* keep the fallback given earlier */
		switch (ev->attr.type) {
		case 0:
			if (ev->attr.config < sizeof(hw_names) / sizeof(hw_names[0]))
				snprintf(buf, sizeof(buf), "%s", hw_names[ev->attr.config]);
			else
				snprintf(buf, sizeof(buf), "unknown-hardware");
			add_modifiers(buf, sizeof(buf), &ev->attr);
			break;
		case 1:
			if (ev->attr.config < sizeof(sw_names) / sizeof(sw_names[0]))
				snprintf(buf, sizeof(buf), "%s", sw_names[ev->attr.config]);
			else
				snprintf(buf, sizeof(buf), "unknown-software");
			add_modifiers(buf, sizeof(buf), &ev->attr);
			break;
		case 2:
			snprintf(buf, sizeof(buf), "unknown:unknown");
			break;
		case 4:
			snprintf(buf, sizeof(buf), "r%llx", (unsigned long long)ev->attr.config);
			add_modifiers(buf, sizeof(buf), &ev->attr);
			break;
		default:
			snprintf(buf, sizeof(buf), "unknown attr type: %u", ev->attr.type);
			break;
		}
		ev_set_name(f, i, buf, strlen(buf), 0);
	}
}
