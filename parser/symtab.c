/*
 * symtab.c - perf 6.1's symbol tables: which ELF symbols count, where an
 * unsized one ends, which alias stays, the PLT slots, and what a lookup
 * answers where symbols overlap (docs/symbols.md, "PLT slots and
 * overlapping symbols"). Names are kept mangled and demangled on first
 * lookup: most symbols of a large C++ binary are never looked up.
 */
#define _GNU_SOURCE	/* memrchr */
#include "symtab.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libiberty/demangle.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symtree.h"

#define SYMTAB_MAX_NAME		65536	/* longer names are cut (perf keeps them
					   whole; Rust closures reach 10 KB) */
#define SYMTAB_MAX_SYMBOLS	(16u << 20)
#define SYMTAB_PLT_NAME		1024	/* perf 6.1 cuts "name@plt" to 1023 bytes */
#define SYMTAB_PAGE		4096
#define SYMTAB_MAX_LINE		8192	/* kallsyms and perf-PID.map lines */
#define SYMTAB_READ_BUF		65536	/* stdio buffer for those files */
#define SYMTAB_MAX_TEXT		(UINT32_MAX - 1)	/* names are 32-bit offsets */
#define SYMTAB_AHEAD		16	/* symbols whose names are asked for ahead */
#define SYMTAB_MAX_FILE		((size_t)128 << 20)	/* a kallsyms read whole: a real
							   one is 5-30 MB */

typedef struct st_sym {
	uint64_t start, end;
	uint64_t sym_start;	/* where the symbol starts (a piece may not) */
	uint32_t name;		/* offset into names */
	uint8_t bind;		/* STB_* (kallsyms: GLOBAL for upper case) */
	uint8_t type;		/* STT_* */
	uint8_t sized;		/* has a size (while finishing) */
	uint8_t flags;		/* ST_MANGLED, ST_MODULE */
} st_sym;

#define ST_MANGLED 1		/* the name is demangled on lookup */
#define ST_MODULE 2		/* kallsyms: a module's symbol */

#define ST_CLUSTER 2		/* st_sym.sized of a piece standing for a
				   cluster of overlapping symbols: its name
				   is the cluster's index */

/* Symbols that overlap, resolved (perf's tree asked about their spans) the
 * first time a lookup falls among them: most never are (an executable's
 * PLT under _init), and the tree of a large table costs more to build
 * than the rest of its loading. */
typedef struct st_cluster {
	st_sym *members;	/* the symbols, by start */
	uint32_t *member_idx;	/* their insertion numbers (tree items) */
	size_t nmembers;
	st_sym *pieces;		/* the answer, once resolved */
	size_t npieces;
	int resolved;		/* atomically published after pieces */
} st_cluster;

typedef struct st_replay {	/* what rebuilding perf's tree needs */
	uint64_t *start, *end;	/* every symbol inserted, in order */
	size_t n;
	uint32_t *er;		/* the erased ones, in order */
	size_t phase_end[3], er_end[2];
} st_replay;

typedef struct dm_slot {	/* name offset + 1 -> demangled name */
	uint32_t key;
	char *name;		/* NULL: as stored (not a pointer into names, which
				 * shrink() may move) */
} dm_slot;

struct pd_symtab {
	st_sym *s;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	pthread_mutex_t lock;	/* the demangled names, the clusters */
	dm_slot *dm;
	size_t dm_n, dm_cap, dm_bytes;
	st_cluster *clusters;
	size_t nclusters;
	st_replay *replay;	/* until the clusters are resolved */
	size_t cluster_bytes;
	/* where to search: the symbols starting in block b of 2^ix_shift
	 * bytes from ix_base are s[ix[b] .. ix[b + 1]); a binary search over
	 * a large table misses the cache at every step, one over a block's
	 * few symbols mostly does not. NULL: none (a small or unfinished
	 * table), the whole array is searched. */
	uint32_t *ix;
	size_t ix_n;		/* blocks; ix has ix_n + 1 entries */
	uint64_t ix_base;
	unsigned ix_shift;
};

/* Whether a "_Z" name could be a legacy Rust one: those carry a last
 * path segment "17h" and 16 hex digits, then 'E'. */
static int may_be_legacy_rust(const char *name)
{
	const char *p;

	for (p = strstr(name, "17h"); p; p = strstr(p + 1, "17h")) {
		size_t i;

		for (i = 3; i < 19 && isxdigit((unsigned char)p[i]); i++)
			;
		if (i == 19 && p[19] == 'E')
			return 1;
	}
	return 0;
}

