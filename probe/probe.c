/* SPDX-License-Identifier: MIT */
/*
 * metalcap-probe: command line, the stock pass, and the timeout.
 *
 * The device work runs on a worker thread, one stage at a time (open the
 * device, the stock pass, each check); the main thread gives every stage
 * the same deadline.  A stage that misses it is abandoned: the report is
 * printed with what is known and the process exits 4, whatever the worker
 * is stuck in (a kernel that never completes cannot be cancelled).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/mc_os.h"
#include "probe.h"

/* The loader's variable: DYLD_INSERT_LIBRARIES or LD_PRELOAD (mc_os.h). */
#define PROBE_INJECT_VAR	MC_OS_INJECT_VAR
/* Not METALCAP_*: the shim may remove those before main runs. */
#define PROBE_REPORT_DIR_VAR	"MCPROBE_REPORT_DIR"

extern char **environ;

struct probe_options {
	bool		 json;
	bool		 stock_pass;
	long		 timeout_ms;
	bool		 selected[PROBE_MAX_CHECKS];	/* by probe_checks index */
};

/* Shared between the worker and the supervising main thread. */
struct probe_run {
	pthread_mutex_t		 lock;
	pthread_cond_t		 changed;
	const struct probe_options *options;
	const char		*stage;		/* what the worker is doing */
	uint64_t		 stage_start;
	bool			 finished;
	bool			 abandoned;
	int			 exit_code;
	pid_t			 child;		/* the stock pass, if running */
	struct probe_device	*device;
	struct probe_answers	 answers;
	bool			 have_answers;
	struct probe_answers	 stock;
	char			 stock_error[PROBE_ERROR_LEN];
	bool			 have_stock;
	json_t			*shim;
	struct probe_result	 results[PROBE_MAX_CHECKS];
	size_t			 nresults;
};

static void
probe_usage(FILE *out)
{
	fprintf(out,
	    "usage: metalcap-probe [--json] [--checks LIST] [--timeout-ms N]\n"
	    "       metalcap-probe --list-checks | --help | --version\n"
	    "\n"
	    "Reports what the Metal device claims and checks that it works:\n"
	    "each check dispatches a kernel and compares its output with a\n"
	    "CPU reference.  Run it with and without libmetalcap injected.\n"
	    "\n"
	    "  --json          one JSON object on stdout (schema: "
	    "metalcap-probe(1))\n"
	    "  --checks LIST   comma-separated checks (default: all)\n"
	    "  --timeout-ms N  deadline for each check, 1-600000 "
	    "(default %d)\n"
	    "  --list-checks   the checks and what each needs\n"
	    "\n"
	    "Exit: 0 all checks pass, 1 a check failed, 2 usage, 3 no Metal\n"
	    "device, 4 timeout.\n", PROBE_DEFAULT_TIMEOUT);
}

static uint64_t
probe_now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Select the checks named in list; -1 with a message on a bad name. */
static int
probe_select(struct probe_options *o, const char *list)
{
	char			*copy = strdup(list), *name, *save = NULL;
	const struct probe_check *c;
	size_t			 chosen = 0;
	int			 rc = 0;

	memset(o->selected, 0, sizeof o->selected);
	for (name = strtok_r(copy, ",", &save); name != NULL;
	    name = strtok_r(NULL, ",", &save)) {
		if ((c = probe_check_find(name)) == NULL) {
			fprintf(stderr, "metalcap-probe: --checks: unknown "
			    "check '%s' (see --list-checks)\n", name);
			rc = -1;
			break;
		}
		o->selected[c - probe_checks] = true;
		chosen++;
	}
	/* Nothing chosen would be a verdict of safe on no evidence. */
	if (rc == 0 && chosen == 0) {
		fprintf(stderr, "metalcap-probe: --checks: '%s' names no "
		    "check (see --list-checks)\n", list);
		rc = -1;
	}
	free(copy);
	return rc;
}

