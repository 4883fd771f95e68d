/* debuginfo.c - the SQLite backend's index of debuginfo files by build-id, and what each profile left unresolved. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/sqlite/db.h"

int sq_debuginfo_init(st_persist *p)
{
	sqlite3 *db = sq_conn_get(p);
	int rc;

	if (!db)
		return -1;
	rc = sq_exec(db, "CREATE TABLE IF NOT EXISTS debuginfo (build_id TEXT NOT NULL,"
		      " kind TEXT NOT NULL, path TEXT NOT NULL, size INTEGER, symbols INTEGER,"
		      " source TEXT, added_at INTEGER, PRIMARY KEY (build_id, kind)) WITHOUT ROWID;"
		      "CREATE TABLE IF NOT EXISTS profile_dsos (profile_id INTEGER NOT NULL,"
		      " build_id TEXT NOT NULL, path TEXT NOT NULL, unresolved INTEGER,"
		      " PRIMARY KEY (profile_id, build_id, path)) WITHOUT ROWID;"
		      "CREATE INDEX IF NOT EXISTS profile_dsos_bid ON profile_dsos(build_id);");
	sq_conn_put(p, db);
	return rc;
}

int sq_debuginfo_put(st_persist *p, const char *build_id, const char *kind, const char *path,
		     uint64_t size, int symbols, const char *source)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	struct timespec ts;
	int rc = -1;

	if (!db)
		return -1;
	s = sq_prep(db, "INSERT OR REPLACE INTO debuginfo (build_id, kind, path, size, symbols,"
		     " source, added_at) VALUES (?, ?, ?, ?, ?, ?, ?)");
	clock_gettime(CLOCK_REALTIME, &ts);
	if (s) {
		sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, (sqlite3_int64)size);
		sqlite3_bind_int(s, 5, symbols != 0);
		sqlite3_bind_text(s, 6, source, -1, SQLITE_STATIC);
		/* milliseconds: a file stored in the same second as a parse
		 * started must still count as arriving during that parse */
		sqlite3_bind_int64(s, 7, (sqlite3_int64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
		rc = sq_step_done(db, s);
	}
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}

int sq_debuginfo_get(st_persist *p, const char *build_id, char **path, char **kind,
		     uint64_t *size)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	/* symbols first; of two with symbols the binary (it also has .plt) */
	s = sq_prep(db, "SELECT path, kind, size FROM debuginfo WHERE build_id = ?"
		     " ORDER BY symbols DESC, kind = 'elf' DESC LIMIT 1");
	if (s) {
		sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
		rc = 1;
		if (sqlite3_step(s) == SQLITE_ROW) {
			*path = strdup((const char *)sqlite3_column_text(s, 0));
			*kind = strdup((const char *)sqlite3_column_text(s, 1));
			*size = (uint64_t)sqlite3_column_int64(s, 2);
			rc = *path && *kind ? 0 : -1;
		}
	}
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}

int sq_debuginfo_has_symbols(st_persist *p, const char *build_id)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = sq_prep(db, "SELECT 1 FROM debuginfo WHERE build_id = ? AND symbols = 1 LIMIT 1");
	if (s) {
		sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_ROW;
	}
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}

int sq_debuginfo_added_since(st_persist *p, const char *build_id, int64_t since)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = sq_prep(db, "SELECT 1 FROM debuginfo WHERE build_id = ? AND symbols = 1"
		     " AND added_at >= ? AND source <> 'debuginfod' LIMIT 1");
	if (s) {
		sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, since);
		rc = sqlite3_step(s) == SQLITE_ROW;
	}
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}

int sq_profile_dsos_set(st_persist *p, int64_t id, size_t n, const char *const *build_ids,
			const char *const *paths, const uint64_t *unresolved)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s = NULL;
	int rc = -1;
	size_t i;

	if (!db)
		return -1;
	if (sq_exec(db, "BEGIN IMMEDIATE") < 0)
		goto out;
	s = sq_prep(db, "DELETE FROM profile_dsos WHERE profile_id = ?");
	if (!s)
		goto rollback;
	sqlite3_bind_int64(s, 1, id);
	if (sq_step_done(db, s) < 0)
		goto rollback;
	sqlite3_finalize(s);
	s = sq_prep(db, "INSERT OR REPLACE INTO profile_dsos (profile_id, build_id, path, unresolved)"
		     " VALUES (?, ?, ?, ?)");
	if (!s)
		goto rollback;
	for (i = 0; i < n; i++) {
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_text(s, 2, build_ids[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, paths[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, (sqlite3_int64)unresolved[i]);
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

int sq_profiles_unresolved_in(st_persist *p, const char *build_id, int64_t **ids, size_t *n)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc = -1;

	*ids = NULL;
	*n = 0;
	if (!db)
		return -1;
	s = sq_prep(db, "SELECT DISTINCT d.profile_id FROM profile_dsos d JOIN profiles p"
		     " ON p.id = d.profile_id WHERE d.build_id = ? AND d.unresolved > 0"
		     " AND p.status = 2 ORDER BY d.profile_id");
	if (s) {
		int r;

		sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
		while ((r = sqlite3_step(s)) == SQLITE_ROW) {
			if (*n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				int64_t *grown = realloc(*ids, nc * sizeof(*grown));

				if (!grown)
					break;
				*ids = grown;
				cap = nc;
			}
			(*ids)[(*n)++] = sqlite3_column_int64(s, 0);
		}
		rc = r == SQLITE_DONE ? 0 : -1;
	}
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	if (rc < 0) {
		free(*ids);
		*ids = NULL;
		*n = 0;
	}
	return rc;
}

int sq_profile_dso_build_id(st_persist *p, int64_t id, const char *path, char *hex,
			    size_t hexlen)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = sq_prep(db, "SELECT build_id FROM profile_dsos WHERE profile_id = ? AND path = ?"
		     " ORDER BY build_id LIMIT 1");
	if (s) {
		int r;

		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
		r = sqlite3_step(s);
		rc = r == SQLITE_ROW ? 0 : r == SQLITE_DONE ? 1 : -1;
		if (rc == 0)
			snprintf(hex, hexlen, "%s", (const char *)sqlite3_column_text(s, 0));
	}
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}
