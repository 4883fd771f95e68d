/* pgjobs.c - claims, leases, fences and wake-ups of the shared job queue. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pgconn.h"
#include "pgjobs.h"

#define ID_TEXT 24	/* an int64 in decimal, with its sign and NUL */

void pgj_job_clear(pgj_job *job)
{
	free(job->spool_path);
	free(job->kind);
	memset(job, 0, sizeof(*job));
}

void pgj_node_name(char *out, size_t outlen)
{
	char host[64] = "localhost";
	unsigned char rnd[4] = { 0 };
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd))
			memset(rnd, 0, sizeof(rnd));
		close(fd);
	}
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = 0;
	snprintf(out, outlen, "%s:%ld:%02x%02x%02x%02x", host, (long)getpid(), rnd[0], rnd[1],
		 rnd[2], rnd[3]);
}

/* $1 = id, $2 = attempt as text, then up to 3 more */
typedef struct job_params {
	char id[ID_TEXT], attempt[ID_TEXT];
	const char *v[5];
} job_params;

static void params_of(job_params *p, const pgj_job *job)
{
	snprintf(p->id, sizeof(p->id), "%" PRId64, job->id);
	snprintf(p->attempt, sizeof(p->attempt), "%" PRId32, job->attempt);
	p->v[0] = p->id;
	p->v[1] = p->attempt;
}

/* Runs a statement; OUT: rows it changed (or returned). 0 or -1 with err. */
static int run(PGconn *conn, const char *what, const char *sql, int n, const char *const *v,
	       long *rows, char *err, size_t errlen)
{
	PGresult *r = PQexecParams(conn, sql, n, NULL, v, NULL, NULL, 0);
	ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	int rc = pgc_check(r, st == PGRES_TUPLES_OK ? PGRES_TUPLES_OK : PGRES_COMMAND_OK, what,
			   err, errlen);

	if (rc == 0 && rows)
		*rows = st == PGRES_TUPLES_OK ? PQntuples(r) : atol(PQcmdTuples(r));
	PQclear(r);
	return rc;
}

int pgj_claim(PGconn *conn, const char *node, unsigned lease_s, pgj_job *job, char *err,
	      size_t errlen)
{
	static const char sql[] =
		"UPDATE profiles p SET status = 1, attempt = p.attempt + 1, lease_owner = $1,"
		" lease_until = now() + $2::integer * interval '1 second'"
		" FROM (SELECT id FROM profiles WHERE status = 0 ORDER BY id LIMIT 1"
		" FOR UPDATE SKIP LOCKED) q"
		" WHERE p.id = q.id RETURNING p.id, p.attempt, p.spool_path, p.kind";
	char lease[ID_TEXT];
	const char *v[2] = { node, lease };
	PGresult *r;
	int rc = PGJ_ERR;

	memset(job, 0, sizeof(*job));
	if (!node || !*node || strlen(node) > PGJ_MAX_NODE || !lease_s ||
	    lease_s > PGJ_MAX_LEASE_S) {
		snprintf(err, errlen, "claiming a job: bad node name or lease");
		return PGJ_ERR;
	}
	snprintf(lease, sizeof(lease), "%u", lease_s);
	r = PQexecParams(conn, sql, 2, NULL, v, NULL, NULL, 0);
	if (pgc_check(r, PGRES_TUPLES_OK, "claiming a job", err, errlen) < 0)
		goto out;
	if (PQntuples(r) == 0) {
		rc = PGJ_NONE;
		goto out;
	}
	job->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	job->attempt = (int32_t)strtol(PQgetvalue(r, 0, 1), NULL, 10);
	job->spool_path = strdup(PQgetvalue(r, 0, 2));
	job->kind = strdup(PQgetvalue(r, 0, 3));
	if (!job->spool_path || !job->kind) {
		/* the lease runs out and the job comes back to the queue */
		snprintf(err, errlen, "claiming a job: out of memory");
		pgj_job_clear(job);
		goto out;
	}
	rc = PGJ_OK;
out:
	PQclear(r);
	return rc;
}

/* A statement on the job's row, guarded by its id ($1) and attempt ($2);
 * `extra` holds $3 onwards. PGJ_OK when it found (or changed) exactly that
 * row, PGJ_FENCED when not. */
static int held(PGconn *conn, const pgj_job *job, const char *what, const char *sql,
		int nextra, const char *const *extra, char *err, size_t errlen)
{
	job_params p;
	long rows = 0;
	int i;

	params_of(&p, job);
	for (i = 0; i < nextra && i < 3; i++)
		p.v[2 + i] = extra[i];
	if (run(conn, what, sql, 2 + i, p.v, &rows, err, errlen) < 0)
		return PGJ_ERR;
	return rows == 1 ? PGJ_OK : PGJ_FENCED;
}

