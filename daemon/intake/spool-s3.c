/*
 * spool-s3.c - the spool as a bucket: s3://BUCKET/PREFIX holds
 * PREFIX/<sha256>.<kind> and PREFIX/debuginfo/..., each object PUT whole
 * from a finished file of this node (S3 has no half-written objects, so no
 * temporary objects exist). This node's own directory holds the
 * temporaries (tmp/), originals fetched for a parse (originals/, removed
 * after it) and the debuginfo it fetched (debuginfo/, kept).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "intake/spool-int.h"
#include "log.h"

#define DBG_PREFIX "debuginfo/"

static int s3_spool_open(spool *s, const char *where, const char *s3_endpoint,
			 const char *local_dir, char *err, size_t errlen)
{
	s3_config cfg = { .url = where, .endpoint = s3_endpoint };
	char orig[PATH_MAX];

	if (!s3_endpoint || !*s3_endpoint) {
		snprintf(err, errlen, "%s: an S3 spool needs --s3-endpoint URL", where);
		return -1;
	}
	if (!local_dir || !*local_dir) {
		snprintf(err, errlen, "%s: an S3 spool needs a local directory", where);
		return -1;
	}
	if (snprintf(s->base, sizeof(s->base), "%s", local_dir) >= (int)sizeof(s->base) ||
	    snprintf(s->tmp, sizeof(s->tmp), "%s/tmp", local_dir) >= (int)sizeof(s->tmp) ||
	    snprintf(s->dbg, sizeof(s->dbg), "%s/debuginfo", local_dir) >= (int)sizeof(s->dbg) ||
	    snprintf(orig, sizeof(orig), "%s/originals", local_dir) >= (int)sizeof(orig)) {
		snprintf(err, errlen, "%.200s: name too long", local_dir);
		return -1;
	}
	if (sp_mkdir_p(s->tmp) < 0 || sp_mkdir_p(s->dbg) < 0 || sp_mkdir_p(orig) < 0) {
		snprintf(err, errlen, "%.200s: %s", local_dir, strerror(errno));
		return -1;
	}
	if (!(s->s3 = s3_open(&cfg, err, errlen)))
		return -1;
	/* this node's own directory: whatever a dead run left goes */
	sp_sweep_tmp(s, 1);
	sp_remove_tree(orig);
	if (sp_mkdir_p(orig) < 0) {
		snprintf(err, errlen, "%.200s: %s", orig, strerror(errno));
		s3_close(s->s3);
		return -1;
	}
	return 0;
}

static void s3_spool_close(spool *s)
{
	s3_close(s->s3);
}

static int s3_spool_path(const spool *s, const char *ref, char *out, size_t outlen)
{
	int n;

	if (!strncmp(ref, DBG_PREFIX, sizeof(DBG_PREFIX) - 1))
		n = snprintf(out, outlen, "%s/%s", s->base, ref);
	else
		n = snprintf(out, outlen, "%s/originals/%s", s->base, ref);
	return n >= (int)outlen ? -1 : 0;
}

static int s3_spool_store(spool *s, const char *tmp, const char *ref, const char *sha256,
			  char *err, size_t errlen)
{
	int rc = s3_put_file(s->s3, ref, tmp, sha256, err, errlen);

	unlink(tmp);
	return rc == S3_OK ? SP_OK : SP_ERR_IO;
}

static int s3_spool_store_copy(spool *s, const char *path, const char *ref, char *err,
			       size_t errlen)
{
	return s3_put_file(s->s3, ref, path, NULL, err, errlen) == S3_OK ? 0 : -1;
}

/* GET into a temporary of this node, then renamed: a concurrent fetch of
 * the same object on this node finds a whole file or none. */
static int s3_spool_fetch(spool *s, const char *ref, const char *path, uint64_t max,
			  char *err, size_t errlen)
{
	char tmp[PATH_MAX], dir[PATH_MAX], *slash;
	int fd, rc;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/'))) {
		*slash = 0;
		if (sp_mkdir_p(dir) < 0) {
			snprintf(err, errlen, "%.200s: %s", dir, strerror(errno));
			return -1;
		}
	}
	fd = sp_tmp_file(s, "fetch", tmp, sizeof(tmp));
	if (fd < 0) {
		snprintf(err, errlen, "%.200s: %s", s->tmp, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(tmp);	/* s3_get_file creates it and never overwrites */
	rc = s3_get_file(s->s3, ref, tmp, max, NULL, err, errlen);
	if (rc != S3_OK)
		return rc == S3_NOT_FOUND ? 1 : -1;
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "%.200s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void s3_spool_remove(spool *s, const char *ref)
{
	char err[512], path[PATH_MAX];

	if (s3_delete(s->s3, ref, err, sizeof(err)) != S3_OK)
		log_warn("msg=\"spool: cannot delete\" ref=\"%s\" error=\"%s\"", ref, err);
	if (s3_spool_path(s, ref, path, sizeof(path)) == 0)
		unlink(path);
}

const sp_backend sp_s3_backend = {
	.name = "s3",
	.open = s3_spool_open,
	.close = s3_spool_close,
	.path = s3_spool_path,
	.store = s3_spool_store,
	.store_copy = s3_spool_store_copy,
	.fetch = s3_spool_fetch,
	.remove = s3_spool_remove,
	.fetched_copies = 1,
};
