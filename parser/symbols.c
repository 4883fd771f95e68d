/*
 * symbols.c - the symbolizer: records in, named stacks out.
 */
#include "symbols.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "dso.h"
#include "firstq.h"
#include "maps.h"
#include "strhash.h"
#include "table.h"
#include "thread.h"
#include "unwind.h"
#include "vdso.h"
#include "ksaved.h"


/* snprintf that truncates silently: paths and messages are capped */
__attribute__((format(printf, 3, 4)))
static void sfmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

#define SYM_MAX_WARNINGS 64
#define SYM_DEFAULT_MAX_STACK 127	/* perf script's PERF_MAX_STACK_DEPTH */
#define SYM_MAX_BUILD_IDS (1u << 20)
#define SYM_SLOTS 16384	/* symbol memo slots (a power of 2) */
#define SYM_MIN_BUILD_ID 8	/* bytes: the shortest a linker makes (lld's fast) */
#define INL_SLOTS 8192	/* inlined-frames memo slots (a power of 2) */
#define INL_SLOT_NAMES 6	/* longer chains are not memoised */

/* A remembered pd_dso_lookup answer. */
typedef struct sym_slot {
	uint64_t serial;	/* the dso's; 0 = empty */
	uint64_t off;
	const char *name;	/* NULL: no symbol there */
	uint64_t sym_off;
} sym_slot;

/* A remembered pd_dso_inlines answer. */
typedef struct inl_slot {
	uint64_t serial;	/* the dso's; 0 = empty */
	uint64_t off;
	uint32_t n;
	const char *names[INL_SLOT_NAMES];
} inl_slot;

#define DSO_MEMO_SLOTS 512	/* mapped-file memo slots (a power of 2) */

/* A remembered pd_dso_get answer for a mapped file: a build maps the
 * same few files into thousands of processes. Holds a reference. */
typedef struct dso_slot {
	uint64_t hash;		/* 0 = empty */
	char *path;
	uint8_t id[20];
	uint8_t size;
	pd_dso *dso;
} dso_slot;

typedef struct bid_entry {
	char *path;
	uint8_t id[20];
	uint8_t size;
} bid_entry;

struct pd_symbolizer {
	pd_file *file;
	pd_dso_cache *cache;
	int own_cache;
	pd_dso_paths paths;
	char *symfs, *buildid_dir, *debug_dir, *debuginfo_dir, *jit_dir;
	int build_id_only;	/* pd_sym_options.build_id_files_only */
	unsigned max_stack;
	pd_threads *threads;
	pd_maps *kmaps;
	uint64_t kernel_start;	/* [kernel.kallsyms] map start, 0 if none */
	char *kallsyms;		/* NULL: kernel frames stay unresolved */
	int kernel_decided;	/* kallsyms chosen (pipe mode: once known) */
	int running_kernel;	/* running_kernel(): -1 until the release is known */
	pd_sym_options kopt;	/* what choose_kallsyms() needs, copied */
	char *kopt_kallsyms, *kopt_recording;
	bid_entry *bids;
	size_t nr_bids, cap_bids;
	int bids_sorted;
	pd_frame *frames;
	size_t cap_frames;
	sym_slot *syms;		/* SYM_SLOTS, direct mapped; NULL = none */
	inl_slot *inls;		/* INL_SLOTS, made at the first dwarf sample */
	pd_firstq *firstq;	/* binutils' first questions: shared with other
				   threads, or made at the first (firstq_own) */
	unsigned firstq_who;
	int firstq_own;
	dso_slot *dsos;		/* DSO_MEMO_SLOTS, made at the first mapped file */
	uint64_t generation;
	/* the map pd_symbolize_where found last, for the pd_symbolize_ip
	 * that often follows it */
	const pd_map *where_map;
	const pd_thread *where_th;
	uint64_t where_ip, where_gen;
	int where_cpumode;
	/* the thread the last frame was named in: a callchain's frames are
	 * named one by one, and only a record changes threads */
	pd_thread *frame_th;
	uint32_t frame_pid, frame_tid;
	uint64_t frame_gen;
	/* generations of the last change that reaches every thread's stacks:
	 * kernel maps, and everything else (build-ids) */
	uint64_t kernel_stamp, global_stamp;
	pd_dso *kernel_dso;	/* kallsyms' table, for pd_symbolizer_kernel_waits */
	int no_unwind;
	unwinder *unwinder;	/* made at the first dwarf sample */
	int unwind_failed;
	pd_thread *unwinding;	/* the thread whose maps the callback reads */
	uint64_t *ips;		/* unwound ips */
	char *warnings[SYM_MAX_WARNINGS];
	size_t nr_warnings;
};

pd_symcache *pd_symcache_new(size_t max_bytes)
{
	return pd_dso_cache_new(max_bytes);
}

void pd_symcache_free(pd_symcache *c)
{
	pd_dso_cache_free(c);
}

static void warn(pd_symbolizer *s, const char *msg)
{
	size_t i;

	for (i = 0; i < s->nr_warnings; i++)
		if (!strcmp(s->warnings[i], msg))
			return;
	if (s->nr_warnings < SYM_MAX_WARNINGS)
		s->warnings[s->nr_warnings] = strdup(msg),
		s->nr_warnings += s->warnings[s->nr_warnings] != NULL;
}

size_t pd_symbolizer_nr_warnings(const pd_symbolizer *s)
{
	return s->nr_warnings;
}

