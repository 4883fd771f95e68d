/*
 * store-sqlite.c - the SQLite implementation of store.h.
 *
 * One database file in WAL mode. Readers and short control writes take a
 * connection from a pool; each profile writer has a connection of its own
 * and writes its rows in batched transactions. A profile's rows are only
 * visible once its status is 'ready' (set in the last transaction), and a
 * retried profile starts by deleting what an earlier attempt left.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>
#include <zstd.h>

#include "log.h"
#include "store/store.h"

#define ST_BUSY_TIMEOUT_MS 30000
#define ST_PENDING_MAX 65536	/* rows waiting for the next transaction, at most */
#define ST_POOL_MAX 64		/* idle reader connections kept */
#define ST_MAX_STACK_NODES (1u << 30)
#define ST_MAX_DEPTH_FOLD 8192	/* frames per folded stack */
#define ST_BLOCK_SAMPLES 4096	/* samples per stored block */
#define ST_BLOCK_MAGIC 0x42534850u	/* "PHSB" */
#define ST_BLOCK_ZLEVEL 1	/* zstd level: fast, the columns compress well anyway */
#define ST_CACHE_BYTES ((size_t)512 << 20)	/* per-profile tables kept in memory */
#define ST_MAX_FRAME_OFFSETS 1000000	/* unresolved offsets kept per profile */

typedef struct pcache pcache;
static void cache_clear(st_store *st);

struct st_store {
	char *path;
	pthread_mutex_t lock;
	sqlite3 *pool[ST_POOL_MAX];
	size_t nr_pool;
	/* read-only per-profile tables, most recently used first */
	pthread_mutex_t cache_lock;
	pcache *cache_head, *cache_tail;
	size_t cache_bytes, cache_max;
};

/* One aggregate row: the samples of one (event, thread, comm, stack). */
typedef struct agg_row {
	uint32_t event, pid, tid, comm, stack;
	uint64_t samples, period;
	uint64_t first_seq;	/* the first such sample, in file order (from 1) */
} agg_row;

/* agg_row interning: open addressing over row indexes (+1; 0 = empty) */
typedef struct agg_map {
	agg_row *rows;
	size_t n, cap;
	uint32_t *slots;
	size_t nr_slots;
} agg_map;

/* ---- schema and migrations ------------------------------------------- */

/* Each entry moves the schema from version i to i+1; never edit a shipped one. */
static const char *const migrations[] = {
	/* 1: profiles, jobs, records, stacks */
	"CREATE TABLE profiles ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT, sha256 TEXT NOT NULL UNIQUE, name TEXT,"
	" kind TEXT NOT NULL, spool_path TEXT NOT NULL, size INTEGER NOT NULL,"
	" uploaded_at INTEGER NOT NULL, status INTEGER NOT NULL, error TEXT,"
	" error_offset INTEGER, parse_ms INTEGER, hostname TEXT, first_ns INTEGER,"
	" last_ns INTEGER, nr_samples INTEGER, symbolized_pct REAL, header TEXT,"
	" events TEXT, records TEXT, samples_per_event TEXT, lost INTEGER);"
	"CREATE INDEX profiles_status ON profiles(status, id);"
	"CREATE INDEX profiles_host ON profiles(hostname);"
	"CREATE TABLE tags (profile_id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
	" PRIMARY KEY (profile_id, key, value)) WITHOUT ROWID;"
	"CREATE INDEX tags_kv ON tags(key, value);"
	"CREATE TABLE features (profile_id INTEGER NOT NULL, name TEXT NOT NULL, json TEXT,"
	" PRIMARY KEY (profile_id, name)) WITHOUT ROWID;"
	"CREATE TABLE events (profile_id INTEGER NOT NULL, idx INTEGER NOT NULL, name TEXT,"
	" type INTEGER, config INTEGER, sample_type INTEGER, period INTEGER, freq INTEGER,"
	" samples INTEGER, PRIMARY KEY (profile_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE record_counts (profile_id INTEGER NOT NULL, type TEXT NOT NULL,"
	" count INTEGER, PRIMARY KEY (profile_id, type)) WITHOUT ROWID;"
	"CREATE TABLE strings (profile_id INTEGER NOT NULL, id INTEGER NOT NULL, text TEXT,"
	" PRIMARY KEY (profile_id, id)) WITHOUT ROWID;"
	"CREATE TABLE frames (profile_id INTEGER NOT NULL, id INTEGER NOT NULL, name INTEGER,"
	" dso INTEGER, resolved INTEGER, PRIMARY KEY (profile_id, id)) WITHOUT ROWID;"
	/* the stack prefix tree: a node is a frame under its parent node */
	"CREATE TABLE stacks (profile_id INTEGER NOT NULL, id INTEGER NOT NULL,"
	" parent INTEGER NOT NULL, frame INTEGER NOT NULL,"
	" PRIMARY KEY (profile_id, id)) WITHOUT ROWID;"
	"CREATE TABLE comms (profile_id INTEGER NOT NULL, seq INTEGER NOT NULL, pid INTEGER,"
	" tid INTEGER, time INTEGER, comm INTEGER, PRIMARY KEY (profile_id, seq)) WITHOUT ROWID;"
	"CREATE TABLE maps (profile_id INTEGER NOT NULL, seq INTEGER NOT NULL, pid INTEGER,"
	" start INTEGER, len INTEGER, pgoff INTEGER, filename INTEGER, build_id TEXT,"
	" time INTEGER, PRIMARY KEY (profile_id, seq)) WITHOUT ROWID;"
	/* samples in file order; clustered by profile so a profile is one range */
	"CREATE TABLE samples (profile_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" event INTEGER NOT NULL, time INTEGER, cpu INTEGER, pid INTEGER, tid INTEGER,"
	" period INTEGER, weight INTEGER, stack INTEGER NOT NULL, comm INTEGER NOT NULL,"
	" PRIMARY KEY (profile_id, seq)) WITHOUT ROWID;",
	/* 2: frames remember whether `perfhub collapse --kernel` marks them "_[k]" */
	"ALTER TABLE frames ADD COLUMN kernel INTEGER NOT NULL DEFAULT 0;",
	/* 3: samples in compressed column blocks instead of a row each, with a
	 * per-profile aggregate that answers unfiltered queries; a generation
	 * per parse so readers can cache what a parse wrote. Profiles stored
	 * by v2 are parsed again from the spool. */
	"ALTER TABLE profiles ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE sample_blocks (id INTEGER PRIMARY KEY, profile_id INTEGER NOT NULL,"
	" seq INTEGER NOT NULL, nr INTEGER NOT NULL, min_time INTEGER NOT NULL,"
	" max_time INTEGER NOT NULL, data BLOB NOT NULL);"
	"CREATE UNIQUE INDEX sample_blocks_profile ON sample_blocks(profile_id, seq);"
	"CREATE TABLE sample_agg (profile_id INTEGER NOT NULL, event INTEGER NOT NULL,"
	" pid INTEGER NOT NULL, tid INTEGER NOT NULL, comm INTEGER NOT NULL,"
	" stack INTEGER NOT NULL, samples INTEGER NOT NULL, period INTEGER NOT NULL,"
	" first_seq INTEGER NOT NULL,"
	" PRIMARY KEY (profile_id, event, pid, tid, comm, stack)) WITHOUT ROWID;"
	/* file offsets seen for each unresolved frame (for symbolizing later) */
	"CREATE TABLE frame_offsets (profile_id INTEGER NOT NULL, frame INTEGER NOT NULL,"
	" dso_off INTEGER NOT NULL, PRIMARY KEY (profile_id, frame, dso_off)) WITHOUT ROWID;"
	"UPDATE profiles SET status = 0 WHERE status IN (1, 2);"
	"DROP TABLE samples;",
};
#define NR_MIGRATIONS (int)(sizeof(migrations) / sizeof(migrations[0]))

/* rows a parse writes (tags belong to the upload and stay) */
static const char *const profile_tables[] = {
	"features", "events", "record_counts", "strings", "frames",
	"stacks", "comms", "maps", "sample_blocks", "sample_agg", "frame_offsets",
};
#define NR_PROFILE_TABLES (sizeof(profile_tables) / sizeof(profile_tables[0]))

static int exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		log_warn("msg=\"sqlite\" sql=\"%.60s\" error=\"%s\"", sql, msg ? msg : "?");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static sqlite3 *conn_open(const char *path, char *err, size_t errlen)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		if (err)
			snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, ST_BUSY_TIMEOUT_MS);
	/* WAL: readers never block the writer; NORMAL sync is crash safe in WAL */
	if (exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
		     "PRAGMA foreign_keys=OFF; PRAGMA temp_store=MEMORY;") < 0) {
		if (err)
			snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

static int migrate(sqlite3 *db, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int version = 0, i;
	char sql[64];

	if (exec(db, "BEGIN IMMEDIATE") < 0)
		goto fail;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
		goto fail_rb;
	if (sqlite3_step(s) == SQLITE_ROW)
		version = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (version > NR_MIGRATIONS) {
		snprintf(err, errlen, "database schema version %d is newer than this perfhubd (%d)",
			 version, NR_MIGRATIONS);
		exec(db, "ROLLBACK");
		return -1;
	}
	for (i = version; i < NR_MIGRATIONS; i++) {
		if (exec(db, migrations[i]) < 0)
			goto fail_rb;
		log_info("msg=\"schema migrated\" version=%d", i + 1);
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", NR_MIGRATIONS);
	if (exec(db, sql) < 0 || exec(db, "COMMIT") < 0)
		goto fail_rb;
	return 0;
fail_rb:
	snprintf(err, errlen, "migration failed: %s", sqlite3_errmsg(db));
	exec(db, "ROLLBACK");
	return -1;
fail:
	snprintf(err, errlen, "migration failed: %s", sqlite3_errmsg(db));
	return -1;
}

st_store *st_open(const char *path, char *err, size_t errlen)
{
	st_store *st = calloc(1, sizeof(*st));
	sqlite3 *db;

	if (!st) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	st->path = strdup(path);
	pthread_mutex_init(&st->lock, NULL);
	pthread_mutex_init(&st->cache_lock, NULL);
	st->cache_max = ST_CACHE_BYTES;
	db = conn_open(path, err, errlen);
	if (!db || migrate(db, err, errlen) < 0) {
		sqlite3_close(db);
		st_close(st);
		return NULL;
	}
	st->pool[st->nr_pool++] = db;
	return st;
}

void st_close(st_store *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->nr_pool; i++)
		sqlite3_close(st->pool[i]);
	cache_clear(st);
	pthread_mutex_destroy(&st->cache_lock);
	pthread_mutex_destroy(&st->lock);
	free(st->path);
	free(st);
}

static sqlite3 *conn_get(st_store *st)
{
	sqlite3 *db = NULL;
	char err[256];

	pthread_mutex_lock(&st->lock);
	if (st->nr_pool)
		db = st->pool[--st->nr_pool];
	pthread_mutex_unlock(&st->lock);
	if (!db) {
		db = conn_open(st->path, err, sizeof(err));
		if (!db)
			log_warn("msg=\"sqlite open\" error=\"%s\"", err);
	}
	return db;
}

static void conn_put(st_store *st, sqlite3 *db)
{
	if (!db)
		return;
	pthread_mutex_lock(&st->lock);
	if (st->nr_pool < ST_POOL_MAX) {
		st->pool[st->nr_pool++] = db;
		db = NULL;
	}
	pthread_mutex_unlock(&st->lock);
	sqlite3_close(db);
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		log_warn("msg=\"sqlite prepare\" sql=\"%.80s\" error=\"%s\"", sql, sqlite3_errmsg(db));
		return NULL;
	}
	return s;
}

static int step_done(sqlite3 *db, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		log_warn("msg=\"sqlite step\" error=\"%s\"", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

int st_ping(st_store *st)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = prep(db, "SELECT count(*) FROM profiles");
	if (s && sqlite3_step(s) == SQLITE_ROW)
		rc = 0;
	sqlite3_finalize(s);
	conn_put(st, db);
	return rc;
}

/* ---- profiles ---------------------------------------------------------- */

static const char *const status_names[] = { "queued", "parsing", "ready", "failed" };

const char *st_status_name(int status)
{
	return status >= 0 && status < 4 ? status_names[status] : "unknown";
}

int st_status_parse(const char *name)
{
	int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(name, status_names[i]))
			return i;
	return -1;
}

int st_profile_add(st_store *st, const st_new_profile *p, int64_t *id, int *existed)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s = NULL;
	int rc = -1;
	size_t i;

	*existed = 0;
	if (!db)
		return -1;
	if (exec(db, "BEGIN IMMEDIATE") < 0)
		goto out;
	s = prep(db, "SELECT id FROM profiles WHERE sha256 = ?");
	if (!s)
		goto rollback;
	sqlite3_bind_text(s, 1, p->sha256, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW) {
		*id = sqlite3_column_int64(s, 0);
		*existed = 1;
		sqlite3_finalize(s);
		exec(db, "COMMIT");
		rc = 0;
		goto out;
	}
	sqlite3_finalize(s);
	s = prep(db, "INSERT INTO profiles (sha256, name, kind, spool_path, size, uploaded_at,"
		     " status) VALUES (?, ?, ?, ?, ?, ?, 0)");
	if (!s)
		goto rollback;
	sqlite3_bind_text(s, 1, p->sha256, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, p->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, p->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, p->spool_path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)p->size);
	sqlite3_bind_int64(s, 6, (sqlite3_int64)time(NULL));
	if (step_done(db, s) < 0)
		goto rollback;
	*id = sqlite3_last_insert_rowid(db);
	sqlite3_finalize(s);
	s = prep(db, "INSERT OR IGNORE INTO tags (profile_id, key, value) VALUES (?, ?, ?)");
	if (!s)
		goto rollback;
	for (i = 0; i < p->nr_tags; i++) {
		sqlite3_bind_int64(s, 1, *id);
		sqlite3_bind_text(s, 2, p->tag_keys[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, p->tag_values[i], -1, SQLITE_STATIC);
		if (step_done(db, s) < 0)
			goto rollback;
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	s = NULL;
	if (exec(db, "COMMIT") < 0)
		goto rollback;
	rc = 0;
	goto out;
rollback:
	sqlite3_finalize(s);
	exec(db, "ROLLBACK");
out:
	conn_put(st, db);
	return rc;
}

/* Runs an UPDATE with up to 4 bound values; returns changed rows or -1. */
static int update(st_store *st, const char *sql, int64_t id, const char *text, int64_t a, int64_t b)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = prep(db, sql);
	if (s) {
		int n = sqlite3_bind_parameter_count(s);
		sqlite3_bind_int64(s, 1, id);
		if (n >= 2)
			sqlite3_bind_text(s, 2, text, -1, SQLITE_STATIC);
		if (n >= 3)
			sqlite3_bind_int64(s, 3, a);
		if (n >= 4)
			sqlite3_bind_int64(s, 4, b);
		if (step_done(db, s) == 0)
			rc = sqlite3_changes(db);
	}
	sqlite3_finalize(s);
	conn_put(st, db);
	return rc;
}

