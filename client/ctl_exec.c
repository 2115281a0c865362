/* SPDX-License-Identifier: MIT */
/*
 * exec [--profile P] [--report FILE] -- PROGRAM [ARG]...: one command with
 * the shim, by hand (llama-bench, llama-cli, a script's own interpreter),
 * then on stderr whether the shim's report for its pid proves the
 * injection.  Exits with the program's status; 125 to 127 are ours, as
 * env(1) has them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl.h"
#include "mc_plist.h"
#include "mc_util.h"
#include "protocol.h"

/* Outside text as a JSON string: whole UTF-8 characters, controls as '?'. */
static json_t *
ctl_exec_text(const char *s)
{
	char	buf[PATH_MAX + 64];

	mc_text(buf, sizeof buf, s);
	return json_string(buf);
}

/* What --report FILE holds: the run, the profile, the proof. */
static json_t *
ctl_exec_json(const struct ctl_unlock *u, const struct ctl_outcome *o,
    int argc, char **argv)
{
	const struct shim_seen	*s = &o->seen;
	json_t			*args = json_array();
	int			 i;

	for (i = 0; i < argc; i++)
		json_array_append_new(args, ctl_exec_text(argv[i]));
	return json_pack("{s:s, s:o, s:o, s:I, s:i, s:s, s:I, s:I, "
	    "s:{s:s, s:o, s:o}, s:b, s:o, s:o}",
	    "metalcapctl", MC_VERSION, "program", ctl_exec_text(u->program),
	    "argv", args,
	    "pid", (json_int_t)o->pid, "status", o->status,
	    "profile", u->profile->name,
	    "family_max", (json_int_t)u->profile->family_max,
	    "threadgroup_memory", (json_int_t)u->profile->threadgroup_memory,
	    "probe", "verdict", u->verdict, "by", ctl_exec_text(u->prober),
	    "device", ctl_exec_text(u->device), "injected", o->injected,
	    "why", ctl_exec_text(o->why),
	    "shim", !s->present ? json_null() : json_pack("{s:s, s:s, s:s, "
	    "s:I, s:I, s:s}", "state", s->state, "class", s->klass, "hooked",
	    s->hooked, "family_max", (json_int_t)s->family_max,
	    "threadgroup_memory", (json_int_t)s->threadgroup_memory,
	    "reason", strcmp(s->reason, "-") ? s->reason : ""));
}

/*
 * Write --report FILE as a new file renamed into place: whatever the run
 * left at that name meanwhile (a link, a FIFO) is replaced, never
 * followed or waited on.
 */
static void
ctl_exec_report(const char *file, const struct ctl_unlock *u,
    const struct ctl_outcome *o, int argc, char **argv)
{
	json_t	*doc = ctl_exec_json(u, o, argc, argv);
	char	*text = doc ? json_dumps(doc, JSON_INDENT(2) |
	    JSON_SORT_KEYS) : NULL, why[PATH_MAX + 64];

	if (text == NULL || mc_write_atomic(file, text, strlen(text), 0644,
	    why, sizeof why) == -1)
		fprintf(stderr, "metalcapctl: exec: --report %s: %s\n", file,
		    text ? why : "cannot write it");
	free(text);
	json_decref(doc);
}

int
cmd_exec(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	struct ctl_unlock	 u;
	struct ctl_outcome	 o;
	int			 rc;

	(void)cmd;
	/* A report left from an earlier run must not pass for this one's. */
	if (c->opts.report != NULL && unlink(c->opts.report) == -1 &&
	    errno != ENOENT) {
		fprintf(stderr, "metalcapctl: exec: --report %s: %s\n",
		    c->opts.report, strerror(errno));
		return EXIT_EXEC_REFUSED;
	}
	ctl_signals_catch();
	if (ctl_unlock_prepare(c, argv[0], false, &u) == -1) {
		fprintf(stderr, "metalcapctl: exec: %s\n", u.why);
		ctl_unlock_free(&u);
		ctl_signals_die();
		return u.not_found ? EXIT_EXEC_NOTFOUND : EXIT_EXEC_REFUSED;
	}
	if (ctl_run(c, &u, true, argv, -1, -1, &o) == -1) {
		fprintf(stderr, "metalcapctl: exec: %s\n", o.why);
		ctl_unlock_free(&u);
		ctl_signals_die();
		return o.status;
	}
	fprintf(stderr, "metalcapctl: exec: %s %s: %s\n", o.injected ?
	    "unlocked by profile" : "STOCK, not unlocked by profile",
	    u.profile->name, o.why);
	rc = o.status;
	if (c->opts.report != NULL)
		ctl_exec_report(c->opts.report, &u, &o, argc, argv);
	ctl_unlock_free(&u);
	ctl_signals_settle(rc);
	ctl_signals_die();
	return rc;
}
