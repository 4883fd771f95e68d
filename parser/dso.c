/*
 * dso.c - symbol tables: ELF .symtab/.dynsym through elfutils' libelf,
 * kallsyms, perf-PID.map; a shared, bounded, locked cache of them.
 *
 * Names follow perf's rules so that stacks agree with `perf script`:
 * function symbols and labels of executable sections only; a symbol
 * without a size ends where the next one starts; PLT slots get
 * "name@plt"; of the aliases at one address the best one is kept (sized,
 * not weak, global, fewer leading '_', longer name), as perf does. An ELF
 * table is built in perf's order through its tree (symtree.h), so that
 * where symbols overlap (PLT slots under a stretched _init) the name is
 * the one perf's lookup finds.
 */
#include "dso.h"
#include "inlines.h"
#include "strhash.h"
#include "symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* snprintf that truncates silently: paths and messages are capped */
__attribute__((format(printf, 3, 4)))
static void sfmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

#define DSO_DEFAULT_CACHE_BYTES	(512u << 20)

/* n bytes as lower-case hex into out (2n + 1 bytes); no printf: this runs
 * for every mmap of a recording */
static void to_hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

typedef struct dso_load_seg {	/* PT_LOAD: file offset -> address */
	uint64_t offset, filesz, memsz, vaddr;
} dso_load_seg;

struct pd_dso {
	pd_dso *next;		/* in the cache's list */
	pd_dso *hnext;		/* in the cache's hash bucket */
	int in_tab;		/* findable by key */
	uint64_t key_hash;
	char *key;
	int kind;
	char *path;
	uint8_t build_id[20];
	size_t build_id_size;
	char *symfs, *buildid_dir, *debug_dir, *debuginfo_dir;
	long refs;		/* atomic; made 0 -> 1 only under the cache lock */
	pthread_mutex_t lock;	/* serialises the one load */
	int loaded;		/* atomically published after the load */
	pd_symtab *tab;		/* NULL until loaded */
	dso_load_seg *segs;
	size_t nr_segs;
	char problem[320];
	char *dwarf_path;	/* the file with the names: its DWARF names
				   inlined frames (pd_dso_inlines) */
	char *run_path;		/* the binary found (build-id checked) */
	pd_inl *inl;		/* that DWARF's index, taken on first use */
	size_t bytes;
	pd_dso_cache *cache;
	uint64_t serial;	/* unique in its cache, never reused */
};

struct pd_dso_cache {
	pthread_mutex_t lock;
	pd_dso *list;
	pd_dso **tab;		/* the same dsos by key hash */
	size_t tab_cap, tab_n;
	size_t bytes, max_bytes;	/* bytes: atomic (loads add, evictions take) */
	pd_inl_cache *inl;	/* DWARF function indexes, by build-id */
	pd_dso_fetch_fn fetch;	/* set before use, read-only after */
	void *fetch_ctx;
	uint64_t serials;	/* dsos made so far */
};

/* ---- ELF --------------------------------------------------------------- */

static int elf_build_id(Elf *e, uint8_t *out, size_t max)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + noff, "GNU", 4)) {
				size_t n = nh.n_descsz < max ? nh.n_descsz : max;

				memcpy(out, (char *)data->d_buf + doff, n);
				return (int)n;
			}
		}
	}
	return 0;
}

typedef struct elf_file {
	int fd;
	Elf *e;
	int has_symtab, has_dynsym;
	char path[4096];
} elf_file;

static void elf_file_close(elf_file *f)
{
	if (f->e)
		elf_end(f->e);
	if (f->fd >= 0)
		close(f->fd);
	f->e = NULL;
	f->fd = -1;
}

