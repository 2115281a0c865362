/* SPDX-License-Identifier: MIT */
/*
 * End to end, for administrators: managed settings (ForceStock, allowed
 * profiles, a default, an unusable file) over the real metalcapd and
 * metalcapctl, and the fleet status file and Jamf extension attribute
 * read back.  launchd and the device are SIMULATED, as in
 * test_daemon_e2e.c.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "child.h"
#include "harness.h"
#include "protocol.h"

static void
test_managed_settings(void **state)
{
	char			 path[256];
	struct child_result	*r;
	long			 pid;
	int			 code;

	(void)state;
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 2.0);
	/* Written by an MDM at any time: seen without a reload, both ways. */
	write_managed(NULL, "<key>ForceStock</key><true/>");
	pid = wait_state("llama", "stock", pid, 3.0);
	snprintf(path, sizeof path, "%s/managed/org.metalcap.plist", home);
	assert_int_equal(unlink(path), 0);
	pid = wait_state("llama", "unlocked", pid, 3.0);
	/* AllowedProfiles: another profile is refused, naming the key. */
	write_managed(NULL, "<key>AllowedProfiles</key><array><string>apple9"
	    "</string></array>");
	ctl(&code, "reload", NULL, NULL, NULL);
	r = ctl(&code, "profile", "llama", "apple7", NULL);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "EMANAGED"));
	assert_non_null(strstr(r->err, "AllowedProfiles"));
	r = ctl(&code, "enable", "llama", "--profile", "apple7");
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "AllowedProfiles"));
	/*
	 * ForceStock, pushed to this user's managed preferences over the
	 * computer's: the job goes stock, and a local enable is refused.
	 */
	write_managed(getpwuid(getuid())->pw_name,
	    "<key>ForceStock</key><true/>");
	ctl(&code, "reload", NULL, NULL, NULL);
	pid = wait_state("llama", "stock", pid, 3.0);
	assert_false(environ_has(pid, INJECTED));
	assert_field_has("llama", "reason", "managed setting ForceStock");
	r = ctl(&code, "enable", "llama", NULL, NULL);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "EMANAGED"));
	assert_non_null(strstr(r->err, "ForceStock"));
}

/*
 * The managed preferences folder a link (to a folder elsewhere), then
 * replaced by a real folder that says ForceStock: the change is seen with
 * no reload.  Only the link's target was watched, and the job kept
 * running with the shim until reload.  Then the reverse, and ForceStock
 * written through the new link.
 */
static void
test_managed_link_replaced(void **state)
{
	char		 cmd[1024];
	long		 pid;

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf %s/managed && mkdir -p %s/elsewhere "
	    "&& ln -s %s/elsewhere %s/managed", home, home, home, home);
	assert_int_equal(system(cmd), 0);
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 3.0);
	/* Another folder in its place, as an MDM client may put one. */
	snprintf(cmd, sizeof cmd, "rm %s/managed && mkdir %s/managed", home,
	    home);
	assert_int_equal(system(cmd), 0);
	write_managed(NULL, "<key>ForceStock</key><true/>");
	pid = wait_state("llama", "stock", pid, 3.0);
	assert_false(environ_has(pid, INJECTED));
	/* And the reverse: the real folder becomes a link again. */
	snprintf(cmd, sizeof cmd, "rm -r %s/managed && ln -s %s/elsewhere "
	    "%s/managed", home, home, home);
	assert_int_equal(system(cmd), 0);
	pid = wait_state("llama", "unlocked", pid, 3.0);
	write_managed(NULL, "<key>ForceStock</key><true/>");
	wait_state("llama", "stock", pid, 3.0);
}

/*
 * Settings pushed after metalcapd started take effect with no reload,
 * wherever their folder is: this user's managed folder made after start,
 * the computer's deleted and made again, and the machine's job folder
 * made by an installer later.
 */
static void
test_late_folders_watched(void **state)
{
	char	 cmd[512];
	long	 pid;

	(void)state;
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 3.0);
	write_managed(getpwuid(getuid())->pw_name,
	    "<key>ForceStock</key><true/>");
	pid = wait_state("llama", "stock", pid, 3.0);
	snprintf(cmd, sizeof cmd, "rm -rf %s/managed", home);
	assert_int_equal(system(cmd), 0);
	pid = wait_state("llama", "unlocked", pid, 3.0);
	write_managed(NULL, "<key>ForceStock</key><true/>");
	pid = wait_state("llama", "stock", pid, 3.0);
	assert_false(environ_has(pid, INJECTED));
	/* The machine's job folder, made after start. */
	put_machine_job("fleet");
	wait_state("fleet", "stock", 0, 3.0);
}

