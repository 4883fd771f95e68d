/*
 * record.c - perfhub record [perf record options] -- COMMAND...: perf
 * records COMMAND in pipe mode and the recording streams to the server
 * while it runs; then the debuginfo, the wait, the summary.
 *
 *   perfhub ── fork ──> perf record -g --buildid-mmap -o - [options] -- sh -c SHIM sh COMMAND...
 *      ^  stdout: the recording (streamed, chunked)        │ the workload: stdout, stderr
 *      └─ stderr: perf's own messages (relayed, kept)      │ restored, a byte on the
 *                                                          └ "started" pipe, exec COMMAND
 *
 * perf points its workload's stdout at stderr in pipe mode; the shim puts
 * the command's stdout and stderr back. The byte it writes before exec
 * tells perf's own failure (events refused, perf missing: COMMAND never
 * ran) from the command's. perf exits with the command's status (raising
 * its signal), so perfhub can too.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "diff.h"
#include "summary.h"
#include "upload.h"

#define RC_NOT_RUN 125		/* perfhub's own failure, as timeout(1) and env(1) */
#define RC_MAX_NAME 256		/* the profile's default name: the command, cut */
#define RC_MSG_KEEP 16384	/* perf's messages kept to tell why it failed */
/* the shim's descriptors in the workload: the command's stdout, stderr, "started" */
#define RC_FD_OUT 7
#define RC_FD_ERR 8
#define RC_FD_STARTED 9

static const char record_usage[] =
	"usage: perfhub record [--name NAME] [--tag KEY=VALUE]... [--no-ci-labels]\n"
	"                      [--no-debuginfo] [--list-debuginfo] [--json]\n"
	"                      [--fail-over POINTS --base SELECTOR [--base-last N]]\n"
	"                      [--server URL] [--token-file FILE]\n"
	"                      [perf record options] -- COMMAND [ARG]...\n"
	"  --fail-over/--base: once the recording is ready, diff it against the\n"
	"  profiles SELECTOR picks (perfhub diff); exit 1 when a function's share\n"
	"  grew by more than POINTS.\n";

/* sh -c SHIM sh COMMAND...: restore stdout and stderr, say "started", run */
static const char shim[] =
	"printf x >&9 && exec \"$@\" >&7 2>&8 7>&- 8>&- 9>&-";

/* Options perf must not see: perfhub owns the output. */
static int perf_output_option(const char *a)
{
	return !strcmp(a, "-o") || !strcmp(a, "--output") || !strncmp(a, "--output=", 9) ||
	       (a[0] == '-' && a[1] == 'o' && a[2]);
}

typedef struct rc_perf {
	pid_t pid;
	int data;		/* its stdout: the recording */
	int msgs;		/* its stderr */
	int started;		/* read end: a byte once COMMAND is exec'ed */
	int seen;		/* that byte was read */
} rc_perf;

/* perf's stderr, relayed as it comes; the first RC_MSG_KEEP bytes kept. */
typedef struct rc_relay {
	int fd;
	char kept[RC_MSG_KEEP + 1];
	size_t len;
} rc_relay;

