/*
 * cfirows.h - rows of CFI (the rules that unwind one frame at one address)
 * kept in a small table, in a form a walk can apply without libdw.
 *
 * libdwfl finds and executes the CFI of every frame of every sample
 * again (dwarf_cfi_addrframe, then an expression per register): most of
 * unwinding a --call-graph dwarf recording, whose samples pass the same
 * few hundred return addresses over and over. A row is taken from libdw
 * once per address and kept when every rule in it is one of the forms
 * libdwfl evaluates without reading anything but the CFA and the stack:
 * the CFA a register plus an offset; each register undefined, the same
 * value, saved at CFA + N, or the value CFA + N. Any other row (an
 * expression, a signal frame) is kept as unusable: the caller walks that
 * sample with libdwfl as before. A row holds for the range of addresses
 * its CFI gives it (a loop's instructions share one; where libdw's start
 * is an older row's, from where its rows' ends lead): an .eh_frame row
 * is kept for every address of its 16-byte granule in that range.
 */
#ifndef PERFHUB_CFIROWS_H
#define PERFHUB_CFIROWS_H

#include <stdint.h>

#include <elfutils/libdwfl.h>

#define CFI_NREGS	17	/* x86-64 DWARF registers: rax ... r15, rip */

enum cfi_rule_kind {
	CFI_UNDEFINED,		/* no value in the caller */
	CFI_SAME,		/* the callee's value, when it has one */
	CFI_AT_CFA,		/* saved at CFA + off */
	CFI_CFA_PLUS,		/* the value CFA + off */
};

/* A register the row gives a value: CFI_AT_CFA or CFI_CFA_PLUS. */
typedef struct cfi_rule {
	uint8_t reg, kind;
	int32_t off;
} cfi_rule;

typedef struct cfi_row {
	uint64_t owner;		/* owner 0: a free slot */
	uint64_t lo, hi;	/* the addresses [lo, hi) the row holds for */
	uint8_t usable;		/* 0: walk this frame with libdwfl */
	uint8_t eh;		/* from .eh_frame (else .debug_frame) */
	uint8_t cfa_reg;	/* CFA = regs[cfa_reg] + cfa_off */
	uint8_t ra_reg;		/* the register holding the return address */
	uint8_t ra_undefined;	/* the walk ends at this frame */
	int32_t cfa_off;
	/* the caller's registers: those in same_mask keep the callee's
	 * value (when it has one), rules[0..nrules) are computed from the
	 * CFA, every other one is undefined */
	uint32_t same_mask;
	uint8_t nrules;
	cfi_rule rules[CFI_NREGS];
} cfi_row;

typedef struct cfi_rows cfi_rows;

cfi_rows *cfi_rows_new(void);
void cfi_rows_free(cfi_rows *c);

/*
 * The row libdwfl would use to unwind a frame at `pc` (the address its
 * CFI is looked up at: a caller's return address less one) of `dwfl`,
 * whose modules belong to `owner` (a number never reused for another set
 * of modules): .eh_frame first, then .debug_frame, as libdwfl tries them.
 * NULL when no module or no CFI covers pc (not kept: a module may be
 * reported there later). x86-64 only.
 */
const cfi_row *cfi_rows_find(cfi_rows *c, uint64_t owner, Dwfl *dwfl, uint64_t pc);

#endif
