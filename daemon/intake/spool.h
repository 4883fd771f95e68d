/*
 * spool.h - where uploads land before they are parsed, and where they stay
 * so that a profile can be parsed again: a directory (which several nodes
 * may share: NFS, CephFS) or an S3-compatible bucket, behind one interface
 * (spool-int.h: one table of operations per backend).
 *
 * An upload is streamed to a temporary file on this node with its sha256
 * computed on the way (memory stays flat whatever the size), fsynced, then
 * stored under its name: "<sha256>.<kind>" - renamed into the directory,
 * or PUT as PREFIX/<sha256>.<kind>. That name (a "ref") is what the store
 * keeps; sp_path says where a ref is on this node's disk (an absolute
 * path, as older stores kept them, is itself). Workers parse a local copy
 * (sp_local_*): the file itself in a directory spool, a fetched one from
 * a bucket. Debuginfo lives under "debuginfo/" in the same layout.
 *
 * Temporary names carry the node ("<what>@<host>@<pid>@<random>"): a node
 * sweeps only its own dead temporaries at start, and anybody's that are a
 * day old (docs/cluster.md).
 */
#ifndef PERFHUB_DAEMON_SPOOL_H
#define PERFHUB_DAEMON_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#define SP_TMP_MAX_AGE_S 86400	/* a temporary file this old is nobody's */
#define SP_MAX_REF 512		/* bytes of a ref */

typedef struct spool spool;
typedef struct sp_upload sp_upload;

enum sp_encoding { SP_IDENTITY, SP_ZSTD, SP_GZIP };

/* What the decoded bytes must start with (sp_expect). */
enum sp_expect { SP_EXPECT_ANY, SP_EXPECT_PERF, SP_EXPECT_TAR };

/* A zstd or gzip body may decode to at most SP_MAX_RATIO times its size
 * (beyond SP_RATIO_FLOOR bytes): real perf.data files compress 5 to 60
 * times, a decompression bomb thousands of times. */
#define SP_MAX_RATIO 200
#define SP_RATIO_FLOOR ((uint64_t)1 << 20)

enum sp_result {
	SP_OK = 0,
	SP_ERR_IO = -1,		/* disk or store trouble (errno kept) */
	SP_ERR_TOO_LARGE = -2,	/* more than max bytes after decoding */
	SP_ERR_ENCODING = -3,	/* the zstd or gzip stream is corrupt or truncated */
	SP_ERR_FULL = -4,	/* no space left on the spool's filesystem */
	SP_ERR_RATIO = -5,	/* decodes to more than SP_MAX_RATIO times its size */
	SP_ERR_MAGIC = -6,	/* does not start as sp_expect() said (or is empty) */
};

/* 1 when `decoded` bytes from `encoded` ones are within SP_MAX_RATIO. */
int sp_ratio_ok(uint64_t decoded, uint64_t encoded);

/* The spool `where` names: a directory, or "s3://BUCKET[/PREFIX]" with
 * `s3_endpoint` (credentials from the environment, s3.h). `local_dir` is
 * this node's own directory for a bucket's temporaries and fetched
 * copies (unused by a directory spool, whose temporaries are in
 * DIR/tmp). Creates the directories, sweeps dead temporaries. NULL and err. */
spool *spool_open(const char *where, const char *s3_endpoint, const char *local_dir,
		  char *err, size_t errlen);
void spool_close(spool *s);
/* "directory" or "s3", for messages. */
const char *spool_kind(const spool *s);
/* 1 when stored files are not on this node's disk until fetched (s3). */
int spool_remote(const spool *s);
/* Where this node keeps debuginfo files in perf's build-id cache layout
 * (the parser reads them there): DIR/debuginfo, or local_dir/debuginfo. */
const char *spool_debuginfo_dir(const spool *s);

/* ---- storing ---- */

/* A new upload; `max` caps the decoded size. NULL on error (errno). */
sp_upload *sp_begin(spool *s, int encoding, uint64_t max);
/* The decoded bytes must start as a perf.data file (PERFILE2 either byte
 * order, PERFFILE) or a tar (ustar): checked as soon as they arrive, so a
 * wrong body stops before it is spooled whole; an empty one is refused at
 * sp_finish. */
