/*
 * unwind-walk: unwind every --call-graph dwarf sample of a recording with
 * the parser and the unwinder, and print the stacks for comparison with
 * `perf script -F tid,time,ip,sym --ns`.
 *
 *   unwind-walk FILE		one block per sample:
 *				  "S <tid> <time_ns> <nframes>"
 *				  "<map-relative ip hex> <symbol|[unknown]> <dso basename|[unknown]>"
 *   unwind-walk --bench FILE	unwinding throughput only (samples/s)
 *   unwind-walk --exact ...	every walk with libdwfl (no cached CFI rows)
 *   unwind-walk --compare FILE	each sample unwound both ways: exit 1 and
 *				the first differences when any frame differs
 *
 * The map table is the simplest one that serves the test: MMAP/MMAP2
 * records per process (a new mapping replaces what it overlaps), copied
 * on FORK, dropped on exec.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "perfdata.h"
#include "unwind.h"

#define MAX_FRAMES	256

struct map {
	uint64_t start, end, pgoff;
	char *path;
	uint8_t build_id[20];
	size_t build_id_size;
};

struct proc {
	uint32_t pid;
	struct map *maps;
	size_t nr, cap;
	uint64_t stamp;		/* changed with the maps (unwind_input.maps_stamp) */
};

static uint64_t stamps;

struct table {
	struct proc *procs;
	size_t nr, cap;
};

static struct proc *
proc_get(struct table *t, uint32_t pid, int create)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	if (!create)
		return NULL;
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct proc *n = realloc(t->procs, cap * sizeof(*n));
		if (n == NULL)
			return NULL;
		t->procs = n;
		t->cap = cap;
	}
	struct proc *p = &t->procs[t->nr++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->stamp = ++stamps;
	return p;
}

static void
proc_clear(struct proc *p)
{
	for (size_t i = 0; i < p->nr; i++)
		free(p->maps[i].path);
	p->nr = 0;
	p->stamp = ++stamps;
}

static int
proc_add(struct proc *p, const struct map *m)
{
	p->stamp = ++stamps;
	/* drop what the new mapping overlaps (good enough for the test) */
	for (size_t i = 0; i < p->nr;) {
		if (p->maps[i].start < m->end && m->start < p->maps[i].end) {
			free(p->maps[i].path);
			p->maps[i] = p->maps[--p->nr];
		} else {
			i++;
		}
	}
	if (p->nr == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct map *n = realloc(p->maps, cap * sizeof(*n));
		if (n == NULL)
			return -1;
		p->maps = n;
		p->cap = cap;
	}
	p->maps[p->nr] = *m;
	p->maps[p->nr].path = strdup(m->path);
	if (p->maps[p->nr].path == NULL)
		return -1;
	p->nr++;
	return 0;
}

