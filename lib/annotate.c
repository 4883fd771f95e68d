/*
 * annotate.c - sampled addresses to instructions and source lines: file
 * offsets to addresses through the PT_LOAD headers, the function symbols
 * holding them (.symtab, else .dynsym), their code disassembled with
 * capstone, each instruction's line from libdw, samples added up.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <capstone/capstone.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "annotate.h"
#include "dynlib.h"

#define AN_MAX_SEGS 64
#define AN_MAX_FUNC_SYMS (16u << 20)	/* function symbols looked at in one table */
#define AN_INSN_MAX_BYTES 16		/* the longest instruction of any machine here */

/* capstone, opened on first use (dynlib.h) */
#define AN_CS_FUNCS(X) \
	X(open, cs_open) \
	X(option, cs_option) \
	X(disasm_iter, cs_disasm_iter) \
	X(malloc, cs_malloc) \
	X(free, cs_free) \
	X(close, cs_close)

DYNLIB_TABLE(cs_api, AN_CS_FUNCS)

static dynlib capstone_lib = DYNLIB_INIT(CAPSTONE_SONAME, "libcapstone4", cs_api_bind);

typedef struct elf_in {
	int fd;
	Elf *e;
	GElf_Ehdr eh;
	uint64_t seg_off[AN_MAX_SEGS], seg_size[AN_MAX_SEGS], seg_vaddr[AN_MAX_SEGS];
	size_t nr_segs;
} elf_in;

typedef struct fsym {
	uint64_t start, size;
	size_t name;		/* string table offset */
	size_t strndx;		/* its string table section */
} fsym;

/* the work of one request */
typedef struct job {
	const an_request *rq;
	an_result *out;
	elf_in code, dbg;	/* fd -1 when not open */
	uint64_t *vaddr;	/* rq->addrs mapped */
	fsym *syms;		/* the table's function symbols, by start */
	size_t nr_syms;
	elf_in *symsrc;		/* whose string tables the names are in */
	size_t cap_insns, cap_files;
	int oom;
} job;

static void problem(an_result *r, const char *msg)
{
	size_t l = strlen(r->problem);

	if (strstr(r->problem, msg))
		return;
	snprintf(r->problem + l, sizeof(r->problem) - l, "%s%s", l ? "; " : "", msg);
}

static void elf_close(elf_in *x)
{
	if (x->e)
		elf_end(x->e);
	if (x->fd >= 0)
		close(x->fd);
	memset(x, 0, sizeof(*x));
	x->fd = -1;
}

