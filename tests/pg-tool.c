/*
 * pg-tool - drives the PostgreSQL pieces (daemon/store/pg/: connection,
 * migrations, job queue) from the command line for tests/pg-queue.py. The
 * database is $PERFHUB_PG_URI.
 *
 *   migrate                      version
 *   enqueue N TAG                queues N profiles (sha256 TAG-i) and notifies
 *   claim NODE LEASE_S           prints "ID ATTEMPT"            (1: none queued)
 *   claim-all NODE LEASE_S       claims and finishes until none is left
 *   renew ID ATTEMPT LEASE_S     write ID ATTEMPT TEXT          (a fenced write)
 *   finish ID ATTEMPT            fail ID ATTEMPT MSG            requeue ID ATTEMPT
 *   expire                       prints "requeued N failed M"
 *   wait TIMEOUT_MS              listens, prints "listening", then "notified"
 *                                or "timeout"
 *   singleton NAME HOLD_MS       prints "got" (held HOLD_MS) or "busy"
 *   txn-loop N PAUSE_MS          N transactions through pgc_txn, each adding
 *                                row i to `pings`; prints "done N reconnects R"
 *
 * Exit: 0 done, 1 nothing to claim, 3 fenced, 2 error (message on stderr).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pgconn.h"
#include "pgjobs.h"
#include "pgmigrate.h"
#include "pgschema.h"

static char err[1024];

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int code(int rc)
{
	switch (rc) {
	case PGJ_OK:
		return 0;
	case PGJ_NONE:
		return 1;
	case PGJ_FENCED:
		printf("fenced\n");
		return 3;
	default:
		fprintf(stderr, "%s\n", err);
		return 2;
	}
}

static pgj_job job_of(char **argv)
{
	pgj_job j = { 0 };

	j.id = strtoll(argv[0], NULL, 10);
	j.attempt = (int32_t)strtol(argv[1], NULL, 10);
	return j;
}

typedef struct enqueue_ctx {
	long n;
	const char *tag;
} enqueue_ctx;

static int enqueue(PGconn *conn, void *ctx, char *e, size_t elen)
{
	enqueue_ctx *q = ctx;
	char sha[128], n[32];
	const char *v[2] = { sha, n };
	long i;

	for (i = 0; i < q->n; i++) {
		PGresult *r;

		snprintf(sha, sizeof(sha), "%s-%ld", q->tag, i);
		snprintf(n, sizeof(n), "%ld", i);
		r = PQexecParams(conn, "INSERT INTO profiles (sha256, kind, spool_path, size,"
				 " uploaded_at, status) VALUES ($1, 'file', '/spool/' || $1, $2::bigint,"
				 " extract(epoch from now())::bigint, 0) ON CONFLICT (sha256) DO NOTHING",
				 2, NULL, v, NULL, NULL, 0);
		if (pgc_check(r, PGRES_COMMAND_OK, "enqueue", e, elen) < 0) {
			PQclear(r);
			return -1;
		}
		PQclear(r);
	}
	return pgj_notify(conn, e, elen) == PGJ_OK ? 0 : -1;
}

typedef struct write_ctx {
	pgj_job job;
	const char *text;
	int fenced;
} write_ctx;

/* One write of a parse: fenced first, as every writer must. */
static int fenced_write(PGconn *conn, void *ctx, char *e, size_t elen)
{
	write_ctx *w = ctx;
	char id[32];
	const char *v[2] = { id, w->text };
	PGresult *r;
	int rc = pgj_fence(conn, &w->job, e, elen);

	if (rc != PGJ_OK) {
		w->fenced = rc == PGJ_FENCED;
		if (w->fenced)
			snprintf(e, elen, "fenced");
		return -1;
	}
	snprintf(id, sizeof(id), "%" PRId64, w->job.id);
	r = PQexecParams(conn, "INSERT INTO record_counts (profile_id, type, count)"
			 " VALUES ($1::bigint, $2, 1) ON CONFLICT (profile_id, type)"
			 " DO UPDATE SET count = record_counts.count + 1", 2, NULL, v, NULL, NULL, 0);
	rc = pgc_check(r, PGRES_COMMAND_OK, "write", e, elen);
	PQclear(r);
	return rc;
}

typedef struct end_ctx {
	pgj_job job;
	int result;
} end_ctx;

static int finish_txn(PGconn *conn, void *ctx, char *e, size_t elen)
{
	end_ctx *f = ctx;

	f->result = pgj_finish(conn, &f->job, e, elen);
	return f->result == PGJ_OK ? 0 : -1;
}

/* Safe to run twice, as pgc_txn asks: a commit whose answer was lost to
 * the crash may have been applied. */
static int ping(PGconn *conn, void *ctx, char *e, size_t elen)
{
	char sql[96];

	snprintf(sql, sizeof(sql), "INSERT INTO pings VALUES (%ld) ON CONFLICT DO NOTHING",
		 *(long *)ctx);
	return pgc_exec(conn, sql, e, elen);
}

static int claim_all(pgc *c, const char *node, unsigned lease)
{
	for (;;) {
		PGconn *conn = pgc_conn(c, err, sizeof(err));
		end_ctx f = { 0 };
		int rc;

		if (!conn)
			return code(PGJ_ERR);
		rc = pgj_claim(conn, node, lease, &f.job, err, sizeof(err));
		if (rc == PGJ_NONE)
			return 0;
		if (rc != PGJ_OK)
			return code(rc);
		printf("%" PRId64 " %" PRId32 "\n", f.job.id, f.job.attempt);
		if (pgc_txn(c, finish_txn, &f, err, sizeof(err)) < 0) {
			pgj_job_clear(&f.job);
			return code(f.result == PGJ_FENCED ? PGJ_FENCED : PGJ_ERR);
		}
		pgj_job_clear(&f.job);
	}
}

