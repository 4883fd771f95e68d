/*
 * many.h - the profile engine's answers about many profiles at once (the
 * merged flame graph and the diff tree are pe_diff in query.h):
 *
 *  - the per-profile summary a series reads instead of the samples: per
 *    event, the self and total samples and period of every function, DSO
 *    and comm, made once per parse (pe_summary_make);
 *  - the function table: /top rows of many profiles summed (merged /top)
 *    or set against each other in two sides with their per-profile shares
 *    (the ranked regressions and improvements of a diff);
 *  - the merged timeline: buckets by the time since each profile's first
 *    sample, summed;
 *  - the value of a series point.
 *
 * No SQL, no backend: models and rows in, answers out.
 */
#ifndef PERFHUB_ENGINE_MANY_H
#define PERFHUB_ENGINE_MANY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "engine/model.h"
#include "engine/query.h"

/* ---- the per-profile summary ------------------------------------------------------- */

enum pe_sum_kind {
	PE_SUM_FUNCTION,	/* key: frame name (as /top names it, without "_[k]") */
	PE_SUM_DSO,		/* key: the DSO's path as the recording names it */
	PE_SUM_DSO_BASE,	/* key: its last path component (all of it without '/') */
	PE_SUM_COMM,		/* key: the thread's comm */
	PE_SUM_NR_KINDS
};

/* One event's totals: ord 0 is the event folded by default (the first
 * sample's), then in the order their first samples came. */
typedef struct pe_sum_event {
	uint32_t ord;
	const char *name;
	uint64_t samples, period;
} pe_sum_event;

typedef struct pe_sum_row {
	uint32_t ord;		/* its event */
	uint8_t kind;		/* enum pe_sum_kind */
	const char *key;
	const char *dso;	/* a function's DSO (of its first frame); else NULL */
	/* self: the leaf frame is it (for a comm: every sample of it);
	 * total: it is anywhere on the stack, once per stack */
	uint64_t self_samples, self_period, total_samples, total_period;
} pe_sum_row;

/* Its texts are the model's: valid while the model is held. */
typedef struct pe_summary {
	pe_sum_event *events;
	size_t nr_events;
	pe_sum_row *rows;
	size_t nr_rows;
} pe_summary;

/* The summary of a model: what the samples `perfhub collapse` folds say
 * (dying tasks left out), every event; shares count samples. 0, or -1 out
 * of memory. */
int pe_summary_make(const pe_model *m, pe_summary *out);
void pe_summary_free(pe_summary *s);

/* ---- series -------------------------------------------------------------------------- */

enum pe_metric { PE_M_SELF_SHARE, PE_M_TOTAL_SHARE, PE_M_SAMPLES, PE_M_PERIOD,
		 PE_M_SELF_SAMPLES, PE_M_SELF_PERIOD, PE_M_NR };

/* self_share, total_share, samples, period, self_samples, self_period;
 * -1 for another name. */
int pe_metric_parse(const char *name);
const char *pe_metric_name(int metric);

/* What one profile's summary says about one key under one event. */
typedef struct pe_sum_value {
	uint64_t event_samples, event_period;	/* all of the event's */
	uint64_t self_samples, self_period, total_samples, total_period;	/* the key's */
} pe_sum_value;

/* A point's value: shares in percent of the event's samples (0 when it
 * has none); samples and period count the stacks with the key on them
 * (self_*: where it is the leaf). */
double pe_metric_value(int metric, const pe_sum_value *v);

/* ---- the function table: /top rows of many profiles -------------------------------------- */

typedef struct pe_fntab pe_fntab;

pe_fntab *pe_fntab_new(void);
void pe_fntab_free(pe_fntab *t);

/* One profile's /top rows (pe_top, in the weight asked) into side 0 (base,
 * or the only side of a merge) or 1 (target). `total` is its selection's
 * weight (pe_selection_totals), `samples` its sample count, `seconds` the
 * length of its recording (0 when unknown). 0, or -1 out of memory. */
int pe_fntab_add(pe_fntab *t, int side, const pe_top_row *rows, size_t n, uint64_t total,
		 uint64_t samples, double seconds);

