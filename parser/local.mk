# parser/: libperfhub-parse, the perf.data reader. No SQLite, no HTTP.
noinst_LIBRARIES += parser/libperfhub-parse.a
parser_libperfhub_parse_a_SOURCES = \
	parser/perfdata.h \
	parser/error.c
parser_libperfhub_parse_a_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) $(JANSSON_CFLAGS)
PARSER_LIBS = parser/libperfhub-parse.a $(ZSTD_LIBS) $(JANSSON_LIBS)
