/* options.c - option table, defaults, the config file and the command line. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

#define DEFAULT_MAX_UPLOAD (8ULL << 30)	/* 8 GiB */
#define DEFAULT_QUEUE_SIZE 1024
#define DEFAULT_MAX_DEBUGINFO (4ULL << 30)	/* 4 GiB: big C++ debug files */

enum opt_type { OPT_STR, OPT_U64, OPT_UINT, OPT_BOOL, OPT_LISTEN, OPT_WATCH };

struct opt {
	const char *name;
	enum opt_type type;
	size_t off;
	uint64_t min, max;
	const char *help;
};

#define F(field) offsetof(cfg, field)
static const struct opt opts[] = {
	{ "listen", OPT_LISTEN, 0, 0, 0, "ADDR:PORT to listen on (127.0.0.1:8080)" },
	{ "db", OPT_STR, F(db_path), 0, 0, "SQLite database path" },
	{ "spool", OPT_STR, F(spool_dir), 0, 0, "directory holding uploaded originals" },
	{ "watch", OPT_WATCH, 0, 0, 0, "ingest files appearing in DIR (repeatable)" },
	{ "watch-remove", OPT_BOOL, F(watch_remove), 0, 1, "remove watched files once spooled" },
	{ "workers", OPT_UINT, F(workers), 1, 256, "parser threads (number of CPUs)" },
	{ "queue-size", OPT_UINT, F(queue_size), 1, 1000000, "bounded job queue length" },
	{ "web-root", OPT_STR, F(web_root), 0, 0, "directory of the web page" },
	{ "token-file", OPT_STR, F(token_file), 0, 0, "file of access tokens" },
	{ "max-upload", OPT_U64, F(max_upload), 1, UINT64_MAX, "largest upload in bytes" },
	{ "max-connections", OPT_UINT, F(max_connections), 1, 100000, "concurrent connections" },
	{ "debug", OPT_BOOL, F(debug), 0, 1, "debug log lines" },
	{ "max-debuginfo", OPT_U64, F(max_debuginfo), 1, UINT64_MAX, "largest debuginfo file in bytes" },
	{ "debuginfod", OPT_STR, F(debuginfod), 0, 0, "debuginfod URLs for missing symbols ($DEBUGINFOD_URLS)" },
};
#define NR_OPTS (sizeof(opts) / sizeof(opts[0]))

static int set_opt(cfg *c, const struct opt *o, const char *val, const char *where)
{
	char *end;
	unsigned long long v;

	switch (o->type) {
	case OPT_STR: {
		char **p = (char **)((char *)c + o->off);
		free(*p);
		*p = strdup(val);
		return 0;
	}
	case OPT_WATCH:
		if (c->nr_watch >= CFG_MAX_WATCH) {
			fprintf(stderr, "perfhubd: %s: at most %d --watch directories\n", where,
				CFG_MAX_WATCH);
			return -1;
		}
		c->watch[c->nr_watch++] = strdup(val);
		return 0;
	case OPT_LISTEN: {
		const char *colon = strrchr(val, ':');
		if (!colon || colon == val) {
			fprintf(stderr, "perfhubd: %s: --listen wants ADDR:PORT, got '%s'\n", where, val);
			return -1;
		}
		errno = 0;
		v = strtoull(colon + 1, &end, 10);
		if (errno || *end || v > 65535 || end == colon + 1) {
			fprintf(stderr, "perfhubd: %s: bad port in '%s'\n", where, val);
			return -1;
		}
		free(c->listen_addr);
		c->listen_addr = strndup(val, (size_t)(colon - val));
		c->listen_port = (unsigned)v;
		return 0;
	}
	case OPT_BOOL:
		if (!val || !strcmp(val, "1") || !strcmp(val, "true") || !strcmp(val, "yes"))
			v = 1;
		else if (!strcmp(val, "0") || !strcmp(val, "false") || !strcmp(val, "no"))
			v = 0;
		else {
			fprintf(stderr, "perfhubd: %s: --%s wants true or false\n", where, o->name);
			return -1;
		}
		*(int *)((char *)c + o->off) = (int)v;
		return 0;
	case OPT_U64:
	case OPT_UINT:
		errno = 0;
		v = strtoull(val, &end, 10);
		if (errno || end == val || *end || v < o->min || v > o->max) {
			fprintf(stderr, "perfhubd: %s: --%s wants a number in [%llu, %llu], got '%s'\n",
				where, o->name, (unsigned long long)o->min,
				(unsigned long long)o->max, val);
			return -1;
		}
		if (o->type == OPT_U64)
			*(uint64_t *)((char *)c + o->off) = v;
		else
			*(unsigned *)((char *)c + o->off) = (unsigned)v;
		return 0;
	}
	return -1;
}

