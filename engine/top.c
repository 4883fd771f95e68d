/* top.c - per function, the samples where it is the leaf (self) and those where it is anywhere on the stack (total). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/query-int.h"

void pe_top_free(pe_top_row *rows, size_t n)
{
	size_t i;

	for (i = 0; rows && i < n; i++)
		free((char *)rows[i].name);
	free(rows);
}

int pe_top(const pe_model *m, const pe_filter *f, const pe_selection *s, int by_samples,
	   pe_top_row **rows, size_t *n)
{
	const pe_aggmap *groups = &s->groups;
	uint64_t *self = NULL, *total = NULL, *seen = NULL;
	uint32_t *dso = NULL;
	pe_top_row *out = NULL;
	size_t nkeys, i, nr = 0;
	int rc = -1;

	*rows = NULL;
	*n = 0;
	/* key = name string id * 2 + kernel mark */
	nkeys = 2 * (m->nr_strs + 1);
	self = calloc(nkeys, sizeof(*self));
	total = calloc(nkeys, sizeof(*total));
	seen = calloc(nkeys, sizeof(*seen));	/* the row that last counted it, + 1 */
	dso = calloc(nkeys, sizeof(*dso));
	if (!self || !total || !seen || !dso)
		goto out;
	/* a function's DSO: that of its first frame */
	for (i = m->nr_frames; i-- > 1;) {
		uint32_t nm = m->frame_name[i];
		int mark = f->kernel && m->frame_kernel[i];
		if (nm < m->nr_strs && m->frame_dso[i])
			dso[2 * (size_t)nm + (size_t)mark] = m->frame_dso[i];
	}
	for (i = 0; i < groups->n; i++) {
		const pe_agg_row *r = &groups->rows[i];
		uint64_t v = by_samples ? r->samples : r->period;
		uint32_t node = r->stack;
		size_t depth = 0, leaf = SIZE_MAX;
		while (node && node < m->nr_stacks && depth < PE_MAX_DEPTH) {
			uint32_t fr = m->stack_frame[node];
			size_t key;
			if (fr < m->nr_frames && m->frame_name[fr] < m->nr_strs) {
				key = 2 * (size_t)m->frame_name[fr] +
				      (size_t)(f->kernel && m->frame_kernel[fr]);
				if (leaf == SIZE_MAX)
					leaf = key;
				if (seen[key] != i + 1) {
					seen[key] = i + 1;
					total[key] += v;
				}
			}
			depth++;
			if (m->stack_parent[node] >= node)
				break;
			node = m->stack_parent[node];
		}
		if (leaf != SIZE_MAX)
			self[leaf] += v;
	}
	for (i = 0; i < nkeys; i++)
		nr += (total[i] || self[i]) && pe_str(m, (uint32_t)(i / 2));
	if (!(out = calloc(nr + 1, sizeof(*out))))
		goto out;
	nr = 0;
	for (i = 0; i < nkeys; i++) {
		const char *name = pe_str(m, (uint32_t)(i / 2));
		char *copy;
		size_t l;

		if ((!total[i] && !self[i]) || !name)
			continue;
		l = strlen(name);
		/* kernel frames under --kernel: "name_[k]" */
		if (!(copy = malloc(l + 5)))
			goto out;
		memcpy(copy, name, l);
		memcpy(copy + l, "_[k]", 5);
		if (!(i & 1))
			copy[l] = 0;
		out[nr].name = copy;
		out[nr].dso = dso[i] ? pe_str(m, dso[i]) : NULL;
		out[nr].self = self[i];
		out[nr++].total = total[i];
	}
	*rows = out;
	*n = nr;
	out = NULL;
	rc = 0;
out:
	pe_top_free(out, nr);
	free(self);
	free(total);
	free(seen);
	free(dso);
	return rc;
}
