/*
 * pgmany.c - the PostgreSQL backend's side of questions about many
 * profiles: profiles with their labels for a selector, and the per-profile
 * summaries series read (schema 5: summary_state, summary_events,
 * summary_keys, as the SQLite backend's many.c keeps them). A new parse
 * deletes a profile's summary with its other rows (pgs_profile_tables).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/pg/pg.h"

#define PG_MAX_TAGS 256		/* tags of one profile handed to a selector */
#define PG_SUM_BATCH 2000	/* summary rows per INSERT */

/* ---- array parameters ------------------------------------------------------------------ */

typedef struct abuf {
	char *s;
	size_t len, cap;
	int oom;
} abuf;

static void ab_put(abuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *t;

		while (b->len + n + 1 > cap)
			cap *= 2;
		if (!(t = realloc(b->s, cap))) {
			b->oom = 1;
			return;
		}
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

static void ab_sep(abuf *b)
{
	ab_put(b, b->len ? "," : "{", 1);
}

static void ab_i64(abuf *b, int64_t v)
{
	char num[24];

	ab_sep(b);
	ab_put(b, num, (size_t)snprintf(num, sizeof(num), "%lld", (long long)v));
}

/* An element of a text[] literal: quoted, " and \ escaped; NULL is NULL. */
static void ab_text(abuf *b, const char *s)
{
	ab_sep(b);
	if (!s) {
		ab_put(b, "NULL", 4);
		return;
	}
	ab_put(b, "\"", 1);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			ab_put(b, "\\", 1);
		ab_put(b, s, 1);
	}
	ab_put(b, "\"", 1);
}

/* Ends the literal ("{}" when empty). */
static const char *ab_end(abuf *b)
{
	if (!b->len)
		ab_put(b, "{", 1);
	ab_put(b, "}", 1);
	return b->oom ? NULL : b->s;
}

static void ab_free(abuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

static const char *ids_array(abuf *b, const int64_t *ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		ab_i64(b, ids[i]);
	return ab_end(b);
}

/* ---- profiles and their labels ----------------------------------------------------------- */

typedef struct labels_ctx {
	const st_label_query *q;
	PGresult *r;
} labels_ctx;

static int labels_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	labels_ctx *x = ctx;
	const st_label_query *q = x->q;
	pg_params pp;
	int rc;

	PQclear(x->r);
	x->r = NULL;
	pgp_init(&pp);
	pgp_i64(&pp, q->status);
	pgp_text(&pp, q->hostname);
	pgp_text(&pp, q->tag_key);
	pgp_text(&pp, q->tag_value);
	pgp_i64(&pp, q->since);
	pgp_i64(&pp, q->until);
	pgp_i64(&pp, q->id);
	pgp_i64(&pp, q->below_id);
	rc = pg_exec(conn, "profiles by their labels",
		     "SELECT p.id, p.name, p.hostname, p.status, p.uploaded_at,"
		     " s.profile_id IS NOT NULL, coalesce(p.first_ns, 0), coalesce(p.last_ns, 0),"
		     " t.key, t.value FROM profiles p"
		     " LEFT JOIN summary_state s ON s.profile_id = p.id"
		     " LEFT JOIN tags t ON t.profile_id = p.id"
		     " WHERE ($1::integer < 0 OR p.status = $1::integer)"
		     " AND ($2::text IS NULL OR p.hostname = $2::text)"
		     " AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM tags t2"
		     " WHERE t2.profile_id = p.id AND t2.key = $3::text AND t2.value = $4::text))"
		     " AND ($5::bigint = 0 OR p.uploaded_at >= $5::bigint)"
		     " AND ($6::bigint = 0 OR p.uploaded_at < $6::bigint)"
		     " AND ($7::bigint = 0 OR p.id = $7::bigint)"
		     " AND ($8::bigint = 0 OR p.id < $8::bigint)"
		     " ORDER BY p.id DESC", &pp, 0, PGRES_TUPLES_OK, &x->r, err, errlen);
	pgp_free(&pp);
	return rc;
}

