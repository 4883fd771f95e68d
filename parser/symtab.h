/*
 * symtab.h - one dso's symbol table, built with perf 6.1's rules so that
 * frames are named as `perf script` names them (docs/symbols.md).
 *
 * Symbols are added in the order of their source (ELF symbol tables in
 * file order, then the PLT; kallsyms and perf-PID.map lines); finishing
 * the table gives unsized symbols their ends, keeps the best of aliases,
 * and resolves overlapping symbols as perf's lookup does. The finished
 * table is read-only, pieces that do not overlap, looked up by binary
 * search; it may be shared between threads (demangled names are made on
 * first lookup, under the table's own lock).
 */
#ifndef PERFHUB_SYMTAB_H
#define PERFHUB_SYMTAB_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pd_symtab pd_symtab;

pd_symtab *pd_symtab_new(void);
void pd_symtab_free(pd_symtab *t);

/* Symbols added so far (before finishing), or pieces (after). */
size_t pd_symtab_count(const pd_symtab *t);

/* Functions, objects and labels of one ELF symbol table section (perf's
 * filter). -1 when out of memory or over the limit of symbols. */
int pd_symtab_add_elf(pd_symtab *t, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh);
/* "name@plt" for the PLT slots, as perf 6.1 synthesizes them. */
int pd_symtab_add_plt(pd_symtab *t, Elf *e);
/* kallsyms lines ("ADDR T name[\t[module]]", text symbols only) and
 * perf-PID.map lines ("START SIZE name"). 0, or -1 when the file cannot
 * be read (errno set). */
int pd_symtab_add_kallsyms(pd_symtab *t, const char *path);
int pd_symtab_add_perfmap(pd_symtab *t, const char *path);

/* The ELF section of that name (its header in *out), or NULL. */
Elf_Scn *pd_symtab_section(Elf *e, const char *name, GElf_Shdr *out);

/* Finish an ELF table: the first nr_first symbols came from the .symtab
 * (or .dynsym), the next ones up to nr_second from the .dynsym of a file
 * that has both, the rest from the PLT. */
void pd_symtab_finish_elf(pd_symtab *t, size_t nr_first, size_t nr_second);
/* Finish a kallsyms (kallsyms != 0) or perf-PID.map table. */
void pd_symtab_finish(pd_symtab *t, int kallsyms);

/* Work the first lookup among overlapping symbols would do (perf's tree
 * rebuilt), done now: for a table loaded ahead of its use. */
void pd_symtab_prepare(pd_symtab *t);

/* The symbol covering addr: its name (valid while the table lives) and
 * addr's offset into it; NULL when none. */
const char *pd_symtab_lookup(pd_symtab *t, uint64_t addr, uint64_t *sym_off);

/* Memory held, in bytes. */
size_t pd_symtab_bytes(const pd_symtab *t);

/* Demangle as perf does by default (C++ Itanium, Rust legacy and v0):
 * a malloc'ed string, or NULL when `name` is not mangled. */
char *pd_demangle(const char *name);

#endif
