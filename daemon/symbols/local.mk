# daemon/symbols/: debuginfo files in, symbol sources for the workers out (see README.md).
daemon_libperfhubd_a_SOURCES += \
	daemon/symbols/debuginfo.c daemon/symbols/debuginfo.h \
	daemon/symbols/code.c daemon/symbols/code.h
EXTRA_DIST += daemon/symbols/README.md
