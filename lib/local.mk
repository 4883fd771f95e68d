# lib/: libperfhub-common, what perfhub and perfhubd both need: ELF
# build-id probing (elfid), perf.data directories packed into and
# unpacked from a tar with libarchive (dirpack), JSON text written into a
# growing buffer (jsonbuf) and UTF-8 checks (utf8). Neither program's
# insides are included.
noinst_LIBRARIES += lib/libperfhub-common.a
lib_libperfhub_common_a_SOURCES = \
	lib/elfid.c lib/elfid.h \
	lib/dirpack.c lib/dirpack.h \
	lib/jsonbuf.c lib/jsonbuf.h \
	lib/utf8.c lib/utf8.h
lib_libperfhub_common_a_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS) $(LIBARCHIVE_CFLAGS)
COMMON_CPPFLAGS = -I$(top_srcdir)/lib
COMMON_LIBS = lib/libperfhub-common.a $(ELF_LIBS) $(LIBARCHIVE_LIBS)
EXTRA_DIST += lib/README.md
