/*
 * thread.h - threads over time: COMM (and exec), FORK, EXIT, as perf keeps
 * them, so each sample gets the comm its thread had at that moment and the
 * address space of its process.
 */
#ifndef PERFHUB_THREAD_H
#define PERFHUB_THREAD_H

#include <stdint.h>
#include "maps.h"

typedef struct pd_thread {
	uint32_t pid, tid;
	char *comm;		/* perf's ":TID" until a COMM is seen */
	pd_maps *maps;		/* shared by the threads of a process */
	int exited;
	uint64_t stamp;		/* symbolizer generation of its last comm
				   change or fork (0: none since created) */
} pd_thread;

typedef struct pd_threads pd_threads;

pd_threads *pd_threads_new(pd_dso_cache *cache);
void pd_threads_free(pd_threads *t);

/* The thread, created (with its process's maps) when new; NULL when out of
 * memory or over the thread limit. */
pd_thread *pd_threads_findnew(pd_threads *t, uint32_t pid, uint32_t tid);
/* The thread, or NULL when unknown (nothing is created). */
pd_thread *pd_threads_find(pd_threads *t, uint32_t tid);

int pd_threads_comm(pd_threads *t, uint32_t pid, uint32_t tid, const char *comm);
/* A new thread or process: it inherits the parent's comm; a new process
 * gets a copy of the parent's maps (none with clone_maps 0: a FORK perf
 * synthesized for a process running before the recording, whose own maps
 * follow), a new thread shares them. */
int pd_threads_fork(pd_threads *t, uint32_t pid, uint32_t tid,
		    uint32_t ppid, uint32_t ptid, int clone_maps);
/* The thread exited: kept for samples that may still name it, until 8192
 * threads have exited after it. */
void pd_threads_exit(pd_threads *t, uint32_t pid, uint32_t tid);
size_t pd_threads_count(const pd_threads *t);

#endif
