/* profiles.c - the SQLite backend's profiles and jobs: the profiles table is the job queue. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "store/sqlite/db.h"

int sq_profile_add(st_persist *p, const st_new_profile *np, int64_t *id, int *existed)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s = NULL;
	int rc = -1;
	size_t i;

	*existed = 0;
	if (!db)
		return -1;
	if (sq_exec(db, "BEGIN IMMEDIATE") < 0)
		goto out;
	s = sq_prep(db, "SELECT id FROM profiles WHERE sha256 = ?");
	if (!s)
		goto rollback;
	sqlite3_bind_text(s, 1, np->sha256, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW) {
		*id = sqlite3_column_int64(s, 0);
		*existed = 1;
		sqlite3_finalize(s);
		sq_exec(db, "COMMIT");
		rc = 0;
		goto out;
	}
	sqlite3_finalize(s);
	s = sq_prep(db, "INSERT INTO profiles (sha256, name, kind, spool_path, size, uploaded_at,"
		     " status) VALUES (?, ?, ?, ?, ?, ?, 0)");
	if (!s)
		goto rollback;
	sqlite3_bind_text(s, 1, np->sha256, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, np->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, np->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, np->spool_path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)np->size);
	sqlite3_bind_int64(s, 6, (sqlite3_int64)time(NULL));
	if (sq_step_done(db, s) < 0)
		goto rollback;
	*id = sqlite3_last_insert_rowid(db);
	sqlite3_finalize(s);
	s = sq_prep(db, "INSERT OR IGNORE INTO tags (profile_id, key, value) VALUES (?, ?, ?)");
	if (!s)
		goto rollback;
	for (i = 0; i < np->nr_tags; i++) {
		sqlite3_bind_int64(s, 1, *id);
		sqlite3_bind_text(s, 2, np->tag_keys[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, np->tag_values[i], -1, SQLITE_STATIC);
		if (sq_step_done(db, s) < 0)
			goto rollback;
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	s = NULL;
	if (sq_exec(db, "COMMIT") < 0)
		goto rollback;
	rc = 0;
	goto out;
rollback:
	sqlite3_finalize(s);
	sq_exec(db, "ROLLBACK");
out:
	sq_conn_put(p, db);
	return rc;
}

/* Runs an UPDATE with up to 4 bound values; returns changed rows or -1. */
static int update(st_persist *p, const char *sql, int64_t id, const char *text, int64_t a, int64_t b)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = sq_prep(db, sql);
	if (s) {
		int n = sqlite3_bind_parameter_count(s);
		sqlite3_bind_int64(s, 1, id);
		if (n >= 2)
			sqlite3_bind_text(s, 2, text, -1, SQLITE_STATIC);
		if (n >= 3)
			sqlite3_bind_int64(s, 3, a);
		if (n >= 4)
			sqlite3_bind_int64(s, 4, b);
		if (sq_step_done(db, s) == 0)
			rc = sqlite3_changes(db);
	}
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}

int sq_profile_by_sha(st_persist *p, const char *sha256, int64_t *id)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = sq_prep(db, "SELECT id FROM profiles WHERE sha256 = ?");
	if (s) {
		sqlite3_bind_text(s, 1, sha256, -1, SQLITE_STATIC);
		rc = 1;
		if (sqlite3_step(s) == SQLITE_ROW) {
			*id = sqlite3_column_int64(s, 0);
			rc = 0;
		}
	}
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}

int sq_profile_claim_next(st_persist *p, int64_t *id, char **spool_path, char **kind)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = sq_prep(db, "UPDATE profiles SET status = 1 WHERE id = (SELECT id FROM profiles"
		     " WHERE status = 0 ORDER BY id LIMIT 1) RETURNING id, spool_path, kind");
	if (s) {
		int r = sqlite3_step(s);
		if (r == SQLITE_ROW) {
			*id = sqlite3_column_int64(s, 0);
			*spool_path = strdup((const char *)sqlite3_column_text(s, 1));
			*kind = strdup((const char *)sqlite3_column_text(s, 2));
			rc = 0;
		} else if (r == SQLITE_DONE) {
			rc = 1;
		} else {
			log_warn("msg=\"sqlite claim\" error=\"%s\"", sqlite3_errmsg(db));
		}
	}
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}

