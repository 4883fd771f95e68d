/*
 * api.h - the HTTP front end (libmicrohttpd): routing and the handlers of
 * /api/v1/profiles..., /healthz, /metrics and the static web page.
 *
 * Threading: one thread per connection (MHD_USE_THREAD_PER_CONNECTION).
 * Handlers do blocking work - streaming uploads to disk with fsync, SQLite
 * queries that may take tens of milliseconds - and a thread per connection
 * keeps one slow request from stalling the others, which an epoll loop or a
 * small pool would not. The connection limit bounds the threads.
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
