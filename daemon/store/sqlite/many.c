/*
 * many.c - the SQLite backend's side of questions about many profiles:
 * profiles with their labels for a selector, and the per-profile
 * summaries series read (tables created beside the migrated schema, like
 * the debuginfo index, so no schema version is spent on them).
 *
 *   summary_state   profile_id -> the parse generation its summary is of;
 *                   a row is there only while that parse is the profile's
 *                   (a new parse deletes it with the profile's other rows,
 *                   and a summary of an older parse is never stored)
 *   summary_events  per profile and event: its order and totals
 *   summary_keys    per (kind, key, profile, event): self and total counts;
 *                   keyed so a series finds one key in every profile fast
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/sqlite/db.h"

#define SQ_MAX_TAGS 256		/* tags of one profile handed to a selector */

int sq_many_init(sqlite3 *db)
{
	return sq_exec(db,
		"CREATE TABLE IF NOT EXISTS summary_state (profile_id INTEGER PRIMARY KEY,"
		" generation INTEGER NOT NULL);"
		"CREATE TABLE IF NOT EXISTS summary_events (profile_id INTEGER NOT NULL,"
		" ord INTEGER NOT NULL, event TEXT NOT NULL, samples INTEGER NOT NULL,"
		" period INTEGER NOT NULL, PRIMARY KEY (profile_id, ord)) WITHOUT ROWID;"
		"CREATE TABLE IF NOT EXISTS summary_keys (kind INTEGER NOT NULL, key TEXT NOT NULL,"
		" profile_id INTEGER NOT NULL, ord INTEGER NOT NULL, dso TEXT,"
		" self_samples INTEGER NOT NULL, self_period INTEGER NOT NULL,"
		" total_samples INTEGER NOT NULL, total_period INTEGER NOT NULL,"
		" PRIMARY KEY (kind, key, profile_id, ord)) WITHOUT ROWID;"
		"CREATE INDEX IF NOT EXISTS summary_keys_profile ON summary_keys(profile_id);");
}

/* ---- profiles and their labels ------------------------------------------------------ */

typedef struct label_rows {
	st_profile_labels l;
	char *name, *hostname;
	char *keys[SQ_MAX_TAGS], *values[SQ_MAX_TAGS];
} label_rows;

static void label_rows_clear(label_rows *x)
{
	size_t i;

	for (i = 0; i < x->l.nr_tags; i++) {
		free(x->keys[i]);
		free(x->values[i]);
	}
	free(x->name);
	free(x->hostname);
	memset(x, 0, sizeof(*x));
}

static char *text_col(sqlite3_stmt *s, int col)
{
	const char *t = (const char *)sqlite3_column_text(s, col);

	return t ? strdup(t) : NULL;
}

int sq_profiles_labels(st_persist *p, const st_label_query *q, st_labels_cb cb, void *ctx)
{
	static const char sql[] =
		/* no column after header: those are read through its overflow
		 * pages (generation, added last, is one) */
		"SELECT p.id, p.name, p.hostname, p.status, p.uploaded_at,"
		" s.profile_id IS NOT NULL, coalesce(p.first_ns, 0),"
		" coalesce(p.last_ns, 0), t.key, t.value"
		" FROM profiles p LEFT JOIN summary_state s ON s.profile_id = p.id"
		" LEFT JOIN tags t ON t.profile_id = p.id"
		" WHERE (?1 < 0 OR p.status = ?1) AND (?2 IS NULL OR p.hostname = ?2)"
		" AND (?3 IS NULL OR EXISTS (SELECT 1 FROM tags t2 WHERE t2.profile_id = p.id"
		" AND t2.key = ?3 AND t2.value = ?4))"
		" AND (?5 = 0 OR p.uploaded_at >= ?5) AND (?6 = 0 OR p.uploaded_at < ?6)"
		" AND (?7 = 0 OR p.id = ?7) AND (?8 = 0 OR p.id < ?8)"
		" ORDER BY p.id DESC";
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s = NULL;
	label_rows *x = calloc(1, sizeof(*x));
	int r = SQLITE_ERROR, rc = -1, have = 0;

	if (!db || !x)
		goto out;
	if (!(s = sq_prep(db, sql)))
		goto out;
	sq_bind_filter(s, q->status, q->hostname, q->tag_key, q->tag_value, q->since, q->until);
	sqlite3_bind_int64(s, 7, q->id);
	sqlite3_bind_int64(s, 8, q->below_id);
	/* one row per tag: a profile's rows come together (ordered by id) */
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		if (have && id != x->l.id) {
			if ((rc = cb(ctx, &x->l)) != 0)
				goto out;
			rc = -1;
			label_rows_clear(x);
			have = 0;
		}
		if (!have) {
			have = 1;
			x->l.id = id;
			x->l.name = x->name = text_col(s, 1);
			x->l.hostname = x->hostname = text_col(s, 2);
			x->l.status = sqlite3_column_int(s, 3);
			x->l.uploaded_at = sqlite3_column_int64(s, 4);
			x->l.has_summary = sqlite3_column_int(s, 5);
			x->l.first_ns = (uint64_t)sqlite3_column_int64(s, 6);
			x->l.last_ns = (uint64_t)sqlite3_column_int64(s, 7);
			x->l.tag_keys = (const char *const *)x->keys;
			x->l.tag_values = (const char *const *)x->values;
		}
		if (sqlite3_column_type(s, 8) != SQLITE_NULL && x->l.nr_tags < SQ_MAX_TAGS) {
			size_t k = x->l.nr_tags;
			x->keys[k] = text_col(s, 8);
			x->values[k] = text_col(s, 9);
			if (!x->keys[k] || !x->values[k]) {
				free(x->keys[k]);
				free(x->values[k]);
				goto out;
			}
			x->l.nr_tags++;
		}
	}
	if (r != SQLITE_DONE) {
		log_warn("msg=\"sqlite labels\" error=\"%s\"", sqlite3_errmsg(db));
		goto out;
	}
	rc = have ? cb(ctx, &x->l) : 0;
