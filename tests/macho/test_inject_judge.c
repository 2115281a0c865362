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
#include "fixture.h"
#include "mc_macho.h"

#define CTL		MC_TEST_BUILD "/bin/metalcapctl"
#define PY3		"/usr/bin/python3"

static void
test_npm_binaries(void **state)
{
	struct mc_macho	m;
	char		why[128];

	(void)state;
	/* A file that cannot be opened says why, as the system does. */
	assert_int_equal(mc_macho_read(FX_BINS "/no-such-binary", &m, why,
	    sizeof why), -1);
	assert_string_equal(why, "No such file or directory");
	assert_int_equal(mc_macho_read(FX_BINS "/sentry-cli", &m, why,
	    sizeof why), 0);
	assert_int_equal(m.nslices, 2);
	assert_true(m.slices[0].hardened && m.slices[1].hardened);
	/* The signing team, from each slice's CodeDirectory (2.2 on). */
	assert_string_equal(m.slices[0].team, "97JCY7859U");
	assert_string_equal(m.slices[1].team, "97JCY7859U");
	fx_expect(FX_BINS "/sentry-cli", false, MC_INJECT_REFUSED, "arm64: "
	    "hardened runtime without com.apple.security.cs.allow-dyld-"
	    "environment-variables");
	assert_int_equal(mc_macho_read(FX_BINS "/deno", &m, why, sizeof why),
	    0);
	assert_true(m.nslices == 1 && m.slices[0].hardened &&
	    m.slices[0].allow_dyld_env && m.slices[0].disable_lv);
	assert_string_equal(m.slices[0].team, "2H4KBF436B");
	fx_expect(FX_BINS "/deno", false, MC_INJECT_OK, "arm64: hardened "
	    "runtime that allows DYLD_*");
	assert_int_equal(mc_macho_read(FX_BINS "/dprint", &m, why, sizeof why),
	    0);
	assert_true(m.slices[0].adhoc && !m.slices[0].hardened);
	/* Ad-hoc: a CodeDirectory without a team (its offset 0). */
	assert_string_equal(m.slices[0].team, "");
	fx_expect(FX_BINS "/dprint", false, MC_INJECT_OK, "ad-hoc signature");
	/* Children inheriting the shim: a warning, whatever the program. */
	fx_expect(FX_BINS "/dprint", true, MC_INJECT_WARN, "arm64e child");
}

static void
test_derived_variants(void **state)
{
	/* The cpusubtype, little-endian. */
	static const uint8_t	arm64e[4] = { 2, 0, 0, 0 };
	char			path[256], script[256], body[512];

	(void)state;
	/* dprint marked arm64e-only, unversioned (ABI version 0): the
	 * kernel kills a program not Apple's of that ABI at exec. */
	snprintf(path, sizeof path, "%s/dprint-arm64e", fx_tmpdir);
	fx_derive(FX_BINS "/dprint", path, 0755, 8, arm64e, sizeof arm64e);
	fx_expect(path, false, MC_INJECT_REFUSED, "arm64e: not Apple's, and of "
	    "the preview pointer-authentication ABI (version 0): the kernel "
	    "kills it at exec without the -arm64e_preview_abi boot-arg");
	fx_expect_on(&fx_intel, path, false, MC_INJECT_REFUSED, "no slice of "
	    "arm64e runs on an Intel Mac");
	/* dprint made setuid: dyld ignores DYLD_* for it. */
	snprintf(path, sizeof path, "%s/dprint-setuid", fx_tmpdir);
	fx_derive(FX_BINS "/dprint", path, 04755, 0, NULL, 0);
	fx_expect(path, false, MC_INJECT_REFUSED, "is setuid or setgid");
	/* A script whose interpreter is deno: deno is judged. */
	snprintf(script, sizeof script, "%s/serve.ts", fx_tmpdir);
	snprintf(body, sizeof body, "#!%s/deno run\nconsole.log(1)\n", FX_BINS);
	fx_write_script(script, body);
	fx_expect(script, false, MC_INJECT_OK, "is a script run by " FX_BINS
	    "/deno");
	/* ... and one whose interpreter is sentry-cli: refused. */
	fx_write_script(script, "#!" FX_BINS "/sentry-cli\n");
	fx_expect(script, false, MC_INJECT_REFUSED, "hardened runtime without");
	/* Followed through three scripts to the program at the end; "#! "
	 * with a space is the same line. */
	snprintf(path, sizeof path, "%s/s3", fx_tmpdir);
	fx_write_script(path, "#! " FX_BINS "/sentry-cli\n");
	snprintf(body, sizeof body, "#!%s/s3\n", fx_tmpdir);
	snprintf(path, sizeof path, "%s/s2", fx_tmpdir);
	fx_write_script(path, body);
	snprintf(body, sizeof body, "#!%s/s2\n", fx_tmpdir);
	fx_write_script(script, body);
	fx_expect(script, false, MC_INJECT_REFUSED, "hardened runtime without");
	snprintf(path, sizeof path, "%s/s3 is a script run by " FX_BINS
	    "/sentry-cli", fx_tmpdir);
	fx_expect(script, false, MC_INJECT_REFUSED, path);
	/* A shell script: SIP strips DYLD_* from /bin/sh; with SIP off the
	 * shim would stop at the shell. */
	fx_write_script(script, "#!/bin/sh\nexec llama-server\n");
	fx_expect(script, true, MC_INJECT_REFUSED, "/bin/sh, the script's "
	    "interpreter, is protected by System Integrity Protection");
	fx_expect_on(&fx_silicon_sip_off, script, false, MC_INJECT_REFUSED,
	    "/bin/sh is a shell or env wrapper");
	fx_expect_on(&fx_silicon_sip_off, script, true, MC_INJECT_WARN,
	    "/bin/sh is a shell or env wrapper");
}

