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
#include "symtree.h"

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
#include <ctype.h>
#include <libiberty/demangle.h>
#include <elfutils/libdw.h>
#include <dwarf.h>


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
#define DSO_MAX_NAME		65536	/* longer symbol names are cut (perf keeps
					   them whole; Rust closures reach 10 KB) */
#define DSO_MAX_SYMBOLS		(16u << 20)
#define DSO_MAX_PERFMAP_LINE	8192
#define DSO_PAGE		4096
#define DSO_PLT_NAME		1024	/* perf 6.1 cuts "name@plt" to 1023 bytes */

typedef struct dso_sym {
	uint64_t start, end;
	uint64_t sym_start;	/* where the symbol starts (an ELF table's
				   entries are pieces of symbols) */
	uint32_t name;		/* offset into names */
	uint8_t bind;		/* STB_* (kallsyms: GLOBAL for upper case) */
	uint8_t sized;		/* has a size (after ends are fixed up) */
	uint8_t type;		/* STT_* (kallsyms, JIT maps: STT_FUNC) */
} dso_sym;

typedef struct dso_load_seg {	/* PT_LOAD: file offset -> address */
	uint64_t offset, filesz, vaddr;
} dso_load_seg;

struct pd_dso {
	pd_dso *next;		/* in the cache's list */
	char *key;
	int kind;
	char *path;
	uint8_t build_id[20];
	size_t build_id_size;
	char *symfs, *buildid_dir, *debug_dir, *debuginfo_dir;
	long refs;		/* under the cache lock */
	pthread_mutex_t lock;	/* serialises the one load */
	int loaded;		/* atomically published after the load */
	dso_sym *syms;
	size_t nr_syms;
	char *names;
	size_t names_len, names_cap;
	dso_load_seg *segs;
	size_t nr_segs;
	char problem[320];
	/* DWARF of the file with the names, for inlined frames (opened on
	 * first use, under lock) and the inline names handed out */
	char *dwarf_path;
	char *run_path;		/* the binary found (build-id checked) */
	int dwarf_tried, dwarf_fd;
	Dwarf *dwarf;
	char **inl;
	size_t nr_inl;
	size_t bytes;
	pd_dso_cache *cache;
	uint64_t serial;	/* unique in its cache, never reused */
};

struct pd_dso_cache {
	pthread_mutex_t lock;
	pd_dso *list;
	size_t bytes, max_bytes;
	pd_dso_fetch_fn fetch;	/* set before use, read-only after */
	void *fetch_ctx;
	uint64_t serials;	/* dsos made so far */
};

/* ---- names ------------------------------------------------------------- */