char *pd_demangle(const char *name)
{
	/* perf (not verbose) demangles without parameters; libiberty's
	 * automatic style also recognises Rust (legacy and v0). It tries
	 * Rust first, scanning the whole name: a C++ name that cannot be a
	 * Rust one goes straight to the C++ demangler (the same answer;
	 * the scan was most of demangling a large C++ program's table). */
	if (!name || !(name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')))
		return NULL;
	if (name[1] == 'Z' && !may_be_legacy_rust(name))
		return cplus_demangle(name, DMGL_GNU_V3);
	return cplus_demangle(name, DMGL_NO_OPTS);
}

static void replay_free(st_replay *r)
{
	if (!r)
		return;
	free(r->start);
	free(r->end);
	free(r->er);
	free(r);
}

pd_symtab *pd_symtab_new(void)
{
	pd_symtab *t = calloc(1, sizeof(*t));

	if (t)
		pthread_mutex_init(&t->lock, NULL);
	return t;
}

void pd_symtab_free(pd_symtab *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->dm_cap; i++)
		free(t->dm[i].name);
	free(t->dm);
	free(t->s);
	free(t->ix);
	free(t->names);
	for (i = 0; i < t->nclusters; i++) {
		free(t->clusters[i].members);
		free(t->clusters[i].member_idx);
		free(t->clusters[i].pieces);
	}
	free(t->clusters);
	replay_free(t->replay);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

size_t pd_symtab_count(const pd_symtab *t)
{
	return t->n;
}

size_t pd_symtab_bytes(const pd_symtab *t)
{
	return sizeof(*t) + t->cap * sizeof(st_sym) + t->names_cap +
	       t->dm_cap * sizeof(dm_slot) + t->dm_bytes + t->cluster_bytes +
	       (t->ix ? (t->ix_n + 1) * sizeof(*t->ix) : 0);
}

/* ---- adding ----------------------------------------------------------- */

/* Room for need bytes of names. */
static int reserve_names(pd_symtab *t, size_t need)
{
	char *p;

	if (need <= t->names_cap)
		return 0;
	if (need > SYMTAB_MAX_TEXT || !(p = realloc(t->names, need)))
		return -1;
	t->names = p;
	t->names_cap = need;
	return 0;
}

static int add_name(pd_symtab *t, const char *s, uint32_t *out)
{
	size_t n = strnlen(s, SYMTAB_MAX_NAME);

	if (t->names_len + n + 1 > UINT32_MAX - 1)
		return -1;
	if (t->names_len + n + 1 > t->names_cap) {
		size_t cap = t->names_cap ? t->names_cap * 2 : 4096;
		char *p;

		while (cap < t->names_len + n + 1)
			cap *= 2;
		p = realloc(t->names, cap);
		if (!p)
			return -1;
		t->names = p;
		t->names_cap = cap;
	}
	memcpy(t->names + t->names_len, s, n);
	t->names[t->names_len + n] = '\0';
	*out = (uint32_t)t->names_len;
	t->names_len += n + 1;
	return 0;
}

/* A symbol whose name is already in t->names at offset name. */
static int add_sym_in(pd_symtab *t, uint64_t start, uint64_t size, int bind, int type,
		      uint32_t name, uint8_t flags)
{
	st_sym *s;

	if (t->n >= SYMTAB_MAX_SYMBOLS)
		return -1;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		st_sym *p = realloc(t->s, cap * sizeof(*p));

		if (!p)
			return -1;
		t->s = p;
		t->cap = cap;
	}
	s = &t->s[t->n++];
	*s = (st_sym){ .start = start, .end = start + size, .sym_start = start, .name = name,
		       .bind = (uint8_t)bind, .type = (uint8_t)type, .sized = size != 0,
		       .flags = flags };
	return 0;
}

/* ST_MANGLED for a C++ or Rust name: demangled on lookup. */
static uint8_t mangled_flag(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R') ? ST_MANGLED : 0;
}

/* An ELF symbol named in place. */
static int add_sym_named(pd_symtab *t, uint64_t start, uint64_t size, int bind, int type,
			 uint32_t name)
{
	return add_sym_in(t, start, size, bind, type, name, mangled_flag(t->names + name));
}

static int add_sym(pd_symtab *t, uint64_t start, uint64_t size, int bind, int type,
		   const char *name, int demangle)
{
	uint32_t off;

	if (t->n >= SYMTAB_MAX_SYMBOLS || add_name(t, name, &off) < 0)
		return -1;
	return add_sym_in(t, start, size, bind, type, off, demangle ? mangled_flag(name) : 0);
}

/* Whether buf holds a name of SYMTAB_MAX_NAME bytes or more: each window
 * of that size from just after a NUL must hold another NUL. */
static int has_long_name(const char *buf, size_t size)
{
	const char *p = buf, *end = buf + size;

	while ((size_t)(end - p) > SYMTAB_MAX_NAME) {
		const char *q = memrchr(p, '\0', SYMTAB_MAX_NAME);

		if (!q)
			return 1;
		p = q + 1;
	}
	return 0;
}

/* The string table of section `link` copied whole onto the end of the
 * names (one memcpy), so that a symbol's name is where its st_name says:
 * copying name by name was a third of loading a large C++ library's
 * table, and most of that was touching the names in the file one by one.
 * 0 when it cannot be (compressed, a name too long to keep whole, out of
 * memory): the caller copies names one by one. */
static int copy_strtab(pd_symtab *t, Elf *e, size_t link, size_t *base, size_t *size)
{
	Elf_Scn *scn = elf_getscn(e, link);
	Elf_Data *d;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    (sh.sh_flags & SHF_COMPRESSED) || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
	    !d->d_size || d->d_size >= SYMTAB_MAX_TEXT - t->names_len - 1 ||
	    has_long_name(d->d_buf, d->d_size) ||
	    reserve_names(t, t->names_len + d->d_size + 1) < 0)
		return 0;
	memcpy(t->names + t->names_len, d->d_buf, d->d_size);
	t->names[t->names_len + d->d_size] = '\0';	/* the last name ends */
	*base = t->names_len;
	*size = d->d_size;
	t->names_len += d->d_size + 1;
	return 1;
}

