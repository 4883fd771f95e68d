/* debuginfo.c - ELF and kallsyms files by build-id: validate, store, index, fetch. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_DEBUGINFOD
#include <elfutils/debuginfod.h>
#endif
#include <archive.h>
#include <archive_entry.h>

#include "symbols/debuginfo.h"
#include "intake/spool.h"
#include "dso.h"
#include "elfid.h"
#include "log.h"

#define DBG_MISS_TTL_S 600		/* a debuginfod miss is not asked again before */
#define DBG_MAX_MISSES 4096
#define DBG_ARCHIVE_MAX_ENTRIES 100000
#define DBG_ARCHIVE_MAX_TOTAL (64ull << 30)	/* bytes unpacked from one bundle */

#define DBG_MAX_PENDING 1024	/* fetched files waiting to be indexed */
#define DBG_KALLSYMS_MAX_LINE 1024	/* /proc/kallsyms lines are < 300 bytes */

typedef struct dbg_pending {
	char hex[DBG_HEX_LEN];
	char kind[16];
	char path[PATH_MAX];
	uint64_t size;
	int symbols;
} dbg_pending;

typedef struct dbg_miss {
	char hex[DBG_HEX_LEN];
	time_t when;
} dbg_miss;

struct dbg_store {
	char *root;		/* the spool's debuginfo directory on this node */
	spool *sp;		/* temporaries on the same file system: rename works */
	st_store *st;
	int debuginfod;		/* fetch missing build-ids */
	pthread_mutex_t lock;	/* the miss list and concurrent adds */
	dbg_miss misses[DBG_MAX_MISSES];
	size_t nr_misses, next_miss;
	dbg_pending *pending;	/* under lock */
	size_t nr_pending;
	pd_symcache *cache;	/* the workers' tables (dbg_attach), NULL = none */
};

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0750) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0750) < 0 && errno != EEXIST ? -1 : 0;
}

int dbg_parse_build_id(const char *in, char hex[DBG_HEX_LEN], uint8_t *bytes, size_t *n)
{
	size_t len = strlen(in), i;

	if (len < 2 * DBG_MIN_BUILD_ID || len > 2 * DBG_MAX_BUILD_ID || len % 2)
		return -1;
	for (i = 0; i < len; i++) {
		if (!isxdigit((unsigned char)in[i]))
			return -1;
		hex[i] = (char)tolower((unsigned char)in[i]);
	}
	hex[len] = 0;
	if (bytes) {
		for (i = 0; i < len / 2; i++) {
			unsigned v;
			sscanf(hex + 2 * i, "%2x", &v);
			bytes[i] = (uint8_t)v;
		}
		*n = len / 2;
	}
	return 0;
}

static void to_hex(const uint8_t *b, size_t n, char hex[DBG_HEX_LEN])
{
	size_t i;

	if (n > DBG_MAX_BUILD_ID)
		n = DBG_MAX_BUILD_ID;
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	hex[2 * n] = 0;
}

/* ---- the store --------------------------------------------------------------- */

