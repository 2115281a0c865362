/* SPDX-License-Identifier: MIT */
/*
 * Sharper tests (issue 20): the preconditions the other tests never
 * varied, and every limit at its edge.  Each test names the realistic bug
 * it kills; tests/mutations/ holds those bugs as patches, and make mutate
 * checks that every one of them fails something.
 */
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
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
#include "mc_rpc.h"
#include "protocol.h"

static const char failure_line[] = "ggml_metal_library_compile_pipeline: "
    "failed to compile pipeline: base = 'kernel_mul_mm_f16_f32'\n";

/*
 * A revert is persisted: with the device healed and the daemon killed,
 * a fresh probe would pass, so only the saved revert keeps the job stock.
 * Kills: a revert recorded but not saved (driver_record).
 */
static void
test_revert_persisted_device_healed(void **state)
{
	long	pid;

	(void)state;
	put_job("llama", "");
	real_pipeline_failure(wait_state("llama", "unlocked", 0, 5.0));
	wait_state("llama", "reverted", 0, 5.0);
	set_device(NULL);
	kill_daemon(SIGKILL);
	start_daemon();
	pid = wait_state("llama", "reverted", 0, 5.0);
	sleep_ms(500);
	assert_field_has("llama", "state", "reverted");
	assert_false(environ_has(pid, INJECTED));
}

/* Evidence line i of the job's incident ("reverted", "failed"). */
static const char *
incident_evidence(const char *name, const char *incident, size_t i)
{
	static char	line[256];
	json_t		*j = job_status(name);

	assert_non_null(j);
	snprintf(line, sizeof line, "%s", json_string_value(json_array_get(
	    json_object_get(json_object_get(j, incident), "evidence"), i)) ?:
	    "(none)");
	json_decref(j);
	return line;
}

/*
 * The crash loop trips at exactly MaxExits abnormal exits, and says so.
 * Kills: a loop that needs one exit more than MaxExits.
 */
static void
test_crash_loop_exact_count(void **state)
{
	(void)state;
	put_job("llama", "<key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string><string>--exit-after</string><string>200"
	    "</string><string>9</string></array><key>CrashLoop</key><dict>"
	    "<key>MaxExits</key><integer>3</integer><key>WindowSeconds</key>"
	    "<integer>60</integer></dict>");
	wait_state("llama", "reverted", -1, 10.0);
	assert_field_has("llama", "reason", "crash loop: 3 abnormal exits "
	    "within 60 s");
	/* The last exit, by its status (9: the highest digit). */
	assert_string_equal(incident_evidence("llama", "reverted", 1),
	    "last: exit status 9");
}

/*
 * Exits launchd counted while metalcapd was down are judged when it comes
 * back, with the run then up: a job that crashed MaxExits times and came
 * up at the third run is a crash loop.  Kills: the exits of a job seen
 * running counted one short (its live run taken for two).
 */
static void
test_crash_loop_while_down(void **state)
{
	char	runs[160], job[1024];
	double	start;

	(void)state;
	snprintf(runs, sizeof runs, "%s/runs", home);
	snprintf(job, sizeof job, "<key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string><string>--crash-runs</string><string>2"
	    "</string><string>%s</string></array><key>CrashLoop</key><dict>"
	    "<key>MaxExits</key><integer>2</integer><key>WindowSeconds</key>"
	    "<integer>600</integer></dict>", runs);
	put_job("llama", job);
	for (start = now_s(); launchd_pid("llama") == 0; sleep_ms(10))
		assert_true(now_s() - start < 10 * time_scale());
	kill_daemon(SIGKILL);
	/* launchd restarts it, throttled, until its third run stays up. */
	for (start = now_s(); launchd_number("llama", "runs") < 3 ||
	    launchd_pid("llama") == 0; sleep_ms(50))
		assert_true(now_s() - start < 20 * time_scale());
	start_daemon();
	wait_state("llama", "reverted", -1, 10.0);
	assert_field_has("llama", "reason", "crash loop: 2 abnormal exits");
}

/*
 * A failure line counts while the job is blocked too (the process may
 * well be injected; the report only has not come).  Kills: failure lines
 * ignored unless the state is exactly unlocked.
 */
static void
test_failure_line_while_blocked(void **state)
{
	json_t	*j, *ev;
	long	 pid;

	(void)state;
	put_restricted_job();
	pid = wait_state("restricted", "blocked", 0, 5.0);
	/* No shim to witness: the line counts when the process dies of
	 * ggml's abort right after it (metalcapd(8), EVIDENCE). */
	append_job_log("restricted", failure_line);
	append_job_log("restricted", "ggml/src/ggml-metal/ggml-metal-device.m:"
	    "852: ggml_metal_encoder_set_pipeline: nil Metal pipeline\n\n");
	kill((pid_t)pid, SIGABRT);
	wait_state("restricted", "reverted", -1, 5.0);
	assert_field_has("restricted", "reason", "pipeline failure");
	j = job_status("restricted");
	ev = json_object_get(json_object_get(j, "reverted"), "evidence");
	assert_non_null(strstr(json_string_value(json_array_get(ev, 1)),
	    "ggml-metal-device.m:852: "));
	assert_non_null(strstr(json_string_value(json_array_get(ev, 2)),
	    " ended: killed by signal 6"));
	json_decref(j);
}

/*
 * enable probes afresh: the device changed since the last verdict, so the
 * job must not run unlocked on the old one.  Kills: enable reusing the
 * cached probe verdict.
 */
