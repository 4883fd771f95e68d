/*
 * pgstore.c - the PostgreSQL backend's store: opened from a libpq URI,
 * migrated under an advisory lock (pgmigrate.h), a pool of connections
 * that reconnect by themselves (pgconn.h), statement helpers, and the ops
 * table. Several perfhubd nodes open the same database; what they share
 * is in the database only (docs/cluster.md).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "utf8.h"
#include "store/pg/pg.h"
#include "pgmigrate.h"
#include "pgschema.h"

/* ---- statement helpers ---------------------------------------------------------- */

void pgp_init(pg_params *pp)
{
	memset(pp, 0, sizeof(*pp));
}

static int pgp_slot(pg_params *pp)
{
	if (pp->n >= PG_MAX_PARAMS) {
		pp->oom = 1;	/* a programming error: reported as a failed statement */
		return -1;
	}
	pp->len[pp->n] = 0;
	pp->fmt[pp->n] = 0;
	return pp->n++;
}

void pgp_i64(pg_params *pp, int64_t v)
{
	int i = pgp_slot(pp);

	if (i < 0)
		return;
	snprintf(pp->num[i], sizeof(pp->num[i]), "%" PRId64, v);
	pp->v[i] = pp->num[i];
}

void pgp_f64(pg_params *pp, double v)
{
	int i = pgp_slot(pp);

	if (i < 0)
		return;
	snprintf(pp->num[i], sizeof(pp->num[i]), "%.17g", v);
	pp->v[i] = pp->num[i];
}

void pgp_text(pg_params *pp, const char *s)
{
	int i = pgp_slot(pp);

	if (i < 0)
		return;
	pp->v[i] = s;
	/* text columns take UTF-8 only; a name from a recording or a request
	 * may be anything: stray bytes become U+FFFD, as in the JSON answers */
	if (s && !utf8_valid(s)) {
		pp->owned[i] = utf8_fix(s);
		pp->v[i] = pp->owned[i];
		if (!pp->owned[i])
			pp->oom = 1;
	}
}

void pgp_bytes(pg_params *pp, const void *data, size_t len)
{
	int i = pgp_slot(pp);

	if (i < 0)
		return;
	pp->v[i] = data;
	pp->len[i] = (int)len;
	pp->fmt[i] = 1;
}

void pgp_free(pg_params *pp)
{
	int i;

	for (i = 0; i < pp->n; i++)
		free(pp->owned[i]);
	pgp_init(pp);
}

int pg_exec(PGconn *conn, const char *what, const char *sql, pg_params *pp, int binary,
	    ExecStatusType want, PGresult **out, char *err, size_t errlen)
{
	PGresult *r;

	*out = NULL;
	if (pp && pp->oom) {
		snprintf(err, errlen, "%s: out of memory", what);
		return -1;
	}
	r = PQexecParams(conn, sql, pp ? pp->n : 0, NULL, pp ? pp->v : NULL, pp ? pp->len : NULL,
			 pp ? pp->fmt : NULL, binary);
	if (pgc_check(r, want, what, err, errlen) < 0) {
		PQclear(r);
		return -1;
	}
	*out = r;
	return 0;
}

int pg_cmd(PGconn *conn, const char *what, const char *sql, pg_params *pp, long *changed,
	   char *err, size_t errlen)
{
	PGresult *r = NULL;
	ExecStatusType st;
	int rc;

	if (pp && pp->oom) {
		snprintf(err, errlen, "%s: out of memory", what);
		return -1;
	}
	r = PQexecParams(conn, sql, pp ? pp->n : 0, NULL, pp ? pp->v : NULL, pp ? pp->len : NULL,
			 pp ? pp->fmt : NULL, 0);
	st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	rc = pgc_check(r, st == PGRES_TUPLES_OK ? PGRES_TUPLES_OK : PGRES_COMMAND_OK, what, err,
		       errlen);
	if (rc == 0 && changed)
		*changed = st == PGRES_TUPLES_OK ? PQntuples(r) : atol(PQcmdTuples(r));
	PQclear(r);
	return rc;
}

