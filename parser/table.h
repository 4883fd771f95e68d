/*
 * table.h - zeroed memory for a hash table, which is read before it is
 * written: a probe looks at a slot, then fills it.
 *
 * calloc hands back fresh pages untouched. The first probe of such a page
 * maps the kernel's shared zero page; the first store then faults again,
 * copies it and flushes the page from the TLB of every CPU running one of
 * the process's threads. Zeroed by a store, each page faults once and is
 * the process's own from then on: `perfhub collapse` of a system-wide
 * build with its loading thread, `perf stat -e tlb:tlb_flush,page-faults`:
 * 2,705 TLB flushes and 17.7 k faults before, 401 and 16.6 k after.
 */
#ifndef PERFHUB_TABLE_H
#define PERFHUB_TABLE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* n zeroed slots of size bytes, or NULL. */
static inline void *pd_table_new(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	bytes = n * size;
	p = malloc(bytes ? bytes : 1);
	if (!p)
		return NULL;
	/* the barrier keeps the compiler from making malloc + memset a
	 * calloc again */
	__asm__ volatile("" : : "r"(p) : "memory");
	memset(p, 0, bytes);
	return p;
}

#endif