const char *pd_symbolizer_warning(const pd_symbolizer *s, size_t i)
{
	return i < s->nr_warnings ? s->warnings[i] : NULL;
}

/* ---- build-ids the recording saw --------------------------------------- */

static int add_bid(pd_symbolizer *s, const char *path, const uint8_t *id, size_t size)
{
	bid_entry *e;

	if (!path || !size || s->nr_bids >= SYM_MAX_BUILD_IDS)
		return 0;
	if (s->nr_bids == s->cap_bids) {
		size_t cap = s->cap_bids ? s->cap_bids * 2 : 64;
		bid_entry *p = realloc(s->bids, cap * sizeof(*p));

		if (!p)
			return -1;
		s->bids = p;
		s->cap_bids = cap;
	}
	e = &s->bids[s->nr_bids];
	e->path = strdup(path);
	if (!e->path)
		return -1;
	e->size = size > 20 ? 20 : (uint8_t)size;
	memcpy(e->id, id, e->size);
	s->nr_bids++;
	s->bids_sorted = 0;
	return 0;
}

static int bid_cmp(const void *a, const void *b)
{
	return strcmp(((const bid_entry *)a)->path, ((const bid_entry *)b)->path);
}

static const bid_entry *find_bid(pd_symbolizer *s, const char *path)
{
	bid_entry key = { .path = (char *)path };

	if (!s->nr_bids)
		return NULL;
	if (!s->bids_sorted) {
		qsort(s->bids, s->nr_bids, sizeof(*s->bids), bid_cmp);
		s->bids_sorted = 1;
	}
	return bsearch(&key, s->bids, s->nr_bids, sizeof(*s->bids), bid_cmp);
}

/* A kernel module's file: its symbols come from kallsyms here. */
static int is_module(const char *path)
{
	const char *ko = strstr(path, ".ko");

	return ko && (!ko[3] || ko[3] == '.');
}

pd_symcache *pd_symbolizer_cache(const pd_symbolizer *s)
{
	return s->cache;
}

int pd_symbolizer_unwinds(const pd_symbolizer *s)
{
	size_t i;

	if (s->no_unwind || !s->file)
		return 0;
	for (i = 0; i < pd_nr_events(s->file); i++)
		if (pd_event_unwinds(pd_get_event(s->file, i)))
			return 1;
	return 0;
}

size_t pd_symbolizer_header_dsos(pd_symbolizer *s, pd_dso **out, size_t max)
{
	size_t n = 0, i;
	int kernel = 0;

	for (i = 0; i < s->nr_bids; i++)
		kernel |= !strncmp(s->bids[i].path, "[kernel.kallsyms]", 17);
	find_bid(s, "");	/* sorts them: one entry per path is the one used */
	/* the kernel's first: nearly every sample of a system-wide recording
	 * has kernel frames, and the folding thread goes on without them
	 * only until it is loaded (foldcache.h) */
	if (kernel && s->kallsyms && n < max &&
	    (out[n] = pd_dso_get(s->cache, PD_DSO_KALLSYMS, s->kallsyms, NULL, 0, NULL)))
		n++;
	for (i = 0; i < s->nr_bids && n < max; i++) {
		const bid_entry *e = &s->bids[i];

		/* as user_mmap() asks: by path and build-id */
		if (e->path[0] != '/' || is_module(e->path) || find_bid(s, e->path) != e ||
		    (s->build_id_only && e->size < SYM_MIN_BUILD_ID))
			continue;
		if ((out[n] = pd_dso_get(s->cache, PD_DSO_ELF, e->path, e->id, e->size, &s->paths)))
			n++;
	}
	return n;
}

/* ---- setup ---------------------------------------------------------------- */

static char *dup_or_null(const char *p)
{
	return p ? strdup(p) : NULL;
}

static int file_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The recording was made under the running kernel, and files of this
 * machine may name its symbols: the rule for /proc/kallsyms below, and
 * for the vDSO (vdso.h). In pipe mode the release may arrive later. */
static int running_kernel(pd_symbolizer *s)
{
	const pd_header *h = s->file ? pd_get_header(s->file) : NULL;
	struct utsname u;

	/* asked at every process's [vdso]: the answer is kept once known */
	if (s->running_kernel < 0 && h && h->os_release)
		s->running_kernel = !s->build_id_only && !(s->symfs && *s->symfs) &&
				    uname(&u) == 0 && !strcmp(h->os_release, u.release);
	return s->running_kernel > 0;
}

/* The kernel's symbols: given, the recording's kcore_dir, or the running
 * kernel's when the recording says it is the same release and no symfs
 * root is given. In pipe mode
 * the release arrives as a record: decided at the first kernel map. */
