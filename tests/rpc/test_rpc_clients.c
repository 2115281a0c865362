/* SPDX-License-Identifier: MIT */
/*
 * Conformance with msgpack-RPC clients no one here wrote: pynvim's
 * socket_session, Neovim's rpcrequest/rpcnotify (headless), and
 * python3-msgpack for the raw shapes.  Each drives the real metalcapd
 * (launchd and Metal simulated) through every method, reads an error and
 * receives events; the scripts beside this file say what they check.
 * Then metalcapctl's command-line conventions: options on either side of
 * the command, and add/remove of job files.
 */
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"
#include "harness.h"

#define SOURCE		MC_TEST_SOURCE
#define PYTHON		"/usr/bin/python3"

static char	sockpath[128];

static int
rpc_setup(void **state)
{
	if (setup(state) == -1)
		return -1;
	snprintf(sockpath, sizeof sockpath, "%s/metalcapd.sock", home);
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	return 0;
}

/* Run a client; it prints ok/FAIL lines and exits 0 when all hold. */
static void
run_client(const char *const *argv, const char *const *extra)
{
	struct child_result	 r;
	char			*env[CHILD_ENV_MAX];

	child_env(env, extra);
	assert_int_equal(child_run(argv, env, &r), 0);
	/* The failed checks first: cmocka cuts a long message. */
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
		fail_msg("%s failed (status %d): %s\n%s\n%s", argv[0], r.status,
		    strstr(r.out, "FAIL ") ? strstr(r.out, "FAIL ") : "", r.err,
		    r.out);
	assert_null(strstr(r.out, "FAIL"));
	assert_non_null(strstr(r.out, "ok   "));
}

static void
test_python_msgpack(void **state)
{
	const char	*argv[] = { PYTHON, SOURCE "/tests/rpc/msgpack_client.py",
	    sockpath, "llama", NULL };

	(void)state;
	run_client(argv, NULL);
	/* Its bytes that were not msgpack closed it at once, for that
	 * reason, not later for a message left unfinished. */
	assert_true(daemon_log_has("client closed: not msgpack"));
	assert_false(daemon_log_has("client closed: stalled"));
}

static void
test_pynvim(void **state)
{
	const char	*argv[] = { PYTHON, SOURCE "/tests/rpc/pynvim_client.py",
	    sockpath, "llama", NULL };

	(void)state;
	run_client(argv, NULL);
}

static void
test_neovim(void **state)
{
	char		 sock[192], xdg[4][160];
	const char	*argv[] = { "/usr/bin/nvim", "--headless", "-u", "NONE",
	    "-i", "NONE", "-n", "-c", "luafile " SOURCE
	    "/tests/rpc/nvim_client.lua", NULL };
	const char	*extra[] = { sock, "MC_JOB=llama", xdg[0], xdg[1], xdg[2],
	    xdg[3], NULL };

	(void)state;
	snprintf(sock, sizeof sock, "MC_SOCK=%s", sockpath);
	/* Neovim's own files stay in the test's home. */
	snprintf(xdg[0], sizeof xdg[0], "HOME=%s", home);
	snprintf(xdg[1], sizeof xdg[1], "XDG_STATE_HOME=%s/nvim", home);
	snprintf(xdg[2], sizeof xdg[2], "XDG_DATA_HOME=%s/nvim", home);
	snprintf(xdg[3], sizeof xdg[3], "XDG_CONFIG_HOME=%s/nvim", home);
	run_client(argv, extra);
}

/* Options before or after the command mean the same. */
static void
test_cli_option_order(void **state)
{
	struct child_result	*r;
	char			 after[CHILD_OUTPUT_MAX];
	int			 code;

	(void)state;
	r = ctl(&code, "status", "--json", NULL, NULL);
	assert_int_equal(code, 0);
	snprintf(after, sizeof after, "%s", r->out);
	assert_non_null(strstr(after, "\"name\": \"llama\""));
	r = ctl(&code, "--json", "status", NULL, NULL);
	assert_int_equal(code, 0);
	assert_string_equal(r->out, after);
	r = ctl(&code, "status", "llama", "--json", NULL);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->out, "\"next_state\""));
	/* An option the command does not take is named. */
	r = ctl(&code, "status", "--force", NULL, NULL);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "status does not take --force"));
	r = ctl(&code, "frobnicate", NULL, NULL, NULL);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "unknown command frobnicate"));
	/* disable prints the job as it now stands. */
	r = ctl(&code, "disable", "llama", "--json", NULL);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->out, "\"unlocked\": false"));
	assert_non_null(strstr(r->out, "\"desired\": \"stock\""));
}

