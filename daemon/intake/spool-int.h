/*
 * spool-int.h - the spool's backends (internal to intake/): spool.c holds
 * what every spool does (the upload stream, temporaries, unpacking a tar
 * for a parse) and calls one of these tables, chosen once by spool_open:
 * spool-dir.c (a directory, maybe shared) or spool-s3.c (a bucket).
 */
#ifndef PERFHUB_INTAKE_SPOOL_INT_H
#define PERFHUB_INTAKE_SPOOL_INT_H

#include <limits.h>

#include "intake/s3.h"
#include "intake/spool.h"

typedef struct sp_backend {
	const char *name;
	/* Sets up s->base, s->tmp, s->dbg (and a bucket's client) for
	 * `where`; the directories exist after it. 0 or -1 with err. */
	int (*open)(spool *s, const char *where, const char *s3_endpoint, const char *local_dir,
		    char *err, size_t errlen);
	void (*close)(spool *s);
	/* Where ref is on this node's disk. 0, or -1 when it does not fit. */
	int (*path)(const spool *s, const char *ref, char *out, size_t outlen);
	/* A finished temporary file of this node becomes `ref` (sha256: its
	 * hash or NULL); the temporary is gone afterwards, whatever happens.
	 * enum sp_result, with err. */
	int (*store)(spool *s, const char *tmp, const char *ref, const char *sha256, char *err,
		     size_t errlen);
	/* A copy of this node's file `path` stored as `ref` (path stays). */
	int (*store_copy)(spool *s, const char *path, const char *ref, char *err, size_t errlen);
	/* ref onto this node's disk at `path` (at most max bytes): 0, 1 = no
	 * such object, -1 with err. */
	int (*fetch)(spool *s, const char *ref, const char *path, uint64_t max, char *err,
		     size_t errlen);
	/* Removes ref from the spool (and this node's copy). */
	void (*remove)(spool *s, const char *ref);
	/* 1 when a parse's fetched copy is removed after the parse */
	int fetched_copies;
} sp_backend;

extern const sp_backend sp_dir_backend;	/* spool-dir.c */
extern const sp_backend sp_s3_backend;	/* spool-s3.c */

struct spool {
	const sp_backend *ops;
	char base[PATH_MAX];	/* the directory, or the node's own for a bucket */
	char tmp[PATH_MAX];	/* temporaries: base/tmp */
	char dbg[PATH_MAX];	/* debuginfo by build-id: base/debuginfo */
	char host[64];		/* in temporary names */
	long pid;
	s3_client *s3;		/* a bucket's client */
};

/* mkdir -p. 0 or -1 (errno). */
int sp_mkdir_p(const char *path);
/* fsyncs a directory. 0 or -1. */
int sp_fsync_dir(const char *dir);
/* Removes the temporaries in s->tmp that are nobody's: this host's whose
 * process is gone, and anybody's older than SP_TMP_MAX_AGE_S (all of them
 * when `all`, for a directory only this node uses). */
void sp_sweep_tmp(const spool *s, int all);

#endif
