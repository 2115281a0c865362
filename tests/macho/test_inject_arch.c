/* SPDX-License-Identifier: MIT */
/*
 * Which slice of a program runs, and which slice of the shim that process
 * loads, as xnu and dyld decide them (common/mc_inject.c): the arm64e
 * pointer-authentication ABI versions, Apple's plugin hosts, and the
 * x86_64 slice a launch preferring it runs (metalcapctl check --arch).
 *
 * No binary fetched here has these bits (the npm binaries are arm64 and
 * x86_64), and none can be built without Apple's toolchain: the programs
 * are made in the test, minimal Mach-O headers with the cpusubtype asked
 * and, when signed, an embedded signature of one CodeDirectory (platform
 * byte, identifier, ad-hoc flag) and entitlements -- what mc_macho.c
 * reads, and nothing a Mac would run.  The universal ones are made of
 * slices of the npm binaries (dprint, ad-hoc) with their subtypes changed.
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

#include <cmocka.h>

#include "child.h"
#include "fixture.h"
#include "mc_macho.h"

#define CTL		MC_TEST_BUILD "/bin/metalcapctl"

#define ARM64E_V0	0x80000002U	/* CPU_SUBTYPE_PTRAUTH_ABI, version 0 */
#define ARM64E_V1	0x81000002U
#define ARM64E_OLD	0x00000002U	/* unversioned: version bits 0 */

#define DISABLE_LV	"com.apple.security.cs.disable-library-validation"
#define OVERRIDE	"com.apple.private.security.override-plugin-host-" \
			"detection"

/* A signature for make_macho: NULL for an unsigned file. */
struct sig {
	bool		 platform;	/* the CodeDirectory's platform byte */
	const char	*ident;
	const char	*ents[2];	/* up to two entitlements, set true */
};

/* The entitlements blob (CSMAGIC_EMBEDDED_ENTITLEMENTS) at p; its size. */
static size_t
put_entitlements(uint8_t *p, const char *const *ents)
{
	char	xml[1024];
	size_t	n;
	int	i;

	n = (size_t)snprintf(xml, sizeof xml, "<?xml version=\"1.0\" "
	    "encoding=\"UTF-8\"?><plist version=\"1.0\"><dict>");
	for (i = 0; i < 2 && ents[i] != NULL; i++)
		n += (size_t)snprintf(xml + n, sizeof xml - n, "<key>%s</key>"
		    "<true/>", ents[i]);
	n += (size_t)snprintf(xml + n, sizeof xml - n, "</dict></plist>");
	fx_put_be32(p, 0xfade7171);
	fx_put_be32(p + 4, (uint32_t)(8 + n));
	memcpy(p + 8, xml, n);
	return 8 + n;
}

/* The embedded signature at p: a SuperBlob of a CodeDirectory (version
 * 0x20400, ad-hoc, no team) and the entitlements; its size. */
static size_t
put_signature(uint8_t *p, const struct sig *sig)
{
	uint8_t	*cd = p + 28;
	size_t	 cdlen = 52 + strlen(sig->ident) + 1, entlen;

	memset(cd, 0, cdlen);
	fx_put_be32(cd, 0xfade0c02);
	fx_put_be32(cd + 4, (uint32_t)cdlen);
	fx_put_be32(cd + 8, 0x20400);
	fx_put_be32(cd + 12, 0x2);		/* CS_ADHOC */
	fx_put_be32(cd + 20, 52);		/* identOffset */
	cd[36] = 32;				/* hashSize */
	cd[37] = 2;				/* SHA-256 */
	cd[38] = sig->platform;
	cd[39] = 12;				/* 4 KB pages */
	memcpy(cd + 52, sig->ident, strlen(sig->ident) + 1);
	entlen = put_entitlements(cd + cdlen, sig->ents);
	fx_put_be32(p, 0xfade0cc0);
	fx_put_be32(p + 4, (uint32_t)(28 + cdlen + entlen));
	fx_put_be32(p + 8, 2);
	fx_put_be32(p + 12, 0);			/* CSSLOT_CODEDIRECTORY */
	fx_put_be32(p + 16, 28);
	fx_put_be32(p + 20, 5);			/* CSSLOT_ENTITLEMENTS */
	fx_put_be32(p + 24, (uint32_t)(28 + cdlen));
	return 28 + cdlen + entlen;
}