dbg_store *dbg_open(spool *sp, st_store *st, const char *debuginfod_urls, unsigned timeout_s,
		    char *err, size_t errlen)
{
	dbg_store *d = calloc(1, sizeof(*d));
	char buf[PATH_MAX];

	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->st = st;
	d->sp = sp;
	d->root = strdup(spool_debuginfo_dir(sp));
	if (!d->root) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	snprintf(buf, sizeof(buf), "%s/.build-id", d->root);
	if (mkdir_p(buf) < 0) {
		snprintf(err, errlen, "%s: %s", buf, strerror(errno));
		goto fail;
	}
	if (st_debuginfo_init(st) < 0) {
		snprintf(err, errlen, "cannot create the debuginfo index");
		goto fail;
	}
	if (!debuginfod_urls || !*debuginfod_urls)
		debuginfod_urls = getenv("DEBUGINFOD_URLS");
	if (debuginfod_urls && *debuginfod_urls) {
#ifdef HAVE_DEBUGINFOD
		char t[32];

		/* libdebuginfod takes its settings from the environment; this
		 * runs before any worker thread exists */
		setenv("DEBUGINFOD_URLS", debuginfod_urls, 1);
		snprintf(t, sizeof(t), "%u", timeout_s ? timeout_s : 10);
		setenv("DEBUGINFOD_TIMEOUT", t, 0);
		setenv("DEBUGINFOD_MAXTIME", t, 0);
		/* one attempt: a parse waits for it */
		setenv("DEBUGINFOD_RETRY_LIMIT", "0", 0);
		snprintf(t, sizeof(t), "%s", getenv("DEBUGINFOD_MAXTIME"));
		/* beside the debuginfo directory */
		snprintf(buf, sizeof(buf), "%s-cache", d->root);
		setenv("DEBUGINFOD_CACHE_PATH", buf, 0);
		d->debuginfod = 1;
		log_info("msg=\"debuginfod\" urls=\"%s\" timeout_s=%s", debuginfod_urls, t);
#else
		(void)timeout_s;
		log_warn("msg=\"debuginfod requested but perfhubd was built without libdebuginfod\"");
#endif
	}
	return d;
fail:
	dbg_close(d);
	return NULL;
}

void dbg_close(dbg_store *d)
{
	if (!d)
		return;
	pthread_mutex_destroy(&d->lock);
	free(d->pending);
	free(d->root);
	free(d);
}

const char *dbg_dir(const dbg_store *d)
{
	return d->root;
}

static void file_path(const dbg_store *d, const char *hex, const char *kind, char *out,
		      size_t len)
{
	snprintf(out, len, "%s/.build-id/%.2s/%s/%s", d->root, hex, hex + 2, kind);
}

/* The spool's name for a build-id's file (what the index keeps). */
static void file_ref(const char *hex, const char *kind, char *out, size_t len)
{
	snprintf(out, len, "debuginfo/.build-id/%.2s/%s/%s", hex, hex + 2, kind);
}

static int copy_fd(int in, int out)
{
	char buf[65536];
	ssize_t n;
	off_t off = 0;

	while ((n = pread(in, buf, sizeof(buf), off)) > 0) {
		char *p = buf;
		off += n;
		while (n > 0) {
			ssize_t w = write(out, p, (size_t)n);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				return -1;
			}
			p += w;
			n -= w;
		}
	}
	return n < 0 ? -1 : 0;
}

/* src -> dst: a rename when moving, else a copy to a temporary name,
 * fsynced, then put in place. An existing dst is kept (1) unless
 * `replace`. */
static int install(const dbg_store *d, const char *src, int fd, int move, const char *dst,
		   int replace)
{
	char tmp[PATH_MAX];
	int out, rc;

	if (move) {
		if (replace)
			return rename(src, dst) < 0 ? -1 : 0;
		if (link(src, dst) < 0)
			return errno == EEXIST ? 1 : -1;
		unlink(src);
		return 0;
	}
	out = sp_tmp_file(d->sp, "debuginfo", tmp, sizeof(tmp));
	if (out < 0)
		return -1;
	rc = copy_fd(fd, out);
	if (rc == 0)
		rc = fsync(out);
	close(out);
	if (rc == 0 && replace)
		rc = rename(tmp, dst) < 0 ? -1 : 0;
	else if (rc == 0 && link(tmp, dst) < 0)
		rc = errno == EEXIST ? 1 : -1;
	unlink(tmp);
	return rc;
}

/* 1 when the stored file at `path` has no symbols (a stripped binary). */
static int stored_without_symbols(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	elfid id;

	if (fd < 0)
		return 0;
	elfid_of_fd(fd, &id);
	close(fd);
	return id.elf && !id.has_symtab;
}

