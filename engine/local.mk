# engine/: libperfhub-engine, the profile engine (prefix pe_, see README.md):
# the in-memory model of one profile, its builder, the sample-block codec,
# the model cache and every answer computed from a model. No SQL, no HTTP,
# no program's logger (log.h is a hook). perfhubd's store and perfhub's
# offline commands both link it; feed.c, the one file that knows the parser
# library, reads a recording into the builder for either.
noinst_LIBRARIES += engine/libperfhub-engine.a
engine_libperfhub_engine_a_SOURCES = \
	engine/log.h engine/log.c \
	engine/model.h engine/model-int.h engine/model.c \
	engine/cache.h engine/cache.c \
	engine/hashmap.h engine/hashmap.c \
	engine/block.h engine/block.c \
	engine/builder.h engine/builder.c \
	engine/query.h engine/query-int.h \
	engine/tree-int.h engine/tree.c \
	engine/select.c engine/fold.c engine/flame.c \
	engine/sandwich.c engine/annotate.c \
	engine/offcpu.h engine/offcpu.c \
	engine/top.c engine/timeline.c engine/threads.c \
	engine/diff.c engine/aggregate.c \
	engine/export.h engine/pprof.c engine/speedscope.c \
	engine/offline.h engine/offline.c \
	engine/feed.h engine/feed.c
ENGINE_CPPFLAGS = -I$(top_srcdir)
engine_libperfhub_engine_a_CPPFLAGS = $(AM_CPPFLAGS) $(ENGINE_CPPFLAGS) $(COMMON_CPPFLAGS)
engine_libperfhub_engine_a_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) $(JANSSON_CFLAGS) $(ELF_CFLAGS) \
	$(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
# the engine alone; a program using feed.c adds $(PARSER_LIBS) after it. The
# exports need protobuf-c and zlib (pprof) and lib/'s jsonbuf (speedscope):
# only jsonbuf's object comes out of libperfhub-common.
ENGINE_LIBS = engine/libperfhub-engine.a lib/libperfhub-common.a $(PROTOBUF_C_LIBS) \
	$(ZLIB_LIBS) $(ZSTD_LIBS) -lpthread

# pprof's profile.proto, as written out in engine/pprof.proto, compiled by
# protoc-c into the build tree (engine/pprof.pb-c.{c,h})
PPROF_PB = engine/pprof.pb-c.c engine/pprof.pb-c.h
nodist_engine_libperfhub_engine_a_SOURCES = $(PPROF_PB)
BUILT_SOURCES += $(PPROF_PB)
CLEANFILES += $(PPROF_PB)
EXTRA_DIST += engine/pprof.proto
$(PPROF_PB): $(srcdir)/engine/pprof.proto
	$(AM_V_GEN)$(MKDIR_P) engine && \
	$(PROTOC_C) --c_out=engine --proto_path=$(srcdir)/engine $(srcdir)/engine/pprof.proto
EXTRA_DIST += engine/README.md