static int
probe_parse(int argc, char **argv, struct probe_options *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "checks", required_argument, NULL, 'c' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "list-checks", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "stock-pass", no_argument, NULL, 's' },	/* internal */
		{ NULL, 0, NULL, 0 },
	};
	char	*end;
	size_t	 i;
	int	 ch;

	memset(o, 0, sizeof *o);
	o->timeout_ms = PROBE_DEFAULT_TIMEOUT;
	for (i = 0; i < probe_nchecks; i++)
		o->selected[i] = true;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			o->json = true;
			break;
		case 'c':
			if (probe_select(o, optarg) == -1)
				return -1;
			break;
		case 't':
			errno = 0;
			o->timeout_ms = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg ||
			    o->timeout_ms < 1 || o->timeout_ms > 600000) {
				fprintf(stderr, "metalcap-probe: --timeout-ms: "
				    "'%s' is not a number from 1 to 600000\n",
				    optarg);
				return -1;
			}
			break;
		case 'l':
			for (i = 0; i < probe_nchecks; i++)
				printf("%-24s %s\n", probe_checks[i].name,
				    probe_checks[i].summary);
			exit(PROBE_EXIT_OK);
		case 'h':
			probe_usage(stdout);
			exit(PROBE_EXIT_OK);
		case 'V':
			printf("metalcap-probe %s (%s backend)\n", MC_VERSION,
			    probe_backend.name);
			exit(PROBE_EXIT_OK);
		case 's':
			o->stock_pass = true;
			break;
		default:
			probe_usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "metalcap-probe: unexpected argument '%s'\n",
		    argv[optind]);
		return -1;
	}
	return 0;
}

/*
 * A private directory for the shim's report, in $TMPDIR (per user on
 * macOS) or else /tmp, named by a path with no link in it: the shim
 * refuses a link at any component (libmetalcap(7)), and on macOS /tmp and
 * $TMPDIR's /var are links to /private/tmp and /private/var (`/tmp ->
 * private/tmp`, rust-lang/rust#99608 on macOS 12.4).  dir has PATH_MAX
 * bytes, as realpath fills.  -1 when none.
 */
static int
probe_report_dir(char *dir)
{
	char		 made[4096];
	const char	*tmp = getenv("TMPDIR");

	if (tmp == NULL || *tmp == '\0' || (size_t)snprintf(made, sizeof made,
	    "%s/metalcap-probe.XXXXXX", tmp) >= sizeof made ||
	    mkdtemp(made) == NULL) {
		snprintf(made, sizeof made, "/tmp/metalcap-probe.XXXXXX");
		if (mkdtemp(made) == NULL)
			return -1;
	}
	if (realpath(made, dir) == NULL) {
		rmdir(made);
		return -1;
	}
	return 0;
}

/*
 * The shim reads METALCAP_REPORT in its constructor, before main.  When we
 * are injected and nobody asked for a report, run again with one pointed at
 * a private directory, so the report can say what the shim did.
 */
static void
probe_reexec_with_report(char **argv)
{
	char	dir[PATH_MAX], self[4096];
	const char *inject = getenv(PROBE_INJECT_VAR);

	if (inject == NULL || *inject == '\0' ||
	    getenv("METALCAP_REPORT") != NULL ||
	    getenv(PROBE_REPORT_DIR_VAR) != NULL)
		return;
	if (probe_backend.self_path(self, sizeof self) == -1 ||
	    probe_report_dir(dir) == -1)
		return;
	setenv("METALCAP_REPORT", dir, 1);
	setenv(PROBE_REPORT_DIR_VAR, dir, 1);
	execv(self, argv);
	/* Could not: go on without the shim's report. */
	unsetenv("METALCAP_REPORT");
	unsetenv(PROBE_REPORT_DIR_VAR);
	rmdir(dir);
}