/*
 * deno with its disable-library-validation entitlement renamed (every
 * copy of the key, in the XML and the DER entitlements): hardened,
 * DYLD_* allowed, but library validation on and deno's team not the
 * shim's, so dyld would refuse the shim.  Kills: a judgement that refuses
 * only when the program has no team at all.
 */
static void
test_library_validation_other_team(void **state)
{
	static const char	key[] =
	    "com.apple.security.cs.disable-library-validation";
	char			path[256];
	uint8_t			*buf, *p;
	size_t			len, n = 0;
	FILE			*f;

	(void)state;
	buf = fx_slurp(FX_BINS "/deno", &len);
	for (p = buf; (p = memmem(p, len - (size_t)(p - buf), key,
	    sizeof key - 1)) != NULL; p += sizeof key - 1, n++)
		p[sizeof key - 2] = 'X';
	assert_true(n > 0);
	snprintf(path, sizeof path, "%s/deno-lv", fx_tmpdir);
	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
	assert_int_equal(chmod(path, 0755), 0);
	fx_expect(path, false, MC_INJECT_REFUSED, "library validation (team "
	    "2H4KBF436B)");
	/* A shim signed by deno's own team passes library validation. */
	fx_expect_shim(&fx_silicon, path, FX_BINS "/deno", false, MC_INJECT_OK,
	    "arm64: hardened runtime that allows DYLD_*; library validation, "
	    "which the shim passes: it is signed by the program's team "
	    "(2H4KBF436B)");
	/* One of another team (sentry-cli's) does not. */
	fx_expect_shim(&fx_silicon, path, FX_BINS "/sentry-cli", false,
	    MC_INJECT_REFUSED, "library validation (team 2H4KBF436B)");
}

/*
 * A thin Mach-O (what clang and Homebrew bottles make for one
 * architecture) is judged by its own header: the arm64 slice of a
 * hardened fat program, cut out, is refused for the same reason.
 */
static void
test_thin_binary(void **state)
{
	struct mc_macho	 m;
	uint8_t		*bytes;
	char		 path[256], why[128];
	size_t		 len;
	FILE		*f;

	(void)state;
	bytes = fx_slurp(FX_BINS "/sentry-cli", &len);
	assert_int_equal(fx_get_be32(bytes), 0xcafebabe);
	snprintf(path, sizeof path, "%s/thin", fx_tmpdir);
	assert_non_null(f = fopen(path, "wb"));
	fwrite(bytes + fx_get_be32(bytes + 16), 1, fx_get_be32(bytes + 20), f);
	fclose(f);
	free(bytes);
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(mc_macho_read(path, &m, why, sizeof why), 0);
	assert_int_equal(m.nslices, 1);
	assert_true(m.slices[0].hardened);
	fx_expect(path, false, MC_INJECT_REFUSED, "hardened runtime without "
	    "com.apple.security.cs.allow-dyld-environment-variables");
}

