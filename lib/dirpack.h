/*
 * dirpack.h - a perf.data directory (perf record --threads, --kcore) packed
 * into a tar stream and unpacked from one: writing it for an upload, and
 * unpacking an uploaded one safely (regular files and directories only, no
 * absolute names, no "..", bounded sizes). Shared by perfhubd and perfhub.
 */
#ifndef PERFHUB_DIRPACK_H
#define PERFHUB_DIRPACK_H

#include <stddef.h>
#include <stdint.h>

/* Sink for dirpack_write; returns 0 or non-zero to stop. */
typedef int (*dirpack_sink)(void *ctx, const void *data, size_t len);

/* Writes directory `dir` (its regular files and one level of
 * subdirectories, names sorted so the bytes are reproducible) as a tar
 * stream. 0, or -1 with errno / the sink's failure. */
int dirpack_write(const char *dir, dirpack_sink sink, void *ctx);

/* Unpacks `tar_path` into `dest` (created). If the archive holds one top
 * directory, its content is what ends up in dest. `max_bytes` caps the
 * total. 0, or -1 with a message in err. */
int dirpack_extract(const char *tar_path, const char *dest, uint64_t max_bytes, char *err,
		size_t errlen);

#endif
