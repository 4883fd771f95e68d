/* many-json.c - answers about many profiles as JSON, as perfhubd answers them and perfhub prints them offline: merged /top rows, the ranked changes of a diff. */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "engine/many.h"

/* A number kept to 6 decimals: shares and means read better so. */
static double round6(double v)
{
	return round(v * 1e6) / 1e6;
}

/* JSON null for what could not be worked out (the markers of pe_change:
 * below -1e299, or -1 for what cannot be negative). */
static json_t *num_or_null(double v, int neg_is_null)
{
	if (v < -1e299 || (neg_is_null && v < 0) || isnan(v) || isinf(v))
		return json_null();
	return json_real(round6(v));
}

static json_t *changes_json(const pe_change *c, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && i < n; i++) {
		const pe_change *x = &c[i];
		json_t *o = json_pack("{s:s,s:s?,s:f,s:f,s:f,s:f,s:f,s:f,s:o,s:o,s:f,s:f,s:f,s:f}",
			"function", x->function, "dso", x->dso,
			"base_self_share", round6(x->base_self_share),
			"target_self_share", round6(x->target_self_share),
			"delta_self", round6(x->delta_self),
			"base_total_share", round6(x->base_total_share),
			"target_total_share", round6(x->target_total_share),
			"delta_total", round6(x->delta_total),
			"significant", x->significant < 0 ? json_null() : json_boolean(x->significant),
			"p_value", x->significant < 0 ? json_null() : json_real(x->p_value),
			"base_self", round6(x->base_self), "target_self", round6(x->target_self),
			"base_total", round6(x->base_total), "target_total", round6(x->target_total));
		if (!o)
			continue;
		json_object_set_new(o, "self_change_pct", num_or_null(x->self_change_pct, 0));
		json_object_set_new(o, "base_self_per_s", num_or_null(x->base_self_per_s, 1));
		json_object_set_new(o, "target_self_per_s", num_or_null(x->target_self_per_s, 1));
		json_array_append_new(arr, o);
	}
	return arr;
}

json_t *pe_ranked_json(const pe_ranked *rk, const char *weight, double alpha, double min_share)
{
	json_t *sum = json_pack("{s:s,s:s,s:f,s:f,s:I,s:I}",
		"weight", weight, "test", pe_test_name(rk->test),
		"alpha", alpha, "min_share", min_share,
		"base_profiles", (json_int_t)rk->profiles[0],
		"target_profiles", (json_int_t)rk->profiles[1]);
	int s;

	/* the whole run beside the shares: a uniform slowdown shows here */
	for (s = 0; sum && s < 2; s++) {
		char k[32];
		const char *side = s ? "target" : "base";
		snprintf(k, sizeof(k), "%s_total", side);
		json_object_set_new(sum, k, json_real(round6(rk->total[s])));
		snprintf(k, sizeof(k), "%s_samples", side);
		json_object_set_new(sum, k, json_real(round6(rk->samples[s])));
		snprintf(k, sizeof(k), "%s_seconds", side);
		json_object_set_new(sum, k, num_or_null(rk->seconds[s], 1));
		snprintf(k, sizeof(k), "%s_per_s", side);
		json_object_set_new(sum, k, num_or_null(rk->per_s[s], 1));
	}
	if (sum)
		json_object_set_new(sum, "total_change_pct", rk->total[0] > 0 ?
				    json_real(round6(100 * (rk->total[1] - rk->total[0]) /
						     rk->total[0])) : json_null());
	return json_pack("{s:o,s:o,s:o}", "regressions",
			 changes_json(rk->regressions, rk->nr_regressions), "improvements",
			 changes_json(rk->improvements, rk->nr_improvements), "summary", sum);
}

json_t *pe_fnsum_json(const pe_fnsum *r, size_t n, size_t limit, double total)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && i < n && (!limit || i < limit); i++)
		json_array_append_new(arr, json_pack("{s:s,s:s?,s:f,s:f,s:f,s:f}", "name",
			r[i].name, "dso", r[i].dso, "self", r[i].self, "total", r[i].total,
			"self_share", round6(r[i].self_share),
			"total_share", round6(r[i].total_share)));
	return json_pack("{s:o,s:f}", "functions", arr, "total", total);
}
