/*
 * writer.c - the SQLite backend's side of writing a parse. Rows wait in
 * the builder and come here with each sample block: one short BEGIN
 * IMMEDIATE transaction per block, so parsing, symbolizing and compressing
 * happen outside it and several workers write in turn without waiting for
 * each other's parsing. Statements are prepared once per writer.
 *
 * The rows go under a new key (the profile's pending_id) beside those of
 * the parse being served (its data_id), so readers are served the earlier
 * parse until this one is complete; finishing switches data_id to the new
 * key in the same transaction that marks the profile ready, and the
 * earlier rows go afterwards.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "store/sqlite/db.h"

enum { W_BLOCK = PE_NR_ROW_KINDS, W_NR_STMTS };

/* Rows of a kind inserted by one statement: the per-statement work
 * (step, reset, the program's start) is most of a small row's cost. A
 * system-wide build's 133,000 rows took 133 ms of inserting, against 200
 * one by one. */
#define W_MULTI 16

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
};

struct st_persist_writer {
	st_persist *p;
	sqlite3 *db;
	int64_t id;
	int64_t key;		/* the rows' key (profiles.pending_id) */
	sqlite3_stmt *stmt[W_NR_STMTS];
	sqlite3_stmt *multi[PE_NR_ROW_KINDS];	/* W_MULTI rows a statement */
	int failed;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int w_step(st_persist_writer *w, sqlite3_stmt *s)
{
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

/* The statement inserting W_MULTI rows of a kind: its VALUES group
 * repeated. NULL when it cannot be made (one row a statement then). */
static sqlite3_stmt *multi_prep(sqlite3 *db, const char *sql)
{
	const char *v = strstr(sql, "VALUES ");
	size_t head, group, i;
	sqlite3_stmt *s = NULL;
	char *m, *p;

	if (!v)
		return NULL;
	head = (size_t)(v - sql) + 7;
	group = strlen(sql) - head;
	m = malloc(head + W_MULTI * (group + 2) + 1);
	if (!m)
		return NULL;
	memcpy(m, sql, head);
	for (i = 0, p = m + head; i < W_MULTI; i++, p += group) {
		if (i) {
			memcpy(p, ", ", 2);
			p += 2;
		}
		memcpy(p, sql + head, group);
	}
	*p = 0;
	if (sqlite3_prepare_v2(db, m, -1, &s, NULL) != SQLITE_OK)
		s = NULL;
	free(m);
	return s;
}

/* Binds a row's key and values from parameter base + 1 on. */
static void row_bind(st_persist_writer *w, sqlite3_stmt *s, int base, const pe_row *r)
{
	unsigned k, t = 0;

	sqlite3_bind_int64(s, base + 1, w->key);
	for (k = 0; k < r->nvals; k++) {
		if (r->text_mask & (1u << k))
			sqlite3_bind_text(s, base + (int)k + 2, r->text[t++], -1, SQLITE_STATIC);
		else if (r->null_mask & (1u << k))
			sqlite3_bind_null(s, base + (int)k + 2);
		else
			sqlite3_bind_int64(s, base + (int)k + 2, r->v[k]);
	}
}

/* One statement: the rows of g (all of one kind; n is 1, or W_MULTI
 * with its statement). 0 or -1. */
static int step_rows(st_persist_writer *w, sqlite3_stmt *s, int per, const pe_row *const *g,
		     size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		row_bind(w, s, (int)j * per, g[j]);
	return w_step(w, s);
}

/* n rows of one kind: W_MULTI in one statement, fewer one by one. */
static int group_write(st_persist_writer *w, unsigned kind, const pe_row *const *g, size_t n)
{
	int per = sqlite3_bind_parameter_count(w->stmt[kind]);
	size_t j;

	if (n == W_MULTI && w->multi[kind])
		return step_rows(w, w->multi[kind], per, g, n);
	for (j = 0; j < n; j++)
		if (step_rows(w, w->stmt[kind], per, &g[j], 1) < 0)
			return -1;
	return 0;
}

/* Inserts rows (inside the caller's transaction), kind by kind: the
 * tables are apart, and each kind's rows keep their order. */
static int rows_write(st_persist_writer *w, const pe_row *rows, size_t n)
{
	const pe_row *g[W_MULTI];
	unsigned kind;
	size_t i, m;

	for (kind = 0; kind < PE_NR_ROW_KINDS; kind++) {
		for (i = 0, m = 0; i < n; i++) {
			if (rows[i].kind != kind)
				continue;
			g[m++] = &rows[i];
			if (m == W_MULTI) {
				if (group_write(w, kind, g, m) < 0)
					return -1;
				m = 0;
			}
		}
		if (m && group_write(w, kind, g, m) < 0)
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
	for (i = 0; i < PE_NR_ROW_KINDS; i++)
		sqlite3_finalize(w->multi[i]);
	sqlite3_close(w->db);
	free(w);
}

/* In the writer's first transaction: what an earlier attempt at this
 * profile left goes (its pending rows, and rows a v3 database keyed by the
 * profile's id unless they are the ones served), and the new parse gets
 * its key. */
static int pending_begin(st_persist_writer *w)
{
	sqlite3_stmt *s = sq_prep(w->db, "SELECT pending_id, data_id FROM profiles WHERE id = ?");
	int64_t pending = 0, served = 0;
	int rc = -1;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, w->id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		pending = sqlite3_column_int64(s, 0);	/* NULL reads as 0 */
		served = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	if ((pending && sq_delete_rows(w->db, pending) < 0) ||
	    (served != w->id && sq_delete_rows(w->db, w->id) < 0) || sq_new_key(w->db, &w->key) < 0)
		return -1;
	s = sq_prep(w->db, "UPDATE profiles SET pending_id = ? WHERE id = ?");
	if (s) {
		sqlite3_bind_int64(s, 1, w->key);
		sqlite3_bind_int64(s, 2, w->id);
		rc = sq_step_done(w->db, s);
	}
	sqlite3_finalize(s);
	return rc;
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
	if (sq_exec(w->db, "BEGIN IMMEDIATE") < 0)
		goto fail;
	if (pending_begin(w) < 0 || sq_exec(w->db, "COMMIT") < 0) {
		w_rollback(w);
		goto fail;
	}
	for (i = 0; i < W_NR_STMTS; i++)
		if (!(w->stmt[i] = sq_prep(w->db, writer_sql[i])))
			goto fail;
	for (i = 0; i < PE_NR_ROW_KINDS; i++)
		w->multi[i] = multi_prep(w->db, writer_sql[i]);
	return w;
fail:
	sq_writer_abort(w);
	return NULL;
}

void sq_writer_abort(st_persist_writer *w)
{
	sqlite3_stmt *s;

	if (!w)
		return;
	w_rollback(w);
	/* earlier blocks were committed: take them away again */
	if (w->key && sq_exec(w->db, "BEGIN IMMEDIATE") == 0) {
		s = sq_prep(w->db, "UPDATE profiles SET pending_id = NULL WHERE id = ? AND"
				   " pending_id = ?");
		if (s) {
			sqlite3_bind_int64(s, 1, w->id);
			sqlite3_bind_int64(s, 2, w->key);
		}
		if (s && sq_step_done(w->db, s) == 0 && sq_delete_rows(w->db, w->key) == 0)
			sq_exec(w->db, "COMMIT");
		else
			sq_exec(w->db, "ROLLBACK");
		sqlite3_finalize(s);
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
		sqlite3_bind_int64(s, 1, w->key);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)b->seq);
		sqlite3_bind_int64(s, 3, b->nr);
		/* times are stored as signed 64-bit; the comparison in reads is too */
		sqlite3_bind_int64(s, 4, (sqlite3_int64)b->min_time);
		sqlite3_bind_int64(s, 5, (sqlite3_int64)b->max_time);
		sqlite3_bind_blob(s, 6, b->data, (int)b->len, SQLITE_STATIC);
		if (w_step(w, s) < 0)
			goto fail;
	}
	t->insert_ns += now_ns() - t0;
	return w_end(w, t);
fail:
	w_rollback(w);
	return -1;
}

/* The key of the rows served until now (0: none). */
static int served_key(st_persist_writer *w, int64_t *key)
{
	sqlite3_stmt *s = sq_prep(w->db, "SELECT data_id FROM profiles WHERE id = ?");

	*key = 0;
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, w->id);
	if (sqlite3_step(s) == SQLITE_ROW)
		*key = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return 0;
}