/*
 * Policy fails safe: a managed file that exists but cannot be used (cut
 * short, a link, ForceStock of the wrong type) means stock for every job,
 * with the reason in status and in hello; and an allowed profile name
 * runs only as shipped, never with a user's values for that name.
 */
static void
test_managed_fails_safe(void **state)
{
	static const char *const broken[] = {
		"<plist version=\"1.0\"><dict><key>ForceStock</key><fal",
		"<plist version=\"1.0\"><dict><key>ForceStock</key>"
		    "<integer>1</integer></dict></plist>\n",
		"<plist version=\"1.0\"><dict><key>AllowedProfiles</key>"
		    "<string>apple9</string></dict></plist>\n",
	};
	char		 path[256], target[256], profile[256];
	struct child_result *r;
	long		 pid;
	size_t		 i;
	int		 code;

	(void)state;
	put_job("llama", "");
	put_job("auto", "<key>Profile</key><string>auto</string>");
	pid = wait_state("llama", "unlocked", 0, 2.0);
	/* doctor's line for people: none, unusable, or what is in force. */
	r = ctl(&code, "doctor", NULL, NULL, NULL);
	assert_non_null(strstr(r->out, "\nmanaged      none\n"));
	snprintf(path, sizeof path, "%s/managed/org.metalcap.plist", home);
	write_managed(NULL, "");
	ctl(&code, "reload", NULL, NULL, NULL);
	r = ctl(&code, "doctor", NULL, NULL, NULL);
	assert_non_null(strstr(r->out, "\nmanaged      ForceStock off\n"));
	for (i = 0; i < sizeof broken / sizeof broken[0]; i++) {
		write_file(path, "w", broken[i]);
		ctl(&code, "reload", NULL, NULL, NULL);
		pid = wait_state("llama", "stock", pid, 3.0);
		assert_false(environ_has(pid, INJECTED));
		assert_field_has("llama", "reason", "managed settings unusable");
		/* Auto's reason is what is in force, not AllowedProfiles. */
		wait_state("auto", "stock", 0, 3.0);
		assert_field_has("auto", "reason", "profile auto: no shipped "
		    "profile may run on this guest (managed settings "
		    "unusable)");
		r = ctl(&code, "enable", "llama", NULL, NULL);
		assert_int_equal(code, 1);
		assert_non_null(strstr(r->err, "managed settings cannot be "
		    "used"));
		r = ctl(&code, "doctor", NULL, NULL, NULL);
		assert_non_null(strstr(r->out, "\nmanaged      UNUSABLE, every "
		    "job runs stock: "));
		r = ctl(&code, "--json", "doctor", NULL, NULL);
		assert_non_null(strstr(r->out, "org.metalcap.plist"));
		/* The daemon probes no profile it forbids; doctor says so. */
		assert_non_null(strstr(r->out, "\"not probed\""));
		/* Fixed: unlocked again. */
		write_managed(NULL, "");
		ctl(&code, "reload", NULL, NULL, NULL);
		pid = wait_state("llama", "unlocked", pid, 3.0);
	}
	/* A link in the file's place is not followed: stock. */
	snprintf(target, sizeof target, "%s/elsewhere.plist", home);
	write_file(target, "w", "<plist version=\"1.0\"><dict/></plist>\n");
	unlink(path);
	assert_int_equal(symlink(target, path), 0);
	ctl(&code, "reload", NULL, NULL, NULL);
	pid = wait_state("llama", "stock", pid, 3.0);
	assert_field_has("llama", "reason", "symbolic link");
	unlink(path);
	/* AllowedProfiles names the shipped apple7, not a user's apple7. */
	write_managed(NULL, "<key>AllowedProfiles</key><array><string>apple7"
	    "</string></array>");
	snprintf(profile, sizeof profile, "%s/profiles.d/apple7.plist", home);
	write_file(profile, "w", "<plist version=\"1.0\"><dict><key>"
	    "AppleFamilyMax</key><integer>1999</integer></dict></plist>\n");
	ctl(&code, "reload", NULL, NULL, NULL);
	r = ctl(&code, "profile", "llama", "apple7", NULL);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "only the shipped one is allowed"));
	pid = wait_state("llama", "stock", 0, 3.0);
	assert_false(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1999"));
	unlink(profile);
	ctl(&code, "reload", NULL, NULL, NULL);
	r = ctl(&code, "profile", "llama", "apple7", NULL);
	assert_int_equal(code, 0);
	pid = wait_state("llama", "unlocked", pid, 5.0);
	assert_true(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1007"));
}

/*
 * The example configuration profile in pkg/profiles/, as an MDM would
 * deliver it: its forced settings become the managed preferences.
 */
static void
test_managed_example_profile(void **state)
{
	char			 cmd[2048];
	struct child_result	*r;
	int			 code;

	(void)state;
	snprintf(cmd, sizeof cmd, "mkdir -p %s/managed && python3 -c '\n"
	    "import plistlib\n"
	    "p = plistlib.load(open(\"%s/pkg/profiles/"
	    "org.metalcap.settings.mobileconfig\", \"rb\"))\n"
	    "c = p[\"PayloadContent\"][0][\"PayloadContent\"]\n"
	    "s = c[\"org.metalcap\"][\"Forced\"][0][\"mcx_preference_settings\"]\n"
	    "plistlib.dump(s, open(\"%s/managed/org.metalcap.plist\", \"wb\"))\n"
	    "'", home, MC_TEST_SOURCE, home);
	assert_int_equal(system(cmd), 0);
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 2.0);
	assert_field_has("llama", "profile", "apple9");
	r = ctl(&code, "profile", "llama", "apple7", NULL);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "EMANAGED"));
	assert_non_null(strstr(r->err, "AllowedProfiles"));
}

