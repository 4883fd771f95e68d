# tests/parser.mk: build rules for this area (included from Makefile.am)