/*
 * The slice judged is the one the Mac runs: a fat arm64e + x86_64 program
 * (the shape of /usr/bin's) runs arm64e on Apple silicon, where one not
 * Apple's, of the preview ABI, does not run at all, though on Intel its
 * x86_64 slice does; and a hardened x86_64 slice does not refuse the
 * arm64 slice that runs.  (test_inject_arch: the ABI versions.)
 */
static void
test_slice_that_runs(void **state)
{
	const struct fx_slice	arm64e_x86[] = {
		{ FX_BINS "/dprint", -1, FX_ARM64, 0x80000002U },
		{ FX_BINS "/dprint", -1, FX_X86_64, 3 },
	};
	const struct fx_slice	arm64_hardened_x86[] = {
		{ FX_BINS "/dprint", -1, FX_ARM64, 0 },
		{ FX_BINS "/sentry-cli", 0, FX_X86_64, 3 },
	};
	/* The cpusubtype, little-endian: arm64e, ABI version 0. */
	static const uint8_t	arm64e[4] = { 2, 0, 0, 0x80 };
	struct mc_inject	j;
	char			path[256], shim[256];
	int			i;

	(void)state;
	snprintf(path, sizeof path, "%s/fat-arm64e", fx_tmpdir);
	fx_make_fat(path, arm64e_x86, 2);
	assert_string_equal(fx_judged_slice(&fx_silicon, path, &j), "arm64e");
	assert_string_equal(j.archs, "arm64e,x86_64");
	fx_expect(path, false, MC_INJECT_REFUSED, "arm64e: not Apple's, and "
	    "of the preview pointer-authentication ABI (version 0)");
	assert_string_equal(fx_judged_slice(&fx_intel, path, &j), "x86_64");
	fx_expect_on(&fx_intel, path, false, MC_INJECT_OK, "x86_64: ad-hoc");
	/*
	 * A shim with an arm64e slice changes nothing: the program does not
	 * run.  Having chosen the arm64e slice the kernel does not fall back
	 * to the x86_64 one (xnu kern_exec.c:1662-1690, past the point of
	 * return); an arm64e-only one has none to fall back to, and is not
	 * said to.
	 */
	snprintf(shim, sizeof shim, "%s/shim-arm64e", fx_tmpdir);
	fx_derive(FX_BINS "/dprint", shim, 0755, 8, arm64e, sizeof arm64e);
	fx_expect_shim(&fx_silicon, path, shim, false, MC_INJECT_REFUSED,
	    "-arm64e_preview_abi boot-arg (xnu kern_exec.c:1662); it chose "
	    "this slice and does not fall back to another");
	mc_inject_judge(shim, shim, false, &fx_silicon, &j);
	assert_int_equal(j.verdict, MC_INJECT_REFUSED);
	for (i = 0; i < j.n; i++)
		assert_null(strstr(j.findings[i].text, "fall back"));

	snprintf(path, sizeof path, "%s/fat-hardened-x86", fx_tmpdir);
	fx_make_fat(path, arm64_hardened_x86, 2);
	assert_string_equal(fx_judged_slice(&fx_silicon, path, &j), "arm64");
	fx_expect(path, false, MC_INJECT_OK, "arm64: ad-hoc signature");
	fx_expect_on(&fx_intel, path, false, MC_INJECT_REFUSED, "x86_64: "
	    "hardened runtime without");
}

/*
 * SIP-protected programs, and scripts run by one (#!/usr/bin/env
 * python3): refused while SIP is on, with SIP named; judged as any
 * program when it is off.  Linux has the same paths, so its /usr/bin/env
 * and /usr/bin/python3 stand in for the Mac's.
 */
