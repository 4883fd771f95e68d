/*
 * openapi.c - GET /api/v1/openapi.json: the OpenAPI description of this
 * API, kept in the repository as docs/openapi.json and installed with the
 * page (web root/openapi.json). Found beside the page: in the web root, or
 * in docs/ beside it (a source tree, whose web/ and docs/ are siblings).
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http/http.h"

#define OPENAPI_MAX_BYTES ((off_t)8 << 20)

MHD_Result_t http_get_openapi(api *a, struct MHD_Connection *conn)
{
	static const char *const where[] = { "%s/openapi.json", "%s/../docs/openapi.json" };
	char path[PATH_MAX];
	struct stat st;
	size_t i;

	for (i = 0; a->c->web_root && i < sizeof(where) / sizeof(where[0]); i++) {
		int fd;
		if ((size_t)snprintf(path, sizeof(path), where[i], a->c->web_root) >= sizeof(path))
			continue;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= OPENAPI_MAX_BYTES)
			return http_reply_fd(a, conn, fd, (uint64_t)st.st_size, "application/json", NULL);
		close(fd);
	}
	return http_reply_error(a, conn, 404, "the API description (openapi.json) is not "
				"installed beside the web root");
}
