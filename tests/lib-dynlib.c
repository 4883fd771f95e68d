/*
 * lib-dynlib.c - libraries opened on first use: a real one (zlib, which
 * every build links anyway) bound from any thread, once; a missing one and
 * a missing function answered with an error that names them and what to
 * install, on every call; and perfhub itself starts without the libraries
 * it opens this way.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#include "dynlib.h"

#define ZLIB_FUNCS(X) X(version, zlibVersion) X(crc, crc32)
DYNLIB_TABLE(z, ZLIB_FUNCS)
static int binds;

static int bind_zlib(void *h, char *err, size_t errlen)
{
	__atomic_add_fetch(&binds, 1, __ATOMIC_RELAXED);
	return z_bind(h, err, errlen);
}

static int bind_missing_fn(void *h, char *err, size_t errlen)
{
	void (*fn)(void);

	return dynlib_sym(h, "perfhub_no_such_function", &fn, sizeof(fn), err, errlen);
}

static dynlib zlib_lib = DYNLIB_INIT("libz.so.1", "zlib1g", bind_zlib);
static dynlib gone_lib = DYNLIB_INIT("libperfhub-gone.so.7", "perfhub-gone7", bind_zlib);
static dynlib nofn_lib = DYNLIB_INIT("libz.so.1", "zlib1g", bind_missing_fn);

static void *ready_thread(void *arg)
{
	(void)arg;
	return (void *)(long)dynlib_ready(&zlib_lib);
}

/* The NEEDED entries of the program at path, through readelf. */
static int needs(const char *path, const char *lib)
{
	char cmd[4096], line[512];
	FILE *p;
	int found = 0;

	snprintf(cmd, sizeof(cmd), "readelf -d '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, "(NEEDED)") && strstr(line, lib))
			found = 1;
	return pclose(p) == 0 ? found : -1;
}

int main(void)
{
	pthread_t t[8];
	const char *top = getenv("top_builddir");
	char perfhub[4096];
	size_t i;

	/* eight threads ask at once: one opens and binds, all see it ready */
	for (i = 0; i < 8; i++)
		CHECK(pthread_create(&t[i], NULL, ready_thread, NULL) == 0, "thread %zu", i);
	for (i = 0; i < 8; i++) {
		void *rc = (void *)1;

		pthread_join(t[i], &rc);
		CHECK(rc == NULL, "thread %zu: not ready: %s", i, dynlib_error(&zlib_lib));
	}
	CHECK(binds == 1, "bound %d times", binds);
	CHECK(z.version && !strcmp(z.version(), zlibVersion()), "zlibVersion through the table");
	CHECK(z.crc && z.crc(0, (const Bytef *)"perfhub", 7) == crc32(0, (const Bytef *)"perfhub", 7),
	      "crc32 through the table");
	CHECK(!strcmp(dynlib_error(&zlib_lib), ""), "an error once ready: %s",
	      dynlib_error(&zlib_lib));

	/* a library that is not there: the soname, why, and the package */
	CHECK(dynlib_ready(&gone_lib) == -1, "a missing library loaded");
	CHECK(strstr(dynlib_error(&gone_lib), "cannot load libperfhub-gone.so.7 (") &&
	      strstr(dynlib_error(&gone_lib), "install perfhub-gone7"), "message: %s",
	      dynlib_error(&gone_lib));
	CHECK(dynlib_ready(&gone_lib) == -1 && binds == 1, "asked again: same answer");

	/* a library without a function the table wants */
	CHECK(dynlib_ready(&nofn_lib) == -1, "a table with a missing function bound");
	CHECK(strstr(dynlib_error(&nofn_lib), "no function perfhub_no_such_function"),
	      "message: %s", dynlib_error(&nofn_lib));

	/* perfhub opens libcurl, libarchive and capstone itself */
	snprintf(perfhub, sizeof(perfhub), "%s/cli/perfhub", top ? top : ".");
	CHECK(needs(perfhub, "libc.so") == 1, "readelf -d %s: no libc (is it built?)", perfhub);
	CHECK(needs(perfhub, "libcurl") == 0, "%s links libcurl", perfhub);
	CHECK(needs(perfhub, "libarchive") == 0, "%s links libarchive", perfhub);
	CHECK(needs(perfhub, "libcapstone") == 0, "%s links capstone", perfhub);
	return check_done("lib-dynlib");
}