/* Open path; 0 ok, -1 absent/not ELF, -2 build-id mismatch. */
static int elf_file_open(elf_file *f, const pd_dso *d, const char *path)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	struct stat st;

	f->fd = -1;
	f->e = NULL;
	f->has_symtab = f->has_dynsym = 0;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -1;
	f->e = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->e || elf_kind(f->e) != ELF_K_ELF) {
		elf_file_close(f);
		return -1;
	}
	if (d->build_id_size) {
		uint8_t bid[20];
		int n = elf_build_id(f->e, bid, sizeof(bid));

		if (n <= 0 || (size_t)n < d->build_id_size ||
		    memcmp(bid, d->build_id, d->build_id_size)) {
			elf_file_close(f);
			return -2;
		}
	}
	while ((scn = elf_nextscn(f->e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			f->has_symtab = 1;
		else if (sh.sh_type == SHT_DYNSYM)
			f->has_dynsym = 1;
	}
	sfmt(f->path, sizeof(f->path), "%s", path);
	return 0;
}

static void load_segments(pd_dso *d, Elf *e)
{
	size_t n, i;

	if (d->segs || elf_getphdrnum(e, &n) < 0 || n == 0 || n > 4096)
		return;
	d->segs = calloc(n, sizeof(*d->segs));
	if (!d->segs)
		return;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		d->segs[d->nr_segs].offset = ph.p_offset;
		d->segs[d->nr_segs].filesz = ph.p_filesz;
		d->segs[d->nr_segs].memsz = ph.p_memsz;
		d->segs[d->nr_segs].vaddr = ph.p_vaddr;
		d->nr_segs++;
	}
}

static void hex_build_id(const pd_dso *d, char *out)
{
	to_hex(d->build_id, d->build_id_size, out);
}

static const char *dir_or(const char *dir, const char *def)
{
	return dir && *dir ? dir : def;
}

/* .gnu_debuglink file name, or "" */
static void read_debuglink(Elf *e, char *out, size_t len)
{
	GElf_Shdr sh;
	Elf_Scn *scn = pd_symtab_section(e, ".gnu_debuglink", &sh);
	Elf_Data *data;

	out[0] = '\0';
	if (!scn || !(data = elf_getdata(scn, NULL)) || !data->d_buf || !data->d_size)
		return;
	sfmt(out, len, "%.*s", (int)strnlen(data->d_buf, data->d_size), (char *)data->d_buf);
	if (strchr(out, '/'))
		out[0] = '\0';
}

/* Try one candidate file: keep it as the symbol source when it has a
 * .symtab, as the runtime file (.dynsym, PLT, program headers) when it is
 * the first without. Returns 1 when the search can stop. */
static int try_candidate(const pd_dso *d, const char *path, elf_file *sym,
			 elf_file *run, int *mismatch)
{
	elf_file f;
	int rc = elf_file_open(&f, d, path);

	if (rc == -2)
		*mismatch = 1;
	if (rc < 0)
		return 0;
	if (f.has_symtab && !sym->e) {
		*sym = f;
	} else if (!run->e && f.has_dynsym) {
		*run = f;
	} else {
		elf_file_close(&f);
	}
	return sym->e != NULL;
}

/* The symbols of every section of this type (one, in practice). */
static void add_sections(pd_symtab *t, Elf *e, int type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && (int)sh.sh_type == type &&
		    pd_symtab_add_elf(t, e, scn, &sh) < 0)
			return;
}

/* perf's order: the .symtab (else the .dynsym), then the .dynsym of a file
 * that has both, then the PLT slots (whose contents only the binary has),
 * but only when the tables gave at least one symbol */
static void load_elf_symbols(pd_dso *d, Elf *src, int has_symtab, Elf *run)
{
	size_t nr_first, nr_second;

	d->tab = pd_symtab_new();
	if (!d->tab)
		return;
	add_sections(d->tab, src, has_symtab ? SHT_SYMTAB : SHT_DYNSYM);
	nr_first = pd_symtab_count(d->tab);
	if (has_symtab)
		add_sections(d->tab, src, SHT_DYNSYM);
	nr_second = pd_symtab_count(d->tab);
	if (nr_second)
		pd_symtab_add_plt(d->tab, run);
	pd_symtab_finish_elf(d->tab, nr_first, nr_second);
}

