/* pprof.c - a profile as pprof's profile.proto (encoded by protobuf-c), gzipped. */
#include "config.h"

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

/* What the profile message points into, freed together. */
typedef struct pprof_parts {
	strtab st;
	uint32_t *loc_of;	/* frame id -> location id (0 = none yet) */
	uint32_t *fn_of;	/* name key -> function id */
	uint32_t *map_of;	/* DSO string id -> mapping id */
	Pprof__Location *locs, **loc_ptrs;
	Pprof__Line *lines, **line_ptrs;
	Pprof__Function *fns, **fn_ptrs;
	Pprof__Mapping *maps, **map_ptrs;
	Pprof__Sample *samples, **sample_ptrs;
	Pprof__Label *labels, **label_ptrs;
	int64_t *values;
	uint64_t *loc_ids;
	size_t nr_locs, nr_fns, nr_maps;
} pprof_parts;

static void parts_free(pprof_parts *p)
{
	pe_strmap_free(&p->st.map);
	free(p->st.tab);
	free(p->loc_of);
	free(p->fn_of);
	free(p->map_of);
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
	free(p->values);
	free(p->loc_ids);
}

/* A frame counts as /top counts it: a known frame with a name. */
static int frame_ok(const pe_model *m, uint32_t fr)
{
	return fr < m->nr_frames && pe_str(m, m->frame_name[fr]);
}

/* The mapping of a DSO (string id), made on first use; 0 = none. */
static uint64_t mapping_of(const pe_model *m, pprof_parts *p, uint32_t dso)
{
	Pprof__Mapping *mp;
	const char *bid;

	if (!dso || !pe_str(m, dso))
		return 0;
	if (p->map_of[dso])
		return p->map_of[dso];
	mp = &p->maps[p->nr_maps];
	pprof__mapping__init(mp);
	mp->id = p->nr_maps + 1;
	mp->filename = str_id(&p->st, pe_str(m, dso));
	if ((bid = pe_build_id(m, dso)))
		mp->build_id = str_id(&p->st, bid);
	mp->has_functions = 1;	/* names come symbolized: nothing to look up */
	p->map_ptrs[p->nr_maps++] = mp;
	return p->map_of[dso] = (uint32_t)mp->id;
}

/* The function of a frame's name (with "_[k]" under f->kernel). */
static uint64_t function_of(const pe_model *m, const pe_filter *f, pprof_parts *p,
			    uint32_t fr)
{
	uint32_t nm = m->frame_name[fr];
	int mark = f->kernel && m->frame_kernel[fr];
	size_t key = 2 * (size_t)nm + (size_t)mark;
	const char *name = pe_str(m, nm);
	Pprof__Function *fn;
	pe_sbuf b = { 0 };

	if (p->fn_of[key])
		return p->fn_of[key];
	if (mark) {
		if (pe_sbuf_add(&b, name, strlen(name)) < 0 || pe_sbuf_add(&b, "_[k]", 4) < 0) {
			free(b.p);
			p->st.oom = 1;
			return 0;
		}
		name = b.p;
	}
	fn = &p->fns[p->nr_fns];
	pprof__function__init(fn);
	fn->id = p->nr_fns + 1;
	fn->name = fn->system_name = str_id(&p->st, name);
	free(b.p);
	p->fn_ptrs[p->nr_fns++] = fn;
	return p->fn_of[key] = (uint32_t)fn->id;
}

/* The location of a frame, made on first use. */
static uint64_t location_of(const pe_model *m, const pe_filter *f, pprof_parts *p,
			    uint32_t fr)
{
	Pprof__Location *loc;
	Pprof__Line *line;

	if (p->loc_of[fr])
		return p->loc_of[fr];
	loc = &p->locs[p->nr_locs];
	line = &p->lines[p->nr_locs];
	pprof__location__init(loc);
	pprof__line__init(line);
	loc->id = p->nr_locs + 1;
	loc->mapping_id = mapping_of(m, p, m->frame_dso[fr]);
	line->function_id = function_of(m, f, p, fr);
	p->line_ptrs[p->nr_locs] = line;
	loc->n_line = 1;
	loc->line = &p->line_ptrs[p->nr_locs];
	p->loc_ptrs[p->nr_locs++] = loc;
	return p->loc_of[fr] = (uint32_t)loc->id;
}