/* The index row now, or (defer) once dbg_flush_index() runs. */
static int index_file(dbg_store *d, const char *hex, const char *kind, const char *path,
		      uint64_t size, int symbols, const char *source, int defer)
{
	dbg_pending *p;

	if (!defer)
		return st_debuginfo_put(d->st, hex, kind, path, size, symbols, source);
	pthread_mutex_lock(&d->lock);
	if (!d->pending)
		d->pending = calloc(DBG_MAX_PENDING, sizeof(*d->pending));
	if (d->pending && d->nr_pending < DBG_MAX_PENDING) {
		p = &d->pending[d->nr_pending++];
		snprintf(p->hex, sizeof(p->hex), "%s", hex);
		snprintf(p->kind, sizeof(p->kind), "%s", kind);
		snprintf(p->path, sizeof(p->path), "%s", path);
		p->size = size;
		p->symbols = symbols;
	}
	pthread_mutex_unlock(&d->lock);
	return 0;
}

void dbg_flush_index(dbg_store *d)
{
	dbg_pending *p;
	size_t n, i;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	p = d->pending;
	n = d->nr_pending;
	d->pending = NULL;
	d->nr_pending = 0;
	pthread_mutex_unlock(&d->lock);
	for (i = 0; i < n; i++)
		if (st_debuginfo_put(d->st, p[i].hex, p[i].kind, p[i].path, p[i].size,
				     p[i].symbols, "debuginfod") < 0)
			log_warn("msg=\"cannot index debuginfo\" build_id=%s", p[i].hex);
	free(p);
}

int dbg_fetches(const dbg_store *d)
{
	return d && d->debuginfod;
}

/* One kallsyms line: "ADDR TYPE NAME" with an optional "\t[MODULE]". 1
 * when it is one; *text says _text or _stext at a nonzero address. */
static int kallsyms_line(const char *line, size_t len, int *text)
{
	size_t i = 0, a, n;
	int nonzero = 0;

	while (i < len && isxdigit((unsigned char)line[i]))
		nonzero |= line[i++] != '0';
	a = i;
	if (!a || a > 16 || i + 3 >= len || line[i] != ' ' ||
	    !isalpha((unsigned char)line[i + 1]) || line[i + 2] != ' ')
		return 0;
	i += 3;
	for (n = 0; i + n < len && line[i + n] > ' ' && line[i + n] < 0x7f; n++)
		;
	if (!n)
		return 0;
	if (nonzero && ((n == 5 && !memcmp(line + i, "_text", 5)) ||
			(n == 6 && !memcmp(line + i, "_stext", 6))))
		*text = 1;
	i += n;
	if (i == len)
		return 1;
	/* "\t[module]" */
	if (line[i] != '\t' || i + 2 >= len || line[i + 1] != '[' || line[len - 1] != ']')
		return 0;
	for (i += 2; i < len - 1; i++)
		if (line[i] <= ' ' || line[i] >= 0x7f)
			return 0;
	return 1;
}

/* A kallsyms file must be one through to its end (elfid looked at its
 * start only) and name the kernel's _text at a real address (hidden
 * addresses read as zeros). 0, or -1 with msg. */
static int check_kallsyms(int fd, char *msg, size_t msglen)
{
	char buf[65536], line[DBG_KALLSYMS_MAX_LINE];
	size_t ll = 0;
	uint64_t lineno = 1;
	off_t off = 0;
	ssize_t n;
	int text = 0, too_long = 0;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		ssize_t i;

		off += n;
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof(line))
					line[ll++] = buf[i];
				else
					too_long = 1;
				continue;
			}
			if (too_long || !kallsyms_line(line, ll, &text))
				goto bad;
			ll = 0;
			lineno++;
		}
	}
	if (n < 0) {
		snprintf(msg, msglen, "cannot read the file: %s", strerror(errno));
		return -1;
	}
	if (ll && !kallsyms_line(line, ll, &text))
		goto bad;
	if (!text) {
		snprintf(msg, msglen, "the kallsyms file names no _text at a real address"
			 " (addresses hidden by kptr_restrict?)");
		return -1;
	}
	return 0;
bad:
	snprintf(msg, msglen, "not a kallsyms file: line %llu is not ADDRESS TYPE NAME",
		 (unsigned long long)lineno);
	return -1;
}

