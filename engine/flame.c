/*
 * flame.c - the flame graph from the stack tree: the selected rows are
 * placed under their comm node by walking each leaf's stack up to a node
 * already placed and down again, so no folded text is built; the tree
 * (tree.c) then sorts children by name and hands it out depth first.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/tree-int.h"

int pe_flame(pe_model *m, const pe_filter *f, const pe_selection *s, int by_samples,
	     const pe_tree_cb *cb, void *ctx)
{
	const pe_aggmap *groups = &s->groups;
	pe_ttree t;
	pe_u64map memo = { 0 };	/* comm node << 32 | stack node -> tree node */
	pe_comms comms;
	uint32_t *path = NULL;
	size_t i;
	int rc = -1;

	if (pe_comms_init(&comms) < 0 || pe_ttree_init(&t, 0) < 0) {
		pe_comms_free(&comms);
		return -1;
	}
	if (pe_u64map_grow(&memo) < 0 || !(path = malloc(PE_MAX_DEPTH * sizeof(*path))))
		goto out;
	for (i = 0; i < groups->n; i++) {
		const pe_agg_row *r = &groups->rows[i];
		uint64_t v = by_samples ? r->samples : r->period, ckey;
		uint32_t cnode, node, tn;
		size_t depth = 0;
		int found;

		if (!(ckey = pe_comms_key(&comms, m, f, r)) || !(cnode = pe_ttree_child(&t, 0, ckey)))
			goto out;
		/* up the stack tree to a node already placed, then down again */
		node = r->stack;
		tn = cnode;
		while (node && node < m->nr_stacks && depth < PE_MAX_DEPTH) {
			size_t slot;
			if (2 * (memo.n + 1) > memo.cap && pe_u64map_grow(&memo) < 0)
				goto out;
			slot = pe_u64map_slot(&memo, (uint64_t)cnode << 32 | node, &found);
			if (found) {
				tn = memo.vals[slot];
				break;
			}
			path[depth++] = node;
			if (m->stack_parent[node] >= node)
				break;
			node = m->stack_parent[node];
		}
		while (depth--) {
			uint32_t sn = path[depth], fr = m->stack_frame[sn];
			size_t slot;

			tn = pe_ttree_child(&t, tn, pe_frame_key(m, f, fr));
			if (!tn)
				goto out;
			/* frames of one name in several DSOs share a node (the
			 * folded text cannot tell them apart): the first DSO
			 * placed, in file order of the samples, names it */
			if (!t.n[tn].dso && fr < m->nr_frames)
				t.n[tn].dso = m->frame_dso[fr];
			if (2 * (memo.n + 1) > memo.cap && pe_u64map_grow(&memo) < 0)
				goto out;
			slot = pe_u64map_slot(&memo, (uint64_t)cnode << 32 | sn, &found);
			memo.keys[slot] = (uint64_t)cnode << 32 | sn;
			memo.vals[slot] = tn;
			memo.n++;
		}
		t.n[tn].value += v;
	}
	rc = pe_ttree_emit(m, &t, &comms, "all", f->max_nodes, PE_TSORT_FLAME, cb, ctx);
out:
	pe_ttree_free(&t);
	pe_u64map_free(&memo);
	pe_comms_free(&comms);
	free(path);
	return rc;
}
