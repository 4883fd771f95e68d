/*
 * ingest.h - one spooled recording into the store: parse (libperfhub-parse),
 * symbolize and intern (the engine's feed, engine/feed.h, into the store
 * writer's builder), write rows, summarize.
 *
 * The feed names frames by parser/fold.h's pd_fold_frame_name, the same
 * code `perfhub collapse` uses, so /collapsed answers from the database
 * what `perfhub collapse` prints for the file.
 */
#ifndef PERFHUB_DAEMON_INGEST_H
#define PERFHUB_DAEMON_INGEST_H

#include <stdatomic.h>
#include <stdint.h>

#include "intake/spool.h"
#include "symbols/debuginfo.h"
#include "store/store.h"
#include "symbols.h"

typedef struct ing_result {
	int ok;
	char msg[320];		/* the parser's message when !ok */
	int64_t offset;		/* byte offset of the failure, -1 when none */
	uint64_t samples, records;
	int cancelled;		/* stopped by *stop: requeue, not failed */
	int bad_input;		/* failed on the recording itself (not storage) */
	/* where the parse's wall time went, in milliseconds: opening (header,
	 * symbol prefetch), then per record: reading and ordering, symbolizing,
	 * interning frames and stacks, adding samples to blocks, other records;
	 * then the summary, aggregate and last commit. The per-record figures
	 * are estimated from every ING_TIME_EVERY-th record. */
	double open_ms, read_ms, symbolize_ms, intern_ms, sample_ms, other_ms, finish_ms;
	/* of those, the store writer's own share (exact) */
	st_write_times write;
	uint64_t chain_hits;	/* samples whose callchain was found in the cache */
	uint64_t tail_hits;	/* of the others, those whose callers were */
} ing_result;

/* Parses the spooled original `ref` (kind "file", or "tar": unpacked next
 * to it first; a bucket's object fetched to this node first) into profile
 * `id`. `cache` holds symbol tables shared by all workers; `dbg` (may be
 * NULL) has uploaded symbols by build-id, looked at first. A recording
 * that is not `local` (an upload) is symbolized from this machine's files
 * only where their build-id matches the recorded one: no JIT map, no
 * running kernel's kallsyms, no file for a DSO without a build-id
 * (pd_sym_options.build_id_files_only). Notes which build-ids kept frames
 * unresolved (for re-symbolization). Checks *stop now and then. Never
 * fails the process. */
void ingest_profile(st_store *st, spool *sp, pd_symcache *cache, dbg_store *dbg, int64_t id,
		    const char *ref, const char *kind, int local, uint64_t max_bytes,
		    atomic_int *stop, ing_result *res);

#endif