static void
test_enable_probes_afresh(void **state)
{
	struct child_result	*r;
	double	start;
	json_t	*j;
	long	pid = 0;
	int	code;

	(void)state;
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	ctl(&code, "disable", "llama", NULL, NULL);
	wait_state("llama", "stock", 0, 5.0);
	set_device("MTLSIM_FAIL=simd_sum:compile");
	ctl(&code, "enable", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	/* Never unlocked on the way: the fresh probe fails first. */
	for (start = now_s(); now_s() - start < 3 * time_scale();
	    sleep_ms(20)) {
		j = job_status("llama");
		assert_string_not_equal(str_of(j, "state"), "unlocked");
		pid = pid_of(j);
		if (strcmp(str_of(j, "state"), "reverted") == 0) {
			json_decref(j);
			break;
		}
		json_decref(j);
	}
	assert_field_has("llama", "state", "reverted");
	assert_field_has("llama", "reason", "simd_sum");
	assert_false(pid > 0 && environ_has(pid, INJECTED));
	/* status's table says when and why, under the job. */
	r = ctl(&code, "status", NULL, NULL, NULL);
	assert_non_null(strstr(r->out, "\n    reverted at "));
	assert_null(strstr(r->out, "    failed at "));
}

/*
 * A guest with no Metal device at all (the probe exits 3): the profile is
 * refused with that reason, not as a check that failed, and the job
 * never runs with the shim.
 */
static void
test_no_metal_device(void **state)
{
	json_t	*j;

	(void)state;
	set_device("MTLSIM_NO_DEVICE=1");
	put_job("llama", "");
	wait_state("llama", "reverted", -1, 5.0);
	assert_field_has("llama", "reason", "the probe found no Metal device");
	j = job_status("llama");
	assert_false(pid_of(j) > 0 && environ_has(pid_of(j), INJECTED));
	json_decref(j);
}

/* stop and start through metalcapctl.  Kills: a stopped job shown stock. */
static void
test_stop_start(void **state)
{
	struct child_result	*r;
	struct stat		 sb;
	json_t			*j;
	char			 path[256];
	int			 code;

	(void)state;
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	r = ctl(&code, "stop", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->out, "desired stopped, moving to stopped"));
	wait_state("llama", "stopped", -1, 5.0);
	j = job_status("llama");
	assert_true(json_is_null(json_object_get(j, "pid")));
	json_decref(j);
	r = ctl(&code, "status", NULL, NULL, NULL);
	assert_non_null(strstr(r->out, "stopped"));
	/* The request, and the daemon's lock, where only this user can read
	 * or change them. */
	snprintf(path, sizeof path, "%s/state/overrides.plist", home);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	snprintf(path, sizeof path, "%s/state/metalcapd.lock", home);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	/* The socket too: a request there can change what jobs run. */
	snprintf(path, sizeof path, "%s/metalcapd.sock", home);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(S_ISSOCK(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0600);
	ctl(&code, "start", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("llama", "unlocked", 0, 5.0);
}

/* Write all of len bytes that the daemon takes; it may close midway. */
static void
send_all(int fd, const char *buf, size_t len)
{
	ssize_t	n;

	signal(SIGPIPE, SIG_IGN);
	while (len > 0 && (n = write(fd, buf, len)) > 0) {
		buf += n;
		len -= (size_t)n;
	}
}

/*
 * The message limit to the byte, through the real socket.  Kills: a limit
 * one byte larger (or smaller).
 */
static void
test_message_limit_edge(void **state)
{
	struct mc_rpc_decoder	 dec;
	struct mc_rpc_message	 m;
	static char		 buf[MC_MAX_MESSAGE + 16];
	const size_t		 head = 15;
	size_t			 body;
	int			 fd, k;

	(void)state;
	for (k = 0; k < 2; k++) {
		/* [0, 1, "hello", [bin32]]: 11 bytes, a 4-byte length, body. */
		body = MC_MAX_MESSAGE - head + (size_t)k;
		memcpy(buf, "\x94\x00\x01\xa5hello\x91\xc6", 11);
		buf[11] = (char)(body >> 24);
		buf[12] = (char)(body >> 16);
		buf[13] = (char)(body >> 8);
		buf[14] = (char)body;
		memset(buf + head, 'x', body);
		mc_rpc_decoder_init(&dec, MC_MAX_REPLY);
		fd = raw_connect();
		send_all(fd, buf, head + body);
		if (k == 0) {	/* exactly the limit: answered */
			assert_int_equal(raw_exchange(fd, "", 0, &dec, &m), 0);
			assert_true(m.error.type == MSGPACK_OBJECT_NIL);
		} else		/* one byte more: closed */
			assert_true(closed_by_daemon(fd, 2.0 * time_scale()));
		close(fd);
		mc_rpc_decoder_free(&dec);
	}
	assert_true(status_rtt_ms() >= 0);
}

/* 16 levels of nesting answered, the 17th closes the connection. */
static void
test_nesting_edge(void **state)
{
	struct mc_rpc_decoder	 dec;
	struct mc_rpc_message	 m;
	char			 buf[64];
	size_t			 n;
	int			 fd, depth;

	(void)state;
	for (depth = MC_RPC_MAX_DEPTH; depth <= MC_RPC_MAX_DEPTH + 1;
	    depth++) {
		/* The message is level 1, params level 2, then arrays of one
		 * down to a 0 at the bottom: depth arrays in all. */
		memcpy(buf, "\x94\x00\x01\xa5hello\x91", 10);
		for (n = 10; n < 10 + (size_t)depth - 2; n++)
			buf[n] = (char)0x91;
		buf[n++] = 0;
		mc_rpc_decoder_init(&dec, MC_MAX_REPLY);
		fd = raw_connect();
		if (depth == MC_RPC_MAX_DEPTH) {
			assert_int_equal(raw_exchange(fd, buf, n, &dec, &m), 0);
			assert_true(m.error.type == MSGPACK_OBJECT_NIL);
		} else
			assert_int_equal(raw_exchange(fd, buf, n, &dec, &m),
			    -1);
		close(fd);
		mc_rpc_decoder_free(&dec);
	}
}

/*
 * 256 clients are all kept; the 257th makes the idlest give way: not an
 * event subscriber while a plain client is there, and not the oldest,
 * but the plain one that advanced least recently, half a request sent or
 * not (trickled bytes are no advance: issue 38).
 */
static void
test_clients_edge(void **state)
{
	static int	fds[MC_MAX_CLIENTS + 1];
	int		i, closed = 0;

	(void)state;
	/*
	 * 0 subscribes; 1 is the oldest plain client but asks something
	 * after all have come; 2 sends half a request and no more; so 2,
	 * older than 3, is the one that advanced least recently.  Each is
	 * seen before the next.
	 */
	assert_true((fds[0] = try_connect()) != -1);
	raw_call(fds[0], MC_M_SUBSCRIBE);
	for (i = 1; i < MC_MAX_CLIENTS; i++) {
		assert_true((fds[i] = try_connect()) != -1);
		if (i == 2)
			assert_int_equal(write(fds[2], "\x94\x00\x01", 3), 3);
		if (i <= 4)
			raw_call(fds[0], MC_M_HELLO);
	}
	raw_call(fds[1], MC_M_HELLO);
	sleep_ms(300);
	for (i = 0; i < MC_MAX_CLIENTS; i++)
		closed += closed_by_daemon(fds[i], 0.0);
	assert_int_equal(closed, 0);
	assert_true((fds[MC_MAX_CLIENTS] = try_connect()) != -1);
	sleep_ms(300);
	for (i = 0; i <= MC_MAX_CLIENTS; i++)
		if (closed_by_daemon(fds[i], 0.0)) {
			closed++;
			if (i != 2)
				fail_msg("client %d gave way, not client 2", i);
		}
	assert_int_equal(closed, 1);
	for (i = 0; i <= MC_MAX_CLIENTS; i++)
		close(fds[i]);
}

/*
 * Restarting is not crashing: kickstart -k ends the process with SIGTERM,
 * and a program that dies of it (Python and MLX servers do; fake-llama
 * exits 0) must not count as an abnormal exit.  Four restarts in a
 * minute leave the job running, stock, not crashing.
 */
static void
test_restarts_are_not_crashes(void **state)
{
	json_t	*j;
	long	pid;
	int	code, i;

	(void)state;
	put_job("sleeper", "<key>ProgramArguments</key><array><string>"
	    "/bin/sleep</string><string>1000</string></array><key>Unlocked"
	    "</key><false/>");
	pid = wait_state("sleeper", "stock", 0, 5.0);
	for (i = 0; i < 4; i++) {
		ctl(&code, "restart", "sleeper", NULL, NULL);
		assert_int_equal(code, 0);
		pid = wait_state("sleeper", "stock", pid, 10.0);
	}
	sleep_ms(1500);
	assert_field_has("sleeper", "state", "stock");
	j = job_status("sleeper");
	assert_true(pid_of(j) > 0);
	json_decref(j);
}

/* The first line of path, as a number; -1 while it is not there. */
static long
number_in(const char *path)
{
	FILE	*f;
	long	 v = -1;

	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * Where a job runs and what it may hold open: launchd starts jobs in /,
 * read-only, with 256 descriptors (the simulator now does too), so a job
 * gets its user's home folder and the template's 4096 unless its file
 * says otherwise (issue 27, "sensible job context").
 */
static void
test_job_context(void **state)
{
	char	 extra[2048], out[256], cwd[300];
	double	 start;
	FILE	*f;
	int	 k;

	(void)state;
	for (k = 0; k < 2; k++) {
		snprintf(out, sizeof out, "%s/ctx%d", home, k);
		snprintf(extra, sizeof extra, "<key>ProgramArguments</key>"
		    "<array><string>/bin/sh</string><string>-c</string><string>"
		    "pwd &gt; %s.cwd; ulimit -n &gt; %s.tmp; mv %s.tmp %s; exec "
		    "sleep 1000</string></array><key>Unlocked</key><false/>%s",
		    out, out, out, out, k == 0 ? "" : "<key>NumberOfFiles"
		    "</key><integer>8192</integer><key>WorkingDirectory</key>"
		    "<string>/tmp</string>");
		put_job(k == 0 ? "plain" : "own", extra);
		for (start = now_s(); number_in(out) == -1; sleep_ms(50))
			assert_true(now_s() - start < 10.0 * time_scale());
		assert_int_equal(number_in(out), k == 0 ? 4096 : 8192);
		snprintf(cwd, sizeof cwd, "%s.cwd", out);
		assert_non_null(f = fopen(cwd, "r"));
		assert_non_null(fgets(cwd, sizeof cwd, f));
		fclose(f);
		cwd[strcspn(cwd, "\n")] = '\0';
		assert_string_equal(cwd, k == 0 ? home : "/tmp");
	}
	put_job("few", "<key>NumberOfFiles</key><integer>10</integer>");
	wait_state("few", "invalid", -1, 5.0);
	assert_field_has("few", "reason", "NumberOfFiles: 10 is out of range "
	    "(64 to 1048576)");
}

/*
 * Wait until state/status.json's entry for job (j, in Python) makes cond
 * true: the file follows a change within its write delay.
 */
static void
status_file_until(const char *job, const char *cond)
{
	char	cmd[1024];
	double	start;

	snprintf(cmd, sizeof cmd, "python3 -c 'import json, sys; d = json."
	    "load(open(sys.argv[1])); j = [x for x in d[\"jobs\"] if x["
	    "\"name\"] == \"%s\"][0]; sys.exit(not (%s))' %s/state/"
	    "status.json", job, cond, home);
	for (start = now_s(); system(cmd) != 0; sleep_ms(50))
		if (now_s() - start > 5 * time_scale())
			fail_msg("status.json's %s never had %s", job, cond);
}

/*
 * A revert for a crash loop is a hypothesis that the stock run tests: a
 * job that crash-loops stock too (it cannot open its model, say) crashes
 * for its own cause, the revert is withdrawn and the profile is not
 * blamed; the job keeps its wish to run unlocked (issue 27).  It used to
 * stay reverted, the profile blamed in status and the fleet file.  It is
 * crashing, kept loaded for launchd to restart, not failed and booted
 * out (issue 46, finding 3).
 */
static void
test_revert_withdrawn_when_stock_fails_too(void **state)
{
	json_t	*j;

	(void)state;
	put_job("srv", "<key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string><string>--exit-after</string><string>200"
	    "</string><string>1</string></array><key>CrashLoop</key><dict>"
	    "<key>MaxExits</key><integer>2</integer><key>WindowSeconds</key>"
	    "<integer>600</integer></dict>");
	wait_state("srv", "reverted", -1, 10.0);
	wait_state("srv", "crashing", -1, 15.0);
	assert_field_has("srv", "reason", "it crashes stock too: its revert "
	    "is withdrawn");
	/* No revert on record: once steady it runs unlocked again. */
	j = job_status("srv");
	assert_true(json_is_null(json_object_get(j, "reverted")));
	assert_true(json_is_null(json_object_get(j, "failed")));
	json_decref(j);
	assert_true(loaded_in_gui("srv"));
	/* Counted apart: it used to stay one revert, the profile blamed. */
	status_file_until("srv", "j[\"state\"] == \"crashing\" and "
	    "\"withdrawn\" in j[\"reason\"] and j[\"reverts\"] == 0 "
	    "and j[\"reverts_withdrawn\"] == 1");
}


/*
 * A revert on a pipeline failure is a verdict, not a hypothesis: the job
 * crash-looping stock afterwards is crashing for that, and the revert,
 * its trigger and evidence, stays on record, counted in the status file.
 */
static void
test_pipeline_revert_stays(void **state)
{
	json_t	*j;
	double	 start;
	long	 pid, next;
	int	 k;

	(void)state;
	put_job("llama", "<key>CrashLoop</key><dict><key>MaxExits</key>"
	    "<integer>2</integer><key>WindowSeconds</key><integer>600"
	    "</integer></dict>");
	real_pipeline_failure(wait_state("llama", "unlocked", 0, 5.0));
	wait_state("llama", "reverted", 0, 5.0);
	/* The device healed: the stock runs crash on their own. */
	set_device(NULL);
	status_file_until("llama", "j[\"state\"] == \"reverted\" and "
	    "j[\"reverts\"] == 1");
	/* Two crashes of the stock run, each pid once it runs stock. */
	for (k = 0, pid = 0; k < 2; k++) {
		for (start = now_s(); (next = launchd_pid("llama")) <= 0 ||
		    next == pid || environ_has(next, INJECTED); sleep_ms(20))
			if (now_s() - start > 10 * time_scale())
				fail_msg("no stock run after crash %d", k);
		pid = next;
		assert_int_equal(kill((pid_t)pid, SIGSEGV), 0);
	}
	wait_state("llama", "crashing", -1, 10.0);
	assert_field_has("llama", "reason", "crashing: 2 abnormal exits");
	j = job_status("llama");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    j, "reverted"), "trigger")), "pipeline failure");
	json_decref(j);
	status_file_until("llama", "j[\"state\"] == \"crashing\" and "
	    "j[\"reverts\"] == 1");
}

