/*
 * db.c - the SQLite backend's store: one database file in WAL mode
 * (readers never block the writer), its schema and migrations by
 * user_version, a pool of reader connections, and the ops table.
 *
 * Readers and short control writes take a connection from the pool; each
 * profile writer has a connection of its own and writes its rows in
 * batched transactions. A profile's rows are only visible once its status
 * is 'ready' (set in the last transaction), and a retried profile starts
 * by deleting what an earlier attempt left.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/sqlite/db.h"

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
	/* 4: off-CPU nanoseconds in the aggregate, and the samples of each leaf
	 * frame by address (annotation). Profiles stored before keep answering
	 * as they did (0 off-CPU, no addresses) until they are parsed again. */
	"ALTER TABLE sample_agg ADD COLUMN offcpu INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE leaf_addrs (profile_id INTEGER NOT NULL, frame INTEGER NOT NULL,"
	" event INTEGER NOT NULL, addr INTEGER NOT NULL, samples INTEGER NOT NULL,"
	" period INTEGER NOT NULL, offcpu INTEGER NOT NULL,"
	" PRIMARY KEY (profile_id, frame, event, addr)) WITHOUT ROWID;",
	/* 5: a parse's rows are keyed by a key of their own, not by the
	 * profile's id, so a new parse (re-symbolization) is written beside the
	 * one being served and replaces it when complete: data_id is the key of
	 * the parse served (NULL: none yet), pending_id that of the parse being
	 * written. New keys are negative (-parse_keys.id); a v3 profile's rows
	 * keep its id as their key. stale_rows lists keys whose rows are to go.
	 * warnings: the parser's warnings (a JSON array), NULL when none. */
	"ALTER TABLE profiles ADD COLUMN data_id INTEGER;"
	"ALTER TABLE profiles ADD COLUMN pending_id INTEGER;"
	"ALTER TABLE profiles ADD COLUMN warnings TEXT;"
	"UPDATE profiles SET data_id = id WHERE status = 2;"
	"CREATE TABLE parse_keys (id INTEGER PRIMARY KEY AUTOINCREMENT);"
	"CREATE TABLE stale_rows (data_id INTEGER PRIMARY KEY);",
	/* 6: recordings of this machine (from a watched directory) may be
	 * symbolized from its files as perf would; uploads only by build-id */
	"ALTER TABLE profiles ADD COLUMN local INTEGER NOT NULL DEFAULT 0;",
	/* 7: no stored aggregate: a model sums it from the sample blocks,
	 * which hold every sample's key and weights (writing 60,000 rows
	 * held a system-wide build's profile from ready for 60 ms) */
	"DROP TABLE sample_agg;",
};
#define NR_MIGRATIONS (int)(sizeof(migrations) / sizeof(migrations[0]))

/* rows a parse writes (tags belong to the upload and stay) */
static const char *const profile_tables[] = {
	"features", "events", "record_counts", "strings", "frames",
	"stacks", "comms", "maps", "sample_blocks", "frame_offsets", "leaf_addrs",
	"summary_state", "summary_events", "summary_keys",
};
#define NR_PROFILE_TABLES (sizeof(profile_tables) / sizeof(profile_tables[0]))

int sq_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		log_warn("msg=\"sqlite\" sql=\"%.60s\" error=\"%s\"", sql, msg ? msg : "?");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

