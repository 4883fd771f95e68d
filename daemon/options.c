/* options.c - option table, defaults, the config file and the command line. */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "options.h"

#define DEFAULT_MAX_UPLOAD (8ULL << 30)	/* 8 GiB */
#define DEFAULT_QUEUE_SIZE 1024
#define DEFAULT_SHUTDOWN_GRACE 30	/* below the unit's TimeoutStopSec=60 */
#define DEFAULT_RETENTION_INTERVAL 3600
#define DEFAULT_MAX_DEBUGINFO (4ULL << 30)	/* 4 GiB: big C++ debug files */
#define USAGE_COLUMN 28		/* where --help's descriptions start */
#define DEFAULT_JOB_LEASE 30		/* seconds */

enum opt_type {
	OPT_STR, OPT_U64, OPT_UINT, OPT_BOOL, OPT_LISTEN, OPT_WATCH, OPT_SIZE, OPT_LEVEL,
	OPT_CONFIG, OPT_ACTION, OPT_BACKUP, OPT_LIST,
};

struct opt {
	const char *name;
	enum opt_type type;
	size_t off;		/* OPT_LIST: the array; its count follows it */
	uint64_t min, max;	/* OPT_ACTION: min is the enum cfg_action */
	int cli_only;		/* an action, not a setting: no config file key */
	const char *arg;	/* the value's name in --help, NULL for none */
	const char *help;
};