/*
 * A crash loop whose log names the job's environment (ggml's line for a
 * model in a folder the privacy protections keep from launchd agents).
 * A client can have such a line echoed (issue 46, finding 2: "x: Too
 * many open files" failed a job and hid an unlocked crash loop as "its
 * environment"), so the line only describes: the unlocked job's loop
 * reverts it as any other, the line named as a likely cause; its stock
 * run looping too withdraws the revert and the job is crashing, the
 * likely cause in its reason.  It used to be failed, booted out.
 */
static void
test_environment_named(void **state)
{
	struct child_result	*r;
	json_t			*j;
	char			*evidence;
	int			 code;

	(void)state;
	/* The model's path as the option's own argument, --model=PATH. */
	put_job("srv", "<key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string><string>--model=/Users/u/Downloads/m.gguf"
	    "</string><string>--say</string><string>gguf_init_from_file: "
	    "failed to open GGUF file '/Users/u/Downloads/m.gguf' (Operation "
	    "not permitted)</string><string>--exit-after</string><string>300"
	    "</string><string>1</string></array><key>CrashLoop</key><dict>"
	    "<key>MaxExits</key><integer>2</integer><key>WindowSeconds</key>"
	    "<integer>600</integer></dict>");
	wait_state("srv", "reverted", -1, 15.0);
	j = job_status("srv");
	assert_true(json_is_null(json_object_get(j, "failed")));
	/* The count first, the last exit, then the line, as a likely cause. */
	assert_string_equal(json_string_value(json_array_get(json_object_get(
	    json_object_get(j, "reverted"), "evidence"), 0)),
	    "2 abnormal exits within 600 s");
	evidence = json_dumps(json_object_get(json_object_get(j, "reverted"),
	    "evidence"), 0);
	assert_non_null(strstr(evidence, "its log names a likely cause (a "
	    "folder the privacy protections keep from it): "));
	assert_non_null(strstr(evidence, "failed to open GGUF file"));
	free(evidence);
	json_decref(j);
	wait_state("srv", "crashing", -1, 15.0);
	assert_field_has("srv", "reason", "its log names a likely cause: a "
	    "folder the privacy protections keep from it");
	assert_field_has("srv", "reason", "its revert is withdrawn");
	assert_true(loaded_in_gui("srv"));
	/* status (and doctor, its table) say what the file put there. */
	r = ctl(&code, "status", NULL, NULL, NULL);
	assert_non_null(strstr(r->out, "\n    warning: "));
	assert_non_null(strstr(r->out, "srv.plist:ProgramArguments: "
	    "/Users/u/Downloads/m.gguf is in ~/Downloads, which macOS keeps "
	    "from launchd agents"));
	j = job_status("srv");
	assert_true(json_is_null(json_object_get(j, "reverted")));
	assert_true(json_is_null(json_object_get(j, "failed")));
	json_decref(j);
}

static void	spawn_fails_for(const char *, const char *, const char *,
		    const char *);

/*
 * Job "srv": a server that exits 3 until flag (home/model-fixed) is
 * there, crashing after two exits in stock; flag's path back.
 */
static void
put_crashing_srv(char *flag, size_t len)
{
	char	extra[1024];

	snprintf(flag, len, "%s/model-fixed", home);
	snprintf(extra, sizeof extra, "<key>ProgramArguments</key><array>"
	    "<string>/bin/sh</string><string>-c</string><string>test -e %s "
	    "&amp;&amp; exec sleep 1000; exit 3</string></array><key>Unlocked"
	    "</key><false/><key>CrashLoop</key><dict><key>MaxExits</key>"
	    "<integer>2</integer><key>WindowSeconds</key><integer>600"
	    "</integer></dict>", flag);
	put_job("srv", extra);
	wait_state("srv", "crashing", -1, 10.0);
}

/* The job's process once it runs comm. */
static void
wait_job_comm(const char *name, const char *comm)
{
	char	 now[64] = "";
	double	 start = now_s();
	json_t	*j;
	long	 pid;

	for (;; sleep_ms(20)) {
		j = job_status(name);
		pid = pid_of(j);
		json_decref(j);
		if (pid > 0 && proc_comm(pid, now, sizeof now) &&
		    strcmp(now, comm) == 0)
			return;
		if (now_s() - start > 10 * time_scale())
			fail_msg("%s never came to run %s", name, comm);
	}
}

