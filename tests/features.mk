# tests/features.mk: unit tests of feature-section decoding
check_PROGRAMS += tests/test-features
tests_test_features_SOURCES = tests/test-features.c tests/xorshift.h
tests_test_features_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_test_features_LDADD = $(PARSER_LIBS)
TESTS += tests/test-features

# feat-header: a file's header facts printed as perf --header-only does
check_PROGRAMS += tests/feat-header
tests_feat_header_SOURCES = tests/feat-header.c
tests_feat_header_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_feat_header_LDADD = $(PARSER_LIBS)

# header facts of real recordings and corpus files against perf --header-only
TESTS += tests/test-header-facts.py
EXTRA_DIST += tests/test-header-facts.py
