/* dirpack.c - perf.data directories as tar streams, written and safely unpacked with libarchive. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "dirpack.h"
#include "dynlib.h"

#define DIRPACK_BUF (64 * 1024)

/* libarchive, opened on first use (dynlib.h) */
#define DP_ARCHIVE_FUNCS(X) \
	X(set_error, archive_set_error) \
	X(last_errno, archive_errno) \
	X(error_string, archive_error_string) \
	X(entry_new, archive_entry_new) \
	X(entry_free, archive_entry_free) \
	X(entry_set_pathname, archive_entry_set_pathname) \
	X(entry_set_filetype, archive_entry_set_filetype) \
	X(entry_set_perm, archive_entry_set_perm) \
	X(entry_set_size, archive_entry_set_size) \
	X(entry_set_mtime, archive_entry_set_mtime) \
	X(entry_size, archive_entry_size) \
	X(entry_filetype, archive_entry_filetype) \
	X(entry_pathname, archive_entry_pathname) \
	X(entry_hardlink, archive_entry_hardlink) \
	X(write_new, archive_write_new) \
	X(write_set_format_pax_restricted, archive_write_set_format_pax_restricted) \
	X(write_set_bytes_in_last_block, archive_write_set_bytes_in_last_block) \
	X(write_open, archive_write_open) \
	X(write_header, archive_write_header) \
	X(write_data, archive_write_data) \
	X(write_close, archive_write_close) \
	X(write_free, archive_write_free) \
	X(read_new, archive_read_new) \
	X(read_support_format_tar, archive_read_support_format_tar) \
	X(read_open_filename, archive_read_open_filename) \
	X(read_next_header, archive_read_next_header) \
	X(read_header_position, archive_read_header_position) \
	X(read_data, archive_read_data) \
	X(read_free, archive_read_free)

DYNLIB_TABLE(la, DP_ARCHIVE_FUNCS)

static dynlib archive_lib = DYNLIB_INIT(LIBARCHIVE_SONAME, "libarchive13", la_bind);

/* ---- packing ------------------------------------------------------------- */

typedef struct sink_ctx {
	dirpack_sink sink;
	void *ctx;
} sink_ctx;

static la_ssize_t to_sink(struct archive *a, void *data, const void *buf, size_t len)
{
	sink_ctx *s = data;

	if (s->sink(s->ctx, buf, len)) {
		la.set_error(a, errno ? errno : EIO, "the sink refused the bytes");
		return -1;
	}
	return (la_ssize_t)len;
}

/* A header with nothing of the machine in it: the bytes depend only on the
 * names, sizes and contents. */
static int put_header(struct archive *a, const char *name, int type, int64_t size)
{
	struct archive_entry *e = la.entry_new();
	int rc;

	if (!e) {
		errno = ENOMEM;
		return -1;
	}
	la.entry_set_pathname(e, name);
	la.entry_set_filetype(e, (unsigned)type);
	la.entry_set_perm(e, type == AE_IFDIR ? 0755 : 0644);
	la.entry_set_size(e, type == AE_IFDIR ? 0 : size);
	la.entry_set_mtime(e, 0, 0);
	rc = la.write_header(a, e);
	la.entry_free(e);
	return rc == ARCHIVE_OK ? 0 : -1;
}

static int put_file(struct archive *a, const char *path, const char *name)
{
	char *buf = malloc(DIRPACK_BUF);
	struct stat st;
	uint64_t left;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (!buf || fd < 0 || fstat(fd, &st) < 0)
		goto fail;
	if (put_header(a, name, AE_IFREG, (int64_t)st.st_size) < 0)
		goto fail;
	for (left = (uint64_t)st.st_size; left;) {
		ssize_t n = read(fd, buf, left < DIRPACK_BUF ? (size_t)left : DIRPACK_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = n ? errno : EIO;	/* the file shrank while read */
			goto fail;
		}
		if (la.write_data(a, buf, (size_t)n) != n)
			goto fail;
		left -= (uint64_t)n;
	}
	close(fd);
	free(buf);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return -1;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of dir's entries (no dot files), at most DIRPACK_MAX_ENTRIES. */
static char **list_dir(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d)) && *n < DIRPACK_MAX_ENTRIES) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap) {
			char **p = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*names));
			if (!p)
				break;
			names = p;
		}
		if (!(names[*n] = strdup(e->d_name)))
			break;
		(*n)++;
	}
	closedir(d);
	if (names)
		qsort(names, *n, sizeof(*names), cmp_names);
	return names;
}

