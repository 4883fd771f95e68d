/*
 * pg.h - what the files of the PostgreSQL backend share (internal to
 * store/pg/): the opened store (a pool of connections, this node's name
 * and the jobs it holds, the lease keeper), statement helpers, and the ops
 * each file implements for st_pg_ops (persist.h).
 *
 *   pgstore.c     open, close, the connection pool, the ops table
 *   pgkeeper.c    the lease keeper: renewals, expired leases, LISTEN,
 *                 the jobs this node holds, singletons
 *   pgprofiles.c  profiles and their jobs
 *   pgwriter.c    a parse's rows: COPY in short fenced transactions
 *   pgread.c      read snapshots: a profile's model and its blocks
 *   pgmany.c      profiles by their labels, their stored summaries
 *   pgdebuginfo.c the debuginfo index
 *   pgadmin.c     retention's queries
 *   pgcopy.c      perfhubd --copy-to: an SQLite store into this one
 *
 * Building blocks from phase one: pgconn.h (connections that come back,
 * transactions run again), pgmigrate.h + pgschema.h (the schema),
 * pgjobs.h (claims, leases, fences). docs/cluster.md is the design.
 */
#ifndef PERFHUB_STORE_PG_H
#define PERFHUB_STORE_PG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "store/persist.h"
#include "pgconn.h"
#include "pgjobs.h"

#define PG_POOL_MAX 64		/* idle connections kept */
#define PG_MAX_HELD 1024	/* jobs one node holds at once (workers are fewer) */
#define PG_MAX_SINGLETONS 8
#define PG_MAX_PARAMS 16
#define PG_FETCH_ROWS 10000	/* rows of a model table per FETCH */
#define PG_FETCH_BLOCKS 16	/* sample blocks per FETCH */
#define PG_PING_PATIENCE_S 2	/* /healthz waits no longer for the server */
/* A session of ours idle inside a transaction for this long (at least)
 * belongs to a stalled node: the server ends it, and its row locks go. */
#define PG_IDLE_IN_TXN_MIN_S 10
#define PG_STATEMENT_TIMEOUT_S 120	/* a statement stalled by its client, at most */
#define PG_RENEW_LOCK_TIMEOUT_MS 1000	/* a renewal waits no longer for a row */

/* A job this node claimed: its attempt is the fencing token of its writes. */
typedef struct pg_held {
	int64_t id;
	int32_t attempt;
	int lost;		/* a renewal found it taken back */
} pg_held;

typedef struct pg_singleton {
	char name[32];
	pgc *c;			/* the session holding the advisory lock */
} pg_singleton;

struct st_persist {
	char *conninfo;
	unsigned lease_s;
	char node[PGJ_MAX_NODE + 1];	/* HOST:PID:RANDOM */
	char session[PGC_MAX_INIT];	/* settings of every connection (pgc_init) */
	pthread_mutex_t lock;		/* the pool, held jobs, singletons, wake-up */
	pgc *pool[PG_POOL_MAX];
	size_t nr_pool;
	pg_held held[PG_MAX_HELD];
	size_t nr_held;
	pg_singleton singles[PG_MAX_SINGLETONS];
	void (*wake)(void *ctx);
	void *wake_ctx;
	void (*dbg_hook)(void *ctx, const char *build_id);
	void *dbg_hook_ctx;
	pthread_t keeper;
	int keeper_running;
	atomic_int stop;
};

/* ---- pgstore.c ---- */
/* A pooled connection (a new one when the pool is empty); NULL logged. */
pgc *pg_get(st_persist *p);
/* A new connection with the store's session settings; NULL and err. */
pgc *pg_connect(st_persist *p, char *err, size_t errlen);
void pg_put(st_persist *p, pgc *c);
/* Runs fn in one transaction on a pooled connection (pgc_txn: run again
 * after a lost connection); a failure is logged with `what`. 0 or -1. */
int pg_txn(st_persist *p, const char *what, pgc_txn_fn fn, void *ctx);
/* Deletes the rows a parse of profile id wrote (inside the caller's
 * transaction). */
int pg_delete_rows(PGconn *conn, int64_t id, char *err, size_t errlen);

/* Statement parameters: text unless said, texts made valid UTF-8. */
typedef struct pg_params {
	int n;
	const char *v[PG_MAX_PARAMS];
	int len[PG_MAX_PARAMS], fmt[PG_MAX_PARAMS];
	char num[PG_MAX_PARAMS][24];
	char *owned[PG_MAX_PARAMS];
	int oom;
} pg_params;
void pgp_init(pg_params *pp);
void pgp_i64(pg_params *pp, int64_t v);
void pgp_f64(pg_params *pp, double v);
void pgp_text(pg_params *pp, const char *s);	/* NULL is SQL NULL */
void pgp_bytes(pg_params *pp, const void *data, size_t len);	/* bytea, binary */
void pgp_free(pg_params *pp);
/* Runs sql with pp (may be NULL); binary results when `binary`. OUT: the
 * result (PQclear it), whose status is `want`. 0 or -1 with err. */
int pg_exec(PGconn *conn, const char *what, const char *sql, pg_params *pp, int binary,
	    ExecStatusType want, PGresult **out, char *err, size_t errlen);
/* A statement that returns nothing (or rows nobody reads); OUT: rows
 * changed (may be NULL). 0 or -1 with err. */
int pg_cmd(PGconn *conn, const char *what, const char *sql, pg_params *pp, long *changed,
	   char *err, size_t errlen);

/* A text result's column as a number (0 for NULL). */
int64_t pg_i64(const PGresult *r, int row, int col);
/* A binary result's integer column (int2, int4 or int8; 0 for NULL). */
int64_t pg_bin_int(const PGresult *r, int row, int col);
/* malloc'ed copy of a text column, NULL for SQL NULL (or out of memory). */
char *pg_strdup(const PGresult *r, int row, int col);