char *pd_demangle(const char *name)
{
	/* perf (not verbose) demangles without parameters; libiberty's
	 * automatic style also recognises Rust (legacy and v0). */
	if (!name || !(name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')))
		return NULL;
	return cplus_demangle(name, DMGL_NO_OPTS);
}

static int add_name(pd_dso *d, const char *s, uint32_t *out)
{
	size_t n = strnlen(s, DSO_MAX_NAME);

	if (d->names_len + n + 1 > UINT32_MAX)
		return -1;
	if (d->names_len + n + 1 > d->names_cap) {
		size_t cap = d->names_cap ? d->names_cap * 2 : 4096;
		char *p;

		while (cap < d->names_len + n + 1)
			cap *= 2;
		p = realloc(d->names, cap);
		if (!p)
			return -1;
		d->names = p;
		d->names_cap = cap;
	}
	memcpy(d->names + d->names_len, s, n);
	d->names[d->names_len + n] = '\0';
	*out = (uint32_t)d->names_len;
	d->names_len += n + 1;
	return 0;
}

static int add_sym(pd_dso *d, size_t *cap, uint64_t start, uint64_t size,
		   int bind, int type, const char *name, int demangle)
{
	dso_sym *s;
	char *dm = demangle ? pd_demangle(name) : NULL;
	int rc;

	if (d->nr_syms >= DSO_MAX_SYMBOLS) {
		free(dm);
		return -1;
	}
	if (d->nr_syms == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		dso_sym *p = realloc(d->syms, ncap * sizeof(*p));

		if (!p) {
			free(dm);
			return -1;
		}
		d->syms = p;
		*cap = ncap;
	}
	s = &d->syms[d->nr_syms];
	s->start = start;
	s->sym_start = start;
	s->end = start + size;
	s->bind = (uint8_t)bind;
	s->sized = size != 0;
	s->type = (uint8_t)type;
	rc = add_name(d, dm ? dm : name, &s->name);
	free(dm);
	if (rc == 0)
		d->nr_syms++;
	return rc;
}

/* by address, then in the order the source listed them (names are
 * appended in that order), as perf's tree keeps equal addresses */
static int sym_cmp(const void *a, const void *b)
{
	const dso_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choice between two symbols at one address: 1 keeps a, 0 keeps b */
static int prefer_first(const pd_dso *d, const dso_sym *a, const dso_sym *b)
{
	const char *na = d->names + a->name, *nb = d->names + b->name;
	size_t ua, ub, la, lb;

	if (a->sized != b->sized)
		return a->sized;
	if ((a->type == STT_NOTYPE) != (b->type == STT_NOTYPE))
		return b->type == STT_NOTYPE;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	ua = leading_underscores(na);
	ub = leading_underscores(nb);
	if (ua != ub)
		return ua < ub;
	la = strlen(na);
	lb = strlen(nb);
	if (la != lb)
		return la > lb;
	/* kernel syscall aliases "SyS_*" lose */
	return strncmp(na, "SyS", 3) && strncmp(na, "compat_SyS", 10);
}

/* The tables grew by doubling: give back what is not used (they live as
 * long as the dso is held, up to half of them was slack). */
static void shrink_table(pd_dso *d)
{
	dso_sym *v = realloc(d->syms, (d->nr_syms ? d->nr_syms : 1) * sizeof(*v));
	char *nm = realloc(d->names, d->names_len ? d->names_len : 1);

	if (v)
		d->syms = v;
	if (nm) {
		d->names = nm;
		d->names_cap = d->names_len ? d->names_len : 1;
	}
	d->bytes = d->nr_syms * sizeof(dso_sym) + d->names_cap +
		   d->nr_segs * sizeof(dso_load_seg) + sizeof(*d);
}

/* Sort, give unsized symbols an end, then keep the best of the symbols
 * at one address (perf's order: ends first, so of two unsized aliases the
 * later one gets the size and wins). */
static void finish_table(pd_dso *d, int kallsyms)
{
	size_t i, o;

	if (!d->nr_syms)
		return;
	qsort(d->syms, d->nr_syms, sizeof(*d->syms), sym_cmp);
	for (i = 0; i + 1 < d->nr_syms; i++) {
		dso_sym *p = &d->syms[i], *c = &d->syms[i + 1];

		if (p->end != p->start)
			continue;
		if (kallsyms && (!strchr(d->names + p->name, '[')) !=
				(!strchr(d->names + c->name, '[')))
			p->end = (p->end + DSO_PAGE + DSO_PAGE - 1) / DSO_PAGE * DSO_PAGE;
		else
			p->end = c->start;
	}
	if (d->syms[i].end == d->syms[i].start)
		d->syms[i].end = (d->syms[i].start + DSO_PAGE - 1) / DSO_PAGE * DSO_PAGE + DSO_PAGE;
	for (i = 0; i < d->nr_syms; i++)
		d->syms[i].sized = d->syms[i].end != d->syms[i].start;
	for (i = 1, o = 0; i < d->nr_syms; i++) {
		if (d->syms[i].start == d->syms[o].start) {
			if (!prefer_first(d, &d->syms[o], &d->syms[i]))
				d->syms[o] = d->syms[i];
			continue;
		}
		d->syms[++o] = d->syms[i];
	}
	d->nr_syms = o + 1;
	/* kallsyms' "\t[module]" suffix is not part of the name */
	for (i = 0; kallsyms && i < d->nr_syms; i++) {
		char *n = d->names + d->syms[i].name;
		char *tab = strchr(n, '\t');

		if (tab)
			*tab = '\0';
	}
	shrink_table(d);
}

/* ---- ELF tables: perf's symbol tree, flattened --------------------------- */

static uint64_t page_end(uint64_t start)
{
	return (start + DSO_PAGE - 1) / DSO_PAGE * DSO_PAGE + DSO_PAGE;
}

/* perf's symbols__fixup_end over the whole tree, in address order: an
 * unsized symbol ends where the next one starts, the last one a page on */
static void tree_fixup_end(pd_symtree *t)
{
	uint32_t x, nx;

	for (x = pd_symtree_first(t); x != PD_SYMTREE_NONE; x = nx) {
		nx = pd_symtree_next(t, x);
		if (pd_symtree_end(t, x) != pd_symtree_start(t, x))
			continue;
		pd_symtree_set_end(t, x, nx != PD_SYMTREE_NONE ? pd_symtree_start(t, nx) :
				   page_end(pd_symtree_start(t, x)));
	}
}

/* perf's symbols__fixup_duplicate: of the symbols at one address the best
 * stays, the others are erased from the tree (in perf's order: that
 * shapes the tree) */
static void tree_fixup_duplicate(pd_dso *d, pd_symtree *t)
{
	uint32_t cur = pd_symtree_first(t);

	while (cur != PD_SYMTREE_NONE) {
		uint32_t nx = pd_symtree_next(t, cur);
		dso_sym *a, *b;

		if (nx == PD_SYMTREE_NONE)
			break;
		if (pd_symtree_start(t, cur) != pd_symtree_start(t, nx)) {
			cur = nx;
			continue;
		}
		a = &d->syms[pd_symtree_item(t, cur)];
		b = &d->syms[pd_symtree_item(t, nx)];
		a->sized = pd_symtree_end(t, cur) != pd_symtree_start(t, cur);
		b->sized = pd_symtree_end(t, nx) != pd_symtree_start(t, nx);
		if (prefer_first(d, a, b)) {
			pd_symtree_erase(t, nx);
		} else {
			pd_symtree_erase(t, cur);
			cur = nx;
		}
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Append the piece [start, end) of node x's symbol (x NONE: a gap, not
 * added), joining it to the previous piece when that is the same symbol. */
static int add_piece(dso_sym *out, size_t *n, const pd_dso *d, const pd_symtree *t,
		     uint32_t x, uint64_t start, uint64_t end)
{
	const dso_sym *s;

	if (x == PD_SYMTREE_NONE)
		return 0;
	s = &d->syms[pd_symtree_item(t, x)];
	if (*n && out[*n - 1].end == start && out[*n - 1].name == s->name &&
	    out[*n - 1].sym_start == s->start) {
		out[*n - 1].end = end;
		return 0;
	}
	out[*n] = *s;
	out[*n].start = start;
	out[*n].end = end;
	out[*n].sym_start = s->start;
	(*n)++;
	return 0;
}

/*
 * An ELF table as perf 6.1 builds it (dso__load_sym, then
 * dso__synthesize_plt_symbols): the .symtab (else .dynsym) symbols
 * inserted in file order, ends fixed, duplicates dropped; the same again
 * for the .dynsym of a file that also has a .symtab; then the PLT slots
 * inserted, after the ends were fixed, so an unsized symbol before the
 * PLT (_init) covers the slots too. Where symbols overlap, perf's answer
 * is the one its tree search meets first. The table kept is that answer
 * flattened: pieces that do not overlap, each naming the symbol perf
 * names there, looked up by binary search.
 */
static void finish_elf_table(pd_dso *d, size_t nr_first, size_t nr_second)
{
	pd_symtree *t = pd_symtree_new();
	uint64_t *b = NULL;
	dso_sym *out = NULL;
	size_t i, nb = 0, nu = 0, n = 0;
	uint32_t x;
	int ok = 0;

	if (!t || !d->nr_syms)
		goto out;
	for (i = 0; i < d->nr_syms; i++) {
		if (pd_symtree_insert(t, d->syms[i].start, d->syms[i].end, (uint32_t)i) ==
		    PD_SYMTREE_NONE)
			goto out;
		if (i + 1 == nr_first || (i + 1 == nr_second && nr_second > nr_first)) {
			tree_fixup_end(t);
			tree_fixup_duplicate(d, t);
		}
	}
	/* every start and end; between two of them perf's search goes the
	 * same way for each address, except perhaps at the first */
	b = malloc(2 * d->nr_syms * sizeof(*b));
	if (!b)
		goto out;
	for (x = pd_symtree_first(t); x != PD_SYMTREE_NONE; x = pd_symtree_next(t, x)) {
		b[nb++] = pd_symtree_start(t, x);
		b[nb++] = pd_symtree_end(t, x);
	}
	qsort(b, nb, sizeof(*b), u64_cmp);
	for (i = 0; i < nb; i++)
		if (!nu || b[nu - 1] != b[i])
			b[nu++] = b[i];
	out = malloc(2 * nu * sizeof(*out));
	if (!out)
		goto out;
	for (i = 0; i < nu && b[i] != UINT64_MAX; i++) {
		uint64_t lo = b[i], hi = i + 1 < nu ? b[i + 1] : lo + 1;

		add_piece(out, &n, d, t, pd_symtree_find(t, lo), lo, lo + 1);
		if (lo + 1 < hi)
			add_piece(out, &n, d, t, pd_symtree_find(t, lo + 1), lo + 1, hi);
	}
	free(d->syms);
	d->syms = out;
	d->nr_syms = n;
	ok = 1;
out:
	pd_symtree_free(t);
	free(b);
	if (ok)
		shrink_table(d);
	else
		finish_table(d, 0);	/* out of memory: the sorted table */
}

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

static Elf_Scn *find_section(Elf *e, const char *name, GElf_Shdr *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, out))
			continue;
		n = elf_strptr(e, shstrndx, out->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
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
		d->segs[d->nr_segs].vaddr = ph.p_vaddr;
		d->nr_segs++;
	}
}

/* Function symbols of one symbol table section. */
static int load_symtab(pd_dso *d, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh,
		       size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n, shstrndx;

	if (!data || !sh->sh_entsize || elf_getshdrstrndx(e, &shstrndx) < 0)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		GElf_Shdr tsh;
		Elf_Scn *tscn;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || !s.st_name)
			continue;
		/* perf's table: functions and objects, and labels (untyped,
		 * default visibility) of sections named like text or data */
		if (type == STT_NOTYPE && GELF_ST_VISIBILITY(s.st_other) == STV_DEFAULT) {
			const char *sn;

			tscn = elf_getscn(e, s.st_shndx);
			if (!tscn || !gelf_getshdr(tscn, &tsh))
				continue;
			sn = elf_strptr(e, shstrndx, tsh.sh_name);
			if (!sn || (!strstr(sn, "text") && !strstr(sn, "data")))
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT) {
			continue;
		}
		name = elf_strptr(e, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (add_sym(d, cap, s.st_value, s.st_size, GELF_ST_BIND(s.st_info), type, name, 1) < 0)
			return -1;
	}
	return 0;
}

/* The symbols of every section of this type (one, in practice). */
static void load_section(pd_dso *d, Elf *e, int type, size_t *cap)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && (int)sh.sh_type == type &&
		    load_symtab(d, e, scn, &sh, cap) < 0)
			return;
}

