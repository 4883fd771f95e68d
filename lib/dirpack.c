/* dirpack.c - writing and safely unpacking the ustar subset perf.data directories need. */
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

#include "dirpack.h"

#define TAR_BLOCK 512
#define TAR_MAX_ENTRIES 4096	/* a perf.data directory has a few dozen */

struct ustar {
	char name[100], mode[8], uid[8], gid[8], size[12], mtime[12], chksum[8];
	char typeflag, linkname[100], magic[6], version[2], uname[32], gname[32];
	char devmajor[8], devminor[8], prefix[155], pad[12];
};

static unsigned header_sum(const unsigned char *h)
{
	unsigned sum = 0;
	int i;

	for (i = 0; i < TAR_BLOCK; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return sum;
}

static int write_header(dirpack_sink sink, void *ctx, const char *name, uint64_t size, char type)
{
	struct ustar h;

	_Static_assert(sizeof(h) == TAR_BLOCK, "ustar header is one block");
	memset(&h, 0, sizeof(h));
	if (strlen(name) >= sizeof(h.name)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(h.name, name, strlen(name));
	snprintf(h.mode, sizeof(h.mode), "%07o", type == '5' ? 0755 : 0644);
	snprintf(h.uid, sizeof(h.uid), "%07o", 0);
	snprintf(h.gid, sizeof(h.gid), "%07o", 0);
	snprintf(h.size, sizeof(h.size), "%011llo", (unsigned long long)size);
	snprintf(h.mtime, sizeof(h.mtime), "%011o", 0);
	h.typeflag = type;
	memcpy(h.magic, "ustar", 6);
	memcpy(h.version, "00", 2);
	snprintf(h.chksum, sizeof(h.chksum), "%06o", header_sum((unsigned char *)&h));
	h.chksum[7] = ' ';
	return sink(ctx, &h, sizeof(h)) ? -1 : 0;
}

static int write_file(dirpack_sink sink, void *ctx, const char *path, const char *name)
{
	static const char zeros[TAR_BLOCK];
	char buf[64 * 1024];
	struct stat st;
	uint64_t left;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0)
		goto fail;
	if (write_header(sink, ctx, name, (uint64_t)st.st_size, '0') < 0)
		goto fail;
	for (left = (uint64_t)st.st_size; left;) {
		ssize_t n = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = n ? errno : EIO;	/* file shrank while read */
			goto fail;
		}
		if (sink(ctx, buf, (size_t)n))
			goto fail;
		left -= (uint64_t)n;
	}
	close(fd);
	if (st.st_size % TAR_BLOCK)
		return sink(ctx, zeros, TAR_BLOCK - (size_t)(st.st_size % TAR_BLOCK)) ? -1 : 0;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of dir's entries (no dot files). */
static char **list_dir(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (*n >= TAR_MAX_ENTRIES)
			break;
		if (*n == cap) {
			char **p = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*names));
			if (!p)
				break;
			names = p;
		}
		names[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	if (names)
		qsort(names, *n, sizeof(*names), cmp_names);
	return names;
}

