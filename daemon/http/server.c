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
#include <sys/socket.h>
#include <unistd.h>

#include "http/http.h"
#include "log.h"

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

/* 0 when allowed; else the status to answer (401, 403). */
static unsigned check_access(api *a, struct MHD_Connection *conn, int write)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	const char *token = NULL;
	unsigned status = 0;
	int role;

	pthread_rwlock_rdlock(&a->tok_lock);
	if (!a->tok)
		goto out;
	if (h && !strncasecmp(h, "Bearer ", 7))
		token = h + 7;
	role = tok_role(a->tok, token);
	if (write)
		status = role == TOK_NONE ? 401 : role < TOK_WRITE ? 403 : 0;
	else if (tok_reads_need_token(a->tok))
		status = role == TOK_NONE ? 401 : 0;
out:
	pthread_rwlock_unlock(&a->tok_lock);
	return status;
}

static MHD_Result_t on_request(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_size, void **con_cls)
{
	api *a = cls;
	req *r = *con_cls;

	(void)version;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		*con_cls = r;
		{
			int write = strcmp(method, "GET") && strcmp(method, "HEAD");
			unsigned deny = check_access(a, conn, write);
			if (deny)
				return http_reply_error(a, conn, deny, deny == 401 ?
						   "a valid token is needed (Authorization: Bearer)" :
						   "this token may only read");
		}
		if (!strcmp(method, "POST") &&
		    (!strcmp(url, API_PREFIX) || !strcmp(url, API_PREFIX "/")))
			return http_upload_begin(a, conn, r);
		if (apid_handles(url, method)) {
			r->kind = REQ_DEBUGINFO;
			return (MHD_Result_t)apid_request(a->dbg, conn, url, method, data,
							  data_size, &r->dbg);
		}
		/* a PATCH's body is kept (up to API_MAX_BODY); a POST or PUT
		 * elsewhere: its body is read and dropped, then answered */
		if (!strcmp(method, "PATCH")) {
			r->kind = REQ_BODY;
			return MHD_YES;
		}
		if (strcmp(method, "POST") && strcmp(method, "PUT"))
			return route(a, conn, url, method, NULL, 0);
		return MHD_YES;
	}
	if (r->kind == REQ_DEBUGINFO)
		return (MHD_Result_t)apid_request(a->dbg, conn, url, method, data, data_size,
						  &r->dbg);
	if (r->kind == REQ_UPLOAD) {
		if (*data_size)
			return http_upload_data(a, conn, r, data, data_size);
		return http_upload_end(a, conn, r);
	}
	if (*data_size) {
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
	if (r->body_too_large)
		return http_reply_error(a, conn, 413, "the request body exceeds %u bytes",
					API_MAX_BODY);
	return route(a, conn, url, method, r->body ? r->body : "", r->body_len);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	req *r = *con_cls;

	(void)conn;
	(void)toe;
	if (!r)
		return;
	intake_upload_abort(r->up);	/* an interrupted upload leaves nothing behind */
	http_upload_completed(cls, r);
	apid_completed(&r->dbg);
	free(r->body);
	free(r);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	log_warn("msg=\"http\" detail=\"%s\"", msg);
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

api *api_start(const cfg *c, st_store *st, jobs *j)
{
	api *a = calloc(1, sizeof(*a));
	int listen_fd;
	struct sockaddr_storage ss;
	socklen_t sl;
	const union MHD_DaemonInfo *info;
	char host[256];
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG;

	if (!a)
		return NULL;
	a->c = c;
	a->st = st;
	a->j = j;
	a->qc = qc_new(API_QCACHE_BYTES);	/* NULL: answers are not kept */
	pthread_rwlock_init(&a->tok_lock, NULL);
	a->dbg = apid_new(c, st, j);
	a->code = code_finder_new(jobs_debuginfo(j) ? dbg_dir(jobs_debuginfo(j)) : NULL,
				  c->source_roots);
	if (!a->dbg || !a->code || api_reload_tokens(a) < 0) {
		code_finder_free(a->code);
		apid_free(a->dbg);
		qc_free(a->qc);
		free(a);
		return NULL;
	}
	memset(&ss, 0, sizeof(ss));
	/* "[::1]" or "::1" are IPv6, anything else IPv4 */
	snprintf(host, sizeof(host), "%s", c->listen_addr);
	if (host[0] == '[') {
		size_t n = strlen(host);
		memmove(host, host + 1, n);
		if (n > 1 && host[n - 2] == ']')
			host[n - 2] = 0;
	}
	if (strchr(host, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)c->listen_port);
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			goto bad_addr;
		sl = sizeof(*s6);
		flags |= MHD_USE_IPv6;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)c->listen_port);
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			goto bad_addr;
		sl = sizeof(*s4);
	}
	(void)sl;
	listen_fd = activation_socket();
	if (listen_fd >= 0) {
		log_info("msg=\"socket activation\" fd=%d", listen_fd);
		a->d = MHD_start_daemon(flags & ~(unsigned)MHD_USE_IPv6, 0, NULL, NULL, on_request, a,
					MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
					MHD_OPTION_UNESCAPE_CALLBACK, unescape_no_nul, NULL,
					MHD_OPTION_LISTEN_SOCKET, listen_fd,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, a,
					MHD_OPTION_CONNECTION_LIMIT, c->max_connections,
					MHD_OPTION_CONNECTION_TIMEOUT, c->connection_timeout,
					MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
					MHD_OPTION_END);
	} else
	a->d = MHD_start_daemon(flags, (uint16_t)c->listen_port, NULL, NULL, on_request, a,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				MHD_OPTION_UNESCAPE_CALLBACK, unescape_no_nul, NULL,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, a,
				MHD_OPTION_CONNECTION_LIMIT, c->max_connections,
				MHD_OPTION_CONNECTION_TIMEOUT, c->connection_timeout,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
				MHD_OPTION_END);
	if (!a->d) {
		log_warn("msg=\"cannot listen\" addr=%s port=%u error=\"%s\"", c->listen_addr,
			 c->listen_port, strerror(errno));
		code_finder_free(a->code);
		apid_free(a->dbg);
		qc_free(a->qc);
		free(a);
		return NULL;
	}
	info = MHD_get_daemon_info(a->d, MHD_DAEMON_INFO_BIND_PORT);
	a->port = info ? info->port : c->listen_port;
	return a;
bad_addr:
	log_warn("msg=\"bad listen address\" addr=\"%s\"", c->listen_addr);
	code_finder_free(a->code);
	apid_free(a->dbg);
	qc_free(a->qc);
	free(a);
	return NULL;
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
	MHD_stop_daemon(a->d);
	code_finder_free(a->code);
	apid_free(a->dbg);
	tok_free(a->tok);
	pthread_rwlock_destroy(&a->tok_lock);
	qc_free(a->qc);
	free(a);
}
