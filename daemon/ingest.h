/*
 * ingest.h - one spooled recording into the store: parse (libperfhub-parse),
 * symbolize, fold into interned stacks, write rows, summarize.
 *
 * Symbolization is a seam (struct ing_symbolizer in ingest.c): today frames
 * are named by the DSO their address falls in ("[libc.so.6]", as
 * stackcollapse-perf names unresolved frames); the symbolizer from
 * parser/symbols.h plugs in there.
 */
#ifndef PERFHUB_DAEMON_INGEST_H
#define PERFHUB_DAEMON_INGEST_H

#include <stdatomic.h>
#include <stdint.h>

#include "store.h"

typedef struct ing_result {
	int ok;
	char msg[320];		/* the parser's message when !ok */
	int64_t offset;		/* byte offset of the failure, -1 when none */
	uint64_t samples, records;
	int cancelled;		/* stopped by *stop: requeue, not failed */
} ing_result;

/* Parses `path` (kind "file", or "tar": unpacked next to it first) into
 * profile `id`. Checks *stop now and then. Never fails the process. */
void ingest_profile(st_store *st, int64_t id, const char *path, const char *kind,
		    uint64_t max_bytes, atomic_int *stop, ing_result *res);

#endif
