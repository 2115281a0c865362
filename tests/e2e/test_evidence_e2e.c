/* SPDX-License-Identifier: MIT */
/*
 * What counts as evidence of a failed Metal pipeline (metalcapd(8),
 * EVIDENCE; daemon/witness.c): what the process did, never text alone.
 * A line a client made the server print is held, not acted on; the same
 * line followed by the process's death, or a Metal call the shim saw
 * fail, sends the job back to stock, in every log form llama.cpp writes.
 * The real metalcapd, the launchctl SIMULATOR, fake-llama on the
 * simulated device.
 */
#include <sys/stat.h>

#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>
#include <jansson.h>

#include "harness.h"

#define PIPELINE_LINE	"ggml_metal_library_compile_pipeline: failed to " \
			"compile pipeline: base = 'kernel_mul_mm_f16_f32', " \
			"name = 'kernel_mul_mm_f16_f32'"
/* ggml_abort's line on a nil pipeline (ggml-metal-device.m:852). */
#define ABORT_LINE	"/Users/runner/work/llama.cpp/ggml/src/ggml-metal/" \
			"ggml-metal-device.m:852: ggml_metal_encoder_set_" \
			"pipeline: nil Metal pipeline (missing kernel; see " \
			"compile_pipeline log above)"
/* A stand-in of mlx_lm.server's logging (tests/sim/README.md, MLX). */
#define FAKE_MLX	MC_TEST_SOURCE "/tests/sim/fake-mlx-server.py"
/* MLX's failure lines (policy/scan.c SCAN_MLX), as a client sends them. */
#define MLX_RUNTIME	"RuntimeError: [metal::Device] Unable to load " \
			"kernel steel_gemm_fused_nn_float16_float16"
#define MLX_TERMINATE	"libc++abi: terminating due to uncaught exception " \
			"of type std::runtime_error: [metal::Device] Unable " \
			"to load kernel steel_gemm_fused_nn_float16_float16"
/* llama-grammar.cpp's parse error around a grammar a client sent. */
#define GRAMMAR_LINE	"parse: error parsing grammar: expecting ::= at " \
			"command buffer 0 failed with status 5"

/* A fake-llama job with these arguments after the program (XML). */
static void
put_args_job(const char *name, const char *args)
{
	char	extra[4096];

	snprintf(extra, sizeof extra, "<key>ProgramArguments</key><array>"
	    "<string>" FAKE_LLAMA "</string>%s</array>", args);
	put_job(name, extra);
}

static void	wait_revert_record(const char *);

/* Does evidence item i of the job's revert hold text? */
static bool
revert_evidence_has(const char *name, size_t i, const char *text)
{
	json_t		*j = job_status(name), *ev;
	const char	*item;
	bool		 has;

	ev = json_object_get(json_object_get(j, "reverted"), "evidence");
	item = json_string_value(json_array_get(ev, i));
	has = item != NULL && strstr(item, text) != NULL;
	json_decref(j);
	return has;
}

/*
 * Text alone: the pipeline line and a grammar's parse error, printed by
 * the server as a client's text, are held and logged, and the job stays
 * unlocked in the same process.  Kills: a failure line acted on without
 * a witness or a death.
 */
static void
test_text_alone_not_acted(void **state)
{
	static const char *const said[] = { PIPELINE_LINE, GRAMMAR_LINE };
	char	args[512], job[16];
	long	pid;
	json_t	*j;
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof said / sizeof said[0]; i++) {
		snprintf(job, sizeof job, "said%zu", i);
		snprintf(args, sizeof args, "<string>--say</string><string>%s"
		    "</string>", said[i]);
		put_args_job(job, args);
		pid = wait_state(job, "unlocked", 0, 5.0);
		wait_daemon_log("but the shim saw no Metal call fail", i + 1);
		j = job_status(job);
		assert_string_equal(str_of(j, "state"), "unlocked");
		assert_int_equal(pid_of(j), pid);
		assert_true(json_is_null(json_object_get(j, "reverted")) ||
		    json_object_get(j, "reverted") == NULL);
		json_decref(j);
	}
}

/* The first run of a fake-llama job saying lines, then ending as told
 * (XML arguments after them); its later runs serve. */
