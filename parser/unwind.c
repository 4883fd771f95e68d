/*
 * unwind.c - DWARF unwinding of --call-graph dwarf samples with libdwfl.
 *
 * Per process a "session": one Dwfl with the ELF files that process had
 * mapped (reported on demand, at the bias the mapping implies) and a
 * thread state attached through Dwfl_Thread_Callbacks that serve the
 * registers and stack bytes of the sample being unwound. libdwfl keeps the
 * parsed CFI of each module, so a session is reused for every sample of
 * its process; when the caller's maps say an address now belongs to a
 * different file (exec, dlclose/dlopen), the session is rebuilt.
 */
#include "config.h"

#include "unwind.h"
#include "cfirows.h"
#include "symtab.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

/* perf_regs numbering (arch/x86/include/uapi/asm/perf_regs.h) */
enum {
	X86_AX = 0, X86_BX = 1, X86_CX = 2, X86_DX = 3, X86_SI = 4, X86_DI = 5,
	X86_BP = 6, X86_SP = 7, X86_IP = 8, X86_R8 = 16, X86_R15 = 23,
};
/* arch/arm64/include/uapi/asm/perf_regs.h: X0..X30 = 0..30 */
enum { ARM64_SP = 31, ARM64_PC = 32 };

#define MAX_LOADS	16	/* PT_LOAD segments remembered per module */
#define NEG_CACHE_SIZE	512	/* files known to be unusable */
#define SEEN_MAPS	4	/* mappings already checked against a module */
#define MAX_RESUMES	8	/* walks restarted past a lost %rbx, per sample */
#define CHECKED_RANGES	16	/* files a walk from rows need not check again */

/* x86-64 DWARF registers: rax rdx rcx rbx rsi rdi rbp rsp r8-r15, rip 16 */
#define X86_DWARF_RBX	3
#define X86_DWARF_RBP	6
#define X86_DWARF_RSP	7
#define X86_DWARF_RIP	16
#define RBP_REACH	0x4000	/* libunwind's limit on a frame-pointer step */
#define X86_DWARF_REGS	17

_Static_assert(X86_DWARF_REGS == CFI_NREGS, "cfirows.h counts the same registers");

/* perf_regs of the DWARF registers, in DWARF order */
static const unsigned x86_dwarf_to_perf[X86_DWARF_REGS] = {
	X86_AX, X86_DX, X86_CX, X86_BX, X86_SI, X86_DI, X86_BP, X86_SP, X86_R8,
	X86_R8 + 1, X86_R8 + 2, X86_R8 + 3, X86_R8 + 4, X86_R8 + 5, X86_R8 + 6,
	X86_R15, X86_IP,
};

/* One ELF file reported into a session. */
struct module {
	char *path;
	uint64_t bias;		/* load address minus link-time address */
	Dwfl_Module *mod;
	unsigned nr_loads;
	struct {
		uint64_t vaddr, offset, filesz, align;
		uint32_t flags;
	} loads[MAX_LOADS];
	int is_exec;		/* ET_EXEC: linked at its load address */
	bool eh_frame_hdr;	/* has the section perf's unwinder needs */
	uint64_t elf_base;	/* perf's elf_base_address: the first PT_LOAD's
				   p_vaddr, page aligned */
	uint64_t file_low;	/* unwind_map.file_low when last checked */
	uint64_t seen_start[SEEN_MAPS], seen_pgoff[SEEN_MAPS];
	unsigned nr_seen;
};

struct session {
	uint32_t pid;
	Dwfl *dwfl;
	bool attached;
	bool stale;		/* a mapping changed under a module */
	uint64_t last_use;
	uint64_t id;		/* never reused: keys its CFI rows */
	/* where ensure_module said MOD_OK while the maps' stamp was this */
	uint64_t checked_stamp;
	struct ok_range {
		uint64_t lo, hi;
	} checked[CHECKED_RANGES];
	unsigned nr_checked;
	struct module **mods;
	unsigned nr_mods, cap_mods;
	struct unwinder *u;
};

struct unwinder {
	int arch;
	unwind_find_map_fn find_map;
	void *ctx;
	unsigned max_sessions, max_modules;
	unsigned nr_modules;		/* over all sessions */
	unsigned char ehdr[sizeof(Elf64_Ehdr)];	/* names the machine */
	Elf *arch_elf;			/* over ehdr, for dwfl_attach_state */
	char *debuginfo_path;
	Dwfl_Callbacks dwfl_callbacks;	/* must outlive every Dwfl */
	struct session **sessions;
	unsigned nr_sessions;
	uint64_t clock;
	uint64_t sessions_made;
	cfi_rows *rows;			/* NULL: every walk is libdwfl's */
	const unwind_input *cur;	/* the sample being unwound */
	uint64_t cur_sp;
	const size_t *walk_n;		/* frames of the walk under way */
	size_t zero_at;			/* frames when a read past the copy
					   last gave 0 (SIZE_MAX: none) */
	/* when set, the initial registers of a walk resumed mid-stack */
	const Dwarf_Word *resume_regs;
	uint32_t resume_known;		/* which of them are known */
	struct neg_entry {
		uint64_t hash;
		char *path;
	} neg[NEG_CACHE_SIZE];
	unwind_stats stats;
};

int
unwind_arch_from_name(const char *a)
{
	if (a == NULL)
		return UNWIND_ARCH_UNKNOWN;
	if (strcmp(a, "x86_64") == 0 || strcmp(a, "amd64") == 0)
		return UNWIND_ARCH_X86_64;
	if (strcmp(a, "aarch64") == 0 || strcmp(a, "arm64") == 0)
		return UNWIND_ARCH_AARCH64;
	return UNWIND_ARCH_UNKNOWN;
}

static unsigned
arch_sp_reg(int arch)
{
	return arch == UNWIND_ARCH_X86_64 ? X86_SP : ARM64_SP;
}

static unsigned
arch_ip_reg(int arch)
{
	return arch == UNWIND_ARCH_X86_64 ? X86_IP : ARM64_PC;
}

static int
arch_elf_machine(int arch)
{
	return arch == UNWIND_ARCH_X86_64 ? EM_X86_64 : EM_AARCH64;
}

/* The value of perf register `regno` in the sample: registers are stored
 * one per set bit of the mask, in ascending bit order. */