int st_profile_by_sha(st_store *st, const char *sha256, int64_t *id)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = prep(db, "SELECT id FROM profiles WHERE sha256 = ?");
	if (s) {
		sqlite3_bind_text(s, 1, sha256, -1, SQLITE_STATIC);
		rc = 1;
		if (sqlite3_step(s) == SQLITE_ROW) {
			*id = sqlite3_column_int64(s, 0);
			rc = 0;
		}
	}
	sqlite3_finalize(s);
	conn_put(st, db);
	return rc;
}

int st_profile_claim_next(st_store *st, int64_t *id, char **spool_path, char **kind)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = prep(db, "UPDATE profiles SET status = 1 WHERE id = (SELECT id FROM profiles"
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
	conn_put(st, db);
	return rc;
}

int st_profile_fail(st_store *st, int64_t id, const char *msg, int64_t offset, int64_t parse_ms)
{
	return update(st, "UPDATE profiles SET status = 3, error = ?2, error_offset = ?3,"
			  " parse_ms = ?4 WHERE id = ?1", id, msg, offset, parse_ms) < 0 ? -1 : 0;
}

int st_profile_requeue(st_store *st, int64_t id)
{
	return update(st, "UPDATE profiles SET status = 0 WHERE id = ?1 AND status = 1", id,
		      NULL, 0, 0) < 0 ? -1 : 0;
}

int st_requeue_parsing(st_store *st, int *count)
{
	int rc = update(st, "UPDATE profiles SET status = 0 WHERE status = 1 AND ?1 = ?1", 0,
			NULL, 0, 0);
	*count = rc < 0 ? 0 : rc;
	return rc < 0 ? -1 : 0;
}

static int delete_rows(sqlite3 *db, int64_t id)
{
	char sql[128];
	size_t i;

	for (i = 0; i < NR_PROFILE_TABLES; i++) {
		sqlite3_stmt *s;
		int rc;

		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE profile_id = ?", profile_tables[i]);
		s = prep(db, sql);
		if (!s)
			return -1;
		sqlite3_bind_int64(s, 1, id);
		rc = step_done(db, s);
		sqlite3_finalize(s);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int st_profile_delete(st_store *st, int64_t id, char **spool_path)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s = NULL;
	int rc = -1;

	*spool_path = NULL;
	if (!db)
		return -1;
	if (exec(db, "BEGIN IMMEDIATE") < 0)
		goto out;
	s = prep(db, "SELECT spool_path FROM profiles WHERE id = ?");
	if (!s)
		goto rollback;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) != SQLITE_ROW) {
		rc = 1;
		goto rollback;
	}
	*spool_path = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	s = prep(db, "DELETE FROM profiles WHERE id = ?");
	if (!s)
		goto rollback;
	sqlite3_bind_int64(s, 1, id);
	if (step_done(db, s) < 0 || delete_rows(db, id) < 0)
		goto rollback;
	sqlite3_finalize(s);
	s = prep(db, "DELETE FROM tags WHERE profile_id = ?");
	if (!s)
		goto rollback;
	sqlite3_bind_int64(s, 1, id);
	if (step_done(db, s) < 0)
		goto rollback;
	sqlite3_finalize(s);
	s = NULL;
	if (exec(db, "COMMIT") < 0)
		goto rollback;
	rc = 0;
	goto out;
rollback:
	sqlite3_finalize(s);
	exec(db, "ROLLBACK");
	if (rc != 1) {
		free(*spool_path);
		*spool_path = NULL;
	}
out:
	conn_put(st, db);
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
	sqlite3_stmt *s = prep(db, "SELECT key, value FROM tags WHERE profile_id = ? ORDER BY key");

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

json_t *st_profile_json(st_store *st, int64_t id, int *notfound)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s;
	json_t *o = NULL;

	*notfound = 0;
	if (!db)
		return NULL;
	s = prep(db, "SELECT " PROFILE_COLS " FROM profiles WHERE id = ?");
	if (s) {
		sqlite3_bind_int64(s, 1, id);
		if (sqlite3_step(s) == SQLITE_ROW)
			o = profile_row(db, s, 1);
		else
			*notfound = 1;
	}
	sqlite3_finalize(s);
	conn_put(st, db);
	return o;
}

json_t *st_profile_list_json(st_store *st, const st_list_filter *f)
{
	static const char where[] =
		" WHERE (?1 < 0 OR status = ?1) AND (?2 IS NULL OR hostname = ?2)"
		" AND (?3 IS NULL OR EXISTS (SELECT 1 FROM tags t WHERE t.profile_id = profiles.id"
		" AND t.key = ?3 AND t.value = ?4))"
		" AND (?5 = 0 OR uploaded_at >= ?5) AND (?6 = 0 OR uploaded_at < ?6)";
	sqlite3 *db = conn_get(st);
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
		s = prep(db, sql);
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
	conn_put(st, db);
	return out;
}

int st_counts_get(st_store *st, st_counts *c)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (!db)
		return -1;
	s = prep(db, "SELECT status, count(*) FROM profiles GROUP BY status");
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
	s = prep(db, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()");
	if (s && sqlite3_step(s) == SQLITE_ROW)
		c->db_bytes = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	conn_put(st, db);
	return rc;
}

/* ---- interning tables for the writer ------------------------------------ */