static void
put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* A thin Mach-O executable at tmpdir/name: cputype, cpusubtype and, with
 * sig, one LC_CODE_SIGNATURE.  Its path in path. */
static void
make_macho(char *path, size_t len, const char *name, uint32_t cputype,
    uint32_t cpusubtype, const struct sig *sig)
{
	uint8_t	 buf[4096] = { 0 };
	size_t	 size = 32, siglen;
	FILE	*f;

	snprintf(path, len, "%s/%s", fx_tmpdir, name);
	put_le32(buf, 0xfeedfacf);
	put_le32(buf + 4, cputype);
	put_le32(buf + 8, cpusubtype);
	put_le32(buf + 12, 2);			/* MH_EXECUTE */
	if (sig != NULL) {
		put_le32(buf + 16, 1);
		put_le32(buf + 20, 16);
		put_le32(buf + 32, 0x1d);	/* LC_CODE_SIGNATURE */
		put_le32(buf + 36, 16);
		put_le32(buf + 40, 64);
		siglen = put_signature(buf + 64, sig);
		put_le32(buf + 44, (uint32_t)siglen);
		size = 64 + siglen;
	}
	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite(buf, 1, size, f), size);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

/* An ad-hoc signature of a program not Apple's. */
static const struct sig third_party = { false, "dev.example.server",
    { NULL } };

/* What mc_macho.c reads: the ABI version, the identifier, the
 * entitlements xnu takes for a plugin host. */
static void
test_read(void **state)
{
	static const struct { uint32_t sub; unsigned version; } cases[] = {
		{ ARM64E_V0, 0 }, { ARM64E_V1, 1 }, { ARM64E_OLD, 0 },
		{ 0x8f000002U, 15 }, { 0x81000000U, 0 },	/* arm64 */
	};
	const struct sig	plugin = { true, "com.apple.example",
	    { DISABLE_LV, OVERRIDE } };
	struct mc_macho		m;
	char			path[256], why[128];
	size_t			i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		make_macho(path, sizeof path, "read", FX_ARM64, cases[i].sub,
		    NULL);
		assert_int_equal(mc_macho_read(path, &m, why, sizeof why), 0);
		assert_int_equal(m.slices[0].ptrauth_version,
		    cases[i].version);
	}
	make_macho(path, sizeof path, "read", FX_ARM64, ARM64E_V0, &plugin);
	assert_int_equal(mc_macho_read(path, &m, why, sizeof why), 0);
	assert_true(m.slices[0].is_signed && m.slices[0].platform &&
	    m.slices[0].adhoc);
	assert_string_equal(m.slices[0].ident, "com.apple.example");
	assert_true(m.slices[0].plugin_lv && m.slices[0].plugin_override);
}

/*
 * A program not Apple's: of ABI version 0 the kernel kills it at exec
 * (xnu kern_exec.c:1662-1690), unversioned or not; of version 1 it runs
 * as arm64 with pointer authentication off, and loads the arm64 shim.
 * Kills: the version bits not read; a version-1 program refused; the
 * refusal of version 0 kept to programs without the PTRAUTH_ABI bit.
 */
static void
test_third_party_versions(void **state)
{
	struct mc_inject	j;
	char			path[256], shim[256];

	(void)state;
	make_macho(path, sizeof path, "v0", FX_ARM64, ARM64E_V0,
	    &third_party);
	fx_expect(path, false, MC_INJECT_REFUSED, "arm64e: not Apple's, and "
	    "of the preview pointer-authentication ABI (version 0): the "
	    "kernel kills it at exec");
	make_macho(path, sizeof path, "old", FX_ARM64, ARM64E_OLD,
	    &third_party);
	fx_expect(path, false, MC_INJECT_REFUSED, "(version 0)");
	make_macho(path, sizeof path, "v1", FX_ARM64, ARM64E_V1, &third_party);
	assert_string_equal(fx_judged_slice(&fx_silicon, path, &j), "arm64e");
	fx_expect(path, false, MC_INJECT_OK, "arm64e: pointer-authentication "
	    "ABI version 1, which the kernel runs as arm64, keys off");
	fx_expect(path, false, MC_INJECT_OK, "arm64e: ad-hoc signature");
	/* Keys off, it loads arm64e or arm64; a shim of x86_64 alone no. */
	make_macho(shim, sizeof shim, "shim-x86", FX_X86_64, 3, &third_party);
	fx_expect_shim(&fx_silicon, path, shim, false, MC_INJECT_REFUSED,
	    "the shim has none it can load (it loads arm64e or arm64 "
	    "libraries;");
}

