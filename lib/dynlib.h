/*
 * dynlib.h - a shared library opened the first time it is needed.
 *
 * libcurl, libarchive and capstone bring 37 shared objects with them
 * (TLS, LDAP, Kerberos, XML, compressors). Linked, the dynamic loader
 * mapped and relocated all of them before every run of perfhub:
 * `perf stat -r 40 perfhub --version` took 11.6 ms with them, 1.5-1.9 ms
 * without, and `perfhub inspect` of a 67 MB recording 26-36 ms against
 * 17-18 ms. The commands that
 * fold, read and query recordings use none of them, so the modules that
 * do (the API client, dirpack, annotate) open their library here on first
 * use, by the soname configure read from the library it found.
 */
#ifndef PERFHUB_DYNLIB_H
#define PERFHUB_DYNLIB_H

#include <stddef.h>

typedef struct dynlib dynlib;

/* Fills the module's table from the open library (dynlib_sym for each
 * function): 0, or -1 with err set. */
typedef int (*dynlib_bind_fn)(void *handle, char *err, size_t errlen);

struct dynlib {
	const char *soname;	/* "libcurl.so.4" */
	const char *package;	/* what to install when it is missing */
	dynlib_bind_fn bind;
	int state;		/* 0 not tried, 1 ready, -1 failed (atomic) */
	char err[320];
};

#define DYNLIB_INIT(soname, package, bind) { (soname), (package), (bind), 0, "" }

/* A module's table of the library's functions and its bind function
 * (name_bind), from a list of X(member, function) entries:
 *
 *	#define ZLIB_FUNCS(X) X(version, zlibVersion) X(crc, crc32)
 *	DYNLIB_TABLE(zl, ZLIB_FUNCS)
 *	static dynlib zlib = DYNLIB_INIT("libz.so.1", "zlib1g", zl_bind);
 *	... if (dynlib_ready(&zlib) == 0) zl.crc(...);
 *
 * The members are typed from the library's own declarations. */
#define DYNLIB_MEMBER_(m, f) __typeof__(f) *m;
#define DYNLIB_BIND_(m, f) \
	if (dynlib_sym(dynlib_handle_, #f, &dynlib_table_->m, sizeof(dynlib_table_->m), err, \
		       errlen) < 0) \
		return -1;
#define DYNLIB_TABLE(table, FUNCS) \
	static struct { FUNCS(DYNLIB_MEMBER_) } table; \
	static int table##_bind(void *dynlib_handle_, char *err, size_t errlen) \
	{ \
		__typeof__(table) *dynlib_table_ = &table; \
		FUNCS(DYNLIB_BIND_) \
		return 0; \
	}

/* 0 once the library is open and bound (the first caller opens it, any
 * thread); -1 when it could not be, then and on every later call, with
 * dynlib_error saying why. */
int dynlib_ready(dynlib *l);
const char *dynlib_error(const dynlib *l);

/* The address of `name` in the library into *slot, a function pointer of
 * the module's table (POSIX: dlsym's answer converts to one). 0, or -1
 * with err set. */
int dynlib_sym(void *handle, const char *name, void *slot, size_t slot_size, char *err,
	       size_t errlen);

#endif