static void *relay_main(void *arg)
{
	rc_relay *r = arg;
	char buf[4096];
	ssize_t n;

	while ((n = read(r->fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (write(STDERR_FILENO, buf, (size_t)n) < 0) {
			/* nowhere to show it; it is still kept */
		}
		if (r->len < RC_MSG_KEEP) {
			size_t k = (size_t)n < RC_MSG_KEEP - r->len ? (size_t)n : RC_MSG_KEEP - r->len;
			memcpy(r->kept + r->len, buf, k);
			r->len += k;
		}
	}
	r->kept[r->len] = 0;
	return NULL;
}

/* 1 once the shim said COMMAND is being exec'ed. Called at the end of the
 * recording, when perf has closed its stdout: the byte, if any, is there. */
static int command_started(void *ctx)
{
	rc_perf *p = ctx;
	char b;
	int fl;

	if (!p->seen && (fl = fcntl(p->started, F_GETFL)) >= 0 &&
	    fcntl(p->started, F_SETFL, fl | O_NONBLOCK) == 0)
		p->seen = read(p->started, &b, 1) == 1;
	return p->seen;
}

/* Reads fd to its end, dropping the bytes. */
static void drain(int fd)
{
	char buf[65536];
	ssize_t n;

	do
		n = read(fd, buf, sizeof(buf));
	while (n > 0 || (n < 0 && errno == EINTR));
}

/* In the child: the descriptors in place, then perf. Never returns. */
static void exec_perf(char **argv, int data, int msgs, int started, int out, int err, int report)
{
	const int from[] = { data, msgs, out, err, started };
	const int to[] = { STDOUT_FILENO, STDERR_FILENO, RC_FD_OUT, RC_FD_ERR, RC_FD_STARTED };
	int high[5], i, e;

	/* ignored signals stay ignored across exec: give perf the defaults */
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	/* the token is perfhub's: COMMAND and perf do not get it */
	unsetenv("PERFHUB_TOKEN");
	/* out of the way of the targets first: a pipe may sit on fd 7..9 */
	for (i = 0; i < 5; i++)
		if ((high[i] = fcntl(from[i], F_DUPFD_CLOEXEC, RC_FD_STARTED + 1)) < 0)
			goto fail;
	for (i = 0; i < 5; i++)
		if (dup2(high[i], to[i]) < 0)
			goto fail;
	execvp(argv[0], argv);
fail:
	e = errno;
	if (write(report, &e, sizeof(e)) < 0) {
		/* the parent then sees perf exit 127 without a word */
	}
	_exit(127);
}

/* Starts perf; *p filled. -1 after printing why (perf not installed...). */
static int start_perf(char **argv, rc_perf *p)
{
	int data[2] = { -1, -1 }, msgs[2] = { -1, -1 }, started[2] = { -1, -1 };
	int report[2] = { -1, -1 }, out, err, e = 0, rc = -1;
	ssize_t n;

	out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 10);
	err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 10);
	if (out < 0)
		out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (err < 0)
		err = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (out < 0 || err < 0 || pipe2(data, O_CLOEXEC) || pipe2(msgs, O_CLOEXEC) ||
	    pipe2(started, O_CLOEXEC) || pipe2(report, O_CLOEXEC)) {
		fprintf(stderr, "perfhub record: %s\n", strerror(errno));
		goto out;
	}
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0) {
		fprintf(stderr, "perfhub record: fork: %s\n", strerror(errno));
		goto out;
	}
	if (p->pid == 0)
		exec_perf(argv, data[1], msgs[1], started[1], out, err, report[1]);
	close(report[1]);
	report[1] = -1;
	do
		n = read(report[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(e)) {
		waitpid(p->pid, NULL, 0);
		if (e == ENOENT)
			fprintf(stderr, "perfhub record: perf is not installed here (no 'perf' in "
				"PATH). Install it (Debian: apt-get install linux-perf; Ubuntu: "
				"linux-tools-$(uname -r); Fedora: dnf install perf) or put it in PATH. "
				"The command was not run.\n");
		else
			fprintf(stderr, "perfhub record: cannot run perf: %s. The command was not "
				"run.\n", strerror(e));
		goto out;
	}
	p->data = data[0];
	p->msgs = msgs[0];
	p->started = started[0];
	data[0] = msgs[0] = started[0] = -1;
	rc = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (data[i] >= 0)
			close(data[i]);
		if (msgs[i] >= 0)
			close(msgs[i]);
		if (started[i] >= 0)
			close(started[i]);
		if (report[i] >= 0)
			close(report[i]);
	}
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	return rc;
}

static int read_paranoid(void)
{
	FILE *fp = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 99;

	if (fp) {
		if (fscanf(fp, "%d", &v) != 1)
			v = 99;
		fclose(fp);
	}
	return v;
}

/* perf stopped before COMMAND ran: say why in plain words, from what perf
 * said (shown above) and the kernel's setting. */
static void explain_perf_failure(const char *said, int status)
{
	int paranoid = read_paranoid();

	if (strstr(said, "perf_event_paranoid") || strstr(said, "Permission denied") ||
	    strstr(said, "No permission") || strstr(said, "Access to performance monitoring")) {
		fprintf(stderr, "perfhub record: the kernel does not let this user record the events "
			"asked for (kernel.perf_event_paranoid is %d: 2 allows only user-space "
			"samples of one's own processes, 1 adds kernel samples, 0 system-wide "
			"(-a), -1 everything). Fix: sysctl -w kernel.perf_event_paranoid=1 (or the "
			"lower value the events need; kernel.perf_event_paranoid in /etc/sysctl.d/ "
			"to keep it), or run perfhub record as root, or give perf CAP_PERFMON "
			"(setcap cap_perfmon,cap_ipc_lock=ep \"$(command -v perf)\"). The command "
			"was not run.\n", paranoid);
	} else if (strstr(said, "event syntax error") || strstr(said, "Usage: perf record") ||
		   strstr(said, "unknown option") || strstr(said, "unknown switch")) {
		fprintf(stderr, "perfhub record: perf record refused the options given (its message "
			"is above; 'perf list' names the events). The command was not run.\n");
	} else {
		fprintf(stderr, "perfhub record: perf record stopped before the command started "
			"(exit status %d; its message is above). The command was not run.\n",
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
}

/* SIGTERM and SIGHUP go on to perf, which stops COMMAND and ends the
 * recording; perfhub sends what there is. SIGINT reaches the whole
 * foreground group by itself: perfhub ignores it. */
static volatile sig_atomic_t perf_pid;

static void forward_signal(int sig)
{
	if (perf_pid > 0)
		kill((pid_t)perf_pid, sig);
}

static void catch_signals(int on)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on ? forward_signal : SIG_DFL;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGINT, on ? SIG_IGN : SIG_DFL);
	signal(SIGQUIT, on ? SIG_IGN : SIG_DFL);
	signal(SIGPIPE, on ? SIG_IGN : SIG_DFL);
}

