/* dynlib.c - a shared library opened the first time it is needed; see dynlib.h. */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "dynlib.h"

/* one lock for every library: each is opened once, in microseconds */
static pthread_mutex_t dynlib_lock = PTHREAD_MUTEX_INITIALIZER;

int dynlib_sym(void *handle, const char *name, void *slot, size_t slot_size, char *err,
	       size_t errlen)
{
	void *p = dlsym(handle, name);

	if (!p || slot_size != sizeof(p)) {
		snprintf(err, errlen, "it has no function %s", name);
		return -1;
	}
	memcpy(slot, &p, sizeof(p));
	return 0;
}

int dynlib_ready(dynlib *l)
{
	int state = __atomic_load_n(&l->state, __ATOMIC_ACQUIRE);
	void *h;

	if (state)
		return state > 0 ? 0 : -1;
	pthread_mutex_lock(&dynlib_lock);
	state = l->state;
	if (!state) {
		char why[256] = "";

		/* RTLD_NOW: a missing function shows here, not mid-request */
		h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(why, sizeof(why), "%s", dlerror());
		else if (l->bind(h, why, sizeof(why)) < 0)
			dlclose(h);
		else
			state = 1;	/* the handle stays open for the process */
		if (state != 1) {
			snprintf(l->err, sizeof(l->err), "cannot load %s (%s); install %s", l->soname,
				 why, l->package);
			state = -1;
		}
		__atomic_store_n(&l->state, state, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&dynlib_lock);
	return state > 0 ? 0 : -1;
}

const char *dynlib_error(const dynlib *l)
{
	return __atomic_load_n(&l->state, __ATOMIC_ACQUIRE) < 0 ? l->err : "";
}