/* The stack of row r, leaf first, into ids (room for PE_MAX_DEPTH). */
static size_t stack_ids(const pe_model *m, const pe_filter *f, pprof_parts *p,
			const pe_agg_row *r, uint64_t *ids)
{
	uint32_t node = r->stack;
	size_t depth = 0, n = 0;

	while (node && node < m->nr_stacks && depth++ < PE_MAX_DEPTH) {
		uint32_t fr = m->stack_frame[node];
		if (frame_ok(m, fr)) {
			uint64_t id = location_of(m, f, p, fr);
			if (ids)
				ids[n] = id;
			n++;
		}
		if (m->stack_parent[node] >= node)
			break;
		node = m->stack_parent[node];
	}
	return n;
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

int pe_pprof(const pe_model *m, const pe_filter *f, const pe_selection *s, uint8_t **out,
	     size_t *len)
{
	const pe_aggmap *g = &s->groups;
	const char *ev = pe_fold_event(m, f->event);
	Pprof__Profile prof = PPROF__PROFILE__INIT;
	Pprof__ValueType types[2] = { PPROF__VALUE_TYPE__INIT, PPROF__VALUE_TYPE__INIT };
	Pprof__ValueType *type_ptrs[2] = { &types[0], &types[1] };
	size_t nf = m->nr_frames + 1, nlabels = f->with_tid ? 3 : 1, total = 0, i, k;
	int64_t comment[1], key_comm, key_pid, key_tid;
	pprof_parts p;
	pe_sbuf evname = { 0 };
	uint8_t *raw = NULL;
	size_t rawlen;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	*out = NULL;
	*len = 0;
	if (pe_strmap_grow(&p.st.map) < 0)
		goto out;
	str_id(&p.st, "");
	p.loc_of = calloc(nf, sizeof(*p.loc_of));
	p.fn_of = calloc(2 * (m->nr_strs + 1), sizeof(*p.fn_of));
	p.map_of = calloc(m->nr_strs + 1, sizeof(*p.map_of));
	p.locs = malloc(nf * sizeof(*p.locs));
	p.loc_ptrs = malloc(nf * sizeof(*p.loc_ptrs));
	p.lines = malloc(nf * sizeof(*p.lines));
	p.line_ptrs = malloc(nf * sizeof(*p.line_ptrs));
	p.fns = malloc(nf * sizeof(*p.fns));
	p.fn_ptrs = malloc(nf * sizeof(*p.fn_ptrs));
	p.maps = malloc(nf * sizeof(*p.maps));
	p.map_ptrs = malloc(nf * sizeof(*p.map_ptrs));
	p.samples = malloc((g->n + 1) * sizeof(*p.samples));
	p.sample_ptrs = malloc((g->n + 1) * sizeof(*p.sample_ptrs));
	p.labels = malloc((g->n + 1) * nlabels * sizeof(*p.labels));
	p.label_ptrs = malloc((g->n + 1) * nlabels * sizeof(*p.label_ptrs));
	p.values = malloc((g->n + 1) * 2 * sizeof(*p.values));
	if (!p.loc_of || !p.fn_of || !p.map_of || !p.locs || !p.loc_ptrs || !p.lines ||
	    !p.line_ptrs || !p.fns || !p.fn_ptrs || !p.maps || !p.map_ptrs || !p.samples ||
	    !p.sample_ptrs || !p.labels || !p.label_ptrs || !p.values)
		goto out;
	/* the locations, functions and mappings, and how many ids the stacks take */
	for (i = 0; i < g->n; i++)
		total += stack_ids(m, f, &p, &g->rows[i], NULL);
	if (!(p.loc_ids = malloc((total + 1) * sizeof(*p.loc_ids))))
		goto out;
	/* sample types: samples/count, then the period in the event's unit */
	if (type_name(&evname, ev) < 0)
		goto out;
	types[0].type = str_id(&p.st, "samples");
	types[0].unit = str_id(&p.st, "count");
	types[1].type = str_id(&p.st, evname.p);
	types[1].unit = str_id(&p.st, pe_event_unit(ev));
	key_comm = str_id(&p.st, "comm");
	key_pid = str_id(&p.st, "pid");
	key_tid = str_id(&p.st, "tid");
	for (i = 0, total = 0; i < g->n; i++) {
		const pe_agg_row *r = &g->rows[i];
		Pprof__Sample *sm = &p.samples[i];
		Pprof__Label *lb = &p.labels[i * nlabels];
		const char *comm = pe_str(m, r->comm);

		pprof__sample__init(sm);
		sm->location_id = p.loc_ids + total;
		sm->n_location_id = stack_ids(m, f, &p, r, sm->location_id);
		total += sm->n_location_id;
		sm->value = p.values + 2 * i;
		sm->value[0] = (int64_t)r->samples;
		sm->value[1] = (int64_t)r->period;
		sm->n_value = 2;
		for (k = 0; k < nlabels; k++) {
			pprof__label__init(&lb[k]);
			p.label_ptrs[i * nlabels + k] = &lb[k];
		}
		lb[0].key = key_comm;
		lb[0].str = str_id(&p.st, comm ? comm : "");
		if (f->with_tid) {
			lb[1].key = key_pid;
			lb[1].num = r->pid;
			lb[2].key = key_tid;
			lb[2].num = r->tid;
		}
		sm->label = &p.label_ptrs[i * nlabels];
		sm->n_label = nlabels;
		p.sample_ptrs[i] = sm;
	}
	comment[0] = str_id(&p.st, ev ? ev : "no samples");
	if (p.st.oom)
		goto out;
	prof.n_sample_type = 2;
	prof.sample_type = type_ptrs;
	prof.period_type = &types[1];
	prof.n_sample = g->n;
	prof.sample = p.sample_ptrs;
	prof.n_mapping = p.nr_maps;
	prof.mapping = p.map_ptrs;
	prof.n_location = p.nr_locs;
	prof.location = p.loc_ptrs;
	prof.n_function = p.nr_fns;
	prof.function = p.fn_ptrs;
	prof.n_string_table = p.st.n;
	prof.string_table = p.st.tab;
	prof.n_comment = 1;
	prof.comment = comment;
	rawlen = pprof__profile__get_packed_size(&prof);
	if (!(raw = malloc(rawlen + 1)))
		goto out;
	pprof__profile__pack(&prof, raw);
	rc = gzip_bytes(raw, rawlen, out, len);
out:
	free(raw);
	free(evname.p);
	parts_free(&p);
	return rc;
}
