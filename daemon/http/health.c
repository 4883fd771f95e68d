/* health.c - /healthz and the Prometheus /metrics. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "http/http.h"

/* ---- health and metrics --------------------------------------------------------- */

MHD_Result_t http_get_healthz(api *a, struct MHD_Connection *conn)
{
	if (st_ping(a->st) < 0)
		return http_reply_error(a, conn, 503, "the store does not answer");
	return http_reply_json(a, conn, 200, json_pack("{s:s,s:s}", "status", "ok", "version", VERSION));
}

MHD_Result_t http_get_metrics(api *a, struct MHD_Connection *conn)
{
	st_counts c;
	jobs_stats js;
	char *buf;
	size_t cap = 8192, n = 0;
	int i;
	uint64_t cum = 0;
	static const char *const classes[] = { "2xx", "3xx", "4xx", "5xx", "other" };

	if (st_counts_get(a->st, &c) < 0)
		return http_reply_error(a, conn, 503, "the store does not answer");
	jobs_get_stats(a->j, &js);
	buf = malloc(cap);
	if (!buf)
		return MHD_NO;
#define OUT(...) n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__)
	OUT("# HELP perfhub_uploads_total Uploads accepted as new profiles.\n"
	    "# TYPE perfhub_uploads_total counter\nperfhub_uploads_total %llu\n",
	    (unsigned long long)atomic_load(&a->uploads));
	OUT("# HELP perfhub_upload_duplicates_total Uploads of bytes already stored.\n"
	    "# TYPE perfhub_upload_duplicates_total counter\nperfhub_upload_duplicates_total %llu\n",
	    (unsigned long long)atomic_load(&a->duplicates));
	OUT("# HELP perfhub_parses_total Recordings parsed successfully.\n"
	    "# TYPE perfhub_parses_total counter\nperfhub_parses_total %llu\n",
	    (unsigned long long)js.parsed);
	OUT("# HELP perfhub_parse_failures_total Recordings that failed to parse.\n"
	    "# TYPE perfhub_parse_failures_total counter\nperfhub_parse_failures_total %llu\n",
	    (unsigned long long)js.failed);
	OUT("# HELP perfhub_queue_depth Profiles waiting to be parsed.\n"
	    "# TYPE perfhub_queue_depth gauge\nperfhub_queue_depth %lld\n", (long long)c.queued);
	OUT("# HELP perfhub_profiles Profiles by status.\n# TYPE perfhub_profiles gauge\n"
	    "perfhub_profiles{status=\"queued\"} %lld\nperfhub_profiles{status=\"parsing\"} %lld\n"
	    "perfhub_profiles{status=\"ready\"} %lld\nperfhub_profiles{status=\"failed\"} %lld\n",
	    (long long)c.queued, (long long)c.parsing, (long long)c.ready, (long long)c.failed);
	OUT("# HELP perfhub_parse_seconds Time to parse and store a recording.\n"
	    "# TYPE perfhub_parse_seconds histogram\n");
	for (i = 0; i < 8; i++) {
		cum += js.parse_hist[i];
		if (i < 7)
			OUT("perfhub_parse_seconds_bucket{le=\"%g\"} %llu\n", jobs_hist_bounds[i],
			    (unsigned long long)cum);
		else
			OUT("perfhub_parse_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
	}
	OUT("perfhub_parse_seconds_sum %.3f\nperfhub_parse_seconds_count %llu\n", js.parse_seconds,
	    (unsigned long long)cum);
	OUT("# HELP perfhub_database_bytes Size of the SQLite database.\n"
	    "# TYPE perfhub_database_bytes gauge\nperfhub_database_bytes %lld\n",
	    (long long)c.db_bytes);
	OUT("# HELP perfhub_query_answers_total Per-profile query answers by where they came "
	    "from.\n# TYPE perfhub_query_answers_total counter\n"
	    "perfhub_query_answers_total{source=\"kept\"} %llu\n"
	    "perfhub_query_answers_total{source=\"computed\"} %llu\n",
	    (unsigned long long)atomic_load(&a->answers_kept),
	    (unsigned long long)atomic_load(&a->answers_computed));
	OUT("# HELP perfhub_prepared_answers_total Answers made as a parse finished (the "
	    "default flame graphs) and kept for the first questions.\n"
	    "# TYPE perfhub_prepared_answers_total counter\nperfhub_prepared_answers_total %llu\n",
	    (unsigned long long)atomic_load(&a->answers_prepared));
	{
		uint64_t busy;
		unsigned heavy;

		hpool_stats(a->pool, &busy, &heavy);
		OUT("# HELP perfhub_http_heavy_queries Heavy queries running or waiting.\n"
		    "# TYPE perfhub_http_heavy_queries gauge\nperfhub_http_heavy_queries %u\n", heavy);
		OUT("# HELP perfhub_http_busy_total Heavy queries answered 503 (--max-queries).\n"
		    "# TYPE perfhub_http_busy_total counter\nperfhub_http_busy_total %llu\n",
		    (unsigned long long)busy);
		OUT("# HELP perfhub_http_header_timeouts_total Connections closed for taking longer"
		    " than --header-timeout over a request's headers.\n"
		    "# TYPE perfhub_http_header_timeouts_total counter\n"
		    "perfhub_http_header_timeouts_total %llu\n", (unsigned long long)hd_cut(a->hd));
	}
	OUT("# HELP perfhub_profile_models_total Profile models questions were answered from, by "
	    "where they were: kept in memory (left by the parse or an earlier question) or read "
	    "from the database.\n# TYPE perfhub_profile_models_total counter\n"
	    "perfhub_profile_models_total{source=\"memory\"} %llu\n"
	    "perfhub_profile_models_total{source=\"database\"} %llu\n",
	    (unsigned long long)c.models_memory, (unsigned long long)c.models_loaded);
	OUT("# HELP perfhub_http_responses_total HTTP responses by status class.\n"
	    "# TYPE perfhub_http_responses_total counter\n");
	for (i = 0; i < 5; i++)
		OUT("perfhub_http_responses_total{code=\"%s\"} %llu\n", classes[i],
		    (unsigned long long)atomic_load(&a->by_status[i]));
#undef OUT
	if (n >= cap) {
		free(buf);
		return http_reply_error(a, conn, 500, "metrics too large");
	}
	return http_reply(a, conn, 200, buf, n, "text/plain; version=0.0.4");
}
