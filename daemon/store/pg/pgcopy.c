/*
 * pgcopy.c - perfhubd --copy-to: an SQLite store, read in one read
 * transaction, into an empty PostgreSQL store in one transaction (all of
 * it or nothing). Table by table, the columns both schemas have, streamed
 * through COPY in text format: a store of any size passes through a buffer
 * of PG_COPY_CHUNK bytes. A profile being parsed arrives queued; every
 * spooled file the source names (originals, debuginfo) is handed to the
 * caller to relocate and the copy keeps the ref it gives back.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "log.h"
#include "utf8.h"
#include "store/pg/pg.h"
#include "pgmigrate.h"
#include "pgschema.h"

#define PG_COPY_CHUNK (1 << 20)
#define PG_COPY_MAX_COLS 64
#define PG_COPY_MAX_REF 4096	/* bytes of a relocated spool ref */

typedef struct copier {
	sqlite3 *src;
	PGconn *conn;
	st_relocate_fn relocate;
	void *ctx;
	st_copy_stats *stats;
	char *buf;
	size_t len;
	char *err;
	size_t errlen;
} copier;

/* One table's columns that both stores have. */
typedef struct columns {
	int n;
	char *name[PG_COPY_MAX_COLS];
	int bytea[PG_COPY_MAX_COLS];
	int relocate[PG_COPY_MAX_COLS];	/* a spool path: "original" or "debuginfo" */
	int status;			/* the profiles' status column, or -1 */
} columns;

static void columns_free(columns *c)
{
	int i;

	for (i = 0; i < c->n; i++)
		free(c->name[i]);
	c->n = 0;
}

