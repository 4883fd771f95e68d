/*
 * pgjobs.h - the job queue in PostgreSQL, shared by every node.
 *
 * A profile row in status queued (0) is a job. A node claims the oldest one
 * with FOR UPDATE SKIP LOCKED (claimers never wait for each other), which
 * sets it parsing (1), numbers the claim (`attempt`) and gives the node a
 * lease it renews while it parses. Every write of a parse runs in a
 * transaction that starts with pgj_fence: the row must still be parsing
 * under the same attempt, and stays locked (FOR SHARE) until the commit.
 * A lease that ran out is put back in the queue by whichever node looks
 * (pgj_requeue_expired); from then on the old attempt's writes are
 * refused, even when its node wakes up again. A job whose lease ran out
 * PGJ_MAX_EXPIRIES times (a recording that kills its parser) fails instead
 * of taking node after node down. The database's clock times the leases,
 * so the nodes' clocks do not matter.
 *
 * NOTIFY on PGJ_CHANNEL tells idle workers that a job was queued; singleton
 * work (retention, re-symbolization) runs under a session advisory lock,
 * released when its holder's connection ends.
 *
 * Returns: enum pgj_result; errors with the reason in err.
 */
#ifndef PERFHUB_STORE_PGJOBS_H
#define PERFHUB_STORE_PGJOBS_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#define PGJ_CHANNEL "perfhub_jobs"
#define PGJ_DEBUGINFO_CHANNEL "perfhub_debuginfo"	/* payload: a build-id */
#define PGJ_MAX_EXPIRIES 3
#define PGJ_MAX_NODE 128	/* bytes of a node's name */
#define PGJ_MAX_LEASE_S 86400

enum pgj_result {
	PGJ_OK = 0,
	PGJ_NONE = 1,		/* nothing queued / no such row */
	PGJ_FENCED = 2,		/* the lease was lost: this attempt may write no more */
	PGJ_APPLIED = 3,	/* this batch committed before (pgj_fence_batch) */
	PGJ_ERR = -1,
};

typedef struct pgj_job {
	int64_t id;
	int32_t attempt;
	char *spool_path, *kind;	/* malloc'ed */
} pgj_job;

void pgj_job_clear(pgj_job *job);

/* A node's name for leases: "HOST:PID:RANDOM", unique per process, so a
 * restarted node never takes its old self's jobs for its own. */
void pgj_node_name(char *out, size_t outlen);

/* The oldest queued job, now leased to `node` for lease_s seconds.
 * PGJ_OK and *job, or PGJ_NONE. */
int pgj_claim(PGconn *conn, const char *node, unsigned lease_s, pgj_job *job, char *err,
	      size_t errlen);
/* Extends the lease by lease_s seconds from now. PGJ_OK or PGJ_FENCED. */
int pgj_renew(PGconn *conn, const pgj_job *job, unsigned lease_s, char *err, size_t errlen);
/* Inside a transaction, before its writes: PGJ_OK (the row is locked for
 * share until the end of the transaction) or PGJ_FENCED. */
int pgj_fence(PGconn *conn, const pgj_job *job, char *err, size_t errlen);
/* Inside the transaction that starts a parse's writes (after removing
 * what earlier attempts left): no batch committed yet. PGJ_OK or
 * PGJ_FENCED. */
int pgj_begin_writes(PGconn *conn, const pgj_job *job, char *err, size_t errlen);
/* Inside a transaction writing batch `batch` (1, 2, ...) of the job's
 * parse: PGJ_OK (the row is locked until the commit and counts the batch),
 * PGJ_APPLIED (that batch committed already, its answer lost with the
 * connection: skip it) or PGJ_FENCED. The batch count makes a write
 * transaction safe to run twice (pgc_txn). */
int pgj_fence_batch(PGconn *conn, const pgj_job *job, int64_t batch, char *err,
		    size_t errlen);
/* PGJ_OK when this very attempt already ended the job in `status` (2
 * ready, 3 failed): a finish whose commit was applied, then run again. */
