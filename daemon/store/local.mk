# daemon/store/: profiles in, answers out (see README.md). store.h is the
# facade; persist.h the seam between the profile engine (engine/, no SQL)
# and the persistence backends (sqlite/).
daemon_libperfhubd_a_SOURCES += \
	daemon/store/store.h daemon/store/store-int.h daemon/store/persist.h \
	daemon/store/store.c daemon/store/store-query.c daemon/store/store-writer.c \
	daemon/store/store-many.c \
	daemon/store/engine/model.h daemon/store/engine/model-int.h daemon/store/engine/model.c \
	daemon/store/engine/cache.h daemon/store/engine/cache.c \
	daemon/store/engine/hashmap.h daemon/store/engine/hashmap.c \
	daemon/store/engine/block.h daemon/store/engine/block.c \
	daemon/store/engine/builder.h daemon/store/engine/builder.c \
	daemon/store/engine/query.h daemon/store/engine/query-int.h \
	daemon/store/engine/select.c daemon/store/engine/fold.c daemon/store/engine/flame.c \
	daemon/store/engine/top.c daemon/store/engine/timeline.c daemon/store/engine/threads.c \
	daemon/store/engine/diff.c daemon/store/engine/aggregate.c \
	daemon/store/engine/selector.h daemon/store/engine/selector.c \
	daemon/store/engine/many.h daemon/store/engine/summary.c daemon/store/engine/fntab.c \
	daemon/store/engine/tlmerge.c daemon/store/engine/stats.h daemon/store/engine/stats.c \
	daemon/store/sqlite/db.h daemon/store/sqlite/db.c \
	daemon/store/sqlite/profiles.c daemon/store/sqlite/writer.c daemon/store/sqlite/read.c \
	daemon/store/sqlite/debuginfo.c daemon/store/sqlite/admin.c daemon/store/sqlite/many.c
EXTRA_DIST += daemon/store/README.md
# the ranked diff's tests (stats.c) use libm
DAEMON_LIBS += -lm
