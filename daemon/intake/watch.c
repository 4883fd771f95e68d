/* watch.c - the directory watcher: inotify plus a scan at start. */
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

#include "intake/upload.h"
#include "log.h"
#include "intake/spool.h"
#include "intake/watch.h"

#define WATCH_TICK_MS 500
#define WATCH_DIR_STABLE_S 2	/* a directory is complete after this long unchanged */
#define WATCH_MAX_PENDING 256

typedef struct pending_dir {
	char path[PATH_MAX];
	uint64_t fingerprint;	/* sum of sizes and mtimes of its files */
	time_t since;		/* when fingerprint was last seen changing */
} pending_dir;

struct watch {
	const cfg *c;
	st_store *st;
	jobs *j;
	int fd;
	int wd[CFG_MAX_WATCH];
	pthread_t thread;
	atomic_int stop;
	pending_dir pending[WATCH_MAX_PENDING];
	size_t nr_pending;
};

static void take(watch *w, const char *path)
{
	char sha[65], *spooled = NULL;
	const char *kind = "file", *base = strrchr(path, '/');
	uint64_t size = 0;
	int64_t id = 0;
	int existed = 0, rc;

	rc = sp_add_path(jobs_spool(w->j), path, w->c->max_upload, sha, &size, &spooled, &kind);
	if (rc != SP_OK) {
		log_warn("msg=\"watch: cannot spool\" path=\"%s\" error=\"%s\"", path,
			 rc == SP_ERR_TOO_LARGE ? "larger than --max-upload" : strerror(errno));
		return;
	}
	rc = intake_queue(w->st, w->j, w->c->queue_size, sha, spooled, kind, size,
			base ? base + 1 : path, 0, NULL, NULL, &id, &existed);
	if (rc < 0) {
		log_warn("msg=\"watch: cannot queue\" path=\"%s\" error=\"%s\"", path,
			 rc == -2 ? "queue full" : "storage error");
		if (rc == -2)
			sp_remove(jobs_spool(w->j), spooled);
		free(spooled);
		return;
	}
	log_info("msg=\"upload\" source=watch path=\"%s\" id=%lld sha256=%s bytes=%llu duplicate=%d",
		 path, (long long)id, sha, (unsigned long long)size, existed);
	free(spooled);
	if (w->c->watch_remove) {
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			sp_remove_tree(path);
		else
			unlink(path);
	}
}

static uint64_t dir_fingerprint(const char *path, int *has_data)
{
	DIR *d = opendir(path);
	struct dirent *e;
	uint64_t fp = 0;

	*has_data = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char sub[PATH_MAX];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (stat(sub, &st) < 0)
			continue;
		if (!strcmp(e->d_name, "data"))
			*has_data = 1;
		fp = fp * 31 + (uint64_t)st.st_size * 7 + (uint64_t)st.st_mtim.tv_nsec +
		     (uint64_t)st.st_mtim.tv_sec;
	}
	closedir(d);
	return fp;
}

/* perf writes the main file's data size (header offset 48) when it ends
 * the recording: zero means perf record is still running. */
static int dir_finished(const char *path)
{
	char file[PATH_MAX];
	unsigned char h[56];
	uint64_t data_size = 0;
	int fd, ok = 0, i;

	snprintf(file, sizeof(file), "%s/data", path);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (read(fd, h, sizeof(h)) == (ssize_t)sizeof(h) && !memcmp(h, "PERFILE2", 8)) {
		for (i = 0; i < 8; i++)
			data_size |= h[48 + i];	/* either byte order: only zero matters */
		ok = data_size != 0;
	} else if (!memcmp(h, "2ELIFREP", 8)) {
		ok = 1;
	}
	close(fd);
	return ok;
}

static void add_pending(watch *w, const char *path)
{
	size_t i;

	for (i = 0; i < w->nr_pending; i++)
		if (!strcmp(w->pending[i].path, path))
			return;
	if (w->nr_pending >= WATCH_MAX_PENDING) {
		log_warn("msg=\"watch: too many directories pending\" path=\"%s\"", path);
		return;
	}
	snprintf(w->pending[w->nr_pending].path, PATH_MAX, "%s", path);
	w->pending[w->nr_pending].fingerprint = 0;
	w->pending[w->nr_pending].since = 0;
	w->nr_pending++;
}

static void check_pending(watch *w)
{
	time_t now = time(NULL);
	size_t i = 0;

	while (i < w->nr_pending) {
		pending_dir *p = &w->pending[i];
		int has_data;
		uint64_t fp = dir_fingerprint(p->path, &has_data);

		if (fp != p->fingerprint || !p->since) {
			p->fingerprint = fp;
			p->since = now;
		} else if (has_data && now - p->since >= WATCH_DIR_STABLE_S &&
			   dir_finished(p->path)) {
			take(w, p->path);
			*p = w->pending[--w->nr_pending];
			continue;
		}
		i++;
	}
}

static void consider(watch *w, const char *dir, const char *name, int is_dir)
{
	char path[PATH_MAX];

	/* dot files are someone's temporary files */
	if (name[0] == '.')
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (is_dir)
		add_pending(w, path);
	else
		take(w, path);
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
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) < 0)
			continue;
		if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
			consider(w, dir, e->d_name, S_ISDIR(st.st_mode));
	}
	closedir(d);
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
				int is_dir = (ev->mask & IN_ISDIR) != 0;
				/* a file counts once complete; IN_CREATE only for directories */
				int complete = is_dir || (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO));
				for (i = 0; i < w->c->nr_watch; i++)
					if (w->wd[i] == ev->wd && ev->len && complete)
						consider(w, w->c->watch[i], ev->name, is_dir);
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
	if (!w)
		return NULL;
	w->c = c;
	w->st = st;
	w->j = j;
	atomic_init(&w->stop, 0);
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		log_warn("msg=\"inotify\" error=\"%s\"", strerror(errno));
		free(w);
		return NULL;
	}
	for (i = 0; i < c->nr_watch; i++) {
		/* complete files: closed after writing, or moved in; new directories */
		w->wd[i] = inotify_add_watch(w->fd, c->watch[i],
					     IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ONLYDIR);
		if (w->wd[i] < 0)
			log_warn("msg=\"watch: cannot watch\" dir=\"%s\" error=\"%s\"", c->watch[i],
				 strerror(errno));
		else
			log_info("msg=\"watching\" dir=\"%s\"", c->watch[i]);
	}
	if (pthread_create(&w->thread, NULL, run, w) != 0) {
		close(w->fd);
		free(w);
		return NULL;
	}
	return w;
}

void watch_stop(watch *w)
{
	if (!w)
		return;
	atomic_store(&w->stop, 1);
	pthread_join(w->thread, NULL);
	close(w->fd);
	free(w);
}
