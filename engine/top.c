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

int pe_keysum_add(const pe_model *m, const pe_selection *s, const uint32_t *key_of, size_t nkeys,
	      pe_keysum *sums)
{
	const pe_aggmap *groups = &s->groups;
	uint64_t *seen = calloc(nkeys + 1, sizeof(*seen));	/* the row that last counted it, + 1 */
	size_t i;

	if (!seen)
		return -1;
	for (i = 0; i < groups->n; i++) {
		const pe_agg_row *r = &groups->rows[i];
		uint32_t node = r->stack;
		size_t depth = 0, leaf = SIZE_MAX;
		while (node && node < m->nr_stacks && depth < PE_MAX_DEPTH) {
			uint32_t fr = m->stack_frame[node];
			size_t key = fr < m->nr_frames ? key_of[fr] : PE_NO_KEY;
			if (key < nkeys) {
				if (leaf == SIZE_MAX)
					leaf = key;
				if (seen[key] != i + 1) {
					seen[key] = i + 1;
					sums[key].total_samples += r->samples;
					sums[key].total_period += r->period;
				}
			}
			depth++;
			if (m->stack_parent[node] >= node)
				break;
			node = m->stack_parent[node];
		}
		if (leaf != SIZE_MAX) {
			sums[leaf].self_samples += r->samples;
			sums[leaf].self_period += r->period;
		}
	}
	free(seen);
	return 0;
}

int pe_top(const pe_model *m, const pe_filter *f, const pe_selection *s, int by_samples,
	   pe_top_row **rows, size_t *n)
{
	pe_keysum *sums = NULL;
	uint32_t *dso = NULL, *key_of = NULL;
	pe_top_row *out = NULL;
	size_t nkeys, i, nr = 0;
	int rc = -1;

	*rows = NULL;
	*n = 0;
	/* key = name string id * 2 + kernel mark */
	nkeys = 2 * (m->nr_strs + 1);
	sums = calloc(nkeys, sizeof(*sums));
	dso = calloc(nkeys, sizeof(*dso));
	key_of = malloc((m->nr_frames + 1) * sizeof(*key_of));
	if (!sums || !dso || !key_of)
		goto out;
	/* a function's DSO: that of its first frame */
	for (i = m->nr_frames; i-- > 1;) {
		uint32_t nm = m->frame_name[i];
		int mark = f->kernel && m->frame_kernel[i];
		key_of[i] = nm < m->nr_strs ? 2 * nm + (uint32_t)mark : PE_NO_KEY;
		if (nm < m->nr_strs && m->frame_dso[i])
			dso[2 * (size_t)nm + (size_t)mark] = m->frame_dso[i];
	}
	key_of[0] = PE_NO_KEY;
	if (pe_keysum_add(m, s, key_of, nkeys, sums) < 0)
		goto out;
	for (i = 0; i < nkeys; i++)
		nr += (sums[i].total_samples || sums[i].self_samples) && pe_str(m, (uint32_t)(i / 2));
	if (!(out = calloc(nr + 1, sizeof(*out))))
		goto out;
	nr = 0;
	for (i = 0; i < nkeys; i++) {
		const char *name = pe_str(m, (uint32_t)(i / 2));
		char *copy;
		size_t l;

		if ((!sums[i].total_samples && !sums[i].self_samples) || !name)
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
		out[nr].self = by_samples ? sums[i].self_samples : sums[i].self_period;
		out[nr++].total = by_samples ? sums[i].total_samples : sums[i].total_period;
	}
	*rows = out;
	*n = nr;
	out = NULL;
	rc = 0;
out:
	pe_top_free(out, nr);
	free(sums);
	free(dso);
	free(key_of);
	return rc;
}
