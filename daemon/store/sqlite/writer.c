/*
 * writer.c - the SQLite backend's side of writing a parse. Rows wait in
 * the builder and come here with each sample block: one short BEGIN
 * IMMEDIATE transaction per block, so parsing, symbolizing and compressing
 * happen outside it and several workers write in turn without waiting for
 * each other's parsing. Statements are prepared once per writer.
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "store/sqlite/db.h"

enum { W_BLOCK = PE_NR_ROW_KINDS, W_AGG, W_NR_STMTS };

static const char *const writer_sql[W_NR_STMTS] = {
	[PE_ROW_STRING] = "INSERT INTO strings (profile_id, id, text) VALUES (?, ?, ?)",
	[PE_ROW_FRAME] = "INSERT INTO frames (profile_id, id, name, dso, resolved, kernel)"
			 " VALUES (?, ?, ?, ?, ?, ?)",
	[PE_ROW_STACK] = "INSERT INTO stacks (profile_id, id, parent, frame) VALUES (?, ?, ?, ?)",
	[PE_ROW_FRAME_OFFSET] = "INSERT OR IGNORE INTO frame_offsets (profile_id, frame, dso_off)"
				" VALUES (?, ?, ?)",
	[PE_ROW_COMM] = "INSERT INTO comms (profile_id, seq, pid, tid, time, comm)"
			" VALUES (?, ?, ?, ?, ?, ?)",
	[PE_ROW_MAP] = "INSERT INTO maps (profile_id, seq, pid, start, len, pgoff, filename,"
		       " build_id, time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[PE_ROW_FEATURE] = "INSERT OR REPLACE INTO features (profile_id, name, json) VALUES (?, ?, ?)",
	[PE_ROW_EVENT] = "INSERT OR REPLACE INTO events (profile_id, idx, name, type, config,"
			 " sample_type, period, freq, samples) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[PE_ROW_RECORD] = "INSERT OR REPLACE INTO record_counts (profile_id, type, count)"
			  " VALUES (?, ?, ?)",
	[PE_ROW_LEAF_ADDR] = "INSERT INTO leaf_addrs (profile_id, frame, event, addr, samples,"
			     " period, offcpu) VALUES (?, ?, ?, ?, ?, ?, ?)",
	[W_BLOCK] = "INSERT INTO sample_blocks (profile_id, seq, nr, min_time, max_time, data)"
		    " VALUES (?, ?, ?, ?, ?, ?)",
	[W_AGG] = "INSERT INTO sample_agg (profile_id, event, pid, tid, comm, stack, samples,"
		  " period, first_seq, offcpu) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
};

struct st_persist_writer {
	st_persist *p;
	sqlite3 *db;
	int64_t id;
	sqlite3_stmt *stmt[W_NR_STMTS];
	int failed;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int w_step(st_persist_writer *w, int which)
{
	sqlite3_stmt *s = w->stmt[which];
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		log_warn("msg=\"sqlite insert\" profile=%lld error=\"%s\"", (long long)w->id,
			 sqlite3_errmsg(w->db));
		w->failed = 1;
		return -1;
	}
	return 0;
}

/* Inserts rows (inside the caller's transaction). */
static int rows_write(st_persist_writer *w, const pe_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const pe_row *r = &rows[i];
		sqlite3_stmt *s;
		unsigned k, t = 0;

		if (r->kind >= PE_NR_ROW_KINDS)
			continue;
		s = w->stmt[r->kind];
		sqlite3_bind_int64(s, 1, w->id);
		for (k = 0; k < r->nvals; k++) {
			if (r->text_mask & (1u << k))
				sqlite3_bind_text(s, (int)k + 2, r->text[t++], -1, SQLITE_STATIC);
			else if (r->null_mask & (1u << k))
				sqlite3_bind_null(s, (int)k + 2);
			else
				sqlite3_bind_int64(s, (int)k + 2, r->v[k]);
		}
		if (w_step(w, r->kind) < 0)
			return -1;
	}
	return 0;
}

/* A transaction: BEGIN IMMEDIATE waits for the write lock (busy timeout). */
static int w_begin(st_persist_writer *w, st_write_times *t)
{
	uint64_t t0 = now_ns();

	if (sq_exec(w->db, "BEGIN IMMEDIATE") < 0) {
		w->failed = 1;
		return -1;
	}
	t->lock_ns += now_ns() - t0;
	return 0;
}

static int w_end(st_persist_writer *w, st_write_times *t)
{
	uint64_t t0 = now_ns();

	if (sq_exec(w->db, "COMMIT") < 0) {
		sq_exec(w->db, "ROLLBACK");
		w->failed = 1;
		return -1;
	}
	t->commits++;
	t->commit_ns += now_ns() - t0;
	return 0;
}

static void w_rollback(st_persist_writer *w)
{
	if (!sqlite3_get_autocommit(w->db))
		sq_exec(w->db, "ROLLBACK");
}

static void writer_free(st_persist_writer *w)
{
	int i;

	for (i = 0; i < W_NR_STMTS; i++)
		sqlite3_finalize(w->stmt[i]);
	sqlite3_close(w->db);
	free(w);
}

