/* SPDX-License-Identifier: MIT */
/*
 * Tests of the launchctl SIMULATOR itself: the behaviours of launchd.md §6
 * it promises (exit codes, texts, asynchronous bootout, the disabled store,
 * print/list formats, KeepAlive, log files, the injection variable).
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"

#define SIM	MC_TEST_BUILD "/tests/launchctl-sim"
#define LABEL	"org.metalcap.job.t"
#define LIB	MC_TEST_BUILD "/tests/libmtlsim.so"

static char	dir[64], simvar[128], gui[32], target[96];

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/mc-lsim.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(simvar, sizeof simvar, "LAUNCHCTL_SIM_DIR=%s/state", dir);
	snprintf(gui, sizeof gui, "gui/%ld", (long)getuid());
	snprintf(target, sizeof target, "%s/%s", gui, LABEL);
	return 0;
}

static int
teardown(void **state)
{
	char	cmd[512];

	(void)state;
	snprintf(cmd, sizeof cmd, "%s %s bootout %s >/dev/null 2>&1; "
	    "sleep 0.5; rm -rf '%s'", simvar, SIM, target, dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* launchctl-sim ARGS with extra env; returns the exit code. */
static int
sim(struct child_result *r, const char *extra_env, const char *a1,
    const char *a2, const char *a3, const char *a4)
{
	const char	*argv[] = { SIM, a1, a2, a3, a4, NULL };
	/* The first of a name wins: a test's own switch goes before. */
	const char	*extra[] = { simvar, extra_env != NULL ? extra_env :
	    "LAUNCHCTL_SIM_THROTTLE=1", "LAUNCHCTL_SIM_THROTTLE=1", NULL };
	char		*env[CHILD_ENV_MAX];

	child_env(env, extra);
	assert_int_equal(child_run(argv, env, r), 0);
	return WEXITSTATUS(r->status);
}

/* A job plist running argv0 [arg] with the extra keys given. */
static const char *
plist(const char *argv0, const char *arg, const char *extra)
{
	static char	path[128];
	FILE		*f;

	snprintf(path, sizeof path, "%s/job.plist", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "<plist version=\"1.0\"><dict><key>Label</key><string>"
	    LABEL "</string><key>ProgramArguments</key><array><string>%s"
	    "</string>%s%s%s</array>%s</dict></plist>", argv0,
	    arg ? "<string>" : "", arg ? arg : "", arg ? "</string>" : "",
	    extra);
	fclose(f);
	return path;
}

static void
sleep_ms(long ms)
{
	struct timespec	ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Poll print until its output (left in *r) contains text. */
static void
wait_print(struct child_result *r, const char *text)
{
	int	i;

	for (i = 0; i < 300; i++) {
		if (sim(r, NULL, "print", target, NULL, NULL) == 0 &&
		    strstr(r->out, text) != NULL)
			return;
		sleep_ms(30);
	}
	fail_msg("print never showed '%s'", text);
}

/* A job's log, whole, into buf. */
static void
read_log(const char *path, char *buf, size_t len)
{
	FILE	*f = fopen(path, "r");

	assert_non_null(f);
	buf[fread(buf, 1, len - 1, f)] = '\0';
	fclose(f);
}

static void
test_bootstrap_print_and_loaded(void **state)
{
	struct child_result	r;
	const char		*p = plist("/bin/sleep", "30",
	    "<key>RunAtLoad</key><true/>");

	(void)state;
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, p, NULL), 0);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "");
	wait_print(&r, "\tpid = ");
	assert_non_null(strstr(r.out, "\tlast exit code = (never exited)\n"));
	assert_non_null(strstr(r.out, "\tstate = running\n"));
	/* Already loaded: 5 for a user, 37 for root. */
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, p, NULL), 5);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "Bootstrap failed: 5: Input/output error\n"
	    "Try re-running the command as root for richer errors.\n");
	assert_int_equal(sim(&r, "LAUNCHCTL_SIM_AS_ROOT=1", "bootstrap", gui,
	    p, NULL), 37);
	assert_non_null(strstr(r.err, ": service already bootstrapped\n"
	    "Bootstrap failed: 37: Operation already in progress\n"));
}

