/* SPDX-License-Identifier: MIT */
/*
 * The I/O-fault sweep, as SQLite tests itself: a scripted scenario (a job
 * unlocked, disabled, enabled, stopped, started, reverted by its pipeline
 * failing) is run once to count metalcapd's open, write, rename, fsync and
 * mkdir calls on its own files, then once for each of them failing in turn
 * (tests/fault/fiu_nth.c, on libfiu).  Those of its start are left out: a
 * metalcapd that cannot make its folders or take its lock exits saying
 * so, and launchd starts it again (test_io_faults has those disks full).
 * After each, metalcapd must still
 * run (an I/O error is no crash), and a fresh one, started after a kill
 * -9, must show:
 *   - the job, once (launchd has one registration for it);
 *   - no reverted job running with the shim;
 *   - a revert the faulted run showed, or saved, still in force (no hold
 *     lifted).
 * MC_FIU_FIRST=N starts at call N (0: metalcapd's start left out).
 * MC_FIU_EVERY=K takes every Kth call only: make test takes every 60th,
 * a smoke of the sweep; make faults every one.  The figures go to stderr
 * ("fault:").
 */
#include <sys/stat.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "child.h"
#include "harness.h"

#define FIU_LIB		BUILD "/tests/libfiu_nth.so"
/* A second preload beside ASan's runtime, which must come first. */
#ifdef __SANITIZE_ADDRESS__
#define FIU_RUNS	0
#else
#define FIU_RUNS	1
#endif

static char	fiu_preload[300], fiu_var[300];

/* Has metalcapd ended (killed at its crash point)? */
static bool
daemon_gone(void)
{
	char	s = proc_state(daemon_pid);

	return s == 0 || s == 'Z';
}

/* Is name in state within s seconds?  No failure: the sweep goes on. */
static bool
reach(const char *name, const char *state, double s)
{
	double	 start = now_s();
	json_t	*j;
	bool	 there = false;

	while (!there && !daemon_gone() && now_s() - start < s *
	    time_scale()) {
		if ((j = job_status(name)) != NULL) {
			there = strcmp(str_of(j, "state"), state) == 0 &&
			    pid_of(j) > 0;
			json_decref(j);
		}
		if (!there)
			sleep_ms(20);
	}
	return there;
}

/*
 * Is name settled within 10 s: running unlocked, stock or reverted, or
 * stopped (*stopped says which)?
 */
static bool
settled(const char *name, bool *stopped)
{
	static const char *const running[] = { "unlocked", "stock",
	    "reverted" };
	double	 start = now_s();
	json_t	*j;
	size_t	 i;
	bool	 done = false;

	while (!done && now_s() - start < 10.0 * time_scale()) {
		if ((j = job_status(name)) != NULL) {
			*stopped = strcmp(str_of(j, "state"), "stopped") == 0;
			done = *stopped;
			for (i = 0; i < 3 && pid_of(j) > 0; i++)
				done |= strcmp(str_of(j, "state"),
				    running[i]) == 0;
			json_decref(j);
		}
		if (!done)
			sleep_ms(20);
	}
	return done;
}

/* A stopped j0 is booted out, the bootout under way: within 10 s. */
static bool
booted_out(bool stopped)
{
	double	start = now_s();

	while (stopped && loaded_in_gui("j0") && now_s() - start < 10.0 *
	    time_scale())
		sleep_ms(50);
	return stopped && !loaded_in_gui("j0");
}

static bool
shows_reverted(const char *name)
{
	json_t	*j = job_status(name);
	bool	 yes = j != NULL && json_is_object(json_object_get(j,
	    "reverted"));

	json_decref(j);
	return yes;
}

/*
 * metalcapd again, under fiu_nth: its nth call fails (0: none), or with
 * kill, it is killed before that call.
 */
static void
fiu_daemon(long nth, bool kill)
{
	kill_daemon(SIGTERM);
	snprintf(fiu_preload, sizeof fiu_preload, "LD_PRELOAD=%s", FIU_LIB);
	snprintf(fiu_var, sizeof fiu_var, "MC_FIU=%ld %s%s", nth, home,
	    kill ? " kill" : "");
	daemon_env = fiu_preload;
	daemon_env2 = fiu_var;
	start_daemon();
}

/* The scenario; each step may fail under the fault, and the next goes on. */
static void
scenario(void)
{
	long	pid;
	int	code;

	put_job("j0", "");
	reach("j0", "unlocked", 5.0);
	if (daemon_gone())
		return;
	ctl(&code, "disable", "j0", NULL, NULL);
	reach("j0", "stock", 5.0);
	if (daemon_gone())
		return;
	ctl(&code, "enable", "j0", NULL, NULL);
	reach("j0", "unlocked", 5.0);
	if (daemon_gone())
		return;
	ctl(&code, "stop", "j0", NULL, NULL);
	if (daemon_gone())
		return;
	ctl(&code, "start", "j0", NULL, NULL);
	if (reach("j0", "unlocked", 5.0) && (pid = launchd_pid("j0")) > 0) {
		real_pipeline_failure(pid);
		reach("j0", "reverted", 5.0);
	}
}