st_persist_writer *sq_writer_begin(st_persist *p, int64_t id)
{
	st_persist_writer *w = calloc(1, sizeof(*w));
	char err[256];
	int i;

	if (!w)
		return NULL;
	w->p = p;
	w->id = id;
	w->db = sq_conn_open(p->path, err, sizeof(err));
	if (!w->db) {
		log_warn("msg=\"sqlite open\" error=\"%s\"", err);
		free(w);
		return NULL;
	}
	/* what an earlier attempt left goes first */
	if (sq_exec(w->db, "BEGIN IMMEDIATE") < 0)
		goto fail;
	if (sq_delete_rows(w->db, id) < 0 || sq_exec(w->db, "COMMIT") < 0)
		goto fail;
	for (i = 0; i < W_NR_STMTS; i++)
		if (!(w->stmt[i] = sq_prep(w->db, writer_sql[i])))
			goto fail;
	return w;
fail:
	sq_writer_abort(w);
	return NULL;
}

void sq_writer_abort(st_persist_writer *w)
{
	if (!w)
		return;
	w_rollback(w);
	/* earlier blocks were committed: take them away again */
	if (sq_exec(w->db, "BEGIN IMMEDIATE") == 0) {
		if (sq_delete_rows(w->db, w->id) == 0)
			sq_exec(w->db, "COMMIT");
		else
			sq_exec(w->db, "ROLLBACK");
	}
	writer_free(w);
}

int sq_writer_write(st_persist_writer *w, const pe_row *rows, size_t n,
		    const pe_packed_block *b, st_write_times *t)
{
	sqlite3_stmt *s = w->stmt[W_BLOCK];
	uint64_t t0;

	if (w->failed)
		return -1;
	if (!n && !b)
		return 0;
	if (w_begin(w, t) < 0)
		return -1;
	t0 = now_ns();
	if (rows_write(w, rows, n) < 0)
		goto fail;
	if (b) {
		sqlite3_bind_int64(s, 1, w->id);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)b->seq);
		sqlite3_bind_int64(s, 3, b->nr);
		/* times are stored as signed 64-bit; the comparison in reads is too */
		sqlite3_bind_int64(s, 4, (sqlite3_int64)b->min_time);
		sqlite3_bind_int64(s, 5, (sqlite3_int64)b->max_time);
		sqlite3_bind_blob(s, 6, b->data, (int)b->len, SQLITE_STATIC);
		if (w_step(w, W_BLOCK) < 0)
			goto fail;
	}
	t->insert_ns += now_ns() - t0;
	return w_end(w, t);
fail:
	w_rollback(w);
	return -1;
}

/* The aggregate, in its key order: rows are appended to the table's b-tree. */
static int agg_write(st_persist_writer *w, const pe_agg_row *agg, size_t n)
{
	sqlite3_stmt *s = w->stmt[W_AGG];
	size_t i;

	for (i = 0; i < n; i++) {
		const pe_agg_row *r = &agg[i];
		sqlite3_bind_int64(s, 1, w->id);
		sqlite3_bind_int64(s, 2, r->event);
		sqlite3_bind_int64(s, 3, r->pid);
		sqlite3_bind_int64(s, 4, r->tid);
		sqlite3_bind_int64(s, 5, r->comm);
		sqlite3_bind_int64(s, 6, r->stack);
		sqlite3_bind_int64(s, 7, (sqlite3_int64)r->samples);
		sqlite3_bind_int64(s, 8, (sqlite3_int64)r->period);
		sqlite3_bind_int64(s, 9, (sqlite3_int64)r->first_seq);
		sqlite3_bind_int64(s, 10, (sqlite3_int64)r->offcpu);
		if (w_step(w, W_AGG) < 0)
			return -1;
	}
	return 0;
}

int sq_writer_finish(st_persist_writer *w, const pe_agg_row *agg, size_t nagg,
		     const st_summary *x, st_write_times *t)
{
	sqlite3_stmt *s;
	int rc = -1;
	uint64_t t0;

	/* the aggregate and the status in one transaction: ready and
	 * complete become visible at once */
	if (w->failed || w_begin(w, t) < 0)
		goto out;
	t0 = now_ns();
	if (agg_write(w, agg, nagg) < 0)
		goto out;
	t->agg_ns += now_ns() - t0;
	/* a new generation: caches of an earlier parse of this profile go stale */
	s = sq_prep(w->db, "UPDATE profiles SET status = 2, error = NULL, error_offset = NULL,"
			   " hostname = ?2, first_ns = ?3, last_ns = ?4, nr_samples = ?5,"
			   " symbolized_pct = ?6, parse_ms = ?7, header = ?8, events = ?9,"
			   " records = ?10, samples_per_event = ?11, lost = ?12,"
			   " generation = (SELECT coalesce(max(generation), 0) + 1 FROM profiles)"
			   " WHERE id = ?1");
	if (!s)
		goto out;
	sqlite3_bind_int64(s, 1, w->id);
	sqlite3_bind_text(s, 2, x->hostname, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)x->first_ns);
	sqlite3_bind_int64(s, 4, (sqlite3_int64)x->last_ns);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)x->nr_samples);
	sqlite3_bind_double(s, 6, x->symbolized_pct);
	sqlite3_bind_int64(s, 7, x->parse_ms);
	sqlite3_bind_text(s, 8, x->header, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 9, x->events, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 10, x->records, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 11, x->samples_per_event, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 12, (sqlite3_int64)x->lost);
	rc = sq_step_done(w->db, s);
	sqlite3_finalize(s);
	/* a profile deleted while it was parsed stays deleted */
	if (rc == 0 && sqlite3_changes(w->db) == 0)
		rc = sq_delete_rows(w->db, w->id);
	if (rc == 0)
		rc = w_end(w, t);
out:
	if (rc < 0)
		w_rollback(w);
	writer_free(w);
	return rc;
}
