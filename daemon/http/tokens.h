/*
 * tokens.h - access tokens for perfhubd (--token-file).
 *
 * The file has one "TOKEN ROLE" per line, ROLE being read, write or admin;
 * '#' starts a comment; a line "require-read-token" makes API reads need
 * a token too (the page's own files never do), a line "protect-metrics"
 * makes /metrics need an admin token. Tokens are compared in constant
 * time. What each role may do: http/access.h.
 */
#ifndef PERFHUB_DAEMON_TOKENS_H
#define PERFHUB_DAEMON_TOKENS_H

#include <stddef.h>

enum tok_role { TOK_NONE = 0, TOK_READ = 1, TOK_WRITE = 2, TOK_ADMIN = 3 };

typedef struct tokens tokens;

/* Loads the file; NULL with a message in err on a bad file. */
tokens *tok_load(const char *path, char *err, size_t errlen);
void tok_free(tokens *t);
/* The role of a presented token (TOK_NONE when unknown or NULL). */
int tok_role(const tokens *t, const char *token);
int tok_reads_need_token(const tokens *t);
int tok_protects_metrics(const tokens *t);

#endif