static bool
file_exists(const char *path)
{
	struct stat	sb;

	return stat(path, &sb) == 0;
}

/* add writes a job file the daemon runs; remove takes it away. */
static void
test_cli_add_remove(void **state)
{
	const char	*add[] = { "add", "server", "--profile", "apple7",
	    "--env", NULL, "--", FAKE_LLAMA, "--exit-after", "600000", "0",
	    NULL };
	const char	*again[] = { "add", "server", "--", FAKE_LLAMA, NULL };
	const char	*force[] = { "add", "--force", "server", "--stock", "--",
	    FAKE_LLAMA, NULL };
	const char	*bad[] = { "add", "bad", "--", "relative/prog", NULL };
	const char	*both[] = { "add", "x", "--stock", "--profile", "apple9",
	    "--", FAKE_LLAMA, NULL };
	const char	*badenv[] = { "add", "x", "--env", "NOVALUE", "--",
	    FAKE_LLAMA, NULL };
	struct child_result *r;
	char		 path[256], env[256], cmd[512];
	json_t		*j;
	int		 code;

	(void)state;
	snprintf(env, sizeof env, "%s", switches);
	add[5] = env;
	snprintf(path, sizeof path, "%s/jobs.d/server.plist", home);
	r = ctlv(&code, add);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->out, "added server"));
	/* An independent reader: Python's plistlib. */
	snprintf(cmd, sizeof cmd, PYTHON " -c 'import plistlib,sys; "
	    "d = plistlib.load(open(sys.argv[1], \"rb\")); "
	    "assert d[\"ProgramArguments\"][1:] == [\"--exit-after\", "
	    "\"600000\", \"0\"], d; "
	    "assert d[\"Profile\"] == \"apple7\", d; "
	    "assert d[\"EnvironmentVariables\"][\"MTLSIM_SWITCHES\"], d' %s",
	    path);
	assert_int_equal(system(cmd), 0);
	wait_state("server", "unlocked", 0, 5.0);
	j = job_status("server");
	assert_string_equal(str_of(j, "profile"), "apple7");
	json_decref(j);
	/* No overwrite without --force; with it, the file is replaced. */
	r = ctlv(&code, again);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "exists; --force replaces it"));
	r = ctlv(&code, force);
	assert_int_equal(code, 0);
	wait_state("server", "stock", 0, 5.0);
	/* The daemon's own rules, with the file and key named. */
	r = ctlv(&code, bad);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "bad.plist:ProgramArguments[0]: "
	    "\"relative/prog\" is not an absolute path"));
	snprintf(path, sizeof path, "%s/jobs.d/bad.plist", home);
	assert_false(file_exists(path));
	r = ctlv(&code, both);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "--profile and --stock exclude"));
	r = ctlv(&code, badenv);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "--env NOVALUE: expected KEY=VALUE"));
	r = ctl(&code, "add", "../x", "--", FAKE_LLAMA);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "job name \"../x\""));
	/* remove: the file goes, and the daemon forgets the job. */
	r = ctl(&code, "remove", "server", NULL, NULL);
	assert_int_equal(code, 0);
	snprintf(path, sizeof path, "%s/jobs.d/server.plist", home);
	assert_false(file_exists(path));
	for (code = 0; code < 250 && (j = job_status("server")) != NULL;
	    code++) {
		json_decref(j);
		sleep_ms(20);
	}
	assert_null(job_status("server"));
	r = ctl(&code, "remove", "server", NULL, NULL);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "no such job file"));
}

/*
 * Each command's arguments and options as metalcapctl(1)'s synopsis
 * gives them: one argument too few or too many is refused with the
 * command's usage, and so is every option it does not take, before
 * anything is done.
 */
