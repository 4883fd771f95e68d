/*
 * pgprofiles.c - the PostgreSQL backend's profiles and jobs. The profiles
 * table is the job queue of every node: claims, leases and fences are
 * pgjobs.h's; this file keeps the jobs this node holds (pgkeeper.c) in
 * step with them. Every transaction body may run twice (pgc_txn).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "store/pg/pg.h"

typedef struct add_ctx {
	const st_new_profile *np;
	int64_t id;
	int existed;
} add_ctx;

/* The profile holding these bytes: 1 and x->id, 0 none, -1. */
static int find_sha(PGconn *conn, const char *sha256, int64_t *id, char *err, size_t errlen)
{
	pg_params pp;
	PGresult *r;
	int rc;

	pgp_init(&pp);
	pgp_text(&pp, sha256);
	rc = pg_exec(conn, "finding a profile", "SELECT id FROM profiles WHERE sha256 = $1", &pp,
		     0, PGRES_TUPLES_OK, &r, err, errlen);
	pgp_free(&pp);
	if (rc < 0)
		return -1;
	rc = PQntuples(r) == 1;
	if (rc)
		*id = pg_i64(r, 0, 0);
	PQclear(r);
	return rc;
}

static int add_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	add_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	size_t i;
	int rc;

	/* looked for first: an insert that conflicts would use up an id */
	x->existed = find_sha(conn, x->np->sha256, &x->id, err, errlen);
	if (x->existed)
		return x->existed < 0 ? -1 : 0;
	pgp_init(&pp);
	pgp_text(&pp, x->np->sha256);
	pgp_text(&pp, x->np->name);
	pgp_text(&pp, x->np->kind);
	pgp_text(&pp, x->np->spool_path);
	pgp_i64(&pp, (int64_t)x->np->size);
	pgp_i64(&pp, x->np->local ? 1 : 0);
	rc = pg_exec(conn, "adding a profile",
		     "INSERT INTO profiles (sha256, name, kind, spool_path, size, uploaded_at, status,"
		     " local) VALUES ($1, $2, $3, $4, $5, extract(epoch FROM now())::bigint, 0,"
		     " $6::smallint)"
		     " ON CONFLICT (sha256) DO NOTHING RETURNING id", &pp, 0, PGRES_TUPLES_OK, &r,
		     err, errlen);
	if (rc < 0)
		goto out;
	if (PQntuples(r) != 1) {
		/* another node stored the same bytes meanwhile: that profile */
		PQclear(r);
		x->existed = find_sha(conn, x->np->sha256, &x->id, err, errlen);
		if (x->existed == 0)
			snprintf(err, errlen, "adding a profile: its row went meanwhile");
		rc = x->existed == 1 ? 0 : -1;
		goto out;
	}
	x->id = pg_i64(r, 0, 0);
	PQclear(r);
	for (i = 0; i < x->np->nr_tags && rc == 0; i++) {
		pgp_free(&pp);
		pgp_i64(&pp, x->id);
		pgp_text(&pp, x->np->tag_keys[i]);
		pgp_text(&pp, x->np->tag_values[i]);
		rc = pg_cmd(conn, "adding a tag", "INSERT INTO tags (profile_id, key, value)"
			    " VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", &pp, NULL, err, errlen);
	}
	/* delivered at the commit: every node's idle workers look */
	if (rc == 0 && pgj_notify(conn, err, errlen) != PGJ_OK)
		rc = -1;
out:
	pgp_free(&pp);
	return rc;
}

int pg_profile_add(st_persist *p, const st_new_profile *np, int64_t *id, int *existed)
{
	add_ctx x = { np, 0, 0 };
	int rc = pg_txn(p, "adding a profile", add_body, &x);

	*id = x.id;
	*existed = x.existed;
	return rc;
}

typedef struct id_ctx {
	const char *sha256;
	int64_t id;
	int found;
} id_ctx;

