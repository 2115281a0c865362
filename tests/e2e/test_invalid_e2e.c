/* SPDX-License-Identifier: MIT */
/*
 * End to end: a job whose file went bad.  Its last good agent keeps
 * running, unless the job is stopped: a stop needs only the label, holds
 * against a start that races it, and is carried out again by a daemon
 * restarted before it was.  The real metalcapd and metalcapctl; launchd
 * and the device are SIMULATED, as in test_daemon_e2e.c.
 */
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
#include "mc_rpc.h"
#include "protocol.h"

static const char invalid_body[] = "<plist version=\"1.0\"><dict><key>"
    "Profile</key><string>apple9</string></dict></plist>";

/* Wait until the simulated launchd holds neither the label nor pid. */
static void
wait_let_go(const char *name, long pid)
{
	int	i;

	for (i = 0; i < 200 && (loaded_in_gui(name) || kill((pid_t)pid,
	    0) == 0); i++)
		sleep_ms(25 * (long)time_scale());
	assert_false(loaded_in_gui(name));
	assert_int_equal(kill((pid_t)pid, 0), -1);
}

/* The job runs unlocked, then its file goes bad: the running pid. */
static long
running_then_invalid(const char *name)
{
	char	file[128];
	long	pid;

	put_job(name, "");
	pid = wait_state(name, "unlocked", 0, 5.0);
	snprintf(file, sizeof file, "%s.plist", name);
	write_raw(file, invalid_body);
	wait_state(name, "invalid", 0, 5.0);
	return pid;
}

/*
 * A job whose file went bad keeps its last good agent, but a stop still
 * stops it: the label needs no valid file.  It used to be saved and
 * answered while the workload ran on.  Mended, the file finds it
 * stopped; start runs it again.
 */
static void
test_stop_invalid_job(void **state)
{
	struct child_result	*r;
	json_t			*j;
	long			 pid;
	int			 code;

	(void)state;
	pid = running_then_invalid("llama");
	assert_int_equal(kill((pid_t)pid, 0), 0);
	assert_true(loaded_in_gui("llama"));
	/* start leaves the last good agent be, and says so. */
	r = ctl(&code, "start", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->out, "llama: start: nothing: its job file "
	    "is invalid"));
	sleep_ms(300);
	assert_int_equal(launchd_pid("llama"), pid);
	ctl(&code, "stop", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	wait_let_go("llama", pid);
	/* Still invalid, and still saying why. */
	assert_field_has("llama", "state", "invalid");
	assert_field_has("llama", "reason", "ProgramArguments: required");
	put_job("llama", "");
	wait_state("llama", "stopped", 0, 5.0);
	j = job_status("llama");
	assert_true(json_is_null(json_object_get(j, "pid")));
	json_decref(j);
	ctl(&code, "start", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("llama", "unlocked", 0, 5.0);
}

/*
 * stop and start in one write: the start lands while the stop's bootout
 * is under way.  An invalid file leaves nothing to load again, so the
 * job stays out, where the old agent used to come back, unwatched.
 */
static void
test_stop_start_race_invalid(void **state)
{
	struct mc_rpc_decoder	 dec;
	struct mc_rpc_message	 m;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	long			 pid;
	int			 fd;

	(void)state;
	pid = running_then_invalid("llama");
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	mc_rpc_pack_request(&pk, 1, MC_M_STOP, 1);
	mc_rpc_pack_str(&pk, "llama");
	mc_rpc_pack_request(&pk, 2, MC_M_START, 1);
	mc_rpc_pack_str(&pk, "llama");
	mc_rpc_decoder_init(&dec, MC_MAX_MESSAGE);
	fd = raw_connect();
	assert_int_equal(raw_exchange(fd, sb.data, sb.size, &dec, &m), 0);
	assert_true(m.msgid == 1 && m.error.type == MSGPACK_OBJECT_NIL);
	assert_int_equal(raw_exchange(fd, "", 0, &dec, &m), 0);
	assert_true(m.msgid == 2 && m.error.type == MSGPACK_OBJECT_NIL);
	close(fd);
	wait_let_go("llama", pid);
	sleep_ms(1000 * (long)time_scale());
	assert_false(loaded_in_gui("llama"));
	assert_field_has("llama", "state", "invalid");
	assert_field_has("llama", "reason", "ProgramArguments: required");
	/* Mended, the file runs: the start was kept. */
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	msgpack_sbuffer_destroy(&sb);
	mc_rpc_decoder_free(&dec);
}

/*
 * A daemon killed between saving a stop and carrying it out (here: its
 * saved state says stopped, its job file went bad meanwhile) carries the
 * stop out when it starts again.
 */
static void
test_saved_stop_invalid_after_restart(void **state)
{
	char	path[256];
	long	pid;

	(void)state;
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 5.0);
	kill_daemon(SIGKILL);
	write_raw("llama.plist", invalid_body);
	snprintf(path, sizeof path, "%s/state/overrides.plist", home);
	write_file(path, "w", "<plist version=\"1.0\"><dict><key>llama</key>"
	    "<dict><key>Stopped</key><true/></dict></dict></plist>");
	assert_true(loaded_in_gui("llama"));
	start_daemon();
	wait_let_go("llama", pid);
	wait_state("llama", "invalid", 0, 5.0);
}

/*
 * An edit's re-render boots the old agent out; the file goes bad before
 * launchd answers (a bootout answered a second late: tests/fault's
 * launchctl-fault).  The agent just rendered, from the valid edit, is the
 * last good one, and it runs.
 */
static void
test_file_breaks_during_rerender(void **state)
{
	long		 pid, now = 0;
	int		 i;

	(void)state;
	restart_with_launchctl_fault("bootout late\n");
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 5.0);
	put_job("llama", "<key>EnvironmentVariables</key><dict><key>EDITED"
	    "</key><string>1</string></dict>");
	sleep_ms(300);
	write_raw("llama.plist", invalid_body);
	for (i = 0; i < 200 && ((now = launchd_pid("llama")) <= 0 ||
	    now == pid); i++)
		sleep_ms(25 * (long)time_scale());
	assert_true(now > 0 && now != pid);
	assert_int_equal(kill((pid_t)pid, 0), -1);
	assert_true(environ_has(now, "EDITED=1"));
	wait_state("llama", "invalid", 0, 5.0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stop_invalid_job, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stop_start_race_invalid,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_saved_stop_invalid_after_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_file_breaks_during_rerender, setup, teardown),
	};

	/* MC_TEST_ONLY=pattern runs the matching tests (make mutate). */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("invalid e2e", tests, NULL, NULL);
}
