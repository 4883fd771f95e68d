/*
 * report.h - the inspect report of a parsed recording: header facts,
 * feature sections, events, record counts, samples per event, lost samples.
 *
 * One JSON object (jansson) is the single source of truth: `perfhub inspect
 * --json` prints it, the human printer formats it, and perfhubd stores and
 * serves the same fields. Nothing here writes to stdout by itself.
 *
 * Usage:
 *	pd_file *f = pd_open_path(path, NULL, &err);
 *	if (report_read_all(f, NULL, NULL, &err) < 0) fail(&err);
 *	json_t *rep = report_json(f);
 *	report_print_text(stdout, rep);
 *	json_decref(rep);
 */
#ifndef PERFHUB_REPORT_H
#define PERFHUB_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "perfdata.h"

/* Called now and then while reading: input bytes consumed so far and the
 * input's size (0 when unknown, e.g. a pipe). */
typedef void (*report_progress_fn)(void *ctx, uint64_t bytes_read, uint64_t total);

/*
 * Read every record of `f` to the end, decoding each (as the options `f`
 * was opened with say), so that its statistics and pipe-mode header are
 * complete. Returns the number of records read, or -1 with *err filled.
 * `progress` may be NULL.
 */
int64_t report_read_all(pd_file *f, report_progress_fn progress, void *ctx, pd_error *err);

/*
 * The report of a recording that was read to the end (new reference; NULL
 * only when out of memory). Keys:
 *   format            mode, version, byte_order, directory, data_files, ...
 *   header            hostname, os_release, perf_version, arch,
 *                     nr_cpus_online, nr_cpus_available, cpu_desc, cpuid,
 *                     total_mem, cmdline, sample_time {first_ns, last_ns}:
 *                     each only when the file has that feature; plus
 *                     features {perf feature name: decoded value}
 *   events            [{name, type, config, sample_type, read_format,
 *                       sample_period | sample_freq, ids, samples}]
 *   records           {perf record name: count}, as perf report --stats
 *   samples_per_event {event name: samples}
 *   lost              LOST + LOST_SAMPLES
 *   warnings          [text] (only when there are some)
 * 64-bit values above INT64_MAX are written as decimal strings.
 */
json_t *report_json(const pd_file *f);

/* Print a report for a person to read. Returns 0, or -1 on a write error. */
int report_print_text(FILE *out, const json_t *report);

/* "IP|TID|TIME|CALLCHAIN|PERIOD" (perf's spelling) into buf. */
const char *report_sample_type_str(uint64_t sample_type, char *buf, size_t len);

#endif /* PERFHUB_REPORT_H */