static void
put_once_job(const char *name, const char *const *lines, size_t n,
    const char *end)
{
	char	args[2048];
	size_t	i, len = 0;

	for (i = 0; i < n; i++)
		len += (size_t)snprintf(args + len, sizeof args - len,
		    "<string>--say</string><string>%s</string>", lines[i]);
	snprintf(args + len, sizeof args - len, end, home, name);
	put_args_job(name, args);
}

/* The job's first process ended and a second one serves, unlocked and
 * never reverted; the daemon said why the end was no evidence. */
static void
assert_not_evidence(const char *name)
{
	char	 text[128];
	json_t	*j;

	snprintf(text, sizeof text, "job %s: it ended (", name);
	wait_daemon_log(text, 1);
	wait_daemon_log("but not by ggml's abort right after it: not the "
	    "line's doing", 1);
	wait_state(name, "unlocked", 0, 8.0);
	j = job_status(name);
	assert_true(json_object_get(j, "reverted") == NULL ||
	    json_is_null(json_object_get(j, "reverted")));
	json_decref(j);
	snprintf(text, sizeof text, "job %s: reverted", name);
	assert_false(daemon_log_has(text));
}

/*
 * A failure line a client had the server print, then a crash it caused:
 * a grammar nested too deep overflows the stack (SIGSEGV), the server
 * exits with an error.  Neither is ggml's abort: no evidence, whatever
 * the line says and however soon the end came.  Kills: a death after
 * any failure line taken as evidence (issue 46, finding 1).
 */
static void
test_text_then_crash_not_evidence(void **state)
{
	static const char *const said[] = { PIPELINE_LINE };

	(void)state;
	put_once_job("segv", said, 1, "<string>--die-once</string>"
	    "<string>%s/%s.ran</string><string>50</string>"
	    "<string>SEGV</string>");
	assert_not_evidence("segv");
}

/*
 * ggml's own abort line, written by a client (an unanchored pattern
 * llama-server echoes), then a line of the server's, then SIGABRT (an
 * abort elsewhere): the abort line was not the last the process said.
 * Kills: an abort line anywhere before a SIGABRT taken for ggml's.
 */
static void
test_abort_line_then_more_not_evidence(void **state)
{
	static const char *const said[] = { PIPELINE_LINE, ABORT_LINE,
	    "srv  log_server_r: request: POST /completion 127.0.0.1 200" };

	(void)state;
	put_once_job("more", said, 3, "<string>--die-once</string>"
	    "<string>%s/%s.ran</string><string>50</string>"
	    "<string>ABRT</string>");
	assert_not_evidence("more");
}

/*
 * ggml aborts as the pinned ggml-metal does on a nil pipeline: the
 * failure line, its abort line, the trace ggml_abort writes on macOS,
 * SIGABRT.  That death is evidence, named by the failure line right
 * before the abort, with the abort and the end.  A failure line some
 * lines before the abort names nothing: the abort does.  Kills: the
 * abort not read as the last word past its trace; an older line taken
 * for its cause.
 */
static void
test_abort_death_reverts(void **state)
{
	static const char *const said[] = { PIPELINE_LINE, ABORT_LINE };
	static const char *const far[] = { "ggml_metal_library_compile_"
	    "pipeline: failed to compile pipeline: base = 'kernel_chosen', "
	    "name = 'kernel_chosen'", "srv  update_slots: all slots are idle",
	    "srv  log_server_r: request: GET /health 127.0.0.1 200",
	    "srv  params_from_: Chat format: Content-only", ABORT_LINE };

	(void)state;
	put_once_job("aborts", said, 2, "<string>--abort-once</string>"
	    "<string>%s/%s.ran</string>");
	wait_state("aborts", "reverted", -1, 8.0);
	assert_field_has("aborts", "reason", "pipeline failure: "
	    PIPELINE_LINE);
	assert_true(revert_evidence_has("aborts", 1, ABORT_LINE));
	assert_true(revert_evidence_has("aborts", 2, "then the process "
	    "ended: "));
	put_once_job("far", far, 5, "<string>--abort-once</string>"
	    "<string>%s/%s.ran</string>");
	wait_state("far", "reverted", -1, 8.0);
	assert_field_has("far", "reason", "ggml Metal abort: " ABORT_LINE);
	assert_false(revert_evidence_has("far", 0, "kernel_chosen"));
	assert_false(revert_evidence_has("far", 1, "kernel_chosen"));
}

