/* perfhub.c - the command-line tool: dispatch to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "commands.h"

struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *usage;
};

static const struct command commands[] = {
	{"inspect", cmd_inspect, "inspect FILE [--json]            parse a perf.data file or directory"},
	{"collapse", cmd_collapse, "collapse FILE [options]          print folded stacks"},
	{"upload", cmd_upload, "upload PATH|- [options]          send a recording to a server"},
	{"record", cmd_record, "record [options] -- COMMAND...   record COMMAND with perf, streamed to a server"},
	{"ls", cmd_ls, "ls [SELECTOR] [--since T] [...]   list profiles on a server"},
	{"show", cmd_show, "show ID                          one profile's details"},
	{"rm", cmd_rm, "rm ID                            delete a profile"},
	{"top", cmd_top, "top ID|SELECTOR|FILE [options]   functions by self and total share"},
	{"flamegraph", cmd_flamegraph, "flamegraph ID|SELECTOR|FILE [--svg] a flame graph (JSON, or SVG for CI)"},
	{"diff", cmd_diff, "diff BASE TARGET [--fail-over P] ranked regressions; exit 1 on one"},
	{"export", cmd_export, "export ID|SELECTOR|FILE --format F [-o OUT] as pprof, speedscope, folded or json"},
	{"tag", cmd_tag, "tag ID KEY=VALUE... [KEY-]...    set or remove a profile's tags"},
	{"rename", cmd_rename, "rename ID NAME                   rename a profile"},
	{"annotate", cmd_annotate, "annotate FILE|ID FUNCTION [opts] a function's code and source lines with their samples"},
	{"callers", cmd_callers, "callers FILE|ID FUNCTION [opts]  who calls a function (inverted call tree)"},
	{"callees", cmd_callees, "callees FILE|ID FUNCTION [opts]  what a function calls (call tree)"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: perfhub COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %s\n", commands[i].usage);
	fprintf(out, "\n'perfhub COMMAND --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("perfhub %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "perfhub: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
