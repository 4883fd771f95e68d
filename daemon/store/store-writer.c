/*
 * store-writer.c - writing a parse: the engine's builder interns and
 * fills blocks, the backend stores each full block with the rows made
 * since the last one in one short transaction, and the aggregate with the
 * summary at the end.
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "store/store-int.h"

struct st_writer {
	st_store *st;
	int64_t id;
	pe_builder *b;
	st_persist_writer *pw;
	st_write_times times;
	int failed;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The rows waiting and (with_block) the block being filled, to the backend. */
static int flush(st_writer *w, int with_block)
{
	pe_packed_block pb, *block = NULL;
	const pe_row *rows;
	size_t n;
	int rc;

	if (w->failed || pe_builder_failed(w->b))
		goto fail;
	if (with_block) {
		uint64_t t0 = now_ns();
		rc = pe_builder_pack_block(w->b, &pb);
		if (rc < 0)
			goto fail;
		if (rc == 0) {
			block = &pb;
			w->times.compress_ns += now_ns() - t0;
			w->times.blocks++;
		}
	}
	rows = pe_builder_rows(w->b, &n);
	if (w->st->ops->writer_write(w->pw, rows, n, block, &w->times) < 0)
		goto fail;
	pe_builder_rows_done(w->b);
	return 0;
fail:
	w->failed = 1;
	return -1;
}

/* The builder's flush hook: it fills up as the parse runs. */
static int flush_hook(void *ctx, pe_builder *b, int with_block)
{
	(void)b;
	return flush(ctx, with_block);
}

st_writer *st_writer_begin(st_store *st, int64_t id)
{
	st_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->st = st;
	w->id = id;
	if (!(w->b = pe_builder_new()) || !(w->pw = st->ops->writer_begin(st->p, id))) {
		if (!w->b)
			log_warn("msg=\"out of memory\" what=\"writer\" profile=%lld", (long long)id);
		pe_builder_free(w->b);
		free(w);
		return NULL;
	}
	pe_builder_set_flush(w->b, flush_hook, w);
	return w;
}

void st_writer_abort(st_writer *w)
{
	if (!w)
		return;
	w->st->ops->writer_abort(w->pw);
	pe_builder_free(w->b);
	free(w);
}

pe_builder *st_writer_builder(st_writer *w)
{
	return w->b;
}

int st_writer_finish(st_writer *w, const st_summary *x, st_write_times *times)
{
	const pe_agg_row *agg;
	size_t n;
	uint64_t t0;
	int rc = -1;

	/* the leaf addresses, the last block alone, then the aggregate and the
	 * status: ready and complete become visible at once */
	if (pe_builder_flush(w->b) < 0)
		goto fail;
	if (pe_builder_leaf_dropped(w->b))
		log_info("msg=\"leaf addresses capped\" profile=%lld kept=%d samples_left_out=%llu",
			 (long long)w->id, PE_MAX_LEAF_ADDRS,
			 (unsigned long long)pe_builder_leaf_dropped(w->b));
	t0 = now_ns();
	agg = pe_builder_agg(w->b, &n);
	w->times.agg_ns += now_ns() - t0;
	rc = w->st->ops->writer_finish(w->pw, agg, n, x, &w->times);
	w->pw = NULL;
	goto out;
fail:
	w->st->ops->writer_abort(w->pw);
out:
	if (times)
		*times = w->times;
	pe_builder_free(w->b);
	free(w);
	return rc;
}