static void
test_bootout_is_asynchronous(void **state)
{
	struct child_result	r;
	const char		*p = plist("/bin/sleep", "30",
	    "<key>RunAtLoad</key><true/>");

	(void)state;
	assert_int_equal(sim(&r, "LAUNCHCTL_SIM_DRAIN_MS=1000", "bootstrap",
	    gui, p, NULL), 0);
	wait_print(&r, "\tpid = ");
	assert_int_equal(sim(&r, "LAUNCHCTL_SIM_DRAIN_MS=1000", "bootout",
	    target, NULL, NULL), 0);
	assert_string_equal(r.err, "");
	/* Still registered while it drains. */
	assert_int_equal(sim(&r, NULL, "print", target, NULL, NULL), 0);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, p, NULL), 5);
	assert_int_equal(sim(&r, NULL, "bootout", target, NULL, NULL), 36);
	assert_string_equal(r.err, "Boot-out failed: 36: Operation now in "
	    "progress\n");
	wait_print(&r, "\tstate = SIGTERMed\n");
	sleep_ms(1500);
	assert_int_equal(sim(&r, NULL, "print", target, NULL, NULL), 113);
	assert_int_equal(sim(&r, NULL, "bootout", target, NULL, NULL), 3);
	assert_string_equal(r.err, "Boot-out failed: 3: No such process\n");
}

/*
 * A bootout that comes while the job is about to spawn its first run
 * (held there on purpose, LAUNCHCTL_SIM_SPAWN_WHEN) stops that run: it
 * was lost when the supervisor's SIGTERM landed before its wait, and the
 * job ran on, answering later bootouts 36 (issue 47, 4).
 */
static void
test_bootout_before_spawn(void **state)
{
	struct child_result	r;
	char			when[160], env[192], mark[160], p[160];
	long			pid = 0;
	FILE			*f;
	int			i;

	(void)state;
	snprintf(when, sizeof when, "%s/spawn-now", dir);
	snprintf(env, sizeof env, "LAUNCHCTL_SIM_SPAWN_WHEN=%s", when);
	snprintf(mark, sizeof mark, "%s/pid", dir);
	/* A run that writes its pid (whole, or not at all: it may be
	 * stopped at any point), then sleeps on as that pid. */
	snprintf(p, sizeof p, "%s/job.plist", dir);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "<plist version=\"1.0\"><dict><key>Label</key><string>"
	    LABEL "</string><key>ProgramArguments</key><array><string>"
	    "/bin/sh</string><string>-c</string><string>echo $$ &gt;%s.tmp; "
	    "mv %s.tmp %s; exec sleep 30</string></array><key>RunAtLoad"
	    "</key><true/></dict></plist>", mark, mark, mark);
	fclose(f);
	assert_int_equal(sim(&r, env, "bootstrap", gui, p, NULL), 0);
	assert_int_equal(sim(&r, NULL, "bootout", target, NULL, NULL), 0);
	/* The supervisor has its SIGTERM; now it spawns. */
	assert_non_null(f = fopen(when, "w"));
	fclose(f);
	for (i = 0; sim(&r, NULL, "print", target, NULL, NULL) != 113; i++) {
		if (i > 300)
			fail_msg("the bootout was lost: %s", r.out);
		sleep_ms(30);
	}
	/* Its run, if it got as far as its pid, is stopped too. */
	if ((f = fopen(mark, "r")) != NULL) {
		assert_int_equal(fscanf(f, "%ld", &pid), 1);
		fclose(f);
		assert_int_equal(kill((pid_t)pid, 0), -1);
	}
}

