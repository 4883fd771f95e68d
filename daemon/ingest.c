/* ingest.c - a recording's records into the store's rows. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ingest.h"
#include "log.h"
#include "perfdata.h"
#include "report.h"
#include "spool.h"
#include "tar.h"

#define ING_MAX_FRAMES 1024	/* frames kept per sample (perf's default max-stack is 127) */
#define ING_CHECK_STOP 4096	/* records between looks at the stop flag */
#define ING_MAX_MAPS_PER_PID 65536

/* ---- threads: the comm of each tid over time ---------------------------- */

typedef struct thread {
	uint32_t tid, pid;
	uint32_t comm;		/* string id in the store */
	struct thread *next;
} thread;

#define THREAD_BUCKETS 4096

typedef struct threads {
	thread *b[THREAD_BUCKETS];
} threads;

static thread *thread_get(threads *t, uint32_t tid, int create)
{
	thread **pp = &t->b[tid % THREAD_BUCKETS], *th;

	for (th = *pp; th; th = th->next)
		if (th->tid == tid)
			return th;
	if (!create || !(th = calloc(1, sizeof(*th))))
		return NULL;
	th->tid = tid;
	th->next = *pp;
	*pp = th;
	return th;
}

static void threads_free(threads *t)
{
	size_t i;

	for (i = 0; i < THREAD_BUCKETS; i++)
		while (t->b[i]) {
			thread *n = t->b[i]->next;
			free(t->b[i]);
			t->b[i] = n;
		}
}

/* ---- the symbolization seam ---------------------------------------------- */

/* Address spaces as MMAP/MMAP2 describe them: enough to name a frame's DSO.
 * The full symbolizer (ELF symbols, kallsyms, JIT maps) replaces this. */
typedef struct map {
	uint64_t start, end;
	uint32_t frame;		/* the store's frame for "[x.so]" */
} map;

typedef struct space {
	uint32_t pid;
	map *maps;
	size_t n, cap;
	struct space *next;
} space;

typedef struct ing_symbolizer {
	space *b[THREAD_BUCKETS];
} ing_symbolizer;

static space *space_get(ing_symbolizer *s, uint32_t pid, int create)
{
	space **pp = &s->b[pid % THREAD_BUCKETS], *sp;

	for (sp = *pp; sp; sp = sp->next)
		if (sp->pid == pid)
			return sp;
	if (!create || !(sp = calloc(1, sizeof(*sp))))
		return NULL;
	sp->pid = pid;
	sp->next = *pp;
	*pp = sp;
	return sp;
}

static void sym_add_map(ing_symbolizer *s, uint32_t pid, uint64_t start, uint64_t len, uint32_t frame)
{
	space *sp = space_get(s, pid, 1);
	size_t i, j;

	if (!sp || !len || start + len < start)
		return;
	/* a new mapping replaces whatever overlapped it */
	for (i = j = 0; i < sp->n; i++)
		if (sp->maps[i].end <= start || sp->maps[i].start >= start + len)
			sp->maps[j++] = sp->maps[i];
	sp->n = j;
	if (sp->n == sp->cap) {
		map *m;
		if (sp->cap >= ING_MAX_MAPS_PER_PID)
			return;
		m = realloc(sp->maps, (sp->cap = sp->cap ? 2 * sp->cap : 16) * sizeof(*m));
		if (!m)
			return;
		sp->maps = m;
	}
	sp->maps[sp->n++] = (map){ start, start + len, frame };
}

static uint32_t sym_frame(ing_symbolizer *s, uint32_t pid, uint64_t ip, int kernel)
{
	space *sp = space_get(s, kernel ? UINT32_MAX : pid, 0);
	size_t i;

	if (!sp)
		return 0;
	for (i = sp->n; i--;)
		if (ip >= sp->maps[i].start && ip < sp->maps[i].end)
			return sp->maps[i].frame;
	return 0;
}

