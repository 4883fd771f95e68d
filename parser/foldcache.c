/*
 * foldcache.c - caches in front of pd_symbolize and pd_fold_add (see
 * foldcache.h). A callchain here is
 *
 *	[marker] leaf [marker] caller ... [marker] caller
 *
 * (PERF_CONTEXT_KERNEL / _USER before each part). The caches take chains
 * of up to 127 addresses whose markers are only those two, which is every
 * callchain of a plain -g recording; pd_symbolize names such a chain one
 * address at a time, so folding it address by address through the frame
 * cache gives the same stack.
 */
#include "foldcache.h"
#include "strhash.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

#define FC_CHAIN_SLOTS	16384	/* each a power of 2 */
#define FC_FRAME_SLOTS	65536
#define FC_DSO_SLOTS	65536
#define FC_COMM_SLOTS	4096
#define FC_MAX_REAL	127	/* perf script's frames per stack */
#define FC_MAX_CHAIN	512	/* callchain entries, markers included */
#define FC_KERNEL_PID	UINT32_MAX	/* kernel frames are the same in every process */

/* A chain is known by two 64-bit hashes of its words and of what else
 * names its stack (thread, event, cpumode, length), computed apart
 * (different seeds, multipliers and mixing), not by a copy: comparing the
 * copy cost a cache miss or more on every hit, storing it a copy on every
 * miss. Two chains that agree in both hashes but differ would be folded
 * alike; for chains not built to collide that is a chance of about
 * 2^-128 per lookup. Entries are half a cache line: the table is read at
 * a random place for every sample, and at 1 MB (64-byte entries, the
 * thread and event kept beside the hashes) it missed the second-level
 * cache on most of them. */
typedef struct fc_chain {	/* a thread's whole callchain -> its stack */
	uint64_t hash, check;	/* hash 0: free */
	uint64_t gen;		/* the symbolizer's when stored */
	uint32_t id;
} __attribute__((aligned(32))) fc_chain;

_Static_assert(sizeof(fc_chain) == 32, "two chain entries to a cache line");

typedef struct fc_frame {	/* an address of a process -> its folded name */
	uint64_t ip, gen;
	uint32_t pid, id;
	uint8_t cpumode, used;
} fc_frame;

typedef struct fc_dso {		/* an offset of a symbol table -> its folded name */
	uint64_t serial, off;	/* serial 0: free */
	uint32_t id;
	uint8_t cpumode;
} fc_dso;

typedef struct fc_comm {	/* a thread -> its folded comm field */
	uint64_t gen;
	uint32_t pid, tid, id;
	uint8_t used;
} fc_comm;

/* A frame the frame cache missed: where its address lies, asked before
 * the slots are read so that the lookups of one chain overlap. */
typedef struct fc_miss {
	uint64_t ip, off, serial;
	fc_frame *e;
	fc_dso *d;		/* NULL: no symbol table */
	uint32_t k;		/* its place in ids */
	uint8_t cpumode, unmapped;
	uint8_t waiting;	/* a kernel frame left for later */
} fc_miss;

struct pd_foldcache {
	pd_symbolizer *sym;
	pd_fold *fold;
	fc_chain *chains;
	fc_frame *frames;
	fc_dso *dsos;
	fc_comm *comms;
	uint32_t ids[FC_MAX_REAL + 1];	/* the stack being folded */
	fc_miss *miss;		/* FC_MAX_REAL: its frames the frame cache missed */
	/* the folded name of an address no map covers, per cpumode (user,
	 * kernel), + 1; 0 until asked: a callchain through code built
	 * without frame pointers holds many such words */
	uint32_t unmapped_id[2];
	/* Samples whose kernel frames wait for the kernel's table while
	 * another thread loads it (pd_foldcache_defer_kernel): words of
	 * [weight][n | nk << 32][n ids, two a word][nk x (k, ip)], folded
	 * once the table is there, or before a record renames kernel
	 * addresses. Their user frames and comm are named when they come. */
	size_t wait_max;	/* bytes; 0: not deferred */
	int draining;
	uint64_t *wait;
	size_t wait_n, wait_cap;
	pd_foldcache_stats stats;
};

