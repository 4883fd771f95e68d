/* pprof.c - a profile as pprof's profile.proto (encoded by protobuf-c), gzipped. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "engine/export.h"
#include "engine/pprof.pb-c.h"
#include "engine/query-int.h"

const char *pe_event_unit(const char *event)
{
	size_t n = event ? strcspn(event, ":") : 0;

	if ((n == 9 && !strncmp(event, "cpu-clock", 9)) ||
	    (n == 10 && !strncmp(event, "task-clock", 10)))
		return "nanoseconds";
	return "count";
}

/* The event's name as a sample type: without the modifiers perf appends
 * (cpu-clock:ppp, cycles:u), but a tracepoint's "sys:name" whole. */
static int type_name(pe_sbuf *b, const char *ev)
{
	const char *colon = ev ? strrchr(ev, ':') : NULL;
	size_t n = ev ? strlen(ev) : 0;

	if (!ev)
		return pe_sbuf_add(b, "period", 6);
	if (colon && colon[1] && strspn(colon + 1, "ukhGHpPSDIWeb") == strlen(colon + 1))
		n = (size_t)(colon - ev);
	return pe_sbuf_add(b, ev, n);
}

/* pprof's string table: each text once, [0] = "". */
typedef struct strtab {
	pe_strmap map;
	char **tab;		/* the map's copies, by index */
	size_t n, cap;
	int oom;
} strtab;

static int64_t str_id(strtab *t, const char *s)
{
	size_t slot;
	int r;

	if (t->oom)
		return 0;
	r = pe_strmap_put(&t->map, s, (uint32_t)t->n, &slot);
	if (r <= 0) {
		t->oom = r < 0;
		return r < 0 ? 0 : t->map.ids[slot];
	}
	if (t->n == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 256;
		char **p = realloc(t->tab, ncap * sizeof(*p));
		if (!p) {
			t->oom = 1;
			return 0;
		}
		t->tab = p;
		t->cap = ncap;
	}
	t->tab[t->n] = t->map.strs[slot];
	return (int64_t)t->n++;
}

/*
 * The builder: profiles' selections added one after another into one
 * profile. Functions are told apart by name and DSO, mappings by path and
 * build-id, locations by function and mapping (perfhub keeps no
 * addresses), each made once over all the profiles added; every row of a
 * selection stays a sample of its own. Kept compact until the message is
 * made at the end.
 */
typedef struct pp_fn { int64_t name; } pp_fn;
typedef struct pp_map { int64_t file, build_id; } pp_map;
typedef struct pp_loc { uint64_t map, fn; } pp_loc;
typedef struct pp_sample {
	size_t at, n;			/* location ids: ids[at..at+n) */
	int64_t comm;			/* string id */
	uint32_t pid, tid;
	int64_t v[PE_PPROF_VALUES];	/* samples, period, off-CPU ns */
} pp_sample;

struct pe_pprof_b {
	strtab st;
	pe_strmap keys;		/* "f<name>:<dso>", "m<file>:<bid>", "l<fn>:<map>" -> id */
	pp_fn *fns;
	pp_map *maps;
	pp_loc *locs;
	pp_sample *samples;
	uint64_t *ids;
	size_t nr_fns, cap_fns, nr_maps, cap_maps, nr_locs, cap_locs;
	size_t nr_samples, cap_samples, nr_ids, cap_ids;
	char *event;		/* the period's event; "" once two differ */
	const char *unit;
	int with_tid, offcpu, full;
};

/* Grows *v (n used of *cap, each `size` bytes) for one more. 0 or -1. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : 256;
	if (!(p = realloc(*v, ncap * size)))
		return -1;
	*v = p;
	*cap = ncap;
	return 0;
}

/* The id under key "<kind><a>:<b>", or a new one (next) when *made. 0 = out of memory. */
static uint32_t key_id(pe_pprof_b *b, char kind, int64_t x, int64_t y, uint32_t next, int *made)
{
	char key[64];
	size_t slot;
	int r;

	snprintf(key, sizeof(key), "%c%lld:%lld", kind, (long long)x, (long long)y);
	*made = 0;
	if ((r = pe_strmap_put(&b->keys, key, next, &slot)) < 0)
		return 0;
	*made = r > 0;
	return b->keys.ids[slot];
}