int pgj_renew(PGconn *conn, const pgj_job *job, unsigned lease_s, char *err, size_t errlen)
{
	char lease[ID_TEXT];
	const char *x[1] = { lease };

	if (!lease_s || lease_s > PGJ_MAX_LEASE_S) {
		snprintf(err, errlen, "renewing a lease: bad lease");
		return PGJ_ERR;
	}
	snprintf(lease, sizeof(lease), "%u", lease_s);
	return held(conn, job, "renewing a lease",
		    "UPDATE profiles SET lease_until = now() + $3::integer * interval '1 second'"
		    " WHERE id = $1 AND attempt = $2 AND status = 1", 1, x, err, errlen);
}

int pgj_fence(PGconn *conn, const pgj_job *job, char *err, size_t errlen)
{
	return held(conn, job, "checking the lease",
		    "SELECT 1 FROM profiles WHERE id = $1 AND attempt = $2 AND status = 1 FOR SHARE",
		    0, NULL, err, errlen);
}

int pgj_begin_writes(PGconn *conn, const pgj_job *job, char *err, size_t errlen)
{
	return held(conn, job, "checking the lease", "UPDATE profiles SET batches = 0"
		    " WHERE id = $1 AND attempt = $2 AND status = 1", 0, NULL, err, errlen);
}

int pgj_fence_batch(PGconn *conn, const pgj_job *job, int64_t batch, char *err, size_t errlen)
{
	char b[ID_TEXT];
	const char *x[1] = { b };
	int rc;

	snprintf(b, sizeof(b), "%" PRId64, batch);
	rc = held(conn, job, "checking the lease",
		  "UPDATE profiles SET batches = $3::bigint WHERE id = $1 AND attempt = $2"
		  " AND status = 1 AND batches = $3::bigint - 1", 1, x, err, errlen);
	if (rc != PGJ_FENCED)
		return rc;
	/* not the next batch: one that committed already (its answer lost with
	 * the connection), or the job is no longer this attempt's */
	rc = held(conn, job, "checking the lease",
		  "SELECT 1 FROM profiles WHERE id = $1 AND attempt = $2 AND status = 1"
		  " AND batches >= $3::bigint FOR SHARE", 1, x, err, errlen);
	return rc == PGJ_OK ? PGJ_APPLIED : rc;
}

/* After an UPDATE that changed nothing: did this very attempt already end
 * the job in `status` (a commit that was applied, then retried)? */
static int ended(PGconn *conn, const pgj_job *job, int rc, const char *status, char *err,
		 size_t errlen)
{
	const char *x[1] = { status };

	if (rc != PGJ_FENCED)
		return rc;
	return held(conn, job, "checking the job", "SELECT 1 FROM profiles WHERE id = $1"
		    " AND attempt = $2 AND status = $3::smallint", 1, x, err, errlen);
}

int pgj_ended(PGconn *conn, const pgj_job *job, int status, char *err, size_t errlen)
{
	return ended(conn, job, PGJ_FENCED, status == 2 ? "2" : "3", err, errlen);
}

int pgj_finish(PGconn *conn, const pgj_job *job, char *err, size_t errlen)
{
	int rc = held(conn, job, "finishing a job",
		      "UPDATE profiles SET status = 2, lease_owner = NULL, lease_until = NULL,"
		      " generation = generation + 1 WHERE id = $1 AND attempt = $2 AND status = 1",
		      0, NULL, err, errlen);

	return ended(conn, job, rc, "2", err, errlen);
}

int pgj_generation(PGconn *conn, const pgj_job *job, int64_t *gen, char *err, size_t errlen)
{
	job_params p;
	PGresult *r;
	int rc;

	*gen = 0;
	params_of(&p, job);
	r = PQexecParams(conn, "SELECT generation FROM profiles WHERE id = $1 AND attempt = $2"
			 " AND status = 2", 2, NULL, p.v, NULL, NULL, 0);
	rc = pgc_check(r, PGRES_TUPLES_OK, "reading the generation", err, errlen);
	if (rc == 0 && PQntuples(r) == 1)
		*gen = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return rc;
}

int pgj_fail(PGconn *conn, const pgj_job *job, const char *msg, int64_t offset,
	     int64_t parse_ms, char *err, size_t errlen)
{
	char off[ID_TEXT], ms[ID_TEXT];
	const char *x[3] = { msg ? msg : "failed", off, ms };
	int rc;

	snprintf(off, sizeof(off), "%" PRId64, offset);
	snprintf(ms, sizeof(ms), "%" PRId64, parse_ms);
	rc = held(conn, job, "failing a job",
		  "UPDATE profiles SET status = 3, error = $3, error_offset = $4::bigint,"
		  " parse_ms = $5::bigint, lease_owner = NULL, lease_until = NULL"
		  " WHERE id = $1 AND attempt = $2 AND status = 1", 3, x, err, errlen);
	return ended(conn, job, rc, "3", err, errlen);
}

