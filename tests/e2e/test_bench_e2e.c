/* SPDX-License-Identifier: MIT */
/*
 * metalcapctl exec and bench end to end (issue 17): the real client, probe
 * and shim, on the simulated device, with fake-llama and llama-bench-sim
 * (SIMULATORS of llama.cpp's programs) as the workloads.  What the client
 * claims is held against what the workload itself printed, and bench's
 * evidence folder against Python's hashlib, csv and statistics
 * (check-evidence.py), not against the client's own arithmetic.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "child.h"
#include "harness.h"

#define BENCH_SIM	BUILD "/tests/llama-bench-sim"
#define PPL_SIM		BUILD "/tests/llama-perplexity-sim"
#define CHECK_EVIDENCE	MC_TEST_SOURCE "/tests/e2e/check-evidence.py"

static char	model[128], tmpvar[192], evidence[128], text[128];
static const char *extra_env[4];

/* The model file and the environment of this home's runs. */
static void
bench_home(void)
{
	snprintf(tmpvar, sizeof tmpvar, "TMPDIR=%s", home);
	snprintf(model, sizeof model, "%s/tiny.gguf", home);
	snprintf(evidence, sizeof evidence, "%s/evidence", home);
	snprintf(text, sizeof text, "%s/text.txt", home);
	write_file(model, "w", "GGUF\ngeneral.type=llama 1B Q4_K - Medium\n"
	    "general.size=667815936\ngeneral.params=1100048384\n");
	extra_env[0] = switches;
	extra_env[1] = tmpvar;
	extra_env[2] = NULL;
}

/* A home without a daemon: exec and bench probe for themselves. */
static int
setup_alone(void **state)
{
	(void)state;
	if (setup_home("/tmp/mc-bench.XXXXXX") == -1)
		return -1;
	bench_home();
	return 0;
}

static int
teardown_alone(void **state)
{
	char	cmd[4096];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
	return system(cmd) == 0 ? 0 : -1;
}

/* The same home with the harness's daemon running in it. */
static int
setup_daemon(void **state)
{
	if (setup(state) != 0)
		return -1;
	bench_home();
	return 0;
}

/* metalcapctl --home HOME ARGS... with the test's environment (and more). */
static struct child_result *
run_ctl(int *code, const char *more, const char *const *args)
{
	const char	*extra[6];
	size_t		 i;

	for (i = 0; extra_env[i] != NULL; i++)
		extra[i] = extra_env[i];
	extra[i++] = more;
	extra[i] = NULL;
	return ctlv_env(code, extra, args);
}

static json_t *
load_json(const char *path)
{
	json_t	*doc = json_load_file(path, 0, NULL);

	assert_non_null(doc);
	return doc;
}

/*
 * exec with no daemon: the probe runs here, the workload gets the shim,
 * and the claim on stderr agrees with what the workload itself printed
 * (ggml's family line), and with --report's file.
 */
static void
test_exec_unlocked_alone(void **state)
{
	char			 report[160];
	const char		*args[] = { "exec", "--report", report, "--",
	    FAKE_LLAMA, "--once", "-lv", "4", NULL };
	struct child_result	*r;
	struct stat		 sb;
	json_t			*doc, *argv;
	int			 code;

	(void)state;
	snprintf(report, sizeof report, "%s/exec.json", home);
	r = run_ctl(&code, NULL, args);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->err, "GPU family: MTLGPUFamilyApple9  "
	    "(1009)"));
	assert_non_null(strstr(r->err, "simdgroup matrix mul. = true"));
	assert_non_null(strstr(r->err, "metalcapctl: exec: unlocked by "
	    "profile apple9: pid "));
	assert_non_null(strstr(r->err, " saw Apple families up to 1009 "
	    "(Apple9) and at least 65536 bytes of threadgroup memory"));
	/* A program with nothing to warn of: no warning. */
	assert_null(strstr(r->err, "metalcapctl: warning:"));
	assert_int_equal(stat(report, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0644);
	doc = load_json(report);
	assert_true(json_is_true(json_object_get(doc, "injected")));
	assert_string_equal(json_string_value(json_object_get(doc, "program")),
	    FAKE_LLAMA);
	assert_string_equal(json_string_value(json_object_get(doc, "profile")),
	    "apple9");
	argv = json_object_get(doc, "argv");
	assert_int_equal(json_array_size(argv), 4);
	assert_string_equal(json_string_value(json_array_get(argv, 0)),
	    FAKE_LLAMA);
	assert_string_equal(json_string_value(json_array_get(argv, 1)),
	    "--once");
	assert_string_equal(json_string_value(json_array_get(argv, 3)), "4");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    doc, "shim"), "state")), "hooked");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    doc, "shim"), "family_max")), 1009);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    doc, "probe"), "verdict")), "pass");
	assert_non_null(strstr(json_string_value(json_object_get(
	    json_object_get(doc, "probe"), "by")), "no daemon answered"));
	json_decref(doc);
}

/*
 * $TMPDIR reached through a link, as macOS's is (under /var, a link to
 * /private/var): the shim refuses a report path with a link anywhere in
 * it, so exec and the probe it runs name their report folders by their
 * real paths, and the run is judged unlocked all the same.  Kills: either
 * folder named as mkdtemp made it (no report: the probe finds no shim,
 * exec no activation line).
 */
static void
test_exec_tmpdir_through_link(void **state)
{
	char			 report[160], real[160], link[160];
	const char		*args[] = { "exec", "--report", report, "--",
	    FAKE_LLAMA, "--once", NULL };
	struct child_result	*r;
	json_t			*doc;
	int			 code;

	(void)state;
	snprintf(real, sizeof real, "%s/tmp-real", home);
	snprintf(link, sizeof link, "%s/tmp-link", home);
	assert_int_equal(mkdir(real, 0700), 0);
	assert_int_equal(symlink(real, link), 0);
	snprintf(report, sizeof report, "%s/exec.json", home);
	snprintf(tmpvar, sizeof tmpvar, "TMPDIR=%s", link);
	r = run_ctl(&code, NULL, args);
	snprintf(tmpvar, sizeof tmpvar, "TMPDIR=%s", home);
	if (code != 0)
		fail_msg("exec: %d, stderr:\n%s", code, r->err);
	assert_non_null(strstr(r->err, "metalcapctl: exec: unlocked by "
	    "profile apple9: pid "));
	doc = load_json(report);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    doc, "shim"), "state")), "hooked");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    doc, "probe"), "verdict")), "pass");
	json_decref(doc);
}

/*
 * run_ctl with a signal's disposition as a caller sets it (SIG_DFL, or
 * SIG_IGN as nohup does for SIGHUP): inherited across fork and exec, so
 * the test never depends on how the suite itself was started.
 */
static struct child_result *
run_ctl_signal(int *code, int sig, void (*disposition)(int),
    const char *const *args)
{
	struct sigaction	 sa = { .sa_handler = disposition }, old;
	struct child_result	*r;

	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(sig, &sa, &old), 0);
	r = run_ctl(code, NULL, args);
	assert_int_equal(sigaction(sig, &old, NULL), 0);
	return r;
}

/* Is sig in the SigIgn mask of a /proc/PID/status text? */
static bool
status_ignores(const char *status, int sig)
{
	const char		*line = strstr(status, "\nSigIgn:\t");
	unsigned long long	 mask;

	assert_non_null(line);
	assert_int_equal(sscanf(line, "\nSigIgn:\t%llx", &mask), 1);
	return (mask >> (sig - 1)) & 1;
}

/*
 * metalcapctl ignores SIGPIPE for itself, but the program gets SIGPIPE
 * as the caller left it: with its default, "exec -- yes | head -1" ends
 * as yes does in a shell, by the signal, not by a write error.
 */
static void
test_exec_sigpipe_as_given(void **state)
{
	const char		*args[] = { "exec", "--", "/bin/cat",
	    "/proc/self/status", NULL };
	struct child_result	*r;
	int			 code;

	(void)state;
	r = run_ctl_signal(&code, SIGPIPE, SIG_DFL, args);
	assert_int_equal(code, 0);
	assert_false(status_ignores(r->out, SIGPIPE));
	r = run_ctl_signal(&code, SIGPIPE, SIG_IGN, args);
	assert_int_equal(code, 0);
	assert_true(status_ignores(r->out, SIGPIPE));
}

/*
 * exec is transparent: the program's status, 127 and 125 for its own; a
 * signal the caller ignores stays ignored in the program (nohup).
 */
