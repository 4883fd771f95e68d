/* feed.c - a recording's records into the engine's builder. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/feed.h"
#include "engine/offcpu.h"
#include "fold.h"
#include "report.h"
#include "table.h"

#define PD_FOLD_NAME_LEN 4096	/* as fold.c builds names */
#define FEED_CHECK_STOP 4096	/* records between looks at the stop flag */
#define FEED_KINDS 256		/* events whose off-CPU kind is remembered by index */
#define PD_ATTR_CONTEXT_SWITCH (1ULL << 26)	/* perf_event_attr.context_switch */

/* The phases of a record's handling, timed on every PE_FEED_TIME_EVERY-th. */
enum { PH_READ, PH_SYMBOLIZE, PH_INTERN, PH_SAMPLE, PH_OTHER, PH_NR };

#define FEED_CHAIN_SLOTS 65536	/* callchain cache slots (a power of 2) */
#define FEED_CHAIN_MAX 256	/* longer callchains are not cached */

/*
 * Callchain cache: most samples repeat a callchain seen before, and while
 * nothing the thread's stacks depend on changed (its comm, its process's
 * maps, the kernel's: pd_symbolizer_stamp) the same raw callchain of the
 * same thread symbolizes to the same stack. A hit skips symbolizing,
 * naming and interning every frame, and finds the sample's aggregate row
 * without hashing. Other threads' forks and mmaps leave the slot valid.
 */
typedef struct chain_slot {
	uint64_t hash;		/* 0 = empty */
	uint64_t gen;		/* symbolizer generation when stored */
	uint32_t pid, tid;	/* the sample's */
	uint16_t misc;
	uint64_t ip;
	uint32_t nr;
	uint64_t *chain;	/* nr ips, owned */
	/* the answer */
	uint32_t node, comm, st_pid, st_tid;
	int all_named;
	uint32_t agg;		/* the builder's aggregate row hint (0 = none) */
	uint32_t leaf_frame;	/* the leaf node's frame and its address */
	uint64_t leaf_addr;
} chain_slot;

/*
 * Caller cache: a callchain missed above often differs from one seen
 * before in its leaf address only (another instruction of the same hot
 * function). Keyed by the chain with the leaf left out, it gives the node
 * of the callers' stack, so only the leaf is symbolized and interned.
 * Valid under the same per-thread stamps. Chains are taken only when
 * nothing can make their callers fold differently with the leaf than
 * without: context markers all known, no dwarf unwinding, and far below
 * the symbolizer's frame limit (which cuts the outermost frames).
 */
#define FEED_TAIL_SLOTS 65536	/* a power of 2 */
#define FEED_TAIL_MAX 100	/* longer callchains are not split */

typedef struct tail_slot {
	uint64_t hash;		/* 0 = empty */
	uint64_t gen;
	uint32_t pid, tid;
	uint16_t misc;
	uint32_t nr, leaf;	/* callchain length, the leaf's index */
	uint64_t *chain;	/* nr entries, the leaf's set to 0; owned */
	uint32_t node, comm, st_pid, st_tid;
	int all_named;		/* of the callers */
} tail_slot;

/*
 * Frame memo: a frame's name depends on its symbol, DSO and kernel context
 * only, so (symbol, DSO) pointers from the symbol cache find the interned
 * frame without naming it again; the strings are kept and compared too, as
 * a pointer may be reused once the cache drops a table.
 */
#define FEED_FRAME_SLOTS 16384	/* a power of 2 */
#define FEED_FOFF_SLOTS 8192	/* recently noted (frame, offset) pairs; a power of 2 */

typedef struct foff_slot {
	uint32_t frame;		/* 0 = empty */
	uint64_t off;
} foff_slot;

typedef struct frame_slot {
	const char *symp, *dsop;
	char *sym, *dso;	/* copies */
	int kernel;
	int used;
	uint32_t id;		/* 0 = the frame is dropped */
} frame_slot;

