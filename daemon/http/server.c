/* server.c - the HTTP server: start, stop, access checks and routing. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/http.h"
#include "log.h"

#define API_LISTEN_BACKLOG SOMAXCONN

/* ---- routing -------------------------------------------------------------------- */

/* A request to its handler through the table of routes (routes.c); a
 * body a PATCH carried comes as body/len. */
static MHD_Result_t route(api *a, struct MHD_Connection *conn, const char *url,
			  const char *method, const char *body, size_t len)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	char allowed[64];
	int64_t id;
	const http_route *r = http_route_find(method, url, &id, allowed, sizeof(allowed));

	if (!r && allowed[0])
		return http_reply_error(a, conn, 405, "use %s", allowed);
	if (r && r->fn)
		return r->fn(a, conn);
	if (r && r->fn_id)
		return r->fn_id(a, conn, id);
	if (r && r->fn_body)
		return r->fn_body(a, conn, id, body, len);
	if (!strncmp(url, "/api/", 5) || r)
		return http_reply_error(a, conn, 404, "no such endpoint");
	if (get)
		return http_get_static(a, conn, url);
	return http_reply_error(a, conn, 405, "method not allowed");
}

/* ---- access ------------------------------------------------------------------- */

/* 0 when allowed; else the status to answer (401, 403) and why. */
static unsigned check_access(api *a, struct MHD_Connection *conn, const char *url,
			     const char *method, const char **why)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	const char *token = NULL;
	unsigned status = 0;
	int role, need;

	if (!acc_host_allowed(&a->acc, host)) {
		*why = "this Host is not served here (see --allowed-host)";
		return 403;
	}
	if (!acc_origin_allowed(&a->acc, origin, host)) {
		*why = "requests from another site's pages are refused (see --allowed-origin)";
		return 403;
	}
	pthread_rwlock_rdlock(&a->tok_lock);
	if (!a->tok)
		goto out;
	need = acc_need(method, url, tok_reads_need_token(a->tok), tok_protects_metrics(a->tok));
	if (need == ACC_OPEN)
		goto out;
	if (h && !strncasecmp(h, "Bearer ", 7))
		token = h + 7;
	role = tok_role(a->tok, token);
	if (role == TOK_NONE) {
		status = 401;
		*why = "a valid token is needed (Authorization: Bearer)";
	} else if (role < need) {
		status = 403;
		*why = need == ACC_ADMIN ? "this needs a token with the admin role" :
					  "this token may only read";
	}
out:
	pthread_rwlock_unlock(&a->tok_lock);
	return status;
}

/* ---- requests: answered in the event loop or by a handler thread ------------------ */

/* Where a request's last step runs: at once (cheap, never blocks: the
 * page's files, /healthz, 404 and 405), or in a handler thread, heavy or
 * light as its route says (http_route.run). */
static int run_class(const char *url, const char *method, int kind)
{
	char allowed[64];
	int64_t id;
	const http_route *rt;

	if (kind == REQ_UPLOAD || kind == REQ_BODY)
		return RUN_LIGHT;
	rt = http_route_find(method, url, &id, allowed, sizeof(allowed));
	if (!rt)
		return RUN_INLINE;
	return rt->run;
}

/* A response made in a handler thread waits in the request until the
 * connection is resumed (see http_queue). */
static _Thread_local req *deferred;