/* The .plt's header and slot sizes as perf 6.1 assumes them per machine
 * (elsewhere, x86 included, both are the section's sh_entsize). */
static void plt_sizes(const GElf_Ehdr *eh, const GElf_Shdr *plt, uint64_t *header,
		      uint64_t *slot)
{
	switch (eh->e_machine) {
	case EM_ARM:
		*header = 20, *slot = 12;
		break;
	case EM_AARCH64:
		*header = 32, *slot = 16;
		break;
	case EM_SPARC:
		*header = 48, *slot = 12;
		break;
	case EM_SPARCV9:
		*header = 128, *slot = 32;
		break;
	default:
		*header = *slot = plt->sh_entsize;
		break;
	}
}

/*
 * "name@plt" for each .rela.plt (else .rel.plt) entry, as perf 6.1's
 * dso__synthesize_plt_symbols makes them: the n-th relocation names the
 * n-th slot of .plt after its header, whatever the code there is. perf
 * 6.1 knows neither .plt.sec (IBT) nor .plt.got; addresses there are
 * named by whatever symbol covers them. IRELATIVE slots have no symbol:
 * "@plt".
 */
static int load_plt(pd_dso *d, Elf *e, size_t *cap)
{
	GElf_Shdr plt_sh, rel_sh, dyn_sh;
	Elf_Scn *plt = find_section(e, ".plt", &plt_sh);
	Elf_Scn *rel = find_section(e, ".rela.plt", &rel_sh);
	Elf_Scn *dyn = find_section(e, ".dynsym", &dyn_sh);
	Elf_Data *rdata, *sdata;
	uint64_t first, header, slot;
	size_t i, n;
	GElf_Ehdr eh;

	if (!rel)
		rel = find_section(e, ".rel.plt", &rel_sh);
	if (!plt || !rel || !dyn || !gelf_getehdr(e, &eh) || !rel_sh.sh_entsize ||
	    rel_sh.sh_link != elf_ndxscn(dyn) ||
	    (rel_sh.sh_type != SHT_RELA && rel_sh.sh_type != SHT_REL))
		return 0;
	plt_sizes(&eh, &plt_sh, &header, &slot);
	first = plt_sh.sh_addr + header;
	rdata = elf_getdata(rel, NULL);
	sdata = elf_getdata(dyn, NULL);
	if (!rdata || !sdata)
		return 0;
	n = rel_sh.sh_size / rel_sh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Rela ra;
		GElf_Rel r;
		GElf_Sym s;
		const char *name = NULL;
		char buf[DSO_PLT_NAME], *dm;
		uint64_t info;

		if (rel_sh.sh_type == SHT_RELA) {
			if (!gelf_getrela(rdata, (int)i, &ra))
				break;
			info = ra.r_info;
		} else {
			if (!gelf_getrel(rdata, (int)i, &r))
				break;
			info = r.r_info;
		}
		if (gelf_getsym(sdata, (int)GELF_R_SYM(info), &s))
			name = elf_strptr(e, dyn_sh.sh_link, s.st_name);
		if (!name)
			name = "";
		dm = pd_demangle(name);
		sfmt(buf, sizeof(buf), "%s@plt", dm ? dm : name);
		free(dm);
		if (add_sym(d, cap, first + i * slot, slot, STB_GLOBAL, STT_FUNC, buf, 0) < 0)
			return -1;
	}
	return 0;
}