sqlite3 *sq_conn_open(const char *path, char *err, size_t errlen)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		if (err)
			snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, SQ_BUSY_TIMEOUT_MS);
	/* WAL: readers never block the writer; NORMAL sync is crash safe in WAL */
	if (sq_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
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

	if (sq_exec(db, "BEGIN IMMEDIATE") < 0)
		goto fail;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
		goto fail_rb;
	if (sqlite3_step(s) == SQLITE_ROW)
		version = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (version > NR_MIGRATIONS) {
		snprintf(err, errlen, "database schema version %d is newer than this perfhubd (%d)",
			 version, NR_MIGRATIONS);
		sq_exec(db, "ROLLBACK");
		return -1;
	}
	for (i = version; i < NR_MIGRATIONS; i++) {
		if (sq_exec(db, migrations[i]) < 0)
			goto fail_rb;
		log_info("msg=\"schema migrated\" version=%d", i + 1);
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", NR_MIGRATIONS);
	if (sq_exec(db, sql) < 0 || sq_exec(db, "COMMIT") < 0)
		goto fail_rb;
	return 0;
fail_rb:
	snprintf(err, errlen, "migration failed: %s", sqlite3_errmsg(db));
	sq_exec(db, "ROLLBACK");
	return -1;
fail:
	snprintf(err, errlen, "migration failed: %s", sqlite3_errmsg(db));
	return -1;
}

sqlite3 *sq_conn_get(st_persist *p)
{
	sqlite3 *db = NULL;
	char err[256];

	pthread_mutex_lock(&p->lock);
	if (p->nr_pool)
		db = p->pool[--p->nr_pool];
	pthread_mutex_unlock(&p->lock);
	if (!db) {
		db = sq_conn_open(p->path, err, sizeof(err));
		if (!db)
			log_warn("msg=\"sqlite open\" error=\"%s\"", err);
	}
	return db;
}

void sq_conn_put(st_persist *p, sqlite3 *db)
{
	if (!db)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->nr_pool < SQ_POOL_MAX) {
		p->pool[p->nr_pool++] = db;
		db = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	sqlite3_close(db);
}

sqlite3_stmt *sq_prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		log_warn("msg=\"sqlite prepare\" sql=\"%.80s\" error=\"%s\"", sql, sqlite3_errmsg(db));
		return NULL;
	}
	return s;
}

