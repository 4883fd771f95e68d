/*
 * pgread.c - the PostgreSQL backend's read snapshots: a REPEATABLE READ,
 * READ ONLY transaction on a pooled connection, opened on a ready profile,
 * in which its model and its sample blocks are read, so both belong to the
 * same parse generation. Rows come through cursors in binary, a few
 * thousand at a time: memory is one batch, not the profile's size.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/pg/pg.h"

#define PG_READ_TRIES 2		/* a pooled connection may have gone stale */

struct st_persist_read {
	st_persist *p;
	pgc *c;
	PGconn *conn;
	int64_t id;
};

typedef struct begin_res {
	int ready;
	int64_t gen;
} begin_res;

static int begin(PGconn *conn, int64_t id, begin_res *b, char *err, size_t errlen)
{
	pg_params pp;
	PGresult *r;
	int rc;

	if (pgc_exec(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err, errlen) < 0)
		return -1;
	pgp_init(&pp);
	pgp_i64(&pp, id);
	rc = pg_exec(conn, "opening a profile", "SELECT status, generation FROM profiles"
		     " WHERE id = $1", &pp, 0, PGRES_TUPLES_OK, &r, err, errlen);
	if (rc < 0)
		return -1;
	b->ready = PQntuples(r) == 1 && pg_i64(r, 0, 0) == ST_READY;
	b->gen = b->ready ? pg_i64(r, 0, 1) : 0;
	PQclear(r);
	return 0;
}

int pg_read_begin(st_persist *p, int64_t id, int64_t *gen, st_persist_read **rd)
{
	char err[512];
	begin_res b = { 0, 0 };
	PGconn *conn = NULL;
	pgc *c = pg_get(p);
	int tries, rc = -1;

	*rd = NULL;
	if (!c)
		return -1;
	for (tries = 0; tries < PG_READ_TRIES && rc < 0; tries++) {
		if (!(conn = pgc_conn(c, err, sizeof(err))))
			break;
		rc = begin(conn, id, &b, err, sizeof(err));
		if (rc < 0 && PQstatus(conn) == CONNECTION_OK)
			PQclear(PQexec(conn, "ROLLBACK"));
		if (rc < 0 && !pgc_retryable(conn, NULL))
			break;
	}
	if (rc < 0) {
		log_warn("msg=\"postgresql\" what=\"opening a profile\" id=%lld error=\"%s\"",
			 (long long)id, err);
		pg_put(p, c);
		return -1;
	}
	if (!b.ready || !(*rd = calloc(1, sizeof(**rd)))) {
		PQclear(PQexec(conn, "COMMIT"));
		pg_put(p, c);
		return b.ready ? -1 : 1;
	}
	(*rd)->p = p;
	(*rd)->c = c;
	(*rd)->conn = conn;
	(*rd)->id = id;
	*gen = b.gen;
	return 0;
}

void pg_read_end(st_persist_read *rd)
{
	if (!rd)
		return;
	PQclear(PQexec(rd->conn, "COMMIT"));
	pg_put(rd->p, rd->c);
	free(rd);
}

/* Rows of `sql` ($1 = the profile, then from/to when given) through cursor
 * `name`, `batch` at a time, each batch handed to fn. 0, fn's non-zero
 * value, or -1 (logged). */
typedef int (*rows_fn)(void *ctx, const PGresult *r);

static int cursor_rows(st_persist_read *rd, const char *name, const char *sql,
		       pg_params *pp, int batch, rows_fn fn, void *ctx)
{
	char decl[1024], fetch[64], close_sql[64], err[512] = "";
	PGresult *r;
	int rc = 0;

	snprintf(decl, sizeof(decl), "DECLARE %s NO SCROLL CURSOR FOR %s", name, sql);
	snprintf(fetch, sizeof(fetch), "FETCH %d FROM %s", batch, name);
	snprintf(close_sql, sizeof(close_sql), "CLOSE %s", name);
	if (pg_cmd(rd->conn, name, decl, pp, NULL, err, sizeof(err)) < 0) {
		rc = -1;
		goto out;
	}
	for (;;) {
		int n;

		if (pg_exec(rd->conn, name, fetch, NULL, 1, PGRES_TUPLES_OK, &r, err,
			    sizeof(err)) < 0) {
			rc = -1;
			goto out;
		}
		n = PQntuples(r);
		rc = n ? fn(ctx, r) : 0;
		PQclear(r);
		if (rc || n < batch)
			break;
	}
	if (pg_cmd(rd->conn, name, close_sql, NULL, NULL, err, sizeof(err)) < 0 && !rc)
		rc = -1;
out:
	if (rc < 0 && err[0])
		log_warn("msg=\"postgresql read\" profile=%lld what=%s error=\"%s\"",
			 (long long)rd->id, name, err);
	return rc;
}

enum { L_STRING, L_FRAME, L_STACK, L_EVENT, L_BUILD_ID };

typedef struct load_ctx {
	pe_model *m;
	int what;
	char *text;		/* a binary text or bytea value, NUL-terminated */
	size_t cap;
} load_ctx;

/* A binary text or bytea column as a C string (kept in x->text). */
static const char *text_of(load_ctx *x, const PGresult *r, int row, int col)
{
	size_t n = (size_t)PQgetlength(r, row, col);

	if (PQgetisnull(r, row, col))
		return NULL;
	if (n + 1 > x->cap) {
		char *t = realloc(x->text, n + 1);

		if (!t)
			return NULL;
		x->text = t;
		x->cap = n + 1;
	}
	memcpy(x->text, PQgetvalue(r, row, col), n);
	x->text[n] = 0;
	return x->text;
}

