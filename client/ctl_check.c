/* SPDX-License-Identifier: MIT */
/*
 * check PROGRAM: before launching, can the shim be injected into it?  The
 * program's own file is read (mc_inject_judge: Mach-O slices, hardened
 * runtime, entitlements, library validation, setuid, #! interpreters, SIP
 * paths), the same judgement job files get.  --arch x86_64 judges the
 * slice arch -x86_64 (or a parent under Rosetta) runs, and the shim's
 * x86_64 slice.  Runs without the daemon.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "mc_macho.h"
#include "mc_util.h"

/* 0x000e0500 as "14.5". */
static void
ctl_check_version(uint32_t v, char *buf, size_t len)
{
	if ((v & 0xff) != 0)
		snprintf(buf, len, "%u.%u.%u", v >> 16, (v >> 8) & 0xff,
		    v & 0xff);
	else
		snprintf(buf, len, "%u.%u", v >> 16, (v >> 8) & 0xff);
}

/*
 * The reverse of the probe's bfloat check: a program built with an SDK
 * before macOS 14 gets an MSL below 3.1 by default (mc_macho_default_msl).
 * ggml compiles its library at the default (it sets languageVersion only
 * for the tensor API) and kernels/common.h:31 then undefines
 * GGML_METAL_HAS_BF16, while ggml-metal-device.m:1121-1122 sets has_bfloat
 * from Metal3 or Apple6, which every shipped profile answers: BF16 models
 * abort on a missing kernel.  Said for the slice that runs.
 */
static void
ctl_check_msl(struct mc_inject *j)
{
	struct mc_macho			 m;
	const struct mc_macho_slice	*s = NULL;
	char				 why[256], sdk[24], minos[24];
	unsigned long			 msl;
	int				 i;

	if (mc_macho_read(j->program, &m, why, sizeof why) == -1)
		return;
	for (i = 0; i < m.nslices; i++)
		if (strcmp(mc_macho_arch_name(m.slices[i].cputype,
		    m.slices[i].cpusubtype), j->slice) == 0)
			s = &m.slices[i];
	if (s == NULL || (msl = mc_macho_default_msl(s->sdk)) == 0 ||
	    msl >= 0x30001)
		return;
	ctl_check_version(s->sdk, sdk, sizeof sdk);
	ctl_check_version(s->minos, minos, sizeof minos);
	/* findings hold 255 characters: said short. */
	mc_inject_say(j, MC_INJECT_WARN, "built with the macOS %s SDK (%s "
	    "%s): Metal's default MSL is %lu.%lu, so ggml drops its bf16 "
	    "kernels but an Apple6+ profile sets has_bfloat: BF16 models "
	    "abort; build for macOS 14+ or set GGML_METAL_BF16_DISABLE=1",
	    sdk, s->build_version ? "minimum" : "LC_VERSION_MIN_MACOSX", minos,
	    msl >> 16, msl & 0xffff);
}

int
cmd_check(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	struct mc_inject	 j;
	struct mc_inject_host	 host;
	json_t			*doc, *findings;
	const char		*where;
	int			 i;

	(void)cmd;
	(void)argc;
	/* This Mac, unless told another. */
	platform_inject_host(&host);
	if (c->opts.given & CTL_OPT_MACHINE) {
		host.apple_silicon = !c->opts.intel;
		host.detected = false;
	}
	if (c->opts.given & CTL_OPT_SIP) {
		host.sip = c->opts.sip;
		host.detected = false;
	}
	/* How it is launched, not what the Mac is: detected stays. */
	if (c->opts.given & CTL_OPT_ARCH)
		host.x86_64 = c->opts.x86_64;
	mc_inject_judge(argv[0], c->paths.shim, c->opts.given &
	    CTL_OPT_INHERIT, &host, &j);
	if (j.verdict != MC_INJECT_REFUSED)
		ctl_check_msl(&j);
	/* Fine for exec from a terminal; a job cannot even start it. */
	if ((where = mc_protected_folder(argv[0])) != NULL)
		mc_inject_say(&j, MC_INJECT_WARN, "%s is in %s, which macOS "
		    "keeps from launchd agents (\"Operation not permitted\"): "
		    "a job cannot run it there; move it, or allow it in System "
		    "Settings, Privacy & Security", argv[0], where);
	if (c->json) {
		findings = json_array();
		for (i = 0; i < j.n; i++)
			json_array_append_new(findings, json_pack("{s:s, s:s}",
			    "level", mc_inject_level_name(j.findings[i].level),
			    "text", j.findings[i].text));
		doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "path",
		    argv[0], "program", j.program, "archs", j.archs, "slice",
		    j.slice, "machine", j.host, "verdict",
		    mc_inject_level_name(j.verdict), "findings", findings);
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		json_decref(doc);
	} else {
		printf("%s: %s\n", argv[0], j.verdict == MC_INJECT_REFUSED ?
		    "refused: the shim cannot be injected; it would run stock" :
		    j.verdict == MC_INJECT_WARN ? "injectable, with warnings" :
		    "injectable");
		printf("  judged for %s%s%s\n", j.host, j.slice[0] ?
		    ", which runs its " : "", j.slice[0] ? j.slice : "");
		for (i = 0; i < j.n; i++)
			printf("  %-8s %s\n", mc_inject_level_name(
			    j.findings[i].level), j.findings[i].text);
	}
	return j.verdict == MC_INJECT_REFUSED ? EXIT_UNHEALTHY : 0;
}
