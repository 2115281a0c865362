/* SPDX-License-Identifier: MIT */
/*
 * End to end: a job whose file is removed goes, all of it, whatever
 * launchd or the daemon's own downtime does meanwhile.  A bootout launchd
 * refuses keeps the job named (and its agent and record) until one goes
 * through; a file removed while metalcapd was down is noticed at its next
 * start; and the job's override goes with it, so a new job of that name
 * starts from its own file.  The real metalcapd and metalcapctl; launchd
 * and the device are SIMULATED, as in test_daemon_e2e.c.
 */
#include <sys/stat.h>
#include <sys/types.h>

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

#define LABEL	"org.metalcap.job."

/* Does home/REL (printf-style, the job's name in it) exist? */
static bool
home_has(const char *fmt, const char *name)
{
	char		rel[192], path[320];
	struct stat	sb;

	snprintf(rel, sizeof rel, fmt, name);
	snprintf(path, sizeof path, "%s/%s", home, rel);
	return lstat(path, &sb) == 0;
}

static void
remove_job_file(const char *name)
{
	char	path[256];

	snprintf(path, sizeof path, "%s/jobs.d/%s.plist", home, name);
	assert_int_equal(unlink(path), 0);
}

/* Wait until the job is gone from status, launchd and the disk. */
static void
wait_all_gone(const char *name, long pid)
{
	json_t	*j = NULL;
	int	 i;

	for (i = 0; i < 400; i++) {
		json_decref(j);
		j = job_status(name);
		if (j == NULL && !loaded_in_gui(name) && kill((pid_t)pid, 0) ==
		    -1 && !home_has("agents/" LABEL "%s.plist", name) &&
		    !home_has("state/loaded/" LABEL "%s", name))
			return;
		sleep_ms(25 * (long)time_scale());
	}
	fail_msg("job %s not gone: status %s, launchd %s, pid %s, agent %s, "
	    "record %s", name, j ? str_of(j, "state") : "none",
	    loaded_in_gui(name) ? "has it" : "not", kill((pid_t)pid, 0) == 0 ?
	    "runs" : "gone", home_has("agents/" LABEL "%s.plist", name) ?
	    "kept" : "gone", home_has("state/loaded/" LABEL "%s", name) ?
	    "kept" : "gone");
}

/*
 * A job file removed: launchd takes the bootout at once, and the job goes
 * straight away, never through an error on the way.
 */
static void
test_removal_plain(void **state)
{
	long	pid;

	(void)state;
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 5.0);
	remove_job_file("llama");
	wait_all_gone("llama", pid);
	assert_true(daemon_log_has("job llama: unlocked"));
	if (daemon_log_has("job llama: error"))
		fail_msg("a bootout launchd took was taken for an error");
}

/*
 * Job llama running unlocked under launchctl-fault, whose next bootouts
 * launchd refuses (5) until fault (its file's path) is emptied; its pid.
 */
static long
running_bootout_refused(char *fault, size_t len)
{
	long	pid;

	restart_with_launchctl_fault("");
	snprintf(fault, len, "%s/lc.fault", home);
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 5.0);
	write_file(fault, "w", "bootout 5\n");
	return pid;
}

/*
 * launchd refuses the bootout of a removed job: the job stays in status,
 * in error, naming the bootout, and its agent and record stay, since
 * launchd runs it still; once launchd takes the bootout, all of it goes.
 */
static void
test_removal_bootout_refused(void **state)
{
	char		 path[256];
	json_t		*j = NULL;
	long		 pid;
	int		 i;

	(void)state;
	pid = running_bootout_refused(path, sizeof path);
	remove_job_file("llama");
	for (i = 0; i < 200; i++) {
		json_decref(j);
		if ((j = job_status("llama")) != NULL &&
		    strcmp(str_of(j, "state"), "error") == 0)
			break;
		sleep_ms(25 * (long)time_scale());
	}
	if (j == NULL || strstr(str_of(j, "reason"), "bootout") == NULL)
		fail_msg("a refused bootout left no trace: %s", j ? str_of(j,
		    "reason") : "the job is not in status");
	json_decref(j);
	assert_int_equal(kill((pid_t)pid, 0), 0);
	assert_true(loaded_in_gui("llama"));
	assert_true(home_has("agents/" LABEL "%s.plist", "llama"));
	assert_true(home_has("state/loaded/" LABEL "%s", "llama"));
	write_file(path, "w", "");
	wait_all_gone("llama", pid);
}

/*
 * launchd refuses the bootout of a job stopped by request: the job is not
 * shown stopped while launchd runs it, but in error naming the bootout,
 * and it stops once launchd takes the bootout.  The answers that do mean
 * stopped (3: not loaded; 36: going already) are no such refusal.
 */