#define F(field) offsetof(cfg, field)
static const struct opt opts[] = {
	{ "config", OPT_CONFIG, 0, 0, 0, 1, "FILE", "settings file (name = value lines)" },
	{ "listen", OPT_LISTEN, 0, 0, 0, 0, "ADDR:PORT", "address to listen on (127.0.0.1:8080)" },
	{ "db", OPT_STR, F(db_path), 0, 0, 0, "PATH|URI",
	  "SQLite database ($STATE_DIRECTORY/perfhub.db), or a postgresql:// URI" },
	{ "spool", OPT_STR, F(spool_dir), 0, 0, 0, "DIR|s3://BUCKET/PREFIX",
	  "where uploaded originals are kept ($STATE_DIRECTORY/spool); several nodes may share it" },
	{ "s3-endpoint", OPT_STR, F(s3_endpoint), 0, 0, 0, "URL",
	  "the S3-compatible service of an s3:// spool (credentials: AWS_* variables)" },
	{ "cache-dir", OPT_STR, F(cache_dir), 0, 0, 0, "DIR",
	  "this node's copies of an s3:// spool's files ($STATE_DIRECTORY/cache)" },
	{ "watch", OPT_WATCH, 0, 0, 0, 0, "DIR", "ingest files appearing in DIR (repeatable)" },
	{ "watch-remove", OPT_BOOL, F(watch_remove), 0, 1, 0, NULL,
	  "remove watched files once spooled" },
	{ "workers", OPT_UINT, F(workers), 1, 256, 0, "N", "parser threads (number of CPUs)" },
	{ "queue-size", OPT_UINT, F(queue_size), 1, 1000000, 0, "N",
	  "bounded job queue length (1024)" },
	{ "web-root", OPT_STR, F(web_root), 0, 0, 0, "DIR", "directory of the web page" },
	{ "token-file", OPT_STR, F(token_file), 0, 0, 0, "FILE", "file of access tokens" },
	{ "max-upload", OPT_SIZE, F(max_upload), 1, UINT64_MAX, 0, "SIZE",
	  "largest upload, bytes or K/M/G (8G)" },
	{ "max-connections", OPT_UINT, F(max_connections), 1, 100000, 0, "N",
	  "concurrent connections (1024)" },
	{ "log-level", OPT_LEVEL, F(log_level), 0, 0, 0, "LEVEL",
	  "debug, info, warn or error (info)" },
	{ "debug", OPT_BOOL, F(debug), 0, 1, 0, NULL, "same as --log-level debug" },
	{ "shutdown-grace", OPT_UINT, F(shutdown_grace), 0, 3600, 0, "SECONDS",
	  "on SIGTERM, time running jobs get to finish before they are requeued (30)" },
	{ "retain-days", OPT_UINT, F(retain_days), 0, 36500, 0, "N",
	  "delete profiles uploaded more than N days ago (0: keep)" },
	{ "max-db-size", OPT_SIZE, F(max_db_size), 0, UINT64_MAX, 0, "SIZE",
	  "delete the oldest profiles while database, spool and debuginfo exceed SIZE (0: no limit)" },
	{ "retention-interval", OPT_UINT, F(retention_interval), 1, 86400, 0, "N",
	  "seconds between retention passes (3600; also after each ingest)" },
	{ "check-config", OPT_ACTION, 0, CFG_CHECK, 0, 1, NULL,
	  "validate the configuration and flags, then exit (0 ok, 1 errors)" },
	{ "vacuum", OPT_ACTION, 0, CFG_VACUUM, 0, 1, NULL, "compact the database, then exit" },
	{ "backup", OPT_BACKUP, F(backup_path), CFG_BACKUP, 0, 1, "FILE",
	  "copy the database to FILE (online backup, safe while perfhubd runs), then exit" },
	{ "connection-timeout", OPT_UINT, F(connection_timeout), 1, 3600, 0, "SECONDS",
	  "seconds a connection may idle; uploads slower than 1 KiB/s are cut after it (60)" },
	{ "max-debuginfo", OPT_SIZE, F(max_debuginfo), 1, UINT64_MAX, 0, "SIZE",
	  "largest debuginfo file, bytes or K/M/G (4G)" },
	{ "debuginfod", OPT_STR, F(debuginfod), 0, 0, 0, "URLS",
	  "debuginfod URLs for missing symbols ($DEBUGINFOD_URLS)" },
	{ "copy-to", OPT_BACKUP, F(copy_to), CFG_COPY, 0, 1, "URI",
	  "copy the SQLite store (--db) into an empty postgresql:// store, then exit" },
	{ "copy-spool", OPT_STR, F(copy_spool), 0, 0, 1, "DIR|s3://BUCKET/PREFIX",
	  "with --copy-to: copy the spool's files there too (else --spool stays the spool)" },
	{ "job-lease", OPT_UINT, F(job_lease), 1, 86400, 0, "SECONDS",
	  "PostgreSQL: a job whose node stops renewing it is taken over after this (30)" },
	{ "source-root", OPT_STR, F(source_roots), 0, 0, 0, "DIR[:DIR...]",
	  "directories /annotate may show source files from (none)" },
	{ "header-timeout", OPT_UINT, F(header_timeout), 1, 3600, 0, "SECONDS",
	  "time a client has for a request's headers (10)" },
	{ "max-connections-per-ip", OPT_UINT, F(max_connections_per_ip), 0, 100000, 0, "N",
	  "concurrent connections from one address (128; 0: no limit)" },
	{ "max-queries", OPT_UINT, F(max_queries), 1, 1024, 0, "N",
	  "flame graphs, diffs and other heavy queries at once; more answer 503 (2 per CPU, >= 4)" },
	{ "allowed-origin", OPT_LIST, F(allowed_origin), 0, 0, 0, "ORIGIN",
	  "a browser Origin allowed besides the server's own (repeatable; * for any)" },
	{ "allowed-host", OPT_LIST, F(allowed_host), 0, 0, 0, "HOST",
	  "a Host name served besides localhost and the listen address (repeatable; * for any)" },
	{ "local-uploads", OPT_BOOL, F(local_uploads), 0, 1, 0, NULL,
	  "symbolize uploads as perf would on this machine (off: its files by build-id only)" },
};
#define NR_OPTS (sizeof(opts) / sizeof(opts[0]))

_Static_assert(NR_OPTS <= CFG_MAX_KEYS, "cfg.origin is too small");
_Static_assert(offsetof(cfg, nr_allowed_origin) == offsetof(cfg, allowed_origin) +
	       sizeof(((cfg *)0)->allowed_origin), "an OPT_LIST's count follows its array");
_Static_assert(offsetof(cfg, nr_allowed_host) == offsetof(cfg, allowed_host) +
	       sizeof(((cfg *)0)->allowed_host), "an OPT_LIST's count follows its array");