static void choose_kallsyms(pd_symbolizer *s)
{
	const pd_sym_options *opt = &s->kopt;
	const pd_header *h = s->file ? pd_get_header(s->file) : NULL;
	char buf[4096];

	if (s->kernel_decided)
		return;
	s->kernel_decided = 1;
	if (opt->kallsyms) {
		s->kallsyms = strdup(opt->kallsyms);
		return;
	}
	if (opt->recording) {
		sfmt(buf, sizeof(buf), "%s/kcore_dir/kallsyms", opt->recording);
		if (file_exists(buf)) {
			s->kallsyms = strdup(buf);
			return;
		}
	}
	if (opt->no_kernel_symbols)
		return;
	/* perf looks at no file of this machine under a symfs root */
	if (s->symfs && *s->symfs) {
		warn(s, "kernel symbols: not taken from this machine under --symfs (as perf); "
		     "kernel frames stay unresolved unless --kallsyms names a file");
		return;
	}
	if (running_kernel(s)) {
		const bid_entry *k = find_bid(s, "[kernel.kallsyms]");

		/* perf's saved copy when it is still the running kernel's
		 * table: the same names, without /proc/kallsyms' cost */
		if (!k || !(s->kallsyms = pd_ksaved_copy(s->buildid_dir, k->id, k->size)))
			s->kallsyms = strdup("/proc/kallsyms");
		return;
	}
	warn(s, h && h->os_release ?
	     "kernel symbols: the recording's kernel is not the running one; kernel frames stay unresolved" :
	     "kernel symbols: the recording names no kernel release; kernel frames stay unresolved");
}

pd_symbolizer *pd_symbolizer_new(pd_file *f, pd_symcache *cache,
				 const pd_sym_options *opt)
{
	pd_symbolizer *s = calloc(1, sizeof(*s));
	const pd_sym_options none = { 0 };
	const pd_header *h;
	size_t i;

	if (!s)
		return NULL;
	if (!opt)
		opt = &none;
	s->file = f;
	s->running_kernel = -1;
	s->cache = cache;
	if (!s->cache) {
		s->cache = pd_dso_cache_new(0);
		s->own_cache = 1;
	}
	s->symfs = dup_or_null(opt->symfs);
	s->buildid_dir = dup_or_null(opt->buildid_dir);
	s->debug_dir = dup_or_null(opt->debug_dir);
	s->debuginfo_dir = dup_or_null(opt->debuginfo_dir);
	s->jit_dir = strdup(opt->jit_dir ? opt->jit_dir : "/tmp");
	s->paths.symfs = s->symfs;
	s->paths.buildid_dir = s->buildid_dir;
	s->paths.debug_dir = s->debug_dir;
	s->paths.debuginfo_dir = s->debuginfo_dir;
	s->max_stack = opt->max_stack ? opt->max_stack : SYM_DEFAULT_MAX_STACK;
	s->no_unwind = opt->no_unwind;
	if (!s->cache)
		goto fail;
	s->threads = pd_threads_new(s->cache);
	s->kmaps = pd_maps_new(s->cache);
	s->syms = pd_table_new(SYM_SLOTS, sizeof(*s->syms));	/* NULL: no memo */
	if (!s->threads || !s->kmaps || !s->jit_dir)
		goto fail;
	h = f ? pd_get_header(f) : NULL;
	for (i = 0; h && i < h->nr_build_ids; i++)
		if (add_bid(s, h->build_ids[i].filename, h->build_ids[i].build_id,
			    h->build_ids[i].size) < 0)
			goto fail;
	s->kopt.kallsyms = s->kopt_kallsyms = dup_or_null(opt->kallsyms);
	s->kopt.recording = s->kopt_recording = dup_or_null(opt->recording);
	s->kopt.no_kernel_symbols = opt->no_kernel_symbols || opt->build_id_files_only;
	s->build_id_only = opt->build_id_files_only;
	if (!f || pd_get_info(f)->mode != PD_MODE_PIPE)
		choose_kallsyms(s);
	return s;
fail:
	pd_symbolizer_free(s);
	return NULL;
}

void pd_symbolizer_free(pd_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	pd_threads_free(s->threads);
	pd_maps_unref(s->kmaps);
	for (i = 0; i < s->nr_bids; i++)
		free(s->bids[i].path);
	free(s->bids);
	for (i = 0; i < s->nr_warnings; i++)
		free(s->warnings[i]);
	free(s->frames);
	free(s->syms);
	free(s->inls);
	if (s->firstq_own)
		pd_firstq_free(s->firstq);
	for (i = 0; s->dsos && i < DSO_MEMO_SLOTS; i++)
		if (s->dsos[i].hash) {
			free(s->dsos[i].path);
			pd_dso_put(s->cache, s->dsos[i].dso);
		}
	free(s->dsos);
	free(s->ips);
	pd_dso_put(s->cache, s->kernel_dso);
	unwind_free(s->unwinder);
	free(s->kallsyms);
	free(s->kopt_kallsyms);
	free(s->kopt_recording);
	free(s->symfs);
	free(s->buildid_dir);
	free(s->debug_dir);
	free(s->debuginfo_dir);
	free(s->jit_dir);
	if (s->own_cache)
		pd_dso_cache_free(s->cache);
	free(s);
}

/* ---- records ---------------------------------------------------------------- */

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* "/lib/modules/6.1.0/kernel/fs/ext4/ext4.ko.xz" -> "[ext4]" */
static void module_name(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	size_t n, i;

	b = b ? b + 1 : path;
	n = strcspn(b, ".");
	if (n > len - 3)
		n = len - 3;
	out[0] = '[';
	for (i = 0; i < n; i++)
		out[i + 1] = b[i] == '-' ? '_' : b[i];
	out[n + 1] = ']';
	out[n + 2] = '\0';
}