static void
test_stop_bootout_refused(void **state)
{
	static const char *const	 fine[] = { "bootout 3\n",
	    "bootout 36\n" };
	char				 path[256];
	json_t				*j = NULL;
	long				 pid;
	size_t				 k;
	int				 code, i;

	(void)state;
	pid = running_bootout_refused(path, sizeof path);
	ctl(&code, "stop", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	for (i = 0; i < 200; i++) {
		json_decref(j);
		if ((j = job_status("llama")) != NULL &&
		    strcmp(str_of(j, "state"), "error") == 0)
			break;
		assert_string_not_equal(str_of(j, "state"), "stopped");
		sleep_ms(25 * (long)time_scale());
	}
	assert_non_null(strstr(str_of(j, "reason"), "launchctl bootout "
	    "failed (5)"));
	json_decref(j);
	assert_int_equal(kill((pid_t)pid, 0), 0);
	assert_true(loaded_in_gui("llama"));
	write_file(path, "w", "");
	ctl(&code, "stop", "llama", NULL, NULL);
	wait_state("llama", "stopped", -1, 5.0);
	/* Booted out: launchd lets the label go once the process is gone. */
	for (i = 0; i < 200 && loaded_in_gui("llama"); i++)
		sleep_ms(25 * (long)time_scale());
	assert_false(loaded_in_gui("llama"));
	assert_int_equal(kill((pid_t)pid, 0), -1);
	/* Not loaded, or going already: stopped all the same. */
	for (k = 0; k < sizeof fine / sizeof fine[0]; k++) {
		ctl(&code, "start", "llama", NULL, NULL);
		wait_state("llama", "unlocked", 0, 5.0);
		write_file(path, "w", fine[k]);
		ctl(&code, "stop", "llama", NULL, NULL);
		assert_int_equal(code, 0);
		wait_state("llama", "stopped", -1, 5.0);
		write_file(path, "w", "");
	}
}

/*
 * A removed job whose domain launchd says is gone (bootout 112: no such
 * domain, so nothing of it is loaded there) is forgotten, its agent and
 * record with it.  Kills: 112 taken for a refused bootout, which would
 * keep the job in error for ever.
 */
static void
test_removal_domain_gone(void **state)
{
	char		 path[256], cmd[512];
	json_t		*j = NULL;
	double		 start;

	(void)state;
	restart_with_launchctl_fault("");
	snprintf(path, sizeof path, "%s/lc.fault", home);
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	write_file(path, "w", "bootout 112\n");
	remove_job_file("llama");
	/*
	 * Its agent and record go when the bootout's answer comes; status
	 * leaves out a removed job at once, unless it is in error.
	 */
	for (start = now_s(); home_has("agents/" LABEL "%s.plist", "llama") ||
	    home_has("state/loaded/" LABEL "%s", "llama"); sleep_ms(25))
		assert_true(now_s() - start < 5 * time_scale());
	assert_null(j = job_status("llama"));
	/* The simulator still runs what the fault said was gone. */
	write_file(path, "w", "");
	snprintf(cmd, sizeof cmd, "%s %s bootout gui/%ld/" LABEL "llama",
	    simvar, SIM, (long)getuid());
	assert_int_equal(system(cmd), 0);
}

/* A file removed while metalcapd was down: its job goes at the next start. */
static void
test_removed_while_down(void **state)
{
	long	pid;

	(void)state;
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 5.0);
	kill_daemon(SIGKILL);
	remove_job_file("llama");
	/* launchd runs it on with the shim, as a Mac would. */
	assert_int_equal(kill((pid_t)pid, 0), 0);
	assert_true(environ_has(pid, INJECTED));
	start_daemon();
	wait_all_gone("llama", pid);
}

/*
 * A jobs folder metalcapd cannot read at its start (here a file in its
 * place: root reads any folder) says nothing of which jobs are gone: the
 * jobs launchd runs are left alone, not taken for orphans.
 */
static void
test_unreadable_folder_is_no_removal(void **state)
{
	char	from[256], to[256];
	long	pid;

	(void)state;
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 5.0);
	kill_daemon(SIGKILL);
	snprintf(from, sizeof from, "%s/jobs.d", home);
	snprintf(to, sizeof to, "%s/jobs.d.away", home);
	assert_int_equal(rename(from, to), 0);
	write_file(from, "w", "not a folder\n");
	start_daemon();
	/* status answers once the first scan is done. */
	assert_null(job_status("llama"));
	assert_int_equal(kill((pid_t)pid, 0), 0);
	assert_true(loaded_in_gui("llama"));
	assert_true(home_has("agents/" LABEL "%s.plist", "llama"));
	assert_true(home_has("state/loaded/" LABEL "%s", "llama"));
	unlink(from);
	assert_int_equal(rename(to, from), 0);
}

/*
 * An override goes with its job: enabled, removed and added again stock,
 * the new job runs stock as its file says.
 */
static void
test_override_goes_with_job(void **state)
{
	long	pid;
	int	code;

	(void)state;
	put_job("llama", "<key>Unlocked</key><false/>");
	pid = wait_state("llama", "stock", 0, 5.0);
	ctl(&code, "enable", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	pid = wait_state("llama", "unlocked", pid, 5.0);
	remove_job_file("llama");
	wait_all_gone("llama", pid);
	put_job("llama", "<key>Unlocked</key><false/>");
	pid = wait_state("llama", "stock", 0, 5.0);
	assert_false(environ_has(pid, INJECTED));
	assert_field_has("llama", "desired", "stock");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_removal_plain, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_removal_bootout_refused,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_bootout_refused,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_removal_domain_gone, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_removed_while_down, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_override_goes_with_job,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_unreadable_folder_is_no_removal, setup, teardown),
	};

	/* MC_TEST_ONLY=pattern runs the matching tests (make mutate). */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("removed e2e", tests, NULL, NULL);
}
