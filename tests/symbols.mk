# tests/symbols.mk: symbolized stacks and perfhub collapse.

# unit tests of folding, maps, ELF symbols and demangling
check_PROGRAMS += tests/symbols/test-fold
tests_symbols_test_fold_SOURCES = tests/symbols/test-fold.c
tests_symbols_test_fold_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(ELF_CFLAGS) -g -O0 -fno-omit-frame-pointer
tests_symbols_test_fold_LDADD = $(PARSER_LIBS)
TESTS += tests/symbols/test-fold

# the red-black tree that reproduces perf's lookup among overlapping symbols
check_PROGRAMS += tests/symbols/test-firstq
tests_symbols_test_firstq_SOURCES = tests/symbols/test-firstq.c
tests_symbols_test_firstq_LDADD = $(PARSER_LIBS)
TESTS += tests/symbols/test-firstq

check_PROGRAMS += tests/symbols/test-symtree
tests_symbols_test_symtree_SOURCES = tests/symbols/test-symtree.c
tests_symbols_test_symtree_LDADD = $(PARSER_LIBS)
TESTS += tests/symbols/test-symtree

# a symbol table's lookups (through its block index) against a scan
check_PROGRAMS += tests/symbols/test-symtab
tests_symbols_test_symtab_SOURCES = tests/symbols/test-symtab.c tests/xorshift.h
tests_symbols_test_symtab_LDADD = $(PARSER_LIBS)
TESTS += tests/symbols/test-symtab

# the fold caches against symbolizing every sample, across comm, map and
# fork changes (a synthesized recording over binaries of the build)
check_PROGRAMS += tests/symbols/test-foldcache
tests_symbols_test_foldcache_SOURCES = tests/symbols/test-foldcache.c tests/symbols/fold-lines.h \
	tests/pdwrite.c tests/pdwrite.h
tests_symbols_test_foldcache_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) $(JANSSON_CFLAGS) -I$(srcdir)/tests -I$(srcdir)/lib
tests_symbols_test_foldcache_LDADD = $(PARSER_LIBS) lib/libperfhub-common.a
tests_symbols_test_foldcache_DEPENDENCIES = tests/progs/calls tests/progs/cxx parser/libperfhub-parse.a
TESTS += tests/symbols/test-foldcache
check_PROGRAMS += tests/symbols/test-kernelwait
tests_symbols_test_kernelwait_SOURCES = tests/symbols/test-kernelwait.c tests/symbols/fold-lines.h \
	tests/pdwrite.c tests/pdwrite.h tests/check.h
tests_symbols_test_kernelwait_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) $(JANSSON_CFLAGS) -I$(srcdir)/tests
tests_symbols_test_kernelwait_LDADD = $(PARSER_LIBS) lib/libperfhub-common.a
TESTS += tests/symbols/test-kernelwait
# perf's saved kallsyms, taken for /proc/kallsyms only while it still is that
check_PROGRAMS += tests/symbols/test-ksaved
tests_symbols_test_ksaved_SOURCES = tests/symbols/test-ksaved.c tests/check.h
tests_symbols_test_ksaved_CFLAGS = $(AM_CFLAGS) -I$(srcdir)/tests
tests_symbols_test_ksaved_LDADD = $(PARSER_LIBS)
TESTS += tests/symbols/test-ksaved

# time-ordered delivery through the queue's blocks, rounds held back and merged, the cap
check_PROGRAMS += tests/symbols/test-ordered
tests_symbols_test_ordered_SOURCES = tests/symbols/test-ordered.c tests/pdwrite.c tests/pdwrite.h
tests_symbols_test_ordered_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) -I$(srcdir)/tests
tests_symbols_test_ordered_LDADD = $(PARSER_LIBS)
TESTS += tests/symbols/test-ordered

# real recordings of the programs below against perf script | stackcollapse
TESTS += tests/symbols/test-collapse.sh
EXTRA_DIST += tests/symbols/test-collapse.sh tests/symbols/stackcollapse.py
# Rust demangling (legacy and v0; the program is built by the test with
# rustc, skipped without it) and --symfs, sharing collapse-lib.sh
TESTS += tests/symbols/test-rust.sh tests/symbols/test-symfs.sh
EXTRA_DIST += tests/symbols/test-rust.sh tests/symbols/test-symfs.sh \
	tests/symbols/collapse-lib.sh tests/progs/rustcalls.rs
# --call-graph dwarf samples of programs starting (in ld.so): the loader's
# frames wherever perf has them
TESTS += tests/symbols/test-startup.sh
EXTRA_DIST += tests/symbols/test-startup.sh
# [vdso] frames named from the image in perf's build-id cache
TESTS += tests/symbols/test-vdso.sh
EXTRA_DIST += tests/symbols/test-vdso.sh
# the recordings a build farm makes: a system-wide -a -g of a parallel
# build, and --call-graph dwarf through a library of inlined helpers built
# with -O2 -g (both made by the test)
TESTS += tests/symbols/test-farm.sh
EXTRA_DIST += tests/symbols/test-farm.sh tests/progs/inlinelib.c tests/progs/inlineasm.S \
	tests/progs/inlinemain.c
