/* stats.c - Welch's t, a prediction t-test, a two-proportion z-test, and the incomplete beta behind them. */
#include "config.h"

#include <math.h>

#include "engine/stats.h"

double pe_stat_mean(const pe_moments *m)
{
	return m->n > 0 ? m->sum / m->n : 0;
}

double pe_stat_var(const pe_moments *m)
{
	double v;

	if (m->n < 2)
		return 0;
	v = (m->sumsq - m->sum * m->sum / m->n) / (m->n - 1);
	return v > 0 ? v : 0;	/* rounding may leave a tiny negative */
}

/* The continued fraction of I_x(a, b) (modified Lentz), for x < (a+1)/(a+b+2). */
static double beta_cf(double x, double a, double b)
{
	const double tiny = 1e-300, eps = 1e-15;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;
	int m;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, num, del;

		/* the even step */
		num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		/* the odd step */
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

double pe_stat_ibeta(double x, double a, double b)
{
	double lfront;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	lfront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	/* the fraction converges fast on this side; the other by symmetry */
	if (x < (a + 1) / (a + b + 2))
		return exp(lfront) * beta_cf(x, a, b) / a;
	return 1 - exp(lfront) * beta_cf(1 - x, b, a) / b;
}

double pe_stat_t_p2(double t, double df)
{
	if (isnan(t) || df <= 0)
		return 1;
	if (isinf(t))
		return 0;
	return pe_stat_ibeta(df / (df + t * t), df / 2, 0.5);
}

double pe_stat_z_p2(double z)
{
	if (isnan(z))
		return 1;
	return erfc(fabs(z) / sqrt(2.0));
}

/* A difference d with no spread at all: certain when d is not 0. */
static double no_spread(double d)
{
	return fabs(d) < 1e-12 ? 1 : 0;
}

double pe_stat_welch(const pe_moments *a, const pe_moments *b)
{
	double va, vb, se2, d, df;

	if (a->n < 2 || b->n < 2)
		return 1;
	va = pe_stat_var(a) / a->n;
	vb = pe_stat_var(b) / b->n;
	se2 = va + vb;
	d = pe_stat_mean(a) - pe_stat_mean(b);
	if (se2 <= 0)
		return no_spread(d);
	/* Welch-Satterthwaite */
	df = se2 * se2 / (va * va / (a->n - 1) + vb * vb / (b->n - 1));
	return pe_stat_t_p2(d / sqrt(se2), df);
}

double pe_stat_predict(double x, const pe_moments *s)
{
	double v, d;

	if (s->n < 2)
		return 1;
	v = pe_stat_var(s);
	d = x - pe_stat_mean(s);
	if (v <= 0)
		return no_spread(d);
	return pe_stat_t_p2(d / sqrt(v * (1 + 1 / s->n)), s->n - 1);
}

double pe_stat_two_prop(double p1, double n1, double p2, double n2)
{
	double p, se;

	if (n1 <= 0 || n2 <= 0)
		return 1;
	p = (p1 * n1 + p2 * n2) / (n1 + n2);
	se = sqrt(p * (1 - p) * (1 / n1 + 1 / n2));
	if (se <= 0)
		return no_spread(p1 - p2);
	return pe_stat_z_p2((p1 - p2) / se);
}
