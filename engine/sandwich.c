/*
 * sandwich.c - callers and callees of one function: each selected stack
 * that holds the function is cut at its outermost frame of it (a
 * recursive function counts once); the part outside goes into the callers
 * tree (inverted: the function at the root, its caller below, the comm
 * last), the part inside into the callees tree (the function at the root,
 * what it called below). Both roots add up to the function's total.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/tree-int.h"

int pe_sandwich(pe_model *m, const pe_filter *f, const pe_selection *s, int by_samples,
		const char *function, const pe_tree_cb *callers, void *callers_ctx,
		const pe_tree_cb *callees, void *callees_ctx)
{
	const pe_aggmap *groups = &s->groups;
	uint64_t fkey = pe_function_key(m, f, function);
	pe_ttree up, down;
	pe_comms comms;
	uint32_t *path = NULL;
	size_t i;
	int rc = -1;

	if (!fkey)
		return 1;
	if (pe_comms_init(&comms) < 0)
		return -1;
	if (pe_ttree_init(&up, fkey) < 0) {
		pe_comms_free(&comms);
		return -1;
	}
	if (pe_ttree_init(&down, fkey) < 0)
		goto out;
	if (!(path = malloc(PE_MAX_DEPTH * sizeof(*path))))
		goto out;
	for (i = 0; i < groups->n; i++) {
		const pe_agg_row *r = &groups->rows[i];
		uint64_t v = by_samples ? r->samples : r->period, ckey;
		uint32_t node = r->stack, tn;
		size_t depth = 0, outer = SIZE_MAX, k;

		/* path[0] is the leaf; the outermost frame of the function wins */
		while (node && node < m->nr_stacks && depth < PE_MAX_DEPTH) {
			if (pe_frame_key(m, f, m->stack_frame[node]) == fkey)
				outer = depth;
			path[depth++] = node;
			if (m->stack_parent[node] >= node)
				break;
			node = m->stack_parent[node];
		}
		if (outer == SIZE_MAX)
			continue;
		if (!up.n[0].dso && m->stack_frame[path[outer]] < m->nr_frames)
			up.n[0].dso = down.n[0].dso = m->frame_dso[m->stack_frame[path[outer]]];
		/* callees: from the function down to the leaf */
		for (tn = 0, k = outer; k-- > 0;) {
			uint32_t fr = m->stack_frame[path[k]];
			if (!(tn = pe_ttree_child(&down, tn, pe_frame_key(m, f, fr))))
				goto out;
			if (!down.n[tn].dso && fr < m->nr_frames)
				down.n[tn].dso = m->frame_dso[fr];
		}
		down.n[tn].value += v;
		/* callers: from the function out to the thread's first frame, then its comm */
		for (tn = 0, k = outer + 1; k < depth; k++) {
			uint32_t fr = m->stack_frame[path[k]];
			if (!(tn = pe_ttree_child(&up, tn, pe_frame_key(m, f, fr))))
				goto out;
			if (!up.n[tn].dso && fr < m->nr_frames)
				up.n[tn].dso = m->frame_dso[fr];
		}
		if (!(ckey = pe_comms_key(&comms, m, f, r)) || !(tn = pe_ttree_child(&up, tn, ckey)))
			goto out;
		up.n[tn].value += v;
	}
	rc = pe_ttree_emit(m, &up, &comms, NULL, f->max_nodes, PE_TSORT_TEXT, callers, callers_ctx);
	if (rc == 0)
		rc = pe_ttree_emit(m, &down, &comms, NULL, f->max_nodes, PE_TSORT_TEXT, callees,
				   callees_ctx);
out:
	pe_ttree_free(&up);
	pe_ttree_free(&down);
	pe_comms_free(&comms);
	free(path);
	return rc;
}