static void
test_exec_status(void **state)
{
	const char	*crash[] = { "exec", "--", FAKE_LLAMA, "--exit-after",
	    "0", "7", NULL };
	const char	*missing[] = { "exec", "--", "no-such-program-here",
	    NULL };
	const char	*empty[] = { "exec", "--", "", NULL };
	char		 report[160];
	const char	*hangup[] = { "exec", "--report", report, "--",
	    "/usr/bin/python3", "-c", "import os, signal; "
	    "os.kill(os.getpid(), signal.SIGHUP)", NULL };
	json_t		*doc;
	const char	*other[] = { "exec", "--report", report, "--profile",
	    "nonesuch", "--", FAKE_LLAMA, "--once", NULL };
	char		 setuid_copy[160], cmd[4096], path[160];
	const char	*by_path[] = { "exec", "--", path, NULL };
	static const struct {
		const char	*name, *body;
		mode_t		 mode;
		int		 code;
	} paths[] = {
		{ "nope/prog", NULL, 0, 127 },
		{ "not-executable", "#!/bin/sh\nexit 0\n", 0644, 127 },
		{ "no-interpreter", "echo hi\n", 0755, 126 },
	};
	size_t		 i;
	const char	*setuid_run[] = { "exec", "--", setuid_copy, "--once",
	    NULL };
	struct child_result *r;
	int		 code;

	(void)state;
	run_ctl(&code, NULL, crash);
	assert_int_equal(code, 7);
	/* Death by the lowest signal, SIGHUP: 128 + 1, and said so. */
	snprintf(report, sizeof report, "%s/hup.json", home);
	r = run_ctl_signal(&code, SIGHUP, SIG_DFL, hangup);
	assert_int_equal(code, 128 + SIGHUP);
	assert_non_null(strstr(r->err, "ended by signal 1 before the shim "
	    "reported"));
	doc = load_json(report);
	assert_int_equal(json_integer_value(json_object_get(doc, "status")),
	    128 + SIGHUP);
	assert_false(json_is_true(json_object_get(doc, "injected")));
	json_decref(doc);
	/* Under nohup the same program lives on and ends well. */
	r = run_ctl_signal(&code, SIGHUP, SIG_IGN, hangup);
	assert_int_equal(code, 0);
	assert_null(strstr(r->err, "ended by signal"));
	r = run_ctl(&code, NULL, missing);
	assert_int_equal(code, 127);
	assert_non_null(strstr(r->err, "not found in PATH"));
	r = run_ctl(&code, NULL, empty);	/* as execvp: ENOENT */
	assert_int_equal(code, 127);
	assert_non_null(strstr(r->err, "exec: : not found in PATH"));
	/* Refused before the run, a report left from an earlier one goes. */
	write_file(report, "w", "{\"injected\": true}\n");
	r = run_ctl(&code, NULL, other);
	assert_int_equal(code, 125);
	assert_non_null(strstr(r->err, "no profile nonesuch"));
	assert_int_equal(access(report, F_OK), -1);
	/* A path that is no program: 127, said so; one that cannot be run
	 * (a text without #!): 126, with the system's reason. */
	for (i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", home, paths[i].name);
		if (paths[i].body != NULL) {
			write_file(path, "w", paths[i].body);
			assert_int_equal(chmod(path, paths[i].mode), 0);
		}
		r = run_ctl(&code, NULL, by_path);
		assert_int_equal(code, paths[i].code);
		assert_non_null(strstr(r->err, paths[i].code == 126 ?
		    strerror(ENOEXEC) : "not an executable file"));
	}
	snprintf(cmd, sizeof cmd, "! ls -d %s/metalcap-* 2>/dev/null", home);
	assert_int_equal(system(cmd), 0);
	/* dyld drops the injection of a setuid program: refused before. */
	snprintf(setuid_copy, sizeof setuid_copy, "%s/fake-llama-setuid",
	    home);
	snprintf(cmd, sizeof cmd, "cp %s %s && chmod 4755 %s", FAKE_LLAMA,
	    setuid_copy, setuid_copy);
	assert_int_equal(system(cmd), 0);
	r = run_ctl(&code, NULL, setuid_run);
	assert_int_equal(code, 125);
	assert_non_null(strstr(r->err, "the shim cannot be injected"));
	/* The judge's reason, and only what refused it. */
	assert_non_null(strstr(r->err, "is setuid or setgid: dyld ignores "
	    "DYLD_* for it"));
	assert_null(strstr(r->err, "nothing to check"));
	assert_null(strstr(r->err, "server is listening"));
}

/*
 * exec as a shell's child: started with SIGCHLD ignored it still gets the
 * program's status (waitpid would find no child); a PATH folder named
 * like the program is passed over as execvp passes it; and SIGTERM to
 * metalcapctl reaches the program, after which metalcapctl dies of it,
 * so a script stops as it would.
 */
static void
test_exec_as_a_child(void **state)
{
	char			 cmd[4096], dir[160];
	int			 status;

	(void)state;
	snprintf(cmd, sizeof cmd, "%s python3 -c 'import os, signal, sys\n"
	    "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
	    "os.execv(sys.argv[1], sys.argv[1:])' %s --home %s exec -- %s "
	    "--exit-after 0 7 2>/dev/null", switches, CTL, home, FAKE_LLAMA);
	status = system(cmd);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 7);
	snprintf(dir, sizeof dir, "%s/p/fake-llama", home);
	snprintf(cmd, sizeof cmd, "mkdir -p %s && cd %s/.. && PATH=%s/p:"
	    "%s/tests %s %s --home %s exec -- fake-llama --exit-after 0 3 "
	    "2>/dev/null", dir, dir, home, BUILD, switches, CTL, home);
	status = system(cmd);
	assert_int_equal(WEXITSTATUS(status), 3);
	/* An empty PATH entry is the current folder, as for execvp. */
	snprintf(cmd, sizeof cmd, "cd %s/tests && PATH=/nonexistent: %s %s "
	    "--home %s exec -- fake-llama --exit-after 0 4 2>/dev/null", BUILD,
	    switches, CTL, home);
	status = system(cmd);
	assert_int_equal(WEXITSTATUS(status), 4);
	/* The serving program gets the SIGTERM; metalcapctl then dies of it. */
	snprintf(cmd, sizeof cmd, "%s %s %s --home %s exec -- %s 2>%s/err & "
	    "p=$!; for i in $(seq 100); do grep -q 'starting the main loop' "
	    "%s/err && break; sleep 0.1; done; kill -TERM $p; wait $p; "
	    "echo $? > %s/rc", switches, tmpvar, CTL, home, FAKE_LLAMA, home,
	    home, home);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "grep -qx 143 %s/rc && ! ls -d "
	    "%s/metalcap-* 2>/dev/null", home, home);
	assert_int_equal(system(cmd), 0);
	/*
	 * The terminal's ^C to the whole group: fake-llama handles it and
	 * exits 0, so metalcapctl exits 0 too, as a shell's child would.
	 * sh starts a background command with SIGINT ignored, and that
	 * would hold: Python gives metalcapctl a terminal's default.
	 */
	snprintf(cmd, sizeof cmd, "rm -f %s/err; setsid /usr/bin/python3 -c "
	    "'import os, signal, sys; signal.signal(signal.SIGINT, "
	    "signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' env %s %s "
	    "--home %s exec -- %s 2>%s/err & p=$!; for i in $(seq 100); do "
	    "grep -q 'starting the main loop' %s/err 2>/dev/null && break; "
	    "sleep 0.1; done; kill -INT -$p || kill -KILL $p; wait $p; "
	    "echo $? > %s/rc",
	    home, switches, CTL, home, FAKE_LLAMA, home, home, home);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "grep -qx 0 %s/rc", home);
	assert_int_equal(system(cmd), 0);
}

/*
 * system(cmd) with SIGINT at its default in what it runs, whatever the
 * suite was started with: an ignored SIGINT stays ignored in metalcapctl
 * (as env(1) leaves it), and the tests of ^C need one it can take.
 */
static int
system_sigint_default(const char *cmd)
{
	struct sigaction	deflt = { .sa_handler = SIG_DFL }, old;
	int			status;

	sigemptyset(&deflt.sa_mask);
	assert_int_equal(sigaction(SIGINT, &deflt, &old), 0);
	status = system(cmd);
	assert_int_equal(sigaction(SIGINT, &old, NULL), 0);
	return status;
}

/*
 * A terminal's ^C (a pty's, here): the kernel signals the whole
 * foreground group, program included, so metalcapctl must not pass it on
 * as well (it does pass one that a process sent it alone).  The program
 * leaves the group, so that only what metalcapctl passes on can reach
 * it, and counts its SIGINTs for a second: none.  It then ends as if
 * by ^C (130), and metalcapctl, which got the ^C, dies of it.
 */