int pgj_requeue(PGconn *conn, const pgj_job *job, char *err, size_t errlen)
{
	int rc = held(conn, job, "requeueing a job",
		      "UPDATE profiles SET status = 0, lease_owner = NULL, lease_until = NULL"
		      " WHERE id = $1 AND attempt = $2 AND status = 1", 0, NULL, err, errlen);

	if (rc != PGJ_OK)
		return rc;
	return pgj_notify(conn, err, errlen) < 0 ? PGJ_ERR : PGJ_OK;
}

int pgj_requeue_expired(PGconn *conn, int *requeued, int *failed, char *err, size_t errlen)
{
	char max[ID_TEXT];
	const char *v[1] = { max };
	PGresult *r;
	int back, dead;

	snprintf(max, sizeof(max), "%d", PGJ_MAX_EXPIRIES);
	r = PQexecParams(conn,
		"WITH q AS (UPDATE profiles SET lease_expiries = lease_expiries + 1,"
		" status = CASE WHEN lease_expiries + 1 >= $1::integer THEN 3 ELSE 0 END,"
		" error = CASE WHEN lease_expiries + 1 >= $1::integer THEN"
		" 'abandoned: its parse outlived its lease ' || (lease_expiries + 1) ||"
		" ' times (the node parsing it stopped or died)' ELSE error END,"
		" lease_owner = NULL, lease_until = NULL"
		" WHERE id IN (SELECT id FROM profiles WHERE status = 1 AND lease_until < now()"
		" FOR UPDATE SKIP LOCKED) RETURNING status)"
		" SELECT count(*) FILTER (WHERE status = 0), count(*) FILTER (WHERE status = 3)"
		" FROM q", 1, NULL, v, NULL, NULL, 0);
	if (pgc_check(r, PGRES_TUPLES_OK, "requeueing expired leases", err, errlen) < 0) {
		PQclear(r);
		return PGJ_ERR;
	}
	back = atoi(PQgetvalue(r, 0, 0));
	dead = atoi(PQgetvalue(r, 0, 1));
	PQclear(r);
	if (requeued)
		*requeued = back;
	if (failed)
		*failed = dead;
	if (back && pgj_notify(conn, err, errlen) < 0)
		return PGJ_ERR;
	return PGJ_OK;
}

/* The sighting of session pid in the COPY started at `since`, in seen. */
static int stall_find(const pgj_stalls *seen, int pid, const char *since)
{
	size_t i;

	for (i = 0; i < seen->n; i++)
		if (seen->s[i].pid == pid && !strcmp(seen->s[i].since, since))
			return (int)i;
	return -1;
}

int pgj_end_stalled_copies(PGconn *conn, pgj_stalls *seen, int64_t now_ms, int64_t stall_ms,
			   int *ended, char *err, size_t errlen)
{
	pgj_stalls now = { .n = 0 };
	PGresult *r;
	int i, n;

	*ended = 0;
	/* our sessions (same user and application) inside a COPY, waiting
	 * for their client to send more */
	r = PQexec(conn, "SELECT pid, query_start::text FROM pg_stat_activity"
		   " WHERE datname = current_database() AND usename = current_user"
		   " AND application_name = current_setting('application_name')"
		   " AND pid <> pg_backend_pid() AND state = 'active'"
		   " AND wait_event = 'ClientRead' AND query ILIKE 'COPY %'"
		   " AND query_start IS NOT NULL");
	if (pgc_check(r, PGRES_TUPLES_OK, "looking for stalled sessions", err, errlen) < 0) {
		PQclear(r);
		return PGJ_ERR;
	}
	n = PQntuples(r);
	for (i = 0; i < n && now.n < PGJ_MAX_STALLS; i++) {
		int pid = atoi(PQgetvalue(r, i, 0)), k;
		const char *since = PQgetvalue(r, i, 1);

		now.s[now.n].pid = pid;
		snprintf(now.s[now.n].since, sizeof(now.s[now.n].since), "%s", since);
		k = stall_find(seen, pid, now.s[now.n].since);
		now.s[now.n].first_ms = k < 0 ? now_ms : seen->s[k].first_ms;
		now.n++;
	}
	PQclear(r);
	*seen = now;	/* a session not seen so this time starts again */
	for (i = 0; i < (int)seen->n; i++) {
		char pid[ID_TEXT];
		const char *v[1] = { pid };

		if (now_ms - seen->s[i].first_ms < stall_ms)
			continue;
		snprintf(pid, sizeof(pid), "%d", seen->s[i].pid);
		r = PQexecParams(conn, "SELECT pg_terminate_backend($1::integer)", 1, NULL, v, NULL,
				 NULL, 0);
		if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
		    !strcmp(PQgetvalue(r, 0, 0), "t"))
			(*ended)++;
		PQclear(r);
	}
	return PGJ_OK;
}

