/* diff.c - two flame graphs merged into one tree, each node with its base and target value. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/query-int.h"

/* /diff: the two flame graphs merged into one tree, each node with its base
 * and target value. Both come depth first with children in bytewise name
 * order, so each level merges like two sorted lists: a cursor per open node
 * remembers where the last child was found or put. */
typedef struct dnode {
	char *name;
	size_t len;
	char *dso;
	uint64_t base, target;
	double nbase, ntarget;	/* shares of each flame graph's root, summed (normalized) */
	uint32_t first_child, next;
} dnode;

#define DIFF_MAX_DEPTH (PE_MAX_DEPTH + 8)	/* beyond the folded depth */

struct pe_diff {
	dnode *n;
	size_t nr, cap;
	int side;		/* 0 base, 1 target */
	size_t sp;		/* open nodes */
	uint32_t open[DIFF_MAX_DEPTH], cursor[DIFF_MAX_DEPTH];	/* cursor: last child, 0 = none */
	int oom;		/* 1 out of memory or too deep, 2 beyond PE_DIFF_MAX_NODES */
	int normalize;
	double scale;		/* 1 / the root of the flame graph being added */
	unsigned char *kept;	/* after pe_diff_prune: the nodes walked */
};

static int name_cmp(const char *a, size_t la, const char *b, size_t lb)
{
	int r = memcmp(a, b, la < lb ? la : lb);

	if (r)
		return r;
	return la < lb ? -1 : la > lb;
}

/* A new node, unlinked. OUT: *id; -1 out of memory. */
static int diff_new(pe_diff *t, const char *name, size_t len, const char *dso, uint32_t *id)
{
	dnode *x;

	if (t->nr >= PE_DIFF_MAX_NODES) {
		t->oom = 2;
		return -1;
	}
	if (t->nr == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 4096;
		dnode *p = t->nr < UINT32_MAX ? realloc(t->n, ncap * sizeof(*p)) : NULL;
		if (!p)
			return -1;
		t->n = p;
		t->cap = ncap;
	}
	x = &t->n[t->nr];
	memset(x, 0, sizeof(*x));
	x->name = malloc(len + 1);
	x->dso = dso ? strdup(dso) : NULL;
	if (!x->name || (dso && !x->dso)) {
		free(x->name);
		free(x->dso);
		return -1;
	}
	memcpy(x->name, name, len);
	x->name[len] = 0;
	x->len = len;
	*id = (uint32_t)t->nr++;
	return 0;
}

static int diff_enter(void *ctx, const char *name, size_t len, const char *dso, uint64_t value)
{
	pe_diff *t = ctx;
	uint32_t node, parent, prev, c;

	if (t->sp == 0) {
		node = 0;	/* the root, made before the first profile */
		t->scale = value ? 1.0 / (double)value : 0;
	} else {
		if (t->sp >= DIFF_MAX_DEPTH)
			return -1;
		parent = t->open[t->sp - 1];
		prev = t->cursor[t->sp - 1];
		/* the first child not before name, from the cursor on */
		c = prev ? t->n[prev].next : t->n[parent].first_child;
		while (c && name_cmp(t->n[c].name, t->n[c].len, name, len) < 0) {
			prev = c;
			c = t->n[c].next;
		}
		if (c && !name_cmp(t->n[c].name, t->n[c].len, name, len)) {
			node = c;
		} else {
			if (diff_new(t, name, len, dso, &node) < 0) {
				if (!t->oom)
					t->oom = 1;
				return -1;
			}
			t->n[node].next = c;
			if (prev)
				t->n[prev].next = node;
			else
				t->n[parent].first_child = node;
		}
		t->cursor[t->sp - 1] = node;
		if (!t->n[node].dso && dso && !(t->n[node].dso = strdup(dso))) {
			t->oom = 1;
			return -1;
		}
	}
	if (t->side) {
		t->n[node].target += value;
		t->n[node].ntarget += t->normalize ? (double)value * t->scale : 0;
	} else {
		t->n[node].base += value;
		t->n[node].nbase += t->normalize ? (double)value * t->scale : 0;
	}
	t->open[t->sp] = node;
	t->cursor[t->sp] = 0;
	t->sp++;
	return 0;
}

