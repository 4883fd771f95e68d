/*
 * symtree.c - a red-black tree over symbol starts with perf's insert
 * (equal keys go right), erase (the successor takes a two-child node's
 * place) and search, so that overlapping symbols resolve as perf's do.
 * The balancing is the textbook one (the same cases, in the same order, as
 * the kernel's lib/rbtree.c), which is what fixes the tree's shape.
 */
#include "symtree.h"

#include <stdlib.h>

#define NONE PD_SYMTREE_NONE
#define SYMTREE_MAX_NODES (UINT32_MAX - 1)

typedef struct st_node {
	uint64_t start, end;
	uint32_t item;
	uint32_t left, right, parent;
	uint8_t red;
} st_node;

struct pd_symtree {
	st_node *n;
	size_t nr, cap;
	uint32_t root;
};

pd_symtree *pd_symtree_new(void)
{
	pd_symtree *t = calloc(1, sizeof(*t));

	if (t)
		t->root = NONE;
	return t;
}

void pd_symtree_free(pd_symtree *t)
{
	if (!t)
		return;
	free(t->n);
	free(t);
}

static int is_red(const pd_symtree *t, uint32_t x)
{
	return x != NONE && t->n[x].red;
}

/* put v where u hangs (v may be NONE) */
static void replace_child(pd_symtree *t, uint32_t u, uint32_t v)
{
	uint32_t p = t->n[u].parent;

	if (p == NONE)
		t->root = v;
	else if (t->n[p].left == u)
		t->n[p].left = v;
	else
		t->n[p].right = v;
	if (v != NONE)
		t->n[v].parent = p;
}

static void rotate_left(pd_symtree *t, uint32_t x)
{
	uint32_t y = t->n[x].right;

	t->n[x].right = t->n[y].left;
	if (t->n[y].left != NONE)
		t->n[t->n[y].left].parent = x;
	replace_child(t, x, y);
	t->n[y].left = x;
	t->n[x].parent = y;
}

static void rotate_right(pd_symtree *t, uint32_t x)
{
	uint32_t y = t->n[x].left;

	t->n[x].left = t->n[y].right;
	if (t->n[y].right != NONE)
		t->n[t->n[y].right].parent = x;
	replace_child(t, x, y);
	t->n[y].right = x;
	t->n[x].parent = y;
}

static void insert_fixup(pd_symtree *t, uint32_t z)
{
	while (is_red(t, t->n[z].parent)) {
		uint32_t p = t->n[z].parent, g = t->n[p].parent;

		if (p == t->n[g].left) {
			uint32_t u = t->n[g].right;

			if (is_red(t, u)) {	/* uncle red: recolour, go up */
				t->n[p].red = t->n[u].red = 0;
				t->n[g].red = 1;
				z = g;
				continue;
			}
			if (z == t->n[p].right) {
				z = p;
				rotate_left(t, z);
				p = t->n[z].parent;
			}
			t->n[p].red = 0;
			t->n[g].red = 1;
			rotate_right(t, g);
		} else {
			uint32_t u = t->n[g].left;

			if (is_red(t, u)) {
				t->n[p].red = t->n[u].red = 0;
				t->n[g].red = 1;
				z = g;
				continue;
			}
			if (z == t->n[p].left) {
				z = p;
				rotate_right(t, z);
				p = t->n[z].parent;
			}
			t->n[p].red = 0;
			t->n[g].red = 1;
			rotate_left(t, g);
		}
	}
	t->n[t->root].red = 0;
}

uint32_t pd_symtree_insert(pd_symtree *t, uint64_t start, uint64_t end, uint32_t item)
{
	uint32_t z, p = NONE, x = t->root;
	int left = 0;

	if (t->nr >= SYMTREE_MAX_NODES)
		return NONE;
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		st_node *n = realloc(t->n, cap * sizeof(*n));

		if (!n)
			return NONE;
		t->n = n;
		t->cap = cap;
	}
	z = (uint32_t)t->nr++;
	while (x != NONE) {
		p = x;
		left = start < t->n[x].start;
		x = left ? t->n[x].left : t->n[x].right;
	}
	t->n[z] = (st_node){ .start = start, .end = end, .item = item,
			     .left = NONE, .right = NONE, .parent = p, .red = 1 };
	if (p == NONE)
		t->root = z;
	else if (left)
		t->n[p].left = z;
	else
		t->n[p].right = z;
	insert_fixup(t, z);
	return z;
}

static uint32_t leftmost(const pd_symtree *t, uint32_t x)
{
	while (x != NONE && t->n[x].left != NONE)
		x = t->n[x].left;
	return x;
}