/* llama unlocked, then its device's command buffers fail a request. */
static void
command_buffer_fails(void)
{
	long	pid;

	set_device(NULL);
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 5.0);
	set_device("MTLSIM_FAIL=simdgroup_matrix:error");
	send_request(pid);
}

/*
 * A command buffer that fails on the device: ggml_metal_synchronize logs
 * it at ERROR and the backend stays in error state while the server goes
 * on (ggml-metal-context.m:268-298, 459-462; tests/sim/README.md).  The
 * line is text a client could have planted; the shim's witness sends the
 * job back, with the line as its first evidence.  Kills: a witness never
 * read (the line alone is held, never acted on).
 */
static void
test_command_buffer_witnessed(void **state)
{
	(void)state;
	command_buffer_fails();
	wait_state("llama", "reverted", 0, 5.0);
	assert_field_has("llama", "reason", "command buffer failure: the "
	    "shim saw status fail with MTLCommandBufferErrorInternal (1) in "
	    "pid");
	assert_true(revert_evidence_has("llama", 0, "the shim saw status fail "
	    "with MTLCommandBufferErrorInternal (1) in pid"));
	assert_true(revert_evidence_has("llama", 1, "E ggml_metal_synchronize: "
	    "error: command buffer 0 failed with status 5"));
}

/*
 * A job a witness reverted, enabled again on a healed device, is judged
 * by the witness of its new process as by the first: a second failing
 * command buffer reverts it again.  Kills: witness_acted kept from the
 * process that was judged (issue 47, behaviours no test checked).
 */