static int by_sha_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	id_ctx *x = ctx;

	x->found = find_sha(conn, x->sha256, &x->id, err, errlen);
	return x->found < 0 ? -1 : 0;
}

int pg_profile_by_sha(st_persist *p, const char *sha256, int64_t *id)
{
	id_ctx x = { sha256, 0, 0 };

	if (pg_txn(p, "finding a profile", by_sha_body, &x) < 0)
		return -1;
	if (x.found)
		*id = x.id;
	return x.found ? 0 : 1;
}

/* ---- jobs ------------------------------------------------------------------------------ */

typedef struct job_ctx {
	st_persist *p;
	pgj_job job;
	int result;		/* enum pgj_result */
	const char *msg;
	int64_t offset, parse_ms;
} job_ctx;

static int claim_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	job_ctx *x = ctx;

	pgj_job_clear(&x->job);
	x->result = pgj_claim(conn, x->p->node, x->p->lease_s, &x->job, err, errlen);
	return x->result == PGJ_ERR ? -1 : 0;
}

static int requeue_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	job_ctx *x = ctx;

	x->result = pgj_requeue(conn, &x->job, err, errlen);
	return x->result == PGJ_ERR ? -1 : 0;
}

int pg_profile_claim_next(st_persist *p, int64_t *id, char **spool_path, char **kind)
{
	job_ctx x = { .p = p };

	if (pg_txn(p, "claiming a job", claim_body, &x) < 0) {
		pgj_job_clear(&x.job);
		return -1;
	}
	if (x.result == PGJ_NONE)
		return 1;
	if (pg_held_add(p, x.job.id, x.job.attempt) < 0) {
		/* more jobs than a node can hold: give it back */
		log_warn("msg=\"postgresql: too many jobs held\" id=%lld", (long long)x.job.id);
		pg_txn(p, "requeueing a job", requeue_body, &x);
		pgj_job_clear(&x.job);
		return 1;
	}
	*id = x.job.id;
	*spool_path = x.job.spool_path;
	*kind = x.job.kind;
	return 0;
}

/* The job this node holds for profile id into x->job: 0, or 1 when the
 * node holds it no more (lost or never held: nothing to do, logged). */
static int held_job(st_persist *p, int64_t id, job_ctx *x, const char *what)
{
	int rc = pg_held_find(p, id, &x->job);

	if (rc == 0)
		return 0;
	log_info("msg=\"job not ours\" id=%lld what=%s reason=\"%s\"", (long long)id, what,
		 rc == 2 ? "its lease was lost" : "not held by this node");
	pg_held_drop(p, id);
	return 1;
}

static int fail_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	job_ctx *x = ctx;

	x->result = pgj_fail(conn, &x->job, x->msg, x->offset, x->parse_ms, err, errlen);
	return x->result == PGJ_ERR ? -1 : 0;
}

/* Runs a job's ending (fail or requeue) and forgets the job. */
static int end_job(st_persist *p, job_ctx *x, const char *what, pgc_txn_fn fn)
{
	int rc = pg_txn(p, what, fn, x);

	if (rc == 0 && x->result == PGJ_FENCED)
		log_info("msg=\"job not ours\" id=%lld what=\"%s\" reason=\"fenced\"",
			 (long long)x->job.id, what);
	pg_held_drop(p, x->job.id);
	return rc;
}

int pg_profile_fail(st_persist *p, int64_t id, const char *msg, int64_t offset,
		    int64_t parse_ms)
{
	job_ctx x = { .p = p, .msg = msg, .offset = offset, .parse_ms = parse_ms };

	if (held_job(p, id, &x, "fail"))
		return 0;
	return end_job(p, &x, "failing a job", fail_body);
}

int pg_profile_requeue(st_persist *p, int64_t id)
{
	job_ctx x = { .p = p };

	if (held_job(p, id, &x, "requeue"))
		return 0;
	return end_job(p, &x, "requeueing a job", requeue_body);
}

typedef struct count_ctx {
	int requeued, failed;
} count_ctx;