int sq_profile_fail(st_persist *p, int64_t id, const char *msg, int64_t offset, int64_t parse_ms)
{
	return update(p, "UPDATE profiles SET status = 3, error = ?2, error_offset = ?3,"
			  " parse_ms = ?4 WHERE id = ?1", id, msg, offset, parse_ms) < 0 ? -1 : 0;
}

int sq_profile_requeue(st_persist *p, int64_t id)
{
	return update(p, "UPDATE profiles SET status = 0 WHERE id = ?1 AND status = 1", id,
		      NULL, 0, 0) < 0 ? -1 : 0;
}

int sq_requeue_parsing(st_persist *p, int *count)
{
	int rc = update(p, "UPDATE profiles SET status = 0 WHERE status = 1 AND ?1 = ?1", 0,
			NULL, 0, 0);
	*count = rc < 0 ? 0 : rc;
	return rc < 0 ? -1 : 0;
}

int sq_profile_delete(st_persist *p, int64_t id, char **spool_path)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s = NULL;
	int rc = -1;

	*spool_path = NULL;
	if (!db)
		return -1;
	if (sq_exec(db, "BEGIN IMMEDIATE") < 0)
		goto out;
	s = sq_prep(db, "SELECT spool_path FROM profiles WHERE id = ?");
	if (!s)
		goto rollback;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) != SQLITE_ROW) {
		rc = 1;
		goto rollback;
	}
	*spool_path = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	s = sq_prep(db, "DELETE FROM profiles WHERE id = ?");
	if (!s)
		goto rollback;
	sqlite3_bind_int64(s, 1, id);
	if (sq_step_done(db, s) < 0 || sq_delete_rows(db, id) < 0)
		goto rollback;
	sqlite3_finalize(s);
	s = sq_prep(db, "DELETE FROM tags WHERE profile_id = ?");
	if (!s)
		goto rollback;
	sqlite3_bind_int64(s, 1, id);
	if (sq_step_done(db, s) < 0)
		goto rollback;
	sqlite3_finalize(s);
	s = NULL;
	if (sq_exec(db, "COMMIT") < 0)
		goto rollback;
	rc = 0;
	goto out;
rollback:
	sqlite3_finalize(s);
	sq_exec(db, "ROLLBACK");
	if (rc != 1) {
		free(*spool_path);
		*spool_path = NULL;
	}
out:
	sq_conn_put(p, db);
	return rc;
}

static json_t *json_text_or_null(sqlite3_stmt *s, int col)
{
	const char *t = (const char *)sqlite3_column_text(s, col);
	json_t *j;

	if (!t)
		return json_null();
	j = json_loads(t, JSON_DECODE_ANY, NULL);
	return j ? j : json_null();
}

static json_t *tags_json(sqlite3 *db, int64_t id)
{
	json_t *o = json_object();
	sqlite3_stmt *s = sq_prep(db, "SELECT key, value FROM tags WHERE profile_id = ? ORDER BY key");

	if (!s)
		return o;
	sqlite3_bind_int64(s, 1, id);
	while (sqlite3_step(s) == SQLITE_ROW)
		json_object_set_new(o, (const char *)sqlite3_column_text(s, 0),
				    json_string((const char *)sqlite3_column_text(s, 1)));
	sqlite3_finalize(s);
	return o;
}

#define PROFILE_COLS "id, name, status, error, error_offset, sha256, size, uploaded_at," \
	" parse_ms, symbolized_pct, hostname, nr_samples, header, events, records," \
	" samples_per_event, lost, kind"

