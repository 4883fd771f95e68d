/* pgconn.c - a libpq connection with reconnects and retried transactions. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pgconn.h"

#define PGC_CONNECT_TIMEOUT "10"	/* seconds per attempt */
#define PGC_BACKOFF_MIN_MS 100
#define PGC_BACKOFF_MAX_MS 2000

struct pgc {
	PGconn *conn;
	unsigned patience_s;
	unsigned long reconnects;
	char init[PGC_MAX_INIT];	/* session settings, again after a reconnect */
};

/* the last pgc_check failure on this thread was worth another run */
static _Thread_local int last_retryable;

int pgc_is_uri(const char *db)
{
	return db && (!strncmp(db, "postgresql://", 13) || !strncmp(db, "postgres://", 11));
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* libpq's messages end in a newline and may span lines: one line, kept */
static void put_msg(char *err, size_t errlen, const char *what, const char *msg)
{
	size_t n;
	char *p;

	snprintf(err, errlen, "%s%s%s", what ? what : "", what ? ": " : "", msg ? msg : "?");
	for (p = err; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	n = strlen(err);
	while (n && err[n - 1] == ' ')
		err[--n] = 0;
}

/* NOTICEs (e.g. "relation already exists, skipping") are not errors */
static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

pgc *pgc_open(const char *conninfo, char *err, size_t errlen)
{
	/* ours first: what the user's string says comes later and wins */
	static const char *const keys[] = {
		"connect_timeout", "application_name", "keepalives_idle",
		"keepalives_interval", "keepalives_count", "dbname", NULL
	};
	const char *values[] = { PGC_CONNECT_TIMEOUT, "perfhubd", "30", "10", "3", conninfo, NULL };
	pgc *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->patience_s = PGC_PATIENCE_S;
	c->conn = PQconnectdbParams(keys, values, 1);
	if (!c->conn || PQstatus(c->conn) != CONNECTION_OK) {
		put_msg(err, errlen, "postgresql", c->conn ? PQerrorMessage(c->conn) : "out of memory");
		pgc_close(c);
		return NULL;
	}
	PQsetNoticeProcessor(c->conn, quiet, NULL);
	return c;
}

void pgc_close(pgc *c)
{
	if (!c)
		return;
	PQfinish(c->conn);
	free(c);
}

void pgc_set_patience(pgc *c, unsigned seconds)
{
	c->patience_s = seconds ? seconds : PGC_PATIENCE_S;
}

unsigned long pgc_reconnects(const pgc *c)
{
	return c->reconnects;
}

int pgc_init(pgc *c, const char *sql, char *err, size_t errlen)
{
	if (strlen(sql) >= sizeof(c->init)) {
		snprintf(err, errlen, "session settings too long");
		return -1;
	}
	snprintf(c->init, sizeof(c->init), "%s", sql);
	return pgc_exec(c->conn, c->init, err, errlen);
}

PGconn *pgc_conn(pgc *c, char *err, size_t errlen)
{
	double deadline = now_s() + c->patience_s;
	long pause = PGC_BACKOFF_MIN_MS;

	if (PQstatus(c->conn) == CONNECTION_OK)
		return c->conn;
	for (;;) {
		PQreset(c->conn);
		if (PQstatus(c->conn) == CONNECTION_OK &&
		    (!c->init[0] || pgc_exec(c->conn, c->init, err, errlen) == 0)) {
			PQsetNoticeProcessor(c->conn, quiet, NULL);
			c->reconnects++;
			return c->conn;
		}
		if (now_s() + (double)pause / 1000 > deadline) {
			put_msg(err, errlen, "postgresql: reconnecting", PQerrorMessage(c->conn));
			return NULL;
		}
		sleep_ms(pause);
		pause = pause * 2 > PGC_BACKOFF_MAX_MS ? PGC_BACKOFF_MAX_MS : pause * 2;
	}
}

static int state_retryable(const char *state)
{
	if (!state)
		return 0;
	return !strcmp(state, "40001") || !strcmp(state, "40P01") ||	/* serialization, deadlock */
	       !strncmp(state, "08", 2) ||				/* connection exception */
	       !strcmp(state, "57P01") || !strcmp(state, "57P02") ||	/* shutdown */
	       !strcmp(state, "57P03");					/* cannot connect now */
}

int pgc_retryable(PGconn *conn, const PGresult *r)
{
	if (conn && PQstatus(conn) != CONNECTION_OK)
		return 1;
	return r && state_retryable(PQresultErrorField(r, PG_DIAG_SQLSTATE));
}

int pgc_check(const PGresult *r, ExecStatusType want, const char *what, char *err,
	      size_t errlen)
{
	const char *state, *primary;
	char msg[512];

	if (r && PQresultStatus(r) == want)
		return 0;
	if (!r) {
		last_retryable = 1;	/* no result at all: the connection went */
		snprintf(err, errlen, "%s: no answer from the server", what);
		return -1;
	}
	state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	/* no SQLSTATE: libpq's own failure, i.e. the connection is gone */
	last_retryable = !state || state_retryable(state);
	primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
	snprintf(msg, sizeof(msg), "%s%s%s%s", primary ? primary : PQresultErrorMessage(r),
		 state ? " (" : "", state ? state : "", state ? ")" : "");
	if (!PQresultErrorMessage(r)[0] && PQresultStatus(r) != PGRES_FATAL_ERROR)
		snprintf(msg, sizeof(msg), "unexpected answer %s", PQresStatus(PQresultStatus(r)));
	put_msg(err, errlen, what, msg);
	return -1;
}

int pgc_exec(PGconn *conn, const char *sql, char *err, size_t errlen)
{
	PGresult *r = PQexec(conn, sql);
	int rc;

	rc = pgc_check(r, PGRES_COMMAND_OK, sql, err, errlen);
	if (rc < 0 && r && PQresultStatus(r) == PGRES_TUPLES_OK)
		rc = 0;
	PQclear(r);
	return rc;
}

int pgc_txn(pgc *c, pgc_txn_fn fn, void *ctx, char *err, size_t errlen)
{
	int tries;

	for (tries = 1;; tries++) {
		PGconn *conn = pgc_conn(c, err, errlen);
		int rc;

		if (!conn)
			return -1;
		last_retryable = 0;
		rc = pgc_exec(conn, "BEGIN", err, errlen);
		if (rc == 0) {
			rc = fn(conn, ctx, err, errlen);
			if (rc == 0)
				rc = pgc_exec(conn, "COMMIT", err, errlen);
			else if (PQstatus(conn) == CONNECTION_OK)
				PQclear(PQexec(conn, "ROLLBACK"));
		}
		if (rc == 0)
			return 0;
		if (tries >= PGC_TRIES || !(last_retryable || PQstatus(conn) != CONNECTION_OK))
			return -1;
		sleep_ms(50L * tries);
	}
}
