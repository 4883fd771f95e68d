# daemon/: perfhubd, the profile server, in folders by the data flow:
#   intake/  bytes in (HTTP upload bodies, the watched directory) -> spool -> a queued job
#   jobs/    the queue and workers: spool file -> parser -> store writer; retention
#   store/   the profile store: store.h (what the daemon calls), the profile
#            engine and the persistence backends behind it
#   symbols/ debuginfo by build-id: stored, indexed, fetched from debuginfod
#   http/    requests in, answers out: routing, handlers, tokens, answer cache
# Only process wiring stays at the top (main, options, log). Every module is
# built into one library, so unit tests link exactly what the daemon runs;
# each folder's fragment below adds its sources to it.
noinst_LIBRARIES += daemon/libperfhubd.a
daemon_libperfhubd_a_SOURCES = \
	daemon/log.c daemon/log.h \
	daemon/options.c daemon/options.h
EXTRA_DIST += daemon/README.md
# The build tree's program serves the source tree's page without --web-root
# (options.c), also in an out-of-tree build.
DAEMON_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon $(COMMON_CPPFLAGS) $(ENGINE_CPPFLAGS) \
	-DPERFHUB_BUILD_PROGRAM='"$(abs_top_builddir)/daemon/perfhubd"' \
	-DPERFHUB_SOURCE_WEB='"$(abs_top_srcdir)/web"'
DAEMON_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS) $(JANSSON_CFLAGS) $(ZSTD_CFLAGS) $(ZLIB_CFLAGS) \
	$(SQLITE_CFLAGS) $(SYSTEMD_CFLAGS) $(ELF_CFLAGS) $(DEBUGINFOD_CFLAGS) $(LIBARCHIVE_CFLAGS) \
	$(CRYPTO_CFLAGS) $(CURL_CFLAGS) $(EXPAT_CFLAGS) $(PQ_CFLAGS)
daemon_libperfhubd_a_CPPFLAGS = $(DAEMON_CPPFLAGS)
daemon_libperfhubd_a_CFLAGS = $(DAEMON_CFLAGS)
DAEMON_LIBS = daemon/libperfhubd.a $(COMMON_LIBS) $(ENGINE_LIBS) $(PARSER_LIBS) $(MHD_LIBS) $(SQLITE_LIBS) \
	$(JANSSON_LIBS) $(ZSTD_LIBS) $(ZLIB_LIBS) $(SYSTEMD_LIBS) $(DEBUGINFOD_LIBS) \
	$(LIBARCHIVE_LIBS) $(CRYPTO_LIBS) $(CURL_LIBS) $(EXPAT_LIBS) $(PQ_LIBS) -lpthread

sbin_PROGRAMS += daemon/perfhubd
daemon_perfhubd_SOURCES = daemon/main.c
daemon_perfhubd_CPPFLAGS = $(DAEMON_CPPFLAGS)
daemon_perfhubd_CFLAGS = $(DAEMON_CFLAGS)
daemon_perfhubd_LDADD = $(DAEMON_LIBS)