/* The generation the finish just gave the profile (in its transaction),
 * 0 when it cannot be read. */
static int64_t new_generation(st_persist_writer *w)
{
	sqlite3_stmt *s = sq_prep(w->db, "SELECT generation FROM profiles WHERE id = ?");
	int64_t gen = 0;

	if (!s)
		return 0;
	sqlite3_bind_int64(s, 1, w->id);
	if (sqlite3_step(s) == SQLITE_ROW)
		gen = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return gen;
}

int sq_writer_finish(st_persist_writer *w, const st_summary *x, st_write_times *t)
{
	sqlite3_stmt *s;
	int64_t old = 0;
	int rc = -1;

	/* the summary and the status in one transaction: ready and complete
	 * become visible at once */
	if (w->failed || w_begin(w, t) < 0)
		goto out;
	if (served_key(w, &old) < 0)
		goto out;
	/* a new generation: caches of an earlier parse of this profile go
	 * stale; readers move to the new rows with it */
	s = sq_prep(w->db, "UPDATE profiles SET status = 2, error = NULL, error_offset = NULL,"
			   " hostname = ?2, first_ns = ?3, last_ns = ?4, nr_samples = ?5,"
			   " symbolized_pct = ?6, parse_ms = ?7, header = ?8, events = ?9,"
			   " records = ?10, samples_per_event = ?11, lost = ?12, warnings = ?14,"
			   " data_id = ?13, pending_id = NULL,"
			   " generation = (SELECT coalesce(max(generation), 0) + 1 FROM profiles)"
			   " WHERE id = ?1 AND pending_id = ?13");
	if (!s)
		goto out;
	sqlite3_bind_int64(s, 13, w->key);
	sqlite3_bind_text(s, 14, x->warnings, -1, SQLITE_STATIC);
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
		rc = sq_delete_rows(w->db, w->key);
	else if (rc == 0) {
		t->generation = new_generation(w);
		if (old && old != w->key)
			rc = sq_stale_add(w->db, old);	/* the parse served until now */
	}
	if (rc == 0)
		rc = w_end(w, t);
	if (rc == 0)
		sq_stale_sweep(w->db);
out:
	if (rc < 0)
		w_rollback(w);
	writer_free(w);
	return rc;
}