static const char *col_or_null(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

int pg_profiles_labels(st_persist *p, const st_label_query *q, st_labels_cb cb, void *ctx)
{
	labels_ctx x = { q, NULL };
	const char *keys[PG_MAX_TAGS], *values[PG_MAX_TAGS];
	st_profile_labels l;
	int i, n, rc = 0, have = 0;

	/* the rows are read in one statement; the callbacks run after it,
	 * outside the transaction (which may run twice) */
	if (pg_txn(p, "profiles by their labels", labels_body, &x) < 0) {
		PQclear(x.r);
		return -1;
	}
	memset(&l, 0, sizeof(l));
	n = PQntuples(x.r);
	/* one row per tag: a profile's rows come together (ordered by id) */
	for (i = 0; i < n && rc == 0; i++) {
		int64_t id = pg_i64(x.r, i, 0);

		if (have && id != l.id) {
			rc = cb(ctx, &l);
			have = 0;
			if (rc)
				break;
		}
		if (!have) {
			have = 1;
			memset(&l, 0, sizeof(l));
			l.id = id;
			l.name = col_or_null(x.r, i, 1);
			l.hostname = col_or_null(x.r, i, 2);
			l.status = (int)pg_i64(x.r, i, 3);
			l.uploaded_at = pg_i64(x.r, i, 4);
			l.has_summary = !strcmp(PQgetvalue(x.r, i, 5), "t");
			l.first_ns = (uint64_t)pg_i64(x.r, i, 6);
			l.last_ns = (uint64_t)pg_i64(x.r, i, 7);
			l.tag_keys = keys;
			l.tag_values = values;
		}
		if (!PQgetisnull(x.r, i, 8) && l.nr_tags < PG_MAX_TAGS) {
			keys[l.nr_tags] = PQgetvalue(x.r, i, 8);
			values[l.nr_tags] = PQgetvalue(x.r, i, 9);
			l.nr_tags++;
		}
	}
	if (rc == 0 && have)
		rc = cb(ctx, &l);
	PQclear(x.r);
	return rc;
}

/* ---- summaries ------------------------------------------------------------------------- */

typedef struct sum_ctx {
	int64_t id, gen;
	const pe_summary *s;
	/* summary_read */
	const int64_t *ids;
	size_t n;
	int kind;
	const char *key;
	PGresult *r;
} sum_ctx;

static int put_events(PGconn *conn, const sum_ctx *x, char *err, size_t errlen)
{
	abuf ord = { 0 }, name = { 0 }, samples = { 0 }, period = { 0 };
	pg_params pp;
	size_t i;
	int rc = -1;

	if (!x->s->nr_events)
		return 0;
	for (i = 0; i < x->s->nr_events; i++) {
		const pe_sum_event *e = &x->s->events[i];

		ab_i64(&ord, e->ord);
		ab_text(&name, e->name ? e->name : "");
		ab_i64(&samples, (int64_t)e->samples);
		ab_i64(&period, (int64_t)e->period);
	}
	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	pgp_text(&pp, ab_end(&ord));
	pgp_text(&pp, ab_end(&name));
	pgp_text(&pp, ab_end(&samples));
	pgp_text(&pp, ab_end(&period));
	if (ord.oom || name.oom || samples.oom || period.oom) {
		snprintf(err, errlen, "out of memory");
	} else {
		rc = pg_cmd(conn, "storing a summary", "INSERT INTO summary_events (profile_id, ord,"
			    " event, samples, period) SELECT $1, * FROM unnest($2::integer[],"
			    " $3::text[], $4::bigint[], $5::bigint[])", &pp, NULL, err, errlen);
	}
	pgp_free(&pp);
	ab_free(&ord);
	ab_free(&name);
	ab_free(&samples);
	ab_free(&period);
	return rc;
}

static int put_keys(PGconn *conn, const sum_ctx *x, size_t from, size_t to, char *err,
		    size_t errlen)
{
	abuf v[8];
	pg_params pp;
	size_t i;
	int k, rc = -1, oom = 0;

	memset(v, 0, sizeof(v));
	for (i = from; i < to; i++) {
		const pe_sum_row *r = &x->s->rows[i];

		ab_i64(&v[0], r->kind);
		ab_text(&v[1], r->key ? r->key : "");
		ab_i64(&v[2], r->ord);
		ab_text(&v[3], r->dso);
		ab_i64(&v[4], (int64_t)r->self_samples);
		ab_i64(&v[5], (int64_t)r->self_period);
		ab_i64(&v[6], (int64_t)r->total_samples);
		ab_i64(&v[7], (int64_t)r->total_period);
	}
	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	for (k = 0; k < 8; k++) {
		pgp_text(&pp, ab_end(&v[k]));
		oom |= v[k].oom;
	}
	if (oom) {
		snprintf(err, errlen, "out of memory");
	} else {
		/* the same key twice in one event (two functions whose names
		 * became the same text) keeps the last, as SQLite's REPLACE */
		rc = pg_cmd(conn, "storing a summary", "INSERT INTO summary_keys (kind, key, profile_id,"
			    " ord, dso, self_samples, self_period, total_samples, total_period)"
			    " SELECT DISTINCT ON (k, key, o) k, key, $1, o, d, ss, sp, ts, tp"
			    " FROM unnest($2::integer[], $3::text[], $4::integer[], $5::text[],"
			    " $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[]) WITH ORDINALITY"
			    " AS u(k, key, o, d, ss, sp, ts, tp, n) ORDER BY k, key, o, n DESC"
			    " ON CONFLICT (kind, key, profile_id, ord) DO UPDATE SET dso = excluded.dso,"
			    " self_samples = excluded.self_samples, self_period = excluded.self_period,"
			    " total_samples = excluded.total_samples,"
			    " total_period = excluded.total_period", &pp, NULL, err, errlen);
	}
	pgp_free(&pp);
	for (k = 0; k < 8; k++)
		ab_free(&v[k]);
	return rc;
}

static int summary_put_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	sum_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	size_t i;
	int rc, current;

	/* still the parse it was made from (the row locked until the commit:
	 * a new parse or a delete waits for this summary, then removes it) */
	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	pgp_i64(&pp, x->gen);
	rc = pg_exec(conn, "storing a summary", "SELECT 1 FROM profiles WHERE id = $1 AND status = 2"
		     " AND generation = $2 FOR SHARE", &pp, 0, PGRES_TUPLES_OK, &r, err, errlen);
	pgp_free(&pp);
	if (rc < 0)
		return -1;
	current = PQntuples(r) == 1;
	PQclear(r);
	if (!current)
		return 0;
	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	rc = pg_cmd(conn, "storing a summary", "DELETE FROM summary_events WHERE profile_id = $1",
		    &pp, NULL, err, errlen);
	if (rc == 0)
		rc = pg_cmd(conn, "storing a summary", "DELETE FROM summary_keys WHERE profile_id = $1",
			    &pp, NULL, err, errlen);
	pgp_free(&pp);
	if (rc == 0)
		rc = put_events(conn, x, err, errlen);
	for (i = 0; rc == 0 && i < x->s->nr_rows; i += PG_SUM_BATCH)
		rc = put_keys(conn, x, i, i + PG_SUM_BATCH < x->s->nr_rows ? i + PG_SUM_BATCH :
			      x->s->nr_rows, err, errlen);
	if (rc == 0) {
		pgp_init(&pp);
		pgp_i64(&pp, x->id);
		pgp_i64(&pp, x->gen);
		rc = pg_cmd(conn, "storing a summary", "INSERT INTO summary_state (profile_id,"
			    " generation) VALUES ($1, $2) ON CONFLICT (profile_id) DO UPDATE SET"
			    " generation = excluded.generation", &pp, NULL, err, errlen);
		pgp_free(&pp);
	}
	return rc;
}

