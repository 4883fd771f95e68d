/*
 * s3.h - a client for S3-compatible object stores (AWS S3, MinIO, Ceph
 * RGW, ...). Objects live under s3://BUCKET/PREFIX at a path-style endpoint
 * (ENDPOINT/BUCKET/PREFIX/KEY); libcurl signs every request with SigV4.
 * Bodies stream between files (or a callback) and the network: no object
 * is ever whole in memory. Files from S3_PART_MIN_DEFAULT bytes on go up
 * as a multipart upload.
 *
 * Credentials come from the environment unless given: AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (optional) and AWS_REGION
 * (default us-east-1).
 *
 * Thread safety: one s3_client serves any number of threads; each call
 * borrows a connection handle from the client's pool.
 *
 * Errors: calls return enum s3_result and write one line into `err`: the
 * method, the key, then the HTTP status with the store's <Code> and
 * <Message>, or libcurl's reason (timeouts, refused connections).
 */
#ifndef PERFHUB_INTAKE_S3_H
#define PERFHUB_INTAKE_S3_H

#include <stddef.h>
#include <stdint.h>

#define S3_PART_MIN ((uint64_t)5 << 20)		/* S3's smallest part but the last */
#define S3_PART_DEFAULT ((uint64_t)16 << 20)
#define S3_MAX_PARTS 10000			/* S3's limit per upload */
#define S3_MAX_KEY 1024				/* bytes, prefix included */

enum s3_result {
	S3_OK = 0,
	S3_NOT_FOUND = 1,	/* 404: no such key (or bucket) */
	S3_ERR = -1,
};

typedef struct s3_client s3_client;

typedef struct s3_config {
	const char *url;	/* "s3://BUCKET" or "s3://BUCKET/PREFIX" */
	const char *endpoint;	/* "http://127.0.0.1:9000", "https://s3.eu-west-1.amazonaws.com" */
	/* NULL: from the environment (see above) */
	const char *access_key, *secret_key, *session_token, *region;
	uint64_t part_size;	/* multipart from this size on; 0: S3_PART_DEFAULT */
	long connect_timeout_s;	/* 0: 10 */
	long stall_timeout_s;	/* a transfer under 1 KiB/s for this long fails; 0: 30 */
	unsigned list_page;	/* keys asked for per list request; 0: 1000 (the most) */
} s3_config;

/* Checks the configuration (URL, endpoint, credentials); contacts nothing.
 * NULL with the reason in err. */
s3_client *s3_open(const s3_config *cfg, char *err, size_t errlen);
void s3_close(s3_client *c);

/* Keys are relative to the client's prefix: 1..S3_MAX_KEY bytes of
 * printable characters, '/'-separated, no empty, "." or ".." segment. */
int s3_key_valid(const s3_client *c, const char *key);

/* Uploads a file (multipart when it is part_size or more). `sha256_hex`
 * (NULL = unknown) is the file's SHA-256, sent for the store to check a
 * single-request upload against. enum s3_result. */
int s3_put_file(s3_client *c, const char *key, const char *path, const char *sha256_hex,
		char *err, size_t errlen);

/* Where s3_get puts the bytes: 0 = go on, nonzero stops the transfer. */
typedef int (*s3_sink)(void *ctx, const void *data, size_t len);
/* Streams an object to `sink`; more than `max` bytes is an error. OUT:
 * *size (may be NULL), bytes handed to the sink. S3_NOT_FOUND: no key. */
int s3_get(s3_client *c, const char *key, uint64_t max, s3_sink sink, void *ctx,
	   uint64_t *size, char *err, size_t errlen);
/* The same into a new file `path` (created, never overwritten; removed
 * again on failure). */
int s3_get_file(s3_client *c, const char *key, const char *path, uint64_t max, uint64_t *size,
		char *err, size_t errlen);
/* S3_OK and *size when the key exists, S3_NOT_FOUND when not. */
int s3_head(s3_client *c, const char *key, uint64_t *size, char *err, size_t errlen);
/* Removes a key; a key that is not there is no error (S3 answers 204). */
int s3_delete(s3_client *c, const char *key, char *err, size_t errlen);

/* One listed key (relative to the client's prefix). Nonzero stops. */
typedef int (*s3_list_cb)(void *ctx, const char *key, uint64_t size);
/* Every key that starts with `key_prefix` ("" = all), in the store's order
 * (bytewise), page by page (ListObjectsV2). */
int s3_list(s3_client *c, const char *key_prefix, s3_list_cb cb, void *ctx, char *err,
	    size_t errlen);

/* A multipart upload step by step (s3_put_file does all of it). Parts are
 * numbered in call order from 1; every part but the last must be at least
 * S3_PART_MIN bytes. complete and abort free m, whatever they return. */
typedef struct s3_multipart s3_multipart;
s3_multipart *s3_mpu_begin(s3_client *c, const char *key, char *err, size_t errlen);
const char *s3_mpu_id(const s3_multipart *m);
int s3_mpu_part(s3_multipart *m, int fd, uint64_t offset, uint64_t len, char *err,
		size_t errlen);
int s3_mpu_complete(s3_multipart *m, char *err, size_t errlen);
int s3_mpu_abort(s3_multipart *m, char *err, size_t errlen);

#endif