static void
test_unknown_labels(void **state)
{
	struct child_result	r;
	char			want[256];

	(void)state;
	assert_int_equal(sim(&r, NULL, "print", target, NULL, NULL), 113);
	snprintf(want, sizeof want, "Bad request.\nCould not find service \""
	    LABEL "\" in domain for user gui: %ld\n", (long)getuid());
	assert_string_equal(r.err, want);
	assert_int_equal(sim(&r, NULL, "kickstart", target, NULL, NULL), 113);
	assert_string_equal(r.err, want + strlen("Bad request.\n"));
	assert_int_equal(sim(&r, NULL, "list", LABEL, NULL, NULL), 113);
	assert_string_equal(r.err, "Could not find service \"" LABEL "\" in "
	    "domain for port\n");
	assert_int_equal(sim(&r, NULL, "frobnicate", NULL, NULL, NULL), 64);
	assert_non_null(strstr(r.err, "Unrecognized subcommand: frobnicate\n"));
}

static void
test_domains(void **state)
{
	struct child_result	r;
	char			user[32];

	(void)state;
	snprintf(user, sizeof user, "user/%ld", (long)getuid());
	assert_int_equal(sim(&r, "LAUNCHCTL_SIM_NO_GUI=1", "bootstrap", gui,
	    plist("/bin/sleep", "30", ""), NULL), 125);
	assert_string_equal(r.err, "Bootstrap failed: 125: Domain does not "
	    "support specified action\n");
	/* A session the plist does not allow: 134 for root, 5 for others. */
	assert_int_equal(sim(&r, NULL, "bootstrap", user, plist("/bin/sleep",
	    "30", ""), NULL), 5);
	assert_non_null(strstr(r.err, "Try re-running the command as root"));
	assert_int_equal(sim(&r, "LAUNCHCTL_SIM_AS_ROOT=1", "bootstrap", user,
	    plist("/bin/sleep", "30", ""), NULL), 134);
	assert_string_equal(r.err, "Bootstrap failed: 134: Service cannot "
	    "load in requested session\n");
	assert_int_equal(sim(&r, "LAUNCHCTL_SIM_AS_ROOT=1", "bootstrap", gui,
	    plist("/bin/sleep", "30", "<key>LimitLoadToSessionType</key>"
	    "<string>Background</string>"), NULL), 134);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/bin/sleep",
	    "30", "<key>LimitLoadToSessionType</key><string>Background"
	    "</string>"), NULL), 5);
	assert_int_equal(sim(&r, NULL, "bootstrap", user, plist("/bin/sleep",
	    "30", "<key>LimitLoadToSessionType</key><array><string>Aqua"
	    "</string><string>Background</string></array>"), NULL), 0);
}

static void
test_disabled_store(void **state)
{
	struct child_result	r;
	const char		*p = plist("/bin/sleep", "30", "");

	(void)state;
	assert_int_equal(sim(&r, NULL, "disable", target, NULL, NULL), 0);
	assert_string_equal(r.out, "");
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, p, NULL), 5);
	assert_int_equal(sim(&r, "LAUNCHCTL_SIM_AS_ROOT=1", "bootstrap", gui,
	    p, NULL), 119);
	assert_non_null(strstr(r.err, "Bootstrap failed: 119: Service is "
	    "disabled\n"));
	assert_int_equal(sim(&r, NULL, "print-disabled", gui, NULL, NULL), 0);
	assert_non_null(strstr(r.out, "\"" LABEL "\" => disabled"));
	assert_int_equal(sim(&r, NULL, "enable", target, NULL, NULL), 0);
	assert_int_equal(sim(&r, NULL, "print-disabled", gui, NULL, NULL), 0);
	assert_non_null(strstr(r.out, "\"" LABEL "\" => enabled"));
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, p, NULL), 0);
}

static void
test_exit_status_and_keepalive(void **state)
{
	struct child_result	r;

	(void)state;
	/* /bin/false exits 1; KeepAlive restarts it after the throttle. */
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/bin/false",
	    NULL, "<key>KeepAlive</key><true/>"), NULL), 0);
	wait_print(&r, "\tlast exit code = 1\n");
	assert_int_equal(sim(&r, NULL, "list", LABEL, NULL, NULL), 0);
	assert_non_null(strstr(r.out, "\"LastExitStatus\" = 256;"));
	assert_null(strstr(r.out, "\"PID\""));
	wait_print(&r, "\truns = 2\n");
}