static int write_tree(const char *dir, const char *prefix, int depth, dirpack_sink sink, void *ctx)
{
	size_t n, i;
	char **names = list_dir(dir, &n);
	int rc = 0;

	if (!names && n == 0)
		return 0;
	for (i = 0; i < n && rc == 0; i++) {
		char path[PATH_MAX], name[PATH_MAX];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		snprintf(name, sizeof(name), "%s%s", prefix, names[i]);
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			rc = write_file(sink, ctx, path, name);
		} else if (S_ISDIR(st.st_mode) && depth == 0) {
			strncat(name, "/", sizeof(name) - strlen(name) - 1);
			rc = write_header(sink, ctx, name, 0, '5');
			if (rc == 0)
				rc = write_tree(path, name, depth + 1, sink, ctx);
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int dirpack_write(const char *dir, dirpack_sink sink, void *ctx)
{
	static const char zeros[2 * TAR_BLOCK];

	if (write_tree(dir, "", 0, sink, ctx) < 0)
		return -1;
	return sink(ctx, zeros, sizeof(zeros)) ? -1 : 0;
}

/* ---- unpacking ------------------------------------------------------------ */

static int parse_octal(const char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	while (i < n && p[i] == ' ')
		i++;
	for (; i < n && p[i] >= '0' && p[i] <= '7'; i++) {
		if (v >> 60)
			return -1;
		v = v * 8 + (uint64_t)(p[i] - '0');
	}
	if (i < n && p[i] != 0 && p[i] != ' ')
		return -1;
	*out = v;
	return 0;
}

/* Full name of a header; "" when it is unsafe (absolute, "..", empty parts). */
static void entry_name(const struct ustar *h, char *out, size_t len)
{
	char name[101], prefix[156];
	const char *p;

	memcpy(name, h->name, 100);
	name[100] = 0;
	memcpy(prefix, h->prefix, 155);
	prefix[155] = 0;
	if (!memcmp(h->magic, "ustar", 5) && prefix[0])
		snprintf(out, len, "%s/%s", prefix, name);
	else
		snprintf(out, len, "%s", name);
	while (!strncmp(out, "./", 2))
		memmove(out, out + 2, strlen(out + 2) + 1);
	if (out[0] == '/') {
		out[0] = 0;
		return;
	}
	for (p = out; *p;) {
		size_t seg = strcspn(p, "/");
		if ((seg == 2 && !strncmp(p, "..", 2)) || (seg == 1 && p[0] == '.')) {
			out[0] = 0;
			return;
		}
		p += seg;
		if (*p == '/')
			p++;
	}
}

static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Walks the archive; with dest NULL only learns the common top directory. */
static int walk(int fd, const char *dest, const char *strip, uint64_t max_bytes, char *top,
		size_t toplen, int *common, char *err, size_t errlen)
{
	unsigned char block[TAR_BLOCK];
	uint64_t total = 0, off = 0;
	unsigned entries = 0;

	for (;;) {
		const struct ustar *h = (const struct ustar *)block;
		uint64_t size, sum, padded;
		char name[400];
		int file_fd = -1;

		if (read_full(fd, block, sizeof(block)) < 0) {
			snprintf(err, errlen, "tar offset %llu: archive ends inside a header",
				 (unsigned long long)off);
			return -1;
		}
		if (!block[0]) {
			static const unsigned char zero[TAR_BLOCK];
			if (!memcmp(block, zero, TAR_BLOCK))
				return 0;	/* end-of-archive block */
		}
		if (parse_octal(h->chksum, sizeof(h->chksum), &sum) < 0 || sum != header_sum(block)) {
			snprintf(err, errlen, "tar offset %llu: bad header checksum (not a tar?)",
				 (unsigned long long)off);
			return -1;
		}
		if (parse_octal(h->size, sizeof(h->size), &size) < 0 || size > max_bytes) {
			snprintf(err, errlen, "tar offset %llu: bad or too large entry size",
				 (unsigned long long)off);
			return -1;
		}
		if (++entries > TAR_MAX_ENTRIES) {
			snprintf(err, errlen, "tar offset %llu: more than %d entries",
				 (unsigned long long)off, TAR_MAX_ENTRIES);
			return -1;
		}
		off += TAR_BLOCK;
		padded = (size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
		entry_name(h, name, sizeof(name));
		if (!name[0]) {
			snprintf(err, errlen, "tar offset %llu: unsafe entry name",
				 (unsigned long long)off - TAR_BLOCK);
			return -1;
		}
		if (!dest) {
			/* first pass: is there one top directory everything sits in? */
			size_t seg = strcspn(name, "/");
			if (h->typeflag == '0' || h->typeflag == 0 || h->typeflag == '5') {
				if (!name[seg] && h->typeflag != '5')
					*common = 0;	/* a file at the top */
				else if (!top[0] && seg < toplen)
					snprintf(top, toplen, "%.*s", (int)seg, name);
				else if (strncmp(top, name, seg) || top[seg])
					*common = 0;
			}
		} else if (h->typeflag == '0' || h->typeflag == 0 || h->typeflag == '5') {
			const char *rel = name;
			char path[PATH_MAX];
			size_t sl = strlen(strip);

			if (sl && !strncmp(name, strip, sl) && (name[sl] == '/' || !name[sl]))
				rel = name[sl] ? name + sl + 1 : "";
			while (*rel == '/')
				rel++;
			if (*rel) {
				snprintf(path, sizeof(path), "%s/%s", dest, rel);
				if (h->typeflag == '5' || path[strlen(path) - 1] == '/') {
					if (mkdir(path, 0750) < 0 && errno != EEXIST) {
						snprintf(err, errlen, "%s: %s", path, strerror(errno));
						return -1;
					}
				} else {
					total += size;
					if (total > max_bytes) {
						snprintf(err, errlen, "tar: more than %llu bytes",
							 (unsigned long long)max_bytes);
						return -1;
					}
					file_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
							     O_NOFOLLOW, 0640);
					if (file_fd < 0) {
						snprintf(err, errlen, "%s: %s", path, strerror(errno));
						return -1;
					}
				}
			}
		}
		/* copy or skip the content */
		while (padded) {
			char buf[64 * 1024];
			size_t chunk = padded < sizeof(buf) ? (size_t)padded : sizeof(buf);
			if (read_full(fd, buf, chunk) < 0) {
				snprintf(err, errlen, "tar offset %llu: archive ends inside '%s'",
					 (unsigned long long)off, name);
				if (file_fd >= 0)
					close(file_fd);
				return -1;
			}
			if (file_fd >= 0 && size) {
				size_t w = size < chunk ? (size_t)size : chunk;
				if (write(file_fd, buf, w) != (ssize_t)w) {
					snprintf(err, errlen, "write: %s", strerror(errno));
					close(file_fd);
					return -1;
				}
				size -= w;
			}
			padded -= chunk;
			off += chunk;
		}
		if (file_fd >= 0)
			close(file_fd);
	}
}

int dirpack_extract(const char *tar_path, const char *dest, uint64_t max_bytes, char *err,
		size_t errlen)
{
	char top[256] = "";
	int common = 1, fd, rc;

	fd = open(tar_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", tar_path, strerror(errno));
		return -1;
	}
	rc = walk(fd, NULL, "", max_bytes, top, sizeof(top), &common, err, errlen);
	if (rc == 0 && lseek(fd, 0, SEEK_SET) < 0)
		rc = -1;
	if (rc == 0 && mkdir(dest, 0750) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dest, strerror(errno));
		rc = -1;
	}
	if (rc == 0)
		rc = walk(fd, dest, common ? top : "", max_bytes, NULL, 0, NULL, err, errlen);
	close(fd);
	return rc;
}