/*
 * status.plist holds what status.json holds (nulls left out, jobs keyed
 * by name), and the osquery queries in pkg/fleet/ run in SQLite,
 * osquery's SQL engine, over the rows a port of osquery's plist table
 * (tests/fleet/osquery_plist.py, checked first against osquery's own test
 * file) makes of the file this daemon wrote: one row set per job.
 */
static void
check_status_plist(void)
{
	char	script[4096], path[512], cmd[4096];

	snprintf(script, sizeof script,
	    "import json, plistlib, shutil, subprocess, sys, os\n"
	    "sys.path.insert(0, '%s/tests/fleet')\n"
	    "import osquery_plist as oq\n"
	    "def strip(v):\n"
	    "    if isinstance(v, dict):\n"
	    "        return {k: strip(x) for k, x in v.items() if x is not None}\n"
	    "    if isinstance(v, list):\n"
	    "        return [strip(x) for x in v]\n"
	    "    return v\n"
	    "j = json.load(open('%s/state/status.json'))\n"
	    "p = plistlib.load(open('%s/state/status.plist', 'rb'))\n"
	    "want = strip(j)\n"
	    "want['jobs'] = {job['name']: job for job in want['jobs']}\n"
	    "want['verdicts'] = {'v%%d' %% v['seq']: v for v in want['verdicts']}\n"
	    "assert want == p, (want, p)\n"
	    "# The port, against osquery's own expectations for its test file.\n"
	    "rows = oq.plist_rows('%s/tests/fixtures/osquery/test.plist')\n"
	    "assert len({r['key'] for r in rows}) == 8, rows\n"
	    "assert {'path': rows[0]['path'], 'key': 'inetdCompatibility',\n"
	    "    'subkey': 'Wait', 'value': '0'} in rows, rows\n"
	    "# Why jobs are keyed: an array's elements lose their index.\n"
	    "plistlib.dump({'jobs': strip(j)['jobs']},\n"
	    "    open('%s/array.plist', 'wb'))\n"
	    "subs = [r['subkey'] for r in oq.plist_rows('%s/array.plist')\n"
	    "    if r['subkey'] == 'state']\n"
	    "assert len(subs) == 2, subs\n"
	    "# The queries, over the daemon's own file in alice's home.\n"
	    "home = '%s/Users/alice'\n"
	    "d = home + '/Library/Application Support/metalcap/state'\n"
	    "os.makedirs(d, exist_ok=True)\n"
	    "shutil.copy('%s/state/status.plist', d)\n"
	    "q1, q2, q3, q4 = oq.run_queries('%s/pkg/fleet/metalcap.sql',\n"
	    "    [('alice', home)])\n"
	    "assert q1 == [('alice', p['version'], p['instance_id'],\n"
	    "    str(p['updated']))], q1\n"
	    "assert ('alice', 'llama', 'state', 'unlocked') in q2, q2\n"
	    "assert ('alice', 'tiny', 'state', 'stock') in q2, q2\n"
	    "assert ('alice', 'llama', 'seen/family_max', '1009') in q2, q2\n"
	    "assert ('alice', 'llama', 'last_probe/verdict', 'pass') in q2, q2\n"
	    "assert {(u, job) for u, job, _, _ in q2} == {('alice', 'llama'),\n"
	    "    ('alice', 'tiny')}, q2\n"
	    "assert [r[:3] for r in q3] == [('alice', 'llama', 'unlocked'),\n"
	    "    ('alice', 'tiny', 'stock')], q3\n",
	    MC_TEST_SOURCE, home, home, MC_TEST_SOURCE, home, home, home, home,
	    MC_TEST_SOURCE);
	snprintf(path, sizeof path, "%s/check_status_plist.py", home);
	write_file(path, "w", script);
	snprintf(cmd, sizeof cmd, "python3 %s", path);
	assert_int_equal(system(cmd), 0);
}

