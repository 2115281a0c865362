/* SPDX-License-Identifier: MIT */
/*
 * The injection judgement (common/mc_inject.c, common/mc_macho.c) on real
 * macOS binaries no one here built, fetched from npm by
 * scripts/npm-macho-fixtures.sh: sentry-cli (hardened, no dyld-environment
 * entitlement), deno (hardened, allows DYLD_* and other teams' libraries),
 * dprint (ad-hoc).  Then variants derived from them here, said as such: an
 * arm64e-only copy, a setuid copy, scripts run by them and by a shell; and
 * files that are no Mach-O, or lie about their sizes.  metalcapctl check
 * and job files give the same answer.
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

#include "child.h"
#include "mc_macho.h"

#define BUILD		MC_TEST_BUILD
#define BINS		BUILD "/npm-macho"
#define CTL		BUILD "/bin/metalcapctl"

static char	tmpdir[64];

static int
group_setup(void **state)
{
	(void)state;
	if (system(MC_TEST_SOURCE "/scripts/npm-macho-fixtures.sh " BINS) != 0)
		return -1;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/mc-macho.XXXXXX");
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
group_teardown(void **state)
{
	char	cmd[128];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The judgement of path, with one finding that must contain text. */
static void
expect(const char *path, bool inherit, enum mc_inject_level verdict,
    const char *text)
{
	struct mc_inject	j;
	int			i;

	mc_inject_judge(path, NULL, inherit, &j);
	if (j.verdict != verdict)
		fail_msg("%s: %s, want %s (%s)", path,
		    mc_inject_level_name(j.verdict),
		    mc_inject_level_name(verdict), j.n ? j.findings[0].text :
		    "no finding");
	for (i = 0; i < j.n; i++)
		if (strstr(j.findings[i].text, text) != NULL)
			return;
	fail_msg("%s: no finding says '%s'", path, text);
}

static void
test_npm_binaries(void **state)
{
	struct mc_macho	m;
	char		why[128];

	(void)state;
	assert_int_equal(mc_macho_read(BINS "/sentry-cli", &m, why,
	    sizeof why), 0);
	assert_int_equal(m.nslices, 2);
	assert_true(m.slices[0].hardened && m.slices[1].hardened);
	expect(BINS "/sentry-cli", false, MC_INJECT_REFUSED, "arm64: hardened "
	    "runtime without com.apple.security.cs.allow-dyld-environment-"
	    "variables");
	assert_int_equal(mc_macho_read(BINS "/deno", &m, why, sizeof why), 0);
	assert_true(m.nslices == 1 && m.slices[0].hardened &&
	    m.slices[0].allow_dyld_env && m.slices[0].disable_lv);
	expect(BINS "/deno", false, MC_INJECT_OK, "arm64: hardened runtime "
	    "that allows DYLD_*");
	assert_int_equal(mc_macho_read(BINS "/dprint", &m, why, sizeof why), 0);
	assert_true(m.slices[0].adhoc && !m.slices[0].hardened);
	expect(BINS "/dprint", false, MC_INJECT_OK, "ad-hoc signature");
	/* Children inheriting the shim: a warning, whatever the program. */
	expect(BINS "/dprint", true, MC_INJECT_WARN, "arm64e child");
}

/* A copy of src at dst with mode, bytes at off replaced (len 0: none). */
static void
derive(const char *src, const char *dst, mode_t mode, long off,
    const void *bytes, size_t len)
{
	char	cmd[512];
	FILE	*f;

	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, dst);
	assert_int_equal(system(cmd), 0);
	if (len > 0) {
		assert_non_null(f = fopen(dst, "r+"));
		fseek(f, off, SEEK_SET);
		fwrite(bytes, 1, len, f);
		fclose(f);
	}
	assert_int_equal(chmod(dst, mode), 0);
}