/* open addressing, u64 key -> u32 value (0 = empty slot; keys never 0) */
typedef struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
} u64map;

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static int u64map_grow(u64map *m)
{
	size_t ncap = m->cap ? 2 * m->cap : 4096, i;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint32_t *nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;
		if (!m->keys[i])
			continue;
		for (j = mix64(m->keys[i]) & (ncap - 1); nk[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

/* Slot for key: *found = 1 if present. */
static size_t u64map_slot(u64map *m, uint64_t key, int *found)
{
	size_t j;

	for (j = mix64(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key) {
			*found = 1;
			return j;
		}
	*found = 0;
	return j;
}

typedef struct strmap {	/* string -> id, strings owned */
	char **strs;
	uint64_t *hashes;
	uint32_t *ids;
	size_t cap, n;
} strmap;

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h | 1;
}

static int strmap_grow(strmap *m)
{
	size_t ncap = m->cap ? 2 * m->cap : 1024, i;
	char **ns = calloc(ncap, sizeof(*ns));
	uint64_t *nh = calloc(ncap, sizeof(*nh));
	uint32_t *ni = calloc(ncap, sizeof(*ni));

	if (!ns || !nh || !ni) {
		free(ns);
		free(nh);
		free(ni);
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;
		if (!m->strs[i])
			continue;
		for (j = m->hashes[i] & (ncap - 1); ns[j]; j = (j + 1) & (ncap - 1))
			;
		ns[j] = m->strs[i];
		nh[j] = m->hashes[i];
		ni[j] = m->ids[i];
	}
	free(m->strs);
	free(m->hashes);
	free(m->ids);
	m->strs = ns;
	m->hashes = nh;
	m->ids = ni;
	m->cap = ncap;
	return 0;
}

static void strmap_free(strmap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->strs[i]);
	free(m->strs);
	free(m->hashes);
	free(m->ids);
}

/* ---- aggregate rows ------------------------------------------------------ */

static uint64_t agg_hash(uint32_t event, uint32_t pid, uint32_t tid, uint32_t comm,
			 uint32_t stack)
{
	return mix64(((uint64_t)event << 32 | pid) ^ mix64((uint64_t)tid << 32 | comm) ^
		     ((uint64_t)stack * 0x9e3779b97f4a7c15ULL));
}

static int agg_grow_slots(agg_map *m)
{
	size_t n = m->nr_slots ? 2 * m->nr_slots : 4096, i;
	uint32_t *sl = calloc(n, sizeof(*sl));

	if (!sl)
		return -1;
	for (i = 0; i < m->n; i++) {
		const agg_row *r = &m->rows[i];
		size_t j = agg_hash(r->event, r->pid, r->tid, r->comm, r->stack) & (n - 1);
		while (sl[j])
			j = (j + 1) & (n - 1);
		sl[j] = (uint32_t)i + 1;
	}
	free(m->slots);
	m->slots = sl;
	m->nr_slots = n;
	return 0;
}

/* The row for this key, added with zero counts when new; NULL out of memory. */
static agg_row *agg_get(agg_map *m, uint32_t event, uint32_t pid, uint32_t tid, uint32_t comm,
			uint32_t stack)
{
	size_t j;
	agg_row *r;

	if (2 * (m->n + 1) > m->nr_slots && (m->n >= UINT32_MAX - 1 || agg_grow_slots(m) < 0))
		return NULL;
	for (j = agg_hash(event, pid, tid, comm, stack) & (m->nr_slots - 1); m->slots[j];
	     j = (j + 1) & (m->nr_slots - 1)) {
		r = &m->rows[m->slots[j] - 1];
		if (r->stack == stack && r->tid == tid && r->pid == pid && r->comm == comm &&
		    r->event == event)
			return r;
	}
	if (m->n == m->cap) {
		size_t ncap = m->cap ? 2 * m->cap : 1024;
		agg_row *nr = realloc(m->rows, ncap * sizeof(*nr));
		if (!nr)
			return NULL;
		m->rows = nr;
		m->cap = ncap;
	}
	r = &m->rows[m->n++];
	memset(r, 0, sizeof(*r));
	r->event = event;
	r->pid = pid;
	r->tid = tid;
	r->comm = comm;
	r->stack = stack;
	m->slots[j] = (uint32_t)m->n;
	return r;
}

static void agg_free(agg_map *m)
{
	free(m->rows);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* ---- sample blocks ----------------------------------------------------------
 * Up to ST_BLOCK_SAMPLES samples, column by column, little-endian, zstd
 * compressed: u32 magic, u32 n, then n times each of: u64 time (delta from
 * the previous sample's), u32 event, cpu, pid, tid, u64 period, weight, u32
 * stack, comm. A row also keeps min/max time so time-range reads skip blocks.
 */
typedef struct sblock {
	uint32_t n;
	uint64_t time[ST_BLOCK_SAMPLES], period[ST_BLOCK_SAMPLES], weight[ST_BLOCK_SAMPLES];
	uint32_t event[ST_BLOCK_SAMPLES], cpu[ST_BLOCK_SAMPLES], pid[ST_BLOCK_SAMPLES],
		 tid[ST_BLOCK_SAMPLES], stack[ST_BLOCK_SAMPLES], comm[ST_BLOCK_SAMPLES];
} sblock;

#define SBLOCK_ROW_BYTES 48
#define SBLOCK_RAW_MAX (8 + (size_t)ST_BLOCK_SAMPLES * SBLOCK_ROW_BYTES)

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	return p + 4;
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	return put32(put32(p, (uint32_t)v), (uint32_t)(v >> 32));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* OUT: raw bytes (SBLOCK_RAW_MAX room); returns their length. */
static size_t sblock_encode(const sblock *b, uint8_t *raw)
{
	uint8_t *p = put32(put32(raw, ST_BLOCK_MAGIC), b->n);
	const uint32_t *u32cols[] = { b->event, b->cpu, b->pid, b->tid };
	uint64_t prev = 0;
	uint32_t i, c;

	for (i = 0; i < b->n; i++) {
		p = put64(p, b->time[i] - prev);
		prev = b->time[i];
	}
	for (c = 0; c < 4; c++)
		for (i = 0; i < b->n; i++)
			p = put32(p, u32cols[c][i]);
	for (i = 0; i < b->n; i++)
		p = put64(p, b->period[i]);
	for (i = 0; i < b->n; i++)
		p = put64(p, b->weight[i]);
	for (i = 0; i < b->n; i++)
		p = put32(p, b->stack[i]);
	for (i = 0; i < b->n; i++)
		p = put32(p, b->comm[i]);
	return (size_t)(p - raw);
}

/* Decompresses and checks a stored block; raw has SBLOCK_RAW_MAX bytes of
 * room. -1 when the blob is not a block of `nr` samples. */
static int sblock_decode(const void *blob, size_t len, int64_t nr, uint8_t *raw, sblock *b)
{
	unsigned long long want;
	size_t got, i, n;
	const uint8_t *p;
	uint64_t t = 0;

	if (nr <= 0 || nr > ST_BLOCK_SAMPLES || !blob)
		return -1;
	n = (size_t)nr;
	want = ZSTD_getFrameContentSize(blob, len);
	if (want != 8 + n * SBLOCK_ROW_BYTES)
		return -1;
	got = ZSTD_decompress(raw, SBLOCK_RAW_MAX, blob, len);
	if (ZSTD_isError(got) || got != want || get32(raw) != ST_BLOCK_MAGIC || get32(raw + 4) != n)
		return -1;
	b->n = (uint32_t)n;
	p = raw + 8;
	for (i = 0; i < n; i++, p += 8)
		b->time[i] = t += get64(p);
	for (i = 0; i < n; i++, p += 4)
		b->event[i] = get32(p);
	for (i = 0; i < n; i++, p += 4)
		b->cpu[i] = get32(p);
	for (i = 0; i < n; i++, p += 4)
		b->pid[i] = get32(p);
	for (i = 0; i < n; i++, p += 4)
		b->tid[i] = get32(p);
	for (i = 0; i < n; i++, p += 8)
		b->period[i] = get64(p);
	for (i = 0; i < n; i++, p += 8)
		b->weight[i] = get64(p);
	for (i = 0; i < n; i++, p += 4)
		b->stack[i] = get32(p);
	for (i = 0; i < n; i++, p += 4)
		b->comm[i] = get32(p);
	return 0;
}

/* ---- the writer ---------------------------------------------------------- */

enum {
	W_STRING, W_FRAME, W_STACK, W_BLOCK, W_AGG, W_FOFF, W_COMM, W_MAP, W_FEATURE, W_EVENT,
	W_RECORD, W_NR_STMTS
};

static const char *const writer_sql[W_NR_STMTS] = {
	[W_STRING] = "INSERT INTO strings (profile_id, id, text) VALUES (?, ?, ?)",
	[W_FRAME] = "INSERT INTO frames (profile_id, id, name, dso, resolved, kernel)"
		    " VALUES (?, ?, ?, ?, ?, ?)",
	[W_STACK] = "INSERT INTO stacks (profile_id, id, parent, frame) VALUES (?, ?, ?, ?)",
	[W_BLOCK] = "INSERT INTO sample_blocks (profile_id, seq, nr, min_time, max_time, data)"
		    " VALUES (?, ?, ?, ?, ?, ?)",
	[W_AGG] = "INSERT INTO sample_agg (profile_id, event, pid, tid, comm, stack, samples,"
		  " period, first_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[W_FOFF] = "INSERT OR IGNORE INTO frame_offsets (profile_id, frame, dso_off) VALUES (?, ?, ?)",
	[W_COMM] = "INSERT INTO comms (profile_id, seq, pid, tid, time, comm) VALUES (?, ?, ?, ?, ?, ?)",
	[W_MAP] = "INSERT INTO maps (profile_id, seq, pid, start, len, pgoff, filename, build_id,"
		  " time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[W_FEATURE] = "INSERT OR REPLACE INTO features (profile_id, name, json) VALUES (?, ?, ?)",
	[W_EVENT] = "INSERT OR REPLACE INTO events (profile_id, idx, name, type, config,"
		    " sample_type, period, freq, samples) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[W_RECORD] = "INSERT OR REPLACE INTO record_counts (profile_id, type, count) VALUES (?, ?, ?)",
};

/*
 * Rows wait in memory and go to the database in one short transaction per
 * sample block (or when ST_PENDING_MAX rows wait): parsing, symbolizing and
 * compressing happen outside it, so with several workers the write lock is
 * held only while rows are inserted, never while a block is parsed.
 */
#define PR_VALS 8

typedef struct pend_row {
	uint8_t which;		/* W_* */
	uint8_t nvals;		/* parameters after profile_id */
	uint8_t null_mask;	/* parameters bound as NULL */
	uint8_t text_mask;	/* parameters bound from text[], in order */
	uint8_t owned;		/* text[] to free */
	int64_t v[PR_VALS];
	char *text[2];
} pend_row;

struct st_writer {
	st_store *st;
	sqlite3 *db;
	int64_t id;
	sqlite3_stmt *stmt[W_NR_STMTS];
	uint64_t nr_samples, nr_comms, nr_maps;
	strmap strings;
	uint32_t next_string;
	u64map frames;		/* name << 32 | dso -> frame id */
	uint32_t next_frame;
	u64map stacks;		/* parent << 32 | frame -> node id */
	uint32_t next_stack;
	pend_row *pend;		/* rows not written yet */
	size_t nr_pend, cap_pend;
	sblock *blk;		/* the block being filled */
	uint64_t nr_blocks, nr_frame_offsets;
	ZSTD_CCtx *zc;
	uint8_t *raw, *zbuf;
	size_t zcap;
	agg_map agg;		/* (event, pid, tid, comm, stack) -> counts */
	agg_map foffs;		/* (frame, offset) pairs written: pid = frame,
				   tid:comm = the offset */
	st_write_times times;
	int failed;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pend_clear(st_writer *w)
{
	size_t i;

	for (i = 0; i < w->nr_pend; i++)
		if (w->pend[i].owned) {
			free(w->pend[i].text[0]);
			free(w->pend[i].text[1]);
		}
	w->nr_pend = 0;
}

static int w_step(st_writer *w, int which)
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

/* Inserts the waiting rows (inside the caller's transaction). */
static int pend_write(st_writer *w)
{
	size_t i;

	for (i = 0; i < w->nr_pend; i++) {
		const pend_row *p = &w->pend[i];
		sqlite3_stmt *s = w->stmt[p->which];
		unsigned k, t = 0;

		sqlite3_bind_int64(s, 1, w->id);
		for (k = 0; k < p->nvals; k++) {
			if (p->text_mask & (1u << k))
				sqlite3_bind_text(s, (int)k + 2, p->text[t++], -1, SQLITE_STATIC);
			else if (p->null_mask & (1u << k))
				sqlite3_bind_null(s, (int)k + 2);
			else
				sqlite3_bind_int64(s, (int)k + 2, p->v[k]);
		}
		if (w_step(w, p->which) < 0)
			return -1;
	}
	pend_clear(w);
	return 0;
}

/* A transaction: BEGIN IMMEDIATE waits for the write lock (busy timeout). */
static int w_begin(st_writer *w)
{
	uint64_t t0 = now_ns();

	if (exec(w->db, "BEGIN IMMEDIATE") < 0) {
		w->failed = 1;
		return -1;
	}
	w->times.lock_ns += now_ns() - t0;
	return 0;
}

static int w_end(st_writer *w)
{
	uint64_t t0 = now_ns();

	if (exec(w->db, "COMMIT") < 0) {
		exec(w->db, "ROLLBACK");
		w->failed = 1;
		return -1;
	}
	w->times.commits++;
	w->times.commit_ns += now_ns() - t0;
	return 0;
}

static void w_rollback(st_writer *w)
{
	if (!sqlite3_get_autocommit(w->db))
		exec(w->db, "ROLLBACK");
}

/* The waiting rows and (block != 0) the bound block row, in a transaction. */
static int w_flush(st_writer *w, int block)
{
	uint64_t t0;

	if (w->failed)
		return -1;
	if (!w->nr_pend && !block)
		return 0;
	if (w_begin(w) < 0)
		return -1;
	t0 = now_ns();
	if (pend_write(w) < 0 || (block && w_step(w, W_BLOCK) < 0)) {
		w_rollback(w);
		return -1;
	}
	w->times.insert_ns += now_ns() - t0;
	return w_end(w);
}

/* A row to write with the next flush; NULL (failed) out of memory. */
static pend_row *pend_add(st_writer *w, int which, unsigned nvals)
{
	pend_row *p;

	if (w->failed)
		return NULL;
	if (w->nr_pend >= ST_PENDING_MAX && w_flush(w, 0) < 0)
		return NULL;
	if (w->nr_pend == w->cap_pend) {
		size_t nc = w->cap_pend ? 2 * w->cap_pend : 1024;
		pend_row *np = realloc(w->pend, nc * sizeof(*np));

		if (!np) {
			w->failed = 1;
			return NULL;
		}
		w->pend = np;
		w->cap_pend = nc;
	}
	p = &w->pend[w->nr_pend++];
	memset(p, 0, sizeof(*p));
	p->which = (uint8_t)which;
	p->nvals = (uint8_t)nvals;
	return p;
}

/* Parameter k is text t (a copy when `copy`, else it must outlive the flush). */
static int pend_text(st_writer *w, pend_row *p, unsigned k, unsigned t, const char *text, int copy)
{
	if (!text) {
		p->null_mask |= (uint8_t)(1u << k);
		return 0;
	}
	p->text_mask |= (uint8_t)(1u << k);
	if (!copy) {
		p->text[t] = (char *)text;
		return 0;
	}
	p->owned = 1;
	if (!(p->text[t] = strdup(text))) {
		w->failed = 1;
		return -1;
	}
	return 0;
}

st_writer *st_writer_begin(st_store *st, int64_t id)
{
	st_writer *w = calloc(1, sizeof(*w));
	char err[256];
	int i;

	if (!w)
		return NULL;
	w->st = st;
	w->id = id;
	w->db = conn_open(st->path, err, sizeof(err));
	if (!w->db) {
		log_warn("msg=\"sqlite open\" error=\"%s\"", err);
		free(w);
		return NULL;
	}
	/* what an earlier attempt left goes first */
	if (exec(w->db, "BEGIN IMMEDIATE") < 0)
		goto fail;
	if (delete_rows(w->db, id) < 0 || exec(w->db, "COMMIT") < 0)
		goto fail;
	for (i = 0; i < W_NR_STMTS; i++)
		if (!(w->stmt[i] = prep(w->db, writer_sql[i])))
			goto fail;
	if (u64map_grow(&w->frames) < 0 || u64map_grow(&w->stacks) < 0 ||
	    strmap_grow(&w->strings) < 0)
		goto fail;
	w->zcap = ZSTD_compressBound(SBLOCK_RAW_MAX);
	w->blk = calloc(1, sizeof(*w->blk));
	w->raw = malloc(SBLOCK_RAW_MAX);
	w->zbuf = malloc(w->zcap);
	w->zc = ZSTD_createCCtx();
	if (!w->blk || !w->raw || !w->zbuf || !w->zc)
		goto fail;
	return w;
fail:
	st_writer_abort(w);
	return NULL;
}

static void writer_free(st_writer *w)
{
	int i;

	for (i = 0; i < W_NR_STMTS; i++)
		sqlite3_finalize(w->stmt[i]);
	sqlite3_close(w->db);
	pend_clear(w);
	free(w->pend);
	strmap_free(&w->strings);
	free(w->frames.keys);
	free(w->frames.vals);
	free(w->stacks.keys);
	free(w->stacks.vals);
	free(w->blk);
	free(w->raw);
	free(w->zbuf);
	ZSTD_freeCCtx(w->zc);
	agg_free(&w->agg);
	agg_free(&w->foffs);
	free(w);
}

void st_writer_abort(st_writer *w)
{
	if (!w)
		return;
	w_rollback(w);
	/* earlier blocks were committed: take them away again */
	if (exec(w->db, "BEGIN IMMEDIATE") == 0) {
		if (delete_rows(w->db, w->id) == 0)
			exec(w->db, "COMMIT");
		else
			exec(w->db, "ROLLBACK");
	}
	writer_free(w);
}

uint32_t st_writer_string(st_writer *w, const char *s)
{
	strmap *m = &w->strings;
	uint64_t h;
	size_t j;
	pend_row *p;

	if (!s)
		return 0;
	h = hash_str(s);
	for (j = h & (m->cap - 1); m->strs[j]; j = (j + 1) & (m->cap - 1))
		if (m->hashes[j] == h && !strcmp(m->strs[j], s))
			return m->ids[j];
	if (2 * (m->n + 1) > m->cap) {
		if (strmap_grow(m) < 0)
			return 0;
		for (j = h & (m->cap - 1); m->strs[j]; j = (j + 1) & (m->cap - 1))
			;
	}
	if (!(m->strs[j] = strdup(s)))
		return 0;
	m->hashes[j] = h;
	m->ids[j] = ++w->next_string;
	m->n++;
	/* the map's copy lives as long as the writer */
	if (!(p = pend_add(w, W_STRING, 2)))
		return 0;
	p->v[0] = m->ids[j];
	pend_text(w, p, 1, 0, m->strs[j], 0);
	return m->ids[j];
}

/* Interns key in map m; a new entry gets ++*next and *added = 1. */
static uint32_t intern(u64map *m, uint64_t key, uint32_t *next, int *added)
{
	int found;
	size_t j;

	*added = 0;
	if (2 * (m->n + 1) > m->cap && u64map_grow(m) < 0)
		return 0;
	j = u64map_slot(m, key, &found);
	if (found)
		return m->vals[j];
	if (*next >= ST_MAX_STACK_NODES)
		return 0;
	m->keys[j] = key;
	m->vals[j] = ++*next;
	m->n++;
	*added = 1;
	return m->vals[j];
}

uint32_t st_writer_frame(st_writer *w, const char *name, const char *dso, int resolved,
			 int kernel)
{
	uint32_t n = st_writer_string(w, name), d = st_writer_string(w, dso), id;
	pend_row *p;
	int added;

	if (!n)
		return 0;
	/* the low bit keeps the key non-zero and separates resolved names */
	id = intern(&w->frames, ((uint64_t)n << 32 | d) << 1 | 1, &w->next_frame, &added);
	if (!added)
		return id;
	if (!(p = pend_add(w, W_FRAME, 5)))
		return 0;
	p->v[0] = id;
	p->v[1] = n;
	p->v[2] = d;
	if (!d)
		p->null_mask |= 1u << 2;
	p->v[3] = resolved ? 1 : 0;
	p->v[4] = kernel ? 1 : 0;
	return id;
}

uint32_t st_writer_stack(st_writer *w, uint32_t parent, uint32_t frame)
{
	pend_row *p;
	uint32_t id;
	int added;

	if (!frame)
		return 0;
	id = intern(&w->stacks, (uint64_t)parent << 32 | frame, &w->next_stack, &added);
	if (!added)
		return id;
	if (!(p = pend_add(w, W_STACK, 3)))
		return 0;
	p->v[0] = id;
	p->v[1] = parent;
	p->v[2] = frame;
	return id;
}

/* Writes the filled block (if any) as one row, with the rows waiting. */
static int flush_block(st_writer *w)
{
	sblock *b = w->blk;
	sqlite3_stmt *s = w->stmt[W_BLOCK];
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t raw_len, z;
	uint32_t i;
	uint64_t t0 = now_ns();

	if (!b->n)
		return w_flush(w, 0);
	for (i = 0; i < b->n; i++) {
		if (b->time[i] < lo)
			lo = b->time[i];
		if (b->time[i] > hi)
			hi = b->time[i];
	}
	raw_len = sblock_encode(b, w->raw);
	z = ZSTD_compressCCtx(w->zc, w->zbuf, w->zcap, w->raw, raw_len, ST_BLOCK_ZLEVEL);
	if (ZSTD_isError(z)) {
		log_warn("msg=\"zstd\" profile=%lld error=\"%s\"", (long long)w->id,
			 ZSTD_getErrorName(z));
		w->failed = 1;
		return -1;
	}
	sqlite3_bind_int64(s, 1, w->id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)++w->nr_blocks);
	sqlite3_bind_int64(s, 3, b->n);
	/* times are stored as signed 64-bit; the comparison in queries is too */
	sqlite3_bind_int64(s, 4, (sqlite3_int64)lo);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)hi);
	sqlite3_bind_blob(s, 6, w->zbuf, (int)z, SQLITE_STATIC);
	b->n = 0;
	w->times.compress_ns += now_ns() - t0;
	w->times.blocks++;
	/* a transaction per block: the write lock is held for its inserts only */
	return w_flush(w, 1);
}

int st_writer_sample(st_writer *w, const st_sample *x)
{
	return st_writer_sample_hint(w, x, NULL);
}

int st_writer_sample_hint(st_writer *w, const st_sample *x, uint32_t *agg_hint)
{
	sblock *b = w->blk;
	agg_row *a = NULL;

	if (w->failed)
		return -1;
	if (agg_hint && *agg_hint && *agg_hint <= w->agg.n) {
		a = &w->agg.rows[*agg_hint - 1];
		if (a->stack != x->stack || a->tid != x->tid || a->pid != x->pid ||
		    a->comm != x->comm || a->event != x->event)
			a = NULL;
	}
	if (!a)
		a = agg_get(&w->agg, x->event, x->pid, x->tid, x->comm, x->stack);
	if (!a) {
		w->failed = 1;
		return -1;
	}
	if (agg_hint)
		*agg_hint = (uint32_t)(a - w->agg.rows) + 1;
	++w->nr_samples;
	if (!a->samples)
		a->first_seq = w->nr_samples;
	a->samples++;
	a->period += x->period;
	b->time[b->n] = x->time;
	b->event[b->n] = x->event;
	b->cpu[b->n] = x->cpu;
	b->pid[b->n] = x->pid;
	b->tid[b->n] = x->tid;
	b->period[b->n] = x->period;
	b->weight[b->n] = x->weight;
	b->stack[b->n] = x->stack;
	b->comm[b->n] = x->comm;
	if (++b->n == ST_BLOCK_SAMPLES)
		return flush_block(w);
	return 0;
}

int st_writer_frame_offset(st_writer *w, uint32_t frame, uint64_t dso_off)
{
	agg_row *seen;
	pend_row *p;

	if (!frame || w->nr_frame_offsets >= ST_MAX_FRAME_OFFSETS)
		return 0;
	/* each pair once: the same frames come back with every new stack */
	seen = agg_get(&w->foffs, 0, frame, (uint32_t)(dso_off >> 32), (uint32_t)dso_off, 0);
	if (!seen) {
		w->failed = 1;
		return -1;
	}
	if (seen->samples++)
		return 0;
	w->nr_frame_offsets++;
	if (!(p = pend_add(w, W_FOFF, 2)))
		return -1;
	p->v[0] = frame;
	p->v[1] = (int64_t)dso_off;
	return 0;
}

/* The primary key's order: rows are appended to the table's b-tree. */
static int cmp_agg_row(const void *x, const void *y)
{
	const agg_row *a = x, *b = y;

	if (a->event != b->event)
		return a->event < b->event ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	return 0;
}

/* The aggregate, written once at the end (no more lookups: sorted in place). */
static int write_agg(st_writer *w)
{
	sqlite3_stmt *s = w->stmt[W_AGG];
	size_t i;

	if (w->agg.n)
		qsort(w->agg.rows, w->agg.n, sizeof(*w->agg.rows), cmp_agg_row);
	for (i = 0; i < w->agg.n; i++) {
		const agg_row *r = &w->agg.rows[i];
		sqlite3_bind_int64(s, 1, w->id);
		sqlite3_bind_int64(s, 2, r->event);
		sqlite3_bind_int64(s, 3, r->pid);
		sqlite3_bind_int64(s, 4, r->tid);
		sqlite3_bind_int64(s, 5, r->comm);
		sqlite3_bind_int64(s, 6, r->stack);
		sqlite3_bind_int64(s, 7, (sqlite3_int64)r->samples);
		sqlite3_bind_int64(s, 8, (sqlite3_int64)r->period);
		sqlite3_bind_int64(s, 9, (sqlite3_int64)r->first_seq);
		if (w_step(w, W_AGG) < 0)
			return -1;
	}
	return 0;
}

int st_writer_comm(st_writer *w, uint32_t pid, uint32_t tid, uint64_t time, const char *comm)
{
	uint32_t c = st_writer_string(w, comm);
	pend_row *p = pend_add(w, W_COMM, 5);

	if (!p)
		return -1;
	p->v[0] = (int64_t)++w->nr_comms;
	p->v[1] = pid;
	p->v[2] = tid;
	p->v[3] = (int64_t)time;
	p->v[4] = c;
	return 0;
}

int st_writer_mmap(st_writer *w, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *filename, const char *build_id_hex, uint64_t time)
{
	uint32_t f = st_writer_string(w, filename);
	pend_row *p = pend_add(w, W_MAP, 8);

	if (!p)
		return -1;
	p->v[0] = (int64_t)++w->nr_maps;
	p->v[1] = pid;
	p->v[2] = (int64_t)start;
	p->v[3] = (int64_t)len;
	p->v[4] = (int64_t)pgoff;
	p->v[5] = f;
	p->v[7] = (int64_t)time;
	return pend_text(w, p, 6, 0, build_id_hex, 1);
}

int st_writer_feature(st_writer *w, const char *name, const char *json)
{
	pend_row *p = pend_add(w, W_FEATURE, 2);

	if (!p || pend_text(w, p, 0, 0, name, 1) < 0)
		return -1;
	return pend_text(w, p, 1, 1, json, 1);
}

int st_writer_event(st_writer *w, uint32_t idx, const char *name, uint32_t type, uint64_t config,
		    uint64_t sample_type, uint64_t period_or_freq, int freq, uint64_t samples)
{
	pend_row *p = pend_add(w, W_EVENT, 8);

	if (!p)
		return -1;
	p->v[0] = idx;
	p->v[2] = type;
	p->v[3] = (int64_t)config;
	p->v[4] = (int64_t)sample_type;
	p->v[5] = (int64_t)period_or_freq;
	p->v[6] = freq;
	p->v[7] = (int64_t)samples;
	return pend_text(w, p, 1, 0, name, 1);
}

int st_writer_record_count(st_writer *w, const char *type, uint64_t count)
{
	pend_row *p = pend_add(w, W_RECORD, 2);

	if (!p)
		return -1;
	p->v[1] = (int64_t)count;
	return pend_text(w, p, 0, 0, type, 1);
}

int st_writer_finish(st_writer *w, const st_summary *x, st_write_times *times)
{
	sqlite3_stmt *s;
	int rc = -1;
	uint64_t t0;

	/* the last block alone, then the rest with the aggregate and the
	 * status: ready and complete become visible at once */
	if (w->failed || flush_block(w) < 0 || w_begin(w) < 0)
		goto out;
	t0 = now_ns();
	if (pend_write(w) < 0)
		goto out;
	w->times.insert_ns += now_ns() - t0;
	t0 = now_ns();
	if (write_agg(w) < 0)
		goto out;
	w->times.agg_ns += now_ns() - t0;
	/* a new generation: caches of an earlier parse of this profile go stale */
	s = prep(w->db, "UPDATE profiles SET status = 2, error = NULL, error_offset = NULL,"
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
	rc = step_done(w->db, s);
	sqlite3_finalize(s);
	/* a profile deleted while it was parsed stays deleted */
	if (rc == 0 && sqlite3_changes(w->db) == 0)
		rc = delete_rows(w->db, w->id);
	if (rc == 0)
		rc = w_end(w);
out:
	if (rc < 0)
		w_rollback(w);
	if (times)
		*times = w->times;
	writer_free(w);
	return rc;
}

/* ---- per-profile tables in memory ----------------------------------------
 * What a parse wrote never changes until the next parse (a new generation),
 * so readers share one read-only copy of a profile's strings, frames, stack
 * tree, events and aggregate, bounded by bytes, least recently used first out.
 */
struct pcache {
	int64_t id, gen;
	size_t bytes;
	unsigned refs;
	int dead;		/* dropped from the list; freed by the last release */
	pcache *prev, *next;
	char **strs;
	size_t nr_strs;
	uint32_t *frame_name, *frame_kernel, *frame_dso;
	size_t nr_frames;
	uint32_t *stack_parent, *stack_frame;
	size_t nr_stacks;
	char **event_names;	/* by event index; NULL = none */
	size_t nr_events;
	agg_row *agg;
	size_t nr_agg;
	/* bytewise order of frame names, by key (name string id * 2 + "_[k]"
	 * mark): made by the first flame graph that needs it */
	pthread_mutex_t rank_lock;
	uint32_t *rank;
};

/* Loads "SELECT id, a[, b[, c]] FROM t WHERE profile_id = ?" into arrays
 * indexed by id (text: column 1 as a string). */
static int load_table(sqlite3 *db, const char *sql, int64_t id, size_t *n, uint32_t **a,
		      uint32_t **b, uint32_t **c, char ***text)
{
	sqlite3_stmt *s = prep(db, sql);
	size_t cap = 0;

	*n = 0;
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t k = sqlite3_column_int64(s, 0);
		if (k < 0 || k >= (int64_t)ST_MAX_STACK_NODES)
			continue;
		if ((size_t)k >= cap) {
			size_t ncap = cap ? cap : 1024, i;
			while (ncap <= (size_t)k)
				ncap *= 2;
			if (a && !(*a = realloc(*a, ncap * sizeof(**a))))
				goto nomem;
			if (b && !(*b = realloc(*b, ncap * sizeof(**b))))
				goto nomem;
			if (c && !(*c = realloc(*c, ncap * sizeof(**c))))
				goto nomem;
			if (text && !(*text = realloc(*text, ncap * sizeof(**text))))
				goto nomem;
			for (i = cap; i < ncap; i++) {
				if (a)
					(*a)[i] = 0;
				if (b)
					(*b)[i] = 0;
				if (c)
					(*c)[i] = 0;
				if (text)
					(*text)[i] = NULL;
			}
			cap = ncap;
		}
		if (a)
			(*a)[k] = (uint32_t)sqlite3_column_int64(s, 1);
		if (b)
			(*b)[k] = (uint32_t)sqlite3_column_int64(s, 2);
		if (c)
			(*c)[k] = (uint32_t)sqlite3_column_int64(s, 3);
		if (text) {
			const char *t = (const char *)sqlite3_column_text(s, 1);
			free((*text)[k]);
			if (!((*text)[k] = strdup(t ? t : "")))
				goto nomem;
		}
		if ((size_t)k + 1 > *n)
			*n = (size_t)k + 1;
	}
	sqlite3_finalize(s);
	return 0;
nomem:
	sqlite3_finalize(s);
	return -1;
}

static void pcache_free(pcache *pc)
{
	size_t i;

	if (!pc)
		return;
	for (i = 0; i < pc->nr_strs; i++)
		free(pc->strs[i]);
	free(pc->strs);
	for (i = 0; i < pc->nr_events; i++)
		free(pc->event_names[i]);
	free(pc->event_names);
	free(pc->frame_name);
	free(pc->frame_kernel);
	free(pc->frame_dso);
	free(pc->stack_parent);
	free(pc->stack_frame);
	free(pc->agg);
	free(pc->rank);
	pthread_mutex_destroy(&pc->rank_lock);
	free(pc);
}

static pcache *pcache_load(sqlite3 *db, int64_t id, int64_t gen)
{
	pcache *pc = calloc(1, sizeof(*pc));
	sqlite3_stmt *s;
	size_t cap = 0, i;

	if (!pc)
		return NULL;
	pthread_mutex_init(&pc->rank_lock, NULL);
	pc->id = id;
	pc->gen = gen;
	if (load_table(db, "SELECT id, text FROM strings WHERE profile_id = ?", id, &pc->nr_strs,
		       NULL, NULL, NULL, &pc->strs) < 0 ||
	    load_table(db, "SELECT id, name, kernel, coalesce(dso, 0) FROM frames"
		       " WHERE profile_id = ?", id, &pc->nr_frames, &pc->frame_name,
		       &pc->frame_kernel, &pc->frame_dso, NULL) < 0 ||
	    load_table(db, "SELECT id, parent, frame FROM stacks WHERE profile_id = ?", id,
		       &pc->nr_stacks, &pc->stack_parent, &pc->stack_frame, NULL, NULL) < 0 ||
	    load_table(db, "SELECT idx, name FROM events WHERE profile_id = ?", id,
		       &pc->nr_events, NULL, NULL, NULL, &pc->event_names) < 0)
		goto fail;
	s = prep(db, "SELECT event, pid, tid, comm, stack, samples, period, first_seq"
		     " FROM sample_agg WHERE profile_id = ? ORDER BY first_seq");
	if (!s)
		goto fail;
	sqlite3_bind_int64(s, 1, id);
	while (sqlite3_step(s) == SQLITE_ROW) {
		agg_row *r;
		if (pc->nr_agg == cap) {
			size_t ncap = cap ? 2 * cap : 1024;
			agg_row *p = realloc(pc->agg, ncap * sizeof(*p));
			if (!p) {
				sqlite3_finalize(s);
				goto fail;
			}
			pc->agg = p;
			cap = ncap;
		}
		r = &pc->agg[pc->nr_agg++];
		r->event = (uint32_t)sqlite3_column_int64(s, 0);
		r->pid = (uint32_t)sqlite3_column_int64(s, 1);
		r->tid = (uint32_t)sqlite3_column_int64(s, 2);
		r->comm = (uint32_t)sqlite3_column_int64(s, 3);
		r->stack = (uint32_t)sqlite3_column_int64(s, 4);
		r->samples = (uint64_t)sqlite3_column_int64(s, 5);
		r->period = (uint64_t)sqlite3_column_int64(s, 6);
		r->first_seq = (uint64_t)sqlite3_column_int64(s, 7);
	}
	sqlite3_finalize(s);
	/* with the name order a flame graph may add (pcache_ranks) */
	pc->bytes = sizeof(*pc) + pc->nr_strs * sizeof(char *) + pc->nr_frames * 12 +
		    pc->nr_stacks * 8 + cap * sizeof(agg_row) + pc->nr_events * sizeof(char *) +
		    (2 * pc->nr_strs + 2) * sizeof(uint32_t);
	for (i = 0; i < pc->nr_strs; i++)
		pc->bytes += pc->strs[i] ? strlen(pc->strs[i]) + 17 : 0;
	return pc;
fail:
	pcache_free(pc);
	return NULL;
}

static void pcache_unlink(st_store *st, pcache *pc)
{
	if (pc->prev)
		pc->prev->next = pc->next;
	else
		st->cache_head = pc->next;
	if (pc->next)
		pc->next->prev = pc->prev;
	else
		st->cache_tail = pc->prev;
	pc->prev = pc->next = NULL;
	st->cache_bytes -= pc->bytes;
	pc->dead = 1;
}

static void pcache_push_front(st_store *st, pcache *pc)
{
	pc->prev = NULL;
	pc->next = st->cache_head;
	if (st->cache_head)
		st->cache_head->prev = pc;
	st->cache_head = pc;
	if (!st->cache_tail)
		st->cache_tail = pc;
}

static void pcache_release(st_store *st, pcache *pc)
{
	int drop;

	if (!pc)
		return;
	pthread_mutex_lock(&st->cache_lock);
	drop = --pc->refs == 0 && pc->dead;
	pthread_mutex_unlock(&st->cache_lock);
	if (drop)
		pcache_free(pc);
}

/* The tables of profile `id` as of generation `gen`, loaded through `db`
 * (inside the caller's read transaction) when not cached. Release with
 * pcache_release(). NULL on a storage error. */
static pcache *pcache_get(st_store *st, sqlite3 *db, int64_t id, int64_t gen)
{
	pcache *pc, *old, *victims = NULL;

	pthread_mutex_lock(&st->cache_lock);
	for (pc = st->cache_head; pc; pc = pc->next)
		if (pc->id == id && pc->gen == gen)
			break;
	if (pc) {
		pc->refs++;
		if (pc != st->cache_head) {
			size_t b = pc->bytes;
			pcache_unlink(st, pc);
			pc->dead = 0;
			st->cache_bytes += b;
			pcache_push_front(st, pc);
		}
		pthread_mutex_unlock(&st->cache_lock);
		return pc;
	}
	pthread_mutex_unlock(&st->cache_lock);
	/* load without the lock: other profiles' readers go on meanwhile */
	pc = pcache_load(db, id, gen);
	if (!pc)
		return NULL;
	pc->refs = 1;
	pthread_mutex_lock(&st->cache_lock);
	/* older generations of this profile and, beyond the bound, the least
	 * recently used go; entries in use are freed by their last reader */
	for (old = st->cache_head; old;) {
		pcache *next = old->next;
		if (old->id == id) {
			pcache_unlink(st, old);
			if (!old->refs) {
				old->next = victims;
				victims = old;
			}
		}
		old = next;
	}
	pcache_push_front(st, pc);
	st->cache_bytes += pc->bytes;
	while (st->cache_bytes > st->cache_max && st->cache_tail != pc) {
		old = st->cache_tail;
		pcache_unlink(st, old);
		if (!old->refs) {
			old->next = victims;
			victims = old;
		}
	}
	pthread_mutex_unlock(&st->cache_lock);
	while (victims) {
		old = victims->next;
		pcache_free(victims);
		victims = old;
	}
	return pc;
}

/* Opens a read transaction on a ready profile: 0 with *gen, 1 = not ready,
 * -1 = storage error (no transaction left open then). */
static int begin_ready(sqlite3 *db, int64_t id, int64_t *gen)
{
	sqlite3_stmt *s;
	int rc = 1;

	if (exec(db, "BEGIN") < 0)
		return -1;
	s = prep(db, "SELECT status, generation FROM profiles WHERE id = ?");
	if (!s) {
		exec(db, "COMMIT");
		return -1;
	}
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) == ST_READY) {
		*gen = sqlite3_column_int64(s, 1);
		rc = 0;
	}
	sqlite3_finalize(s);
	if (rc)
		exec(db, "COMMIT");
	return rc;
}

