/*
 * watch.h - --watch DIR: recordings that appear in a directory are spooled
 * and queued once each. Files count when complete (IN_CLOSE_WRITE or
 * IN_MOVED_TO); perf.data directories when their size has been stable for
 * a while and perf has written the data size into its header. What is already there at start is taken too; the sha256 makes
 * a second sighting of the same bytes a no-op.
 */
#ifndef PERFHUB_DAEMON_WATCH_H
#define PERFHUB_DAEMON_WATCH_H

#include "options.h"
#include "jobs/jobs.h"
#include "store/store.h"

typedef struct watch watch;

/* NULL if there is nothing to watch or on error (logged). */
watch *watch_start(const cfg *c, st_store *st, jobs *j);
void watch_stop(watch *w);

#endif