/*
 * Universal arm64 + arm64e: the kernel grades arm64e above arm64 (12 for
 * version 0, 11 for others; arm64 9 or 10: kern_machdep.c:40-103) and
 * runs it.  Of version 0 and not Apple's, the exec fails: no fallback to
 * the arm64 slice, whatever the shim has.  Of version 1 it runs, keys
 * off, and loads the arm64 shim.  Kills: the old warning ("may not fall
 * back"); a judgement that runs the arm64 slice instead.
 */
static void
test_fat_arm64_arm64e(void **state)
{
	const struct fx_slice	v0[] = {
		{ FX_BINS "/dprint", -1, FX_ARM64, 0 },
		{ FX_BINS "/dprint", -1, FX_ARM64, ARM64E_V0 },
	};
	const struct fx_slice	v1[] = {
		{ FX_BINS "/dprint", -1, FX_ARM64, 0 },
		{ FX_BINS "/dprint", -1, FX_ARM64, ARM64E_V1 },
	};
	const struct sig	apple = { true, "com.apple.shim", { NULL } };
	struct mc_inject	j;
	char			path[256], shim[256];

	(void)state;
	snprintf(path, sizeof path, "%s/fat-v0", fx_tmpdir);
	fx_make_fat(path, v0, 2);
	assert_string_equal(fx_judged_slice(&fx_silicon, path, &j), "arm64e");
	assert_string_equal(j.archs, "arm64,arm64e");
	assert_int_equal(j.verdict, MC_INJECT_REFUSED);
	fx_expect(path, false, MC_INJECT_REFUSED, "it chose this slice and "
	    "does not fall back to another");
	make_macho(shim, sizeof shim, "shim-arm64e", FX_ARM64, ARM64E_V0,
	    &apple);
	fx_expect_shim(&fx_silicon, path, shim, false, MC_INJECT_REFUSED,
	    "does not fall back to another");
	snprintf(path, sizeof path, "%s/fat-v1", fx_tmpdir);
	fx_make_fat(path, v1, 2);
	assert_string_equal(fx_judged_slice(&fx_silicon, path, &j), "arm64e");
	fx_expect(path, false, MC_INJECT_OK, "ABI version 1, which the kernel "
	    "runs as arm64");
}

/*
 * Apple's arm64e programs (platform) of version 0 run with pointer
 * authentication on and load only arm64e libraries of that version
 * (dyld archs_arm64e, the whole subtype compared), unless xnu takes them
 * for plugin hosts and turns the keys off (mach_loader.c:368-430): an
 * entitlement to load others' libraries, or a scripting engine's
 * identifier; not with override-plugin-host-detection.  Kills: plugin
 * hosts refused; the override ignored; an unversioned arm64e shim slice
 * taken for one of version 0.
 */
