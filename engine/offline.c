/* offline.c - a profile built and kept in memory: model rows and blocks. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/offline.h"

typedef struct kept_block {
	uint32_t nr;
	uint64_t min_time, max_time;
	void *data;
	size_t len;
} kept_block;

struct pe_offline {
	pe_builder *b;		/* NULL once finished */
	pe_model *m;
	int sealed;
	kept_block *blocks;
	size_t nr_blocks, cap_blocks, block_bytes;
	pe_blocks src;
	pe_leaf_row *leaves;	/* the leaf addresses (annotation), by frame once finished */
	size_t nr_leaves, cap_leaves;
	pe_leaves leaf_src;
	char **dso_paths, **dso_hex;	/* the recording's build-ids by DSO */
	size_t nr_dsos;
};

/* The leaf-address rows among rows, kept. 0 or -1. */
static int keep_leaves(pe_offline *o, const pe_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		pe_leaf_row l;

		if (!pe_leaf_row_of(&rows[i], &l))
			continue;
		if (o->nr_leaves == o->cap_leaves) {
			size_t nc = o->cap_leaves ? 2 * o->cap_leaves : 1024;
			pe_leaf_row *nl = realloc(o->leaves, nc * sizeof(*nl));

			if (!nl)
				return -1;
			o->leaves = nl;
			o->cap_leaves = nc;
		}
		o->leaves[o->nr_leaves++] = l;
	}
	return 0;
}

static int cmp_leaf(const void *a, const void *b)
{
	uint32_t x = ((const pe_leaf_row *)a)->frame, y = ((const pe_leaf_row *)b)->frame;

	return x < y ? -1 : x > y;
}

/* The leaf rows of one frame: a binary search in the sorted rows. */
static int read_leaves(void *src, uint32_t frame, pe_leaf_cb cb, void *ctx)
{
	const pe_offline *o = src;
	size_t lo = 0, hi = o->nr_leaves;
	int rc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->leaves[mid].frame < frame)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < o->nr_leaves && o->leaves[lo].frame == frame; lo++)
		if ((rc = cb(ctx, &o->leaves[lo])) != 0)
			return rc;
	return 0;
}

/* A packed block copied (the builder reuses its bytes). 0 or -1. */
static int keep_block(pe_offline *o, const pe_packed_block *pb)
{
	kept_block *k;

	if (o->nr_blocks == o->cap_blocks) {
		size_t nc = o->cap_blocks ? 2 * o->cap_blocks : 64;
		kept_block *nb = realloc(o->blocks, nc * sizeof(*nb));

		if (!nb)
			return -1;
		o->blocks = nb;
		o->cap_blocks = nc;
	}
	k = &o->blocks[o->nr_blocks];
	if (!(k->data = malloc(pb->len ? pb->len : 1)))
		return -1;
	memcpy(k->data, pb->data, pb->len);
	k->len = pb->len;
	k->nr = pb->nr;
	k->min_time = pb->min_time;
	k->max_time = pb->max_time;
	o->nr_blocks++;
	o->block_bytes += pb->len;
	return 0;
}

/* The builder's flush hook: rows into the model, blocks kept. */
static int flush_hook(void *ctx, pe_builder *b, int with_block)
{
	pe_offline *o = ctx;
	pe_packed_block pb;
	const pe_row *rows;
	size_t n;
	int rc;

	if (with_block) {
		rc = pe_builder_pack_block(b, &pb);
		if (rc < 0 || (rc == 0 && keep_block(o, &pb) < 0))
			return -1;
	}
	rows = pe_builder_rows(b, &n);
	if (pe_model_load_rows(o->m, rows, n) < 0 || keep_leaves(o, rows, n) < 0)
		return -1;
	pe_builder_rows_done(b);
	return 0;
}

static int read_blocks(void *src, uint64_t from_ns, uint64_t to_ns, pe_block_cb cb, void *ctx)
{
	const pe_offline *o = src;
	size_t i;
	int rc;

	for (i = 0; i < o->nr_blocks; i++) {
		const kept_block *k = &o->blocks[i];

		if ((from_ns && k->max_time < from_ns) || (to_ns && k->min_time >= to_ns))
			continue;
		if ((rc = cb(ctx, k->nr, k->data, k->len)) != 0)
			return rc;
	}
	return 0;
}

pe_offline *pe_offline_new(void)
{
	pe_offline *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->b = pe_builder_new();
	o->m = pe_model_new(0, 0);
	if (!o->b || !o->m) {
		pe_offline_free(o);
		return NULL;
	}
	pe_builder_set_flush(o->b, flush_hook, o);
	o->src.read = read_blocks;
	o->src.src = o;
	o->leaf_src.read = read_leaves;
	o->leaf_src.src = o;
	return o;
}

void pe_offline_free(pe_offline *o)
{
	size_t i;

	if (!o)
		return;
	pe_builder_free(o->b);
	pe_model_free(o->m);
	for (i = 0; i < o->nr_blocks; i++)
		free(o->blocks[i].data);
	free(o->blocks);
	free(o->leaves);
	for (i = 0; i < o->nr_dsos; i++) {
		free(o->dso_paths[i]);
		free(o->dso_hex[i]);
	}
	free(o->dso_paths);
	free(o->dso_hex);
	free(o);
}

pe_builder *pe_offline_builder(pe_offline *o)
{
	return o->b;
}

int pe_offline_finish(pe_offline *o)
{
	const pe_agg_row *agg;
	size_t n, i;
	int rc = -1;

	if (!o->b || pe_builder_flush(o->b) < 0)
		goto out;
	agg = pe_builder_agg_rows(o->b, &n);
	for (i = 0; i < n; i++)
		if (pe_model_add_agg(o->m, &agg[i]) < 0)
			goto out;
	if (pe_model_seal(o->m) < 0)
		goto out;
	if (o->nr_leaves > 1)
		qsort(o->leaves, o->nr_leaves, sizeof(*o->leaves), cmp_leaf);
	o->sealed = 1;
	rc = 0;
out:
	/* its interning tables are not needed for answers */
	pe_builder_free(o->b);
	o->b = NULL;
	return rc;
}

pe_model *pe_offline_model(pe_offline *o)
{
	return o->sealed ? o->m : NULL;
}

const pe_blocks *pe_offline_blocks(const pe_offline *o)
{
	return o->sealed ? &o->src : NULL;
}

int pe_offline_note_dso(pe_offline *o, const char *path, const char *hex)
{
	char **p = realloc(o->dso_paths, (o->nr_dsos + 1) * sizeof(*p));
	char **h;

	if (!p)
		return -1;
	o->dso_paths = p;
	if (!(h = realloc(o->dso_hex, (o->nr_dsos + 1) * sizeof(*h))))
		return -1;
	o->dso_hex = h;
	p[o->nr_dsos] = strdup(path);
	h[o->nr_dsos] = strdup(hex);
	if (!p[o->nr_dsos] || !h[o->nr_dsos]) {
		free(p[o->nr_dsos]);
		free(h[o->nr_dsos]);
		return -1;
	}
	o->nr_dsos++;
	return 0;
}

const char *pe_offline_build_id(const pe_offline *o, const char *path)
{
	size_t i;

	for (i = 0; path && i < o->nr_dsos; i++)
		if (!strcmp(o->dso_paths[i], path))
			return o->dso_hex[i];
	return NULL;
}

const pe_leaves *pe_offline_leaves(const pe_offline *o)
{
	return o->sealed ? &o->leaf_src : NULL;
}

size_t pe_offline_block_bytes(const pe_offline *o)
{
	return o->block_bytes;
}