static const struct opt *find_opt(const char *name)
{
	size_t i;

	for (i = 0; i < NR_OPTS; i++)
		if (!strcmp(opts[i].name, name))
			return &opts[i];
	return NULL;
}

/* Config file: "name = value" lines with the flags' names; '#' comments. */
static int load_file(cfg *c, const char *path)
{
	FILE *fp = fopen(path, "r");
	char line[4096], where[4200];
	unsigned lineno = 0;
	int rc = 0;

	if (!fp) {
		fprintf(stderr, "perfhubd: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (rc == 0 && fgets(line, sizeof(line), fp)) {
		char *k = line, *v, *e;
		const struct opt *o;

		lineno++;
		while (isspace((unsigned char)*k))
			k++;
		if (!*k || *k == '#')
			continue;
		e = k + strlen(k);
		while (e > k && isspace((unsigned char)e[-1]))
			*--e = 0;
		v = strchr(k, '=');
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (!v) {
			fprintf(stderr, "perfhubd: %s: expected name = value\n", where);
			rc = -1;
			break;
		}
		for (e = v; e > k && isspace((unsigned char)e[-1]);)
			*--e = 0;
		*v++ = 0;
		while (isspace((unsigned char)*v))
			v++;
		o = find_opt(k);
		if (!o) {
			fprintf(stderr, "perfhubd: %s: unknown setting '%s'\n", where, k);
			rc = -1;
			break;
		}
		rc = set_opt(c, o, v, where);
	}
	fclose(fp);
	return rc;
}

static void usage(void)
{
	size_t i;

	printf("usage: perfhubd [--config FILE] [--listen ADDR:PORT] [--db PATH] [--spool DIR]\n"
	       "                [--watch DIR]... [--workers N] [--web-root DIR] [--token-file FILE]\n"
	       "                [--max-upload BYTES]\n\n  --config FILE         settings file (name = value)\n");
	for (i = 0; i < NR_OPTS; i++)
		printf("  --%-20s%s\n", opts[i].name, opts[i].help);
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

int cfg_load(cfg *c, int argc, char **argv)
{
	struct option lopts[NR_OPTS + 3];
	const char *state = getenv("STATE_DIRECTORY");
	const char *config_path = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t i;
	int ch, idx;

	memset(c, 0, sizeof(*c));
	c->listen_addr = strdup("127.0.0.1");
	c->listen_port = 8080;
	c->workers = ncpu > 0 ? (unsigned)ncpu : 1;
	c->queue_size = DEFAULT_QUEUE_SIZE;
	c->max_upload = DEFAULT_MAX_UPLOAD;
	c->max_debuginfo = DEFAULT_MAX_DEBUGINFO;
	c->max_connections = 256;
	c->web_root = strdup(PERFHUB_DATADIR "/web");

	for (i = 0; i < NR_OPTS; i++) {
		lopts[i].name = opts[i].name;
		lopts[i].has_arg = opts[i].type == OPT_BOOL ? optional_argument : required_argument;
		lopts[i].flag = NULL;
		lopts[i].val = 0x100 + (int)i;
	}
	lopts[NR_OPTS] = (struct option){ "config", required_argument, NULL, 'c' };
	lopts[NR_OPTS + 1] = (struct option){ "help", no_argument, NULL, 'h' };
	lopts[NR_OPTS + 2] = (struct option){ NULL, 0, NULL, 0 };

	/* first pass: only --config, so flags override the file */
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+", lopts, &idx)) != -1)
		if (ch == 'c')
			config_path = optarg;
	if (config_path && load_file(c, config_path) < 0)
		return -1;

	opterr = 1;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+", lopts, &idx)) != -1) {
		if (ch == 'c')
			continue;
		if (ch == 'h') {
			usage();
			return 1;
		}
		if (ch < 0x100 || ch >= 0x100 + (int)NR_OPTS)
			return -1;
		if (set_opt(c, &opts[ch - 0x100], optarg, "command line") < 0)
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "perfhubd: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	{
		/* systemd may pass several directories, colon separated: use the first */
		char *dir = state && *state ? strndup(state, strcspn(state, ":"))
					    : strdup("./perfhub-data");
		if (!c->db_path)
			c->db_path = join(dir, "perfhub.db");
		if (!c->spool_dir)
			c->spool_dir = join(dir, "spool");
		free(dir);
	}
	return 0;
}

void cfg_free(cfg *c)
{
	unsigned i;

	free(c->listen_addr);
	free(c->db_path);
	free(c->spool_dir);
	free(c->web_root);
	free(c->token_file);
	free(c->debuginfod);
	for (i = 0; i < c->nr_watch; i++)
		free(c->watch[i]);
	memset(c, 0, sizeof(*c));
}