pe_pprof_b *pe_pprof_b_new(void)
{
	pe_pprof_b *b = calloc(1, sizeof(*b));

	if (!b || pe_strmap_grow(&b->st.map) < 0 || pe_strmap_grow(&b->keys) < 0) {
		pe_pprof_b_free(b);
		return NULL;
	}
	str_id(&b->st, "");
	return b;
}

void pe_pprof_b_free(pe_pprof_b *b)
{
	if (!b)
		return;
	pe_strmap_free(&b->st.map);
	free(b->st.tab);
	pe_strmap_free(&b->keys);
	free(b->fns);
	free(b->maps);
	free(b->locs);
	free(b->samples);
	free(b->ids);
	free(b->event);
	free(b);
}

/* A frame counts as /top counts it: a known frame with a name. */
static int frame_ok(const pe_model *m, uint32_t fr)
{
	return fr < m->nr_frames && pe_str(m, m->frame_name[fr]);
}

/* The mapping of a DSO (the model's string id); 0 = none. */
static uint64_t mapping_of(pe_pprof_b *b, const pe_model *m, uint32_t dso)
{
	const char *bid;
	int64_t file, build_id = 0;
	uint32_t id;
	int made;

	if (!dso || !pe_str(m, dso))
		return 0;
	file = str_id(&b->st, pe_str(m, dso));
	if ((bid = pe_build_id(m, dso)))
		build_id = str_id(&b->st, bid);
	if (grow((void **)&b->maps, &b->cap_maps, b->nr_maps, sizeof(*b->maps)) < 0 ||
	    !(id = key_id(b, 'm', file, build_id, (uint32_t)b->nr_maps + 1, &made))) {
		b->st.oom = 1;
		return 0;
	}
	if (made)
		b->maps[b->nr_maps++] = (pp_map){ file, build_id };
	return id;
}

/* The function of a frame: its name (with "_[k]" under f->kernel) in its DSO. */
static uint64_t function_of(pe_pprof_b *b, const pe_model *m, const pe_filter *f, uint32_t fr)
{
	const char *name = pe_str(m, m->frame_name[fr]), *dso = pe_str(m, m->frame_dso[fr]);
	int64_t nm, ds;
	pe_sbuf kn = { 0 };
	uint32_t id;
	int made;

	if (f->kernel && m->frame_kernel[fr]) {
		if (pe_sbuf_add(&kn, name, strlen(name)) < 0 || pe_sbuf_add(&kn, "_[k]", 4) < 0) {
			free(kn.p);
			b->st.oom = 1;
			return 0;
		}
		name = kn.p;
	}
	nm = str_id(&b->st, name);
	free(kn.p);
	ds = dso ? str_id(&b->st, dso) : 0;
	if (grow((void **)&b->fns, &b->cap_fns, b->nr_fns, sizeof(*b->fns)) < 0 ||
	    !(id = key_id(b, 'f', nm, ds, (uint32_t)b->nr_fns + 1, &made))) {
		b->st.oom = 1;
		return 0;
	}
	if (made)
		b->fns[b->nr_fns++] = (pp_fn){ nm };
	return id;
}

/* The location of a frame: its function in its mapping. 0 = out of memory. */
static uint64_t location_of(pe_pprof_b *b, const pe_model *m, const pe_filter *f, uint32_t fr)
{
	uint64_t map = mapping_of(b, m, m->frame_dso[fr]), fn = function_of(b, m, f, fr);
	uint32_t id;
	int made;

	if (b->st.oom || grow((void **)&b->locs, &b->cap_locs, b->nr_locs, sizeof(*b->locs)) < 0 ||
	    !(id = key_id(b, 'l', (int64_t)fn, (int64_t)map, (uint32_t)b->nr_locs + 1, &made))) {
		b->st.oom = 1;
		return 0;
	}
	if (made)
		b->locs[b->nr_locs++] = (pp_loc){ map, fn };
	return id;
}