/* Ready profile -> its cached tables, inside an open read transaction on a
 * pooled connection (*dbp). 1 = not ready; -1 = error. */
static int open_profile(st_store *st, int64_t id, sqlite3 **dbp, pcache **pcp)
{
	sqlite3 *db = conn_get(st);
	int64_t gen = 0;
	int rc;

	*dbp = NULL;
	*pcp = NULL;
	if (!db)
		return -1;
	rc = begin_ready(db, id, &gen);
	if (rc) {
		conn_put(st, db);
		return rc;
	}
	*pcp = pcache_get(st, db, id, gen);
	if (!*pcp) {
		exec(db, "COMMIT");
		conn_put(st, db);
		return -1;
	}
	*dbp = db;
	return 0;
}

static void close_profile(st_store *st, sqlite3 *db, pcache *pc)
{
	pcache_release(st, pc);
	if (db) {
		exec(db, "COMMIT");
		conn_put(st, db);
	}
}

int st_profile_generation(st_store *st, int64_t id, int64_t *gen)
{
	sqlite3 *db = conn_get(st);
	int rc;

	if (!db)
		return -1;
	rc = begin_ready(db, id, gen);
	if (rc == 0)
		exec(db, "COMMIT");
	conn_put(st, db);
	return rc;
}

static void cache_clear(st_store *st)
{
	while (st->cache_head) {
		pcache *pc = st->cache_head;
		pcache_unlink(st, pc);
		if (!pc->refs)
			pcache_free(pc);
	}
}

