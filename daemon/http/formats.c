/*
 * formats.c - one profile in the formats other tools read: /pprof (pprof's
 * gzipped profile.proto), /speedscope (speedscope's file format), and
 * /perf.data, the bytes that were uploaded, streamed from the spool.
 */
#include "config.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http/http.h"

#define FORMATS_FILENAME_MAX 128

/* A file name for Content-Disposition: the profile's name (or
 * "profile-ID") with anything but [A-Za-z0-9._-] as '_', then `ext`. */
static void download_name(char *out, size_t cap, const char *name, int64_t id, const char *ext)
{
	char base[FORMATS_FILENAME_MAX];
	size_t i;

	if (name && *name)
		snprintf(base, sizeof(base), "%s", name);
	else
		snprintf(base, sizeof(base), "profile-%lld", (long long)id);
	for (i = 0; base[i]; i++)
		if (!isalnum((unsigned char)base[i]) && !strchr("._-", base[i]))
			base[i] = '_';
	snprintf(out, cap, "attachment; filename=\"%s%s\"", base, ext);
}

/* A 200 answer to save as a file: body as it is (never compressed again),
 * with n more headers. Takes body. */
static MHD_Result_t reply_download(api *a, struct MHD_Connection *conn, void *body, size_t len,
				   const char *type, const char *disposition,
				   const char *const *names, const char *const *values, size_t n)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	size_t i;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Content-Disposition", disposition);
	for (i = 0; i < n; i++)
		MHD_add_response_header(r, names[i], values[i]);
	http_count_status(a, 200);
	return http_queue(conn, 200, r);
}

static MHD_Result_t not_ready(api *a, struct MHD_Connection *conn, int64_t id, int rc)
{
	if (rc == 1)
		return http_reply_error(a, conn, 404, "no ready profile %lld", (long long)id);
	return http_reply_error(a, conn, 500, "storage error or out of memory");
}

#define NO_OFFCPU "no off-CPU time in this profile (record with -e sched:sched_switch " \
	"--switch-events -g, or perf record --off-cpu)"

/* pprof's weights: every sample type is in the answer (samples, period,
 * offcpu where present); weight=offcpu makes offcpu the default one. wall
 * is no single type of it. *default_offcpu, and the measure set back to
 * the period's (the off-CPU rows are added beside). 0, or -1 with a 400
 * queued. */
static int pprof_weight(api *a, struct MHD_Connection *conn, http_fold_args *fa,
			int *default_offcpu, MHD_Result_t *ret)
{
	*default_offcpu = fa->f.measure == PE_MEASURE_OFFCPU;
	if (fa->f.measure == PE_MEASURE_WALL) {
		*ret = http_reply_error(a, conn, 400, "bad parameter 'weight': pprof takes samples, "
					"period or offcpu (its sample types; on- plus off-CPU time "
					"is no single one of them)");
		return -1;
	}
	fa->f.measure = PE_MEASURE_PERIOD;
	return 0;
}

MHD_Result_t http_get_pprof(api *a, struct MHD_Connection *conn, int64_t id)
{
	http_fold_args fa;
	MHD_Result_t ret;
	char disp[FORMATS_FILENAME_MAX + 64];
	uint8_t *out = NULL;
	size_t len = 0;
	int rc, offcpu;

	if (http_fold_args_parse(a, conn, &fa, &ret) < 0 ||
	    pprof_weight(a, conn, &fa, &offcpu, &ret) < 0 ||
	    http_fold_event(a, conn, id, &fa, &ret) < 0)
		return ret;
	rc = st_pprof_offcpu(a->st, id, &fa.f, offcpu, &out, &len);
	if (rc == 2)
		return http_reply_error(a, conn, 400, "weight=offcpu: " NO_OFFCPU);
	if (rc)
		return not_ready(a, conn, id, rc);
	download_name(disp, sizeof(disp), NULL, id, ".pb.gz");
	return reply_download(a, conn, out, len, "application/octet-stream", disp, NULL, NULL, 0);
}