static int expired_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	count_ctx *x = ctx;

	return pgj_requeue_expired(conn, &x->requeued, &x->failed, err, errlen) == PGJ_OK ? 0 : -1;
}

int pg_requeue_parsing(st_persist *p, int *count)
{
	count_ctx x = { 0, 0 };
	int rc;

	/* a shared queue: another node's live job is never taken, only those
	 * whose lease ran out (the keeper looks again every few seconds) */
	rc = pg_txn(p, "requeueing expired leases", expired_body, &x);
	*count = x.requeued;
	return rc;
}

typedef struct delete_ctx {
	int64_t id;
	char *spool_path;
	int found;
} delete_ctx;

static int delete_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	delete_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	int rc;

	free(x->spool_path);
	x->spool_path = NULL;
	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	rc = pg_exec(conn, "deleting a profile",
		     "DELETE FROM profiles WHERE id = $1 RETURNING spool_path", &pp, 0,
		     PGRES_TUPLES_OK, &r, err, errlen);
	if (rc < 0)
		return -1;
	x->found = PQntuples(r) == 1;
	if (x->found && !(x->spool_path = pg_strdup(r, 0, 0)))
		rc = -1;
	PQclear(r);
	if (rc == 0 && x->found)
		rc = pg_cmd(conn, "deleting a profile", "DELETE FROM tags WHERE profile_id = $1",
			    &pp, NULL, err, errlen);
	if (rc == 0 && x->found)
		rc = pg_cmd(conn, "deleting a profile",
			    "DELETE FROM profile_dsos WHERE profile_id = $1", &pp, NULL, err, errlen);
	if (rc == 0 && x->found)
		rc = pg_delete_rows(conn, x->id, err, errlen);
	pgp_free(&pp);
	return rc;
}

int pg_profile_delete(st_persist *p, int64_t id, char **spool_path)
{
	delete_ctx x = { id, NULL, 0 };

	*spool_path = NULL;
	if (pg_txn(p, "deleting a profile", delete_body, &x) < 0) {
		free(x.spool_path);
		return -1;
	}
	if (!x.found)
		return 1;
	*spool_path = x.spool_path;
	return 0;
}

typedef struct resym_ctx {
	int64_t id;
	int rc;
} resym_ctx;

static int resym_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	resym_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	long changed = 0;
	int rc;

	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	rc = pg_cmd(conn, "re-symbolizing", "UPDATE profiles SET status = 0 WHERE id = $1"
		    " AND status = 2", &pp, &changed, err, errlen);
	if (rc == 0 && changed) {
		x->rc = 0;
		rc = pgj_notify(conn, err, errlen) == PGJ_OK ? 0 : -1;
	} else if (rc == 0) {
		rc = pg_exec(conn, "re-symbolizing", "SELECT status FROM profiles WHERE id = $1",
			     &pp, 0, PGRES_TUPLES_OK, &r, err, errlen);
		if (rc == 0) {
			x->rc = PQntuples(r) != 1 ? 1 : pg_i64(r, 0, 0) == ST_FAILED ? 3 : 2;
			PQclear(r);
		}
	}
	pgp_free(&pp);
	return rc;
}

int pg_profile_resymbolize(st_persist *p, int64_t id)
{
	resym_ctx x = { id, -1 };

	if (pg_txn(p, "re-symbolizing", resym_body, &x) < 0)
		return -1;
	return x.rc;
}

/* ---- the profile as JSON ------------------------------------------------------------------ */

#define PROFILE_COLS "id, name, status, error, error_offset, sha256, size, uploaded_at," \
	" parse_ms, symbolized_pct, hostname, nr_samples, header, events, records," \
	" samples_per_event, lost, kind," \
	" (SELECT json_object_agg(t.key, t.value ORDER BY t.key, t.value) FROM tags t" \
	" WHERE t.profile_id = profiles.id), warnings"