static int sqlite_has(copier *x, const char *table, const char *col)
{
	sqlite3_stmt *s;
	int found = 0;

	if (sqlite3_prepare_v2(x->src, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1,
			       &s, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, col, -1, SQLITE_STATIC);
	found = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return found;
}

/* PostgreSQL's columns of table (in its order) that SQLite has too. */
static int columns_of(copier *x, const char *table, columns *c)
{
	pg_params pp;
	PGresult *r;
	int i;

	memset(c, 0, sizeof(*c));
	c->status = -1;
	pgp_init(&pp);
	pgp_text(&pp, table);
	if (pg_exec(x->conn, "columns", "SELECT column_name, data_type FROM"
		    " information_schema.columns WHERE table_schema = current_schema()"
		    " AND table_name = $1 ORDER BY ordinal_position", &pp, 0, PGRES_TUPLES_OK, &r,
		    x->err, x->errlen) < 0) {
		pgp_free(&pp);
		return -1;
	}
	pgp_free(&pp);
	for (i = 0; i < PQntuples(r) && c->n < PG_COPY_MAX_COLS; i++) {
		const char *name = PQgetvalue(r, i, 0);

		if (!sqlite_has(x, table, name))
			continue;
		c->bytea[c->n] = !strcmp(PQgetvalue(r, i, 1), "bytea");
		c->relocate[c->n] = (!strcmp(table, "profiles") && !strcmp(name, "spool_path")) ? 1 :
				    (!strcmp(table, "debuginfo") && !strcmp(name, "path")) ? 2 : 0;
		if (!strcmp(table, "profiles") && !strcmp(name, "status"))
			c->status = c->n;
		if (!(c->name[c->n++] = strdup(name))) {
			PQclear(r);
			columns_free(c);
			snprintf(x->err, x->errlen, "out of memory");
			return -1;
		}
	}
	PQclear(r);
	return 0;
}

static int flush(copier *x)
{
	if (x->len && PQputCopyData(x->conn, x->buf, (int)x->len) != 1) {
		snprintf(x->err, x->errlen, "COPY: %s", PQerrorMessage(x->conn));
		return -1;
	}
	x->len = 0;
	return 0;
}

static int put(copier *x, const char *s, size_t n)
{
	while (n) {
		size_t k = n < PG_COPY_CHUNK - x->len ? n : PG_COPY_CHUNK - x->len;

		memcpy(x->buf + x->len, s, k);
		x->len += k;
		s += k;
		n -= k;
		if (x->len == PG_COPY_CHUNK && flush(x) < 0)
			return -1;
	}
	return 0;
}

/* A value in COPY's text format: backslash, tab, newline and CR escaped. */
static int put_text(copier *x, const char *s)
{
	char *fixed = NULL;
	int rc = 0;

	if (!utf8_valid(s)) {
		if (!(fixed = utf8_fix(s)))
			return -1;
		s = fixed;
	}
	for (; *s && rc == 0; s++) {
		switch (*s) {
		case '\\': rc = put(x, "\\\\", 2); break;
		case '\t': rc = put(x, "\\t", 2); break;
		case '\n': rc = put(x, "\\n", 2); break;
		case '\r': rc = put(x, "\\r", 2); break;
		default: rc = put(x, s, 1); break;
		}
	}
	free(fixed);
	return rc;
}

/* bytea as "\\x<hex>" (the backslash itself escaped for COPY). */
static int put_bytea(copier *x, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char pair[2];
	size_t i;

	if (put(x, "\\\\x", 3) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		pair[0] = hex[p[i] >> 4];
		pair[1] = hex[p[i] & 15];
		if (put(x, pair, 2) < 0)
			return -1;
	}
	return 0;
}

static int put_value(copier *x, const columns *c, int k, sqlite3_stmt *s)
{
	char ref[PG_COPY_MAX_REF];
	const char *t;

	if (sqlite3_column_type(s, k) == SQLITE_NULL)
		return put(x, "\\N", 2);
	if (c->bytea[k])
		return put_bytea(x, sqlite3_column_blob(s, k), (size_t)sqlite3_column_bytes(s, k));
	if (sqlite3_column_type(s, k) == SQLITE_FLOAT) {
		/* every digit: sqlite3_column_text keeps 15 */
		char num[40];

		snprintf(num, sizeof(num), "%.17g", sqlite3_column_double(s, k));
		return put(x, num, strlen(num));
	}
	t = (const char *)sqlite3_column_text(s, k);
	if (!t)
		return -1;
	if (c->relocate[k]) {
		/* the file goes where the copy's nodes find it */
		if (x->relocate(x->ctx, c->relocate[k] == 1 ? "original" : "debuginfo", t, ref,
				sizeof(ref), x->err, x->errlen) < 0)
			return -1;
		x->stats->files++;
		return put_text(x, ref);
	}
	/* a parse cut short is done again by whichever node claims it */
	if (k == c->status && sqlite3_column_int(s, k) == ST_PARSING)
		return put(x, "0", 1);
	return put_text(x, t);
}

/* 1 when the source keys table's rows by parse (SQLite schema 5's
 * profiles.data_id): a parse's tables, not the summaries (by profile). */
static int parse_keyed(copier *x, const char *table)
{
	int i;

	if (!strncmp(table, "summary_", 8) || !sqlite_has(x, "profiles", "data_id"))
		return 0;
	for (i = 0; i < pgs_nr_profile_tables; i++)
		if (!strcmp(table, pgs_profile_tables[i]))
			return 1;
	return 0;
}

static int copy_table(copier *x, const char *table)
{
	char sql[4096], *p;
	sqlite3_stmt *s = NULL;
	columns c;
	PGresult *r;
	size_t n;
	int i, rc = -1, step, keyed;

	if (columns_of(x, table, &c) < 0)
		return -1;
	if (!c.n) {
		columns_free(&c);
		return 0;	/* not in the source (an older store) */
	}
	/* the same column list for both sides; an SQLite store of schema 5
	 * keys a parse's rows by a key of their own (profiles.data_id): the
	 * rows of the parse each profile serves are copied under its id (a
	 * parse being written, or rows waiting to be swept, are not) */
	keyed = parse_keyed(x, table);
	p = sql + snprintf(sql, sizeof(sql), "SELECT ");
	for (i = 0; i < c.n; i++) {
		if (keyed && !strcmp(c.name[i], "profile_id"))
			p += snprintf(p, sizeof(sql) - (size_t)(p - sql), "%sp.id", i ? ", " : "");
		else
			p += snprintf(p, sizeof(sql) - (size_t)(p - sql), "%st.\"%s\"",
				      i ? ", " : "", c.name[i]);
	}
	if (keyed)
		snprintf(p, sizeof(sql) - (size_t)(p - sql), " FROM \"%s\" t JOIN profiles p"
			 " ON p.data_id = t.profile_id", table);
	else
		snprintf(p, sizeof(sql) - (size_t)(p - sql), " FROM \"%s\" t", table);
	if (sqlite3_prepare_v2(x->src, sql, -1, &s, NULL) != SQLITE_OK) {
		snprintf(x->err, x->errlen, "%s: %s", table, sqlite3_errmsg(x->src));
		goto out;
	}
	n = (size_t)snprintf(sql, sizeof(sql), "COPY %s (", table);
	for (i = 0; i < c.n; i++)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n, "%s%s", i ? ", " : "", c.name[i]);
	snprintf(sql + n, sizeof(sql) - n, ") FROM STDIN");
	r = PQexec(x->conn, sql);
	if (pgc_check(r, PGRES_COPY_IN, table, x->err, x->errlen) < 0) {
		PQclear(r);
		goto out;
	}
	PQclear(r);
	rc = 0;
	while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
		for (i = 0; i < c.n && rc == 0; i++)
			if ((i && put(x, "\t", 1) < 0) || put_value(x, &c, i, s) < 0)
				rc = -1;
		if (rc == 0)
			rc = put(x, "\n", 1);
		x->stats->rows++;
		if (!strcmp(table, "profiles"))
			x->stats->profiles++;
	}
	if (rc == 0 && step != SQLITE_DONE) {
		snprintf(x->err, x->errlen, "%s: %s", table, sqlite3_errmsg(x->src));
		rc = -1;
	}
	if (rc == 0)
		rc = flush(x);
	if (PQputCopyEnd(x->conn, rc == 0 ? NULL : "perfhubd --copy-to stopped") != 1)
		rc = -1;
	while ((r = PQgetResult(x->conn))) {
		if (rc == 0 && pgc_check(r, PGRES_COMMAND_OK, table, x->err, x->errlen) < 0)
			rc = -1;
		PQclear(r);
	}
	x->len = 0;
