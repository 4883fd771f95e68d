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

/* After rows were added: too many wait, or the builder failed. */
static int rows_added(st_writer *w)
{
	size_t n;

	if (pe_builder_failed(w->b))
		return -1;
	pe_builder_rows(w->b, &n);
	return n >= PE_ROWS_MAX ? flush(w, 0) : 0;
}

uint32_t st_writer_string(st_writer *w, const char *s)
{
	uint32_t id = pe_builder_string(w->b, s);

	return rows_added(w) < 0 ? 0 : id;
}

uint32_t st_writer_frame(st_writer *w, const char *name, const char *dso, int resolved,
			 int kernel)
{
	uint32_t id = pe_builder_frame(w->b, name, dso, resolved, kernel);

	return rows_added(w) < 0 ? 0 : id;
}

uint32_t st_writer_stack(st_writer *w, uint32_t parent, uint32_t frame)
{
	uint32_t id = pe_builder_stack(w->b, parent, frame);

	return rows_added(w) < 0 ? 0 : id;
}

int st_writer_sample(st_writer *w, const st_sample *x)
{
	return st_writer_sample_hint(w, x, NULL);
}

int st_writer_sample_hint(st_writer *w, const st_sample *x, uint32_t *agg_hint)
{
	int rc;

	if (w->failed)
		return -1;
	rc = pe_builder_sample(w->b, x, agg_hint);
	/* a full block: one transaction, the write lock held for its inserts only */
	return rc > 0 ? flush(w, 1) : rc;
}

int st_writer_frame_offset(st_writer *w, uint32_t frame, uint64_t dso_off)
{
	return pe_builder_frame_offset(w->b, frame, dso_off) < 0 ? -1 : rows_added(w);
}

int st_writer_comm(st_writer *w, uint32_t pid, uint32_t tid, uint64_t time, const char *comm)
{
	return pe_builder_comm(w->b, pid, tid, time, comm) < 0 ? -1 : rows_added(w);
}

int st_writer_mmap(st_writer *w, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *filename, const char *build_id_hex, uint64_t time)
{
	return pe_builder_mmap(w->b, pid, start, len, pgoff, filename, build_id_hex, time) < 0 ?
		-1 : rows_added(w);
}

int st_writer_feature(st_writer *w, const char *name, const char *json)
{
	return pe_builder_feature(w->b, name, json) < 0 ? -1 : rows_added(w);
}

int st_writer_event(st_writer *w, uint32_t idx, const char *name, uint32_t type, uint64_t config,
		    uint64_t sample_type, uint64_t period_or_freq, int freq, uint64_t samples)
{
	return pe_builder_event(w->b, idx, name, type, config, sample_type, period_or_freq, freq,
				samples) < 0 ? -1 : rows_added(w);
}

int st_writer_record_count(st_writer *w, const char *type, uint64_t count)
{
	return pe_builder_record_count(w->b, type, count) < 0 ? -1 : rows_added(w);
}

int st_writer_finish(st_writer *w, const st_summary *x, st_write_times *times)
{
	const pe_agg_row *agg;
	size_t n;
	uint64_t t0;
	int rc = -1;

	/* the last block alone, then the aggregate and the status: ready and
	 * complete become visible at once */
	if (flush(w, 1) < 0)
		goto fail;
	t0 = now_ns();
	agg = pe_builder_agg(w->b, &n);
	w->times.agg_ns += now_ns() - t0;
	rc = w->st->ops->writer_finish(w->pw, agg, n, x, &w->times);
	w->pw = NULL;
	/* the summary series read, from the model the next question would
	 * load anyway (it stays in the cache); a series makes it later if
	 * this fails */
	if (rc == 0 && st_summary_make(w->st, w->id) < 0)
		log_warn("msg=\"summary not stored\" id=%lld", (long long)w->id);
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