MHD_Result_t http_queue(struct MHD_Connection *conn, unsigned status, struct MHD_Response *r)
{
	MHD_Result_t rc;

	if (!r)
		return MHD_NO;
	http_security_headers(r);
	if (deferred) {
		if (deferred->resp)
			MHD_destroy_response(deferred->resp);
		deferred->resp = r;
		deferred->status = status;
		return MHD_YES;
	}
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* The request's last step, wherever it runs. */
static MHD_Result_t finish(api *a, struct MHD_Connection *conn, req *r)
{
	if (r->kind == REQ_DEBUGINFO) {
		size_t zero = 0;
		return (MHD_Result_t)apid_request(a->dbg, conn, r->url, r->method, NULL, &zero,
						  &r->dbg);
	}
	if (r->kind == REQ_UPLOAD)
		return http_upload_end(a, conn, r);
	if (r->body_too_large)
		return http_reply_error(a, conn, 413, "the request body exceeds %u bytes",
					API_MAX_BODY);
	return route(a, conn, r->url, r->method, r->body ? r->body : "", r->body_len);
}

static void run_deferred(hpool_job *job)
{
	req *r = (req *)((char *)job - offsetof(req, job));

	deferred = r;
	if (finish(r->a, r->conn, r) != MHD_YES)
		r->close = 1;
	deferred = NULL;
	r->phase = PHASE_ANSWERED;
	MHD_resume_connection(r->conn);
}

/* The last step in a handler thread, the connection suspended meanwhile;
 * a heavy query beyond --max-queries answers 503 at once. */
static MHD_Result_t defer(api *a, struct MHD_Connection *conn, req *r, int heavy)
{
	if (hpool_reserve(a->pool, heavy) < 0)
		return http_reply_busy(a, conn);
	r->a = a;
	r->conn = conn;
	r->job.run = run_deferred;
	r->job.heavy = heavy;
	r->phase = PHASE_RUNNING;
	MHD_suspend_connection(conn);
	hpool_submit(a->pool, &r->job);
	return MHD_YES;
}

static MHD_Result_t on_request(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_size, void **con_cls)
{
	api *a = cls;
	req *r = *con_cls;
	int cls_run;

	(void)version;
	if (!r) {
		const char *why = NULL;
		unsigned deny;

		hd_headers_done(a->hd, conn);
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		*con_cls = r;
		r->url = url;
		r->method = method;
		/* an empty path cannot come from MHD, but nothing below may
		 * read before url[0] */
		if (!*url)
			return http_reply_error(a, conn, 400, "empty path");
		deny = check_access(a, conn, url, method, &why);
		if (deny)
			return http_reply_error(a, conn, deny, "%s", why);
		{
			/* a parameter the route does not take is refused before
			 * a byte of a body is read or a job exists */
			char allowed[64];
			int64_t id;
			const http_route *rt = http_route_find(method, url, &id, allowed,
							       sizeof(allowed));
			MHD_Result_t ret;

			if (rt && rt->params && http_params_check(a, conn, rt->params, &ret) < 0)
				return ret;
		}
		if (!strcmp(method, "POST") &&
		    (!strcmp(url, API_PREFIX) || !strcmp(url, API_PREFIX "/")))
			return http_upload_begin(a, conn, r);
		if (apid_handles(url, method)) {
			r->kind = REQ_DEBUGINFO;
			return (MHD_Result_t)apid_request(a->dbg, conn, url, method, data,
							  data_size, &r->dbg);
		}
		/* a PATCH's body is kept (up to API_MAX_BODY), one elsewhere
		 * read and dropped; answered by the last call, once the request
		 * is in: a connection suspended earlier would be read again when
		 * it resumes, and a client that closed its sending side would
		 * lose its answer */
		if (!strcmp(method, "PATCH"))
			r->kind = REQ_BODY;
		return MHD_YES;
	}
	if (r->phase == PHASE_ANSWERED) {
		/* resumed: the handler thread's answer goes out */
		MHD_Result_t rc = MHD_NO;

		if (r->resp && !r->close)
			rc = MHD_queue_response(conn, r->status, r->resp);
		if (r->resp)
			MHD_destroy_response(r->resp);
		r->resp = NULL;
		r->phase = PHASE_DONE;
		return rc;
	}
	if (r->phase == PHASE_DONE)
		return MHD_YES;
	if (*data_size) {
		if (r->kind == REQ_DEBUGINFO)
			return (MHD_Result_t)apid_request(a->dbg, conn, url, method, data,
							  data_size, &r->dbg);
		if (r->kind == REQ_UPLOAD)
			return http_upload_data(a, conn, r, data, data_size);
		if (r->kind == REQ_BODY && !r->body_too_large) {
			char *p = NULL;
			if (r->body_len + *data_size > API_MAX_BODY ||
			    !(p = realloc(r->body, r->body_len + *data_size + 1))) {
				r->body_too_large = 1;
			} else {
				memcpy(p + r->body_len, data, *data_size);
				r->body = p;
				r->body_len += *data_size;
				r->body[r->body_len] = 0;
			}
		}
		*data_size = 0;
		return MHD_YES;
	}
	if (r->kind == REQ_DEBUGINFO && apid_answered(r->dbg))
		return MHD_YES;	/* refused on the first call */
	cls_run = run_class(url, method, r->kind);
	if (cls_run == RUN_INLINE)
		return finish(a, conn, r);
	return defer(a, conn, r, cls_run == RUN_HEAVY);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	api *a = cls;
	req *r = *con_cls;

	(void)toe;
	hd_answered(a->hd, conn);
	if (!r)
		return;
	intake_upload_abort(r->up);	/* an interrupted upload leaves nothing behind */
	http_upload_completed(cls, r);
	apid_completed(&r->dbg);
	if (r->resp)
		MHD_destroy_response(r->resp);
	free(r->body);
	free(r);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512], q[LOG_Q_MAX];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	log_warn("msg=\"http\" detail=\"%s\"", log_q(q, sizeof(q), msg));
}

