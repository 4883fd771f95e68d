/*
 * ordered.h - optional time-ordered delivery (pd_options.ordered), as perf's
 * ordered events: records with a timestamp are queued; at each
 * FINISHED_ROUND those not later than the newest timestamp of the round
 * before are delivered in time order; the rest at the end. Records without
 * a timestamp pass straight through. Queued bytes are capped: past the cap
 * the oldest half is delivered early, with a warning.
 *
 * A directory recording's files (data, data.N) are read one after another,
 * so the order holds within each file, not across them.
 */
#ifndef PERFHUB_ORDERED_H
#define PERFHUB_ORDERED_H

#include <stdint.h>

#include "perfdata.h"

typedef struct pd_ordered pd_ordered;

pd_ordered *ordered_new(uint64_t max_bytes);
void ordered_free(pd_ordered *o);
int ordered_next(pd_file *f, pd_record *r, pd_error *err);

#endif