static void load_elf(pd_dso *d)
{
	char cand[4096], hex[41], home_debug[4096], link[256];
	const char *home = getenv("HOME");
	const char *symfs = d->symfs ? d->symfs : "";
	const char *ddir = dir_or(d->debug_dir, "/usr/lib/debug");
	const char *bdir;
	elf_file sym = { .fd = -1 }, run = { .fd = -1 };
	int mismatch = 0, done = 0;
	/* perf's build-id cache names a DSO's copy "elf", its debug file
	 * "debug", and the saved vdso image "vdso" */
	static const char *const cache_forms[] = { "%s/.build-id/%.2s/%s/elf",
		"%s/.build-id/%.2s/%s/debug", "%s/.build-id/%.2s/%s/vdso", "%s/.build-id/%.2s/%s",
		"%s/.build-id/%.2s/%s.debug" };
	size_t i;

	sfmt(home_debug, sizeof(home_debug), "%s/.debug", home ? home : "/root");
	bdir = dir_or(d->buildid_dir, home_debug);
	hex_build_id(d, hex);
	/* files uploaded for this build-id come before anything local */
	for (i = 0; d->build_id_size && d->debuginfo_dir && i < 2 && !done; i++) {
		sfmt(cand, sizeof(cand), cache_forms[i], d->debuginfo_dir, hex, hex + 2);
		done = try_candidate(d, cand, &sym, &run, &mismatch);
	}
	/* perf's order: its build-id cache, debug files by build-id, the
	 * binary itself, debug files by path and by .gnu_debuglink */
	for (i = 0; d->build_id_size && i < sizeof(cache_forms) / sizeof(*cache_forms) && !done;
	     i++) {
		sfmt(cand, sizeof(cand), cache_forms[i], bdir, hex, hex + 2);
		done = try_candidate(d, cand, &sym, &run, &mismatch);
	}
	if (!done && d->build_id_size) {
		sfmt(cand, sizeof(cand), "%s%s/.build-id/%.2s/%s.debug", symfs, ddir, hex, hex + 2);
		done = try_candidate(d, cand, &sym, &run, &mismatch);
	}
	if (!done) {
		sfmt(cand, sizeof(cand), "%s%s", symfs, d->path);
		done = try_candidate(d, cand, &sym, &run, &mismatch);
	}
	/* no recorded build-id: the binary's own one finds its debug file */
	if (!done && run.e && !d->build_id_size) {
		uint8_t bid[20];
		int n = elf_build_id(run.e, bid, sizeof(bid));
		char h2[41];

		if (n > 0)
			to_hex(bid, (size_t)n, h2);
		if (n > 1) {
			sfmt(cand, sizeof(cand), "%s%s/.build-id/%.2s/%s.debug", symfs, ddir, h2, h2 + 2);
			done = try_candidate(d, cand, &sym, &run, &mismatch);
		}
	}
	if (!done) {
		sfmt(cand, sizeof(cand), "%s%s%s.debug", symfs, ddir, d->path);
		done = try_candidate(d, cand, &sym, &run, &mismatch);
	}
	if (!done) {
		sfmt(cand, sizeof(cand), "%s%s%s", symfs, ddir, d->path);
		done = try_candidate(d, cand, &sym, &run, &mismatch);
	}
	if (!done && run.e) {
		read_debuglink(run.e, link, sizeof(link));
		if (*link) {
			char dir[4096], *slash;

			sfmt(dir, sizeof(dir), "%s", d->path);
			slash = strrchr(dir, '/');
			if (slash) {
				*slash = '\0';
				sfmt(cand, sizeof(cand), "%s%s/%s", symfs, dir, link);
				if (strcmp(cand, run.path))
					done = try_candidate(d, cand, &sym, &run, &mismatch);
				sfmt(cand, sizeof(cand), "%s%s/.debug/%s", symfs, dir, link);
				if (!done)
					done = try_candidate(d, cand, &sym, &run, &mismatch);
				sfmt(cand, sizeof(cand), "%s%s%s/%s", symfs, ddir, dir, link);
				if (!done)
					done = try_candidate(d, cand, &sym, &run, &mismatch);
			}
		}
	}
	/* nothing local: the cache's fetcher (debuginfod in the daemon) */
	if (!sym.e && d->build_id_size && d->cache->fetch &&
	    d->cache->fetch(d->cache->fetch_ctx, d->build_id, d->build_id_size, cand,
			    sizeof(cand)) == 0)
		done = try_candidate(d, cand, &sym, &run, &mismatch);
	/* the binary itself for PLT slots when a debug file had the names */
	if (sym.e && !run.e) {
		elf_file f;

		sfmt(cand, sizeof(cand), "%s%s", symfs, d->path);
		if (strcmp(cand, sym.path) && elf_file_open(&f, d, cand) == 0)
			run = f;
	}
	if (!sym.e && !run.e) {
		if (mismatch)
			sfmt(d->problem, sizeof(d->problem),
			     "%s: build-id mismatch with the recording (%s); not used for names",
			     d->path, hex);
		else
			sfmt(d->problem, sizeof(d->problem), "%s: no symbols found", d->path);
		return;
	}
	{
		elf_file *src = sym.e ? &sym : &run;

		/* program headers of the binary map file offsets to addresses;
		 * a debug file keeps the same ones */
		load_segments(d, run.e ? run.e : src->e);
		d->dwarf_path = strdup(src->path);
		d->run_path = strdup(run.e ? run.path : src->path);
		load_elf_symbols(d, src->e, sym.e != NULL, run.e ? run.e : src->e);
	}
	elf_file_close(&sym);
	elf_file_close(&run);
}