pd_foldcache *pd_foldcache_new(pd_symbolizer *sym, pd_fold *fold)
{
	pd_foldcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->sym = sym;
	c->fold = fold;
	c->chains = aligned_alloc(sizeof(*c->chains), FC_CHAIN_SLOTS * sizeof(*c->chains));
	if (c->chains)
		memset(c->chains, 0, FC_CHAIN_SLOTS * sizeof(*c->chains));
	c->frames = pd_table_new(FC_FRAME_SLOTS, sizeof(*c->frames));
	c->dsos = pd_table_new(FC_DSO_SLOTS, sizeof(*c->dsos));
	c->comms = pd_table_new(FC_COMM_SLOTS, sizeof(*c->comms));
	c->miss = malloc(FC_MAX_REAL * sizeof(*c->miss));
	if (!c->chains || !c->frames || !c->dsos || !c->comms || !c->miss) {
		pd_foldcache_free(c);
		return NULL;
	}
	return c;
}

void pd_foldcache_free(pd_foldcache *c)
{
	if (!c)
		return;
	free(c->chains);
	free(c->frames);
	free(c->dsos);
	free(c->comms);
	free(c->miss);
	free(c->wait);
	free(c);
}

void pd_foldcache_defer_kernel(pd_foldcache *c, size_t max_bytes)
{
	c->wait_max = max_bytes;
}

