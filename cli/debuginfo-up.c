/*
 * debuginfo-up.c - the debuginfo a recording needs that the server lacks,
 * found on this machine and sent by build-id.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "debuginfo-up.h"
#include "elfid.h"

#define DU_KALLSYMS_LINE 512

typedef struct du_want {
	char hex[41];
	char *path;		/* as the recording names the dso */
} du_want;

struct du_list {
	du_want *v;		/* DU_MAX_BUILD_IDS entries once the first is added */
	size_t n;
	char *os_release;
};

/* What du_send did, for its summary line. */
typedef struct du_tally {
	size_t missing, files, stored, not_found;
	unsigned long long bytes;
} du_tally;

du_list *du_list_new(void)
{
	return calloc(1, sizeof(du_list));
}

void du_list_free(du_list *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	free(l->os_release);
	free(l);
}

size_t du_list_count(const du_list *l)
{
	return l->n;
}

static void want_add(du_list *l, const char *path, const uint8_t *bid, size_t n)
{
	char hex[41];
	size_t i;

	if (!path || !n || l->n >= DU_MAX_BUILD_IDS)
		return;
	for (i = 0; i < n && i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].hex, hex))
			return;
	if (!l->v && !(l->v = calloc(DU_MAX_BUILD_IDS, sizeof(*l->v))))
		return;
	memcpy(l->v[l->n].hex, hex, sizeof(hex));
	l->v[l->n].path = strdup(path);
	if (l->v[l->n].path)
		l->n++;
}

void du_note_record(du_list *l, const pd_record *r)
{
	if (r->type == PD_RECORD_MMAP2 && r->u.mmap.build_id_size)
		want_add(l, r->u.mmap.filename, r->u.mmap.build_id, r->u.mmap.build_id_size);
	else if (r->type == PD_RECORD_HEADER_BUILD_ID)
		want_add(l, r->u.build_id.filename, r->u.build_id.build_id, r->u.build_id.size);
}

void du_note_header(du_list *l, const pd_header *h)
{
	if (h && h->os_release && !l->os_release)
		l->os_release = strdup(h->os_release);
}

int du_collect_path(du_list *l, const char *path)
{
	pd_options opt = { .no_decode_samples = 1 };
	pd_error err;
	pd_record r;
	pd_file *f = pd_open_path(path, &opt, &err);
	const pd_header *h;
	size_t i;
	int scan;

	if (!f)
		return -1;
	h = pd_get_header(f);
	scan = !h || !h->nr_build_ids;
	for (i = 0; h && i < h->nr_build_ids; i++)
		want_add(l, h->build_ids[i].filename, h->build_ids[i].build_id,
			 h->build_ids[i].size);
	/* perf writes the BUILD_ID feature unless it recorded build-ids in
	 * MMAP2 (--buildid-mmap) or streams (pipe mode): read the records
	 * only then, a large file costs seconds */
	while (scan && pd_next(f, &r, &err) > 0)
		du_note_record(l, &r);
	du_note_header(l, pd_get_header(f));
	pd_close(f);
	return 0;
}

/* 1 when `path` is an ELF file whose build-id starts with hex; *symbols
 * says whether it has .symtab (or is a debug file). */
static int file_matches(const char *path, const char *hex, int *symbols)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char have[41];
	elfid id;
	size_t i;

	if (fd < 0)
		return 0;
	elfid_of_fd(fd, &id);
	close(fd);
	if (!id.elf || !id.bid_size)
		return 0;
	for (i = 0; i < id.bid_size; i++)
		snprintf(have + 2 * i, 3, "%02x", id.bid[i]);
	*symbols = id.has_symtab;
	return !strncmp(have, hex, strlen(hex));
}

/* PUT one file (a FILE at its start) for a build-id. 0 stored or there
 * already, -1 refused or failed (printed). */