static int add_file(dbg_store *d, const char *src, int move, const char *key, const char *source,
		    int defer, char out_hex[DBG_HEX_LEN], char *msg, size_t msglen)
{
	elfid f;
	char hex[DBG_HEX_LEN] = "", dst[PATH_MAX], dir[PATH_MAX], ref[PATH_MAX];
	const char *kind;
	struct stat st;
	int fd, rc, symbols;

	msg[0] = 0;
	out_hex[0] = 0;
	if (key && dbg_parse_build_id(key, hex, NULL, NULL) < 0) {
		snprintf(msg, msglen, "'%.64s' is not a build-id (%d to %d hex digits)", key,
			 2 * DBG_MIN_BUILD_ID, 2 * DBG_MAX_BUILD_ID);
		rc = DBG_ERR_MISMATCH;
		goto drop;
	}
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(msg, msglen, "%s: %s", src, strerror(errno));
		if (fd >= 0)
			close(fd);
		return DBG_ERR_IO;
	}
	elfid_of_fd(fd, &f);
	if (!f.elf && !f.kallsyms) {
		snprintf(msg, msglen, "not an ELF file (nor a kallsyms file)");
		rc = DBG_ERR_NOT_ELF;
		goto close_drop;
	}
	if (f.kallsyms && strlen(hex) != 2 * DBG_MAX_BUILD_ID) {
		/* a kernel's build-id is a SHA-1 (the kernel links with
		 * --build-id=sha1): anything shorter names no kernel */
		snprintf(msg, msglen, "a kallsyms file needs the kernel's build-id (%d hex digits)"
			 " as its key", 2 * DBG_MAX_BUILD_ID);
		rc = DBG_ERR_NO_BUILD_ID;
		goto close_drop;
	}
	if (f.kallsyms && check_kallsyms(fd, msg, msglen) < 0) {
		rc = DBG_ERR_NOT_ELF;
		goto close_drop;
	}
	if (f.elf) {
		char have[DBG_HEX_LEN];

		if (!f.bid_size) {
			snprintf(msg, msglen, "the ELF file has no GNU build-id note");
			rc = DBG_ERR_NO_BUILD_ID;
			goto close_drop;
		}
		to_hex(f.bid, f.bid_size, have);
		/* a recorded build-id may be a prefix (perf keeps 20 bytes) */
		if (*hex && strncmp(have, hex, strlen(hex))) {
			snprintf(msg, msglen, "build-id mismatch: the file's note is %s, not %s",
				 have, hex);
			rc = DBG_ERR_MISMATCH;
			goto close_drop;
		}
		if (!*hex)
			memcpy(hex, have, sizeof(have));
	}
	kind = f.kallsyms ? "kallsyms" : f.has_code ? "elf" : "debug";
	symbols = f.kallsyms || f.has_symtab;
	snprintf(dir, sizeof(dir), "%s/.build-id/%.2s/%s", d->root, hex, hex + 2);
	file_path(d, hex, kind, dst, sizeof(dst));
	if (mkdir_p(dir) < 0) {
		snprintf(msg, msglen, "%s: %s", dir, strerror(errno));
		rc = DBG_ERR_IO;
		goto close_drop;
	}
	/* a binary with .symtab replaces a stripped one of the same build-id */
	rc = install(d, src, fd, move, dst, symbols && stored_without_symbols(dst));
	close(fd);
	if (rc < 0) {
		snprintf(msg, msglen, "%s: %s", dst, strerror(errno));
		if (move)
			unlink(src);
		return DBG_ERR_IO;
	}
	memcpy(out_hex, hex, DBG_HEX_LEN);
	if (rc == 1) {		/* the same key and kind was there */
		if (move)
			unlink(src);
		return DBG_EXISTS;
	}
	/* in the bucket before the index names it (a directory has it now) */
	file_ref(hex, kind, ref, sizeof(ref));
	if (sp_store_file(d->sp, dst, ref, msg, msglen) < 0) {
		unlink(dst);
		return DBG_ERR_IO;
	}
	if (index_file(d, hex, kind, ref, (uint64_t)st.st_size, symbols, source, defer) < 0) {
		snprintf(msg, msglen, "storage error while indexing %s", hex);
		return DBG_ERR_IO;
	}
	log_info("msg=\"debuginfo stored\" build_id=%s kind=%s bytes=%lld symbols=%d source=%s",
		 hex, kind, (long long)st.st_size, symbols, source);
	return DBG_STORED;