struct pe_feed {
	pd_file *f;
	pe_builder *b;
	frame_slot *frames;	/* FEED_FRAME_SLOTS, direct mapped; NULL = no memo */
	pd_symbolizer *sym;
	pe_feed_dso *dsos;
	size_t nr_dsos, cap_dsos;
	const char *last_dso;	/* the last unresolved frame's dso (a fast path) */
	pe_feed_dso *last;
	chain_slot *chains;	/* FEED_CHAIN_SLOTS, direct mapped; NULL = no cache */
	tail_slot *tails;	/* FEED_TAIL_SLOTS, direct mapped; NULL = no cache */
	foff_slot *foffs;	/* FEED_FOFF_SLOTS noted already (NULL = none): the
				   builder dedups them all, this saves it the lookup */
	int timing;		/* this record is timed */
	uint64_t ns[PH_NR];	/* timed records' nanoseconds by phase */
	pe_feed_stats stats;
	/* off-CPU time (offcpu.h): the tracker once a sched_switch sample came
	 * from a recording with switch events, each event's kind by index */
	pe_offcpu *oc;
	int oc_checked;
	signed char kinds[FEED_KINDS];	/* enum pe_offcpu_kinds + 1; 0 = not looked at */
	uint64_t last_time;	/* the latest real sample time */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The phase that ran since *t (when timing): *t moves on to now. */
static void phase_end(pe_feed *in, int phase, uint64_t *t)
{
	uint64_t now;

	if (!in->timing)
		return;
	now = now_ns();
	in->ns[phase] += now - *t;
	*t = now;
}

static uint64_t chain_hash(const pd_record *r)
{
	const pd_sample *s = &r->u.sample;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)s->pid << 32 | s->tid);
	uint64_t i;

	h = (h ^ r->misc) * 0x100000001b3ULL;
	h = (h ^ s->ip) * 0x100000001b3ULL;
	for (i = 0; i < s->nr_callchain; i++)
		h = (h ^ s->callchain[i]) * 0x100000001b3ULL;
	h ^= h >> 29;
	return h | 1;
}

static int chain_cacheable(const pd_record *r)
{
	const pd_sample *s = &r->u.sample;

	/* a dwarf-unwound stack depends on the copied stack bytes, not the chain */
	return s->nr_callchain <= FEED_CHAIN_MAX && !s->stack_user_size;
}

static chain_slot *chain_lookup(pe_feed *in, const pd_record *r, uint64_t h)
{
	const pd_sample *s = &r->u.sample;
	chain_slot *c = &in->chains[h & (FEED_CHAIN_SLOTS - 1)];

	if (c->hash != h || c->pid != s->pid || c->tid != s->tid || c->misc != r->misc ||
	    c->ip != s->ip || c->nr != s->nr_callchain ||
	    (c->nr && memcmp(c->chain, s->callchain, c->nr * sizeof(*c->chain))))
		return NULL;
	/* stale once the thread's comm or maps changed after it was stored */
	if (pd_symbolizer_stamp(in->sym, s->pid, s->tid) > c->gen)
		return NULL;
	return c;
}

/* The slot now holding the answer, NULL when it could not be kept. */
static chain_slot *chain_store(pe_feed *in, const pd_record *r, uint64_t h, uint32_t node,
			uint32_t comm, uint32_t pid, uint32_t tid, int all_named,
			uint32_t leaf_frame, uint64_t leaf_addr)
{
	const pd_sample *s = &r->u.sample;
	chain_slot *c = &in->chains[h & (FEED_CHAIN_SLOTS - 1)];
	uint64_t *chain = NULL;

	if (s->nr_callchain) {
		chain = c->nr >= s->nr_callchain && c->chain ? c->chain :
			realloc(c->chain, s->nr_callchain * sizeof(*chain));
		if (!chain) {
			c->hash = 0;
			return NULL;
		}
		memcpy(chain, s->callchain, s->nr_callchain * sizeof(*chain));
		c->chain = chain;
	}
	c->hash = h;
	c->gen = pd_symbolizer_generation(in->sym);
	c->agg = 0;
	c->pid = s->pid;
	c->tid = s->tid;
	c->misc = r->misc;
	c->ip = s->ip;
	c->nr = (uint32_t)s->nr_callchain;
	c->node = node;
	c->comm = comm;
	c->st_pid = pid;
	c->st_tid = tid;
	c->all_named = all_named;
	c->leaf_frame = leaf_frame;
	c->leaf_addr = leaf_addr;
	return c;
}

static void chain_cache_free(pe_feed *in)
{
	size_t i;

	if (!in->chains)
		return;
	for (i = 0; i < FEED_CHAIN_SLOTS; i++)
		free(in->chains[i].chain);
	free(in->chains);
	in->chains = NULL;
}