static int put_debuginfo(ac_client *c, const char *hex, FILE *fp, int64_t size,
			 const char *what, int verbose, const char *who, du_tally *t)
{
	ac_body body = { .type = "application/octet-stream", .fp = fp, .size = size };
	char url[128];
	ac_response r;
	int ok;

	snprintf(url, sizeof(url), "/api/v1/debuginfo/%s", hex);
	if (ac_request(c, "PUT", url, &body, &r) < 0)
		return -1;
	ok = r.status == 200 || r.status == 201;
	if (ok && verbose)
		fprintf(stderr, "perfhub %s: debuginfo %s %s (%s)\n", who, hex,
			r.status == 201 ? "sent" : "already there", what);
	else if (!ok)
		ac_print_error("upload (debuginfo)", &r);
	if (ok) {
		t->files++;
		t->stored += r.status == 201;
		t->bytes += (unsigned long long)size;
	}
	ac_response_free(&r);
	return ok ? 0 : -1;
}

static int put_path(ac_client *c, const char *hex, const char *path, int verbose,
		    const char *who, du_tally *t)
{
	FILE *fp = fopen(path, "rb");
	struct stat st;
	int rc;

	if (!fp)
		return -1;
	if (fstat(fileno(fp), &st) < 0) {
		fclose(fp);
		return -1;
	}
	rc = put_debuginfo(c, hex, fp, (int64_t)st.st_size, path, verbose, who, t);
	fclose(fp);
	return rc;
}

/* The running kernel's symbols, when the recording was made under it. */
static int put_kallsyms(ac_client *c, const char *hex, const char *os_release, int verbose,
			const char *who, du_tally *t)
{
	struct utsname u;
	FILE *in, *tmp;
	char line[DU_KALLSYMS_LINE];
	int nonzero = 0, rc;
	long size;

	if (!os_release || uname(&u) < 0 || strcmp(u.release, os_release))
		return -1;
	in = fopen("/proc/kallsyms", "r");
	if (!in)
		return -1;
	tmp = tmpfile();
	while (tmp && fgets(line, sizeof(line), in)) {
		/* hidden addresses (kptr_restrict) read as zeros: useless */
		if (!nonzero && strspn(line, "0") < 8)
			nonzero = 1;
		fputs(line, tmp);
	}
	fclose(in);
	if (!tmp || !nonzero || fflush(tmp) || (size = ftell(tmp)) <= 0) {
		if (tmp)
			fclose(tmp);
		return -1;
	}
	rewind(tmp);
	rc = put_debuginfo(c, hex, tmp, size, "/proc/kallsyms", verbose, who, t);
	fclose(tmp);
	return rc;
}

/* The build-ids of the list the server says it lacks: {"missing": [...]}. */
static json_t *ask_missing(ac_client *c, const du_list *l)
{
	json_t *req = json_object(), *ids = json_array(), *ans = NULL;
	ac_body body = { .type = "application/json" };
	char *text = NULL;
	ac_response r = { 0 };
	size_t i;

	for (i = 0; i < l->n; i++)
		json_array_append_new(ids, json_string(l->v[i].hex));
	json_object_set_new(req, "build_ids", ids);
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!text || !(body.fp = fmemopen(text, strlen(text), "r")))
		goto out;
	body.size = (int64_t)strlen(text);
	if (ac_request(c, "POST", "/api/v1/debuginfo/missing", &body, &r) < 0)
		goto out;
	if (r.status != 200 || !(ans = json_loads(r.body ? r.body : "", 0, NULL)))
		ac_print_error("upload (debuginfo/missing)", &r);
out:
	if (body.fp)
		fclose(body.fp);
	free(text);
	ac_response_free(&r);
	return ans;
}

/* One missing build-id: the file at its recorded path when its build-id
 * matches, else /usr/lib/debug/.build-id/, else perf's ~/.debug cache (the
 * [vdso] image too); a stripped file is sent and the search goes on for
 * one with symbols. 1 when something was sent. */