int cfg_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 0:
		break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -1;
	}
	/* "20M" and "20MB"/"20MiB" alike */
	if (shift && (!strcmp(end, "B") || !strcmp(end, "iB")))
		end += strlen(end);
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* "ADDR:PORT", ADDR an IPv4 address or an IPv6 one ("[::1]:8080"). */
static int parse_listen(cfg *c, const char *val, const char **why)
{
	const char *colon = strrchr(val, ':');
	char host[128], *end;
	unsigned long long v;
	unsigned char buf[16];
	size_t n;

	if (!colon || colon == val) {
		*why = "wants ADDR:PORT";
		return -1;
	}
	errno = 0;
	v = strtoull(colon + 1, &end, 10);
	if (errno || *end || v > 65535 || end == colon + 1) {
		*why = "bad port";
		return -1;
	}
	n = (size_t)(colon - val);
	if (n >= sizeof(host)) {
		*why = "address too long";
		return -1;
	}
	memcpy(host, val, n);
	host[n] = 0;
	if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
		host[n - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, buf) != 1) {
			*why = "not an IPv6 address";
			return -1;
		}
	} else if (strchr(host, ':') ? inet_pton(AF_INET6, host, buf) != 1
				     : inet_pton(AF_INET, host, buf) != 1) {
		*why = "not an IPv4 or [IPv6] address";
		return -1;
	}
	free(c->listen_addr);
	c->listen_addr = strndup(val, n);
	c->listen_port = (unsigned)v;
	return 0;
}

/* Sets one option. `where` is "FILE:LINE" or "command line"; errors name it
 * and the key. */