static void
test_exec_terminal_interrupt(void **state)
{
	char		 script[160], cmd[4096];
	int		 status;

	(void)state;
	snprintf(script, sizeof script, "%s/ctrl-c.py", home);
	write_file(script, "w", "import os, pty, sys, time\n"
	    "prog = ('import os, signal, time\\n'\n"
	    "    'n = 0\\n'\n"
	    "    'def h(s, f):\\n'\n"
	    "    '    global n\\n'\n"
	    "    '    n += 1\\n'\n"
	    "    'signal.signal(signal.SIGINT, h)\\n'\n"
	    "    'os.setpgid(0, 0)\\n'\n"
	    "    'print(\"ready\", flush=True)\\n'\n"
	    "    'end = time.time() + float(os.environ[\"WAIT\"])\\n'\n"
	    "    'while n == 0 and time.time() < end:\\n'\n"
	    "    '    time.sleep(0.01)\\n'\n"
	    "    'print(\"sigints=%d\" % n, flush=True)\\n'\n"
	    "    'os._exit(130)\\n')\n"
	    "pid, fd = pty.fork()\n"
	    "if pid == 0:\n"
	    "    os.execv(sys.argv[1], sys.argv[1:] + ['/usr/bin/python3', "
	    "'-c', prog])\n"
	    "out = b''\n"
	    "while b'ready' not in out:\n"
	    "    out += os.read(fd, 4096)\n"
	    "os.write(fd, b'\\x03')\n"
	    "while True:\n"
	    "    try:\n"
	    "        got = os.read(fd, 4096)\n"
	    "    except OSError:\n"
	    "        break\n"
	    "    if not got:\n"
	    "        break\n"
	    "    out += got\n"
	    "_, status = os.waitpid(pid, 0)\n"
	    "text = out.decode(errors='replace')\n"
	    "ok = 'sigints=0' in text and os.WIFSIGNALED(status) and "
	    "os.WTERMSIG(status) == 2\n"
	    "sys.exit(0 if ok else '%d %s' % (status, text))\n");
	snprintf(cmd, sizeof cmd, "%s %s WAIT=%g timeout -k 5 60 "
	    "/usr/bin/python3 %s %s --home %s exec --", switches, tmpvar,
	    1.0 * time_scale(), script, CTL, home);
	status = system_sigint_default(cmd);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * A SIGINT sent to metalcapctl while it starts the program (before the
 * pid is known: libspawn-signal.so holds the spawn at that moment) still
 * reaches the program, which stops; were it not blocked across the spawn,
 * it would be taken with no program to pass it to, and the server would
 * serve on (timeout's 124).
 */
static void
test_exec_signal_during_spawn(void **state)
{
	char			 cmd[4096];
	int			 status;

	(void)state;
	snprintf(cmd, sizeof cmd, "%s %s MC_SPAWN_SIGNAL_AT=/fake-llama "
	    "LD_PRELOAD=%s/tests/libspawn-signal.so timeout -k 5 20 %s --home "
	    "%s exec -- %s 2>/dev/null", switches, tmpvar, BUILD, CTL, home,
	    FAKE_LLAMA);
	status = system_sigint_default(cmd);
	assert_true(WIFEXITED(status));
	/* The program stopped: 0 (its handler) or 130 (before it had one). */
	if (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 130)
		fail_msg("exit %d: the program did not get the SIGINT",
		    WEXITSTATUS(status));
}

/*
 * A device that fails the probe: exec refuses, naming the check, and the
 * program never runs.  Kills: an exec that trusts the profile unprobed.
 */
static void
test_exec_refuses_failed_probe(void **state)
{
	const char		*args[] = { "exec", "--", FAKE_LLAMA, "--once",
	    NULL };
	struct child_result	*r;
	int			 code;

	(void)state;
	set_device("MTLSIM_FAIL=simdgroup_matrix:compile");
	r = run_ctl(&code, NULL, args);
	assert_int_equal(code, 125);
	assert_non_null(strstr(r->err, "did not pass the probe on this device "
	    "(fail: "));
	assert_non_null(strstr(r->err, "simdgroup_matrix"));
	assert_null(strstr(r->err, "ggml_metal_device_init"));
	/* Only the threadgroup answer unsafe: partial, and exec, which has
	 * no family-only run, refuses it too, saying which. */
	set_device("MTLSIM_FAIL=threadgroup_advertised:pipeline");
	r = run_ctl(&code, NULL, args);
	assert_int_equal(code, 125);
	assert_non_null(strstr(r->err, "did not pass the probe on this device "
	    "(partial: "));
	assert_null(strstr(r->err, "ggml_metal_device_init"));
}

/*
 * A temporary folder that cannot take the probe's output (TMPDIR a file):
 * exec refuses before running anything, naming where it could not write.
 * Kills: a failed mkstemp taken for a file to write the probe's output to.
 */
static void
test_exec_tmpdir_unwritable(void **state)
{
	const char		*args[] = { "exec", "--", FAKE_LLAMA, "--once",
	    NULL };
	char			 bad[160];
	struct child_result	*r;
	int			 code;

	(void)state;
	snprintf(bad, sizeof bad, "%s/not-a-folder", home);
	write_file(bad, "w", "a file\n");
	snprintf(tmpvar, sizeof tmpvar, "TMPDIR=%s", bad);
	r = run_ctl(&code, NULL, args);
	snprintf(tmpvar, sizeof tmpvar, "TMPDIR=%s", home);
	assert_int_equal(code, 125);
	assert_non_null(strstr(r->err, bad));
	assert_null(strstr(r->err, "ggml_metal_device_init"));
}

/*
 * ForceStock in the computer's managed preferences (user NULL) or in a
 * user's, and exec refused for it.
 */
static void
force_stock_refuses_exec(const char *user)
{
	const char		*args[] = { "exec", "--", FAKE_LLAMA, "--once",
	    NULL };
	char			 dir[256], file[320];
	struct child_result	*r;
	int			 code;

	snprintf(dir, sizeof dir, "%s/managed", home);
	mkdir(dir, 0755);
	if (user != NULL) {
		snprintf(dir, sizeof dir, "%s/managed/%s", home, user);
		mkdir(dir, 0755);
	}
	snprintf(file, sizeof file, "%s/org.metalcap.plist", dir);
	write_file(file, "w", "<plist version=\"1.0\"><dict><key>ForceStock"
	    "</key><true/></dict></plist>");
	r = run_ctl(&code, NULL, args);
	assert_int_equal(code, 125);
	assert_non_null(strstr(r->err, "forbidden by the managed setting "
	    "ForceStock"));
}

/* Managed ForceStock binds exec as it binds the daemon's jobs. */
static void
test_exec_managed_force_stock(void **state)
{
	(void)state;
	force_stock_refuses_exec(NULL);
}

/*
 * This user's managed preferences bind exec and bench as the computer's
 * do, and as they bind the daemon's enable; the daemon probes no profile
 * they forbid.
 */
static void
test_exec_user_managed(void **state)
{
	const char		*bench[] = { "bench", "--samples", "1", "--",
	    BENCH_SIM, "-m", model, NULL };
	const char		*probe[] = { "probe", "--profile", "apple9",
	    NULL };
	const char		*reload[] = { "reload", NULL };
	struct child_result	*r;
	int			 code;

	(void)state;
	force_stock_refuses_exec(getpwuid(getuid())->pw_name);
	r = run_ctl(&code, NULL, bench);
	assert_int_not_equal(code, 0);
	assert_non_null(strstr(r->err, "ForceStock"));
	run_ctl(&code, NULL, reload);
	r = run_ctl(&code, NULL, probe);
	assert_int_not_equal(code, 0);
	assert_non_null(strstr(r->err, "EMANAGED"));
}

/*
 * --report FILE is written as a new file renamed into place: a link the
 * run planted at that name is replaced, not followed; a FIFO does not
 * hang metalcapctl.
 */
static void
test_exec_report_planted(void **state)
{
	char			 report[160], target[256], script[512];
	const char		*args[] = { "exec", "--report", report, "--",
	    "/usr/bin/python3", "-c", script, NULL };
	struct stat		 sb;
	struct child_result	*r;
	int			 code, k;

	(void)state;
	snprintf(report, sizeof report, "%s/exec.json", home);
	snprintf(target, sizeof target, "%s/target", home);
	for (k = 0; k < 2; k++) {
		snprintf(script, sizeof script, k == 0 ? "import os; "
		    "os.symlink('%s', '%s')" : "import os; os.mkfifo('%s')",
		    k == 0 ? target : report, report);
		r = run_ctl(&code, NULL, args);
		assert_int_equal(code, 0);
		assert_null(strstr(r->err, "--report"));
		assert_int_equal(lstat(report, &sb), 0);
		assert_true(S_ISREG(sb.st_mode));
		assert_int_equal(lstat(target, &sb), -1);
		unlink(report);
	}
	/* A report that cannot be written: said, naming it; the run's own
	 * status stands. */
	snprintf(report, sizeof report, "%s/no/such/folder/exec.json", home);
	snprintf(script, sizeof script, "pass");
	r = run_ctl(&code, NULL, args);
	assert_int_equal(code, 0);
	snprintf(target, sizeof target, "exec: --report %s: cannot write",
	    report);
	if (strstr(r->err, target) == NULL)
		fail_msg("no \"%s\" in: %s", target, r->err);
}

/* With a daemon running, its verdict is the one used. */
static void
test_exec_asks_daemon(void **state)
{
	char			 report[160];
	const char		*args[] = { "exec", "--report", report, "--",
	    FAKE_LLAMA, "--once", "-lv", "4", NULL };
	json_t			*doc;
	int			 code;

	(void)state;
	snprintf(report, sizeof report, "%s/exec.json", home);
	run_ctl(&code, NULL, args);
	assert_int_equal(code, 0);
	doc = load_json(report);
	assert_non_null(strstr(json_string_value(json_object_get(
	    json_object_get(doc, "probe"), "by")), "metalcapd"));
	/* The device the daemon's probe ran on, as its report names it. */
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    doc, "probe"), "device")), "Apple Paravirtual device");
	assert_true(json_is_true(json_object_get(doc, "injected")));
	json_decref(doc);
}

