/*
 * elfid.h - what a debuginfo file is, read without trusting it: an ELF
 * file (its GNU build-id note, whether it has .symtab, whether it has code
 * or is a separate debug file) or a kallsyms text. Shared by perfhubd's
 * debuginfo store and `perfhub upload`.
 */
#ifndef PERFHUB_ELFID_H
#define PERFHUB_ELFID_H

#include <stddef.h>
#include <stdint.h>

#define ELFID_MAX_BUILD_ID 20

typedef struct elfid {
	int elf;		/* an ELF file libelf reads */
	int kallsyms;		/* looks like /proc/kallsyms */
	uint8_t bid[ELFID_MAX_BUILD_ID];
	size_t bid_size;	/* 0: no build-id note */
	int has_symtab;
	int has_code;		/* executable PROGBITS: a binary, not a .debug file */
} elfid;

/* Fills *out from the open file (read with pread; the offset is kept). */
void elfid_of_fd(int fd, elfid *out);

#endif