/* x (maybe NONE) under xp lost one black on its path */
static void erase_fixup(pd_symtree *t, uint32_t x, uint32_t xp)
{
	while (x != t->root && !is_red(t, x)) {
		if (x == t->n[xp].left) {
			uint32_t w = t->n[xp].right;

			if (is_red(t, w)) {
				t->n[w].red = 0;
				t->n[xp].red = 1;
				rotate_left(t, xp);
				w = t->n[xp].right;
			}
			if (!is_red(t, t->n[w].left) && !is_red(t, t->n[w].right)) {
				t->n[w].red = 1;
				x = xp;
				xp = t->n[x].parent;
				continue;
			}
			if (!is_red(t, t->n[w].right)) {
				t->n[t->n[w].left].red = 0;
				t->n[w].red = 1;
				rotate_right(t, w);
				w = t->n[xp].right;
			}
			t->n[w].red = t->n[xp].red;
			t->n[xp].red = 0;
			t->n[t->n[w].right].red = 0;
			rotate_left(t, xp);
			x = t->root;
		} else {
			uint32_t w = t->n[xp].left;

			if (is_red(t, w)) {
				t->n[w].red = 0;
				t->n[xp].red = 1;
				rotate_right(t, xp);
				w = t->n[xp].left;
			}
			if (!is_red(t, t->n[w].left) && !is_red(t, t->n[w].right)) {
				t->n[w].red = 1;
				x = xp;
				xp = t->n[x].parent;
				continue;
			}
			if (!is_red(t, t->n[w].left)) {
				t->n[t->n[w].right].red = 0;
				t->n[w].red = 1;
				rotate_left(t, w);
				w = t->n[xp].left;
			}
			t->n[w].red = t->n[xp].red;
			t->n[xp].red = 0;
			t->n[t->n[w].left].red = 0;
			rotate_right(t, xp);
			x = t->root;
		}
	}
	if (x != NONE)
		t->n[x].red = 0;
}

void pd_symtree_erase(pd_symtree *t, uint32_t z)
{
	uint32_t x, xp, y = z;
	int removed_red = t->n[z].red;

	if (t->n[z].left == NONE) {
		x = t->n[z].right;
		xp = t->n[z].parent;
		replace_child(t, z, x);
	} else if (t->n[z].right == NONE) {
		x = t->n[z].left;
		xp = t->n[z].parent;
		replace_child(t, z, x);
	} else {
		y = leftmost(t, t->n[z].right);
		removed_red = t->n[y].red;
		x = t->n[y].right;
		if (t->n[y].parent == z) {
			xp = y;
		} else {
			xp = t->n[y].parent;
			replace_child(t, y, x);
			t->n[y].right = t->n[z].right;
			t->n[t->n[y].right].parent = y;
		}
		replace_child(t, z, y);
		t->n[y].left = t->n[z].left;
		t->n[t->n[y].left].parent = y;
		t->n[y].red = t->n[z].red;
	}
	t->n[z].left = t->n[z].right = t->n[z].parent = NONE;
	if (!removed_red)
		erase_fixup(t, x, xp);
}

uint32_t pd_symtree_first(const pd_symtree *t)
{
	return leftmost(t, t->root);
}

uint32_t pd_symtree_next(const pd_symtree *t, uint32_t x)
{
	uint32_t p;

	if (t->n[x].right != NONE)
		return leftmost(t, t->n[x].right);
	for (p = t->n[x].parent; p != NONE && x == t->n[p].right; p = t->n[p].parent)
		x = p;
	return p;
}

uint64_t pd_symtree_start(const pd_symtree *t, uint32_t x)
{
	return t->n[x].start;
}

uint64_t pd_symtree_end(const pd_symtree *t, uint32_t x)
{
	return t->n[x].end;
}

void pd_symtree_set_end(pd_symtree *t, uint32_t x, uint64_t end)
{
	t->n[x].end = end;
}

uint32_t pd_symtree_item(const pd_symtree *t, uint32_t x)
{
	return t->n[x].item;
}

uint32_t pd_symtree_find(const pd_symtree *t, uint64_t ip)
{
	uint32_t x = t->root;

	while (x != NONE) {
		const st_node *s = &t->n[x];

		if (ip < s->start)
			x = s->left;
		else if (ip > s->end || (ip == s->end && ip != s->start))
			x = s->right;
		else
			return x;
	}
	return NONE;
}

uint32_t pd_symtree_root(const pd_symtree *t)
{
	return t->root;
}

/* black height of x's subtree, -1 when a rule is broken below x */
static int check_node(const pd_symtree *t, uint32_t x, uint32_t parent, size_t depth)
{
	const st_node *s;
	int l, r;

	if (x == NONE)
		return 1;
	s = &t->n[x];
	if (depth > 128 || s->parent != parent)
		return -1;
	if (s->red && (is_red(t, s->left) || is_red(t, s->right)))
		return -1;
	if ((s->left != NONE && t->n[s->left].start > s->start) ||
	    (s->right != NONE && t->n[s->right].start < s->start))
		return -1;
	l = check_node(t, s->left, x, depth + 1);
	r = check_node(t, s->right, x, depth + 1);
	if (l < 0 || l != r)
		return -1;
	return l + !s->red;
}

int pd_symtree_check(const pd_symtree *t)
{
	if (is_red(t, t->root))
		return -1;
	return check_node(t, t->root, NONE, 0);
}