/*
 * The whole bench path: interleaved rounds, Cua's table, and an evidence
 * folder that Python's own code finds consistent, field by field.
 */
static void
test_bench_evidence(void **state)
{
	const char		*args[] = { "bench", "--samples", "2", "--out",
	    evidence, "--", BENCH_SIM, "-m", model, "-p", "64", "-n", "16",
	    "-r", "3", NULL };
	char			 cmd[4096];
	struct child_result	*r;
	int			 code;

	(void)state;
	r = run_ctl(&code, NULL, args);
	assert_int_equal(code, 0);
	if (strstr(r->err, "cannot") != NULL)
		fail_msg("a run that wrote its evidence says: %s", r->err);
	assert_non_null(strstr(r->out, "llama 1B Q4_K - Medium, profile "
	    "apple9: 2 rounds"));
	assert_non_null(strstr(r->out, "\npp64 "));
	assert_non_null(strstr(r->out, "\ntg16 "));
	/* The device's answers decide the kernels: unlocked is faster. */
	snprintf(cmd, sizeof cmd, "python3 -c 'import csv,sys; rows=list("
	    "csv.DictReader(open(sys.argv[1]))); sys.exit(not all(float("
	    "r[\"guest_ratio\"]) > 5 for r in rows))' %s/results.csv",
	    evidence);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "python3 %s %s 2 %s %s -m %s -p 64 -n 16 "
	    "-r 3 -o json", CHECK_EVIDENCE, evidence, model, BENCH_SIM, model);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "cd %s && sha256sum --quiet -c SHA256SUMS",
	    evidence);
	assert_int_equal(system(cmd), 0);
	/* A folder to share as evidence: made 0755, its files 0644. */
	snprintf(cmd, sizeof cmd, "test \"$(stat -c %%a %s)\" = \"$(printf "
	    "%%o $((0755 & ~0$(umask))))\" && test -z \"$(find %s -type f "
	    "! -perm $(printf %%o $((0644 & ~0$(umask)))))\"", evidence,
	    evidence);
	assert_int_equal(system(cmd), 0);
}

/* bench's results.csv and metadata.md's Command line, read back. */
static void
bench_read_back(const char *out, const char *odd, const char *quoted)
{
	char	cmd[4096], script[160];

	snprintf(script, sizeof script, "%s/check.py", home);
	write_file(script, "w", "import csv, os, re, subprocess, sys\n"
	    "rows = list(csv.DictReader(open(sys.argv[1] + '/results.csv', "
	    "newline='')))\n"
	    "want = '\\'=HYPERLINK(\"x\"),1B (llama.cpp)'\n"
	    "assert len(rows) == 2, rows\n"
	    "for r in rows:\n"
	    "    assert r['workload'] == want and r['unit'] == 'tokens/s', r\n"
	    "text = open(sys.argv[1] + '/metadata.md').read()\n"
	    "line = re.search(r'^- Command: (.*)$', text, re.M).group(1)\n"
	    "got = subprocess.run(['bash', '-c', 'eval \"a=($1)\"; printf "
	    "\"%s\\\\0\" \"${a[@]}\"', '_', line], check=True, "
	    "capture_output=True).stdout.split(b'\\0')\n"
	    "assert os.environ['ODD'].encode() in got, (line, got)\n"
	    "assert os.environ['QUOTED'] in line, (line, "
	    "os.environ['QUOTED'])\n");
	snprintf(cmd, sizeof cmd, "python3 %s %s", script, out);
	assert_int_equal(setenv("ODD", odd, 1), 0);
	assert_int_equal(setenv("QUOTED", quoted, 1), 0);
	assert_int_equal(system(cmd), 0);
	unsetenv("ODD");
	unsetenv("QUOTED");
}

/*
 * Text from files in the evidence: a model type stays one results.csv
 * field (RFC 4180 quoting of its comma and quotes) and one that starts
 * like a formula is made text, as Python's csv reads it back; a model
 * path with a newline and a quote stays on metadata.md's Command line,
 * in bash's $'...', and bash reads the path back from it.
 */
static void
test_bench_evidence_quoting(void **state)
{
	/* A control character (in $'...'), then a space and a quote ('...'). */
	static const char *const names[] = { "tiny\nmodel's ~.gguf",
	    "tiny model's ~.gguf" };
	/* How each is written, as the shell reads it back. */
	static const char *const quoted[] = { "$'%s/tiny\\x0amodel\\x27s "
	    "~.gguf'", "'%s/tiny model'\\''s ~.gguf'" };
	char			 odd[160], out[160], want[256];
	const char		*args[] = { "bench", "--samples", "1", "--out",
	    out, "--", BENCH_SIM, "-m", odd, "-p", "32", "-n", "8",
	    "-r", "2", NULL };
	int			 code;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(odd, sizeof odd, "%s/%s", home, names[i]);
		snprintf(out, sizeof out, "%s-%zu", evidence, i);
		write_file(odd, "w", "GGUF\ngeneral.type==HYPERLINK(\"x\"),"
		    "1B\ngeneral.size=667815936\ngeneral.params="
		    "1100048384\n");
		run_ctl(&code, NULL, args);
		assert_int_equal(code, 0);
		snprintf(want, sizeof want, quoted[i], home);
		bench_read_back(out, odd, want);
	}
}


/* --json without --out: the numbers for scripts, no folder left behind. */
static void
test_bench_json_leaves_nothing(void **state)
{
	/* llama-bench's own -o json, given: taken as it is. */
	const char		*args[] = { "--json", "bench", "--samples",
	    "1", "--", BENCH_SIM, "-m", model, "-p", "32", "-n", "8", "-r",
	    "2", "--output", "json", NULL };
	struct child_result	*r;
	json_t			*doc, *t;
	double			 s, u;
	char			 cmd[4096];
	int			 code;

	(void)state;
	r = run_ctl(&code, NULL, args);
	assert_int_equal(code, 0);
	doc = json_loads(r->out, 0, NULL);
	assert_non_null(doc);
	assert_true(json_is_null(json_object_get(doc, "refused")));
	assert_int_equal(json_array_size(json_object_get(doc, "tests")), 2);
	t = json_array_get(json_object_get(doc, "tests"), 0);
	assert_string_equal(json_string_value(json_object_get(t, "name")),
	    "pp32");
	s = json_real_value(json_object_get(json_object_get(t, "stock"),
	    "median"));
	u = json_real_value(json_object_get(json_object_get(t, "unlocked"),
	    "median"));
	assert_int_equal(json_array_size(json_object_get(json_object_get(t,
	    "stock"), "samples")), 2);
	assert_true(fabs(json_real_value(json_object_get(t, "ratio")) - u / s)
	    < 1e-9);
	json_decref(doc);
	snprintf(cmd, sizeof cmd, "ls -d %s/metalcap-* 2>/dev/null", home);
	assert_int_not_equal(system(cmd), 0);
}

/*
 * env(1) copied under another name, as a vendor's front-end binary would
 * be: the pre-launch check sees an ELF it cannot recognize as a wrapper.
 */
static void
env_launcher(char *path, size_t len)
{
	char	cmd[512];

	snprintf(path, len, "%s/run-llama", home);
	snprintf(cmd, sizeof cmd, "cp /usr/bin/env %s", path);
	assert_int_equal(system(cmd), 0);
}

/*
 * A file in the evidence folder that cannot be read back for SHA256SUMS
 * (here a symbolic link the benchmarked program planted: never
 * followed) is named with the system's reason, and the bench fails.
 */