/*
 * The calls a run with none failing makes: metalcapd's start alone, or
 * with the scenario.
 */
static long
count_calls(bool with_scenario)
{
	char	path[256];
	FILE	*f;
	long	n = -1;

	fiu_daemon(0, false);
	if (with_scenario)
		scenario();
	kill_daemon(SIGTERM);
	snprintf(path, sizeof path, "%s/fiu-count", home);
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* Does the saved state hold a revert of j0? */
static bool
saved_revert(void)
{
	char	path[256], text[8192];
	FILE	*f;
	size_t	n = 0;

	snprintf(path, sizeof path, "%s/state/overrides.plist", home);
	if ((f = fopen(path, "r")) != NULL) {
		n = fread(text, 1, sizeof text - 1, f);
		fclose(f);
	}
	text[n] = '\0';
	return strstr(text, "<key>Reverted</key>") != NULL;
}

/* After the nth call failed or was a crash: the invariants, violations
 * counted. */
static int
judge(long nth, bool killed)
{
	const char	*at = killed ? "killed before call" : "call failing";
	bool		 alive, reverted, stopped = false;
	int		 bad = 0;
	long		 pid;

	alive = !daemon_gone();
	reverted = (alive && shows_reverted("j0")) || saved_revert();
	kill_daemon(SIGKILL);
	daemon_env = daemon_env2 = NULL;
	start_daemon();
	if (!alive && !killed) {
		report("%s %ld: metalcapd died", at, nth);
		bad++;
	}
	/*
	 * Settled: running (unlocked, stock or reverted) and with launchd,
	 * or stopped, as a stop saved before the end asked (the start after
	 * it never answered, or was not saved), and booted out.
	 */
	if (!settled("j0", &stopped)) {
		report("%s %ld: j0 never settled", at, nth);
		bad++;
	} else if (!booted_out(stopped) && loaded_in_gui("j0") == stopped) {
		report("%s %ld: j0 %s, and launchd %s it", at, nth, stopped ?
		    "stopped" : "running", stopped ? "runs" : "lost");
		bad++;
	}
	pid = launchd_pid("j0");
	if (shows_reverted("j0") && pid > 0 && environ_has(pid, INJECTED)) {
		report("%s %ld: j0 reverted, running unlocked", at, nth);
		bad++;
	}
	if (reverted && !shows_reverted("j0")) {
		report("%s %ld: its revert was lost", at, nth);
		bad++;
	}
	return bad;
}

/* The sweep: each call of the scenario failed, or a crash before it. */
static void
sweep(bool kill)
{
	const char	*every_s = getenv("MC_FIU_EVERY");
	long		 start, calls, nth, every = every_s ? atol(every_s) : 60;
	int		 tried = 0, violations = 0;

	if (!FIU_RUNS || sanitized())
		skip();
	start = count_calls(false);
	teardown(NULL);
	assert_int_equal(setup(NULL), 0);
	calls = count_calls(true);
	assert_true(start > 0 && calls > start);
	/* The crash points start one later: not where the faults did. */
	nth = start + 1 + (kill && every > 1 ? every / 2 : 0);
	if (getenv("MC_FIU_FIRST") != NULL)	/* to go back to a finding */
		nth = atol(getenv("MC_FIU_FIRST"));
	for (; nth <= calls; nth += every > 0 ? every : 1) {
		teardown(NULL);
		assert_int_equal(setup(NULL), 0);
		fiu_daemon(nth, kill);
		scenario();
		violations += judge(nth, kill);
		tried++;
	}
	report("%s sweep: %ld calls to metalcapd's files in the scenario "
	    "after its start, %d %s (every %ld), %d violations", kill ?
	    "crash-point" : "I/O-fault", calls - start, tried, kill ?
	    "killed before in turn" : "failed in turn", every, violations);
	assert_int_equal(violations, 0);
}

static void
test_fiu_sweep(void **state)
{
	(void)state;
	sweep(false);
}

static void
test_crash_sweep(void **state)
{
	(void)state;
	sweep(true);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fiu_sweep, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_crash_sweep, setup,
		    teardown),
	};

	report_prefix = "fault";
	/* MC_TEST_ONLY=test_name runs one (cmocka's filter, wildcards). */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("I/O-fault and crash sweeps", tests,
	    NULL, NULL);
}