static json_t *json_text_or_null(const PGresult *r, int row, int col)
{
	json_t *j;

	if (PQgetisnull(r, row, col))
		return json_null();
	j = json_loads(PQgetvalue(r, row, col), JSON_DECODE_ANY, NULL);
	return j ? j : json_null();
}

static json_t *string_or_null(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? json_null() : json_string(PQgetvalue(r, row, col));
}

/* The same object as the SQLite backend's, field by field. */
static json_t *profile_row(const PGresult *r, int row, int full)
{
	json_t *o = json_object(), *tags;
	int status = (int)pg_i64(r, row, 2);
	time_t t = (time_t)pg_i64(r, row, 7);
	char when[32];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(o, "id", json_integer(pg_i64(r, row, 0)));
	json_object_set_new(o, "name", string_or_null(r, row, 1));
	tags = PQgetisnull(r, row, 18) ? NULL : json_loads(PQgetvalue(r, row, 18), 0, NULL);
	json_object_set_new(o, "tags", json_is_object(tags) ? tags : json_object());
	if (tags && !json_is_object(tags))
		json_decref(tags);
	json_object_set_new(o, "status", json_string(st_status_name(status)));
	json_object_set_new(o, "error", string_or_null(r, row, 3));
	if (!PQgetisnull(r, row, 4))
		json_object_set_new(o, "error_offset", json_integer(pg_i64(r, row, 4)));
	json_object_set_new(o, "sha256", json_string(PQgetvalue(r, row, 5)));
	json_object_set_new(o, "size", json_integer(pg_i64(r, row, 6)));
	json_object_set_new(o, "uploaded_at", json_string(when));
	json_object_set_new(o, "kind", json_string(PQgetvalue(r, row, 17)));
	json_object_set_new(o, "parse_ms", PQgetisnull(r, row, 8) ? json_null() :
				json_integer(pg_i64(r, row, 8)));
	json_object_set_new(o, "symbolized_pct", PQgetisnull(r, row, 9) ? json_null() :
				json_real(strtod(PQgetvalue(r, row, 9), NULL)));
	json_object_set_new(o, "hostname", string_or_null(r, row, 10));
	if (status == ST_READY)
		json_object_set_new(o, "samples", json_integer(pg_i64(r, row, 11)));
	if (status == ST_READY && !PQgetisnull(r, row, 19))
		json_object_set_new(o, "warnings", json_text_or_null(r, row, 19));
	if (full && status == ST_READY) {
		json_object_set_new(o, "header", json_text_or_null(r, row, 12));
		json_object_set_new(o, "events", json_text_or_null(r, row, 13));
		json_object_set_new(o, "records", json_text_or_null(r, row, 14));
		json_object_set_new(o, "samples_per_event", json_text_or_null(r, row, 15));
		json_object_set_new(o, "lost", json_integer(pg_i64(r, row, 16)));
	}
	return o;
}

typedef struct json_ctx {
	int64_t id;
	const st_list_filter *f;
	json_t *out;
	int notfound;
} json_ctx;

static int profile_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	json_ctx *x = ctx;
	pg_params pp;
	PGresult *r;

	json_decref(x->out);
	x->out = NULL;
	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	if (pg_exec(conn, "reading a profile", "SELECT " PROFILE_COLS " FROM profiles WHERE id = $1",
		    &pp, 0, PGRES_TUPLES_OK, &r, err, errlen) < 0)
		return -1;
	x->notfound = PQntuples(r) != 1;
	if (!x->notfound)
		x->out = profile_row(r, 0, 1);
	PQclear(r);
	return 0;
}

json_t *pg_profile_json(st_persist *p, int64_t id, int *notfound)
{
	json_ctx x = { .id = id };

	*notfound = 0;
	if (pg_txn(p, "reading a profile", profile_body, &x) < 0) {
		json_decref(x.out);
		return NULL;
	}
	*notfound = x.notfound;
	return x.out;
}

