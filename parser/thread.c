/*
 * thread.c - threads by tid in an open-addressing hash table.
 */
#include "thread.h"
#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS_MAX (4u << 20)	/* a file cannot make us track more */
#define COMM_MAX 256
/* Exited threads kept (a sample may still name them); older ones are
 * forgotten, so that a long system-wide recording of short-lived
 * processes needs memory for the live ones only. */
#define THREADS_GRAVE 8192

struct pd_threads {
	pd_dso_cache *cache;
	pd_thread **slots;
	size_t cap, n;
	uint32_t grave[THREADS_GRAVE];	/* exited tids, oldest at grave_head */
	size_t grave_head, grave_n;
};

pd_threads *pd_threads_new(pd_dso_cache *cache)
{
	pd_threads *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cache = cache;
	t->cap = 1024;
	t->slots = pd_table_new(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

static void thread_free(pd_thread *th)
{
	pd_maps_unref(th->maps);
	free(th->comm);
	free(th);
}

void pd_threads_free(pd_threads *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->cap; i++)
		if (t->slots[i])
			thread_free(t->slots[i]);
	free(t->slots);
	free(t);
}

static size_t slot_of(const pd_threads *t, uint32_t tid)
{
	size_t h = (tid * 2654435761u) & (t->cap - 1);

	while (t->slots[h] && t->slots[h]->tid != tid)
		h = (h + 1) & (t->cap - 1);
	return h;
}

static int grow(pd_threads *t)
{
	pd_thread **old = t->slots;
	size_t ocap = t->cap, i;

	t->slots = pd_table_new(ocap * 2, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -1;
	}
	t->cap = ocap * 2;
	for (i = 0; i < ocap; i++)
		if (old[i])
			t->slots[slot_of(t, old[i]->tid)] = old[i];
	free(old);
	return 0;
}

static pd_thread *lookup(pd_threads *t, uint32_t tid)
{
	return t->slots[slot_of(t, tid)];
}

/* a new thread object; maps from the process leader, or new ones */
static pd_thread *create(pd_threads *t, uint32_t pid, uint32_t tid, pd_maps *maps)
{
	pd_thread *th;
	char buf[32];

	if (t->n >= THREADS_MAX || ((t->n + 1) * 2 > t->cap && grow(t) < 0))
		return NULL;
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	th->pid = pid;
	th->tid = tid;
	snprintf(buf, sizeof(buf), ":%d", (int)tid);
	th->comm = strdup(buf);
	th->maps = maps ? maps : pd_maps_new(t->cache);
	if (!th->comm || !th->maps) {
		if (!maps)
			pd_maps_unref(th->maps);
		free(th->comm);
		free(th);
		return NULL;
	}
	if (maps)
		pd_maps_ref(maps);
	t->slots[slot_of(t, tid)] = th;
	t->n++;
	return th;
}

pd_thread *pd_threads_find(pd_threads *t, uint32_t tid)
{
	return lookup(t, tid);
}

pd_thread *pd_threads_findnew(pd_threads *t, uint32_t pid, uint32_t tid)
{
	pd_thread *th = lookup(t, tid), *leader;

	if (th) {
		if (th->pid != pid && pid != (uint32_t)-1 && th->pid == (uint32_t)-1)
			th->pid = pid;
		return th;
	}
	if (pid != tid && pid != (uint32_t)-1) {
		leader = lookup(t, pid);
		if (!leader)
			leader = create(t, pid, pid, NULL);
		if (!leader)
			return NULL;
		return create(t, pid, tid, leader->maps);
	}
	return create(t, pid, tid, NULL);
}

static int set_comm(pd_thread *th, const char *comm)
{
	char *c = strndup(comm, COMM_MAX);

	if (!c)
		return -1;
	free(th->comm);
	th->comm = c;
	return 0;
}

int pd_threads_comm(pd_threads *t, uint32_t pid, uint32_t tid, const char *comm)
{
	pd_thread *th = pd_threads_findnew(t, pid, tid);

	return th ? set_comm(th, comm) : -1;
}

static void drop(pd_threads *t, uint32_t tid)
{
	size_t h = slot_of(t, tid), j;

	if (!t->slots[h])
		return;
	thread_free(t->slots[h]);
	t->slots[h] = NULL;
	t->n--;
	/* re-place the rest of the probe run */
	for (j = (h + 1) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1)) {
		pd_thread *x = t->slots[j];

		t->slots[j] = NULL;
		t->slots[slot_of(t, x->tid)] = x;
	}
}

int pd_threads_fork(pd_threads *t, uint32_t pid, uint32_t tid,
		    uint32_t ppid, uint32_t ptid, int clone_maps)
{
	pd_thread *parent, *th;
	pd_maps *maps;
	char *comm;

	parent = pd_threads_findnew(t, ppid, ptid);
	if (!parent)
		return -1;
	comm = strdup(parent->comm);
	if (!comm)
		return -1;
	if (pid == ppid) {
		maps = parent->maps;
		pd_maps_ref(maps);
	} else if (clone_maps) {
		maps = pd_maps_clone(parent->maps);
	} else {
		maps = pd_maps_new(t->cache);
	}
	if (!maps) {
		free(comm);
		return -1;
	}
	/* a reused tid starts over */
	if (tid != ptid)
		drop(t, tid);
	th = lookup(t, tid);
	if (!th)
		th = create(t, pid, tid, maps);
	pd_maps_unref(maps);
	if (!th) {
		free(comm);
		return -1;
	}
	free(th->comm);
	th->comm = comm;
	return 0;
}

void pd_threads_exit(pd_threads *t, uint32_t pid, uint32_t tid)
{
	pd_thread *th = lookup(t, tid);

	(void)pid;
	if (!th || th->exited)
		return;
	th->exited = 1;
	if (t->grave_n == THREADS_GRAVE) {
		/* the oldest exited thread goes, unless its tid was taken
		 * again since (a new thread is not marked exited) */
		pd_thread *old = lookup(t, t->grave[t->grave_head]);

		if (old && old->exited)
			drop(t, old->tid);
		t->grave_head = (t->grave_head + 1) % THREADS_GRAVE;
		t->grave_n--;
	}
	t->grave[(t->grave_head + t->grave_n++) % THREADS_GRAVE] = tid;
}

size_t pd_threads_count(const pd_threads *t)
{
	return t->n;
}
