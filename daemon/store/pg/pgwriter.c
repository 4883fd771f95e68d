/*
 * pgwriter.c - the PostgreSQL backend's side of writing a parse. Rows wait
 * in the builder and come here with each sample block; each kind goes in
 * with one COPY (binary format, built before the transaction), the block
 * with one INSERT, in one short transaction that starts with the job's
 * fence (pgj_fence_batch): a node whose lease ran out can write no more,
 * and a batch whose commit was applied but not acknowledged is not
 * written twice when pgc_txn runs the transaction again.
 *
 * A batch is sent by a thread of the writer's own while the parse goes on
 * to fill the next one: the database's work overlaps the parser's, and at
 * most one batch is in flight (memory: two batches). A batch that failed
 * fails the next call.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "utf8.h"
#include "store/pg/pg.h"

_Static_assert(PE_NR_ROW_KINDS == 10, "a new row kind needs its COPY below");

/* Each kind's table, its columns after profile_id and their types:
 * i int4, q int8, h int2, t text (made valid UTF-8), b bytea. */
typedef struct copy_spec {
	const char *table, *cols, *types;
} copy_spec;

static const copy_spec row_copy[PE_NR_ROW_KINDS] = {
	[PE_ROW_STRING] = { "strings", "id, text", "ib" },
	[PE_ROW_FRAME] = { "frames", "id, name, dso, resolved, kernel", "iiihh" },
	[PE_ROW_STACK] = { "stacks", "id, parent, frame", "iii" },
	[PE_ROW_FRAME_OFFSET] = { "frame_offsets", "frame, dso_off", "iq" },
	[PE_ROW_COMM] = { "comms", "seq, pid, tid, time, comm", "iqqqi" },
	[PE_ROW_MAP] = { "maps", "seq, pid, start, len, pgoff, filename, build_id, time",
			 "iqqqqitq" },
	[PE_ROW_FEATURE] = { "features", "name, json", "tt" },
	[PE_ROW_EVENT] = { "events", "idx, name, type, config, sample_type, period, freq,"
			   " samples", "itqqqqiq" },
	[PE_ROW_RECORD] = { "record_counts", "type, count", "tq" },
	[PE_ROW_LEAF_ADDR] = { "leaf_addrs", "frame, event, addr, samples, period, offcpu",
			       "iiqqqq" },
};

/* A COPY's binary stream, grown as rows are added. */
typedef struct copy_buf {
	unsigned char *p;
	size_t len, cap;
	size_t rows;
	int oom;
} copy_buf;

/* One write transaction's rows and block, owned by the writer. */
typedef struct batch {
	copy_buf buf[PE_NR_ROW_KINDS];
	pe_packed_block block;
	int has_block;
	unsigned char *data;	/* the block's bytes, copied */
	size_t data_cap;
} batch;