int pg_summary_put(st_persist *p, int64_t id, int64_t gen, const pe_summary *s)
{
	sum_ctx x = { .id = id, .gen = gen, .s = s };

	return pg_txn(p, "storing a summary", summary_put_body, &x);
}

static int summary_read_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	sum_ctx *x = ctx;
	abuf ids = { 0 };
	pg_params pp;
	const char *arr = ids_array(&ids, x->ids, x->n);
	int rc;

	PQclear(x->r);
	x->r = NULL;
	if (!arr) {
		ab_free(&ids);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pgp_init(&pp);
	pgp_text(&pp, arr);
	if (x->key) {
		pgp_i64(&pp, x->kind);
		pgp_text(&pp, x->key);
		rc = pg_exec(conn, "reading summaries", "SELECT e.profile_id, e.ord, e.event,"
			     " e.samples, e.period, coalesce(k.self_samples, 0),"
			     " coalesce(k.self_period, 0), coalesce(k.total_samples, 0),"
			     " coalesce(k.total_period, 0) FROM summary_events e"
			     " LEFT JOIN summary_keys k ON k.kind = $2::integer AND k.key = $3::text"
			     " AND k.profile_id = e.profile_id AND k.ord = e.ord"
			     " WHERE e.profile_id = ANY($1::bigint[])"
			     " ORDER BY array_position($1::bigint[], e.profile_id), e.ord", &pp, 0,
			     PGRES_TUPLES_OK, &x->r, err, errlen);
	} else {
		rc = pg_exec(conn, "reading summaries", "SELECT profile_id, ord, event, samples,"
			     " period, samples, period, samples, period FROM summary_events"
			     " WHERE profile_id = ANY($1::bigint[])"
			     " ORDER BY array_position($1::bigint[], profile_id), ord", &pp, 0,
			     PGRES_TUPLES_OK, &x->r, err, errlen);
	}
	pgp_free(&pp);
	ab_free(&ids);
	return rc;
}

