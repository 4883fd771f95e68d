# tests/lib.mk: unit tests of libperfhub-common (lib/).
check_PROGRAMS += tests/lib-dirpack
TESTS += tests/lib-dirpack
tests_lib_dirpack_SOURCES = tests/lib-dirpack.c tests/check.h
tests_lib_dirpack_CPPFLAGS = $(AM_CPPFLAGS) $(COMMON_CPPFLAGS)
tests_lib_dirpack_CFLAGS = $(AM_CFLAGS) $(LIBARCHIVE_CFLAGS)
tests_lib_dirpack_LDADD = $(COMMON_LIBS) $(LIBARCHIVE_LIBS)
check_PROGRAMS += tests/lib-dynlib
TESTS += tests/lib-dynlib
tests_lib_dynlib_SOURCES = tests/lib-dynlib.c tests/check.h
tests_lib_dynlib_CPPFLAGS = $(AM_CPPFLAGS) $(COMMON_CPPFLAGS)
tests_lib_dynlib_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
tests_lib_dynlib_LDADD = $(COMMON_LIBS) $(ZLIB_LIBS)
