/* SPDX-License-Identifier: MIT */
/*
 * The probe gate's pure half: the environment a profile's shim is given,
 * and the verdict on what metalcap-probe said back.  No event loop here,
 * so metalcapctl exec and bench judge a probe they ran themselves exactly
 * as the daemon judges its own (gate.c runs the probe asynchronously).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mc_util.h"
#include "policy.h"

extern char **environ;

static char *
gate_env_var(const char *name, unsigned long long value)
{
	char	buf[128];

	snprintf(buf, sizeof buf, "%s=%llu", name, value);
	return strdup(buf);
}

/*
 * This process's environment without any shim variable, then profile p's
 * (none for stock, or family 0): the library, its values, whether children
 * inherit it, and where it reports (NULL: nowhere).  NULL if a path does
 * not fit.  Free with mc_strv_free.
 */
char **
gate_env(const char *shim, const struct profile *p, bool inherit,
    const char *report)
{
	const char	*inject = platform_inject_var();
	size_t		 n = 0, i, ilen = strlen(inject);
	char		**env, buf[PATH_MAX + 64];

	for (i = 0; environ[i] != NULL; i++)
		;
	env = calloc(i + 8, sizeof *env);
	for (i = 0; environ[i] != NULL; i++)
		if (strncmp(environ[i], "METALCAP_", 9) != 0 &&
		    strncmp(environ[i], "LUME_METAL_", 11) != 0 &&
		    !(strncmp(environ[i], inject, ilen) == 0 &&
		    environ[i][ilen] == '='))
			env[n++] = strdup(environ[i]);
	if (p == NULL || p->family_max == 0)
		return env;
	if (mc_fmt(buf, sizeof buf, "%s=%s", inject, shim) == -1 ||
	    (report != NULL && strlen(report) > PATH_MAX)) {
		mc_strv_free(env);
		return NULL;
	}
	env[n++] = strdup(buf);
	env[n++] = gate_env_var("METALCAP_APPLE_FAMILY_MAX", p->family_max);
	env[n++] = gate_env_var("METALCAP_MAX_THREADGROUP_MEMORY",
	    p->threadgroup_memory);
	if (p->working_set != 0)
		env[n++] = gate_env_var("METALCAP_RECOMMENDED_WORKING_SET_SIZE",
		    p->working_set);
	env[n++] = strdup(inherit ? "METALCAP_INHERIT=1" :
	    "METALCAP_INHERIT=0");
	if (report != NULL) {
		snprintf(buf, sizeof buf, "METALCAP_REPORT=%s", report);
		env[n++] = strdup(buf);
	}
	return env;
}

/* The first failed check as "check NAME failed: ERROR". */
static bool
gate_failed_check(json_t *report, const char *only, char *buf, size_t len)
{
	json_t		*c;
	size_t		 i;
	const char	*name;

	json_array_foreach(json_object_get(report, "checks"), i, c) {
		name = json_string_value(json_object_get(c, "name"));
		if (name == NULL || json_is_true(json_object_get(c, "skipped")) ||
		    json_is_true(json_object_get(c, "correct")))
			continue;
		if (only != NULL && strcmp(name, only) != 0)
			continue;
		snprintf(buf, len, "check %s failed: %s", name,
		    json_is_string(json_object_get(c, "error")) ?
		    json_string_value(json_object_get(c, "error")) : "no detail");
		return true;
	}
	return false;
}

/*
 * Whether every failed check is one the overrides do not cause, whose cure
 * is the workload's: nocopy_mmap (stale no-copy buffers over a file
 * mapping on macOS 14 guests; llama.cpp's --no-mmap).  The probe's
 * verdict leaves it out; the gate passes and keeps its words as the reason.
 */
static bool
gate_only_hazards(json_t *report)
{
	json_t		*c;
	size_t		 i;
	const char	*name;
	bool		 any = false;

	json_array_foreach(json_object_get(report, "checks"), i, c) {
		name = json_string_value(json_object_get(c, "name"));
		if (json_is_true(json_object_get(c, "skipped")) ||
		    json_is_true(json_object_get(c, "correct")))
			continue;
		if (name == NULL || strcmp(name, "nocopy_mmap") != 0)
			return false;
		any = true;
	}
	return any;
}

/* Turn the probe's exit and report into a verdict (the fuzzers call it). */
void
gate_judge(struct gate_entry *e, bool injected,
    const struct launchctl_result *r)
{
	json_t	*verdict;
	bool	 family, tg;

	e->report = json_loads(r->out, 0, NULL);
	if (e->report == NULL) {
		char	out[64];
		size_t	i;

		/* What it printed instead, made printable. */
		for (i = 0; i < sizeof out - 1 && r->out[i] != '\0'; i++)
			out[i] = r->out[i] >= 0x20 && r->out[i] < 0x7f ?
			    r->out[i] : '?';
		out[i] = '\0';
		e->status = GATE_FAIL;
		if (r->signal != 0)
			snprintf(e->reason, sizeof e->reason, "the probe died "
			    "of signal %d before its report", r->signal);
		else
			snprintf(e->reason, sizeof e->reason, "the probe gave "
			    "no report (exit %d): %s%s%s%.200s", r->code,
			    out[0] ? "output '" : "", out, out[0] ? "' " : "",
			    r->err);
		/* One line: it is a job's reason in status and the log. */
		for (i = 0; e->reason[i] != '\0'; i++)
			if (e->reason[i] == '\n' || e->reason[i] == '\r')
				e->reason[i] = ' ';
		return;
	}
	if (r->code == 3 || r->code == 4) {
		e->status = GATE_FAIL;
		snprintf(e->reason, sizeof e->reason, "%s", r->code == 3 ?
		    "the probe found no Metal device" : "the probe timed out");
		return;
	}
	if (injected && !json_is_object(json_object_get(e->report, "shim"))) {
		e->status = GATE_FAIL;
		snprintf(e->reason, sizeof e->reason, "the shim did not load "
		    "into the probe");
		return;
	}
	verdict = json_object_get(e->report, "verdict");
	family = json_is_true(json_object_get(verdict, "family"));
	tg = json_is_true(json_object_get(verdict, "threadgroup"));
	if (family && tg && r->code == 0) {
		e->status = GATE_PASS;
		e->reason[0] = '\0';
	} else if (family && tg && r->code == 1 &&
	    gate_only_hazards(e->report)) {
		/* Passed, with the hazard named: the reason says --no-mmap. */
		e->status = GATE_PASS;
		gate_failed_check(e->report, NULL, e->reason,
		    sizeof e->reason);
	} else if (family && !tg) {
		char	why[400] = "threadgroup_advertised failed";

		gate_failed_check(e->report, "threadgroup_advertised", why,
		    sizeof why);
		e->status = GATE_PARTIAL;
		snprintf(e->reason, sizeof e->reason, "threadgroup override "
		    "dropped: %s", why);
	} else {
		e->status = GATE_FAIL;
		if (!gate_failed_check(e->report, NULL, e->reason,
		    sizeof e->reason))
			snprintf(e->reason, sizeof e->reason, "the probe failed "
			    "(exit %d)", r->code);
	}
}


/* A verdict in the protocol's words (status, the fleet file, exec). */
const char *
gate_word(const struct gate_entry *e)
{
	return e->status == GATE_PASS ? "pass" : e->status == GATE_PARTIAL ?
	    "partial" : "fail";
}