int pg_summary_read(st_persist *p, const int64_t *ids, size_t n, int kind, const char *key,
		    st_summary_cb cb, void *ctx)
{
	sum_ctx x = { .ids = ids, .n = n, .kind = kind, .key = key };
	int i, rc = 0;

	if (!n)
		return 0;
	if (pg_txn(p, "reading summaries", summary_read_body, &x) < 0) {
		PQclear(x.r);
		return -1;
	}
	for (i = 0; rc == 0 && i < PQntuples(x.r); i++) {
		st_summary_point pt;

		pt.id = pg_i64(x.r, i, 0);
		pt.ord = (uint32_t)pg_i64(x.r, i, 1);
		pt.event = PQgetvalue(x.r, i, 2);
		pt.v.event_samples = (uint64_t)pg_i64(x.r, i, 3);
		pt.v.event_period = (uint64_t)pg_i64(x.r, i, 4);
		pt.v.self_samples = (uint64_t)pg_i64(x.r, i, 5);
		pt.v.self_period = (uint64_t)pg_i64(x.r, i, 6);
		pt.v.total_samples = (uint64_t)pg_i64(x.r, i, 7);
		pt.v.total_period = (uint64_t)pg_i64(x.r, i, 8);
		rc = cb(ctx, &pt);
	}
	PQclear(x.r);
	return rc;
}

/* ---- profiles as list rows -------------------------------------------------------------- */

/* pgprofiles.c answers the rows; this file only builds the id array. */
const char *pg_ids_array(void **owned, const int64_t *ids, size_t n)
{
	abuf *b = calloc(1, sizeof(*b));
	const char *s;

	*owned = b;
	if (!b)
		return NULL;
	s = ids_array(b, ids, n);
	return s;
}

void pg_ids_array_free(void *owned)
{
	abuf *b = owned;

	if (b)
		ab_free(b);
	free(b);
}