/* The weight a side's profiles hold in all (their selections' totals). */
double pe_fntab_total(const pe_fntab *t, int side);

/* The merged /top of side 0: per function the sums of self and total, and
 * its shares of the summed total (normalized: the mean of the per-profile
 * shares, and self/total in profiles: each profile's counts divided by its
 * own total). Most self first (then by name). */
typedef struct pe_fnsum {
	const char *name, *dso;
	double self, total;		/* sums, or profiles when normalized */
	double self_share, total_share;	/* percent */
} pe_fnsum;
/* OUT: rows valid until the table is freed. 0 or -1. */
int pe_fntab_merged(pe_fntab *t, int normalized, const pe_fnsum **rows, size_t *n);

/* {"functions": [{"name", "dso", "self", "total", "self_share",
 * "total_share"}], "total"}: the first `limit` rows (0: all) as
 * /api/v1/query/top answers them. NULL out of memory. */
json_t *pe_fnsum_json(const pe_fnsum *rows, size_t n, size_t limit, double total);

/* The ranked changes between the sides. Shares are the means over a side's
 * profiles of each profile's percentage; deltas in points. A function's
 * per-profile values count 0 in profiles where it has no samples. */
typedef struct pe_change {
	const char *function, *dso;
	double base_self_share, target_self_share, delta_self;
	double base_total_share, target_total_share, delta_total;
	/* the weight per profile (mean) and per second of recording */
	double base_self, target_self, base_total, target_total;
	double base_self_per_s, target_self_per_s;	/* -1: seconds unknown */
	double self_change_pct;	/* of the per-profile self; -1e300: base had none */
	double p_value;		/* of the delta it is ranked by */
	int significant;	/* p_value < alpha; -1 when no test was possible */
} pe_change;

enum pe_test { PE_TEST_NONE, PE_TEST_WELCH, PE_TEST_PREDICT, PE_TEST_TWO_PROP };
const char *pe_test_name(int test);

typedef struct pe_ranked {
	pe_change *regressions, *improvements;	/* worst first, best first */
	size_t nr_regressions, nr_improvements;
	int test;		/* enum pe_test, used for every row */
	/* per side: profiles, mean total weight and samples per profile,
	 * total weight per second of recording (-1: unknown) */
	double profiles[2], total[2], samples[2], per_s[2], seconds[2];
} pe_ranked;

/*
 * Ranks every function whose share reaches min_share (percent) on either
 * side: regressions are those whose self or total share grew, worst
 * (largest growth of either) first; improvements those that shrank, most
 * first. At most `limit` of each (0 = all). OUT: *out (free with
 * pe_ranked_free). 0 or -1.
 */
int pe_fntab_rank(pe_fntab *t, double min_share, double alpha, size_t limit, pe_ranked *out);
void pe_ranked_free(pe_ranked *r);

/* {"regressions": [...], "improvements": [...], "summary": {...}} as
 * /api/v1/diff and perfhub diff give them (docs/query.md names every
 * field; weight: its name, as pe_weight_name gives it): numbers to 6
 * decimals, what could not be worked out null.
 * NULL out of memory. */
json_t *pe_ranked_json(const pe_ranked *r, const char *weight, double alpha, double min_share);

/* ---- the merged timeline ---------------------------------------------------------------- */

typedef struct pe_tlmerge pe_tlmerge;

typedef struct pe_tlbucket {
	uint64_t offset_ns;	/* since each profile's first sample */
	uint64_t samples, period, profiles;
} pe_tlbucket;

pe_tlmerge *pe_tlmerge_new(uint64_t bucket_ns);
void pe_tlmerge_free(pe_tlmerge *t);
/* Adds a profile's timeline (pe_timeline_make with the same bucket_ns).
 * 0, or -1 out of memory or beyond max_buckets. */
int pe_tlmerge_add(pe_tlmerge *t, const pe_timeline *tl, size_t max_buckets);
/* The buckets in time order, once all are added (no add after it); valid
 * until the free. */
const pe_tlbucket *pe_tlmerge_buckets(pe_tlmerge *t, size_t *n);

#endif
