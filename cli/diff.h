/*
 * diff.h - perfhub diff BASE TARGET: the functions whose share of the
 * profile grew (regressions) or shrank (improvements) from BASE to TARGET,
 * ranked, and a gate: exit 1 when one grew by more than --fail-over
 * points (with --significant-only: and the change stands out from the
 * noise, as far as the sides tell), as diff(1) exits 1 when the files
 * differ. perfhub record's --fail-over/--base gate is the same question
 * (df_gate).
 */
#ifndef PERFHUB_CLI_DIFF_H
#define PERFHUB_CLI_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api-client.h"

#define DF_DEFAULT_FAIL_OVER 5.0	/* points: above two runs' noise, below a real change */
#define DF_DEFAULT_ALPHA 0.01
#define DF_DEFAULT_ROWS 10

typedef struct df_opts {
	double fail_over;	/* points */
	double min_share;	/* percent: smaller functions are left out */
	double alpha;		/* the tests' significance level */
	int significant_only;	/* the gate counts only changes the test finds significant */
	size_t rows;		/* of each list printed */
	int json;
} df_opts;

void df_opts_init(df_opts *o);

/* perfhub record's gate: profile `target` against the profiles the
 * selector `base` picks (the newest `last`, 0: all) on c's server, the
 * table printed to out. 0 passed, 1 a regression, 2 an error (printed). */
int df_gate(ac_client *c, const char *base, long long last, int64_t target, const df_opts *o,
	    FILE *out);

#endif
