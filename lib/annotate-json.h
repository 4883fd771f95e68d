/*
 * annotate-json.h - the /annotate answer (docs/views.md) that perfhubd
 * sends and `perfhub annotate` prints, made the same way by both: the
 * DSO's binary and debug file found by the symbolizer's own lookup
 * (parser/dso.h: the recorded build-id, the uploaded debuginfo first), the
 * addresses annotated (annotate.h), and the answer as JSON.
 */
#ifndef PERFHUB_ANNOTATE_JSON_H
#define PERFHUB_ANNOTATE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "annotate.h"
#include "dso.h"

/* rq's addresses annotated with the files of DSO `dso` (build_id: hex,
 * NULL or "" when the recording gave none) as `cache` and `paths` find
 * them (rq's paths are set here; nothing is read for kernel code). 0, or
 * -1 out of memory. */
int an_annotate_dso(pd_dso_cache *cache, const pd_dso_paths *paths, const char *dso,
		    const char *build_id, an_request *rq, an_result *out);

/* What the answer says besides the annotation. */
typedef struct an_meta {
	const char *function, *weight, *dso, *build_id;
	uint64_t self;		/* in the weight's unit */
	int by_samples;		/* "samples" are the insns' samples, else their values */
	int kernel;
	/* other DSOs with self samples of a function of that name */
	const char *const *other_dsos;
	const uint64_t *other_self;
	size_t nr_other;
} an_meta;

/* The answer: function, weight, dso, build_id, file, symbol, self,
 * addresses, disassembler, lines, instructions, problem and other_dsos
 * when there are any. NULL out of memory. */
json_t *an_json(const an_result *r, const an_meta *m);

/* Reads lines first..last of a source file for the answer: 0 and *lines
 * (an_source_free), or non-zero when it may not or cannot. */
typedef int (*an_source_fn)(void *ctx, const char *file, unsigned first, unsigned last,
			    char ***lines);
/* {"file", "first_line", "text"}: the lines of the function's own file
 * from its first to its last (at most AN_MAX_SOURCE_LINES), as `read`
 * gives them; NULL when there is none. */
#define AN_MAX_SOURCE_LINES 20000
json_t *an_source_json(const an_result *r, an_source_fn read, void *ctx);

#endif
