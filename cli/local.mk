# cli/: perfhub, the command-line tool. inspect and collapse use the parser
# library directly; upload, ls, show and rm talk to perfhubd's API.
bin_PROGRAMS += cli/perfhub
cli_perfhub_SOURCES = \
	cli/perfhub.c \
	cli/commands.h
# offline commands (inspect, collapse)
CLI_OFFLINE_SOURCES = cli/inspect.c cli/collapse.c
# API client commands (upload, ls, show, rm)
CLI_CLIENT_SOURCES = cli/client.c
cli_perfhub_SOURCES += $(CLI_OFFLINE_SOURCES) $(CLI_CLIENT_SOURCES)
cli_perfhub_CPPFLAGS = $(AM_CPPFLAGS) $(COMMON_CPPFLAGS)
cli_perfhub_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS) $(ELF_CFLAGS)
cli_perfhub_LDADD = $(COMMON_LIBS) $(PARSER_LIBS) $(CURL_LIBS)
