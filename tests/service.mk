# tests/service.mk: build rules for this area (included from Makefile.am)