/*
 * pkg/fleet's extension attribute, run as root (as Jamf runs it) over
 * users from the directory service (the STUB dscl): alice's status file
 * is the daemon's own; bob's is a link to a file he may not read, carol's
 * state folder a link, dave's file hostile (markup, a newline, an escape
 * and another user's entry in a reason), eve's a hard link to a file
 * she may not read, and a system account is skipped.  No link is
 * followed, nothing of a file is quoted, and what users wrote cannot pass
 * for another user's entry or break the XML.
 */
static void
check_jamf_ea(void)
{
	char			 cmd[4096], users[600], stubs[600], line[1200];
	char			 ea[300], ctlvar[300];
	char			*env[CHILD_ENV_MAX];
	struct child_result	 r;
	const char		*extra[] = { users, stubs, ea, ctlvar, NULL };
	const char		*argv[] = { "/bin/sh", "-c", "PATH=\"$STUBS:$PATH\" "
	    "exec /bin/sh \"$EA\"", NULL };
	static const char	 state[] = "Library/Application Support/metalcap"
	    "/state";

	snprintf(cmd, sizeof cmd, "set -e; cd %s; u=Users; "
	    "mkdir -p \"$u/alice/%s\" \"$u/bob/%s\" \"$u/carol/Library/"
	    "Application Support/metalcap\" \"$u/dave/%s\" elsewhere/state; "
	    "cp state/status.json \"$u/alice/%s/\"; "
	    "echo TOPSECRET > secret; chmod 600 secret; "
	    "ln -s %s/secret \"$u/bob/%s/status.json\"; "
	    "cp state/status.json elsewhere/state/; "
	    "ln -s %s/elsewhere/state \"$u/carol/Library/Application Support/"
	    "metalcap/state\"; "
	    "printf '{\"version\": \"0.1.0\", \"jobs\": [{\"name\": \"x\", "
	    "\"state\": \"reverted\", \"reason\": \"<b>& | bob: ok"
	    "\\\\n\\\\u001b[31m\"}]}' > \"$u/dave/%s/status.json\"; "
	    "mkdir -p \"$u/eve/%s\"; cp state/status.json private.json; "
	    "chmod 600 private.json; ln private.json \"$u/eve/%s/status.json\"; "
	    "printf '_spotlight 89 %s/Users/alice\\nalice 501 %s/Users/alice"
	    "\\nbob 502 %s/Users/bob\\ncarol 503 %s/Users/carol\\n"
	    "dave 504 %s/Users/dave\\neve 505 %s/Users/eve\\n' > users",
	    home, state, state, state, state, home, state, home, state, state,
	    state, home, home, home, home, home, home);
	assert_int_equal(system(cmd), 0);
	snprintf(users, sizeof users, "PKG_STUB_USERS=%s/users", home);
	snprintf(stubs, sizeof stubs, "STUBS=%s/tests/pkg/stubs",
	    MC_TEST_SOURCE);
	snprintf(ea, sizeof ea, "EA=%s/pkg/fleet/metalcap-jamf-ea.sh",
	    MC_TEST_SOURCE);
	/* The installed layout the attribute expects, from the build. */
	snprintf(cmd, sizeof cmd, "mkdir -p %s/libexec && ln -s %s "
	    "%s/libexec/metalcapctl && cp %s/pkg/scripts/launchd-user.sh "
	    "%s/libexec/", home, CTL, home, MC_TEST_SOURCE, home);
	assert_int_equal(system(cmd), 0);
	/* Searched like PATH: the package's place first, here missing. */
	snprintf(ctlvar, sizeof ctlvar, "METALCAP_LIBEXEC=%s/nowhere:%s/"
	    "libexec", home, home);
	child_env(env, extra);
	assert_int_equal(child_run(argv, env, &r), 0);
	snprintf(line, sizeof line, "<result>alice: ok version=" MC_VERSION
	    " jobs=2 unlocked=1 stock=1 | bob: status unreadable | carol: "
	    "status unreadable | dave: attention version=0.1.0 jobs=1 "
	    "reverted=1; x: reverted (&lt;b&gt;&amp; / bob: ok??[31m) | eve: "
	    "status unreadable</result>\n");
	assert_string_equal(r.out, line);
	assert_null(strstr(r.out, "TOPSECRET"));
}

