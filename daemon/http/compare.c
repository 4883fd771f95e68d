/* compare.c - questions about several profiles: the diff tree and the aggregate. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "http/jsonbuf.h"

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

#define DIFF_MAX_DEPTH 8200	/* beyond the store's folded depth */

typedef struct diff_tree {
	dnode *n;
	size_t nr, cap;
	int side;		/* 0 base, 1 target */
	size_t sp;		/* open nodes */
	uint32_t open[DIFF_MAX_DEPTH], cursor[DIFF_MAX_DEPTH];	/* cursor: last child, 0 = none */
	int oom;
} diff_tree;

static int name_cmp(const char *a, size_t la, const char *b, size_t lb)
{
	int r = memcmp(a, b, la < lb ? la : lb);

	if (r)
		return r;
	return la < lb ? -1 : la > lb;
}

/* A new node, unlinked. OUT: *id; -1 out of memory. */
static int diff_new(diff_tree *t, const char *name, size_t len, const char *dso, uint32_t *id)
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
	diff_tree *t = ctx;
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
	diff_tree *t = ctx;

	if (!t->sp)
		return -1;
	t->sp--;
	return 0;
}

static void diff_free(diff_tree *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++) {
		free(t->n[i].name);
		free(t->n[i].dso);
	}
	free(t->n);
	free(t);
}

/* The merged tree as compact JSON, depth first without recursion. */
static void diff_json(const diff_tree *t, jbuf *b)
{
	uint32_t *stack = malloc(DIFF_MAX_DEPTH * sizeof(*stack));
	size_t sp = 0;
	uint32_t node = 0;

	if (!stack) {
		b->oom = 1;
		return;
	}
	for (;;) {
		const dnode *x = &t->n[node];
		char num[96];
		int k;

		jb_add(b, "{\"name\":", 8);
		jb_json_str(b, x->name, x->len);
		if (x->dso) {
			jb_add(b, ",\"dso\":", 7);
			jb_json_str(b, x->dso, strlen(x->dso));
		}
		k = snprintf(num, sizeof(num), ",\"base\":%llu,\"target\":%llu,\"children\":[",
			     (unsigned long long)x->base, (unsigned long long)x->target);
		jb_add(b, num, (size_t)k);
		if (x->first_child && sp < DIFF_MAX_DEPTH) {
			stack[sp++] = node;
			node = x->first_child;
			continue;
		}
		for (;;) {
			jb_add(b, "]}", 2);
			if (!sp)
				goto done;
			if (t->n[node].next) {
				node = t->n[node].next;
				jb_add(b, ",", 1);
				break;
			}
			node = stack[--sp];
		}
	}
done:
	free(stack);
}

static const char *const diff_params[] = { "base", "target", HTTP_FOLD_PARAMS, NULL };

MHD_Result_t http_get_diff(api *a, struct MHD_Connection *conn)
{
	static const st_tree_cb cb = { diff_enter, diff_leave };
	http_fold_args fa, fa_target;
	diff_tree *t;
	jbuf b = { 0 };
	MHD_Result_t ret;
	int64_t base = 0, target = 0;
	uint32_t root;
	int rc;

	if (http_params_check(a, conn, diff_params, &ret) < 0)
		return ret;
	if (http_arg_i64(conn, "base", 1, INT64_MAX, &base) < 0 || !base)
		return http_reply_error(a, conn, 400, "bad or missing parameter 'base' (a profile id)");
	if (http_arg_i64(conn, "target", 1, INT64_MAX, &target) < 0 || !target)
		return http_reply_error(a, conn, 400, "bad or missing parameter 'target' (a profile id)");
	/* the event named, on both sides; else each profile's default */
	if (http_fold_args_parse(a, conn, &fa, &ret) < 0)
		return ret;
	fa_target = fa;
	if (http_fold_event(a, conn, base, &fa, &ret) < 0 ||
	    http_fold_event(a, conn, target, &fa_target, &ret) < 0)
		return ret;
	t = calloc(1, sizeof(*t));
	/* the root is node 0 */
	if (!t || diff_new(t, "all", 3, NULL, &root) < 0) {
		if (t)
			diff_free(t);
		return http_reply_error(a, conn, 500, "out of memory");
	}
	t->side = 0;
	rc = st_flame(a->st, base, &fa.f, fa.by_samples, &cb, t);
	if (rc == 0 && !t->oom) {
		t->side = 1;
		t->sp = 0;
		rc = st_flame(a->st, target, &fa_target.f, fa.by_samples, &cb, t);
	}
	if (rc != 0 || t->oom) {
		diff_free(t);
		if (rc == 1)
			return http_reply_error(a, conn, 404, "base or target is not a ready profile");
		return http_reply_error(a, conn, 500, rc < 0 ? "storage error" : "out of memory");
	}
	diff_json(t, &b);
	diff_free(t);
	if (b.oom || !b.p) {
		free(b.p);
		return http_reply_error(a, conn, 500, "out of memory");
	}
	return http_reply(a, conn, 200, b.p, b.len, "application/json");
}

MHD_Result_t http_get_aggregate(api *a, struct MHD_Connection *conn)
{
	static const char *const params[] = { "group_by", "hostname", "tag", "since", "until",
					      "limit", NULL };
	st_agg_filter f = { .limit = 100 };
	http_tags tags = { 0 };
	MHD_Result_t ret;
	json_t *o;
	int bad = 0;

	if (http_params_check(a, conn, params, &ret) < 0)
		return ret;

	f.group_by = http_arg(conn, "group_by");
	if (!f.group_by)
		f.group_by = "comm";
	f.hostname = http_arg(conn, "hostname");
	if (http_arg_i64(conn, "limit", 1, 100000, &f.limit) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'limit' (1..100000)");
	if (http_arg_i64(conn, "since", 0, INT64_MAX, &f.since) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'since' (unix seconds)");
	if (http_arg_i64(conn, "until", 0, INT64_MAX, &f.until) < 0)
		return http_reply_error(a, conn, 400, "bad parameter 'until' (unix seconds)");
	http_tags_get(conn, &tags);
	if (tags.bad || tags.n > 1) {
		http_tags_free(&tags);
		return http_reply_error(a, conn, 400, "bad parameter 'tag' (one tag=KEY=VALUE)");
	}
	if (tags.n) {
		f.tag_key = tags.keys[0];
		f.tag_value = tags.values[0];
	}
	o = st_aggregate_json(a->st, &f, &bad);
	http_tags_free(&tags);
	if (bad)
		return http_reply_error(a, conn, 400,
				   "bad parameter 'group_by' (comm, dso, symbol, hostname, event)");
	if (!o)
		return http_reply_error(a, conn, 500, "storage error");
	return http_reply_json(a, conn, 200, o);
}