static void
test_witness_after_reenable(void **state)
{
	long	pid;
	int	code;

	(void)state;
	command_buffer_fails();
	pid = wait_state("llama", "reverted", 0, 5.0);
	set_device(NULL);
	ctl(&code, "enable", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	pid = wait_state("llama", "unlocked", pid, 10.0);
	set_device("MTLSIM_FAIL=simdgroup_matrix:error");
	send_request(pid);
	wait_state("llama", "reverted", pid, 5.0);
	assert_field_has("llama", "reason", "command buffer failure: the "
	    "shim saw status fail with MTLCommandBufferErrorInternal (1) in "
	    "pid");
}

/* Does pid's report (in this home) hold text? */
static bool
report_has(long pid, const char *text)
{
	char	 path[256], buf[4096];
	size_t	 got;
	FILE	*f;

	snprintf(path, sizeof path, "%s/state/reports/metalcap.%ld.report",
	    home, pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	got = fread(buf, 1, sizeof buf - 1, f);
	buf[got] = '\0';
	fclose(f);
	return strstr(buf, text) != NULL;
}

/*
 * A witness, then the process killed at once (a command buffer failed:
 * ggml's ERROR line may or may not have been read by then, and alone it
 * is text, held): the report is read as the process ends, whether or not
 * its change was heard yet.  Kills: a witness read only on the report
 * folder's event,
 * lost when the pid's report goes with it.  (A process that dies before
 * metalcapd learns its pid leaves a report it cannot tie to the job:
 * then a crash loop is what shows; metalcapd(8), CAVEATS.)
 */
static void
test_witness_then_quick_death(void **state)
{
	double	start;
	long	pid;

	(void)state;
	put_job("quick", "");
	pid = wait_state("quick", "unlocked", 0, 5.0);
	/* A kernel the probe never dispatches fails its command buffer. */
	set_device("MTLSIM_FAIL=kernel_flash_attn_ext_f16_dk128_dv128:error");
	send_request(pid);
	for (start = now_s(); !report_has(pid, " failed=command-buffer ");
	    sleep_ms(5))
		if (now_s() - start > 5 * time_scale())
			fail_msg("no witness in pid %ld's report", pid);
	kill((pid_t)pid, SIGKILL);
	wait_revert_record("quick");
	assert_true(revert_evidence_has("quick", 0, "the shim saw status fail "
	    "with MTLCommandBufferErrorInternal (1) in pid"));
	assert_field_has("quick", "reason", "command buffer failure: ");
}

/*
 * A command buffer the GPU fails for want of memory (its error's code,
 * MTLCommandBufferErrorOutOfMemory) is the machine's state, not the
 * kernel's: said, never judged; a kernel's fault after it still is, and
 * the verdict names its code.  Kills: a command buffer's witness judged
 * whatever its code, or its code lost.
 */
static void
test_machine_fault_not_judged(void **state)
{
	char	said[64], buf[32];
	long	pid;
	int	code;

	(void)state;
	set_device(NULL);
	put_job("oom", "");
	pid = wait_state("oom", "unlocked", 0, 5.0);
	set_device("MTLSIM_FAIL=simdgroup_matrix:oom");
	send_request(pid);
	snprintf(said, sizeof said, "MTLCommandBufferErrorOutOfMemory (8) in "
	    "pid %ld", pid);
	wait_daemon_log(said, 1);
	assert_string_equal(status_string("oom", NULL, "state", buf,
	    sizeof buf), "unlocked");
	/*
	 * ggml's backend stays in error state after any failed command
	 * buffer (ggml-metal-context.m:459-462): a new process, and the
	 * same job still judges a kernel's failure.
	 */
	set_device(NULL);
	ctl(&code, "restart", "oom", NULL, NULL);
	assert_int_equal(code, 0);
	pid = wait_state("oom", "unlocked", pid, 10.0);
	set_device("MTLSIM_FAIL=simdgroup_matrix:error");
	send_request(pid);
	wait_state("oom", "reverted", 0, 5.0);
	assert_field_has("oom", "reason", "the shim saw status fail with "
	    "MTLCommandBufferErrorInternal (1)");
}

/*
 * ggml's tensor API check (GGML_METAL_TENSOR_ENABLE on a device that
 * answers Metal4) builds a dummy kernel and does without the API when its
 * library, its function or its pipeline fails, after an ERROR line of its
 * own (ggml-metal-device.m:1181-1190).  The shim witnesses the call; the
 * process goes on, healthy, and is not reverted.  A line read after the
 * check is held and logged, so the check's own lines were read by then.
 * Kills: a library witness paired with ggml_metal_library_init_from_source's
 * line; a function or pipeline witness acting alone or with its line
 * before the process aborts, or on an abort that is not ggml's.
 */
#define HELD_LINE	"ggml_metal_synchronize: error: command buffer 7 " \
			"failed with status 5"
static void
test_tensor_check_goes_on(void **state)
{
	static const char *const modes[][2] = {
		{ "library", " failed=library " },
		{ "compile", " failed=function " },
		{ "pipeline", " failed=pipeline " },
	};
	char	 device[256], name[32], buf[32];
	double	 start;
	long	 pid;
	size_t	 i;
	json_t	*j;

	(void)state;
	for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		snprintf(device, sizeof device, "MTLSIM_EXTRA_FAMILIES=5002\n"
		    "GGML_METAL_TENSOR_ENABLE=1\nMTLSIM_FAIL=tensor_api:%s",
		    modes[i][0]);
		set_device(device);
		snprintf(name, sizeof name, "tensor-%s", modes[i][0]);
		put_args_job(name, "<string>--say</string><string>"
		    HELD_LINE "</string>");
		pid = wait_state(name, "unlocked", 0, 5.0);
		for (start = now_s(); !report_has(pid, modes[i][1]);
		    sleep_ms(5))
			if (now_s() - start > 5 * time_scale())
				fail_msg("no %s witness in pid %ld's report",
				    modes[i][0], pid);
		wait_daemon_log(HELD_LINE, (int)i + 1);
		assert_string_equal(status_string(name, NULL, "state", buf,
		    sizeof buf), "unlocked");
		j = job_status(name);
		assert_int_equal(pid_of(j), pid);
		json_decref(j);
	}
	/*
	 * A SIGABRT of another cause (an assert a client reaches,
	 * std::terminate) after the check's pipeline failed: not ggml's
	 * abort on it, so no verdict.  Kills: a pipeline witness judged by
	 * any SIGABRT.
	 */
	kill((pid_t)pid, SIGABRT);
	wait_daemon_log("job tensor-pipeline: exited abnormally (signal 6)",
	    1);
	j = job_status("tensor-pipeline");
	assert_true(json_is_null(json_object_get(j, "reverted")));
	json_decref(j);
}

/*
 * The job "family": InheritShim, a shell whose child, fake-llama, does
 * the Metal work; the child's pid once the job runs unlocked.
 */
static long
put_family(void)
{
	char	args[1024], pidfile[256];
	long	child;

	snprintf(pidfile, sizeof pidfile, "%s/child.pid", home);
	snprintf(args, sizeof args, "<key>InheritShim</key><true/>"
	    "<key>ProgramArguments</key><array><string>/bin/sh</string>"
	    "<string>-c</string><string>" FAKE_LLAMA " &amp; echo $! "
	    "&gt;%s.tmp; mv %s.tmp %s; wait</string></array>", pidfile,
	    pidfile, pidfile);
	put_job("family", args);
	child = wait_pid_file(pidfile);
	wait_state("family", "unlocked", 0, 8.0);
	return child;
}

/*
 * InheritShim: the job's process is a shell, and its child does the Metal
 * work (as Ollama's runner does).  The child's hooked report proves the
 * injection, its witness sends the job back, and its report goes once it
 * has ended.  Kills: only the job's own pid's report read (the job stays
 * "blocked: the injection was dropped" and a child's failure is never
 * acted on); a child's report left behind.
 */
static void
test_inherit_child_witnessed(void **state)
{
	long	child;
	double	start;

	(void)state;
	set_device(NULL);
	child = put_family();
	set_device("MTLSIM_FAIL=simdgroup_matrix:error");
	send_request(child);
	wait_revert_record("family");
	assert_field_has("family", "reason", "command buffer failure: the "
	    "shim saw status fail with MTLCommandBufferErrorInternal (1) in "
	    "pid");
	assert_true(revert_evidence_has("family", 0, "in pid"));
	/* Its group ended with the revert: the child's report goes. */
	for (start = now_s(); marker_exists(child) || kill((pid_t)child, 0) ==
	    0; sleep_ms(20))
		if (now_s() - start > 10 * time_scale())
			fail_msg("pid %ld's report is still there", child);
}

/*
 * InheritShim, a child's witnesses in turn: its tensor API check's library
 * fails first (optional: a verdict only with ggml's library line), then
 * a command buffer fails.  The later witness says more and sends the job
 * back.  Kills: the group's first witness kept for good (the red team's
 * finding: the command buffer was only held).
 */
static void
test_inherit_later_witness(void **state)
{
	char	said[160];
	long	child;

	(void)state;
	set_device("MTLSIM_EXTRA_FAMILIES=5002\nGGML_METAL_TENSOR_ENABLE=1\n"
	    "MTLSIM_FAIL=tensor_api:library");
	child = put_family();
	snprintf(said, sizeof said, "the shim saw newLibraryWithSource:"
	    "options:error: fail in pid %ld: a verdict only", child);
	wait_daemon_log(said, 1);
	set_device("MTLSIM_FAIL=simdgroup_matrix:error");
	send_request(child);
	wait_revert_record("family");
	assert_field_has("family", "reason", "command buffer failure: the "
	    "shim saw status fail with MTLCommandBufferErrorInternal (1)");
}

/*
 * A report left under a pid that a new process of a job now has, written
 * by another process group (a child of another job, ended): not the new
 * process's, which proves nothing yet; it is swept.  Kills: a stale
 * report read as the new process's own ("hooked" from a process long
 * gone), or kept.
 */
static void
test_stale_report_not_its_own(void **state)
{
	char	path[256], line[512];
	long	pid;
	double	start;

	(void)state;
	put_job("idle", "<key>ProgramArguments</key><array><string>/bin/sleep"
	    "</string><string>1000</string></array>");
	pid = wait_state("idle", "blocked", 0, 8.0);
	snprintf(path, sizeof path, "%s/state/reports/metalcap.%ld.report",
	    home, pid);
	snprintf(line, sizeof line, "metalcap pid=%ld pgid=1 version=0.1.0 "
	    "state=hooked family_max=1009 threadgroup_memory=65536 "
	    "working_set=0 inherit=1 source=- class=AppleParavirtDevice "
	    "hooked=supportsFamily: watched=- ctor_ns=1 reason=-\n", pid);
	write_file(path, "w", line);
	for (start = now_s(); marker_exists(pid); sleep_ms(20))
		if (now_s() - start > 5 * time_scale())
			fail_msg("the stale report of pid %ld stays", pid);
	assert_string_equal(status_string("idle", NULL, "state", line,
	    sizeof line), "blocked");
}

/*
 * A FIFO where a report would be: the daemon opens nothing that could
 * block its one thread, and goes on answering.  Kills: a report opened
 * with a plain fopen (it waits for a writer for ever).
 */
static void
test_report_fifo(void **state)
{
	char	path[256];
	long	pid;

	(void)state;
	put_job("idle", "<key>ProgramArguments</key><array><string>/bin/sleep"
	    "</string><string>1000</string></array>");
	pid = wait_state("idle", "blocked", 0, 8.0);
	snprintf(path, sizeof path, "%s/state/reports/metalcap.%ld.report",
	    home, pid);
	assert_int_equal(mkfifo(path, 0600), 0);
	/* Another report's change makes it read every job's. */
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 8.0);
	assert_string_equal(status_string("idle", NULL, "state", path,
	    sizeof path), "blocked");
}