/* The leaf's index in a callchain the caller cache may take, else -1. */
static long tail_leaf(const pd_record *r)
{
	const pd_sample *s = &r->u.sample;
	long leaf = -1;
	uint64_t i;

	if (!(s->fields & PD_SAMPLE_CALLCHAIN) || !s->callchain || !s->nr_callchain ||
	    s->nr_callchain > FEED_TAIL_MAX || s->stack_user_size ||
	    (s->event && (s->event->attr.sample_type & (PD_SAMPLE_REGS_USER | PD_SAMPLE_STACK_USER))))
		return -1;
	for (i = 0; i < s->nr_callchain; i++) {
		uint64_t ip = s->callchain[i];

		if (ip < PD_CONTEXT_MAX) {
			if (leaf < 0)
				leaf = (long)i;
			continue;
		}
		/* a marker the symbolizer does not know drops the whole chain */
		if (ip != PD_CONTEXT_HV && ip != PD_CONTEXT_KERNEL && ip != PD_CONTEXT_USER &&
		    ip != PD_CONTEXT_GUEST && ip != PD_CONTEXT_GUEST_KERNEL &&
		    ip != PD_CONTEXT_GUEST_USER)
			return -1;
	}
	return leaf;
}

static uint64_t tail_hash(const pd_record *r, long leaf)
{
	const pd_sample *s = &r->u.sample;
	uint64_t h = 0x84222325cbf29ce4ULL ^ ((uint64_t)s->pid << 32 | s->tid);
	uint64_t i;

	h = (h ^ r->misc ^ (uint64_t)leaf << 16) * 0x100000001b3ULL;
	for (i = 0; i < s->nr_callchain; i++)
		if (i != (uint64_t)leaf)
			h = (h ^ s->callchain[i]) * 0x100000001b3ULL;
	h ^= h >> 29;
	return h | 1;
}

static tail_slot *tail_lookup(pe_feed *in, const pd_record *r, long leaf, uint64_t h)
{
	const pd_sample *s = &r->u.sample;
	tail_slot *t = &in->tails[h & (FEED_TAIL_SLOTS - 1)];
	size_t l = (size_t)leaf;

	if (t->hash != h || t->pid != s->pid || t->tid != s->tid || t->misc != r->misc ||
	    t->nr != s->nr_callchain || t->leaf != l ||
	    memcmp(t->chain, s->callchain, l * sizeof(*t->chain)) ||
	    memcmp(t->chain + l + 1, s->callchain + l + 1, (t->nr - l - 1) * sizeof(*t->chain)))
		return NULL;
	if (pd_symbolizer_stamp(in->sym, s->pid, s->tid) > t->gen)
		return NULL;
	return t;
}

static void tail_store(pe_feed *in, const pd_record *r, long leaf, uint64_t h, uint32_t node,
		       uint32_t comm, uint32_t pid, uint32_t tid, int all_named)
{
	const pd_sample *s = &r->u.sample;
	tail_slot *t = &in->tails[h & (FEED_TAIL_SLOTS - 1)];
	uint64_t *chain = t->nr >= s->nr_callchain && t->chain ? t->chain :
			  realloc(t->chain, s->nr_callchain * sizeof(*chain));

	if (!chain) {
		t->hash = 0;
		return;
	}
	memcpy(chain, s->callchain, s->nr_callchain * sizeof(*chain));
	chain[leaf] = 0;
	t->chain = chain;
	t->hash = h;
	t->gen = pd_symbolizer_generation(in->sym);
	t->pid = s->pid;
	t->tid = s->tid;
	t->misc = r->misc;
	t->nr = (uint32_t)s->nr_callchain;
	t->leaf = (uint32_t)leaf;
	t->node = node;
	t->comm = comm;
	t->st_pid = pid;
	t->st_tid = tid;
	t->all_named = all_named;
}

static void tail_cache_free(pe_feed *in)
{
	size_t i;

	if (!in->tails)
		return;
	for (i = 0; i < FEED_TAIL_SLOTS; i++)
		free(in->tails[i].chain);
	free(in->tails);
	in->tails = NULL;
}

static pe_feed_dso *dso_find(pe_feed *in, const char *path, int add)
{
	size_t i;

	for (i = 0; i < in->nr_dsos; i++)
		if (!strcmp(in->dsos[i].path, path))
			return &in->dsos[i];
	if (!add || in->nr_dsos >= PE_FEED_MAX_DSOS)
		return NULL;
	if (in->nr_dsos == in->cap_dsos) {
		size_t nc = in->cap_dsos ? in->cap_dsos * 2 : 64;
		pe_feed_dso *p = realloc(in->dsos, nc * sizeof(*p));

		if (!p)
			return NULL;
		in->dsos = p;
		in->cap_dsos = nc;
		in->last = NULL;
		in->last_dso = NULL;
	}
	memset(&in->dsos[in->nr_dsos], 0, sizeof(in->dsos[0]));
	in->dsos[in->nr_dsos].path = strdup(path);
	if (!in->dsos[in->nr_dsos].path)
		return NULL;
	return &in->dsos[in->nr_dsos++];
}

