/*
 * spool.c - what every spool does: streamed, hashed, fsynced uploads into
 * a temporary file of this node, stored through the backend (spool-int.h);
 * temporaries named by their node; a tar unpacked for a parse.
 */
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "intake/sha256.h"
#include "intake/spool-int.h"
#include "dirpack.h"
#include "log.h"

#define SP_OUT_CHUNK (256 * 1024)
#define SP_TAR_MAGIC_AT 257	/* "ustar" in a tar's first header */
#define SP_HEAD_MAX 512

struct sp_upload {
	spool *s;
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

int sp_mkdir_p(const char *path)
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

int sp_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* ---- the spool ---------------------------------------------------------------------- */

spool *spool_open(const char *where, const char *s3_endpoint, const char *local_dir,
		  char *err, size_t errlen)
{
	spool *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->ops = !strncmp(where, "s3://", 5) ? &sp_s3_backend : &sp_dir_backend;
	s->pid = (long)getpid();
	if (gethostname(s->host, sizeof(s->host)) < 0 || !s->host[0])
		snprintf(s->host, sizeof(s->host), "localhost");
	s->host[sizeof(s->host) - 1] = 0;
	/* '@' separates the parts of a temporary's name */
	for (char *h = s->host; *h; h++)
		if (*h == '@' || *h == '/')
			*h = '_';
	if (s->ops->open(s, where, s3_endpoint, local_dir, err, errlen) < 0) {
		free(s);
		return NULL;
	}
	return s;
}

void spool_close(spool *s)
{
	if (!s)
		return;
	s->ops->close(s);
	free(s);
}

const char *spool_kind(const spool *s)
{
	return s->ops->name;
}

int spool_remote(const spool *s)
{
	return s->ops->fetched_copies;
}

const char *spool_debuginfo_dir(const spool *s)
{
	return s->dbg;
}

int sp_path(const spool *s, const char *ref, char *out, size_t outlen)
{
	if (ref[0] == '/') {	/* an older store's absolute path */
		if (snprintf(out, outlen, "%s", ref) >= (int)outlen)
			return -1;
		return 0;
	}
	return s->ops->path(s, ref, out, outlen);
}

int sp_fetch(spool *s, const char *ref, uint64_t max, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;

	if (sp_path(s, ref, path, sizeof(path)) < 0) {
		snprintf(err, errlen, "%.200s: name too long", ref);
		return -1;
	}
	if (stat(path, &st) == 0)
		return 0;
	if (ref[0] == '/' || !s->ops->fetched_copies)
		return 1;
	return s->ops->fetch(s, ref, path, max, err, errlen);
}

int sp_store_file(spool *s, const char *path, const char *ref, char *err, size_t errlen)
{
	return s->ops->store_copy(s, path, ref, err, errlen);
}

void sp_remove(spool *s, const char *ref)
{
	char path[PATH_MAX];
	size_t n = strlen(ref);

	if (ref[0] == '/') {
		unlink(ref);
	} else {
		s->ops->remove(s, ref);
	}
	/* what was unpacked from a tar, here */
	if (n > 4 && !strcmp(ref + n - 4, ".tar") && sp_path(s, ref, path, sizeof(path)) == 0) {
		path[strlen(path) - 4] = 0;
		strncat(path, ".d", sizeof(path) - strlen(path) - 1);
		sp_remove_tree(path);
	}
}

/* ---- temporaries ---------------------------------------------------------------------- */

int sp_tmp_file(spool *s, const char *what, char *path, size_t pathlen)
{
	int fd;

	if (snprintf(path, pathlen, "%s/%s@%s@%ld@XXXXXX", s->tmp, what, s->host, s->pid) >=
	    (int)pathlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		path[0] = 0;
	return fd;
}

/* "<what>@<host>@<pid>@<random>": 1 when it is this host's and its process
 * is gone. */
static int dead_here(const spool *s, const char *name)
{
	const char *a = strchr(name, '@'), *b;
	char *end;
	long pid;

	if (!a || !(b = strchr(a + 1, '@')))
		return 0;
	if ((size_t)(b - a - 1) != strlen(s->host) || strncmp(a + 1, s->host, (size_t)(b - a - 1)))
		return 0;
	pid = strtol(b + 1, &end, 10);
	if (*end != '@' || pid <= 0)
		return 0;
	return pid != s->pid && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

void sp_sweep_tmp(const spool *s, int all)
{
	DIR *d = opendir(s->tmp);
	struct dirent *e;
	char path[PATH_MAX];
	time_t now = time(NULL);

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", s->tmp, e->d_name) >= (int)sizeof(path))
			continue;
		if (lstat(path, &st) < 0)
			continue;
		if (all || dead_here(s, e->d_name) || now - st.st_mtime > SP_TMP_MAX_AGE_S) {
			log_info("msg=\"spool: temporary removed\" name=\"%s\"", e->d_name);
			sp_remove_tree(path);
		}
	}
	closedir(d);
}

/* ---- uploads ------------------------------------------------------------------------ */

sp_upload *sp_begin(spool *s, int encoding, uint64_t max)
{
	sp_upload *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->fd = -1;
	u->s = s;
	u->encoding = encoding;
	u->max = max;
	if (sha256_init(&u->sha) < 0) {
		errno = ENOMEM;
		goto fail;
	}
	u->fd = sp_tmp_file(s, "upload", u->tmp, sizeof(u->tmp));
	if (u->fd < 0)
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

/* The stream ends: complete, fsynced, the temporary closed. */
static int end_stream(sp_upload *u, char sha256[65], uint64_t *size)
{
	if (u->encoding == SP_ZSTD && (!u->zstarted || u->zlast != 0))
		return SP_ERR_ENCODING;		/* truncated zstd stream */
	if (u->encoding == SP_GZIP && (!u->zstarted || !u->gz_done))
		return SP_ERR_ENCODING;		/* truncated gzip stream */
	if (magic_len(u->expect) && !u->head_ok)
		return SP_ERR_MAGIC;		/* empty, or shorter than its start */
	if (fsync(u->fd) < 0)
		return full_or_io();
	close(u->fd);
	u->fd = -1;
	sha256_final_hex(&u->sha, sha256);
	if (!sha256[0]) {
		errno = ENOMEM;	/* the hash library failed */
		return SP_ERR_IO;
	}
	*size = u->size;
	return SP_OK;
}

int sp_finish(sp_upload *u, const char *ext, char sha256[65], uint64_t *size, char **ref)
{
	char name[SP_MAX_REF], err[512];
	int rc;

	*ref = NULL;
	rc = end_stream(u, sha256, size);
	if (rc != SP_OK)
		goto out;
	snprintf(name, sizeof(name), "%s.%s", sha256, ext);
	rc = u->s->ops->store(u->s, u->tmp, name, sha256, err, sizeof(err));
	u->tmp[0] = 0;		/* the backend took it */
	if (rc != SP_OK) {
		log_warn("msg=\"spool\" ref=%s error=\"%s\"", name, err);
		goto out;
	}
	*ref = strdup(name);
	rc = *ref ? SP_OK : SP_ERR_IO;
out:
	sp_abort(u);
	return rc;
}

int sp_finish_local(sp_upload *u, char sha256[65], uint64_t *size, char **path)
{
	int rc = end_stream(u, sha256, size);

	*path = NULL;
	if (rc == SP_OK) {
		*path = strdup(u->tmp);
		rc = *path ? SP_OK : SP_ERR_IO;
	}
	if (rc == SP_OK)
		u->tmp[0] = 0;	/* the caller's now */
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
	sha256_free(&u->sha);
	free(u);
	errno = saved;
}

static int tar_to_upload(void *ctx, const void *data, size_t len)
{
	return sp_write(ctx, data, len);
}

int sp_add_path(spool *s, const char *src, uint64_t max, char sha256[65], uint64_t *size,
		char **path, const char **kind)
{
	struct stat st;
	sp_upload *u;
	int rc;

	*path = NULL;
	if (stat(src, &st) < 0)
		return SP_ERR_IO;
	u = sp_begin(s, SP_IDENTITY, max);
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

/* ---- a parse's local copy ------------------------------------------------------------ */

struct sp_local {
	spool *s;
	char file[PATH_MAX];	/* the original here */
	char dir[PATH_MAX];	/* a tar's unpacked directory, or "" */
	int fetched;		/* fetched for this parse: removed after it */
};

/* FILE.tar -> FILE.d, unpacked once: into a temporary directory of this
 * node first, then renamed, so nobody sees half of it; when another node
 * (or an earlier attempt) got there first, its directory is used. 0, -1
 * (this node's trouble) or -2 (the tar itself cannot be unpacked). */
static int unpack(sp_local *l, uint64_t max, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	struct stat st;
	size_t n = strlen(l->file);

	if (n > 4 && !strcmp(l->file + n - 4, ".tar"))
		n -= 4;
	snprintf(l->dir, sizeof(l->dir), "%.*s.d", (int)n, l->file);
	if (stat(l->dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (snprintf(tmp, sizeof(tmp), "%s/unpack@%s@%ld@XXXXXX", l->s->tmp, l->s->host,
		     l->s->pid) >= (int)sizeof(tmp) || !mkdtemp(tmp)) {
		snprintf(err, errlen, "%.200s: %s", l->s->tmp, strerror(errno));
		return -1;
	}
	if (dirpack_extract(l->file, tmp, max, err, errlen) < 0) {
		sp_remove_tree(tmp);
		return -2;	/* the original itself */
	}
	if (rename(tmp, l->dir) < 0) {
		int e = errno;

		sp_remove_tree(tmp);
		if ((e == EEXIST || e == ENOTEMPTY) && stat(l->dir, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		snprintf(err, errlen, "%.200s: %s", l->dir, strerror(e));
		return -1;
	}
	return 0;
}

sp_local *sp_local_open(spool *s, const char *ref, const char *kind, uint64_t max,
			int *unreadable, char *err, size_t errlen)
{
	sp_local *l = calloc(1, sizeof(*l));
	struct stat st;
	int rc;

	if (unreadable)
		*unreadable = 0;
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->s = s;
	if (sp_path(s, ref, l->file, sizeof(l->file)) < 0) {
		snprintf(err, errlen, "%.200s: name too long", ref);
		goto fail;
	}
	l->fetched = s->ops->fetched_copies && ref[0] != '/' && stat(l->file, &st) < 0;
	rc = sp_fetch(s, ref, max, err, errlen);
	if (rc == 1)
		snprintf(err, errlen, "the spooled original %.200s is gone", ref);
	if (rc != 0)
		goto fail;
	if (!strcmp(kind, "tar") && (rc = unpack(l, max, err, errlen)) < 0) {
		if (unreadable)
			*unreadable = rc == -2;
		goto fail;
	}
	return l;
fail:
	sp_local_close(l);
	return NULL;
}

const char *sp_local_path(const sp_local *l)
{
	return l->dir[0] ? l->dir : l->file;
}

void sp_local_close(sp_local *l)
{
	if (!l)
		return;
	if (l->fetched) {
		unlink(l->file);
		if (l->dir[0])
			sp_remove_tree(l->dir);
	}
	free(l);
}

/* ---- messages and sizes -------------------------------------------------------------- */

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

void sp_scrub_paths(char *msg, size_t cap, const spool *s)
{
	char real[PATH_MAX];

	if (!msg || !cap || !s)
		return;
	/* s->base: the directory, or a bucket's local directory (its
	 * temporaries and fetched copies are there) */
	if (realpath(s->base, real))
		scrub_one(msg, cap, real);
	scrub_one(msg, cap, s->base);
}

uint64_t sp_spooled_usage(const spool *s, const char *ref)
{
	char path[PATH_MAX];
	size_t n = strlen(ref);
	uint64_t total;

	/* a bucket's object is not on this disk: only a copy fetched here
	 * (and unpacked) counts, which sp_path names as for a directory */
	if (sp_path(s, ref, path, sizeof(path)) < 0)
		return 0;
	total = sp_disk_usage(path);
	if (n > 4 && !strcmp(ref + n - 4, ".tar")) {
		path[strlen(path) - 4] = 0;
		strncat(path, ".d", sizeof(path) - strlen(path) - 1);
		total += sp_disk_usage(path);
	}
	return total;
}

uint64_t sp_usage(const spool *s)
{
	return sp_disk_usage(s->base);
}