/* The status file, read by Python's json module, agrees with status. */
static void
test_status_file(void **state)
{
	char			 cmd[2048], script[1024];
	struct child_result	*r;
	int			 code;

	(void)state;
	put_job("llama", "");
	put_job("tiny", "<key>Unlocked</key><false/>");
	wait_state("llama", "unlocked", 0, 2.0);
	wait_state("tiny", "stock", 0, 2.0);
	sleep_ms(300);
	r = ctl(&code, "--json", "status", NULL, NULL);
	assert_int_equal(code, 0);
	snprintf(script, sizeof script, "%s/status.out", home);
	write_file(script, "w", r->out);
	snprintf(cmd, sizeof cmd, "python3 -c '\n"
	    "import json, sys\n"
	    "f = json.load(open(\"%s/state/status.json\"))\n"
	    "s = json.load(open(\"%s/status.out\"))\n"
	    "assert len(f[\"instance_id\"]) == 32, f\n"
	    "assert f[\"protocol\"] >= 2 and f[\"version\"], f\n"
	    "a = {j[\"name\"]: j for j in f[\"jobs\"]}\n"
	    "for j in s:\n"
	    "    k = a[j[\"name\"]]\n"
	    "    for key in (\"state\", \"profile\", \"pid\"):\n"
	    "        assert k[key] == j[key], (key, k, j)\n"
	    "    assert k[\"reverts\"] == 0, k\n"
	    "assert a[\"llama\"][\"seen\"][\"family_max\"] == 1009, a\n"
	    "assert a[\"llama\"][\"last_probe\"][\"verdict\"] == \"pass\", a\n"
	    "assert a[\"tiny\"][\"seen\"] is None, a\n"
	    "'", home, home);
	assert_int_equal(system(cmd), 0);
	check_status_plist();
	/* The one-line summary, and the Jamf extension attribute over it. */
	r = ctl(&code, "report", NULL, NULL, NULL);
	assert_int_equal(code, 0);
	assert_string_equal(r->out, "ok version=" MC_VERSION
	    " jobs=2 unlocked=1 stock=1\n");
	check_jamf_ea();
	/*
	 * A job that needs attention, with a long reason holding the line's
	 * separator: named with its state, its reason made one field ('|'
	 * to '/') and cut to 200 bytes, so a line stays a line for any tool.
	 */
	kill_daemon(SIGTERM);
	snprintf(cmd, sizeof cmd, "python3 -c '\n"
	    "import json\n"
	    "p = \"%s/state/status.json\"\n"
	    "f = json.load(open(p))\n"
	    "for j in f[\"jobs\"]:\n"
	    "    if j[\"name\"] == \"llama\":\n"
	    "        j[\"state\"], j[\"reason\"] = \"reverted\", \"a|b\" + "
	    "\"x\" * 300\n"
	    "json.dump(f, open(p, \"w\"))\n"
	    "'", home);
	assert_int_equal(system(cmd), 0);
	r = ctl(&code, "report", NULL, NULL, NULL);
	assert_int_equal(code, 4);	/* a job not healthy */
	snprintf(script, sizeof script, "; llama: reverted (a/b%0197d)\n", 0);
	memset(strchr(script, '(') + 4, 'x', 197);
	if (strncmp(r->out, "attention ", 10) != 0 ||
	    strstr(r->out, script) == NULL)
		fail_msg("report: %s", r->out);
	/* The same as one object; there the reason is whole. */
	r = ctl(&code, "--json", "report", NULL, NULL);
	assert_int_equal(code, 4);
	snprintf(script, sizeof script, "%s/report.json", home);
	write_file(script, "w", r->out);
	snprintf(cmd, sizeof cmd, "python3 -c '\n"
	    "import json\n"
	    "r = json.load(open(\"%s\"))\n"
	    "f = json.load(open(\"%s/state/status.json\"))\n"
	    "assert r[\"verdict\"] == \"attention\" and r[\"jobs\"] == 2, r\n"
	    "assert r[\"instance_id\"] == f[\"instance_id\"], r\n"
	    "assert r[\"version\"] == f[\"version\"], r\n"
	    "assert r[\"updated\"] == f[\"updated\"], r\n"
	    "assert r[\"states\"][\"reverted\"] == 1, r\n"
	    "assert r[\"states\"][\"stock\"] == 1, r\n"
	    "assert sum(r[\"states\"].values()) == 2, r\n"
	    "assert r[\"attention\"] == [{\"name\": \"llama\", \"state\": "
	    "\"reverted\", \"reason\": \"a|b\" + \"x\" * 300}], r\n"
	    "del f[\"updated\"]\n"
	    "json.dump(f, open(\"%s/state/status.json\", \"w\"))\n"
	    "'", script, home, home);
	assert_int_equal(system(cmd), 0);
	/* A file of a metalcapd that never wrote the time: null, not none. */
	r = ctl(&code, "--json", "report", NULL, NULL);
	assert_int_equal(code, 4);
	assert_non_null(strstr(r->out, "\"updated\":null"));
	assert_non_null(strstr(r->out, "\"jobs\":2"));
	/* A status file cut to nothing (a full disk, a crash at install):
	 * named as not JSON, not taken for a read error or for health. */
	snprintf(cmd, sizeof cmd, "%s/state/status.json", home);
	write_file(cmd, "w", "");
	r = ctl(&code, "report", NULL, NULL, NULL);
	assert_int_not_equal(code, 0);
	if (strstr(r->err, "status.json: not valid JSON (line 1") == NULL)
		fail_msg("report on an empty status file: %s", r->err);
	/* A regular file whose read fails (EIO; /proc/self/mem at 0 does):
	 * the system's reason, not a reading of what was never read. */
	r = ctl(&code, "report", "/proc/self/mem", NULL, NULL);
	assert_int_equal(code, 1);
	assert_string_equal(r->err, "metalcapctl: /proc/self/mem: "
	    "Input/output error\n");
}

