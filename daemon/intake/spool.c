/* spool.c - streamed, hashed, fsynced uploads. */
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "intake/sha256.h"
#include "intake/spool.h"
#include "dirpack.h"

#define SP_OUT_CHUNK (256 * 1024)
#define SP_TAR_MAGIC_AT 257	/* "ustar" in a tar's first header */
#define SP_HEAD_MAX 512

struct sp_upload {
	char *dir;
	char tmp[PATH_MAX];
	int fd;
	int encoding;
	uint64_t max, size;
	uint64_t wire;		/* encoded bytes in (zstd, gzip) */
	int expect;		/* enum sp_expect */
	unsigned char head[SP_HEAD_MAX];	/* the first decoded bytes */
	size_t head_len;
	int head_ok;		/* the magic was checked and is right */
	sha256_ctx sha;
	ZSTD_DStream *zd;
	size_t zlast;		/* last ZSTD_decompressStream hint: 0 = frame done */
	int zstarted;
	z_stream gz;
	int gz_open;		/* inflateInit2 done: inflateEnd owed */
	int gz_done;		/* the last gzip member ended (Z_STREAM_END) */
	void *out;
};

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(path);

	if (n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != 0)
			continue;
		buf[i] = 0;
		if (mkdir(buf, 0750) < 0 && errno != EEXIST)
			return -1;
		buf[i] = path[i];
	}
	return 0;
}

/* Partial uploads of a daemon that died (kill -9, power loss) stay in
 * SPOOL/tmp; at start nothing is in flight, so they all go. */
static void sweep_tmp(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "upload-", 7))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
}

