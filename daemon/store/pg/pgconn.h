/*
 * pgconn.h - one PostgreSQL connection that comes back by itself. libpq
 * under it; the connection string is any libpq URI (postgresql://,
 * postgres://) or key=value list. When the server restarts or the network
 * drops the connection, the next call reconnects, patiently (backoff up to
 * PGC_PATIENCE_S seconds), and pgc_txn runs a whole transaction again on
 * the new connection.
 *
 * Thread safety: a pgc belongs to one thread at a time (a pool hands them
 * out); libpq's own state is per connection.
 */
#ifndef PERFHUB_STORE_PGCONN_H
#define PERFHUB_STORE_PGCONN_H

#include <stddef.h>

#include <libpq-fe.h>

#define PGC_PATIENCE_S 60	/* a server away longer is an error */
#define PGC_TRIES 5		/* runs of one transaction, at most */

typedef struct pgc pgc;

/* 1 when `db` names PostgreSQL (postgresql:// or postgres://), not a path. */
int pgc_is_uri(const char *db);

/* Connects now. NULL with libpq's reason in err (the password never). */
pgc *pgc_open(const char *conninfo, char *err, size_t errlen);
void pgc_close(pgc *c);
/* The connection, reconnected first if it was lost; NULL and err when the
 * server stays away longer than the patience (seconds; 0 = PGC_PATIENCE_S). */
PGconn *pgc_conn(pgc *c, char *err, size_t errlen);
void pgc_set_patience(pgc *c, unsigned seconds);
/* SQL run on the connection now and again after every reconnect (session
 * settings: SET ...). At most PGC_MAX_INIT bytes. 0 or -1 with err. */
#define PGC_MAX_INIT 512
int pgc_init(pgc *c, const char *sql, char *err, size_t errlen);
/* How many times this connection came back. */
unsigned long pgc_reconnects(const pgc *c);

/* A transaction body: 0 = commit, -1 = roll back (err set). It reports
 * failed statements through pgc_check (or pgc_exec), which is how pgc_txn
 * tells the failures worth another run from the others. */
typedef int (*pgc_txn_fn)(PGconn *conn, void *ctx, char *err, size_t errlen);
/* BEGIN, fn, COMMIT. A lost connection, a serialization failure or a
 * deadlock runs it all again (up to PGC_TRIES times), so fn must be safe to
 * run twice: when the connection drops after COMMIT was sent, nobody knows
 * whether it was applied. 0, or -1 with err. */
int pgc_txn(pgc *c, pgc_txn_fn fn, void *ctx, char *err, size_t errlen);

/* Checks a result: 0 when its status is `want`, else -1 with "what: the
 * server's message (SQLSTATE)" in err. Never frees r. */
int pgc_check(const PGresult *r, ExecStatusType want, const char *what, char *err,
	      size_t errlen);
/* 1 when an error (a result, or NULL for none) means: try again on a new
 * connection or in a new transaction. */
int pgc_retryable(PGconn *conn, const PGresult *r);
/* Runs one command without parameters; 0 or -1 with err. */
int pgc_exec(PGconn *conn, const char *sql, char *err, size_t errlen);

#endif