/* The shim's line for this process, from the report file or directory. */
static json_t *
probe_read_shim_report(void)
{
	const char	*where = getenv(PROBE_REPORT_DIR_VAR);
	char		 path[4096], line[2048], pidkey[32];
	json_t		*found = NULL;
	FILE		*f;

	if (where == NULL)
		where = getenv("METALCAP_REPORT");
	if (where == NULL)
		return NULL;
	snprintf(path, sizeof path, "%s/metalcap.%ld.report", where,
	    (long)getpid());
	if ((f = fopen(path, "r")) == NULL && (f = fopen(where, "r")) == NULL)
		return NULL;
	snprintf(pidkey, sizeof pidkey, " pid=%ld ", (long)getpid());
	/* The last activation line: a witness line is not one. */
	while (fgets(line, sizeof line, f) != NULL)
		if (strstr(line, pidkey) != NULL &&
		    strncmp(line, "metalcap witness ", 17) != 0) {
			json_decref(found);
			found = probe_shim_parse(line);
		}
	fclose(f);
	return found;
}

static void
probe_cleanup_report_dir(void)
{
	const char	*dir = getenv(PROBE_REPORT_DIR_VAR);
	char		 path[4096];

	if (dir == NULL)
		return;
	snprintf(path, sizeof path, "%s/metalcap.%ld.report", dir,
	    (long)getpid());
	unlink(path);
	rmdir(dir);
}

/* The environment minus every trace of the shim, for the stock pass. */
static char **
probe_stock_env(void)
{
	static const char *const drop[] = { PROBE_INJECT_VAR "=", "METALCAP_",
	    "LUME_METAL_", "MCPROBE_" };
	size_t	 n = 0, i, k;
	char	**env;

	for (i = 0; environ[i] != NULL; i++)
		;
	env = calloc(i + 1, sizeof *env);
	for (i = 0; env != NULL && environ[i] != NULL; i++) {
		for (k = 0; k < sizeof drop / sizeof drop[0]; k++)
			if (strncmp(environ[i], drop[k], strlen(drop[k])) == 0)
				break;
		if (k == sizeof drop / sizeof drop[0])
			env[n++] = environ[i];
	}
	return env;
}

