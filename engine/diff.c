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
	uint32_t first_child, next;
} dnode;

#define DIFF_MAX_DEPTH (PE_MAX_DEPTH + 8)	/* beyond the folded depth */

struct pe_diff {
	dnode *n;
	size_t nr, cap;
	int side;		/* 0 base, 1 target */
	size_t sp;		/* open nodes */
	uint32_t open[DIFF_MAX_DEPTH], cursor[DIFF_MAX_DEPTH];	/* cursor: last child, 0 = none */
	int oom;
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
	if (t->side)
		t->n[node].target += value;
	else
		t->n[node].base += value;
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

int pe_diff_walk(const pe_diff *t, const pe_diff_cb *cb, void *ctx)
{
	uint32_t *stack = malloc(DIFF_MAX_DEPTH * sizeof(*stack));
	size_t sp = 0;
	uint32_t node = 0;
	int rc = 0;

	if (!stack)
		return -1;
	for (;;) {
		const dnode *x = &t->n[node];

		if ((rc = cb->enter(ctx, x->name, x->len, x->dso, x->base, x->target)) != 0)
			goto out;
		if (x->first_child && sp < DIFF_MAX_DEPTH) {
			stack[sp++] = node;
			node = x->first_child;
			continue;
		}
		for (;;) {
			if ((rc = cb->leave(ctx)) != 0 || !sp)
				goto out;
			if (t->n[node].next) {
				node = t->n[node].next;
				break;
			}
			node = stack[--sp];
		}
	}
out:
	free(stack);
	return rc > 0 ? 0 : rc;
}
