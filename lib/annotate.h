/*
 * annotate.h - a function's code with its samples, as perf annotate shows
 * it: the symbols that hold the sampled addresses, disassembled with
 * capstone (AT&T syntax on x86, as perf annotate prints objdump's), each
 * instruction with its source file and line from the DWARF line tables
 * (libdw; code inlined from elsewhere has its own file and line there), and
 * the samples added up per instruction and per source line. Shared by
 * perfhubd's /annotate and `perfhub annotate`; the caller chooses which
 * files may be read (the symbolizer's rules), this module reads only those.
 *
 * Everything in the files is untrusted: sizes are capped (AN_MAX_*), a
 * file that is not ELF, lacks code or lacks DWARF gives instructions
 * without text or without lines, never a failure.
 */
#ifndef PERFHUB_ANNOTATE_H
#define PERFHUB_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>

#define AN_MAX_SYMBOLS 64		/* functions (symbol ranges) one answer covers */
#define AN_MAX_FUNC_BYTES (256u << 10)	/* longer ones: only the sampled instructions */
#define AN_MAX_INSNS 200000		/* instructions in one answer */
#define AN_MAX_SOURCE_BYTES (16u << 20)	/* source files read for their text */
#define AN_MAX_SOURCE_LINE 4096		/* bytes of one source line kept */

typedef struct an_request {
	const char *code_path;	/* the ELF file with the code; NULL when none */
	const char *debug_path;	/* one with DWARF (may be code_path); NULL when none */
	int kernel;		/* addrs are addresses, not file offsets, and no file
				   is read (kernel code is not in either) */
	const uint64_t *addrs;	/* file offsets in the DSO (kernel: addresses) */
	const uint64_t *samples, *values;	/* each address's samples and weight */
	size_t n;
} an_request;

typedef struct an_insn {
	uint64_t addr;		/* in the DSO's address space (the symbol table's);
				   a file offset when no file gave the mapping */
	unsigned size;		/* its bytes (1 for an address outside the code read) */
	char *text;		/* "mov %rsp,%rbp"; NULL when the code was not read */
	int file;		/* index in an_result.files; -1 = no line */
	unsigned line;
	uint64_t samples, value;
} an_insn;

typedef struct an_line {
	int file;		/* index in an_result.files */
	unsigned line;
	uint64_t samples, value;
} an_line;

typedef struct an_result {
	char **files;		/* source file names as the line tables give them */
	size_t nr_files;
	int function_file;	/* the file the hottest function is declared in; -1 */
	char *symbol;		/* that function's symbol (as the table has it); NULL */
	uint64_t start, end;	/* its address range; 0, 0 when unknown */
	an_insn *insns;		/* by address: every instruction of the functions
				   sampled, plus sampled addresses outside them */
	size_t nr_insns;
	an_line *lines;		/* every line those instructions come from, the
				   function's file first, then by file and line */
	size_t nr_lines;
	int mapped;		/* addresses are the DSO's (else file offsets) */
	const char *disassembler;	/* "capstone x86-64" ...; NULL when none ran */
	char problem[320];	/* why text or lines are missing; "" when none is */
} an_result;

/* The answer for rq. 0, or -1 out of memory (out is emptied). Free with
 * an_result_free. Sums of samples and values over insns equal those of the
 * request, and so do those over lines when every instruction has one. */
int an_annotate(const an_request *rq, an_result *out);
void an_result_free(an_result *r);

/* Lines first..last (from 1) of the text file `path` (at most
 * AN_MAX_SOURCE_BYTES read, each line cut at AN_MAX_SOURCE_LINE bytes):
 * OUT *lines, last - first + 1 malloc'ed strings (NULL past the end).
 * 0, or -1 when the file cannot be read (errno). */
int an_source_lines(const char *path, unsigned first, unsigned last, char ***lines);
void an_source_free(char **lines, unsigned n);

#endif
