"""client_common - what the tests of the perfhub client share: running
cli/perfhub with a clean environment, a small C program built at test time
(a hot function, a chosen run time and exit status, a line on stdout and
one on stderr), the spooled copy of an upload, and the CI variables each
CI sets."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfhubd_harness import SKIP, builddir, have_perf_record, tmpdir  # noqa: E402

PROG = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
extern char **environ;
volatile unsigned long sink;
__attribute__((noinline)) void client_hot(unsigned long n)
{ for (unsigned long i = 0; i < n; i++) sink += i ^ (sink >> 3); }
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	int rc = argc > 2 ? atoi(argv[2]) : 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		client_hot(50000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("client-prog stdout\n");
	fprintf(stderr, "client-prog stderr\n");
	/* the environment it was given, for the token checks */
	if (argc > 3 && !strcmp(argv[3], "env"))
		for (char **e = environ; *e; e++)
			printf("ENV %s\n", *e);
	return rc;
}
"""

# Every variable perfhub reads for CI labels: cleared so the tests see only
# what they set (the tests may themselves run in a CI).
CI_VARS = [
    "GITHUB_ACTIONS", "GITHUB_SHA", "GITHUB_HEAD_REF", "GITHUB_REF_NAME", "GITHUB_JOB",
    "GITHUB_RUN_ID", "RUNNER_NAME",
    "GITLAB_CI", "CI_COMMIT_SHA", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_COMMIT_REF_NAME",
    "CI_JOB_NAME", "CI_PIPELINE_ID", "CI_RUNNER_DESCRIPTION",
    "BUILDKITE", "BUILDKITE_COMMIT", "BUILDKITE_BRANCH", "BUILDKITE_LABEL",
    "BUILDKITE_STEP_KEY", "BUILDKITE_BUILD_NUMBER", "BUILDKITE_AGENT_NAME",
    "JENKINS_URL", "GIT_COMMIT", "CHANGE_BRANCH", "BRANCH_NAME", "GIT_BRANCH", "JOB_NAME",
    "BUILD_NUMBER", "NODE_NAME",
]

# Each CI's variables as a job there sees them, and the labels expected.
CI_CASES = {
    "GitHub Actions": ({"GITHUB_ACTIONS": "true", "GITHUB_SHA": "a1b2c3d4e5f6",
                        "GITHUB_HEAD_REF": "", "GITHUB_REF_NAME": "main",
                        "GITHUB_JOB": "bench", "GITHUB_RUN_ID": "9876543210",
                        "RUNNER_NAME": "gh-runner-7"},
                       {"commit": "a1b2c3d4e5f6", "branch": "main", "job": "bench",
                        "run": "9876543210", "runner": "gh-runner-7"}),
    # a pull request: the branch it comes from, not "12/merge"
    "GitHub Actions PR": ({"GITHUB_ACTIONS": "true", "GITHUB_SHA": "0f0f0f",
                           "GITHUB_HEAD_REF": "feature/x", "GITHUB_REF_NAME": "12/merge",
                           "GITHUB_JOB": "perf", "GITHUB_RUN_ID": "55",
                           "RUNNER_NAME": "gh-2"},
                          {"commit": "0f0f0f", "branch": "feature/x", "job": "perf",
                           "run": "55", "runner": "gh-2"}),
    "GitLab CI": ({"GITLAB_CI": "true", "CI_COMMIT_SHA": "fedcba987654",
                   "CI_COMMIT_REF_NAME": "release-2", "CI_JOB_NAME": "perf:nightly",
                   "CI_PIPELINE_ID": "4242", "CI_RUNNER_DESCRIPTION": "gitlab-runner-3"},
                  {"commit": "fedcba987654", "branch": "release-2", "job": "perf:nightly",
                   "run": "4242", "runner": "gitlab-runner-3"}),
    "Jenkins": ({"JENKINS_URL": "http://jenkins.example/", "GIT_COMMIT": "1234abcd",
                 "GIT_BRANCH": "origin/main", "JOB_NAME": "perf-job", "BUILD_NUMBER": "17",
                 "NODE_NAME": "agent-4"},
                {"commit": "1234abcd", "branch": "main", "job": "perf-job", "run": "17",
                 "runner": "agent-4"}),
    "Buildkite": ({"BUILDKITE": "true", "BUILDKITE_COMMIT": "beefcafe",
                   "BUILDKITE_BRANCH": "topic", "BUILDKITE_LABEL": ":zap: perf",
                   "BUILDKITE_BUILD_NUMBER": "311", "BUILDKITE_AGENT_NAME": "bk-agent-1"},
                  {"commit": "beefcafe", "branch": "topic", "job": ":zap: perf", "run": "311",
                   "runner": "bk-agent-1"}),
}


def perfhub_exe():
    return os.path.join(builddir(), "cli", "perfhub")


_home = []


def clean_env(**extra):
    """The test's environment without CI variables, the server or a token,
    and with an empty HOME (no perf build-id cache to send from)."""
    if not _home:
        _home.append(tmpdir("client-home-"))
    env = {k: v for k, v in os.environ.items()
           if k not in CI_VARS and not k.startswith("PERFHUB_TOKEN") and k != "PERFHUB_SERVER"}
    env["HOME"] = _home[0]
    env.update(extra)
    return env


def perfhub(args, env=None, stdin=None, timeout=300):
    return subprocess.run([perfhub_exe()] + list(args), capture_output=True, text=True,
                          timeout=timeout, env=env if env is not None else clean_env(),
                          stdin=stdin)


def need_perf_and_cc():
    if not have_perf_record() or not shutil.which("cc"):
        print("perf record or a C compiler is unavailable here")
        sys.exit(SKIP)


def build_prog(work):
    src = os.path.join(work, "client-prog.c")
    exe = os.path.join(work, "client-prog")
    with open(src, "w") as f:
        f.write(PROG)
    subprocess.run(["cc", "-O1", "-g", "-fno-omit-frame-pointer", "-o", exe, src], check=True)
    return exe


def spooled(d, profile):
    """The bytes the server stored for a profile (its spool file)."""
    spool = os.path.join(d.state, "spool")
    for root, _, files in os.walk(spool):
        for f in files:
            if f.startswith(profile["sha256"]):
                return os.path.join(root, f)
    raise AssertionError("no spool file for %s" % profile["sha256"])


def first_id(stdout):
    """The first word of perfhub's answer is the profile id."""
    return int(stdout.split()[0])


class Checks:
    def __init__(self):
        self.failures = 0

    def __call__(self, cond, msg):
        if cond:
            print("ok   " + msg)
        else:
            print("FAIL " + msg)
            self.failures += 1
        return cond

    def status(self):
        if self.failures:
            print("%d failure(s)" % self.failures)
        return 1 if self.failures else 0


def workdir(prefix):
    return tmpdir(prefix)