/*
 * The console stand-in given to another user: a file that user made (in
 * a folder of ours, so it can be removed), linked in.  false when no
 * other uid can be had here.
 */
static bool
console_to_other(const char *console, char *dir, size_t dirlen)
{
	const char	*prefix[16];
	char		 why[256], cmd[1024], file[320];
	size_t		 i, n = 0;

	if (other_uid_prefix(prefix, 16, why, sizeof why) == -1) {
		print_message("skipped: %s\n", why);
		return false;
	}
	snprintf(dir, dirlen, "/tmp/mc-console.XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0777), 0);
	snprintf(file, sizeof file, "%s/console", dir);
	for (i = 0; prefix[i] != NULL; i++)
		n += (size_t)snprintf(cmd + n, sizeof cmd - n, "%s ", prefix[i]);
	snprintf(cmd + n, sizeof cmd - n, "/usr/bin/touch %s", file);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(unlink(console), 0);
	assert_int_equal(symlink(file, console), 0);
	return true;
}

/*
 * Fast user switching: a machine job runs only for the user who has the
 * console (the owner of /dev/console; here its stand-in).  Another
 * user's console holds it: booted out, nothing runs, "stopped" with the
 * reason, while the user's own jobs run on; a daemon started meanwhile
 * never runs it; a disable given meanwhile waits; and with the console
 * back the job runs again, stock as asked.
 */
static void
test_machine_jobs_follow_console(void **state)
{
	char	 console[256], dir[64], cmd[128];
	long	 pid, llama;
	int	 code, i;

	(void)state;
	snprintf(console, sizeof console, "%s/console", home);
	write_file(console, "w", "");
	put_machine_job("fleet");
	put_job("llama", "");
	pid = wait_state("fleet", "unlocked", 0, 3.0);
	llama = wait_state("llama", "unlocked", 0, 3.0);
	if (!console_to_other(console, dir, sizeof dir))
		skip();
	wait_state("fleet", "stopped", 0, 8.0);
	assert_field_has("fleet", "reason", "has the console (machine jobs "
	    "run for the console's user only)");
	for (i = 0; i < 100 && loaded_in_gui("fleet"); i++)
		sleep_ms(50);	/* bootout returns before the label goes */
	assert_false(loaded_in_gui("fleet"));
	assert_int_equal(kill((pid_t)pid, 0), -1);
	assert_int_equal(wait_state("llama", "unlocked", 0, 1.0), llama);
	kill_daemon(SIGTERM);
	start_daemon();
	wait_state("fleet", "stopped", 0, 3.0);
	assert_field_has("fleet", "reason", "has the console");
	ctl(&code, "disable", "fleet", NULL, NULL);
	assert_int_equal(code, 0);
	assert_false(loaded_in_gui("fleet"));
	assert_field_has("fleet", "reason", "has the console");
	/* Back to this user: runs, stock as the disable asked. */
	assert_int_equal(unlink(console), 0);
	write_file(console, "w", "");
	pid = wait_state("fleet", "stock", 0, 8.0);
	assert_false(environ_has(pid, INJECTED));
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * The instance id the status file of a daemon just started gives, read
 * with Python's json: the last daemon's file is removed first, and the
 * new one waited for (it is written within 50 ms of the start).
 */
static void
restart_and_read(const char *field, char *buf, size_t len)
{
	char	cmd[512];
	FILE	*p;
	int	i;

	kill_daemon(SIGTERM);
	snprintf(cmd, sizeof cmd, "%s/state/status.json", home);
	assert_true(unlink(cmd) == 0 || errno == ENOENT);
	start_daemon();
	for (i = 0; i < 250 * time_scale() && access(cmd, F_OK) == -1; i++)
		sleep_ms(20);
	snprintf(cmd, sizeof cmd, "python3 -c 'import json, sys; print(json."
	    "load(open(sys.argv[1]))[sys.argv[2]])' %s/state/status.json %s",
	    home, field);
	assert_non_null(p = popen(cmd, "r"));
	assert_non_null(fgets(buf, (int)len, p));
	buf[strcspn(buf, "\n")] = '\0';
	assert_int_equal(pclose(p), 0);
}

/* The same for the instance id, which is always 32 digits. */
static void
restart_and_read_id(char *buf, size_t len)
{
	restart_and_read("instance_id", buf, len);
	assert_int_equal(strlen(buf), 32);
}

/*
 * The guest id a fleet counts guests by: one for every user of a machine
 * (each with an instance id of its own), another for a clone whose
 * hardware UUID was copied and en0 address not (tart clone), whose
 * instance id stays its image's; a hash, never the UUID; "" on a
 * machine that cannot be told.
 */
static void
test_guest_id(void **state)
{
	char	machine[256], link[256], idfile[256];
	char	g1[64], i1[64], g2[64], i2[64], g3[64], i3[64];

	(void)state;
	snprintf(machine, sizeof machine, "%s/machine-id", home);
	snprintf(link, sizeof link, "%s/link-addr", home);
	snprintf(idfile, sizeof idfile, "%s/state/instance-id", home);
	write_file(machine, "w", "8C5D2F1E-0000-4000-8000-00000000A001\n");
	write_file(link, "w", "be:d0:74:11:22:01\n");
	restart_and_read("guest_id", g1, sizeof g1);
	restart_and_read_id(i1, sizeof i1);
	assert_int_equal(strlen(g1), 32);
	assert_null(strcasestr(g1, "8c5d2f1e"));
	/* Another user of the machine: a state folder of its own. */
	assert_int_equal(unlink(idfile), 0);
	restart_and_read("guest_id", g2, sizeof g2);
	restart_and_read_id(i2, sizeof i2);
	assert_string_equal(g2, g1);
	assert_string_not_equal(i2, i1);
	/* A clone of it: the UUID and the state folder copied, en0 not. */
	write_file(link, "w", "be:d0:74:11:22:02\n");
	restart_and_read("guest_id", g3, sizeof g3);
	restart_and_read_id(i3, sizeof i3);
	assert_string_equal(i3, i2);
	assert_string_not_equal(g3, g1);
	/* Another machine of the same address: another guest too. */
	write_file(machine, "w", "8C5D2F1E-0000-4000-8000-00000000B002\n");
	write_file(link, "w", "be:d0:74:11:22:01\n");
	restart_and_read("guest_id", g3, sizeof g3);
	assert_string_not_equal(g3, g1);
	write_file(machine, "w", "");
	restart_and_read("guest_id", g3, sizeof g3);
	assert_string_equal(g3, "");
}

/*
 * Guests cloned from one image (issue 28): the state folder, instance id
 * included, comes with the clone; the id names the machine it was made
 * on, and on another (here the stand-in of macOS's hardware UUID changed)
 * a new id is made, and kept from then on.  An id file that names no
 * machine (from before, or "machine unknown": an image built with its
 * machine id emptied) cannot tell its guest from a clone: every guest
 * makes a new id, where they all used to adopt the image's.
 */
static void
test_clone_gets_own_instance_id(void **state)
{
	char	machine[256], idfile[256], first[64], again[64], clone[64];

	(void)state;
	snprintf(machine, sizeof machine, "%s/machine-id", home);
	snprintf(idfile, sizeof idfile, "%s/state/instance-id", home);
	write_file(machine, "w", "8C5D2F1E-0000-4000-8000-00000000A001\n");
	write_file(idfile, "w", "0123456789abcdef0123456789abcdef\n");
	restart_and_read_id(first, sizeof first);
	assert_string_not_equal(first, "0123456789abcdef0123456789abcdef");
	write_file(idfile, "w", "0123456789abcdef0123456789abcdef\nmachine "
	    "unknown\n");
	restart_and_read_id(first, sizeof first);
	assert_string_not_equal(first, "0123456789abcdef0123456789abcdef");
	restart_and_read_id(again, sizeof again);
	assert_string_equal(again, first);
	/* The clone: the same state, another machine. */
	write_file(machine, "w", "8C5D2F1E-0000-4000-8000-00000000B002\n");
	restart_and_read_id(clone, sizeof clone);
	assert_string_not_equal(clone, first);
	restart_and_read_id(again, sizeof again);
	assert_string_equal(again, clone);
	/* A machine that cannot be told: the id is kept, not made anew at
	 * each start (the fleet would see a new guest every restart). */
	write_file(machine, "w", "");
	restart_and_read_id(first, sizeof first);
	restart_and_read_id(again, sizeof again);
	assert_string_equal(again, first);
}

/* Wait for the job's status to have text in key; the status, or a fail. */
static json_t *
wait_field(const char *name, const char *key, const char *text,
    double timeout)
{
	double	 start = now_s();
	json_t	*j;

	for (timeout *= time_scale(); now_s() - start < timeout;
	    sleep_ms(50)) {
		if ((j = job_status(name)) == NULL)
			continue;
		if (strstr(str_of(j, key), text) != NULL)
			return j;
		json_decref(j);
	}
	fail_msg("%s: %s never had \"%s\" within %.1f s", name, key, text,
	    timeout);
	return NULL;
}

/*
 * Background Task Management holds a job (issue 27): launchd accepts the
 * bootstrap and never runs it, and tells only its log.  The job is named
 * held, with where to allow it, in status (unhealthy), watch's events,
 * the status file and report, instead of a pid-less job looked at for
 * ever; once allowed, the next look's kickstart runs it, and the note
 * goes.  Fails without held.c, or if a held job is never asked again.
 */
static void
test_held_by_launchd(void **state)
{
	struct child_result	*r;
	json_t			*j;
	char			 cmd[1024], events[300];
	long			 pid;
	int			 code, i;

	(void)state;
	snprintf(events, sizeof events, "%s/events", home);
	snprintf(cmd, sizeof cmd, "%s %s sim-btm hold org.metalcap.job.held && "
	    "(%s %s --home %s watch > %s 2>&1 &)", simvar, SIM, switches, CTL,
	    home, events);
	assert_int_equal(system(cmd), 0);
	put_job("held", "");
	j = wait_field("held", "held", "has not started it: Background Task "
	    "Management may be holding it", 15.0);
	assert_string_equal(str_of(j, "state"), "unlocked");
	assert_int_equal(pid_of(j), 0);
	json_decref(j);
	assert_int_equal(launchd_pid("held"), 0);
	r = ctl(&code, "status", NULL, NULL, NULL);
	assert_int_equal(code, 4);	/* unhealthy */
	assert_non_null(strstr(r->out, "    held: launchd has it but has not "
	    "started it"));
	assert_non_null(strstr(r->out, "System Settings > General > Login "
	    "Items (Allow in the Background)"));
	/* The status file follows within its 50 ms of coalescing. */
	for (i = 0; i < 100; i++, sleep_ms(20))
		if ((r = ctl(&code, "report", NULL, NULL, NULL)) != NULL &&
		    code != 0)
			break;
	assert_int_equal(code, 4);
	assert_non_null(strstr(r->out, "attention "));
	assert_non_null(strstr(r->out, "; held: unlocked (launchd has it but "
	    "has not started it"));
	snprintf(cmd, sizeof cmd, "grep -q '^held held unlocked launchd has "
	    "it but' %s", events);
	assert_int_equal(system(cmd), 0);
	r = ctl(&code, "doctor", NULL, NULL, NULL);
	assert_non_null(strstr(r->out, "    held: launchd has it but has not "
	    "started it: Background Task Management may be holding it; allow "
	    "it in System Settings > General > Login Items"));
	/* Stopped, it is out of launchd: held no more; started, held again. */
	ctl(&code, "stop", "held", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("held", "stopped", -1, 5.0);
	j = job_status("held");
	assert_false(json_is_string(json_object_get(j, "held")));
	json_decref(j);
	ctl(&code, "start", "held", NULL, NULL);
	assert_int_equal(code, 0);
	json_decref(wait_field("held", "held", "has not started it", 15.0));
	/* Allowed: launchd would not start it by itself; the kickstart does. */
	snprintf(cmd, sizeof cmd, "%s %s sim-btm allow org.metalcap.job.held",
	    simvar, SIM);
	assert_int_equal(system(cmd), 0);
	pid = wait_state("held", "unlocked", 0, 10.0);
	assert_int_equal(launchd_pid("held"), pid);
	j = job_status("held");
	assert_null(json_object_get(j, "held") == NULL ? NULL :
	    json_string_value(json_object_get(j, "held")));
	json_decref(j);
	r = ctl(&code, "status", NULL, NULL, NULL);
	assert_int_equal(code, 0);
	assert_null(strstr(r->out, "held:"));
	snprintf(cmd, sizeof cmd, "pkill -f -- '--home %s watch'", home);
	(void)system(cmd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_managed_example_profile,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_machine_jobs_follow_console,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_by_launchd, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_managed_link_replaced,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_id, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_clone_gets_own_instance_id,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_folders_watched,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_managed_fails_safe, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_managed_settings, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_status_file, setup,
		    teardown),
	};

	/* MC_TEST_ONLY=pattern runs the matching tests (make mutate). */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("fleet e2e", tests, NULL, NULL);
}
