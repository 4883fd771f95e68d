/* args.h - command-line helpers the perfhub subcommands share. */
#ifndef PERFHUB_CLI_ARGS_H
#define PERFHUB_CLI_ARGS_H

#include <stdint.h>

/* The value of option `opt` at argv[*i], as "--opt=VALUE" or "--opt VALUE"
 * (then *i moves past VALUE); NULL when argv[*i] is not that option. */
const char *args_value(int argc, char **argv, int *i, const char *opt);

/* A profile id: a positive decimal integer. 0, or -1 when s is not one. */
int args_parse_id(const char *s, int64_t *id);

/* The options every command that talks to a server takes. */
typedef struct args_server {
	const char *server;	/* --server URL */
	const char *token_file;	/* --token-file FILE */
} args_server;

/* 1 when argv[*i] is --server or --token-file (stored in *s), else 0. */
int args_server_option(int argc, char **argv, int *i, args_server *s);

#endif