/*
 * start on a crashing job judges it afresh (as systemctl start on a
 * unit in its restart back-off): no longer crashing, and its exits are
 * counted afresh.
 */
static void
test_start_after_failure(void **state)
{
	char	flag[256];
	long	pid;
	int	code;

	(void)state;
	put_crashing_srv(flag, sizeof flag);
	assert_field_has("srv", "reason", "crashing: 2 abnormal exits");
	write_file(flag, "w", "");
	/*
	 * launchd runs it again meanwhile: a shell that tested before the
	 * flag came exits 3 when it will.  Once a run has come to sleep,
	 * none is left, and no exit of before the start lands after it.
	 */
	wait_job_comm("srv", "sleep");
	ctl(&code, "start", "srv", NULL, NULL);
	assert_int_equal(code, 0);
	pid = wait_state("srv", "stock", 0, 10.0);
	/*
	 * Failing again counts from zero: two more exits, not one, the
	 * last of them the script's own exit 3.  The flag goes only once
	 * the shell has tested it (it runs sleep): before, on a busy
	 * machine, the shell's exit 3 came first and the SIGTERM, sent to
	 * its successor, was the second exit.
	 */
	wait_comm(pid, "sleep", 10.0);
	unlink(flag);
	assert_int_equal(kill((pid_t)pid, SIGTERM), 0);
	wait_state("srv", "crashing", -1, 10.0);
	assert_field_has("srv", "reason", "crashing: 2 abnormal exits");
	assert_field_has("srv", "reason", "last: exit status 3");
}

/*
 * A crashing job whose process then runs a whole crash window (here 3 s)
 * is no longer crashing: it settles stock again, by itself (issue 46,
 * finding 3: it used to stay failed and booted out until someone came).
 */
static void
test_crashing_clears_when_steady(void **state)
{
	char	flag[256], extra[1024];

	(void)state;
	snprintf(flag, sizeof flag, "%s/model-fixed", home);
	snprintf(extra, sizeof extra, "<key>ProgramArguments</key><array>"
	    "<string>/bin/sh</string><string>-c</string><string>test -e %s "
	    "&amp;&amp; exec sleep 1000; exit 3</string></array><key>Unlocked"
	    "</key><false/><key>CrashLoop</key><dict><key>MaxExits</key>"
	    "<integer>2</integer><key>WindowSeconds</key><integer>3"
	    "</integer></dict>", flag);
	put_job("srv", extra);
	wait_state("srv", "crashing", -1, 10.0);
	assert_true(loaded_in_gui("srv"));
	/* The cause goes: launchd's next run lasts. */
	write_file(flag, "w", "");
	wait_state("srv", "stock", 0, 15.0);
	assert_true(daemon_log_has("no longer crashing (a run lasted its "
	    "crash window)"));
}

/*
 * restart on a failed job (launchd could not start it) starts it, as
 * kickstart -k starts a service that is not running, and says so; it
 * used to answer "restart accepted" and leave the job failed and out of
 * launchd.  Its working directory still missing, it fails again.
 */
static void
test_restart_after_failure(void **state)
{
	struct child_result	*r;
	int			 code;

	(void)state;
	spawn_fails_for("srv", "WorkingDirectory", "models",
	    "working directory");
	r = ctl(&code, "restart", "srv", NULL, NULL);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->out, "srv: restart: started again: its "
	    "failure is cleared"));
	wait_daemon_log("failed, no more restarts: cannot spawn", 2);
	wait_state("srv", "failed", -1, 10.0);
}

/*
 * start on a job launchd has loaded but leaves down (KeepAlive
 * SuccessfulExit false, and the program exited 0) runs it, as launchctl
 * kickstart does; it used to answer "start accepted" and run nothing.
 * start on a running job leaves it be, and says so.
 */
static void
test_start_runs_job_left_down(void **state)
{
	struct child_result	*r;
	char			 flag[256], extra[1024];
	double			 start;
	long			 pid;
	int			 code;

	(void)state;
	snprintf(flag, sizeof flag, "%s/ready", home);
	snprintf(extra, sizeof extra, "<key>ProgramArguments</key><array>"
	    "<string>/bin/sh</string><string>-c</string><string>test -e %s "
	    "&amp;&amp; exec sleep 1000; exit 0</string></array><key>Unlocked"
	    "</key><false/><key>KeepAlive</key><dict><key>SuccessfulExit"
	    "</key><false/></dict>", flag);
	put_job("srv", extra);
	wait_state("srv", "stock", -1, 10.0);
	for (start = now_s(); launchd_number("srv", "runs") < 1 ||
	    launchd_pid("srv") != 0; sleep_ms(20))
		if (now_s() - start > 10 * time_scale())
			fail_msg("srv never ran and exited 0");
	write_file(flag, "w", "");
	r = ctl(&code, "start", "srv", NULL, NULL);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->out, "srv: start: kickstarted: launchd "
	    "runs nothing for it"));
	pid = wait_state("srv", "stock", 0, 10.0);
	assert_int_equal(launchd_number("srv", "runs"), 2);
	r = ctl(&code, "start", "srv", NULL, NULL);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->out, "srv: start: nothing: it is running"));
	sleep_ms(500);
	assert_int_equal(launchd_pid("srv"), pid);
}

/* n restarts of job in one write: one turn of the daemon's loop reads all. */
static void
restart_burst(const char *job, uint32_t n)
{
	struct mc_rpc_decoder	 dec;
	struct mc_rpc_message	 m;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	uint32_t		 i;
	int			 fd;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	for (i = 1; i <= n; i++) {
		mc_rpc_pack_request(&pk, i, MC_M_RESTART, 1);
		mc_rpc_pack_str(&pk, job);
	}
	mc_rpc_decoder_init(&dec, MC_MAX_REPLY);
	fd = raw_connect();
	assert_int_equal(raw_exchange(fd, sb.data, sb.size, &dec, &m), 0);
	for (i = 1; i < n; i++)
		assert_int_equal(raw_exchange(fd, "", 0, &dec, &m), 0);
	close(fd);
	mc_rpc_decoder_free(&dec);
	msgpack_sbuffer_destroy(&sb);
}

/*
 * Ten restart requests in one burst, before launchd has shown the first
 * one's run: the daemon counted a stop of its own for each and the ten
 * absorbed the crashes that came after, so a crash loop went unseen for
 * tens of seconds (issue 26, item 10).  Now a restart asked for while one
 * is under way waits for it, and each kill is counted for the process it
 * killed: three crashes (MaxExits) end the job, four signals at most
 * when one of ours meets the burst's last restart.
 */
static void
test_restart_burst_hides_no_crashes(void **state)
{
	double			 start;
	json_t			*j;
	long			 pid, killed = 0;
	int			 signals = 0;

	(void)state;
	put_job("sleeper", "<key>ProgramArguments</key><array><string>"
	    "/bin/sleep</string><string>1000</string></array><key>Unlocked"
	    "</key><false/><key>CrashLoop</key><dict><key>MaxExits</key>"
	    "<integer>3</integer><key>WindowSeconds</key><integer>600"
	    "</integer></dict>");
	wait_state("sleeper", "stock", 0, 5.0);
	restart_burst("sleeper", 10);
	/* Crash whatever launchd runs now, until the job is given up. */
	start = now_s();
	while (now_s() - start < 30.0 * time_scale()) {
		j = job_status("sleeper");
		assert_non_null(j);
		if (strcmp(str_of(j, "state"), "crashing") == 0) {
			json_decref(j);
			break;
		}
		json_decref(j);
		pid = launchd_pid("sleeper");
		if (pid > 0 && pid != killed) {
			assert_true(signals < 4);
			if (kill((pid_t)pid, SIGSEGV) == 0)
				signals++;
			killed = pid;
		}
		sleep_ms(20);
	}
	assert_field_has("sleeper", "state", "crashing");
	assert_field_has("sleeper", "reason", "crashing: 3 abnormal exits");
}

