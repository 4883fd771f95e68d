/*
 * pgschema.h - the PostgreSQL store's schema, as migrations (pgmigrate.h).
 * The tables mirror the SQLite store's, with PostgreSQL's types (bigint
 * for 64-bit values, bytea for sample blocks) and the job's lease in the
 * profile row (pgjobs.h). docs/cluster.md explains them.
 */
#ifndef PERFHUB_STORE_PGSCHEMA_H
#define PERFHUB_STORE_PGSCHEMA_H

extern const char *const pgs_migrations[];
extern const int pgs_nr_migrations;

/* The per-profile tables a parse writes (its tags stay with the upload). */
extern const char *const pgs_profile_tables[];
extern const int pgs_nr_profile_tables;

#endif