static void
test_evidence_unreadable_named(void **state)
{
	char			 launcher[160], script[512];
	const char		*args[] = { "bench", "--samples", "1", "--out",
	    evidence, "--", launcher, "/bin/sh", "-c", script, BENCH_SIM,
	    "-m", model, "-r", "2", NULL };
	struct child_result	*r;
	int			 code;

	(void)state;
	env_launcher(launcher, sizeof launcher);
	snprintf(script, sizeof script, "ln -sf /etc/hostname '%s/planted'; "
	    "exec \"$0\" \"$@\"", evidence);
	r = run_ctl(&code, NULL, args);
	assert_int_not_equal(code, 0);
	if (strstr(r->err, "/planted: Too many levels of symbolic links") ==
	    NULL)
		fail_msg("stderr: %s", r->err);
}

/*
 * A launcher between bench and llama-bench that the pre-launch check
 * cannot recognize (env(1) copied under another name, as a vendor's
 * front-end binary would be): the shim loads into the launcher, takes
 * itself out of the environment (METALCAP_INHERIT=0), and the exec'd
 * llama-bench, the same pid, runs stock and never reports.  No ratio, and
 * the evidence says why.  Kills: a bench that trusts the exit status.
 */
static void
test_bench_refuses_without_shim(void **state)
{
	char			 launcher[160], cmd[4096], path[200];
	const char		*args[] = { "bench", "--samples", "1", "--out",
	    evidence, "--", launcher, BENCH_SIM, "-m", model, "-r", "2",
	    NULL };
	struct child_result	*r;
	int			 code;

	(void)state;
	env_launcher(launcher, sizeof launcher);
	r = run_ctl(&code, NULL, args);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "did not get the shim, so there is no "
	    "ratio"));
	assert_non_null(strstr(r->err, "no report from the shim in pid"));
	/* llama-bench itself saw the stock device. */
	snprintf(cmd, sizeof cmd, "grep -q 'MTLGPUFamilyApple5 ' "
	    "%s/unlocked-1.stderr", evidence);
	assert_int_equal(system(cmd), 0);
	assert_null(strstr(r->out, "ratio"));
	snprintf(path, sizeof path, "%s/results.csv", evidence);
	assert_int_not_equal(access(path, F_OK), 0);
	snprintf(cmd, sizeof cmd, "grep -q '^- Result: no ratio: round 1: "
	    "the unlocked run did not get the shim' %s/metadata.md && cd %s "
	    "&& sha256sum --quiet -c SHA256SUMS", evidence, evidence);
	assert_int_equal(system(cmd), 0);
}

/*
 * A file planted in the evidence folder while bench runs (here by the
 * first run itself, under the name the second run's output will take):
 * bench stops, saying it cannot write the folder, and the planted file
 * is neither overwritten nor read as a run.  Kills: a bench that goes on
 * after a run's files could not be made.
 */
static void
test_bench_planted_file(void **state)
{
	const char		*args[] = { "bench", "--samples", "1", "--out",
	    evidence, "--", BENCH_SIM, "-m", model, "-p", "32", "-n", "8",
	    "-r", "2", NULL };
	char			 plant[200], cmd[4096];
	struct child_result	*r;
	int			 code;

	(void)state;
	snprintf(plant, sizeof plant, "LLAMA_BENCH_SIM_PLANT=%s/unlocked-1."
	    "json", evidence);
	r = run_ctl(&code, plant, args);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "cannot write the evidence folder"));
	/* The file that was there named, and the run that never started
	 * recorded as such in metadata.md. */
	snprintf(cmd, sizeof cmd, "metalcapctl: bench: %s/unlocked-1.json: "
	    "File exists", evidence);
	if (strstr(r->err, cmd) == NULL)
		fail_msg("no \"%s\" in: %s", cmd, r->err);
	assert_null(strstr(r->out, "ratio"));
	snprintf(cmd, sizeof cmd, "test \"$(cat %s/unlocked-1.json)\" = "
	    "planted && grep -q '^- round 1, unlocked: not started, "
	    "`unlocked-1.json`' %s/metadata.md", evidence, evidence);
	assert_int_equal(system(cmd), 0);
	/* One of the summaries planted: named, with its folder, and kept. */
	snprintf(cmd, sizeof cmd, "rm -rf %s", evidence);
	assert_int_equal(system(cmd), 0);
	snprintf(plant, sizeof plant, "LLAMA_BENCH_SIM_PLANT=%s/results.csv",
	    evidence);
	r = run_ctl(&code, plant, args);
	assert_int_equal(code, 1);
	snprintf(cmd, sizeof cmd, "metalcapctl: bench: cannot write "
	    "%s/results.csv: File exists", evidence);
	if (strstr(r->err, cmd) == NULL)
		fail_msg("no \"%s\" in: %s", cmd, r->err);
	snprintf(cmd, sizeof cmd, "test \"$(cat %s/results.csv)\" = "
	    "planted", evidence);
	assert_int_equal(system(cmd), 0);
}

/*
 * A SIGINT in the middle of a round (held back until llama-bench is being
 * started, by libspawn-signal.so): bench stops there, says so, writes no
 * summary from a half-run benchmark, and dies of the SIGINT.
 */
static void
test_bench_interrupted(void **state)
{
	char			 cmd[4096], err[160], csv[200];
	int			 status;

	(void)state;
	snprintf(err, sizeof err, "%s/bench.err", home);
	snprintf(cmd, sizeof cmd, "%s %s MC_SPAWN_SIGNAL_AT=/llama-bench-sim "
	    "LD_PRELOAD=%s/tests/libspawn-signal.so timeout -k 5 60 %s --home "
	    "%s bench --samples 1 --out %s -- %s -m %s -p 32 -n 8 -r 2 "
	    "2>%s >/dev/null", switches, tmpvar, BUILD, CTL, home, evidence,
	    BENCH_SIM, model, err);
	status = system_sigint_default(cmd);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGINT);
	snprintf(cmd, sizeof cmd, "grep -q 'interrupted by signal 2 in round "
	    "1' %s", err);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof cmd, "cat %s >&2", err);
		(void)system(cmd);
		fail_msg("bench did not say it was interrupted");
	}
	snprintf(csv, sizeof csv, "%s/results.csv", evidence);
	assert_int_equal(access(csv, F_OK), -1);
}

/*
 * llama.cpp rebuilt during the benchmark: the two sides ran different
 * builds, so there is no ratio; and a side that changed within itself is
 * caught as well.
 */
static void
test_bench_refuses_different_runs(void **state)
{
	char			 runs[200];
	const char		*one[] = { "bench", "--samples", "1", "--",
	    BENCH_SIM, "-m", model, "-r", "2", NULL };
	const char		*two[] = { "bench", "--samples", "2", "--",
	    BENCH_SIM, "-m", model, "-r", "2", NULL };
	struct child_result	*r;
	int			 code;

	(void)state;
	snprintf(runs, sizeof runs, "LLAMA_BENCH_SIM_RUNS=%s/runs", home);
	extra_env[2] = "LLAMA_BENCH_SIM_REBUILD_AFTER=1";
	r = run_ctl(&code, runs, one);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "stock and unlocked ran different "
	    "models, builds or settings"));
	assert_non_null(strstr(r->err, "build_commit=\"5e1f0c3a\""));
	assert_non_null(strstr(r->err, "build_commit=\"9d27b6e1\""));
	unlink(runs + strlen("LLAMA_BENCH_SIM_RUNS="));
	extra_env[2] = "LLAMA_BENCH_SIM_REBUILD_AFTER=2";
	r = run_ctl(&code, runs, two);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "the unlocked runs differ from one "
	    "another"));
	extra_env[2] = NULL;
}

/*
 * doctor says how to measure the speed-up until a bench has kept its
 * evidence, then what was measured and where the evidence is.
 */
static void
test_doctor_mentions_bench(void **state)
{
	const char		*doctor[] = { "doctor", NULL };
	/* With llama-bench's -o json given, as --help shows it. */
	const char		*quick[] = { "bench", "--samples", "1", "--",
	    BENCH_SIM, "-m", model, "-p", "32", "-n", "8", "-r", "2", "-o",
	    "json", NULL };
	const char		*kept[] = { "bench", "--samples", "1", "--out",
	    evidence, "--", BENCH_SIM, "-m", model, "-p", "32", "-n", "8",
	    "-r", "2", NULL };
	struct child_result	*r;
	char			 line[200], cmd[4096];
	int			 code;

	(void)state;
	r = run_ctl(&code, NULL, doctor);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->out, "not measured on this guest"));
	assert_non_null(strstr(r->out, "metalcapctl bench --out DIR --"));
	run_ctl(&code, NULL, quick);
	assert_int_equal(code, 0);
	r = run_ctl(&code, NULL, doctor);
	assert_non_null(strstr(r->out, "speed-up     pp32 "));
	assert_non_null(strstr(r->out, "no evidence kept"));
	run_ctl(&code, NULL, kept);
	assert_int_equal(code, 0);
	r = run_ctl(&code, NULL, doctor);
	snprintf(line, sizeof line, "evidence in %s\n", evidence);
	assert_non_null(strstr(r->out, line));
	/* brew services' agent alone; then the package's too: two daemons. */
	assert_non_null(strstr(r->out, "agent        none"));
	snprintf(cmd, sizeof cmd, "mkdir -p %s/Library/LaunchAgents && touch "
	    "%s/Library/LaunchAgents/homebrew.mxcl.metalcap.plist", home, home);
	assert_int_equal(system(cmd), 0);
	r = run_ctl(&code, NULL, doctor);
	assert_non_null(strstr(r->out, "agent        brew services'\n"));
	assert_null(strstr(r->out, "keep one"));
	snprintf(cmd, sizeof cmd, "touch %s/Library/LaunchAgents/"
	    "org.metalcap.metalcapd.plist", home);
	assert_int_equal(system(cmd), 0);
	r = run_ctl(&code, NULL, doctor);
	assert_non_null(strstr(r->out, "BOTH the package's and brew "
	    "services': two metalcapd for one user"));
	assert_non_null(strstr(r->out, "keep one: brew services stop"));
}