/* URL and argument decoding. A "%00" would decode to a NUL that silently
 * cuts the string ("/index.html%00.png" became "/index.html"): such a
 * string is left encoded, so it matches no file, route or number. */
static size_t unescape_no_nul(void *cls, struct MHD_Connection *conn, char *s)
{
	(void)cls;
	(void)conn;
	if (strstr(s, "%00"))
		return strlen(s);
	return MHD_http_unescape(s);
}

/* systemd socket activation (perfhubd.socket): the first fd passed in
 * LISTEN_FDS, when LISTEN_PID names this process; else -1. The variables
 * are cleared so that nothing started later takes them for its own. */
static int activation_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int fd = -1;

	if (pid && fds && strtol(pid, NULL, 10) == (long)getpid() && strtol(fds, NULL, 10) >= 1) {
		fd = 3;	/* SD_LISTEN_FDS_START */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return fd;
}

/* The listener's address decides the Host check (loopback) and names the
 * server as Host may ("127.0.0.1", "::1"). */
static void access_policy(api *a, const cfg *c, int listen_fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char addr[INET6_ADDRSTRLEN] = "";

	memset(&ss, 0, sizeof(ss));
	if (getsockname(listen_fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof(addr));
		else if (ss.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr,
				  sizeof(addr));
	}
	snprintf(a->acc.listen_host, sizeof(a->acc.listen_host), "%s", addr);
	a->acc.loopback = acc_is_loopback(addr);
	a->acc.check_host = a->acc.loopback || c->nr_allowed_host > 0;
	a->acc.hosts = (const char *const *)c->allowed_host;
	a->acc.nr_hosts = c->nr_allowed_host;
	a->acc.origins = (const char *const *)c->allowed_origin;
	a->acc.nr_origins = c->nr_allowed_origin;
}

/* Every connection is a descriptor: the soft limit goes up to the hard
 * one when the connection limit needs it (systemd starts services at a
 * soft 1024). */
static void raise_fd_limit(unsigned want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want)
		log_warn("msg=\"descriptor limit below the connection limit\" nofile=%llu want=%u",
			 (unsigned long long)rl.rlim_cur, want);
}

static void api_free(api *a)
{
	http_prepare_stop(a);	/* before qc: a finishing parse may be keeping answers */
	hpool_free(a->pool);
	hd_stop(a->hd);
	code_finder_free(a->code);
	apid_free(a->dbg);
	tok_free(a->tok);
	pthread_rwlock_destroy(&a->tok_lock);
	qc_free(a->qc);
	free(a);
}

/* The address of --listen: "[::1]" or "::1" are IPv6, anything else IPv4.
 * OUT: ss, its length. 0 or -1. */
static int listen_address(const cfg *c, struct sockaddr_storage *ss, socklen_t *sl)
{
	char host[256];

	memset(ss, 0, sizeof(*ss));
	snprintf(host, sizeof(host), "%s", c->listen_addr);
	if (host[0] == '[') {
		size_t n = strlen(host);
		memmove(host, host + 1, n);
		if (n > 1 && host[n - 2] == ']')
			host[n - 2] = 0;
	}
	if (strchr(host, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)c->listen_port);
		*sl = sizeof(*s6);
		return inet_pton(AF_INET6, host, &s6->sin6_addr) == 1 ? 0 : -1;
	}
	{
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)c->listen_port);
		*sl = sizeof(*s4);
		return inet_pton(AF_INET, host, &s4->sin_addr) == 1 ? 0 : -1;
	}
}