static void sym_free(ing_symbolizer *s)
{
	size_t i;

	for (i = 0; i < THREAD_BUCKETS; i++)
		while (s->b[i]) {
			space *n = s->b[i]->next;
			free(s->b[i]->maps);
			free(s->b[i]);
			s->b[i] = n;
		}
}

/* "[libc.so.6]" for /usr/lib/x86_64-linux-gnu/libc.so.6, as stackcollapse-perf
 * names a frame perf could not resolve; "[kernel.kallsyms]" stays as it is. */
static void dso_label(const char *filename, char *out, size_t len)
{
	const char *base = strrchr(filename, '/');

	base = base ? base + 1 : filename;
	/* the kernel's map is "[kernel.kallsyms]_text"; perf names its DSO without the suffix */
	if (!strncmp(filename, "[kernel.kallsyms]", 17))
		snprintf(out, len, "[kernel.kallsyms]");
	else if (base[0] == '[')
		snprintf(out, len, "%s", base);
	else
		snprintf(out, len, "[%s]", base);
	for (char *p = out; *p; p++)
		if (*p == ';')
			*p = ':';
}

/* ---- the ingest ------------------------------------------------------------ */

typedef struct ingest {
	st_writer *w;
	threads threads;
	ing_symbolizer sym;
	uint32_t unknown_frame;	/* "[unknown]" */
	uint64_t samples, resolved_samples;
} ingest;

static uint32_t thread_comm(ingest *in, uint32_t tid)
{
	thread *th = thread_get(&in->threads, tid, 0);
	char name[32];

	if (th && th->comm)
		return th->comm;
	/* perf shows a thread it never saw a COMM for as ":TID" */
	snprintf(name, sizeof(name), ":%u", tid);
	return st_writer_string(in->w, name);
}

static int on_sample(ingest *in, const pd_record *r)
{
	const pd_sample *s = &r->u.sample;
	int kernel = (r->misc & PD_MISC_CPUMODE_MASK) == PD_MISC_KERNEL;
	uint32_t frames[ING_MAX_FRAMES];
	size_t n = 0, i;
	uint32_t node = 0;
	int all_named = 1;
	st_sample row;

	if (s->fields & PD_SAMPLE_CALLCHAIN) {
		for (i = 0; i < s->nr_callchain && n < ING_MAX_FRAMES; i++) {
			uint64_t ip = s->callchain[i];
			if (ip >= PD_CONTEXT_MAX) {
				kernel = ip == PD_CONTEXT_KERNEL;
				continue;
			}
			frames[n++] = sym_frame(&in->sym, s->pid, ip, kernel);
		}
	} else if (s->fields & PD_SAMPLE_IP) {
		frames[n++] = sym_frame(&in->sym, s->pid, s->ip, kernel);
	}
	/* callchains are leaf first; the tree is outermost first */
	for (i = n; i--;) {
		uint32_t fid = frames[i] ? frames[i] : in->unknown_frame;
		/* the DSO-only fallback names no function */
		all_named = 0;
		node = st_writer_stack(in->w, node, fid);
		if (!node)
			return -1;
	}
	memset(&row, 0, sizeof(row));
	row.event = s->event ? s->event->index : 0;
	row.time = s->time;
	row.cpu = s->cpu;
	row.pid = s->pid;
	row.tid = s->tid;
	row.period = s->period;
	row.weight = s->weight;
	row.stack = node;
	row.comm = thread_comm(in, s->tid);
	in->samples++;
	if (all_named)
		in->resolved_samples++;
	return st_writer_sample(in->w, &row);
}