/*
 * doctor with no daemon answering says so, and what it can without one:
 * with no agent installed, how to start it; with the package's agent,
 * where macOS switches it off (Login Items).  The exit status is the one
 * for an unreachable daemon.
 */
static void
test_doctor_without_daemon(void **state)
{
	const char		*doctor[] = { "doctor", NULL };
	const char		*json[] = { "--json", "doctor", NULL };
	struct child_result	*r;
	char			 cmd[512];
	int			 code;

	(void)state;
	r = run_ctl(&code, NULL, doctor);
	assert_int_equal(code, 3);
	assert_non_null(strstr(r->out, "metalcapd    not answering at "));
	assert_non_null(strstr(r->out, "agent        none"));
	assert_non_null(strstr(r->out, "brew services start metalcap"));
	assert_non_null(strstr(r->out, "speed-up     not measured"));
	snprintf(cmd, sizeof cmd, "mkdir -p %s/Library/LaunchAgents && touch "
	    "%s/Library/LaunchAgents/org.metalcap.metalcapd.plist", home, home);
	assert_int_equal(system(cmd), 0);
	r = run_ctl(&code, NULL, doctor);
	assert_non_null(strstr(r->out, "agent        the package's\n"));
	assert_non_null(strstr(r->out, "Login Items, Allow in the Background"));
	r = run_ctl(&code, NULL, json);
	assert_int_equal(code, 3);
	assert_non_null(strstr(r->out, "\"daemon\": null"));
	assert_non_null(strstr(r->out, "org.metalcap.metalcapd.plist"));
}

/*
 * A run that fails (llama-bench cannot load its model): bench stops with
 * status 1, shows the end of that run's stderr as it is, whole lines,
 * names the round, the side and the status, and leaves no folder.
 */
static void
test_bench_run_fails(void **state)
{
	char			 none[160], want[512], cmd[4096];
	const char		*args[] = { "bench", "--samples", "1", "--",
	    BENCH_SIM, "-m", none, "-r", "2", NULL };
	struct child_result	*r;
	int			 code;

	(void)state;
	snprintf(none, sizeof none, "%s/none.gguf", home);
	r = run_ctl(&code, NULL, args);
	assert_int_equal(code, 1);
	snprintf(want, sizeof want, "--- the end of stock-1.stderr (not kept: "
	    "no --out)\nllama_model_load: error loading model: No such file "
	    "or directory\nmain: error: failed to load model '%s'\n---\n"
	    "metalcapctl: bench: round 1, stock: " BENCH_SIM " exited with "
	    "status 1\n", none);
	if (strstr(r->err, want) == NULL)
		fail_msg("stderr:\n%s\nlacks:\n%s", r->err, want);
	snprintf(cmd, sizeof cmd, "! ls -d %s/metalcap-* 2>/dev/null", home);
	assert_int_equal(system(cmd), 0);
}

/* Usage: another output format, and a folder that holds evidence. */
static void
test_bench_usage(void **state)
{
	const char		*md[] = { "bench", "--", BENCH_SIM, "-m", model,
	    "-o", "md", NULL };
	const char		*busy[] = { "bench", "--out", home, "--",
	    BENCH_SIM, "-m", model, NULL };
	char			 dir[160], cmd[4096];
	const char		*shared[] = { "bench", "--out", dir, "--",
	    BENCH_SIM, "-m", model, NULL };
	const char		*twice[] = { "bench", "--", BENCH_SIM, "-m",
	    model, "-o", "json", "-o", "md", NULL };
	const char		*joined[] = { "bench", "--", BENCH_SIM, "-m",
	    model, "--output=json", NULL };
	const char		*bare[] = { "bench", "--", BENCH_SIM, "-m",
	    model, "-o", NULL };
	const char		*glued[] = { "bench", "--", BENCH_SIM, "-m",
	    model, "-o=json", NULL };
	struct child_result	*r;
	int			 code;

	(void)state;
	r = run_ctl(&code, NULL, md);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "give -o json"));
	r = run_ctl(&code, NULL, bare);		/* -o with nothing after */
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "give -o json"));
	r = run_ctl(&code, NULL, glued);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "takes '-o json' as two words, not "
	    "-o=json"));
	r = run_ctl(&code, NULL, busy);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "not empty"));
	/* A folder others may write in, or a link, could have a link planted. */
	snprintf(cmd, sizeof cmd, "mkdir -m 0777 %s/open && mkdir %s/real && "
	    "ln -s %s/real %s/link", home, home, home, home);
	assert_int_equal(system(cmd), 0);
	snprintf(dir, sizeof dir, "%s/open", home);
	r = run_ctl(&code, NULL, shared);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "others may write in it"));
	snprintf(dir, sizeof dir, "%s/link", home);
	r = run_ctl(&code, NULL, shared);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "a symbolic link"));
	/* A file where the folder should be: said as it is, not as a link. */
	snprintf(dir, sizeof dir, "%s/file", home);
	write_file(dir, "w", "x");
	r = run_ctl(&code, NULL, shared);
	assert_int_not_equal(code, 0);
	snprintf(cmd, sizeof cmd, "--out %s: %s", dir, strerror(ENOTDIR));
	if (strstr(r->err, cmd) == NULL)
		fail_msg("no \"%s\" in: %s", cmd, r->err);
	r = run_ctl(&code, NULL, twice);
	assert_int_equal(code, 2);
	r = run_ctl(&code, NULL, joined);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "two words"));
}

/* A text for llama-perplexity: its bytes are the simulator's tokens. */
static void
verify_text(size_t bytes)
{
	FILE	*f;
	size_t	 i;

	assert_non_null(f = fopen(text, "w"));
	for (i = 0; i < bytes; i++)
		fputc("the quick brown fox jumps over a lazy dog. "[i % 43], f);
	fclose(f);
}

/* One figure of llama-perplexity's own output, by its label. */
static double
verify_figure(const char *file, const char *label)
{
	char	cmd[1024], out[64] = "";
	FILE	*p;

	snprintf(cmd, sizeof cmd, "grep -m1 '^%s' '%s' | sed 's/^[^:]*: "
	    "*//; s/ .*//'", label, file);
	assert_non_null(p = popen(cmd, "r"));
	if (fgets(out, sizeof out, p) == NULL)
		out[0] = '\0';
	pclose(p);
	assert_true(out[0] != '\0');
	return strtod(out, NULL);
}

/*
 * verify on a sound device: the stock run saves the base, the unlocked
 * one (proven injected) is compared with it, and the verdict's figures
 * are llama-perplexity's own, read back here from the kept output; the
 * evidence names the model and text by their SHA-256 (Python's
 * hashlib), its SHA256SUMS checks, the base logits are gone, and the
 * verdict is recorded for doctor.
 */
