/* code.c - a DSO's files for annotation by the symbolizer's lookup, and source text under the operator's roots. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "symbols/code.h"

struct code_finder {
	pd_dso_cache *cache;	/* its own: no debuginfod fetch from a request */
	char *debuginfo_dir;
	char *roots[CODE_MAX_ROOTS];	/* real paths */
	size_t nr_roots;
};

code_finder *code_finder_new(const char *debuginfo_dir, const char *roots)
{
	code_finder *f = calloc(1, sizeof(*f));
	char *list = NULL, *save = NULL, *tok;

	if (!f || !(f->cache = pd_dso_cache_new(CODE_CACHE_BYTES)))
		goto fail;
	if (debuginfo_dir && !(f->debuginfo_dir = strdup(debuginfo_dir)))
		goto fail;
	if (roots && *roots && !(list = strdup(roots)))
		goto fail;
	for (tok = list ? strtok_r(list, ":", &save) : NULL; tok; tok = strtok_r(NULL, ":", &save)) {
		char real[PATH_MAX];

		if (f->nr_roots >= CODE_MAX_ROOTS) {
			log_warn("msg=\"source-root: too many directories\" max=%d", CODE_MAX_ROOTS);
			break;
		}
		if (!realpath(tok, real)) {
			log_warn("msg=\"source-root: not a directory\" path=\"%s\"", tok);
			continue;
		}
		if (!(f->roots[f->nr_roots++] = strdup(real)))
			goto fail;
	}
	free(list);
	return f;
fail:
	free(list);
	code_finder_free(f);
	return NULL;
}

void code_finder_free(code_finder *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nr_roots; i++)
		free(f->roots[i]);
	free(f->debuginfo_dir);
	if (f->cache)
		pd_dso_cache_free(f->cache);
	free(f);
}

int code_annotate(code_finder *f, const char *dso, const char *build_id, int kernel,
		  const pe_addr_count *addrs, size_t n, an_result *out)
{
	pd_dso_paths paths = { .debuginfo_dir = f->debuginfo_dir };
	uint64_t *a = calloc(n + 1, sizeof(*a)), *s = calloc(n + 1, sizeof(*s)),
		 *v = calloc(n + 1, sizeof(*v));
	an_request rq = { 0 };
	size_t i;
	int rc = -1;

	if (a && s && v) {
		for (i = 0; i < n; i++) {
			a[i] = addrs[i].addr;
			s[i] = addrs[i].samples;
			v[i] = addrs[i].value;
		}
		rq.addrs = a;
		rq.samples = s;
		rq.values = v;
		rq.n = n;
		rq.kernel = kernel;
		rc = an_annotate_dso(f->cache, &paths, dso, build_id, &rq, out);
	}
	free(a);
	free(s);
	free(v);
	return rc;
}

/* 1 when the real path `real` lies under a root. */
static int under_root(const code_finder *f, const char *real)
{
	size_t i, l;

	for (i = 0; i < f->nr_roots; i++) {
		l = strlen(f->roots[i]);
		if (!strncmp(real, f->roots[i], l) && (real[l] == '/' || (l == 1 && real[0] == '/')))
			return 1;
	}
	return 0;
}

int code_source(void *ctx, const char *file, unsigned first, unsigned last, char ***lines)
{
	code_finder *f = ctx;
	char real[PATH_MAX];
	struct stat st;

	*lines = NULL;
	if (!f->nr_roots || !file || file[0] != '/' || !realpath(file, real) ||
	    !under_root(f, real) || stat(real, &st) < 0 || !S_ISREG(st.st_mode))
		return 1;
	return an_source_lines(real, first, last, lines) < 0 ? 1 : 0;
}
