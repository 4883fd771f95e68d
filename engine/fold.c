/* fold.c - folded stacks ("comm;outer;...;leaf count") from a selection. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/query-int.h"

typedef struct fold_line {
	char *text;
	uint64_t samples, period;
} fold_line;

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const fold_line *)a)->text, ((const fold_line *)b)->text);
}

int pe_fold(const pe_model *m, const pe_filter *f, const pe_selection *s, pe_fold_cb cb,
	    void *ctx)
{
	const pe_aggmap *g = &s->groups;
	fold_line *lines = calloc(g->n + 1, sizeof(*lines));
	uint32_t *path = malloc(PE_MAX_DEPTH * sizeof(*path));
	size_t nr = 0, i;
	pe_sbuf b = { 0 };
	int rc = -1;

	if (!lines || !path)
		goto out;
	for (i = 0; i < g->n; i++) {
		const pe_agg_row *r = &g->rows[i];
		uint32_t node = r->stack;
		size_t depth = 0;

		if (pe_comm_text(&b, m, f, r) < 0)
			goto out;
		/* parents always have smaller ids: the walk ends */
		while (node && node < m->nr_stacks && depth < PE_MAX_DEPTH) {
			path[depth++] = m->stack_frame[node];
			if (m->stack_parent[node] >= node)
				break;
			node = m->stack_parent[node];
		}
		while (depth--) {
			uint32_t fr = path[depth];
			const char *t = fr < m->nr_frames ? pe_str(m, m->frame_name[fr]) : NULL;
			if (!t)
				t = "[unknown]";
			if (pe_sbuf_add(&b, ";", 1) < 0 || pe_sbuf_add(&b, t, strlen(t)) < 0)
				goto out;
			if (f->kernel && fr < m->nr_frames && m->frame_kernel[fr] &&
			    pe_sbuf_add(&b, "_[k]", 4) < 0)
				goto out;
		}
		lines[nr].text = strdup(b.p ? b.p : "");
		lines[nr].samples = r->samples;
		lines[nr].period = r->period;
		if (!lines[nr].text)
			goto out;
		nr++;
	}
	if (f->any_order) {
		/* no sort: long common prefixes make it the dearest step */
		rc = 0;
		for (i = 0; i < nr && rc == 0; i++)
			rc = cb(ctx, lines[i].text, lines[i].samples, lines[i].period);
		if (rc > 0)
			rc = 0;
		goto out;
	}
	qsort(lines, nr, sizeof(*lines), cmp_line);
	rc = 0;
	for (i = 0; i < nr && rc == 0; ) {
		size_t j = i + 1;
		uint64_t ns = lines[i].samples, np = lines[i].period;
		/* different stack nodes may fold to the same text */
		for (; j < nr && !strcmp(lines[i].text, lines[j].text); j++) {
			ns += lines[j].samples;
			np += lines[j].period;
		}
		rc = cb(ctx, lines[i].text, ns, np);
		i = j;
	}
	if (rc > 0)
		rc = 0;
out:
	if (lines)
		for (i = 0; i < nr; i++)
			free(lines[i].text);
	free(lines);
	free(path);
	free(b.p);
	return rc;
}
