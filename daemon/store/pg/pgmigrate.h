/*
 * pgmigrate.h - brings a PostgreSQL schema up to date. Migration i moves
 * the schema from version i to i+1; the version is kept in the one-row
 * table perfhub_schema. All pending migrations run in one transaction (DDL
 * is transactional in PostgreSQL) under an advisory lock, so nodes that
 * start together migrate once and none sees half a schema.
 */
#ifndef PERFHUB_STORE_PGMIGRATE_H
#define PERFHUB_STORE_PGMIGRATE_H

#include <stddef.h>

#include <libpq-fe.h>

#define PGM_LOCK_KEY 0x70657266687562LL	/* "perfhub": the migration lock */

/* Applies migrations[version .. n-1]. OUT: *from, the version found (may
 * be NULL). -1 with err on a failed migration (nothing of it stays) or
 * when the database is newer than these n migrations. */
int pgm_migrate(PGconn *conn, const char *const *migrations, int n, int *from, char *err,
		size_t errlen);

/* The schema version of the database; 0 when it has none. -1 on error. */
int pgm_version(PGconn *conn, char *err, size_t errlen);

#endif
