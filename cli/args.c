/* args.c - command-line helpers the perfhub subcommands share. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

const char *args_value(int argc, char **argv, int *i, const char *opt)
{
	size_t n = strlen(opt);

	if (!strncmp(argv[*i], opt, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (!strcmp(argv[*i], opt) && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

int args_parse_id(const char *s, int64_t *id)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v <= 0)
		return -1;
	*id = v;
	return 0;
}

int args_server_option(int argc, char **argv, int *i, args_server *s)
{
	const char *v;

	if ((v = args_value(argc, argv, i, "--server")))
		s->server = v;
	else if ((v = args_value(argc, argv, i, "--token-file")))
		s->token_file = v;
	else
		return 0;
	return 1;
}
