/* SPDX-License-Identifier: MIT */
/*
 * Profile auto by measurement (daemon/measure.c): llama-bench, run stock
 * and in each profile whose probe passed, picks the profile a job of
 * profile auto runs; a tie keeps the lower; it is measured again when
 * what was measured changes, and never while the job serves.  The real
 * metalcapd, the launchctl SIMULATOR, fake-llama and llama-bench-sim on
 * the simulated device (tests/sim/README.md), whose apple9 speed a test
 * sets: how ggml's M4 Max tuning runs on a given host is not known here.
 */
#include <sys/stat.h>

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>
#include <jansson.h>

#include "child.h"
#include "harness.h"

#define BENCH_SIM	BUILD "/tests/llama-bench-sim"

static char	model[128], runs[128];

/*
 * A job of profile auto serving the simulator's model, measured with
 * bench (BenchProgram), its environment plus env_xml.
 */
static void
measure_job(const char *name, const char *bench, const char *env_xml)
{
	char	path[256], body[4096];

	snprintf(model, sizeof model, "%s/tiny.gguf", home);
	snprintf(runs, sizeof runs, "%s/bench-runs", home);
	if (access(model, F_OK) == -1)
		write_file(model, "w", "GGUF\ngeneral.type=llama 1B Q4_K - "
		    "Medium\ngeneral.size=667815936\n"
		    "general.params=1100048384\n");
	snprintf(path, sizeof path, "%s.plist", name);
	snprintf(body, sizeof body, "<?xml version=\"1.0\"?><plist version="
	    "\"1.0\"><dict><key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string><string>-m</string><string>%s</string>"
	    "</array><key>Profile</key><string>auto</string>"
	    "<key>BenchProgram</key><string>%s</string>"
	    "<key>EnvironmentVariables</key><dict><key>MTLSIM_SWITCHES</key>"
	    "<string>%s</string><key>LLAMA_BENCH_SIM_RUNS</key><string>%s"
	    "</string><key>LLAMA_BENCH_SIM_REBUILD_AFTER</key><string>1000000"
	    "</string>%s</dict>%s</dict></plist>\n", model, bench,
	    switches + strlen("MTLSIM_SWITCHES="), runs, env_xml, job_throttle);
	write_raw(path, body);
}

