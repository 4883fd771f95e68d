/*
 * spool.h - where uploads land before they are parsed: streamed to a
 * temporary file with their sha256 computed on the way (memory stays flat
 * whatever the size), fsynced, then renamed to SPOOL/<sha256>.<kind>.
 * The spool keeps originals so a profile can be parsed again.
 */
#ifndef PERFHUB_DAEMON_SPOOL_H
#define PERFHUB_DAEMON_SPOOL_H

#include <stddef.h>
#include <stdint.h>

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
	SP_ERR_IO = -1,		/* disk trouble (errno kept) */
	SP_ERR_TOO_LARGE = -2,	/* more than max bytes after decoding */
	SP_ERR_ENCODING = -3,	/* the zstd or gzip stream is corrupt or truncated */
	SP_ERR_FULL = -4,	/* no space left on the spool's filesystem */
	SP_ERR_RATIO = -5,	/* decodes to more than SP_MAX_RATIO times its size */
	SP_ERR_MAGIC = -6,	/* does not start as sp_expect() said (or is empty) */
};

/* 1 when `decoded` bytes from `encoded` ones are within SP_MAX_RATIO. */
int sp_ratio_ok(uint64_t decoded, uint64_t encoded);

/* Creates the spool directories if needed and removes partial uploads left
 * by a daemon that died. Call once at start. 0 or -1 (errno). */
int sp_init(const char *spool_dir);

/* A new upload; `max` caps the decoded size. NULL on error (errno). */
sp_upload *sp_begin(const char *spool_dir, int encoding, uint64_t max);
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
 * Ends the stream: checks the encoding is complete, fsyncs, renames to
 * SPOOL/<sha256>.<ext> (an existing file of that name is kept: same bytes)
 * and fsyncs the directory. OUT: sha256 hex, decoded size, malloc'ed path.
 * Frees u. enum sp_result.
 */
int sp_finish(sp_upload *u, const char *ext, char sha256[65], uint64_t *size, char **path);
/* Throws the upload away. Frees u. */
void sp_abort(sp_upload *u);

/* Copies a local file or a perf.data directory (as a tar) into the spool.
 * OUT as sp_finish; *kind is "file" or "tar". enum sp_result. */
int sp_add_path(const char *spool_dir, const char *src, uint64_t max, char sha256[65],
		uint64_t *size, char **path, const char **kind);

/* Messages for clients name no path of this machine: every occurrence of
 * the spool directory (as configured and as resolved) in msg becomes
 * "SPOOL". */
void sp_scrub_paths(char *msg, size_t cap, const char *spool_dir);

/* Bytes a file or directory tree takes on disk (allocated blocks; links
 * not followed); 0 when it is not there. */
uint64_t sp_disk_usage(const char *path);
/* Bytes a spooled original and what was unpacked from it take. */
uint64_t sp_spooled_usage(const char *spool_path);

/* Removes a spooled original and what was unpacked from it. */
void sp_remove(const char *spool_path);
/* rm -r, without following symlinks. */
void sp_remove_tree(const char *path);

#endif
