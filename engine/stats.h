/*
 * stats.h - the tests the ranked diff uses to say whether a change stands
 * out from the noise (pure arithmetic, no state):
 *
 *  - several profiles on both sides: Welch's t-test on the per-profile
 *    shares (unequal variances: a new build may well change the spread);
 *  - one profile against several: is that one value outside what the
 *    several predict (a t-test of a new observation against a sample,
 *    s * sqrt(1 + 1/n));
 *  - one against one: a two-proportion z-test on the sample counts (what
 *    sampling alone would make of the difference).
 *
 * Each returns the two-sided p-value (1 when there is nothing to test).
 */
#ifndef PERFHUB_ENGINE_STATS_H
#define PERFHUB_ENGINE_STATS_H

#include <stdint.h>

/* Mean and unbiased variance of n values given their sum and sum of
 * squares. */
typedef struct pe_moments {
	double n, sum, sumsq;
} pe_moments;

double pe_stat_mean(const pe_moments *m);
double pe_stat_var(const pe_moments *m);

/* P(|T| >= |t|) for Student's t with df degrees of freedom (df > 0). */
double pe_stat_t_p2(double t, double df);
/* P(|Z| >= |z|) for the standard normal. */
double pe_stat_z_p2(double z);

/* Welch's t-test of a against b (each n >= 2). */
double pe_stat_welch(const pe_moments *a, const pe_moments *b);
/* x against the values of s (n >= 2): a new observation's prediction test. */
double pe_stat_predict(double x, const pe_moments *s);
/* Shares p1 of n1 samples against p2 of n2 (p in 0..1). */
double pe_stat_two_prop(double p1, double n1, double p2, double n2);

/* The regularized incomplete beta function I_x(a, b). */
double pe_stat_ibeta(double x, double a, double b);

#endif
