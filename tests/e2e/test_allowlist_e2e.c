/* SPDX-License-Identifier: MIT */
/*
 * A fleet that learns (metalcap(5), UnlockOnlyWhere; metalcapctl(1),
 * fleet allowlist): verify's verdicts, what each is about, in the fleet
 * file; osquery's rows of 500 simulated guests aggregated into an
 * allowlist; the allowlist pushed into a guest's managed folder, and
 * metalcapd unlocking or refusing by it, a new llama.cpp build or OS
 * update leaving it.  The real metalcapd and metalcapctl, the launchctl
 * SIMULATOR, fake-llama and llama-perplexity-sim on the simulated device;
 * the other guests' files made by tests/fleet/make_fleet.py from the one
 * this daemon wrote.
 */
#include <sys/stat.h>

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

#define PPL_SIM		BUILD "/tests/llama-perplexity-sim"
#define FLEET_PY	MC_TEST_SOURCE "/tests/fleet/make_fleet.py"
#define BUILD_NOW	"build 10167, commit 5e1f0c3a"

static char	model[1100], text[128], tmpvar[192];

/*
 * The simulator's model and a text, in this home: the model deep in
 * folders, a path of over 600 bytes, past which the identity's stamp
 * was once cut before the model's change time.
 */
static void
fleet_home(void)
{
	char	dir[1024];
	FILE	*f;
	size_t	 i;

	snprintf(dir, sizeof dir, "%s/models", home);
	for (i = 0; i < 3; i++) {
		assert_int_equal(mkdir(dir, 0755), 0);
		strcat(dir, "/a-folder-of-models-named-at-length-as-a-"
		    "volume-of-many-users-may-name-them-0123456789-"
		    "abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ-"
		    "0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJ");
	}
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(model, sizeof model, "%s/tiny.gguf", dir);
	assert_true(strlen(model) > 600);
	snprintf(text, sizeof text, "%s/text.txt", home);
	snprintf(tmpvar, sizeof tmpvar, "TMPDIR=%s", home);
	write_file(model, "w", "GGUF\ngeneral.type=llama 1B Q4_K - Medium\n"
	    "general.size=667815936\ngeneral.params=1100048384\n");
	assert_non_null(f = fopen(text, "w"));
	for (i = 0; i < 4000; i++)
		fputc("the quick brown fox jumps over a lazy dog. "[i % 43], f);
	fclose(f);
}

/* A job serving the model; env_xml adds to its environment. */
static void
serving_job(const char *name, const char *env_xml)
{
	char	file[96], body[2048];

	snprintf(file, sizeof file, "%s.plist", name);
	snprintf(body, sizeof body, "<?xml version=\"1.0\"?><plist version="
	    "\"1.0\"><dict><key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string><string>-m</string><string>%s</string>"
	    "</array><key>Profile</key><string>apple9</string>"
	    "<key>EnvironmentVariables</key><dict><key>MTLSIM_SWITCHES</key>"
	    "<string>%s</string>%s</dict>%s</dict></plist>\n", model,
	    switches + strlen("MTLSIM_SWITCHES="), env_xml, job_throttle);
	write_raw(file, body);
}

/* metalcapctl verify of apple9 on the model, here; its exit status. */
static int
verify_here(void)
{
	const char *const	 args[] = { "verify", "--profile", "apple9",
	    "--", PPL_SIM, "-m", model, "-f", text, "-c", "128", NULL };
	const char		*env[] = { switches, tmpvar, NULL };
	int			 code;

	ctlv_env(&code, env, args);
	return code;
}

static void
reload(void)
{
	int	code;

	ctl(&code, "reload", NULL, NULL, NULL);
	assert_int_equal(code, 0);
}

/*
 * The allowlist enforced: a run whose combination an entry allows
 * unlocks; a new llama.cpp build leaves it, the reason naming the key;
 * a wider entry lets it back; an OS update leaves an entry pinned to a
 * build.  A bad entry makes the settings unusable: stock, named.
 */
