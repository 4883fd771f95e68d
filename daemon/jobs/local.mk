# daemon/jobs/: a queued job in, a stored profile out (see README.md).
daemon_libperfhubd_a_SOURCES += \
	daemon/jobs/jobs.c daemon/jobs/jobs.h \
	daemon/jobs/ingest.c daemon/jobs/ingest.h \
	daemon/jobs/retention.c daemon/jobs/retention.h
EXTRA_DIST += daemon/jobs/README.md
