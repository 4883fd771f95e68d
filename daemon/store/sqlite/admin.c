/*
 * admin.c - the operator's side of the SQLite store: what retention needs
 * to choose profiles (on pooled connections), and the online backup and
 * compaction behind `perfhubd --backup` and `perfhubd --vacuum`, which
 * open the file themselves and can run next to a serving perfhubd (WAL
 * mode: readers never block the writer).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/sqlite/db.h"

#define SQ_ADMIN_BUSY_TIMEOUT_MS 60000	/* an ingest commit may hold the lock a while */

static sqlite3 *open_db(const char *path, int flags, char *err, size_t errlen)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, SQ_ADMIN_BUSY_TIMEOUT_MS);
	return db;
}

static int64_t pragma_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

int sq_used_bytes(st_persist *p, int64_t *bytes)
{
	sqlite3 *db = sq_conn_get(p);
	int64_t pages, free_pages, size;

	if (!db)
		return -1;

	/* one read transaction so the three figures agree */
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		sq_conn_put(p, db);
		return -1;
	}
	pages = pragma_int(db, "PRAGMA page_count");
	free_pages = pragma_int(db, "PRAGMA freelist_count");
	size = pragma_int(db, "PRAGMA page_size");
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sq_conn_put(p, db);
	if (pages < 0 || free_pages < 0 || size <= 0)
		return -1;
	*bytes = (pages - free_pages) * size;
	return 0;
}

int sq_expired(st_persist *p, int64_t before, int64_t *ids, size_t max, size_t *n)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc;

	*n = 0;
	if (!db)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT id FROM profiles WHERE status IN (?1, ?2)"
			       " AND uploaded_at < ?3 ORDER BY uploaded_at, id LIMIT ?4",
			       -1, &s, NULL) != SQLITE_OK) {
		sq_conn_put(p, db);
		return -1;
	}
	sqlite3_bind_int(s, 1, ST_READY);
	sqlite3_bind_int(s, 2, ST_FAILED);
	sqlite3_bind_int64(s, 3, before);
	sqlite3_bind_int64(s, 4, (sqlite3_int64)max);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW && *n < max)
		ids[(*n)++] = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

int sq_oldest_prunable(st_persist *p, int64_t *id)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc;

	if (!db)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT id FROM profiles WHERE status IN (?1, ?2)"
			       " AND id <> (SELECT id FROM profiles"
			       " ORDER BY uploaded_at DESC, id DESC LIMIT 1)"
			       " ORDER BY uploaded_at, id LIMIT 1", -1, &s, NULL) != SQLITE_OK) {
		sq_conn_put(p, db);
		return -1;
	}
	sqlite3_bind_int(s, 1, ST_READY);
	sqlite3_bind_int(s, 2, ST_FAILED);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

int sq_backup(const char *src, const char *dest, char *err, size_t errlen)
{
	sqlite3 *from, *to;
	sqlite3_backup *b;
	char *tmp;
	size_t n = strlen(dest) + 16;
	int rc;

	from = open_db(src, SQLITE_OPEN_READONLY, err, errlen);
	if (!from)
		return -1;
	tmp = malloc(n);
	if (!tmp) {
		sqlite3_close(from);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(tmp, n, "%s.partial", dest);
	unlink(tmp);
	to = open_db(tmp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, err, errlen);
	if (!to) {
		sqlite3_close(from);
		free(tmp);
		return -1;
	}
	b = sqlite3_backup_init(to, "main", from, "main");
	if (!b) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(to));
		rc = -1;
		goto out;
	}
	/* All pages in one step: the step holds one read transaction on the
	 * source, so the copy is one snapshot and a writer (WAL) never forces it
	 * to start over, as copying in slices would while ingests commit. */
	do {
		rc = sqlite3_backup_step(b, -1);
		if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
			sqlite3_sleep(50);
	} while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
	sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "backup: %s", sqlite3_errstr(rc));
		rc = -1;
		goto out;
	}
	/* the copy is a plain rollback-journal database, readable without its WAL */
	if (sqlite3_exec(to, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", tmp, sqlite3_errmsg(to));
		rc = -1;
		goto out;
	}
	rc = 0;
out:
	sqlite3_close(from);
	if (sqlite3_close(to) != SQLITE_OK && rc == 0) {
		snprintf(err, errlen, "%s: close failed", tmp);
		rc = -1;
	}
	if (rc == 0 && rename(tmp, dest) < 0) {
		snprintf(err, errlen, "rename %s to %s: %s", tmp, dest, strerror(errno));
		rc = -1;
	}
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

static int64_t file_size(const char *path, const char *suffix)
{
	char p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return stat(p, &st) == 0 ? (int64_t)st.st_size : 0;
}

int sq_vacuum(const char *path, int64_t *before, int64_t *after, char *err, size_t errlen)
{
	sqlite3 *db;
	int rc = -1;

	*before = file_size(path, "") + file_size(path, "-wal");
	db = open_db(path, SQLITE_OPEN_READWRITE, err, errlen);
	if (!db)
		return -1;
	if (sqlite3_exec(db, "VACUUM", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL) != SQLITE_OK)
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
	else
		rc = 0;
	sqlite3_close(db);
	*after = file_size(path, "") + file_size(path, "-wal");
	return rc;
}