static const struct {
	const char	*name;
	const char	*args[4];	/* the fewest it takes, in order */
	bool		 more;		/* takes any number after them */
	bool		 optional;	/* takes one more, optional */
	const char	*opts;		/* the options it takes */
} cli_synopsis[] = {
	{ "status", { NULL }, false, true, "" },
	{ "enable", { "llama", NULL }, false, false, "--profile" },
	{ "disable", { "llama", NULL }, false, false, "" },
	{ "profile", { "llama", "apple9", NULL }, false, false, "" },
	{ "profiles", { NULL }, false, false, "" },
	{ "start", { "llama", NULL }, false, false, "" },
	{ "stop", { "llama", NULL }, false, false, "" },
	{ "restart", { "llama", NULL }, false, false, "" },
	{ "reload", { NULL }, false, false, "" },
	{ "watch", { NULL }, false, false, "" },
	{ "logs", { "llama", NULL }, false, false, "-f" },
	{ "probe", { NULL }, false, true, "--profile" },
	{ "doctor", { NULL }, false, false, "" },
	{ "report", { NULL }, false, true, "--user-home" },
	{ "add", { "x", "/bin/true", NULL }, true, false,
	    "--profile --stock --env --force" },
	{ "remove", { "x", NULL }, false, false, "" },
	{ "check", { "/bin/true", NULL }, false, false,
	    "--inherit --machine --sip --arch" },
	{ "exec", { "/bin/true", NULL }, true, false, "--profile --report" },
	{ "bench", { "/bin/true", NULL }, true, false,
	    "--profile --samples --out" },
	{ "verify", { "/bin/true", NULL }, true, false,
	    "--profile --out --limit" },
};
static const char *const cli_options[][2] = {
	{ "--profile", "apple9" }, { "-f", NULL }, { "--stock", NULL },
	{ "--env", "K=V" }, { "--force", NULL }, { "--inherit", NULL },
	{ "--report", "/nonexistent/r" }, { "--samples", "1" },
	{ "--out", "/nonexistent/o" }, { "--user-home", "/nonexistent" },
	{ "--machine", "intel" }, { "--sip", "on" },
	{ "--limit", "same-top=1" }, { "--arch", "x86_64" },
};

/*
 * metalcapctl CMD [OPT [VALUE]] -- ARGS (the first n) and nextra more,
 * refused with its usage.
 */
static void
cli_refused(size_t k, size_t n, size_t nextra, const char *const *opt)
{
	const char		*argv[16];
	char			 want[64];
	struct child_result	*r;
	size_t			 a = 0, i;
	int			 code;

	argv[a++] = cli_synopsis[k].name;
	if (opt != NULL) {
		argv[a++] = opt[0];
		if (opt[1] != NULL)
			argv[a++] = opt[1];
	}
	argv[a++] = "--";
	for (i = 0; i < n; i++)
		argv[a++] = cli_synopsis[k].args[i];
	for (i = 0; i < nextra; i++)
		argv[a++] = "extra";
	argv[a] = NULL;
	r = ctlv(&code, argv);
	snprintf(want, sizeof want, "usage: metalcapctl %s",
	    cli_synopsis[k].name);
	if (code != 2 || strstr(r->err, want) == NULL)
		fail_msg("metalcapctl %s%s%s with %zu arguments: exit %d, %s",
		    argv[0], opt ? " " : "", opt ? opt[0] : "", n + nextra,
		    code, r->err);
	/* The option by its long name, as the synopsis writes it. */
	snprintf(want, sizeof want, "metalcapctl: %s does not take %s\n",
	    argv[0], opt == NULL ? "" : strcmp(opt[0], "-f") == 0 ?
	    "--follow" : opt[0]);
	if (opt != NULL && strstr(r->err, want) == NULL)
		fail_msg("%s %s: %s", argv[0], opt[0], r->err);
}

/*
 * Every command that answers with --json, as a script drives it: it
 * ends (no signal), and what it prints is one JSON document.
 */
static void
test_cli_json(void **state)
{
	static const char *const runs[][6] = {
		{ "status" }, { "status", "llama" }, { "profiles" },
		{ "disable", "llama" }, { "enable", "llama" },
		{ "profile", "llama", "apple7" }, { "stop", "llama" },
		{ "start", "llama" }, { "restart", "llama" }, { "reload" },
		{ "probe", "--profile", "apple7" }, { "probe", "llama" },
		{ "doctor" }, { "report" },
		{ "add", "jx", "--", FAKE_LLAMA }, { "remove", "jx" },
		{ "check", FAKE_LLAMA },
	};
	const char		*argv[8];
	struct child_result	*r;
	json_t			*doc;
	size_t			 k, a;
	int			 code;

	(void)state;
	for (k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		argv[0] = "--json";
		for (a = 0; a < 6 && runs[k][a] != NULL; a++)
			argv[a + 1] = runs[k][a];
		argv[a + 1] = NULL;
		r = ctlv(&code, argv);
		if (code < 0 || code > 4)
			fail_msg("--json %s: exit %d: %s", runs[k][0], code,
			    r->err);
		if (code == 0 && r->err[0] != '\0')
			fail_msg("--json %s: all went well, yet: %s", runs[k][0],
			    r->err);
		if ((doc = json_loads(r->out, JSON_DECODE_ANY, NULL)) == NULL)
			fail_msg("--json %s: exit %d, not one JSON document: "
			    "%s (stderr: %s)", runs[k][0], code, r->out,
			    r->err);
		json_decref(doc);
	}
}