static void hex_build_id(const pd_dso *d, char *out)
{
	size_t i;

	for (i = 0; i < d->build_id_size; i++)
		sprintf(out + 2 * i, "%02x", d->build_id[i]);
	out[2 * d->build_id_size] = '\0';
}

static const char *dir_or(const char *dir, const char *def)
{
	return dir && *dir ? dir : def;
}

/* .gnu_debuglink file name, or "" */
static void read_debuglink(Elf *e, char *out, size_t len)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(e, ".gnu_debuglink", &sh);
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

		for (i = 0; n > 0 && i < (size_t)n; i++)
			sprintf(h2 + 2 * i, "%02x", bid[i]);
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
		size_t cap = 0, nr_first, nr_second;

		/* program headers of the binary map file offsets to addresses;
		 * a debug file keeps the same ones */
		load_segments(d, run.e ? run.e : src->e);
		d->dwarf_path = strdup(src->path);
		d->run_path = strdup(run.e ? run.path : src->path);
		/* perf's order: the .symtab (else the .dynsym), then the
		 * .dynsym of a file that has both, then the PLT slots (whose
		 * contents only the binary has), but only when the tables
		 * gave at least one symbol */
		load_section(d, src->e, sym.e ? SHT_SYMTAB : SHT_DYNSYM, &cap);
		nr_first = d->nr_syms;
		if (sym.e)
			load_section(d, src->e, SHT_DYNSYM, &cap);
		nr_second = d->nr_syms;
		if (nr_second)
			load_plt(d, run.e ? run.e : src->e, &cap);
		finish_elf_table(d, nr_first, nr_second);
	}
	elf_file_close(&sym);
	elf_file_close(&run);
}

