/* SPDX-License-Identifier: MIT */
/*
 * metalcapd's own restarts and pauses beside running jobs (issue 47):
 * the package's postinstall restarts it, a crash and KeepAlive do, and a
 * sleeping Mac stops it.  The exits launchd counted are each judged once,
 * at times they can have had, never all "now", and as what they were.
 */
#include <sys/stat.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
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

/* A program that dies of SIGTERM, as Python and MLX servers do. */
static const char sleeper[] = "<key>ProgramArguments</key><array><string>"
    "/bin/sleep</string><string>1000</string></array><key>Unlocked</key>"
    "<false/>";

/* The sleeper, and three restarts of it; its last pid. */
static long
sleeper_restarted(void)
{
	long	pid;
	int	code, i;

	put_job("sleeper", sleeper);
	pid = wait_state("sleeper", "stock", 0, 5.0);
	for (i = 0; i < 3; i++) {
		ctl(&code, "restart", "sleeper", NULL, NULL);
		assert_int_equal(code, 0);
		pid = wait_state("sleeper", "stock", pid, 10.0);
	}
	return pid;
}

/*
 * Three restarts (each a SIGTERM the program dies of, our own doing),
 * then metalcapd is killed and comes back.  launchd's print then has 4
 * runs: the new daemon must know the 3 ended ones were judged, not take
 * them for 3 abnormal exits within 60 s, a crash loop.  Kills: counts
 * kept only in memory (issue 47, finding 1).
 */
static void
test_restarts_survive_daemon_restart(void **state)
{
	json_t	*j;
	long	 pid;

	(void)state;
	pid = sleeper_restarted();
	assert_int_equal(launchd_number("sleeper", "runs"), 4);
	kill_daemon(SIGKILL);
	start_daemon();
	/* Its pid is known: launchd's print was read, and judged. */
	wait_state("sleeper", "stock", 0, 5.0);
	assert_int_equal(daemon_log_count("job sleeper: exited abnormally"),
	    0);
	assert_field_has("sleeper", "state", "stock");
	j = job_status("sleeper");
	assert_int_equal(pid_of(j), pid);
	json_decref(j);
}

/*
 * A daemon killed in a restart of its own: the SIGTERM it sent is still
 * its own after it comes back.  Its prints are held (they hang) from the
 * restart on, so it never counts the run that ended.  Kills: own_stops
 * kept only in memory.
 */
static void
test_own_stop_survives_daemon_restart(void **state)
{
	char		path[256];
	long		pid;
	int		code;

	(void)state;
	restart_with_launchctl_fault("");
	put_job("sleeper", sleeper);
	pid = wait_state("sleeper", "stock", 0, 5.0);
	snprintf(path, sizeof path, "%s/lc.fault", home);
	write_file(path, "w", "print hang\n");
	ctl(&code, "restart", "sleeper", NULL, NULL);
	/* launchd ran it again; metalcapd has not looked. */
	while (launchd_number("sleeper", "runs") < 2 ||
	    launchd_pid("sleeper") == 0)
		sleep_ms(10);
	/* As the package's postinstall does; its hung helpers go too. */
	kill_daemon(SIGTERM);
	write_file(path, "w", "");
	start_daemon();
	wait_state("sleeper", "stock", pid, 10.0);
	assert_int_equal(daemon_log_count("job sleeper: exited abnormally"),
	    0);
}

/*
 * A record from a metalcapd that kept no counts ("HASH DOMAIN"): the
 * registration's earlier exits are taken as judged, and said so.  Kills:
 * a record without counts read as counts of zero.
 */
static void
test_record_without_counts(void **state)
{
	char	path[256], text[128], hash[32], domain[32];
	FILE	*f;

	(void)state;
	(void)sleeper_restarted();
	kill_daemon(SIGKILL);
	snprintf(path, sizeof path, "%s/state/loaded/org.metalcap.job.sleeper",
	    home);
	assert_non_null(f = fopen(path, "r"));
	assert_non_null(fgets(text, sizeof text, f));
	fclose(f);
	/* Its first two fields only, as an older metalcapd wrote it. */
	assert_int_equal(sscanf(text, "%31s %31s", hash, domain), 2);
	snprintf(text, sizeof text, "%s %s\n", hash, domain);
	write_file(path, "w", text);
	start_daemon();
	wait_daemon_log("job sleeper: 3 earlier runs of its registration "
	    "ended before metalcapd counted them; not judged", 1);
	assert_int_equal(daemon_log_count("job sleeper: exited abnormally"),
	    0);
	assert_field_has("sleeper", "state", "stock");
}