static void
test_verify_pass(void **state)
{
	const char		*args[] = { "--json", "verify", "--out",
	    evidence, "--", PPL_SIM, "-m", model, "-f", text, "-c", "128",
	    NULL };
	char			 cmd[4096], path[256], live[256];
	struct child_result	*r;
	json_t			*doc, *figures;
	int			 code, held;

	(void)state;
	verify_text(4000);
	/*
	 * A killed verify's base logits (its owner file unlocked) go with
	 * the next verify; a running one's (locked, here by this process)
	 * stay.  They used to stay for good: gigabytes for a real model.
	 */
	snprintf(cmd, sizeof cmd, "mkdir %s/metalcap-verify-base.killed %s/"
	    "metalcap-verify-base.running && head -c 100000 /dev/zero > %s/"
	    "metalcap-verify-base.killed/base.kld && touch %s/metalcap-verify-"
	    "base.killed/owner %s/metalcap-verify-base.running/owner", home,
	    home, home, home, home);
	assert_int_equal(system(cmd), 0);
	snprintf(live, sizeof live, "%s/metalcap-verify-base.running/owner",
	    home);
	assert_true((held = open(live, O_RDONLY)) != -1);
	assert_int_equal(flock(held, LOCK_EX), 0);
	r = run_ctl(&code, NULL, args);
	assert_int_equal(code, 0);
	snprintf(path, sizeof path, "%s/metalcap-verify-base.killed", home);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(live, F_OK), 0);
	close(held);
	snprintf(cmd, sizeof cmd, "rm -r %s/metalcap-verify-base.running",
	    home);
	assert_int_equal(system(cmd), 0);
	assert_non_null(doc = json_loads(r->out, 0, NULL));
	assert_string_equal(json_string_value(json_object_get(doc, "verdict")),
	    "pass");
	figures = json_object_get(doc, "figures");
	snprintf(path, sizeof path, "%s/unlocked-1.out", evidence);
	assert_true(fabs(json_real_value(json_object_get(json_object_get(
	    figures, "mean_kld"), "value")) - verify_figure(path,
	    "Mean    KLD")) < 1e-9);
	assert_true(fabs(json_real_value(json_object_get(json_object_get(
	    figures, "same_top"), "value")) - verify_figure(path,
	    "Same top p")) < 1e-9);
	assert_true(fabs(json_real_value(json_object_get(json_object_get(
	    figures, "ppl_stock"), "value")) - verify_figure(path,
	    "Mean PPL(base)")) < 1e-9);
	json_decref(doc);
	/*
	 * The unlocked run got the shim, which saw the raised family (ggml's
	 * own family line is INFO, which llama-perplexity hides by default:
	 * the shim's report is the proof).
	 */
	snprintf(cmd, sizeof cmd, "grep -q 'saw Apple families up to 1009' "
	    "%s/metadata.md && ! grep -q 'MTLGPUFamily' %s/unlocked-1.stderr",
	    evidence, evidence);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "cd %s && sha256sum --quiet -c SHA256SUMS "
	    "&& python3 -c 'import hashlib,sys; t=open(\"metadata.md\")."
	    "read(); sys.exit(not all(hashlib.sha256(open(f,\"rb\").read())."
	    "hexdigest() in t for f in sys.argv[1:]))' %s %s && grep -q "
	    "'^- Base logits .* SHA-256: `[0-9a-f]\\{64\\}`' metadata.md",
	    evidence, model, text);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "test -z \"$(find %s -name 'base.kld' "
	    "-o -name 'metalcap-verify-base*')\" && grep -q "
	    "'\"verdict\":\"pass\"' %s/state/verify-last.json", home, home);
	assert_int_equal(system(cmd), 0);
	/* metadata.md: each run's command as it ran, the figures against
	 * their limits, the verdict. */
	snprintf(cmd, sizeof cmd, "cd %s && grep -qx -- '- Unlocked run: %s -m "
	    "%s -f %s -c 128 --kl-divergence-base (the same) --kl-divergence' "
	    "metadata.md && grep -q -- '^- Stock run: %s -m %s -f %s -c 128 "
	    "--kl-divergence-base [^ ]*$' metadata.md && grep -q '^| mean KLD "
	    "| .* | <= 0.0005 |$' metadata.md && grep -q '^- Result: pass' "
	    "metadata.md", evidence, PPL_SIM, model, text, PPL_SIM, model,
	    text);
	assert_int_equal(system(cmd), 0);
}

/*
 * ggml's own matrix kernel computing 1 % off, zeros or NaN, which the
 * probe never compiles: the probe passes, verify fails and names the
 * figure (mean KLD first; with its limit raised, the top token).  Kills:
 * a verify that trusts the probe, or a limit compared the wrong way.
 */
static void
test_verify_catches_kernels(void **state)
{
	const char		*args[] = { "verify", "--", PPL_SIM, "-m",
	    model, "-f", text, "-c", "128", NULL };
	const char		*modes[] = { "wrong", "nan" };
	char			 line[96], out[160], path[256], want[256];
	const struct {
		const char	*args[16];
		const char	*failed, *label;
		double		 limit;
	} limits[] = {
		{ { "verify", "--out", out, "--", PPL_SIM, "-m", model, "-f",
		    text, "-c", "128", NULL }, "mean KLD", "Mean    KLD",
		    0.0005 },
		{ { "verify", "--out", out, "--limit", "mean-kld=0.01", "--",
		    PPL_SIM, "-m", model, "-f", text, "-c", "128", NULL },
		    "same top token", "Same top p", 99 },
		{ { "verify", "--out", out, "--limit", "mean-kld=0.01",
		    "--limit", "kld-99.9=0", "--", PPL_SIM, "-m", model, "-f",
		    text, "-c", "128", NULL }, "99.9% KLD", "99.9%   KLD", 0 },
	};
	struct child_result	*r;
	size_t			 i;
	int			 code;

	(void)state;
	verify_text(4000);
	set_device("MTLSIM_FAIL=kernel_mul_mm_f16_f32:off");
	/* Each verdict names the first figure past its limit, with the
	 * figure as llama-perplexity printed it and the limit in force. */
	for (i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		snprintf(out, sizeof out, "%s-%zu", evidence, i);
		r = run_ctl(&code, NULL, limits[i].args);
		assert_int_equal(code, 1);
		snprintf(path, sizeof path, "%s/unlocked-1.out", out);
		snprintf(want, sizeof want, "verify: fail: %s %g is past its "
		    "limit %g\n", limits[i].failed, verify_figure(path,
		    limits[i].label), limits[i].limit);
		if (strstr(r->out, want) == NULL)
			fail_msg("%s:\n%s", want, r->out);
	}
	for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		snprintf(line, sizeof line,
		    "MTLSIM_FAIL=kernel_mul_mm_f16_f32:%s", modes[i]);
		set_device(line);
		r = run_ctl(&code, NULL, args);
		assert_int_equal(code, 1);
		assert_non_null(strstr(r->out, "verify: fail: mean KLD"));
	}
}

/*
 * A text too short for one context: llama-perplexity exits 0 from both
 * runs (the base is a 12-byte stub, the comparison cannot read it) and
 * prints no statistics, so verify fails and says so.  Kills: a verify
 * that trusts the exit status.
 */
static void
test_verify_no_statistics(void **state)
{
	const char		*args[] = { "verify", "--", PPL_SIM, "-m",
	    model, "-f", text, "-c", "128", NULL };
	struct child_result	*r;
	int			 code;

	(void)state;
	verify_text(200);
	r = run_ctl(&code, NULL, args);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "no statistics to judge"));
	assert_null(strstr(r->out, "verify: pass"));
}

/* Until cmd succeeds, for 10 s at most (scaled); its last status. */
static int
verify_until(const char *cmd)
{
	double	start = now_s();
	int	rc;

	while ((rc = system(cmd)) != 0 && now_s() - start < 10 * time_scale())
		sleep_ms(100);
	return rc;
}

/*
 * A verify that fails holds the profile back on this guest as a failed
 * probe does: the daemon's job on it is reverted, naming verify, and the
 * fleet file and status --json carry the verdict.  A verify that passes
 * lifts the hold (verify probes for itself, so the hold cannot refuse
 * it), and enable brings the job back.  Kills: a gate that ignores
 * verify's verdicts, or a verify refused by its own hold.
 */
static void
test_verify_holds_profile_back(void **state)
{
	const char		*args[] = { "verify", "--", PPL_SIM, "-m",
	    model, "-f", text, "-c", "128", NULL };
	const char		*once[] = { "exec", "--", FAKE_LLAMA, "--once",
	    NULL };
	struct child_result	*r;
	char			 cmd[4096], buf[64];
	long			 pid;
	int			 code;

	(void)state;
	verify_text(4000);
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 10.0);
	set_device("MTLSIM_FAIL=kernel_mul_mm_f16_f32:off");
	run_ctl(&code, NULL, args);
	assert_int_equal(code, 1);
	wait_state("llama", "reverted", pid, 10.0);
	assert_field_has("llama", "reason", "metalcapctl verify found");
	assert_string_equal(status_string("llama", "verified", "verdict", buf,
	    sizeof buf), "fail");
	assert_string_equal(status_string("llama", "verified", "failed", buf,
	    sizeof buf), "mean KLD");
	snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; d=json.load("
	    "open(sys.argv[1])); j=[j for j in d[\"jobs\"] if j[\"name\"]=="
	    "\"llama\"][0]; sys.exit(j[\"verified\"][\"verdict\"] != \"fail\")"
	    "' %s/state/status.json", home);
	assert_int_equal(verify_until(cmd), 0);
	set_device("");
	/*
	 * The device passes the probe again; exec still holds the profile
	 * back, as the daemon answers it, and from the verify's record when
	 * there is no daemon to ask.
	 */
	r = run_ctl(&code, NULL, once);
	assert_int_not_equal(code, 0);
	if (strstr(r->err, "held back on this guest until a verify") == NULL)
		fail_msg("exec after a failed verify: %s", r->err);
	kill_daemon(SIGTERM);
	r = run_ctl(&code, NULL, once);
	assert_int_not_equal(code, 0);
	if (strstr(r->err, "profile apple9 is held back on this guest: its "
	    "newest metalcapctl verify failed") == NULL)
		fail_msg("exec with no daemon after a failed verify: %s",
		    r->err);
	start_daemon();
	run_ctl(&code, NULL, args);
	assert_int_equal(code, 0);
	r = run_ctl(&code, NULL, once);
	assert_int_equal(code, 0);
	assert_string_equal(status_string("llama", "verified", "verdict", buf,
	    sizeof buf), "pass");
	ctl(&code, "enable", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("llama", "unlocked", 0, 10.0);
}

