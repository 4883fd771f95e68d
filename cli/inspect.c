/* inspect.c - perfhub inspect (being written). */
#include <stdio.h>
#include "commands.h"

int cmd_inspect(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "perfhub %s: not built yet\n", argv[0]);
	return 2;
}
