/* main.c - perfhubd: configuration, startup, signals, readiness, shutdown,
 * and the one-shot actions --check-config, --vacuum and --backup. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "http/api.h"
#include "symbols/debuginfo.h"
#include "options.h"
#include "jobs/jobs.h"
#include "log.h"
#include "engine/log.h"
#include "jobs/retention.h"
#include "intake/spool.h"
#include "store/store.h"
#include "http/tokens.h"
#include "intake/watch.h"

/* Tells the service manager about our state ("READY=1", "STOPPING=1"):
 * libsystemd's sd_notify when built with it, else the same datagram to
 * $NOTIFY_SOCKET by hand. */
static void notify(const char *msg)
{
#ifdef HAVE_SYSTEMD
	int rc = sd_notify(0, msg);

	if (rc < 0)
		log_warn("msg=\"sd_notify\" state=\"%s\" error=\"%s\"", msg, strerror(-rc));
#else
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
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
	if (sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0)
		log_warn("msg=\"sd_notify\" state=\"%s\" error=\"%s\"", msg, strerror(errno));
	close(fd);
#endif
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

static int check_dir(const cfg *c, const char *key, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "perfhubd: %s: %s: '%s' is not a directory%s%s\n",
			cfg_origin(c, key), key, dir, errno ? ": " : "", errno ? strerror(errno) : "");
		return -1;
	}
	return 0;
}

/* --check-config: what cfg_load could not see (files the settings name). */
static int check_config(const cfg *c, int parse_rc)
{
	char err[512];
	int rc = parse_rc < 0 ? -1 : 0;
	unsigned i;

	if (c->token_file) {
		tokens *t = tok_load(c->token_file, err, sizeof(err));
		if (!t) {
			fprintf(stderr, "perfhubd: %s: token-file: %s\n", cfg_origin(c, "token-file"),
				err);
			rc = -1;
		}
		tok_free(t);
	}
	errno = 0;
	if (strcmp(cfg_origin(c, "web-root"), "default") && check_dir(c, "web-root", c->web_root) < 0)
		rc = -1;
	for (i = 0; i < c->nr_watch; i++)
		if (check_dir(c, "watch", c->watch[i]) < 0)
			rc = -1;
	if (rc == 0)
		printf("perfhubd: configuration ok%s%s\n", c->config_path ? ": " : "",
		       c->config_path ? c->config_path : "");
	return rc == 0 ? 0 : 1;
}

/* --copy-to: where the copy's spooled files are, and how many moved */
typedef struct copy_spools {
	spool *from, *to;	/* to: NULL = the files stay in `from` */
	char base[4096];	/* from's directory, for refs relative to it */
} copy_spools;

/* A spooled file of the source under the ref the copy keeps: relative, as
 * new uploads' are; copied into --copy-spool when there is one. */
static int relocate(void *ctx, const char *what, const char *old, char *ref, size_t reflen,
		    char *err, size_t errlen)
{
	copy_spools *x = ctx;
	const char *name = old, *p;
	char path[4096];
	size_t n = strlen(x->base);

	if (!strcmp(what, "debuginfo")) {
		for (p = strstr(old, "debuginfo/.build-id/"); p; p = strstr(p + 1, "debuginfo/.build-id/"))
			name = p;
	} else if ((p = strrchr(old, '/'))) {
		name = p + 1;
	}
	if (!x->to) {
		/* the spool stays: a path inside it becomes relative to it */
		if (old[0] == '/' && n && !strncmp(old, x->base, n) && old[n] == '/')
			name = old + n + 1;
		else if (old[0] == '/')
			name = old;
		snprintf(ref, reflen, "%s", name);
		return 0;
	}
	snprintf(ref, reflen, "%s", name);
	if (sp_fetch(x->from, old, UINT64_MAX, err, errlen) != 0 ||
	    sp_path(x->from, old, path, sizeof(path)) < 0) {
		/* a file already gone stays gone: its profile can still be read */
		fprintf(stderr, "perfhubd: copy: %s: not in the spool, not copied\n", old);
		return 0;
	}
	return sp_store_file(x->to, path, ref, err, errlen);
}

