# parser/: libperfhub-parse, the perf.data reader, and the symbolizer and
# folding beside it. No SQLite, no HTTP. Each group of sources has its own
# variable below.
noinst_LIBRARIES += parser/libperfhub-parse.a

# reading: cursor, file/pipe/directory input, records, samples, zstd, ordering
PARSER_CORE_SOURCES = \
	parser/perfdata.h \
	parser/error.c \
	parser/perr.h \
	parser/strhash.h \
	parser/table.h \
	parser/cursor.h \
	parser/input.h \
	parser/input.c \
	parser/readahead.h \
	parser/readahead.c \
	parser/decomp.h \
	parser/decomp.c \
	parser/ordered.h \
	parser/ordered.c \
	parser/pdfile.h \
	parser/names.c \
	parser/events.c \
	parser/sample.c \
	parser/record.c \
	parser/reader.c

# header features: decoding every feature section
PARSER_FEATURE_SOURCES = \
	parser/feat.h \
	parser/feat.c \
	parser/feat-decode.h \
	parser/feat-cursor.c \
	parser/feat-host.c \
	parser/feat-events.c

# the inspect report (JSON of a parsed recording), shared by CLI and daemon
PARSER_REPORT_SOURCES = parser/report.h parser/report.c

# symbolization and folding: threads, maps, ELF symbols, unwinding, stacks
PARSER_SYMBOL_SOURCES = \
	parser/symbols.h parser/symbols.c \
	parser/thread.h parser/thread.c \
	parser/maps.h parser/maps.c \
	parser/dso.h parser/dso.c \
	parser/symtab.h parser/symtab.c \
	parser/inlines.h parser/inlines.c \
	parser/firstq.h parser/firstq.c \
	parser/symtree.h parser/symtree.c \
	parser/fold.h parser/fold.c \
	parser/foldcache.h parser/foldcache.c \
	parser/preload.h parser/preload.c \
	parser/unwind.h parser/unwind.c \
	parser/cfirows.h parser/cfirows.c \
	parser/vdso.h parser/vdso.c \
	parser/ksaved.h parser/ksaved.c
PARSER_SYMBOL_LIBS =

parser_libperfhub_parse_a_SOURCES = $(PARSER_CORE_SOURCES) $(PARSER_FEATURE_SOURCES) \
	$(PARSER_REPORT_SOURCES) $(PARSER_SYMBOL_SOURCES)
parser_libperfhub_parse_a_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) $(JANSSON_CFLAGS) $(ELF_CFLAGS)
PARSER_LIBS = parser/libperfhub-parse.a $(PARSER_SYMBOL_LIBS) $(ZSTD_LIBS) $(JANSSON_LIBS) $(ELF_LIBS) $(IBERTY_LIBS) -lpthread