close_drop:
	close(fd);
drop:
	if (move)
		unlink(src);
	return rc;
}

int dbg_add_file(dbg_store *d, const char *src, int move, const char *key, const char *source,
		 char out_hex[DBG_HEX_LEN], char *msg, size_t msglen)
{
	return add_file(d, src, move, key, source, 0, out_hex, msg, msglen);
}

int dbg_delete(dbg_store *d, const char *hex, uint64_t *freed)
{
	static const char *const kinds[] = { "elf", "debug", "kallsyms" };
	char path[PATH_MAX];
	uint64_t bytes = 0;
	size_t i;
	int rc, found = 0;

	/* the index first: nothing looks the files up while they go */
	rc = st_debuginfo_delete(d->st, hex);
	if (rc < 0)
		return -1;
	for (i = 0; i < sizeof(kinds) / sizeof(*kinds); i++) {
		uint64_t n;

		file_path(d, hex, kinds[i], path, sizeof(path));
		n = sp_disk_usage(path);
		if (unlink(path) == 0) {
			bytes += n;
			found = 1;
		}
		if (spool_remote(d->sp)) {
			/* the bucket's object too (its bytes were not on this
			 * node's disk: only a fetched copy counts as freed) */
			char ref[PATH_MAX];

			file_ref(hex, kinds[i], ref, sizeof(ref));
			sp_remove(d->sp, ref);
		}
	}
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s", d->root, hex, hex + 2);
	rmdir(path);
	{
		/* tables loaded from those files are not used again */
		uint8_t bid[DBG_MAX_BUILD_ID];
		size_t nb;
		char norm[DBG_HEX_LEN];

		if (d->cache && dbg_parse_build_id(hex, norm, bid, &nb) == 0)
			pd_dso_cache_forget(d->cache, bid, nb);
	}
	if (freed)
		*freed = bytes;
	if (found || rc == 0)
		log_info("msg=\"debuginfo deleted\" build_id=%s bytes=%llu", hex,
			 (unsigned long long)bytes);
	return found || rc == 0 ? 0 : 1;
}

int dbg_lookup(dbg_store *d, const char *hex, char *path, size_t pathlen, uint64_t *size)
{
	char *ref = NULL, *kind = NULL, err[512];
	int rc = st_debuginfo_get(d->st, hex, &ref, &kind, size);

	/* the index keeps spool refs (older stores: absolute paths) */
	if (rc == 0 && (sp_fetch(d->sp, ref, UINT64_MAX, err, sizeof(err)) < 0 ||
			sp_path(d->sp, ref, path, pathlen) < 0)) {
		log_warn("msg=\"debuginfo: cannot fetch\" build_id=%s error=\"%s\"", hex, err);
		rc = -1;
	}
	free(ref);
	free(kind);
	return rc;
}

void dbg_prepare(dbg_store *d, const pd_header *h)
{
	char hex[DBG_HEX_LEN], path[PATH_MAX];
	size_t i;

	if (!d || !h || !spool_remote(d->sp))
		return;
	for (i = 0; i < h->nr_build_ids; i++) {
		to_hex(h->build_ids[i].build_id, h->build_ids[i].size, hex);
		if (hex[0])
			dbg_lookup(d, hex, path, sizeof(path), &(uint64_t){ 0 });
	}
}

int dbg_has_symbols(dbg_store *d, const char *hex)
{
	return st_debuginfo_has_symbols(d->st, hex);
}

int dbg_kallsyms(dbg_store *d, const uint8_t *bid, size_t n, char *path, size_t pathlen)
{
	char hex[DBG_HEX_LEN];
	struct stat st;

	char ref[PATH_MAX], err[512];

	if (!n)
		return 1;
	to_hex(bid, n, hex);
	file_ref(hex, "kallsyms", ref, sizeof(ref));
	if (sp_fetch(d->sp, ref, UINT64_MAX, err, sizeof(err)) < 0)
		log_warn("msg=\"debuginfo: cannot fetch\" build_id=%s error=\"%s\"", hex, err);
	file_path(d, hex, "kallsyms", path, pathlen);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? 0 : 1;
}

