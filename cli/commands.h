/* commands.h - the perfhub subcommands; one file each under cli/. */
#ifndef PERFHUB_CLI_COMMANDS_H
#define PERFHUB_CLI_COMMANDS_H

/* Each takes argv with argv[0] = the subcommand name; returns the exit status. */
int cmd_inspect(int argc, char **argv);
int cmd_collapse(int argc, char **argv);
int cmd_upload(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_tag(int argc, char **argv);
int cmd_rename(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_callers(int argc, char **argv);
int cmd_callees(int argc, char **argv);

#endif