static int copy_to(const cfg *c)
{
	copy_spools x = { 0 };
	st_copy_stats stats;
	char err[512], shown[512];
	int rc = 1;

	if (!(x.from = spool_open(c->spool_dir, c->s3_endpoint, c->cache_dir, err, sizeof(err)))) {
		fprintf(stderr, "perfhubd: copy: --spool: %s\n", err);
		return 1;
	}
	if (strncmp(c->spool_dir, "s3://", 5))
		snprintf(x.base, sizeof(x.base), "%s", c->spool_dir);
	if (c->copy_spool && !(x.to = spool_open(c->copy_spool, c->s3_endpoint, c->cache_dir, err,
						 sizeof(err)))) {
		fprintf(stderr, "perfhubd: copy: --copy-spool: %s\n", err);
		goto out;
	}
	st_display(c->copy_to, shown, sizeof(shown));
	if (st_copy_to(c->db_path, c->copy_to, relocate, &x, &stats, err, sizeof(err)) < 0) {
		fprintf(stderr, "perfhubd: copy: %s\n", err);
		goto out;
	}
	printf("perfhubd: copy: %lld profiles (%lld rows) from %s into %s; %lld spooled files %s\n",
	       (long long)stats.profiles, (long long)stats.rows, c->db_path, shown,
	       (long long)stats.files, x.to ? "copied to --copy-spool" : "left in --spool");
	rc = 0;
out:
	spool_close(x.to);
	spool_close(x.from);
	return rc;
}

static int run_action(const cfg *c)
{
	char err[512];
	int64_t before, after;

	if (c->action == CFG_COPY)
		return copy_to(c);

	if (c->action == CFG_VACUUM) {
		if (st_vacuum(c->db_path, &before, &after, err, sizeof(err)) < 0) {
			fprintf(stderr, "perfhubd: vacuum: %s\n", err);
			return 1;
		}
		printf("perfhubd: vacuum: %s: %lld -> %lld bytes\n", c->db_path, (long long)before,
		       (long long)after);
		return 0;
	}
	if (st_backup(c->db_path, c->backup_path, err, sizeof(err)) < 0) {
		fprintf(stderr, "perfhubd: backup: %s\n", err);
		return 1;
	}
	printf("perfhubd: backup: %s written from %s\n", c->backup_path, c->db_path);
	return 0;
}

/* SIGHUP: tokens, and the settings that can change live. Others are
 * reported as needing a restart. */
