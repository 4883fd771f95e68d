/*
 * labels.c - the tags an upload carries: --tag and the CI job's labels.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "labels.h"

#define LB_HOST_MAX 256

typedef struct lb_tag {
	char key[LB_MAX_KEY + 1];
	char value[LB_MAX_VALUE + 1];
} lb_tag;

struct lb_set {
	lb_tag v[LB_MAX_TAGS];
	size_t n;
};

/* Where each CI keeps a label: the variables tried in order (the first one
 * set and non-empty wins). `strip` prefixes are dropped from the value. */
typedef struct ci_var {
	const char *key;
	const char *vars[3];
	const char *strip[2];
} ci_var;

typedef struct ci_kind {
	const char *name;
	const char *marker;	/* set (non-empty) in this CI's jobs */
	ci_var labels[5];
} ci_kind;

/* GitHub's GITHUB_HEAD_REF (and GitLab's merge request branch, Jenkins's
 * CHANGE_BRANCH) name the branch a pull request comes from: the build's own
 * ref is a merge ref there. */
static const ci_kind ci_kinds[] = {
	{ "GitHub Actions", "GITHUB_ACTIONS", {
		{ "commit", { "GITHUB_SHA" }, { NULL } },
		{ "branch", { "GITHUB_HEAD_REF", "GITHUB_REF_NAME" }, { NULL } },
		{ "job", { "GITHUB_JOB" }, { NULL } },
		{ "run", { "GITHUB_RUN_ID" }, { NULL } },
		{ "runner", { "RUNNER_NAME" }, { NULL } } } },
	{ "GitLab CI", "GITLAB_CI", {
		{ "commit", { "CI_COMMIT_SHA" }, { NULL } },
		{ "branch", { "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_COMMIT_REF_NAME" },
		  { NULL } },
		{ "job", { "CI_JOB_NAME" }, { NULL } },
		{ "run", { "CI_PIPELINE_ID" }, { NULL } },
		{ "runner", { "CI_RUNNER_DESCRIPTION" }, { NULL } } } },
	{ "Buildkite", "BUILDKITE", {
		{ "commit", { "BUILDKITE_COMMIT" }, { NULL } },
		{ "branch", { "BUILDKITE_BRANCH" }, { NULL } },
		{ "job", { "BUILDKITE_LABEL", "BUILDKITE_STEP_KEY" }, { NULL } },
		{ "run", { "BUILDKITE_BUILD_NUMBER" }, { NULL } },
		{ "runner", { "BUILDKITE_AGENT_NAME" }, { NULL } } } },
	{ "Jenkins", "JENKINS_URL", {
		{ "commit", { "GIT_COMMIT" }, { NULL } },
		{ "branch", { "CHANGE_BRANCH", "BRANCH_NAME", "GIT_BRANCH" },
		  { "origin/", "refs/heads/" } },
		{ "job", { "JOB_NAME" }, { NULL } },
		{ "run", { "BUILD_NUMBER" }, { NULL } },
		{ "runner", { "NODE_NAME" }, { NULL } } } },
};

lb_set *lb_new(void)
{
	return calloc(1, sizeof(lb_set));
}

void lb_free(lb_set *s)
{
	free(s);
}

size_t lb_count(const lb_set *s)
{
	return s->n;
}

const char *lb_key(const lb_set *s, size_t i)
{
	return i < s->n ? s->v[i].key : NULL;
}

const char *lb_value(const lb_set *s, size_t i)
{
	return i < s->n ? s->v[i].value : NULL;
}

/* No control characters: a value comes from the environment or the
 * command line and ends up in messages and on the page. */
static int printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

static lb_tag *find(lb_set *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].key, key))
			return &s->v[i];
	return NULL;
}

/* key and value already checked; replace says whether an existing key is
 * overwritten (a --tag) or kept (a CI label under a --tag). */
static int put(lb_set *s, const char *key, size_t klen, const char *value, int replace)
{
	char k[LB_MAX_KEY + 1];
	lb_tag *t;

	memcpy(k, key, klen);
	k[klen] = 0;
	if ((t = find(s, k))) {
		if (replace)
			snprintf(t->value, sizeof(t->value), "%s", value);
		return 0;
	}
	if (s->n >= LB_MAX_TAGS)
		return -1;
	t = &s->v[s->n++];
	memcpy(t->key, k, klen + 1);
	snprintf(t->value, sizeof(t->value), "%s", value);
	return 0;
}

int lb_add_tag(lb_set *s, const char *kv, const char *who)
{
	const char *eq = strchr(kv, '=');
	size_t klen = eq ? (size_t)(eq - kv) : 0;

	if (!eq || !klen || klen > LB_MAX_KEY || strlen(eq + 1) > LB_MAX_VALUE ||
	    !printable(kv)) {
		fprintf(stderr, "perfhub %s: --tag wants KEY=VALUE (a key of 1-%d characters, "
			"a value of at most %d, no control characters)\n", who, LB_MAX_KEY,
			LB_MAX_VALUE);
		return -1;
	}
	if (put(s, kv, klen, eq + 1, 1) < 0) {
		fprintf(stderr, "perfhub %s: at most %d tags\n", who, LB_MAX_TAGS);
		return -1;
	}
	return 0;
}

static const char *env_value(const ci_var *v)
{
	const char *s;
	size_t i, n;

	for (i = 0; i < 3 && v->vars[i]; i++) {
		s = getenv(v->vars[i]);
		if (!s || !*s)
			continue;
		for (n = 0; n < 2 && v->strip[n]; n++)
			if (!strncmp(s, v->strip[n], strlen(v->strip[n])))
				s += strlen(v->strip[n]);
		if (*s)
			return s;
	}
	return NULL;
}

const char *lb_add_ci(lb_set *s, const char *who)
{
	const ci_kind *ci = NULL;
	char host[LB_HOST_MAX + 1];
	size_t i;

	for (i = 0; i < sizeof(ci_kinds) / sizeof(ci_kinds[0]) && !ci; i++) {
		const char *m = getenv(ci_kinds[i].marker);
		if (m && *m && strcmp(m, "false"))
			ci = &ci_kinds[i];
	}
	if (!ci)
		return NULL;
	for (i = 0; i < sizeof(ci->labels) / sizeof(ci->labels[0]); i++) {
		const ci_var *v = &ci->labels[i];
		const char *value = env_value(v);

		/* a runner without a name: the machine's */
		if (!value && !strcmp(v->key, "runner") && gethostname(host, sizeof(host)) == 0) {
			host[LB_HOST_MAX] = 0;
			value = host;
		}
		if (!value)
			continue;
		if (strlen(value) > LB_MAX_VALUE || !printable(value)) {
			fprintf(stderr, "perfhub %s: %s label '%s' left out: its value is longer "
				"than %d bytes or holds control characters\n", who, ci->name, v->key,
				LB_MAX_VALUE);
			continue;
		}
		if (put(s, v->key, strlen(v->key), value, 0) < 0)
			fprintf(stderr, "perfhub %s: %s label '%s' left out: at most %d tags\n", who,
				ci->name, v->key, LB_MAX_TAGS);
	}
	return ci->name;
}
