/* deadline.c - connections that take too long over their headers are cut. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "http/deadline.h"
#include "log.h"

#define HD_TICK_MS 250	/* how late past its deadline a connection may be cut */

typedef struct hd_conn {
	struct hd_conn *prev, *next;
	int fd;
	int busy;		/* headers in, request running */
	int cut;		/* shut down already */
	double since;		/* monotonic seconds: on the clock from here */
} hd_conn;

struct hd_watch {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	hd_conn *head;
	unsigned timeout_s;
	int stopping;
	uint64_t cut;
	pthread_t thread;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *watchdog(void *arg)
{
	hd_watch *w = arg;

	pthread_mutex_lock(&w->lock);
	while (!w->stopping) {
		struct timespec ts;
		double now = now_s();
		hd_conn *c;
		unsigned n = 0;

		for (c = w->head; c; c = c->next) {
			if (c->busy || c->cut || now - c->since <= w->timeout_s)
				continue;
			/* the event loop sees the end of the stream and closes it */
			shutdown(c->fd, SHUT_RDWR);
			c->cut = 1;
			n++;
		}
		if (n) {
			w->cut += n;
			log_debug("msg=\"request headers too slow\" connections=%u timeout_s=%u", n,
				  w->timeout_s);
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += HD_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

hd_watch *hd_start(unsigned timeout_s)
{
	hd_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->timeout_s = timeout_s;
	if (pthread_create(&w->thread, NULL, watchdog, w) != 0) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return NULL;
	}
	return w;
}

void hd_stop(hd_watch *w)
{
	hd_conn *c, *n;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	for (c = w->head; c; c = n) {
		n = c->next;
		free(c);
	}
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

void hd_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
	       enum MHD_ConnectionNotificationCode code)
{
	hd_watch *w = cls;
	hd_conn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		c = calloc(1, sizeof(*c));
		if (!c || !fd) {
			free(c);	/* not watched: only the idle timeout applies */
			return;
		}
		c->fd = fd->connect_fd;
		c->since = now_s();
		pthread_mutex_lock(&w->lock);
		c->next = w->head;
		if (w->head)
			w->head->prev = c;
		w->head = c;
		pthread_mutex_unlock(&w->lock);
		*socket_context = c;
		return;
	}
	if (!c)
		return;
	/* MHD_CONNECTION_NOTIFY_CLOSED: before the socket is closed */
	pthread_mutex_lock(&w->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		w->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&w->lock);
	free(c);
	*socket_context = NULL;
}

/* The watched state of conn, NULL when it is not watched. */
static hd_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

void hd_headers_done(hd_watch *w, struct MHD_Connection *conn)
{
	hd_conn *c = conn_of(conn);

	if (!c || !w)
		return;
	pthread_mutex_lock(&w->lock);
	c->busy = 1;
	pthread_mutex_unlock(&w->lock);
}

void hd_answered(hd_watch *w, struct MHD_Connection *conn)
{
	hd_conn *c = conn_of(conn);

	if (!c || !w)
		return;
	pthread_mutex_lock(&w->lock);
	c->since = now_s();
	c->busy = 0;
	pthread_mutex_unlock(&w->lock);
}

uint64_t hd_cut(hd_watch *w)
{
	uint64_t n;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	n = w->cut;
	pthread_mutex_unlock(&w->lock);
	return n;
}