/* How many times llama-bench-sim has run for this home. */
static long
bench_runs(void)
{
	FILE	*f = fopen(runs, "r");
	long	 n = 0;

	if (f != NULL) {
		if (fscanf(f, "%ld", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

/* The job's figures as state/measured.json keeps them. */
static json_t *
measured(const char *name)
{
	char		 path[256];
	json_t		*all, *e;

	snprintf(path, sizeof path, "%s/state/measured.json", home);
	if ((all = json_load_file(path, 0, NULL)) == NULL)
		return NULL;
	e = json_incref(json_object_get(all, name));
	json_decref(all);
	return e;
}

/*
 * Wait until status says want of name's measurement: status may see the
 * files as they were up to a second before (measure.c's memo).
 */
static void
wait_due(const char *name, const char *want)
{
	char	buf[1024];
	double	start = now_s();

	while (strcmp(status_string(name, "auto", "measure_due", buf,
	    sizeof buf), want) != 0) {
		if (now_s() - start > 5 * time_scale())
			fail_msg("measure_due of %s: \"%s\", not \"%s\"",
			    name, buf, want);
		sleep_ms(20);
	}
}

static bool
evidence_has(const char *name, const char *file)
{
	char	path[256];

	snprintf(path, sizeof path, "%s/state/measured/%s/%s", home, name,
	    file);
	return access(path, R_OK) == 0;
}

/*
 * apple9 runs at half apple7's speed on this host: apple7 runs the job,
 * though higher, and the figures and the reason say why, in status, in
 * metalcapctl status and in the evidence folder.
 */
static void
test_slower_higher_profile_loses(void **state)
{
	const char		*table[] = { "status", NULL };
	struct child_result	*r;
	json_t			*e;
	char			 buf[1024];
	long			 pid;
	int			 code;

	(void)state;
	measure_job("srv", BENCH_SIM, "<key>LLAMA_BENCH_SIM_APPLE9_SPEED</key>"
	    "<string>0.5</string>");
	pid = wait_state("srv", "unlocked", 0, 30.0);
	assert_field_has("srv", "profile", "apple7");
	assert_true(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1007"));
	/* Stock, apple7 and apple9, each run once. */
	assert_int_equal(bench_runs(), 3);
	status_string("srv", "auto", "measured", buf, sizeof buf);
	if (strstr(buf, "measured: apple7 runs it") == NULL ||
	    strstr(buf, "apple9 0.") == NULL ||
	    strstr(buf, "x apple7, slower") == NULL)
		fail_msg("measured: %s", buf);
	assert_string_equal(status_string("srv", "auto", "chosen", buf,
	    sizeof buf), "apple7");
	assert_string_equal(status_string("srv", "auto", "measure_due", buf,
	    sizeof buf), "");
	r = ctlv(&code, table);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->out, "    auto: measured: apple7 runs it"));
	e = measured("srv");
	assert_non_null(e);
	assert_string_equal(json_string_value(json_object_get(e, "choice")),
	    "apple7");
	assert_non_null(json_object_get(json_object_get(json_object_get(
	    json_object_get(e, "options"), "apple9"), "tests"), "tg16"));
	json_decref(e);
	snprintf(buf, sizeof buf, "python3 -c 'import sys; t = open(sys.argv"
	    "[1]).read(); assert \"- model_file: \" in t and \"- apple9: "
	    "figures in its .json\" in t and \"## Choice\\n\\napple7\\n\" "
	    "in t, t' %s/state/measured/srv/metadata.md", home);
	assert_int_equal(system(buf), 0);
	assert_true(evidence_has("srv", "stock.json"));
	assert_true(evidence_has("srv", "apple7.json"));
	assert_true(evidence_has("srv", "apple9.json"));
}

/*
 * An allowlist (UnlockOnlyWhere) that allows apple7 alone for this job:
 * apple9, twice as fast, is never benchmarked with the shim, its figures
 * "not allowed here now", and apple7 runs it.  Kills: a measurement
 * running a profile the allowlist refuses (issue 47, behaviours no test
 * checked).
 */
static void
test_allowlist_bars_measuring(void **state)
{
	char	buf[1024];
	long	pid;

	(void)state;
	write_managed(NULL, "<key>UnlockOnlyWhere</key><array><dict>"
	    "<key>Profile</key><string>apple7</string><key>LlamaBuild</key>"
	    "<string>build *</string></dict></array>");
	measure_job("srv", BENCH_SIM, "<key>LLAMA_BENCH_SIM_APPLE9_SPEED</key>"
	    "<string>2.0</string>");
	pid = wait_state("srv", "unlocked", 0, 30.0);
	assert_field_has("srv", "profile", "apple7");
	assert_true(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1007"));
	/* Stock and apple7 alone. */
	assert_int_equal(bench_runs(), 2);
	assert_false(evidence_has("srv", "apple9.json"));
	status_string("srv", "auto", "measured", buf, sizeof buf);
	if (strstr(buf, "not allowed here now") == NULL)
		fail_msg("measured: %s", buf);
}

/*
 * Under an allowlist that allows apple9 alone, apple9 runs at a
 * thousandth of its speed: stock wins and runs the job, which then never
 * waits for its identity.  The job's settings change (apple9 twice as
 * fast): the next measurement reads the identity first, and apple9 wins.
 * Before, it was "not allowed here now" for good (issue 48, 1).
 */
static void
test_allowlist_after_stock_won(void **state)
{
	char	buf[1024];
	long	pid;

	(void)state;
	write_managed(NULL, "<key>UnlockOnlyWhere</key><array><dict>"
	    "<key>Profile</key><string>apple9</string><key>LlamaBuild</key>"
	    "<string>build *</string></dict></array>");
	measure_job("srv", BENCH_SIM, "<key>LLAMA_BENCH_SIM_APPLE9_SPEED</key>"
	    "<string>0.001</string>");
	pid = wait_state("srv", "stock", 0, 30.0);
	status_string("srv", "auto", "chosen", buf, sizeof buf);
	assert_string_equal(buf, "stock");
	measure_job("srv", BENCH_SIM, "<key>LLAMA_BENCH_SIM_APPLE9_SPEED</key>"
	    "<string>2.0</string>");
	pid = wait_state("srv", "unlocked", pid, 30.0);
	assert_field_has("srv", "profile", "apple9");
	assert_true(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1009"));
	status_string("srv", "auto", "measured", buf, sizeof buf);
	if (strstr(buf, "measured: apple9 runs it") == NULL)
		fail_msg("measured: %s", buf);
}

/*
 * apple9 twice as fast: it wins.  Its settings changed (its job file's
 * environment), so it is measured again, down between the two agents.
 */
static void
test_faster_higher_profile_wins(void **state)
{
	char	buf[1024];
	long	pid;

	(void)state;
	measure_job("srv", BENCH_SIM, "<key>LLAMA_BENCH_SIM_APPLE9_SPEED</key>"
	    "<string>0.5</string>");
	pid = wait_state("srv", "unlocked", 0, 30.0);
	assert_field_has("srv", "profile", "apple7");
	measure_job("srv", BENCH_SIM, "<key>LLAMA_BENCH_SIM_APPLE9_SPEED</key>"
	    "<string>2.0</string>");
	pid = wait_state("srv", "unlocked", pid, 30.0);
	assert_field_has("srv", "profile", "apple9");
	assert_true(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1009"));
	assert_int_equal(bench_runs(), 6);
	status_string("srv", "auto", "measured", buf, sizeof buf);
	if (strstr(buf, "measured: apple9 runs it") == NULL)
		fail_msg("measured: %s", buf);
}

/*
 * The same speed (the simulator's samples vary by 3 %): a tie keeps the
 * lower profile, and stock, slower by far, never wins.
 */
static void
test_tie_keeps_lower(void **state)
{
	char	buf[1024];

	(void)state;
	measure_job("srv", BENCH_SIM, "");
	wait_state("srv", "unlocked", 0, 30.0);
	assert_field_has("srv", "profile", "apple7");
	status_string("srv", "auto", "measured", buf, sizeof buf);
	if (strstr(buf, "apple9 ") == NULL ||
	    strstr(buf, "apple7, inside the noise") == NULL)
		fail_msg("measured: %s", buf);
}

/*
 * Never while it serves: an OS update under a running job makes a
 * measurement due, said in status, and nothing runs until the job is
 * down (stop, start): then it is measured again, once.
 */
static void
test_due_not_while_serving(void **state)
{
	char	buf[1024], path[256];
	long	pid;
	int	code;

	(void)state;
	measure_job("srv", BENCH_SIM, "");
	pid = wait_state("srv", "unlocked", 0, 30.0);
	assert_int_equal(bench_runs(), 3);
	snprintf(path, sizeof path, "%s/host", home);
	write_file(path, "w", "os_build=25C56\n");
	wait_due("srv", "the OS build changed since it was measured");
	/* A rescan judges every job again: still no measurement. */
	ctl(&code, "reload", NULL, NULL, NULL);
	assert_int_equal(code, 0);
	assert_int_equal(wait_state("srv", "unlocked", 0, 10.0), pid);
	assert_int_equal(bench_runs(), 3);
	ctl(&code, "stop", "srv", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("srv", "stopped", 0, 20.0);
	assert_int_equal(bench_runs(), 3);
	ctl(&code, "start", "srv", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("srv", "unlocked", pid, 30.0);
	assert_int_equal(bench_runs(), 6);
	assert_string_equal(status_string("srv", "auto", "measure_due", buf,
	    sizeof buf), "");
}

/*
 * A model rewritten in place, its size and mtime as they were (rsync
 * --inplace -t, cp -p over it): still a changed model, and the
 * measurement due says so.
 */
static void
test_model_rewritten_in_place(void **state)
{
	char	buf[1024];

	(void)state;
	measure_job("srv", BENCH_SIM, "");
	wait_state("srv", "unlocked", 0, 30.0);
	assert_string_equal(status_string("srv", "auto", "measure_due", buf,
	    sizeof buf), "");
	rewrite_in_place(model, "gguf");
	wait_due("srv", "the model changed since it was measured");
}

/*
 * Figures a metalcapd of before recorded (its key of other file stamps):
 * the measurement is due, and status says why, not that every file
 * changed.
 */
static void
test_measured_by_older_daemon(void **state)
{
	char	buf[1024], cmd[512];

	(void)state;
	measure_job("srv", BENCH_SIM, "");
	wait_state("srv", "unlocked", 0, 30.0);
	kill_daemon(SIGTERM);
	snprintf(cmd, sizeof cmd, "python3 -c 'import json, sys; p = sys.argv"
	    "[1]; d = json.load(open(p)); del d[\"srv\"][\"key\"][\"stamps\"]; "
	    "json.dump(d, open(p, \"w\"))' %s/state/measured.json", home);
	assert_int_equal(system(cmd), 0);
	start_daemon();
	status_string("srv", "auto", "measure_due", buf, sizeof buf);
	assert_string_equal(buf, "it was measured by an older metalcapd, "
	    "whose file stamps this one cannot compare");
}

/*
 * Its evidence folder cannot be made (a file where it goes): no run,
 * the highest profile, and the log says which path and why.
 */
static void
test_no_evidence_folder(void **state)
{
	char	buf[1024], path[256];

	(void)state;
	snprintf(path, sizeof path, "%s/state/measured", home);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/state/measured/srv", home);
	write_file(path, "w", "");
	measure_job("srv", BENCH_SIM, "");
	wait_state("srv", "unlocked", 0, 30.0);
	assert_field_has("srv", "profile", "apple9");
	assert_int_equal(bench_runs(), 0);
	snprintf(buf, sizeof buf, "job srv: no evidence folder for its "
	    "measurement: %s: Not a directory", path);
	wait_daemon_log(buf, 1);
}

/*
 * No llama-bench to run: the highest profile, and status says why no
 * measurement was made; one that fails: the same, with its words.
 */
static void
test_cannot_measure(void **state)
{
	char	buf[1024], bad[256];

	(void)state;
	snprintf(bad, sizeof bad, "%s/no-such-bench", home);
	measure_job("gone", bad, "");
	wait_state("gone", "unlocked", 0, 30.0);
	assert_field_has("gone", "profile", "apple9");
	status_string("gone", "auto", "measure_due", buf, sizeof buf);
	if (strstr(buf, "not measured: no llama-bench to run at ") == NULL ||
	    strstr(buf, "BenchProgram in the job file names another") == NULL)
		fail_msg("measure_due: %s", buf);
	measure_job("fails", "/bin/false", "");
	wait_state("fails", "unlocked", 0, 30.0);
	assert_field_has("fails", "profile", "apple9");
	status_string("fails", "auto", "measured", buf, sizeof buf);
	if (strstr(buf, "measured, no figures (stock not measured "
	    "(llama-bench failed") == NULL)
		fail_msg("measured: %s", buf);
}

/*
 * Job "srv" measured by a BenchProgram held back on purpose: it waits,
 * once started, for the file named in release before running
 * llama-bench-sim.  Returns once the first run has started.
 */
static void
held_measurement(char *release, size_t len)
{
	char	bench[192], mark[192], script[1024];
	int	i;

	snprintf(bench, sizeof bench, "%s/held-bench", home);
	snprintf(mark, sizeof mark, "%s/bench-started", home);
	snprintf(release, len, "%s/bench-release", home);
	snprintf(script, sizeof script, "#!/bin/sh\ntouch %s\nwhile [ ! -e %s "
	    "]; do sleep 0.05; done\nexec %s \"$@\"\n", mark, release,
	    BENCH_SIM);
	write_file(bench, "w", script);
	assert_int_equal(chmod(bench, 0755), 0);
	measure_job("srv", bench, "");
	for (i = 0; access(mark, F_OK) != 0; i++) {
		assert_true(i < 400 * time_scale());
		sleep_ms(50);
	}
}

/*
 * The job goes while its measurement runs: held back on purpose (a
 * BenchProgram that waits for a mark before it runs llama-bench-sim),
 * the job file removed meanwhile.  The run under way ends, the others
 * are not started, nothing is recorded, the removal goes through after
 * (check-asan sees any use of the job gone), and the daemon answers on.
 */
static void
test_job_gone_while_measuring(void **state)
{
	char	release[192], path[256];
	json_t	*e;
	int	i, code;

	(void)state;
	held_measurement(release, sizeof release);
	snprintf(path, sizeof path, "%s/jobs.d/srv.plist", home);
	assert_int_equal(unlink(path), 0);
	for (i = 0; (e = job_status("srv")) != NULL; i++) {
		json_decref(e);
		assert_true(i < 400 * time_scale());
		sleep_ms(50);
	}
	write_file(release, "w", "");
	/*
	 * The run under way ends, no other starts, nothing is recorded, and
	 * the removal, which waited for it, is done; the daemon serves on.
	 */
	wait_daemon_log("job srv: removed", 1);
	assert_int_equal(daemon_log_count("its file went while it was "
	    "measured: no more runs"), 1);
	assert_false(daemon_log_has("measuring apple7"));
	ctl(&code, "status", NULL, NULL, NULL);
	assert_int_equal(code, 0);
	assert_null(e = measured("srv"));
}

/*
 * Settings pushed while a measurement runs (held back on purpose): the
 * rescan makes the profile table anew under it (check-asan sees a run
 * still pointing into the old one), and ForceStock, now in force, keeps
 * every profile from being benchmarked with the shim: each is recorded
 * as not allowed, and the job runs stock.
 */
static void
test_settings_pushed_while_measuring(void **state)
{
	char	release[192];
	json_t	*e;
	int	code;

	(void)state;
	held_measurement(release, sizeof release);
	write_managed(NULL, "<key>ForceStock</key><true/>");
	ctl(&code, "reload", NULL, NULL, NULL);
	assert_int_equal(code, 0);
	write_file(release, "w", "");
	wait_state("srv", "stock", 0, 30.0);
	assert_false(daemon_log_has("measuring apple7"));
	assert_false(daemon_log_has("measuring apple9"));
	assert_non_null(e = measured("srv"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(e, "options"), "apple9"), "error")),
	    "not allowed here now");
	json_decref(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_slower_higher_profile_loses, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_faster_higher_profile_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allowlist_after_stock_won,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_allowlist_bars_measuring,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tie_keeps_lower, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_due_not_while_serving,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_model_rewritten_in_place,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_measured_by_older_daemon,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_evidence_folder, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cannot_measure, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_job_gone_while_measuring,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_settings_pushed_while_measuring, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
