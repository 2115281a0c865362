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

#include <jansson.h>

#include "ctl.h"
#include "mc_macho.h"
#include "mc_util.h"

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