/* ---- folding stored samples ---------------------------------------------- */

typedef struct fold_line {
	char *text;
	uint64_t samples, period;
} fold_line;

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const fold_line *)a)->text, ((const fold_line *)b)->text);
}

typedef struct sbuf {
	char *p;
	size_t len, cap;
} sbuf;

static int sbuf_add(sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 256;
		char *p;
		while (ncap < b->len + n + 1)
			ncap *= 2;
		if (!(p = realloc(b->p, ncap)))
			return -1;
		b->p = p;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
	return 0;
}

static const char *pc_str(const pcache *pc, uint32_t i)
{
	return i < pc->nr_strs && pc->strs[i] ? pc->strs[i] : NULL;
}

/* Whether an event name answers to `want`: "cpu-clock" also selects
 * "cpu-clock:ppp" (modifiers are optional), NULL any. */
static int event_named(const char *name, const char *want)
{
	size_t wl;

	if (!want)
		return 1;
	wl = strlen(want);
	return !strcmp(name, want) || (!strncmp(name, want, wl) && name[wl] == ':');
}

/*
 * The event perfhub collapse folds, in the recording's own event order
 * (perf report's): the first event answering to `want` that has samples,
 * else the first answering to it; with want NULL, the first event that
 * has samples. OUT: *out, NULL when no event answers (or none has samples,
 * for want NULL). 0, or -1 out of memory.
 */
static int event_pick(const pcache *pc, const char *want, const char **out)
{
	unsigned char *sampled = calloc(pc->nr_events + 1, 1);
	const char *named = NULL;
	size_t i;

	*out = NULL;
	if (!sampled)
		return -1;
	for (i = 0; i < pc->nr_agg; i++)
		if (pc->agg[i].event < pc->nr_events && pc->agg[i].samples)
			sampled[pc->agg[i].event] = 1;
	for (i = 0; i < pc->nr_events && !*out; i++) {
		const char *name = pc->event_names[i];

		if (!name || !event_named(name, want))
			continue;
		if (!named && want)
			named = name;
		if (sampled[i])
			*out = name;
	}
	free(sampled);
	if (!*out)
		*out = named;
	return 0;
}

/* event_pick's event; NULL = none (or out of memory: nothing to fold). */
static const char *fold_event(const pcache *pc, const char *want)
{
	const char *ev;

	return event_pick(pc, want, &ev) < 0 ? NULL : ev;
}

#define ST_EVENT_NAMES_LISTED 32	/* in st_event_pick's list of names */

int st_event_pick(st_store *st, int64_t id, const char *want, char **name, char **names)
{
	sqlite3 *db;
	pcache *pc;
	const char *ev;
	size_t i, len = 0;
	int rc = open_profile(st, id, &db, &pc);

	*name = NULL;
	if (names)
		*names = NULL;
	if (rc)
		return rc;
	rc = -1;
	if (event_pick(pc, want, &ev) < 0)
		goto out;
	if (ev || !want) {
		if (ev && !(*name = strdup(ev)))
			goto out;
		rc = 0;
		goto out;
	}
	rc = 2;
	if (!names)
		goto out;
	/* the profile's event names, each once, for the error message (the
	 * first ST_EVENT_NAMES_LISTED of them) */
	for (i = 0; i < pc->nr_events && i < ST_EVENT_NAMES_LISTED; i++)
		if (pc->event_names[i])
			len += strlen(pc->event_names[i]) + 2;
	if (!(*names = calloc(len + 64, 1))) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < pc->nr_events && i < ST_EVENT_NAMES_LISTED; i++) {
		const char *n = pc->event_names[i];
		size_t j;

		for (j = 0; n && j < i; j++)
			if (pc->event_names[j] && !strcmp(pc->event_names[j], n))
				break;
		if (!n || j < i)
			continue;
		if (**names)
			strcat(*names, ", ");
		strcat(*names, n);
	}
	if (pc->nr_events > ST_EVENT_NAMES_LISTED)
		sprintf(*names + strlen(*names), ", ... (%zu events)", pc->nr_events);
out:
	close_profile(st, db, pc);
	return rc;
}

/* Which event indexes carry the name `ev` (OUT: flags by index). */
static unsigned char *event_set(const pcache *pc, const char *ev)
{
	unsigned char *set = calloc(pc->nr_events + 1, 1);
	size_t i;

	if (!set)
		return NULL;
	for (i = 0; i < pc->nr_events; i++)
		set[i] = pc->event_names[i] && !strcmp(pc->event_names[i], ev);
	return set;
}

static int in_set(const pcache *pc, const unsigned char *set, uint32_t event)
{
	return event < pc->nr_events && set[event];
}

/* The string id whose text is `text` (strings are interned: at most one),
 * or 0 when the profile has none. */
static uint32_t string_id(const pcache *pc, const char *text)
{
	size_t i;

	for (i = 1; i < pc->nr_strs; i++)
		if (pc->strs[i] && !strcmp(pc->strs[i], text))
			return (uint32_t)i;
	return 0;
}

/* The matching samples of the blocks overlapping [from, to), grouped as
 * group_rows() groups them (comm, stack, and pid/tid when printed) into out:
 * the time range needs the samples themselves. Only the columns a fold
 * uses are read, straight from the decompressed block. */
/* A dying task samples with pid/tid -1; `perfhub collapse` drops those
 * samples as the perf script | stackcollapse pipeline does, so folded
 * answers do too (they stay stored and counted). */
static int dying_task(uint32_t pid, uint32_t tid)
{
	return pid == UINT32_MAX || tid == UINT32_MAX;
}

static int fold_blocks(sqlite3 *db, const pcache *pc, const unsigned char *set,
		       const st_fold_filter *f, agg_map *out)
{
	sqlite3_stmt *s = prep(db, "SELECT nr, data FROM sample_blocks WHERE profile_id = ?1"
				   " AND (?2 = 0 OR max_time >= ?2) AND (?3 = 0 OR min_time < ?3)"
				   " ORDER BY seq");
	uint8_t *raw = malloc(SBLOCK_RAW_MAX);
	uint64_t to = f->to_ns ? f->to_ns : UINT64_MAX;
	uint32_t want_comm = f->comm ? string_id(pc, f->comm) : 0;
	int by_pid = f->with_pid || f->with_tid, by_tid = f->with_tid;
	int rc = -1, r;

	if (!s || !raw)
		goto out;
	if (f->comm && !want_comm) {
		rc = 0;		/* no thread ever had that comm */
		goto out;
	}
	sqlite3_bind_int64(s, 1, pc->id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)f->from_ns);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)f->to_ns);
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		const void *blob = sqlite3_column_blob(s, 1);
		size_t len = (size_t)sqlite3_column_bytes(s, 1), n, i;
		int64_t nr = sqlite3_column_int64(s, 0);
		const uint8_t *tcol, *ecol, *pcol, *tidcol, *percol, *scol, *ccol;
		uint64_t t = 0, want;
		size_t got;

		/* the layout sblock_decode() reads, column by column */
		if (nr <= 0 || nr > ST_BLOCK_SAMPLES || !blob)
			goto corrupt;
		n = (size_t)nr;
		want = ZSTD_getFrameContentSize(blob, len);
		if (want != 8 + n * SBLOCK_ROW_BYTES)
			goto corrupt;
		got = ZSTD_decompress(raw, SBLOCK_RAW_MAX, blob, len);
		if (ZSTD_isError(got) || got != want || get32(raw) != ST_BLOCK_MAGIC ||
		    get32(raw + 4) != n)
			goto corrupt;
		tcol = raw + 8;
		ecol = tcol + 8 * n;
		pcol = ecol + 8 * n;	/* after event and cpu */
		tidcol = pcol + 4 * n;
		percol = tidcol + 4 * n;
		scol = percol + 16 * n;	/* after period and weight */
		ccol = scol + 4 * n;
		for (i = 0; i < n; i++) {
			uint32_t pid, tid, comm;
			agg_row *a;

			t += get64(tcol + 8 * i);
			if (t < f->from_ns || t >= to || !in_set(pc, set, get32(ecol + 4 * i)))
				continue;
			pid = get32(pcol + 4 * i);
			tid = get32(tidcol + 4 * i);
			comm = get32(ccol + 4 * i);
			if (dying_task(pid, tid))
				continue;
			if ((f->pid >= 0 && pid != (uint64_t)f->pid) ||
			    (f->tid >= 0 && tid != (uint64_t)f->tid) || (want_comm && comm != want_comm))
				continue;
			a = agg_get(out, 0, by_pid ? pid : 0, by_tid ? tid : 0, comm,
				    get32(scol + 4 * i));
			if (!a)
				goto out;
			a->samples++;
			a->period += get64(percol + 8 * i);
		}
	}
	rc = r == SQLITE_DONE ? 0 : -1;
	goto out;
corrupt:
	log_warn("msg=\"corrupt sample block\" profile=%lld", (long long)pc->id);
out:
	sqlite3_finalize(s);
	free(raw);
	return rc;
}

/* Rows grouped as the folded text distinguishes them: comm, stack, and pid
 * or tid when they are printed. */
static int group_rows(const pcache *pc, const st_fold_filter *f, const agg_row *rows, size_t n,
		      const unsigned char *set, agg_map *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const agg_row *r = &rows[i];
		agg_row *g;
		const char *cs;

		if (set && !in_set(pc, set, r->event))
			continue;
		if (dying_task(r->pid, r->tid))
			continue;
		if ((f->pid >= 0 && r->pid != (uint64_t)f->pid) ||
		    (f->tid >= 0 && r->tid != (uint64_t)f->tid))
			continue;
		if (f->comm) {
			cs = pc_str(pc, r->comm);
			if (strcmp(f->comm, cs ? cs : ""))
				continue;
		}
		g = agg_get(out, 0, f->with_pid || f->with_tid ? r->pid : 0,
			    f->with_tid ? r->tid : 0, r->comm, r->stack);
		if (!g)
			return -1;
		g->samples += r->samples;
		g->period += r->period;
	}
	return 0;
}

/* Folded lines of the grouped rows, sorted and merged, to the callback. */
static int emit_lines(const pcache *pc, const st_fold_filter *f, const agg_map *g, st_fold_cb cb,
		      void *ctx)
{
	fold_line *lines = calloc(g->n + 1, sizeof(*lines));
	uint32_t *path = malloc(ST_MAX_DEPTH_FOLD * sizeof(*path));
	size_t nr = 0, i;
	sbuf b = { 0 };
	int rc = -1;

	if (!lines || !path)
		goto out;
	for (i = 0; i < g->n; i++) {
		const agg_row *r = &g->rows[i];
		const char *cs = pc_str(pc, r->comm);
		uint32_t node = r->stack;
		size_t depth = 0, k;
		char num[64];

		if (!cs)
			cs = "";
		b.len = 0;
		/* the comm with spaces as '_', as stackcollapse-perf writes it */
		for (k = 0; cs[k]; k++) {
			char c = cs[k] == ' ' ? '_' : cs[k];
			if (sbuf_add(&b, &c, 1) < 0)
				goto out;
		}
		if (f->with_tid)
			snprintf(num, sizeof(num), "-%lu/%lu", (unsigned long)r->pid,
				 (unsigned long)r->tid);
		else if (f->with_pid)
			snprintf(num, sizeof(num), "-%lu", (unsigned long)r->pid);
		else
			num[0] = 0;
		if (sbuf_add(&b, num, strlen(num)) < 0)
			goto out;
		/* parents always have smaller ids: the walk ends */
		while (node && node < pc->nr_stacks && depth < ST_MAX_DEPTH_FOLD) {
			path[depth++] = pc->stack_frame[node];
			if (pc->stack_parent[node] >= node)
				break;
			node = pc->stack_parent[node];
		}
		while (depth--) {
			uint32_t fr = path[depth];
			const char *t = fr < pc->nr_frames ? pc_str(pc, pc->frame_name[fr]) : NULL;
			if (!t)
				t = "[unknown]";
			if (sbuf_add(&b, ";", 1) < 0 || sbuf_add(&b, t, strlen(t)) < 0)
				goto out;
			if (f->kernel && fr < pc->nr_frames && pc->frame_kernel[fr] &&
			    sbuf_add(&b, "_[k]", 4) < 0)
				goto out;
		}
		lines[nr].text = strdup(b.p ? b.p : "");
		lines[nr].samples = r->samples;
		lines[nr].period = r->period;
		if (!lines[nr].text)
			goto out;
		nr++;
	}
	if (f->any_order) {
		/* no sort: long common prefixes make it the dearest step */
		rc = 0;
		for (i = 0; i < nr && rc == 0; i++)
			rc = cb(ctx, lines[i].text, lines[i].samples, lines[i].period);
		if (rc > 0)
			rc = 0;
		goto out;
	}
	qsort(lines, nr, sizeof(*lines), cmp_line);
	rc = 0;
	for (i = 0; i < nr && rc == 0; ) {
		size_t j = i + 1;
		uint64_t ns = lines[i].samples, np = lines[i].period;
		/* different stack nodes may fold to the same text */
		for (; j < nr && !strcmp(lines[i].text, lines[j].text); j++) {
			ns += lines[j].samples;
			np += lines[j].period;
		}
		rc = cb(ctx, lines[i].text, ns, np);
		i = j;
	}
	if (rc > 0)
		rc = 0;
out:
	if (lines)
		for (i = 0; i < nr; i++)
			free(lines[i].text);
	free(lines);
	free(path);
	free(b.p);
	return rc;
}