static json_t *profile_row(sqlite3 *db, sqlite3_stmt *s, int full)
{
	json_t *o = json_object();
	int64_t id = sqlite3_column_int64(s, 0);
	int status = sqlite3_column_int(s, 2);
	char when[32];
	time_t t = (time_t)sqlite3_column_int64(s, 7);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(o, "id", json_integer(id));
	json_object_set_new(o, "name", sqlite3_column_type(s, 1) == SQLITE_NULL ? json_null() :
				json_string((const char *)sqlite3_column_text(s, 1)));
	json_object_set_new(o, "tags", tags_json(db, id));
	json_object_set_new(o, "status", json_string(st_status_name(status)));
	json_object_set_new(o, "error", sqlite3_column_type(s, 3) == SQLITE_NULL ? json_null() :
				json_string((const char *)sqlite3_column_text(s, 3)));
	if (sqlite3_column_type(s, 4) != SQLITE_NULL)
		json_object_set_new(o, "error_offset", json_integer(sqlite3_column_int64(s, 4)));
	json_object_set_new(o, "sha256", json_string((const char *)sqlite3_column_text(s, 5)));
	json_object_set_new(o, "size", json_integer(sqlite3_column_int64(s, 6)));
	json_object_set_new(o, "uploaded_at", json_string(when));
	json_object_set_new(o, "kind", json_string((const char *)sqlite3_column_text(s, 17)));
	json_object_set_new(o, "parse_ms", sqlite3_column_type(s, 8) == SQLITE_NULL ? json_null() :
				json_integer(sqlite3_column_int64(s, 8)));
	json_object_set_new(o, "symbolized_pct", sqlite3_column_type(s, 9) == SQLITE_NULL ?
				json_null() : json_real(sqlite3_column_double(s, 9)));
	json_object_set_new(o, "hostname", sqlite3_column_type(s, 10) == SQLITE_NULL ? json_null() :
				json_string((const char *)sqlite3_column_text(s, 10)));
	if (status == ST_READY)
		json_object_set_new(o, "samples", json_integer(sqlite3_column_int64(s, 11)));
	if (full && status == ST_READY) {
		json_object_set_new(o, "header", json_text_or_null(s, 12));
		json_object_set_new(o, "events", json_text_or_null(s, 13));
		json_object_set_new(o, "records", json_text_or_null(s, 14));
		json_object_set_new(o, "samples_per_event", json_text_or_null(s, 15));
		json_object_set_new(o, "lost", json_integer(sqlite3_column_int64(s, 16)));
	}
	return o;
}

json_t *sq_profile_json(st_persist *p, int64_t id, int *notfound)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	json_t *o = NULL;

	*notfound = 0;
	if (!db)
		return NULL;
	s = sq_prep(db, "SELECT " PROFILE_COLS " FROM profiles WHERE id = ?");
	if (s) {
		sqlite3_bind_int64(s, 1, id);
		if (sqlite3_step(s) == SQLITE_ROW)
			o = profile_row(db, s, 1);
		else
			*notfound = 1;
	}
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return o;
}