static void
test_logs_and_environment(void **state)
{
	struct child_result	r;
	char			extra[512], log[128], buf[4096] = "";

	(void)state;
	snprintf(log, sizeof log, "%s/out.log", dir);
	/* An inserted library that loads (dyld would refuse a missing one). */
	snprintf(extra, sizeof extra, "<key>RunAtLoad</key><true/><key>"
	    "StandardOutPath</key><string>%s</string><key>EnvironmentVariables"
	    "</key><dict><key>DYLD_INSERT_LIBRARIES</key><string>" LIB
	    "</string><key>MC_TEST</key><string>1</string></dict>", log);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/usr/bin/env",
	    NULL, extra), NULL), 0);
	wait_print(&r, "\tlast exit code = 0\n");
	read_log(log, buf, sizeof buf);
	assert_non_null(strstr(buf, "LD_PRELOAD=" LIB "\n"));
	assert_non_null(strstr(buf, "MC_TEST=1\n"));
	assert_null(strstr(buf, "DYLD_INSERT_LIBRARIES"));
	sim(&r, NULL, "bootout", target, NULL, NULL);
	sleep_ms(800);
	/* A log that cannot be opened: the job never runs. */
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/bin/sleep",
	    "30", "<key>RunAtLoad</key><true/><key>StandardErrorPath</key>"
	    "<string>/nonexistent/dir/err.log</string>"), NULL), 0);
	wait_print(&r, "\tlast exit code = 78: EX_CONFIG\n");
}

/*
 * launchd's own environment: launchctl setenv reaches jobs started after,
 * below the plist's EnvironmentVariables; getenv prints it (nothing when
 * unset, 0 either way); XPC_SERVICE_NAME is the label.  Log files are
 * made 0666 under the umask (the plist's Umask here: 0664).  An empty
 * insertion variable inserts nothing.
 */
static void
test_launchd_environment(void **state)
{
	struct child_result	r;
	char			extra[512], log[128], buf[4096] = "";
	struct stat		sb;

	(void)state;
	assert_int_equal(sim(&r, NULL, "setenv", "MC_GLOBAL", "launchd",
	    NULL), 0);
	assert_int_equal(sim(&r, NULL, "setenv", "MC_BOTH", "launchd", NULL),
	    0);
	assert_int_equal(sim(&r, NULL, "setenv", "DYLD_INSERT_LIBRARIES", LIB,
	    NULL), 0);
	assert_int_equal(sim(&r, NULL, "getenv", "MC_GLOBAL", NULL, NULL), 0);
	assert_string_equal(r.out, "launchd\n");
	assert_int_equal(sim(&r, NULL, "getenv", "MC_NONE", NULL, NULL), 0);
	assert_string_equal(r.out, "");
	assert_int_equal(sim(&r, NULL, "setenv", "MC_ONLY_KEY", NULL, NULL), 1);
	assert_string_equal(r.err, "usage: setenv <key> <value>\n");
	snprintf(log, sizeof log, "%s/out.log", dir);
	snprintf(extra, sizeof extra, "<key>RunAtLoad</key><true/><key>Umask"
	    "</key><integer>2</integer><key>StandardOutPath</key><string>%s"
	    "</string><key>EnvironmentVariables</key><dict><key>MC_BOTH</key>"
	    "<string>plist</string><key>DYLD_INSERT_LIBRARIES</key><string>"
	    "</string></dict>", log);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/usr/bin/env",
	    NULL, extra), NULL), 0);
	wait_print(&r, "\tlast exit code = 0\n");
	read_log(log, buf, sizeof buf);
	assert_non_null(strstr(buf, "MC_GLOBAL=launchd\n"));
	assert_non_null(strstr(buf, "MC_BOTH=plist\n"));
	assert_non_null(strstr(buf, "XPC_SERVICE_NAME=" LABEL "\n"));
	assert_non_null(strstr(buf, "\nLD_PRELOAD=\n"));
	assert_int_equal(stat(log, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0664);
	assert_int_equal(sim(&r, NULL, "unsetenv", "MC_GLOBAL", NULL, NULL), 0);
	assert_int_equal(sim(&r, NULL, "getenv", "MC_GLOBAL", NULL, NULL), 0);
	assert_string_equal(r.out, "");
}

