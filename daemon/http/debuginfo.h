/*
 * debuginfo.h - the HTTP handlers of symbols by build-id:
 *
 *   HEAD, GET, PUT, DELETE /api/v1/debuginfo/{build_id}  (DELETE: admin)
 *   POST /api/v1/debuginfo/missing       {"build_ids": [...]} -> {"missing": [...]}
 *   POST /api/v1/debuginfo/archive       a `perf archive` bundle (.tar.bz2)
 *   POST /api/v1/profiles/{id}/resymbolize
 *
 * server.c routes these requests here (after its token check) and hands over
 * the body as it arrives; bodies go to the spool, never whole into memory
 * (the build-id list is capped). New symbols queue the profiles that had
 * unresolved frames in that build-id again.
 */
#ifndef PERFHUB_DAEMON_API_DEBUGINFO_H
#define PERFHUB_DAEMON_API_DEBUGINFO_H

#include <stddef.h>

#include <microhttpd.h>

#include "jobs/jobs.h"
#include "options.h"
#include "store/store.h"

typedef struct apid apid;

apid *apid_new(const cfg *c, st_store *st, jobs *j);
void apid_free(apid *x);

/* 1 when the request is one of the above. */
int apid_handles(const char *url, const char *method);

/* MHD's access handler for those requests: called first with *state NULL,
 * then with each piece of the body, then with *data_size 0. Returns MHD_YES
 * or MHD_NO (as an int, whatever this MHD's return type). */
int apid_request(apid *x, struct MHD_Connection *conn, const char *url, const char *method,
		 const char *data, size_t *data_size, void **state);
/* 1 when the first call answered already (a refusal): the last call has
 * nothing to do. */
int apid_answered(void *state);
/* The request ended (answered or cut): frees *state. */
void apid_completed(void **state);

#endif
