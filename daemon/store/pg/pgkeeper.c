/*
 * pgkeeper.c - what keeps a node's place among the others: the jobs it
 * holds and their leases, renewed by one thread every third of a lease;
 * the same thread puts back in the queue every lease that ran out
 * (whichever node's) and LISTENs for queued jobs to wake the workers.
 * Singletons hold a session advisory lock on a connection of their own.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "store/pg/pg.h"

#define PG_KEEPER_TICK_MS 500		/* the longest the thread waits at once */
#define PG_KEEPER_PATIENCE_S 5		/* a reconnect attempt, before looking at stop */
#define PG_REQUEUE_MAX_MS 5000		/* expired leases are looked for at least this often */
#define PG_IDS_TEXT (PG_MAX_HELD * 24 + 8)
#define PG_STR_(x) #x
#define PG_STR(x) PG_STR_(x)

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the jobs this node holds ------------------------------------------------------ */

int pg_held_add(st_persist *p, int64_t id, int32_t attempt)
{
	int rc = -1;

	pthread_mutex_lock(&p->lock);
	if (p->nr_held < PG_MAX_HELD) {
		p->held[p->nr_held].id = id;
		p->held[p->nr_held].attempt = attempt;
		p->held[p->nr_held].lost = 0;
		p->nr_held++;
		rc = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

static pg_held *held_at(st_persist *p, int64_t id)
{
	size_t i;

	for (i = 0; i < p->nr_held; i++)
		if (p->held[i].id == id)
			return &p->held[i];
	return NULL;
}

int pg_held_find(st_persist *p, int64_t id, pgj_job *job)
{
	pg_held *h;
	int rc = 1;

	memset(job, 0, sizeof(*job));
	pthread_mutex_lock(&p->lock);
	if ((h = held_at(p, id))) {
		job->id = id;
		job->attempt = h->attempt;
		rc = h->lost ? 2 : 0;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void pg_held_drop(st_persist *p, int64_t id)
{
	pg_held *h;

	pthread_mutex_lock(&p->lock);
	if ((h = held_at(p, id)))
		*h = p->held[--p->nr_held];
	pthread_mutex_unlock(&p->lock);
}

void pg_held_lose(st_persist *p, int64_t id, int32_t attempt)
{
	pg_held *h;

	pthread_mutex_lock(&p->lock);
	h = held_at(p, id);
	if (h && h->attempt == attempt && !h->lost) {
		h->lost = 1;
		log_warn("msg=\"job lease lost\" id=%lld attempt=%d node=\"%s\"", (long long)id,
			 (int)attempt, p->node);
	}
	pthread_mutex_unlock(&p->lock);
}

int pg_job_lost(st_persist *p, int64_t id)
{
	pgj_job job;
	int rc = pg_held_find(p, id, &job);

	if (rc == 0)
		return 0;
	pg_held_drop(p, id);
	return 1;
}

void pg_set_wakeup(st_persist *p, void (*fn)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&p->lock);
	p->wake = fn;
	p->wake_ctx = ctx;
	pthread_mutex_unlock(&p->lock);
}

void pg_set_debuginfo_hook(st_persist *p, void (*fn)(void *ctx, const char *build_id),
			   void *ctx)
{
	pthread_mutex_lock(&p->lock);
	p->dbg_hook = fn;
	p->dbg_hook_ctx = ctx;
	pthread_mutex_unlock(&p->lock);
}

typedef struct announce_ctx {
	const char *hex;
} announce_ctx;

static int announce_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	announce_ctx *x = ctx;

	return pgj_announce(conn, PGJ_DEBUGINFO_CHANNEL, x->hex, err, errlen) == PGJ_OK ? 0 : -1;
}

int pg_announce_debuginfo(st_persist *p, const char *build_id)
{
	announce_ctx x = { build_id };

	return pg_txn(p, "announcing debuginfo", announce_body, &x);
}

/* Under the lock: pg_set_wakeup(NULL) returns only when no call of the
 * old function runs any more (its context may go then). */
static void wake(st_persist *p)
{
	pthread_mutex_lock(&p->lock);
	if (p->wake)
		p->wake(p->wake_ctx);
	pthread_mutex_unlock(&p->lock);
}

/* A notification: a queued job wakes the workers, a build-id's new
 * debuginfo makes this node forget what it loaded without it. */
static void noted(void *ctx, const char *channel, const char *payload)
{
	st_persist *p = ctx;

	if (!strcmp(channel, PGJ_DEBUGINFO_CHANNEL)) {
		pthread_mutex_lock(&p->lock);
		if (p->dbg_hook)
			p->dbg_hook(p->dbg_hook_ctx, payload);
		pthread_mutex_unlock(&p->lock);
		return;
	}
	wake(p);
}

/* ---- the keeper thread --------------------------------------------------------------- */

/* Every held lease extended in one statement; those it did not find are
 * this node's no more. */
static int renew_all(st_persist *p, PGconn *conn, char *err, size_t errlen)
{
	static char ids[PG_IDS_TEXT], attempts[PG_IDS_TEXT];
	pg_held snap[PG_MAX_HELD];
	size_t n, i, a = 0, b = 0;
	pg_params pp;
	PGresult *r;
	int rc;

	pthread_mutex_lock(&p->lock);
	for (n = 0, i = 0; i < p->nr_held; i++)
		if (!p->held[i].lost)
			snap[n++] = p->held[i];
	pthread_mutex_unlock(&p->lock);
	if (!n)
		return 0;
	ids[a++] = '{';
	attempts[b++] = '{';
	for (i = 0; i < n; i++) {
		a += (size_t)snprintf(ids + a, sizeof(ids) - a, "%s%" PRId64, i ? "," : "", snap[i].id);
		b += (size_t)snprintf(attempts + b, sizeof(attempts) - b, "%s%" PRId32, i ? "," : "",
				      snap[i].attempt);
	}
	snprintf(ids + a, sizeof(ids) - a, "}");
	snprintf(attempts + b, sizeof(attempts) - b, "}");
	/* a row our own write holds makes the renewal wait a little, not
	 * forever: the next round renews it (long before the lease ends) */
	if (pgc_exec(conn, "BEGIN; SET LOCAL lock_timeout = '" PG_STR(PG_RENEW_LOCK_TIMEOUT_MS)
		     "ms'", err, errlen) < 0)
		return -1;
	pgp_init(&pp);
	pgp_i64(&pp, p->lease_s);
	pgp_text(&pp, ids);
	pgp_text(&pp, attempts);
	rc = pg_exec(conn, "renewing leases",
		     "UPDATE profiles q SET lease_until = now() + $1::integer * interval '1 second'"
		     " FROM unnest($2::bigint[], $3::integer[]) AS h(id, attempt)"
		     " WHERE q.id = h.id AND q.attempt = h.attempt AND q.status = 1"
		     " RETURNING q.id", &pp, 0, PGRES_TUPLES_OK, &r, err, errlen);
	pgp_free(&pp);
	if (rc < 0 || pgc_exec(conn, "COMMIT", err, errlen) < 0) {
		PQclear(r);
		if (PQstatus(conn) == CONNECTION_OK)
			PQclear(PQexec(conn, "ROLLBACK"));
		return -1;
	}
	for (i = 0; i < n; i++) {
		int k, found = 0;

		for (k = 0; k < PQntuples(r) && !found; k++)
			found = pg_i64(r, k, 0) == snap[i].id;
		if (!found)
			pg_held_lose(p, snap[i].id, snap[i].attempt);
	}
	PQclear(r);
	return 0;
}

/* Sessions of a stalled node ended; how many (-1 could not look). */
static int end_stalls(PGconn *conn, pgj_stalls *stalls, int64_t now, int64_t stall_ms)
{
	char err[512];
	int ended = 0;

	if (pgj_end_stalled_copies(conn, stalls, now, stall_ms, &ended, err, sizeof(err)) != PGJ_OK) {
		log_warn("msg=\"postgresql: stalled sessions\" error=\"%s\"", err);
		return -1;
	}
	if (ended)
		log_warn("msg=\"postgresql: stalled sessions ended\" sessions=%d reason=\"in a COPY"
			 " its client sent nothing to for %lld ms (a node stopped mid-write"
			 " holds its job's row)\"", ended, (long long)stall_ms);
	return ended;
}

static void *keeper(void *arg)
{
	st_persist *p = arg;
	int64_t renew_ms = (int64_t)p->lease_s * 1000 / 3, requeue_ms = (int64_t)p->lease_s * 500;
	int64_t next_renew = 0, next_requeue = 0;
	/* a COPY stalled by its client this long ends (pgj_end_stalled_copies):
	 * two leases, and never sooner than an idle transaction would */
	int64_t stall_ms = (int64_t)p->lease_s * 2000 > PG_IDLE_IN_TXN_MIN_S * 1000 ?
			   (int64_t)p->lease_s * 2000 : PG_IDLE_IN_TXN_MIN_S * 1000;
	pgj_stalls *stalls = calloc(1, sizeof(*stalls));
	char err[512];
	const struct timespec pause = { 1, 0 };
	pgc *c = NULL;
	int listening = 0, down = 0;

	if (requeue_ms > PG_REQUEUE_MAX_MS)
		requeue_ms = PG_REQUEUE_MAX_MS;
	if (requeue_ms < 200)
		requeue_ms = 200;
	while (!atomic_load(&p->stop)) {
		PGconn *conn;
		int64_t now, wait;
		int requeued = 0, failed = 0, rc;

		if (!c && !(c = pg_connect(p, err, sizeof(err)))) {
			if (!down++)
				log_warn("msg=\"postgresql: keeper cannot connect\" error=\"%s\"", err);
			nanosleep(&pause, NULL);
			continue;
		}
		pgc_set_patience(c, PG_KEEPER_PATIENCE_S);
		if (!(conn = pgc_conn(c, err, sizeof(err)))) {
			if (!down++)
				log_warn("msg=\"postgresql: keeper lost its connection\" error=\"%s\"",
					 err);
			listening = 0;
			continue;
		}
		if (down)
			log_info("msg=\"postgresql: keeper reconnected\"");
		down = 0;
		if (!listening) {
			/* listen first, then look: nothing queued meanwhile is missed */
			if (pgj_listen(conn, err, sizeof(err)) != PGJ_OK) {
				log_warn("msg=\"postgresql: LISTEN\" error=\"%s\"", err);
				continue;
			}
			listening = 1;
			next_renew = 0;	/* our leases first, before anyone's expire */
			wake(p);
		}
		now = now_ms();
		if (now >= next_renew) {
			if (renew_all(p, conn, err, sizeof(err)) < 0)
				log_warn("msg=\"postgresql: renewing leases\" error=\"%s\"", err);
			next_renew = now + renew_ms;
		}
		if (now >= next_requeue) {
			if (pgj_requeue_expired(conn, &requeued, &failed, err, sizeof(err)) != PGJ_OK)
				log_warn("msg=\"postgresql: expired leases\" error=\"%s\"", err);
			else if (requeued || failed)
				log_info("msg=\"expired leases\" requeued=%d failed=%d", requeued,
					 failed);
			if (stalls && end_stalls(conn, stalls, now, stall_ms) > 0)
				next_requeue = now;	/* their rows are free: look again */
			else
				next_requeue = now + requeue_ms;
		}
		now = now_ms();
		wait = (next_renew < next_requeue ? next_renew : next_requeue) - now;
		if (wait > PG_KEEPER_TICK_MS)
			wait = PG_KEEPER_TICK_MS;
		if (wait < 0)
			wait = 0;
		rc = pgj_wait_notes(conn, (int)wait, noted, p, err, sizeof(err));
		if (rc < 0)
			listening = 0;	/* reconnect, listen again, look again */
	}
	pgc_close(c);
	free(stalls);
	return NULL;
}

int pg_keeper_start(st_persist *p, char *err, size_t errlen)
{
	if (pthread_create(&p->keeper, NULL, keeper, p) != 0) {
		snprintf(err, errlen, "cannot start the lease keeper: %s", strerror(errno));
		return -1;
	}
	p->keeper_running = 1;
	return 0;
}

void pg_keeper_stop(st_persist *p)
{
	if (!p->keeper_running)
		return;
	atomic_store(&p->stop, 1);
	pthread_join(p->keeper, NULL);
	p->keeper_running = 0;
}

/* ---- singletons ----------------------------------------------------------------------- */

int pg_singleton_begin(st_persist *p, const char *name, int wait)
{
	pg_singleton *s = NULL;
	char err[512];
	PGconn *conn;
	pgc *c;
	size_t i;
	int rc;

	if (strlen(name) >= sizeof(s->name))
		return -1;
	/* a session lock: on a connection of its own, which ends it if we die */
	if (!(c = pgc_open(p->conninfo, err, sizeof(err))) ||
	    !(conn = pgc_conn(c, err, sizeof(err)))) {
		log_warn("msg=\"postgresql: singleton\" name=%s error=\"%s\"", name, err);
		pgc_close(c);
		return -1;
	}
	rc = wait ? pgj_singleton_wait(conn, name, err, sizeof(err))
		  : pgj_singleton_try(conn, name, err, sizeof(err));
	if (rc < 0)
		log_warn("msg=\"postgresql: singleton\" name=%s error=\"%s\"", name, err);
	if (rc == 1) {
		pthread_mutex_lock(&p->lock);
		for (i = 0; i < PG_MAX_SINGLETONS && !s; i++)
			if (!p->singles[i].c)
				s = &p->singles[i];
		if (s) {
			snprintf(s->name, sizeof(s->name), "%s", name);
			s->c = c;
			c = NULL;
		}
		pthread_mutex_unlock(&p->lock);
		if (!s)
			rc = -1;
	}
	pgc_close(c);	/* a lock taken but not kept goes with its session */
	return rc;
}

void pg_singleton_end(st_persist *p, const char *name)
{
	pgc *c = NULL;
	size_t i;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < PG_MAX_SINGLETONS && !c; i++)
		if (p->singles[i].c && !strcmp(p->singles[i].name, name)) {
			c = p->singles[i].c;
			p->singles[i].c = NULL;
		}
	pthread_mutex_unlock(&p->lock);
	pgc_close(c);	/* closing the session releases its advisory lock */
}