/*
 * Profile auto takes the highest shipped profile that passes on this
 * guest: with apple9 held back by a failed verify, a job of profile auto
 * runs apple7 (its process given Apple7), status shows "auto → apple7"
 * and why apple9 was passed over, and exec --profile auto chooses the
 * same; on a device where every profile fails, the job runs stock and
 * says why.  Kills: auto that takes the first profile whatever its
 * verdict, or reverts the job instead of stepping down.
 */
static void
test_profile_auto(void **state)
{
	const char		*verify[] = { "verify", "--profile", "apple9",
	    "--", PPL_SIM, "-m", model, "-f", text, "-c", "128", NULL };
	const char		*exec[] = { "exec", "--profile", "auto", "--",
	    FAKE_LLAMA, "--once", NULL };
	const char		*table[] = { "status", NULL };
	const char		*probe_job[] = { "--json", "probe", "auto",
	    NULL };
	struct child_result	*r;
	char			 buf[512];
	double			 start;
	long			 pid;
	int			 code;

	(void)state;
	verify_text(4000);
	set_device("MTLSIM_FAIL=kernel_mul_mm_f16_f32:off");
	run_ctl(&code, NULL, verify);
	assert_int_equal(code, 1);
	set_device("");
	put_job("auto", "<key>Profile</key><string>auto</string>");
	pid = wait_state("auto", "unlocked", 0, 20.0);
	assert_field_has("auto", "profile", "apple7");
	assert_true(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1007"));
	assert_non_null(strstr(status_string("auto", "auto", "passed_over",
	    buf, sizeof buf), "apple9 failed the probe: metalcapctl verify found"));
	r = run_ctl(&code, NULL, table);
	assert_non_null(strstr(r->out, "auto \xe2\x86\x92 apple7"));
	assert_non_null(strstr(r->out, "    auto: apple9 failed the probe"));
	/* probe JOB probes the profile auto chose, not "auto". */
	r = run_ctl(&code, NULL, probe_job);
	assert_int_equal(code, 0);
	if (strstr(r->out, "\"profile\": \"apple7\"") == NULL)
		fail_msg("probe auto: %s %s", r->out, r->err);
	r = run_ctl(&code, NULL, exec);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->err, "profile auto: apple7 (passed over: "
	    "profile apple9"));
	/* apple9 verified again, and passing: the job climbs back. */
	run_ctl(&code, NULL, verify);
	assert_int_equal(code, 0);
	for (start = now_s(); strcmp(status_string("auto", NULL, "profile",
	    buf, sizeof buf), "apple9") != 0; sleep_ms(50))
		assert_true(now_s() - start < 10 * time_scale());
	pid = wait_state("auto", "unlocked", pid, 10.0);
	assert_true(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1009"));
	/* Nothing passes (a daemon started on a failing device): stock. */
	set_device("MTLSIM_FAIL=simdgroup_matrix:wrong");
	kill_daemon(SIGTERM);
	start_daemon();
	put_job("none", "<key>Profile</key><string>auto</string>");
	wait_state("none", "stock", 0, 20.0);
	assert_field_has("none", "reason", "profile auto: no shipped profile "
	    "may run on this guest");
	/*
	 * The device heals (a guest's brief failure at start): 30 s on, the
	 * shipped profiles are probed again and the job climbs to apple9.
	 * It used to stay stock for the session, until enable.  A reload
	 * every 5 s meanwhile (each judges the job again) must not put the
	 * probe off.
	 */
	set_device("");
	for (start = now_s(); strcmp(status_string("none", NULL, "state",
	    buf, sizeof buf), "unlocked") != 0; sleep_ms(5000)) {
		assert_true(now_s() - start < 60 * time_scale());
		ctl(&code, "reload", NULL, NULL, NULL);
	}
	pid = wait_state("none", "unlocked", 0, 5.0);
	assert_field_has("none", "profile", "apple9");
	assert_true(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1009"));
}

/* What verify refuses before running anything. */
static void
test_verify_usage(void **state)
{
	const char	*owned[] = { "verify", "--", PPL_SIM, "-m", model,
	    "--kl-divergence", NULL };
	const char	*name[] = { "verify", "--limit", "speed=2", "--",
	    PPL_SIM, NULL };
	const char	*range[] = { "verify", "--limit", "same-top=101", "--",
	    PPL_SIM, NULL };
	static const struct { const char *limit, *why; } bad[] = {
		{ "mean-kld=10.5", "expected a number from 0 to 10" },
		{ "kld-99.9=100.5", "expected a number from 0 to 100" },
		{ "same-top=-0.5", "expected a number from 0 to 100" },
		{ "same-top=", "expected a number from 0 to 100" },
		{ "same-top=5x", "expected a number from 0 to 100" },
		{ "mean-kld", "expected mean-kld=X, kld-99.9=X or same-top=PCT" },
		{ "mean=1", "expected mean-kld=X, kld-99.9=X or same-top=PCT" },
	};
	const char	*limit[] = { "verify", "--limit", NULL, "--", PPL_SIM,
	    NULL };
	const char	*ends[] = { "verify", "--limit", "mean-kld=0", "--limit",
	    "mean-kld=10", "--limit", "kld-99.9=0", "--limit", "kld-99.9=100",
	    "--limit", "same-top=0", "--limit", "same-top=100", "--",
	    "/nonexistent/prog", NULL };
	struct child_result	*r;
	char		 want[160];
	size_t		 i;
	int		 code;

	(void)state;
	r = run_ctl(&code, NULL, owned);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "verify gives --kl-divergence itself"));
	r = run_ctl(&code, NULL, name);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "--limit speed=2"));
	r = run_ctl(&code, NULL, range);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "from 0 to 100"));
	/* Each limit one past its range, or no number, named with it. */
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		limit[2] = bad[i].limit;
		r = run_ctl(&code, NULL, limit);
		snprintf(want, sizeof want, "metalcapctl: verify: --limit %s: "
		    "%s\n", bad[i].limit, bad[i].why);
		assert_int_equal(code, 2);
		assert_string_equal(r->err, want);
	}
	/* Both ends of each range are taken: refused only for the
	 * program, which is no program. */
	r = run_ctl(&code, NULL, ends);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "not an executable file"));
	assert_null(strstr(r->err, "--limit"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exec_unlocked_alone,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_exec_terminal_interrupt,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_exec_signal_during_spawn,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_exec_status,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_exec_sigpipe_as_given,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_bench_run_fails,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_exec_as_a_child,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_exec_tmpdir_unwritable,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_exec_tmpdir_through_link,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_exec_refuses_failed_probe,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_exec_managed_force_stock,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_exec_user_managed,
		    setup_daemon, teardown),
		cmocka_unit_test_setup_teardown(test_exec_report_planted,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_exec_asks_daemon,
		    setup_daemon, teardown),
		cmocka_unit_test_setup_teardown(test_bench_evidence,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_bench_evidence_quoting,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_bench_json_leaves_nothing,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_evidence_unreadable_named,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_bench_refuses_without_shim,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(
		    test_bench_refuses_different_runs, setup_alone,
		    teardown_alone),
		cmocka_unit_test_setup_teardown(test_doctor_without_daemon,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_doctor_mentions_bench,
		    setup_daemon, teardown),
		cmocka_unit_test_setup_teardown(test_bench_interrupted,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_bench_planted_file,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_verify_pass, setup_alone,
		    teardown_alone),
		cmocka_unit_test_setup_teardown(test_verify_catches_kernels,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_verify_no_statistics,
		    setup_alone, teardown_alone),
		cmocka_unit_test_setup_teardown(test_verify_usage, setup_alone,
		    teardown_alone),
		cmocka_unit_test_setup_teardown(test_verify_holds_profile_back,
		    setup_daemon, teardown),
		cmocka_unit_test_setup_teardown(test_profile_auto, setup_daemon,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bench_usage,
		    setup_alone, teardown_alone),
	};

	/* MC_TEST_ONLY=pattern runs the matching tests (make mutate). */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("bench", tests, NULL, NULL);
}
