/* pgmigrate.c - schema migrations in one locked transaction. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgconn.h"
#include "pgmigrate.h"

static int read_version(PGconn *conn, int *version, char *err, size_t errlen)
{
	PGresult *r;
	int rc, exists;

	/* to_regclass: NULL when the table is not there, without an error that
	 * would abort the transaction */
	r = PQexec(conn, "SELECT to_regclass('perfhub_schema') IS NOT NULL");
	rc = pgc_check(r, PGRES_TUPLES_OK, "reading the schema version", err, errlen);
	exists = rc == 0 && PQgetvalue(r, 0, 0)[0] == 't';
	PQclear(r);
	if (rc < 0 || !exists) {
		*version = -1;
		return rc;
	}
	r = PQexec(conn, "SELECT coalesce(max(version), 0) FROM perfhub_schema");
	rc = pgc_check(r, PGRES_TUPLES_OK, "reading the schema version", err, errlen);
	if (rc == 0)
		*version = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	return rc;
}

int pgm_version(PGconn *conn, char *err, size_t errlen)
{
	int v = 0;

	if (read_version(conn, &v, err, errlen) < 0)
		return -1;
	return v < 0 ? 0 : v;
}

int pgm_migrate(PGconn *conn, const char *const *migrations, int n, int *from, char *err,
		size_t errlen)
{
	char sql[128], what[64];
	int version = 0, i;
	PGresult *r;

	if (pgc_exec(conn, "BEGIN", err, errlen) < 0)
		return -1;
	snprintf(sql, sizeof(sql), "SELECT pg_advisory_xact_lock(%lld)", (long long)PGM_LOCK_KEY);
	r = PQexec(conn, sql);
	if (pgc_check(r, PGRES_TUPLES_OK, "taking the migration lock", err, errlen) < 0)
		goto fail;
	PQclear(r);
	r = NULL;
	if (read_version(conn, &version, err, errlen) < 0)
		goto fail;
	if (version < 0) {
		if (pgc_exec(conn, "CREATE TABLE perfhub_schema (version integer NOT NULL);"
			     "INSERT INTO perfhub_schema VALUES (0)", err, errlen) < 0)
			goto fail;
		version = 0;
	}
	if (from)
		*from = version;
	if (version > n) {
		snprintf(err, errlen, "database schema version %d is newer than this perfhubd (%d)",
			 version, n);
		goto fail;
	}
	for (i = version; i < n; i++) {
		snprintf(what, sizeof(what), "migration %d", i + 1);
		r = PQexec(conn, migrations[i]);
		if (pgc_check(r, PGRES_COMMAND_OK, what, err, errlen) < 0)
			goto fail;
		PQclear(r);
		r = NULL;
	}
	snprintf(sql, sizeof(sql), "UPDATE perfhub_schema SET version = %d", n);
	if (pgc_exec(conn, sql, err, errlen) < 0 || pgc_exec(conn, "COMMIT", err, errlen) < 0)
		goto fail;
	return 0;
fail:
	PQclear(r);
	if (PQstatus(conn) == CONNECTION_OK)
		PQclear(PQexec(conn, "ROLLBACK"));
	return -1;
}
