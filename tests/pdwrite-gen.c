/*
 * pdwrite-gen - write a synthetic perf.data with the test writer, for
 * checking the writer itself against perf and for seeding the fuzz corpus.
 *
 *   pdwrite-gen OUT [--pipe] [--be] [--v1] [--attr-size N] [--samples N]
 *               [--events N] [--compress 1|2] [--chunk N] [--pid-step N]
 *
 * Samples carry ip = 0x400000 + i, pid 100 + event * step (1 unless
 * --pid-step), tid 1000 + i % 7,
 * time 1000000 + 10 * i, period 1000 + i, so `perf script` output can be
 * checked against these rules. Prints nothing; exit 0 or 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdwrite.h"

int main(int argc, char **argv)
{
	pdw_config cfg = { .attr_size = 136 };
	unsigned long nsamples = 100, nevents = 1, chunk = 4096, pid_step = 1;
	int compress = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: pdwrite-gen OUT [options]\n");
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : "0";
		if (!strcmp(a, "--pipe"))
			cfg.pipe = 1;
		else if (!strcmp(a, "--be"))
			cfg.big_endian = 1;
		else if (!strcmp(a, "--v1"))
			cfg.version1 = 1;
		else if (!strcmp(a, "--attr-size") && ++i)
			cfg.attr_size = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--samples") && ++i)
			nsamples = strtoul(v, NULL, 0);
		else if (!strcmp(a, "--events") && ++i)
			nevents = strtoul(v, NULL, 0);
		else if (!strcmp(a, "--compress") && ++i)
			compress = atoi(v);
		else if (!strcmp(a, "--chunk") && ++i)
			chunk = strtoul(v, NULL, 0);
		else if (!strcmp(a, "--pid-step") && ++i)
			pid_step = strtoul(v, NULL, 0);
		else {
			fprintf(stderr, "pdwrite-gen: unknown option %s\n", a);
			return 1;
		}
	}
	if (nevents < 1 || nevents > 8)
		return 1;
	pdw *w = pdw_new(&cfg);
	if (!w)
		return 1;
	for (unsigned long e = 0; e < nevents; e++) {
		pdw_event ev = { 0 };
		char name[32];
		snprintf(name, sizeof(name), e ? "synthetic-%lu" : "cpu-clock", e);
		ev.attr.type = 1;	/* PERF_TYPE_SOFTWARE */
		ev.attr.config = e ? 9 : 0;	/* cpu-clock, dummy-ish */
		ev.attr.sample_period = 1000;
		ev.attr.sample_type = PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME |
				      PD_SAMPLE_PERIOD | PD_SAMPLE_CPU |
				      (nevents > 1 ? PD_SAMPLE_IDENTIFIER : 0);
		ev.attr.flags = PD_ATTR_SAMPLE_ID_ALL | (1ULL << 0) /* disabled */ |
				(1ULL << 1) /* inherit */;
		ev.name = name;
		ev.ids[0] = 500 + e;
		ev.ids[1] = 600 + e;
		ev.nr_ids = 2;
		pdw_add_event(w, &ev);
	}
	if (!cfg.version1) {
		pdw_feature_string(w, PD_FEAT_HOSTNAME, "pdwrite-host");
		pdw_feature_string(w, PD_FEAT_OSRELEASE, "6.1.0-pdwrite");
		pdw_feature_string(w, PD_FEAT_VERSION, "6.1.pdwrite");
		pdw_feature_string(w, PD_FEAT_ARCH, "x86_64");
		pdw_feature_begin(w, PD_FEAT_NRCPUS);
		pdw_put_u32(w, 4);	/* available */
		pdw_put_u32(w, 2);	/* online */
		pdw_feature_end(w);
		pdw_feature_begin(w, PD_FEAT_TOTAL_MEM);
		pdw_put_u64(w, 16384000);
		pdw_feature_end(w);
		pdw_feature_begin(w, PD_FEAT_CMDLINE);
		pdw_put_u32(w, 3);
		pdw_put_header_string(w, "perf");
		pdw_put_header_string(w, "record");
		pdw_put_header_string(w, "pdwrite");
		pdw_feature_end(w);
		pdw_feature_event_desc(w);
		pdw_feature_begin(w, PD_FEAT_SAMPLE_TIME);
		pdw_put_u64(w, 1000000);
		pdw_put_u64(w, 1000000 + 10 * (nsamples ? nsamples - 1 : 0));
		pdw_feature_end(w);
		if (compress) {
			pdw_feature_begin(w, PD_FEAT_COMPRESSED);
			pdw_put_u32(w, 0);	/* version */
			pdw_put_u32(w, 1);	/* type: zstd */
			pdw_put_u32(w, 1);	/* level */
			pdw_put_u32(w, 0);	/* ratio */
			pdw_put_u32(w, 528384);	/* mmap_len */
			pdw_feature_end(w);
		}
	}
	pd_sample_id sid = { .pid = 100, .tid = 1000, .time = 999000, .id = 500,
			     .cpu = 1, .identifier = 500 };
	pd_comm c = { .pid = 100, .tid = 1000, .comm = "pdwrite-task" };
	pdw_comm(w, 0, &c, &sid);
	pd_mmap m = { .pid = 100, .tid = 1000, .start = 0x400000, .len = 0x10000,
		      .pgoff = 0, .maj = 8, .min = 1, .ino = 1234, .prot = 5, .flags = 2,
		      .filename = "/usr/bin/pdwrite-task" };
	pdw_mmap2(w, 0, PD_MISC_USER, &m, &sid);
	if (compress)
		pdw_compress_begin(w, compress == 2, chunk, 3);
	for (unsigned long i = 0; i < nsamples; i++) {
		unsigned e = (unsigned)(i % nevents);
		pd_sample s = { 0 };
		s.ip = 0x400000 + i;
		s.pid = (uint32_t)(100 + e * pid_step);
		s.tid = 1000 + (uint32_t)(i % 7);
		s.time = 1000000 + 10 * i;
		s.cpu = (uint32_t)(i % 2);
		s.period = 1000 + i;
		s.identifier = 500 + e;
		pdw_sample(w, (int)e, PD_MISC_USER, &s);
		if (i % 50 == 49) {
			if (compress)
				pdw_compress_flush(w);
			pdw_finished_round(w);
		}
	}
	if (compress)
		pdw_compress_end(w);
	pd_task t = { .pid = 100, .ppid = 100, .tid = 1000, .ptid = 1000, .time = 2000000 };
	sid.time = t.time;
	pdw_task(w, 0, PD_RECORD_EXIT, &t, &sid);
	pdw_finished_round(w);
	uint8_t *buf;
	size_t len;
	int rc = pdw_finish(w, &buf, &len);
	pdw_free(w);
	if (rc) {
		fprintf(stderr, "pdwrite-gen: writer failed\n");
		return 1;
	}
	rc = pdw_write_file(argv[1], buf, len);
	free(buf);
	return rc ? 1 : 0;
}