static int load_rows(void *ctx, const PGresult *r)
{
	load_ctx *x = ctx;
	int i, rc = 0;

	for (i = 0; i < PQntuples(r) && rc == 0; i++) {
		int64_t k = pg_bin_int(r, i, 0);

		if (k < 0 || k >= (int64_t)PE_MAX_NODES)
			continue;
		switch (x->what) {
		case L_STRING:
			rc = pe_model_add_string(x->m, (uint32_t)k, text_of(x, r, i, 1));
			break;
		case L_FRAME:
			rc = pe_model_add_frame(x->m, (uint32_t)k, (uint32_t)pg_bin_int(r, i, 1),
						(uint32_t)pg_bin_int(r, i, 3),
						(int)pg_bin_int(r, i, 2));
			break;
		case L_STACK:
			rc = pe_model_add_stack(x->m, (uint32_t)k, (uint32_t)pg_bin_int(r, i, 1),
						(uint32_t)pg_bin_int(r, i, 2));
			break;
		case L_EVENT:
			rc = pe_model_add_event(x->m, (uint32_t)k, text_of(x, r, i, 1));
			break;
		default:
			if (k > 0)
				rc = pe_model_add_build_id(x->m, (uint32_t)k, text_of(x, r, i, 1));
			break;
		}
	}
	return rc;
}

int pg_read_model(st_persist_read *rd, pe_model *m)
{
	static const struct {
		int what;
		const char *sql;
	} tables[] = {
		{ L_STRING, "SELECT id, text FROM strings WHERE profile_id = $1" },
		{ L_FRAME, "SELECT id, name, kernel, coalesce(dso, 0) FROM frames"
			   " WHERE profile_id = $1" },
		{ L_STACK, "SELECT id, parent, frame FROM stacks WHERE profile_id = $1" },
		{ L_EVENT, "SELECT idx, name FROM events WHERE profile_id = $1" },
		/* the build-ids of its DSOs, by the string id of their paths, as
		 * the parse noted them (profile_dsos) */
		{ L_BUILD_ID, "SELECT s.id, d.build_id FROM profile_dsos d JOIN strings s"
			      " ON s.profile_id = d.profile_id AND s.text = convert_to(d.path, 'UTF8')"
			      " WHERE d.profile_id = $1" },
	};
	load_ctx x = { m, 0, NULL, 0 };
	pg_params pp;
	size_t i;
	int rc = 0;

	pgp_init(&pp);
	pgp_i64(&pp, rd->id);
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]) && rc == 0; i++) {
		x.what = tables[i].what;
		rc = cursor_rows(rd, "model_rows", tables[i].sql, &pp, PG_FETCH_ROWS, load_rows, &x);
	}
	free(x.text);
	return rc ? -1 : 0;
}

typedef struct blocks_ctx {
	pe_block_cb cb;
	void *ctx;
} blocks_ctx;

static int hand_blocks(void *ctx, const PGresult *r)
{
	blocks_ctx *x = ctx;
	int i, rc = 0;

	for (i = 0; i < PQntuples(r) && rc == 0; i++)
		rc = x->cb(x->ctx, pg_bin_int(r, i, 0), PQgetvalue(r, i, 1),
			   (size_t)PQgetlength(r, i, 1));
	return rc;
}

int pg_read_blocks(st_persist_read *rd, uint64_t from_ns, uint64_t to_ns, pe_block_cb cb,
		   void *ctx)
{
	blocks_ctx x = { cb, ctx };
	pg_params pp;

	pgp_init(&pp);
	pgp_i64(&pp, rd->id);
	pgp_i64(&pp, (int64_t)from_ns);
	pgp_i64(&pp, (int64_t)to_ns);
	return cursor_rows(rd, "blocks", "SELECT nr, data FROM sample_blocks WHERE profile_id = $1"
			   " AND ($2::bigint = 0 OR max_time >= $2::bigint)"
			   " AND ($3::bigint = 0 OR min_time < $3::bigint) ORDER BY seq", &pp,
			   PG_FETCH_BLOCKS, hand_blocks, &x);
}

typedef struct leaf_ctx {
	uint32_t frame;
	pe_leaf_cb cb;
	void *ctx;
} leaf_ctx;

static int hand_leaves(void *ctx, const PGresult *r)
{
	leaf_ctx *x = ctx;
	int i, rc = 0;

	for (i = 0; i < PQntuples(r) && rc == 0; i++) {
		pe_leaf_row l;

		l.frame = x->frame;
		l.event = (uint32_t)pg_bin_int(r, i, 0);
		l.addr = (uint64_t)pg_bin_int(r, i, 1);
		l.samples = (uint64_t)pg_bin_int(r, i, 2);
		l.period = (uint64_t)pg_bin_int(r, i, 3);
		l.offcpu = (uint64_t)pg_bin_int(r, i, 4);
		rc = x->cb(x->ctx, &l);
	}
	return rc;
}

int pg_read_leaf_addrs(st_persist_read *rd, uint32_t frame, pe_leaf_cb cb, void *ctx)
{
	leaf_ctx x = { frame, cb, ctx };
	pg_params pp;

	pgp_init(&pp);
	pgp_i64(&pp, rd->id);
	pgp_i64(&pp, frame);
	return cursor_rows(rd, "leaves", "SELECT event, addr, samples, period, offcpu FROM"
			   " leaf_addrs WHERE profile_id = $1 AND frame = $2", &pp, PG_FETCH_ROWS,
			   hand_leaves, &x);
}
