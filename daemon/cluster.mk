# daemon/cluster.mk: what several perfhubd nodes share: the S3 client of
# the object-store spool (daemon/intake/) and the PostgreSQL connection,
# migrations and job queue (daemon/store/pg/). Built as a library of its own
# until the daemon's modules are folded into their folders.
noinst_LIBRARIES += daemon/libcluster.a
daemon_libcluster_a_SOURCES = \
	daemon/intake/s3.c daemon/intake/s3.h \
	daemon/intake/s3xml.c daemon/intake/s3xml.h \
	daemon/store/pg/pgconn.c daemon/store/pg/pgconn.h \
	daemon/store/pg/pgmigrate.c daemon/store/pg/pgmigrate.h \
	daemon/store/pg/pgschema.c daemon/store/pg/pgschema.h \
	daemon/store/pg/pgjobs.c daemon/store/pg/pgjobs.h
CLUSTER_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(EXPAT_CFLAGS) $(PQ_CFLAGS)
daemon_libcluster_a_CFLAGS = $(CLUSTER_CFLAGS)
CLUSTER_LIBS = daemon/libcluster.a $(CURL_LIBS) $(EXPAT_LIBS) $(PQ_LIBS) -lpthread