/* ---- debuginfod --------------------------------------------------------------- */

#ifdef HAVE_DEBUGINFOD
static int recent_miss(dbg_store *d, const char *hex)
{
	time_t now = time(NULL);
	size_t i;
	int hit = 0;

	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->nr_misses && !hit; i++)
		hit = !strcmp(d->misses[i].hex, hex) && now - d->misses[i].when < DBG_MISS_TTL_S;
	pthread_mutex_unlock(&d->lock);
	return hit;
}

static void note_miss(dbg_store *d, const char *hex)
{
	pthread_mutex_lock(&d->lock);
	memcpy(d->misses[d->next_miss].hex, hex, DBG_HEX_LEN);
	d->misses[d->next_miss].when = time(NULL);
	d->next_miss = (d->next_miss + 1) % DBG_MAX_MISSES;
	if (d->nr_misses < DBG_MAX_MISSES)
		d->nr_misses++;
	pthread_mutex_unlock(&d->lock);
}

/* A build-id from debuginfod: stored and indexed like an upload. */
static int fetch_debuginfod(dbg_store *d, const uint8_t *bid, size_t n, char *path,
			    size_t pathlen)
{
	debuginfod_client *c;
	char hex[DBG_HEX_LEN], got[DBG_HEX_LEN], msg[256], q[LOG_Q_MAX];
	char *p = NULL;
	int fd, rc;

	to_hex(bid, n, hex);
	if (recent_miss(d, hex))
		return -1;
	c = debuginfod_begin();
	if (!c)
		return -1;
	fd = debuginfod_find_debuginfo(c, bid, (int)n, &p);
	debuginfod_end(c);
	if (fd < 0) {
		log_info("msg=\"debuginfod miss\" build_id=%s error=\"%s\"", hex, strerror(-fd));
		note_miss(d, hex);
		free(p);
		return -1;
	}
	close(fd);
	/* indexed later: this runs inside the parse's write transaction */
	rc = add_file(d, p, 0, hex, "debuginfod", 1, got, msg, sizeof(msg));
	free(p);
	if (rc < 0) {
		log_warn("msg=\"debuginfod file refused\" build_id=%s error=\"%s\"", hex,
			 log_q(q, sizeof(q), msg));
		note_miss(d, hex);
		return -1;
	}
	log_info("msg=\"debuginfod hit\" build_id=%s", hex);
	{
		/* the file just stored (or the one of that kind already there) */
		static const char *const kinds[] = { "elf", "debug" };
		struct stat st;
		size_t k;

		for (k = 0; k < 2; k++) {
			file_path(d, hex, kinds[k], path, pathlen);
			if (stat(path, &st) == 0)
				return 0;
		}
	}
	return -1;
}
#endif

/* pd_dso_fetch_fn: runs in a worker, from the parser's table load, for a
 * build-id nothing on this node has: a bucket's stored file (one that
 * dbg_prepare did not know the recording needs), then debuginfod. */
static int fetch(void *ctx, const uint8_t *bid, size_t n, char *path, size_t pathlen)
{
	dbg_store *d = ctx;
	char hex[DBG_HEX_LEN];
	uint64_t size;

	to_hex(bid, n, hex);
	if (spool_remote(d->sp) && dbg_lookup(d, hex, path, pathlen, &size) == 0)
		return 0;
#ifdef HAVE_DEBUGINFOD
	if (d->debuginfod)
		return fetch_debuginfod(d, bid, n, path, pathlen);
#endif
	return -1;
}

void dbg_attach(dbg_store *d, pd_symcache *cache)
{
	if (!d)
		return;
	d->cache = cache;
	if (d->debuginfod || spool_remote(d->sp))
		pd_dso_cache_set_fetch(cache, fetch, d);
}

/* ---- perf archive bundles ------------------------------------------------------ */

/* perf's cache names files .../<build-id>/{elf,debug,kallsyms}: the
 * directory above is the key when it is one. */