int64_t pg_i64(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

int64_t pg_bin_int(const PGresult *r, int row, int col)
{
	const unsigned char *b = (const unsigned char *)PQgetvalue(r, row, col);
	int n = PQgetlength(r, row, col), i;
	uint64_t v = 0;

	if (PQgetisnull(r, row, col) || (n != 2 && n != 4 && n != 8))
		return 0;
	for (i = 0; i < n; i++)
		v = v << 8 | b[i];
	/* sign-extend the smaller types */
	if (n == 2)
		return (int16_t)v;
	if (n == 4)
		return (int32_t)v;
	return (int64_t)v;
}

char *pg_strdup(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : strdup(PQgetvalue(r, row, col));
}

/* ---- the connection pool ------------------------------------------------------------ */

pgc *pg_connect(st_persist *p, char *err, size_t errlen)
{
	pgc *c = pgc_open(p->conninfo, err, errlen);

	if (c && pgc_init(c, p->session, err, errlen) < 0) {
		pgc_close(c);
		c = NULL;
	}
	return c;
}

pgc *pg_get(st_persist *p)
{
	pgc *c = NULL;
	char err[512];

	pthread_mutex_lock(&p->lock);
	if (p->nr_pool)
		c = p->pool[--p->nr_pool];
	pthread_mutex_unlock(&p->lock);
	if (!c && !(c = pg_connect(p, err, sizeof(err))))
		log_warn("msg=\"postgresql connect\" error=\"%s\"", err);
	return c;
}

void pg_put(st_persist *p, pgc *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->nr_pool < PG_POOL_MAX) {
		p->pool[p->nr_pool++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	pgc_close(c);
}

int pg_txn(st_persist *p, const char *what, pgc_txn_fn fn, void *ctx)
{
	pgc *c = pg_get(p);
	char err[512];
	int rc;

	if (!c)
		return -1;
	rc = pgc_txn(c, fn, ctx, err, sizeof(err));
	if (rc < 0)
		log_warn("msg=\"postgresql\" what=\"%s\" error=\"%s\"", what, err);
	pg_put(p, c);
	return rc;
}

int pg_delete_rows(PGconn *conn, int64_t id, char *err, size_t errlen)
{
	char sql[128];
	pg_params pp;
	int i;

	for (i = 0; i < pgs_nr_profile_tables; i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE profile_id = $1",
			 pgs_profile_tables[i]);
		pgp_init(&pp);
		pgp_i64(&pp, id);
		if (pg_cmd(conn, "deleting a profile's rows", sql, &pp, NULL, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* ---- the store --------------------------------------------------------------------- */

static void pg_close(st_persist *p)
{
	size_t i;

	if (!p)
		return;
	pg_keeper_stop(p);
	for (i = 0; i < PG_MAX_SINGLETONS; i++)
		pgc_close(p->singles[i].c);
	for (i = 0; i < p->nr_pool; i++)
		pgc_close(p->pool[i]);
	pthread_mutex_destroy(&p->lock);
	free(p->conninfo);
	free(p);
}

static st_persist *pg_open(const char *where, const st_options *o, char *err, size_t errlen)
{
	st_persist *p = calloc(1, sizeof(*p));
	PGconn *conn;
	pgc *c = NULL;
	int from = 0;

	if (!p || !(p->conninfo = strdup(where))) {
		free(p);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	atomic_init(&p->stop, 0);
	p->lease_s = o->job_lease_s ? o->job_lease_s : ST_JOB_LEASE_S;
	if (p->lease_s > PGJ_MAX_LEASE_S)
		p->lease_s = PGJ_MAX_LEASE_S;
	pgj_node_name(p->node, sizeof(p->node));
	/* a node that stops in the middle of a transaction (frozen, cut off)
	 * keeps its row locks: the server ends its session instead, well
	 * after its lease has run out */
	snprintf(p->session, sizeof(p->session),
		 "SET idle_in_transaction_session_timeout = '%us'; SET statement_timeout = '%us'",
		 p->lease_s > PG_IDLE_IN_TXN_MIN_S ? p->lease_s : PG_IDLE_IN_TXN_MIN_S,
		 p->lease_s * 2 > PG_STATEMENT_TIMEOUT_S ? p->lease_s * 2 : PG_STATEMENT_TIMEOUT_S);
	if (!(c = pgc_open(where, err, errlen)) || !(conn = pgc_conn(c, err, errlen)))
		goto fail;
	if (pgm_migrate(conn, pgs_migrations, pgs_nr_migrations, &from, err, errlen) < 0 ||
	    pgc_init(c, p->session, err, errlen) < 0)
		goto fail;
	if (from < pgs_nr_migrations)
		log_info("msg=\"schema migrated\" backend=postgresql from=%d to=%d", from,
			 pgs_nr_migrations);
	p->pool[p->nr_pool++] = c;
	c = NULL;
	if (pg_keeper_start(p, err, errlen) < 0)
		goto fail;
	log_info("msg=\"postgresql store\" node=\"%s\" job_lease_s=%u", p->node, p->lease_s);
	return p;
fail:
	pgc_close(c);
	pg_close(p);
	return NULL;
}

/* /healthz: an answer within seconds, not after the reconnect patience of
 * the other calls (a load balancer's check gives up sooner) */
static int pg_ping(st_persist *p)
{
	char err[512];
	pgc *c = pg_get(p);
	int tries, rc = -1;

	if (!c)
		return -1;
	pgc_set_patience(c, PG_PING_PATIENCE_S);
	for (tries = 0; tries < 2 && rc < 0; tries++) {
		PGconn *conn = pgc_conn(c, err, sizeof(err));

		if (!conn)
			break;
		/* a pooled connection may have gone stale: once more on a new one */
		rc = pg_cmd(conn, "ping", "SELECT 1 FROM profiles LIMIT 1", NULL, NULL, err,
			    sizeof(err));
	}
	if (rc < 0)
		log_warn("msg=\"postgresql\" what=\"ping\" error=\"%s\"", err);
	pgc_set_patience(c, 0);
	pg_put(p, c);
	return rc;
}

static int pg_no_backup(const char *where, const char *dest, char *err, size_t errlen)
{
	(void)where;
	(void)dest;
	snprintf(err, errlen, "the postgresql store has no --backup; use pg_dump (or a base"
		 " backup) of its database");
	return -1;
}

static int pg_no_vacuum(const char *where, int64_t *before, int64_t *after, char *err,
			size_t errlen)
{
	(void)where;
	*before = *after = 0;
	snprintf(err, errlen, "the postgresql store has no --vacuum; PostgreSQL's autovacuum"
		 " reclaims space (VACUUM FULL compacts)");
	return -1;
}

const st_persist_ops st_pg_ops = {
	.name = "postgresql",
	.open = pg_open,
	.close = pg_close,
	.ping = pg_ping,
	.profile_add = pg_profile_add,
	.profile_by_sha = pg_profile_by_sha,
	.profile_local = pg_profile_local,
	.profile_claim_next = pg_profile_claim_next,
	.profile_fail = pg_profile_fail,
	.profile_requeue = pg_profile_requeue,
	.requeue_parsing = pg_requeue_parsing,
	.profile_delete = pg_profile_delete,
	.profile_resymbolize = pg_profile_resymbolize,
	.profile_json = pg_profile_json,
	.profile_file = pg_profile_file,
	.profile_update = pg_profile_update,
	.profile_list_json = pg_profile_list_json,
	.counts = pg_counts,
	.ready_profiles = pg_ready_profiles,
	.profiles_labels = pg_profiles_labels,
	.profiles_rows_json = pg_profiles_rows_json,
	.summary_put = pg_summary_put,
	.summary_read = pg_summary_read,
	.writer_begin = pg_writer_begin,
	.writer_write = pg_writer_write,
	.writer_finish = pg_writer_finish,
	.writer_abort = pg_writer_abort,
	.read_begin = pg_read_begin,
	.read_model = pg_read_model,
	.read_blocks = pg_read_blocks,
	.read_end = pg_read_end,
	.read_leaf_addrs = pg_read_leaf_addrs,
	.debuginfo_init = pg_debuginfo_init,
	.debuginfo_put = pg_debuginfo_put,
	.debuginfo_get = pg_debuginfo_get,
	.debuginfo_has_symbols = pg_debuginfo_has_symbols,
	.debuginfo_added_since = pg_debuginfo_added_since,
	.debuginfo_delete = pg_debuginfo_delete,
	.debuginfo_orphan = pg_debuginfo_orphan,
	.profile_dsos_set = pg_profile_dsos_set,
	.profiles_unresolved_in = pg_profiles_unresolved_in,
	.profile_dso_build_id = pg_profile_dso_build_id,
	.used_bytes = pg_used_bytes,
	.expired = pg_expired,
	.oldest_prunable = pg_oldest_prunable,
	.set_wakeup = pg_set_wakeup,
	.set_debuginfo_hook = pg_set_debuginfo_hook,
	.announce_debuginfo = pg_announce_debuginfo,
	.job_lost = pg_job_lost,
	.singleton_begin = pg_singleton_begin,
	.singleton_end = pg_singleton_end,
	.backup = pg_no_backup,
	.vacuum = pg_no_vacuum,
};
