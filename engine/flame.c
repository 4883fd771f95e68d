/*
 * flame.c - the flame graph from the stack tree: the selected rows are
 * placed under their comm node by walking each leaf's stack up to a node
 * already placed and down again, so no folded text is built; children are
 * sorted by name (frame names by their precomputed rank), and the tree
 * goes out depth first without recursion.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/query-int.h"

typedef struct tnode {
	uint64_t key;		/* name string id * 2 + "_[k]" mark; comms: see below */
	uint32_t parent, first_child, next;
	uint32_t dso;		/* string id of the DSO of the first frame placed here */
	uint64_t value;
} tnode;

#define TKEY_COMM (1ULL << 63)	/* comm nodes: TKEY_COMM | comm text id */

typedef struct ttree {
	tnode *n;
	size_t nr, cap;
	uint32_t *slots;	/* (parent, key) -> node + 1 */
	size_t nr_slots;
	pe_u64map memo;		/* comm node << 32 | stack node -> tree node */
	uint32_t next_memo;	/* unused by pe_u64map callers here */
} ttree;

static size_t tslot(const ttree *t, uint32_t parent, uint64_t key)
{
	return pe_mix64(key ^ ((uint64_t)parent << 40 | parent)) & (t->nr_slots - 1);
}

static int tgrow(ttree *t)
{
	size_t ns = t->nr_slots ? 2 * t->nr_slots : 8192, i;
	uint32_t *sl = calloc(ns, sizeof(*sl));

	if (!sl)
		return -1;
	free(t->slots);
	t->slots = sl;
	t->nr_slots = ns;
	for (i = 1; i < t->nr; i++) {
		size_t j = tslot(t, t->n[i].parent, t->n[i].key);
		while (t->slots[j])
			j = (j + 1) & (ns - 1);
		t->slots[j] = (uint32_t)i + 1;
	}
	return 0;
}

/* The child of parent with key, added when missing; 0 out of memory. */
static uint32_t tchild(ttree *t, uint32_t parent, uint64_t key)
{
	size_t j;
	uint32_t id;

	for (j = tslot(t, parent, key); t->slots[j]; j = (j + 1) & (t->nr_slots - 1)) {
		const tnode *c = &t->n[t->slots[j] - 1];
		if (c->key == key && c->parent == parent)
			return t->slots[j] - 1;
	}
	if (t->nr == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 8192;
		tnode *p = realloc(t->n, ncap * sizeof(*p));
		if (!p)
			return 0;
		t->n = p;
		t->cap = ncap;
	}
	if (t->nr >= PE_MAX_NODES)
		return 0;
	id = (uint32_t)t->nr++;
	memset(&t->n[id], 0, sizeof(tnode));
	t->n[id].key = key;
	t->n[id].parent = parent;
	t->n[id].next = t->n[parent].first_child;
	t->n[parent].first_child = id;
	if (2 * t->nr > t->nr_slots)
		return tgrow(t) < 0 ? 0 : id;
	j = tslot(t, parent, key);
	while (t->slots[j])
		j = (j + 1) & (t->nr_slots - 1);
	t->slots[j] = id + 1;
	return id;
}

typedef struct tname_ctx {
	const pe_model *m;
	const pe_strmap *comms;
	char **comm_text;	/* by comm text id */
} tname_ctx;

static const char *tname(const tname_ctx *c, const tnode *n, size_t *len, char *buf,
			 size_t buflen)
{
	const char *s;

	if (n->key & TKEY_COMM) {
		s = c->comm_text[n->key & ~TKEY_COMM];
		*len = strlen(s);
		return s;
	}
	s = pe_str(c->m, (uint32_t)(n->key >> 1));
	if (!s)
		s = "[unknown]";
	if (n->key & 1) {
		snprintf(buf, buflen, "%s_[k]", s);
		s = buf;
	}
	*len = strlen(s);
	return s;
}

typedef struct tsort_ctx {
	const tname_ctx *nc;
	const ttree *t;
	const uint32_t *rank;	/* by frame key (pe_model_ranks) */
	size_t nr_rank;
} tsort_ctx;

/* Frame nodes of one parent by the rank of their keys (distinct keys). */
static int cmp_trank(const void *x, const void *y, void *arg)
{
	const tsort_ctx *c = arg;
	uint64_t ka = c->t->n[*(const uint32_t *)x].key, kb = c->t->n[*(const uint32_t *)y].key;
	uint32_t ra = ka < c->nr_rank ? c->rank[ka] : UINT32_MAX;
	uint32_t rb = kb < c->nr_rank ? c->rank[kb] : UINT32_MAX;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return ka < kb ? -1 : ka > kb;
}