static int on_mmap(ingest *in, const pd_record *r)
{
	const pd_mmap *m = &r->u.mmap;
	char label[PATH_MAX + 3], bid[41] = "";
	uint64_t time = r->has_sample_id ? r->sample_id.time : 0;
	int kernel = (r->misc & PD_MISC_CPUMODE_MASK) == PD_MISC_KERNEL;
	const char *fn = m->filename ? m->filename : "";
	uint32_t frame;
	unsigned i;

	for (i = 0; i < m->build_id_size && i < 20; i++)
		snprintf(bid + 2 * i, 3, "%02x", m->build_id[i]);
	if (st_writer_mmap(in->w, m->pid, m->start, m->len, m->pgoff, fn, bid[0] ? bid : NULL,
			   time) < 0)
		return -1;
	dso_label(fn, label, sizeof(label));
	frame = st_writer_frame(in->w, label, fn, 0);
	if (!frame)
		return -1;
	/* kernel maps (pid -1) form one address space shared by all */
	sym_add_map(&in->sym, kernel || m->pid == UINT32_MAX ? UINT32_MAX : m->pid, m->start,
		    m->len, frame);
	return 0;
}

static int on_comm(ingest *in, const pd_record *r)
{
	const pd_comm *c = &r->u.comm;
	thread *th = thread_get(&in->threads, c->tid, 1);
	const char *name = c->comm ? c->comm : "";

	if (!th)
		return -1;
	th->pid = c->pid;
	th->comm = st_writer_string(in->w, name);
	return st_writer_comm(in->w, c->pid, c->tid, r->has_sample_id ? r->sample_id.time : 0, name);
}

static int on_fork(ingest *in, const pd_record *r)
{
	const pd_task *t = &r->u.task;
	thread *parent = thread_get(&in->threads, t->ptid, 0);
	thread *child;

	/* a new thread carries its parent's comm until it sets its own */
	if (!parent || !parent->comm)
		return 0;
	child = thread_get(&in->threads, t->tid, 1);
	if (!child)
		return -1;
	child->pid = t->pid;
	child->comm = parent->comm;
	return 0;
}