int pd_symtab_add_elf(pd_symtab *t, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n, shstrndx, base = 0, strsize = 0;
	const Elf64_Sym *ahead;
	int whole;

	if (!data || !sh->sh_entsize || elf_getshdrstrndx(e, &shstrndx) < 0)
		return 0;
	whole = copy_strtab(t, e, sh->sh_link, &base, &strsize);
	n = sh->sh_size / sh->sh_entsize;
	/* the names lie in hash order: ask for a later one's line while
	 * this one is read (a 64-bit table of this machine's byte order,
	 * as libelf hands it over, is read directly for that) */
	if (!whole || gelf_getclass(e) != ELFCLASS64 || data->d_size / sizeof(Elf64_Sym) < n)
		ahead = NULL;
	else
		ahead = data->d_buf;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int type;

		if (ahead && i + SYMTAB_AHEAD < n && ahead[i + SYMTAB_AHEAD].st_name < strsize)
			__builtin_prefetch(t->names + base + ahead[i + SYMTAB_AHEAD].st_name);
		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || !s.st_name)
			continue;
		/* perf's table: functions and objects, and labels (untyped,
		 * default visibility) of sections named like text or data */
		if (type == STT_NOTYPE && GELF_ST_VISIBILITY(s.st_other) == STV_DEFAULT) {
			GElf_Shdr tsh;
			Elf_Scn *tscn = elf_getscn(e, s.st_shndx);
			const char *sn;

			if (!tscn || !gelf_getshdr(tscn, &tsh))
				continue;
			sn = elf_strptr(e, shstrndx, tsh.sh_name);
			if (!sn || (!strstr(sn, "text") && !strstr(sn, "data")))
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT) {
			continue;
		}
		if (whole) {
			if (s.st_name >= strsize || !t->names[base + s.st_name])
				continue;
			if (add_sym_named(t, s.st_value, s.st_size, GELF_ST_BIND(s.st_info), type,
					  (uint32_t)(base + s.st_name)) < 0)
				return -1;
			continue;
		}
		name = elf_strptr(e, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (add_sym(t, s.st_value, s.st_size, GELF_ST_BIND(s.st_info), type, name, 1) < 0)
			return -1;
	}
	return 0;
}

Elf_Scn *pd_symtab_section(Elf *e, const char *name, GElf_Shdr *out)
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
int pd_symtab_add_plt(pd_symtab *t, Elf *e)
{
	GElf_Shdr plt_sh, rel_sh, dyn_sh;
	Elf_Scn *plt = pd_symtab_section(e, ".plt", &plt_sh);
	Elf_Scn *rel = pd_symtab_section(e, ".rela.plt", &rel_sh);
	Elf_Scn *dyn = pd_symtab_section(e, ".dynsym", &dyn_sh);
	Elf_Data *rdata, *sdata;
	uint64_t first, header, slot;
	size_t i, n;
	GElf_Ehdr eh;

	if (!rel)
		rel = pd_symtab_section(e, ".rel.plt", &rel_sh);
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
		char buf[SYMTAB_PLT_NAME], *dm;
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
		snprintf(buf, sizeof(buf), "%s@plt", dm ? dm : name);
		free(dm);
		if (add_sym(t, first + i * slot, slot, STB_GLOBAL, STT_FUNC, buf, 0) < 0)
			return -1;
	}
	return 0;
}

/* One line of each kind: 0, or -1 to stop (out of memory, too many). */
typedef int (*line_fn)(pd_symtab *t, char *line);

static int read_lines(pd_symtab *t, const char *path, line_fn fn)
{
	FILE *fp = fopen(path, "r");
	char *line, *buf;

	if (!fp)
		return -1;
	/* /proc/kallsyms says its block is 1 KB: 5,000 reads of its 5 MB
	 * (glibc takes a size only with a buffer) */
	buf = malloc(SYMTAB_READ_BUF);
	if (buf)
		setvbuf(fp, buf, _IOFBF, SYMTAB_READ_BUF);
	line = malloc(SYMTAB_MAX_LINE);
	while (line && fgets(line, SYMTAB_MAX_LINE, fp)) {
		line[strcspn(line, "\n")] = '\0';
		if (fn(t, line) < 0)
			break;
	}
	free(line);
	fclose(fp);
	free(buf);
	return 0;
}

/* An address as perf reads kallsyms: bare hex digits, either case, no
 * blank, sign or 0x before them (strtoull took those, and its
 * locale-aware parsing was half of reading the kernel's table). More
 * than 16 digits are no address here (perf drops the top ones). *end is
 * left after the digits, == s: none. */