/* ---- pgkeeper.c ---- */
int pg_keeper_start(st_persist *p, char *err, size_t errlen);
void pg_keeper_stop(st_persist *p);
/* The held jobs: add after a claim; find (0 and *job, 1 = not held, 2 =
 * held but lost); drop when its job ended here. */
int pg_held_add(st_persist *p, int64_t id, int32_t attempt);
int pg_held_find(st_persist *p, int64_t id, pgj_job *job);
void pg_held_drop(st_persist *p, int64_t id);
/* The job's lease was found lost (by a renewal or a fenced write). */
void pg_held_lose(st_persist *p, int64_t id, int32_t attempt);
void pg_set_wakeup(st_persist *p, void (*fn)(void *ctx), void *ctx);
int pg_job_lost(st_persist *p, int64_t id);
void pg_set_debuginfo_hook(st_persist *p, void (*fn)(void *ctx, const char *build_id),
			   void *ctx);
int pg_announce_debuginfo(st_persist *p, const char *build_id);
int pg_singleton_begin(st_persist *p, const char *name, int wait);
void pg_singleton_end(st_persist *p, const char *name);

/* ---- pgprofiles.c ---- */
int pg_profile_add(st_persist *p, const st_new_profile *np, int64_t *id, int *existed);
int pg_profile_by_sha(st_persist *p, const char *sha256, int64_t *id);
int pg_profile_claim_next(st_persist *p, int64_t *id, char **spool_path, char **kind);
int pg_profile_fail(st_persist *p, int64_t id, const char *msg, int64_t offset,
		    int64_t parse_ms);
int pg_profile_requeue(st_persist *p, int64_t id);
int pg_requeue_parsing(st_persist *p, int *count);
int pg_profile_delete(st_persist *p, int64_t id, char **spool_path);
int pg_profile_resymbolize(st_persist *p, int64_t id);
json_t *pg_profile_json(st_persist *p, int64_t id, int *notfound);
int pg_profile_file(st_persist *p, int64_t id, char **spool_path, char **kind, char **name);
int pg_profile_update(st_persist *p, int64_t id, const st_profile_patch *patch);
json_t *pg_profile_list_json(st_persist *p, const st_list_filter *f);
int pg_counts(st_persist *p, st_counts *c);
int pg_ready_profiles(st_persist *p, const st_agg_filter *f, st_ready_profile **out,
		      size_t *n);
int pg_profile_local(st_persist *p, int64_t id);
json_t *pg_profiles_rows_json(st_persist *p, const int64_t *ids, size_t n);

/* ---- pgmany.c ---- */
int pg_profiles_labels(st_persist *p, const st_label_query *q, st_labels_cb cb, void *ctx);
int pg_summary_put(st_persist *p, int64_t id, int64_t gen, const pe_summary *s);
int pg_summary_read(st_persist *p, const int64_t *ids, size_t n, int kind, const char *key,
		    st_summary_cb cb, void *ctx);
/* ids as a bigint[] literal ("{1,2}"); free *owned with pg_ids_array_free
 * (also when NULL is returned: out of memory). */
const char *pg_ids_array(void **owned, const int64_t *ids, size_t n);
void pg_ids_array_free(void *owned);

/* ---- pgwriter.c ---- */
st_persist_writer *pg_writer_begin(st_persist *p, int64_t id);
int pg_writer_write(st_persist_writer *w, const pe_row *rows, size_t n,
		    const pe_packed_block *block, st_write_times *t);
int pg_writer_finish(st_persist_writer *w, const st_summary *s, st_write_times *t);
void pg_writer_abort(st_persist_writer *w);

/* ---- pgread.c ---- */
int pg_read_begin(st_persist *p, int64_t id, int64_t *gen, st_persist_read **rd);
int pg_read_model(st_persist_read *rd, pe_model *m);
int pg_read_blocks(st_persist_read *rd, uint64_t from_ns, uint64_t to_ns, pe_block_cb cb,
		   void *ctx);
void pg_read_end(st_persist_read *rd);
int pg_read_leaf_addrs(st_persist_read *rd, uint32_t frame, pe_leaf_cb cb, void *ctx);

/* ---- pgdebuginfo.c ---- */
int pg_debuginfo_init(st_persist *p);
int pg_debuginfo_put(st_persist *p, const char *build_id, const char *kind, const char *path,
		     uint64_t size, int symbols, const char *source);
int pg_debuginfo_get(st_persist *p, const char *build_id, char **path, char **kind,
		     uint64_t *size);
int pg_debuginfo_has_symbols(st_persist *p, const char *build_id);
int pg_debuginfo_added_since(st_persist *p, const char *build_id, int64_t since);
int pg_profile_dsos_set(st_persist *p, int64_t id, size_t n, const char *const *build_ids,
			const char *const *paths, const uint64_t *unresolved);
int pg_profiles_unresolved_in(st_persist *p, const char *build_id, int64_t **ids, size_t *n);
int pg_profile_dso_build_id(st_persist *p, int64_t id, const char *path, char *hex,
			    size_t hexlen);
int pg_debuginfo_delete(st_persist *p, const char *build_id);
int pg_debuginfo_orphan(st_persist *p, int64_t before, char hex[41]);

/* ---- pgadmin.c ---- */
int pg_used_bytes(st_persist *p, int64_t *bytes);
int pg_expired(st_persist *p, int64_t before, int64_t *ids, size_t max, size_t *n);
int pg_oldest_prunable(st_persist *p, int64_t *id);

#endif