static void note_build_id(pe_feed *in, const char *path, const uint8_t *bid, size_t n)
{
	pe_feed_dso *d;
	size_t i;

	if (!path || !n)
		return;
	d = dso_find(in, path, 1);
	if (!d || d->hex[0])
		return;
	for (i = 0; i < n && i < PE_FEED_MAX_BUILD_ID; i++)
		snprintf(d->hex + 2 * i, 3, "%02x", bid[i]);
}

static void note_unresolved(pe_feed *in, const char *dso)
{
	if (!dso)
		return;
	/* frames of one dso come in runs: skip the search then */
	if (!in->last_dso || strcmp(in->last_dso, dso)) {
		in->last = dso_find(in, dso, 1);
		in->last_dso = in->last ? in->last->path : NULL;
	}
	if (in->last)
		in->last->unresolved++;
}

static void dsos_free(pe_feed *in)
{
	size_t i;

	for (i = 0; i < in->nr_dsos; i++)
		free(in->dsos[i].path);
	free(in->dsos);
}

/* The frame as stackcollapse-perf names it (pd_fold_frame_name, the one
 * implementation `perfhub collapse` uses too), interned; 0 = dropped. */
static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static uint32_t store_frame(pe_feed *in, const pd_frame *fr, int *failed)
{
	char name[PD_FOLD_NAME_LEN], kname[PD_FOLD_NAME_LEN];
	uint32_t id;
	int kernel;
	frame_slot *m = NULL;

	if (in->frames) {
		uint64_t h = ((uint64_t)(uintptr_t)fr->sym * 0x9e3779b97f4a7c15ULL) ^
			     ((uint64_t)(uintptr_t)fr->dso * 0xc2b2ae3d27d4eb4fULL) ^ (uint64_t)!!fr->kernel;
		m = &in->frames[(h ^ (h >> 29)) & (FEED_FRAME_SLOTS - 1)];
		if (m->used && m->symp == fr->sym && m->dsop == fr->dso && m->kernel == !!fr->kernel &&
		    same_str(m->sym, fr->sym) && same_str(m->dso, fr->dso)) {
			id = m->id;
			goto known;
		}
	}
	if (!pd_fold_frame_name(fr, 0, name, sizeof(name))) {
		id = 0;
		goto remember;
	}
	/* whether --kernel would mark it "_[k]" */
	pd_fold_frame_name(fr, PD_FOLD_KERNEL, kname, sizeof(kname));
	kernel = strcmp(name, kname) != 0;
	id = pe_builder_frame(in->b, name, fr->dso, fr->sym != NULL, kernel);
	if (!id) {
		*failed = 1;
		return 0;
	}
remember:
	if (m) {
		char *s = fr->sym ? strdup(fr->sym) : NULL, *d = fr->dso ? strdup(fr->dso) : NULL;
		free(m->sym);
		free(m->dso);
		m->used = (!fr->sym || s) && (!fr->dso || d);
		m->symp = fr->sym;
		m->dsop = fr->dso;
		m->sym = s;
		m->dso = d;
		m->kernel = !!fr->kernel;
		m->id = id;
	}
known:
	/* the offset lets a later pass symbolize what is unresolved now */
	if (id && !fr->sym && fr->dso) {
		uint64_t h = (fr->dso_off ^ (uint64_t)id << 40) * 0x9e3779b97f4a7c15ULL;
		foff_slot *o = in->foffs ? &in->foffs[(h >> 40) & (FEED_FOFF_SLOTS - 1)] : NULL;

		if (!o || o->frame != id || o->off != fr->dso_off) {
			if (pe_builder_frame_offset(in->b, id, fr->dso_off) < 0)
				*failed = 1;
			if (o) {
				o->frame = id;
				o->off = fr->dso_off;
			}
		}
	}
	return id;
}

static uint64_t nr_markers(const pd_record *r)
{
	uint64_t i, n = 0;

	for (i = 0; i < r->u.sample.nr_callchain; i++)
		n += r->u.sample.callchain[i] >= PD_CONTEXT_MAX;
	return n;
}