static int cmp_tchild(const void *x, const void *y, void *arg)
{
	const tsort_ctx *c = arg;
	char ba[4096], bb[4096];
	size_t la, lb;
	const char *a = tname(c->nc, &c->t->n[*(const uint32_t *)x], &la, ba, sizeof(ba));
	const char *b = tname(c->nc, &c->t->n[*(const uint32_t *)y], &lb, bb, sizeof(bb));
	int r = memcmp(a, b, la < lb ? la : lb);

	if (r)
		return r;
	return la < lb ? -1 : la > lb;
}

/* A three-way quickselect with pseudo-random pivots. */
uint64_t pe_kth_largest(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;	/* the answer is in v[lo..hi) */
	uint64_t seed = 0x9e3779b97f4a7c15ULL, x;

	while (hi - lo > 1) {
		size_t lt = lo, i = lo, gt = hi;
		uint64_t pivot;

		seed = pe_mix64(seed + 1);
		pivot = v[lo + seed % (hi - lo)];
		/* v[lo..lt) > pivot, v[lt..i) == pivot, v[gt..hi) < pivot */
		while (i < gt) {
			if (v[i] > pivot) {
				x = v[i];
				v[i++] = v[lt];
				v[lt++] = x;
			} else if (v[i] < pivot) {
				x = v[i];
				v[i] = v[--gt];
				v[gt] = x;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return pivot;
	}
	return v[lo];
}

/* Flags of the max largest nodes of t (ties: the earlier node, so a parent
 * before its child); the root always. NULL out of memory. */
static unsigned char *keep_largest(const ttree *t, size_t max)
{
	uint64_t *v = malloc(t->nr * sizeof(*v)), cut;
	unsigned char *keep = calloc(t->nr, 1);
	size_t i, left;

	if (!v || !keep) {
		free(v);
		free(keep);
		return NULL;
	}
	for (i = 0; i < t->nr; i++)
		v[i] = t->n[i].value;
	cut = pe_kth_largest(v, t->nr, max - 1);
	free(v);
	left = max;
	for (i = 0; i < t->nr; i++)
		if (t->n[i].value > cut) {
			keep[i] = 1;
			left--;
		}
	for (i = 0; i < t->nr && left; i++)
		if (t->n[i].value == cut) {
			keep[i] = 1;
			left--;
		}
	keep[0] = 1;
	return keep;
}

int pe_flame(pe_model *m, const pe_filter *f, const pe_selection *s, int by_samples,
	     const pe_tree_cb *cb, void *ctx)
{
	const pe_aggmap *groups = &s->groups;
	ttree t;
	pe_strmap comms = { 0 };
	char **comm_text = NULL;
	size_t nr_comm_text = 0, i;
	uint32_t *path = NULL, *kids = NULL, *stack = NULL;
	tname_ctx nc;
	pe_sbuf b = { 0 };
	unsigned char *kept = NULL;
	int rc = -1;

	memset(&t, 0, sizeof(t));
	if (tgrow(&t) < 0 || pe_u64map_grow(&t.memo) < 0 || pe_strmap_grow(&comms) < 0)
		goto out;
	/* the root, "all" */
	t.n = calloc(1, sizeof(tnode));
	if (!t.n)
		goto out;
	t.nr = t.cap = 1;
	path = malloc(PE_MAX_DEPTH * sizeof(*path));
	if (!path)
		goto out;
	for (i = 0; i < groups->n; i++) {
		const pe_agg_row *r = &groups->rows[i];
		uint64_t v = by_samples ? r->samples : r->period;
		uint32_t cid, cnode, node, tn;
		size_t depth = 0, j;
		int found;

		/* the first level: comm as stackcollapse-perf writes it */
		if (pe_comm_text(&b, m, f, r) < 0)
			goto out;
		switch (pe_strmap_put(&comms, b.p, (uint32_t)nr_comm_text, &j)) {
		case 1: {
			char **p = realloc(comm_text, (nr_comm_text + 1) * sizeof(*p));
			if (!p)
				goto out;
			comm_text = p;
			comm_text[nr_comm_text++] = comms.strs[j];
			break;
		}
		case 0:
			break;
		default:
			goto out;
		}
		cid = comms.ids[j];
		cnode = tchild(&t, 0, TKEY_COMM | cid);
		if (!cnode)
			goto out;
		/* up the stack tree to a node already placed, then down again */
		node = r->stack;
		tn = cnode;
		while (node && node < m->nr_stacks && depth < PE_MAX_DEPTH) {
			size_t slot;
			if (2 * (t.memo.n + 1) > t.memo.cap && pe_u64map_grow(&t.memo) < 0)
				goto out;
			slot = pe_u64map_slot(&t.memo, (uint64_t)cnode << 32 | node, &found);
			if (found) {
				tn = t.memo.vals[slot];
				break;
			}
			path[depth++] = node;
			if (m->stack_parent[node] >= node)
				break;
			node = m->stack_parent[node];
		}
		while (depth--) {
			uint32_t sn = path[depth], fr = m->stack_frame[sn];
			uint64_t key;
			size_t slot;
			uint32_t nm = fr < m->nr_frames ? m->frame_name[fr] : 0;
			key = (uint64_t)nm << 1 | (uint64_t)(f->kernel && fr < m->nr_frames &&
							    m->frame_kernel[fr]);
			tn = tchild(&t, tn, key);
			if (!tn)
				goto out;
			/* frames of one name in several DSOs share a node (the
			 * folded text cannot tell them apart): the first DSO
			 * placed, in file order of the samples, names it */
			if (!t.n[tn].dso && fr < m->nr_frames)
				t.n[tn].dso = m->frame_dso[fr];
			if (2 * (t.memo.n + 1) > t.memo.cap && pe_u64map_grow(&t.memo) < 0)
				goto out;
			slot = pe_u64map_slot(&t.memo, (uint64_t)cnode << 32 | sn, &found);
			t.memo.keys[slot] = (uint64_t)cnode << 32 | sn;
			t.memo.vals[slot] = tn;
			t.memo.n++;
		}
		t.n[tn].value += v;
	}
	/* subtree sums: children always come after their parent */
	for (i = t.nr; i-- > 1;)
		t.n[t.n[i].parent].value += t.n[i].value;
	/* max_nodes: only the largest nodes stay (an ancestor is never smaller
	 * than its descendants, so what stays is a tree) */
	if (f->max_nodes && t.nr > f->max_nodes && !(kept = keep_largest(&t, f->max_nodes)))
		goto out;
	/* children by name, then out depth first */
	nc.m = m;
	nc.comms = &comms;
	nc.comm_text = comm_text;
	kids = malloc(t.nr * sizeof(*kids) + 1);
	stack = malloc((PE_MAX_DEPTH + 2) * sizeof(*stack));
	if (!kids || !stack)
		goto out;
	{
		tsort_ctx sc = { &nc, &t, pe_model_ranks(m), 2 * m->nr_strs + 2 };
		for (i = 0; i < t.nr; i++) {
			size_t k = 0, j;
			uint32_t c;
			for (c = t.n[i].first_child; c; c = t.n[c].next)
				if (!kept || kept[c])
					kids[k++] = c;
			if (kept && !k)
				t.n[i].first_child = 0;
			if (kept && k == 1) {
				t.n[i].first_child = kids[0];
				t.n[kids[0]].next = 0;
			}
			if (k < 2)
				continue;
			/* comms (under the root) by their text; frames by rank */
			qsort_r(kids, k, sizeof(*kids), i && sc.rank ? cmp_trank : cmp_tchild, &sc);
			t.n[i].first_child = kids[0];
			for (j = 0; j + 1 < k; j++)
				t.n[kids[j]].next = kids[j + 1];
			t.n[kids[k - 1]].next = 0;
		}
	}
	{
		size_t sp = 0;
		uint32_t node = 0;
		char buf[4096];
		rc = 0;
		for (;;) {
			size_t len;
			const char *name = node ? tname(&nc, &t.n[node], &len, buf, sizeof(buf)) : "all";
			const char *dso = t.n[node].key & TKEY_COMM ? NULL : pe_str(m, t.n[node].dso);
			if (!node) {
				len = 3;
				dso = NULL;
			}
			if ((rc = cb->enter(ctx, name, len, dso, t.n[node].value)) != 0)
				break;
			if (t.n[node].first_child && sp < PE_MAX_DEPTH + 1) {
				stack[sp++] = node;
				node = t.n[node].first_child;
				continue;
			}
			for (;;) {
				if ((rc = cb->leave(ctx)) != 0)
					goto emitted;
				if (!sp)
					goto emitted;
				if (t.n[node].next) {
					node = t.n[node].next;
					break;
				}
				node = stack[--sp];
			}
		}
emitted:
		if (rc > 0)
			rc = 0;
	}
out:
	free(t.n);
	free(t.slots);
	pe_u64map_free(&t.memo);
	pe_strmap_free(&comms);
	free(comm_text);
	free(path);
	free(kids);
	free(kept);
	free(stack);
	free(b.p);
	return rc;
}