void pd_foldcache_get_stats(const pd_foldcache *c, pd_foldcache_stats *out)
{
	*out = c->stats;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

/* The chain's hash, or 0 when the caches do not take it; its second
 * hash goes to *check. Both start from the thread, event and cpumode. */
static uint64_t chain_hash(const pd_sample *s, uint16_t misc, uint64_t *check)
{
	const uint64_t *ch = s->callchain;
	uint64_t who = (uint64_t)s->pid << 32 | s->tid;
	uint64_t what = (uint64_t)misc << 48 ^ (uint64_t)(uintptr_t)s->event;
	uint64_t h, k;
	size_t i, real = 0;

	if (!(s->fields & PD_SAMPLE_CALLCHAIN) || !ch || !s->nr_callchain ||
	    s->nr_callchain > FC_MAX_CHAIN)
		return 0;
	h = mix(0x9e3779b97f4a7c15ULL ^ who, what);
	k = pd_hash2_step(pd_hash2_step(PD_HASH2_SEED, what), who);
	for (i = 0; i < s->nr_callchain; i++) {
		uint64_t ip = ch[i];

		if (ip >= PD_CONTEXT_MAX) {
			if (ip != PD_CONTEXT_KERNEL && ip != PD_CONTEXT_USER)
				return 0;
		} else if (++real > FC_MAX_REAL) {
			return 0;
		}
		h = mix(h, ip);
		k = pd_hash2_step(k, ip);
	}
	*check = k ^ s->nr_callchain;
	return h | 1;
}

static int chain_match(const fc_chain *e, uint64_t h, uint64_t check, uint64_t stamp)
{
	return e->hash == h && e->check == check && e->gen >= stamp;
}

/* The folded name of address ip of thread pid/tid: by the address in this
 * process (valid while its maps stay), else by the offset in the symbol
 * table (the same library in every process; a table never changes), else
 * symbolized now. */
static fc_frame *frame_slot(pd_foldcache *c, uint32_t pid, uint64_t ip, int cpumode)
{
	uint32_t key = cpumode == PD_MISC_KERNEL ? FC_KERNEL_PID : pid;

	return &c->frames[mix((uint64_t)key << 8 | (uint64_t)cpumode, ip) & (FC_FRAME_SLOTS - 1)];
}

/* Phase one: the frame's id from the frame cache, else 1 and *m filled
 * (the DSO slot it will read prefetched). */
static int frame_lookup(pd_foldcache *c, uint32_t pid, uint32_t tid, uint64_t ip, int cpumode,
			uint64_t stamp, uint32_t k, fc_miss *m)
{
	uint32_t key = cpumode == PD_MISC_KERNEL ? FC_KERNEL_PID : pid;
	fc_frame *e = frame_slot(c, pid, ip, cpumode);
	int unmapped;

	if (e->used && e->ip == ip && e->pid == key && e->cpumode == cpumode && e->gen >= stamp) {
		c->ids[k] = e->id;
		return 0;
	}
	m->ip = ip;
	m->e = e;
	m->k = k;
	m->cpumode = (uint8_t)cpumode;
	m->off = 0;
	m->serial = pd_symbolize_where(c->sym, pid, tid, ip, cpumode, &m->off, &unmapped);
	m->unmapped = (uint8_t)!!unmapped;
	m->d = NULL;
	if (m->serial) {
		m->d = &c->dsos[mix(m->serial << 8 | (uint64_t)cpumode, m->off) & (FC_DSO_SLOTS - 1)];
		__builtin_prefetch(m->d);
	}
	return 1;
}

/* Phase two: a missed frame's id by the offset in its symbol table (the
 * same library in every process; a table never changes), else symbolized
 * now; the frame cache remembers it by the address in this process
 * (valid while its maps stay). 0, 1 when it is a kernel frame left for
 * later (the table is still loading), -1 out of memory. */
static int frame_resolve(pd_foldcache *c, uint32_t pid, uint32_t tid, const fc_miss *m)
{
	int kernel = m->cpumode == PD_MISC_KERNEL;
	uint32_t *id = &c->ids[m->k];
	fc_dso *d = m->d;
	pd_frame fr;

	if (m->unmapped && c->unmapped_id[kernel]) {
		/* stored like any address: such a word in a caller's frame
		 * comes back with each new leaf under it (half of them on the
		 * system-wide build), and a map found later changes the stamp */
		*id = c->unmapped_id[kernel] - 1;
		goto out;
	}
	if (d && d->serial == m->serial && d->off == m->off && d->cpumode == m->cpumode) {
		*id = d->id;
		goto out;
	}
	/* named later, rather than waiting here for the loading thread */
	if (kernel && m->serial && c->wait_max && !c->draining &&
	    pd_symbolizer_kernel_waits(c->sym))
		return 1;
	if (pd_symbolize_ip(c->sym, pid, tid, m->ip, m->cpumode, &fr) < 0 ||
	    pd_fold_frame_id(c->fold, &fr, id) < 0)
		return -1;
	if (m->unmapped && *id < UINT32_MAX)
		c->unmapped_id[kernel] = *id + 1;
	/* a name that depends on the offset is not a function of the symbol */
	if (d && !(fr.sym && strstr(fr.sym, " (")) && !(fr.dso && strpbrk(fr.dso, " \t")))
		*d = (fc_dso){ .serial = m->serial, .off = m->off, .id = *id,
			       .cpumode = m->cpumode };
out:
	*m->e = (fc_frame){ .ip = m->ip, .gen = pd_symbolizer_generation(c->sym),
			    .pid = kernel ? FC_KERNEL_PID : pid, .id = *id,
			    .cpumode = m->cpumode, .used = 1 };
	return 0;
}

/* The folded comm field of thread pid/tid. */
static int comm_id(pd_foldcache *c, uint32_t pid, uint32_t tid, uint64_t stamp, uint32_t *id)
{
	fc_comm *e = &c->comms[mix((uint64_t)pid << 32 | tid, 0) & (FC_COMM_SLOTS - 1)];
	pd_stack st = { .pid = pid, .tid = tid };

	if (e->used && e->pid == pid && e->tid == tid && e->gen >= stamp) {
		*id = e->id;
		return 0;
	}
	st.comm = pd_symbolizer_comm(c->sym, pid, tid);
	if (pd_fold_comm_id(c->fold, &st, id) < 0)
		return -1;
	*e = (fc_comm){ .gen = pd_symbolizer_generation(c->sym), .pid = pid, .tid = tid,
			.id = *id, .used = 1 };
	return 0;
}

static int fold_whole(pd_foldcache *c, const pd_record *r, uint64_t weight)
{
	pd_stack st;

	c->stats.misses++;
	if (pd_symbolize(c->sym, r, &st) < 0)
		return -1;
	return pd_fold_add(c->fold, &st, weight) < 0 ? -2 : 0;
}

/* Fold the samples that wait for the kernel's table, which this thread
 * loads itself if it is not there yet. 0, -1 out of memory, -2 too many
 * stacks. */
static int drain(pd_foldcache *c)
{
	size_t w = 0;
	int rc = 0;

	c->draining = 1;
	while (w < c->wait_n && !rc) {
		uint64_t weight = c->wait[w], nn = c->wait[w + 1];
		size_t n = (uint32_t)nn, nk = nn >> 32, i;

		w += 2;
		memcpy(c->ids, &c->wait[w], n * sizeof(uint32_t));
		w += (n + 1) / 2;
		for (i = 0; i < nk && !rc; i++, w += 2) {
			fc_miss m = { .ip = c->wait[w + 1], .k = (uint32_t)c->wait[w],
				      .cpumode = PD_MISC_KERNEL };
			int unmapped;

			/* the kernel's maps are as they were: a record that
			 * changes them drains first (pd_foldcache_record) */
			m.e = frame_slot(c, 0, m.ip, PD_MISC_KERNEL);
			m.serial = pd_symbolize_where(c->sym, 0, 0, m.ip, PD_MISC_KERNEL, &m.off,
						      &unmapped);
			m.unmapped = (uint8_t)!!unmapped;
			if (m.serial)
				m.d = &c->dsos[mix(m.serial << 8 | PD_MISC_KERNEL, m.off) &
					       (FC_DSO_SLOTS - 1)];
			rc = frame_resolve(c, 0, 0, &m) < 0 ? -1 : 0;
		}
		if (!rc && pd_fold_add_ids(c->fold, c->ids, n, weight) < 0)
			rc = -2;
	}
	c->wait_n = 0;
	c->draining = 0;
	return rc;
}

/* Keep the sample in c->ids (n ids, nk of its nm missed frames left out)
 * until the kernel's table is loaded. 0, or drain's answer. */
static int wait_for_kernel(pd_foldcache *c, size_t n, size_t nm, int nk, uint64_t weight)
{
	size_t need = 2 + (n + 1) / 2 + 2 * (size_t)nk, i;
	uint64_t *v = c->wait;

	if (c->wait_n + need > c->wait_cap) {
		size_t cap = c->wait_cap ? c->wait_cap * 2 : 64;

		while (cap < c->wait_n + need)
			cap *= 2;
		/* past the cap, or out of memory: wait for the table after all */
		if (cap * sizeof(*v) > c->wait_max || !(v = realloc(c->wait, cap * sizeof(*v)))) {
			uint32_t ids[FC_MAX_REAL + 1];
			int rc;

			memcpy(ids, c->ids, n * sizeof(*ids));	/* drain folds through c->ids */
			rc = drain(c);
			memcpy(c->ids, ids, n * sizeof(*ids));
			c->draining = 1;
			for (i = 0; i < nm && !rc; i++)
				if (c->miss[i].waiting && frame_resolve(c, 0, 0, &c->miss[i]) < 0)
					rc = -1;
			c->draining = 0;
			if (!rc && pd_fold_add_ids(c->fold, c->ids, n, weight) < 0)
				rc = -2;
			return rc;
		}
		c->wait = v;
		c->wait_cap = cap;
	}
	c->stats.kernel_waits++;
	v = c->wait + c->wait_n;
	v[0] = weight;
	v[1] = n | (uint64_t)nk << 32;
	if (n % 2)
		v[2 + n / 2] = 0;	/* the last word's unused half */
	memcpy(v + 2, c->ids, n * sizeof(uint32_t));
	v += 2 + (n + 1) / 2;
	for (i = 0; i < nm; i++)
		if (c->miss[i].waiting) {
			*v++ = c->miss[i].k;
			*v++ = c->miss[i].ip;
		}
	c->wait_n += need;
	return 0;
}

int pd_foldcache_record(pd_foldcache *c, const pd_record *r)
{
	int rc;

	if (c->wait_n && pd_symbolizer_renames_kernel(r) && (rc = drain(c)) < 0)
		return rc;
	pd_symbolizer_record(c->sym, r);
	return 0;
}

int pd_foldcache_finish(pd_foldcache *c)
{
	return c->wait_n ? drain(c) : 0;
}

int pd_foldcache_add(pd_foldcache *c, const pd_record *r, uint64_t weight)
{
	const pd_sample *s = &r->u.sample;
	uint16_t misc = r->misc & PD_MISC_CPUMODE_MASK;
	uint64_t h, check = 0, stamp;
	fc_chain *e;
	size_t n = 1, i, k, nm;
	int cpumode = PD_MISC_USER;

	int rc, nk = 0;

	if (c->wait_n && !pd_symbolizer_kernel_waits(c->sym) && (rc = drain(c)) < 0)
		return rc;
	/* dwarf samples carry their user stack beside the callchain: those are
	 * unwound, never cached */
	if (pd_event_unwinds(s->event))
		return fold_whole(c, r, weight);
	h = chain_hash(s, misc, &check);
	if (!h)
		return fold_whole(c, r, weight);
	/* the tables are larger than the caches: ask for the lines early */
	e = &c->chains[h & (FC_CHAIN_SLOTS - 1)];
	__builtin_prefetch(e);
	stamp = pd_symbolizer_stamp(c->sym, s->pid, s->tid);
	if (chain_match(e, h, check, stamp)) {
		c->stats.chain_hits++;
		return pd_fold_add_id(c->fold, e->id, weight) < 0 ? -1 : 0;
	}
	/* address by address, as pd_symbolize names them; ids[0] is the comm
	 * field, then the frames outermost first, so the leaf goes last */
	c->stats.frame_folds++;
	for (i = 0; i < s->nr_callchain; i++) {
		uint64_t ip = s->callchain[i];

		if (ip == PD_CONTEXT_KERNEL)
			cpumode = PD_MISC_KERNEL;
		else if (ip == PD_CONTEXT_USER)
			cpumode = PD_MISC_USER;
		else
			__builtin_prefetch(frame_slot(c, s->pid, ip, cpumode));
	}
	cpumode = PD_MISC_USER;
	if (comm_id(c, s->pid, s->tid, stamp, &c->ids[0]) < 0)
		return -1;
	for (i = 0; i < s->nr_callchain; i++)
		n += s->callchain[i] < PD_CONTEXT_MAX;
	for (i = 0, k = n, nm = 0; i < s->nr_callchain; i++) {
		uint64_t ip = s->callchain[i];

		if (ip == PD_CONTEXT_KERNEL)
			cpumode = PD_MISC_KERNEL;
		else if (ip == PD_CONTEXT_USER)
			cpumode = PD_MISC_USER;
		else
			nm += frame_lookup(c, s->pid, s->tid, ip, cpumode, stamp, (uint32_t)--k,
					   &c->miss[nm]);
	}
	for (i = 0; i < nm; i++) {
		if ((rc = frame_resolve(c, s->pid, s->tid, &c->miss[i])) < 0)
			return -1;
		c->miss[i].waiting = (uint8_t)rc;
		nk += rc;
	}
	if (nk)
		return wait_for_kernel(c, n, nm, nk, weight);
	if (pd_fold_add_ids(c->fold, c->ids, n, weight) < 0)
		return -2;
	/* an id past 32 bits (the fold keeps fewer stacks) is not cached */
	if (pd_fold_last_id(c->fold) < UINT32_MAX)
		*e = (fc_chain){ .hash = h, .check = check, .gen = pd_symbolizer_generation(c->sym),
				 .id = (uint32_t)pd_fold_last_id(c->fold) };
	return 0;
}