/* The off-CPU kind (offcpu.h) of the sample's event, looked up once per event. */
static int event_kind(pe_feed *in, const pd_event *ev)
{
	int k;

	if (!ev)
		return PE_OFFCPU_OTHER;
	if (ev->index < FEED_KINDS && in->kinds[ev->index])
		return in->kinds[ev->index] - 1;
	k = pe_offcpu_kind(ev->name);
	if (ev->index < FEED_KINDS)
		in->kinds[ev->index] = (signed char)(k + 1);
	return k;
}

/* Switch events recorded (perf record --switch-events): then the tracker. */
static void offcpu_start(pe_feed *in)
{
	size_t i;

	in->oc_checked = 1;
	for (i = 0; i < pd_nr_events(in->f); i++)
		if (pd_get_event(in->f, i)->attr.flags & PD_ATTR_CONTEXT_SWITCH) {
			in->oc = pe_offcpu_new();	/* NULL: off-CPU time is not measured */
			return;
		}
}

/* A sample without a hint for the builder's aggregate. 0 or -1. */
static int add_sample(pe_feed *in, const pe_sample *row)
{
	return pe_builder_sample(in->b, row, NULL) != 0 ? -1 : 0;
}

/* A sample's off-CPU time: perf --off-cpu's period, or (a sched_switch
 * sample) held until its thread's switch-in. 1 = add row now, 0 = held,
 * -1 = error. */
static int offcpu_sample(pe_feed *in, const pd_sample *s, pe_sample *row)
{
	pe_sample out;
	int rc;

	switch (event_kind(in, s->event)) {
	case PE_OFFCPU_TIME:
		row->offcpu = row->period;
		/* no real time: at the end of what was recorded */
		if (row->time >= PE_OFFCPU_TIMESTAMP)
			row->time = in->last_time;
		return 1;
	case PE_OFFCPU_SWITCH:
		if (!in->oc)
			return 1;
		rc = pe_offcpu_hold(in->oc, row, &out);
		if (rc == 1 && add_sample(in, &out) < 0)
			return -1;
		return rc < 0 ? -1 : rc == 2;
	default:
		if (row->time > in->last_time && row->time < PE_OFFCPU_TIMESTAMP)
			in->last_time = row->time;
		return 1;
	}
}

/* A thread switched out (preempted or not), or in: its held switch-out
 * sample, with its off-CPU time. */
static int on_switch(pe_feed *in, const pd_record *r)
{
	pe_sample out;

	if (!in->oc || !r->has_sample_id)
		return 0;
	if (r->u.sw.out) {
		pe_offcpu_out(in->oc, r->sample_id.tid, r->u.sw.preempt);
		return 0;
	}
	if (!pe_offcpu_in(in->oc, r->sample_id.tid, r->sample_id.time, &out))
		return 0;
	return add_sample(in, &out);
}

/* The end: samples still held are added with what they have (0). */
static int offcpu_end(pe_feed *in)
{
	pe_sample out;

	if (!in->oc)
		return 0;
	while (pe_offcpu_drain(in->oc, &out))
		if (add_sample(in, &out) < 0)
			return -1;
	pe_offcpu_get_stats(in->oc, &in->stats.offcpu);
	return 0;
}