static int diff_leave(void *ctx)
{
	pe_diff *t = ctx;

	if (!t->sp)
		return -1;
	t->sp--;
	return 0;
}

void pe_diff_free(pe_diff *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nr; i++) {
		free(t->n[i].name);
		free(t->n[i].dso);
	}
	free(t->n);
	free(t->kept);
	free(t);
}

const pe_tree_cb pe_diff_tree_cb = { diff_enter, diff_leave };

pe_diff *pe_diff_new(void)
{
	pe_diff *t = calloc(1, sizeof(*t));
	uint32_t root;

	/* the root is node 0 */
	if (!t || diff_new(t, "all", 3, NULL, &root) < 0) {
		pe_diff_free(t);
		return NULL;
	}
	return t;
}

void pe_diff_side(pe_diff *t, int side)
{
	t->side = side;
	t->sp = 0;
}

int pe_diff_failed(const pe_diff *t)
{
	return t->oom;
}

void pe_diff_normalize(pe_diff *t)
{
	t->normalize = 1;
}

size_t pe_diff_nodes(const pe_diff *t)
{
	return t->nr;
}

/* A node's size for pruning: both sides' values (normalized: shares), as
 * bits that order as the doubles do (they are not negative). */
static uint64_t node_size(const pe_diff *t, const dnode *x)
{
	double v = t->normalize ? x->nbase + x->ntarget : (double)x->base + (double)x->target;
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	return bits;
}

int pe_diff_prune(pe_diff *t, size_t max_nodes)
{
	uint64_t *v, cut;
	size_t i, left;

	free(t->kept);
	t->kept = NULL;
	if (!max_nodes || t->nr <= max_nodes)
		return 0;
	v = malloc(t->nr * sizeof(*v));
	t->kept = calloc(t->nr, 1);
	if (!v || !t->kept) {
		free(v);
		free(t->kept);
		t->kept = NULL;
		return -1;
	}
	for (i = 0; i < t->nr; i++)
		v[i] = node_size(t, &t->n[i]);
	cut = pe_kth_largest(v, t->nr, max_nodes - 1);
	free(v);
	/* a child is never larger than its parent and is made after it: ties
	 * keep the earlier node, so what is kept is a tree */
	left = max_nodes;
	for (i = 0; i < t->nr; i++)
		if (node_size(t, &t->n[i]) > cut) {
			t->kept[i] = 1;
			left--;
		}
	for (i = 0; i < t->nr && left; i++)
		if (!t->kept[i] && node_size(t, &t->n[i]) == cut) {
			t->kept[i] = 1;
			left--;
		}
	t->kept[0] = 1;
	return 0;
}

/* The next child or sibling the walk goes to from c (0 = none). */
static uint32_t walked(const pe_diff *t, uint32_t c)
{
	while (c && t->kept && !t->kept[c])
		c = t->n[c].next;
	return c;
}

/* Depth first, children in name order, the nodes pe_diff_prune kept. */
static int walk_nodes(const pe_diff *t, int (*enter)(void *ctx, const pe_diff *t, const dnode *x),
		      int (*leave)(void *ctx), void *ctx)
{
	uint32_t *stack = malloc(DIFF_MAX_DEPTH * sizeof(*stack));
	size_t sp = 0;
	uint32_t node = 0, c;
	int rc = 0;

	if (!stack)
		return -1;
	for (;;) {
		if ((rc = enter(ctx, t, &t->n[node])) != 0)
			goto out;
		if ((c = walked(t, t->n[node].first_child)) && sp < DIFF_MAX_DEPTH) {
			stack[sp++] = node;
			node = c;
			continue;
		}
		for (;;) {
			if ((rc = leave(ctx)) != 0 || !sp)
				goto out;
			if ((c = walked(t, t->n[node].next))) {
				node = c;
				break;
			}
			node = stack[--sp];
		}
	}
out:
	free(stack);
	return rc > 0 ? 0 : rc;
}

typedef struct walk_ctx {
	const pe_diff_cb *cb;
	const pe_norm_cb *ncb;
	void *ctx;
} walk_ctx;