/*
 * metalcapd paused (a sleeping Mac, SIGSTOP) while an unlocked job exits
 * every 3 s under a CrashLoop of 3 in 5 s it never meets: on waking it
 * learns 4 exits at once.  launchd starts a job at most every
 * ThrottleInterval, so they span seconds, and no 3 of them can be shown
 * within 5 s: no crash loop, no revert.  Kills: exits learned late all
 * stamped "now" (issue 47, finding 5).
 */
static void
test_pause_learns_exits_late(void **state)
{
	long	runs;

	(void)state;
	put_job("llama", "<key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string><string>--exit-after</string><string>3000"
	    "</string><string>1</string></array><key>CrashLoop</key><dict>"
	    "<key>MaxExits</key><integer>3</integer><key>WindowSeconds</key>"
	    "<integer>5</integer></dict><key>ThrottleInterval</key>"
	    "<integer>1</integer>");
	wait_state("llama", "unlocked", 0, 5.0);
	assert_int_equal(kill(daemon_pid, SIGSTOP), 0);
	runs = launchd_number("llama", "runs");
	while (launchd_number("llama", "runs") < runs + 4)
		sleep_ms(50);
	assert_int_equal(kill(daemon_pid, SIGCONT), 0);
	wait_daemon_log("job llama: exited abnormally (exit status 1), ", 1);
	assert_int_equal(daemon_log_count("exited abnormally (exit status 1), "
	    "3 in 5 s"), 0);
	assert_int_equal(daemon_log_count("exited abnormally (exit status 1), "
	    "4 in 5 s"), 0);
	assert_field_has("llama", "state", "unlocked");
}

/*
 * A program that ran and then exited 78 itself (EX_CONFIG: its own
 * configuration is wrong) is an exit like any other, not "launchd could
 * not start it": metalcapd saw its pid running the program.  It waits
 * for home/go, so it is seen first.  Kills: every 78 taken for launchd's
 * (xpcproxy's) spawn failure, the job failed at once (issue 47, 8).
 */
static void
test_program_exits_78(void **state)
{
	char	 go[200], extra[1024];
	json_t	*j;
	long	 pid;

	(void)state;
	snprintf(go, sizeof go, "%s/go", home);
	/* Its second run serves. */
	snprintf(extra, sizeof extra, "<key>ProgramArguments</key><array>"
	    "<string>/bin/sh</string><string>-c</string><string>[ -e %s.done "
	    "] &amp;&amp; exec sleep 1000; while [ ! -e %s ]; do sleep 0.05; "
	    "done; touch %s.done; exit 78</string></array><key>Unlocked</key>"
	    "<false/>", go, go, go);
	put_job("conf", extra);
	pid = wait_state("conf", "stock", 0, 5.0);
	write_file(go, "w", "");
	wait_daemon_log("job conf: exited abnormally (exit status 78", 1);
	wait_state("conf", "stock", pid, 10.0);
	assert_false(daemon_log_has("launchd could not start"));
	j = job_status("conf");
	assert_true(json_is_null(json_object_get(j, "failed")));
	json_decref(j);
}

/*
 * A restart right after a start: the process goes at once, and launchd
 * holds the next run in "spawn scheduled" for the rest of its
 * ThrottleInterval (4 s here).  A kickstart of it would block until then
 * (the simulator blocks as launchctl does), past metalcapd's launchctl
 * deadline (1.5 s here), and say the kickstart failed; launchd starts it
 * by itself.  Kills: restart.c kickstarting a scheduled spawn (issue 47,
 * finding 10).
 */
static void
test_restart_within_throttle(void **state)
{
	long	pid;
	int	code;

	(void)state;
	kill_daemon(SIGTERM);
	daemon_args[0] = "--launchctl-timeout";
	daemon_args[1] = "1500";
	start_daemon();
	put_job("quick", "<key>ThrottleInterval</key><integer>4</integer>");
	pid = wait_state("quick", "unlocked", 0, 5.0);
	ctl(&code, "restart", "quick", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("quick", "unlocked", pid, 15.0);
	assert_false(daemon_log_has("kickstart failed"));
	assert_false(daemon_log_has("did not finish within"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_restarts_survive_daemon_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_own_stop_survives_daemon_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_without_counts,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_pause_learns_exits_late,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_exits_78, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_restart_within_throttle,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
