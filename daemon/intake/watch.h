/*
 * watch.h - --watch DIR: recordings that appear in a directory are spooled
 * and queued once each, never half written. A file is taken once complete:
 * a file-mode perf.data when its header has the data size and every
 * section it names is there; any other file when moved in (write, then
 * rename) or closed after writing and unchanged for a couple of seconds;
 * one never seen closed (there at start, a writer that died) after a
 * minute unchanged. A perf.data directory when it has been unchanged for
 * a while and its data file is complete. A file perfhubd may not read
 * (perf record writes 0600) is tried again later, each wait twice the
 * last up to a minute, and at once after a chmod. What is already there
 * at start is taken too; the sha256 makes a second sighting of the same
 * bytes a no-op.
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