static void
test_allowlist_enforced(void **state)
{
	struct child_result	*r;
	char			 buf[512], path[256];
	long			 pid;
	int			 code;

	(void)state;
	fleet_home();
	write_managed(NULL, "<key>UnlockOnlyWhere</key><array><dict>"
	    "<key>Profile</key><string>apple9</string><key>LlamaBuild</key>"
	    "<string>" BUILD_NOW "</string><key>OSBuild</key><string>25B78"
	    "</string></dict></array>");
	snprintf(path, sizeof path, "%s/host", home);
	write_file(path, "w", "os_build=25B78\n");
	serving_job("srv", "");
	pid = wait_state("srv", "unlocked", 0, 30.0);
	assert_true(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1009"));
	/* Rebuilt: its --version says another build. */
	serving_job("srv", "<key>LLAMA_SIM_BUILD</key><string>10200 abcdef1"
	    "</string>");
	wait_state("srv", "stock", pid, 30.0);
	status_string("srv", NULL, "reason", buf, sizeof buf);
	if (strstr(buf, "not allowed here: UnlockOnlyWhere: LlamaBuild here "
	    "is \"build 10200, commit abcdef1\", the nearest entry allows \""
	    BUILD_NOW "\"") == NULL)
		fail_msg("reason: %s", buf);
	/* doctor says the list is in force, and why the job runs stock. */
	r = ctl(&code, "doctor", NULL, NULL, NULL);
	assert_non_null(strstr(r->out, ", UnlockOnlyWhere 1 entries\n"));
	assert_non_null(strstr(r->out, "not allowed here: UnlockOnlyWhere: "
	    "LlamaBuild here is"));
	/* The administrator widens the entry to every build. */
	write_managed(NULL, "<key>UnlockOnlyWhere</key><array><dict>"
	    "<key>Profile</key><string>apple9</string><key>LlamaBuild</key>"
	    "<string>build *</string><key>OSBuild</key><string>25B78"
	    "</string></dict></array>");
	reload();
	pid = wait_state("srv", "unlocked", 0, 30.0);
	/* The OS updates: a new combination, until the fleet says. */
	write_file(path, "w", "os_build=25C56\n");
	reload();
	wait_state("srv", "stock", pid, 30.0);
	assert_field_has("srv", "reason", "OSBuild here is \"25C56\", the "
	    "nearest entry allows \"25B78\"");
	/* pkg/profiles' example, as MDM delivers it: read, and applied. */
	snprintf(buf, sizeof buf, "python3 -c \"import plistlib; p = plistlib."
	    "load(open('%s/pkg/profiles/org.metalcap.allowlist.mobileconfig', "
	    "'rb')); plistlib.dump(p['PayloadContent'][0]['PayloadContent']"
	    "['org.metalcap']['Forced'][0]['mcx_preference_settings'], open("
	    "'%s/managed/org.metalcap.plist', 'wb'))\"", MC_TEST_SOURCE, home);
	assert_int_equal(system(buf), 0);
	reload();
	wait_state("srv", "stock", 0, 30.0);
	assert_field_has("srv", "reason", "not allowed here: UnlockOnlyWhere: "
	    "Profile here is \"apple9\", the nearest entry allows \"apple7\"");
	/* An entry with a key metalcapd does not know: nothing unlocks. */
	write_managed(NULL, "<key>UnlockOnlyWhere</key><array><dict>"
	    "<key>Chip</key><string>M1</string></dict></array>");
	reload();
	wait_state("srv", "stock", 0, 30.0);
	assert_field_has("srv", "reason", "UnlockOnlyWhere[0].Chip: unknown "
	    "key");
}

/*
 * LocalVerifyAllows: with no entry for it, a run unlocks once verify
 * passed on exactly its combination here (the same llama.cpp build, by
 * --version, and model), and the verdict is a row of the fleet file.
 */
static void
test_local_verify_allows(void **state)
{
	char	buf[512], cmd[2048];
	long	pid;
	int	code;

	(void)state;
	fleet_home();
	write_managed(NULL, "<key>LocalVerifyAllows</key><true/>"
	    "<key>UnlockOnlyWhere</key><array><dict><key>LlamaBuild</key>"
	    "<string>build 1, commit 0000000</string></dict></array>");
	serving_job("srv", "");
	pid = wait_state("srv", "stock", 0, 30.0);
	status_string("srv", NULL, "reason", buf, sizeof buf);
	assert_non_null(strstr(buf, "no verify of this combination passed "
	    "here"));
	assert_int_equal(verify_here(), 0);
	pid = wait_state("srv", "unlocked", pid, 30.0);
	assert_true(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1009"));
	/* The verdict's row, as osquery reads status.plist (query 4). */
	snprintf(cmd, sizeof cmd, "python3 -c \"import sys, json; sys.path."
	    "insert(0, '%s/tests/fleet'); import osquery_plist as oq, os, "
	    "shutil; h = '%s/Users/alice'; d = h + '/Library/Application "
	    "Support/metalcap/state'; os.makedirs(d, exist_ok=True); "
	    "shutil.copy('%s/state/status.plist', d); q = oq.run_queries('%s/"
	    "pkg/fleet/metalcap.sql', [('alice', h)])[3]; assert len(q) == 1, "
	    "q; r = q[0]; assert r[0] == 'alice' and r[3:5] == ('apple9', "
	    "'pass') and r[6] == '" BUILD_NOW "' and r[12] == '%s', r\"",
	    MC_TEST_SOURCE, home, home, MC_TEST_SOURCE, MC_VERSION);
	assert_int_equal(system(cmd), 0);
	/*
	 * The model rewritten in place, its size and mtime kept: another
	 * model, whose start is judged anew and refused (no verify of it).
	 */
	rewrite_in_place(model, "gguf");
	ctl(&code, "restart", "srv", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("srv", "stock", pid, 30.0);
	status_string("srv", NULL, "reason", buf, sizeof buf);
	assert_non_null(strstr(buf, "no verify of this combination passed "
	    "here"));
}

/*
 * The loop closed: 500 guests' fleet files (this daemon's own among
 * them, the rest made from it with other hosts, builds, models, verdicts
 * and clones), flattened as osquery does, aggregated by metalcapctl
 * fleet allowlist exactly as the rule computed apart says, the profile
 * it writes pushed into this guest's managed folder, and the job
 * unlocked where the fleet allows its combination, refused where not.
 */
static void
test_fleet_loop(void **state)
{
	char			 dir[128], cmd[2048], path[256];
	char			 rows[256];
	const char *const	 args[] = { "--json", "fleet", "allowlist",
	    "--out", dir, path, NULL };
	const char *const	 both[] = { "--json", "fleet", "allowlist",
	    rows, path, NULL };
	struct child_result	*r;
	json_t			*got, *want, *c;
	size_t			 i;
	int			 code, allowed = 0;

	(void)state;
	fleet_home();
	serving_job("srv", "");
	wait_state("srv", "unlocked", 0, 30.0);
	assert_int_equal(verify_here(), 0);
	/* The fleet file holds the verdict once metalcapd has read it. */
	snprintf(path, sizeof path, "%s/state/status.plist", home);
	snprintf(cmd, sizeof cmd, "grep -q model_sha256 %s", path);
	for (i = 0; system(cmd) != 0; i++) {
		assert_true(i < 200 * time_scale());
		sleep_ms(50);
	}
	snprintf(dir, sizeof dir, "%s/fleet", home);
	snprintf(cmd, sizeof cmd, "python3 %s %s 500 7 %s >/dev/null",
	    FLEET_PY, path, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof path, "%s/rows.json", dir);
	snprintf(rows, sizeof rows, "%s", path);
	r = ctlv(&code, args);
	assert_int_equal(code, 0);
	assert_non_null(got = json_loads(r->out, 0, NULL));
	snprintf(cmd, sizeof cmd, "%s/want.json", dir);
	assert_non_null(want = json_load_file(cmd, 0, NULL));
	assert_int_equal(json_array_size(got), json_object_size(want));
	json_array_foreach(got, i, c) {
		char	key[1024];
		json_t	*w;

		snprintf(key, sizeof key, "%s|%s|%s|%s|%s|%s|%s",
		    json_string_value(json_object_get(c, "profile")),
		    json_string_value(json_object_get(c, "llama_build")),
		    json_string_value(json_object_get(c, "model_sha256")),
		    json_string_value(json_object_get(c, "os_build")),
		    json_string_value(json_object_get(c, "cpu_brand")),
		    json_string_value(json_object_get(c, "hw_model")),
		    json_string_value(json_object_get(c, "shim_version")));
		if ((w = json_object_get(want, key)) == NULL ||
		    json_is_true(json_object_get(c, "allowed")) !=
		    json_is_true(json_object_get(w, "allowed")) ||
		    json_integer_value(json_object_get(c, "guests_passed")) !=
		    json_integer_value(json_object_get(w, "guests_passed")))
			fail_msg("%s: got %s, the rule says %s", key,
			    json_dumps(c, 0), w ? json_dumps(w, 0) : "none");
		allowed += json_is_true(json_object_get(c, "allowed"));
	}
	assert_true(allowed > 0 && (size_t)allowed < json_array_size(got));
	json_decref(want);
	/*
	 * The same guests through Jamf: the extension attribute's lines
	 * (metalcapctl report of each) in its CSV export give the same
	 * allowlist; a verdict forged in a job's reason is not read.
	 */
	snprintf(cmd, sizeof cmd, "python3 %s jamf %s %s", FLEET_PY, CTL, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof path, "%s/jamf.csv", dir);
	r = ctlv(&code, args);
	assert_int_equal(code, 0);
	assert_non_null(want = json_loads(r->out, 0, NULL));
	if (!json_equal(got, want))
		fail_msg("Jamf's export read otherwise: %s", r->out);
	assert_null(strstr(r->out, "f0f0f0f"));
	assert_null(strstr(r->out, "e0e0e0e"));
	assert_null(strstr(r->out, "d0d0d0d"));
	assert_null(strstr(r->out, "c0c0c0c"));
	/* The report lines as they are, unquoted: the same. */
	snprintf(path, sizeof path, "%s/plain.txt", dir);
	r = ctlv(&code, args);
	assert_int_equal(code, 0);
	assert_non_null(strstr(r->out, "guests_passed"));
	assert_null(strstr(r->out, "c0c0c0c"));
	snprintf(path, sizeof path, "%s/jamf.csv", dir);
	/* Both at once, as an administrator with both may give them: each
	 * guest's rows are one guest's, by guest or instance id alike. */
	json_decref(want);
	r = ctlv(&code, both);
	assert_int_equal(code, 0);
	assert_non_null(want = json_loads(r->out, 0, NULL));
	if (!json_equal(got, want))
		fail_msg("osquery's rows and Jamf's export together read "
		    "otherwise: %s", r->out);
	/* The forged one was whole in the export, for the rule to refuse. */
	snprintf(cmd, sizeof cmd, "grep -q 'VirtualMac2%%2C1,0.1.0)' %s",
	    path);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "grep -q 'x, y: ok version=0.1.0 jobs=1 "
	    "verdict=.*d0d0d0d.*VirtualMac2%%2C1,0.1.0)' %s", path);
	assert_int_equal(system(cmd), 0);
	json_decref(got);
	json_decref(want);
	/* Pushed: this guest's own host is none of the fleet's allowed. */
	snprintf(cmd, sizeof cmd, "mkdir -p %s/managed && cp %s/org.metalcap."
	    "plist %s/managed/org.metalcap.plist && python3 -c \"import "
	    "plistlib; p = plistlib.load(open('%s/org.metalcap.allowlist."
	    "mobileconfig', 'rb')); s = p['PayloadContent'][0]['PayloadContent']"
	    "['org.metalcap']['Forced'][0]['mcx_preference_settings']; assert "
	    "s == plistlib.load(open('%s/org.metalcap.plist', 'rb')), s\"",
	    home, dir, home, dir, dir);
	assert_int_equal(system(cmd), 0);
	reload();
	wait_state("srv", "stock", 0, 30.0);
	assert_field_has("srv", "reason", "not allowed here: UnlockOnlyWhere");
	/* Its host as the allowed guests: it unlocks. */
	snprintf(cmd, sizeof cmd, "python3 -c \"import json, plistlib; "
	    "e = [x for x in plistlib.load(open('%s/managed/org.metalcap.plist',"
	    " 'rb'))['UnlockOnlyWhere'] if x['Profile'] == 'apple9' and "
	    "x['LlamaBuild'] == '" BUILD_NOW "' and x['ShimVersion'] == '%s' "
	    "and x['ModelSHA256'] == json.load(open('%s/state/verified.json'))"
	    "[-1]['model_sha256']]; assert e, 'no entry for this build'; "
	    "open('%s/host', 'w').write('os_build=%%s\\ncpu_brand=%%s\\n"
	    "hw_model=%%s\\n' %% (e[0]['OSBuild'], e[0]['CPUBrand'], "
	    "e[0]['HWModel']))\"", home, MC_VERSION, home, home);
	assert_int_equal(system(cmd), 0);
	reload();
	wait_state("srv", "unlocked", 0, 30.0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_allowlist_enforced,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_verify_allows,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_fleet_loop, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
