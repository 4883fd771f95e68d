/* main.c - perfhubd: configuration, startup, signals, readiness, shutdown. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "api.h"
#include "debuginfo.h"
#include "options.h"
#include "jobs.h"
#include "log.h"
#include "spool.h"
#include "store.h"
#include "watch.h"

/* sd_notify("READY=1") without libsystemd: one datagram to $NOTIFY_SOCKET. */
static void notify_ready(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	static const char msg[] = "READY=1";
	size_t n;
	int fd;

	if (!path || !*path || (path[0] != '/' && path[0] != '@'))
		return;
	n = strlen(path);
	if (n >= sizeof(sa.sun_path))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, n);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;	/* abstract socket */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, sizeof(msg) - 1, 0, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0)
		log_warn("msg=\"sd_notify\" error=\"%s\"", strerror(errno));
	close(fd);
}

static int make_parent(const char *path)
{
	char dir[4096];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(dir, 0750) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(dir, 0750) < 0 && errno != EEXIST ? -1 : 0;
}

int main(int argc, char **argv)
{
	cfg c;
	st_store *st;
	jobs *j;
	dbg_store *dbg;
	api *a;
	watch *w;
	sigset_t set;
	char err[512];
	int sig, requeued = 0, rc;

	rc = cfg_load(&c, argc, argv);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	log_set_debug(c.debug);
	/* signals are taken synchronously by the main thread only */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (make_parent(c.db_path) < 0 || sp_init(c.spool_dir) < 0)
		fatal("msg=\"cannot create the state directories\" db=\"%s\" spool=\"%s\" error=\"%s\"",
		      c.db_path, c.spool_dir, strerror(errno));
	st = st_open(c.db_path, err, sizeof(err));
	if (!st)
		fatal("msg=\"cannot open the database\" error=\"%s\"", err);
	/* a job that was being parsed when the process died starts over */
	if (st_requeue_parsing(st, &requeued) < 0)
		fatal("msg=\"cannot requeue jobs\"");
	if (requeued)
		log_info("msg=\"requeued interrupted jobs\" count=%d", requeued);
	dbg = dbg_open(c.spool_dir, st, c.debuginfod, 0, err, sizeof(err));
	if (!dbg)
		fatal("msg=\"cannot open the debuginfo store\" error=\"%s\"", err);
	j = jobs_start(st, c.workers, c.max_upload, dbg);
	if (!j)
		fatal("msg=\"cannot start workers\"");
	a = api_start(&c, st, j);
	if (!a)
		fatal("msg=\"cannot start the HTTP server\"");
	w = watch_start(&c, st, j);
	log_info("msg=\"listening\" addr=%s port=%u db=\"%s\" spool=\"%s\" workers=%u",
		 c.listen_addr, api_port(a), c.db_path, c.spool_dir, c.workers);
	notify_ready();

	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			log_info("msg=\"SIGHUP: reloading tokens\"");
			api_reload_tokens(a);
			continue;
		}
		break;
	}
	log_info("msg=\"shutting down\" signal=%d", sig);
	/* stop intake first, then let the workers requeue what they hold */
	watch_stop(w);
	api_stop(a);
	jobs_stop(j);
	dbg_close(dbg);
	st_close(st);
	cfg_free(&c);
	log_info("msg=\"stopped\"");
	return 0;
}