/* The period's event of the answer: the first profile's, or a plain
 * "period" once profiles of different events were added. */
static int note_event(pe_pprof_b *b, const char *ev)
{
	pe_sbuf name = { 0 };

	if (!ev)
		return 0;
	if (type_name(&name, ev) < 0)
		return -1;
	if (!b->event) {
		b->event = name.p;
		b->unit = pe_event_unit(ev);
		return 0;
	}
	if (strcmp(b->event, name.p)) {
		b->event[0] = 0;
		if (strcmp(b->unit, pe_event_unit(ev)))
			b->unit = "count";
	}
	free(name.p);
	return 0;
}

int pe_pprof_b_add(pe_pprof_b *b, const pe_model *m, const pe_filter *f, const pe_selection *s,
		   int offcpu)
{
	const pe_aggmap *g = &s->groups;
	uint32_t *loc_of = NULL;
	size_t i;
	int rc = -1;

	if (b->full || b->st.oom)
		return b->full ? -3 : -1;
	if (offcpu)
		b->offcpu = 1;
	else if (note_event(b, pe_fold_event(m, f->event)) < 0)
		return -1;
	b->with_tid |= f->with_tid;
	/* each frame's location looked up once per profile */
	if (!(loc_of = calloc(m->nr_frames + 1, sizeof(*loc_of))))
		return -1;
	for (i = 0; i < g->n; i++) {
		const pe_agg_row *r = &g->rows[i];
		uint32_t node = r->stack;
		size_t depth = 0;
		const char *comm = pe_str(m, r->comm);
		pp_sample *sm;

		if (b->nr_samples >= PE_PPROF_MAX_SAMPLES) {
			b->full = 1;
			rc = -3;
			goto out;
		}
		if (grow((void **)&b->samples, &b->cap_samples, b->nr_samples, sizeof(*b->samples)) < 0)
			goto out;
		sm = &b->samples[b->nr_samples];
		memset(sm, 0, sizeof(*sm));
		sm->at = b->nr_ids;
		while (node && node < m->nr_stacks && depth++ < PE_MAX_DEPTH) {
			uint32_t fr = m->stack_frame[node];
			if (frame_ok(m, fr)) {
				if (!loc_of[fr] && !(loc_of[fr] = (uint32_t)location_of(b, m, f, fr)))
					goto out;
				if (b->nr_ids >= PE_PPROF_MAX_LOCATION_IDS) {
					b->full = 1;
					rc = -3;
					goto out;
				}
				if (grow((void **)&b->ids, &b->cap_ids, b->nr_ids, sizeof(*b->ids)) < 0)
					goto out;
				b->ids[b->nr_ids++] = loc_of[fr];
			}
			if (m->stack_parent[node] >= node)
				break;
			node = m->stack_parent[node];
		}
		sm->n = b->nr_ids - sm->at;
		sm->comm = str_id(&b->st, comm ? comm : "");
		sm->pid = r->pid;
		sm->tid = r->tid;
		if (offcpu) {
			sm->v[2] = (int64_t)r->period;	/* the off-CPU measure's ns */
		} else {
			sm->v[0] = (int64_t)r->samples;
			sm->v[1] = (int64_t)r->period;
		}
		b->nr_samples++;
	}
	rc = b->st.oom ? -1 : 0;
out:
	free(loc_of);
	return rc;
}

/* gzip of in[0..n): OUT malloc'ed. 0 or -1. */
static int gzip_bytes(const uint8_t *in, size_t n, uint8_t **out, size_t *len)
{
	z_stream z;
	uint8_t *buf;
	size_t cap;
	int rc;

	memset(&z, 0, sizeof(z));
	/* the fastest level, as Go's runtime/pprof writes its profiles */
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	cap = deflateBound(&z, (uLong)n) + 32;
	if (!(buf = malloc(cap))) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	*len = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}