static int set_opt(cfg *c, const struct opt *o, const char *val, const char *where)
{
	char *end;
	unsigned long long v;
	uint64_t size;
	const char *why = NULL;
	int lvl;

	switch (o->type) {
	case OPT_CONFIG:
		return 0;	/* read before everything else */
	case OPT_ACTION:
	case OPT_BACKUP:
		if (c->action != CFG_RUN && c->action != (int)o->min) {
			fprintf(stderr, "perfhubd: %s: %s: only one of --check-config, --vacuum,"
				" --backup and --copy-to at a time\n", where, o->name);
			return -1;
		}
		c->action = (int)o->min;
		if (o->type == OPT_BACKUP) {
			char **p = (char **)((char *)c + o->off);

			free(*p);
			*p = strdup(val);
		}
		return 0;
	case OPT_STR: {
		char **p = (char **)((char *)c + o->off);
		if (!*val) {
			fprintf(stderr, "perfhubd: %s: %s: wants a value\n", where, o->name);
			return -1;
		}
		free(*p);
		*p = strdup(val);
		return 0;
	}
	case OPT_WATCH:
		if (c->nr_watch >= CFG_MAX_WATCH) {
			fprintf(stderr, "perfhubd: %s: watch: at most %d directories\n", where,
				CFG_MAX_WATCH);
			return -1;
		}
		c->watch[c->nr_watch++] = strdup(val);
		return 0;
	case OPT_LIST: {
		char **list = (char **)((char *)c + o->off);
		unsigned *n = (unsigned *)(list + CFG_MAX_LIST);
		if (!*val || strlen(val) > 255) {
			fprintf(stderr, "perfhubd: %s: %s: wants a value of 1 to 255 bytes\n", where,
				o->name);
			return -1;
		}
		if (*n >= CFG_MAX_LIST) {
			fprintf(stderr, "perfhubd: %s: %s: at most %d values\n", where, o->name,
				CFG_MAX_LIST);
			return -1;
		}
		list[(*n)++] = strdup(val);
		return 0;
	}
	case OPT_LISTEN:
		if (parse_listen(c, val, &why) < 0) {
			fprintf(stderr, "perfhubd: %s: listen: %s, got '%s'\n", where, why, val);
			return -1;
		}
		return 0;
	case OPT_LEVEL:
		lvl = log_level_parse(val);
		if (lvl < 0) {
			fprintf(stderr, "perfhubd: %s: log-level: wants debug, info, warn or error,"
				" got '%s'\n", where, val);
			return -1;
		}
		c->log_level = lvl;
		return 0;
	case OPT_BOOL:
		if (!val || !strcmp(val, "1") || !strcmp(val, "true") || !strcmp(val, "yes"))
			v = 1;
		else if (!strcmp(val, "0") || !strcmp(val, "false") || !strcmp(val, "no"))
			v = 0;
		else {
			fprintf(stderr, "perfhubd: %s: %s: wants true or false, got '%s'\n", where,
				o->name, val);
			return -1;
		}
		*(int *)((char *)c + o->off) = (int)v;
		return 0;
	case OPT_SIZE:
		if (cfg_parse_size(val, &size) < 0 || size < o->min || size > o->max) {
			fprintf(stderr, "perfhubd: %s: %s: wants a size (bytes, or with a K, M, G"
				" suffix)%s, got '%s'\n", where, o->name,
				o->min ? " above 0" : "", val);
			return -1;
		}
		*(uint64_t *)((char *)c + o->off) = size;
		return 0;
	case OPT_U64:
	case OPT_UINT:
		errno = 0;
		v = strtoull(val, &end, 10);
		if (errno || end == val || *end || *val == '-' || v < o->min || v > o->max) {
			fprintf(stderr, "perfhubd: %s: %s: wants a number in [%llu, %llu], got '%s'\n",
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

static void set_origin(cfg *c, const struct opt *o, const char *where)
{
	size_t i = (size_t)(o - opts);

	free(c->origin[i]);
	c->origin[i] = strdup(where);
}

/* Config file: "name = value" lines with the flags' names; '#' comments.
 * Goes on after a bad line so that every problem is reported at once. */
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
	while (fgets(line, sizeof(line), fp)) {
		char *k = line, *v, *e;
		const struct opt *o;

		lineno++;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (!strchr(line, '\n') && !feof(fp)) {
			int ch;
			fprintf(stderr, "perfhubd: %s: line longer than %zu bytes\n", where,
				sizeof(line) - 2);
			while ((ch = fgetc(fp)) != EOF && ch != '\n')
				;
			rc = -1;
			continue;
		}
		while (isspace((unsigned char)*k))
			k++;
		if (!*k || *k == '#')
			continue;
		e = k + strlen(k);
		while (e > k && isspace((unsigned char)e[-1]))
			*--e = 0;
		v = strchr(k, '=');
		if (!v) {
			fprintf(stderr, "perfhubd: %s: expected name = value, got '%s'\n", where, k);
			rc = -1;
			continue;
		}
		for (e = v; e > k && isspace((unsigned char)e[-1]);)
			*--e = 0;
		*v++ = 0;
		while (isspace((unsigned char)*v))
			v++;
		o = find_opt(k);
		if (!o) {
			fprintf(stderr, "perfhubd: %s: %s: unknown key\n", where, k);
			rc = -1;
			continue;
		}
		if (o->cli_only) {
			fprintf(stderr, "perfhubd: %s: %s: only on the command line\n", where, k);
			rc = -1;
			continue;
		}
		if (set_opt(c, o, v, where) < 0)
			rc = -1;
		else
			set_origin(c, o, where);
	}
	fclose(fp);
	return rc;
}

static void usage(void)
{
	char left[64];
	size_t i;

	printf("usage: perfhubd [OPTION]...\n"
	       "The perfhub profile server: stores perf.data uploads, parses them and serves\n"
	       "flame graphs. Every option can also be a 'name = value' line of --config.\n\n");
	for (i = 0; i < NR_OPTS; i++) {
		snprintf(left, sizeof(left), "--%s%s%s", opts[i].name, opts[i].arg ? " " : "",
			 opts[i].arg ? opts[i].arg : "");
		/* a name wider than its column gets a line of its own */
		if (strlen(left) >= USAGE_COLUMN)
			printf("  %s\n  %-*s%s\n", left, USAGE_COLUMN, "", opts[i].help);
		else
			printf("  %-*s%s\n", USAGE_COLUMN, left, opts[i].help);
	}
	printf("  %-*s%s\n", USAGE_COLUMN, "--help", "this text");
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* The folder holding `path` ("." for a bare name). */
static char *parent_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* Whether dir holds the page (its index.html). */
static int has_page(const char *dir)
{
	char *index = join(dir, "index.html");
	int ok = index && access(index, R_OK) == 0;

	free(index);
	return ok;
}

/*
 * The page's folder when --web-root is not given: web/ beside the program's
 * folder (a build tree: daemon/perfhubd and web/), the source tree's web/
 * when this is the build tree's program of an out-of-tree build, else the
 * installed copy.
 */
static char *default_web_root(void)
{
	char exe[4096], *dir, *beside;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = 0;
		dir = parent_dir(exe);
		beside = dir ? join(dir, "../web") : NULL;
		free(dir);
		if (beside && has_page(beside))
			return beside;
		free(beside);
#if defined(PERFHUB_BUILD_PROGRAM) && defined(PERFHUB_SOURCE_WEB)
		if (!strcmp(exe, PERFHUB_BUILD_PROGRAM) && has_page(PERFHUB_SOURCE_WEB))
			return strdup(PERFHUB_SOURCE_WEB);
#endif
	}
	return strdup(PERFHUB_DATADIR "/web");
}

int cfg_load(cfg *c, int argc, char **argv)
{
	struct option lopts[NR_OPTS + 2];
	const char *state = getenv("STATE_DIRECTORY");
	const char *config_path = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t i;
	int ch, idx, rc = 0;

	memset(c, 0, sizeof(*c));
	c->listen_addr = strdup("127.0.0.1");
	c->listen_port = 8080;
	c->workers = ncpu > 0 ? (unsigned)ncpu : 1;
	c->queue_size = DEFAULT_QUEUE_SIZE;
	c->max_upload = DEFAULT_MAX_UPLOAD;
	c->max_debuginfo = DEFAULT_MAX_DEBUGINFO;
	c->max_connections = 1024;
	c->max_connections_per_ip = 128;
	c->connection_timeout = 60;
	c->header_timeout = 10;
	c->max_queries = ncpu > 2 ? 2 * (unsigned)ncpu : 4;
	c->log_level = LL_INFO;
	c->shutdown_grace = DEFAULT_SHUTDOWN_GRACE;
	c->retention_interval = DEFAULT_RETENTION_INTERVAL;
	c->job_lease = DEFAULT_JOB_LEASE;

	for (i = 0; i < NR_OPTS; i++) {
		lopts[i].name = opts[i].name;
		lopts[i].has_arg = opts[i].type == OPT_BOOL ? optional_argument
				   : opts[i].arg ? required_argument : no_argument;
		lopts[i].flag = NULL;
		lopts[i].val = 0x100 + (int)i;
	}
	lopts[NR_OPTS] = (struct option){ "help", no_argument, NULL, 'h' };
	lopts[NR_OPTS + 1] = (struct option){ NULL, 0, NULL, 0 };

	/* first pass: only --config, so flags override the file */
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+", lopts, &idx)) != -1)
		if (ch >= 0x100 && opts[ch - 0x100].type == OPT_CONFIG)
			config_path = optarg;
	if (config_path) {
		c->config_path = strdup(config_path);
		if (load_file(c, config_path) < 0)
			rc = -1;
	}

	opterr = 1;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+", lopts, &idx)) != -1) {
		if (ch == 'h') {
			usage();
			return 1;
		}
		if (ch < 0x100 || ch >= 0x100 + (int)NR_OPTS) {
			rc = -1;
			continue;
		}
		if (set_opt(c, &opts[ch - 0x100], optarg, "command line") < 0)
			rc = -1;
		else
			set_origin(c, &opts[ch - 0x100], "command line");
	}
	if (optind < argc) {
		fprintf(stderr, "perfhubd: unexpected argument '%s'\n", argv[optind]);
		rc = -1;
	}
	if (c->debug)
		c->log_level = LL_DEBUG;
	{
		/* systemd may pass several directories, colon separated: use the
		 * first; an SQLite --db without --spool keeps the spool beside
		 * the database */
		char *dir = state && *state ? strndup(state, strcspn(state, ":"))
					    : strdup("./perfhub-data");
		/* (a postgresql:// store is no directory: the spool stays in
		 * the state directory) */
		char *db_dir = c->db_path && strncmp(c->db_path, "postgresql://", 13) &&
			       strncmp(c->db_path, "postgres://", 11) ? parent_dir(c->db_path) : NULL;

		if (!c->db_path)
			c->db_path = join(dir, "perfhub.db");
		if (!c->spool_dir)
			c->spool_dir = join(db_dir ? db_dir : dir, "spool");
		free(db_dir);
		if (!c->cache_dir)
			c->cache_dir = join(dir, "cache");
		free(dir);
	}
	if (!c->web_root)
		c->web_root = default_web_root();
	return rc;
}

const char *cfg_origin(const cfg *c, const char *key)
{
	const struct opt *o = find_opt(key);

	if (!o || !c->origin[o - opts])
		return "default";
	return c->origin[o - opts];
}

void cfg_free(cfg *c)
{
	unsigned i;

	free(c->listen_addr);
	free(c->db_path);
	free(c->spool_dir);
	free(c->s3_endpoint);
	free(c->cache_dir);
	free(c->web_root);
	free(c->token_file);
	free(c->backup_path);
	free(c->copy_to);
	free(c->copy_spool);
	free(c->config_path);
	free(c->debuginfod);
	free(c->source_roots);
	for (i = 0; i < c->nr_watch; i++)
		free(c->watch[i]);
	for (i = 0; i < c->nr_allowed_origin; i++)
		free(c->allowed_origin[i]);
	for (i = 0; i < c->nr_allowed_host; i++)
		free(c->allowed_host[i]);
	for (i = 0; i < CFG_MAX_KEYS; i++)
		free(c->origin[i]);
	memset(c, 0, sizeof(*c));
}