void sp_expect(sp_upload *u, int what);
/* The first bytes (up to 8) of the decoded body, for messages. */
size_t sp_head(const sp_upload *u, unsigned char out[8]);
/* Feeds bytes as they arrive. enum sp_result. */
int sp_write(sp_upload *u, const void *data, size_t len);
/*
 * Ends the stream: checks the encoding is complete, fsyncs, and stores it
 * as "<sha256>.<ext>" (the same name stored before holds the same bytes:
 * kept). OUT: sha256 hex, decoded size, malloc'ed ref. Frees u. enum
 * sp_result.
 */
int sp_finish(sp_upload *u, const char *ext, char sha256[65], uint64_t *size, char **ref);
/* The same, but the file stays a temporary on this node for the caller to
 * move or remove (debuginfo bodies are checked before they are stored).
 * OUT: malloc'ed path of the file. */
int sp_finish_local(sp_upload *u, char sha256[65], uint64_t *size, char **path);
/* Throws the upload away. Frees u. */
void sp_abort(sp_upload *u);

/* Copies a local file or a perf.data directory (as a tar) into the spool.
 * OUT as sp_finish; *kind is "file" or "tar". enum sp_result. */
int sp_add_path(spool *s, const char *src, uint64_t max, char sha256[65], uint64_t *size,
		char **ref, const char **kind);
/* A file of this node (e.g. a debuginfo file, under its own ref) stored
 * as `ref` too: a bucket gets a copy; a directory has it already when
 * `path` is sp_path(ref). 0 or -1 with err. */
int sp_store_file(spool *s, const char *path, const char *ref, char *err, size_t errlen);

/* Removes a stored original and what was unpacked from it. */
void sp_remove(spool *s, const char *ref);

/* ---- reading ---- */

/* Where `ref` is (or goes) on this node. 0, or -1 when it does not fit. */
int sp_path(const spool *s, const char *ref, char *out, size_t outlen);
/* Makes sure `ref` is on this node's disk (a bucket's object is fetched,
 * at most `max` bytes). 0; 1 = no such object; -1 with err. */
int sp_fetch(spool *s, const char *ref, uint64_t max, char *err, size_t errlen);

/* A spooled original on this node's disk for one parse: the file, or for
 * a tar the directory unpacked from it (at most max bytes). *unreadable
 * (may be NULL) is set to 1 when the original is here but cannot be
 * unpacked (not a tar, too large), 0 otherwise. */
typedef struct sp_local sp_local;
sp_local *sp_local_open(spool *s, const char *ref, const char *kind, uint64_t max,
			int *unreadable, char *err, size_t errlen);
const char *sp_local_path(const sp_local *l);
/* Removes what was fetched for this parse (a directory spool's files stay). */
void sp_local_close(sp_local *l);

/* ---- temporaries ---- */

/* A new temporary file of this node, "<what>@<host>@<pid>@<random>" in
 * the spool's temporary directory (same file system as the directory
 * spool). OUT: its path. The open fd, or -1 (errno). */
int sp_tmp_file(spool *s, const char *what, char *path, size_t pathlen);

/* ---- messages and sizes ---- */

/* Messages for clients name no path of this machine: every occurrence of
 * the spool's directory on this node (as configured and as resolved: a
 * directory spool's, or a bucket's local directory) in msg becomes
 * "SPOOL". */
void sp_scrub_paths(char *msg, size_t cap, const spool *s);

/* Bytes a file or directory tree takes on disk (allocated blocks; links
 * not followed); 0 when it is not there. */
uint64_t sp_disk_usage(const char *path);
/* Bytes a spooled original and what was unpacked from it take on this
 * node's disk: a directory spool's files; for a bucket only a copy
 * fetched here (the objects themselves are not on this disk). */
uint64_t sp_spooled_usage(const spool *s, const char *ref);
/* Bytes the spool takes on this node's disk (the directory with its
 * temporaries and debuginfo; for a bucket, its local directory). */
uint64_t sp_usage(const spool *s);
/* rm -r, without following symlinks. */
void sp_remove_tree(const char *path);

#endif
