/* watch.c - the directory watcher: inotify plus a scan at start, and a tick
 * that takes each pending file or directory once it is complete. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "intake/labels.h"
#include "intake/upload.h"
#include "log.h"
#include "intake/spool.h"
#include "intake/watch.h"

#define WATCH_TICK_MS 500
#define WATCH_DIR_STABLE_S 2	/* a directory is complete after this long unchanged */
#define WATCH_SETTLE_S 2	/* a file closed after writing, unchanged this long, is complete */
#define WATCH_UNFINISHED_S 60	/* a file never seen closed, unchanged this long, is taken */
#define WATCH_RETRY_MAX_S 60	/* longest wait before an unreadable file is tried again */
#define WATCH_MAX_PENDING 256	/* directories waiting */
#define WATCH_MAX_FILES 1024	/* files waiting */
#define PERF_HEADER_SIZE 104	/* perf_file_header of PERFILE2 */
#define PERF_MAX_FEATURES 256

/* What a file's first bytes say about its being complete. */
enum file_state {
	FS_COMPLETE,	/* file mode, data size set, every section there */
	FS_INCOMPLETE,	/* file mode, data size set, bytes still missing */
	FS_UNFINISHED,	/* file mode, data size 0: perf record runs, or was killed */
	FS_OTHER,	/* pipe mode or not a perf.data: its bytes cannot tell */
	FS_UNREADABLE,	/* open or read refused (errno kept) */
};

/* What was seen of a file since it last changed (pending.seen). */
#define SEEN_CLOSED 1		/* closed after writing */
#define SEEN_MOVED 2		/* moved in: written elsewhere, renamed complete */

typedef struct pending {
	char *path;
	int is_dir;
	uint64_t fingerprint;	/* size and mtime (of every file, for a directory) */
	time_t since;		/* when fingerprint was last seen changing */
	int seen;		/* SEEN_* since the last change */
	time_t next_try;	/* unreadable: not tried again before */
	unsigned backoff;	/* seconds of the last wait; 0 while readable */
} pending;

struct watch {
	const cfg *c;
	st_store *st;
	jobs *j;
	int fd;
	int wd[CFG_MAX_WATCH];
	pthread_t thread;
	atomic_int stop;
	pending *pend;		/* WATCH_MAX_PENDING + WATCH_MAX_FILES */
	size_t nr_pend, nr_dirs;
};

static uint64_t load64(const unsigned char *p, int swap)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v |= (uint64_t)p[swap ? 7 - i : i] << (8 * i);
	return v;
}

/*
 * Whether the perf.data at fd (size bytes) is all there: perf writes its
 * data size and feature table last, so a file-mode recording is complete
 * once the header has a data size and the file holds the data and every
 * feature section the table lists.
 */
static int perf_file_state(int fd, uint64_t size)
{
	unsigned char h[PERF_HEADER_SIZE], t[16];
	uint64_t hsize, d_off, d_size, end, bits[4];
	int swap, i, n = 0;

	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return errno == EACCES ? FS_UNREADABLE : FS_OTHER;
	if (!memcmp(h, "PERFILE2", 8))
		swap = 0;
	else if (!memcmp(h, "2ELIFREP", 8))
		swap = 1;
	else
		return FS_OTHER;
	hsize = load64(h + 8, swap);
	if (hsize != PERF_HEADER_SIZE)
		return FS_OTHER;	/* pipe mode (16) or a header we do not know */
	d_off = load64(h + 40, swap);
	d_size = load64(h + 48, swap);
	if (!d_size)
		return FS_UNFINISHED;
	if (d_off > size || d_size > size - d_off)
		return FS_INCOMPLETE;
	for (i = 0; i < 4; i++)
		bits[i] = load64(h + 72 + 8 * i, swap);
	end = d_off + d_size;
	for (i = 0; i < PERF_MAX_FEATURES; i++) {
		uint64_t at = d_off + d_size + 16 * (uint64_t)n, s_off, s_size;

		if (!(bits[i / 64] >> (i % 64) & 1))
			continue;
		n++;
		if (at + 16 > size || pread(fd, t, sizeof(t), (off_t)at) != (ssize_t)sizeof(t))
			return FS_INCOMPLETE;
		s_off = load64(t, swap);
		s_size = load64(t + 8, swap);
		if (at + 16 > end)
			end = at + 16;
		if (s_off <= UINT64_MAX - s_size && s_off + s_size > end)
			end = s_off + s_size;
	}
	return end <= size ? FS_COMPLETE : FS_INCOMPLETE;
}

