/* static.c - the web page's files, never a path outside the web root. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http/http.h"

/* ---- static files --------------------------------------------------------------- */

static const char *mime_of(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (!dot)
		return "application/octet-stream";
	if (!strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (!strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (!strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	if (!strcmp(dot, ".svg"))
		return "image/svg+xml";
	if (!strcmp(dot, ".json"))
		return "application/json";
	if (!strcmp(dot, ".png"))
		return "image/png";
	return "application/octet-stream";
}

/* Serves an open regular file (takes fd). */
MHD_Result_t http_reply_fd(api *a, struct MHD_Connection *conn, int fd, uint64_t size,
			   const char *type, const char *disposition)
{
	struct MHD_Response *r = MHD_create_response_from_fd(size, fd);
	MHD_Result_t rc;

	if (!r) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	if (disposition)
		MHD_add_response_header(r, "Content-Disposition", disposition);
	http_count_status(a, 200);
	rc = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
	return rc;
}

MHD_Result_t http_get_page(api *a, struct MHD_Connection *conn)
{
	return http_get_static(a, conn, "/");
}

MHD_Result_t http_get_static(api *a, struct MHD_Connection *conn, const char *url)
{
	char want[PATH_MAX], real[PATH_MAX], root[PATH_MAX];
	struct stat st;
	size_t rl;
	int fd;

	if (strstr(url, "..") || !a->c->web_root || !realpath(a->c->web_root, root))
		return http_reply_error(a, conn, 404, "not found");
	if (strlen(root) + strlen(url) + 12 > sizeof(want))
		return http_reply_error(a, conn, 404, "not found");
	strcpy(want, root);
	strcat(want, url);
	if (url[strlen(url) - 1] == '/')
		strcat(want, "index.html");
	/* the resolved file must still be inside the web root (no symlinks out) */
	rl = strlen(root);
	if (!realpath(want, real) || strncmp(real, root, rl) || (real[rl] && real[rl] != '/'))
		return http_reply_error(a, conn, 404, "not found");
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return http_reply_error(a, conn, 404, "not found");
	}
	return http_reply_fd(a, conn, fd, (uint64_t)st.st_size, mime_of(real), NULL);
}
