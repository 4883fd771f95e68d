/* client.c - perfhub upload, ls, show, rm (being written). */
#include <stdio.h>
#include "commands.h"

static int not_yet(char **argv)
{
	fprintf(stderr, "perfhub %s: not built yet\n", argv[0]);
	return 2;
}
int cmd_upload(int argc, char **argv) { (void)argc; return not_yet(argv); }
int cmd_ls(int argc, char **argv) { (void)argc; return not_yet(argv); }
int cmd_show(int argc, char **argv) { (void)argc; return not_yet(argv); }
int cmd_rm(int argc, char **argv) { (void)argc; return not_yet(argv); }