/* The state of a watched file, or of a directory's main data file. */
static int path_state(const char *path, int is_dir, uint64_t *size)
{
	char file[PATH_MAX];
	struct stat st;
	int fd, state;

	snprintf(file, sizeof(file), "%s%s", path, is_dir ? "/data" : "");
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == EACCES || errno == EPERM ? FS_UNREADABLE : FS_OTHER;
	state = fstat(fd, &st) < 0 ? FS_OTHER : perf_file_state(fd, (uint64_t)st.st_size);
	if (size)
		*size = (uint64_t)st.st_size;
	close(fd);
	if (state != FS_UNREADABLE && is_dir) {
		DIR *d = opendir(path);	/* its other files are read too */
		if (!d)
			return FS_UNREADABLE;
		closedir(d);
	}
	return state;
}

/* Sizes and mtimes: what changes while something writes. For a directory,
 * of every file in it (when it can be read). 0 when it is gone. */
static uint64_t fingerprint(const char *path, int is_dir)
{
	struct stat st;
	struct dirent *e;
	uint64_t fp;
	DIR *d;

	if (lstat(path, &st) < 0)
		return 0;
	fp = (uint64_t)st.st_size * 7 + (uint64_t)st.st_mtim.tv_nsec +
	     (uint64_t)st.st_mtim.tv_sec * 1000003u + 1;
	if (!is_dir || !(d = opendir(path)))
		return fp;
	while ((e = readdir(d))) {
		char sub[PATH_MAX];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (stat(sub, &st) < 0)
			continue;
		fp = fp * 31 + (uint64_t)st.st_size * 7 + (uint64_t)st.st_mtim.tv_nsec +
		     (uint64_t)st.st_mtim.tv_sec;
	}
	closedir(d);
	return fp;
}

/* Spools and queues it. 0 done (or given up, logged), -1 unreadable. */
static int take(watch *w, const char *path)
{
	char sha[65], why[160], *spooled = NULL;
	const char *kind = "file", *base = strrchr(path, '/');
	uint64_t size = 0;
	int64_t id = 0;
	int existed = 0, rc;
	char q[LOG_Q_MAX];

	log_q(q, sizeof(q), path);	/* a file name may hold quotes */
	rc = sp_add_path(jobs_spool(w->j), path, w->c->max_upload, sha, &size, &spooled, &kind);
	if (rc != SP_OK) {
		if (rc != SP_ERR_TOO_LARGE && access(path, R_OK) < 0 && errno == EACCES)
			return -1;
		log_warn("msg=\"watch: cannot spool\" path=\"%s\" error=\"%s\"", q,
			 rc == SP_ERR_TOO_LARGE ? "larger than --max-upload" : strerror(errno));
		return 0;
	}
	/* the file's name names the profile, when it is a name the API takes */
	base = base ? base + 1 : path;
	if (intake_check_label(INTAKE_NAME, base, why, sizeof(why)) < 0) {
		log_warn("msg=\"watch: file name is no profile name\" path=\"%s\" why=\"%s\"",
			 q, why);
		base = NULL;
	}
	rc = intake_queue(w->st, w->j, w->c->queue_size, sha, spooled, kind, size, base, 0, NULL,
			  NULL, 1, &id, &existed);
	if (rc < 0) {
		log_warn("msg=\"watch: cannot queue\" path=\"%s\" error=\"%s\"", q,
			 rc == -2 ? "queue full" : "storage error");
		if (rc == -2)
			sp_remove(jobs_spool(w->j), spooled);
		free(spooled);
		return 0;
	}
	log_info("msg=\"upload\" source=watch path=\"%s\" id=%lld sha256=%s bytes=%llu duplicate=%d",
		 q, (long long)id, sha, (unsigned long long)size, existed != 0);
	free(spooled);
	if (w->c->watch_remove) {
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			sp_remove_tree(path);
		else if (unlink(path) < 0)
			log_warn("msg=\"watch: cannot remove\" path=\"%s\" error=\"%s\"%s", q,
				 strerror(errno), errno == EROFS ? " hint=\"under systemd the unit "
				 "needs ReadWritePaths= naming the watched directory\"" : "");
	}
	return 0;
}