int api_listen(const cfg *c)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd = activation_socket(), one = 1, saved;

	if (fd >= 0) {
		log_info("msg=\"socket activation\" fd=%d", fd);
		return fd;
	}
	if (listen_address(c, &ss, &sl) < 0) {
		log_warn("msg=\"bad listen address\" addr=\"%s\"", c->listen_addr);
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* a restart must not wait for the old connections' TIME_WAIT */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, API_LISTEN_BACKLOG) < 0)
		goto fail;
	return fd;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	errno = saved;
	log_warn("msg=\"cannot listen\" addr=%s port=%u error=\"%s\"", c->listen_addr,
		 c->listen_port, strerror(errno));
	return -1;
}

api *api_start(const cfg *c, st_store *st, jobs *j, int listen_fd)
{
	api *a = calloc(1, sizeof(*a));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	/* epoll in a few threads: a connection costs a descriptor, not a
	 * thread, so slow clients cannot use up the threads (see api.h) */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			 MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;

	if (!a) {
		close(listen_fd);
		return NULL;
	}
	a->c = c;
	a->st = st;
	a->j = j;
	a->qc = qc_new(API_QCACHE_BYTES);	/* NULL: answers are not kept */
	pthread_rwlock_init(&a->tok_lock, NULL);
	a->dbg = apid_new(c, st, j);
	a->code = code_finder_new(jobs_debuginfo(j) ? dbg_dir(jobs_debuginfo(j)) : NULL,
				  c->source_roots);
	a->pool = hpool_new(c->max_queries);
	a->hd = hd_start(c->header_timeout);
	if (!a->dbg || !a->code || !a->pool || !a->hd || api_reload_tokens(a) < 0) {
		close(listen_fd);
		api_free(a);
		return NULL;
	}
	/* before the first request can come */
	access_policy(a, c, listen_fd);
	raise_fd_limit(c->max_connections + API_SPARE_FDS);
	a->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, a,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				MHD_OPTION_UNESCAPE_CALLBACK, unescape_no_nul, NULL,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, a,
				MHD_OPTION_NOTIFY_CONNECTION, hd_notify, a->hd,
				MHD_OPTION_THREAD_POOL_SIZE, (unsigned)API_IO_THREADS,
				MHD_OPTION_CONNECTION_LIMIT, c->max_connections,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, c->max_connections_per_ip,
				MHD_OPTION_CONNECTION_TIMEOUT, c->connection_timeout,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
				MHD_OPTION_LISTEN_SOCKET, listen_fd,
				MHD_OPTION_END);
	if (!a->d) {
		log_warn("msg=\"cannot start the HTTP server\" error=\"%s\"", strerror(errno));
		close(listen_fd);
		api_free(a);
		return NULL;
	}
	memset(&ss, 0, sizeof(ss));
	if (getsockname(listen_fd, (struct sockaddr *)&ss, &sl) == 0)
		a->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							 : ((struct sockaddr_in *)&ss)->sin_port);
	else
		a->port = c->listen_port;
	http_prepare_start(a);
	return a;
}

int api_reload_tokens(api *a)
{
	tokens *t = NULL, *old;
	char err[512];

	if (a->c->token_file) {
		t = tok_load(a->c->token_file, err, sizeof(err));
		if (!t) {
			log_warn("msg=\"token file\" error=\"%s\"", err);
			return -1;
		}
	}
	pthread_rwlock_wrlock(&a->tok_lock);
	old = a->tok;
	a->tok = t;
	pthread_rwlock_unlock(&a->tok_lock);
	tok_free(old);
	if (t)
		log_info("msg=\"tokens loaded\" file=\"%s\"", a->c->token_file);
	return 0;
}

unsigned api_port(const api *a)
{
	return a->port;
}

void api_stop(api *a)
{
	if (!a)
		return;
	/* no new connections; the handler threads finish what they hold
	 * (each resumes its connection), then the event loop stops */
	MHD_socket lfd = MHD_quiesce_daemon(a->d);

	hpool_free(a->pool);
	a->pool = NULL;
	MHD_stop_daemon(a->d);
	if (lfd != MHD_INVALID_SOCKET)
		close(lfd);
	api_free(a);
}