static int kernel_mmap(pd_symbolizer *s, const pd_mmap *m)
{
	pd_map map = { .start = m->start, .end = m->start + m->len, .pgoff = m->pgoff,
		       .identity = 1 };
	char name[256];

	choose_kallsyms(s);
	if (m->len == 0 || map.end < map.start)
		map.end = UINT64_MAX;
	if (starts(m->filename, "[kernel.kallsyms]")) {
		sfmt(name, sizeof(name), "[kernel.kallsyms]");
		s->kernel_start = map.start;
	} else if (m->filename[0] == '/') {
		module_name(m->filename, name, sizeof(name));
	} else if (starts(m->filename, "[guest.kernel")) {
		return 0;
	} else {
		sfmt(name, sizeof(name), "%s", m->filename);
	}
	map.name = name;
	if (s->kallsyms)
		map.dso = pd_dso_get(s->cache, PD_DSO_KALLSYMS, s->kallsyms, NULL, 0, NULL);
	return pd_maps_insert(s->kmaps, &map);
}

static int is_anon(const char *f)
{
	return !strcmp(f, "//anon") || starts(f, "/dev/zero") || starts(f, "/anon_hugepage");
}

static int is_no_dso(const char *f)
{
	return starts(f, "[stack") || starts(f, "/SYSV") || !strcmp(f, "[heap]");
}

#define MAP_HUGETLB_FLAG 0x40000
#define PROT_EXEC_FLAG 4

/* pd_dso_get of a mapped ELF file through the memo (within one
 * recording a path and build-id name one file; the cache's key also
 * formats the search paths and stats the file). */
static pd_dso *mapped_dso(pd_symbolizer *s, const char *path, const uint8_t *bid,
			  size_t bid_size)
{
	dso_slot *e;
	pd_dso *d;
	uint64_t h;

	if (bid_size > sizeof(e->id))
		bid_size = sizeof(e->id);
	h = pd_fnv_bytes(pd_fnv_str(PD_FNV_BASIS, path), bid, bid_size);
	h = (h ^ bid_size) | 1;
	if (!s->dsos && !(s->dsos = pd_table_new(DSO_MEMO_SLOTS, sizeof(*s->dsos))))
		return pd_dso_get(s->cache, PD_DSO_ELF, path, bid, bid_size, &s->paths);
	e = &s->dsos[(h ^ h >> 29) & (DSO_MEMO_SLOTS - 1)];
	if (e->hash == h && e->size == bid_size && !strcmp(e->path, path) &&
	    (!bid_size || !memcmp(e->id, bid, bid_size))) {
		pd_dso_ref(s->cache, e->dso);
		return e->dso;
	}
	d = pd_dso_get(s->cache, PD_DSO_ELF, path, bid, bid_size, &s->paths);
	if (!d)
		return NULL;
	if (e->hash) {
		free(e->path);
		pd_dso_put(s->cache, e->dso);
		e->hash = 0;
	}
	if ((e->path = strdup(path))) {
		e->hash = h;
		if (bid_size)
			memcpy(e->id, bid, bid_size);
		e->size = (uint8_t)bid_size;
		e->dso = d;
		pd_dso_ref(s->cache, d);
	}
	return d;
}

/* The running kernel's vDSO for a [vdso] map of `len` bytes, as perf
 * script names one the recording has no image of; NULL when its length
 * differs (a 32-bit process's) or there is none. */
static pd_dso *own_vdso(pd_symbolizer *s, uint64_t len)
{
	uint64_t own_len;
	const char *own = pd_own_vdso(&own_len);

	return own && own_len == len ? mapped_dso(s, own, NULL, 0) : NULL;
}

static int user_mmap(pd_symbolizer *s, const pd_record *r)
{
	const pd_mmap *m = &r->u.mmap;
	pd_thread *th = pd_threads_findnew(s->threads, m->pid, m->tid);
	pd_map map = { .start = m->start, .end = m->start + m->len, .pgoff = m->pgoff };
	uint32_t prot = m->prot;
	char name[4096];
	const uint8_t *bid = NULL;
	size_t bid_size = 0;

	if (!th)
		return -1;
	if (m->len == 0 || map.end < map.start)
		return 0;
	if (r->type == PD_RECORD_MMAP)	/* MMAP: exec unless MMAP_DATA */
		prot = (r->misc & (1 << 13)) ? 1 : PROT_EXEC_FLAG;
	sfmt(name, sizeof(name), "%s", m->filename);
	if ((is_anon(m->filename) || (m->flags & MAP_HUGETLB_FLAG) || is_no_dso(m->filename)) &&
	    (prot & PROT_EXEC_FLAG)) {
		/* perf's name for anonymous executable memory: a JIT map */
		sfmt(name, sizeof(name), "/tmp/perf-%u.map", m->pid);
		map.identity = 1;
		map.name = name;
		if (!s->build_id_only) {
			char path[4096];

			sfmt(path, sizeof(path), "%s/perf-%u.map", s->jit_dir, m->pid);
			if (file_exists(path))
				map.dso = pd_dso_get(s->cache, PD_DSO_PERFMAP, path, NULL, 0, NULL);
		}
		return pd_maps_insert(th->maps, &map);
	}
	map.name = name;
	if (m->filename[0] == '/' || !strcmp(m->filename, "[vdso]")) {
		if (m->build_id_size) {
			bid = m->build_id;
			bid_size = m->build_id_size;
		} else {
			const bid_entry *e = find_bid(s, m->filename);

			if (e) {
				bid = e->id;
				bid_size = e->size;
			}
		}
		/* from elsewhere, a path alone names no file here, nor does a
		 * build-id too short to tell files apart */
		if (s->build_id_only && bid_size < SYM_MIN_BUILD_ID)
			bid_size = 0;
		if ((m->filename[0] == '/' && !s->build_id_only) || bid_size)
			map.dso = mapped_dso(s, m->filename, bid, bid_size);
		else if (m->filename[0] != '/' && running_kernel(s))
			map.dso = own_vdso(s, m->len);	/* a [vdso] with no image of its own */
	}
	return pd_maps_insert(th->maps, &map);
}