int st_fold(st_store *st, int64_t id, const st_fold_filter *f, st_fold_cb cb, void *ctx)
{
	sqlite3 *db;
	pcache *pc;
	agg_map groups = { 0 };
	unsigned char *set = NULL;
	const char *ev;
	int rc = open_profile(st, id, &db, &pc);

	if (rc)
		return rc;
	rc = -1;
	ev = fold_event(pc, f->event);
	if (!ev) {
		rc = 0;		/* no such event or no samples: nothing to fold */
		goto out;
	}
	if (!(set = event_set(pc, ev)))
		goto out;
	if (f->from_ns || f->to_ns) {
		/* a time range needs the samples themselves */
		if (fold_blocks(db, pc, set, f, &groups) < 0)
			goto out;
	} else if (group_rows(pc, f, pc->agg, pc->nr_agg, set, &groups) < 0) {
		goto out;
	}
	/* the rest needs no database */
	exec(db, "COMMIT");
	conn_put(st, db);
	db = NULL;
	rc = emit_lines(pc, f, &groups, cb, ctx);
out:
	free(set);
	agg_free(&groups);
	close_profile(st, db, pc);
	return rc;
}

/* ---- the flame graph from the stack tree ---------------------------------- */

typedef struct tnode {
	uint64_t key;		/* name string id * 2 + "_[k]" mark; comms: see below */
	uint32_t parent, first_child, next;
	uint32_t dso;		/* string id of the DSO of the first frame placed here */
	uint64_t value;
} tnode;

#define TKEY_COMM (1ULL << 63)	/* comm nodes: TKEY_COMM | comm text id */

typedef struct ttree {
	tnode *n;
	size_t nr, cap;
	uint32_t *slots;	/* (parent, key) -> node + 1 */
	size_t nr_slots;
	u64map memo;		/* comm node << 32 | stack node -> tree node */
	uint32_t next_memo;	/* unused by u64map callers here */
} ttree;

static size_t tslot(const ttree *t, uint32_t parent, uint64_t key)
{
	return mix64(key ^ ((uint64_t)parent << 40 | parent)) & (t->nr_slots - 1);
}

static int tgrow(ttree *t)
{
	size_t ns = t->nr_slots ? 2 * t->nr_slots : 8192, i;
	uint32_t *sl = calloc(ns, sizeof(*sl));

	if (!sl)
		return -1;
	free(t->slots);
	t->slots = sl;
	t->nr_slots = ns;
	for (i = 1; i < t->nr; i++) {
		size_t j = tslot(t, t->n[i].parent, t->n[i].key);
		while (t->slots[j])
			j = (j + 1) & (ns - 1);
		t->slots[j] = (uint32_t)i + 1;
	}
	return 0;
}

/* The child of parent with key, added when missing; 0 out of memory. */
static uint32_t tchild(ttree *t, uint32_t parent, uint64_t key)
{
	size_t j;
	uint32_t id;

	for (j = tslot(t, parent, key); t->slots[j]; j = (j + 1) & (t->nr_slots - 1)) {
		const tnode *c = &t->n[t->slots[j] - 1];
		if (c->key == key && c->parent == parent)
			return t->slots[j] - 1;
	}
	if (t->nr == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 8192;
		tnode *p = realloc(t->n, ncap * sizeof(*p));
		if (!p)
			return 0;
		t->n = p;
		t->cap = ncap;
	}
	if (t->nr >= ST_MAX_STACK_NODES)
		return 0;
	id = (uint32_t)t->nr++;
	memset(&t->n[id], 0, sizeof(tnode));
	t->n[id].key = key;
	t->n[id].parent = parent;
	t->n[id].next = t->n[parent].first_child;
	t->n[parent].first_child = id;
	if (2 * t->nr > t->nr_slots)
		return tgrow(t) < 0 ? 0 : id;
	j = tslot(t, parent, key);
	while (t->slots[j])
		j = (j + 1) & (t->nr_slots - 1);
	t->slots[j] = id + 1;
	return id;
}

typedef struct tname_ctx {
	const pcache *pc;
	const strmap *comms;
	char **comm_text;	/* by comm text id */
} tname_ctx;

static const char *tname(const tname_ctx *c, const tnode *n, size_t *len, char *buf,
			 size_t buflen)
{
	const char *s;

	if (n->key & TKEY_COMM) {
		s = c->comm_text[n->key & ~TKEY_COMM];
		*len = strlen(s);
		return s;
	}
	s = pc_str(c->pc, (uint32_t)(n->key >> 1));
	if (!s)
		s = "[unknown]";
	if (n->key & 1) {
		snprintf(buf, buflen, "%s_[k]", s);
		s = buf;
	}
	*len = strlen(s);
	return s;
}

typedef struct tsort_ctx {
	const tname_ctx *nc;
	const ttree *t;
	const uint32_t *rank;	/* by frame key (pcache_ranks) */
	size_t nr_rank;
} tsort_ctx;

/* Frame nodes of one parent by the rank of their keys (distinct keys). */
static int cmp_trank(const void *x, const void *y, void *arg)
{
	const tsort_ctx *c = arg;
	uint64_t ka = c->t->n[*(const uint32_t *)x].key, kb = c->t->n[*(const uint32_t *)y].key;
	uint32_t ra = ka < c->nr_rank ? c->rank[ka] : UINT32_MAX;
	uint32_t rb = kb < c->nr_rank ? c->rank[kb] : UINT32_MAX;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return ka < kb ? -1 : ka > kb;
}

static int cmp_tchild(const void *x, const void *y, void *arg)
{
	const tsort_ctx *c = arg;
	char ba[4096], bb[4096];
	size_t la, lb;
	const char *a = tname(c->nc, &c->t->n[*(const uint32_t *)x], &la, ba, sizeof(ba));
	const char *b = tname(c->nc, &c->t->n[*(const uint32_t *)y], &lb, bb, sizeof(bb));
	int r = memcmp(a, b, la < lb ? la : lb);

	if (r)
		return r;
	return la < lb ? -1 : la > lb;
}

/* The k-th largest of v[0..n) (k from 0, k < n); v is reordered. A
 * three-way quickselect with pseudo-random pivots. */
