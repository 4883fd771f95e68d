/*
 * tree.c - the trees the engine hands out: nodes by (parent, key) in one
 * hash, comm texts interned, values summed upwards, the largest kept, and
 * children sorted by name (frames by their precomputed rank) before the
 * tree goes out depth first without recursion.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tree-int.h"

static size_t tslot(const pe_ttree *t, uint32_t parent, uint64_t key)
{
	return pe_mix64(key ^ ((uint64_t)parent << 40 | parent)) & (t->nr_slots - 1);
}

static int tgrow(pe_ttree *t)
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

int pe_ttree_init(pe_ttree *t, uint64_t root_key)
{
	memset(t, 0, sizeof(*t));
	if (tgrow(t) < 0 || !(t->n = calloc(1, sizeof(pe_tnode)))) {
		pe_ttree_free(t);
		return -1;
	}
	t->nr = t->cap = 1;
	t->n[0].key = root_key;
	return 0;
}

void pe_ttree_free(pe_ttree *t)
{
	free(t->n);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

uint32_t pe_ttree_child(pe_ttree *t, uint32_t parent, uint64_t key)
{
	size_t j;
	uint32_t id;

	for (j = tslot(t, parent, key); t->slots[j]; j = (j + 1) & (t->nr_slots - 1)) {
		const pe_tnode *c = &t->n[t->slots[j] - 1];
		if (c->key == key && c->parent == parent)
			return t->slots[j] - 1;
	}
	if (t->nr == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 8192;
		pe_tnode *p = realloc(t->n, ncap * sizeof(*p));
		if (!p)
			return 0;
		t->n = p;
		t->cap = ncap;
	}
	if (t->nr >= PE_MAX_NODES)
		return 0;
	id = (uint32_t)t->nr++;
	memset(&t->n[id], 0, sizeof(pe_tnode));
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

int pe_comms_init(pe_comms *c)
{
	memset(c, 0, sizeof(*c));
	return pe_strmap_grow(&c->map);
}

void pe_comms_free(pe_comms *c)
{
	pe_strmap_free(&c->map);
	free(c->text);
	free(c->b.p);
	memset(c, 0, sizeof(*c));
}

uint64_t pe_comms_key(pe_comms *c, const pe_model *m, const pe_filter *f, const pe_agg_row *r)
{
	size_t j;

	/* the first level: comm as stackcollapse-perf writes it */
	if (pe_comm_text(&c->b, m, f, r) < 0)
		return 0;
	switch (pe_strmap_put(&c->map, c->b.p, (uint32_t)c->n, &j)) {
	case 1: {
		char **p = realloc(c->text, (c->n + 1) * sizeof(*p));
		if (!p)
			return 0;
		c->text = p;
		c->text[c->n++] = c->map.strs[j];
		break;
	}
	case 0:
		break;
	default:
		return 0;
	}
	return PE_TKEY_COMM | c->map.ids[j];
}

typedef struct tname_ctx {
	const pe_model *m;
	const pe_comms *comms;
} tname_ctx;

static const char *tname(const tname_ctx *c, const pe_tnode *n, size_t *len, char *buf,
			 size_t buflen)
{
	const char *s;

	if (n->key & PE_TKEY_COMM) {
		s = c->comms->text[n->key & ~PE_TKEY_COMM];
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
	const pe_ttree *t;
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

/* The k-th largest of v[0..n) (k from 0, k < n); v is reordered. A
 * three-way quickselect with pseudo-random pivots. */
static uint64_t kth_largest(uint64_t *v, size_t n, size_t k)
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
static unsigned char *keep_largest(const pe_ttree *t, size_t max)
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
	cut = kth_largest(v, t->nr, max - 1);
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

/* Children of every node linked in their order (only the kept ones). */
static int order_children(pe_model *m, pe_ttree *t, const tname_ctx *nc,
			  const unsigned char *kept, int sort)
{
	tsort_ctx sc = { nc, t, sort == PE_TSORT_FLAME ? pe_model_ranks(m) : NULL,
			 2 * m->nr_strs + 2 };
	uint32_t *kids = malloc(t->nr * sizeof(*kids) + 1);
	size_t i;

	if (!kids)
		return -1;
	for (i = 0; i < t->nr; i++) {
		size_t k = 0, j;
		uint32_t c;
		for (c = t->n[i].first_child; c; c = t->n[c].next)
			if (!kept || kept[c])
				kids[k++] = c;
		if (kept && !k)
			t->n[i].first_child = 0;
		if (kept && k == 1) {
			t->n[i].first_child = kids[0];
			t->n[kids[0]].next = 0;
		}
		if (k < 2)
			continue;
		/* comms (under the root) by their text; frames by rank */
		qsort_r(kids, k, sizeof(*kids), i && sc.rank ? cmp_trank : cmp_tchild, &sc);
		t->n[i].first_child = kids[0];
		for (j = 0; j + 1 < k; j++)
			t->n[kids[j]].next = kids[j + 1];
		t->n[kids[k - 1]].next = 0;
	}
	free(kids);
	return 0;
}

int pe_ttree_emit(pe_model *m, pe_ttree *t, const pe_comms *comms, const char *root_name,
		  size_t max_nodes, int sort, const pe_tree_cb *cb, void *ctx)
{
	tname_ctx nc = { m, comms };
	unsigned char *kept = NULL;
	uint32_t *stack = NULL, node = 0;
	size_t sp = 0, i;
	char buf[4096];
	int rc = -1;

	/* subtree sums: children always come after their parent */
	for (i = t->nr; i-- > 1;)
		t->n[t->n[i].parent].value += t->n[i].value;
	/* max_nodes: only the largest nodes stay (an ancestor is never smaller
	 * than its descendants, so what stays is a tree) */
	if (max_nodes && t->nr > max_nodes && !(kept = keep_largest(t, max_nodes)))
		goto out;
	if (order_children(m, t, &nc, kept, sort) < 0)
		goto out;
	if (!(stack = malloc((PE_MAX_DEPTH + 2) * sizeof(*stack))))
		goto out;
	rc = 0;
	for (;;) {
		size_t len;
		const char *name, *dso;

		if (!node && root_name) {
			name = root_name;
			len = strlen(root_name);
			dso = NULL;
		} else {
			name = tname(&nc, &t->n[node], &len, buf, sizeof(buf));
			dso = t->n[node].key & PE_TKEY_COMM ? NULL : pe_str(m, t->n[node].dso);
		}
		if ((rc = cb->enter(ctx, name, len, dso, t->n[node].value)) != 0)
			break;
		if (t->n[node].first_child && sp < PE_MAX_DEPTH + 1) {
			stack[sp++] = node;
			node = t->n[node].first_child;
			continue;
		}
		for (;;) {
			if ((rc = cb->leave(ctx)) != 0)
				goto emitted;
			if (!sp)
				goto emitted;
			if (t->n[node].next) {
				node = t->n[node].next;
				break;
			}
			node = stack[--sp];
		}
	}
emitted:
	if (rc > 0)
		rc = 0;
out:
	free(kept);
	free(stack);
	return rc;
}