/* Run this program with --stock-pass and no shim; read its answers. */
static int
probe_stock_pass(struct probe_run *run, struct probe_answers *stock,
    char *why, size_t whylen)
{
	char		 self[4096], buf[65536];
	char		*argv[] = { self, "--stock-pass", NULL };
	char		**env = probe_stock_env();
	int		 fds[2], status, rc = -1;
	size_t		 len = 0;
	ssize_t		 r;
	json_error_t	 err;
	json_t		*doc;
	pid_t		 pid;

	if (env == NULL || probe_backend.self_path(self, sizeof self) == -1 ||
	    pipe(fds) == -1) {
		snprintf(why, whylen, "cannot start it: %s", strerror(errno));
		free(env);
		return -1;
	}
	if ((pid = fork()) == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execve(self, argv, env);
		_exit(127);
	}
	free(env);
	close(fds[1]);
	pthread_mutex_lock(&run->lock);
	run->child = pid;
	pthread_mutex_unlock(&run->lock);
	while (pid > 0 && len < sizeof buf - 1 &&
	    ((r = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0 ||
	    (r == -1 && errno == EINTR)))
		len += r > 0 ? (size_t)r : 0;
	buf[len] = '\0';
	close(fds[0]);
	if (pid == -1 || waitpid(pid, &status, 0) == -1)
		snprintf(why, whylen, "cannot run it: %s", strerror(errno));
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		snprintf(why, whylen, "it exited with status %d",
		    WIFEXITED(status) ? WEXITSTATUS(status) :
		    128 + WTERMSIG(status));
	else if ((doc = json_loads(buf, 0, &err)) == NULL)
		snprintf(why, whylen, "unreadable answers: %s", err.text);
	else {
		rc = probe_answers_from_json(doc, stock, why, whylen);
		json_decref(doc);
	}
	pthread_mutex_lock(&run->lock);
	run->child = 0;
	pthread_mutex_unlock(&run->lock);
	return rc;
}

/* Enter a stage; false when the main thread has given up on us. */
static bool
probe_stage(struct probe_run *run, const char *stage)
{
	bool	go;

	pthread_mutex_lock(&run->lock);
	run->stage = stage;
	run->stage_start = probe_now_ns();
	go = !run->abandoned;
	pthread_cond_broadcast(&run->changed);
	pthread_mutex_unlock(&run->lock);
	return go;
}

static void
probe_finish(struct probe_run *run, int code)
{
	pthread_mutex_lock(&run->lock);
	run->finished = true;
	run->exit_code = code;
	pthread_cond_broadcast(&run->changed);
	pthread_mutex_unlock(&run->lock);
}

/* Run one check into a local result; publish it unless abandoned. */
static void
probe_run_check(struct probe_run *run, const struct probe_check *check,
    const struct probe_context *ctx)
{
	struct probe_result	r;
	uint64_t		start;

	memset(&r, 0, sizeof r);
	r.name = check->name;
	start = probe_now_ns();
	check->run(ctx, &r);
	r.ms = (double)(probe_now_ns() - start) / 1e6;
	pthread_mutex_lock(&run->lock);
	if (!run->abandoned && run->nresults < PROBE_MAX_CHECKS)
		run->results[run->nresults++] = r;
	pthread_mutex_unlock(&run->lock);
}

static void *
probe_worker(void *arg)
{
	struct probe_run	*run = arg;
	struct probe_context	 ctx;
	struct probe_answers	 answers;
	json_t			*max, *shim;
	size_t			 i;
	int			 code = PROBE_EXIT_OK;

	if (!probe_stage(run, "open the device"))
		return NULL;
	if ((run->device = probe_backend.open()) == NULL) {
		probe_finish(run, PROBE_EXIT_NO_DEVICE);
		return NULL;
	}
	probe_answers_read(run->device, &answers);
	shim = probe_read_shim_report();
	pthread_mutex_lock(&run->lock);
	if (!run->abandoned) {
		run->answers = answers;
		run->have_answers = true;
		run->shim = shim;
	}
	pthread_mutex_unlock(&run->lock);
	if (run->options->stock_pass) {
		probe_finish(run, PROBE_EXIT_OK);
		return NULL;
	}
	if (run->options->selected[probe_check_find("invariants") -
	    probe_checks]) {
		if (!probe_stage(run, "stock pass"))
			return NULL;
		run->have_stock = probe_stock_pass(run, &run->stock,
		    run->stock_error, sizeof run->stock_error) == 0;
	}
	max = run->shim ? json_object_get(run->shim, "family_max") : NULL;
	ctx = (struct probe_context){
		.device = run->device, .answers = &run->answers,
		.stock = run->have_stock ? &run->stock : NULL,
		.stock_error = run->stock_error,
		.ceiling = json_is_integer(max) ?
		    (uint64_t)json_integer_value(max) : 0,
	};
	for (i = 0; i < probe_nchecks; i++) {
		if (!run->options->selected[i])
			continue;
		if (!probe_stage(run, probe_checks[i].name))
			return NULL;
		probe_run_check(run, &probe_checks[i], &ctx);
	}
	for (i = 0; i < run->nresults; i++)
		if (!run->results[i].skipped && !run->results[i].correct)
			code = PROBE_EXIT_FAILED;
	probe_finish(run, code);
	return NULL;
}

/*
 * Wait for the worker, giving each stage timeout_ms.  Returns the exit code;
 * on a timeout the hung stage is recorded as a failed check.
 */
static int
probe_supervise(struct probe_run *run)
{
	struct timespec	deadline;
	uint64_t	due;
	int		code;

	pthread_mutex_lock(&run->lock);
	while (!run->finished) {
		due = run->stage_start + (uint64_t)run->options->timeout_ms *
		    1000000u;
		if (probe_now_ns() >= due) {
			run->abandoned = true;
			if (run->child > 0)
				kill(run->child, SIGKILL);
			if (run->nresults < PROBE_MAX_CHECKS &&
			    probe_check_find(run->stage)) {
				struct probe_result *r =
				    &run->results[run->nresults++];

				memset(r, 0, sizeof *r);
				r->name = probe_check_find(run->stage)->name;
				r->ms = (double)run->options->timeout_ms;
				snprintf(r->error, sizeof r->error, "timed out "
				    "after %ld ms", run->options->timeout_ms);
			}
			break;
		}
		/* pthread_cond_timedwait counts in CLOCK_REALTIME. */
		clock_gettime(CLOCK_REALTIME, &deadline);
		due -= probe_now_ns();
		deadline.tv_sec += (time_t)(due / 1000000000u);
		deadline.tv_nsec += (long)(due % 1000000000u);
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&run->changed, &run->lock, &deadline);
	}
	code = run->finished ? run->exit_code : PROBE_EXIT_TIMEOUT;
	pthread_mutex_unlock(&run->lock);
	return code;
}