/*
 * dyld ends a process whose inserted library will not load, before main,
 * with SIGABRT and its two lines on stderr (glibc would go on without).
 */
static void
test_inserted_library_missing(void **state)
{
	struct child_result	r;
	char			extra[512], log[128], buf[4096] = "";

	(void)state;
	snprintf(log, sizeof log, "%s/err.log", dir);
	snprintf(extra, sizeof extra, "<key>RunAtLoad</key><true/><key>"
	    "StandardErrorPath</key><string>%s</string><key>"
	    "EnvironmentVariables</key><dict><key>DYLD_INSERT_LIBRARIES</key>"
	    "<string>/x/shim.dylib</string></dict>", log);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/bin/sleep",
	    "30", extra), NULL), 0);
	wait_print(&r, "\tlast terminating signal = Abort trap: 6\n");
	read_log(log, buf, sizeof buf);
	assert_non_null(strstr(buf, "]: terminating because inserted dylib "
	    "'/x/shim.dylib' could not be loaded: tried: '/x/shim.dylib' (no "
	    "such file)\n"));
}

/*
 * The throttle counts from the last start: a job that ran longer than
 * ThrottleInterval is started again at once (launchd 842 job_start).  A
 * 4 s run with a 3 s throttle: the second start comes at about 4 s, not
 * 7 s as when the simulator counted from the exit.
 */
static void
test_throttle_from_start(void **state)
{
	struct child_result	r;
	char			script[128];
	FILE			*f;
	struct timespec		t0, t1;
	double			took;

	(void)state;
	snprintf(script, sizeof script, "%s/crash.sh", dir);
	assert_non_null(f = fopen(script, "w"));
	fputs("#!/bin/sh\nsleep 4\nexit 1\n", f);
	fclose(f);
	assert_int_equal(chmod(script, 0755), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(sim(&r, "LAUNCHCTL_SIM_THROTTLE=3", "bootstrap", gui,
	    plist(script, NULL, "<key>KeepAlive</key><true/>"), NULL), 0);
	wait_print(&r, "\truns = 2\n");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (took > 5.5)
		fail_msg("second start after %.1f s", took);
}

/*
 * A job gets launchd's context, not its caller's: default signal
 * dispositions (an ignored one survives exec) and umask 022.
 */
static void
test_job_context(void **state)
{
	struct child_result	r;
	char			extra[512], log[128], script[128], buf[4096] = "";
	const char		*p;
	FILE			*f;
	mode_t			old;

	(void)state;
	snprintf(script, sizeof script, "%s/context.sh", dir);
	assert_non_null(f = fopen(script, "w"));
	fputs("#!/bin/sh\numask\ngrep SigIgn /proc/self/status\n", f);
	fclose(f);
	assert_int_equal(chmod(script, 0755), 0);
	old = umask(077);
	signal(SIGPIPE, SIG_IGN);
	snprintf(log, sizeof log, "%s/out.log", dir);
	snprintf(extra, sizeof extra, "<key>RunAtLoad</key><true/><key>"
	    "StandardOutPath</key><string>%s</string><key>StandardErrorPath"
	    "</key><string>%s</string>", log, log);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist(script, NULL,
	    extra), NULL), 0);
	signal(SIGPIPE, SIG_DFL);
	umask(old);
	wait_print(&r, "\tlast exit code = 0\n");
	read_log(log, buf, sizeof buf);
	/* SIGPIPE (13) not ignored; glibc's own 32 and 33 are not ours. */
	if (strstr(buf, "0022\n") == NULL || (p = strstr(buf, "SigIgn:\t")) ==
	    NULL || (strtoull(p + 8, NULL, 16) & (1ULL << (SIGPIPE - 1))) != 0)
		fail_msg("the job's context: %s", buf);
}