/* $1 status, $2 hostname, $3 tag key, $4 tag value, $5 since, $6 until */
#define LIST_WHERE \
	" WHERE ($1::integer < 0 OR status = $1::integer)" \
	" AND ($2::text IS NULL OR hostname = $2::text)" \
	" AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM tags t WHERE t.profile_id = profiles.id" \
	" AND t.key = $3::text AND t.value = $4::text))" \
	" AND ($5::bigint = 0 OR uploaded_at >= $5::bigint)" \
	" AND ($6::bigint = 0 OR uploaded_at < $6::bigint)"

static void list_params(pg_params *pp, const st_list_filter *f)
{
	pgp_init(pp);
	pgp_i64(pp, f->status);
	pgp_text(pp, f->hostname);
	pgp_text(pp, f->tag_key);
	pgp_text(pp, f->tag_value);
	pgp_i64(pp, f->since);
	pgp_i64(pp, f->until);
}

static int list_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	json_ctx *x = ctx;
	json_t *arr;
	pg_params pp;
	PGresult *r;
	int64_t total;
	int i, rc;

	json_decref(x->out);
	x->out = NULL;
	list_params(&pp, x->f);
	rc = pg_exec(conn, "listing profiles", "SELECT count(*) FROM profiles" LIST_WHERE, &pp, 0,
		     PGRES_TUPLES_OK, &r, err, errlen);
	if (rc < 0)
		goto out;
	total = pg_i64(r, 0, 0);
	PQclear(r);
	pgp_i64(&pp, x->f->limit);
	pgp_i64(&pp, x->f->offset);
	rc = pg_exec(conn, "listing profiles", "SELECT " PROFILE_COLS " FROM profiles" LIST_WHERE
		     " ORDER BY id DESC LIMIT $7 OFFSET $8", &pp, 0, PGRES_TUPLES_OK, &r, err,
		     errlen);
	if (rc < 0)
		goto out;
	arr = json_array();
	for (i = 0; i < PQntuples(r); i++)
		json_array_append_new(arr, profile_row(r, i, 0));
	PQclear(r);
	x->out = json_pack("{s:o,s:I}", "profiles", arr, "total", (json_int_t)total);
out:
	pgp_free(&pp);
	return rc;
}

json_t *pg_profile_list_json(st_persist *p, const st_list_filter *f)
{
	json_ctx x = { .f = f };

	if (pg_txn(p, "listing profiles", list_body, &x) < 0) {
		json_decref(x.out);
		return NULL;
	}
	return x.out;
}

typedef struct rows_ctx {
	const int64_t *ids;
	size_t n;
	json_t *out;
} rows_ctx;

static int rows_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	rows_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	void *owned;
	const char *arr = pg_ids_array(&owned, x->ids, x->n);
	int i, rc;

	json_decref(x->out);
	x->out = NULL;
	if (!arr) {
		pg_ids_array_free(owned);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pgp_init(&pp);
	pgp_text(&pp, arr);
	/* in the order asked for; ids no longer there left out */
	rc = pg_exec(conn, "listing profiles", "SELECT " PROFILE_COLS " FROM profiles"
		     " WHERE id = ANY($1::bigint[]) ORDER BY array_position($1::bigint[], id)", &pp,
		     0, PGRES_TUPLES_OK, &r, err, errlen);
	pgp_free(&pp);
	pg_ids_array_free(owned);
	if (rc < 0)
		return -1;
	x->out = json_array();
	for (i = 0; x->out && i < PQntuples(r); i++)
		json_array_append_new(x->out, profile_row(r, i, 0));
	PQclear(r);
	return 0;
}

json_t *pg_profiles_rows_json(st_persist *p, const int64_t *ids, size_t n)
{
	rows_ctx x = { ids, n, NULL };

	if (pg_txn(p, "listing profiles", rows_body, &x) < 0) {
		json_decref(x.out);
		return NULL;
	}
	return x.out;
}

typedef struct local_ctx {
	int64_t id;
	int rc;
} local_ctx;

