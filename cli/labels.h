/*
 * labels.h - the tags an upload carries: those given with --tag and, unless
 * turned off, the CI job's labels (commit, branch, job, run, runner) read
 * from the variables GitHub Actions, GitLab CI, Jenkins and Buildkite set.
 * A --tag of the same key overrides a CI label.
 */
#ifndef PERFHUB_CLI_LABELS_H
#define PERFHUB_CLI_LABELS_H

#include <stddef.h>

#define LB_MAX_TAGS 32		/* the server's limit per profile */
#define LB_MAX_KEY 64
#define LB_MAX_VALUE 256	/* longer CI values are refused, not cut */

typedef struct lb_set lb_set;

lb_set *lb_new(void);
void lb_free(lb_set *s);

/* A --tag KEY=VALUE: replaces a CI label or earlier tag of that key.
 * -1 (message printed, naming `who`) when it is not KEY=VALUE within the
 * limits or there are too many. */
int lb_add_tag(lb_set *s, const char *kv, const char *who);

/* Adds the CI labels the environment defines, under the tags already
 * given (a --tag wins). Returns the CI's name, or NULL outside a CI. */
const char *lb_add_ci(lb_set *s, const char *who);

size_t lb_count(const lb_set *s);
const char *lb_key(const lb_set *s, size_t i);
const char *lb_value(const lb_set *s, size_t i);

#endif