static int send_one(ac_client *c, const du_want *w, const char *os_release, int verbose,
		    const char *who, du_tally *t)
{
	static const char *const cached[] = { "debug", "elf", "vdso" };
	const char *home = getenv("HOME");
	char cand[4096];
	int symbols = 0, done = 0, sent = 0, j;

	if (!strncmp(w->path, "[kernel.kallsyms]", 17))	/* MMAP2: "..._text" */
		return put_kallsyms(c, w->hex, os_release, verbose, who, t) == 0;
	if (w->path[0] == '/' && file_matches(w->path, w->hex, &symbols) &&
	    put_path(c, w->hex, w->path, verbose, who, t) == 0) {
		sent = 1;
		done = symbols;
	}
	/* the cache's "vdso" is the [vdso] image perf record saved */
	for (j = 0; j < 4 && !done; j++) {
		if (j == 0)
			snprintf(cand, sizeof(cand), "/usr/lib/debug/.build-id/%.2s/%s.debug",
				 w->hex, w->hex + 2);
		else
			snprintf(cand, sizeof(cand), "%s/.debug/.build-id/%.2s/%s/%s",
				 home ? home : "/root", w->hex, w->hex + 2, cached[j - 1]);
		if (file_matches(cand, w->hex, &symbols) &&
		    put_path(c, w->hex, cand, verbose, who, t) == 0) {
			sent = 1;
			done = symbols;
		}
	}
	return sent;
}

size_t du_send(ac_client *c, const du_list *l, int verbose, const char *who)
{
	json_t *ans, *v;
	du_tally t = { 0 };
	size_t i, k;

	if (!l->n || !(ans = ask_missing(c, l)))
		return 0;
	json_array_foreach(json_object_get(ans, "missing"), k, v) {
		const char *hex = json_string_value(v);
		const du_want *w = NULL;

		for (i = 0; hex && i < l->n && !w; i++)
			if (!strcmp(l->v[i].hex, hex))
				w = &l->v[i];
		if (!w)
			continue;
		t.missing++;
		if (!send_one(c, w, l->os_release, verbose, who, &t)) {
			t.not_found++;
			if (verbose)
				fprintf(stderr, "perfhub %s: debuginfo %s not found here (%s)\n", who,
					w->hex, w->path);
		}
	}
	json_decref(ans);
	fprintf(stderr, "perfhub %s: debuginfo: %zu build-ids, %zu missing on the server, "
		"%zu files sent: %zu new, %.1f MB; %zu not found here%s\n", who, l->n, t.missing,
		t.files, t.stored, t.bytes / 1e6, t.not_found,
		verbose || !t.missing ? "" : " (-v lists them)");
	return t.stored;
}

int du_send_archive(ac_client *c, const char *path, const char *who)
{
	FILE *fp = fopen(path, "rb");
	ac_body body = { .type = "application/x-bzip2", .fp = fp };
	struct stat st;
	ac_response r;
	json_t *j;
	int rc = -1;

	if (!fp || fstat(fileno(fp), &st) < 0) {
		fprintf(stderr, "perfhub %s: %s: %s\n", who, path, strerror(errno));
		if (fp)
			fclose(fp);
		return -1;
	}
	body.size = (int64_t)st.st_size;
	if (ac_request(c, "POST", "/api/v1/debuginfo/archive", &body, &r) == 0) {
		if (r.status == 200 && (j = json_loads(r.body ? r.body : "", 0, NULL))) {
			fprintf(stderr, "perfhub %s: %s: %lld debuginfo files, %lld new\n", who, path,
				(long long)json_integer_value(json_object_get(j, "found")),
				(long long)json_integer_value(json_object_get(j, "stored")));
			json_decref(j);
			rc = 0;
		} else {
			ac_print_error("upload (archive)", &r);
		}
		ac_response_free(&r);
	}
	fclose(fp);
	return rc;
}