/*
 * kill sends the signal to the running process, by name or number; an
 * unknown label is 113, one not running 3.  kickstart -k kills at once:
 * the run ends with SIGKILL, not with the SIGTERM a bootout sends.
 */
static void
test_kill_verb(void **state)
{
	struct child_result	r;
	char			 nonesuch[64];

	(void)state;
	snprintf(nonesuch, sizeof nonesuch, "%s/nonesuch", gui);
	assert_int_equal(sim(&r, NULL, "kill", "SIGTERM", nonesuch, NULL),
	    113);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/bin/sleep",
	    "30", "<key>KeepAlive</key><false/><key>RunAtLoad</key><true/>"),
	    NULL), 0);
	wait_print(&r, "\tpid = ");
	assert_int_equal(sim(&r, NULL, "kill", "BOGUS", target, NULL), 64);
	assert_int_equal(sim(&r, NULL, "kill", "15", target, NULL), 0);
	wait_print(&r, "\tlast terminating signal = Terminated: 15\n");
	assert_int_equal(sim(&r, NULL, "kill", "TERM", target, NULL), 3);
	assert_non_null(strstr(r.err, "3: No such process"));
	assert_int_equal(sim(&r, NULL, "kickstart", "-k", target, NULL), 0);
	wait_print(&r, "\tpid = ");
	assert_int_equal(sim(&r, NULL, "kickstart", "-k", target, NULL), 0);
	wait_print(&r, "\tlast terminating signal = Killed: 9\n");
}

/*
 * A stop signals the main process; its group gets SIGTERM only once the
 * main process has ended (launchd 842 job_stop, job_reap): a worker that
 * ignores SIGTERM outlives the job, one that does not is gone.
 */
static void
test_stop_signals_main_process(void **state)
{
	struct child_result	r;
	char			 arg[512], pids[96], text[64];
	long			 deaf = 0, plain = 0;
	FILE			*f;
	int			 i;

	(void)state;
	snprintf(pids, sizeof pids, "%s/pids", dir);
	snprintf(arg, sizeof arg, "-c</string><string>(trap '' TERM; exec "
	    "sleep 30) &amp; a=$!; sleep 30 &amp; echo $a $! &gt; %s; wait",
	    pids);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/bin/sh", arg,
	    "<key>KeepAlive</key><false/><key>RunAtLoad</key><true/>"), NULL),
	    0);
	for (i = 0; i < 100; i++) {
		if ((f = fopen(pids, "r")) != NULL) {
			if (fgets(text, sizeof text, f) != NULL)
				sscanf(text, "%ld %ld", &deaf, &plain);
			fclose(f);
		}
		if (plain > 0)
			break;
		sleep_ms(20);
	}
	assert_true(deaf > 0 && plain > 0);
	assert_int_equal(sim(&r, NULL, "bootout", target, NULL, NULL), 0);
	for (i = 0; i < 200 && kill((pid_t)plain, 0) == 0; i++)
		sleep_ms(20);
	assert_int_equal(kill((pid_t)plain, 0), -1);
	assert_int_equal(kill((pid_t)deaf, 0), 0);
	kill((pid_t)deaf, SIGKILL);
}

static void
test_kickstart(void **state)
{
	struct child_result	r;
	long			first;

	(void)state;
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/bin/sleep",
	    "30", "<key>KeepAlive</key><true/>"), NULL), 0);
	assert_int_equal(sim(&r, NULL, "kickstart", "-p", target, NULL), 0);
	first = strtol(r.out, NULL, 10);
	assert_true(first > 0);
	assert_int_equal(sim(&r, NULL, "kickstart", "-k", "-p", target), 0);
	assert_true(strtol(r.out, NULL, 10) > 0);
	assert_true(strtol(r.out, NULL, 10) != first);
}

