/*
 * s3-tool - drives the S3 client (daemon/intake/s3.c) from the command line
 * for tests/s3-client.py. The store comes from the environment:
 * PERFHUB_S3_URL (s3://BUCKET/PREFIX), PERFHUB_S3_ENDPOINT, AWS_* keys;
 * PERFHUB_S3_PART (part size), PERFHUB_S3_PAGE (list page size) and
 * PERFHUB_S3_STALL (seconds) are optional.
 *
 *   s3-tool put KEY FILE [SHA256]     s3-tool get KEY FILE [MAX]
 *   s3-tool cat KEY [MAX]             s3-tool head KEY
 *   s3-tool delete KEY                s3-tool list [PREFIX]
 *   s3-tool mpu-abort KEY FILE        (begin, one part, abort)
 *
 * Exit: 0 done, 1 not found, 2 error (the client's message on stderr).
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "s3.h"

static int to_stdout(void *ctx, const void *data, size_t len)
{
	(void)ctx;
	return fwrite(data, 1, len, stdout) == len ? 0 : -1;
}

static int print_key(void *ctx, const char *key, uint64_t size)
{
	(void)ctx;
	printf("%s %" PRIu64 "\n", key, size);
	return 0;
}

static uint64_t num_env(const char *name)
{
	const char *v = getenv(name);

	return v ? strtoull(v, NULL, 10) : 0;
}

static int mpu_abort(s3_client *c, const char *key, const char *path, char *err, size_t errlen)
{
	struct stat st;
	s3_multipart *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: cannot open", path);
		return S3_ERR;
	}
	m = s3_mpu_begin(c, key, err, errlen);
	if (!m) {
		close(fd);
		return S3_ERR;
	}
	printf("upload-id %s\n", s3_mpu_id(m));
	if (s3_mpu_part(m, fd, 0, (uint64_t)st.st_size, err, errlen) != S3_OK) {
		char ignored[256];

		s3_mpu_abort(m, ignored, sizeof(ignored));
		close(fd);
		return S3_ERR;
	}
	close(fd);
	rc = s3_mpu_abort(m, err, errlen);
	return rc;
}

int main(int argc, char **argv)
{
	s3_config cfg = {
		.url = getenv("PERFHUB_S3_URL"),
		.endpoint = getenv("PERFHUB_S3_ENDPOINT"),
		.part_size = num_env("PERFHUB_S3_PART"),
		.list_page = (unsigned)num_env("PERFHUB_S3_PAGE"),
		.stall_timeout_s = (long)num_env("PERFHUB_S3_STALL"),
		.connect_timeout_s = 5,
	};
	char err[1024] = "";
	const char *cmd = argc > 1 ? argv[1] : "";
	s3_client *c;
	uint64_t size = 0, max;
	int rc = S3_ERR;

	if (argc < 2) {
		fprintf(stderr, "usage: s3-tool put|get|cat|head|delete|list|mpu-abort ...\n");
		return 2;
	}
	c = s3_open(&cfg, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	max = argc > 4 ? strtoull(argv[4], NULL, 10) : UINT64_MAX;
	if (!strcmp(cmd, "put") && argc >= 4) {
		rc = s3_put_file(c, argv[2], argv[3], argc > 4 ? argv[4] : NULL, err, sizeof(err));
	} else if (!strcmp(cmd, "get") && argc >= 4) {
		rc = s3_get_file(c, argv[2], argv[3], max, &size, err, sizeof(err));
		if (rc == S3_OK)
			printf("%" PRIu64 "\n", size);
	} else if (!strcmp(cmd, "cat") && argc >= 3) {
		max = argc > 3 ? strtoull(argv[3], NULL, 10) : UINT64_MAX;
		rc = s3_get(c, argv[2], max, to_stdout, NULL, &size, err, sizeof(err));
	} else if (!strcmp(cmd, "head") && argc >= 3) {
		rc = s3_head(c, argv[2], &size, err, sizeof(err));
		if (rc == S3_OK)
			printf("%" PRIu64 "\n", size);
	} else if (!strcmp(cmd, "delete") && argc >= 3) {
		rc = s3_delete(c, argv[2], err, sizeof(err));
	} else if (!strcmp(cmd, "list")) {
		rc = s3_list(c, argc > 2 ? argv[2] : "", print_key, NULL, err, sizeof(err));
	} else if (!strcmp(cmd, "mpu-abort") && argc >= 4) {
		rc = mpu_abort(c, argv[2], argv[3], err, sizeof(err));
	} else {
		snprintf(err, sizeof(err), "s3-tool: bad command line");
	}
	s3_close(c);
	if (rc != S3_OK)
		fprintf(stderr, "%s\n", err);
	return rc == S3_OK ? 0 : rc == S3_NOT_FOUND ? 1 : 2;
}
