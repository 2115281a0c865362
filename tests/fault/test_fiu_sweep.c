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
 *   - a revert the faulted run showed still in force (no hold lifted).
 * MC_FIU_EVERY=K fails every Kth call only: make test fails every 40th,
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

static char	fiu_preload[300], fiu_var[300];

/* Is name in state within s seconds?  No failure: the sweep goes on. */
static bool
reach(const char *name, const char *state, double s)
{
	double	 start = now_s();
	json_t	*j;
	bool	 there = false;

	while (!there && now_s() - start < s * time_scale()) {
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

static bool
shows_reverted(const char *name)
{
	json_t	*j = job_status(name);
	bool	 yes = j != NULL && json_is_object(json_object_get(j,
	    "reverted"));

	json_decref(j);
	return yes;
}

/* metalcapd again, under fiu_nth with its nth call failing (0: none). */
static void
fiu_daemon(long nth)
{
	kill_daemon(SIGTERM);
	snprintf(fiu_preload, sizeof fiu_preload, "LD_PRELOAD=%s", FIU_LIB);
	snprintf(fiu_var, sizeof fiu_var, "MC_FIU=%ld %s", nth, home);
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
	ctl(&code, "disable", "j0", NULL, NULL);
	reach("j0", "stock", 5.0);
	ctl(&code, "enable", "j0", NULL, NULL);
	reach("j0", "unlocked", 5.0);
	ctl(&code, "stop", "j0", NULL, NULL);
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

	fiu_daemon(0);
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

/* After the nth call failed: the invariants; violations counted. */
static int
judge(long nth)
{
	bool	alive, reverted;
	int	bad = 0;
	long	pid;

	alive = kill(daemon_pid, 0) == 0;
	reverted = alive && shows_reverted("j0");
	kill_daemon(SIGKILL);
	daemon_env = daemon_env2 = NULL;
	start_daemon();
	if (!alive) {
		report("call %ld failing: metalcapd died", nth);
		bad++;
	}
	/* Settled: stopped, stock, reverted or unlocked, with launchd. */
	if (!reach("j0", "unlocked", 10.0) && !reach("j0", "stock", 1.0) &&
	    !reach("j0", "reverted", 1.0)) {
		report("call %ld failing: j0 never settled running", nth);
		bad++;
	}
	if (!loaded_in_gui("j0")) {
		report("call %ld failing: launchd lost j0", nth);
		bad++;
	}
	pid = launchd_pid("j0");
	if (shows_reverted("j0") && pid > 0 && environ_has(pid, INJECTED)) {
		report("call %ld failing: j0 reverted, running unlocked", nth);
		bad++;
	}
	if (reverted && !shows_reverted("j0")) {
		report("call %ld failing: its revert was lost", nth);
		bad++;
	}
	return bad;
}

static void
test_fiu_sweep(void **state)
{
	const char	*every_s = getenv("MC_FIU_EVERY");
	long		 start, calls, nth, every = every_s ? atol(every_s) : 40;
	int		 tried = 0, violations = 0;

	(void)state;
	if (sanitized())
		skip();		/* a second preload beside ASan's */
	start = count_calls(false);
	teardown(NULL);
	assert_int_equal(setup(NULL), 0);
	calls = count_calls(true);
	assert_true(start > 0 && calls > start);
	for (nth = start + 1; nth <= calls; nth += every > 0 ? every : 1) {
		teardown(NULL);
		assert_int_equal(setup(NULL), 0);
		fiu_daemon(nth);
		scenario();
		violations += judge(nth);
		tried++;
	}
	report("I/O-fault sweep: %ld calls to metalcapd's files in the "
	    "scenario after its start, %d failed in turn (every %ld), %d "
	    "violations", calls - start, tried, every, violations);
	assert_int_equal(violations, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fiu_sweep, setup,
		    teardown),
	};

	report_prefix = "fault";
	return cmocka_run_group_tests_name("I/O-fault sweep", tests, NULL,
	    NULL);
}