static int put_tree(struct archive *a, const char *dir, const char *prefix, int depth)
{
	size_t n, i;
	char **names = list_dir(dir, &n);
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		char path[PATH_MAX], name[PATH_MAX];
		struct stat st;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path) ||
		    (size_t)snprintf(name, sizeof(name), "%s%s", prefix, names[i]) >= sizeof(name) - 1) {
			errno = ENAMETOOLONG;
			rc = -1;
			break;
		}
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			rc = put_file(a, path, name);
		} else if (S_ISDIR(st.st_mode) && depth == 0) {
			rc = put_header(a, name, AE_IFDIR, 0);
			strcat(name, "/");
			if (rc == 0)
				rc = put_tree(a, path, name, depth + 1);
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int dirpack_write(const char *dir, dirpack_sink sink, void *ctx)
{
	sink_ctx s = { sink, ctx };
	struct archive *a;
	int rc = -1, saved;

	if (dynlib_ready(&archive_lib) < 0) {
		errno = ELIBACC;	/* dynlib_error(&archive_lib) has the rest */
		return -1;
	}
	if (!(a = la.write_new())) {
		errno = ENOMEM;
		return -1;
	}
	/* ustar headers (pax ones only for names ustar cannot hold); no
	 * padding of the last block: the stream ends after its end blocks */
	if (la.write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    la.write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    la.write_open(a, &s, NULL, to_sink, NULL) != ARCHIVE_OK)
		goto out;
	if (put_tree(a, dir, "", 0) == 0 && la.write_close(a) == ARCHIVE_OK)
		rc = 0;
out:
	saved = errno ? errno : la.last_errno(a);
	la.write_free(a);
	errno = saved;
	return rc;
}

const char *dirpack_lib_error(void)
{
	return dynlib_error(&archive_lib);
}

/* ---- unpacking ------------------------------------------------------------ */

/* The entry's name made relative: leading "./" and trailing "/" dropped.
 * OUT: name ("" for the archive's own top, "."). -1 when it is unsafe:
 * absolute, a ".." or "." part, or too long. */
static int clean_name(const char *raw, char *out, size_t len)
{
	const char *p;
	size_t n;

	if (!raw || raw[0] == '/')
		return -1;
	while (raw[0] == '.' && raw[1] == '/')
		raw += 2 + strspn(raw + 2, "/");
	if ((n = strlen(raw)) >= len)
		return -1;
	memcpy(out, raw, n + 1);
	while (n && out[n - 1] == '/')
		out[--n] = 0;
	if (!strcmp(out, "."))
		out[0] = 0;
	for (p = out; *p;) {
		size_t seg = strcspn(p, "/");
		if ((seg == 2 && !strncmp(p, "..", 2)) || (seg == 1 && p[0] == '.'))
			return -1;
		p += seg;
		p += strspn(p, "/");
	}
	return 0;
}

typedef struct unpack {
	const char *path, *dest;	/* dest NULL: the first pass */
	uint64_t max_bytes, total;
	unsigned entries;
	char top[256];		/* the first pass: the one top directory, if any */
	int common;
	const char *strip;	/* the second pass: that directory */
	char **links;		/* names of the links skipped so far */
	size_t nr_links;
	char *err;
	size_t errlen;
	char *buf;
} unpack;

static int fail_at(unpack *u, struct archive *a, const char *what)
{
	snprintf(u->err, u->errlen, "tar entry %u (offset %lld): %s", u->entries,
		 (long long)la.read_header_position(a), what);
	return -1;
}

static int copy_data(unpack *u, struct archive *a, const char *path, int64_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
	int64_t done = 0;
	la_ssize_t n;

	if (fd < 0) {
		snprintf(u->err, u->errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while ((n = la.read_data(a, u->buf, DIRPACK_BUF)) > 0) {
		done += n;
		if (done > size || write(fd, u->buf, (size_t)n) != n) {
			close(fd);
			if (done > size)
				return fail_at(u, a, "more content than its size");
			snprintf(u->err, u->errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
	}
	close(fd);
	if (n < 0)
		return fail_at(u, a, la.error_string(a) ? la.error_string(a) :
							       "unreadable content");
	return 0;
}

/* The directories above path (below dest, which exists): an archive need
 * not list them. Nothing in dest is a link (none is ever made), so none is
 * followed. 0 or -1. */
static int make_parents(unpack *u, char *path)
{
	size_t dl = strlen(u->dest);
	char *slash;

	for (slash = strchr(path + dl + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		if (mkdir(path, 0750) < 0 && errno != EEXIST) {
			snprintf(u->err, u->errlen, "%s: %s", path, strerror(errno));
			*slash = '/';
			return -1;
		}
		*slash = '/';
	}
	return 0;
}

/* 1 when name is a skipped link or lies under one. */
static int under_link(const unpack *u, const char *name)
{
	size_t i;

	for (i = 0; i < u->nr_links; i++) {
		size_t l = strlen(u->links[i]);
		if (!strncmp(name, u->links[i], l) && (name[l] == '/' || !name[l]))
			return 1;
	}
	return 0;
}

/* One entry of either pass. */
static int entry(unpack *u, struct archive *a, struct archive_entry *e)
{
	char name[PATH_MAX], path[PATH_MAX];
	int64_t size = la.entry_size(e);
	unsigned type = la.entry_filetype(e);
	int is_dir = type == AE_IFDIR, is_file = type == AE_IFREG;
	const char *rel;
	size_t seg, sl;

	if (++u->entries > DIRPACK_MAX_ENTRIES) {
		char what[64];
		snprintf(what, sizeof(what), "more than %d entries", DIRPACK_MAX_ENTRIES);
		return fail_at(u, a, what);
	}
	if (clean_name(la.entry_pathname(e), name, sizeof(name)) < 0)
		return fail_at(u, a, "unsafe entry name");
	if (size < 0 || (uint64_t)size > u->max_bytes)
		return fail_at(u, a, "bad or too large entry size");
	/* nothing goes through a link: it is never made, and a later entry
	 * below its name is refused rather than written as a directory */
	if (under_link(u, name))
		return fail_at(u, a, "unsafe entry name (below a link)");
	if (la.entry_hardlink(e) || type == AE_IFLNK) {
		char *copy = strdup(name);
		if (!copy) {
			snprintf(u->err, u->errlen, "out of memory");
			return -1;
		}
		u->links[u->nr_links++] = copy;	/* at most one per entry */
		return 0;
	}
	/* devices, fifos: never made */
	if (!is_dir && !is_file)
		return 0;
	if (!name[0]) {
		if (!is_dir)
			return fail_at(u, a, "unsafe entry name");
		return 0;	/* "./": dest itself */
	}
	seg = strcspn(name, "/");
	if (!u->dest) {
		/* is there one top directory everything sits in? */
		if (!name[seg] && !is_dir)
			u->common = 0;	/* a file at the top */
		else if (!u->top[0] && seg < sizeof(u->top))
			snprintf(u->top, sizeof(u->top), "%.*s", (int)seg, name);
		else if (strncmp(u->top, name, seg) || u->top[seg])
			u->common = 0;
		return 0;
	}
	rel = name;
	sl = strlen(u->strip);
	if (sl && !strncmp(name, u->strip, sl) && (name[sl] == '/' || !name[sl]))
		rel = name[sl] ? name + sl + 1 : "";
	if (!*rel)
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", u->dest, rel) >= sizeof(path))
		return fail_at(u, a, "name too long");
	if (make_parents(u, path) < 0)
		return -1;
	if (is_dir) {
		if (mkdir(path, 0750) < 0 && errno != EEXIST) {
			snprintf(u->err, u->errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		return 0;
	}
	u->total += (uint64_t)size;
	if (u->total > u->max_bytes) {
		snprintf(u->err, u->errlen, "tar: more than %llu bytes",
			 (unsigned long long)u->max_bytes);
		return -1;
	}
	return copy_data(u, a, path, size);
}

/* A pass over the archive. */
static int walk(unpack *u)
{
	struct archive *a = la.read_new();
	struct archive_entry *e;
	int rc = 0, r;

	u->entries = 0;
	u->total = 0;
	if (!a) {
		snprintf(u->err, u->errlen, "out of memory");
		return -1;
	}
	/* tar only, uncompressed (the spool has decoded the upload) */
	la.read_support_format_tar(a);
	if (la.read_open_filename(a, u->path, DIRPACK_BUF) != ARCHIVE_OK) {
		snprintf(u->err, u->errlen, "%s: %s", u->path, la.error_string(a));
		la.read_free(a);
		return -1;
	}
	while (rc == 0 && (r = la.read_next_header(a, &e)) != ARCHIVE_EOF) {
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			rc = fail_at(u, a, la.error_string(a) ? la.error_string(a) :
								       "not a tar archive");
			break;
		}
		rc = entry(u, a, e);
	}
	la.read_free(a);
	while (u->nr_links)
		free(u->links[--u->nr_links]);
	return rc;
}

int dirpack_extract(const char *tar_path, const char *dest, uint64_t max_bytes, char *err,
		    size_t errlen)
{
	unpack u;
	int rc;

	if (dynlib_ready(&archive_lib) < 0) {
		snprintf(err, errlen, "%s", dynlib_error(&archive_lib));
		return -1;
	}
	memset(&u, 0, sizeof(u));
	u.path = tar_path;
	u.max_bytes = max_bytes;
	u.common = 1;
	u.err = err;
	u.errlen = errlen;
	u.buf = malloc(DIRPACK_BUF);
	u.links = calloc(DIRPACK_MAX_ENTRIES, sizeof(*u.links));
	if (!u.buf || !u.links) {
		free(u.buf);
		free(u.links);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = walk(&u);
	if (rc == 0 && mkdir(dest, 0750) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dest, strerror(errno));
		rc = -1;
	}
	if (rc == 0) {
		u.dest = dest;
		u.strip = u.common ? u.top : "";
		rc = walk(&u);
	}
	free(u.buf);
	free(u.links);
	return rc;
}