# PLT slots named as perf 6.1 names them: every address of the .init/.plt
# code of pltloop (built by the test in three PLT layouts) and vdsoloop,
# synthesized by addr-samples, and a real recording through the PLT
TESTS += tests/symbols/test-plt.sh
EXTRA_DIST += tests/symbols/test-plt.sh tests/progs/pltloop.c tests/progs/pltlib.c
# a Go program recorded with --call-graph dwarf (no .eh_frame_hdr; DWARF
# names that are not the symbols')
TESTS += tests/symbols/test-go.sh
EXTRA_DIST += tests/symbols/test-go.sh tests/progs/gohash.go
# addresses in .bss (past a segment's file bytes) named as perf names them:
# every address of bssobj's and of a shared library's .bss, synthesized
TESTS += tests/symbols/test-bss.sh
EXTRA_DIST += tests/symbols/test-bss.sh tests/progs/bssobj.c
check_PROGRAMS += tests/symbols/addr-samples
tests_symbols_addr_samples_SOURCES = tests/symbols/addr-samples.c tests/pdwrite.c tests/pdwrite.h
tests_symbols_addr_samples_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) $(ELF_CFLAGS) -I$(srcdir)/tests
tests_symbols_addr_samples_LDADD = $(ZSTD_LIBS) $(ELF_LIBS)

# programs recorded by the real-recording tests: frame pointers, no inlining
check_PROGRAMS += tests/progs/calls tests/progs/cxx tests/progs/forker tests/progs/calls_nofp
check_PROGRAMS += tests/progs/vdsoloop
tests_progs_vdsoloop_SOURCES = tests/progs/vdsoloop.c
tests_progs_vdsoloop_CFLAGS = -g -O1 -fno-omit-frame-pointer
tests_progs_vdsoloop_LDFLAGS =
PROGS_CFLAGS = -g -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls
tests_progs_calls_SOURCES = tests/progs/calls.c
tests_progs_calls_CFLAGS = $(PROGS_CFLAGS)
tests_progs_calls_LDADD = -Ltests/progs -lsymlib
tests_progs_calls_LDFLAGS = -Wl,-rpath,$(abs_top_builddir)/tests/progs
tests_progs_calls_DEPENDENCIES = tests/progs/libsymlib.so
# the same program without frame pointers, for --call-graph dwarf
tests_progs_calls_nofp_SOURCES = tests/progs/calls.c
tests_progs_calls_nofp_CFLAGS = -g -O1 -fomit-frame-pointer -fno-inline -fno-optimize-sibling-calls
tests_progs_calls_nofp_LDADD = -Ltests/progs -lsymlib
tests_progs_calls_nofp_LDFLAGS = -Wl,-rpath,$(abs_top_builddir)/tests/progs
tests_progs_calls_nofp_DEPENDENCIES = tests/progs/libsymlib.so
tests_progs_cxx_SOURCES = tests/progs/cxx.cc
tests_progs_cxx_CXXFLAGS = $(PROGS_CFLAGS)
tests_progs_cxx_LDFLAGS =
# static C++ helpers inlined at -O2: plain DW_AT_names (--call-graph dwarf)
check_PROGRAMS += tests/progs/cxxinline
tests_progs_cxxinline_SOURCES = tests/progs/cxxinline.cc
tests_progs_cxxinline_CXXFLAGS = -g -O2
tests_progs_cxxinline_LDFLAGS =
tests_progs_forker_SOURCES = tests/progs/forker.c
tests_progs_forker_CFLAGS = $(PROGS_CFLAGS)
tests_progs_forker_LDFLAGS =

tests/progs/libsymlib.so: $(srcdir)/tests/progs/symlib.c
	@mkdir -p tests/progs
	$(CC) $(PROGS_CFLAGS) -shared -fPIC -Wl,-soname,libsymlib.so -o $@ $(srcdir)/tests/progs/symlib.c
CLEANFILES += tests/progs/libsymlib.so
EXTRA_DIST += tests/progs/symlib.c tests/progs/deepsys.c tests/progs/sigwork.c \
	tests/progs/nofde.c tests/progs/nofde.S

# ELF and DWARF loading (files the daemon takes by upload) over programs of
# the build and damaged copies of them; the libFuzzer target with
# --enable-fuzzing (make tests/fuzz-symbols)
check_PROGRAMS += tests/fuzz-symbols-replay
tests_fuzz_symbols_replay_SOURCES = tests/fuzz-symbols-replay.c tests/fuzz-symbols.c tests/xorshift.h
tests_fuzz_symbols_replay_LDADD = $(PARSER_LIBS)
TESTS += tests/fuzz-symbols.sh
EXTRA_DIST += tests/fuzz-symbols.sh
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz-symbols
tests_fuzz_symbols_SOURCES = tests/fuzz-symbols.c parser/dso.c parser/symtab.c \
	parser/symtree.c parser/inlines.c
tests_fuzz_symbols_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS) $(ELF_CFLAGS)
tests_fuzz_symbols_LDFLAGS = -fsanitize=fuzzer,address,undefined
tests_fuzz_symbols_LDADD = $(ELF_LIBS) $(IBERTY_LIBS) -lpthread
endif

# benchmark (make bench): perfhub collapse against perf script | stackcollapse
BENCHES += tests/bench-collapse
EXTRA_DIST += tests/bench-collapse
# benchmark (make bench): the same, and parse speed, on a system-wide build
# and a dwarf recording through a library of inlined helpers
BENCHES += tests/bench-farm
EXTRA_DIST += tests/bench-farm tests/bench_farm.py
dist_doc_DATA += docs/symbols.md