/*
 * A real failure reverts in every form llama.cpp's log takes: the
 * default prefix (timestamp and level), --no-log-timestamps (the level
 * alone), --no-log-prefix and --log-colors on; a kernel that does not
 * compile (the library's function) and a pipeline the device refuses.
 * Kills: a signature that needs one prefix, colours left in a line
 * scanned, a witness of one call only.
 */
static void
test_every_log_form(void **state)
{
	static const char *const forms[] = {
	    "",
	    "<string>--no-log-timestamps</string>",
	    "<string>--no-log-prefix</string>",
	    "<string>--log-colors</string><string>on</string>",
	};
	static const struct {
		const char	*mode, *line, *call;
	} fails[] = {
	    { "compile", "failed to compile pipeline: base = "
	      "'kernel_mul_mm_f16_f32'", "newFunctionWithName:" },
	    { "pipeline", "failed to create pipeline state: base = "
	      "'kernel_mul_mm_f16_f32'",
	      "newComputePipelineStateWithFunction:error:" },
	};
	const size_t	n = sizeof forms / sizeof forms[0];
	long		pid[4];
	char		job[16], device[64], line[128], call[96];
	size_t		i, k;

	(void)state;
	for (k = 0; k < sizeof fails / sizeof fails[0]; k++) {
		set_device(NULL);
		for (i = 0; i < n; i++) {
			snprintf(job, sizeof job, "%s%zu", fails[k].mode, i);
			put_args_job(job, forms[i]);
		}
		for (i = 0; i < n; i++) {
			snprintf(job, sizeof job, "%s%zu", fails[k].mode, i);
			pid[i] = wait_state(job, "unlocked", 0, 8.0);
		}
		snprintf(device, sizeof device, "MTLSIM_FAIL=simdgroup_matrix:%s",
		    fails[k].mode);
		set_device(device);
		for (i = 0; i < n; i++)
			send_request(pid[i]);
		snprintf(line, sizeof line, "ggml_metal_library_compile_pipeline: "
		    "%s", fails[k].line);
		snprintf(call, sizeof call, "the shim saw %s fail in pid",
		    fails[k].call);
		for (i = 0; i < n; i++) {
			snprintf(job, sizeof job, "%s%zu", fails[k].mode, i);
			wait_state(job, "reverted", -1, 8.0);
			/*
			 * The shim's words first, the verdict's ground; then
			 * the line as ggml wrote it, without colours, said to
			 * be the log's (a client may have written it), ggml's
			 * abort and the end by SIGABRT that made it a verdict.
			 */
			if (!revert_evidence_has(job, 0, call) ||
			    !revert_evidence_has(job, 1, "its log said: ") ||
			    !revert_evidence_has(job, 1, line) ||
			    revert_evidence_has(job, 1, "\033") ||
			    !revert_evidence_has(job, 2, "ggml-metal-device."
			    "m:852: ") ||
			    !revert_evidence_has(job, 3, "then the process "
			    "ended: ") ||
			    !revert_evidence_has(job, 3, "signal 6"))
				fail_msg("%s: its evidence is not %s, then %s",
				    job, call, line);
		}
	}
}