/*
 * Restarts asked for in one burst: the first is done at once, and the
 * rest as one more once its run has shown (so a kill is counted for the
 * process it kills): two new runs, not one, not ten, and no more once
 * metalcapd follows the third (kills a queued restart never cleared,
 * which restarts the job at every new run; the throttle is 1 s, so 3 s
 * without a fourth run is that restart not coming).
 */
static void
test_restart_burst_runs_twice(void **state)
{
	double	 start;
	long	 pid, seen;
	json_t	*j;

	(void)state;
	put_job("sleeper", "<key>ProgramArguments</key><array><string>"
	    "/bin/sleep</string><string>1000</string></array><key>Unlocked"
	    "</key><false/>");
	wait_state("sleeper", "stock", 0, 5.0);
	assert_int_equal(launchd_number("sleeper", "runs"), 1);
	restart_burst("sleeper", 3);
	for (start = now_s(); launchd_number("sleeper", "runs") < 3 &&
	    now_s() - start < 10 * time_scale(); sleep_ms(50))
		;
	assert_int_equal(launchd_number("sleeper", "runs"), 3);
	while ((pid = launchd_pid("sleeper")) == 0)
		sleep_ms(20);
	/* metalcapd follows the third run. */
	for (seen = 0; seen != pid; sleep_ms(20)) {
		j = job_status("sleeper");
		seen = pid_of(j);
		json_decref(j);
	}
	for (start = now_s(); now_s() - start < 3.0; sleep_ms(100))
		assert_int_equal(launchd_number("sleeper", "runs"), 3);
}

/*
 * A crash loop at launchd's real pace: a 10 s throttle between runs (the
 * template's ThrottleInterval, launchd's own default), not the 1 s the
 * other tests' job files ask for.  With the default CrashLoop (3 exits in 60 s) the
 * unlocked job is reverted after its third exit, about 20 s in, and in
 * stock, crashing as before, it is crashing about 20 s later: not
 * before, and never blamed on the profile.
 */
static void
test_crash_loop_real_throttle(void **state)
{
	double	start;

	(void)state;
	job_throttle = "";
	put_job("llama", "<key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string><string>--exit-after</string><string>200"
	    "</string><string>1</string></array>");
	start = now_s();
	wait_state("llama", "reverted", -1, 40.0);
	/* Three runs 10 s apart: not before the third. */
	assert_true(now_s() - start >= 19.0);
	assert_field_has("llama", "reason", "crash loop");
	wait_state("llama", "crashing", -1, 45.0);
	assert_true(now_s() - start >= 39.0);
	assert_field_has("llama", "reason", "its revert is withdrawn");
	assert_field_has("llama", "reason", "within 10 s (ThrottleInterval)");
}

/*
 * A CrashLoop launchd's throttle may make unreachable (2 exits within
 * 11 s: launchd starts the job again 10 s after an exit, less the whole
 * seconds it ran, so the exits of one that dies within a second come up
 * to 11 s apart) is refused where the file is read, naming both keys and
 * where the throttle came from; it used to be taken, and a job that
 * exited at once was never given up, shown stock.  With its own
 * ThrottleInterval of 2, a window of 4 is fine: 2 exits take up to 3 s
 * (kills a check that counts MaxExits intervals, not MaxExits - 1).
 */
static void
test_crash_window_against_throttle(void **state)
{
	const char	*loop = "<key>CrashLoop</key><dict><key>MaxExits</key>"
	    "<integer>2</integer><key>WindowSeconds</key><integer>11"
	    "</integer></dict>";
	char		 extra[512];

	(void)state;
	job_throttle = "";
	put_job("srv", loop);
	wait_state("srv", "invalid", -1, 10.0);
	assert_field_has("srv", "reason", "srv.plist:CrashLoop: MaxExits 2 "
	    "within WindowSeconds 11 may never trip: launchd starts it again "
	    "ThrottleInterval (10 s, the agent template's) after an exit, less "
	    "the whole seconds it ran: 2 exits take up to 11 s");
	snprintf(extra, sizeof extra, "<key>CrashLoop</key><dict><key>MaxExits"
	    "</key><integer>2</integer><key>WindowSeconds</key><integer>4"
	    "</integer></dict><key>ThrottleInterval</key><integer>2</integer>");
	put_job("srv", extra);
	wait_state("srv", "unlocked", 0, 10.0);
}

/*
 * Put job name with key, a path under home that is not there: it fails,
 * launchd unable to start it, and the reason names what (a log, a
 * working directory) and the path.
 */
static void
spawn_fails_for(const char *name, const char *key, const char *path,
    const char *what)
{
	char	extra[512], want[512];

	snprintf(extra, sizeof extra, "<key>%s</key><string>%s/%s</string>",
	    key, home, path);
	put_job(name, extra);
	wait_state(name, "failed", -1, 10.0);
	snprintf(want, sizeof want, "cannot spawn: %s %s/%s: No such file or "
	    "directory", what, home, path);
	assert_field_has(name, "reason", want);
}

/*
 * A job launchd cannot start is given up with the cause named, and no
 * profile is blamed though it is unlocked.  launchd answers a log it
 * cannot open, or a program gone since the file was checked, with
 * 78: EX_CONFIG and retries for ever (launchd.md §2); this used to end
 * as "reverted: crash loop" (the simulator said 127) or not at all.  A
 * program that comes back is run again: it used to stay failed for good.
 */
static void
test_spawn_failure_named(void **state)
{
	char	prog[256], extra[600];
	json_t	*j;
	int	code;

	(void)state;
	put_job("nolog", "<key>StandardErrorPath</key><string>/nonexistent/"
	    "logs/err.log</string>");
	wait_state("nolog", "failed", -1, 10.0);
	assert_field_has("nolog", "reason", "cannot spawn: log /nonexistent/"
	    "logs/err.log: No such file or directory");
	/* launchd's own words beside the cause found here. */
	assert_non_null(strstr(incident_evidence("nolog", "failed", 1),
	    "last exit code = 78"));
	/* Standard output's log too; made, the job runs. */
	spawn_fails_for("noout", "StandardOutPath", "out/o.log", "log");
	snprintf(prog, sizeof prog, "%s/out", home);
	assert_int_equal(mkdir(prog, 0755), 0);
	wait_state("noout", "unlocked", 0, 10.0);
	/*
	 * A working directory that is not there: modern launchd refuses the
	 * spawn, 78 (maddox/wallop#61), and the folder is named.
	 */
	spawn_fails_for("nocwd", "WorkingDirectory", "models",
	    "working directory");
	/* Checked when the file was read, gone when launchd starts it. */
	snprintf(prog, sizeof prog, "%s/llama-server", home);
	assert_int_equal(link(FAKE_LLAMA, prog), 0);
	snprintf(extra, sizeof extra, "<key>ProgramArguments</key><array>"
	    "<string>%s</string></array><key>RunAtLoad</key><false/>"
	    "<key>KeepAlive</key><false/>", prog);
	put_job("gone", extra);
	wait_state("gone", "unlocked", -1, 10.0);
	unlink(prog);
	ctl(&code, "restart", "gone", NULL, NULL);
	wait_state("gone", "failed", -1, 10.0);
	assert_field_has("gone", "reason", "cannot spawn: program ");
	/*
	 * The program back (brew upgrade put it there again): the job is
	 * given to launchd again, as launchd itself would take it once the
	 * path is there, and no longer failed.
	 */
	assert_int_equal(symlink(FAKE_LLAMA, prog), 0);	/* its $ORIGIN */
	wait_state("gone", "unlocked", -1, 10.0);
	assert_true(loaded_in_gui("gone"));
	j = job_status("gone");
	assert_true(json_is_null(json_object_get(j, "failed")));
	json_decref(j);
	/* Run by hand (launchd would not: RunAtLoad and KeepAlive false),
	 * its pid is learnt all the same. */
	ctl(&code, "restart", "gone", NULL, NULL);
	assert_true(wait_state("gone", "unlocked", 0, 10.0) > 0);
}

/*
 * A stock job that ends on its own and that launchd does not restart
 * (KeepAlive false) is seen gone: the daemon follows each pid it learns,
 * so status stops naming a process that is no more, and says how it
 * ended.  Kills: a started pid left unwatched, known again only when
 * something else happens to the job, which for this one is never (a stock
 * job has no shim report to wait for).
 */
