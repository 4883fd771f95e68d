/* cfirows.c - rows of CFI kept for walks without libdw; see cfirows.h. */
#include "config.h"

#include "cfirows.h"

#include <stdbool.h>
#include <stdlib.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#define ROW_SLOTS	4096	/* a power of 2: 704 KB per unwinder */
#define ROW_GRANULE	4	/* log2 bytes of addresses sharing a slot */

struct cfi_rows {
	cfi_row *slot;		/* direct-mapped: a new row takes the old one's place */
};

cfi_rows *cfi_rows_new(void)
{
	cfi_rows *c = calloc(1, sizeof(*c));

	if (c && !(c->slot = calloc(ROW_SLOTS, sizeof(*c->slot)))) {
		free(c);
		c = NULL;
	}
	return c;
}

void cfi_rows_free(cfi_rows *c)
{
	if (!c)
		return;
	free(c->slot);
	free(c);
}

static bool fits_int32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* A register's rule from the ops dwarf_frame_register gives, in the forms
 * libdwfl's expr_eval reads only the CFA and one stack word for: none
 * (undefined), NULL (same value), or DW_OP_call_frame_cfa [plus_uconst N]
 * [stack_value]. */
static bool rule_of(Dwarf_Frame *f, int regno, uint8_t *kind, int32_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n, i = 1;
	int64_t v = 0;

	if (dwarf_frame_register(f, regno, mem, &ops, &n) != 0)
		return false;
	if (n == 0) {
		if (ops == mem)
			*kind = CFI_UNDEFINED;
		else if (ops == NULL)
			*kind = CFI_SAME;
		else
			return false;
		*off = 0;
		return true;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (i < n && ops[i].atom == DW_OP_plus_uconst)
		v = (int64_t)ops[i++].number;
	*kind = CFI_AT_CFA;
	if (i < n && ops[i].atom == DW_OP_stack_value) {
		*kind = CFI_CFA_PLUS;
		i++;
	}
	if (i != n || !fits_int32(v))
		return false;
	*off = (int32_t)v;
	return true;
}

/*
 * Where the row of the CFI-relative address `at` begins, given the start
 * and end libdw gave for it. The end is where the next row begins, but
 * the start is not always this row's: after DW_CFA_restore_state libdw
 * gives the start of the row that was remembered, rows before this one
 * (a function's mid-body epilogue: remember, pop, ret, restore). Every
 * address libdw gives is a row's start, though, so the rows are followed
 * from there by their ends to the one holding `at`; at or past
 * ROW_FOLLOW rows, or on an error, `at` itself.
 */
#define ROW_FOLLOW	8
static Dwarf_Addr row_start(Dwarf_CFI *cfi, Dwarf_Addr at, Dwarf_Addr start)
{
	for (int k = 0; k < ROW_FOLLOW && start < at; k++) {
		Dwarf_Frame *f = NULL;
		Dwarf_Addr s, e;
		bool signal;

		if (dwarf_cfi_addrframe(cfi, start, &f) != 0)
			return at;
		if (dwarf_frame_info(f, &s, &e, &signal) < 0 || e <= start) {
			free(f);
			return at;
		}
		free(f);
		if (e > at)
			return start;	/* no row begins in (start, at] */
		start = e;
	}
	return at;	/* a row begins at `at`, or too many to follow */
}

/* r->usable when every rule of the frame's row has a form walk_rows
 * applies as libdwfl's handle_cfi would; [lo, hi): where it holds (pc:
 * the address asked, bias: the CFI's; cfi: the .eh_frame whose row
 * holds for a range, NULL: pc alone). */
static void fill(cfi_row *r, Dwarf_Frame *f, uint64_t pc, Dwarf_Addr bias, Dwarf_CFI *cfi)
{
	Dwarf_Addr start, end;
	Dwarf_Op *ops;
	size_t nops;
	bool signal = false;
	int ra = dwarf_frame_info(f, &start, &end, &signal);
	int regno;

	r->usable = 0;
	r->lo = pc;
	r->hi = pc + 1;
	if (cfi && ra >= 0 && start + bias <= pc && pc < end + bias) {
		r->lo = row_start(cfi, pc - bias, start) + bias;
		r->hi = end + bias;
	}
	/* a signal frame changes how its caller's pc is looked up */
	if (ra < 0 || ra >= CFI_NREGS || signal)
		return;
	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    ops[0].number >= CFI_NREGS || !fits_int32((int64_t)ops[0].number2))
		return;
	r->ra_reg = (uint8_t)ra;
	r->cfa_reg = (uint8_t)ops[0].number;
	r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	for (regno = 0; regno < CFI_NREGS; regno++) {
		uint8_t kind;
		int32_t off;

		if (!rule_of(f, regno, &kind, &off))
			return;
		if (kind == CFI_SAME)
			r->same_mask |= 1U << regno;
		else if (kind == CFI_UNDEFINED)
			r->ra_undefined |= regno == ra;
		else
			r->rules[r->nrules++] = (cfi_rule){ (uint8_t)regno, kind, off };
	}
	r->usable = 1;
}

const cfi_row *cfi_rows_find(cfi_rows *c, uint64_t owner, Dwfl *dwfl, uint64_t pc)
{
	uint64_t h = (pc >> ROW_GRANULE ^ owner * 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;
	cfi_row *r = &c->slot[(h >> 40) & (ROW_SLOTS - 1)];
	Dwfl_Module *m;
	Dwarf_CFI *cfi;
	Dwarf_Frame *f = NULL;
	Dwarf_Addr bias;
	bool eh = true;

	if (r->owner == owner && r->lo <= pc && pc < r->hi && owner)
		return r;
	if (!owner || !(m = dwfl_addrmodule(dwfl, pc)))
		return NULL;
	/* libdwfl's order: the .eh_frame row when it has one, else the
	 * .debug_frame row, kept for pc alone (another address of its range
	 * might have an .eh_frame row) */
	cfi = dwfl_module_eh_cfi(m, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &f) != 0) {
		f = NULL;
		eh = false;
		cfi = dwfl_module_dwarf_cfi(m, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &f) != 0)
			return NULL;
	}
	*r = (cfi_row){ .owner = owner, .eh = eh };
	fill(r, f, pc, bias, eh ? cfi : NULL);
	free(f);
	return r;
}