/*
 * Background Task Management holding the label: bootstrap and kickstart
 * answer 0, silently, and nothing runs (runs 0, no pid); allowed, the
 * job waits for a kickstart.
 */
static void
test_btm_hold(void **state)
{
	struct child_result	r;

	(void)state;
	assert_int_equal(sim(&r, NULL, "sim-btm", "hold", LABEL, NULL), 0);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/bin/sleep",
	    "30", "<key>KeepAlive</key><true/>"), NULL), 0);
	assert_string_equal(r.err, "");
	/* -p waits for a run's pid to print it: there is none. */
	assert_int_equal(sim(&r, NULL, "kickstart", "-p", target, NULL), 0);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "");
	assert_int_equal(sim(&r, NULL, "print", target, NULL, NULL), 0);
	assert_non_null(strstr(r.out, "\truns = 0\n"));
	assert_null(strstr(r.out, "\tpid = "));
	assert_int_equal(sim(&r, NULL, "sim-btm", "allow", LABEL, NULL), 0);
	assert_int_equal(sim(&r, NULL, "print", target, NULL, NULL), 0);
	assert_null(strstr(r.out, "\tpid = "));
	assert_int_equal(sim(&r, NULL, "kickstart", target, NULL, NULL), 0);
	wait_print(&r, "\tpid = ");
}

/*
 * A WorkingDirectory that is not there fails the spawn (xpcproxy's
 * "Unable to set current working directory. error = 2", maddox/
 * wallop#61): the run ends 78: EX_CONFIG and KeepAlive retries it after
 * the throttle, as for a log that cannot be opened.  It used to run the
 * job in /.
 */
static void
test_working_directory_missing(void **state)
{
	struct child_result	r;

	(void)state;
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/bin/sleep",
	    "30", "<key>KeepAlive</key><true/><key>WorkingDirectory</key>"
	    "<string>/nonexistent/metalcap</string>"), NULL), 0);
	wait_print(&r, "\tlast exit code = 78: EX_CONFIG\n");
	assert_null(strstr(r.out, "\tpid = "));
	wait_print(&r, "\truns = 2\n");
	assert_int_equal(sim(&r, NULL, "list", LABEL, NULL, NULL), 0);
	assert_non_null(strstr(r.out, "\"LastExitStatus\" = 19968;"));
}

/*
 * kickstart of a job that is not running, within ThrottleInterval of its
 * last start: launchd 842 answers as usual and starts it only when the
 * interval has passed since that start (job_start's throttle arms a
 * timer), showing "spawn scheduled" meanwhile.  It used to start at once.
 */
static void
test_kickstart_throttled(void **state)
{
	struct child_result	r;
	struct timespec		t0, t1;
	double			took;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(sim(&r, "LAUNCHCTL_SIM_THROTTLE=3", "bootstrap", gui,
	    plist("/bin/true", NULL, "<key>RunAtLoad</key><true/>"), NULL), 0);
	wait_print(&r, "\tlast exit code = 0\n");
	sleep_ms(300);	/* its supervisor is done with the run */
	assert_int_equal(sim(&r, "LAUNCHCTL_SIM_THROTTLE=3", "kickstart",
	    target, NULL, NULL), 0);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "");
	wait_print(&r, "\tstate = spawn scheduled\n");
	assert_non_null(strstr(r.out, "\truns = 1\n"));
	wait_print(&r, "\truns = 2\n");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (took < 2.5)
		fail_msg("started again %.1f s after the first start", took);
}

/*
 * SoftResourceLimits' NumberOfFiles over the hard limit: launchd's own
 * hard limit is unlimited, so xnu takes the value and enforces at most
 * maxfilesperproc, which the hard limit stands for here.  The job gets
 * the hard limit; it used to keep its caller's soft limit (300 here).
 */