/* The job's revert on record (it may have gone on to fail in stock). */
static void
wait_revert_record(const char *name)
{
	double	 start = now_s();
	json_t	*j;
	bool	 has;

	for (;;) {
		j = job_status(name);
		has = j != NULL && json_is_object(json_object_get(j,
		    "reverted"));
		json_decref(j);
		if (has)
			return;
		if (now_s() - start > 10 * time_scale())
			fail_msg("%s was never reverted", name);
		sleep_ms(20);
	}
}

/*
 * A residency set the device refuses with an error, at the server's start:
 * ggml logs it and the server exits (status 1: no abort), in every log
 * form.  The shim's witness is the evidence, named by ggml's line.  Each
 * start is held back until metalcapd knows the pid: a process that ends
 * before that leaves a report no job can claim (metalcapd(8), CAVEATS),
 * and only its crash loop shows.  Kills: a residency-set line not
 * recognised in one of the forms; an exit status taken for evidence.
 */
static void
test_residency_every_form(void **state)
{
	static const char *const forms[] = {
	    "",
	    "<string>--no-log-timestamps</string>",
	    "<string>--no-log-prefix</string>",
	    "<string>--log-colors</string><string>on</string>",
	};
	char	job[16], args[512], go[256];
	size_t	i;

	(void)state;
	set_device("MTLSIM_RESIDENCY=nil-error");
	for (i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		snprintf(job, sizeof job, "rset%zu", i);
		snprintf(args, sizeof args, "<string>--start-when</string>"
		    "<string>%s/%s.go</string>%s", home, job, forms[i]);
		put_args_job(job, args);
	}
	for (i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		snprintf(job, sizeof job, "rset%zu", i);
		wait_state(job, "unlocked", 0, 8.0);
		snprintf(go, sizeof go, "%s/%s.go", home, job);
		write_file(go, "w", "");
	}
	for (i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		snprintf(job, sizeof job, "rset%zu", i);
		wait_revert_record(job);
		if (!revert_evidence_has(job, 1, "ggml_metal_buffer_rset_init: "
		    "error: MTLResidencySetErrorDomain") ||
		    !revert_evidence_has(job, 0, "the shim saw "
		    "newResidencySetWithDescriptor:error: fail in pid"))
			fail_msg("%s: not reverted for its residency set", job);
	}
}