static void
test_exit_seen_without_restart(void **state)
{
	json_t	*j = NULL;
	double	 start;

	(void)state;
	put_job("once", "<key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string><string>--exit-after</string><string>300"
	    "</string><string>0</string></array><key>KeepAlive</key><false/>"
	    "<key>Unlocked</key><false/>");
	wait_state("once", "stock", 0, 10.0);
	for (start = now_s(); pid_of(j = job_status("once")) != 0 ||
	    strcmp(str_of(j, "last_exit"), "0") != 0; sleep_ms(50)) {
		json_decref(j);
		assert_true(now_s() - start < 10 * time_scale());
	}
	json_decref(j);
}

/*
 * A KeepAlive dictionary starts a job at load with SuccessfulExit in it
 * (launchd.plist(5)), and with a PathState only while its path stands as
 * wanted (launchd's job_import ends in job_dispatch, which checks it).
 * The simulator used to start any dictionary at load.
 */
static void
test_keepalive_dictionary(void **state)
{
	json_t	*j;

	(void)state;
	put_job("onpath", "<key>RunAtLoad</key><false/><key>KeepAlive</key>"
	    "<dict><key>PathState</key><dict><key>/nonexistent/ready</key>"
	    "<true/></dict></dict>");
	put_job("onexit", "<key>RunAtLoad</key><false/><key>KeepAlive</key>"
	    "<dict><key>SuccessfulExit</key><false/></dict>");
	wait_state("onexit", "unlocked", 0, 10.0);
	wait_state("onpath", "unlocked", -1, 10.0);
	sleep_ms(1000);
	j = job_status("onpath");
	assert_int_equal(pid_of(j), 0);
	json_decref(j);
}

/*
 * job, in state, killed by jetsam n times (sim-jetsam's REASON), each
 * time once its new process is known; the last pid killed.
 */
static long
jetsam_times(const char *job, const char *state, const char *reason, int n)
{
	char	cmd[512];
	long	pid = 0;
	int	i;

	for (i = 0; i < n; i++) {
		pid = wait_state(job, state, pid, 10.0);
		snprintf(cmd, sizeof cmd, "%s %s sim-jetsam gui/%ld/"
		    "org.metalcap.job.%s %s", simvar, SIM, (long)getuid(), job,
		    reason);
		assert_int_equal(system(cmd), 0);
	}
	return pid;
}

/*
 * llama, unlocked, killed by jetsam three times (sim-jetsam's REASON, ""
 * for its default), each time once its new process is known; the last
 * pid killed.
 */
static long
jetsam_three_times(const char *reason)
{
	put_job("llama", "");
	return jetsam_times("llama", "unlocked", reason, 3);
}

/*
 * job is crashing for its environment as launchd or the kernel named it,
 * cause named, no revert, and still loaded (it used to be failed).
 */
static void
crashing_for_environment(const char *job, const char *cause)
{
	char	want[256];
	json_t	*j;

	wait_state(job, "crashing", -1, 10.0);
	assert_true(loaded_in_gui(job));
	snprintf(want, sizeof want, "its environment: %s", cause);
	assert_field_has(job, "reason", want);
	j = job_status(job);
	assert_true(json_is_null(json_object_get(j, "reverted")));
	assert_true(json_is_null(json_object_get(j, "failed")));
	json_decref(j);
}

/*
 * Killed three times for its code signature ("last exit reason =
 * OS_REASON_CODESIGNING"): the program's own state, so the job is
 * crashing with that named and no revert, whatever profile it had (issue 27, finding 9).
 */
static void
test_codesigning_kills_named(void **state)
{
	(void)state;
	jetsam_three_times("OS_REASON_CODESIGNING");
	crashing_for_environment("llama", "macOS killed it for its code "
	    "signature");
}

/*
 * Killed by jetsam three times in a minute while unlocked: a crash loop,
 * reverted, the reason launchd gave as evidence.  launchd prints such a
 * run's end as "last exit reason = JETSAM_REASON_...", with no exit
 * code and no signal; metalcapd used to see no exit at all.
 */
static void
test_jetsam_kills_count(void **state)
{
	json_t	*j, *ev;

	(void)state;
	jetsam_three_times("");
	wait_state("llama", "reverted", -1, 10.0);
	/* The default window, no CrashLoop given: 60 s. */
	assert_field_has("llama", "reason", "crash loop: 3 abnormal exits "
	    "within 60 s");
	j = job_status("llama");
	ev = json_object_get(json_object_get(j, "reverted"), "evidence");
	assert_string_equal(json_string_value(json_array_get(ev, 1)),
	    "last: JETSAM_REASON_MEMORY_PERPROCESSLIMIT");
	json_decref(j);
}

/*
 * An idle process macOS reclaims ("last exit reason =
 * JETSAM_REASON_MEMORY_IDLE_EXIT") ended normally: three of them are no
 * crash loop, and the job stays unlocked (issue 27, finding 11).
 */
static void
test_idle_exit_is_no_crash(void **state)
{
	json_t	*j;
	long	 pid;

	(void)state;
	pid = jetsam_three_times("JETSAM_REASON_MEMORY_IDLE_EXIT");
	/* Its new pid is learnt in the look that counts the last exit. */
	wait_state("llama", "unlocked", pid, 10.0);
	j = job_status("llama");
	assert_true(json_is_null(json_object_get(j, "reverted")));
	json_decref(j);
}

/*
 * A process jetsam killed because the whole Mac ran short of memory
 * ("..._VMCOMPRESSOR_SPACE_SHORTAGE") did nothing wrong, and neither did
 * a profile that asks for no more GPU memory: three of them make the
 * job crashing, its environment's doing, named, no profile blamed.  They used
 * to revert the job, the profile blamed, and keep it reverted.  They
 * still count: launchd would start it into the shortage for ever.
 */
static void
test_memory_pressure_named(void **state)
{
	(void)state;
	jetsam_three_times("JETSAM_REASON_MEMORY_VMCOMPRESSOR_SPACE_SHORTAGE");
	crashing_for_environment("llama", "memory pressure on the Mac");
	assert_true(daemon_log_has("killed by macOS: memory pressure on the "
	    "Mac (JETSAM_REASON_MEMORY_VMCOMPRESSOR_SPACE_SHORTAGE)"));
}

/*
 * A profile that asks for more GPU memory (RecommendedWorkingSetSize) may
 * be why the Mac ran short: memory-pressure kills of its unlocked run
 * revert the job, as any crash loop; its stock run's are the
 * environment's, and the job is crashing, naming it.
 */
static void
test_memory_pressure_working_set(void **state)
{
	char	path[256];

	(void)state;
	snprintf(path, sizeof path, "%s/profiles.d/big.plist", home);
	write_file(path, "w", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<plist version=\"1.0\"><dict><key>AppleFamilyMax</key><integer>"
	    "1009</integer><key>RecommendedWorkingSetSize</key><integer>"
	    "17179869184</integer></dict></plist>\n");
	put_job("ws", "<key>Profile</key><string>big</string>");
	jetsam_times("ws", "unlocked", "JETSAM_REASON_LOWSWAP", 3);
	wait_state("ws", "reverted", -1, 10.0);
	assert_field_has("ws", "reason", "crash loop");
	jetsam_times("ws", "reverted", "JETSAM_REASON_LOWSWAP", 3);
	crashing_for_environment("ws", "memory pressure on the Mac");
}

/*
 * A daemon killed while it was starting a child leaves its lock with the
 * child until that execs.  The next daemon, finding the lock held and no
 * one answering on the socket, waits it out instead of refusing ("another
 * metalcapd is already serving"); test_revert_persisted_device_healed
 * failed so now and then under load.  A held lock stands in for the
 * child here.
 */
