# daemon/intake/: bytes in, a queued job out (see README.md).
daemon_libperfhubd_a_SOURCES += \
	daemon/intake/sha256.c daemon/intake/sha256.h \
	daemon/intake/s3.c daemon/intake/s3.h \
	daemon/intake/s3xml.c daemon/intake/s3xml.h \
	daemon/intake/spool.c daemon/intake/spool.h daemon/intake/spool-int.h \
	daemon/intake/spool-dir.c daemon/intake/spool-s3.c \
	daemon/intake/upload.c daemon/intake/upload.h \
	daemon/intake/labels.c daemon/intake/labels.h \
	daemon/intake/watch.c daemon/intake/watch.h
EXTRA_DIST += daemon/intake/README.md