/* The family ceiling of the shim's report as status shows it; 0: none. */
static long
shim_family_max(const char *name)
{
	json_t	*j = job_status(name);
	long	 v = (long)json_integer_value(json_object_get(json_object_get(j,
	    "shim"), "family_max"));

	json_decref(j);
	return v;
}

/*
 * A profile above every Apple GPU, told by the shim's own answer: the
 * job goes back to stock though llama.cpp logged nothing (its family
 * line is INFO, hidden by default).  Kills: the over-broad check left to
 * the log.
 */
static void
test_overbroad_from_shim(void **state)
{
	char	path[256];
	double	start;
	long	pid;

	(void)state;
	snprintf(path, sizeof path, "%s/profiles.d/apple21.plist", home);
	write_file(path, "w", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<plist version=\"1.0\"><dict><key>AppleFamilyMax</key><integer>"
	    "1021</integer></dict></plist>\n");
	put_job("broad", "<key>Profile</key><string>apple21</string>");
	wait_state("broad", "reverted", -1, 8.0);
	assert_field_has("broad", "reason", "over-broad profile: the shim "
	    "answers Apple families up to 1021");
	/* Apple10 is a real GPU's family (M5, A19): not over-broad. */
	snprintf(path, sizeof path, "%s/profiles.d/apple10.plist", home);
	write_file(path, "w", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<plist version=\"1.0\"><dict><key>AppleFamilyMax</key><integer>"
	    "1010</integer></dict></plist>\n");
	put_job("ten", "<key>Profile</key><string>apple10</string>");
	pid = wait_state("ten", "unlocked", 0, 8.0);
	/* Status shows the report read: judged in that same step. */
	for (start = now_s(); shim_family_max("ten") != 1010; sleep_ms(20))
		if (now_s() - start > 8 * time_scale())
			fail_msg("the report of pid %ld was never read", pid);
	assert_field_has("ten", "state", "unlocked");
	assert_false(daemon_log_has("job ten: reverted"));
}

/* metalcapd held clean's line, and launchd has told it of an exit 0. */
static bool
clean_end_seen(void)
{
	json_t	*j;
	bool	 seen;

	if (!daemon_log_has("job clean: its log shows a pipeline failure"))
		return false;
	j = job_status("clean");
	seen = j != NULL && strcmp(str_of(j, "last_exit"), "0") == 0;
	json_decref(j);
	return seen;
}