out:
	if (x)
		label_rows_clear(x);
	free(x);
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}

/* ---- summaries ---------------------------------------------------------------------- */

static int summary_rows(sqlite3 *db, int64_t id, const pe_summary *sm)
{
	sqlite3_stmt *e = sq_prep(db, "INSERT INTO summary_events (profile_id, ord, event, samples,"
				      " period) VALUES (?, ?, ?, ?, ?)");
	sqlite3_stmt *k = sq_prep(db, "INSERT OR REPLACE INTO summary_keys (kind, key, profile_id,"
				      " ord, dso, self_samples, self_period, total_samples,"
				      " total_period) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
	size_t i;
	int rc = -1;

	if (!e || !k)
		goto out;
	for (i = 0; i < sm->nr_events; i++) {
		const pe_sum_event *x = &sm->events[i];
		sqlite3_bind_int64(e, 1, id);
		sqlite3_bind_int64(e, 2, x->ord);
		sqlite3_bind_text(e, 3, x->name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(e, 4, (sqlite3_int64)x->samples);
		sqlite3_bind_int64(e, 5, (sqlite3_int64)x->period);
		if (sq_step_done(db, e) < 0)
			goto out;
		sqlite3_reset(e);
	}
	for (i = 0; i < sm->nr_rows; i++) {
		const pe_sum_row *x = &sm->rows[i];
		sqlite3_bind_int(k, 1, x->kind);
		sqlite3_bind_text(k, 2, x->key, -1, SQLITE_STATIC);
		sqlite3_bind_int64(k, 3, id);
		sqlite3_bind_int64(k, 4, x->ord);
		sqlite3_bind_text(k, 5, x->dso, -1, SQLITE_STATIC);
		sqlite3_bind_int64(k, 6, (sqlite3_int64)x->self_samples);
		sqlite3_bind_int64(k, 7, (sqlite3_int64)x->self_period);
		sqlite3_bind_int64(k, 8, (sqlite3_int64)x->total_samples);
		sqlite3_bind_int64(k, 9, (sqlite3_int64)x->total_period);
		if (sq_step_done(db, k) < 0)
			goto out;
		sqlite3_reset(k);
	}
	rc = 0;
out:
	sqlite3_finalize(e);
	sqlite3_finalize(k);
	return rc;
}

/* Runs sql with id bound as ?1 (and gen as ?2 when it has one): the
 * first column of its row (0 without one), or -1. */
static int64_t run_id(sqlite3 *db, const char *sql, int64_t id, int64_t gen)
{
	sqlite3_stmt *s = sq_prep(db, sql);
	int64_t rc = -1;
	int r;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_bind_parameter_count(s) >= 2)
		sqlite3_bind_int64(s, 2, gen);
	r = sqlite3_step(s);
	if (r == SQLITE_ROW)
		rc = sqlite3_column_int64(s, 0);
	else if (r == SQLITE_DONE)
		rc = 0;
	else
		log_warn("msg=\"sqlite\" sql=\"%.60s\" error=\"%s\"", sql, sqlite3_errmsg(db));
	sqlite3_finalize(s);
	return rc;
}

int sq_summary_put(st_persist *p, int64_t id, int64_t gen, const pe_summary *sm)
{
	sqlite3 *db = sq_conn_get(p);
	int64_t ready;
	int rc = -1;

	if (!db)
		return -1;
	if (sq_exec(db, "BEGIN IMMEDIATE") < 0)
		goto out;
	/* still the parse it was made from */
	ready = run_id(db, "SELECT count(*) FROM profiles WHERE id = ?1 AND status = 2"
			   " AND generation = ?2", id, gen);
	if (ready < 0)
		goto rollback;
	if (ready == 0) {
		rc = 0;
		goto rollback;
	}
	if (run_id(db, "DELETE FROM summary_events WHERE profile_id = ?1", id, 0) < 0 ||
	    run_id(db, "DELETE FROM summary_keys WHERE profile_id = ?1", id, 0) < 0 ||
	    summary_rows(db, id, sm) < 0 ||
	    run_id(db, "INSERT OR REPLACE INTO summary_state (profile_id, generation)"
		   " VALUES (?1, ?2)", id, gen) < 0)
		goto rollback;
	if (sq_exec(db, "COMMIT") < 0)
		goto rollback;
	rc = 0;
	goto out;
rollback:
	sq_exec(db, "ROLLBACK");
out:
	sq_conn_put(p, db);
	return rc;
}

int sq_summary_read(st_persist *p, const int64_t *ids, size_t n, int kind, const char *key,
		    st_summary_cb cb, void *ctx)
{
	/* a profile's events, and the key's row of each when there is one */
	static const char with_key[] =
		"SELECT e.ord, e.event, e.samples, e.period, coalesce(k.self_samples, 0),"
		" coalesce(k.self_period, 0), coalesce(k.total_samples, 0),"
		" coalesce(k.total_period, 0) FROM summary_events e LEFT JOIN summary_keys k"
		" ON k.kind = ?2 AND k.key = ?3 AND k.profile_id = e.profile_id AND k.ord = e.ord"
		" WHERE e.profile_id = ?1 ORDER BY e.ord";
	static const char totals[] =
		"SELECT ord, event, samples, period, samples, period, samples, period"
		" FROM summary_events WHERE profile_id = ?1 ORDER BY ord";
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	size_t i;
	int rc = 0, r = SQLITE_DONE;

	if (!db)
		return -1;
	/* one snapshot for all of them */
	if (!(s = sq_prep(db, key ? with_key : totals)) || sq_exec(db, "BEGIN") < 0) {
		sqlite3_finalize(s);
		sq_conn_put(p, db);
		return -1;
	}
	if (key) {
		sqlite3_bind_int(s, 2, kind);
		sqlite3_bind_text(s, 3, key, -1, SQLITE_STATIC);
	}
	for (i = 0; i < n && rc == 0; i++) {
		sqlite3_bind_int64(s, 1, ids[i]);
		while (rc == 0 && (r = sqlite3_step(s)) == SQLITE_ROW) {
			st_summary_point pt;
			pt.id = ids[i];
			pt.ord = (uint32_t)sqlite3_column_int64(s, 0);
			pt.event = (const char *)sqlite3_column_text(s, 1);
			pt.v.event_samples = (uint64_t)sqlite3_column_int64(s, 2);
			pt.v.event_period = (uint64_t)sqlite3_column_int64(s, 3);
			pt.v.self_samples = (uint64_t)sqlite3_column_int64(s, 4);
			pt.v.self_period = (uint64_t)sqlite3_column_int64(s, 5);
			pt.v.total_samples = (uint64_t)sqlite3_column_int64(s, 6);
			pt.v.total_period = (uint64_t)sqlite3_column_int64(s, 7);
			if (!pt.event)
				pt.event = "";
			rc = cb(ctx, &pt);
		}
		if (rc == 0 && r != SQLITE_DONE) {
			log_warn("msg=\"sqlite summary\" error=\"%s\"", sqlite3_errmsg(db));
			rc = -1;
		}
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	sq_exec(db, "COMMIT");
	sq_conn_put(p, db);
	return rc;
}