/* ---- kallsyms and perf-PID.map ------------------------------------------ */

/* "ffffffff81000000 T _text" or "... t name\t[module]" */
static void load_kallsyms(pd_dso *d)
{
	char path[4096], line[1024];
	FILE *fp;
	size_t cap = 0;

	sfmt(path, sizeof(path), "%s", d->path);
	fp = fopen(path, "r");
	if (!fp) {
		sfmt(d->problem, sizeof(d->problem), "%s: %s", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *end, *name;
		unsigned long long addr = strtoull(line, &end, 16);
		int type;
		size_t n;

		if (end == line || *end != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = toupper((unsigned char)end[1]);
		if (type != 'T' && type != 'W')
			continue;
		name = end + 3;
		n = strcspn(name, "\n");
		name[n] = '\0';
		if (!*name || addr == 0)
			continue;
		if (add_sym(d, &cap, addr, 0,
			    isupper((unsigned char)end[1]) ? STB_GLOBAL : STB_LOCAL, STT_FUNC, name, 0) < 0)
			break;
	}
	fclose(fp);
	if (!d->nr_syms)
		sfmt(d->problem, sizeof(d->problem),
			 "%s: no kernel symbols (addresses hidden?)", path);
	finish_table(d, 1);
}

/* "START SIZE name" per line, hex without 0x (perf's JIT map format) */
static void load_perfmap(pd_dso *d)
{
	FILE *fp = fopen(d->path, "r");
	char *line;
	size_t cap = 0;

	if (!fp) {
		sfmt(d->problem, sizeof(d->problem), "%s: %s", d->path, strerror(errno));
		return;
	}
	line = malloc(DSO_MAX_PERFMAP_LINE);
	while (line && fgets(line, DSO_MAX_PERFMAP_LINE, fp)) {
		char *p = line, *e;
		unsigned long long start, size;

		start = strtoull(p, &e, 16);
		if (e == p || *e != ' ')
			continue;
		p = e + 1;
		size = strtoull(p, &e, 16);
		if (e == p || *e != ' ')
			continue;
		p = e + 1;
		p[strcspn(p, "\n")] = '\0';
		if (add_sym(d, &cap, start, size, STB_GLOBAL, STT_FUNC, p, 1) < 0)
			break;
	}
	free(line);
	fclose(fp);
	finish_table(d, 0);
}

/* ---- lookup ------------------------------------------------------------- */

static void load(pd_dso *d)
{
	if (__atomic_load_n(&d->loaded, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&d->lock);
	if (!d->loaded) {
		if (d->kind == PD_DSO_KALLSYMS)
			load_kallsyms(d);
		else if (d->kind == PD_DSO_PERFMAP)
			load_perfmap(d);
		else
			load_elf(d);
		if (!d->bytes)
			d->bytes = sizeof(*d);
		pthread_mutex_lock(&d->cache->lock);
		d->cache->bytes += d->bytes;
		pthread_mutex_unlock(&d->cache->lock);
		__atomic_store_n(&d->loaded, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&d->lock);
}

/* file offset -> the address the symbol table uses */
static uint64_t offset_to_vaddr(const pd_dso *d, uint64_t off)
{
	size_t i;

	for (i = 0; i < d->nr_segs; i++)
		if (off >= d->segs[i].offset && off - d->segs[i].offset < d->segs[i].filesz)
			return off - d->segs[i].offset + d->segs[i].vaddr;
	return off;
}

const char *pd_dso_lookup(pd_dso *d, uint64_t addr, uint64_t *sym_off)
{
	size_t lo = 0, hi, k;

	load(d);
	if (d->kind == PD_DSO_ELF)
		addr = offset_to_vaddr(d, addr);
	hi = d->nr_syms;
	while (lo < hi) {	/* first symbol starting after addr */
		size_t mid = lo + (hi - lo) / 2;

		if (d->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the nearest preceding symbol, or one that encloses it */
	for (k = 0; k < 4 && lo > k; k++) {
		const dso_sym *s = &d->syms[lo - 1 - k];

		if (addr < s->end || (addr == s->start && s->start == s->end)) {
			if (sym_off)
				*sym_off = addr - s->sym_start;
			return d->names + s->name;
		}
	}
	return NULL;
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
	return d->nr_syms;
}

/* ---- the cache ------------------------------------------------------------ */

pd_dso_cache *pd_dso_cache_new(size_t max_bytes)
{
	pd_dso_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
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
	free(d->syms);
	free(d->names);
	free(d->segs);
	if (d->dwarf)
		dwarf_end(d->dwarf);
	if (d->dwarf_fd > 0)
		close(d->dwarf_fd);
	free(d->dwarf_path);
	free(d->run_path);
	for (size_t i = 0; i < d->nr_inl; i++)
		free(d->inl[i]);
	free(d->inl);
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
	pthread_mutex_destroy(&c->lock);
	free(c);
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
	size_t i, klen;
	pd_dso *d;
	struct stat st = { 0 };
	const pd_dso_paths none = { 0 };

	if (!paths)
		paths = &none;
	if (!build_id)
		build_id_size = 0;
	if (build_id_size > 20)
		build_id_size = 20;
	for (i = 0; i < build_id_size; i++)
		sprintf(hex + 2 * i, "%02x", build_id[i]);
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
	pthread_mutex_lock(&c->lock);
	for (d = c->list; d; d = d->next)
		if (!strcmp(d->key, key))
			break;
	if (d) {
		d->refs++;
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
	pthread_mutex_lock(&c->lock);
	d->refs--;
	/* over budget: drop tables no one holds, oldest (list tail) first */
	pp = &c->list;
	while (c->bytes > c->max_bytes && *pp) {
		pd_dso *x = *pp;

		if (x->refs == 0 && x->loaded) {
			*pp = x->next;
			c->bytes -= x->bytes;
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
		/* a key no lookup can match: free once no one holds it */
		x->key[0] = '\0';
		if (x->refs == 0) {
			*pp = x->next;
			if (x->loaded)
				c->bytes -= x->bytes;
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
	pthread_mutex_lock(&c->lock);
	d->refs++;
	pthread_mutex_unlock(&c->lock);
}

#define DSO_MAX_INLINE_NAMES 65536

/* an interned copy of name (valid while the dso lives), under d->lock */
static const char *intern_inline(pd_dso *d, const char *name)
{
	char *dm = pd_demangle(name), *c;
	const char *n = dm ? dm : name;
	size_t i;

	for (i = 0; i < d->nr_inl; i++)
		if (!strcmp(d->inl[i], n)) {
			free(dm);
			return d->inl[i];
		}
	if (d->nr_inl >= DSO_MAX_INLINE_NAMES) {
		free(dm);
		return NULL;
	}
	if ((d->nr_inl & (d->nr_inl - 1)) == 0) {	/* grow at powers of two */
		char **p = realloc(d->inl, (d->nr_inl ? d->nr_inl * 2 : 16) * sizeof(*p));

		if (!p) {
			free(dm);
			return NULL;
		}
		d->inl = p;
	}
	c = dm ? dm : strdup(n);
	if (!c)
		return NULL;
	d->inl[d->nr_inl++] = c;
	return c;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *n;

	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at)) &&
	    (n = dwarf_formstring(&at)))
		return n;
	if (dwarf_attr_integrate(die, DW_AT_name, &at) && (n = dwarf_formstring(&at)))
		return n;
	return NULL;
}

size_t pd_dso_inlines(pd_dso *d, uint64_t off, const char **names, size_t max)
{
	Dwarf_Die cudie, *scopes = NULL;
	uint64_t addr;
	size_t k = 0;
	int n, i;

	load(d);
	if (d->kind != PD_DSO_ELF || !d->dwarf_path || !max)
		return 0;
	addr = offset_to_vaddr(d, off);
	pthread_mutex_lock(&d->lock);
	if (!d->dwarf_tried) {
		d->dwarf_tried = 1;
		d->dwarf_fd = open(d->dwarf_path, O_RDONLY | O_CLOEXEC);
		if (d->dwarf_fd > 0)
			d->dwarf = dwarf_begin(d->dwarf_fd, DWARF_C_READ);
	}
	if (!d->dwarf || !dwarf_addrdie(d->dwarf, addr, &cudie))
		goto out;
	n = dwarf_getscopes(&cudie, addr, &scopes);
	/* dwarf_getscopes continues from an inlined subroutine into its
	 * abstract definition, which drops the functions the code was inlined
	 * into (_dl_start_final without _dl_start); the DIEs that physically
	 * contain the innermost scope are the concrete chain */
	if (n > 0) {
		Dwarf_Die *nested = NULL;
		int m = dwarf_getscopes_die(&scopes[0], &nested);

		if (m > 0) {
			free(scopes);
			scopes = nested;
			n = m;
		} else {
			free(nested);
		}
	}
	/* perf names DWARF-unwound frames as addr2line -i does: the function
	 * at the address, then each one it was inlined into, innermost first */
	for (i = 0; i < n && k < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		const char *nm;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		nm = die_name(&scopes[i]);
		if (nm && (nm = intern_inline(d, nm)))
			names[k++] = nm;
		if (tag == DW_TAG_subprogram)
			break;
	}
out:
	pthread_mutex_unlock(&d->lock);
	free(scopes);
	return k;
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
	size_t n;

	pthread_mutex_lock(&c->lock);
	n = c->bytes;
	pthread_mutex_unlock(&c->lock);
	return n;
}
