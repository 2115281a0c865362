/* SPDX-License-Identifier: MIT */
/*
 * check PROGRAM: before launching, can the shim be injected into it?  The
 * program's own file is read (mc_inject_judge: Mach-O slices, hardened
 * runtime, entitlements, library validation, setuid, #! interpreters, SIP
 * paths), the same judgement job files get.  Runs without the daemon.
 */
#include <stdio.h>

#include <jansson.h>

#include "ctl.h"
#include "mc_macho.h"

int
cmd_check(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	struct mc_inject	 j;
	json_t			*doc, *findings;
	int			 i;

	(void)cmd;
	(void)argc;
	mc_inject_judge(argv[0], c->paths.shim, c->opts.given &
	    CTL_OPT_INHERIT, &j);
	if (c->json) {
		findings = json_array();
		for (i = 0; i < j.n; i++)
			json_array_append_new(findings, json_pack("{s:s, s:s}",
			    "level", mc_inject_level_name(j.findings[i].level),
			    "text", j.findings[i].text));
		doc = json_pack("{s:s, s:s, s:s, s:s, s:o}", "path", argv[0],
		    "program", j.program, "archs", j.archs, "verdict",
		    mc_inject_level_name(j.verdict), "findings", findings);
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		json_decref(doc);
	} else {
		printf("%s: %s%s\n", argv[0], j.verdict == MC_INJECT_REFUSED ?
		    "refused: the shim cannot be injected; it would run stock" :
		    j.verdict == MC_INJECT_WARN ? "injectable, with warnings" :
		    "injectable", j.archs[0] ? "" : "");
		for (i = 0; i < j.n; i++)
			printf("  %-8s %s\n", mc_inject_level_name(
			    j.findings[i].level), j.findings[i].text);
	}
	return j.verdict == MC_INJECT_REFUSED ? EXIT_UNHEALTHY : 0;
}
