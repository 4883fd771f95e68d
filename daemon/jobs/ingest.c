/* ingest.c - a recording's records into the store's rows. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "jobs/ingest.h"
#include "log.h"
#include "perfdata.h"
#include "dso.h"
#include "fold.h"
#include "report.h"
#include "symbols.h"
#include "intake/spool.h"
#include "dirpack.h"

#define PD_FOLD_NAME_LEN 4096	/* as fold.c builds names */
#define ING_CHECK_STOP 4096	/* records between looks at the stop flag */
#define ING_MAX_DSOS 4096	/* distinct dsos remembered for re-symbolization */
#define ING_TIME_EVERY 16	/* records between timed ones (a power of 2) */

/* The phases of a record's handling, timed on every ING_TIME_EVERY-th. */
enum { PH_READ, PH_SYMBOLIZE, PH_INTERN, PH_SAMPLE, PH_OTHER, PH_NR };

/* A dso seen by the recording: its build-id (from the BUILD_ID feature,
 * HEADER_BUILD_ID records or MMAP2) and how many frames in it stayed
 * without a name. */
typedef struct ing_dso {
	char *path;
	char hex[DBG_HEX_LEN];
	uint64_t unresolved;	/* a lower bound: callchain cache hits are not counted */
} ing_dso;
#define ING_CHAIN_SLOTS 65536	/* callchain cache slots (a power of 2) */
#define ING_CHAIN_MAX 256	/* longer callchains are not cached */

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
	uint32_t agg;		/* the writer's aggregate row hint (0 = none) */
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
#define ING_TAIL_SLOTS 65536	/* a power of 2 */
#define ING_TAIL_MAX 100	/* longer callchains are not split */

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
#define ING_FRAME_SLOTS 16384	/* a power of 2 */
#define ING_FOFF_SLOTS 8192	/* recently noted (frame, offset) pairs; a power of 2 */

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

typedef struct ingest {
	st_writer *w;
	frame_slot *frames;	/* ING_FRAME_SLOTS, direct mapped; NULL = no memo */
	pd_symbolizer *sym;
	uint64_t samples, resolved_samples;
	ing_dso *dsos;
	size_t nr_dsos, cap_dsos;
	const char *last_dso;	/* the last unresolved frame's dso (a fast path) */
	ing_dso *last;
	chain_slot *chains;	/* ING_CHAIN_SLOTS, direct mapped; NULL = no cache */
	uint64_t chain_hits;
	tail_slot *tails;	/* ING_TAIL_SLOTS, direct mapped; NULL = no cache */
	uint64_t tail_hits;
	foff_slot *foffs;	/* ING_FOFF_SLOTS noted already (NULL = none): the
				   writer dedups them all, this saves it the lookup */
	int timing;		/* this record is timed */
	uint64_t ns[PH_NR];	/* timed records' nanoseconds by phase */
} ingest;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The phase that ran since *t (when timing): *t moves on to now. */
static void phase_end(ingest *in, int phase, uint64_t *t)
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
	return s->nr_callchain <= ING_CHAIN_MAX && !s->stack_user_size;
}

