/*
 * ksaved.h - perf's saved copy of the running kernel's symbol table.
 *
 * Reading /proc/kallsyms makes the kernel format every symbol: 50 ms of
 * CPU for its 122,000 lines here, a quarter of folding a system-wide
 * build. perf record saves the table in its build-id cache the first
 * time it records under a kernel (DIR/[kernel.kallsyms]/BUILD-ID/kallsyms)
 * and never rewrites it; reading that copy costs 1.5 ms. The copy says
 * what /proc/kallsyms says only while the kernel that wrote it runs at
 * the same address with the same modules at the same addresses, so it is
 * taken only when all three are checked here; any doubt gives NULL and
 * the caller reads /proc/kallsyms as before.
 */
#ifndef PERFHUB_KSAVED_H
#define PERFHUB_KSAVED_H

#include <stddef.h>
#include <stdint.h>

/* The path (malloc'd) of the copy under buildid_dir (NULL: $HOME/.debug)
 * for the kernel whose build-id is id[0..size), when:
 *  - the running kernel's build-id (/sys/kernel/notes) is that one;
 *  - the copy's _text address is /proc/kallsyms' (the same KASLR slide);
 *  - the copy's modules are /proc/modules' (each module's text symbols
 *    inside its loaded range, none missing, none extra).
 * kallsyms' pseudo-modules ([bpf], [__builtin__ftrace]) are not compared:
 * the recording's own KSYMBOL records name BPF programs. Else NULL. */
char *pd_ksaved_copy(const char *buildid_dir, const uint8_t *id, size_t size);

/* The same checks for a given copy and the files that describe the
 * running kernel (tests point them elsewhere): 1 when the copy holds. */
int pd_ksaved_matches(const char *copy, const uint8_t *id, size_t size,
		      const char *notes, const char *proc_kallsyms, const char *proc_modules);

#endif