static bool
reg_get(const unwind_input *in, unsigned regno, uint64_t *val)
{
	if (regno >= 64 || !(in->regs_mask & (1ULL << regno)))
		return false;
	unsigned idx = (unsigned)__builtin_popcountll(in->regs_mask &
						      ((1ULL << regno) - 1));
	if (idx >= in->nr_regs)
		return false;
	*val = in->regs[idx];
	return true;
}

void
unwind_input_from_sample(unwind_input *in, const pd_sample *s, int swapped)
{
	memset(in, 0, sizeof(*in));
	in->pid = s->pid;
	in->tid = s->tid;
	if (s->fields & PD_SAMPLE_REGS_USER) {
		in->regs_abi = s->regs_user.abi;
		in->regs_mask = s->regs_user.mask;
		in->regs = s->regs_user.regs;
		in->nr_regs = s->regs_user.regs ? s->regs_user.nr : 0;
	}
	if (s->fields & PD_SAMPLE_STACK_USER) {
		in->stack = s->stack_user;
		in->stack_size = s->stack_user_size;
		in->stack_dyn_size = s->stack_user_dyn_size;
	}
	in->swapped = swapped;
}

/* ---- the negative cache: files that could not be used ------------------ */

static uint64_t
path_hash(const char *p)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

/* The entry of `path` (hash h), else the free one where it would go
 * (path NULL); NULL when it is absent and the table is full. */
static struct neg_entry *
neg_slot(struct unwinder *u, const char *path, uint64_t h)
{
	for (unsigned i = 0; i < NEG_CACHE_SIZE; i++) {
		struct neg_entry *e = &u->neg[(h + i) % NEG_CACHE_SIZE];
		if (e->path == NULL ||
		    (e->hash == h && strcmp(e->path, path) == 0))
			return e;
	}
	return NULL;
}

static bool
neg_has(struct unwinder *u, const char *path)
{
	struct neg_entry *e = neg_slot(u, path, path_hash(path));
	return e != NULL && e->path != NULL;
}

static void
neg_add(struct unwinder *u, const char *path)
{
	uint64_t h = path_hash(path);
	struct neg_entry *e = neg_slot(u, path, h);
	/* full: such files are retried, which is slower but correct */
	if (e != NULL && e->path == NULL) {
		e->path = strdup(path);	/* NULL: not cached */
		e->hash = h;
	}
}

/* ---- sessions ---------------------------------------------------------- */

static void
module_free(struct module *m)
{
	if (m == NULL)
		return;
	free(m->path);
	free(m);
}

static void
session_free(struct unwinder *u, struct session *s)
{
	if (s == NULL)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);	/* closes the modules' descriptors */
	for (unsigned i = 0; i < s->nr_mods; i++)
		module_free(s->mods[i]);
	u->nr_modules -= s->nr_mods;
	free(s->mods);
	free(s);
}

static void
session_drop(struct unwinder *u, unsigned i)
{
	session_free(u, u->sessions[i]);
	u->sessions[i] = u->sessions[--u->nr_sessions];
}

/* Evict the least recently used session other than `keep`. */
static bool
evict_one(struct unwinder *u, const struct session *keep)
{
	unsigned victim = u->nr_sessions;
	for (unsigned i = 0; i < u->nr_sessions; i++) {
		if (u->sessions[i] == keep)
			continue;
		if (victim == u->nr_sessions ||
		    u->sessions[i]->last_use < u->sessions[victim]->last_use)
			victim = i;
	}
	if (victim == u->nr_sessions)
		return false;
	session_drop(u, victim);
	u->stats.sessions_evicted++;
	return true;
}

static struct session *
session_find(struct unwinder *u, uint32_t pid)
{
	for (unsigned i = 0; i < u->nr_sessions; i++)
		if (u->sessions[i]->pid == pid)
			return u->sessions[i];
	return NULL;
}

static struct session *
session_new(struct unwinder *u, uint32_t pid)
{
	if (u->nr_sessions >= u->max_sessions && !evict_one(u, NULL))
		return NULL;
	struct session *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->dwfl = dwfl_begin(&u->dwfl_callbacks);
	if (s->dwfl == NULL) {
		free(s);
		return NULL;
	}
	s->pid = pid;
	s->u = u;
	s->id = ++u->sessions_made;
	u->sessions[u->nr_sessions++] = s;
	u->stats.sessions_created++;
	return s;
}

void
unwind_forget_process(unwinder *u, uint32_t pid)
{
	for (unsigned i = 0; i < u->nr_sessions; i++)
		if (u->sessions[i]->pid == pid) {
			session_drop(u, i);
			return;
		}
}

/* ---- modules ----------------------------------------------------------- */

/*
 * The bias (load address minus link-time address) implied by mapping file
 * offset `pgoff` at `start`: the PT_LOAD segment holding that offset
 * (preferring an executable one) gives the link-time address of it.
 * Returns false when no segment holds the offset.
 */
static bool
implied_bias(const struct module *m, uint64_t start, uint64_t pgoff,
	     uint64_t *bias)
{
	if (m->is_exec) {
		*bias = 0;
		return true;
	}
	int best = -1;
	for (unsigned i = 0; i < m->nr_loads; i++) {
		uint64_t align = m->loads[i].align;
		if (align < 0x1000 || align > 0x10000 || (align & (align - 1)))
			align = 0x1000;
		uint64_t lo = m->loads[i].offset & ~(align - 1);
		uint64_t hi = m->loads[i].offset + m->loads[i].filesz;
		if (pgoff < lo || pgoff >= hi)
			continue;
		if (best < 0 || (m->loads[i].flags & PF_X))
			best = (int)i;
	}
	if (best < 0)
		return false;
	/* link-time address of file offset pgoff */
	uint64_t link = m->loads[best].vaddr - m->loads[best].offset + pgoff;
	*bias = start - link;
	return true;
}

/* Does the caller's mapping agree with what the module was reported as? */
static bool
module_matches(struct module *m, const unwind_map *map)
{
	if (strcmp(m->path, map->path) != 0)
		return false;
	for (unsigned i = 0; i < m->nr_seen; i++)
		if (m->seen_start[i] == map->start &&
		    m->seen_pgoff[i] == map->pgoff)
			return true;
	uint64_t bias;
	if (!implied_bias(m, map->start, map->pgoff, &bias) || bias != m->bias)
		return false;
	unsigned slot = m->nr_seen < SEEN_MAPS ? m->nr_seen++ : 0;
	m->seen_start[slot] = map->start;
	m->seen_pgoff[slot] = map->pgoff;
	return true;
}