static int enter_values(void *ctx, const pe_diff *t, const dnode *x)
{
	walk_ctx *w = ctx;

	(void)t;
	return w->cb->enter(w->ctx, x->name, x->len, x->dso, x->base, x->target);
}

static int leave_values(void *ctx)
{
	walk_ctx *w = ctx;

	return w->cb->leave(w->ctx);
}

static int enter_norm(void *ctx, const pe_diff *t, const dnode *x)
{
	walk_ctx *w = ctx;

	(void)t;
	return w->ncb->enter(w->ctx, x->name, x->len, x->dso, x->nbase, x->ntarget);
}

static int leave_norm(void *ctx)
{
	walk_ctx *w = ctx;

	return w->ncb->leave(w->ctx);
}

int pe_diff_walk(const pe_diff *t, const pe_diff_cb *cb, void *ctx)
{
	walk_ctx w = { cb, NULL, ctx };

	return walk_nodes(t, enter_values, leave_values, &w);
}

int pe_diff_walk_norm(const pe_diff *t, const pe_norm_cb *cb, void *ctx)
{
	walk_ctx w = { NULL, cb, ctx };

	return walk_nodes(t, enter_norm, leave_norm, &w);
}

/* ---- the merged tree's folded lines ------------------------------------------------------- */

typedef struct fline {
	char *text;
	uint64_t count;
} fline;

typedef struct fold_ctx {
	int side;
	pe_sbuf path;
	size_t *mark;		/* the path's length before each open node */
	size_t sp;
	fline *lines;
	size_t n, cap;
} fold_ctx;

static uint64_t side_value(const dnode *x, int side)
{
	return side ? x->target : x->base;
}

static int fold_enter(void *ctx, const pe_diff *t, const dnode *x)
{
	fold_ctx *c = ctx;
	uint64_t own = side_value(x, c->side);
	uint32_t k;

	if (c->sp >= DIFF_MAX_DEPTH)
		return -1;
	c->mark[c->sp] = c->path.len;
	/* the root is not part of the text: the comm starts it */
	if (c->sp && ((c->sp > 1 && pe_sbuf_add(&c->path, ";", 1) < 0) ||
		      pe_sbuf_add(&c->path, x->name, x->len) < 0))
		return -1;
	c->sp++;
	for (k = x->first_child; k; k = t->n[k].next)
		own -= side_value(&t->n[k], c->side) < own ? side_value(&t->n[k], c->side) : own;
	if (c->sp < 2 || !own)
		return 0;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 4096;
		fline *p = realloc(c->lines, ncap * sizeof(*p));
		if (!p)
			return -1;
		c->lines = p;
		c->cap = ncap;
	}
	if (!(c->lines[c->n].text = strdup(c->path.p)))
		return -1;
	c->lines[c->n++].count = own;
	return 0;
}

static int fold_leave(void *ctx)
{
	fold_ctx *c = ctx;

	if (!c->sp)
		return -1;
	c->path.len = c->mark[--c->sp];
	if (c->path.p)
		c->path.p[c->path.len] = 0;
	return 0;
}

static int cmp_fline(const void *a, const void *b)
{
	return strcmp(((const fline *)a)->text, ((const fline *)b)->text);
}

int pe_diff_fold(const pe_diff *t, int side, pe_fold_cb cb, void *ctx)
{
	fold_ctx c;
	size_t i;
	int rc = -1;

	memset(&c, 0, sizeof(c));
	c.side = side;
	if (!(c.mark = malloc(DIFF_MAX_DEPTH * sizeof(*c.mark))))
		return -1;
	if (walk_nodes(t, fold_enter, fold_leave, &c) != 0)
		goto out;
	/* stackcollapse-perf's order: the lines' bytes */
	qsort(c.lines, c.n, sizeof(*c.lines), cmp_fline);
	rc = 0;
	for (i = 0; i < c.n && rc == 0; i++)
		rc = cb(ctx, c.lines[i].text, c.lines[i].count, c.lines[i].count);
	if (rc > 0)
		rc = 0;
out:
	for (i = 0; i < c.n; i++)
		free(c.lines[i].text);
	free(c.lines);
	free(c.mark);
	free(c.path.p);
	return rc;
}
