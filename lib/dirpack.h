/*
 * dirpack.h - a perf.data directory (perf record --threads, --kcore)
 * packed into a tar stream and unpacked from one, with libarchive. Shared
 * by perfhubd (uploads and the watched directory) and perfhub upload.
 *
 * Unpacking trusts nothing in the archive: no absolute names, no ".." or
 * "." parts (a leading "./", as `tar -C dir -cf - .` writes, is fine), no
 * links of any kind (symbolic and hard links are skipped, so nothing is
 * ever written through one), regular files and directories only, at most
 * DIRPACK_MAX_ENTRIES entries and max_bytes of content, every file created
 * new (O_EXCL, O_NOFOLLOW) inside dest.
 */
#ifndef PERFHUB_DIRPACK_H
#define PERFHUB_DIRPACK_H

#include <stddef.h>
#include <stdint.h>

#define DIRPACK_MAX_ENTRIES 4096	/* a perf.data directory has a few dozen */

/* Sink for dirpack_write; returns 0 or non-zero to stop. */
typedef int (*dirpack_sink)(void *ctx, const void *data, size_t len);

/* Writes directory `dir` (its regular files and one level of
 * subdirectories, names sorted and times, owners and modes fixed, so the
 * same directory always makes the same bytes) as a tar stream. 0, or -1
 * with errno / the sink's failure; ELIBACC: libarchive could not be
 * loaded, dirpack_lib_error says why. */
int dirpack_write(const char *dir, dirpack_sink sink, void *ctx);
const char *dirpack_lib_error(void);

/* Unpacks `tar_path` into `dest` (created). If the archive holds one top
 * directory, its content is what ends up in dest. 0, or -1 with a message
 * in err ("unsafe entry name" for a name that would leave dest). */
int dirpack_extract(const char *tar_path, const char *dest, uint64_t max_bytes, char *err,
		    size_t errlen);

#endif