int pgj_ended(PGconn *conn, const pgj_job *job, int status, char *err, size_t errlen);
/* Inside the parse's last transaction: the job is done, its profile ready
 * and its generation one more (answers cached under the old one are
 * stale). PGJ_OK (also when a retried commit had done it) or PGJ_FENCED. */
int pgj_finish(PGconn *conn, const pgj_job *job, char *err, size_t errlen);
/* After pgj_finish, in the same transaction: the generation it made, or
 * 0 when the job is no longer this attempt's (a later one started). 0 or
 * -1 with err. */
int pgj_generation(PGconn *conn, const pgj_job *job, int64_t *gen, char *err, size_t errlen);
/* The parse failed: `msg` at byte `offset`, after parse_ms. As pgj_finish. */
int pgj_fail(PGconn *conn, const pgj_job *job, const char *msg, int64_t offset,
	     int64_t parse_ms, char *err, size_t errlen);
/* Gives the job back to the queue (shutdown). PGJ_OK or PGJ_FENCED. */
int pgj_requeue(PGconn *conn, const pgj_job *job, char *err, size_t errlen);
/* Every lease that ran out goes back to the queue (or fails, see above);
 * a row another session holds locked (a write of its node under way) is
 * left for the next look, so this never waits for a stalled node.
 * OUT: how many were queued again and how many failed (may be NULL). */
int pgj_requeue_expired(PGconn *conn, int *requeued, int *failed, char *err, size_t errlen);

/*
 * A node stopped in the middle of a COPY (frozen, swapped out) keeps its
 * transaction and the job's row locked, so no lease of it can be put back:
 * the server cancels no statement that waits for its client
 * (statement_timeout is not served in a COPY's read) and such a session is
 * not idle. Called by every node's keeper now and then: a session of ours
 * seen waiting for its client in the same COPY for stall_ms is ended
 * (pg_terminate_backend; the only interrupt served there). `seen` carries
 * the sightings from call to call. *ended: how many were ended.
 */
#define PGJ_MAX_STALLS 32
typedef struct pgj_stalls {
	struct {
		int pid;
		char since[48];		/* the COPY's query_start */
		int64_t first_ms;	/* when first seen so */
	} s[PGJ_MAX_STALLS];
	size_t n;
} pgj_stalls;
int pgj_end_stalled_copies(PGconn *conn, pgj_stalls *seen, int64_t now_ms, int64_t stall_ms,
			   int *ended, char *err, size_t errlen);

/* NOTIFY the workers (inside a transaction: at its commit). */
int pgj_notify(PGconn *conn, char *err, size_t errlen);
/* LISTEN on this connection to both channels (again after every
 * reconnect). */
int pgj_listen(PGconn *conn, char *err, size_t errlen);
/* Waits up to timeout_ms for a notification. 1 notified, 0 not, -1 the
 * connection failed (reconnect, listen again, and look at the queue). */
int pgj_wait(PGconn *conn, int timeout_ms, char *err, size_t errlen);
/* The same, each notification handed to fn (payload "" when none). */
typedef void (*pgj_note_fn)(void *ctx, const char *channel, const char *payload);
int pgj_wait_notes(PGconn *conn, int timeout_ms, pgj_note_fn fn, void *ctx, char *err,
		   size_t errlen);
/* NOTIFY channel with a payload (at most PGJ_MAX_PAYLOAD bytes). */
#define PGJ_MAX_PAYLOAD 256
int pgj_announce(PGconn *conn, const char *channel, const char *payload, char *err,
		 size_t errlen);

/* Singleton work: 1 = this connection now holds `name`, 0 = another
 * session does, -1 = error. Release with pgj_singleton_release. */
int pgj_singleton_try(PGconn *conn, const char *name, char *err, size_t errlen);
/* The same, waiting while another session holds it: 1, or -1 on error. */
int pgj_singleton_wait(PGconn *conn, const char *name, char *err, size_t errlen);
int pgj_singleton_release(PGconn *conn, const char *name, char *err, size_t errlen);

#endif