static uint64_t kth_largest(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;	/* the answer is in v[lo..hi) */
	uint64_t seed = 0x9e3779b97f4a7c15ULL, x;

	while (hi - lo > 1) {
		size_t lt = lo, i = lo, gt = hi;
		uint64_t pivot;

		seed = mix64(seed + 1);
		pivot = v[lo + seed % (hi - lo)];
		/* v[lo..lt) > pivot, v[lt..i) == pivot, v[gt..hi) < pivot */
		while (i < gt) {
			if (v[i] > pivot) {
				x = v[i];
				v[i++] = v[lt];
				v[lt++] = x;
			} else if (v[i] < pivot) {
				x = v[i];
				v[i] = v[--gt];
				v[gt] = x;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return pivot;
	}
	return v[lo];
}

/* Flags of the max largest nodes of t (ties: the earlier node, so a parent
 * before its child); the root always. NULL out of memory. */
static unsigned char *keep_largest(const ttree *t, size_t max)
{
	uint64_t *v = malloc(t->nr * sizeof(*v)), cut;
	unsigned char *keep = calloc(t->nr, 1);
	size_t i, left;

	if (!v || !keep) {
		free(v);
		free(keep);
		return NULL;
	}
	for (i = 0; i < t->nr; i++)
		v[i] = t->n[i].value;
	cut = kth_largest(v, t->nr, max - 1);
	free(v);
	left = max;
	for (i = 0; i < t->nr; i++)
		if (t->n[i].value > cut) {
			keep[i] = 1;
			left--;
		}
	for (i = 0; i < t->nr && left; i++)
		if (t->n[i].value == cut) {
			keep[i] = 1;
			left--;
		}
	keep[0] = 1;
	return keep;
}

/* A frame name as the tree prints it; marked names are made in buf. */
typedef struct rank_ent {
	const char *s;
	uint32_t key;
} rank_ent;

static int cmp_rank_ent(const void *x, const void *y)
{
	const rank_ent *a = x, *b = y;
	int r = strcmp(a->s, b->s);

	return r ? r : a->key < b->key ? -1 : a->key > b->key;
}

/* The bytewise order of every frame name key of the profile (OUT: ranks by
 * key, 2 * nr_strs + 2 of them), made once and shared: sorting a big
 * tree's children then compares integers, not strings. NULL when out of
 * memory. */
static const uint32_t *pcache_ranks(pcache *pc)
{
	size_t nkeys = 2 * pc->nr_strs + 2, n = 0, i;
	rank_ent *e = NULL;
	char **marked = NULL;
	unsigned char *kmark = NULL;
	uint32_t *rank = NULL;

	pthread_mutex_lock(&pc->rank_lock);
	if (pc->rank)
		goto out;
	e = malloc(nkeys * sizeof(*e));
	marked = calloc(nkeys / 2, sizeof(*marked));
	kmark = calloc(nkeys / 2, 1);
	rank = calloc(nkeys, sizeof(*rank));
	if (!e || !marked || !kmark || !rank)
		goto fail;
	/* "_[k]" forms exist for names of kernel frames only */
	for (i = 1; i < pc->nr_frames; i++)
		if (pc->frame_kernel[i] && pc->frame_name[i] < nkeys / 2)
			kmark[pc->frame_name[i]] = 1;
	for (i = 0; i < nkeys / 2; i++) {
		const char *name = pc_str(pc, (uint32_t)i);
		if (!name)
			name = "[unknown]";	/* as tname() prints it */
		e[n].s = name;
		e[n++].key = (uint32_t)(2 * i);
		if (kmark[i]) {
			size_t l = strlen(name);
			if (!(marked[i] = malloc(l + 5)))
				goto fail;
			memcpy(marked[i], name, l);
			memcpy(marked[i] + l, "_[k]", 5);
			e[n].s = marked[i];
			e[n++].key = (uint32_t)(2 * i + 1);
		}
	}
	qsort(e, n, sizeof(*e), cmp_rank_ent);
	for (i = 0; i < n; i++)
		rank[e[i].key] = (uint32_t)i;
	pc->rank = rank;
	rank = NULL;
	goto out;
fail:
	log_warn("msg=\"out of memory\" what=\"frame name order\" profile=%lld", (long long)pc->id);
out:
	if (marked)
		for (i = 0; i < nkeys / 2; i++)
			free(marked[i]);
	free(marked);
	free(kmark);
	free(e);
	free(rank);
	pthread_mutex_unlock(&pc->rank_lock);
	return pc->rank;
}

int st_flame(st_store *st, int64_t id, const st_fold_filter *f, int by_samples,
	     const st_tree_cb *cb, void *ctx)
{
	sqlite3 *db;
	pcache *pc;
	agg_map groups = { 0 };
	unsigned char *set = NULL;
	ttree t;
	strmap comms = { 0 };
	char **comm_text = NULL;
	size_t nr_comm_text = 0, i;
	uint32_t *path = NULL, *kids = NULL, *stack = NULL;
	tname_ctx nc;
	const char *ev;
	sbuf b = { 0 };
	unsigned char *kept = NULL;
	int rc = open_profile(st, id, &db, &pc);

	if (rc)
		return rc;
	rc = -1;
	memset(&t, 0, sizeof(t));
	if (tgrow(&t) < 0 || u64map_grow(&t.memo) < 0 || strmap_grow(&comms) < 0)
		goto out;
	/* the root, "all" */
	t.n = calloc(1, sizeof(tnode));
	if (!t.n)
		goto out;
	t.nr = t.cap = 1;
	ev = fold_event(pc, f->event);
	if (ev) {
		if (!(set = event_set(pc, ev)))
			goto out;
		if (f->from_ns || f->to_ns) {
			if (fold_blocks(db, pc, set, f, &groups) < 0)
				goto out;
		} else if (group_rows(pc, f, pc->agg, pc->nr_agg, set, &groups) < 0) {
			goto out;
		}
	}
	exec(db, "COMMIT");
	conn_put(st, db);
	db = NULL;
	path = malloc(ST_MAX_DEPTH_FOLD * sizeof(*path));
	if (!path)
		goto out;
	for (i = 0; i < groups.n; i++) {
		const agg_row *r = &groups.rows[i];
		const char *cs = pc_str(pc, r->comm);
		uint64_t v = by_samples ? r->samples : r->period, h;
		uint32_t cid, cnode, node, tn;
		size_t depth = 0, k, j;
		char num[64];
		int found;

		/* the first level: comm as stackcollapse-perf writes it */
		b.len = 0;
		for (k = 0; cs && cs[k]; k++) {
			char c = cs[k] == ' ' ? '_' : cs[k];
			if (sbuf_add(&b, &c, 1) < 0)
				goto out;
		}
		if (f->with_tid)
			snprintf(num, sizeof(num), "-%lu/%lu", (unsigned long)r->pid,
				 (unsigned long)r->tid);
		else if (f->with_pid)
			snprintf(num, sizeof(num), "-%lu", (unsigned long)r->pid);
		else
			num[0] = 0;
		if (sbuf_add(&b, num, strlen(num)) < 0)
			goto out;
		h = hash_str(b.p);
		for (j = h & (comms.cap - 1); comms.strs[j]; j = (j + 1) & (comms.cap - 1))
			if (comms.hashes[j] == h && !strcmp(comms.strs[j], b.p))
				break;
		if (comms.strs[j]) {
			cid = comms.ids[j];
		} else {
			char **p;
			if (2 * (comms.n + 1) > comms.cap) {
				if (strmap_grow(&comms) < 0)
					goto out;
				for (j = h & (comms.cap - 1); comms.strs[j]; j = (j + 1) & (comms.cap - 1))
					;
			}
			p = realloc(comm_text, (nr_comm_text + 1) * sizeof(*p));
			if (!p || !(comms.strs[j] = strdup(b.p)))
				goto out;
			comm_text = p;
			comms.hashes[j] = h;
			cid = comms.ids[j] = (uint32_t)nr_comm_text;
			comm_text[nr_comm_text++] = comms.strs[j];
			comms.n++;
		}
		cnode = tchild(&t, 0, TKEY_COMM | cid);
		if (!cnode)
			goto out;
		/* up the stack tree to a node already placed, then down again */
		node = r->stack;
		tn = cnode;
		while (node && node < pc->nr_stacks && depth < ST_MAX_DEPTH_FOLD) {
			size_t slot;
			if (2 * (t.memo.n + 1) > t.memo.cap && u64map_grow(&t.memo) < 0)
				goto out;
			slot = u64map_slot(&t.memo, (uint64_t)cnode << 32 | node, &found);
			if (found) {
				tn = t.memo.vals[slot];
				break;
			}
			path[depth++] = node;
			if (pc->stack_parent[node] >= node)
				break;
			node = pc->stack_parent[node];
		}
		while (depth--) {
			uint32_t sn = path[depth], fr = pc->stack_frame[sn];
			uint64_t key;
			size_t slot;
			uint32_t nm = fr < pc->nr_frames ? pc->frame_name[fr] : 0;
			key = (uint64_t)nm << 1 | (uint64_t)(f->kernel && fr < pc->nr_frames &&
							    pc->frame_kernel[fr]);
			tn = tchild(&t, tn, key);
			if (!tn)
				goto out;
			/* frames of one name in several DSOs share a node (the
			 * folded text cannot tell them apart): the first DSO
			 * placed, in file order of the samples, names it */
			if (!t.n[tn].dso && fr < pc->nr_frames)
				t.n[tn].dso = pc->frame_dso[fr];
			if (2 * (t.memo.n + 1) > t.memo.cap && u64map_grow(&t.memo) < 0)
				goto out;
			slot = u64map_slot(&t.memo, (uint64_t)cnode << 32 | sn, &found);
			t.memo.keys[slot] = (uint64_t)cnode << 32 | sn;
			t.memo.vals[slot] = tn;
			t.memo.n++;
		}
		t.n[tn].value += v;
	}
	/* subtree sums: children always come after their parent */
	for (i = t.nr; i-- > 1;)
		t.n[t.n[i].parent].value += t.n[i].value;
	/* max_nodes: only the largest nodes stay (an ancestor is never smaller
	 * than its descendants, so what stays is a tree) */
	if (f->max_nodes && t.nr > f->max_nodes && !(kept = keep_largest(&t, f->max_nodes)))
		goto out;
	/* children by name, then out depth first */
	nc.pc = pc;
	nc.comms = &comms;
	nc.comm_text = comm_text;
	kids = malloc(t.nr * sizeof(*kids) + 1);
	stack = malloc((ST_MAX_DEPTH_FOLD + 2) * sizeof(*stack));
	if (!kids || !stack)
		goto out;
	{
		tsort_ctx sc = { &nc, &t, pcache_ranks(pc), 2 * pc->nr_strs + 2 };
		for (i = 0; i < t.nr; i++) {
			size_t k = 0, j;
			uint32_t c;
			for (c = t.n[i].first_child; c; c = t.n[c].next)
				if (!kept || kept[c])
					kids[k++] = c;
			if (kept && !k)
				t.n[i].first_child = 0;
			if (kept && k == 1) {
				t.n[i].first_child = kids[0];
				t.n[kids[0]].next = 0;
			}
			if (k < 2)
				continue;
			/* comms (under the root) by their text; frames by rank */
			qsort_r(kids, k, sizeof(*kids), i && sc.rank ? cmp_trank : cmp_tchild, &sc);
			t.n[i].first_child = kids[0];
			for (j = 0; j + 1 < k; j++)
				t.n[kids[j]].next = kids[j + 1];
			t.n[kids[k - 1]].next = 0;
		}
	}
	{
		size_t sp = 0;
		uint32_t node = 0;
		char buf[4096];
		rc = 0;
		for (;;) {
			size_t len;
			const char *name = node ? tname(&nc, &t.n[node], &len, buf, sizeof(buf)) : "all";
			const char *dso = t.n[node].key & TKEY_COMM ? NULL : pc_str(pc, t.n[node].dso);
			if (!node) {
				len = 3;
				dso = NULL;
			}
			if ((rc = cb->enter(ctx, name, len, dso, t.n[node].value)) != 0)
				break;
			if (t.n[node].first_child && sp < ST_MAX_DEPTH_FOLD + 1) {
				stack[sp++] = node;
				node = t.n[node].first_child;
				continue;
			}
			for (;;) {
				if ((rc = cb->leave(ctx)) != 0)
					goto emitted;
				if (!sp)
					goto emitted;
				if (t.n[node].next) {
					node = t.n[node].next;
					break;
				}
				node = stack[--sp];
			}
		}
emitted:
		if (rc > 0)
			rc = 0;
	}
out:
	free(set);
	agg_free(&groups);
	free(t.n);
	free(t.slots);
	free(t.memo.keys);
	free(t.memo.vals);
	strmap_free(&comms);
	free(comm_text);
	free(path);
	free(kids);
	free(kept);
	free(stack);
	free(b.p);
	close_profile(st, db, pc);
	return rc;
}

/* /top from the stack tree: per (name string, "_[k]" mark) the self and
 * total counts, with no folded text built. */
json_t *st_top_json(st_store *st, int64_t id, const st_fold_filter *f, int by_samples,
		    int *notfound)
{
	sqlite3 *db;
	pcache *pc;
	agg_map groups = { 0 };
	st_fold_filter gf = *f;
	unsigned char *set = NULL;
	uint64_t *self = NULL, *total = NULL, *seen = NULL;
	uint32_t *dso = NULL, *path = NULL;
	size_t nkeys, i;
	const char *ev;
	json_t *arr = NULL;
	int rc = open_profile(st, id, &db, &pc);

	*notfound = rc == 1;
	if (rc)
		return NULL;
	gf.with_pid = gf.with_tid = 0;
	arr = json_array();
	ev = fold_event(pc, f->event);
	if (!ev || !arr)
		goto out;
	if (!(set = event_set(pc, ev)))
		goto fail;
	if (f->from_ns || f->to_ns) {
		if (fold_blocks(db, pc, set, &gf, &groups) < 0)
			goto fail;
	} else if (group_rows(pc, &gf, pc->agg, pc->nr_agg, set, &groups) < 0) {
		goto fail;
	}
	exec(db, "COMMIT");
	conn_put(st, db);
	db = NULL;
	/* key = name string id * 2 + kernel mark */
	nkeys = 2 * (pc->nr_strs + 1);
	self = calloc(nkeys, sizeof(*self));
	total = calloc(nkeys, sizeof(*total));
	seen = calloc(nkeys, sizeof(*seen));	/* the row that last counted it, + 1 */
	dso = calloc(nkeys, sizeof(*dso));
	path = malloc(ST_MAX_DEPTH_FOLD * sizeof(*path));
	if (!self || !total || !seen || !dso || !path)
		goto fail;
	/* a function's DSO: that of its first frame */
	for (i = pc->nr_frames; i-- > 1;) {
		uint32_t nm = pc->frame_name[i];
		int mark = f->kernel && pc->frame_kernel[i];
		if (nm < pc->nr_strs && pc->frame_dso[i])
			dso[2 * (size_t)nm + (size_t)mark] = pc->frame_dso[i];
	}
	for (i = 0; i < groups.n; i++) {
		const agg_row *r = &groups.rows[i];
		uint64_t v = by_samples ? r->samples : r->period;
		uint32_t node = r->stack;
		size_t depth = 0, leaf = SIZE_MAX;
		while (node && node < pc->nr_stacks && depth < ST_MAX_DEPTH_FOLD) {
			uint32_t fr = pc->stack_frame[node];
			size_t key;
			if (fr < pc->nr_frames && pc->frame_name[fr] < pc->nr_strs) {
				key = 2 * (size_t)pc->frame_name[fr] +
				      (size_t)(f->kernel && pc->frame_kernel[fr]);
				if (leaf == SIZE_MAX)
					leaf = key;
				if (seen[key] != i + 1) {
					seen[key] = i + 1;
					total[key] += v;
				}
			}
			depth++;
			if (pc->stack_parent[node] >= node)
				break;
			node = pc->stack_parent[node];
		}
		if (leaf != SIZE_MAX)
			self[leaf] += v;
	}
	for (i = 0; i < nkeys; i++) {
		const char *name = pc_str(pc, (uint32_t)(i / 2)), *d;
		char buf[4096];
		if (!total[i] && !self[i])
			continue;
		if (!name)
			continue;
		if (i & 1) {
			snprintf(buf, sizeof(buf), "%s_[k]", name);
			name = buf;
		}
		d = dso[i] ? pc_str(pc, dso[i]) : NULL;
		json_array_append_new(arr, json_pack("{s:s,s:s?,s:I,s:I}", "name", name, "dso", d,
						     "self", (json_int_t)self[i],
						     "total", (json_int_t)total[i]));
	}
	goto out;
fail:
	json_decref(arr);
	arr = NULL;
out:
	free(set);
	free(self);
	free(total);
	free(seen);
	free(dso);
	free(path);
	agg_free(&groups);
	close_profile(st, db, pc);
	return arr;
}

/* ---- aggregates --------------------------------------------------------------- */

static int profile_ready(sqlite3 *db, int64_t id)
{
	sqlite3_stmt *s = prep(db, "SELECT status FROM profiles WHERE id = ?");
	int ok = 0;

	if (!s)
		return 0;
	sqlite3_bind_int64(s, 1, id);
	ok = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) == ST_READY;
	sqlite3_finalize(s);
	return ok;
}

json_t *st_threads_json(st_store *st, int64_t id, int *notfound)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s = NULL;
	json_t *arr = NULL, *cur = NULL;
	int64_t cur_pid = -1, cur_tid = -1;

	*notfound = 0;
	if (!db)
		return NULL;
	if (!profile_ready(db, id)) {
		*notfound = 1;
		goto out;
	}
	s = prep(db, "SELECT s.pid, s.tid, t.text, sum(s.samples) AS n FROM sample_agg s"
		     " LEFT JOIN strings t ON t.profile_id = s.profile_id AND t.id = s.comm"
		     " WHERE s.profile_id = ? GROUP BY s.pid, s.tid, s.comm ORDER BY s.pid, s.tid, n DESC");
	if (!s)
		goto out;
	sqlite3_bind_int64(s, 1, id);
	arr = json_array();
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(s, 0), tid = sqlite3_column_int64(s, 1);
		const char *comm = (const char *)sqlite3_column_text(s, 2);
		if (!cur || pid != cur_pid || tid != cur_tid) {
			cur = json_pack("{s:I,s:I,s:[],s:I}", "pid", (json_int_t)pid, "tid",
					(json_int_t)tid, "comms", "samples", (json_int_t)0);
			json_array_append_new(arr, cur);
			cur_pid = pid;
			cur_tid = tid;
		}
		json_array_append_new(json_object_get(cur, "comms"), json_string(comm ? comm : ""));
		json_integer_set(json_object_get(cur, "samples"),
				 json_integer_value(json_object_get(cur, "samples")) +
				 sqlite3_column_int64(s, 3));
	}
out:
	sqlite3_finalize(s);
	conn_put(st, db);
	if (!arr)
		return NULL;
	{
		/* most samples first */
		size_t n = json_array_size(arr), i, j;
		for (i = 1; i < n; i++)
			for (j = i; j > 0 && json_integer_value(json_object_get(json_array_get(arr, j - 1), "samples")) <
					     json_integer_value(json_object_get(json_array_get(arr, j), "samples")); j--) {
				json_t *a = json_incref(json_array_get(arr, j - 1));
				json_array_set(arr, j - 1, json_array_get(arr, j));
				json_array_set_new(arr, j, a);
			}
	}
	return json_pack("{s:o}", "threads", arr);
}

typedef struct tpoint {
	uint64_t time, period;
} tpoint;

#define ST_TIMELINE_DENSE 4000000	/* buckets counted in an array up to this */

static int cmp_tpoint(const void *a, const void *b)
{
	uint64_t x = ((const tpoint *)a)->time, y = ((const tpoint *)b)->time;

	return x < y ? -1 : x > y;
}

json_t *st_timeline_json(st_store *st, int64_t id, const char *event, uint64_t bucket_ns,
			 int *notfound)
{
	sqlite3 *db;
	pcache *pc;
	sqlite3_stmt *s = NULL;
	json_t *out = NULL, *buckets;
	unsigned char *set = NULL;
	sblock *b = NULL;
	uint8_t *raw = NULL;
	tpoint *pts = NULL;
	size_t nr = 0, cap = 0, i;
	const char *ev;
	uint64_t start = UINT64_MAX;
	int rc = open_profile(st, id, &db, &pc), r;

	*notfound = rc == 1;
	if (rc)
		return NULL;
	if (!bucket_ns)
		bucket_ns = 1;
	ev = fold_event(pc, event);
	buckets = json_array();
	out = json_pack("{s:s?,s:I,s:I,s:o}", "event", ev, "start_ns", (json_int_t)0, "bucket_ns",
			(json_int_t)bucket_ns, "buckets", buckets);
	if (!ev || !out)
		goto out;
	set = event_set(pc, ev);
	b = malloc(sizeof(*b));
	raw = malloc(SBLOCK_RAW_MAX);
	s = prep(db, "SELECT nr, data FROM sample_blocks WHERE profile_id = ? ORDER BY seq");
	if (!set || !b || !raw || !s)
		goto fail;
	sqlite3_bind_int64(s, 1, id);
	/* the matching samples' times first: buckets count from the earliest */
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		uint32_t k;
		if (sblock_decode(sqlite3_column_blob(s, 1), (size_t)sqlite3_column_bytes(s, 1),
				  sqlite3_column_int64(s, 0), raw, b) < 0) {
			log_warn("msg=\"corrupt sample block\" profile=%lld", (long long)id);
			goto fail;
		}
		for (k = 0; k < b->n; k++) {
			if (!in_set(pc, set, b->event[k]))
				continue;
			if (nr == cap) {
				size_t ncap = cap ? 2 * cap : 65536;
				tpoint *p = realloc(pts, ncap * sizeof(*p));
				if (!p)
					goto fail;
				pts = p;
				cap = ncap;
			}
			pts[nr].time = b->time[k];
			pts[nr++].period = b->period[k];
			if (b->time[k] < start)
				start = b->time[k];
		}
	}
	if (r != SQLITE_DONE)
		goto fail;
	if (nr) {
		uint64_t last = 0, nb;
		uint64_t *cnt, *per;
		for (i = 0; i < nr; i++)
			if (pts[i].time > last)
				last = pts[i].time;
		nb = (last - start) / bucket_ns + 1;
		if (nb > ST_TIMELINE_DENSE) {
			/* sparse: bucket in time order, non-empty buckets only */
			qsort(pts, nr, sizeof(*pts), cmp_tpoint);
			for (i = 0; i < nr; ) {
				uint64_t k = (pts[i].time - start) / bucket_ns, c = 0, p = 0;
				for (; i < nr && (pts[i].time - start) / bucket_ns == k; i++) {
					c++;
					p += pts[i].period;
				}
				json_array_append_new(buckets, json_pack("{s:I,s:I,s:I}", "t_ns",
					(json_int_t)(start + k * bucket_ns), "samples",
					(json_int_t)c, "period", (json_int_t)p));
			}
			json_object_set_new(out, "start_ns", json_integer((json_int_t)start));
			goto out;
		}
		cnt = calloc(nb, sizeof(*cnt));
		per = calloc(nb, sizeof(*per));
		if (!cnt || !per) {
			free(cnt);
			free(per);
			goto fail;
		}
		for (i = 0; i < nr; i++) {
			uint64_t k = (pts[i].time - start) / bucket_ns;
			cnt[k]++;
			per[k] += pts[i].period;
		}
		for (i = 0; i < nb; i++)
			if (cnt[i])
				json_array_append_new(buckets, json_pack("{s:I,s:I,s:I}", "t_ns",
					(json_int_t)(start + i * bucket_ns), "samples",
					(json_int_t)cnt[i], "period", (json_int_t)per[i]));
		free(cnt);
		free(per);
		json_object_set_new(out, "start_ns", json_integer((json_int_t)start));
	}
	goto out;
