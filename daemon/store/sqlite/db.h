/*
 * db.h - what the files of the SQLite backend share (internal to
 * store/sqlite/): the opened store (a file in WAL mode, a pool of reader
 * connections), statement helpers, and the ops each file implements for
 * st_sqlite_ops (persist.h).
 *
 *   db.c         schema and migrations, connections, the ops table
 *   profiles.c   profiles and their jobs
 *   writer.c     a parse's rows in one short transaction per block
 *   read.c       read snapshots: a profile's model and its blocks
 *   debuginfo.c  the debuginfo index
 *   admin.c      retention's queries, online backup, VACUUM
 *   many.c       profiles with their labels (selectors), per-profile summaries
 */
#ifndef PERFHUB_STORE_SQLITE_DB_H
#define PERFHUB_STORE_SQLITE_DB_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store/persist.h"

#define SQ_BUSY_TIMEOUT_MS 30000
#define SQ_POOL_MAX 64		/* idle reader connections kept */

struct st_persist {
	char *path;
	pthread_mutex_t lock;
	sqlite3 *pool[SQ_POOL_MAX];
	size_t nr_pool;
};

/* ---- db.c ---- */
/* A new connection (WAL, busy timeout). NULL and err. */
sqlite3 *sq_conn_open(const char *path, char *err, size_t errlen);
/* A pooled connection (a new one when the pool is empty); NULL logged. */
sqlite3 *sq_conn_get(st_persist *p);
void sq_conn_put(st_persist *p, sqlite3 *db);
int sq_exec(sqlite3 *db, const char *sql);
sqlite3_stmt *sq_prep(sqlite3 *db, const char *sql);
/* Steps once; -1 (logged) unless DONE or ROW. */
int sq_step_done(sqlite3 *db, sqlite3_stmt *s);
/* Deletes the rows a parse wrote under `key` (inside the caller's
 * transaction). A parse's rows are keyed by a key of their own (profiles'
 * data_id for the one served, pending_id for one being written; a v3
 * profile's rows by its id), so a new parse is written beside the one
 * readers are served. */
int sq_delete_rows(sqlite3 *db, int64_t key);
/* A new key for a parse's rows (inside the caller's transaction). */
int sq_new_key(sqlite3 *db, int64_t *key);
/* Notes that the rows under `key` are to go (inside the caller's
 * transaction); sq_stale_sweep deletes them, one short transaction per key,
 * outside any transaction of the caller. */
int sq_stale_add(sqlite3 *db, int64_t key);
void sq_stale_sweep(sqlite3 *db);

/* ---- profiles.c ---- */
int sq_profile_add(st_persist *p, const st_new_profile *np, int64_t *id, int *existed);
int sq_profile_by_sha(st_persist *p, const char *sha256, int64_t *id);
int sq_profile_claim_next(st_persist *p, int64_t *id, char **spool_path, char **kind);
int sq_profile_local(st_persist *p, int64_t id);
int sq_profile_fail(st_persist *p, int64_t id, const char *msg, int64_t offset,
		    int64_t parse_ms);
int sq_profile_requeue(st_persist *p, int64_t id);
int sq_requeue_parsing(st_persist *p, int *count);
int sq_profile_delete(st_persist *p, int64_t id, char **spool_path);
int sq_profile_resymbolize(st_persist *p, int64_t id);
int sq_profile_file(st_persist *p, int64_t id, char **spool_path, char **kind, char **name);
int sq_profile_update(st_persist *p, int64_t id, const st_profile_patch *patch);
json_t *sq_profile_json(st_persist *p, int64_t id, int *notfound);
json_t *sq_profile_list_json(st_persist *p, const st_list_filter *f);
int sq_counts(st_persist *p, st_counts *c);
int sq_ready_profiles(st_persist *p, const st_agg_filter *f, st_ready_profile **out,
		      size_t *n);

json_t *sq_profiles_rows_json(st_persist *p, const int64_t *ids, size_t n);
/* The filter of a profile list into ?1..?6: status (-1 any), hostname,
 * tag key and value (NULL: any), since, until (0: open). */
void sq_bind_filter(sqlite3_stmt *s, int status, const char *hostname, const char *tag_key,
		    const char *tag_value, int64_t since, int64_t until);

/* ---- many.c ---- */
/* Creates its tables when missing (at every open). */
int sq_many_init(sqlite3 *db);
int sq_profiles_labels(st_persist *p, const st_label_query *q, st_labels_cb cb, void *ctx);
int sq_summary_put(st_persist *p, int64_t id, int64_t gen, const pe_summary *s);
int sq_summary_read(st_persist *p, const int64_t *ids, size_t n, int kind, const char *key,
		    st_summary_cb cb, void *ctx);

/* ---- writer.c ---- */
st_persist_writer *sq_writer_begin(st_persist *p, int64_t id);
int sq_writer_write(st_persist_writer *w, const pe_row *rows, size_t n,
		    const pe_packed_block *block, st_write_times *t);
int sq_writer_finish(st_persist_writer *w, const st_summary *s, st_write_times *t);
void sq_writer_abort(st_persist_writer *w);

/* ---- read.c ---- */
int sq_read_begin(st_persist *p, int64_t id, int64_t *gen, st_persist_read **rd);
int sq_read_model(st_persist_read *rd, pe_model *m);
int sq_read_blocks(st_persist_read *rd, uint64_t from_ns, uint64_t to_ns, pe_block_cb cb,
		   void *ctx);
void sq_read_end(st_persist_read *rd);
int sq_read_leaf_addrs(st_persist_read *rd, uint32_t frame, pe_leaf_cb cb, void *ctx);

/* ---- debuginfo.c ---- */
int sq_debuginfo_init(st_persist *p);
int sq_debuginfo_put(st_persist *p, const char *build_id, const char *kind, const char *path,
		     uint64_t size, int symbols, const char *source);
int sq_debuginfo_get(st_persist *p, const char *build_id, char **path, char **kind,
		     uint64_t *size);
int sq_debuginfo_has_symbols(st_persist *p, const char *build_id);
int sq_debuginfo_added_since(st_persist *p, const char *build_id, int64_t since);
int sq_debuginfo_delete(st_persist *p, const char *build_id);
int sq_debuginfo_orphan(st_persist *p, int64_t before, char hex[41]);
int sq_profile_dsos_set(st_persist *p, int64_t id, size_t n, const char *const *build_ids,
			const char *const *paths, const uint64_t *unresolved);
int sq_profiles_unresolved_in(st_persist *p, const char *build_id, int64_t **ids, size_t *n);
int sq_profile_dso_build_id(st_persist *p, int64_t id, const char *path, char *hex,
			    size_t hexlen);

/* ---- admin.c ---- */
int sq_used_bytes(st_persist *p, int64_t *bytes);
int sq_expired(st_persist *p, int64_t before, int64_t *ids, size_t max, size_t *n);
int sq_oldest_prunable(st_persist *p, int64_t *id);
int sq_backup(const char *path, const char *dest, char *err, size_t errlen);
int sq_vacuum(const char *path, int64_t *before, int64_t *after, char *err, size_t errlen);

#endif
