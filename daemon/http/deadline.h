/*
 * deadline.h - a deadline for a request's headers.
 *
 * libmicrohttpd limits only idle time: a client sending one header byte
 * every few seconds is never idle, and held a connection (once a thread)
 * forever. Here each connection is on the clock from its accept, or from
 * the end of its previous answer, until its request's headers are all in;
 * a watchdog thread shuts down the socket of one past `timeout_s`, and the
 * event loop then closes it as a client that went away.
 *
 * hd_notify is libmicrohttpd's connection callback
 * (MHD_OPTION_NOTIFY_CONNECTION); it runs before the library closes a
 * socket, and takes the same lock as the watchdog, so a socket is never
 * shut down after its descriptor could be reused.
 */
#ifndef PERFHUB_DAEMON_HTTP_DEADLINE_H
#define PERFHUB_DAEMON_HTTP_DEADLINE_H

#include <stdint.h>

#include <microhttpd.h>

typedef struct hd_watch hd_watch;

/* NULL when the thread cannot start. */
hd_watch *hd_start(unsigned timeout_s);
/* Stops the watchdog (after the daemon stopped: no connection is left). */
void hd_stop(hd_watch *w);

/* MHD_NotifyConnectionCallback, cls = the hd_watch. */
void hd_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
	       enum MHD_ConnectionNotificationCode code);
/* The request's headers are complete: off the clock until hd_answered. */
void hd_headers_done(hd_watch *w, struct MHD_Connection *conn);
/* The request was answered: the next one's headers are on the clock. */
void hd_answered(hd_watch *w, struct MHD_Connection *conn);

/* Connections cut so far for taking too long over their headers. */
uint64_t hd_cut(hd_watch *w);

#endif
