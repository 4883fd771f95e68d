/*
 * code.h - the code and source behind /annotate: a DSO's binary and debug
 * file found by the symbolizer's own rules (the build-id the recording
 * names, the uploaded debuginfo first: parser/dso.h), annotated by
 * lib/annotate.h; and source text, read only from directories the
 * operator allows (--source-root), never from a path on a client's or a
 * recording's say-so alone.
 */
#ifndef PERFHUB_DAEMON_CODE_H
#define PERFHUB_DAEMON_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "annotate-json.h"
#include "engine/query.h"

#define CODE_MAX_ROOTS 16
#define CODE_CACHE_BYTES (64u << 20)	/* symbol tables of annotated DSOs kept */

typedef struct code_finder code_finder;

/* debuginfo_dir: the debuginfo store's directory (NULL: none); roots: the
 * directories source text may come from, separated by ':' (NULL or "":
 * none). NULL out of memory. */
code_finder *code_finder_new(const char *debuginfo_dir, const char *roots);
void code_finder_free(code_finder *f);

/* The annotation of the addresses of one DSO (file offsets; kernel:
 * addresses, and nothing is read). build_id: hex, NULL or "" when the
 * recording gave none. 0, or -1 out of memory. */
int code_annotate(code_finder *f, const char *dso, const char *build_id, int kernel,
		  const pe_addr_count *addrs, size_t n, an_result *out);

/* Lines first..last of source file `file` (an absolute name from the line
 * tables) when it lies under a root of finder ctx: 0 and *lines
 * (an_source_free with last - first + 1); 1 when no root allows it or it
 * cannot be read. An an_source_fn. */
int code_source(void *ctx, const char *file, unsigned first, unsigned last, char ***lines);

#endif
