# daemon/store/: profiles in, answers out (see README.md).
daemon_libperfhubd_a_SOURCES += \
	daemon/store/store.h daemon/store/store-sqlite.c \
	daemon/store/store-admin.c daemon/store/store-admin.h
EXTRA_DIST += daemon/store/README.md