/* ---- kallsyms and perf-PID.map ------------------------------------------ */

static void load_text(pd_dso *d)
{
	int kallsyms = d->kind == PD_DSO_KALLSYMS;

	d->tab = pd_symtab_new();
	if (!d->tab)
		return;
	if ((kallsyms ? pd_symtab_add_kallsyms(d->tab, d->path) :
			pd_symtab_add_perfmap(d->tab, d->path)) < 0) {
		sfmt(d->problem, sizeof(d->problem), "%s: %s", d->path, strerror(errno));
		return;
	}
	if (kallsyms && !pd_symtab_count(d->tab))
		sfmt(d->problem, sizeof(d->problem),
		     "%s: no kernel symbols (addresses hidden?)", d->path);
	pd_symtab_finish(d->tab, kallsyms);
}

/* ---- lookup ------------------------------------------------------------- */

static void load(pd_dso *d)
{
	if (__atomic_load_n(&d->loaded, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&d->lock);
	if (!d->loaded) {
		if (d->kind == PD_DSO_ELF)
			load_elf(d);
		else
			load_text(d);
		d->bytes = sizeof(*d) + d->nr_segs * sizeof(dso_load_seg) +
			   (d->tab ? pd_symtab_bytes(d->tab) : 0);
		__atomic_fetch_add(&d->cache->bytes, d->bytes, __ATOMIC_RELAXED);
		__atomic_store_n(&d->loaded, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&d->lock);
}

/* file offset -> the address the symbol table uses. perf (since 5.19)
 * moves each symbol of a user ELF by its segment's p_vaddr - p_offset,
 * the segment found by address over its whole memory size, and looks up
 * the map's file offset: an offset past a segment's file bytes but
 * within its memory (.bss, where a frame-pointer walk through code
 * without them often lands) is named by that segment's symbols too. An
 * offset inside one segment's file bytes goes by that segment first. */
static uint64_t offset_to_vaddr(const pd_dso *d, uint64_t off)
{
	size_t i;

	for (i = 0; i < d->nr_segs; i++)
		if (off >= d->segs[i].offset && off - d->segs[i].offset < d->segs[i].filesz)
			return off - d->segs[i].offset + d->segs[i].vaddr;
	for (i = 0; i < d->nr_segs; i++)
		if (off >= d->segs[i].offset && off - d->segs[i].offset < d->segs[i].memsz)
			return off - d->segs[i].offset + d->segs[i].vaddr;
	return off;
}

const char *pd_dso_lookup(pd_dso *d, uint64_t addr, uint64_t *sym_off)
{
	load(d);
	if (!d->tab)
		return NULL;
	if (d->kind == PD_DSO_ELF)
		addr = offset_to_vaddr(d, addr);
	return pd_symtab_lookup(d->tab, addr, sym_off);
}

uint64_t pd_dso_serial(const pd_dso *d)
{
	return d->serial;
}

const char *pd_dso_problem(pd_dso *d)
{
	load(d);
	return d->problem[0] ? d->problem : NULL;
}

size_t pd_dso_nr_symbols(pd_dso *d)
{
	load(d);
	return d->tab ? pd_symtab_count(d->tab) : 0;
}

int pd_dso_loaded(const pd_dso *d)
{
	return __atomic_load_n(&d->loaded, __ATOMIC_ACQUIRE);
}

void pd_dso_prepare(pd_dso *d)
{
	load(d);
	if (d->tab)
		pd_symtab_prepare(d->tab);
}

/* ---- the cache ------------------------------------------------------------ */

pd_dso_cache *pd_dso_cache_new(size_t max_bytes)
{
	pd_dso_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->inl = pd_inl_cache_new(0);
	if (!c->inl) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->max_bytes = max_bytes ? max_bytes : DSO_DEFAULT_CACHE_BYTES;
	elf_version(EV_CURRENT);
	return c;
}

static void dso_free(pd_dso *d)
{
	pthread_mutex_destroy(&d->lock);
	free(d->key);
	free(d->path);
	free(d->symfs);
	free(d->buildid_dir);
	free(d->debug_dir);
	free(d->debuginfo_dir);
	pd_symtab_free(d->tab);
	free(d->segs);
	if (d->inl)
		pd_inl_put(d->cache->inl, d->inl);
	free(d->dwarf_path);
	free(d->run_path);
	free(d);
}

void pd_dso_cache_free(pd_dso_cache *c)
{
	pd_dso *d, *n;

	if (!c)
		return;
	for (d = c->list; d; d = n) {
		n = d->next;
		dso_free(d);
	}
	pd_inl_cache_free(c->inl);
	free(c->tab);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static uint64_t key_hash(const char *s)
{
	return pd_fnv_str(PD_FNV_BASIS, s);
}

/* Add d to the key index (under c->lock); the index doubles at 3/4. */
static int tab_add(pd_dso_cache *c, pd_dso *d)
{
	if ((c->tab_n + 1) * 4 > c->tab_cap * 3) {
		size_t cap = c->tab_cap ? c->tab_cap * 2 : 64, i;
		pd_dso **t = calloc(cap, sizeof(*t));

		if (!t)
			return -1;
		for (i = 0; i < c->tab_cap; i++) {
			pd_dso *x = c->tab[i], *nx;

			for (; x; x = nx) {
				nx = x->hnext;
				x->hnext = t[x->key_hash & (cap - 1)];
				t[x->key_hash & (cap - 1)] = x;
			}
		}
		free(c->tab);
		c->tab = t;
		c->tab_cap = cap;
	}
	d->hnext = c->tab[d->key_hash & (c->tab_cap - 1)];
	c->tab[d->key_hash & (c->tab_cap - 1)] = d;
	d->in_tab = 1;
	c->tab_n++;
	return 0;
}

static void tab_remove(pd_dso_cache *c, pd_dso *d)
{
	pd_dso **pp;

	if (!d->in_tab)
		return;
	for (pp = &c->tab[d->key_hash & (c->tab_cap - 1)]; *pp; pp = &(*pp)->hnext)
		if (*pp == d) {
			*pp = d->hnext;
			break;
		}
	d->in_tab = 0;
	c->tab_n--;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

pd_dso *pd_dso_get(pd_dso_cache *c, int kind, const char *path,
		   const uint8_t *build_id, size_t build_id_size,
		   const pd_dso_paths *paths)
{
	char hex[41] = "", *key;
	uint64_t h;
	size_t klen;
	pd_dso *d;
	struct stat st = { 0 };
	const pd_dso_paths none = { 0 };

	if (!paths)
		paths = &none;
	if (!build_id)
		build_id_size = 0;
	if (build_id_size > 20)
		build_id_size = 20;
	to_hex(build_id ? build_id : (const uint8_t *)"", build_id_size, hex);
	/* files that change under one name are keyed by their identity too */
	if (kind != PD_DSO_ELF || !build_id_size)
		stat(path, &st);
	klen = strlen(path) + 256 + (paths->symfs ? strlen(paths->symfs) : 0) +
	       (paths->buildid_dir ? strlen(paths->buildid_dir) : 0) +
	       (paths->debug_dir ? strlen(paths->debug_dir) : 0) +
	       (paths->debuginfo_dir ? strlen(paths->debuginfo_dir) : 0);
	key = malloc(klen);
	if (!key)
		return NULL;
	sfmt(key, klen, "%d|%s|%s|%lld.%ld|%lld|%s|%s|%s|%s", kind, path, hex,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_size,
		 paths->symfs ? paths->symfs : "", paths->buildid_dir ? paths->buildid_dir : "",
		 paths->debug_dir ? paths->debug_dir : "",
		 paths->debuginfo_dir ? paths->debuginfo_dir : "");
	h = key_hash(key);
	pthread_mutex_lock(&c->lock);
	for (d = c->tab_cap ? c->tab[h & (c->tab_cap - 1)] : NULL; d; d = d->hnext)
		if (d->key_hash == h && !strcmp(d->key, key))
			break;
	if (d) {
		__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&c->lock);
		free(key);
		return d;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		goto fail;
	pthread_mutex_init(&d->lock, NULL);
	d->key = key;
	key = NULL;
	d->kind = kind;
	d->path = strdup(path);
	memcpy(d->build_id, build_id ? build_id : d->build_id, build_id_size);
	d->build_id_size = build_id_size;
	d->symfs = dup_or_null(paths->symfs);
	d->buildid_dir = dup_or_null(paths->buildid_dir);
	d->debug_dir = dup_or_null(paths->debug_dir);
	d->debuginfo_dir = dup_or_null(paths->debuginfo_dir);
	d->refs = 1;
	d->cache = c;
	d->serial = ++c->serials;
	if (!d->path) {
		dso_free(d);
		d = NULL;
		goto fail;
	}
	d->key_hash = h;
	if (tab_add(c, d) < 0) {
		dso_free(d);
		d = NULL;
		goto fail;
	}
	d->next = c->list;
	c->list = d;
fail:
	pthread_mutex_unlock(&c->lock);
	free(key);
	return d;
}

void pd_dso_put(pd_dso_cache *c, pd_dso *d)
{
	pd_dso **pp;

	if (!d)
		return;
	/* a map of a library gives its reference back thousands of times in
	 * a system-wide recording: the lock only when over budget */
	__atomic_fetch_sub(&d->refs, 1, __ATOMIC_ACQ_REL);
	if (__atomic_load_n(&c->bytes, __ATOMIC_RELAXED) <= c->max_bytes)
		return;
	pthread_mutex_lock(&c->lock);
	/* over budget: drop tables no one holds, oldest (list tail) first */
	pp = &c->list;
	while (__atomic_load_n(&c->bytes, __ATOMIC_RELAXED) > c->max_bytes && *pp) {
		pd_dso *x = *pp;

		if (__atomic_load_n(&x->refs, __ATOMIC_ACQUIRE) == 0 && x->loaded) {
			*pp = x->next;
			__atomic_fetch_sub(&c->bytes, x->bytes, __ATOMIC_RELAXED);
			tab_remove(c, x);
			dso_free(x);
			continue;
		}
		pp = &x->next;
	}
	pthread_mutex_unlock(&c->lock);
}

void pd_dso_cache_set_fetch(pd_dso_cache *c, pd_dso_fetch_fn fn, void *ctx)
{
	pthread_mutex_lock(&c->lock);
	c->fetch = fn;
	c->fetch_ctx = ctx;
	pthread_mutex_unlock(&c->lock);
}

void pd_dso_cache_forget(pd_dso_cache *c, const uint8_t *build_id, size_t build_id_size)
{
	pd_dso **pp;

	if (build_id_size > 20)
		build_id_size = 20;
	pthread_mutex_lock(&c->lock);
	for (pp = &c->list; *pp;) {
		pd_dso *x = *pp;

		if (!x->build_id_size || x->build_id_size != build_id_size ||
		    memcmp(x->build_id, build_id, build_id_size)) {
			pp = &x->next;
			continue;
		}
		/* no lookup finds it again: freed once no one holds it */
		tab_remove(c, x);
		if (__atomic_load_n(&x->refs, __ATOMIC_ACQUIRE) == 0) {
			*pp = x->next;
			if (x->loaded)
				__atomic_fetch_sub(&c->bytes, x->bytes, __ATOMIC_RELAXED);
			dso_free(x);
			continue;
		}
		pp = &x->next;
	}
	pthread_mutex_unlock(&c->lock);
}

void pd_dso_ref(pd_dso_cache *c, pd_dso *d)
{
	if (!d)
		return;
	(void)c;
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
}

/* The index of the dso's DWARF, taken on first use; NULL: none. */
static pd_inl *inl_of(pd_dso *d)
{
	pd_inl *inl;

	load(d);
	if (d->kind != PD_DSO_ELF || !d->dwarf_path)
		return NULL;
	inl = __atomic_load_n(&d->inl, __ATOMIC_ACQUIRE);
	if (!inl) {
		pthread_mutex_lock(&d->lock);
		if (!d->inl)
			__atomic_store_n(&d->inl, pd_inl_get(d->cache->inl, d->dwarf_path, d->build_id,
							     d->build_id_size), __ATOMIC_RELEASE);
		inl = d->inl;
		pthread_mutex_unlock(&d->lock);
	}
	return inl;
}

size_t pd_dso_inlines(pd_dso *d, uint64_t off, const char **names, size_t max,
		      pd_dso_naming *how)
{
	pd_inl *inl = max ? inl_of(d) : NULL;
	uint64_t addr = offset_to_vaddr(d, off), sym_off;
	pd_dso_naming local;
	pd_inl_naming in;
	size_t n;

	if (!how)
		how = &local;
	*how = (pd_dso_naming){ .func = UINT64_MAX };
	/* perf names these frames as addr2line -i does, from the DWARF of the
	 * file it took the symbols from */
	if (!inl)
		return 0;
	n = pd_inl_lookup(inl, addr, names, max, &in);
	if (n && in.func != UINT64_MAX && d->tab) {
		how->func = in.func;
		how->sym = pd_symtab_lookup(d->tab, addr, &sym_off);
		how->sym_at_low = how->sym && addr - sym_off == in.low;
	}
	if (how == &local && local.sym_at_low)
		names[0] = local.sym;
	return n;
}

void pd_dso_prepare_inlines(pd_dso *d)
{
	pd_inl_prepare(inl_of(d));
}

const char *pd_dso_file(pd_dso *d)
{
	load(d);
	return d->run_path;
}

const char *pd_dso_debug_file(pd_dso *d)
{
	load(d);
	return d->dwarf_path;
}

const char *pd_dso_path(const pd_dso *d)
{
	return d->path;
}

const uint8_t *pd_dso_build_id(const pd_dso *d, size_t *size)
{
	*size = d->build_id_size;
	return d->build_id_size ? d->build_id : NULL;
}

size_t pd_dso_cache_bytes(pd_dso_cache *c)
{
	return __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
}

size_t pd_dso_cache_inline_bytes(pd_dso_cache *c)
{
	return pd_inl_cache_bytes(c->inl);
}
