# daemon/http/: requests in, answers out (see README.md).
daemon_libperfhubd_a_SOURCES += \
	daemon/http/api.h daemon/http/http.h \
	daemon/http/server.c \
	daemon/http/access.c daemon/http/access.h \
	daemon/http/hpool.c daemon/http/hpool.h \
	daemon/http/deadline.c daemon/http/deadline.h \
	daemon/http/respond.c daemon/http/prepare.c \
	daemon/http/params.c daemon/http/params.h \
	daemon/http/formats.c daemon/http/routes.c daemon/http/openapi.c \
	daemon/http/profiles.c \
	daemon/http/queries.c daemon/http/views.c \
	daemon/http/compare.c \
	daemon/http/many.c \
	daemon/http/health.c \
	daemon/http/static.c \
	daemon/http/debuginfo.c daemon/http/debuginfo.h \
	daemon/http/tokens.c daemon/http/tokens.h \
	daemon/http/qcache.c daemon/http/qcache.h
EXTRA_DIST += daemon/http/README.md
