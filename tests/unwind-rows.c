/*
 * unwind-rows: every address of an ELF file's .eh_frame, looked up in
 * the kept CFI rows (parser/cfirows.h) after its neighbours, must give
 * the row a lookup of that address alone gives.
 *
 *   unwind-rows FILE...	exit 1 at the first address that differs
 *
 * A kept row stands for a range of addresses, so a row kept with a range
 * too wide answers for addresses of another row: the walk then reads the
 * return address from the wrong slot (libdw's start of a row after
 * DW_CFA_restore_state is an older row's). Each file is looked up
 * upwards, then downwards (the order that found that one), against a
 * table that keeps nothing between lookups (a new owner each time).
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "cfirows.h"

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* the same rules; the range aside */
static int same_row(const cfi_row *a, const cfi_row *b)
{
	if (!a || !b)
		return a == b;
	if (a->usable != b->usable)
		return 0;
	if (!a->usable)
		return 1;
	return a->cfa_reg == b->cfa_reg && a->cfa_off == b->cfa_off &&
	       a->ra_reg == b->ra_reg && a->ra_undefined == b->ra_undefined &&
	       a->same_mask == b->same_mask && a->nrules == b->nrules &&
	       memcmp(a->rules, b->rules, a->nrules * sizeof(a->rules[0])) == 0;
}

static void describe(const char *what, const cfi_row *r)
{
	if (!r) {
		fprintf(stderr, "  %s: no row\n", what);
		return;
	}
	fprintf(stderr, "  %s: [%#" PRIx64 ", %#" PRIx64 ") usable %d CFA reg %u%+d, %u rules\n",
		what, r->lo, r->hi, r->usable, r->cfa_reg, r->cfa_off, r->nrules);
}

/* One file, one direction: the number of addresses with a row, or -1. */
static long check(const char *path, Dwfl *dwfl, uint64_t lo, uint64_t hi, int down)
{
	cfi_rows *kept = cfi_rows_new(), *alone = cfi_rows_new();
	long rows = 0;

	if (!kept || !alone) {
		fprintf(stderr, "unwind-rows: out of memory\n");
		exit(99);
	}
	for (uint64_t i = 0; i < hi - lo; i++) {
		uint64_t pc = down ? hi - 1 - i : lo + i;
		/* owner 1 throughout: what was kept answers; a new owner
		 * for each address: nothing does */
		const cfi_row *k = cfi_rows_find(kept, 1, dwfl, pc);
		const cfi_row *a = cfi_rows_find(alone, pc + 2, dwfl, pc);

		if (!same_row(k, a)) {
			fprintf(stderr, "FAIL %s: address %#" PRIx64 " (looked up %s): the kept row differs\n",
				path, pc, down ? "downwards" : "upwards");
			describe("kept ", k);
			describe("alone", a);
			rows = -1;
			break;
		}
		rows += a != NULL;
	}
	cfi_rows_free(kept);
	cfi_rows_free(alone);
	return rows;
}

int main(int argc, char **argv)
{
	int fail = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: unwind-rows FILE...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		Dwfl *dwfl = dwfl_begin(&callbacks);
		Dwfl_Module *m;
		Dwarf_Addr lo, hi;

		if (!dwfl || !(m = dwfl_report_offline(dwfl, argv[i], argv[i], -1)) ||
		    dwfl_report_end(dwfl, NULL, NULL) != 0) {
			fprintf(stderr, "unwind-rows: %s: %s\n", argv[i], dwfl_errmsg(-1));
			return 99;
		}
		dwfl_module_info(m, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
		for (int down = 0; down < 2; down++) {
			long rows = check(argv[i], dwfl, lo, hi, down);

			if (rows < 0) {
				fail = 1;
				break;
			}
			if (rows == 0) {
				fprintf(stderr, "FAIL %s: no address has a row\n", argv[i]);
				fail = 1;
				break;
			}
			if (down)
				printf("%s: %ld addresses with rows, kept rows agree both ways\n",
				       argv[i], rows);
		}
		dwfl_end(dwfl);
	}
	return fail;
}