static pending *find(watch *w, const char *path)
{
	size_t i;

	for (i = 0; i < w->nr_pend; i++)
		if (!strcmp(w->pend[i].path, path))
			return &w->pend[i];
	return NULL;
}

/* A file or directory to take once complete; `seen` what was just seen
 * of it (SEEN_*). */
static void note(watch *w, const char *path, int is_dir, int seen)
{
	pending *p = find(w, path);
	struct stat st;
	time_t now = time(NULL);
	char *copy;

	if (p) {
		uint64_t fp = fingerprint(path, is_dir);
		if (fp != p->fingerprint) {
			p->fingerprint = fp;
			p->since = now;
		}
		p->seen |= seen;
		p->next_try = 0;	/* written, closed or chmod'ed: try now */
		return;
	}
	if (is_dir ? w->nr_dirs >= WATCH_MAX_PENDING : w->nr_pend - w->nr_dirs >= WATCH_MAX_FILES) {
		log_warn("msg=\"watch: too many %s pending\" path=\"%s\"",
			 is_dir ? "directories" : "files", path);
		return;
	}
	if (!(copy = strdup(path)))
		return;
	p = &w->pend[w->nr_pend++];
	memset(p, 0, sizeof(*p));
	p->path = copy;
	p->is_dir = is_dir;
	p->seen = seen;
	p->fingerprint = fingerprint(path, is_dir);
	/* unchanged since its last write: a file found at start may be old */
	p->since = now;
	if (!is_dir && lstat(path, &st) == 0 && st.st_mtime < now)
		p->since = st.st_mtime;
	w->nr_dirs += is_dir;
}

static void drop(watch *w, pending *p)
{
	w->nr_dirs -= p->is_dir;
	free(p->path);
	*p = w->pend[--w->nr_pend];
}

/* Whether pending p is complete now: never half a recording. A file-mode
 * perf.data says so itself (data size and every section there); a file
 * moved in was written elsewhere; else it must be closed after writing and
 * unchanged for a while, or, never seen closed (found at start, a writer
 * that died), unchanged for a long while. A directory is complete when
 * unchanged and its data file says so (or after a long while: perf record
 * --threads killed). */
static int complete(const pending *p, int state, time_t now)
{
	time_t quiet = now - p->since;

	if (p->is_dir)
		return (quiet >= WATCH_DIR_STABLE_S && state == FS_COMPLETE) ||
		       quiet >= WATCH_UNFINISHED_S;
	if (state == FS_COMPLETE)
		return 1;
	if (state != FS_INCOMPLETE && (p->seen & SEEN_MOVED))
		return 1;
	if (state != FS_INCOMPLETE && (p->seen & SEEN_CLOSED) && quiet >= WATCH_SETTLE_S)
		return 1;
	return quiet >= WATCH_UNFINISHED_S;
}

/* An unreadable one is tried again later, each wait twice the last (at
 * most WATCH_RETRY_MAX_S), and at once when it changes (a chmod). */
static void retry_later(pending *p, time_t now)
{
	if (!p->backoff)
		log_warn("msg=\"watch: cannot read, trying again later\" path=\"%s\" error=\"%s\""
			 " hint=\"make it readable by perfhubd's user (docs/service.md)\"",
			 p->path, strerror(EACCES));
	else
		log_debug("msg=\"watch: still unreadable\" path=\"%s\"", p->path);
	p->backoff = p->backoff ? p->backoff * 2 : 1;
	if (p->backoff > WATCH_RETRY_MAX_S)
		p->backoff = WATCH_RETRY_MAX_S;
	p->next_try = now + (time_t)p->backoff;
}

static void check_pending(watch *w)
{
	time_t now = time(NULL);
	size_t i = 0;

	while (i < w->nr_pend) {
		pending *p = &w->pend[i];
		uint64_t fp = fingerprint(p->path, p->is_dir);
		int state;

		if (!fp) {
			drop(w, p);	/* gone (renamed, removed) */
			continue;
		}
		if (fp != p->fingerprint) {
			p->fingerprint = fp;
			p->since = now;
			p->seen = 0;	/* written again: a close comes later */
		}
		if (now < p->next_try) {
			i++;
			continue;
		}
		state = path_state(p->path, p->is_dir, NULL);
		if (state == FS_UNREADABLE) {
			retry_later(p, now);
			i++;
			continue;
		}
		if (!complete(p, state, now)) {
			i++;
			continue;
		}
		if (p->backoff)
			log_info("msg=\"watch: readable now\" path=\"%s\"", p->path);
		if (take(w, p->path) < 0) {
			retry_later(p, now);
			i++;
			continue;
		}
		drop(w, p);
	}
}