static int on_sample(pe_feed *in, const pd_record *r)
{
	const pd_sample *s = &r->u.sample;
	uint32_t node = 0, comm, pid, tid;
	int all_named = 1, failed = 0, cacheable = in->chains && chain_cacheable(r);
	uint64_t h = 0, th = 0;
	chain_slot *hit = NULL;
	tail_slot *tail = NULL;
	long leaf = -1;
	uint32_t callers = 0, leaf_fid = 0;
	uint64_t leaf_addr = 0;
	int callers_named = 1;
	pd_stack st;
	pe_sample row;
	size_t i;
	uint64_t t = in->timing ? now_ns() : 0;

	if (cacheable) {
		h = chain_hash(r);
		hit = chain_lookup(in, r, h);
	}
	if (hit) {
		in->stats.chain_hits++;
		node = hit->node;
		comm = hit->comm;
		pid = hit->st_pid;
		tid = hit->st_tid;
		all_named = hit->all_named;
		leaf_fid = hit->leaf_frame;
		leaf_addr = hit->leaf_addr;
		goto write;
	}
	if (cacheable && in->tails && (leaf = tail_leaf(r)) >= 0) {
		th = tail_hash(r, leaf);
		tail = tail_lookup(in, r, leaf, th);
	}
	if (tail) {
		/* the markers before the leaf and the leaf: its frame alone */
		pd_record one = *r;

		one.u.sample.nr_callchain = (uint64_t)leaf + 1;
		if (pd_symbolize(in->sym, &one, &st) < 0)
			return -1;
		phase_end(in, PH_SYMBOLIZE, &t);
		/* a dropped leaf frame leaves the callers' leaf, whose address
		 * the whole chain gives */
		uint32_t fid = st.nr == 1 ? store_frame(in, &st.frames[0], &failed) : 0;

		if (failed)
			return -1;
		if (fid) {
			leaf_fid = fid;
			leaf_addr = st.frames[0].dso_off;
			node = tail->node;
			all_named = tail->all_named;
			if (!st.frames[0].sym) {
				all_named = 0;
				note_unresolved(in, st.frames[0].dso);
			}
			if (!(node = pe_builder_stack(in->b, node, fid)))
				return -1;
			comm = tail->comm;
			pid = tail->st_pid;
			tid = tail->st_tid;
			in->stats.tail_hits++;
			goto store;
		}
		tail = NULL;	/* not one frame after all: the whole chain */
	}
	if (pd_symbolize(in->sym, r, &st) < 0)
		return -1;
	phase_end(in, PH_SYMBOLIZE, &t);
	/* frames come innermost first; the tree is outermost first */
	for (i = st.nr; i-- > 0;) {
		if (i == 0) {
			callers = node;	/* the stack without the leaf */
			callers_named = all_named;
		}
		uint32_t fid = store_frame(in, &st.frames[i], &failed);
		if (failed)
			return -1;
		if (!st.frames[i].sym) {
			all_named = 0;
			note_unresolved(in, st.frames[i].dso);
		}
		if (!fid)
			continue;
		leaf_fid = fid;	/* the innermost frame kept is the leaf */
		leaf_addr = st.frames[i].dso_off;
		node = pe_builder_stack(in->b, node, fid);
		if (!node)
			return -1;
	}
	comm = pe_builder_string(in->b, st.comm ? st.comm : "");
	pid = st.pid;
	tid = st.tid;
	/* one frame per address: the leaf is frames[0] */
	if (leaf >= 0 && th && st.nr > 1 &&
	    st.nr == r->u.sample.nr_callchain - nr_markers(r))
		tail_store(in, r, leaf, th, callers, comm, pid, tid, callers_named);
store:
	if (cacheable)
		hit = chain_store(in, r, h, node, comm, pid, tid, all_named, leaf_fid, leaf_addr);
write:
	phase_end(in, PH_INTERN, &t);
	memset(&row, 0, sizeof(row));
	row.event = s->event ? s->event->index : 0;
	row.time = s->time;
	row.cpu = s->cpu;
	row.pid = pid;
	row.tid = tid;
	row.period = pd_sample_script_period(s);	/* stackcollapse-perf's weight */
	row.weight = s->weight;
	row.stack = node;
	row.comm = comm;
	row.leaf_frame = leaf_fid;
	row.leaf_addr = leaf_addr;
	in->stats.samples++;
	if (all_named)
		in->stats.resolved_samples++;
	switch (offcpu_sample(in, s, &row)) {
	case 1:
		break;
	case 0:
		phase_end(in, PH_SAMPLE, &t);
		return 0;
	default:
		return -1;
	}
	/* the builder's hook takes full blocks: 1 (no hook) is an error too */
	if (pe_builder_sample(in->b, &row, hit ? &hit->agg : NULL) != 0)
		return -1;
	phase_end(in, PH_SAMPLE, &t);
	return 0;
}

static int on_mmap(pe_feed *in, const pd_record *r)
{
	const pd_mmap *m = &r->u.mmap;
	char bid[41] = "";
	uint64_t time = r->has_sample_id ? r->sample_id.time : 0;
	unsigned i;

	for (i = 0; i < m->build_id_size && i < 20; i++)
		snprintf(bid + 2 * i, 3, "%02x", m->build_id[i]);
	/* the kernel's MMAP2 is "[kernel.kallsyms]_text"; frames say "[kernel.kallsyms]" */
	note_build_id(in, m->filename && !strncmp(m->filename, "[kernel.kallsyms]", 17) ?
			  "[kernel.kallsyms]" : m->filename, m->build_id, m->build_id_size);
	return pe_builder_mmap(in->b, m->pid, m->start, m->len, m->pgoff,
			      m->filename ? m->filename : "", bid[0] ? bid : NULL, time);
}