int sp_init(const char *spool_dir)
{
	char tmp[PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s/tmp", spool_dir) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir_p(tmp) < 0)
		return -1;
	sweep_tmp(tmp);
	return 0;
}

sp_upload *sp_begin(const char *spool_dir, int encoding, uint64_t max)
{
	sp_upload *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->fd = -1;
	u->dir = strdup(spool_dir);
	u->encoding = encoding;
	u->max = max;
	sha256_init(&u->sha);
	snprintf(u->tmp, sizeof(u->tmp), "%s/tmp/upload-XXXXXX", spool_dir);
	u->fd = mkostemp(u->tmp, O_CLOEXEC);
	if (u->fd < 0 || !u->dir)
		goto fail;
	if (encoding == SP_ZSTD) {
		u->zd = ZSTD_createDStream();
		u->out = malloc(SP_OUT_CHUNK);
		if (!u->zd || !u->out)
			goto fail;
		ZSTD_initDStream(u->zd);
		/* a frame may not ask for a window larger than 128 MiB */
		ZSTD_DCtx_setParameter(u->zd, ZSTD_d_windowLogMax, 27);
	} else if (encoding == SP_GZIP) {
		u->out = malloc(SP_OUT_CHUNK);
		if (!u->out)
			goto fail;
		/* 16 + MAX_WBITS: a gzip wrapper, nothing else */
		if (inflateInit2(&u->gz, 16 + MAX_WBITS) != Z_OK) {
			errno = ENOMEM;
			goto fail;
		}
		u->gz_open = 1;
	}
	return u;
fail:
	sp_abort(u);
	return NULL;
}

/* What a failed write or sync means for the client: the filesystem is
 * full (worth retrying later, 507) or something else broke. */
static int full_or_io(void)
{
	return errno == ENOSPC || errno == EDQUOT || errno == EFBIG ? SP_ERR_FULL : SP_ERR_IO;
}

void sp_expect(sp_upload *u, int what)
{
	u->expect = what;
}

size_t sp_head(const sp_upload *u, unsigned char out[8])
{
	size_t n = u->head_len < 8 ? u->head_len : 8;

	memcpy(out, u->head, n);
	return n;
}

int sp_ratio_ok(uint64_t decoded, uint64_t encoded)
{
	return decoded <= SP_RATIO_FLOOR || decoded / SP_MAX_RATIO <= encoded;
}

/* How many first bytes the expected magic needs. */
static size_t magic_len(int expect)
{
	return expect == SP_EXPECT_PERF ? 8 : expect == SP_EXPECT_TAR ? SP_TAR_MAGIC_AT + 5 : 0;
}

static int magic_ok(const sp_upload *u)
{
	static const char *const perf[] = { "PERFILE2", "2ELIFREP", "PERFFILE" };
	size_t i;

	if (u->head_len < magic_len(u->expect))
		return 0;
	if (u->expect == SP_EXPECT_TAR)
		return !memcmp(u->head + SP_TAR_MAGIC_AT, "ustar", 5);
	for (i = 0; i < sizeof(perf) / sizeof(*perf); i++)
		if (!memcmp(u->head, perf[i], 8))
			return 1;
	return 0;
}

/* Keeps the first bytes and checks the magic once there are enough. */
static int probe(sp_upload *u, const void *data, size_t len)
{
	size_t want = magic_len(u->expect), n;

	if (u->head_ok || !want)
		return SP_OK;
	n = want - u->head_len < len ? want - u->head_len : len;
	memcpy(u->head + u->head_len, data, n);
	u->head_len += n;
	if (u->head_len < want)
		return SP_OK;
	if (!magic_ok(u))
		return SP_ERR_MAGIC;
	u->head_ok = 1;
	return SP_OK;
}

static int put(sp_upload *u, const void *data, size_t len)
{
	const char *p = data;
	int rc;

	if (len > u->max - u->size)
		return SP_ERR_TOO_LARGE;
	if (u->encoding != SP_IDENTITY && !sp_ratio_ok(u->size + len, u->wire))
		return SP_ERR_RATIO;
	if ((rc = probe(u, data, len)) != SP_OK)
		return rc;
	sha256_update(&u->sha, data, len);
	u->size += len;
	while (len) {
		ssize_t n = write(u->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return full_or_io();
		}
		p += n;
		len -= (size_t)n;
	}
	return SP_OK;
}

/* gzip: inflate as the bytes come; the decoded size is capped by put().
 * Concatenated members (what `cat a.gz b.gz` gives) decode as one stream,
 * as gzip -d does. */
static int gz_write(sp_upload *u, const void *data, size_t len)
{
	u->gz.next_in = (Bytef *)(uintptr_t)data;
	u->gz.avail_in = 0;
	for (;;) {
		int zr, rc;

		if (!u->gz.avail_in && len) {
			/* avail_in is a uInt: feed at most 1 GiB at a time */
			uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
			u->gz.avail_in = n;
			len -= n;
		}
		if (u->gz_done) {
			if (!u->gz.avail_in)
				break;
			/* another member follows the one that ended */
			if (inflateReset(&u->gz) != Z_OK)
				return SP_ERR_ENCODING;
			u->gz_done = 0;
		}
		u->gz.next_out = u->out;
		u->gz.avail_out = SP_OUT_CHUNK;
		zr = inflate(&u->gz, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
			return SP_ERR_ENCODING;
		if (SP_OUT_CHUNK - u->gz.avail_out &&
		    (rc = put(u, u->out, SP_OUT_CHUNK - u->gz.avail_out)) != SP_OK)
			return rc;
		if (zr == Z_STREAM_END) {
			u->gz_done = 1;
			continue;
		}
		/* input used up and the output not full: nothing is pending */
		if (!u->gz.avail_in && !len && u->gz.avail_out)
			break;
	}
	return SP_OK;
}

int sp_write(sp_upload *u, const void *data, size_t len)
{
	ZSTD_inBuffer in = { data, len, 0 };

	u->wire += len;
	if (u->encoding == SP_GZIP) {
		if (len)
			u->zstarted = 1;
		return gz_write(u, data, len);
	}
	if (u->encoding != SP_ZSTD)
		return put(u, data, len);
	if (len)
		u->zstarted = 1;
	/* until the input is used up and the decoder has nothing more to give */
	for (;;) {
		ZSTD_outBuffer out = { u->out, SP_OUT_CHUNK, 0 };
		size_t r = ZSTD_decompressStream(u->zd, &out, &in);
		int rc;

		if (ZSTD_isError(r))
			return SP_ERR_ENCODING;
		u->zlast = r;
		if (out.pos && (rc = put(u, u->out, out.pos)) != SP_OK)
			return rc;
		/* the frame ended with the input: asking again would start the
		 * next frame and say it is missing (a body decoding to an exact
		 * multiple of the output buffer was refused as truncated) */
		if (r == 0 && in.pos == in.size)
			break;
		if (in.pos == in.size && out.pos < out.size)
			break;
	}
	return SP_OK;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int sp_finish(sp_upload *u, const char *ext, char sha256[65], uint64_t *size, char **path)
{
	char dst[PATH_MAX];
	int rc = SP_ERR_IO;

	*path = NULL;
	if (u->encoding == SP_ZSTD && (!u->zstarted || u->zlast != 0)) {
		rc = SP_ERR_ENCODING;	/* truncated zstd stream */
		goto out;
	}
	if (u->encoding == SP_GZIP && (!u->zstarted || !u->gz_done)) {
		rc = SP_ERR_ENCODING;	/* truncated gzip stream */
		goto out;
	}
	if (magic_len(u->expect) && !u->head_ok) {
		rc = SP_ERR_MAGIC;	/* empty, or shorter than its start */
		goto out;
	}
	if (fsync(u->fd) < 0) {
		rc = full_or_io();
		goto out;
	}
	close(u->fd);
	u->fd = -1;
	sha256_final_hex(&u->sha, sha256);
	*size = u->size;
	snprintf(dst, sizeof(dst), "%s/%s.%s", u->dir, sha256, ext);
	if (access(dst, F_OK) == 0) {
		unlink(u->tmp);		/* same bytes already spooled */
	} else if (rename(u->tmp, dst) < 0) {
		rc = full_or_io();
		goto out;
	}
	u->tmp[0] = 0;
	if (fsync_dir(u->dir) < 0)
		goto out;
	*path = strdup(dst);
	rc = *path ? SP_OK : SP_ERR_IO;
out:
	sp_abort(u);
	return rc;
}

void sp_abort(sp_upload *u)
{
	int saved = errno;

	if (!u)
		return;
	if (u->fd >= 0)
		close(u->fd);
	if (u->tmp[0])
		unlink(u->tmp);
	ZSTD_freeDStream(u->zd);
	if (u->gz_open)
		inflateEnd(&u->gz);
	free(u->out);
	free(u->dir);
	free(u);
	errno = saved;
}

static int tar_to_upload(void *ctx, const void *data, size_t len)
{
	return sp_write(ctx, data, len);
}

int sp_add_path(const char *spool_dir, const char *src, uint64_t max, char sha256[65],
		uint64_t *size, char **path, const char **kind)
{
	struct stat st;
	sp_upload *u;
	int rc;

	*path = NULL;
	if (stat(src, &st) < 0)
		return SP_ERR_IO;
	u = sp_begin(spool_dir, SP_IDENTITY, max);
	if (!u)
		return SP_ERR_IO;
	if (S_ISDIR(st.st_mode)) {
		*kind = "tar";
		if (dirpack_write(src, tar_to_upload, u) < 0) {
			rc = u->size >= max ? SP_ERR_TOO_LARGE : SP_ERR_IO;
			sp_abort(u);
			return rc;
		}
	} else {
		char buf[SP_OUT_CHUNK / 4];
		int fd = open(src, O_RDONLY | O_CLOEXEC);
		ssize_t n;

		*kind = "file";
		if (fd < 0) {
			sp_abort(u);
			return SP_ERR_IO;
		}
		while ((n = read(fd, buf, sizeof(buf))) != 0) {
			if (n < 0) {
				if (errno == EINTR)
					continue;
				close(fd);
				sp_abort(u);
				return SP_ERR_IO;
			}
			if ((rc = sp_write(u, buf, (size_t)n)) != SP_OK) {
				close(fd);
				sp_abort(u);
				return rc;
			}
		}
		close(fd);
	}
	return sp_finish(u, *kind, sha256, size, path);
}

void sp_remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[PATH_MAX];

	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d))) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			sp_remove_tree(sub);
		else
			unlink(sub);
	}
	closedir(d);
	rmdir(path);
}

