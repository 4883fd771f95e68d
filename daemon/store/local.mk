# daemon/store/: profiles in, answers out (see README.md). store.h is the
# facade; persist.h the seam between the profile engine (the top-level
# engine/, a library of its own, no SQL) and the persistence backends
# (sqlite/, pg/).
daemon_libperfhubd_a_SOURCES += \
	daemon/store/store.h daemon/store/store-int.h daemon/store/persist.h \
	daemon/store/store.c daemon/store/store-query.c daemon/store/store-writer.c \
	daemon/store/store-many.c \
	daemon/store/store-views.c \
	daemon/store/sqlite/db.h daemon/store/sqlite/db.c \
	daemon/store/sqlite/profiles.c daemon/store/sqlite/writer.c daemon/store/sqlite/read.c \
	daemon/store/sqlite/debuginfo.c daemon/store/sqlite/admin.c daemon/store/sqlite/many.c \
	daemon/store/pg/pgconn.c daemon/store/pg/pgconn.h \
	daemon/store/pg/pgmigrate.c daemon/store/pg/pgmigrate.h \
	daemon/store/pg/pgschema.c daemon/store/pg/pgschema.h \
	daemon/store/pg/pgjobs.c daemon/store/pg/pgjobs.h \
	daemon/store/pg/pg.h daemon/store/pg/pgstore.c daemon/store/pg/pgkeeper.c \
	daemon/store/pg/pgprofiles.c daemon/store/pg/pgmany.c daemon/store/pg/pgwriter.c daemon/store/pg/pgread.c \
	daemon/store/pg/pgdebuginfo.c daemon/store/pg/pgadmin.c daemon/store/pg/pgcopy.c
EXTRA_DIST += daemon/store/README.md