int pgj_notify(PGconn *conn, char *err, size_t errlen)
{
	return pgc_exec(conn, "NOTIFY " PGJ_CHANNEL, err, errlen) < 0 ? PGJ_ERR : PGJ_OK;
}

int pgj_listen(PGconn *conn, char *err, size_t errlen)
{
	return pgc_exec(conn, "LISTEN " PGJ_CHANNEL "; LISTEN " PGJ_DEBUGINFO_CHANNEL, err,
			errlen) < 0 ? PGJ_ERR : PGJ_OK;
}

int pgj_announce(PGconn *conn, const char *channel, const char *payload, char *err,
		 size_t errlen)
{
	const char *v[2] = { channel, payload };

	if (strlen(payload) > PGJ_MAX_PAYLOAD) {
		snprintf(err, errlen, "notify %s: payload too long", channel);
		return PGJ_ERR;
	}
	return run(conn, "notify", "SELECT pg_notify($1, $2)", 2, v, NULL, err, errlen) < 0 ?
	       PGJ_ERR : PGJ_OK;
}

/* Takes every notification that arrived; 1 when there was one. */
static int drain(PGconn *conn, pgj_note_fn fn, void *ctx)
{
	PGnotify *n;
	int got = 0;

	while ((n = PQnotifies(conn))) {
		got = 1;
		if (fn)
			fn(ctx, n->relname, n->extra ? n->extra : "");
		PQfreemem(n);
	}
	return got;
}

int pgj_wait(PGconn *conn, int timeout_ms, char *err, size_t errlen)
{
	return pgj_wait_notes(conn, timeout_ms, NULL, NULL, err, errlen);
}

int pgj_wait_notes(PGconn *conn, int timeout_ms, pgj_note_fn fn, void *ctx, char *err,
		   size_t errlen)
{
	struct pollfd pfd;
	int rc;

	if (!PQconsumeInput(conn)) {
		snprintf(err, errlen, "waiting for jobs: %s", PQerrorMessage(conn));
		return -1;
	}
	if (drain(conn, fn, ctx))
		return 1;
	pfd.fd = PQsocket(conn);
	pfd.events = POLLIN;
	if (pfd.fd < 0) {
		snprintf(err, errlen, "waiting for jobs: no connection");
		return -1;
	}
	do
		rc = poll(&pfd, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		snprintf(err, errlen, "waiting for jobs: %s", strerror(errno));
		return -1;
	}
	if (rc == 0)
		return 0;
	if (!PQconsumeInput(conn) || PQstatus(conn) != CONNECTION_OK) {
		snprintf(err, errlen, "waiting for jobs: %s", PQerrorMessage(conn));
		return -1;
	}
	return drain(conn, fn, ctx);
}

/* FNV-1a, 64 bits: the same key for the same name on every node */
static int64_t lock_key(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *name; name++) {
		h ^= (unsigned char)*name;
		h *= 0x100000001b3ull;
	}
	return (int64_t)h;
}

static int advisory(PGconn *conn, const char *fn, const char *name, char *err, size_t errlen)
{
	char key[ID_TEXT], sql[64];
	const char *v[1] = { key };
	PGresult *r;
	int rc;

	snprintf(key, sizeof(key), "%" PRId64, lock_key(name));
	/* pg_advisory_lock returns void: the second column says it returned */
	snprintf(sql, sizeof(sql), "SELECT %s($1::bigint), true", fn);
	r = PQexecParams(conn, sql, 1, NULL, v, NULL, NULL, 0);
	if (pgc_check(r, PGRES_TUPLES_OK, name, err, errlen) < 0) {
		PQclear(r);
		return -1;
	}
	rc = PQgetvalue(r, 0, strcmp(fn, "pg_advisory_lock") ? 0 : 1)[0] == 't';
	PQclear(r);
	return rc;
}

int pgj_singleton_try(PGconn *conn, const char *name, char *err, size_t errlen)
{
	return advisory(conn, "pg_try_advisory_lock", name, err, errlen);
}

int pgj_singleton_wait(PGconn *conn, const char *name, char *err, size_t errlen)
{
	return advisory(conn, "pg_advisory_lock", name, err, errlen);
}

int pgj_singleton_release(PGconn *conn, const char *name, char *err, size_t errlen)
{
	return advisory(conn, "pg_advisory_unlock", name, err, errlen) < 0 ? -1 : 0;
}