MHD_Result_t http_query_pprof(api *a, struct MHD_Connection *conn)
{
	http_fold_args fa;
	http_pick hp;
	st_many_info info = { 0 };
	MHD_Result_t ret;
	char used[24], matched[24];
	const char *names[] = { "X-Perfhub-Profiles", "X-Perfhub-Matched" };
	const char *values[] = { used, matched };
	uint8_t *out = NULL;
	size_t len = 0;
	int rc, offcpu;

	if (http_fold_args_parse(a, conn, &fa, &ret) < 0 ||
	    pprof_weight(a, conn, &fa, &offcpu, &ret) < 0 ||
	    http_pick_parse(a, conn, "", 0, &hp, &ret) < 0)
		return ret;
	rc = st_query_pprof(a->st, &hp.pick, &fa.f, offcpu, &info, &out, &len);
	http_pick_free(&hp);
	if (rc == 2)
		return http_reply_error(a, conn, 400, "weight=offcpu: none of the %zu profiles has "
					"off-CPU time (record with -e sched:sched_switch "
					"--switch-events -g, or perf record --off-cpu)", info.used);
	if (rc == -3)
		return http_reply_error(a, conn, 413, "the merged profile passed %u samples or %u "
					"stack entries: pick fewer profiles (limit, since, a "
					"narrower q) or filter more", PE_PPROF_MAX_SAMPLES,
					PE_PPROF_MAX_LOCATION_IDS);
	if (rc)
		return http_many_error(a, conn, rc);
	/* how many profiles went in, as /query/collapsed says it */
	snprintf(used, sizeof(used), "%zu", info.used);
	snprintf(matched, sizeof(matched), "%zu", info.matched);
	return reply_download(a, conn, out, len, "application/octet-stream",
			      "attachment; filename=\"perfhub-query.pb.gz\"", names, values, 2);
}

MHD_Result_t http_get_speedscope(api *a, struct MHD_Connection *conn, int64_t id)
{
	const char *group = http_arg(conn, "group");
	http_fold_args fa;
	st_speedscope_opts o = { 0 };
	char name[64];
	MHD_Result_t ret;
	char *out = NULL;
	size_t len = 0;
	int rc;

	if (http_fold_args_parse(a, conn, &fa, &ret) < 0)
		return ret;
	if (group && strcmp(group, "thread") && strcmp(group, "comm"))
		return http_reply_error(a, conn, 400, "bad parameter 'group' (thread or comm)");
	/* offcpu and wall weigh as they do in a flame graph: 400 without off-CPU time */
	if (http_fold_event(a, conn, id, &fa, &ret) < 0 ||
	    http_measure_check(a, conn, id, &fa, &ret) < 0)
		return ret;
	snprintf(name, sizeof(name), "perfhub profile %lld", (long long)id);
	o.name = name;
	o.exporter = "perfhub " VERSION;
	o.by_samples = fa.by_samples;
	o.by_comm = group && !strcmp(group, "comm");
	rc = st_speedscope(a->st, id, &fa.f, &o, &out, &len);
	if (rc)
		return not_ready(a, conn, id, rc);
	return http_reply(a, conn, 200, out, len, "application/json");
}

MHD_Result_t http_get_perf_data(api *a, struct MHD_Connection *conn, int64_t id)
{
	char *path = NULL, *kind = NULL, *name = NULL, disp[FORMATS_FILENAME_MAX + 64], err[512];
	sp_local *local;
	struct stat st;
	int fd, tar;
	int rc = st_profile_file(a->st, id, &path, &kind, &name);

	if (rc == 1)
		return http_reply_error(a, conn, 404, "no profile %lld", (long long)id);
	if (rc < 0)
		return http_reply_error(a, conn, 500, "storage error");
	tar = !strcmp(kind, "tar");
	download_name(disp, sizeof(disp), name, id, tar ? ".perf.data.tar" : ".perf.data");
	/* the stored bytes on this node's disk (a bucket's object fetched;
	 * the open file outlives the fetched copy's name) */
	local = sp_local_open(jobs_spool(a->j), path, "file", UINT64_MAX, NULL, err, sizeof(err));
	fd = local ? open(sp_local_path(local), O_RDONLY | O_CLOEXEC) : -1;
	sp_local_close(local);
	free(path);
	free(kind);
	free(name);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return http_reply_error(a, conn, 410, "the bytes of profile %lld are no longer in "
					"the spool", (long long)id);
	}
	/* streamed from the file (sendfile where it can), never read whole */
	return http_reply_fd(a, conn, fd, (uint64_t)st.st_size, tar ? "application/x-tar" :
			     "application/octet-stream", disp);
}