static void
test_sip(void **state)
{
	char	script[256];

	(void)state;
	fx_expect(PY3, false, MC_INJECT_REFUSED, PY3 " is protected by System "
	    "Integrity Protection");
	fx_expect_on(&fx_silicon_sip_off, PY3, false, MC_INJECT_WARN, "SIP is "
	    "off on Apple silicon with SIP off, so dyld keeps DYLD_*");
	snprintf(script, sizeof script, "%s/serve.py", fx_tmpdir);
	fx_write_script(script, "#!/usr/bin/env python3\nprint(1)\n");
	fx_expect(script, true, MC_INJECT_REFUSED, "/usr/bin/env, the script's "
	    "interpreter, is protected by System Integrity Protection");
	fx_expect_on(&fx_silicon_sip_off, script, true, MC_INJECT_WARN,
	    "/usr/bin/env is a shell or env wrapper");
	fx_expect_on(&fx_silicon_sip_off, script, false, MC_INJECT_REFUSED,
	    "/usr/bin/env is a shell or env wrapper");
	/* Judged where the path really leads: a link to a protected
	 * program is protected, a path through /usr/bin/.. is not. */
	snprintf(script, sizeof script, "%s/python3", fx_tmpdir);
	assert_int_equal(symlink(PY3, script), 0);
	fx_expect(script, false, MC_INJECT_REFUSED, "protected by System "
	    "Integrity Protection");
	fx_expect(FX_BINS "/../npm-macho/deno", false, MC_INJECT_OK,
	    "arm64: hardened runtime that allows");
	fx_expect("/usr/bin/../../" FX_BINS "/deno", false, MC_INJECT_OK,
	    "arm64: hardened runtime that allows");
}

/*
 * The SIP-protected locations are rootless.conf's, not a few bin
 * directories: all of /usr but its writable exceptions (/usr/local,
 * /usr/libexec/cups, /usr/share/man, /usr/share/snmp), /bin, /sbin,
 * /System, /Library/Apple, Safari.  The old list (/bin, /sbin, /usr/bin,
 * /usr/sbin, /usr/libexec, /System) called a program under /usr/lib,
 * /usr/share or /Library/Apple injectable.  Paths the Mac has and Linux
 * has not are judged by mc_inject_sip_path alone; one both have,
 * /usr/lib/os-release (os-release(5)), by the whole judgement.  Kills:
 * the old list; a prefix matched inside a name (/usrx); a writable
 * exception not honoured; /Library/Apple by the Data volume's path.
 */
static void
test_sip_locations(void **state)
{
	static const struct { const char *path; bool sip; } cases[] = {
		{ "/usr/lib/dyld", true },
		{ "/usr/lib/libSystem.B.dylib", true },
		{ "/usr/share/bin/x", true },
		{ "/usr/libexec/x", true },
		{ "/usr/bin/python3", true },
		{ "/bin/sh", true },
		{ "/sbin/launchd", true },
		{ "/System/Library/CoreServices/x", true },
		{ "/Library/Apple/usr/libexec/oah/x", true },
		{ "/Applications/Safari.app/Contents/MacOS/Safari", true },
		{ "/System/Volumes/Data/Library/Apple/x", true },
		{ "/usr/local/bin/llama-server", false },
		{ "/usr/libexec/cups/filter/x", false },
		{ "/usr/share/man/x", false },
		{ "/usr/share/snmp/x", false },
		{ "/System/Volumes/Data/usr/local/bin/x", false },
		{ "/System/Volumes/Data/opt/homebrew/bin/x", false },
		{ "/Library/Application Support/x", false },
		{ "/Applications/Safari.app.x/x", false },
		{ "/usrx/bin/x", false },
		{ "/opt/homebrew/bin/llama-server", false },
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (mc_inject_sip_path(cases[i].path) != cases[i].sip)
			fail_msg("%s: SIP-protected %s, want %s", cases[i].path,
			    cases[i].sip ? "no" : "yes", cases[i].sip ? "yes" :
			    "no");
	/* The refusal names the location, and AMFI as what decides. */
	fx_expect("/usr/lib/os-release", false, MC_INJECT_REFUSED, "/usr/lib/"
	    "os-release is protected by System Integrity Protection (a SIP "
	    "location in rootless.conf): AMFI, which decides, has dyld "
	    "remove DYLD_*");
	fx_expect_on(&fx_silicon_sip_off, "/usr/lib/os-release", false,
	    MC_INJECT_WARN, "is in a SIP-protected location (rootless.conf):"
	    " SIP is off on Apple silicon with SIP off");
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
		/* Under the cap on load commands, past this slice's end. */
		{ "cmds-past-slice", "\xcf\xfa\xed\xfe\x0c\x00\x00\x01"
		    "\x00\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00"
		    "\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", 32,
		    "load commands larger than the slice" },
		{ "elf", "\x7f" "ELF\x02\x01\x01\x00", 8, "not a Mach-O file" },
	};
	struct mc_macho	m;
	char		path[256], why[128];
	size_t		i;
	FILE		*f;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", fx_tmpdir, cases[i].name);
		assert_non_null(f = fopen(path, "w"));
		fwrite(cases[i].bytes, 1, cases[i].len, f);
		fclose(f);
		assert_int_equal(mc_macho_read(path, &m, why, sizeof why), -1);
		assert_string_equal(why, cases[i].why);
	}
	/* The judgement of a file that is no Mach-O: nothing to check. */
	chmod(path, 0755);
	fx_expect(path, false, MC_INJECT_OK, "nothing to check");
	/*
	 * A signature whose one index entry is cut a byte short (19 bytes:
	 * the 12 of the SuperBlob's header and 7 of the 8 of an entry): read
	 * as signed, the entry never read (under ASan, not a byte past it).
	 */
	snprintf(path, sizeof path, "%s/cut-index", fx_tmpdir);
	assert_non_null(f = fopen(path, "w"));
	fwrite("\xcf\xfa\xed\xfe\x0c\x00\x00\x01\x00\x00\x00\x00"
	    "\x02\x00\x00\x00\x01\x00\x00\x00\x10\x00\x00\x00"
	    "\x00\x00\x00\x00\x00\x00\x00\x00"	/* header, 1 command */
	    "\x1d\x00\x00\x00\x10\x00\x00\x00\x30\x00\x00\x00"
	    "\x13\x00\x00\x00"			/* LC_CODE_SIGNATURE */
	    "\xfa\xde\x0c\xc0\x00\x00\x00\x13\x00\x00\x00\x01"
	    "\x00\x00\x00\x00\x00\x00\x00", 1, 67, f);
	fclose(f);
	assert_int_equal(mc_macho_read(path, &m, why, sizeof why), 0);
	assert_int_equal(m.nslices, 1);
	assert_true(m.slices[0].is_signed);
	assert_false(m.slices[0].hardened);
}

