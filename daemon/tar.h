/*
 * tar.h - the small part of tar (ustar) perfhubd needs: writing a perf.data
 * directory as a stream, and unpacking an uploaded one safely (regular files
 * and directories only, no absolute names, no "..", bounded sizes).
 */
#ifndef PERFHUB_DAEMON_TAR_H
#define PERFHUB_DAEMON_TAR_H

#include <stddef.h>
#include <stdint.h>

/* Sink for tar_write_dir; returns 0 or non-zero to stop. */
typedef int (*tar_sink)(void *ctx, const void *data, size_t len);

/* Writes directory `dir` (its regular files and one level of
 * subdirectories, names sorted so the bytes are reproducible) as a tar
 * stream. 0, or -1 with errno / the sink's failure. */
int tar_write_dir(const char *dir, tar_sink sink, void *ctx);

/* Unpacks `tar_path` into `dest` (created). If the archive holds one top
 * directory, its content is what ends up in dest. `max_bytes` caps the
 * total. 0, or -1 with a message in err. */
int tar_extract(const char *tar_path, const char *dest, uint64_t max_bytes, char *err,
		size_t errlen);

#endif