static chain_slot *chain_lookup(ingest *in, const pd_record *r, uint64_t h)
{
	const pd_sample *s = &r->u.sample;
	chain_slot *c = &in->chains[h & (ING_CHAIN_SLOTS - 1)];

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
static chain_slot *chain_store(ingest *in, const pd_record *r, uint64_t h, uint32_t node,
			uint32_t comm, uint32_t pid, uint32_t tid, int all_named)
{
	const pd_sample *s = &r->u.sample;
	chain_slot *c = &in->chains[h & (ING_CHAIN_SLOTS - 1)];
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
	return c;
}

static void chain_cache_free(ingest *in)
{
	size_t i;

	if (!in->chains)
		return;
	for (i = 0; i < ING_CHAIN_SLOTS; i++)
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
	    s->nr_callchain > ING_TAIL_MAX || s->stack_user_size ||
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

static tail_slot *tail_lookup(ingest *in, const pd_record *r, long leaf, uint64_t h)
{
	const pd_sample *s = &r->u.sample;
	tail_slot *t = &in->tails[h & (ING_TAIL_SLOTS - 1)];
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

static void tail_store(ingest *in, const pd_record *r, long leaf, uint64_t h, uint32_t node,
		       uint32_t comm, uint32_t pid, uint32_t tid, int all_named)
{
	const pd_sample *s = &r->u.sample;
	tail_slot *t = &in->tails[h & (ING_TAIL_SLOTS - 1)];
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

static void tail_cache_free(ingest *in)
{
	size_t i;

	if (!in->tails)
		return;
	for (i = 0; i < ING_TAIL_SLOTS; i++)
		free(in->tails[i].chain);
	free(in->tails);
	in->tails = NULL;
}

static ing_dso *dso_find(ingest *in, const char *path, int add)
{
	size_t i;

	for (i = 0; i < in->nr_dsos; i++)
		if (!strcmp(in->dsos[i].path, path))
			return &in->dsos[i];
	if (!add || in->nr_dsos >= ING_MAX_DSOS)
		return NULL;
	if (in->nr_dsos == in->cap_dsos) {
		size_t nc = in->cap_dsos ? in->cap_dsos * 2 : 64;
		ing_dso *p = realloc(in->dsos, nc * sizeof(*p));

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

static void note_build_id(ingest *in, const char *path, const uint8_t *bid, size_t n)
{
	ing_dso *d;
	size_t i;

	if (!path || !n)
		return;
	d = dso_find(in, path, 1);
	if (!d || d->hex[0])
		return;
	for (i = 0; i < n && i < DBG_MAX_BUILD_ID; i++)
		snprintf(d->hex + 2 * i, 3, "%02x", bid[i]);
}

static void note_unresolved(ingest *in, const char *dso)
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

/* The (build-id, dso, unresolved frames) rows re-symbolization looks for. */
static void write_dsos(ingest *in, st_store *st, int64_t id)
{
	const char **bids = calloc(in->nr_dsos + 1, sizeof(*bids));
	const char **paths = calloc(in->nr_dsos + 1, sizeof(*paths));
	uint64_t *unres = calloc(in->nr_dsos + 1, sizeof(*unres));
	size_t i, n = 0;

	if (bids && paths && unres) {
		for (i = 0; i < in->nr_dsos; i++) {
			if (!in->dsos[i].hex[0])
				continue;
			bids[n] = in->dsos[i].hex;
			paths[n] = in->dsos[i].path;
			unres[n++] = in->dsos[i].unresolved;
		}
		if (st_profile_dsos_set(st, id, n, bids, paths, unres) < 0)
			log_warn("msg=\"cannot note unresolved dsos\" id=%lld", (long long)id);
	}
	free(bids);
	free(paths);
	free(unres);
}

/* Symbols that arrived while this parse ran may have come too late for
 * it (the PUT's re-symbolization saw the profile still parsing): once
 * more, then. Only files added in a second after the parse began count,
 * so the next parse (which starts later) cannot repeat this. */
static void requeue_if_late(ingest *in, st_store *st, int64_t id, int64_t started)
{
	size_t i;

	for (i = 0; i < in->nr_dsos; i++) {
		if (!in->dsos[i].hex[0] || !in->dsos[i].unresolved ||
		    st_debuginfo_added_since(st, in->dsos[i].hex, started) != 1)
			continue;
		if (st_profile_resymbolize(st, id) == 0)
			log_info("msg=\"resymbolize\" id=%lld build_id=%s reason=\"arrived during the parse\"",
				 (long long)id, in->dsos[i].hex);
		return;
	}
}

static void dsos_free(ingest *in)
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

static uint32_t store_frame(ingest *in, const pd_frame *fr, int *failed)
{
	char name[PD_FOLD_NAME_LEN], kname[PD_FOLD_NAME_LEN];
	uint32_t id;
	int kernel;
	frame_slot *m = NULL;

	if (in->frames) {
		uint64_t h = ((uint64_t)(uintptr_t)fr->sym * 0x9e3779b97f4a7c15ULL) ^
			     ((uint64_t)(uintptr_t)fr->dso * 0xc2b2ae3d27d4eb4fULL) ^ (uint64_t)!!fr->kernel;
		m = &in->frames[(h ^ (h >> 29)) & (ING_FRAME_SLOTS - 1)];
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
	id = st_writer_frame(in->w, name, fr->dso, fr->sym != NULL, kernel);
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
		foff_slot *o = in->foffs ? &in->foffs[(h >> 40) & (ING_FOFF_SLOTS - 1)] : NULL;

		if (!o || o->frame != id || o->off != fr->dso_off) {
			if (st_writer_frame_offset(in->w, id, fr->dso_off) < 0)
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

static int on_sample(ingest *in, const pd_record *r)
{
	const pd_sample *s = &r->u.sample;
	uint32_t node = 0, comm, pid, tid;
	int all_named = 1, failed = 0, cacheable = in->chains && chain_cacheable(r);
	uint64_t h = 0, th = 0;
	chain_slot *hit = NULL;
	tail_slot *tail = NULL;
	long leaf = -1;
	uint32_t callers = 0;
	int callers_named = 1;
	pd_stack st;
	st_sample row;
	size_t i;
	uint64_t t = in->timing ? now_ns() : 0;

	if (cacheable) {
		h = chain_hash(r);
		hit = chain_lookup(in, r, h);
	}
	if (hit) {
		in->chain_hits++;
		node = hit->node;
		comm = hit->comm;
		pid = hit->st_pid;
		tid = hit->st_tid;
		all_named = hit->all_named;
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
		if (st.nr == 1) {
			uint32_t fid = store_frame(in, &st.frames[0], &failed);

			if (failed)
				return -1;
			node = tail->node;
			all_named = tail->all_named;
			if (!st.frames[0].sym) {
				all_named = 0;
				note_unresolved(in, st.frames[0].dso);
			}
			if (fid && !(node = st_writer_stack(in->w, node, fid)))
				return -1;
			comm = tail->comm;
			pid = tail->st_pid;
			tid = tail->st_tid;
			in->tail_hits++;
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
		node = st_writer_stack(in->w, node, fid);
		if (!node)
			return -1;
	}
	comm = st_writer_string(in->w, st.comm ? st.comm : "");
	pid = st.pid;
	tid = st.tid;
	/* one frame per address: the leaf is frames[0] */
	if (leaf >= 0 && th && st.nr > 1 &&
	    st.nr == r->u.sample.nr_callchain - nr_markers(r))
		tail_store(in, r, leaf, th, callers, comm, pid, tid, callers_named);
store:
	if (cacheable)
		hit = chain_store(in, r, h, node, comm, pid, tid, all_named);
write:
	phase_end(in, PH_INTERN, &t);
	memset(&row, 0, sizeof(row));
	row.event = s->event ? s->event->index : 0;
	row.time = s->time;
	row.cpu = s->cpu;
	row.pid = pid;
	row.tid = tid;
	/* stackcollapse-perf's weight: the period perf script prints, 1 without */
	row.period = !(s->fields & PD_SAMPLE_PERIOD) || !s->period ? 1 : s->period;
	row.weight = s->weight;
	row.stack = node;
	row.comm = comm;
	in->samples++;
	if (all_named)
		in->resolved_samples++;
	if (st_writer_sample_hint(in->w, &row, hit ? &hit->agg : NULL) < 0)
		return -1;
	phase_end(in, PH_SAMPLE, &t);
	return 0;
}

static int on_mmap(ingest *in, const pd_record *r)
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
	return st_writer_mmap(in->w, m->pid, m->start, m->len, m->pgoff,
			      m->filename ? m->filename : "", bid[0] ? bid : NULL, time);
}

static int on_comm(ingest *in, const pd_record *r)
{
	const pd_comm *c = &r->u.comm;

	return st_writer_comm(in->w, c->pid, c->tid, r->has_sample_id ? r->sample_id.time : 0,
			      c->comm ? c->comm : "");
}

static char *dump(const json_t *j)
{
	return j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

/* Events, features and record counts as rows; the report's parts as JSON. */
static int write_summary(ingest *in, pd_file *f, int64_t parse_ms, uint64_t *samples,
			 st_write_times *times)
{
	json_t *rep = report_json(f);
	json_t *header, *events, *records, *spe, *feats, *v;
	const char *key;
	st_summary sum;
	char *h = NULL, *e = NULL, *rc = NULL, *sp = NULL, *wn = NULL;
	size_t i;
	int ret = -1;

	if (!rep)
		return -1;
	header = json_object_get(rep, "header");
	events = json_object_get(rep, "events");
	records = json_object_get(rep, "records");
	spe = json_object_get(rep, "samples_per_event");
	feats = json_object_get(header, "features");
	json_object_foreach(feats, key, v) {
		char *t = dump(v);
		int bad = !t || st_writer_feature(in->w, key, t) < 0;
		free(t);
		if (bad)
			goto out;
	}
	json_object_foreach(records, key, v)
		if (st_writer_record_count(in->w, key, (uint64_t)json_integer_value(v)) < 0)
			goto out;
	for (i = 0; i < pd_nr_events(f); i++) {
		const pd_event *ev = pd_get_event(f, i);
		int freq = (ev->attr.flags & PD_ATTR_FREQ) != 0;
		if (st_writer_event(in->w, ev->index, ev->name, ev->attr.type, ev->attr.config,
				    ev->attr.sample_type, ev->attr.sample_period, freq,
				    ev->nr_samples) < 0)
			goto out;
	}
	h = dump(header);
	e = dump(events);
	rc = dump(records);
	sp = dump(spe);
	memset(&sum, 0, sizeof(sum));
	sum.hostname = pd_get_header(f)->hostname;
	sum.first_ns = pd_get_stats(f)->first_time;
	sum.last_ns = pd_get_stats(f)->last_time;
	sum.nr_samples = in->samples;
	sum.symbolized_pct = in->samples ? 100.0 * (double)in->resolved_samples /
						   (double)in->samples : 100.0;
	sum.parse_ms = parse_ms;
	sum.header = h;
	sum.events = e;
	sum.records = rc;
	sum.samples_per_event = sp;
	/* what the parser warned about (an unfinished recording, a broken
	 * feature section), as perfhub inspect shows it */
	if ((v = json_object_get(rep, "warnings")) && !(sum.warnings = wn = dump(v)))
		goto out;
	v = json_object_get(rep, "lost");
	sum.lost = (uint64_t)json_integer_value(v);
	*samples = in->samples;
	ret = st_writer_finish(in->w, &sum, times);
	in->w = NULL;
out:
	free(h);
	free(e);
	free(rc);
	free(sp);
	free(wn);
	json_decref(rep);
	return ret;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* wall-clock milliseconds, the unit of the debuginfo table's added_at */
static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* SPOOL/<sha>.tar -> SPOOL/<sha>.d/, unpacked once (a temporary name first,
 * so a crash never leaves a half-unpacked directory under the final name). */
static int unpack(const char *tar, uint64_t max_bytes, char *dir, size_t dirlen, char *err,
		  size_t errlen)
{
	char tmp[PATH_MAX + 16];
	struct stat st;
	size_t n = strlen(tar);

	if (n > 4 && !strcmp(tar + n - 4, ".tar"))
		n -= 4;
	snprintf(dir, dirlen, "%.*s.d", (int)n, tar);
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", dir);
	sp_remove_tree(tmp);
	if (dirpack_extract(tar, tmp, max_bytes, err, errlen) < 0) {
		sp_remove_tree(tmp);
		return -1;
	}
	if (rename(tmp, dir) < 0) {
		snprintf(err, errlen, "%.200s: %s", dir, strerror(errno));
		sp_remove_tree(tmp);
		return -1;
	}
	return 0;
}

/* The tables of the recorded dsos, loaded before the profile's write
 * transaction starts: a debuginfod fetch (seconds) then holds no lock that
 * uploads wait for. Dsos only MMAP2 records name are fetched during the
 * parse. */
static void prefetch(pd_symcache *cache, dbg_store *dbg, const pd_header *h)
{
	pd_dso_paths paths = { .debuginfo_dir = dbg_dir(dbg) };
	size_t i;

	for (i = 0; h && i < h->nr_build_ids; i++) {
		const pd_build_id *b = &h->build_ids[i];
		pd_dso *d;

		if (!b->filename || b->filename[0] != '/' || !b->size)
			continue;
		d = pd_dso_get(cache, PD_DSO_ELF, b->filename, b->build_id, b->size, &paths);
		if (d) {
			pd_dso_nr_symbols(d);
			pd_dso_put(cache, d);
		}
	}
}

void ingest_profile(st_store *st, pd_symcache *cache, dbg_store *dbg, int64_t id,
		    const char *path, const char *kind, uint64_t max_bytes, atomic_int *stop,
		    ing_result *res)
{
	char kallsyms[PATH_MAX];
	const pd_header *h;
	size_t i;
	pd_options opt = { .ordered = 1 };
	pd_sym_options so = { 0 };
	ingest in;
	pd_error err;
	pd_record r;
	pd_file *f = NULL;
	char dir[PATH_MAX];
	const char *open_path = path;
	int64_t t0 = now_ms(), started = wall_ms();
	uint64_t t_open = now_ns(), t_loop = 0, t_rec, t_fin;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&in, 0, sizeof(in));
	res->offset = -1;
	if (!strcmp(kind, "tar")) {
		if (unpack(path, max_bytes, dir, sizeof(dir), res->msg, sizeof(res->msg)) < 0)
			return;
		open_path = dir;
	}
	f = pd_open_path(open_path, &opt, &err);
	if (!f)
		goto parse_error;
	if (dbg_fetches(dbg))
		prefetch(cache, dbg, pd_get_header(f));
	in.w = st_writer_begin(st, id);
	if (!in.w) {
		snprintf(res->msg, sizeof(res->msg), "storage error while writing the profile");
		goto out;
	}
	so.recording = open_path;
	h = pd_get_header(f);
	for (i = 0; h && i < h->nr_build_ids; i++) {
		const pd_build_id *b = &h->build_ids[i];

		note_build_id(&in, b->filename, b->build_id, b->size);
		/* an uploaded kallsyms for the recorded kernel comes first */
		if (dbg && b->filename && !strcmp(b->filename, "[kernel.kallsyms]") &&
		    dbg_kallsyms(dbg, b->build_id, b->size, kallsyms, sizeof(kallsyms)) == 0)
			so.kallsyms = kallsyms;
	}
	if (dbg)
		so.debuginfo_dir = dbg_dir(dbg);
	in.chains = calloc(ING_CHAIN_SLOTS, sizeof(*in.chains));	/* NULL: no cache */
	in.tails = calloc(ING_TAIL_SLOTS, sizeof(*in.tails));	/* NULL: no cache */
	in.frames = calloc(ING_FRAME_SLOTS, sizeof(*in.frames));	/* NULL: no memo */
	in.foffs = calloc(ING_FOFF_SLOTS, sizeof(*in.foffs));	/* NULL: none */
	in.sym = pd_symbolizer_new(f, cache, &so);
	if (!in.sym) {
		snprintf(res->msg, sizeof(res->msg), "out of memory for the symbolizer");
		goto out;
	}
	t_loop = t_rec = now_ns();
	res->open_ms = (double)(t_loop - t_open) / 1e6;
	for (;;) {
		int wrc = 0;

		in.timing = (res->records & (ING_TIME_EVERY - 1)) == 0;
		if (in.timing)
			t_rec = now_ns();
		if ((rc = pd_next(f, &r, &err)) <= 0)
			break;
		phase_end(&in, PH_READ, &t_rec);
		res->records++;
		if (res->records % ING_CHECK_STOP == 0 && atomic_load(stop)) {
			res->cancelled = 1;
			snprintf(res->msg, sizeof(res->msg), "shutting down");
			goto out;
		}
		if (r.type == PD_RECORD_HEADER_BUILD_ID)
			note_build_id(&in, r.u.build_id.filename, r.u.build_id.build_id,
				      r.u.build_id.size);
		if (r.type != PD_RECORD_SAMPLE && pd_symbolizer_record(in.sym, &r) < 0)
			log_debug("msg=\"symbolizer limit\" id=%lld", (long long)id);
		switch (r.type) {
		case PD_RECORD_SAMPLE:
			wrc = on_sample(&in, &r);
			break;
		case PD_RECORD_MMAP:
		case PD_RECORD_MMAP2:
			wrc = on_mmap(&in, &r);
			break;
		case PD_RECORD_COMM:
			wrc = on_comm(&in, &r);
			break;
		default:
			break;
		}
		if (r.type != PD_RECORD_SAMPLE)
			phase_end(&in, PH_OTHER, &t_rec);
		if (wrc < 0) {
			snprintf(res->msg, sizeof(res->msg), "storage error while writing the profile");
			goto out;
		}
	}
	if (rc < 0)
		goto parse_error;
	t_fin = now_ns();
	for (i = 0; i < PH_NR; i++)
		in.ns[i] *= ING_TIME_EVERY;
	res->read_ms = (double)in.ns[PH_READ] / 1e6;
	res->symbolize_ms = (double)in.ns[PH_SYMBOLIZE] / 1e6;
	res->intern_ms = (double)in.ns[PH_INTERN] / 1e6;
	res->sample_ms = (double)in.ns[PH_SAMPLE] / 1e6;
	res->other_ms = (double)in.ns[PH_OTHER] / 1e6;
	res->chain_hits = in.chain_hits;
	res->tail_hits = in.tail_hits;
	if (write_summary(&in, f, now_ms() - t0, &res->samples, &res->write) < 0) {
		snprintf(res->msg, sizeof(res->msg), "storage error while writing the profile");
		goto out;
	}
	res->finish_ms = (double)(now_ns() - t_fin) / 1e6;
	res->ok = 1;
	write_dsos(&in, st, id);
	if (dbg)
		requeue_if_late(&in, st, id, started);
	goto out;
parse_error:
	pd_strerror(&err, res->msg, sizeof(res->msg));
	res->offset = (int64_t)err.offset;
out:
	st_writer_abort(in.w);
	dbg_flush_index(dbg);
	pd_close(f);
	pd_symbolizer_free(in.sym);
	dsos_free(&in);
	chain_cache_free(&in);
	tail_cache_free(&in);
	free(in.foffs);
	if (in.frames) {
		for (i = 0; i < ING_FRAME_SLOTS; i++) {
			free(in.frames[i].sym);
			free(in.frames[i].dso);
		}
		free(in.frames);
	}
}