static void
write_script(const char *path, const char *body)
{
	FILE	*f;

	assert_non_null(f = fopen(path, "w"));
	fputs(body, f);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

static void
test_derived_variants(void **state)
{
	static const uint8_t	arm64e[4] = { 2, 0, 0, 0 };	/* cpusubtype */
	char			path[256], script[256], body[512];

	(void)state;
	/* dprint marked arm64e-only: no slice a shim without arm64e serves. */
	snprintf(path, sizeof path, "%s/dprint-arm64e", tmpdir);
	derive(BINS "/dprint", path, 0755, 8, arm64e, sizeof arm64e);
	expect(path, false, MC_INJECT_REFUSED, "no slice the shim can serve "
	    "(arm64e");
	/* dprint made setuid: dyld ignores DYLD_* for it. */
	snprintf(path, sizeof path, "%s/dprint-setuid", tmpdir);
	derive(BINS "/dprint", path, 04755, 0, NULL, 0);
	expect(path, false, MC_INJECT_REFUSED, "is setuid or setgid");
	/* A script whose interpreter is deno: deno is judged. */
	snprintf(script, sizeof script, "%s/serve.ts", tmpdir);
	snprintf(body, sizeof body, "#!%s/deno run\nconsole.log(1)\n", BINS);
	write_script(script, body);
	expect(script, false, MC_INJECT_OK, "is a script run by " BINS
	    "/deno");
	/* ... and one whose interpreter is sentry-cli: refused. */
	write_script(script, "#!" BINS "/sentry-cli\n");
	expect(script, false, MC_INJECT_REFUSED, "hardened runtime without");
	/* A shell script: the shim would stop at the shell. */
	write_script(script, "#!/bin/sh\nexec llama-server\n");
	expect(script, false, MC_INJECT_REFUSED, "/bin/sh is a shell or env "
	    "wrapper");
	expect(script, true, MC_INJECT_WARN, "/bin/sh is a shell or env "
	    "wrapper");
}

/* Files that are no Mach-O, or whose headers lie: refused cleanly. */
static void
test_malformed(void **state)
{
	static const struct { const char *name; const char *bytes; size_t len;
	    const char *why; } cases[] = {
		{ "java", "\xca\xfe\xba\xbe\x00\x00\x00\x3d", 8,
		    "not a Mach-O file" },
		{ "fat-past-end", "\xca\xfe\xba\xbe\x00\x00\x00\x01"
		    "\x01\x00\x00\x0c\x00\x00\x00\x00\x00\x10\x00\x00"
		    "\x00\x10\x00\x00\x00\x00\x00\x0e", 28,
		    "a slice past the end of the file" },
		{ "cmds-too-big", "\xcf\xfa\xed\xfe\x0c\x00\x00\x01"
		    "\x00\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00"
		    "\xff\xff\xff\x7f\x00\x00\x00\x00\x00\x00\x00\x00", 32,
		    "load commands larger than the slice" },
		{ "elf", "\x7f" "ELF\x02\x01\x01\x00", 8, "not a Mach-O file" },
	};
	struct mc_macho	m;
	char		path[256], why[128];
	size_t		i;
	FILE		*f;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", tmpdir, cases[i].name);
		assert_non_null(f = fopen(path, "w"));
		fwrite(cases[i].bytes, 1, cases[i].len, f);
		fclose(f);
		assert_int_equal(mc_macho_read(path, &m, why, sizeof why), -1);
		assert_string_equal(why, cases[i].why);
	}
	/* The judgement of a file that is no Mach-O: nothing to check. */
	chmod(path, 0755);
	expect(path, false, MC_INJECT_OK, "nothing to check");
}

/* metalcapctl check: the same judgement, exit 4 when refused. */
static void
test_metalcapctl_check(void **state)
{
	const char		*refused[] = { CTL, "check", "--json",
	    BINS "/sentry-cli", NULL };
	const char		*fine[] = { CTL, "check", BINS "/deno", NULL };
	char			*env[CHILD_ENV_MAX];
	struct child_result	 r;

	(void)state;
	child_env(env, NULL);
	assert_int_equal(child_run(refused, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 4);
	assert_non_null(strstr(r.out, "\"verdict\": \"refused\""));
	assert_non_null(strstr(r.out, "\"archs\": \"x86_64,arm64\""));
	assert_int_equal(child_run(fine, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_non_null(strstr(r.out, "injectable"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_npm_binaries),
		cmocka_unit_test(test_derived_variants),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_metalcapctl_check),
	};

	/* MC_TEST_ONLY=pattern runs the matching tests (make mutate). */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("injection judgement", tests,
	    group_setup, group_teardown);
}