static void
test_lock_held_briefly(void **state)
{
	char	path[256];
	pid_t	holder;
	int	fd, ready[2];
	char	c;

	(void)state;
	kill_daemon(SIGKILL);
	snprintf(path, sizeof path, "%s/state/metalcapd.lock", home);
	assert_int_equal(pipe(ready), 0);
	if ((holder = fork()) == 0) {
		fd = open(path, O_RDWR);
		if (fd == -1 || flock(fd, LOCK_EX) == -1)
			_exit(1);
		write(ready[1], "x", 1);
		sleep_ms(1000);
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	start_daemon();
	waitpid(holder, NULL, 0);
}

/*
 * An edit of a job whose server takes 17 s to stop: launchd keeps the
 * label until the process exits (SIGKILL only after the agent's
 * ExitTimeOut, 30 s in the template), and metalcapd waits as long, the
 * agent's own ExitTimeOut and not its 5 s default (with 10 s to clean
 * up: 17 s is past that).  It used to give up after about 10 s: "error:
 * launchctl bootout (the job did not go away)".
 */
static void
test_slow_server_edit(void **state)
{
	const char	*slow = "<key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string><string>--term-delay</string><string>17000"
	    "</string></array>";
	char		 extra[512];
	long		 pid;

	(void)state;
	put_job("slow", slow);
	pid = wait_state("slow", "unlocked", 0, 5.0);
	snprintf(extra, sizeof extra, "%s<key>EnvironmentVariables</key><dict>"
	    "<key>EDITED</key><string>1</string></dict>", slow);
	put_job("slow", extra);
	wait_state("slow", "unlocked", pid, 30.0);
	/* And never an error on the way. */
	snprintf(extra, sizeof extra, "grep -q 'slow: error' %s/logs/"
	    "metalcapd.log", home);
	assert_int_not_equal(system(extra), 0);
}

/* Does launchd's print of the job hold text? */
static bool
print_has(const char *name, const char *text)
{
	char	cmd[512];

	snprintf(cmd, sizeof cmd, "%s %s print gui/%ld/org.metalcap.job.%s "
	    "2>/dev/null | grep -qF '%s'", simvar, SIM, (long)getuid(), name,
	    text);
	return system(cmd) == 0;
}

/* The daemon again, with a template whose ExitTimeOut is 1 s. */
static void
restart_with_exit_timeout_1s(void)
{
	static char	tmpl[256];

	snprintf(tmpl, sizeof tmpl, "%s/template.plist", home);
	write_file(tmpl, "w", "<plist version=\"1.0\"><dict><key>ExitTimeOut"
	    "</key><integer>1</integer></dict></plist>");
	daemon_template = tmpl;
	kill_daemon(SIGTERM);
	start_daemon();
}

/*
 * restart stops the process as launchd stops a job, not as kickstart -k
 * does (SIGKILL at once): SIGTERM, and the agent's ExitTimeOut to finish
 * the requests in flight.  A server that takes 300 ms exits 0, and a new
 * process runs; one that takes longer than the ExitTimeOut (1 s in this
 * template) is killed then, and a new process runs too.
 */
static void
test_restart_graceful(void **state)
{
	static const char *const names[] = { "quick", "slow" };
	char		 job[512];
	long		 pid;
	int		 code, i;

	(void)state;
	restart_with_exit_timeout_1s();
	for (i = 0; i < 2; i++) {
		snprintf(job, sizeof job, "<key>ProgramArguments</key><array>"
		    "<string>" FAKE_LLAMA "</string><string>--term-delay"
		    "</string><string>%d</string></array>", i ? 60000 : 300);
		put_job(names[i], job);
		pid = wait_state(names[i], "unlocked", 0, 5.0);
		ctl(&code, "restart", names[i], NULL, NULL);
		assert_int_equal(code, 0);
		wait_state(names[i], "unlocked", pid, 8.0);
		assert_true(print_has(names[i], i ? "last terminating signal "
		    "= Killed: 9" : "last exit code = 0"));
	}
}

/*
 * A template for the Background session alone: launchd refuses such an
 * agent in gui/<uid> (134; 5 for a user), so jobs go to user/<uid> from
 * the start and run.  A template for neither Aqua nor Background would
 * have every job refused: metalcapd does not start, and says why.
 */
static void
test_template_background_only(void **state)
{
	char	tmpl[256], cmd[512], log[320];
	pid_t	pid;
	int	status;

	(void)state;
	snprintf(tmpl, sizeof tmpl, "%s/template.plist", home);
	write_file(tmpl, "w", "<plist version=\"1.0\"><dict><key>"
	    "LimitLoadToSessionType</key><string>Background</string></dict>"
	    "</plist>");
	daemon_template = tmpl;
	kill_daemon(SIGTERM);
	start_daemon();
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	assert_false(loaded_in_gui("llama"));
	snprintf(cmd, sizeof cmd, "%s %s print user/%ld/org.metalcap.job.llama"
	    " >/dev/null 2>&1", simvar, SIM, (long)getuid());
	assert_int_equal(system(cmd), 0);
	write_file(tmpl, "w", "<plist version=\"1.0\"><dict><key>"
	    "LimitLoadToSessionType</key><string>LoginWindow</string></dict>"
	    "</plist>");
	kill_daemon(SIGTERM);
	pid = spawn_daemon("refused.log");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	snprintf(log, sizeof log, "grep -q 'LimitLoadToSessionType allows "
	    "neither Aqua nor Background' %s/refused.log", home);
	assert_int_equal(system(log), 0);
	daemon_template = NULL;
	start_daemon();
}

/*
 * A server's worker that ignores SIGTERM (the group's SIGTERM launchd
 * sends when the main process ends) would hold the port against the new
 * run: after the exit timeout, restart kills what the old process left
 * in its group.
 */
static void
test_restart_kills_lingering_workers(void **state)
{
	char		 job[1024], path[160], text[32];
	long		 pid, worker = 0;
	int		 code, i;
	FILE		*f;

	(void)state;
	restart_with_exit_timeout_1s();
	snprintf(path, sizeof path, "%s/worker.pid", home);
	snprintf(job, sizeof job, "<key>Unlocked</key><false/>"
	    "<key>ProgramArguments</key><array><string>/bin/sh</string>"
	    "<string>-c</string><string>trap '' TERM; sleep 600 &amp; echo $! "
	    "&gt; %s; trap - TERM; exec " FAKE_LLAMA "</string></array>",
	    path);
	put_job("srv", job);
	pid = wait_state("srv", "stock", 0, 5.0);
	for (i = 0; i < 100 && worker == 0; i++) {
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(text, sizeof text, f) != NULL)
				worker = atol(text);
			fclose(f);
		}
		if (worker == 0)
			sleep_ms(20);
	}
	assert_true(worker > 0);
	ctl(&code, "restart", "srv", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("srv", "stock", pid, 8.0);
	for (i = 0; i < 150 && kill((pid_t)worker, 0) == 0; i++)
		sleep_ms(20);	/* the daemon's kill, then its reaping */
	assert_int_equal(kill((pid_t)worker, 0), -1);
}

/*
 * launchd refuses an agent file that is group- or world-writable
 * (launchctl(1)); the simulator took it.  metalcapd writes its agents
 * 0644, and one whose mode was changed behind its back is written anew
 * before the next bootstrap instead of being retried 50 times as a label
 * still draining.
 */
static void
test_agent_mode_repaired(void **state)
{
	char	agent[256];
	int	code;

	(void)state;
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	snprintf(agent, sizeof agent, "%s/agents/org.metalcap.job.llama.plist",
	    home);
	assert_int_equal(chmod(agent, 0666), 0);
	ctl(&code, "stop", "llama", NULL, NULL);
	wait_state("llama", "stopped", 0, 5.0);
	ctl(&code, "start", "llama", NULL, NULL);
	wait_state("llama", "unlocked", 0, 5.0);
}

/*
 * A shim dyld will not load into the workload (an arm64e program, an
 * arm64 shim) ends the process at launch, dyld's lines on its stderr.
 * The probe, our own program, took the shim, so the gate passed: the job
 * is reverted from that line, with it as evidence, not after a crash loop
 * and not left "blocked" as glibc's ignored LD_PRELOAD would have it.
 */
static void
test_shim_rejected_by_dyld(void **state)
{
	(void)state;
	kill_daemon(SIGTERM);
	daemon_env = "LAUNCHCTL_SIM_DYLD_ARCH=arm64e";
	start_daemon();
	put_job("llama", "");
	wait_state("llama", "reverted", -1, 10.0);
	assert_field_has("llama", "reason", "shim could not load: dyld[");
}