json_t *sq_profile_list_json(st_persist *p, const st_list_filter *f)
{
	static const char where[] =
		" WHERE (?1 < 0 OR status = ?1) AND (?2 IS NULL OR hostname = ?2)"
		" AND (?3 IS NULL OR EXISTS (SELECT 1 FROM tags t WHERE t.profile_id = profiles.id"
		" AND t.key = ?3 AND t.value = ?4))"
		" AND (?5 = 0 OR uploaded_at >= ?5) AND (?6 = 0 OR uploaded_at < ?6)";
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s = NULL;
	json_t *arr, *out = NULL;
	int64_t total = 0;
	int pass;

	if (!db)
		return NULL;
	arr = json_array();
	for (pass = 0; pass < 2; pass++) {
		char sql[1024];

		snprintf(sql, sizeof(sql), "%s%s%s",
			 pass == 0 ? "SELECT count(*) FROM profiles" :
				     "SELECT " PROFILE_COLS " FROM profiles",
			 where, pass == 0 ? "" : " ORDER BY id DESC LIMIT ?7 OFFSET ?8");
		s = sq_prep(db, sql);
		if (!s)
			goto out;
		sqlite3_bind_int(s, 1, f->status);
		sqlite3_bind_text(s, 2, f->hostname, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, f->tag_key, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, f->tag_value, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, f->since);
		sqlite3_bind_int64(s, 6, f->until);
		if (pass == 0) {
			if (sqlite3_step(s) == SQLITE_ROW)
				total = sqlite3_column_int64(s, 0);
		} else {
			sqlite3_bind_int64(s, 7, f->limit);
			sqlite3_bind_int64(s, 8, f->offset);
			while (sqlite3_step(s) == SQLITE_ROW)
				json_array_append_new(arr, profile_row(db, s, 0));
		}
		sqlite3_finalize(s);
		s = NULL;
	}
	out = json_pack("{s:O,s:I}", "profiles", arr, "total", (json_int_t)total);
out:
	json_decref(arr);
	sq_conn_put(p, db);
	return out;
}

int sq_counts(st_persist *p, st_counts *c)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (!db)
		return -1;
	s = sq_prep(db, "SELECT status, count(*) FROM profiles GROUP BY status");
	if (s) {
		while (sqlite3_step(s) == SQLITE_ROW) {
			int64_t n = sqlite3_column_int64(s, 1);
			switch (sqlite3_column_int(s, 0)) {
			case ST_QUEUED: c->queued = n; break;
			case ST_PARSING: c->parsing = n; break;
			case ST_READY: c->ready = n; break;
			case ST_FAILED: c->failed = n; break;
			}
		}
		rc = 0;
	}
	sqlite3_finalize(s);
	s = sq_prep(db, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()");
	if (s && sqlite3_step(s) == SQLITE_ROW)
		c->db_bytes = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}

int sq_profile_resymbolize(st_persist *p, int64_t id)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int rc = update(p, "UPDATE profiles SET status = 0 WHERE id = ?1 AND status = 2", id,
			NULL, 0, 0);

	if (rc != 0)
		return rc < 0 ? -1 : 0;
	db = sq_conn_get(p);
	if (!db)
		return -1;
	rc = -1;
	s = sq_prep(db, "SELECT status FROM profiles WHERE id = ?");
	if (s) {
		sqlite3_bind_int64(s, 1, id);
		if (sqlite3_step(s) == SQLITE_ROW)
			rc = sqlite3_column_int(s, 0) == ST_FAILED ? 3 : 2;
		else
			rc = 1;
	}
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}

int sq_ready_profiles(st_persist *p, const st_agg_filter *f, st_ready_profile **out,
		      size_t *n)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	st_ready_profile *v = NULL;
	size_t cap = 0, i;
	int rc = -1, r = SQLITE_ERROR;

	*out = NULL;
	*n = 0;
	if (!db)
		return -1;
	s = sq_prep(db, "SELECT id, hostname FROM profiles p WHERE status = 2"
		    " AND (?1 IS NULL OR hostname = ?1)"
		    " AND (?2 IS NULL OR EXISTS (SELECT 1 FROM tags t WHERE t.profile_id = p.id"
		    " AND t.key = ?2 AND t.value = ?3))"
		    " AND (?4 = 0 OR uploaded_at >= ?4) AND (?5 = 0 OR uploaded_at < ?5)"
		    " ORDER BY id");
	if (!s)
		goto out;
	sqlite3_bind_text(s, 1, f->hostname, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, f->tag_key, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, f->tag_value, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, f->since);
	sqlite3_bind_int64(s, 5, f->until);
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		const char *h = (const char *)sqlite3_column_text(s, 1);
		if (*n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			st_ready_profile *nv = realloc(v, ncap * sizeof(*nv));
			if (!nv)
				goto out;
			v = nv;
			cap = ncap;
		}
		v[*n].id = sqlite3_column_int64(s, 0);
		if ((v[*n].hostname = h ? strdup(h) : NULL) == NULL && h)
			goto out;
		(*n)++;
	}
	if (r == SQLITE_DONE)
		rc = 0;