/* The profile's default name: the command's words, cut to RC_MAX_NAME. */
static void command_name(char **cmd, char *name, size_t len)
{
	size_t n = 0;
	int w;

	name[0] = 0;
	for (; *cmd && n < len; cmd++) {
		w = snprintf(name + n, len - n, "%s%s", n ? " " : "", *cmd);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

typedef struct rc_args {
	up_opts o;
	args_server srv;
	int json, ci;
	const char *base;	/* --base: the gate's selector */
	long long base_last;	/* --base-last: its newest N */
	df_opts gate;		/* --fail-over ... */
	int gated;
	char **perf_argv;	/* perf record -g --buildid-mmap -o - [...] -- sh -c SHIM sh CMD... */
	char **cmd;		/* COMMAND... inside perf_argv */
} rc_args;

/* perfhub's options out, the rest for perf; COMMAND after "--". 0, or the
 * exit status of a usage error. */
static int parse_args(int argc, char **argv, rc_args *a, lb_set *labels)
{
	static const char *const head[] = { "perf", "record", "-g", "--buildid-mmap", "-o", "-" };
	static const char *const tail[] = { "--", "/bin/sh", "-c", shim, "sh" };
	const size_t nh = sizeof(head) / sizeof(head[0]), nt = sizeof(tail) / sizeof(tail[0]);
	const char *v;
	size_t n = 0, k;
	int i;

	a->perf_argv = calloc(nh + nt + (size_t)argc + 1, sizeof(char *));
	if (!a->perf_argv)
		return 1;
	for (k = 0; k < nh; k++)
		a->perf_argv[n++] = (char *)head[k];
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (args_server_option(argc, argv, &i, &a->srv))
			continue;
		if ((v = args_value(argc, argv, &i, "--name")))
			a->o.name = v;
		else if ((v = args_value(argc, argv, &i, "--tag"))) {
			if (lb_add_tag(labels, v, "record") < 0)
				return 2;
		} else if ((v = args_value(argc, argv, &i, "--base"))) {
			a->base = v;
		} else if ((v = args_value(argc, argv, &i, "--base-last"))) {
			a->base_last = strtoll(v, NULL, 10);
			if (a->base_last <= 0) {
				fprintf(stderr, "perfhub record: --base-last wants a positive number\n");
				return 2;
			}
		} else if ((v = args_value(argc, argv, &i, "--fail-over"))) {
			char *end;
			a->gate.fail_over = strtod(v, &end);
			if (end == v || *end || !(a->gate.fail_over >= 0 && a->gate.fail_over <= 100)) {
				fprintf(stderr, "perfhub record: --fail-over wants points from 0 to 100\n");
				return 2;
			}
			a->gated = 1;
		} else if (!strcmp(argv[i], "--no-ci-labels"))
			a->ci = 0;
		else if (!strcmp(argv[i], "--no-debuginfo"))
			a->o.debuginfo = 0;
		else if (!strcmp(argv[i], "--list-debuginfo"))
			a->o.verbose = 1;
		else if (!strcmp(argv[i], "--json"))
			a->json = 1;
		else if (!strcmp(argv[i], "--help")) {
			fputs(record_usage, stdout);
			return -1;
		} else if (perf_output_option(argv[i])) {
			fprintf(stderr, "perfhub record: perfhub streams perf's output itself: leave "
				"out '%s'\n", argv[i]);
			return 2;
		} else
			a->perf_argv[n++] = argv[i];
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "perfhub record: the command to record goes after '--'\n%s",
			record_usage);
		return 2;
	}
	if (a->gated && !a->base) {
		fprintf(stderr, "perfhub record: --fail-over needs --base SELECTOR (the runs to "
			"compare with)\n");
		return 2;
	}
	a->gated |= a->base != NULL;
	for (k = 0; k < nt; k++)
		a->perf_argv[n++] = (char *)tail[k];
	a->cmd = a->perf_argv + n;
	for (i++; i < argc; i++)
		a->perf_argv[n++] = argv[i];
	return 0;
}