static void reload(cfg *c, int argc, char **argv, api *a, retention *ret)
{
	cfg n;
	int changed = 0;

	if (cfg_load(&n, argc, argv) != 0) {
		log_warn("msg=\"SIGHUP: configuration has errors, keeping the running one\"");
		cfg_free(&n);
		api_reload_tokens(a);
		return;
	}
	if (n.log_level != c->log_level) {
		log_info("msg=\"setting changed\" key=log-level old=%s new=%s",
			 log_level_name(c->log_level), log_level_name(n.log_level));
		c->log_level = n.log_level;
		log_set_level(c->log_level);
		changed++;
	}
#define LIVE(key, field, fmt, type)						\
	if (n.field != c->field) {						\
		log_info("msg=\"setting changed\" key=" key " old=" fmt " new=" fmt, \
			 (type)c->field, (type)n.field);			\
		c->field = n.field;						\
		changed++;							\
	}
	LIVE("retain-days", retain_days, "%u", unsigned)
	LIVE("max-db-size", max_db_size, "%llu", unsigned long long)
	LIVE("retention-interval", retention_interval, "%u", unsigned)
	LIVE("shutdown-grace", shutdown_grace, "%u", unsigned)
#undef LIVE
	if (ret)
		ret_set_policy(ret, c->retain_days, c->max_db_size, c->retention_interval);
	if ((n.token_file || c->token_file) &&
	    (!n.token_file || !c->token_file || strcmp(n.token_file, c->token_file))) {
		log_info("msg=\"setting changed\" key=token-file old=\"%s\" new=\"%s\"",
			 c->token_file ? c->token_file : "", n.token_file ? n.token_file : "");
		/* only the reload below (this thread) reads the path */
		free(c->token_file);
		c->token_file = n.token_file;
		n.token_file = NULL;
		changed++;
	}
#define RESTART(key, differs)							\
	if (differs)								\
		log_warn("msg=\"setting needs a restart\" key=" key);
	RESTART("listen", strcmp(n.listen_addr, c->listen_addr) ||
			  n.listen_port != c->listen_port)
	RESTART("db", strcmp(n.db_path, c->db_path))
	RESTART("job-lease", n.job_lease != c->job_lease)
	RESTART("spool", strcmp(n.spool_dir, c->spool_dir))
	RESTART("s3-endpoint", (n.s3_endpoint || c->s3_endpoint) &&
			       (!n.s3_endpoint || !c->s3_endpoint ||
				strcmp(n.s3_endpoint, c->s3_endpoint)))
	RESTART("cache-dir", strcmp(n.cache_dir, c->cache_dir))
	RESTART("web-root", strcmp(n.web_root, c->web_root))
	RESTART("workers", n.workers != c->workers)
	RESTART("queue-size", n.queue_size != c->queue_size)
	RESTART("max-upload", n.max_upload != c->max_upload)
	RESTART("max-connections", n.max_connections != c->max_connections)
	RESTART("connection-timeout", n.connection_timeout != c->connection_timeout)
	RESTART("max-debuginfo", n.max_debuginfo != c->max_debuginfo)
	RESTART("debuginfod", (n.debuginfod || c->debuginfod) &&
			      (!n.debuginfod || !c->debuginfod || strcmp(n.debuginfod, c->debuginfod)))
	RESTART("watch", n.nr_watch != c->nr_watch || n.watch_remove != c->watch_remove)
	RESTART("header-timeout", n.header_timeout != c->header_timeout)
	RESTART("max-connections-per-ip", n.max_connections_per_ip != c->max_connections_per_ip)
	RESTART("max-queries", n.max_queries != c->max_queries)
	RESTART("allowed-origin", n.nr_allowed_origin != c->nr_allowed_origin)
	RESTART("allowed-host", n.nr_allowed_host != c->nr_allowed_host)
	RESTART("local-uploads", n.local_uploads != c->local_uploads)
#undef RESTART
	cfg_free(&n);
	log_info("msg=\"SIGHUP: reloading tokens\"");
	api_reload_tokens(a);
	log_info("msg=\"configuration reloaded\" changed=%d", changed);
}

/* The profile engine's warnings, as lines of this log. */
static void engine_log(const char *line)
{
	log_warn("%s", line);
}

