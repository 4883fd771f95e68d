/*
 * debuginfo-up.h - the debuginfo a recording needs that the server lacks,
 * found on this machine and sent by build-id (PUT /api/v1/debuginfo/ID).
 *
 * In: the build-ids a recording names (its BUILD_ID feature, HEADER_BUILD_ID
 * and MMAP2 records), gathered from a file or from a stream as it passes.
 * Out: files sent, one summary line on stderr (one line per file with
 * verbose).
 */
#ifndef PERFHUB_CLI_DEBUGINFO_UP_H
#define PERFHUB_CLI_DEBUGINFO_UP_H

#include <stddef.h>

#include "api-client.h"
#include "perfdata.h"

#define DU_MAX_BUILD_IDS 4096	/* distinct build-ids asked about per recording */

typedef struct du_list du_list;

du_list *du_list_new(void);
void du_list_free(du_list *l);
size_t du_list_count(const du_list *l);

/* The build-ids of a recording file or directory (BUILD_ID feature; the
 * records only when it has none). -1 when it cannot be read. */
int du_collect_path(du_list *l, const char *path);

/* A record of a recording read elsewhere: MMAP2 with a build-id,
 * HEADER_BUILD_ID. Other records are ignored. */
void du_note_record(du_list *l, const pd_record *r);

/* The header once the records are read (pipe mode: its features come as
 * records): the os_release, for the kernel's symbols. */
void du_note_header(du_list *l, const pd_header *h);

/* Asks the server which build-ids it lacks and sends what is found here.
 * Never fatal: problems are printed. Returns the number of files the
 * server did not have before. */
size_t du_send(ac_client *c, const du_list *l, int verbose, const char *who);

/* A perf archive bundle (perf.data.tar.bz2) into the server's debuginfo.
 * 0 when the server took it. */
int du_send_archive(ac_client *c, const char *path, const char *who);

#endif
