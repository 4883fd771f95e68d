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
	size_t name;		/* offset in the text arena */
	size_t len;
	size_t dso;		/* offset in the text arena, DIFF_NO_DSO = none */
	uint64_t base, target;
	uint32_t first_child, next;
} dnode;

#define DIFF_MAX_DEPTH (PE_MAX_DEPTH + 8)	/* beyond the folded depth */
#define DIFF_NO_DSO SIZE_MAX
#define DIFF_DSO_MEMO 64	/* DSO names remembered to share their text */

/* Names and DSOs live in one growing arena, not a malloc each: a node
 * costs its struct and its name's bytes, and a DSO's name is kept once
 * while it recurs (most neighbouring frames share theirs). */
struct pe_diff {
	dnode *n;
	size_t nr, cap;
	char *text;
	size_t text_len, text_cap;
	size_t dso_memo[DIFF_DSO_MEMO];	/* arena offsets of recent DSO names */
	size_t dso_len[DIFF_DSO_MEMO];
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

/* len bytes and a NUL appended to the arena. OUT: *off; -1 out of memory. */
static int text_add(pe_diff *t, const char *s, size_t len, size_t *off)
{
	if (len + 1 > t->text_cap - t->text_len) {
		size_t ncap = t->text_cap ? t->text_cap : 65536;
		char *p;

		while (ncap - t->text_len < len + 1)
			ncap *= 2;
		if (!(p = realloc(t->text, ncap)))
			return -1;
		t->text = p;
		t->text_cap = ncap;
	}
	memcpy(t->text + t->text_len, s, len);
	t->text[t->text_len + len] = 0;
	*off = t->text_len;
	t->text_len += len + 1;
	return 0;
}

/* The arena offset of a DSO name, shared with a recent equal one. */
static int dso_add(pe_diff *t, const char *dso, size_t *off)
{
	size_t len = strlen(dso), h = len, i;

	for (i = 0; i < len; i++)
		h = h * 31 + (unsigned char)dso[i];
	h %= DIFF_DSO_MEMO;
	if (t->dso_len[h] == len + 1 && !memcmp(t->text + t->dso_memo[h], dso, len)) {
		*off = t->dso_memo[h];
		return 0;
	}
	if (text_add(t, dso, len, off) < 0)
		return -1;
	t->dso_memo[h] = *off;
	t->dso_len[h] = len + 1;
	return 0;
}

/* A new node, unlinked. OUT: *id; -1 out of memory. */
static int diff_new(pe_diff *t, const char *name, size_t len, const char *dso, uint32_t *id)
{
	dnode *x;
	size_t name_off, dso_off = DIFF_NO_DSO;

	if (t->nr == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 4096;
		dnode *p = t->nr < UINT32_MAX ? realloc(t->n, ncap * sizeof(*p)) : NULL;
		if (!p)
			return -1;
		t->n = p;
		t->cap = ncap;
	}
	if (text_add(t, name, len, &name_off) < 0 || (dso && dso_add(t, dso, &dso_off) < 0))
		return -1;
	x = &t->n[t->nr];
	memset(x, 0, sizeof(*x));
	x->name = name_off;
	x->len = len;
	x->dso = dso_off;
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
		while (c && name_cmp(t->text + t->n[c].name, t->n[c].len, name, len) < 0) {
			prev = c;
			c = t->n[c].next;
		}
		if (c && !name_cmp(t->text + t->n[c].name, t->n[c].len, name, len)) {
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
		if (t->n[node].dso == DIFF_NO_DSO && dso) {
			size_t off;

			if (dso_add(t, dso, &off) < 0) {
				t->oom = 1;
				return -1;
			}
			t->n[node].dso = off;
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
	if (!t)
		return;
	free(t->n);
	free(t->text);
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

		if ((rc = cb->enter(ctx, t->text + x->name, x->len,
				    x->dso == DIFF_NO_DSO ? NULL : t->text + x->dso, x->base,
				    x->target)) != 0)
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
