# cli/: perfhub, the command-line tool. inspect and collapse use the parser
# library directly, offline questions go to the profile engine (engine/feed.h
# builds a profile from a file); upload, record, ls, show and rm talk to
# perfhubd's API.
bin_PROGRAMS += cli/perfhub
cli_perfhub_SOURCES = \
	cli/perfhub.c \
	cli/commands.h \
	cli/args.c cli/args.h
# offline commands (inspect, collapse)
CLI_OFFLINE_SOURCES = cli/inspect.c cli/collapse.c
# questions about profiles - one, a selector's, or a local file's (through
# the profile engine): top, flamegraph (with the SVG writer), diff
CLI_QUESTION_SOURCES = \
	cli/qopts.c cli/qopts.h \
	cli/query.c \
	cli/diff.c cli/diff.h \
	cli/svg.c cli/svg.h
# API client commands: the HTTP plumbing (api-client), uploads and the
# debuginfo they send, CI labels, the profile summary, ls/show/rm,
# export, tag and rename, and one function's views (annotate, callers,
# callees)
CLI_CLIENT_SOURCES = \
	cli/api-client.c cli/api-client.h \
	cli/upload.c cli/upload.h \
	cli/record.c \
	cli/debuginfo-up.c cli/debuginfo-up.h \
	cli/labels.c cli/labels.h \
	cli/summary.c cli/summary.h \
	cli/profiles.c \
	cli/export.c cli/edit.c \
	cli/views.c
cli_perfhub_SOURCES += $(CLI_OFFLINE_SOURCES) $(CLI_QUESTION_SOURCES) $(CLI_CLIENT_SOURCES)
cli_perfhub_CPPFLAGS = $(AM_CPPFLAGS) $(COMMON_CPPFLAGS) $(ENGINE_CPPFLAGS)
cli_perfhub_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS) $(ELF_CFLAGS) $(PROTOBUF_C_CFLAGS)
# libcurl is opened by the first API request (lib/dynlib.h), not linked
cli_perfhub_LDADD = $(COMMON_LIBS) $(ENGINE_LIBS) $(PARSER_LIBS)
