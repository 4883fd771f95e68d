/* upload.c - upload bodies into the spool; spooled files into the job queue. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "intake/spool.h"
#include "intake/upload.h"
#include "log.h"

struct intake_upload {
	sp_upload *up;
	int failed;		/* sp_write's result once it went wrong */
	int is_tar;
	int encoding;		/* enum sp_encoding, for messages */
	intake_rate rate;	/* body bytes received, before decoding */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

intake_upload *intake_upload_begin(spool *sp, int encoding, uint64_t max, int is_tar)
{
	intake_upload *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->up = sp_begin(sp, encoding, max);
	if (!u->up) {
		free(u);
		return NULL;
	}
	sp_expect(u->up, is_tar ? SP_EXPECT_TAR : SP_EXPECT_PERF);
	u->is_tar = is_tar;
	u->encoding = encoding;
	intake_rate_start(&u->rate);
	return u;
}

void intake_rate_start(intake_rate *r)
{
	r->started = now_s();
	r->bytes = 0;
}

int intake_rate_add(intake_rate *r, size_t n, double timeout_s)
{
	double t = now_s() - r->started;

	r->bytes += n;
	if (timeout_s > 0 && t > timeout_s && r->bytes < t * INTAKE_MIN_UPLOAD_RATE) {
		log_warn("msg=\"upload too slow\" bytes=%llu seconds=%.0f",
			 (unsigned long long)r->bytes, t);
		return -1;
	}
	return 0;
}

int intake_upload_write(intake_upload *u, const void *data, size_t len, double timeout_s)
{
	if (intake_rate_add(&u->rate, len, timeout_s) < 0)
		return -1;
	if (!u->failed && (u->failed = sp_write(u->up, data, len)) != SP_OK) {
		/* the partial file goes now, not when the connection ends */
		sp_abort(u->up);
		u->up = NULL;
	}
	return 0;
}

int intake_upload_failed(const intake_upload *u)
{
	return u->failed;
}

int intake_upload_encoding(const intake_upload *u)
{
	return u->encoding;
}

int intake_upload_finish(intake_upload *u, char sha256[65], uint64_t *size, char **path,
			 const char **kind)
{
	int rc = u->failed;

	*kind = u->is_tar ? "tar" : "file";
	if (rc == SP_OK) {
		rc = sp_finish(u->up, *kind, sha256, size, path);
		u->up = NULL;
	}
	intake_upload_abort(u);
	return rc;
}

void intake_upload_abort(intake_upload *u)
{
	if (!u)
		return;
	sp_abort(u->up);
	free(u);
}

int intake_queue(st_store *st, jobs *j, unsigned queue_size, const char *sha256,
		 const char *path, const char *kind, uint64_t size, const char *name,
		 size_t nr_tags, const char *const *keys, const char *const *values, int local,
		 int64_t *id, int *existed)
{
	st_new_profile p = { sha256, name, kind, path, size, nr_tags, keys, values, local };
	st_counts c;

	if (st_counts_get(st, &c) < 0)
		return -1;
	if (c.queued >= (int64_t)queue_size) {
		/* a duplicate is still answered (and relabeled); only new work
		 * is refused */
		int rc = st_profile_by_sha(st, sha256, id);
		if (rc != 0)
			return rc < 0 ? -1 : -2;
	}
	if (st_profile_add(st, &p, id, existed) < 0)
		return -1;
	if (!*existed && j)
		jobs_notify(j);
	return 0;
}