static uint64_t parse_hex(const char *s, const char **end)
{
	static const signed char val[256] = {
		['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
		['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
		['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14,
		['E'] = 15, ['F'] = 16,
	};	/* digit + 1; 0: not a digit */
	uint64_t v = 0;
	const char *p = s;

	while (val[(unsigned char)*p] && p - s < 16)
		v = v << 4 | (uint64_t)(val[(unsigned char)*p++] - 1);
	*end = val[(unsigned char)*p] ? s : p;	/* a 17th digit: no address */
	return v;
}

/* Read the whole file onto the end of t->names (NUL-terminated): its
 * *len bytes start at *base. The size of /proc files is not known ahead:
 * the buffer doubles. -1 with errno set. */
static int slurp_names(pd_symtab *t, const char *path, size_t *base, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t start = t->names_len, n = 0;
	struct stat st;
	int err = 0;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		if ((uint64_t)st.st_size > SYMTAB_MAX_FILE) {
			err = EFBIG;	/* an upload, say: not read into memory */
			goto out;
		}
		n = (size_t)st.st_size;	/* a first guess: read on to the end */
	}
	/* + 2: the NUL, and room for the read that finds the end */
	if (reserve_names(t, start + (n ? n + 2 : SYMTAB_READ_BUF)) < 0) {
		err = ENOMEM;
		goto out;
	}
	n = 0;
	for (;;) {
		ssize_t r;

		if (start + n + 1 >= t->names_cap &&
		    reserve_names(t, t->names_cap * 2) < 0) {
			err = ENOMEM;
			break;
		}
		r = read(fd, t->names + start + n, t->names_cap - start - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > SYMTAB_MAX_FILE) {
			err = EFBIG;
			break;
		}
	}
out:
	close(fd);
	if (err) {
		errno = err;
		return -1;
	}
	t->names[start + n] = '\0';
	*base = start;
	*len = n;
	return 0;
}

/* "ffffffff81000000 T _text" or "... t name\t[module]", [line, nl) with
 * *nl == '\0', inside t->names: the name stays where it is, cut at the
 * tab. */
static int kallsyms_line(pd_symtab *t, char *line, char *nl)
{
	const char *end;
	uint64_t addr = parse_hex(line, &end);
	char *name, *tab;
	int type;

	if (end == line || *end != ' ' || !end[1] || end[2] != ' ')
		return 0;
	type = toupper((unsigned char)end[1]);
	name = (char *)end + 3;
	if ((type != 'T' && type != 'W') || !*name || addr == 0)
		return 0;
	tab = memchr(name, '\t', (size_t)(nl - name));
	if (tab)
		*tab = '\0';
	/* the name is no longer than what is left of its line: no scan */
	if ((tab ? tab : nl) - name >= SYMTAB_MAX_NAME)
		name[SYMTAB_MAX_NAME - 1] = '\0';
	return add_sym_in(t, addr, 0, isupper((unsigned char)end[1]) ? STB_GLOBAL : STB_LOCAL,
			  STT_FUNC, (uint32_t)(name - t->names), tab ? ST_MODULE : 0);
}

/* "START SIZE name", hex without 0x (perf's JIT map format) */
static int perfmap_line(pd_symtab *t, char *line)
{
	char *p = line, *e;
	unsigned long long start, size;

	start = strtoull(p, &e, 16);
	if (e == p || *e != ' ')
		return 0;
	p = e + 1;
	size = strtoull(p, &e, 16);
	if (e == p || *e != ' ')
		return 0;
	return add_sym(t, start, size, STB_GLOBAL, STT_FUNC, e + 1, 1);
}

/* The file is read whole into the names, and each name left in place:
 * copying 120,000 names one by one was most of reading the table. */
int pd_symtab_add_kallsyms(pd_symtab *t, const char *path)
{
	size_t base, len;
	char *p, *end;

	if (slurp_names(t, path, &base, &len) < 0)
		return -1;
	t->names_len = base + len + 1;
	for (p = t->names + base, end = p + len; p < end; ) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl)
			nl = end;
		*nl = '\0';
		if (kallsyms_line(t, p, nl) < 0)
			break;	/* out of memory, too many: the ones so far */
		p = nl + 1;
	}
	return 0;
}

int pd_symtab_add_perfmap(pd_symtab *t, const char *path)
{
	return read_lines(t, path, perfmap_line);
}

/* ---- names ------------------------------------------------------------ */

static int dm_grow(pd_symtab *t)
{
	size_t cap = t->dm_cap ? t->dm_cap * 2 : 64, i;
	dm_slot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -1;
	for (i = 0; i < t->dm_cap; i++) {
		size_t h;

		if (!t->dm[i].key)
			continue;
		for (h = (t->dm[i].key * 0x9e3779b1u) & (cap - 1); v[h].key; h = (h + 1) & (cap - 1))
			;
		v[h] = t->dm[i];
	}
	free(t->dm);
	t->dm = v;
	t->dm_cap = cap;
	return 0;
}