static void
test_apple_arm64e(void **state)
{
	const struct sig	plain = { true, "com.apple.example", { NULL } };
	const struct sig	host = { true, "com.apple.example",
	    { DISABLE_LV, NULL } };
	const struct sig	overridden = { true, "com.apple.example",
	    { DISABLE_LV, OVERRIDE } };
	const struct sig	perl = { true, "com.apple.perl5.34", { NULL } };
	const struct sig	third = { false, "com.apple.perl5", { NULL } };
	char			path[256], shim[256];

	(void)state;
	make_macho(path, sizeof path, "apple", FX_ARM64, ARM64E_V0, &plain);
	fx_expect(path, false, MC_INJECT_REFUSED, "arm64e: Apple silicon with "
	    "SIP on runs the arm64e slice, and the shim has none it can load "
	    "(with pointer authentication on it loads arm64e libraries of ABI "
	    "version 0 only");
	make_macho(shim, sizeof shim, "shim-v0", FX_ARM64, ARM64E_V0, &plain);
	fx_expect_shim(&fx_silicon, path, shim, false, MC_INJECT_OK,
	    "arm64e: ad-hoc signature");
	make_macho(shim, sizeof shim, "shim-old", FX_ARM64, ARM64E_OLD, &plain);
	fx_expect_shim(&fx_silicon, path, shim, false, MC_INJECT_REFUSED,
	    "the shim has none it can load");
	make_macho(path, sizeof path, "host", FX_ARM64, ARM64E_V0, &host);
	fx_expect(path, false, MC_INJECT_OK, "arm64e: an Apple plugin host "
	    "(com.apple.example), which the kernel runs keys off");
	make_macho(path, sizeof path, "overridden", FX_ARM64, ARM64E_V0,
	    &overridden);
	fx_expect(path, false, MC_INJECT_REFUSED, "with pointer "
	    "authentication on");
	make_macho(path, sizeof path, "perl", FX_ARM64, ARM64E_V0, &perl);
	fx_expect(path, false, MC_INJECT_OK, "an Apple plugin host "
	    "(com.apple.perl5.34)");
	/* The identifier alone makes no platform binary. */
	make_macho(path, sizeof path, "fake-perl", FX_ARM64, ARM64E_V0,
	    &third);
	fx_expect(path, false, MC_INJECT_REFUSED, "not Apple's");
}

/* Apple silicon, SIP on, launched as arch -x86_64 launches. */
static const struct mc_inject_host rosetta = { true, true, false, true };

/*
 * Launched preferring x86_64 (arch -x86_64; a parent under Rosetta), a
 * universal program runs its x86_64 slice though it has an arm64 one, and
 * that slice is judged, with the shim's x86_64 slice; with no x86_64
 * slice the exec fails.  The default stays the kernel's own choice.
 * Kills: the preference ignored (the arm64 slice judged); the arm64 shim
 * slice taken for an x86_64 process.
 */
static void
test_x86_64_preferred(void **state)
{
	const struct fx_slice	hardened_x86[] = {
		{ FX_BINS "/dprint", -1, FX_ARM64, 0 },
		{ FX_BINS "/sentry-cli", 0, FX_X86_64, 3 },
	};
	const struct fx_slice	arm64e_x86[] = {
		{ FX_BINS "/dprint", -1, FX_ARM64, ARM64E_V0 },
		{ FX_BINS "/dprint", -1, FX_X86_64, 3 },
	};
	struct mc_inject	j;
	char			path[256], shim[256];

	(void)state;
	snprintf(path, sizeof path, "%s/fat-hardened-x86", fx_tmpdir);
	fx_make_fat(path, hardened_x86, 2);
	assert_string_equal(fx_judged_slice(&fx_silicon, path, &j), "arm64");
	assert_int_equal(j.verdict, MC_INJECT_OK);
	assert_string_equal(fx_judged_slice(&rosetta, path, &j), "x86_64");
	assert_string_equal(j.host, "Apple silicon with SIP on, launched "
	    "preferring x86_64");
	fx_expect_on(&rosetta, path, false, MC_INJECT_REFUSED, "x86_64: "
	    "hardened runtime without");
	/* A third-party arm64e v0 program does not run natively; its
	 * x86_64 slice does, and takes the shim. */
	snprintf(path, sizeof path, "%s/fat-arm64e-x86", fx_tmpdir);
	fx_make_fat(path, arm64e_x86, 2);
	fx_expect(path, false, MC_INJECT_REFUSED, "(version 0)");
	fx_expect_on(&rosetta, path, false, MC_INJECT_WARN, "x86_64: ad-hoc "
	    "signature");
	/* The x86_64 process needs the shim's x86_64 slice. */
	make_macho(shim, sizeof shim, "shim-arm64", FX_ARM64, 0, &third_party);
	fx_expect_shim(&rosetta, path, shim, false, MC_INJECT_REFUSED,
	    "x86_64: Apple silicon with SIP on, launched preferring x86_64 "
	    "runs the x86_64 slice, and the shim has none it can load (an "
	    "x86_64 process loads x86_64 libraries only");
	/* An arm64-only program: arch -x86_64 cannot run it. */
	fx_expect_on(&rosetta, FX_BINS "/deno", false, MC_INJECT_REFUSED,
	    "no slice of arm64 runs on Apple silicon with SIP on, launched "
	    "preferring x86_64: the kernel runs the x86_64 slice asked for, "
	    "or fails the exec");
}