static int run(pgc *c, PGconn *conn, int argc, char **argv)
{
	const char *cmd = argv[1];
	pgj_job job;
	int rc;

	if (!strcmp(cmd, "migrate")) {
		int from = -1;

		if (pgm_migrate(conn, pgs_migrations, pgs_nr_migrations, &from, err,
				sizeof(err)) < 0)
			return code(PGJ_ERR);
		printf("from %d to %d\n", from, pgs_nr_migrations);
		return 0;
	}
	if (!strcmp(cmd, "version")) {
		rc = pgm_version(conn, err, sizeof(err));
		if (rc < 0)
			return code(PGJ_ERR);
		printf("%d\n", rc);
		return 0;
	}
	if (!strcmp(cmd, "enqueue") && argc == 4) {
		enqueue_ctx q = { strtol(argv[2], NULL, 10), argv[3] };

		return pgc_txn(c, enqueue, &q, err, sizeof(err)) < 0 ? code(PGJ_ERR) : 0;
	}
	if (!strcmp(cmd, "claim") && argc == 4) {
		rc = pgj_claim(conn, argv[2], (unsigned)atoi(argv[3]), &job, err, sizeof(err));
		if (rc == PGJ_OK)
			printf("%" PRId64 " %" PRId32 "\n", job.id, job.attempt);
		pgj_job_clear(&job);
		return code(rc);
	}
	if (!strcmp(cmd, "claim-all") && argc == 4)
		return claim_all(c, argv[2], (unsigned)atoi(argv[3]));
	if (!strcmp(cmd, "renew") && argc == 5) {
		job = job_of(argv + 2);
		return code(pgj_renew(conn, &job, (unsigned)atoi(argv[4]), err, sizeof(err)));
	}
	if (!strcmp(cmd, "write") && argc == 5) {
		write_ctx w = { job_of(argv + 2), argv[4], 0 };

		if (pgc_txn(c, fenced_write, &w, err, sizeof(err)) < 0)
			return code(w.fenced ? PGJ_FENCED : PGJ_ERR);
		return 0;
	}
	if (!strcmp(cmd, "finish") && argc == 4) {
		end_ctx f = { job_of(argv + 2), PGJ_ERR };

		if (pgc_txn(c, finish_txn, &f, err, sizeof(err)) < 0)
			return code(f.result == PGJ_FENCED ? PGJ_FENCED : PGJ_ERR);
		return 0;
	}
	if (!strcmp(cmd, "fail") && argc == 5) {
		job = job_of(argv + 2);
		return code(pgj_fail(conn, &job, argv[4], 0, 1, err, sizeof(err)));
	}
	if (!strcmp(cmd, "requeue") && argc == 4) {
		job = job_of(argv + 2);
		return code(pgj_requeue(conn, &job, err, sizeof(err)));
	}
	if (!strcmp(cmd, "expire")) {
		int back = 0, dead = 0;

		rc = pgj_requeue_expired(conn, &back, &dead, err, sizeof(err));
		if (rc == PGJ_OK)
			printf("requeued %d failed %d\n", back, dead);
		return code(rc);
	}
	if (!strcmp(cmd, "wait") && argc == 3) {
		if (pgj_listen(conn, err, sizeof(err)) != PGJ_OK)
			return code(PGJ_ERR);
		printf("listening\n");
		fflush(stdout);
		rc = pgj_wait(conn, atoi(argv[2]), err, sizeof(err));
		if (rc < 0)
			return code(PGJ_ERR);
		printf("%s\n", rc ? "notified" : "timeout");
		return 0;
	}
	if (!strcmp(cmd, "singleton") && argc == 4) {
		rc = pgj_singleton_try(conn, argv[2], err, sizeof(err));
		if (rc < 0)
			return code(PGJ_ERR);
		printf("%s\n", rc ? "got" : "busy");
		fflush(stdout);
		if (rc) {
			sleep_ms(atol(argv[3]));
			if (pgj_singleton_release(conn, argv[2], err, sizeof(err)) < 0)
				return code(PGJ_ERR);
		}
		return 0;
	}
	if (!strcmp(cmd, "txn-loop") && argc == 4) {
		long n = strtol(argv[2], NULL, 10), pause = strtol(argv[3], NULL, 10), i;

		if (pgc_exec(conn, "CREATE TABLE IF NOT EXISTS pings (id bigint PRIMARY KEY)",
			     err, sizeof(err)) < 0)
			return code(PGJ_ERR);
		for (i = 0; i < n; i++) {
			if (pgc_txn(c, ping, &i, err, sizeof(err)) < 0) {
				fprintf(stderr, "transaction %ld: %s\n", i, err);
				return 2;
			}
			sleep_ms(pause);
		}
		printf("done %ld reconnects %lu\n", n, pgc_reconnects(c));
		return 0;
	}
	fprintf(stderr, "pg-tool: bad command line\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *uri = getenv("PERFHUB_PG_URI");
	PGconn *conn;
	pgc *c;
	int rc;

	if (argc < 2 || !uri) {
		fprintf(stderr, "usage: PERFHUB_PG_URI=... pg-tool COMMAND [ARG]...\n");
		return 2;
	}
	if (!pgc_is_uri(uri)) {
		fprintf(stderr, "pg-tool: %s is not a postgresql:// URI\n", uri);
		return 2;
	}
	c = pgc_open(uri, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (getenv("PERFHUB_PG_PATIENCE"))
		pgc_set_patience(c, (unsigned)atoi(getenv("PERFHUB_PG_PATIENCE")));
	conn = pgc_conn(c, err, sizeof(err));
	rc = conn ? run(c, conn, argc, argv) : code(PGJ_ERR);
	pgc_close(c);
	return rc;
}