static void scan(watch *w, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d) {
		log_warn("msg=\"watch: cannot read\" dir=\"%s\" error=\"%s\"", dir, strerror(errno));
		return;
	}
	while ((e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;
		/* dot files are someone's temporary files */
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) < 0)
			continue;
		if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
			note(w, path, S_ISDIR(st.st_mode), 0);
	}
	closedir(d);
}

static void on_event(watch *w, const struct inotify_event *ev)
{
	int is_dir = (ev->mask & IN_ISDIR) != 0;
	char path[PATH_MAX];
	unsigned i;

	if (!ev->len || ev->name[0] == '.')
		return;
	for (i = 0; i < w->c->nr_watch; i++) {
		if (w->wd[i] != ev->wd)
			continue;
		snprintf(path, sizeof(path), "%s/%s", w->c->watch[i], ev->name);
		if (is_dir && (ev->mask & (IN_CREATE | IN_MOVED_TO)))
			note(w, path, 1, 0);
		else if (!is_dir && (ev->mask & IN_MOVED_TO))
			note(w, path, 0, SEEN_MOVED);
		else if (!is_dir && (ev->mask & IN_CLOSE_WRITE))
			note(w, path, 0, SEEN_CLOSED);
		else if ((ev->mask & IN_ATTRIB) && find(w, path))
			note(w, path, is_dir, 0);	/* a chmod: an unreadable one is tried now */
	}
}

static void *run(void *arg)
{
	watch *w = arg;
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	unsigned i;

	for (i = 0; i < w->c->nr_watch; i++)
		scan(w, w->c->watch[i]);
	while (!atomic_load(&w->stop)) {
		struct pollfd pfd = { w->fd, POLLIN, 0 };
		int n = poll(&pfd, 1, WATCH_TICK_MS);

		if (n > 0) {
			ssize_t len = read(w->fd, buf, sizeof(buf));
			char *p;

			for (p = buf; len > 0 && p < buf + len;) {
				struct inotify_event *ev = (struct inotify_event *)p;
				on_event(w, ev);
				p += sizeof(*ev) + ev->len;
			}
		}
		check_pending(w);
	}
	return NULL;
}

watch *watch_start(const cfg *c, st_store *st, jobs *j)
{
	watch *w;
	unsigned i;

	if (!c->nr_watch)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->pend = calloc(WATCH_MAX_PENDING + WATCH_MAX_FILES, sizeof(*w->pend)))) {
		free(w);
		return NULL;
	}
	w->c = c;
	w->st = st;
	w->j = j;
	atomic_init(&w->stop, 0);
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		log_warn("msg=\"inotify\" error=\"%s\"", strerror(errno));
		free(w->pend);
		free(w);
		return NULL;
	}
	for (i = 0; i < c->nr_watch; i++) {
		/* closed after writing, moved in, new directories, chmod */
		w->wd[i] = inotify_add_watch(w->fd, c->watch[i], IN_CLOSE_WRITE | IN_MOVED_TO |
					     IN_CREATE | IN_ATTRIB | IN_ONLYDIR);
		if (w->wd[i] < 0)
			log_warn("msg=\"watch: cannot watch\" dir=\"%s\" error=\"%s\"", c->watch[i],
				 strerror(errno));
		else
			log_info("msg=\"watching\" dir=\"%s\"", c->watch[i]);
		if (c->watch_remove && access(c->watch[i], W_OK) < 0)
			log_warn("msg=\"watch: --watch-remove cannot remove files here\" dir=\"%s\""
				 " error=\"%s\"%s", c->watch[i], strerror(errno), errno == EROFS ?
				 " hint=\"under systemd the unit needs ReadWritePaths= naming it\"" : "");
	}
	if (pthread_create(&w->thread, NULL, run, w) != 0) {
		close(w->fd);
		free(w->pend);
		free(w);
		return NULL;
	}
	return w;
}

void watch_stop(watch *w)
{
	size_t i;

	if (!w)
		return;
	atomic_store(&w->stop, 1);
	pthread_join(w->thread, NULL);
	close(w->fd);
	for (i = 0; i < w->nr_pend; i++)
		free(w->pend[i].path);
	free(w->pend);
	free(w);
}