static void
test_number_of_files_over_hard(void **state)
{
	struct child_result	r;
	struct rlimit		old, low;
	char			extra[512], log[128], script[128], want[32];
	char			buf[256] = "";
	FILE			*f;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	if (old.rlim_max == RLIM_INFINITY || old.rlim_max <= 300)
		skip();
	snprintf(script, sizeof script, "%s/limit.sh", dir);
	assert_non_null(f = fopen(script, "w"));
	fputs("#!/bin/sh\nulimit -n\n", f);
	fclose(f);
	assert_int_equal(chmod(script, 0755), 0);
	snprintf(log, sizeof log, "%s/out.log", dir);
	snprintf(extra, sizeof extra, "<key>RunAtLoad</key><true/><key>"
	    "StandardOutPath</key><string>%s</string><key>SoftResourceLimits"
	    "</key><dict><key>NumberOfFiles</key><integer>%llu</integer>"
	    "</dict>", log, (unsigned long long)old.rlim_max + 1);
	low = old;
	low.rlim_cur = 300;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist(script, NULL,
	    extra), NULL), 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	wait_print(&r, "\tlast exit code = 0\n");
	read_log(log, buf, sizeof buf);
	snprintf(want, sizeof want, "%llu\n", (unsigned long long)old.rlim_max);
	assert_string_equal(buf, want);
}

/*
 * Logout ends the GUI domain, not only its jobs: bootstrap and print of
 * gui/UID answer 125 until the next login, while user/UID stays.  It
 * used to take a bootstrap into gui/UID at once.
 */
static void
test_logout_ends_gui_domain(void **state)
{
	struct child_result	r;
	char			user[32], agents[96];
	int			i, rc = 5;

	(void)state;
	snprintf(user, sizeof user, "user/%ld", (long)getuid());
	snprintf(agents, sizeof agents, "%s/agents", dir);
	assert_int_equal(mkdir(agents, 0700), 0);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/bin/sleep",
	    "30", "<key>RunAtLoad</key><true/>"), NULL), 0);
	wait_print(&r, "\tpid = ");
	assert_int_equal(sim(&r, NULL, "sim-logout", NULL, NULL, NULL), 0);
	assert_int_equal(sim(&r, NULL, "bootstrap", gui, plist("/bin/sleep",
	    "30", "<key>RunAtLoad</key><true/>"), NULL), 125);
	assert_string_equal(r.err, "Bootstrap failed: 125: Domain does not "
	    "support specified action\n");
	assert_int_equal(sim(&r, NULL, "print", gui, NULL, NULL), 125);
	assert_int_equal(sim(&r, NULL, "print", target, NULL, NULL), 125);
	assert_int_equal(sim(&r, NULL, "bootstrap", user, plist("/bin/true",
	    NULL, "<key>LimitLoadToSessionType</key><string>Background"
	    "</string>"), NULL), 0);
	assert_int_equal(sim(&r, NULL, "sim-login", agents, NULL, NULL), 0);
	/* The job booted out at logout may still be draining (5). */
	for (i = 0; i < 100 && rc == 5; i++) {
		rc = sim(&r, NULL, "bootstrap", gui, plist("/bin/sleep", "30",
		    "<key>RunAtLoad</key><true/>"), NULL);
		if (rc == 5)
			sleep_ms(50);
	}
	assert_int_equal(rc, 0);
	wait_print(&r, "\tpid = ");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bootstrap_print_and_loaded,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_bootout_is_asynchronous,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_bootout_before_spawn,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_labels, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_domains, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disabled_store, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_exit_status_and_keepalive,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_logs_and_environment,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_kickstart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_btm_hold, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launchd_environment, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_kill_verb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_signals_main_process,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_inserted_library_missing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_context, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_throttle_from_start, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_working_directory_missing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_kickstart_throttled, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_number_of_files_over_hard,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_logout_ends_gui_domain,
		    setup, teardown),
	};

	/* MC_TEST_ONLY=pattern runs the matching tests, as the e2e suites. */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));

	return cmocka_run_group_tests_name("launchctl simulator", tests, NULL,
	    NULL);
}