static char *dump(const json_t *j)
{
	return j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

/* Events, features and record counts as rows; the report's parts as JSON. */
static int write_summary(ingest *in, pd_file *f, int64_t parse_ms, uint64_t *samples)
{
	json_t *rep = report_json(f);
	json_t *header, *events, *records, *spe, *feats, *v;
	const char *key;
	st_summary sum;
	char *h = NULL, *e = NULL, *rc = NULL, *sp = NULL;
	size_t i;
	int ret = -1;

	if (!rep)
		return -1;
	header = json_object_get(rep, "header");
	events = json_object_get(rep, "events");
	records = json_object_get(rep, "records");
	spe = json_object_get(rep, "samples_per_event");
	feats = json_object_get(header, "features");
	json_object_foreach(feats, key, v) {
		char *t = dump(v);
		int bad = !t || st_writer_feature(in->w, key, t) < 0;
		free(t);
		if (bad)
			goto out;
	}
	json_object_foreach(records, key, v)
		if (st_writer_record_count(in->w, key, (uint64_t)json_integer_value(v)) < 0)
			goto out;
	for (i = 0; i < pd_nr_events(f); i++) {
		const pd_event *ev = pd_get_event(f, i);
		int freq = (ev->attr.flags & PD_ATTR_FREQ) != 0;
		if (st_writer_event(in->w, ev->index, ev->name, ev->attr.type, ev->attr.config,
				    ev->attr.sample_type, ev->attr.sample_period, freq,
				    ev->nr_samples) < 0)
			goto out;
	}
	h = dump(header);
	e = dump(events);
	rc = dump(records);
	sp = dump(spe);
	memset(&sum, 0, sizeof(sum));
	sum.hostname = pd_get_header(f)->hostname;
	sum.first_ns = pd_get_stats(f)->first_time;
	sum.last_ns = pd_get_stats(f)->last_time;
	sum.nr_samples = in->samples;
	sum.symbolized_pct = in->samples ? 100.0 * (double)in->resolved_samples /
						   (double)in->samples : 100.0;
	sum.parse_ms = parse_ms;
	sum.header = h;
	sum.events = e;
	sum.records = rc;
	sum.samples_per_event = sp;
	v = json_object_get(rep, "lost");
	sum.lost = (uint64_t)json_integer_value(v);
	*samples = in->samples;
	ret = st_writer_finish(in->w, &sum);
	in->w = NULL;
out:
	free(h);
	free(e);
	free(rc);
	free(sp);
	json_decref(rep);
	return ret;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* SPOOL/<sha>.tar -> SPOOL/<sha>.d/, unpacked once (a temporary name first,
 * so a crash never leaves a half-unpacked directory under the final name). */
static int unpack(const char *tar, uint64_t max_bytes, char *dir, size_t dirlen, char *err,
		  size_t errlen)
{
	char tmp[PATH_MAX + 16];
	struct stat st;
	size_t n = strlen(tar);

	if (n > 4 && !strcmp(tar + n - 4, ".tar"))
		n -= 4;
	snprintf(dir, dirlen, "%.*s.d", (int)n, tar);
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", dir);
	sp_remove_tree(tmp);
	if (tar_extract(tar, tmp, max_bytes, err, errlen) < 0) {
		sp_remove_tree(tmp);
		return -1;
	}
	if (rename(tmp, dir) < 0) {
		snprintf(err, errlen, "%.200s: %s", dir, strerror(errno));
		sp_remove_tree(tmp);
		return -1;
	}
	return 0;
}

void ingest_profile(st_store *st, int64_t id, const char *path, const char *kind,
		    uint64_t max_bytes, atomic_int *stop, ing_result *res)
{
	pd_options opt = { .ordered = 1 };
	ingest in;
	pd_error err;
	pd_record r;
	pd_file *f = NULL;
	char dir[PATH_MAX];
	const char *open_path = path;
	int64_t t0 = now_ms();
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&in, 0, sizeof(in));
	res->offset = -1;
	if (!strcmp(kind, "tar")) {
		if (unpack(path, max_bytes, dir, sizeof(dir), res->msg, sizeof(res->msg)) < 0)
			return;
		open_path = dir;
	}
	f = pd_open_path(open_path, &opt, &err);
	if (!f)
		goto parse_error;
	in.w = st_writer_begin(st, id);
	if (!in.w) {
		snprintf(res->msg, sizeof(res->msg), "storage error while writing the profile");
		goto out;
	}
	in.unknown_frame = st_writer_frame(in.w, "[unknown]", NULL, 0);
	while ((rc = pd_next(f, &r, &err)) > 0) {
		int wrc = 0;

		res->records++;
		if (res->records % ING_CHECK_STOP == 0 && atomic_load(stop)) {
			res->cancelled = 1;
			snprintf(res->msg, sizeof(res->msg), "shutting down");
			goto out;
		}
		switch (r.type) {
		case PD_RECORD_SAMPLE:
			wrc = on_sample(&in, &r);
			break;
		case PD_RECORD_MMAP:
		case PD_RECORD_MMAP2:
			wrc = on_mmap(&in, &r);
			break;
		case PD_RECORD_COMM:
			wrc = on_comm(&in, &r);
			break;
		case PD_RECORD_FORK:
			wrc = on_fork(&in, &r);
			break;
		default:
			break;
		}
		if (wrc < 0) {
			snprintf(res->msg, sizeof(res->msg), "storage error while writing the profile");
			goto out;
		}
	}
	if (rc < 0)
		goto parse_error;
	if (write_summary(&in, f, now_ms() - t0, &res->samples) < 0) {
		snprintf(res->msg, sizeof(res->msg), "storage error while writing the profile");
		goto out;
	}
	res->ok = 1;
	goto out;
parse_error:
	pd_strerror(&err, res->msg, sizeof(res->msg));
	res->offset = (int64_t)err.offset;
out:
	st_writer_abort(in.w);
	pd_close(f);
	threads_free(&in.threads);
	sym_free(&in.sym);
}
