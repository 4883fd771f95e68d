/* pgadmin.c - the PostgreSQL backend's answers to retention: data size, expired and prunable profiles. */
#include "config.h"

#include <stdlib.h>

#include "store/pg/pg.h"

typedef struct admin_ctx {
	int64_t before, *ids, value;
	size_t max, n;
	int found;
} admin_ctx;

static int used_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	admin_ctx *x = ctx;
	PGresult *r;

	/* the bytes the profiles' parses wrote: a deleted profile's go at once
	 * (the table files keep their size, their space is reused) */
	if (pg_exec(conn, "data size", "SELECT coalesce(sum(stored_bytes), 0) FROM profiles",
		    NULL, 0, PGRES_TUPLES_OK, &r, err, errlen) < 0)
		return -1;
	x->value = pg_i64(r, 0, 0);
	PQclear(r);
	return 0;
}

int pg_used_bytes(st_persist *p, int64_t *bytes)
{
	admin_ctx x = { 0 };

	if (pg_txn(p, "data size", used_body, &x) < 0)
		return -1;
	*bytes = x.value;
	return 0;
}

static int expired_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	admin_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	int i;

	x->n = 0;
	pgp_init(&pp);
	pgp_i64(&pp, x->before);
	pgp_i64(&pp, (int64_t)x->max);
	if (pg_exec(conn, "expired profiles", "SELECT id FROM profiles WHERE status IN (2, 3)"
		    " AND uploaded_at < $1 ORDER BY uploaded_at, id LIMIT $2", &pp, 0,
		    PGRES_TUPLES_OK, &r, err, errlen) < 0)
		return -1;
	for (i = 0; i < PQntuples(r) && x->n < x->max; i++)
		x->ids[x->n++] = pg_i64(r, i, 0);
	PQclear(r);
	return 0;
}

int pg_expired(st_persist *p, int64_t before, int64_t *ids, size_t max, size_t *n)
{
	admin_ctx x = { .before = before, .ids = ids, .max = max };
	int rc = pg_txn(p, "expired profiles", expired_body, &x);

	*n = rc == 0 ? x.n : 0;
	return rc;
}

static int prunable_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	admin_ctx *x = ctx;
	PGresult *r;

	if (pg_exec(conn, "prunable profile", "SELECT id FROM profiles WHERE status IN (2, 3)"
		    " AND id <> (SELECT id FROM profiles ORDER BY uploaded_at DESC, id DESC LIMIT 1)"
		    " ORDER BY uploaded_at, id LIMIT 1", NULL, 0, PGRES_TUPLES_OK, &r, err,
		    errlen) < 0)
		return -1;
	x->found = PQntuples(r) == 1;
	if (x->found)
		x->value = pg_i64(r, 0, 0);
	PQclear(r);
	return 0;
}

int pg_oldest_prunable(st_persist *p, int64_t *id)
{
	admin_ctx x = { 0 };

	if (pg_txn(p, "prunable profile", prunable_body, &x) < 0)
		return -1;
	if (!x.found)
		return 1;
	*id = x.value;
	return 0;
}