static int on_comm(pe_feed *in, const pd_record *r)
{
	const pd_comm *c = &r->u.comm;

	return pe_builder_comm(in->b, c->pid, c->tid, r->has_sample_id ? r->sample_id.time : 0,
			      c->comm ? c->comm : "");
}


pe_feed *pe_feed_new(pd_file *f, pd_symbolizer *sym, pe_builder *b)
{
	pe_feed *in = calloc(1, sizeof(*in));
	const pd_header *h = pd_get_header(f);
	size_t i;

	if (!in)
		return NULL;
	in->f = f;
	in->sym = sym;
	in->b = b;
	/* each NULL: that cache is not used */
	in->chains = pd_table_new(FEED_CHAIN_SLOTS, sizeof(*in->chains));
	in->tails = pd_table_new(FEED_TAIL_SLOTS, sizeof(*in->tails));
	in->frames = pd_table_new(FEED_FRAME_SLOTS, sizeof(*in->frames));
	in->foffs = pd_table_new(FEED_FOFF_SLOTS, sizeof(*in->foffs));
	for (i = 0; h && i < h->nr_build_ids; i++)
		note_build_id(in, h->build_ids[i].filename, h->build_ids[i].build_id,
			      h->build_ids[i].size);
	return in;
}

void pe_feed_free(pe_feed *in)
{
	size_t i;

	if (!in)
		return;
	dsos_free(in);
	chain_cache_free(in);
	tail_cache_free(in);
	pe_offcpu_free(in->oc);
	free(in->foffs);
	if (in->frames) {
		for (i = 0; i < FEED_FRAME_SLOTS; i++) {
			free(in->frames[i].sym);
			free(in->frames[i].dso);
		}
		free(in->frames);
	}
	free(in);
}

int pe_feed_run(pe_feed *in, atomic_int *stop, pd_error *err)
{
	pe_feed_stats *st = &in->stats;
	uint64_t t_rec = 0;
	pd_record r;
	int rc;

	for (;;) {
		int wrc = 0;

		in->timing = (st->records & (PE_FEED_TIME_EVERY - 1)) == 0;
		if (in->timing)
			t_rec = now_ns();
		if ((rc = pd_next(in->f, &r, err)) <= 0)
			break;
		phase_end(in, PH_READ, &t_rec);
		st->records++;
		if (stop && st->records % FEED_CHECK_STOP == 0 && atomic_load(stop))
			return PE_FEED_STOPPED;
		if (r.type == PD_RECORD_HEADER_BUILD_ID)
			note_build_id(in, r.u.build_id.filename, r.u.build_id.build_id,
				      r.u.build_id.size);
		if (r.type != PD_RECORD_SAMPLE && pd_symbolizer_record(in->sym, &r) < 0)
			st->symbolizer_limits++;
		switch (r.type) {
		case PD_RECORD_SAMPLE:
			if (!in->oc_checked)
				offcpu_start(in);
			wrc = on_sample(in, &r);
			break;
		case PD_RECORD_SWITCH:
		case PD_RECORD_SWITCH_CPU_WIDE:
			wrc = on_switch(in, &r);
			break;
		case PD_RECORD_MMAP:
		case PD_RECORD_MMAP2:
			wrc = on_mmap(in, &r);
			break;
		case PD_RECORD_COMM:
			wrc = on_comm(in, &r);
			break;
		default:
			break;
		}
		if (r.type != PD_RECORD_SAMPLE)
			phase_end(in, PH_OTHER, &t_rec);
		if (wrc < 0)
			return PE_FEED_BUILD_ERROR;
	}
	if (rc >= 0 && offcpu_end(in) < 0)
		return PE_FEED_BUILD_ERROR;
	st->read_ns = in->ns[PH_READ] * PE_FEED_TIME_EVERY;
	st->symbolize_ns = in->ns[PH_SYMBOLIZE] * PE_FEED_TIME_EVERY;
	st->intern_ns = in->ns[PH_INTERN] * PE_FEED_TIME_EVERY;
	st->sample_ns = in->ns[PH_SAMPLE] * PE_FEED_TIME_EVERY;
	st->other_ns = in->ns[PH_OTHER] * PE_FEED_TIME_EVERY;
	return rc < 0 ? PE_FEED_PARSE_ERROR : PE_FEED_DONE;
}

