/*
 * qopts.h - what the commands that ask questions (top, flamegraph, diff)
 * share: what a question is about - a profile id, a selector "{...}" (both
 * asked of the server) or a local perf.data file (read and answered here
 * by the profile engine, no server) - and the options that narrow it: the
 * filters of a flame graph and a selector's bounds.
 *
 *   --event NAME --comm COMM --pid PID --tid TID --weight samples|period
 *   --kernel                      filters (as the API's)
 *   --last N --since T --until T  which profiles a selector takes (the
 *                                 newest N; T: RFC 3339, 7d, 36h, unix s)
 *   --normalize                   each profile weighs one (merged views)
 */
#ifndef PERFHUB_CLI_QOPTS_H
#define PERFHUB_CLI_QOPTS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/offline.h"
#include "engine/query.h"

#define QO_MAX_QUERY 20000	/* bytes of a request's parameters */

enum qo_kind { QO_ID, QO_SELECTOR, QO_FILE };

typedef struct qo_spec {
	int kind;
	int64_t id;		/* QO_ID */
	const char *text;	/* the argument as given */
} qo_spec;

/* What arg names: digits an id, "{" first a selector, else a file that
 * must exist. -1 after printing why not (who: the command). */
int qo_spec_parse(const char *arg, qo_spec *s, const char *who);

typedef struct qo_opts {
	const char *event, *comm, *weight, *since, *until;
	long long pid, tid, last;	/* -1: not given */
	int kernel, normalize;
} qo_opts;

void qo_init(qo_opts *o);
/* 1 when argv[*i] is one of the options above (consumed), 0 when not, -1
 * on a bad value (printed). */
int qo_option(int argc, char **argv, int *i, qo_opts *o, const char *who);

/* The filters (and normalize) as API parameters appended to q. -1 when
 * they do not fit. */
int qo_filter_query(const qo_opts *o, char *q, size_t len);
/* What a spec picks as API parameters with a prefix ("" or "base_"): the
 * id (PREFIX without "_", or q={id="N"} when the prefix is "" and
 * as_selector), or PREFIXq and the bounds. -1 when they do not fit. */
int qo_pick_query(const qo_opts *o, const qo_spec *s, const char *prefix, int as_selector,
		  char *q, size_t len);

/* The weight asked: 1 for samples. `dflt` when none was given. */
int qo_by_samples(const qo_opts *o, int dflt);
/* The engine's filter for a local file. */
void qo_filter(const qo_opts *o, pe_filter *f);
/* A perf.data file read into a profile in memory (warnings on stderr).
 * NULL after printing why. */
pe_offline *qo_load(const char *path, const char *who);
/* The seconds a file's samples of the folded event span (0 when unknown). */
double qo_seconds(pe_offline *p, const pe_filter *f);

#endif