/*
 * A pipeline the probe never compiles can fail in the workload alone:
 * the device fails ggml's flash-attention kernel, by its real name.  The
 * probe passes, the job starts unlocked, its warm-up compiles the kernel
 * and ggml says so on stderr; the log line reverts it.  (fake-llama used
 * to dispatch only the probe's own checks, so the two always failed
 * together.)
 */
static void
test_workload_kernel_probe_never_runs(void **state)
{
	long	pid;
	size_t	i;

	(void)state;
	set_device("MTLSIM_FAIL=kernel_flash_attn_ext_f16_dk128_dv128:compile");
	put_job("llama", "");
	pid = wait_state("llama", "reverted", 0, 10.0);
	assert_field_has("llama", "reason", "pipeline failure: ");
	/*
	 * ggml's line leads the evidence, or follows the shim's words when
	 * the report was read before the process aborted (witness.c).
	 */
	for (i = 0; i < 2 && strstr(incident_evidence("llama", "reverted", i),
	    " E ggml_metal_library_compile_pipeline: failed to compile "
	    "pipeline: base = 'kernel_flash_attn_ext_f16_dk128_dv128'") ==
	    NULL; i++)
		;
	assert_true(i < 2);
	assert_true(daemon_log_has("probe of profile apple9: pass"));
	/* Stock, the workload takes the path without that kernel. */
	assert_false(environ_has(pid, INJECTED));
}

/*
 * One domain per job, found again after a restart.  With no GUI session
 * the job goes to user/UID; launchd keeps that apart from gui/UID, so a
 * daemon restarted after someone logged in used to look for it in the
 * GUI domain, not find it, and load a second copy there: two servers on
 * one port.
 */
static void
test_one_domain_per_job(void **state)
{
	char	 path[256];
	json_t	*j;
	long	 pid;

	(void)state;
	kill_daemon(SIGTERM);
	use_background_template();
	daemon_env = "LAUNCHCTL_SIM_NO_GUI=1";
	start_daemon();
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 5.0);
	/* Someone logs in at the console; the daemon is restarted. */
	kill_daemon(SIGTERM);
	daemon_env = NULL;
	start_daemon();
	wait_state("llama", "unlocked", 0, 5.0);
	sleep_ms(1500);
	snprintf(path, sizeof path, "%s/services/gui/org.metalcap.job.llama."
	    "plist", simdir);
	assert_int_equal(access(path, F_OK), -1);
	j = job_status("llama");
	assert_int_equal(pid_of(j), pid);
	json_decref(j);
}

/*
 * A stopped job does not come back at login.  launchd loads every plist
 * in the user's LaunchAgents folder at login; metalcapd renders its job
 * agents elsewhere, and removes those an older metalcapd left there when
 * it starts.  Such a leftover used to start the stopped job again at the
 * next login, shim included, and after an uninstall too.
 */
static void
test_stopped_job_not_started_at_login(void **state)
{
	static const char *const others[] = { "org.metalcap.metalcapd.plist",
	    "homebrew.mxcl.metalcap.plist", "org.metalcap.job..plist",
	    "org.metalcap.job.x.plist.bak" };
	char	dir[256], cmd[2048];
	int	code, i;

	(void)state;
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	ctl(&code, "stop", "llama", NULL, NULL);
	wait_state("llama", "stopped", 0, 5.0);
	for (i = 0; i < 100 && loaded_in_gui("llama"); i++)
		sleep_ms(50);	/* bootout returns before the label goes */
	assert_false(loaded_in_gui("llama"));
	/* What an older metalcapd left in the folder launchd loads. */
	snprintf(dir, sizeof dir, "%s/Library/LaunchAgents", home);
	snprintf(cmd, sizeof cmd, "mkdir -p %s && cp %s/agents/org.metalcap."
	    "job.llama.plist %s/ && cp %s/org.metalcap.job.llama.plist "
	    "%s/org.metalcap.job.b.plist", dir, home, dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	/* The user's other agents, metalcapd's own among them, and a name
	 * with no job in it: not ours to remove. */
	for (i = 0; i < (int)(sizeof others / sizeof others[0]); i++) {
		snprintf(cmd, sizeof cmd, "%s/%s", dir, others[i]);
		write_file(cmd, "w", "<plist version=\"1.0\"><dict/></plist>\n");
	}
	kill_daemon(SIGTERM);
	start_daemon();
	wait_state("llama", "stopped", 0, 5.0);
	/* A job of a one-letter name is one of ours too. */
	snprintf(cmd, sizeof cmd, "%s/org.metalcap.job.b.plist", dir);
	assert_int_equal(access(cmd, F_OK), -1);
	for (i = 0; i < (int)(sizeof others / sizeof others[0]); i++) {
		snprintf(cmd, sizeof cmd, "%s/%s", dir, others[i]);
		if (access(cmd, F_OK) != 0)
			fail_msg("%s was removed", others[i]);
	}
	/*
	 * The user logs out and in again, and launchd loads the folder
	 * before metalcapd is up (or after metalcap was uninstalled).
	 */
	kill_daemon(SIGTERM);
	snprintf(cmd, sizeof cmd, "%s %s sim-logout && %s %s sim-login %s",
	    simvar, SIM, simvar, SIM, dir);
	assert_int_equal(system(cmd), 0);
	assert_false(loaded_in_gui("llama"));
	start_daemon();
	wait_state("llama", "stopped", 0, 5.0);
}

/*
 * The user logs out while metalcapd runs: the GUI domain ends with its
 * jobs, and nothing can be loaded there until a login (launchctl answers
 * 125).  A template without Background leaves the job in error, saying
 * why; the simulator used to keep gui/UID usable, and metalcapd put the
 * job back in a session that was gone.
 */
static void
test_logout_ends_gui_jobs(void **state)
{
	char	cmd[512];

	(void)state;
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 10.0);
	snprintf(cmd, sizeof cmd, "%s %s sim-logout", simvar, SIM);
	assert_int_equal(system(cmd), 0);
	wait_state("llama", "error", -1, 10.0);
	assert_field_has("llama", "reason", "no GUI session for this user");
	assert_false(loaded_in_gui("llama"));
}

/*
 * Probe replies owed to one connection: 64 are taken, the 65th is told to
 * wait (EBUSY).  All 65 arrive in one read, long before a probe is done.
 * The queue of written replies has the same bound, but a kernel socket
 * buffer completes writes before it fills, so its exact edge cannot be
 * seen from outside; test_pipelined_unread covers it under pressure.
 */
static void
test_owed_replies_edge(void **state)
{
	uint32_t	busy = 0, ok = 0, first_busy = 0;
	int		fd;

	(void)state;
	fd = raw_connect();
	pipeline_probes(fd, MC_MAX_OUTSTANDING + 1, &busy, &ok, &first_busy);
	close(fd);
	assert_int_equal(busy, 1);
	assert_int_equal(first_busy, MC_MAX_OUTSTANDING + 1);
	assert_int_equal(ok, MC_MAX_OUTSTANDING);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_revert_persisted_device_healed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_loop_exact_count,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_loop_while_down,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_seen_without_restart,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_restarts_are_not_crashes,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_restart_burst_hides_no_crashes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crashing_clears_when_steady,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_after_failure,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_runs_job_left_down,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_after_failure,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_environment_named, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_job_context, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_revert_withdrawn_when_stock_fails_too, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pipeline_revert_stays,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_burst_runs_twice,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_crash_window_against_throttle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_loop_real_throttle,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_spawn_failure_named,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_keepalive_dictionary,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_exit_is_no_crash,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_pressure_named,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_memory_pressure_working_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_codesigning_kills_named,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_jetsam_kills_count,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_held_briefly,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_metal_device, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_template_background_only,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_graceful, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_restart_kills_lingering_workers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slow_server_edit,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_agent_mode_repaired,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_shim_rejected_by_dyld,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_workload_kernel_probe_never_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_domain_per_job, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_stopped_job_not_started_at_login, setup, teardown),
		cmocka_unit_test_setup_teardown(test_logout_ends_gui_jobs,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_line_while_blocked,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_enable_probes_afresh,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_start, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_message_limit_edge, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_nesting_edge, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_clients_edge, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_owed_replies_edge, setup,
		    teardown),
	};

	/* MC_TEST_ONLY=pattern runs the matching tests (make mutate). */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("edges", tests, NULL, NULL);
}
