/*
 * api.h - the HTTP front end (libmicrohttpd): routing and the handlers of
 * /api/v1/profiles..., /healthz, /metrics and the static web page.
 *
 * Threading. libmicrohttpd runs its event loop (epoll) in API_IO_THREADS
 * threads; a connection costs a descriptor and a small buffer, not a
 * thread, so clients that are slow on purpose cannot use the server up.
 * They are bounded three ways: --max-connections-per-ip, a deadline for a
 * request's headers (--header-timeout, http/deadline.h: libmicrohttpd only
 * limits idle time, and a byte every few seconds is never idle), and the
 * upload rate floor (intake/upload.h).
 *
 * Handlers that may block - SQLite queries, fsync at the end of an upload,
 * flame graphs and diffs, debuginfo imports, waiting for an answer another
 * request is computing - must not run in the event loop: one of them
 * would stall every connection of its thread. Such a request's last step
 * runs in a handler thread (http/hpool.h) while its connection is
 * suspended (MHD_suspend_connection); the answer is queued when the
 * connection resumes. Cheap requests (/healthz, the page's files,
 * refusals) and the upload body's bytes are handled in the event loop,
 * so /healthz answers even while every handler thread is busy. Heavy
 * queries beyond --max-queries answer 503 with Retry-After instead of
 * queueing without bound. A client that closes its sending side before
 * such an answer is taken to have gone (libmicrohttpd reads the end of
 * the stream when the connection resumes), as nginx takes it.
 */
#ifndef PERFHUB_DAEMON_API_H
#define PERFHUB_DAEMON_API_H

#include "options.h"
#include "jobs/jobs.h"
#include "store/store.h"

typedef struct api api;

/* The listening socket of --listen (or the one systemd passed), bound
 * before anything else is created, so that a start that cannot listen
 * leaves nothing behind. -1 on failure (logged). */
int api_listen(const cfg *c);
/* Starts serving on listen_fd (taken, closed on failure). NULL on failure
 * (logged). */
api *api_start(const cfg *c, st_store *st, jobs *j, int listen_fd);
/* (Re)reads --token-file (SIGHUP); on a bad file the old tokens stay. 0/-1. */
int api_reload_tokens(api *a);
/* The port actually bound (useful with port 0). */
unsigned api_port(const api *a);
/* Stops accepting and waits for the running requests. */
void api_stop(api *a);

#endif