uint64_t sp_disk_usage(const char *path)
{
	struct stat st;
	uint64_t n;
	DIR *d;
	struct dirent *e;
	char sub[PATH_MAX];

	if (lstat(path, &st) < 0)
		return 0;
	n = (uint64_t)st.st_blocks * 512;
	if (!S_ISDIR(st.st_mode) || !(d = opendir(path)))
		return n;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) < (int)sizeof(sub))
			n += sp_disk_usage(sub);
	}
	closedir(d);
	return n;
}

/* SPOOL/<sha>.tar -> SPOOL/<sha>.d, where it is unpacked */
static void unpacked_dir(const char *spool_path, char *dir, size_t len)
{
	size_t n = strlen(spool_path);

	dir[0] = 0;
	if (n > 4 && !strcmp(spool_path + n - 4, ".tar"))
		snprintf(dir, len, "%.*s.d", (int)(n - 4), spool_path);
}

uint64_t sp_spooled_usage(const char *spool_path)
{
	char dir[PATH_MAX];

	unpacked_dir(spool_path, dir, sizeof(dir));
	return sp_disk_usage(spool_path) + (dir[0] ? sp_disk_usage(dir) : 0);
}

void sp_remove(const char *spool_path)
{
	char dir[PATH_MAX];

	unlink(spool_path);
	unpacked_dir(spool_path, dir, sizeof(dir));
	if (dir[0])
		sp_remove_tree(dir);
}

/* Replaces each `dir` in msg (a path prefix: followed by '/', NUL or a
 * character that cannot continue a name) with "SPOOL". */
static void scrub_one(char *msg, size_t cap, const char *dir)
{
	size_t dl = strlen(dir);
	char *p = msg;

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if (dl < 2)
		return;
	while ((p = strstr(p, dir))) {
		size_t rest = strlen(p + dl);

		if (strncmp(p, dir, dl) || (p[dl] && p[dl] != '/' && p[dl] != ':' && p[dl] != '\'' &&
					    p[dl] != ' ' && p[dl] != '"')) {
			p++;
			continue;
		}
		if ((size_t)(p - msg) + 6 > cap) {
			*p = 0;
			return;
		}
		if ((size_t)(p - msg) + 5 + rest + 1 > cap)
			rest = cap - (size_t)(p - msg) - 6;
		memmove(p + 5, p + dl, rest);
		p[5 + rest] = 0;
		memcpy(p, "SPOOL", 5);
		p += 5;
	}
}

void sp_scrub_paths(char *msg, size_t cap, const char *spool_dir)
{
	char real[PATH_MAX];

	if (!msg || !cap || !spool_dir)
		return;
	if (realpath(spool_dir, real))
		scrub_one(msg, cap, real);
	scrub_one(msg, cap, spool_dir);
}