static int local_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	local_ctx *x = ctx;
	pg_params pp;
	PGresult *r;

	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	if (pg_exec(conn, "reading a profile", "SELECT local FROM profiles WHERE id = $1", &pp, 0,
		    PGRES_TUPLES_OK, &r, err, errlen) < 0) {
		pgp_free(&pp);
		return -1;
	}
	pgp_free(&pp);
	x->rc = PQntuples(r) == 1 ? pg_i64(r, 0, 0) != 0 : -1;
	PQclear(r);
	return 0;
}

int pg_profile_local(st_persist *p, int64_t id)
{
	local_ctx x = { id, -1 };

	if (pg_txn(p, "reading a profile", local_body, &x) < 0)
		return -1;
	return x.rc;
}

static int counts_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	st_counts *c = ctx;
	PGresult *r;
	int i;

	memset(c, 0, sizeof(*c));
	if (pg_exec(conn, "counting profiles", "SELECT status, count(*) FROM profiles GROUP BY"
		    " status", NULL, 0, PGRES_TUPLES_OK, &r, err, errlen) < 0)
		return -1;
	for (i = 0; i < PQntuples(r); i++) {
		int64_t n = pg_i64(r, i, 1);

		switch (pg_i64(r, i, 0)) {
		case ST_QUEUED: c->queued = n; break;
		case ST_PARSING: c->parsing = n; break;
		case ST_READY: c->ready = n; break;
		case ST_FAILED: c->failed = n; break;
		}
	}
	PQclear(r);
	if (pg_exec(conn, "database size", "SELECT pg_database_size(current_database())", NULL, 0,
		    PGRES_TUPLES_OK, &r, err, errlen) < 0)
		return -1;
	c->db_bytes = pg_i64(r, 0, 0);
	PQclear(r);
	return 0;
}

int pg_counts(st_persist *p, st_counts *c)
{
	return pg_txn(p, "counting profiles", counts_body, c);
}

typedef struct ready_ctx {
	const st_agg_filter *f;
	st_ready_profile *v;
	size_t n;
} ready_ctx;

static void ready_free(ready_ctx *x)
{
	size_t i;

	for (i = 0; i < x->n; i++)
		free(x->v[i].hostname);
	free(x->v);
	x->v = NULL;
	x->n = 0;
}

static int ready_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	ready_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	int i, rc;

	ready_free(x);
	pgp_init(&pp);
	pgp_text(&pp, x->f->hostname);
	pgp_text(&pp, x->f->tag_key);
	pgp_text(&pp, x->f->tag_value);
	pgp_i64(&pp, x->f->since);
	pgp_i64(&pp, x->f->until);
	rc = pg_exec(conn, "ready profiles", "SELECT id, hostname FROM profiles p WHERE status = 2"
		     " AND ($1::text IS NULL OR hostname = $1::text)"
		     " AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM tags t WHERE t.profile_id = p.id"
		     " AND t.key = $2::text AND t.value = $3::text))"
		     " AND ($4::bigint = 0 OR uploaded_at >= $4::bigint)"
		     " AND ($5::bigint = 0 OR uploaded_at < $5::bigint) ORDER BY id", &pp, 0,
		     PGRES_TUPLES_OK, &r, err, errlen);
	pgp_free(&pp);
	if (rc < 0)
		return -1;
	if (PQntuples(r) && !(x->v = calloc((size_t)PQntuples(r), sizeof(*x->v))))
		rc = -1;
	for (i = 0; rc == 0 && i < PQntuples(r); i++) {
		x->v[i].id = pg_i64(r, i, 0);
		x->v[i].hostname = pg_strdup(r, i, 1);
		x->n++;
		if (!x->v[i].hostname && !PQgetisnull(r, i, 1))
			rc = -1;
	}
	PQclear(r);
	if (rc < 0)
		snprintf(err, errlen, "ready profiles: out of memory");
	return rc;
}