int pe_feed_summary(pe_feed *in, const json_t *report)
{
	const json_t *feats = json_object_get(json_object_get(report, "header"), "features");
	const json_t *records = json_object_get(report, "records");
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)feats, key, v) {
		char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		int bad = !t || pe_builder_feature(in->b, key, t) < 0;

		free(t);
		if (bad)
			return -1;
	}
	json_object_foreach((json_t *)records, key, v)
		if (pe_builder_record_count(in->b, key, (uint64_t)json_integer_value(v)) < 0)
			return -1;
	for (i = 0; i < pd_nr_events(in->f); i++) {
		const pd_event *ev = pd_get_event(in->f, i);
		int freq = (ev->attr.flags & PD_ATTR_FREQ) != 0;

		if (pe_builder_event(in->b, ev->index, ev->name, ev->attr.type, ev->attr.config,
				     ev->attr.sample_type, ev->attr.sample_period, freq,
				     ev->nr_samples) < 0)
			return -1;
	}
	return 0;
}

const pe_feed_stats *pe_feed_get_stats(const pe_feed *in)
{
	return &in->stats;
}

const pe_feed_dso *pe_feed_dsos(const pe_feed *in, size_t *n)
{
	*n = in->nr_dsos;
	return in->dsos;
}

/* Finishes the offline profile with the build-ids of the dsos the
 * recording names (the daemon's store keeps them beside the profile): the
 * model knows them by the string id of the dso's path. 0 or -1. */
static int offline_finish(pe_feed *in, pe_offline *o)
{
	size_t n = 0, i;
	const pe_feed_dso *d = pe_feed_dsos(in, &n);
	uint32_t *ids = calloc(n + 1, sizeof(*ids));
	int rc = -1;

	if (!ids)
		return -1;
	for (i = 0; i < n; i++)
		if (d[i].hex[0] && d[i].path)
			ids[i] = pe_builder_string(pe_offline_builder(o), d[i].path);
	if (pe_offline_finish(o) < 0)
		goto out;
	rc = 0;
	for (i = 0; i < n && rc == 0; i++)
		if (ids[i])
			rc = pe_model_add_build_id(pe_offline_model(o), ids[i], d[i].hex);
out:
	free(ids);
	return rc;
}

pe_offline *pe_feed_load(const char *path, const pd_sym_options *so, pe_feed_warn_fn warn,
			 void *ctx, char *msg, size_t msglen)
{
	pd_options po = { .ordered = 1 };
	pd_sym_options sopt = { 0 };
	pd_symbolizer *sym = NULL;
	pe_offline *o = NULL;
	pe_feed *in = NULL;
	pd_file *f = NULL;
	json_t *rep = NULL;
	pd_error err;
	size_t i;
	int rc;

	if (so)
		sopt = *so;
	if (!sopt.recording)
		sopt.recording = path;
	f = pd_open_path(path, &po, &err);
	if (!f)
		goto parse_error;
	sym = pd_symbolizer_new(f, NULL, &sopt);
	o = pe_offline_new();
	if (!sym || !o || !(in = pe_feed_new(f, sym, pe_offline_builder(o))))
		goto nomem;
	rc = pe_feed_run(in, NULL, &err);
	if (rc == PE_FEED_PARSE_ERROR)
		goto parse_error;
	if (rc != PE_FEED_DONE)
		goto nomem;
	/* the events name the model's samples; features and counts are cheap */
	rep = report_json(f);
	if (!rep || pe_feed_summary(in, rep) < 0 || offline_finish(in, o) < 0)
		goto nomem;
	/* which binary each DSO was, for annotating */
	for (i = 0; i < in->nr_dsos; i++)
		if (in->dsos[i].hex[0] && pe_offline_note_dso(o, in->dsos[i].path, in->dsos[i].hex) < 0)
			goto nomem;
	for (i = 0; warn && i < pd_symbolizer_nr_warnings(sym); i++)
		warn(ctx, pd_symbolizer_warning(sym, i));
	goto out;
parse_error:
	pd_strerror(&err, msg, msglen);
	goto fail;
nomem:
	snprintf(msg, msglen, "out of memory building the profile");
fail:
	pe_offline_free(o);
	o = NULL;
out:
	json_decref(rep);
	pe_feed_free(in);
	pd_symbolizer_free(sym);
	pd_close(f);
	return o;
}