/* A server that does not answer, or refuses this client: nothing is run
 * for nothing. 0 when /healthz answers 200. */
static int server_check(ac_client *c)
{
	ac_response r;
	int rc = -1;

	if (ac_request(c, "GET", "/healthz", NULL, &r) < 0)
		fprintf(stderr, "perfhub record: the server at %s does not answer; the command was "
			"not run\n", ac_server(c));
	else if (r.status != 200)
		ac_print_error("record (server check)", &r);
	else
		rc = 0;
	if (rc < 0 && r.status)
		fprintf(stderr, "perfhub record: the command was not run\n");
	ac_response_free(&r);
	return rc;
}

/* The exit status: COMMAND's when it failed; else 125 when perfhub could
 * not do its part, else 1 when the gate found a regression, else 0. */
static int final_status(int command, int ours_failed, int regressed)
{
	return command ? command : ours_failed ? RC_NOT_RUN : regressed ? 1 : 0;
}

int cmd_record(int argc, char **argv)
{
	rc_args a = { .o = { .who = "record", .debuginfo = 1 }, .ci = 1 };
	lb_set *labels = lb_new();
	rc_perf perf = { .pid = -1, .data = -1, .msgs = -1, .started = -1 };
	rc_relay relay = { .fd = -1 };
	up_result res = { 0 };
	up_source src;
	ac_client *c = NULL;
	json_t *final = NULL;
	pthread_t relay_th;
	char name[RC_MAX_NAME + 1];
	int status = RC_NOT_RUN, rc, wst = 0, relaying = 0, uploaded, command = 0, gate = 0;

	if (!labels)
		goto out;
	df_opts_init(&a.gate);
	a.o.labels = labels;
	if ((rc = parse_args(argc, argv, &a, labels))) {
		status = rc < 0 ? 0 : rc;
		goto out;
	}
	if (a.ci)
		lb_add_ci(labels, "record");
	if (!a.o.name) {
		command_name(a.cmd, name, sizeof(name));
		a.o.name = name;
	}
	if (!(c = ac_open(&a.srv)))
		goto out;
	if (server_check(c) < 0)
		goto out;
	catch_signals(1);
	if (start_perf(a.perf_argv, &perf) < 0)
		goto out;
	perf_pid = perf.pid;
	relay.fd = perf.msgs;
	relaying = pthread_create(&relay_th, NULL, relay_main, &relay) == 0;
	src = (up_source){ .fd = perf.data, .complete = command_started, .ctx = &perf };
	uploaded = up_stream(c, &src, &a.o, &res) == 0;
	/* whatever the server did, perf (and COMMAND) must not block on a full pipe */
	drain(perf.data);
	while (waitpid(perf.pid, &wst, 0) < 0 && errno == EINTR)
		;
	perf_pid = 0;
	if (relaying)
		pthread_join(relay_th, NULL);
	if (!command_started(&perf)) {
		explain_perf_failure(relaying ? relay.kept : "", wst);
		goto out;
	}
	command = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
	if (!uploaded) {
		fprintf(stderr, "perfhub record: the recording did not reach the server\n");
		status = final_status(command, 1, 0);
		goto out;
	}
	rc = up_report(c, &a.o, &res, 1, a.json, &final);
	if (command)
		fprintf(stderr, "perfhub record: %s exited with status %d\n", a.cmd[0], command);
	/* the gate: the new profile against the base's runs (the table on
	 * stderr when stdout carries --json) */
	if (a.gated && rc == 0) {
		gate = df_gate(c, a.base, a.base_last, res.id, &a.gate, a.json ? stderr : stdout);
		if (gate == 2)
			rc = 1;
	}
	status = final_status(command, rc != 0, gate == 1);
out:
	catch_signals(0);
	if (perf.data >= 0)
		close(perf.data);
	if (perf.msgs >= 0)
		close(perf.msgs);
	if (perf.started >= 0)
		close(perf.started);
	json_decref(final);
	json_decref(res.answer);
	ac_close(c);
	lb_free(labels);
	free(a.perf_argv);
	return status;
}
