/* tokens.c - the token file and constant-time token checks. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/tokens.h"

#define TOK_MAX 1024
#define TOK_MAX_LEN 256

struct tokens {
	size_t n;
	char *value[TOK_MAX];
	int role[TOK_MAX];
	int reads_need_token;
	int protect_metrics;
};

void tok_free(tokens *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free(t->value[i]);
	free(t);
}

tokens *tok_load(const char *path, char *err, size_t errlen)
{
	tokens *t = calloc(1, sizeof(*t));
	FILE *fp = fopen(path, "r");
	char line[1024];
	unsigned lineno = 0;

	if (!t || !fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	while (fgets(line, sizeof(line), fp)) {
		char tok[TOK_MAX_LEN + 1], role[32], extra[2];
		int n;

		lineno++;
		if (strchr(line, '#'))
			*strchr(line, '#') = 0;
		n = sscanf(line, "%256s %31s %1s", tok, role, extra);
		if (n <= 0)
			continue;
		if (n == 1 && !strcmp(tok, "require-read-token")) {
			t->reads_need_token = 1;
			continue;
		}
		if (n == 1 && !strcmp(tok, "protect-metrics")) {
			t->protect_metrics = 1;
			continue;
		}
		if (n != 2 || t->n >= TOK_MAX || strlen(tok) >= TOK_MAX_LEN) {
			snprintf(err, errlen, "%s:%u: want TOKEN ROLE", path, lineno);
			goto fail;
		}
		if (!strcmp(role, "read"))
			t->role[t->n] = TOK_READ;
		else if (!strcmp(role, "write"))
			t->role[t->n] = TOK_WRITE;
		else if (!strcmp(role, "admin"))
			t->role[t->n] = TOK_ADMIN;
		else {
			snprintf(err, errlen, "%s:%u: role is read, write or admin", path, lineno);
			goto fail;
		}
		t->value[t->n++] = strdup(tok);
	}
	fclose(fp);
	return t;
fail:
	if (fp)
		fclose(fp);
	tok_free(t);
	return NULL;
}

/* Compares every byte of a fixed-size window so the time does not tell
 * how much of a token was right. */
static int same(const char *a, const char *b)
{
	unsigned char diff = 0;
	size_t la = strlen(a), lb = strlen(b), i;

	for (i = 0; i < TOK_MAX_LEN; i++) {
		unsigned char x = i < la ? (unsigned char)a[i] : 0;
		unsigned char y = i < lb ? (unsigned char)b[i] : 0;
		diff |= x ^ y;
	}
	return diff == 0 && la == lb;
}

int tok_role(const tokens *t, const char *token)
{
	int role = TOK_NONE;
	size_t i;

	if (!token || strlen(token) >= TOK_MAX_LEN)
		return TOK_NONE;
	for (i = 0; i < t->n; i++)
		if (same(t->value[i], token) && t->role[i] > role)
			role = t->role[i];
	return role;
}

int tok_reads_need_token(const tokens *t)
{
	return t->reads_need_token;
}

int tok_protects_metrics(const tokens *t)
{
	return t->protect_metrics;
}