static int on_ksymbol(pd_symbolizer *s, const pd_ksymbol *k)
{
	pd_map map = { .start = k->addr, .end = k->addr + k->len, .identity = 1 };

	if (k->flags & 1) {	/* PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER */
		pd_maps_remove(s->kmaps, k->addr);
		return 0;
	}
	if (!k->len || map.end < map.start || !k->name)
		return 0;
	map.name = (char *)k->name;
	map.fixed_sym = (char *)k->name;
	return pd_maps_insert(s->kmaps, &map);
}

uint64_t pd_symbolizer_generation(const pd_symbolizer *s)
{
	return s->generation;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

uint64_t pd_symbolizer_stamp(pd_symbolizer *s, uint32_t pid, uint32_t tid)
{
	const pd_thread *th = pd_threads_find(s->threads, tid);

	if (!th || th->pid != pid)
		return s->generation;	/* not seen yet: as if changed now */
	return max_u64(max_u64(th->stamp, pd_maps_stamp(th->maps)),
		       max_u64(s->kernel_stamp, s->global_stamp));
}

int pd_symbolizer_kernel_waits(pd_symbolizer *s)
{
	if (!s->kallsyms)
		return 0;
	if (!s->kernel_dso &&
	    !(s->kernel_dso = pd_dso_get(s->cache, PD_DSO_KALLSYMS, s->kallsyms, NULL, 0, NULL)))
		return 0;
	return !pd_dso_loaded(s->kernel_dso);
}

/* An MMAP/MMAP2 record of the kernel's (its text, a module). */
static int kernel_map(const pd_record *r)
{
	return r->u.mmap.pid == (uint32_t)-1 || (r->misc & PD_MISC_CPUMODE_MASK) == PD_MISC_KERNEL;
}

int pd_symbolizer_renames_kernel(const pd_record *r)
{
	switch (r->type) {
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2:
		return kernel_map(r);
	case PD_RECORD_KSYMBOL:
	case PD_RECORD_HEADER_BUILD_ID:
		return 1;
	default:
		return 0;
	}
}

/* Stamp what a record just changed with the current generation. */
static void stamp_change(pd_symbolizer *s, const pd_record *r)
{
	pd_thread *th;

	switch (r->type) {
	case PD_RECORD_COMM:
	case PD_RECORD_FORK:
		th = pd_threads_find(s->threads, r->type == PD_RECORD_COMM ?
				     r->u.comm.tid : r->u.task.tid);
		if (th) {
			th->stamp = s->generation;
			pd_maps_set_stamp(th->maps, s->generation);	/* a new copy on fork */
		} else {
			s->global_stamp = s->generation;
		}
		break;
	case PD_RECORD_EXIT:
		break;	/* the thread keeps its comm and maps */
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2:
		if (kernel_map(r)) {
			s->kernel_stamp = s->generation;
			break;
		}
		th = pd_threads_find(s->threads, r->u.mmap.tid);
		if (th)
			pd_maps_set_stamp(th->maps, s->generation);
		else
			s->global_stamp = s->generation;
		break;
	case PD_RECORD_KSYMBOL:
		s->kernel_stamp = s->generation;
		break;
	default:
		s->global_stamp = s->generation;
		break;
	}
}

int pd_symbolizer_record(pd_symbolizer *s, const pd_record *r)
{
	int rc = 0;

	switch (r->type) {
	case PD_RECORD_COMM:
	case PD_RECORD_FORK:
	case PD_RECORD_EXIT:
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2:
	case PD_RECORD_KSYMBOL:
	case PD_RECORD_HEADER_BUILD_ID:
		s->generation++;
		break;
	default:
		break;
	}
	switch (r->type) {
	case PD_RECORD_COMM:
		rc = pd_threads_comm(s->threads, r->u.comm.pid, r->u.comm.tid, r->u.comm.comm);
		break;
	case PD_RECORD_FORK:
		rc = pd_threads_fork(s->threads, r->u.task.pid, r->u.task.tid,
				     r->u.task.ppid, r->u.task.ptid,
				     !(r->misc & PD_MISC_FORK_EXEC));
		break;
	case PD_RECORD_EXIT:
		pd_threads_exit(s->threads, r->u.task.pid, r->u.task.tid);
		break;
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2:
		if (!r->u.mmap.filename)
			break;
		if (kernel_map(r))
			rc = kernel_mmap(s, &r->u.mmap);
		else if ((r->misc & PD_MISC_CPUMODE_MASK) != PD_MISC_GUEST_KERNEL &&
			 (r->misc & PD_MISC_CPUMODE_MASK) != PD_MISC_GUEST_USER)
			rc = user_mmap(s, r);
		break;
	case PD_RECORD_KSYMBOL:
		rc = on_ksymbol(s, &r->u.ksymbol);
		break;
	case PD_RECORD_HEADER_BUILD_ID:
		rc = add_bid(s, r->u.build_id.filename, r->u.build_id.build_id,
			     r->u.build_id.size);
		break;
	default:
		break;
	}
	if (rc < 0)
		warn(s, "symbolizer: out of memory or over a limit; some frames stay unresolved");
	switch (r->type) {
	case PD_RECORD_COMM:
	case PD_RECORD_FORK:
	case PD_RECORD_EXIT:
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2:
	case PD_RECORD_KSYMBOL:
	case PD_RECORD_HEADER_BUILD_ID:
		stamp_change(s, r);
		break;
	default:
		break;
	}
	return rc;
}

/* ---- stacks ---------------------------------------------------------------- */

/* pd_dso_lookup through the memo: the same return addresses come back in
 * stack after stack, and a table's binary search misses the cache at
 * every step. Keyed by the dso's serial, never by its pointer. */
static const char *sym_lookup(pd_symbolizer *s, pd_dso *d, uint64_t off, uint64_t *sym_off)
{
	uint64_t serial = pd_dso_serial(d), h;
	sym_slot *e;

	if (!s->syms)
		return pd_dso_lookup(d, off, sym_off);
	h = (off ^ serial * 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;
	e = &s->syms[(h >> 40) & (SYM_SLOTS - 1)];
	if (e->serial != serial || e->off != off) {
		e->name = pd_dso_lookup(d, off, &e->sym_off);
		e->serial = serial;
		e->off = off;
	}
	if (e->name)
		*sym_off = e->sym_off;
	return e->name;
}

/* The map of one address of thread th. */
static const pd_map *frame_map(pd_symbolizer *s, pd_thread *th, uint64_t ip, int cpumode)
{
	const pd_map *map = NULL;

	if (cpumode == PD_MISC_KERNEL) {
		map = pd_maps_find(s->kmaps, ip);
		/* The recorded kernel map ends at _etext, but init text and
		 * other sections lie beyond it; perf sizes the map from kallsyms,
		 * so those addresses still belong to the kernel. */
		if (!map && s->kernel_start && ip > s->kernel_start)
			map = pd_maps_find(s->kmaps, s->kernel_start);
	} else if (cpumode == PD_MISC_USER && th) {
		map = pd_maps_find(th->maps, ip);
	}
	return map;
}

/* Name one address of thread th, in map (frame_map's), as a frame;
 * through the symbol memo unless the caller keeps its own by the same key
 * (memo 0), which would only add a cache miss to each of its misses. */
static void fill_frame_in(pd_symbolizer *s, pd_frame *f, const pd_map *map, uint64_t ip,
			  int cpumode, int memo)
{
	memset(f, 0, sizeof(*f));
	f->ip = ip;
	f->dso_off = ip;
	f->kernel = cpumode == PD_MISC_KERNEL;
	if (!map)
		return;
	f->dso = map->name;
	if (!map->identity)
		f->dso_off = ip - map->start + map->pgoff;
	if (map->fixed_sym) {
		f->sym = map->fixed_sym;
		f->sym_off = ip - map->start;
	} else if (map->dso) {
		f->dso_serial = pd_dso_serial(map->dso);
		f->sym = memo ? sym_lookup(s, map->dso, f->dso_off, &f->sym_off)
			      : pd_dso_lookup(map->dso, f->dso_off, &f->sym_off);
		if (!f->sym) {
			const char *p = pd_dso_problem(map->dso);

			if (p && strstr(p, "build-id mismatch"))
				warn(s, p);
		}
	}
}

static void fill_frame(pd_symbolizer *s, pd_frame *f, pd_thread *th, uint64_t ip, int cpumode,
		       int memo)
{
	fill_frame_in(s, f, frame_map(s, th, ip, cpumode), ip, cpumode, memo);
}

/* A free frame at the end of s->frames, counted in *n; NULL out of memory. */
static pd_frame *new_frame(pd_symbolizer *s, size_t *n)
{
	if (*n == s->cap_frames) {
		size_t cap = s->cap_frames ? s->cap_frames * 2 : 64;
		pd_frame *p = realloc(s->frames, cap * sizeof(*p));

		if (!p)
			return NULL;
		s->frames = p;
		s->cap_frames = cap;
	}
	return &s->frames[(*n)++];
}

static int push_frame(pd_symbolizer *s, size_t *n, pd_thread *th, uint64_t ip, int cpumode)
{
	pd_frame *f = new_frame(s, n);

	if (!f)
		return -1;
	fill_frame(s, f, th, ip, cpumode, 1);
	return 0;
}

static pd_thread *frame_thread(pd_symbolizer *s, uint32_t pid, uint32_t tid)
{
	if (!s->frame_th || s->frame_gen != s->generation || s->frame_pid != pid ||
	    s->frame_tid != tid) {
		s->frame_th = pd_threads_findnew(s->threads, pid, tid);
		s->frame_pid = pid;
		s->frame_tid = tid;
		s->frame_gen = s->generation;
	}
	return s->frame_th;
}

uint64_t pd_symbolize_where(pd_symbolizer *s, uint32_t pid, uint32_t tid, uint64_t ip,
			    int cpumode, uint64_t *dso_off, int *unmapped)
{
	pd_thread *th = cpumode == PD_MISC_USER ? frame_thread(s, pid, tid) : NULL;
	const pd_map *map = frame_map(s, th, ip, cpumode);

	s->where_map = map;
	s->where_th = th;
	s->where_ip = ip;
	s->where_cpumode = cpumode;
	s->where_gen = s->generation;
	*unmapped = !map;
	if (!map || !map->dso || map->fixed_sym)
		return 0;
	*dso_off = map->identity ? ip : ip - map->start + map->pgoff;
	return pd_dso_serial(map->dso);
}

int pd_symbolize_ip(pd_symbolizer *s, uint32_t pid, uint32_t tid, uint64_t ip, int cpumode,
		    pd_frame *out)
{
	/* a kernel address names the same in every thread: none is looked
	 * up (nor made) for it */
	pd_thread *th = cpumode == PD_MISC_USER ? frame_thread(s, pid, tid) : NULL;

	if (!th && cpumode == PD_MISC_USER)
		return -1;
	/* nothing changed since pd_symbolize_where found its map */
	if (s->where_gen == s->generation && s->where_ip == ip && s->where_cpumode == cpumode &&
	    (cpumode != PD_MISC_USER || s->where_th == th))
		fill_frame_in(s, out, s->where_map, ip, cpumode, 0);
	else
		fill_frame(s, out, th, ip, cpumode, 0);
	return 0;
}

void pd_symbolizer_share_firstq(pd_symbolizer *s, pd_firstq *q, unsigned who)
{
	if (s->firstq_own)
		pd_firstq_free(s->firstq);
	s->firstq = q;
	s->firstq_who = who;
	s->firstq_own = 0;
}

/* names[0] as addr2line gives it, after the questions asked before in
 * time order (pd_dso_naming): the symbol covering the address at the
 * function's first question, the name kept then at every other. */
static void name_as_binutils(pd_symbolizer *s, uint64_t serial, uint64_t off,
			     const char **names, const pd_dso_naming *how)
{
	pd_firstq_answer a = { .off = off, .first = how->sym,
			       .kept = how->sym_at_low ? how->sym : NULL };
	const char *name;

	if (how->func == UINT64_MAX)
		return;
	if (!s->firstq && (s->firstq = pd_firstq_new(1)))
		s->firstq_own = 1;
	if (!s->firstq || pd_firstq_ask(s->firstq, s->firstq_who, serial, how->func, &a) < 0) {
		if (how->sym_at_low)	/* too many to keep: as a later question */
			names[0] = how->sym;
		return;
	}
	name = off == a.off ? a.first : a.kept;
	if (name)	/* else the DWARF name */
		names[0] = name;
}

/* pd_dso_inlines, the innermost named as binutils would in this run. */
static size_t named_inlines(pd_symbolizer *s, pd_dso *d, uint64_t serial, uint64_t off,
			    const char **names, size_t max)
{
	pd_dso_naming how;
	size_t n = pd_dso_inlines(d, off, names, max, &how);

	if (n)
		name_as_binutils(s, serial, off, names, &how);
	return n;
}

/* pd_dso_inlines named as binutils would in this run, through a memo:
 * an unwound stack's return addresses come back sample after sample
 * (the index behind it takes a lock and two searches). An address's
 * answer never changes once given, as in perf's cache of them. */
static size_t inl_lookup(pd_symbolizer *s, pd_dso *d, uint64_t off, const char **names,
			 size_t max)
{
	uint64_t serial = pd_dso_serial(d), h;
	inl_slot *e;
	size_t n;

	if (!s->inls)
		s->inls = pd_table_new(INL_SLOTS, sizeof(*s->inls));
	if (!s->inls || max < INL_SLOT_NAMES)
		return named_inlines(s, d, serial, off, names, max);
	h = (off ^ serial * 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;
	e = &s->inls[(h >> 40) & (INL_SLOTS - 1)];
	if (e->serial == serial && e->off == off) {
		memcpy(names, e->names, e->n * sizeof(*names));
		return e->n;
	}
	n = named_inlines(s, d, serial, off, names, max);
	if (n <= INL_SLOT_NAMES) {
		e->serial = serial;
		e->off = off;
		e->n = (uint32_t)n;
		memcpy(e->names, names, n * sizeof(*names));
	}
	return n;
}

/* The unwinder's question: which file is mapped at addr in the process of
 * the sample being unwound. */
static int unwind_find_map(void *ctx, uint32_t pid, uint64_t addr, unwind_map *out)
{
	pd_symbolizer *s = ctx;
	const pd_map *m;
	const char *path;

	(void)pid;
	if (!s->unwinding || !(m = pd_maps_find(s->unwinding->maps, addr)))
		return 0;
	memset(out, 0, sizeof(*out));
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	if (m->dso && !m->identity) {
		/* the file the symbols came from: under --symfs, or perf's
		 * build-id cache when the binary changed since */
		path = pd_dso_file(m->dso);
		if (path)
			out->path = path;	/* set once loaded; the map holds the dso */
		out->build_id = pd_dso_build_id(m->dso, &out->build_id_size);
		out->file_low = pd_maps_dso_low(s->unwinding->maps, m->dso);
	}
	return 1;
}

/* User frames of a --call-graph dwarf sample; -1 when not unwound. */
static int unwind_user(pd_symbolizer *s, const pd_sample *smp, pd_thread *th,
		       size_t *n)
{
	unwind_input in;
	int k, i;

	/* nothing copied (a task in execve, say): perf bails out with no
	 * user frame at all */
	if (s->no_unwind || s->unwind_failed || !th || !pd_event_unwinds(smp->event) ||
	    !smp->stack_user_size || !smp->stack_user_dyn_size)
		return -1;
	if (!s->unwinder) {
		const pd_header *h = s->file ? pd_get_header(s->file) : NULL;

		s->ips = calloc(s->max_stack, sizeof(*s->ips));
		if (s->ips)
			s->unwinder = unwind_new(unwind_arch_from_name(h ? h->arch : NULL),
						 unwind_find_map, s, NULL);
		if (!s->unwinder) {
			s->unwind_failed = 1;
			warn(s, "dwarf unwinding: not available for this architecture; using the callchain");
			return -1;
		}
	}
	unwind_input_from_sample(&in, smp, s->file ? pd_get_info(s->file)->swapped : 0);
	/* the maps unwind_find_map answers from change only with this */
	in.maps_stamp = pd_symbolizer_stamp(s, smp->pid, smp->tid);
	s->unwinding = th;
	k = unwind_sample(s->unwinder, &in, s->ips, s->max_stack);
	s->unwinding = NULL;
	if (k < 0)
		return -1;
	for (i = 0; i < k; i++) {
		const pd_map *m = frame_map(s, th, s->ips[i], PD_MISC_USER);
		pd_frame *f = new_frame(s, n);
		const char *inl[16];
		size_t ni, j;

		if (!f)
			return -1;
		fill_frame_in(s, f, m, s->ips[i], PD_MISC_USER, 1);
		/* perf names these frames by their DWARF functions, inlined
		 * ones included (addr2line -i): one frame each, the same but
		 * for the name */
		if (!m || !m->dso || m->identity)
			continue;
		ni = inl_lookup(s, m->dso, f->dso_off, inl, 16);
		for (j = 0; j < ni; j++) {
			if (j > 0) {
				if (!new_frame(s, n))
					return -1;
				s->frames[*n - 1] = s->frames[*n - 2];
			}
			s->frames[*n - 1].sym = inl[j];
		}
	}
	return k;
}

/* The thread of a sample, made when first seen; the idle task is
 * "swapper", as perf names it. */
static pd_thread *sample_thread(pd_symbolizer *s, uint32_t pid, uint32_t tid)
{
	pd_thread *th = pd_threads_findnew(s->threads, pid, tid);

	if (th && th->tid == 0 && !strcmp(th->comm, ":0")) {
		pd_threads_comm(s->threads, th->pid, 0, "swapper");
		th->stamp = s->generation;
	}
	return th;
}

const char *pd_symbolizer_comm(pd_symbolizer *s, uint32_t pid, uint32_t tid)
{
	pd_thread *th = sample_thread(s, pid, tid);

	return th ? th->comm : "[unknown]";
}

int pd_symbolize(pd_symbolizer *s, const pd_record *rec, pd_stack *out)
{
	const pd_sample *smp = &rec->u.sample;
	pd_thread *th = sample_thread(s, smp->pid, smp->tid);
	size_t n = 0, real = 0, i;
	int dwarf;

	memset(out, 0, sizeof(*out));
	out->pid = smp->pid;
	out->tid = smp->tid;
	out->comm = th ? th->comm : "[unknown]";
	/* dwarf samples: the kernel part of the callchain, then the unwound
	 * user stack, as perf does */
	dwarf = !s->no_unwind && !s->unwind_failed && pd_event_unwinds(smp->event);
	if ((smp->fields & PD_SAMPLE_CALLCHAIN) && smp->callchain) {
		int cpumode = PD_MISC_USER;

		for (i = 0; i < smp->nr_callchain && real < s->max_stack; i++) {
			uint64_t ip = smp->callchain[i];

			if (ip >= PD_CONTEXT_MAX) {
				if (ip == PD_CONTEXT_HV)
					cpumode = PD_MISC_HYPERVISOR;
				else if (ip == PD_CONTEXT_KERNEL)
					cpumode = PD_MISC_KERNEL;
				else if (ip == PD_CONTEXT_USER)
					cpumode = PD_MISC_USER;
				else if (ip == PD_CONTEXT_GUEST_KERNEL)
					cpumode = PD_MISC_GUEST_KERNEL;
				else if (ip == PD_CONTEXT_GUEST_USER)
					cpumode = PD_MISC_GUEST_USER;
				else if (ip != PD_CONTEXT_GUEST) {
					n = 0;	/* perf drops a chain with a bad marker */
					break;
				}
				continue;
			}
			if (dwarf && cpumode == PD_MISC_USER)
				continue;	/* the unwinder gives these */
			real++;
			if (push_frame(s, &n, th, ip, cpumode) < 0)
				return -1;
		}
		/* perf's unwinder gives up to max_stack user frames of its
		 * own, however many kernel frames came before */
		if (dwarf)
			unwind_user(s, smp, th, &n);
	} else if (dwarf && unwind_user(s, smp, th, &n) >= 0) {
		/* unwound from the sample's registers */
	} else if (smp->fields & PD_SAMPLE_IP) {
		if (push_frame(s, &n, th, smp->ip, rec->misc & PD_MISC_CPUMODE_MASK) < 0)
			return -1;
	}
	out->nr = n;
	out->frames = s->frames;
	return 0;
}

int pd_stack_all_named(const pd_stack *st)
{
	size_t i;

	for (i = 0; i < st->nr; i++)
		if (!st->frames[i].sym)
			return 0;
	return 1;
}
