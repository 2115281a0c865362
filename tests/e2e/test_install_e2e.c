/* SPDX-License-Identifier: MIT */
/*
 * make install and make uninstall (issue 19): into a DESTDIR with a
 * PREFIX that is not /usr/local, the tree is the package's layout
 * (pkg/manifest) mapped onto PREFIX, as Python reads the manifest; the
 * installed metalcapd, started from there against the launchctl
 * SIMULATOR, runs a job unlocked with the installed shim, probe and
 * template alone; make uninstall leaves nothing behind.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <setjmp.h>
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

#define PREFIX	"/opt/metalcap"

static char	stage[160], installed[300], libvar[300];

/*
 * make install or uninstall into the stage, with the build under test;
 * with the GNU spellings (prefix, bindir), and the agent told where
 * metalcapd stays, as a Homebrew keg tells it.
 */
static void
make_install(const char *what)
{
	char	cmd[4096];

	snprintf(cmd, sizeof cmd, "make -s -C %s -o all %s BUILD=%s "
	    "DESTDIR=%s prefix=" PREFIX " bindir=" PREFIX "/bin "
	    "AGENT_LIBEXECDIR=/opt/keep/libexec >%s/make-%s.log 2>&1",
	    MC_TEST_SOURCE,
	    what, BUILD, stage, home, what);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof cmd, "cat %s/make-%s.log >&2", home, what);
		system(cmd);
		fail_msg("make %s failed", what);
	}
}

/* The staged tree holds exactly the manifest's entries under PREFIX. */
static void
check_layout(void)
{
	char	script[3000], path[256], cmd[4096];

	snprintf(script, sizeof script,
	    "import os, sys\n"
	    "stage, src = sys.argv[1], sys.argv[2]\n"
	    "maps = [('usr/local/bin', '/bin'), ('usr/local/libexec', "
	    "'/libexec'),\n"
	    "        ('usr/local/share/man', '/share/man'), ('usr/local/share',"
	    " '/share')]\n"
	    "skip = ('/libexec/metalcap/uninstall',)\n"
	    "want = set()\n"
	    "for line in open(src + '/pkg/manifest'):\n"
	    "    f = line.split()\n"
	    "    if not f or f[0].startswith('#') or f[0] in ('own', 'dir',\n"
	    "            'shared', 'copy'):\n"
	    "        continue\n"
	    "    for a, b in maps:\n"
	    "        if f[3].startswith(a + '/'):\n"
	    "            p = b + f[3][len(a):]\n"
	    "            break\n"
	    "    else:\n"
	    "        continue\n"
	    "    p = p.replace('.dylib', '.so')\n"
	    "    if p not in skip:\n"
	    "        want.add('" PREFIX "' + p)\n"
	    "got = set()\n"
	    "for d, dirs, files in os.walk(stage):\n"
	    "    for n in files:\n"
	    "        got.add(os.path.join(d, n)[len(stage):])\n"

	    "assert got == want, (sorted(got - want), sorted(want - got))\n"
	    "ctl = stage + '" PREFIX "/bin/metalcapctl'\n"
	    "assert os.readlink(ctl) == '../libexec/metalcap/metalcapctl'\n"
	    "agent = open(stage + '" PREFIX "/share/metalcap/"
	    "org.metalcap.metalcapd.plist').read()\n"
	    "assert '/opt/keep/libexec/metalcap/metalcapd' in agent, agent\n");
	snprintf(path, sizeof path, "%s/layout.py", home);
	write_file(path, "w", script);
	snprintf(cmd, sizeof cmd, "python3 %s %s %s", path, stage,
	    MC_TEST_SOURCE);
	assert_int_equal(system(cmd), 0);
}

static void
check_other_shim(void)
{
	char		 report[200];
	const char	*args[] = { "exec", "--report", report, "--",
	    FAKE_LLAMA, "--once", NULL };
	const char	*extra[] = { switches, NULL };
	const char	*installed_ctl = ctl_program;
	json_t		*doc;
	int		 code;

	snprintf(report, sizeof report, "%s/exec.json", home);
	ctl_program = NULL;
	ctlv_env(&code, extra, args);
	ctl_program = installed_ctl;
	assert_int_equal(code, 0);
	doc = json_load_file(report, 0, NULL);
	assert_non_null(doc);
	assert_non_null(strstr(json_string_value(json_object_get(
	    json_object_get(doc, "probe"), "by")), "metalcapd probes another "
	    "shim"));
	json_decref(doc);
}

static int
setup_install(void **state)
{
	(void)state;
	if (setup_home("/tmp/mc-install.XXXXXX") == -1)
		return -1;
	snprintf(stage, sizeof stage, "%s/stage", home);
	return 0;
}

static void
test_install_run_uninstall(void **state)
{
	char	cmd[4096];
	long	pid;

	(void)state;
	make_install("install");
	check_layout();
	/* The installed programs, and nothing of the build but the device. */
	snprintf(installed, sizeof installed, "%s" PREFIX "/libexec/metalcap",
	    stage);
	{
		static char	d[400], c[400];

		snprintf(d, sizeof d, "%s/metalcapd", installed);
		snprintf(c, sizeof c, "%s/metalcapctl", installed);
		daemon_program = d;
		ctl_program = c;
	}
	/* The simulated Metal device stands where Metal.framework would. */
	snprintf(libvar, sizeof libvar, "LD_LIBRARY_PATH=%s/tests", BUILD);
	daemon_env = libvar;
	start_daemon();
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 5.0);
	snprintf(cmd, sizeof cmd, "LD_PRELOAD=%s/libmetalcap.so", installed);
	assert_true(environ_has(pid, cmd));
	assert_field_has("llama", "profile", "apple9");
	/*
	 * The build's metalcapctl beside the installed daemon injects
	 * another library than the daemon probed: it probes for itself.
	 */
	check_other_shim();
	/*
	 * Everything make install made goes; the staging root stays, empty.
	 * A link someone already removed does not stop the rest.
	 */
	snprintf(cmd, sizeof cmd, "rm %s" PREFIX "/share/zsh/site-functions/"
	    "_metalcapctl", stage);
	assert_int_equal(system(cmd), 0);
	make_install("uninstall");
	snprintf(cmd, sizeof cmd, "test -z \"$(find %s -mindepth 1)\"", stage);
	assert_int_equal(system(cmd), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_install_run_uninstall,
		    setup_install, teardown),
	};

	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("install", tests, NULL, NULL);
}
