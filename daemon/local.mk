# daemon/: perfhubd, the profile server. Its modules are built into a
# library too, so unit tests link exactly what the daemon runs.
noinst_LIBRARIES += daemon/libperfhubd.a
daemon_libperfhubd_a_SOURCES = \
	daemon/log.c daemon/log.h \
	daemon/options.c daemon/options.h \
	daemon/sha256.c daemon/sha256.h \
	daemon/tar.c daemon/tar.h \
	daemon/spool.c daemon/spool.h \
	daemon/store.h daemon/store-sqlite.c \
	daemon/ingest.c daemon/ingest.h \
	daemon/jobs.c daemon/jobs.h \
	daemon/watch.c daemon/watch.h \
	daemon/tokens.c daemon/tokens.h \
	daemon/qcache.c daemon/qcache.h \
	daemon/api.c daemon/api.h \
	daemon/store-admin.c daemon/store-admin.h \
	daemon/retention.c daemon/retention.h \
	daemon/elfid.c daemon/elfid.h \
	daemon/debuginfo.c daemon/debuginfo.h \
	daemon/api-debuginfo.c daemon/api-debuginfo.h
DAEMON_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS) $(JANSSON_CFLAGS) $(ZSTD_CFLAGS) $(ZLIB_CFLAGS) \
	$(SQLITE_CFLAGS) $(SYSTEMD_CFLAGS) $(ELF_CFLAGS) $(DEBUGINFOD_CFLAGS) $(LIBARCHIVE_CFLAGS) \
	$(NETTLE_CFLAGS)
daemon_libperfhubd_a_CFLAGS = $(DAEMON_CFLAGS)
DAEMON_LIBS = daemon/libperfhubd.a $(PARSER_LIBS) $(MHD_LIBS) $(SQLITE_LIBS) $(JANSSON_LIBS) \
	$(ZSTD_LIBS) $(ZLIB_LIBS) $(SYSTEMD_LIBS) $(DEBUGINFOD_LIBS) $(LIBARCHIVE_LIBS) \
	$(NETTLE_LIBS) -lpthread

sbin_PROGRAMS += daemon/perfhubd
daemon_perfhubd_SOURCES = daemon/main.c
daemon_perfhubd_CFLAGS = $(DAEMON_CFLAGS)
daemon_perfhubd_LDADD = $(DAEMON_LIBS)
