/*
 * firstq.h - binutils' first questions about functions, shared by the
 * threads that fold one recording's DWARF-unwound samples between them.
 *
 * addr2line names a function with a plain DW_AT_name by the symbol at the
 * address of the first question about it and keeps a name for the others
 * (pd_inl_naming): which answer an address gets depends on the order perf
 * asks in, its samples' time order. Threads that fold blocks of samples
 * in turn ask out of that order; here each first question is settled
 * only once every thread has passed the sample it was asked at, so the
 * earliest in time order is the one kept, whichever thread asked it.
 *
 * Each thread says which sample it is at (pd_firstq_at: a position in
 * time order the same for every thread, counted over samples every
 * thread sees) and when it has none left (pd_firstq_done, on every way
 * out: the others may be waiting for it). A symbolizer alone keeps one
 * for itself: with one thread, the first asked is the first.
 */
#ifndef PERFHUB_FIRSTQ_H
#define PERFHUB_FIRSTQ_H

#include <stdint.h>

typedef struct pd_firstq pd_firstq;

/* For nthreads threads, numbered 0 .. nthreads - 1; NULL out of memory. */
pd_firstq *pd_firstq_new(unsigned nthreads);
void pd_firstq_free(pd_firstq *q);

/* Thread `who` is at the sample at `pos` (> 0, rising): it is done with
 * every sample before. */
void pd_firstq_at(pd_firstq *q, unsigned who, uint64_t pos);

/* Thread `who` has no samples left. */
void pd_firstq_done(pd_firstq *q, unsigned who);

/* A first question's outcome: the address asked, the name given there,
 * the name kept for the others (NULL: the DWARF name). */
typedef struct pd_firstq_answer {
	uint64_t off;
	const char *first, *kept;
} pd_firstq_answer;

/* The first question about function func of the dso with serial `serial`
 * in time order. *a holds the one thread `who` asks now, at its sample:
 * it is kept unless an earlier one was, and *a is then that one. May wait
 * for other threads to pass the sample. 0, or -1 when too many functions
 * are kept (*a left as asked). */
int pd_firstq_ask(pd_firstq *q, unsigned who, uint64_t serial, uint64_t func,
		  pd_firstq_answer *a);

#endif
