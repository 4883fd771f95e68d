/*
 * spool-dir.c - the spool as a directory: DIR/<sha256>.<kind>, DIR/debuginfo/,
 * DIR/tmp/. Several nodes may share it (NFS, CephFS): names are content
 * addresses, files appear by rename (atomic: a reader sees all or
 * nothing), temporaries carry their node and a node sweeps only its own
 * dead ones (and anybody's a day old).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "intake/spool-int.h"

static int dir_open(spool *s, const char *where, const char *s3_endpoint, const char *local_dir,
		    char *err, size_t errlen)
{
	(void)s3_endpoint;
	(void)local_dir;
	if (snprintf(s->base, sizeof(s->base), "%s", where) >= (int)sizeof(s->base) ||
	    snprintf(s->tmp, sizeof(s->tmp), "%s/tmp", where) >= (int)sizeof(s->tmp) ||
	    snprintf(s->dbg, sizeof(s->dbg), "%s/debuginfo", where) >= (int)sizeof(s->dbg)) {
		snprintf(err, errlen, "%.200s: name too long", where);
		return -1;
	}
	if (sp_mkdir_p(s->tmp) < 0 || sp_mkdir_p(s->dbg) < 0) {
		snprintf(err, errlen, "%.200s: %s", where, strerror(errno));
		return -1;
	}
	/* other nodes may be writing theirs right now */
	sp_sweep_tmp(s, 0);
	return 0;
}

static void dir_close(spool *s)
{
	(void)s;
}

static int dir_path(const spool *s, const char *ref, char *out, size_t outlen)
{
	return snprintf(out, outlen, "%s/%s", s->base, ref) >= (int)outlen ? -1 : 0;
}

static int full_or_io(int e)
{
	return e == ENOSPC || e == EDQUOT || e == EFBIG ? SP_ERR_FULL : SP_ERR_IO;
}

static int dir_store(spool *s, const char *tmp, const char *ref, const char *sha256, char *err,
		     size_t errlen)
{
	char dst[PATH_MAX];

	(void)sha256;
	if (dir_path(s, ref, dst, sizeof(dst)) < 0) {
		unlink(tmp);
		snprintf(err, errlen, "%.200s: name too long", ref);
		return SP_ERR_IO;
	}
	if (access(dst, F_OK) == 0) {
		unlink(tmp);		/* same bytes already spooled */
	} else if (rename(tmp, dst) < 0) {
		int e = errno;

		unlink(tmp);
		snprintf(err, errlen, "%.200s: %s", dst, strerror(e));
		errno = e;
		return full_or_io(e);
	}
	if (sp_fsync_dir(s->base) < 0) {
		snprintf(err, errlen, "%.200s: %s", s->base, strerror(errno));
		return SP_ERR_IO;
	}
	return SP_OK;
}

/* A copy of path as ref: through a temporary of this node, renamed into
 * place (debuginfo installed in place is there already). */
static int dir_store_copy(spool *s, const char *path, const char *ref, char *err, size_t errlen)
{
	char dst[PATH_MAX], tmp[PATH_MAX], dir[PATH_MAX], buf[65536], *slash;
	ssize_t n;
	int in = -1, out = -1, rc = -1;

	if (dir_path(s, ref, dst, sizeof(dst)) < 0) {
		snprintf(err, errlen, "%.200s: name too long", ref);
		return -1;
	}
	if (!strcmp(dst, path) || access(dst, F_OK) == 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s", dst);
	if ((slash = strrchr(dir, '/')))
		*slash = 0;
	if (sp_mkdir_p(dir) < 0 || (in = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    (out = sp_tmp_file(s, "copy", tmp, sizeof(tmp))) < 0) {
		snprintf(err, errlen, "%.200s: %s", path, strerror(errno));
		goto out;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	if (n != 0 || fsync(out) < 0 || rename(tmp, dst) < 0) {
		snprintf(err, errlen, "%.200s: %s", dst, n < 0 ? strerror(errno) : "cannot copy");
		unlink(tmp);
		goto out;
	}
	rc = sp_fsync_dir(dir) < 0 ? -1 : 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static int dir_fetch(spool *s, const char *ref, const char *path, uint64_t max, char *err,
		     size_t errlen)
{
	struct stat st;

	(void)s;
	(void)ref;
	(void)max;
	(void)err;
	(void)errlen;
	return stat(path, &st) == 0 ? 0 : 1;
}

static void dir_remove(spool *s, const char *ref)
{
	char path[PATH_MAX];

	if (dir_path(s, ref, path, sizeof(path)) == 0)
		unlink(path);
}

const sp_backend sp_dir_backend = {
	.name = "directory",
	.open = dir_open,
	.close = dir_close,
	.path = dir_path,
	.store = dir_store,
	.store_copy = dir_store_copy,
	.fetch = dir_fetch,
	.remove = dir_remove,
	.fetched_copies = 0,
};