int main(int argc, char **argv)
{
	cfg c;
	st_store *st;
	jobs *j;
	dbg_store *dbg;
	api *a;
	watch *w;
	retention *ret = NULL;
	spool *sp;
	st_options so = { 0 };
	sigset_t set;
	char err[512], db_shown[512];
	int sig, requeued = 0, rc, left, listen_fd;

	/* glibc gives threads their own malloc arenas (up to 8 per CPU) that
	 * keep what they once held: RSS then climbs with every thread that
	 * ever allocated (workers, HTTP handler threads). A few shared arenas
	 * keep it flat (tests/stress/hostile.py measures it). */
	mallopt(M_ARENA_MAX, 4);

	rc = cfg_load(&c, argc, argv);
	if (rc > 0) {
		cfg_free(&c);
		return 0;
	}
	if (c.action == CFG_CHECK) {
		rc = check_config(&c, rc);
		cfg_free(&c);
		return rc;
	}
	if (rc != 0) {
		cfg_free(&c);
		return 2;
	}
	if (c.action != CFG_RUN) {
		rc = run_action(&c);
		cfg_free(&c);
		return rc;
	}
	log_set_level(c.log_level);
	pe_log_set(engine_log);
	/* signals are taken synchronously by the main thread only */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	st_display(c.db_path, db_shown, sizeof(db_shown));
	/* listen first: a start that cannot (the port is taken) creates no
	 * database and no spool */
	listen_fd = api_listen(&c);
	if (listen_fd < 0)
		fatal("msg=\"cannot start the HTTP server\"");
	if (!st_is_uri(c.db_path) && make_parent(c.db_path) < 0)
		fatal("msg=\"cannot create the state directories\" db=\"%s\" error=\"%s\"",
		      db_shown, strerror(errno));
	sp = spool_open(c.spool_dir, c.s3_endpoint, c.cache_dir, err, sizeof(err));
	if (!sp)
		fatal("msg=\"cannot open the spool\" spool=\"%s\" error=\"%s\"", c.spool_dir, err);
	so.job_lease_s = c.job_lease;
	st = st_open_with(c.db_path, &so, err, sizeof(err));
	if (!st)
		fatal("msg=\"cannot open the database\" error=\"%s\"", err);
	/* a job that was being parsed when the process died starts over */
	if (st_requeue_parsing(st, &requeued) < 0)
		fatal("msg=\"cannot requeue jobs\"");
	if (requeued)
		log_info("msg=\"requeued interrupted jobs\" count=%d", requeued);
	dbg = dbg_open(sp, st, c.debuginfod, 0, err, sizeof(err));
	if (!dbg)
		fatal("msg=\"cannot open the debuginfo store\" error=\"%s\"", err);
	j = jobs_start(st, sp, c.workers, c.max_upload, dbg);
	if (!j)
		fatal("msg=\"cannot start workers\"");
	/* always running, so that SIGHUP can turn retention on */
	ret = ret_start(st, sp, dbg, c.retain_days, c.max_db_size, c.retention_interval);
	if (ret)
		jobs_on_done(j, ret_kick, ret);
	a = api_start(&c, st, j, listen_fd);
	if (!a)
		fatal("msg=\"cannot start the HTTP server\"");
	w = watch_start(&c, st, j);
	log_info("msg=\"listening\" addr=%s port=%u db=\"%s\" spool=\"%s\" workers=%u"
		 " log_level=%s retain_days=%u max_db_size=%llu shutdown_grace=%u",
		 c.listen_addr, api_port(a), db_shown, c.spool_dir, c.workers,
		 log_level_name(c.log_level), c.retain_days, (unsigned long long)c.max_db_size,
		 c.shutdown_grace);
	log_debug("msg=\"configuration\" file=\"%s\" queue_size=%u max_upload=%llu"
		  " max_connections=%u web_root=\"%s\" token_file=\"%s\" watch=%u"
		  " retention_interval=%u", c.config_path ? c.config_path : "", c.queue_size,
		  (unsigned long long)c.max_upload, c.max_connections, c.web_root,
		  c.token_file ? c.token_file : "", c.nr_watch, c.retention_interval);
	notify("READY=1");

	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			notify("RELOADING=1");
			reload(&c, argc, argv, a, ret);
			notify("READY=1");
			continue;
		}
		break;
	}
	notify("STOPPING=1");
	log_info("msg=\"shutting down\" signal=%d shutdown_grace=%u", sig, c.shutdown_grace);
	/* stop intake first, then give running jobs the grace period; what is
	 * still running after it goes back to the queue for the next start */
	watch_stop(w);
	api_stop(a);
	left = jobs_drain(j, c.shutdown_grace);
	if (left)
		log_warn("msg=\"jobs still running after the grace period, requeueing\" count=%d",
			 left);
	jobs_stop(j);
	ret_stop(ret);	/* after the workers: they kick it */
	dbg_close(dbg);
	st_close(st);
	spool_close(sp);
	cfg_free(&c);
	log_info("msg=\"stopped\"");
	return 0;
}