struct st_persist_writer {
	st_persist *p;
	pgc *c;
	pgj_job job;
	int64_t batch;		/* batches committed */
	int64_t bytes;		/* of the rows and blocks committed (retention's size) */
	int failed, fenced;	/* under lock while the sender runs */
	batch b[2];
	int fill;		/* the batch the parse fills; the other may be in flight */
	/* the sender thread */
	pthread_t sender;
	int sender_running;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	batch *sending;		/* in flight, NULL when idle */
	int quit;
	st_write_times acc;	/* the sender's times, added to the caller's at each sync */
	/* a transaction's inputs and outcome */
	const batch *tx;
	const st_summary *sum;
	int applied;
	int64_t gen;		/* the generation the finish made (0: unknown) */
	uint64_t fence_ns, body_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- COPY's binary format ------------------------------------------------------------ */

static void put(copy_buf *b, const void *data, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		unsigned char *q;

		while (cap < b->len + n)
			cap *= 2;
		if (!(q = realloc(b->p, cap))) {
			b->oom = 1;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void put_be(copy_buf *b, uint64_t v, int bytes)
{
	unsigned char x[8];
	int i;

	for (i = 0; i < bytes; i++)
		x[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
	put(b, x, (size_t)bytes);
}

static void copy_reset(copy_buf *b)
{
	/* signature, flags, header extension length */
	static const unsigned char head[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";

	b->len = 0;
	b->rows = 0;
	b->oom = 0;
	put(b, head, sizeof(head));
}

static void copy_free(copy_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* One field: its length, then its bytes. */
static void field_int(copy_buf *b, char type, int64_t v)
{
	int bytes = type == 'q' ? 8 : type == 'i' ? 4 : 2;

	put_be(b, (uint64_t)bytes, 4);
	put_be(b, (uint64_t)v, bytes);
}

static void field_text(copy_buf *b, char type, const char *s)
{
	char *fixed = NULL;
	size_t n;

	if (!s) {
		put_be(b, 0xffffffffu, 4);	/* NULL */
		return;
	}
	if (type == 't' && !utf8_valid(s)) {
		if (!(fixed = utf8_fix(s))) {
			b->oom = 1;
			return;
		}
		s = fixed;
	}
	n = strlen(s);
	put_be(b, n, 4);
	put(b, s, n);
	free(fixed);
}

/* A builder row as a tuple: the profile id, then its values. -1 when the
 * row does not have the shape its kind's COPY expects. */
static int copy_row(copy_buf *b, const copy_spec *spec, int64_t id, const pe_row *r)
{
	size_t ncols = strlen(spec->types), k;

	if (r->nvals != ncols)
		return -1;
	put_be(b, ncols + 1, 2);
	field_int(b, 'q', id);
	for (k = 0; k < ncols; k++) {
		char type = spec->types[k];

		if (r->null_mask & (1u << k))
			put_be(b, 0xffffffffu, 4);
		else if (r->text_mask & (1u << k))
			field_text(b, type, pe_row_text(r, (unsigned)k));
		else if (type == 't' || type == 'b')
			return -1;
		else
			field_int(b, type, r->v[k]);
	}
	b->rows++;
	return 0;
}

/* Sends one finished buffer through COPY ... FROM STDIN. */
static int copy_send(PGconn *conn, const copy_spec *spec, copy_buf *b, char *err,
		     size_t errlen)
{
	char sql[256];
	PGresult *r;
	int rc;

	if (!b->rows)
		return 0;
	snprintf(sql, sizeof(sql), "COPY %s (profile_id, %s) FROM STDIN (FORMAT binary)",
		 spec->table, spec->cols);
	r = PQexec(conn, sql);
	if (pgc_check(r, PGRES_COPY_IN, spec->table, err, errlen) < 0) {
		PQclear(r);
		return -1;
	}
	PQclear(r);
	put_be(b, 0xffff, 2);	/* the trailer */
	rc = !b->oom && PQputCopyData(conn, (const char *)b->p, (int)b->len) == 1 ? 0 : -1;
	b->len -= 2;		/* a retried transaction sends the same rows */
	if (PQputCopyEnd(conn, rc == 0 ? NULL : "perfhubd could not send the rows") != 1)
		rc = -1;
	r = PQgetResult(conn);
	if (pgc_check(r, PGRES_COMMAND_OK, spec->table, err, errlen) < 0)
		rc = -1;
	PQclear(r);
	while ((r = PQgetResult(conn)))
		PQclear(r);
	return rc;
}

/* ---- the writer --------------------------------------------------------------------- */

static void batch_free(batch *b)
{
	int k;

	for (k = 0; k < PE_NR_ROW_KINDS; k++)
		copy_free(&b->buf[k]);
	free(b->data);
}

/* Waits until no batch is in flight; its times go to *t (may be NULL).
 * Returns the writer's state: 0, or -1 once a batch failed. */
static int sync_sender(st_persist_writer *w, st_write_times *t)
{
	int rc;

	pthread_mutex_lock(&w->lock);
	while (w->sending)
		pthread_cond_wait(&w->cond, &w->lock);
	if (t) {
		t->lock_ns += w->acc.lock_ns;
		t->insert_ns += w->acc.insert_ns;
		t->commit_ns += w->acc.commit_ns;
		t->commits += w->acc.commits;
		memset(&w->acc, 0, sizeof(w->acc));
	}
	rc = w->failed ? -1 : 0;
	pthread_mutex_unlock(&w->lock);
	return rc;
}

static void writer_free(st_persist_writer *w)
{
	int i;

	if (w->sender_running) {
		pthread_mutex_lock(&w->lock);
		while (w->sending)
			pthread_cond_wait(&w->cond, &w->lock);
		w->quit = 1;
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->sender, NULL);
	}
	for (i = 0; i < 2; i++)
		batch_free(&w->b[i]);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	pg_put(w->p, w->c);
	free(w);
}

/* Runs fn on the writer's connection; a lost lease is the writer's end. */
static int writer_txn(st_persist_writer *w, const char *what, pgc_txn_fn fn)
{
	char err[512];
	int rc;

	rc = pgc_txn(w->c, fn, w, err, sizeof(err));
	if (rc < 0) {
		pthread_mutex_lock(&w->lock);
		w->failed = 1;
		pthread_mutex_unlock(&w->lock);
		if (w->fenced)
			pg_held_lose(w->p, w->job.id, w->job.attempt);
		if (w->fenced)
			log_warn("msg=\"parse fenced\" id=%lld attempt=%d what=\"%s\""
				 " reason=\"the job's lease was lost: another node may parse it\"",
				 (long long)w->job.id, (int)w->job.attempt, what);
		else
			log_warn("msg=\"postgresql\" id=%lld what=\"%s\" error=\"%s\"",
				 (long long)w->job.id, what, err);
	}
	return rc;
}

static int begin_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	st_persist_writer *w = ctx;
	int rc = pgj_begin_writes(conn, &w->job, err, errlen);

	if (rc == PGJ_FENCED) {
		w->fenced = 1;
		snprintf(err, errlen, "fenced");
	}
	if (rc != PGJ_OK)
		return -1;
	/* what an earlier attempt left goes first */
	return pg_delete_rows(conn, w->job.id, err, errlen);
}

/* The batch's fence: 0 go on, 1 the batch committed before, -1 fenced or
 * an error (err). */
static int fence(st_persist_writer *w, PGconn *conn, char *err, size_t errlen)
{
	uint64_t t0 = now_ns();
	int rc = pgj_fence_batch(conn, &w->job, w->batch + 1, err, errlen);

	w->fence_ns += now_ns() - t0;
	if (rc == PGJ_FENCED) {
		w->fenced = 1;
		snprintf(err, errlen, "fenced");
		return -1;
	}
	if (rc == PGJ_APPLIED)
		return 1;
	return rc == PGJ_OK ? 0 : -1;
}

static int write_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	st_persist_writer *w = ctx;
	const batch *bt = w->tx;
	uint64_t t0;
	int rc, k;

	w->applied = 0;
	if ((rc = fence(w, conn, err, errlen)) != 0) {
		w->applied = rc == 1;
		return rc < 0 ? -1 : 0;
	}
	t0 = now_ns();
	for (k = 0; k < PE_NR_ROW_KINDS; k++)
		if (copy_send(conn, &row_copy[k], (copy_buf *)&bt->buf[k], err, errlen) < 0)
			return -1;
	if (bt->has_block) {
		const pe_packed_block *b = &bt->block;
		pg_params pp;

		pgp_init(&pp);
		pgp_i64(&pp, w->job.id);
		pgp_i64(&pp, (int64_t)b->seq);
		pgp_i64(&pp, b->nr);
		/* times are stored as signed 64-bit, as the SQLite store does */
		pgp_i64(&pp, (int64_t)b->min_time);
		pgp_i64(&pp, (int64_t)b->max_time);
		pgp_bytes(&pp, b->data, b->len);
		rc = pg_cmd(conn, "storing a sample block", "INSERT INTO sample_blocks (profile_id,"
			    " seq, nr, min_time, max_time, data) VALUES ($1, $2, $3, $4, $5, $6)",
			    &pp, NULL, err, errlen);
		pgp_free(&pp);
		if (rc < 0)
			return -1;
	}
	w->body_ns += now_ns() - t0;
	return 0;
}

/* The transaction's time: the fence's wait is the lock, the statements
 * the inserts, BEGIN and COMMIT (and any run again) the commit. */
static void add_times(st_persist_writer *w, uint64_t t0, st_write_times *t)
{
	uint64_t total = now_ns() - t0;

	t->lock_ns += w->fence_ns;
	t->insert_ns += w->body_ns;
	t->commit_ns += total > w->fence_ns + w->body_ns ? total - w->fence_ns - w->body_ns : 0;
	t->commits++;
	w->fence_ns = w->body_ns = 0;
}

/* The sender: one batch at a time, in the order they come. */
static void *sender(void *arg)
{
	st_persist_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		uint64_t t0;
		int rc;

		while (!w->sending && !w->quit)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->sending)
			break;
		w->tx = w->sending;
		pthread_mutex_unlock(&w->lock);
		t0 = now_ns();
		rc = writer_txn(w, "storing rows", write_body);
		pthread_mutex_lock(&w->lock);
		if (rc == 0) {
			int k;

			add_times(w, t0, &w->acc);
			w->batch++;
			for (k = 0; k < PE_NR_ROW_KINDS; k++)
				if (w->tx->buf[k].rows)
					w->bytes += (int64_t)w->tx->buf[k].len;
			w->bytes += w->tx->has_block ? (int64_t)w->tx->block.len : 0;
		}
		w->sending = NULL;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

st_persist_writer *pg_writer_begin(st_persist *p, int64_t id)
{
	st_persist_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->p = p;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (pg_held_find(p, id, &w->job) != 0) {
		log_warn("msg=\"postgresql: writing a job this node does not hold\" id=%lld",
			 (long long)id);
		goto fail;
	}
	if (!(w->c = pg_get(p)))
		goto fail;
	if (writer_txn(w, "starting a parse's writes", begin_body) < 0)
		goto fail;
	if (pthread_create(&w->sender, NULL, sender, w) != 0) {
		log_warn("msg=\"postgresql: cannot start a writer thread\" id=%lld", (long long)id);
		goto fail;
	}
	w->sender_running = 1;
	return w;
fail:
	writer_free(w);
	return NULL;
}

/* Rows and the block into batch bt (the block's bytes copied: the builder
 * reuses them). -1 on a row of the wrong shape or out of memory. */
static int batch_fill(st_persist_writer *w, batch *bt, const pe_row *rows, size_t n,
		      const pe_packed_block *b)
{
	size_t i;
	int k;

	for (k = 0; k < PE_NR_ROW_KINDS; k++)
		copy_reset(&bt->buf[k]);
	for (i = 0; i < n; i++) {
		const pe_row *r = &rows[i];

		if (r->kind >= PE_NR_ROW_KINDS)
			continue;
		if (copy_row(&bt->buf[r->kind], &row_copy[r->kind], w->job.id, r) < 0) {
			log_warn("msg=\"postgresql: a row of kind %u has %u values\" id=%lld",
				 (unsigned)r->kind, (unsigned)r->nvals, (long long)w->job.id);
			return -1;
		}
	}
	for (k = 0; k < PE_NR_ROW_KINDS; k++)
		if (bt->buf[k].oom)
			return -1;
	bt->has_block = b != NULL;
	if (b) {
		if (b->len > bt->data_cap) {
			unsigned char *d = realloc(bt->data, b->len);

			if (!d)
				return -1;
			bt->data = d;
			bt->data_cap = b->len;
		}
		memcpy(bt->data, b->data, b->len);
		bt->block = *b;
		bt->block.data = bt->data;
	}
	return 0;
}

int pg_writer_write(st_persist_writer *w, const pe_row *rows, size_t n,
		    const pe_packed_block *b, st_write_times *t)
{
	pgj_job held;
	batch *bt;

	if (!n && !b)
		return 0;
	if (pg_held_find(w->p, w->job.id, &held) == 2) {
		/* the keeper found the lease gone: stop before sending anything */
		sync_sender(w, t);
		w->fenced = w->failed = 1;
		log_warn("msg=\"parse fenced\" id=%lld attempt=%d reason=\"the job's lease was lost\"",
			 (long long)w->job.id, (int)w->job.attempt);
		return -1;
	}
	/* fill one batch while the other may still be on its way */
	bt = &w->b[w->fill];
	if (batch_fill(w, bt, rows, n, b) < 0) {
		sync_sender(w, t);
		w->failed = 1;
		return -1;
	}
	if (sync_sender(w, t) < 0)
		return -1;
	pthread_mutex_lock(&w->lock);
	w->sending = bt;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	w->fill ^= 1;
	return 0;
}

static int finish_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	st_persist_writer *w = ctx;
	const st_summary *x = w->sum;
	pg_params pp;
	uint64_t t0;
	int rc;

	w->applied = 0;
	w->gen = 0;
	rc = fence(w, conn, err, errlen);
	if (rc < 0 && w->fenced &&
	    pgj_ended(conn, &w->job, ST_READY, err, errlen) == PGJ_OK) {
		/* this very finish committed before its answer was lost */
		w->fenced = 0;
		w->applied = 1;
		return pgj_generation(conn, &w->job, &w->gen, err, errlen);
	}
	if (rc == 1)
		snprintf(err, errlen, "the last batch counted already, yet the job is not ready");
	if (rc != 0)
		return -1;
	t0 = now_ns();
	pgp_init(&pp);
	pgp_i64(&pp, w->job.id);
	pgp_i64(&pp, w->job.attempt);
	pgp_text(&pp, x->hostname);
	pgp_i64(&pp, (int64_t)x->first_ns);
	pgp_i64(&pp, (int64_t)x->last_ns);
	pgp_i64(&pp, (int64_t)x->nr_samples);
	pgp_f64(&pp, x->symbolized_pct);
	pgp_i64(&pp, x->parse_ms);
	pgp_text(&pp, x->header);
	pgp_text(&pp, x->events);
	pgp_text(&pp, x->records);
	pgp_text(&pp, x->samples_per_event);
	pgp_i64(&pp, (int64_t)x->lost);
	pgp_i64(&pp, w->bytes);
	pgp_text(&pp, x->warnings);
	rc = pg_cmd(conn, "storing the summary", "UPDATE profiles SET error = NULL,"
		    " error_offset = NULL, hostname = $3, first_ns = $4, last_ns = $5,"
		    " nr_samples = $6, symbolized_pct = $7, parse_ms = $8, header = $9, events = $10,"
		    " records = $11, samples_per_event = $12, lost = $13, stored_bytes = $14,"
		    " warnings = $15 WHERE id = $1 AND attempt = $2 AND status = 1", &pp, NULL, err, errlen);
	pgp_free(&pp);
	w->body_ns += now_ns() - t0;
	if (rc < 0)
		return -1;
	/* ready, with a new generation: every node's cached answers of an
	 * earlier parse of this profile go stale */
	rc = pgj_finish(conn, &w->job, err, errlen);
	if (rc == PGJ_FENCED) {
		w->fenced = 1;
		snprintf(err, errlen, "fenced");
	}
	if (rc != PGJ_OK)
		return -1;
	/* the node's model of the parse is kept under it (store-writer.c) */
	return pgj_generation(conn, &w->job, &w->gen, err, errlen);
}

int pg_writer_finish(st_persist_writer *w, const st_summary *s, st_write_times *t)
{
	uint64_t t0;
	int rc = -1;

	/* the last batch in before the last transaction */
	if (sync_sender(w, t) < 0)
		goto out;
	w->sum = s;
	t0 = now_ns();
	rc = writer_txn(w, "finishing a parse", finish_body);
	if (rc == 0) {
		add_times(w, t0, t);
		t->generation = w->gen;
	}
out:
	if (rc == 0) {
		pg_held_drop(w->p, w->job.id);
		writer_free(w);
	} else {
		pg_writer_abort(w);
	}
	return rc;
}

static int abort_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	st_persist_writer *w = ctx;
	int rc = pgj_fence(conn, &w->job, err, errlen);

	/* rows of a job that is no longer this attempt's are not ours to remove */
	if (rc == PGJ_FENCED)
		return 0;
	if (rc != PGJ_OK)
		return -1;
	return pg_delete_rows(conn, w->job.id, err, errlen);
}

void pg_writer_abort(st_persist_writer *w)
{
	if (!w)
		return;
	sync_sender(w, NULL);
	/* earlier batches were committed: take them away again */
	if (!w->fenced) {
		w->failed = 0;
		writer_txn(w, "removing an abandoned parse's rows", abort_body);
	}
	writer_free(w);
}