static void
probe_print(const struct probe_run *run, bool json, int code)
{
	struct probe_verdict	v = probe_verdict(run->results,
	    run->nresults);
	json_t			*doc;

	if (code == PROBE_EXIT_TIMEOUT)
		v.family = v.threadgroup = false;
	if (!json) {
		if (run->have_answers)
			probe_report_human(stdout, &run->answers, run->shim,
			    run->results, run->nresults, v);
		return;
	}
	if (run->have_answers) {
		json_incref(run->shim);
		doc = probe_report_json(&run->answers, run->shim,
		    run->results, run->nresults, v);
	} else
		doc = json_pack("{s:s, s:s, s:n, s:s}", "version", MC_VERSION,
		    "backend", probe_backend.name, "device", "error",
		    code == PROBE_EXIT_NO_DEVICE ? "no Metal device" :
		    "timed out opening the device");
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	fputc('\n', stdout);
	json_decref(doc);
}

int
main(int argc, char **argv)
{
	struct probe_options	 options;
	static struct probe_run	 run = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.changed = PTHREAD_COND_INITIALIZER,
	};
	pthread_t		 worker;
	int			 code;

	if (probe_parse(argc, argv, &options) == -1)
		return PROBE_EXIT_USAGE;
	if (!options.stock_pass)
		probe_reexec_with_report(argv);
	run.options = &options;
	run.stage_start = probe_now_ns();
	if (pthread_create(&worker, NULL, probe_worker, &run) != 0) {
		fprintf(stderr, "metalcap-probe: cannot start: %s\n",
		    strerror(errno));
		return PROBE_EXIT_FAILED;
	}
	code = probe_supervise(&run);
	if (options.stock_pass) {
		if (code == PROBE_EXIT_OK) {
			json_t *doc = probe_answers_json(&run.answers);

			json_dumpf(doc, stdout, JSON_COMPACT);
			json_decref(doc);
		}
	} else
		probe_print(&run, options.json, code);
	if (code == PROBE_EXIT_NO_DEVICE)
		fprintf(stderr, "metalcap-probe: no Metal device\n");
	else if (code == PROBE_EXIT_TIMEOUT)
		fprintf(stderr, "metalcap-probe: %s timed out after %ld ms\n",
		    run.stage, options.timeout_ms);
	probe_cleanup_report_dir();
	fflush(stdout);
	if (code == PROBE_EXIT_TIMEOUT)
		_exit(code);	/* the worker is stuck: do not join it */
	pthread_join(worker, NULL);
	if (run.device != NULL)
		probe_backend.close(run.device);
	json_decref(run.shim);
	return code;
}
