/* options.h - perfhubd's settings: one option table shared by flags and the config file. */
#ifndef PERFHUB_DAEMON_OPTIONS_H
#define PERFHUB_DAEMON_OPTIONS_H

#include <stdint.h>

#define CFG_MAX_WATCH 16
#define CFG_MAX_KEYS 64
#define CFG_MAX_LIST 16	/* values of a repeatable setting (allowed-origin ...) */

/* What this invocation does: serve, or one administrative action. */
enum cfg_action { CFG_RUN, CFG_CHECK, CFG_VACUUM, CFG_BACKUP, CFG_COPY };

typedef struct cfg {
	char *listen_addr;	/* "127.0.0.1" */
	unsigned listen_port;	/* 8080 */
	char *db_path;		/* STATE/perfhub.db */
	char *spool_dir;	/* STATE/spool, or s3://BUCKET/PREFIX */
	char *s3_endpoint;	/* an S3 spool's endpoint URL */
	char *cache_dir;	/* this node's own files of an S3 spool: STATE/cache */
	char *watch[CFG_MAX_WATCH];
	unsigned nr_watch;
	int watch_remove;	/* delete watched originals once spooled */
	unsigned workers;	/* default: number of CPUs */
	unsigned queue_size;	/* bounded job queue; full answers 503 */
	char *web_root;
	char *token_file;
	uint64_t max_upload;	/* bytes, after decoding */
	unsigned max_connections;
	int debug;		/* alias of log_level = debug */
	int log_level;		/* enum log_level (log.h) */
	unsigned shutdown_grace;	/* seconds running jobs may take after SIGTERM */
	unsigned retain_days;	/* 0 = keep profiles forever */
	uint64_t max_db_size;	/* bytes of live data; 0 = no limit */
	unsigned retention_interval;	/* seconds between retention passes */
	int action;		/* enum cfg_action */
	char *backup_path;	/* --backup FILE */
	char *copy_to;		/* --copy-to URI */
	char *copy_spool;	/* --copy-spool DIR|s3://... */
	char *config_path;	/* --config FILE, kept for SIGHUP */
	char *origin[CFG_MAX_KEYS];	/* where each key was set, see cfg_origin */
	unsigned connection_timeout;	/* seconds idle; also the grace before the upload rate floor */
	uint64_t max_debuginfo;	/* bytes of one debuginfo file */
	char *debuginfod;	/* URLs; NULL = $DEBUGINFOD_URLS */
	unsigned job_lease;	/* seconds a shared store's job stays claimed unrenewed */
	char *source_roots;	/* DIR[:DIR...] /annotate reads sources under; NULL = none */
	unsigned header_timeout;	/* seconds for a request's headers, from connect or the last answer */
	unsigned max_connections_per_ip;	/* 0 = no limit */
	unsigned max_queries;	/* heavy queries at once; more answer 503 */
	char *allowed_origin[CFG_MAX_LIST];	/* Origins besides the server's own */
	unsigned nr_allowed_origin;
	char *allowed_host[CFG_MAX_LIST];	/* Host names besides localhost and the listen address */
	unsigned nr_allowed_host;
	int local_uploads;	/* HTTP uploads are recordings of this machine */
} cfg;

/* Fills *c from defaults, then the config file (--config), then the flags.
 * Returns 0, 1 when --help was printed (exit 0), -1 on a bad option (every
 * problem printed on stderr, naming the key and the file's line). */
int cfg_load(cfg *c, int argc, char **argv);
void cfg_free(cfg *c);

/* Where `key` got its value: "FILE:LINE", "command line" or "default". */
const char *cfg_origin(const cfg *c, const char *key);

/* Parses "1024", "512K", "20M", "3G" (powers of 1024). 0 or -1. */
int cfg_parse_size(const char *s, uint64_t *out);

#endif
