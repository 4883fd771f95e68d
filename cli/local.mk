# cli/local.mk: build rules for this area (included from Makefile.am)