/* How often needle occurs in text. */
static int
count(const char *text, const char *needle)
{
	int	n = 0;

	for (; (text = strstr(text, needle)) != NULL; text += strlen(needle))
		n++;
	return n;
}

/* metalcapctl check: the same judgement, exit 4 when refused. */
static void
test_metalcapctl_check(void **state)
{
	const char		*refused[] = { CTL, "check", "--json",
	    FX_BINS "/sentry-cli", NULL };
	const char		*refused_text[] = { CTL, "check",
	    FX_BINS "/sentry-cli", NULL };
	const char		*fine[] = { CTL, "check", FX_BINS "/deno",
	    NULL };
	const char		*intel_check[] = { CTL, "check", "--json",
	    "--machine", "intel", FX_BINS "/sentry-cli", NULL };
	const char		*sip_on[] = { CTL, "check", "--sip", "on",
	    PY3, NULL };
	const char		*bad[] = { CTL, "check", "--sip", "maybe",
	    PY3, NULL };
	const char		*protected[] = { CTL, "check",
	    "/Volumes/models/llama-server", NULL };
	char			*env[CHILD_ENV_MAX];
	struct child_result	 r;
	int			 findings;

	(void)state;
	child_env(env, NULL);
	assert_int_equal(child_run(refused, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 4);
	assert_non_null(strstr(r.out, "\"verdict\": \"refused\""));
	assert_non_null(strstr(r.out, "\"archs\": \"x86_64,arm64\""));
	assert_non_null(strstr(r.out, "\"slice\": \"arm64\""));
	/* The text says the same findings, one line each, and no more. */
	findings = count(r.out, "\"level\": ");
	assert_true(findings > 0);
	assert_int_equal(child_run(refused_text, env, &r), 0);
	assert_int_equal(count(r.out, "\n"), 2 + findings);
	assert_int_equal(child_run(fine, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_non_null(strstr(r.out, "injectable"));
	/* Here, a guest like Cua's image: Apple silicon, SIP off. */
	assert_non_null(strstr(r.out, "judged for Apple silicon with SIP off, "
	    "which runs its arm64"));
	assert_int_equal(child_run(intel_check, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 4);
	assert_non_null(strstr(r.out, "\"slice\": \"x86_64\""));
	assert_non_null(strstr(r.out, "\"machine\": \"an Intel Mac with SIP "
	    "off\""));
	assert_int_equal(child_run(sip_on, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 4);
	assert_non_null(strstr(r.out, "System Integrity Protection"));
	/* A job could not run it there; exec from a terminal could. */
	assert_int_equal(child_run(protected, env, &r), 0);
	assert_non_null(strstr(r.out, "/Volumes/models/llama-server is in a "
	    "removable or network volume, which macOS keeps from launchd "
	    "agents"));
	assert_int_equal(child_run(bad, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 2);
	assert_non_null(strstr(r.err, "--sip maybe: expected off or on"));
}

/* The file offset of LC_BUILD_VERSION's sdk field in a thin Mach-O. */
static long
sdk_offset(const char *file)
{
	size_t		 len, at = 32;
	uint8_t		*b = fx_slurp(file, &len);
	uint32_t	 i, ncmds = b[16] | b[17] << 8 | b[18] << 16 |
	    (uint32_t)b[19] << 24, cmd, size;
	long		 off = -1;

	for (i = 0; i < ncmds && at + 8 <= len; i++, at += size) {
		cmd = b[at] | b[at + 1] << 8 | b[at + 2] << 16;
		size = b[at + 4] | b[at + 5] << 8 | b[at + 6] << 16;
		if (cmd == 0x32) {	/* LC_BUILD_VERSION */
			off = (long)at + 16;
			break;
		}
	}
	free(b);
	return off;
}

/*
 * check reads the build version the running slice carries, and warns
 * where Metal's default language would be below 3.1 (ggml then leaves its
 * bf16 kernels out under a profile that sets has_bfloat).  deno from npm:
 * LC_BUILD_VERSION minimum 12, SDK 14.5, no warning; the same file with
 * its SDK field made 11.7.1 (the probe's own), the warning.  sentry-cli's
 * x86_64 slice has only LC_VERSION_MIN_MACOSX (10.12, SDK 26.5).
 */
static void
test_check_bf16_default(void **state)
{
	static const uint8_t	 old_sdk[4] = { 0x01, 0x07, 0x0b, 0x00 };
	char			 old[128];
	const char		*real[] = { CTL, "check", FX_BINS "/deno",
	    NULL };
	const char		*built_old[] = { CTL, "check", old, NULL };
	char			*env[CHILD_ENV_MAX], why[256];
	struct child_result	 r;
	struct mc_macho		 m;
	long			 off;

	(void)state;
	assert_int_equal(mc_macho_read(FX_BINS "/deno", &m, why, sizeof why),
	    0);
	assert_true(m.slices[0].build_version);
	assert_int_equal(m.slices[0].minos, 0x000c0000);
	assert_int_equal(m.slices[0].sdk, 0x000e0500);
	assert_int_equal(mc_macho_default_msl(m.slices[0].sdk), 0x30001);
	assert_int_equal(mc_macho_default_msl(0x000b0701), 0x20003);
	assert_int_equal(mc_macho_read(FX_BINS "/sentry-cli", &m, why,
	    sizeof why), 0);
	assert_int_equal(m.slices[0].cputype, FX_X86_64);
	assert_false(m.slices[0].build_version);
	assert_int_equal(m.slices[0].minos, 0x000a0c00);
	assert_int_equal(m.slices[0].sdk, 0x001a0500);

	child_env(env, NULL);
	assert_int_equal(child_run(real, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_null(strstr(r.out, "MSL"));
	snprintf(old, sizeof old, "%s/deno-sdk11", fx_tmpdir);
	assert_true((off = sdk_offset(FX_BINS "/deno")) > 0);
	fx_derive(FX_BINS "/deno", old, 0755, off, old_sdk, sizeof old_sdk);
	assert_int_equal(child_run(built_old, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	if (strstr(r.out, "built with the macOS 11.7.1 SDK (minimum 12.0): "
	    "Metal's default MSL is 2.3, so ggml drops its bf16 kernels") ==
	    NULL || strstr(r.out, "GGML_METAL_BF16_DISABLE=1") ==
	    NULL)
		fail_msg("check says:\n%s", r.out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_npm_binaries),
		cmocka_unit_test(test_derived_variants),
		cmocka_unit_test(test_thin_binary),
		cmocka_unit_test(test_library_validation_other_team),
		cmocka_unit_test(test_slice_that_runs),
		cmocka_unit_test(test_sip),
		cmocka_unit_test(test_sip_locations),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_metalcapctl_check),
		cmocka_unit_test(test_check_bf16_default),
	};

	/* MC_TEST_ONLY=pattern runs the matching tests (make mutate). */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("injection judgement", tests,
	    fx_setup, fx_teardown);
}