/*
 * A launch preferring x86_64 through /usr/bin/arch: while SIP is on, dyld
 * strips DYLD_* from arch, which execs the program with what is left, so
 * the judgement says how to pass the shim on (arch -e); with SIP off arch
 * keeps them.  An unsigned x86_64 program runs, translated or on Intel:
 * no "unsigned arm64" warning for it.  Kills: the arch finding dropped;
 * unsigned x86_64 taken for unsigned arm64.
 */
static void
test_arch_launch(void **state)
{
	const struct mc_inject_host	rosetta_off = { true, false, false,
	    true };
	const struct mc_inject_host	intel_x86 = { false, true, false,
	    true };
	struct mc_inject		j;
	char				path[256], shim[256];
	int				i;

	(void)state;
	make_macho(path, sizeof path, "x86-unsigned", FX_X86_64, 3, NULL);
	make_macho(shim, sizeof shim, "shim-x86", FX_X86_64, 3, &third_party);
	fx_expect_shim(&rosetta, path, shim, false, MC_INJECT_WARN,
	    "arch -x86_64 starts it without the shim: dyld strips DYLD_* "
	    "from the SIP-protected arch; run arch -x86_64 -e "
	    "DYLD_INSERT_LIBRARIES=");
	fx_expect_shim(&intel_x86, path, shim, false, MC_INJECT_WARN,
	    "arch -x86_64 -e DYLD_INSERT_LIBRARIES=");
	mc_inject_judge(path, shim, false, &rosetta, &j);
	for (i = 0; i < j.n; i++)
		if (strstr(j.findings[i].text, "arch -x86_64 -e") != NULL)
			assert_non_null(strstr(j.findings[i].text, shim));
	fx_expect_shim(&rosetta, path, shim, false, MC_INJECT_WARN,
	    "x86_64: not signed, which x86_64 code need not be");
	/* SIP off: arch passes DYLD_* on, and nothing else is wrong. */
	fx_expect_shim(&rosetta_off, path, shim, false, MC_INJECT_OK,
	    "launched by arch -x86_64: SIP is off");
	mc_inject_judge(path, shim, false, &rosetta_off, &j);
	for (i = 0; i < j.n; i++)
		assert_null(strstr(j.findings[i].text, "unsigned arm64"));
	/* Launched natively, arch plays no part. */
	mc_inject_judge(path, shim, false, &fx_silicon, &j);
	for (i = 0; i < j.n; i++)
		assert_null(strstr(j.findings[i].text, "arch -x86_64"));
}

/* metalcapctl check --arch: native (the default) or x86_64, nothing else. */
static void
test_check_arch(void **state)
{
	char			 path[256];
	const char		*x86[] = { CTL, "check", "--json", "--arch",
	    "x86_64", path, NULL };
	const char		*native[] = { CTL, "check", "--json", "--arch",
	    "native", path, NULL };
	const char		*bad[] = { CTL, "check", "--arch", "arm64",
	    path, NULL };
	char			*env[CHILD_ENV_MAX];
	struct child_result	 r;

	(void)state;
	snprintf(path, sizeof path, "%s/fat-hardened-x86", fx_tmpdir);
	child_env(env, NULL);
	assert_int_equal(child_run(x86, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 4);
	assert_non_null(strstr(r.out, "\"slice\": \"x86_64\""));
	assert_non_null(strstr(r.out, "launched preferring x86_64\""));
	assert_int_equal(child_run(native, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_non_null(strstr(r.out, "\"slice\": \"arm64\""));
	assert_int_equal(child_run(bad, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 2);
	assert_non_null(strstr(r.err, "--arch arm64: expected native or "
	    "x86_64"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_third_party_versions),
		cmocka_unit_test(test_fat_arm64_arm64e),
		cmocka_unit_test(test_apple_arm64e),
		cmocka_unit_test(test_x86_64_preferred),
		cmocka_unit_test(test_arch_launch),
		cmocka_unit_test(test_check_arch),
	};

	/* MC_TEST_ONLY=pattern runs the matching tests (make mutate). */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("injection: slices and ABIs", tests,
	    fx_setup, fx_teardown);
}