static const struct map *
map_find(struct table *t, uint32_t pid, uint64_t addr)
{
	struct proc *p = proc_get(t, pid, 0);
	if (p == NULL)
		return NULL;
	for (size_t i = 0; i < p->nr; i++)
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

static int
find_map_cb(void *ctx, uint32_t pid, uint64_t addr, unwind_map *out)
{
	const struct map *m = map_find(ctx, pid, addr);
	if (m == NULL)
		return 0;
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	out->path = m->path;
	out->build_id = m->build_id_size ? m->build_id : NULL;
	out->build_id_size = m->build_id_size;
	return 1;
}

/* The build-id the recording saw for a file: the MMAP2 record's, else
 * the BUILD_ID feature's entry for that file name. A file on this machine
 * with another build-id is then not used for unwinding. */
static const pd_build_id *
header_build_id(const pd_header *h, const char *filename)
{
	for (size_t i = 0; h && i < h->nr_build_ids; i++)
		if (h->build_ids[i].filename &&
		    strcmp(h->build_ids[i].filename, filename) == 0)
			return &h->build_ids[i];
	return NULL;
}

static void
on_mmap(struct table *t, const pd_header *h, const pd_record *r)
{
	const pd_mmap *mm = &r->u.mmap;
	if (mm->len == 0 || mm->start + mm->len < mm->start || !mm->filename)
		return;
	struct proc *p = proc_get(t, mm->pid, 1);
	if (p == NULL)
		return;
	struct map m = {
		.start = mm->start, .end = mm->start + mm->len,
		.pgoff = mm->pgoff, .path = (char *)mm->filename,
	};
	const pd_build_id *hb;
	if (mm->build_id_size > 0 && mm->build_id_size <= 20) {
		memcpy(m.build_id, mm->build_id, mm->build_id_size);
		m.build_id_size = mm->build_id_size;
	} else if ((hb = header_build_id(h, mm->filename)) != NULL &&
		   hb->size > 0 && hb->size <= 20) {
		memcpy(m.build_id, hb->build_id, hb->size);
		m.build_id_size = hb->size;
	}
	proc_add(p, &m);
}

static void
on_fork(struct table *t, const pd_record *r)
{
	const pd_task *tk = &r->u.task;
	if (tk->pid == tk->ppid)
		return;		/* a new thread shares its process's maps */
	struct proc *child = proc_get(t, tk->pid, 1);
	if (child == NULL)
		return;
	/* looked up after the child: adding it may move the table */
	struct proc *parent = proc_get(t, tk->ppid, 0);
	proc_clear(child);
	if (parent == NULL)
		return;
	for (size_t i = 0; i < parent->nr; i++)
		proc_add(child, &parent->maps[i]);
}

/* libdwfl's address-to-name lookup scans the symbol table, so names are
 * remembered per (pid, ip) in a small direct-mapped cache */
#define NAME_CACHE	65536

struct name_slot {
	uint64_t ip;
	uint32_t pid;
	int used;
	char *name;		/* NULL: no symbol */
};

static const char *
cached_name(struct name_slot *cache, unwinder *u, uint32_t pid, uint64_t ip)
{
	struct name_slot *e = &cache[(ip ^ (ip >> 16) ^ pid) % NAME_CACHE];
	if (e->used && e->ip == ip && e->pid == pid)
		return e->name;
	const char *n = unwind_symbol_name(u, pid, ip);
	free(e->name);
	e->name = n ? strdup(n) : NULL;
	e->ip = ip;
	e->pid = pid;
	e->used = 1;
	return e->name;
}

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	int bench = 0, compare = 0;
	unwind_options uo = { 0 }, exact = { .no_cfi_rows = 1 };
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--bench") == 0)
			bench = 1;
		else if (strcmp(argv[i], "--exact") == 0)
			uo.no_cfi_rows = 1;
		else if (strcmp(argv[i], "--compare") == 0)
			compare = 1;
		else
			path = argv[i];
	}
	if (path == NULL) {
		fprintf(stderr, "usage: unwind-walk [--bench] [--exact|--compare] FILE\n");
		return 2;
	}

	/* in time order, as perf script reads: in file order a CPU's buffer
	 * can bring a new thread's first samples before the other CPU's
	 * COMM (exec) and MMAP2 records that precede them in time */
	pd_options opt = { .ordered = 1 };
	pd_error err;
	pd_file *f = pd_open_path(path, &opt, &err);
	if (f == NULL) {
		char buf[320];
		fprintf(stderr, "unwind-walk: %s: %s\n", path,
			pd_strerror(&err, buf, sizeof(buf)));
		return 1;
	}
	struct table t = { 0 };
	unwinder *u = NULL, *ux = NULL;	/* ux: libdwfl's walks, to compare */
	uint64_t xips[MAX_FRAMES], differ = 0;
	struct name_slot *names = calloc(NAME_CACHE, sizeof(*names));
	if (names == NULL) {
		pd_close(f);
		return 1;
	}
	int swapped = pd_get_info(f)->swapped;
	uint64_t ips[MAX_FRAMES];
	uint64_t samples = 0, frames = 0, unwound = 0;
	double busy = 0;
	pd_record r;
	int rc;

	while ((rc = pd_next(f, &r, &err)) > 0) {
		switch (r.type) {
		case PD_RECORD_MMAP:
		case PD_RECORD_MMAP2:
			on_mmap(&t, pd_get_header(f), &r);
			break;
		case PD_RECORD_FORK:
			on_fork(&t, &r);
			break;
		case PD_RECORD_COMM:
			if (r.u.comm.exec) {
				struct proc *p = proc_get(&t, r.u.comm.pid, 0);
				if (p)
					proc_clear(p);
				if (u)
					unwind_forget_process(u, r.u.comm.pid);
				if (ux)
					unwind_forget_process(ux, r.u.comm.pid);
			}
			break;
		case PD_RECORD_SAMPLE: {
			const pd_sample *s = &r.u.sample;
			if (!(s->fields & PD_SAMPLE_REGS_USER))
				break;
			if (u == NULL) {
				/* the arch feature; else this machine's */
				const char *arch = pd_get_header(f)->arch;
				struct utsname un;
				if (arch == NULL && uname(&un) == 0)
					arch = un.machine;
				u = unwind_new(unwind_arch_from_name(arch),
					       find_map_cb, &t, &uo);
				if (compare)
					ux = unwind_new(unwind_arch_from_name(arch),
							find_map_cb, &t, &exact);
				if (u == NULL || (compare && ux == NULL)) {
					fprintf(stderr, "unwind-walk: no unwinder "
						"for arch %s\n", arch ? arch : "?");
					pd_close(f);
					return 1;
				}
			}
			unwind_input in;
			unwind_input_from_sample(&in, s, swapped);
			const struct proc *mp = proc_get(&t, s->pid, 0);
			in.maps_stamp = mp ? mp->stamp : 0;
			double t0 = bench ? now_s() : 0;
			int n = unwind_sample(u, &in, ips, MAX_FRAMES);
			if (bench)
				busy += now_s() - t0;
			samples++;
			if (compare) {
				int k = unwind_sample(ux, &in, xips, MAX_FRAMES);
				if (k != n || (n > 0 && memcmp(ips, xips, (size_t)n * sizeof(*ips)))) {
					if (differ++ < 5) {
						printf("differ: tid %" PRIu32 " time %" PRIu64
						       ": %d frames from rows, %d from libdwfl\n",
						       s->tid, s->time, n, k);
						for (int i = 0; i < n || i < k; i++)
							printf("  %2d %16" PRIx64 " %16" PRIx64 "\n", i,
							       i < n ? ips[i] : 0, i < k ? xips[i] : 0);
					}
				}
				if (n > 0) {
					unwound++;
					frames += (uint64_t)n;
				}
				break;
			}
			if (n <= 0)
				break;
			unwound++;
			frames += (uint64_t)n;
			if (bench)
				break;
			printf("S %" PRIu32 " %" PRIu64 " %d\n", s->tid, s->time, n);
			for (int i = 0; i < n; i++) {
				const struct map *m = map_find(&t, s->pid, ips[i]);
				const char *sym = cached_name(names, u, s->pid, ips[i]);
				printf("%" PRIx64 " %s %s\n",
				       m ? ips[i] - m->start + m->pgoff : ips[i],
				       sym ? sym : "[unknown]",
				       m ? base_name(m->path) : "[unknown]");
			}
			break;
		}
		default:
			break;
		}
	}
	int status = 0;
	if (rc < 0) {
		char buf[320];
		fprintf(stderr, "unwind-walk: %s: %s\n", path,
			pd_strerror(&err, buf, sizeof(buf)));
		status = 1;
	}
	if (u) {
		const unwind_stats *st = unwind_get_stats(u);
		fprintf(bench ? stdout : stderr,
			"samples %" PRIu64 " unwound %" PRIu64 " frames %" PRIu64
			" no_regs %" PRIu64 " no_module %" PRIu64 " build_id_mismatch %"
			PRIu64 " errors %" PRIu64 " sessions %" PRIu64 " stale %" PRIu64
			" resumed %" PRIu64 " from rows %" PRIu64 "\n", samples, unwound, frames,
			st->no_regs, st->no_module, st->build_id_mismatch, st->errors,
			st->sessions_created, st->stale_sessions, st->resumed, st->row_walks);
		if (compare) {
			printf("compare: %" PRIu64 " samples, %" PRIu64 " walked from CFI rows, "
			       "%" PRIu64 " differ from libdwfl's walk\n", samples, st->row_walks,
			       differ);
			if (differ)
				status = 1;
		}
	}
	if (bench && busy > 0)
		printf("unwind: %.0f samples/s, %.0f frames/s (%.3f s for %" PRIu64
		       " samples, %.1f frames/sample)\n",
		       samples / busy, frames / busy, busy, samples,
		       unwound ? (double)frames / unwound : 0.0);
	unwind_free(u);
	unwind_free(ux);
	for (size_t i = 0; i < NAME_CACHE; i++)
		free(names[i].name);
	free(names);
	for (size_t i = 0; i < t.nr; i++) {
		proc_clear(&t.procs[i]);
		free(t.procs[i].maps);
	}
	free(t.procs);
	pd_close(f);
	return status;
}