/* Read the program headers and build-id of the file on `fd` into m.
 * Returns false when it is not an ELF file of the recording's machine or
 * not the build the recording saw. */
static bool
module_inspect(struct unwinder *u, struct module *m, int fd,
	       const unwind_map *map)
{
	bool ok = false;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf == NULL || elf_kind(elf) != ELF_K_ELF)
		goto out;
	GElf_Ehdr eh;
	if (gelf_getehdr(elf, &eh) == NULL ||
	    eh.e_machine != arch_elf_machine(u->arch))
		goto out;
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		goto out;
	m->is_exec = eh.e_type == ET_EXEC;
	GElf_Shdr eh_hdr;
	m->eh_frame_hdr = pd_symtab_section(elf, ".eh_frame_hdr", &eh_hdr) != NULL;
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		goto out;
	for (size_t i = 0; i < phnum && m->nr_loads < MAX_LOADS; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) == NULL)
			goto out;
		if (ph.p_type != PT_LOAD)
			continue;
		if (m->nr_loads == 0)
			m->elf_base = ph.p_vaddr & ~((uint64_t)sysconf(_SC_PAGESIZE) - 1);
		m->loads[m->nr_loads].vaddr = ph.p_vaddr;
		m->loads[m->nr_loads].offset = ph.p_offset;
		m->loads[m->nr_loads].filesz = ph.p_filesz;
		m->loads[m->nr_loads].align = ph.p_align;
		m->loads[m->nr_loads].flags = ph.p_flags;
		m->nr_loads++;
	}
	if (map->build_id != NULL && map->build_id_size > 0) {
		const void *bid = NULL;
		ssize_t n = dwelf_elf_gnu_build_id(elf, &bid);
		/* perf pads 20-byte slots with zeros for shorter ids */
		if (n <= 0 || (size_t)n > map->build_id_size ||
		    memcmp(bid, map->build_id, (size_t)n) != 0) {
			u->stats.build_id_mismatch++;
			goto out;
		}
	}
	ok = implied_bias(m, map->start, map->pgoff, &m->bias);
out:
	if (elf)
		elf_end(elf);
	return ok;
}

enum { MOD_OK, MOD_NONE, MOD_STALE, MOD_NOMEM };

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* The addresses [lo, hi) of map and module dm both: there, while the
 * process's maps stay, ensure_module answers MOD_OK again. */
static void
ok_range(const unwind_map *map, Dwfl_Module *dm, uint64_t *lo, uint64_t *hi)
{
	Dwarf_Addr start = 0, end = 0;

	dwfl_module_info(dm, NULL, &start, &end, NULL, NULL, NULL, NULL);
	*lo = start > map->start ? start : map->start;
	*hi = end < map->end ? end : map->end;
}

/* Report the file mapped at `pc` into the session, unless it already is.
 * On MOD_OK, [*lo, *hi) is where the same answer holds. */