/* Opens an ELF file and reads its PT_LOAD headers. 0 or -1. */
static int elf_open(const char *path, elf_in *x)
{
	size_t n, i;

	memset(x, 0, sizeof(*x));
	x->fd = -1;
	if (!path || elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	if ((x->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (!(x->e = elf_begin(x->fd, ELF_C_READ_MMAP, NULL)) || elf_kind(x->e) != ELF_K_ELF ||
	    !gelf_getehdr(x->e, &x->eh) || elf_getphdrnum(x->e, &n) != 0) {
		elf_close(x);
		return -1;
	}
	for (i = 0; i < n && x->nr_segs < AN_MAX_SEGS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(x->e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		x->seg_off[x->nr_segs] = ph.p_offset;
		x->seg_size[x->nr_segs] = ph.p_filesz;
		x->seg_vaddr[x->nr_segs++] = ph.p_vaddr;
	}
	return 0;
}

/* file offset -> the address the symbol table uses; 0 when no segment holds it */
static int to_vaddr(const elf_in *x, uint64_t off, uint64_t *out)
{
	size_t i;

	for (i = 0; i < x->nr_segs; i++)
		if (off >= x->seg_off[i] && off - x->seg_off[i] < x->seg_size[i]) {
			*out = off - x->seg_off[i] + x->seg_vaddr[i];
			return 1;
		}
	return 0;
}

static int cmp_fsym(const void *a, const void *b)
{
	const fsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size;
}

/* The function symbols of x's .symtab (else .dynsym). 1 when found. */
static int load_syms(job *j, elf_in *x)
{
	Elf_Scn *scn = NULL, *pick = NULL;
	GElf_Shdr sh, psh;
	Elf_Data *data;
	size_t n, i, cap = 0;

	if (!x->e)
		return 0;
	while ((scn = elf_nextscn(x->e, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB ||
					       (sh.sh_type == SHT_DYNSYM && !pick))) {
			pick = scn;
			psh = sh;
			if (sh.sh_type == SHT_SYMTAB)
				break;
		}
	if (!pick || !(data = elf_getdata(pick, NULL)) || !psh.sh_entsize)
		return 0;
	n = data->d_size / psh.sh_entsize;
	for (i = 0; i < n && j->nr_syms < AN_MAX_FUNC_SYMS; i++) {
		GElf_Sym s;

		if (!gelf_getsym(data, (int)i, &s) || !s.st_size || s.st_shndx == SHN_UNDEF ||
		    (GELF_ST_TYPE(s.st_info) != STT_FUNC && GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC))
			continue;
		if (j->nr_syms == cap) {
			size_t ncap = cap ? 2 * cap : 1024;
			fsym *p = realloc(j->syms, ncap * sizeof(*p));
			if (!p) {
				j->oom = 1;
				return 0;
			}
			j->syms = p;
			cap = ncap;
		}
		j->syms[j->nr_syms].start = s.st_value;
		j->syms[j->nr_syms].size = s.st_size;
		j->syms[j->nr_syms].name = s.st_name;
		j->syms[j->nr_syms++].strndx = psh.sh_link;
	}
	if (j->nr_syms > 1)
		qsort(j->syms, j->nr_syms, sizeof(*j->syms), cmp_fsym);
	j->symsrc = x;
	return j->nr_syms > 0;
}

/* The function symbol holding address a, or NULL. */
static const fsym *sym_at(const job *j, uint64_t a)
{
	size_t lo = 0, hi = j->nr_syms, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (j->syms[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the last few starting at or before a: one of them may reach it */
	for (k = 0; lo > 0 && k < 8; k++, lo--)
		if (a - j->syms[lo - 1].start < j->syms[lo - 1].size)
			return &j->syms[lo - 1];
	return NULL;
}

/* Bytes of x's code at [addr, addr + *len), *len cut to what the section
 * holds; NULL when no section with code holds addr. */
static const uint8_t *code_at(const elf_in *x, uint64_t addr, size_t *len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!x->e)
		return NULL;
	while ((scn = elf_nextscn(x->e, scn))) {
		Elf_Data *d;
		uint64_t at;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr ||
		    addr - sh.sh_addr >= sh.sh_size)
			continue;
		if (!(d = elf_getdata(scn, NULL)) || !d->d_buf)
			return NULL;
		at = addr - sh.sh_addr;
		if (at >= d->d_size)
			return NULL;
		if (*len > d->d_size - at)
			*len = (size_t)(d->d_size - at);
		return (const uint8_t *)d->d_buf + at;
	}
	return NULL;
}

static int open_capstone(const GElf_Ehdr *eh, csh *cs, const char **name)
{
	int big = eh->e_ident[EI_DATA] == ELFDATA2MSB;
	cs_arch arch;
	cs_mode mode;

	switch (eh->e_machine) {
	case EM_X86_64: arch = CS_ARCH_X86; mode = CS_MODE_64; *name = "capstone x86-64"; break;
	case EM_386: arch = CS_ARCH_X86; mode = CS_MODE_32; *name = "capstone x86"; break;
	case EM_AARCH64: arch = CS_ARCH_ARM64; mode = CS_MODE_ARM; *name = "capstone aarch64"; break;
	case EM_ARM: arch = CS_ARCH_ARM; mode = CS_MODE_ARM; *name = "capstone arm"; break;
	case EM_PPC64: arch = CS_ARCH_PPC; mode = CS_MODE_64; *name = "capstone ppc64"; break;
	case EM_PPC: arch = CS_ARCH_PPC; mode = CS_MODE_32; *name = "capstone ppc"; break;
	case EM_S390: arch = CS_ARCH_SYSZ; mode = CS_MODE_BIG_ENDIAN; *name = "capstone s390x"; break;
	default: return -1;
	}
	if (big && arch != CS_ARCH_SYSZ)
		mode |= CS_MODE_BIG_ENDIAN;
	if (cs_api.open(arch, mode, cs) != CS_ERR_OK)
		return -1;
	/* perf annotate prints objdump's AT&T syntax on x86 */
	if (arch == CS_ARCH_X86)
		cs_api.option(*cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	return 0;
}

/* One more instruction at the end of out->insns; NULL (oom) out of memory. */
static an_insn *insn_add(job *j, uint64_t addr, size_t size, const char *text)
{
	an_result *r = j->out;
	an_insn *in;

	if (r->nr_insns == j->cap_insns) {
		size_t ncap = j->cap_insns ? 2 * j->cap_insns : 256;
		an_insn *p = realloc(r->insns, ncap * sizeof(*p));
		if (!p) {
			j->oom = 1;
			return NULL;
		}
		r->insns = p;
		j->cap_insns = ncap;
	}
	in = &r->insns[r->nr_insns];
	memset(in, 0, sizeof(*in));
	in->addr = addr;
	in->size = (unsigned)size;
	in->file = -1;
	if (text && !(in->text = strdup(text))) {
		j->oom = 1;
		return NULL;
	}
	r->nr_insns++;
	return in;
}

/* Disassembles [addr, addr + len) (at most `max` instructions). */
static void disasm(job *j, csh cs, cs_insn *ci, uint64_t addr, size_t len, size_t max)
{
	const uint8_t *code;
	size_t got = len, k = 0;
	uint64_t at = addr;

	if (!(code = code_at(&j->code, addr, &got))) {
		problem(j->out, "the code of the function is not in the binary found");
		return;
	}
	while (k++ < max && j->out->nr_insns < AN_MAX_INSNS &&
	       cs_api.disasm_iter(cs, &code, &got, &at, ci)) {
		char text[256];

		snprintf(text, sizeof(text), "%s%s%s", ci->mnemonic, ci->op_str[0] ? " " : "",
			 ci->op_str);
		if (!insn_add(j, ci->address, ci->size, text))
			return;
	}
	if (j->out->nr_insns >= AN_MAX_INSNS)
		problem(j->out, "too many instructions: the answer is cut");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The instructions of every function holding a sampled address. */
static void disassemble(job *j, const uint64_t *sorted, size_t n)
{
	const fsym *done[AN_MAX_SYMBOLS];
	size_t nr_done = 0, i, k;
	csh cs;
	cs_insn *ci;

	if (!j->code.e) {
		problem(j->out, "no binary with the code was found");
		return;
	}
	if (dynlib_ready(&capstone_lib) < 0) {
		problem(j->out, dynlib_error(&capstone_lib));
		return;
	}
	if (open_capstone(&j->code.eh, &cs, &j->out->disassembler) < 0) {
		problem(j->out, "no disassembler for this machine");
		return;
	}
	if (!(ci = cs_api.malloc(cs))) {
		j->oom = 1;
		cs_api.close(&cs);
		return;
	}
	for (i = 0; i < n && !j->oom; i++) {
		const fsym *s = sym_at(j, sorted[i]);

		for (k = 0; s && k < nr_done && done[k] != s; k++)
			;
		if (s && k < nr_done)
			continue;
		if (s && nr_done < AN_MAX_SYMBOLS && s->size <= AN_MAX_FUNC_BYTES) {
			done[nr_done++] = s;
			disasm(j, cs, ci, s->start, (size_t)s->size, SIZE_MAX);
		} else {
			/* outside every symbol, or too long: the instruction alone */
			if (s && s->size > AN_MAX_FUNC_BYTES)
				problem(j->out, "a function too long to list: its sampled instructions only");
			if (!i || sorted[i] != sorted[i - 1])
				disasm(j, cs, ci, sorted[i], AN_INSN_MAX_BYTES, 1);
		}
	}
	cs_api.free(ci, 1);
	cs_api.close(&cs);
}

static int cmp_insn(const void *a, const void *b)
{
	uint64_t x = ((const an_insn *)a)->addr, y = ((const an_insn *)b)->addr;

	return x < y ? -1 : x > y;
}

/* Instructions sorted, one per address (a one-instruction listing may
 * repeat one of a function). */
static void sort_insns(job *j)
{
	an_result *r = j->out;
	size_t i, n = 0;

	if (r->nr_insns > 1)
		qsort(r->insns, r->nr_insns, sizeof(*r->insns), cmp_insn);
	for (i = 0; i < r->nr_insns; i++) {
		if (n && r->insns[n - 1].addr == r->insns[i].addr) {
			free(r->insns[i].text);
			continue;
		}
		r->insns[n++] = r->insns[i];
	}
	r->nr_insns = n;
}

/* Each sampled address's counts onto the instruction holding it (a new
 * entry without text when none does). */
static void attribute(job *j, const uint64_t *vaddr)
{
	an_result *r = j->out;
	const an_request *rq = j->rq;
	size_t i, base = r->nr_insns;

	for (i = 0; i < rq->n && !j->oom; i++) {
		size_t lo = 0, hi = base;
		an_insn *in = NULL;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (r->insns[mid].addr <= vaddr[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && vaddr[i] - r->insns[lo - 1].addr < (r->insns[lo - 1].size ?
							       r->insns[lo - 1].size : 1))
			in = &r->insns[lo - 1];
		else if (!(in = insn_add(j, vaddr[i], 1, NULL)))
			return;
		in->samples += rq->samples[i];
		in->value += rq->values[i];
	}
	if (r->nr_insns > base) {
		qsort(r->insns, r->nr_insns, sizeof(*r->insns), cmp_insn);
		/* sampled addresses outside any instruction: one entry each */
		for (i = 1, base = 1; i < r->nr_insns; i++) {
			if (r->insns[base - 1].addr == r->insns[i].addr && !r->insns[i].text) {
				r->insns[base - 1].samples += r->insns[i].samples;
				r->insns[base - 1].value += r->insns[i].value;
				continue;
			}
			r->insns[base++] = r->insns[i];
		}
		r->nr_insns = base;
	}
}

/* The index of file name f in out->files, added when new; -1 out of memory. */
static int file_index(job *j, const char *f)
{
	an_result *r = j->out;
	size_t i;

	for (i = r->nr_files; i-- > 0;)
		if (!strcmp(r->files[i], f))
			return (int)i;
	if (r->nr_files == j->cap_files) {
		size_t ncap = j->cap_files ? 2 * j->cap_files : 8;
		char **p = realloc(r->files, ncap * sizeof(*p));
		if (!p) {
			j->oom = 1;
			return -1;
		}
		r->files = p;
		j->cap_files = ncap;
	}
	if (!(r->files[r->nr_files] = strdup(f))) {
		j->oom = 1;
		return -1;
	}
	return (int)r->nr_files++;
}

/* The compile unit holding addr: the last one found when it does, else
 * through .debug_aranges, else (clang writes no aranges) each unit's
 * ranges. 1 and *out, or 0. */
typedef struct cu_cache {
	Dwarf_Die last;
	int have;
} cu_cache;

static int cu_of(Dwarf *dw, cu_cache *c, uint64_t addr, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (c->have && dwarf_haspc(&c->last, addr) > 0) {
		*out = c->last;
		return 1;
	}
	if (dwarf_addrdie(dw, addr, out))
		goto found;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, out) && dwarf_haspc(out, addr) > 0)
			goto found;
		off = next;
	}
	return 0;
found:
	c->last = *out;
	c->have = 1;
	return 1;
}

/* The file the function at addr is declared in (its subprogram DIE). */
/* A file name of the line table as an absolute path: a name relative to
 * the compile directory (gcc in the source tree writes "dir/file.c" with
 * DW_AT_comp_dir beside it) is joined to it, so the source can be found. */
static const char *cu_path(Dwarf_Die *cu, const char *f, char *buf, size_t len)
{
	Dwarf_Attribute at;
	const char *dir;

	if (!f || f[0] == '/' || !dwarf_attr(cu, DW_AT_comp_dir, &at) ||
	    !(dir = dwarf_formstring(&at)) || dir[0] != '/')
		return f;
	if ((size_t)snprintf(buf, len, "%s/%s", dir, f) >= len)
		return f;
	return buf;
}

/* The file a DIE is declared in. dwarf_decl_file() of elfutils before
 * 0.191 reads index 0 as "none", but DWARF 5 (clang's default) puts the
 * primary source file there, so the index is looked up here. */
static const char *die_decl_file(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	Dwarf_Die cu;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t nfiles;

	if (!dwarf_attr_integrate(die, DW_AT_decl_file, &at) || dwarf_formudata(&at, &idx) != 0)
		return NULL;
	if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 ||
	    idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static int decl_file(job *j, Dwarf *dw, cu_cache *cc, uint64_t addr)
{
	Dwarf_Die cu, *scopes = NULL;
	const char *f = NULL;
	int n, i, idx = -1;

	if (!cu_of(dw, cc, addr, &cu))
		return -1;
	n = dwarf_getscopes(&cu, addr, &scopes);
	for (i = n - 1; i >= 0 && !f; i--)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			f = die_decl_file(&scopes[i]);
	if (f) {
		char buf[PATH_MAX];

		idx = file_index(j, cu_path(&cu, f, buf, sizeof(buf)));
	}
	free(scopes);
	return idx;
}

static int cmp_line(const void *a, const void *b, void *arg)
{
	const an_line *x = a, *y = b;
	const an_result *r = arg;
	int c;

	if (x->file != y->file) {
		if (x->file == r->function_file || y->file == r->function_file)
			return x->file == r->function_file ? -1 : 1;
		if ((c = strcmp(r->files[x->file], r->files[y->file])))
			return c;
		return x->file < y->file ? -1 : 1;
	}
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Each instruction's line, the hottest function's file, the lines added up. */
static void source_lines(job *j)
{
	an_result *r = j->out;
	Dwarf *dw = NULL;
	cu_cache cc = { .have = 0 };
	size_t i, n = 0;

	/* the debug file's DWARF, else the binary's own */
	if (j->dbg.e)
		dw = dwarf_begin(j->dbg.fd, DWARF_C_READ);
	if (!dw && j->code.e)
		dw = dwarf_begin(j->code.fd, DWARF_C_READ);
	if (!dw) {
		problem(r, "no DWARF line tables (build with -g, or upload the debug file)");
		return;
	}
	for (i = 0; i < r->nr_insns && !j->oom; i++) {
		Dwarf_Die cu;
		Dwarf_Line *l;
		const char *src;
		char path[PATH_MAX];
		int line;

		if (!cu_of(dw, &cc, r->insns[i].addr, &cu) ||
		    !(l = dwarf_getsrc_die(&cu, r->insns[i].addr)) ||
		    !(src = dwarf_linesrc(l, NULL, NULL)) || dwarf_lineno(l, &line) != 0 || line <= 0)
			continue;
		r->insns[i].file = file_index(j, cu_path(&cu, src, path, sizeof(path)));
		r->insns[i].line = (unsigned)line;
	}
	if (r->start || r->end)
		r->function_file = decl_file(j, dw, &cc, r->start);
	dwarf_end(dw);
	/* lines: every one an instruction comes from */
	if (!(r->lines = calloc(r->nr_insns + 1, sizeof(*r->lines)))) {
		j->oom = 1;
		return;
	}
	for (i = 0; i < r->nr_insns; i++) {
		if (r->insns[i].file < 0)
			continue;
		r->lines[n].file = r->insns[i].file;
		r->lines[n].line = r->insns[i].line;
		r->lines[n].samples = r->insns[i].samples;
		r->lines[n++].value = r->insns[i].value;
	}
	if (!n && r->nr_insns)
		problem(r, "no line for these addresses in the DWARF");
	if (n > 1)
		qsort_r(r->lines, n, sizeof(*r->lines), cmp_line, r);
	r->nr_lines = 0;
	for (i = 0; i < n; i++) {
		an_line *last = r->nr_lines ? &r->lines[r->nr_lines - 1] : NULL;
		if (last && last->file == r->lines[i].file && last->line == r->lines[i].line) {
			last->samples += r->lines[i].samples;
			last->value += r->lines[i].value;
		} else {
			r->lines[r->nr_lines++] = r->lines[i];
		}
	}
}

/* The hottest function: its symbol and range. */
static void hottest(job *j, const uint64_t *vaddr)
{
	const an_request *rq = j->rq;
	const fsym *best = NULL;
	uint64_t best_v = 0;
	size_t i, k;

	for (i = 0; i < rq->n; i++) {
		const fsym *s = sym_at(j, vaddr[i]);
		uint64_t v = 0;

		if (!s || s == best)
			continue;
		for (k = 0; k < rq->n; k++)
			if (vaddr[k] - s->start < s->size)
				v += rq->values[k] + 1;	/* + 1: samples of value 0 still count */
		if (!best || v > best_v) {
			best = s;
			best_v = v;
		}
	}
	if (!best)
		return;
	j->out->start = best->start;
	j->out->end = best->start + best->size;
	{
		const char *name = elf_strptr(j->symsrc->e, best->strndx, best->name);
		if (name && !(j->out->symbol = strdup(name)))
			j->oom = 1;
	}
}

int an_annotate(const an_request *rq, an_result *out)
{
	job j;
	uint64_t *sorted = NULL;
	size_t i;

	memset(out, 0, sizeof(*out));
	memset(&j, 0, sizeof(j));
	out->function_file = -1;
	j.rq = rq;
	j.out = out;
	j.code.fd = j.dbg.fd = -1;
	if (!(j.vaddr = calloc(rq->n + 1, sizeof(*j.vaddr))) ||
	    !(sorted = calloc(rq->n + 1, sizeof(*sorted))))
		goto oom;
	if (!rq->kernel) {
		if (elf_open(rq->code_path, &j.code) < 0)
			problem(out, "no binary with the code was found");
		if (rq->debug_path && (!rq->code_path || strcmp(rq->debug_path, rq->code_path)))
			elf_open(rq->debug_path, &j.dbg);
	} else {
		problem(out, "kernel code is not read: addresses only");
	}
	/* file offsets to addresses: the binary's headers, or the debug file's (the same) */
	out->mapped = rq->kernel;
	for (i = 0; i < rq->n; i++) {
		j.vaddr[i] = rq->addrs[i];
		if (!rq->kernel && (to_vaddr(&j.code, rq->addrs[i], &j.vaddr[i]) ||
				    to_vaddr(&j.dbg, rq->addrs[i], &j.vaddr[i])))
			out->mapped = 1;
		sorted[i] = j.vaddr[i];
	}
	if (rq->n > 1)
		qsort(sorted, rq->n, sizeof(*sorted), cmp_u64);
	if (!rq->kernel && out->mapped) {
		if (!load_syms(&j, &j.dbg) && !j.oom)
			load_syms(&j, &j.code);
		if (j.oom)
			goto oom;
		if (!j.nr_syms)
			problem(out, "no symbol table");
		hottest(&j, j.vaddr);
		disassemble(&j, sorted, rq->n);
		if (j.oom)
			goto oom;
		sort_insns(&j);
	}
	attribute(&j, j.vaddr);
	if (!j.oom && !rq->kernel && out->mapped)
		source_lines(&j);
	if (j.oom)
		goto oom;
	elf_close(&j.code);
	elf_close(&j.dbg);
	free(j.vaddr);
	free(j.syms);
	free(sorted);
	return 0;
oom:
	elf_close(&j.code);
	elf_close(&j.dbg);
	free(j.vaddr);
	free(j.syms);
	free(sorted);
	an_result_free(out);
	return -1;
}

void an_result_free(an_result *r)
{
	size_t i;

	for (i = 0; i < r->nr_insns; i++)
		free(r->insns[i].text);
	for (i = 0; i < r->nr_files; i++)
		free(r->files[i]);
	free(r->insns);
	free(r->files);
	free(r->lines);
	free(r->symbol);
	memset(r, 0, sizeof(*r));
	r->function_file = -1;
}

int an_source_lines(const char *path, unsigned first, unsigned last, char ***lines)
{
	char buf[AN_MAX_SOURCE_LINE + 2];
	FILE *fp;
	size_t total = 0;
	unsigned no = 1, n = last >= first ? last - first + 1 : 0;
	int whole = 1;		/* buf starts a line */

	*lines = NULL;
	if (!first || !(fp = fopen(path, "r")))
		return -1;
	if (!(*lines = calloc(n + 1, sizeof(**lines)))) {
		fclose(fp);
		errno = ENOMEM;
		return -1;
	}
	/* a fixed buffer: a line longer than it is cut, the rest skipped */
	while (no <= last && total < AN_MAX_SOURCE_BYTES && fgets(buf, sizeof(buf), fp)) {
		size_t got = strlen(buf);
		int ends = got && buf[got - 1] == '\n';

		total += got;
		if (ends)
			buf[--got] = 0;
		if (whole && no >= first) {
			buf[got > AN_MAX_SOURCE_LINE ? AN_MAX_SOURCE_LINE : got] = 0;
			(*lines)[no - first] = strdup(buf);
		}
		whole = ends;
		no += ends;
	}
	fclose(fp);
	return 0;
}

void an_source_free(char **lines, unsigned n)
{
	unsigned i;

	for (i = 0; lines && i < n; i++)
		free(lines[i]);
	free(lines);
}