out:
	sqlite3_finalize(s);
	columns_free(&c);
	return rc;
}

static int copy_all(copier *x)
{
	PGresult *r;
	int i, rc = 0;

	if (pg_exec(x->conn, "the destination", "SELECT count(*) FROM profiles", NULL, 0,
		    PGRES_TUPLES_OK, &r, x->err, x->errlen) < 0)
		return -1;
	if (pg_i64(r, 0, 0)) {
		snprintf(x->err, x->errlen, "the PostgreSQL store holds %lld profiles already; the"
			 " copy goes into an empty one", (long long)pg_i64(r, 0, 0));
		PQclear(r);
		return -1;
	}
	PQclear(r);
	/* every table of the schema (but its version), debuginfo's too */
	if (pg_exec(x->conn, "the destination", "SELECT table_name FROM information_schema.tables"
		    " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
		    " AND table_name <> 'perfhub_schema' ORDER BY table_name", NULL, 0,
		    PGRES_TUPLES_OK, &r, x->err, x->errlen) < 0)
		return -1;
	for (i = 0; i < PQntuples(r) && rc == 0; i++)
		rc = copy_table(x, PQgetvalue(r, i, 0));
	PQclear(r);
	/* what retention counts: the bytes of each profile's rows */
	for (i = 0; i < pgs_nr_profile_tables && rc == 0; i++) {
		char sql[512];

		snprintf(sql, sizeof(sql), "UPDATE profiles p SET stored_bytes = stored_bytes + s.b"
			 " FROM (SELECT profile_id, sum(pg_column_size(t.*)) AS b FROM %s t"
			 " GROUP BY profile_id) s WHERE p.id = s.profile_id", pgs_profile_tables[i]);
		rc = pgc_exec(x->conn, sql, x->err, x->errlen);
	}
	/* new profiles are numbered after the copied ones */
	if (rc == 0)
		rc = pgc_exec(x->conn, "SELECT setval(pg_get_serial_sequence('profiles', 'id'),"
			      " greatest(coalesce(max(id), 0), 1), max(id) IS NOT NULL) FROM profiles",
			      x->err, x->errlen);
	return rc;
}

int pg_copy_from_sqlite(const char *from, const char *to, st_relocate_fn relocate, void *ctx,
			st_copy_stats *stats, char *err, size_t errlen)
{
	copier x = { .relocate = relocate, .ctx = ctx, .stats = stats, .err = err,
		     .errlen = errlen };
	pgc *c = NULL;
	int rc = -1;

	memset(stats, 0, sizeof(*stats));
	if (sqlite3_open_v2(from, &x.src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", from, x.src ? sqlite3_errmsg(x.src) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(x.src, 60000);
	if (!(x.buf = malloc(PG_COPY_CHUNK))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (!(c = pgc_open(to, err, errlen)) || !(x.conn = pgc_conn(c, err, errlen)))
		goto out;
	if (pgm_migrate(x.conn, pgs_migrations, pgs_nr_migrations, NULL, err, errlen) < 0)
		goto out;
	/* one snapshot of the source, one transaction into the destination */
	if (sqlite3_exec(x.src, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    pgc_exec(x.conn, "BEGIN", err, errlen) < 0)
		goto out;
	rc = copy_all(&x);
	if (rc == 0)
		rc = pgc_exec(x.conn, "COMMIT", err, errlen);
	else if (PQstatus(x.conn) == CONNECTION_OK)
		PQclear(PQexec(x.conn, "ROLLBACK"));
out:
	if (x.src)
		sqlite3_exec(x.src, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(x.src);
	pgc_close(c);
	free(x.buf);
	return rc;
}