static int
ensure_module_at(struct session *s, uint64_t pc, uint64_t *lo, uint64_t *hi)
{
	struct unwinder *u = s->u;
	unwind_map map;
	memset(&map, 0, sizeof(map));
	if (!u->find_map(u->ctx, s->pid, pc, &map) || map.path == NULL ||
	    map.path[0] == '\0' || map.path[0] == '[' || pc < map.start ||
	    pc >= map.end) {
		u->stats.no_module++;
		return MOD_NONE;
	}
	Dwfl_Module *dm = dwfl_addrmodule(s->dwfl, pc);
	if (dm != NULL) {
		void **ud = NULL;
		dwfl_module_info(dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		struct module *m = ud ? *ud : NULL;
		if (m != NULL && module_matches(m, &map)) {
			m->file_low = map.file_low;
			ok_range(&map, dm, lo, hi);
			return MOD_OK;
		}
		return MOD_STALE;
	}
	if (neg_has(u, map.path)) {
		u->stats.no_module++;
		return MOD_NONE;
	}
	/* The file is reported already at this bias: pc lies in its mapping
	 * but past its segments (the tail of the last page). Reporting it
	 * again would only collide with itself. */
	for (unsigned i = 0; i < s->nr_mods; i++) {
		uint64_t bias;
		if (strcmp(s->mods[i]->path, map.path) == 0 &&
		    implied_bias(s->mods[i], map.start, map.pgoff, &bias) &&
		    bias == s->mods[i]->bias) {
			u->stats.no_module++;
			return MOD_NONE;
		}
	}
	if (u->nr_modules >= u->max_modules) {
		while (u->nr_modules >= u->max_modules && evict_one(u, s))
			;
		if (u->nr_modules >= u->max_modules) {
			u->stats.no_module++;
			return MOD_NONE;
		}
	}
	if (s->nr_mods == s->cap_mods) {
		unsigned cap = s->cap_mods ? s->cap_mods * 2 : 8;
		struct module **n = realloc(s->mods, cap * sizeof(*n));
		if (n == NULL)
			return MOD_NOMEM;
		s->mods = n;
		s->cap_mods = cap;
	}
	struct module *m = calloc(1, sizeof(*m));
	if (m == NULL || (m->path = strdup(map.path)) == NULL) {
		module_free(m);
		return MOD_NOMEM;
	}
	int fd = open(map.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !module_inspect(u, m, fd, &map)) {
		if (fd >= 0)
			close(fd);
		neg_add(u, map.path);
		module_free(m);
		u->stats.no_module++;
		return MOD_NONE;
	}
	dwfl_report_begin_add(s->dwfl);
	/* on success the module owns fd and closes it at dwfl_end */
	dm = dwfl_report_elf(s->dwfl, base_name(map.path), map.path, fd,
			     m->bias, true);
	if (dm == NULL) {
		/* It overlaps a module reported for another mapping, and
		 * libdwfl marked that one for removal at dwfl_report_end,
		 * which could be in use by the walk under way: the session
		 * is rebuilt instead. */
		close(fd);
		module_free(m);
		return MOD_STALE;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	void **ud = NULL;
	dwfl_module_info(dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (ud)
		*ud = m;
	m->mod = dm;
	m->seen_start[0] = map.start;
	m->seen_pgoff[0] = map.pgoff;
	m->nr_seen = 1;
	m->file_low = map.file_low;
	s->mods[s->nr_mods++] = m;
	u->nr_modules++;
	ok_range(&map, dm, lo, hi);
	return MOD_OK;
}

static int
ensure_module(struct session *s, uint64_t pc)
{
	uint64_t lo, hi;

	return ensure_module_at(s, pc, &lo, &hi);
}

/* Whether perf 6.1 could unwind the frame at pc, as far as its file goes:
 * its libunwind finds a frame's CFI through the file's .eh_frame_hdr
 * alone (find_proc_info; never .debug_frame, nor frame pointers when
 * the file has no such section), so a frame in a file without one (a Go
 * program, C built with -fno-asynchronous-unwind-tables) is the walk's
 * last, where libdwfl would go on from .debug_frame or %rbp.
 *
 * It finds that table at the file's load address as it reckons it: the
 * lowest start of any map of the file in the process, less the first
 * segment's address (read_unwind_spec_eh_frame). perf keeps a process's
 * maps from before an exec, so a program run from a shell also has the
 * shell's libc and ld.so maps; where one of those lies lower than its
 * own, every frame in that file misses the table, and libunwind falls
 * back to %rbp, which in optimized code holds no frame pointer: the walk
 * ends there (`__libc_start_call_main` as the last frame, a lone frame
 * in ld.so's start-up), in processes whose libraries happened to load
 * above their parent's. rbp_walk follows that fallback while it stays in
 * such files; where it lands in a file perf can unwind, perf's walk goes
 * on by CFI and ours ends. A pc in no
 * reported file keeps libdwfl's answer. */
enum perf_cfi {
	PERF_CFI_FOUND,		/* perf's unwinder steps by the file's CFI */
	PERF_CFI_NONE,		/* no .eh_frame_hdr: find_proc_info fails,
				   the walk ends */
	PERF_CFI_MISSED,	/* the table looked for at the wrong place:
				   libunwind finds no CFI there
				   (-UNW_ENOINFO) and tries %rbp */
	PERF_CFI_NOFDE,		/* the table has no FDE for the pc: the
				   same -UNW_ENOINFO, and %rbp tried; after
				   that step perf goes on by CFI, as
				   libdwfl does after its own */
};

/* A pc in no reported file. perf's find_proc_info fails (-EINVAL) where
 * it has no file to read: in no map, an anonymous or JIT one, a file not
 * found or not ELF; the walk ends there. A pc in a file it reads but past
 * its segments has no FDE (-UNW_ENOINFO): libunwind tries %rbp. Anything
 * else (more files than the unwinder keeps open) keeps libdwfl's answer. */
static enum perf_cfi
perf_cfi_unreported(struct session *s, uint64_t pc)
{
	unwind_map map;

	memset(&map, 0, sizeof(map));
	if (!s->u->find_map(s->u->ctx, s->pid, pc, &map) || map.path == NULL ||
	    map.path[0] == '\0' || neg_has(s->u, map.path))
		return PERF_CFI_NONE;
	for (unsigned i = 0; i < s->nr_mods; i++)
		if (strcmp(s->mods[i]->path, map.path) == 0)
			return PERF_CFI_MISSED;
	return PERF_CFI_FOUND;
}

/* Whether the file's .eh_frame has an FDE for pc. One it lacks (glibc's
 * clone3 past its system call, node's built-in code) is -UNW_ENOINFO to
 * perf's libunwind, which then tries %rbp, as libdwfl does too but
 * without libunwind's tests of it (rbp_step). The CFI rows answer from
 * their cache the lookup libdwfl is about to make for the same pc. */
static bool
has_eh_fde(struct session *s, Dwfl_Module *dm, uint64_t pc)
{
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;
	Dwarf_Frame *frame = NULL;

	if (s->u->rows != NULL && s->u->arch == UNWIND_ARCH_X86_64) {
		const cfi_row *row = cfi_rows_find(s->u->rows, s->id, s->dwfl, pc);

		return row != NULL && row->eh;
	}
	cfi = dwfl_module_eh_cfi(dm, &bias);
	if (cfi == NULL || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
		return false;
	free(frame);
	return true;
}

static enum perf_cfi
perf_cfi_at(struct session *s, uint64_t pc)
{
	Dwfl_Module *dm = dwfl_addrmodule(s->dwfl, pc);
	void **ud = NULL;
	struct module *m;

	if (dm == NULL)
		return perf_cfi_unreported(s, pc);
	dwfl_module_info(dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	m = ud ? *ud : NULL;
	if (m == NULL)
		return PERF_CFI_FOUND;
	if (!m->eh_frame_hdr)
		return PERF_CFI_NONE;
	if (m->file_low != 0 && m->file_low - m->elf_base != m->bias)
		return PERF_CFI_MISSED;
	return has_eh_fde(s, dm, pc) ? PERF_CFI_FOUND : PERF_CFI_NOFDE;
}

/* Whether pc lies where ensure_module said MOD_OK since the process's
 * maps last changed (stamp: the caller's unwind_input.maps_stamp, 0
 * unknown); else 0, and the ranges are forgotten if the maps changed. */
static bool
checked_ok(struct session *s, uint64_t pc, uint64_t stamp)
{
	if (stamp == 0 || stamp != s->checked_stamp) {
		s->nr_checked = 0;
		s->checked_stamp = stamp;
		return false;
	}
	for (unsigned i = 0; i < s->nr_checked; i++)
		if (pc >= s->checked[i].lo && pc < s->checked[i].hi)
			return true;
	return false;
}

static void
remember_ok(struct session *s, uint64_t lo, uint64_t hi)
{
	if (s->checked_stamp == 0 || lo >= hi)
		return;
	s->checked[s->nr_checked < CHECKED_RANGES ? s->nr_checked++ : 0] =
		(struct ok_range){ lo, hi };
}

/* ---- thread state callbacks ------------------------------------------- */

static pid_t
cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct session *s = arg;
	(void)dwfl;
	if (*thread_argp != NULL)
		return 0;
	*thread_argp = s;
	return s->u->cur->tid ? (pid_t)s->u->cur->tid : 1;
}

/* The word at addr of the sample's stack copy (sp: where it starts), as
 * perf 6.1 reads it (unwind-libunwind-local.c, access_mem): from the
 * copy, but not its last word (its bounds test is off by one). */
static bool
stack_word(const unwind_input *in, uint64_t sp, uint64_t addr, uint64_t *out)
{
	uint64_t valid = in->stack_dyn_size, v;

	if (valid > in->stack_size)
		valid = in->stack_size;
	if (addr < sp || addr - sp >= valid || valid - (addr - sp) <= 8)
		return false;
	memcpy(&v, (const char *)in->stack + (addr - sp), sizeof(v));
	*out = in->swapped ? __builtin_bswap64(v) : v;
	return true;
}

static bool
cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct session *s = arg;
	uint64_t v;
	(void)dwfl;
	/* past the copy, perf asks the file of the map there and, when the
	 * map has none (the stack beyond the copy), gets 0 and takes it:
	 * the return address read there ends the walk with a frame at 0,
	 * which perf script prints as [unknown]. Past every map the read
	 * fails. A step reads the return address last (libdwfl goes by
	 * register number, and its column is the highest), so the last
	 * read says how the walk ended: a 0 read for a saved register
	 * (stale CFI in an epilogue, below the stack pointer) followed by
	 * another read is no frame at 0. */
	if (stack_word(s->u->cur, s->u->cur_sp, addr, &v)) {
		*result = v;
		s->u->zero_at = SIZE_MAX;
		return true;
	}
	unwind_map m;
	if (s->u->find_map != NULL && s->u->find_map(s->u->ctx, s->pid, addr, &m) &&
	    m.path == NULL) {
		*result = 0;
		s->u->zero_at = s->u->walk_n != NULL ? *s->u->walk_n : SIZE_MAX;
		return true;
	}
	s->u->zero_at = SIZE_MAX;
	return false;
}

static bool
cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct session *s = arg;
	const unwind_input *in = s->u->cur;
	Dwarf_Word w;
	uint64_t v;

	if (s->u->resume_regs != NULL) {
		/* caller-saved registers are unknown past the first frame */
		for (unsigned i = 0; i < X86_DWARF_REGS; i++)
			if ((s->u->resume_known & (1U << i)) &&
			    !dwfl_thread_state_registers(thread, (int)i, 1,
							 &s->u->resume_regs[i]))
				return false;
		return true;
	}
	if (s->u->arch == UNWIND_ARCH_X86_64) {
		for (unsigned i = 0; i < X86_DWARF_REGS; i++) {
			if (!reg_get(in, x86_dwarf_to_perf[i], &v))
				continue;	/* unknown to the unwinder */
			w = v;
			if (!dwfl_thread_state_registers(thread, (int)i, 1, &w))
				return false;
		}
		return true;
	}
	/* aarch64: x0-x30 and sp are DWARF 0-31, the pc is set apart */
	for (unsigned i = 0; i <= ARM64_SP; i++) {
		if (!reg_get(in, i, &v))
			continue;
		w = v;
		if (!dwfl_thread_state_registers(thread, (int)i, 1, &w))
			return false;
	}
	if (reg_get(in, ARM64_PC, &v))
		dwfl_thread_state_register_pc(thread, v);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = cb_next_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* ---- walking ----------------------------------------------------------- */

/*
 * libdwfl's x86-64 ABI defaults (elfutils backends/x86_64_cfi.c, at least
 * up to 0.188) mark DWARF register 0 (%rax) "same value" where %rbx (3) is
 * meant, so a frame whose CFI says nothing about %rbx leaves it undefined in
 * its caller. A caller whose CFA is computed from %rbx then cannot be
 * unwound: ld.so's _dl_runtime_resolve_xsavec (CFA = rbx+32) reached
 * through _dl_fixup's prologue stopped the walk there, where perf goes on
 * to the caller of the lazily bound function. %rbx is callee-saved, so an
 * unspecified rule means its value is the callee's: the walk carries it,
 * and when libdwfl stops at a frame whose CFA needs it, the walk is resumed
 * from that frame with its registers and the carried %rbx.
 */
struct walk {
	struct session *s;
	uint64_t *ips;
	size_t n, max;
	bool stale, nomem;
	size_t seen;		/* frames the current libdwfl walk showed */
	bool skip_first;	/* a resumed walk: its first frame is ips[n-1] */
	bool rbx_known;		/* rbx holds %rbx as of the last frame */
	bool rbx_lost;		/* libdwfl had no %rbx in the last frame */
	bool last;		/* ended where perf's walk ends (perf_cfi_at) */
	bool prev_activation;	/* libdwfl's word on the frame before */
	Dwarf_Word rbx;
};

/* The registers of one frame of a walk, taken by walking again, only when
 * a walk is resumed: reading them at every frame slowed all walks by
 * 10-15%. */
struct frame_regs {
	size_t target, seen;
	bool ok;
	uint32_t known;		/* bit per DWARF register */
	Dwarf_Word regs[X86_DWARF_REGS];
};

static int
regs_cb(Dwfl_Frame *state, void *arg)
{
	struct frame_regs *f = arg;

	if (f->seen++ < f->target)
		return DWARF_CB_OK;
	f->known = 0;
	for (unsigned r = 0; r < X86_DWARF_REGS; r++)
		if (dwfl_frame_reg(state, r, &f->regs[r]) == 0)
			f->known |= 1U << r;
	f->ok = true;
	return DWARF_CB_ABORT;
}

/* A word of memory as perf's libunwind reads it (cb_memory_read). */
static bool
perf_word(struct session *s, uint64_t addr, uint64_t *out)
{
	Dwarf_Word v;

	if (!cb_memory_read(s->dwfl, addr, &v, s))
		return false;
	*out = v;
	return true;
}

/* libunwind's step where it found no CFI for a frame (x86-64 Gstep.c):
 * %rbp taken for a frame pointer when it lies at most RBP_REACH above the
 * frame's stack pointer and the word there reads; the caller's pc is the
 * word above it, 0 included (perf records it, less one: [unknown]), its
 * %rbp the word at %rbp, its stack pointer %rbp + 16. false when the step
 * ends the walk. */
static bool
rbp_step(struct session *s, uint64_t *rbp, uint64_t *rsp, uint64_t *rip)
{
	uint64_t saved;

	if (*rbp == 0 || !perf_word(s, *rbp, &saved) || *rbp < *rsp || *rbp - *rsp > RBP_REACH ||
	    !perf_word(s, *rbp + 8, rip))
		return false;
	*rsp = *rbp + 16;
	*rbp = saved;
	return true;
}

/* perf's walk from a frame in a file whose table it looks for at the
 * wrong place (PERF_CFI_MISSED): frame-pointer steps while each caller is in
 * such a file too. Where one lands in a file perf can unwind, its walk
 * goes on by CFI and ours ends; in no file, both end. */
static void
rbp_walk(struct walk *w, Dwfl_Frame *state)
{
	Dwarf_Word rbp, rsp;
	uint64_t bp, sp, rip;

	if (w->s->u->arch != UNWIND_ARCH_X86_64 ||
	    dwfl_frame_reg(state, X86_DWARF_RBP, &rbp) != 0 ||
	    dwfl_frame_reg(state, X86_DWARF_RSP, &rsp) != 0)
		return;
	bp = rbp;
	sp = rsp;
	while (w->n < w->max && rbp_step(w->s, &bp, &sp, &rip)) {
		enum perf_cfi c;

		w->ips[w->n++] = rip - 1;
		c = perf_cfi_at(w->s, rip - 1);
		if (c != PERF_CFI_MISSED && c != PERF_CFI_NOFDE)
			return;
	}
}

/* Whether perf's libunwind takes the frame-pointer step from this frame
 * (PERF_CFI_NOFDE), which libdwfl takes whatever %rbp holds. */
static bool
rbp_step_taken(struct walk *w, Dwfl_Frame *state)
{
	Dwarf_Word rbp, rsp;
	uint64_t bp, sp, rip;
	size_t zero_at = w->s->u->zero_at;
	bool ok;

	if (w->s->u->arch != UNWIND_ARCH_X86_64)
		return true;
	if (dwfl_frame_reg(state, X86_DWARF_RBP, &rbp) != 0 ||
	    dwfl_frame_reg(state, X86_DWARF_RSP, &rsp) != 0)
		return false;
	bp = rbp;
	sp = rsp;
	ok = rbp_step(w->s, &bp, &sp, &rip);
	w->s->u->zero_at = zero_at;	/* libdwfl's own reads follow */
	return ok;
}

static int
frame_cb(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation;
	enum perf_cfi cfi;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	w->seen++;
	if (w->skip_first) {
		/* the frame the walk was resumed from, recorded already */
		w->skip_first = false;
		return DWARF_CB_OK;
	}
	/* the module must be known before libdwfl unwinds this frame (and
	 * before it can tell whether the frame is an activation); the
	 * first frame's was reported before the walk */
	switch (w->n == 0 ? MOD_OK : ensure_module(w->s, pc)) {
	case MOD_STALE:
		w->stale = true;
		return DWARF_CB_ABORT;
	case MOD_NOMEM:
		w->nomem = true;
		return DWARF_CB_ABORT;
	}
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (w->s->u->arch == UNWIND_ARCH_X86_64) {
		/* carry %rbx where libdwfl loses it (see above) */
		Dwarf_Word v;

		w->rbx_lost = dwfl_frame_reg(state, X86_DWARF_RBX, &v) != 0;
		if (!w->rbx_lost) {
			w->rbx = v;
			w->rbx_known = true;
		}
	}
	/* the call instruction, not the return address; but perf's
	 * libunwind keeps the pc of a frame its step came to through a
	 * signal frame (unw_is_signal_frame answers for the step just
	 * made): the interrupted frame, which libdwfl calls an activation
	 * after another one (the trampoline, whose pc perf lowers) */
	bool keep = activation && (w->n == 0 || w->prev_activation);

	w->prev_activation = activation;
	if (!keep && pc > 0)
		pc--;
	w->ips[w->n++] = pc;
	cfi = perf_cfi_at(w->s, pc);
	if (cfi == PERF_CFI_NOFDE) {
		if (!rbp_step_taken(w, state)) {
			w->last = true;	/* perf's walk ends at this frame */
			return DWARF_CB_ABORT;
		}
		cfi = PERF_CFI_FOUND;	/* libdwfl's step is perf's */
	}
	if (cfi != PERF_CFI_FOUND) {
		/* perf's walk ends here but for its frame-pointer steps
		 * where the file's table is looked for at the wrong place;
		 * their reads past the copy are not the walk's last read
		 * (zero_at, walk_once) */
		size_t zero_at = w->s->u->zero_at;

		w->last = true;
		if (cfi == PERF_CFI_MISSED)
			rbp_walk(w, state);
		w->s->u->zero_at = zero_at;
		return DWARF_CB_ABORT;
	}
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Is the CFA of the frame at `pc` (a call site or an activation's pc)
 * computed from %rbx? */
static bool
cfa_needs_rbx(Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwfl_Module *dm = dwfl_addrmodule(dwfl, pc);
	if (dm == NULL)
		return false;
	for (int which = 0; which < 2; which++) {
		Dwarf_Addr bias;
		Dwarf_CFI *cfi = which == 0 ? dwfl_module_eh_cfi(dm, &bias)
					    : dwfl_module_dwarf_cfi(dm, &bias);
		Dwarf_Frame *frame = NULL;
		Dwarf_Op *ops = NULL;
		size_t nops = 0;
		bool uses = false;

		if (cfi == NULL || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
			continue;
		if (dwarf_frame_cfa(frame, &ops, &nops) == 0)
			for (size_t i = 0; i < nops; i++)
				if (ops[i].atom == DW_OP_breg0 + X86_DWARF_RBX ||
				    ops[i].atom == DW_OP_reg0 + X86_DWARF_RBX ||
				    ((ops[i].atom == DW_OP_bregx ||
				      ops[i].atom == DW_OP_regx) &&
				     ops[i].number == X86_DWARF_RBX))
					uses = true;
		free(frame);
		return uses;
	}
	return false;
}

/*
 * The walk libdwfl would make (dwfl_thread_getframes with frame_cb), from
 * cached CFI rows (cfirows.h) and the stack copy alone: the frames, or 0
 * where a frame needs more than a row can say (no usable row, a word past
 * the copy, a file not reported cleanly, a walk that libdwfl would resume
 * past a lost %rbx, a CFA from a register it does not have): the caller
 * then walks with libdwfl. Each step applies the row as handle_cfi does:
 * a "same value" register unknown in the callee stays unknown; an undefined
 * or zero return address ends the walk. x86-64 only.
 */
static size_t
walk_rows(struct unwinder *u, struct session *s, uint64_t ip, uint64_t *ips, size_t max)
{
	const unwind_input *in = u->cur;
	/* the frame's registers and its caller's, swapped at each step */
	uint64_t bank[2][X86_DWARF_REGS] = { { 0 } }, *regs = bank[0], *next = bank[1], *t;
	uint64_t pc = ip, v;
	uint32_t known = 0, next_known;
	bool rbx_known = false, rbx_lost = false;
	size_t n = 0;

	for (unsigned r = 0; r < X86_DWARF_REGS; r++)
		if (reg_get(in, x86_dwarf_to_perf[r], &v)) {
			regs[r] = v;
			known |= 1U << r;
		}
	for (;;) {
		/* as frame_cb: the file is reported before its frame is
		 * unwound; a caller's row is looked up in its call */
		if (!checked_ok(s, pc, in->maps_stamp)) {
			uint64_t lo, hi;

			/* a file perf cannot unwind from: libdwfl's walk,
			 * which frame_cb ends there */
			if (ensure_module_at(s, pc, &lo, &hi) != MOD_OK ||
			    perf_cfi_at(s, pc) != PERF_CFI_FOUND)
				return 0;
			remember_ok(s, lo, hi);
		}
		const cfi_row *row = cfi_rows_find(u->rows, s->id, s->dwfl, n > 0 ? pc - 1 : pc);
		if (row == NULL || !row->usable || !(known & 1U << row->cfa_reg))
			return 0;
		uint64_t cfa = regs[row->cfa_reg] + (uint64_t)(int64_t)row->cfa_off;
		/* the same values first (those unknown stay unknown), then
		 * the ones from the CFA; the others are undefined */
		memcpy(next, regs, sizeof(bank[0]));
		next_known = known & row->same_mask;
		for (unsigned i = 0; i < row->nrules; i++) {
			const cfi_rule *rule = &row->rules[i];
			uint64_t at = cfa + (uint64_t)(int64_t)rule->off;

			if (rule->kind == CFI_CFA_PLUS)
				next[rule->reg] = at;
			else if (!stack_word(in, u->cur_sp, at, &next[rule->reg]))
				return 0;
			next_known |= 1U << rule->reg;
		}
		/* frame_cb's record of the frame: the call, not the return */
		rbx_lost = !(known & 1U << X86_DWARF_RBX);
		rbx_known |= !rbx_lost;
		ips[n] = n > 0 ? pc - 1 : pc;
		if (++n == max)
			return n;
		if (row->ra_undefined)
			break;
		if (!(next_known & 1U << row->ra_reg))
			return 0;	/* libdwfl's error: a resume may follow */
		if ((pc = next[row->ra_reg]) == 0)
			break;
		t = regs;
		regs = next;
		next = t;
		known = next_known;
	}
	return rbx_known && rbx_lost ? 0 : n;
}

/* One attempt. Returns frames, -1 out of memory, -2 session went stale. */
static int
walk_once(struct unwinder *u, struct session *s, uint64_t ip, uint64_t *ips,
	  size_t max)
{
	switch (ensure_module(s, ip)) {
	case MOD_STALE:
		return -2;
	case MOD_NOMEM:
		return -1;
	}
	if (!s->attached) {
		/* the machine comes from our own ELF header: an Ebl taken
		 * from a module would die with that module */
		if (s->nr_mods == 0) {
			ips[0] = ip;
			return 1;
		}
		if (!dwfl_attach_state(s->dwfl, u->arch_elf,
				       (pid_t)(s->pid ? s->pid : 1),
				       &thread_callbacks, s)) {
			u->stats.errors++;
			ips[0] = ip;
			return 1;
		}
		s->attached = true;
	}
	if (u->rows != NULL && u->arch == UNWIND_ARCH_X86_64) {
		size_t k = walk_rows(u, s, ip, ips, max);

		if (k > 0) {
			u->stats.row_walks++;
			return (int)k;
		}
	}
	struct walk w = { .s = s, .ips = ips, .max = max };
	pid_t tid = u->cur->tid ? (pid_t)u->cur->tid : 1;
	u->walk_n = &w.n;
	u->zero_at = SIZE_MAX;
	int rc = dwfl_getthread_frames(s->dwfl, tid, frame_cb, &w);
	/* a walk ends with 0 where libdwfl cannot compute a CFA, too */
	Dwarf_Word seg_regs[X86_DWARF_REGS];
	for (unsigned resumes = 0; rc <= 0 && !w.nomem && !w.stale && !w.last &&
	     w.rbx_known && w.rbx_lost && w.n > 0 && w.n < w.max &&
	     resumes < MAX_RESUMES; resumes++) {
		/* libdwfl stopped at the last frame: resume there when its CFA
		 * needs the %rbx libdwfl lost (see struct walk) */
		struct frame_regs f = { .target = w.seen - 1 };
		size_t before = w.n;

		if (!cfa_needs_rbx(s->dwfl, ips[w.n - 1]))
			break;
		/* the same walk again (from the same initial registers) up to
		 * the last frame, for its registers */
		dwfl_getthread_frames(s->dwfl, tid, regs_cb, &f);
		if (!f.ok)
			break;
		memcpy(seg_regs, f.regs, sizeof(seg_regs));
		seg_regs[X86_DWARF_RBX] = w.rbx;
		/* the call site: a resumed walk's first frame is taken as an
		 * activation, whose CFI row is looked up at its pc as is */
		seg_regs[X86_DWARF_RIP] = ips[w.n - 1];
		u->resume_regs = seg_regs;
		u->resume_known = f.known | 1U << X86_DWARF_RBX |
				  1U << X86_DWARF_RIP;
		w.skip_first = true;
		w.seen = 0;
		w.rbx_lost = false;
		rc = dwfl_getthread_frames(s->dwfl, tid, frame_cb, &w);
		u->stats.resumed++;
		if (w.n == before)
			break;
	}
	u->resume_regs = NULL;
	u->walk_n = NULL;
	if (w.nomem)
		return -1;
	if (w.stale)
		return -2;
	/* the walk ended on a read of 0 past the copy while the last frame
	 * was unwound: perf's frame at 0. frame_cb unwinds the frame it is
	 * given before counting it; libdwfl unwinds the first frame (and a
	 * resumed walk's) after the walk has counted it. */
	if (w.n > 0 && (u->zero_at == w.n - 1 || u->zero_at == w.n) && w.n < w.max)
		ips[w.n++] = 0;
	if (rc < 0 && w.n < 2)
		u->stats.errors++;
	if (w.n == 0) {
		ips[0] = ip;
		return 1;
	}
	return (int)w.n;
}

int
unwind_sample(unwinder *u, const unwind_input *in, uint64_t *ips, size_t max)
{
	uint64_t sp, ip;

	u->stats.samples++;
	if (max == 0)
		return 0;
	if (max > INT32_MAX)
		max = INT32_MAX;
	if (in->regs_abi != UNWIND_REGS_ABI_64 || in->regs == NULL ||
	    in->nr_regs != (unsigned)__builtin_popcountll(in->regs_mask) ||
	    !reg_get(in, arch_sp_reg(u->arch), &sp) ||
	    !reg_get(in, arch_ip_reg(u->arch), &ip)) {
		u->stats.no_regs++;
		return 0;
	}
	if (in->stack_size > 0 && in->stack == NULL) {
		u->stats.no_regs++;
		return 0;
	}
	struct session *s = session_find(u, in->pid);
	if (s == NULL && (s = session_new(u, in->pid)) == NULL)
		return -1;
	s->last_use = ++u->clock;
	u->cur = in;
	u->cur_sp = sp;

	int n = walk_once(u, s, ip, ips, max);
	if (n == -2) {
		/* the process's maps changed: start it afresh, once */
		u->stats.stale_sessions++;
		unwind_forget_process(u, in->pid);
		if ((s = session_new(u, in->pid)) == NULL) {
			u->cur = NULL;
			return -1;
		}
		s->last_use = ++u->clock;
		n = walk_once(u, s, ip, ips, max);
		if (n == -2) {
			ips[0] = ip;
			n = 1;
		}
	}
	u->cur = NULL;
	if (n > 0)
		u->stats.frames += (uint64_t)n;
	return n;
}

const char *
unwind_symbol_name(unwinder *u, uint32_t pid, uint64_t addr)
{
	struct session *s = session_find(u, pid);
	if (s == NULL)
		return NULL;
	Dwfl_Module *dm = dwfl_addrmodule(s->dwfl, addr);
	return dm ? dwfl_module_addrname(dm, addr) : NULL;
}

const unwind_stats *
unwind_get_stats(const unwinder *u)
{
	return &u->stats;
}

/* Separate debug files (for .debug_frame when a module's .eh_frame does
 * not cover a pc) by build-id under the debuginfo path only. Not
 * dwfl_standard_find_debuginfo: it starts a debuginfod client in every
 * Dwfl (a network fetch when DEBUGINFOD_URLS is set, ~10 ms even when it
 * is not), and the unwinder must stay local and fast. A module's own
 * .debug_frame is used without this callback. */
static int
find_debuginfo_local(Dwfl_Module *mod, void **userdata, const char *modname,
		     Dwarf_Addr base, const char *file_name,
		     const char *debuglink_file, GElf_Word debuglink_crc,
		     char **debuginfo_file_name)
{
	return dwfl_build_id_find_debuginfo(mod, userdata, modname, base,
					    file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}

unwinder *
unwind_new(int arch, unwind_find_map_fn find_map, void *ctx,
	   const unwind_options *opt)
{
	if ((arch != UNWIND_ARCH_X86_64 && arch != UNWIND_ARCH_AARCH64) ||
	    find_map == NULL)
		return NULL;
	struct unwinder *u = calloc(1, sizeof(*u));
	if (u == NULL)
		return NULL;
	u->arch = arch;
	u->find_map = find_map;
	u->ctx = ctx;
	u->max_sessions = opt && opt->max_processes ? opt->max_processes
						    : UNWIND_DEFAULT_MAX_PROCESSES;
	u->max_modules = opt && opt->max_modules ? opt->max_modules
						 : UNWIND_DEFAULT_MAX_MODULES;
	if (opt && opt->debuginfo_path &&
	    (u->debuginfo_path = strdup(opt->debuginfo_path)) == NULL)
		goto fail;
	u->dwfl_callbacks.find_elf = dwfl_build_id_find_elf;
	u->dwfl_callbacks.find_debuginfo = find_debuginfo_local;
	u->dwfl_callbacks.section_address = dwfl_offline_section_address;
	u->dwfl_callbacks.debuginfo_path = &u->debuginfo_path;
	u->sessions = calloc(u->max_sessions, sizeof(*u->sessions));
	if (u->sessions == NULL)
		goto fail;
	/* without the rows (no memory, or asked) every walk is libdwfl's */
	if (!(opt && opt->no_cfi_rows))
		u->rows = cfi_rows_new();
	elf_version(EV_CURRENT);
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = (Elf64_Half)arch_elf_machine(arch);
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	memcpy(u->ehdr, &eh, sizeof(eh));
	u->arch_elf = elf_memory((char *)u->ehdr, sizeof(u->ehdr));
	if (u->arch_elf == NULL)
		goto fail;
	return u;
fail:
	cfi_rows_free(u->rows);
	free(u->sessions);
	free(u->debuginfo_path);
	free(u);
	return NULL;
}

void
unwind_free(unwinder *u)
{
	if (u == NULL)
		return;
	while (u->nr_sessions > 0)
		session_drop(u, u->nr_sessions - 1);
	free(u->sessions);
	cfi_rows_free(u->rows);
	if (u->arch_elf)
		elf_end(u->arch_elf);
	for (unsigned i = 0; i < NEG_CACHE_SIZE; i++)
		free(u->neg[i].path);
	free(u->debuginfo_path);
	free(u);
}