int pg_ready_profiles(st_persist *p, const st_agg_filter *f, st_ready_profile **out,
		      size_t *n)
{
	ready_ctx x = { f, NULL, 0 };

	*out = NULL;
	*n = 0;
	if (pg_txn(p, "ready profiles", ready_body, &x) < 0) {
		ready_free(&x);
		return -1;
	}
	*out = x.v;
	*n = x.n;
	return 0;
}

/* ---- what was uploaded, and label edits ---------------------------------------------- */

typedef struct file_ctx {
	int64_t id;
	char *path, *kind, *name;
	int found;
} file_ctx;

static void file_clear(file_ctx *x)
{
	free(x->path);
	free(x->kind);
	free(x->name);
	x->path = x->kind = x->name = NULL;
}

static int file_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	file_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	int rc;

	file_clear(x);
	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	rc = pg_exec(conn, "the uploaded file", "SELECT spool_path, kind, name FROM profiles"
		     " WHERE id = $1", &pp, 0, PGRES_TUPLES_OK, &r, err, errlen);
	pgp_free(&pp);
	if (rc < 0)
		return -1;
	x->found = PQntuples(r) == 1;
	if (x->found) {
		x->path = pg_strdup(r, 0, 0);
		x->kind = pg_strdup(r, 0, 1);
		x->name = pg_strdup(r, 0, 2);
		if (!x->path || !x->kind || (!x->name && !PQgetisnull(r, 0, 2))) {
			snprintf(err, errlen, "the uploaded file: out of memory");
			rc = -1;
		}
	}
	PQclear(r);
	return rc;
}

int pg_profile_file(st_persist *p, int64_t id, char **spool_path, char **kind, char **name)
{
	file_ctx x = { .id = id };

	*spool_path = *kind = *name = NULL;
	if (pg_txn(p, "the uploaded file", file_body, &x) < 0) {
		file_clear(&x);
		return -1;
	}
	if (!x.found)
		return 1;
	*spool_path = x.path;
	*kind = x.kind;
	*name = x.name;
	return 0;
}

typedef struct update_ctx {
	int64_t id;
	const st_profile_patch *patch;
	int found;
} update_ctx;

static int update_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	update_ctx *x = ctx;
	const st_profile_patch *pt = x->patch;
	pg_params pp;
	long changed = 0;
	size_t i;
	int rc;

	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	pgp_text(&pp, pt->name);
	pgp_i64(&pp, pt->set_name != 0);
	/* the row is written whether or not the name changes: no row
	 * written, no such profile (and its lock orders concurrent edits) */
	rc = pg_cmd(conn, "editing a profile", "UPDATE profiles SET name = CASE WHEN $3::integer"
		    " <> 0 THEN $2::text ELSE name END WHERE id = $1", &pp, &changed, err, errlen);
	x->found = changed == 1;
	/* a key has one value: setting it replaces every earlier one */
	for (i = 0; rc == 0 && x->found && i < pt->nr_tags; i++) {
		pgp_free(&pp);
		pgp_i64(&pp, x->id);
		pgp_text(&pp, pt->tag_keys[i]);
		rc = pg_cmd(conn, "editing a profile", "DELETE FROM tags WHERE profile_id = $1"
			    " AND key = $2", &pp, NULL, err, errlen);
		if (rc == 0 && pt->tag_values[i]) {
			pgp_text(&pp, pt->tag_values[i]);
			rc = pg_cmd(conn, "editing a profile", "INSERT INTO tags (profile_id, key,"
				    " value) VALUES ($1, $2, $3)", &pp, NULL, err, errlen);
		}
	}
	pgp_free(&pp);
	return rc;
}

int pg_profile_update(st_persist *p, int64_t id, const st_profile_patch *patch)
{
	update_ctx x = { id, patch, 0 };

	if (pg_txn(p, "editing a profile", update_body, &x) < 0)
		return -1;
	return x.found ? 0 : 1;
}