static void
test_cli_synopsis(void **state)
{
	size_t	k, n, o;

	(void)state;
	for (k = 0; k < sizeof cli_synopsis / sizeof cli_synopsis[0]; k++) {
		for (n = 0; cli_synopsis[k].args[n] != NULL; n++)
			;
		if (n > 0)
			cli_refused(k, n - 1, 0, NULL);
		if (!cli_synopsis[k].more)
			cli_refused(k, n, cli_synopsis[k].optional ? 2 : 1,
			    NULL);
		for (o = 0; o < sizeof cli_options / sizeof cli_options[0];
		    o++)
			if (strstr(cli_synopsis[k].opts, cli_options[o][0]) ==
			    NULL)
				cli_refused(k, n, 0, cli_options[o]);
	}
}

/*
 * Option values at their edges: --timeout takes 0 (wait for ever) to
 * 86400 seconds, --samples 1 to 100 rounds; one past either end, a
 * number with a tail, or nothing, is a usage error naming the value.
 * --socket takes a path that fits a unix socket's sun_path and no more.
 * No command at all is the usage, not an unknown command.
 */
static void
test_cli_values(void **state)
{
	static const char *const bad_timeout[] = { "", "5x", "-1", "86401" };
	static const char *const bad_samples[] = { "", "2x", "0", "101" };
	static const char *const none[] = { NULL };
	struct child_result	*r;
	char			 want[128], sock[sizeof ((struct sockaddr_un *)
				    NULL)->sun_path + 1];
	size_t			 i;
	int			 code;

	(void)state;
	for (i = 0; i < sizeof bad_timeout / sizeof bad_timeout[0]; i++) {
		r = ctl(&code, "--timeout", bad_timeout[i], "status", NULL);
		snprintf(want, sizeof want, "metalcapctl: --timeout %s: "
		    "expected seconds, 0 to 86400\n", bad_timeout[i]);
		assert_int_equal(code, 2);
		assert_string_equal(r->err, want);
	}
	ctl(&code, "--timeout", "0", "status", NULL);
	assert_int_equal(code, 0);
	ctl(&code, "--timeout", "86400", "status", NULL);
	assert_int_equal(code, 0);
	for (i = 0; i < sizeof bad_samples / sizeof bad_samples[0]; i++) {
		r = ctl(&code, "status", "--samples", bad_samples[i], NULL);
		snprintf(want, sizeof want, "metalcapctl: --samples %s: "
		    "expected rounds, 1 to 100\n", bad_samples[i]);
		assert_int_equal(code, 2);
		assert_string_equal(r->err, want);
	}
	/* 1 and 100 are rounds: refused only as an option status lacks. */
	for (i = 0; i < 2; i++) {
		r = ctl(&code, "status", "--samples", i ? "100" : "1", NULL);
		assert_int_equal(code, 2);
		assert_non_null(strstr(r->err, "status does not take "
		    "--samples"));
	}
	/* sun_path's room less its NUL reaches for a daemon; one more is
	 * refused before. */
	memset(sock, 's', sizeof sock - 1);
	sock[0] = '/';
	sock[sizeof sock - 1] = '\0';
	r = ctl(&code, "--socket", sock, "status", NULL);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "metalcapctl: --socket /s"));
	sock[sizeof sock - 2] = '\0';
	r = ctl(&code, "--socket", sock, "status", NULL);
	assert_int_equal(code, 3);
	assert_non_null(strstr(r->err, "cannot reach metalcapd"));
	r = ctlv(&code, none);
	assert_int_equal(code, 2);
	assert_non_null(strstr(r->err, "usage: metalcapctl [--socket PATH | "
	    "--home DIR]"));
	assert_null(strstr(r->err, "unknown command"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_python_msgpack, rpc_setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pynvim, rpc_setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_neovim, rpc_setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cli_json, rpc_setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cli_synopsis, rpc_setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cli_values, rpc_setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cli_option_order,
		    rpc_setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_add_remove, rpc_setup,
		    teardown),
	};

	return cmocka_run_group_tests_name("rpc clients", tests, NULL, NULL);
}