int sq_step_done(sqlite3 *db, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		log_warn("msg=\"sqlite step\" error=\"%s\"", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

static void sq_close(st_persist *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nr_pool; i++)
		sqlite3_close(p->pool[i]);
	pthread_mutex_destroy(&p->lock);
	free(p->path);
	free(p);
}

static st_persist *sq_open(const char *path, const st_options *o, char *err, size_t errlen)
{
	st_persist *p = calloc(1, sizeof(*p));
	sqlite3 *db;

	(void)o;	/* one process: no leases */
	if (!p || !(p->path = strdup(path))) {
		free(p);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	db = sq_conn_open(path, err, errlen);
	if (!db || migrate(db, err, errlen) < 0)
		goto fail;
	if (sq_many_init(db) < 0) {
		snprintf(err, errlen, "%s: cannot create the summary tables: %s", path,
			 sqlite3_errmsg(db));
		goto fail;
	}
	/* rows of parses replaced or deleted just before a stop */
	sq_stale_sweep(db);
	p->pool[p->nr_pool++] = db;
	return p;
fail:
	sqlite3_close(db);
	sq_close(p);
	return NULL;
}

static int sq_ping(st_persist *p)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int rc = -1;

	if (!db)
		return -1;
	s = sq_prep(db, "SELECT count(*) FROM profiles");
	if (s && sqlite3_step(s) == SQLITE_ROW)
		rc = 0;
	sqlite3_finalize(s);
	sq_conn_put(p, db);
	return rc;
}


int sq_new_key(sqlite3 *db, int64_t *key)
{
	sqlite3_stmt *s;
	int64_t k;

	/* AUTOINCREMENT never hands a number out twice, even once its row is
	 * gone */
	if (sq_exec(db, "INSERT INTO parse_keys DEFAULT VALUES") < 0)
		return -1;
	k = sqlite3_last_insert_rowid(db);
	s = sq_prep(db, "DELETE FROM parse_keys WHERE id = ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, k);
	if (sq_step_done(db, s) < 0) {
		sqlite3_finalize(s);
		return -1;
	}
	sqlite3_finalize(s);
	*key = -k;
	return 0;
}

int sq_stale_add(sqlite3 *db, int64_t key)
{
	sqlite3_stmt *s = sq_prep(db, "INSERT OR IGNORE INTO stale_rows (data_id) VALUES (?)");
	int rc;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, key);
	rc = sq_step_done(db, s);
	sqlite3_finalize(s);
	return rc;
}

void sq_stale_sweep(sqlite3 *db)
{
	for (;;) {
		sqlite3_stmt *s;
		int64_t key;
		int found;

		if (sq_exec(db, "BEGIN IMMEDIATE") < 0)
			return;
		s = sq_prep(db, "SELECT data_id FROM stale_rows LIMIT 1");
		found = s && sqlite3_step(s) == SQLITE_ROW;
		key = found ? sqlite3_column_int64(s, 0) : 0;
		sqlite3_finalize(s);
		if (!found) {
			sq_exec(db, "COMMIT");
			return;
		}
		s = sq_prep(db, "DELETE FROM stale_rows WHERE data_id = ?");
		if (s)
			sqlite3_bind_int64(s, 1, key);
		if (!s || sq_step_done(db, s) < 0 || sq_delete_rows(db, key) < 0 ||
		    sq_exec(db, "COMMIT") < 0) {
			sqlite3_finalize(s);
			sq_exec(db, "ROLLBACK");
			return;
		}
		sqlite3_finalize(s);
	}
}

int sq_delete_rows(sqlite3 *db, int64_t id)
{
	char sql[128];
	size_t i;

	for (i = 0; i < NR_PROFILE_TABLES; i++) {
		sqlite3_stmt *s;
		int rc;

		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE profile_id = ?", profile_tables[i]);
		s = sq_prep(db, sql);
		if (!s)
			return -1;
		sqlite3_bind_int64(s, 1, id);
		rc = sq_step_done(db, s);
		sqlite3_finalize(s);
		if (rc < 0)
			return -1;
	}
	return 0;
}


const st_persist_ops st_sqlite_ops = {
	.name = "sqlite",
	.open = sq_open,
	.close = sq_close,
	.ping = sq_ping,
	.profile_add = sq_profile_add,
	.profile_by_sha = sq_profile_by_sha,
	.profile_claim_next = sq_profile_claim_next,
	.profile_local = sq_profile_local,
	.profile_fail = sq_profile_fail,
	.profile_requeue = sq_profile_requeue,
	.requeue_parsing = sq_requeue_parsing,
	.profile_delete = sq_profile_delete,
	.profile_resymbolize = sq_profile_resymbolize,
	.profile_json = sq_profile_json,
	.profile_file = sq_profile_file,
	.profile_update = sq_profile_update,
	.profile_list_json = sq_profile_list_json,
	.counts = sq_counts,
	.ready_profiles = sq_ready_profiles,
	.profiles_labels = sq_profiles_labels,
	.profiles_rows_json = sq_profiles_rows_json,
	.summary_put = sq_summary_put,
	.summary_read = sq_summary_read,
	.writer_begin = sq_writer_begin,
	.writer_write = sq_writer_write,
	.writer_finish = sq_writer_finish,
	.writer_abort = sq_writer_abort,
	.read_begin = sq_read_begin,
	.read_model = sq_read_model,
	.read_blocks = sq_read_blocks,
	.read_end = sq_read_end,
	.read_leaf_addrs = sq_read_leaf_addrs,
	.debuginfo_init = sq_debuginfo_init,
	.debuginfo_put = sq_debuginfo_put,
	.debuginfo_get = sq_debuginfo_get,
	.debuginfo_has_symbols = sq_debuginfo_has_symbols,
	.debuginfo_added_since = sq_debuginfo_added_since,
	.debuginfo_delete = sq_debuginfo_delete,
	.debuginfo_orphan = sq_debuginfo_orphan,
	.profile_dsos_set = sq_profile_dsos_set,
	.profiles_unresolved_in = sq_profiles_unresolved_in,
	.profile_dso_build_id = sq_profile_dso_build_id,
	.used_bytes = sq_used_bytes,
	.expired = sq_expired,
	.oldest_prunable = sq_oldest_prunable,
	.backup = sq_backup,
	.vacuum = sq_vacuum,
};