out:
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	if (rc < 0) {
		for (i = 0; i < *n; i++)
			free(v[i].hostname);
		free(v);
		v = NULL;
		*n = 0;
	}
	*out = v;
	return rc;
}

int sq_profile_file(st_persist *p, int64_t id, char **spool_path, char **kind, char **name)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc = -1;

	*spool_path = *kind = *name = NULL;
	if (!db)
		return -1;
	s = sq_prep(db, "SELECT spool_path, kind, name FROM profiles WHERE id = ?");
	if (s) {
		int r;
		sqlite3_bind_int64(s, 1, id);
		r = sqlite3_step(s);
		if (r == SQLITE_ROW) {
			const char *nm = (const char *)sqlite3_column_text(s, 2);
			*spool_path = strdup((const char *)sqlite3_column_text(s, 0));
			*kind = strdup((const char *)sqlite3_column_text(s, 1));
			*name = nm ? strdup(nm) : NULL;
			rc = *spool_path && *kind && (!nm || *name) ? 0 : -1;
		} else if (r == SQLITE_DONE) {
			rc = 1;
		}
	}
	sqlite3_finalize(s);
	if (rc < 0) {
		free(*spool_path);
		free(*kind);
		free(*name);
		*spool_path = *kind = *name = NULL;
	}
	sq_conn_put(p, db);
	return rc;
}

/* One statement of a profile's update, bound (id, text, text), run. */
static int edit_step(sqlite3 *db, const char *sql, int64_t id, const char *a, const char *b)
{
	sqlite3_stmt *s = sq_prep(db, sql);
	int rc;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_bind_parameter_count(s) >= 2)
		sqlite3_bind_text(s, 2, a, -1, SQLITE_STATIC);
	if (sqlite3_bind_parameter_count(s) >= 3)
		sqlite3_bind_text(s, 3, b, -1, SQLITE_STATIC);
	rc = sq_step_done(db, s);
	sqlite3_finalize(s);
	return rc;
}

int sq_profile_update(st_persist *p, int64_t id, const st_profile_patch *patch)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s = NULL;
	int rc = -1;
	size_t i;

	if (!db)
		return -1;
	if (sq_exec(db, "BEGIN IMMEDIATE") < 0)
		goto out;
	/* the row is written whether or not the name changes: no row
	 * written, no such profile */
	s = sq_prep(db, "UPDATE profiles SET name = CASE WHEN ?3 THEN ?2 ELSE name END"
		     " WHERE id = ?1");
	if (!s)
		goto rollback;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, patch->name, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 3, patch->set_name);
	if (sq_step_done(db, s) < 0)
		goto rollback;
	if (!sqlite3_changes(db)) {
		rc = 1;
		goto rollback;
	}
	sqlite3_finalize(s);
	s = NULL;
	/* a key has one value: setting it replaces every earlier one */
	for (i = 0; i < patch->nr_tags; i++) {
		if (edit_step(db, "DELETE FROM tags WHERE profile_id = ?1 AND key = ?2", id,
			      patch->tag_keys[i], NULL) < 0)
			goto rollback;
		if (patch->tag_values[i] &&
		    edit_step(db, "INSERT INTO tags (profile_id, key, value) VALUES (?1, ?2, ?3)",
			      id, patch->tag_keys[i], patch->tag_values[i]) < 0)
			goto rollback;
	}
	if (sq_exec(db, "COMMIT") < 0)
		goto rollback;
	rc = 0;
	goto out;
rollback:
	sqlite3_finalize(s);
	sq_exec(db, "ROLLBACK");
out:
	sq_conn_put(p, db);
	return rc;
}