/* A symbol's name as perf shows it: demangled once, then remembered. */
static const char *display_name(pd_symtab *t, const st_sym *s)
{
	const char *raw = t->names + s->name;
	uint32_t key = s->name + 1;
	const char *out = raw;
	size_t h;

	if (!(s->flags & ST_MANGLED))
		return raw;
	pthread_mutex_lock(&t->lock);
	if (t->dm_cap) {
		for (h = (key * 0x9e3779b1u) & (t->dm_cap - 1); t->dm[h].key;
		     h = (h + 1) & (t->dm_cap - 1))
			if (t->dm[h].key == key) {
				out = t->dm[h].name ? t->dm[h].name : raw;
				goto out;
			}
	}
	if ((t->dm_n + 1) * 2 > t->dm_cap && dm_grow(t) < 0)
		goto out;	/* out of memory: the mangled name */
	{
		char *dm = pd_demangle(raw);

		for (h = (key * 0x9e3779b1u) & (t->dm_cap - 1); t->dm[h].key;
		     h = (h + 1) & (t->dm_cap - 1))
			;
		t->dm[h].key = key;
		t->dm[h].name = dm;
		t->dm_n++;
		t->dm_bytes += dm ? strlen(dm) + 1 : 0;
		out = dm ? dm : raw;
	}
out:
	pthread_mutex_unlock(&t->lock);
	return out;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol between two symbols at one address (its names
 * demangled): 1 keeps a, 0 keeps b */
static int prefer_first(pd_symtab *t, const st_sym *a, const st_sym *b)
{
	const char *na, *nb;
	size_t ua, ub, la, lb;

	if (a->sized != b->sized)
		return a->sized;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	/* the same name (a .dynsym copy of a .symtab symbol): a tie that
	 * keeps a unless a is a syscall alias. The demangler copies a name's
	 * identifiers and adds only words of its own, none holding "SyS":
	 * a name without it is no alias, mangled or not, and is not
	 * demangled here (70,000 such pairs in a system-wide build's
	 * tables, each a demangling) */
	if (a->name == b->name || !strcmp(t->names + a->name, t->names + b->name)) {
		if (!strstr(t->names + a->name, "SyS"))
			return 1;
		na = display_name(t, a);
		return strncmp(na, "SyS", 3) && strncmp(na, "compat_SyS", 10);
	}
	na = display_name(t, a);
	nb = display_name(t, b);
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

/* ---- finishing --------------------------------------------------------- */

static uint64_t page_end(uint64_t start)
{
	return (start + SYMTAB_PAGE - 1) / SYMTAB_PAGE * SYMTAB_PAGE + SYMTAB_PAGE;
}

typedef struct st_key {		/* a symbol in perf's tree order */
	uint64_t start;
	uint32_t idx;		/* insertion order: equal starts go right */
} st_key;

static int key_cmp(const void *a, const void *b)
{
	const st_key *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * perf's symbols__fixup_end then symbols__fixup_duplicate over the
 * symbols v (in tree order): an unsized symbol ends where the next one
 * starts (the last one a page on; kallsyms: a module's last symbol too);
 * of the symbols at one address the best stays. The ones dropped are
 * appended to er in the order perf erases them. Returns how many stay
 * (v is compacted).
 */
static size_t fix_ends_and_aliases(pd_symtab *t, st_key *v, size_t n, int kallsyms,
				   uint32_t *er, size_t *ner)
{
	size_t i, j, o = 0;

	for (i = 0; i < n; i++) {
		st_sym *p = &t->s[v[i].idx];
		const st_sym *c = i + 1 < n ? &t->s[v[i + 1].idx] : NULL;

		if (p->end != p->start)
			continue;
		if (!c)
			p->end = page_end(p->start);
		else if (kallsyms && (p->flags & ST_MODULE) != (c->flags & ST_MODULE))
			p->end = page_end(p->end);
		else
			p->end = c->start;
	}
	for (i = 0; i < n; i = j) {
		uint32_t w = v[i].idx;

		for (j = i + 1; j < n && t->s[v[j].idx].start == t->s[w].start; j++) {
			uint32_t c = v[j].idx;

			t->s[w].sized = t->s[w].end != t->s[w].start;
			t->s[c].sized = t->s[c].end != t->s[c].start;
			if (prefer_first(t, &t->s[w], &t->s[c])) {
				if (er)
					er[(*ner)++] = c;
			} else {
				if (er)
					er[(*ner)++] = w;
				w = c;
			}
		}
		v[o].start = t->s[w].start;
		v[o++].idx = w;
	}
	return o;
}

/* Sort keys by start, equal starts in index order: key_cmp's order for
 * keys filled in index order, which every caller does. A radix sort (LSD,
 * a byte at a time, bytes all keys share skipped): a large C++ binary has
 * hundreds of thousands of symbols, and qsort's calls of key_cmp were a
 * fifth of loading its table. */
static void sort_keys(st_key *v, size_t n)
{
	st_key *tmp, *src = v, *dst, *t;
	uint64_t all_or = 0, all_and = UINT64_MAX;
	size_t i, count[256];
	unsigned shift;

	/* kallsyms and many symbol tables come in address order already */
	for (i = 1; i < n && v[i - 1].start <= v[i].start; i++)
		;
	if (i >= n)
		return;	/* equal starts are in index order: keys are filled so */
	tmp = n > 64 ? malloc(n * sizeof(*tmp)) : NULL;
	dst = tmp;
	if (!tmp) {	/* small, or out of memory */
		qsort(v, n, sizeof(*v), key_cmp);
		return;
	}
	for (i = 0; i < n; i++) {
		all_or |= v[i].start;
		all_and &= v[i].start;
	}
	for (shift = 0; shift < 64; shift += 8) {
		size_t sum = 0;

		if (!(((all_or ^ all_and) >> shift) & 0xff))
			continue;	/* every key has this byte */
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(src[i].start >> shift) & 0xff]++;
		for (i = 0; i < 256; i++) {
			size_t c = count[i];

			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i].start >> shift) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}

/* Merge the sorted runs v[0..mid) and v[mid..n) in place (through a copy
 * of the first). */
static int merge_keys(st_key *v, size_t mid, size_t n)
{
	st_key *a = malloc(mid * sizeof(*a));
	size_t i = 0, j = mid, o = 0;

	if (!a)
		return -1;
	memcpy(a, v, mid * sizeof(*a));
	while (i < mid && j < n)
		v[o++] = key_cmp(&a[i], &v[j]) <= 0 ? a[i++] : v[j++];
	while (i < mid)
		v[o++] = a[i++];
	free(a);
	return 0;
}

#define SYMTAB_INDEX_MIN	64	/* symbols; fewer are searched whole */

/* The block index over the finished symbols (sorted by start): at most
 * two blocks per symbol, each at least a page. Out of memory: none. A
 * table is finished once, after its last symbol is added. */
static void build_index(pd_symtab *t)
{
	uint64_t span;
	size_t nb, b, i = 0;
	unsigned shift = 12;

	free(t->ix);
	t->ix = NULL;
	if (t->n < SYMTAB_INDEX_MIN)
		return;
	span = t->s[t->n - 1].start - t->s[0].start;
	while (shift < 63 && (span >> shift) >= 2 * t->n)
		shift++;
	nb = (size_t)(span >> shift) + 1;
	if (!(t->ix = malloc((nb + 1) * sizeof(*t->ix))))
		return;
	for (b = 0; b < nb; b++) {
		uint64_t from = t->s[0].start + ((uint64_t)b << shift);

		while (i < t->n && t->s[i].start < from)
			i++;
		t->ix[b] = (uint32_t)i;
	}
	t->ix[nb] = (uint32_t)t->n;
	t->ix_n = nb;
	t->ix_base = t->s[0].start;
	t->ix_shift = shift;
}

/* Give back the slack of the arrays grown by doubling. */
static void shrink(pd_symtab *t)
{
	st_sym *s = realloc(t->s, (t->n ? t->n : 1) * sizeof(*s));
	char *nm = realloc(t->names, t->names_len ? t->names_len : 1);

	if (s) {
		t->s = s;
		t->cap = t->n ? t->n : 1;
	}
	if (nm) {
		t->names = nm;
		t->names_cap = t->names_len ? t->names_len : 1;
	}
}

/* Replace the symbols by the ones v names, in v's order, as pieces. */
static int keep(pd_symtab *t, const st_key *v, size_t n)
{
	st_sym *out;
	size_t i;

	/* symbols that came in address order keep their order: moved down
	 * in place (v[i].idx >= i), not into a new array the size of the
	 * table (4 MB for kallsyms, every page of it a fault) */
	for (i = 1; i < n && v[i - 1].idx < v[i].idx; i++)
		;
	if (i >= n) {
		for (i = 0; i < n; i++)
			if (v[i].idx != i)
				t->s[i] = t->s[v[i].idx];
		t->n = n;
		return 0;
	}
	out = malloc((n ? n : 1) * sizeof(*out));
	if (!out)
		return -1;
	for (i = 0; i < n; i++)
		out[i] = t->s[v[i].idx];
	free(t->s);
	t->s = out;
	t->n = t->cap = n;
	return 0;
}

void pd_symtab_finish(pd_symtab *t, int kallsyms)
{
	st_key *v = malloc((t->n ? t->n : 1) * sizeof(*v));
	size_t i, n;

	if (!v) {
		t->n = 0;	/* out of memory: no names rather than wrong ones */
		return;
	}
	for (i = 0; i < t->n; i++)
		v[i] = (st_key){ t->s[i].start, (uint32_t)i };
	sort_keys(v, t->n);
	n = fix_ends_and_aliases(t, v, t->n, kallsyms, NULL, NULL);
	if (keep(t, v, n) < 0)
		t->n = 0;
	free(v);
	shrink(t);
	build_index(t);
}

/* The member of cluster c that is tree item idx. */
static const st_sym *member_of(const st_cluster *c, uint32_t idx)
{
	size_t i;

	for (i = 0; i < c->nmembers; i++)	/* clusters are small */
		if (c->member_idx[i] == idx)
			return &c->members[i];
	return NULL;
}

/* Append the piece [start, end) of node x's symbol (x NONE: a gap, not
 * added), joining it to the previous piece when that is the same symbol. */
static void add_piece(st_sym *out, size_t *n, const st_cluster *c, const pd_symtree *tr,
		      uint32_t x, uint64_t start, uint64_t end)
{
	const st_sym *s;

	if (x == PD_SYMTREE_NONE || !(s = member_of(c, pd_symtree_item(tr, x))))
		return;
	if (*n && out[*n - 1].end == start && out[*n - 1].name == s->name &&
	    out[*n - 1].sym_start == s->sym_start) {
		out[*n - 1].end = end;
		return;
	}
	out[*n] = *s;
	out[*n].start = start;
	out[*n].end = end;
	(*n)++;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* perf's tree after the same inserts and erases: symbols in insertion
 * order, each phase's dropped aliases erased after it */
static pd_symtree *replay(const st_replay *r)
{
	pd_symtree *tr = pd_symtree_new();
	size_t i = 0, k = 0, p;

	for (p = 0; tr && p < 3; p++) {
		for (; i < r->phase_end[p]; i++)
			if (pd_symtree_insert(tr, r->start[i], r->end[i], (uint32_t)i) ==
			    PD_SYMTREE_NONE)
				goto fail;
		for (; p < 2 && k < r->er_end[p]; k++)
			pd_symtree_erase(tr, r->er[k]);	/* node numbers are indexes */
	}
	return tr;
fail:
	pd_symtree_free(tr);
	return NULL;
}

/*
 * The pieces of cluster c: between two consecutive starts or ends every
 * address gets the same answer from perf's search, except perhaps the
 * first one, so each such span is asked at its first two addresses.
 */
static int resolve_cluster(st_cluster *c, const pd_symtree *tr)
{
	uint64_t *b = malloc(2 * c->nmembers * sizeof(*b));
	st_sym *out = malloc(4 * c->nmembers * sizeof(*out));
	size_t i, nb = 0, nu = 0, n = 0;

	if (!b || !out) {
		free(b);
		free(out);
		return -1;
	}
	for (i = 0; i < c->nmembers; i++) {
		b[nb++] = c->members[i].start;
		b[nb++] = c->members[i].end;
	}
	qsort(b, nb, sizeof(*b), u64_cmp);
	for (i = 0; i < nb; i++)
		if (!nu || b[nu - 1] != b[i])
			b[nu++] = b[i];
	for (i = 0; i < nu && b[i] != UINT64_MAX; i++) {
		uint64_t a = b[i], z = i + 1 < nu ? b[i + 1] : a + 1;

		add_piece(out, &n, c, tr, pd_symtree_find(tr, a), a, a + 1);
		if (a + 1 < z)
			add_piece(out, &n, c, tr, pd_symtree_find(tr, a + 1), a + 1, z);
	}
	free(b);
	c->pieces = out;
	c->npieces = n;
	__atomic_store_n(&c->resolved, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Resolve every cluster (under t->lock): one tree serves them all. */
static void resolve_clusters(pd_symtab *t)
{
	pd_symtree *tr = t->replay ? replay(t->replay) : NULL;
	size_t i;

	for (i = 0; i < t->nclusters; i++) {
		st_cluster *c = &t->clusters[i];

		if (c->resolved)
			continue;
		if (!tr || resolve_cluster(c, tr) < 0) {
			c->npieces = 0;	/* out of memory: no names there */
			__atomic_store_n(&c->resolved, 1, __ATOMIC_RELEASE);
		}
		t->cluster_bytes += c->npieces * sizeof(st_sym);
	}
	pd_symtree_free(tr);
	replay_free(t->replay);
	t->replay = NULL;
}

/* Keep what perf's tree needs to be rebuilt: every symbol's start and
 * final end in insertion order, the erase order. */
static st_replay *save_replay(const pd_symtab *t, const size_t *phase_end, const uint32_t *er,
			      const size_t *er_end)
{
	st_replay *r = calloc(1, sizeof(*r));
	size_t i;

	if (!r)
		return NULL;
	r->n = t->n;
	r->start = malloc((t->n ? t->n : 1) * sizeof(*r->start));
	r->end = malloc((t->n ? t->n : 1) * sizeof(*r->end));
	r->er = malloc((er_end[1] ? er_end[1] : 1) * sizeof(*r->er));
	if (!r->start || !r->end || !r->er) {
		replay_free(r);
		return NULL;
	}
	for (i = 0; i < t->n; i++) {
		r->start[i] = t->s[i].start;
		r->end[i] = t->s[i].end;
	}
	memcpy(r->er, er, er_end[1] * sizeof(*er));
	memcpy(r->phase_end, phase_end, sizeof(r->phase_end));
	memcpy(r->er_end, er_end, sizeof(r->er_end));
	return r;
}

/*
 * An ELF table as perf 6.1 builds it (dso__load_sym, then
 * dso__synthesize_plt_symbols): the .symtab (else .dynsym) symbols
 * inserted in file order into its tree, ends fixed, aliases dropped; the
 * same again for the .dynsym of a file that also has a .symtab; then the
 * PLT slots inserted, after the ends were fixed, so an unsized symbol
 * before the PLT (_init) covers the slots too.
 *
 * Which symbols stay and where they end follows from the order alone and
 * is worked out on sorted arrays. Where the symbols left overlap, perf
 * answers with the one its tree search meets first, which depends on the
 * tree's shape: each run of overlapping symbols becomes a cluster, whose
 * pieces are worked out from the same inserts and erases (symtree.h) when
 * a lookup first falls in one. The table is pieces that do not overlap.
 */
void pd_symtab_finish_elf(pd_symtab *t, size_t nr_first, size_t nr_second)
{
	st_key *v = malloc((t->n ? t->n : 1) * sizeof(*v));
	uint32_t *er = malloc((t->n ? t->n : 1) * sizeof(*er));
	size_t phase_end[3] = { nr_first, nr_second, t->n }, er_end[2] = { 0, 0 };
	size_t nv = 0, ner = 0, i, j, p, n = 0, nc = 0;
	st_sym *out = NULL;
	st_cluster *cl = NULL;

	if (!v || !er || nr_first > nr_second || nr_second > t->n)
		goto fail;
	for (p = 0; p < 3; p++) {
		size_t from = p ? phase_end[p - 1] : 0, old = nv;

		er_end[p < 2 ? p : 1] = ner;
		if (phase_end[p] == from)
			continue;
		for (i = from; i < phase_end[p]; i++)
			v[nv++] = (st_key){ t->s[i].start, (uint32_t)i };
		/* the new symbols sorted, then merged with the ones kept so far
		 * (all of which were inserted before them) */
		sort_keys(v + old, nv - old);
		if (old && merge_keys(v, old, nv) < 0)
			goto fail;
		if (p < 2) {	/* the PLT slots come after: no fixing */
			nv = fix_ends_and_aliases(t, v, nv, 0, er, &ner);
			er_end[p] = ner;
		}
	}
	out = malloc((nv ? nv : 1) * sizeof(*out));
	cl = calloc(nv ? nv : 1, sizeof(*cl));
	if (!out || !cl)
		goto fail;
	for (i = 0; i < nv; i = j) {
		const st_sym *f = &t->s[v[i].idx];
		uint64_t reach = f->end, cover;
		st_cluster *c;
		size_t k;

		/* a run of symbols each starting before the run's reach */
		for (j = i + 1; j < nv; j++) {
			const st_sym *b = &t->s[v[j].idx], *a = &t->s[v[j - 1].idx];

			if (b->start >= reach && b->start != a->start && b->end != b->start &&
			    a->end != a->start)
				break;
			if (b->end > reach)
				reach = b->end;
		}
		if (j == i + 1 && f->end != f->start) {
			out[n++] = *f;
			continue;
		}
		c = &cl[nc];
		c->members = malloc((j - i) * sizeof(*c->members));
		c->member_idx = malloc((j - i) * sizeof(*c->member_idx));
		if (!c->members || !c->member_idx) {
			free(c->members);
			free(c->member_idx);
			goto fail;
		}
		cover = reach;
		for (k = i; k < j; k++) {
			const st_sym *m = &t->s[v[k].idx];

			c->members[k - i] = *m;
			c->member_idx[k - i] = v[k].idx;
			if (m->end == m->start && m->start + 1 > cover)
				cover = m->start + 1;	/* an unsized symbol's own address */
		}
		c->nmembers = j - i;
		t->cluster_bytes += c->nmembers * (sizeof(st_sym) + sizeof(uint32_t));
		out[n] = *f;
		out[n].end = cover;
		out[n].sized = ST_CLUSTER;
		out[n].name = (uint32_t)nc++;
		n++;
	}
	if (nc && !(t->replay = save_replay(t, phase_end, er, er_end)))
		goto fail;
	t->clusters = nc ? cl : NULL;
	t->nclusters = nc;
	if (!nc)
		free(cl);
	cl = NULL;
	free(t->s);
	t->s = out;
	t->n = t->cap = n;
	out = NULL;
	goto out;
fail:
	t->n = 0;	/* out of memory: no names rather than wrong ones */
	for (i = 0; cl && i < nc; i++) {
		free(cl[i].members);
		free(cl[i].member_idx);
	}
	free(cl);
	t->cluster_bytes = 0;
out:
	free(out);
	free(v);
	free(er);
	shrink(t);
	build_index(t);
}

/* ---- lookup ------------------------------------------------------------ */

/* The piece of v[0..n) containing addr, or NULL; the first piece starting
 * after addr is known to lie in [lo, hi]. */
static const st_sym *find_piece_in(const st_sym *v, size_t lo, size_t hi, uint64_t addr)
{
	const st_sym *s;

	while (lo < hi) {	/* the first piece starting after addr */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &v[lo - 1];
	if (addr >= s->end && !(addr == s->start && s->start == s->end))
		return NULL;
	return s;
}

static const st_sym *find_piece(const st_sym *v, size_t n, uint64_t addr)
{
	return find_piece_in(v, 0, n, addr);
}

/* find_piece over the table's symbols, through its block index */
static const st_sym *find_sym(const pd_symtab *t, uint64_t addr)
{
	uint64_t b;

	if (!t->ix)
		return find_piece(t->s, t->n, addr);
	if (addr < t->ix_base)
		return NULL;
	b = (addr - t->ix_base) >> t->ix_shift;
	if (b >= t->ix_n)
		return find_piece_in(t->s, t->n, t->n, addr);
	return find_piece_in(t->s, t->ix[b], t->ix[b + 1], addr);
}

void pd_symtab_prepare(pd_symtab *t)
{
	pthread_mutex_lock(&t->lock);
	if (t->replay)
		resolve_clusters(t);
	pthread_mutex_unlock(&t->lock);
}

const char *pd_symtab_lookup(pd_symtab *t, uint64_t addr, uint64_t *sym_off)
{
	const st_sym *s = find_sym(t, addr);

	if (s && s->sized == ST_CLUSTER) {
		st_cluster *c = &t->clusters[s->name];

		if (!__atomic_load_n(&c->resolved, __ATOMIC_ACQUIRE)) {
			pthread_mutex_lock(&t->lock);
			resolve_clusters(t);
			pthread_mutex_unlock(&t->lock);
		}
		s = find_piece(c->pieces, c->npieces, addr);
	}
	if (!s)
		return NULL;
	if (sym_off)
		*sym_off = addr - s->sym_start;
	return display_name(t, s);
}