static void key_of(const char *name, char hex[DBG_HEX_LEN])
{
	char buf[PATH_MAX], *slash, *parent;

	hex[0] = 0;
	snprintf(buf, sizeof(buf), "%s", name);
	slash = strrchr(buf, '/');
	if (!slash)
		return;
	*slash = 0;
	parent = strrchr(buf, '/');
	parent = parent ? parent + 1 : buf;
	if (dbg_parse_build_id(parent, hex, NULL, NULL) < 0)
		hex[0] = 0;
}

int dbg_import_archive(dbg_store *d, const char *path, uint64_t max_file, uint64_t max_total,
		       void (*on_stored)(void *ctx, const char *hex), void *ctx,
		       unsigned *stored, unsigned *found, char *msg, size_t msglen)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	uint64_t total = 0;
	unsigned entries = 0;
	struct stat bundle;
	int rc = -1, r;

	*stored = *found = 0;
	msg[0] = 0;
	if (!a) {
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	if (stat(path, &bundle) < 0) {
		snprintf(msg, msglen, "the bundle is gone: %s", strerror(errno));
		goto out;
	}
	if (max_total > DBG_ARCHIVE_MAX_TOTAL)
		max_total = DBG_ARCHIVE_MAX_TOTAL;
	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		snprintf(msg, msglen, "not an archive: %s", archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		char tmp[PATH_MAX], hex[DBG_HEX_LEN], got[DBG_HEX_LEN], m[256];
		const char *name = archive_entry_pathname(e);
		int64_t size = archive_entry_size(e);
		uint64_t written = 0;
		int fd, bad = 0, over = 0, arc;

		if (++entries > DBG_ARCHIVE_MAX_ENTRIES) {
			snprintf(msg, msglen, "more than %d entries", DBG_ARCHIVE_MAX_ENTRIES);
			break;
		}
		/* the bundle's .build-id/ links point at the same files */
		if (archive_entry_filetype(e) != AE_IFREG || !name)
			continue;
		if (size < 0 || (uint64_t)size > max_file)
			continue;
		fd = sp_tmp_file(d->sp, "archive", tmp, sizeof(tmp));
		if (fd < 0) {
			snprintf(msg, msglen, "%s: %s", tmp, strerror(errno));
			goto out;
		}
		for (;;) {
			char buf[65536];
			la_ssize_t n = archive_read_data(a, buf, sizeof(buf));

			if (n == 0)
				break;
			if (n > 0 && (total + (uint64_t)n > max_total ||
				      !sp_ratio_ok(total + (uint64_t)n, (uint64_t)bundle.st_size))) {
				bad = over = 1;
				break;
			}
			if (n < 0 || written + (uint64_t)n > max_file ||
			    write(fd, buf, (size_t)n) != n) {
				bad = 1;
				break;
			}
			written += (uint64_t)n;
			total += (uint64_t)n;
		}
		if (!bad)
			bad = fsync(fd) < 0;
		close(fd);
		if (bad) {
			unlink(tmp);
			if (over) {
				snprintf(msg, msglen, "the bundle unpacks to more than %llu bytes or %d"
					 " times its size", (unsigned long long)max_total, SP_MAX_RATIO);
				goto out;
			}
			continue;
		}
		key_of(name, hex);
		arc = dbg_add_file(d, tmp, 1, *hex ? hex : NULL, "archive", got, m, sizeof(m));
		if (arc == DBG_STORED || arc == DBG_EXISTS)
			(*found)++;
		if (arc == DBG_STORED) {
			(*stored)++;
			if (on_stored)
				on_stored(ctx, got);
		}
		if (arc == DBG_ERR_IO) {
			snprintf(msg, msglen, "%s", m);
			goto out;
		}
	}
	if (r != ARCHIVE_EOF && r != ARCHIVE_OK && !msg[0]) {
		snprintf(msg, msglen, "corrupt archive: %s", archive_error_string(a));
		if (!*found)
			goto out;
	}
	rc = 0;
out:
	archive_read_free(a);
	return rc;
}