fail:
	json_decref(out);
	out = NULL;
out:
	sqlite3_finalize(s);
	free(set);
	free(b);
	free(raw);
	free(pts);
	close_profile(st, db, pc);
	return out;
}

/* ---- aggregates across profiles ----------------------------------------- */

typedef struct agg_key {
	char *key;		/* NULL: the SQL NULL key (a profile without hostname) */
	uint64_t samples, period, profiles;
	int64_t last_profile;	/* counts each profile once */
} agg_key;

typedef struct keymap {
	strmap idx;		/* key -> index + 1 */
	agg_key *keys;
	size_t n, cap;
	agg_key null_key;	/* for NULL */
	int has_null;
} keymap;

static agg_key *keymap_get(keymap *m, const char *k)
{
	strmap *sm = &m->idx;
	uint64_t h;
	size_t j;

	if (!k) {
		m->has_null = 1;
		return &m->null_key;
	}
	h = hash_str(k);
	for (j = h & (sm->cap - 1); sm->strs[j]; j = (j + 1) & (sm->cap - 1))
		if (sm->hashes[j] == h && !strcmp(sm->strs[j], k))
			return &m->keys[sm->ids[j] - 1];
	if (2 * (sm->n + 1) > sm->cap) {
		if (strmap_grow(sm) < 0)
			return NULL;
		for (j = h & (sm->cap - 1); sm->strs[j]; j = (j + 1) & (sm->cap - 1))
			;
	}
	if (m->n == m->cap) {
		size_t ncap = m->cap ? 2 * m->cap : 256;
		agg_key *p = realloc(m->keys, ncap * sizeof(*p));
		if (!p)
			return NULL;
		m->keys = p;
		m->cap = ncap;
	}
	if (!(sm->strs[j] = strdup(k)))
		return NULL;
	sm->hashes[j] = h;
	sm->ids[j] = (uint32_t)++m->n;
	sm->n++;
	memset(&m->keys[m->n - 1], 0, sizeof(agg_key));
	m->keys[m->n - 1].key = sm->strs[j];
	m->keys[m->n - 1].last_profile = -1;
	return &m->keys[m->n - 1];
}

static int cmp_agg_key(const void *x, const void *y)
{
	const agg_key *a = x, *b = y;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	/* NULL first, as SQL orders it */
	if (!a->key || !b->key)
		return !a->key ? (b->key ? -1 : 0) : 1;
	return strcmp(a->key, b->key);
}

enum { G_COMM, G_EVENT, G_HOSTNAME, G_SYMBOL, G_DSO };

/* The group key of one aggregate row; `skip` when the row has none. */
static const char *group_key(const pcache *pc, int g, const agg_row *r, const char *host,
			     int *skip)
{
	uint32_t fr;

	*skip = 0;
	switch (g) {
	case G_COMM:
		*skip = !pc_str(pc, r->comm);
		return pc_str(pc, r->comm);
	case G_EVENT:
		*skip = !(r->event < pc->nr_events && pc->event_names[r->event]);
		return *skip ? NULL : pc->event_names[r->event];
	case G_HOSTNAME:
		return host;
	default:
		/* of the leaf frame */
		if (!r->stack || r->stack >= pc->nr_stacks) {
			*skip = 1;
			return NULL;
		}
		fr = pc->stack_frame[r->stack];
		if (fr >= pc->nr_frames) {
			*skip = 1;
			return NULL;
		}
		{
			const char *k = pc_str(pc, g == G_SYMBOL ? pc->frame_name[fr] :
						       pc->frame_dso[fr]);
			*skip = !k;
			return k;
		}
	}
}

json_t *st_aggregate_json(st_store *st, const st_agg_filter *f, int *bad)
{
	static const char *const groups[] = { "comm", "event", "hostname", "symbol", "dso" };
	sqlite3 *db;
	sqlite3_stmt *s = NULL;
	json_t *rows, *out = NULL;
	keymap km;
	int64_t *ids = NULL;
	char **hosts = NULL;
	size_t nr_ids = 0, cap = 0, i, g, k;
	agg_key *sorted = NULL;
	int failed = 0;

	*bad = 0;
	for (g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		if (f->group_by && !strcmp(f->group_by, groups[g]))
			break;
	if (g == sizeof(groups) / sizeof(groups[0])) {
		*bad = 1;
		return NULL;
	}
	memset(&km, 0, sizeof(km));
	km.null_key.last_profile = -1;
	if (strmap_grow(&km.idx) < 0)
		return NULL;
	db = conn_get(st);
	if (!db) {
		strmap_free(&km.idx);
		return NULL;
	}
	/* the profiles, then each one's aggregate (from memory when cached) */
	s = prep(db, "SELECT id, hostname FROM profiles p WHERE status = 2"
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
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *h = (const char *)sqlite3_column_text(s, 1);
		if (nr_ids == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			int64_t *ni = realloc(ids, ncap * sizeof(*ni));
			char **nh;
			if (ni)
				ids = ni;
			nh = ni ? realloc(hosts, ncap * sizeof(*nh)) : NULL;
			if (!nh) {
				failed = 1;
				break;
			}
			hosts = nh;
			cap = ncap;
		}
		ids[nr_ids] = sqlite3_column_int64(s, 0);
		hosts[nr_ids++] = h ? strdup(h) : NULL;
	}
	sqlite3_finalize(s);
	s = NULL;
	conn_put(st, db);
	db = NULL;
	if (failed)
		goto out;
	for (i = 0; i < nr_ids && !failed; i++) {
		sqlite3 *pdb;
		pcache *pc;
		int rc = open_profile(st, ids[i], &pdb, &pc);
		if (rc == 1)
			continue;	/* deleted or parsed again meanwhile */
		if (rc < 0) {
			failed = 1;
			break;
		}
		close_profile(st, pdb, NULL);
		for (k = 0; k < pc->nr_agg; k++) {
			const agg_row *r = &pc->agg[k];
			int skip;
			const char *key = group_key(pc, (int)g, r, hosts[i], &skip);
			agg_key *e;
			if (skip)
				continue;
			if (!(e = keymap_get(&km, key))) {
				failed = 1;
				break;
			}
			e->samples += r->samples;
			e->period += r->period;
			if (e->last_profile != ids[i]) {
				e->last_profile = ids[i];
				e->profiles++;
			}
		}
		pcache_release(st, pc);
	}
	if (failed)
		goto out;
	sorted = malloc((km.n + 1) * sizeof(*sorted));
	if (!sorted)
		goto out;
	memcpy(sorted, km.keys, km.n * sizeof(*sorted));
	k = km.n;
	if (km.has_null)
		sorted[k++] = km.null_key;
	qsort(sorted, k, sizeof(*sorted), cmp_agg_key);
	rows = json_array();
	for (i = 0; i < k && (f->limit < 0 || (int64_t)i < f->limit); i++)
		json_array_append_new(rows, json_pack("{s:s?,s:I,s:I,s:I}", "key", sorted[i].key,
			"samples", (json_int_t)sorted[i].samples,
			"period", (json_int_t)sorted[i].period,
			"profiles", (json_int_t)sorted[i].profiles));
	out = json_pack("{s:s,s:o}", "group_by", groups[g], "rows", rows);
out:
	sqlite3_finalize(s);
	conn_put(st, db);
	for (i = 0; i < nr_ids; i++)
		free(hosts[i]);
	free(hosts);
	free(ids);
	free(sorted);
	free(km.keys);
	strmap_free(&km.idx);
	return out;
}

/* ---- debuginfo index and re-symbolization -------------------------------- */

int st_debuginfo_init(st_store *st)
{
	sqlite3 *db = conn_get(st);
	int rc;

	if (!db)
		return -1;
	rc = exec(db, "CREATE TABLE IF NOT EXISTS debuginfo (build_id TEXT NOT NULL,"
		      " kind TEXT NOT NULL, path TEXT NOT NULL, size INTEGER, symbols INTEGER,"
		      " source TEXT, added_at INTEGER, PRIMARY KEY (build_id, kind)) WITHOUT ROWID;"
		      "CREATE TABLE IF NOT EXISTS profile_dsos (profile_id INTEGER NOT NULL,"
		      " build_id TEXT NOT NULL, path TEXT NOT NULL, unresolved INTEGER,"
		      " PRIMARY KEY (profile_id, build_id, path)) WITHOUT ROWID;"
		      "CREATE INDEX IF NOT EXISTS profile_dsos_bid ON profile_dsos(build_id);");
	conn_put(st, db);
	return rc;
}

int st_debuginfo_put(st_store *st, const char *build_id, const char *kind, const char *path,
		     uint64_t size, int symbols, const char *source)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s;
	struct timespec ts;
	int rc = -1;

	if (!db)
		return -1;
	s = prep(db, "INSERT OR REPLACE INTO debuginfo (build_id, kind, path, size, symbols,"
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
		rc = step_done(db, s);
	}
	sqlite3_finalize(s);
	conn_put(st, db);
	return rc;
}

int st_debuginfo_get(st_store *st, const char *build_id, char **path, char **kind,
		     uint64_t *size)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	/* symbols first; of two with symbols the binary (it also has .plt) */
	s = prep(db, "SELECT path, kind, size FROM debuginfo WHERE build_id = ?"
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
	conn_put(st, db);
	return rc;
}

int st_debuginfo_has_symbols(st_store *st, const char *build_id)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = prep(db, "SELECT 1 FROM debuginfo WHERE build_id = ? AND symbols = 1 LIMIT 1");
	if (s) {
		sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_ROW;
	}
	sqlite3_finalize(s);
	conn_put(st, db);
	return rc;
}

int st_debuginfo_added_since(st_store *st, const char *build_id, int64_t since)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = prep(db, "SELECT 1 FROM debuginfo WHERE build_id = ? AND symbols = 1"
		     " AND added_at >= ? AND source <> 'debuginfod' LIMIT 1");
	if (s) {
		sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, since);
		rc = sqlite3_step(s) == SQLITE_ROW;
	}
	sqlite3_finalize(s);
	conn_put(st, db);
	return rc;
}

int st_profile_dsos_set(st_store *st, int64_t id, size_t n, const char *const *build_ids,
			const char *const *paths, const uint64_t *unresolved)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s = NULL;
	int rc = -1;
	size_t i;

	if (!db)
		return -1;
	if (exec(db, "BEGIN IMMEDIATE") < 0)
		goto out;
	s = prep(db, "DELETE FROM profile_dsos WHERE profile_id = ?");
	if (!s)
		goto rollback;
	sqlite3_bind_int64(s, 1, id);
	if (step_done(db, s) < 0)
		goto rollback;
	sqlite3_finalize(s);
	s = prep(db, "INSERT OR REPLACE INTO profile_dsos (profile_id, build_id, path, unresolved)"
		     " VALUES (?, ?, ?, ?)");
	if (!s)
		goto rollback;
	for (i = 0; i < n; i++) {
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_text(s, 2, build_ids[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, paths[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, (sqlite3_int64)unresolved[i]);
		if (step_done(db, s) < 0)
			goto rollback;
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	s = NULL;
	if (exec(db, "COMMIT") < 0)
		goto rollback;
	rc = 0;
	goto out;
rollback:
	sqlite3_finalize(s);
	exec(db, "ROLLBACK");
out:
	conn_put(st, db);
	return rc;
}

int st_profiles_unresolved_in(st_store *st, const char *build_id, int64_t **ids, size_t *n)
{
	sqlite3 *db = conn_get(st);
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc = -1;

	*ids = NULL;
	*n = 0;
	if (!db)
		return -1;
	s = prep(db, "SELECT DISTINCT d.profile_id FROM profile_dsos d JOIN profiles p"
		     " ON p.id = d.profile_id WHERE d.build_id = ? AND d.unresolved > 0"
		     " AND p.status = 2 ORDER BY d.profile_id");
	if (s) {
		int r;

		sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
		while ((r = sqlite3_step(s)) == SQLITE_ROW) {
			if (*n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				int64_t *p = realloc(*ids, nc * sizeof(*p));

				if (!p)
					break;
				*ids = p;
				cap = nc;
			}
			(*ids)[(*n)++] = sqlite3_column_int64(s, 0);
		}
		rc = r == SQLITE_DONE ? 0 : -1;
	}
	sqlite3_finalize(s);
	conn_put(st, db);
	if (rc < 0) {
		free(*ids);
		*ids = NULL;
		*n = 0;
	}
	return rc;
}

int st_profile_resymbolize(st_store *st, int64_t id)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int rc = update(st, "UPDATE profiles SET status = 0 WHERE id = ?1 AND status = 2", id,
			NULL, 0, 0);

	if (rc != 0)
		return rc < 0 ? -1 : 0;
	db = conn_get(st);
	if (!db)
		return -1;
	rc = -1;
	s = prep(db, "SELECT status FROM profiles WHERE id = ?");
	if (s) {
		sqlite3_bind_int64(s, 1, id);
		if (sqlite3_step(s) == SQLITE_ROW)
			rc = sqlite3_column_int(s, 0) == ST_FAILED ? 3 : 2;
		else
			rc = 1;
	}
	sqlite3_finalize(s);
	conn_put(st, db);
	return rc;
}