/* The message's parts, freed together. */
typedef struct pprof_msg {
	Pprof__Location *locs, **loc_ptrs;
	Pprof__Line *lines, **line_ptrs;
	Pprof__Function *fns, **fn_ptrs;
	Pprof__Mapping *maps, **map_ptrs;
	Pprof__Sample *samples, **sample_ptrs;
	Pprof__Label *labels, **label_ptrs;
} pprof_msg;

static void msg_free(pprof_msg *p)
{
	free(p->locs);
	free(p->loc_ptrs);
	free(p->lines);
	free(p->line_ptrs);
	free(p->fns);
	free(p->fn_ptrs);
	free(p->maps);
	free(p->map_ptrs);
	free(p->samples);
	free(p->sample_ptrs);
	free(p->labels);
	free(p->label_ptrs);
}

int pe_pprof_b_offcpu(const pe_pprof_b *b)
{
	return b->offcpu;
}

int pe_pprof_b_finish(pe_pprof_b *b, int default_offcpu, uint8_t **out, size_t *len)
{
	Pprof__Profile prof = PPROF__PROFILE__INIT;
	Pprof__ValueType types[PE_PPROF_VALUES] = { PPROF__VALUE_TYPE__INIT,
						     PPROF__VALUE_TYPE__INIT,
						     PPROF__VALUE_TYPE__INIT };
	Pprof__ValueType *type_ptrs[PE_PPROF_VALUES] = { &types[0], &types[1], &types[2] };
	size_t nlabels = b->with_tid ? 3 : 1, ntypes = b->offcpu ? 3 : 2, ns = b->nr_samples, i, k;
	int64_t comment[1], key_comm, key_pid, key_tid;
	pprof_msg p;
	uint8_t *raw = NULL;
	size_t rawlen;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	*out = NULL;
	*len = 0;
	p.locs = malloc((b->nr_locs + 1) * sizeof(*p.locs));
	p.loc_ptrs = malloc((b->nr_locs + 1) * sizeof(*p.loc_ptrs));
	p.lines = malloc((b->nr_locs + 1) * sizeof(*p.lines));
	p.line_ptrs = malloc((b->nr_locs + 1) * sizeof(*p.line_ptrs));
	p.fns = malloc((b->nr_fns + 1) * sizeof(*p.fns));
	p.fn_ptrs = malloc((b->nr_fns + 1) * sizeof(*p.fn_ptrs));
	p.maps = malloc((b->nr_maps + 1) * sizeof(*p.maps));
	p.map_ptrs = malloc((b->nr_maps + 1) * sizeof(*p.map_ptrs));
	p.samples = malloc((ns + 1) * sizeof(*p.samples));
	p.sample_ptrs = malloc((ns + 1) * sizeof(*p.sample_ptrs));
	p.labels = malloc((ns + 1) * nlabels * sizeof(*p.labels));
	p.label_ptrs = malloc((ns + 1) * nlabels * sizeof(*p.label_ptrs));
	if (!p.locs || !p.loc_ptrs || !p.lines || !p.line_ptrs || !p.fns || !p.fn_ptrs ||
	    !p.maps || !p.map_ptrs || !p.samples || !p.sample_ptrs || !p.labels || !p.label_ptrs)
		goto out;
	for (i = 0; i < b->nr_maps; i++) {
		pprof__mapping__init(&p.maps[i]);
		p.maps[i].id = i + 1;
		p.maps[i].filename = b->maps[i].file;
		p.maps[i].build_id = b->maps[i].build_id;
		p.maps[i].has_functions = 1;	/* names come symbolized: nothing to look up */
		p.map_ptrs[i] = &p.maps[i];
	}
	for (i = 0; i < b->nr_fns; i++) {
		pprof__function__init(&p.fns[i]);
		p.fns[i].id = i + 1;
		p.fns[i].name = p.fns[i].system_name = b->fns[i].name;
		p.fn_ptrs[i] = &p.fns[i];
	}
	for (i = 0; i < b->nr_locs; i++) {
		pprof__location__init(&p.locs[i]);
		pprof__line__init(&p.lines[i]);
		p.locs[i].id = i + 1;
		p.locs[i].mapping_id = b->locs[i].map;
		p.lines[i].function_id = b->locs[i].fn;
		p.line_ptrs[i] = &p.lines[i];
		p.locs[i].n_line = 1;
		p.locs[i].line = &p.line_ptrs[i];
		p.loc_ptrs[i] = &p.locs[i];
	}
	/* sample types: samples/count, the period in the event's unit, and
	 * off-CPU nanoseconds when a profile added has them */
	types[0].type = str_id(&b->st, "samples");
	types[0].unit = str_id(&b->st, "count");
	types[1].type = str_id(&b->st, b->event && b->event[0] ? b->event : "period");
	types[1].unit = str_id(&b->st, b->unit ? b->unit : "count");
	if (b->offcpu) {
		types[2].type = str_id(&b->st, "offcpu");
		types[2].unit = str_id(&b->st, "nanoseconds");
	}
	key_comm = str_id(&b->st, "comm");
	key_pid = str_id(&b->st, "pid");
	key_tid = str_id(&b->st, "tid");
	for (i = 0; i < ns; i++) {
		pp_sample *s = &b->samples[i];
		Pprof__Sample *sm = &p.samples[i];
		Pprof__Label *lb = &p.labels[i * nlabels];

		pprof__sample__init(sm);
		sm->location_id = b->ids + s->at;
		sm->n_location_id = s->n;
		sm->value = s->v;
		sm->n_value = ntypes;
		for (k = 0; k < nlabels; k++) {
			pprof__label__init(&lb[k]);
			p.label_ptrs[i * nlabels + k] = &lb[k];
		}
		lb[0].key = key_comm;
		lb[0].str = s->comm;
		if (b->with_tid) {
			lb[1].key = key_pid;
			lb[1].num = s->pid;
			lb[2].key = key_tid;
			lb[2].num = s->tid;
		}
		sm->label = &p.label_ptrs[i * nlabels];
		sm->n_label = nlabels;
		p.sample_ptrs[i] = sm;
	}
	comment[0] = str_id(&b->st, b->event ? b->event : "no samples");
	if (b->st.oom)
		goto out;
	prof.n_sample_type = ntypes;
	prof.sample_type = type_ptrs;
	prof.period_type = &types[1];
	if (default_offcpu && b->offcpu)
		prof.default_sample_type = types[2].type;
	prof.n_sample = ns;
	prof.sample = p.sample_ptrs;
	prof.n_mapping = b->nr_maps;
	prof.mapping = p.map_ptrs;
	prof.n_location = b->nr_locs;
	prof.location = p.loc_ptrs;
	prof.n_function = b->nr_fns;
	prof.function = p.fn_ptrs;
	prof.n_string_table = b->st.n;
	prof.string_table = b->st.tab;
	prof.n_comment = 1;
	prof.comment = comment;
	rawlen = pprof__profile__get_packed_size(&prof);
	if (!(raw = malloc(rawlen + 1)))
		goto out;
	pprof__profile__pack(&prof, raw);
	rc = gzip_bytes(raw, rawlen, out, len);
out:
	free(raw);
	msg_free(&p);
	return rc;
}

int pe_pprof(const pe_model *m, const pe_filter *f, const pe_selection *s, uint8_t **out,
	     size_t *len)
{
	pe_pprof_b *b = pe_pprof_b_new();
	int rc = -1;

	*out = NULL;
	*len = 0;
	if (b && pe_pprof_b_add(b, m, f, s, 0) == 0)
		rc = pe_pprof_b_finish(b, 0, out, len);
	pe_pprof_b_free(b);
	return rc;
}
