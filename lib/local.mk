# lib/: libperfhub-common, what perfhub and perfhubd both need: ELF
# build-id probing (elfid), perf.data directories packed into and
# unpacked from a tar with libarchive (dirpack), JSON text written into a
# growing buffer (jsonbuf), a function's code and source lines with its
# samples (annotate: capstone, libdw), UTF-8 checks (utf8) and libraries
# opened on first use (dynlib: libarchive, capstone and the CLI's
# libcurl, which are not linked). Neither program's insides are included.
noinst_LIBRARIES += lib/libperfhub-common.a
lib_libperfhub_common_a_SOURCES = \
	lib/elfid.c lib/elfid.h \
	lib/dynlib.c lib/dynlib.h \
	lib/dirpack.c lib/dirpack.h \
	lib/jsonbuf.c lib/jsonbuf.h \
	lib/annotate.c lib/annotate.h \
	lib/annotate-json.c lib/annotate-json.h \
	lib/utf8.c lib/utf8.h
lib_libperfhub_common_a_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS) $(LIBARCHIVE_CFLAGS) $(CAPSTONE_CFLAGS) \
	$(JANSSON_CFLAGS)
COMMON_CPPFLAGS = -I$(top_srcdir)/lib
# annotate-json.c looks binaries up with the parser library's dso.h: a
# program using it links $(PARSER_LIBS) after these
COMMON_LIBS = lib/libperfhub-common.a $(ELF_LIBS) $(JANSSON_LIBS) $(DL_LIBS) -lpthread
EXTRA_DIST += lib/README.md
