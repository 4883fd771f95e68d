# tests/features.mk: unit tests of feature-section decoding
check_PROGRAMS += tests/test-features
tests_test_features_SOURCES = tests/test-features.c
tests_test_features_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_test_features_LDADD = $(PARSER_LIBS)
TESTS += tests/test-features