/*
 * A failure line, then the process ends normally (exit 0): no death of
 * it, and nothing reverts; the line is spent.  Kills: any end taken for
 * a death.
 */
static void
test_text_then_clean_exit(void **state)
{
	json_t	*j;
	double	 start;

	(void)state;
	put_args_job("clean", "<string>--say</string><string>" PIPELINE_LINE
	    "</string><string>--exit-after</string><string>300</string>"
	    "<string>0</string>");
	/* Its clean end judged (launchd told it: last_exit), after its line
	 * was held; KeepAlive starts it again. */
	for (start = now_s(); !clean_end_seen(); sleep_ms(20))
		if (now_s() - start > 10 * time_scale())
			fail_msg("no clean end after a held line");
	j = job_status("clean");
	assert_string_not_equal(str_of(j, "state"), "reverted");
	assert_true(json_is_null(json_object_get(j, "reverted")));
	json_decref(j);
	assert_false(daemon_log_has("job clean: reverted"));
}

/*
 * One large request llama-server echoes line by line: 15,000 failure
 * lines in the job's stderr, then a line of its environment (read in
 * order, so when that is logged every line before it was read).  The
 * daemon logs the first LOG_BURST (10) held lines, one line saying the
 * rest are counted, and no more.  Kills: a line in metalcapd's log for
 * every line a client has the server print (issue 46, finding 10:
 * 15,000 lines, 4.6 MB).
 */
static void
test_flood_logged_bounded(void **state)
{
	(void)state;
	put_args_job("flood", "<string>--flood</string><string>15000</string>"
	    "<string>" PIPELINE_LINE "</string><string>--say</string>"
	    "<string>gguf_init_from_file: failed to open GGUF file "
	    "'/nowhere/m.gguf' (No such file or directory)</string>");
	wait_state("flood", "unlocked", 0, 5.0);
	wait_daemon_log("job flood: its log names its environment", 1);
	assert_int_equal(daemon_log_count("job flood: its log shows a "), 10);
	assert_int_equal(daemon_log_count("job flood: more lines of the kind "
	    "\"held\" this minute are counted, not logged"), 1);
	/* And its start: probing, bootstrap, unlocked. */
	assert_true(daemon_log_count("job flood:") <= 16);
}

/*
 * mlx_lm.server logs a body that is not JSON raw (server.py:1084-1088),
 * so a client puts MLX's failure lines at the start of lines of the
 * job's stderr, libc++abi's uncaught exception last, as MLX's own death
 * by an exception in its Metal thread would end; then the server dies
 * of SIGABRT.  Text and a death a client can bring about: no evidence
 * (an MLX job's evidence is the shim's witness).  Kills: held lines and
 * an abnormal end counted as a failure (before issue 46, finding 1), an
 * MLX failure line before SIGABRT taken for an abort's (finding 13).
 */
static void
test_mlx_echo_then_abort_not_evidence(void **state)
{
	char	body[256], args[1024];

	(void)state;
	snprintf(body, sizeof body, "%s/body.json", home);
	write_file(body, "w", "{\"model\": \"m\", \"messages\": [\n"
	    MLX_RUNTIME "\n" MLX_TERMINATE);
	snprintf(args, sizeof args, "<key>ProgramArguments</key><array>"
	    "<string>/usr/bin/python3</string><string>" FAKE_MLX "</string>"
	    "<string>--body</string><string>%s</string><string>--die-once"
	    "</string><string>%s/mlx.ran</string><string>ABRT</string>"
	    "</array>", body, home);
	put_job("mlx", args);
	assert_not_evidence("mlx");
	/* Both lines read as MLX's failure lines, before the end. */
	assert_true(daemon_log_count("job mlx: its log shows a MLX kernel "
	    "failure") >= 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_text_alone_not_acted,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_text_then_crash_not_evidence, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_abort_line_then_more_not_evidence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_death_reverts,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_then_clean_exit,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_witness_after_reenable,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_command_buffer_witnessed,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_witness_then_quick_death,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_log_form, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_residency_every_form,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_machine_fault_not_judged,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tensor_check_goes_on,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_inherit_child_witnessed,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_inherit_later_witness,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_report_not_its_own,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_fifo, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_overbroad_from_shim, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_flood_logged_bounded,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_mlx_echo_then_abort_not_evidence, setup, teardown),
	};

	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("evidence_e2e", tests, NULL, NULL);
}
