/* SPDX-License-Identifier: MIT */
/*
 * The probe gate: a profile runs unlocked only after metalcap-probe, run
 * with that profile's shim environment, says its overrides work on this
 * device.  The probe runs asynchronously with a deadline; its verdict is
 * cached per profile and dropped when the profile's values, the shim or
 * the probe change, and on request (enable, profile change).
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "mc_util.h"
#include "mcd.h"

/* Each stage inside the probe: a cold Metal compile (probe.h). */
#define GATE_STAGE_TIMEOUT_MS	30000

extern char **environ;

struct gate_waiter {
	gate_done_fn		 fn;
	void			*arg;
	struct gate_waiter	*next;
};

/* What identifies the binaries a verdict was reached with. */
static void
gate_stamp(struct mcd *d, char *buf, size_t len)
{
	struct stat	a, b;

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	stat(d->paths.shim, &a);
	stat(d->paths.probe, &b);
	snprintf(buf, len, "%llu.%lld.%lld/%llu.%lld.%lld",
	    (unsigned long long)a.st_ino, (long long)a.st_size,
	    (long long)a.st_mtime, (unsigned long long)b.st_ino,
	    (long long)b.st_size, (long long)b.st_mtime);
}

static struct gate_entry *
gate_find(struct mcd *d, const char *profile)
{
	size_t	i;

	for (i = 0; i < d->ngates; i++)
		if (strcmp(d->gates[i]->profile, profile) == 0)
			return d->gates[i];
	return NULL;
}

/* The shim's variables for profile p, after the daemon's environment. */
static char **
gate_env(struct mcd *d, const struct profile *p)
{
	size_t	 n = 0, i;
	char	**env;
	char	 buf[PATH_MAX + 64];
	const char *inject = platform_inject_var();

	for (i = 0; environ[i] != NULL; i++)
		;
	env = calloc(i + 8, sizeof *env);
	for (i = 0; environ[i] != NULL; i++)
		if (strncmp(environ[i], "METALCAP_", 9) != 0 &&
		    strncmp(environ[i], "LUME_METAL_", 11) != 0 &&
		    strncmp(environ[i], inject, strlen(inject)) != 0)
			env[n++] = strdup(environ[i]);
	if (p->family_max == 0)
		return env;
	mc_fmt(buf, sizeof buf, "%s=%s", inject, d->paths.shim);
	env[n++] = strdup(buf);
	snprintf(buf, sizeof buf, "METALCAP_APPLE_FAMILY_MAX=%llu",
	    (unsigned long long)p->family_max);
	env[n++] = strdup(buf);
	snprintf(buf, sizeof buf, "METALCAP_MAX_THREADGROUP_MEMORY=%llu",
	    (unsigned long long)p->threadgroup_memory);
	env[n++] = strdup(buf);
	if (p->working_set != 0) {
		snprintf(buf, sizeof buf, "METALCAP_RECOMMENDED_WORKING_SET_SIZE"
		    "=%llu", (unsigned long long)p->working_set);
		env[n++] = strdup(buf);
	}
	/* The probe re-runs itself to point the shim's report at itself. */
	env[n++] = strdup("METALCAP_INHERIT=1");
	return env;
}

static void
gate_free_env(char **env)
{
	size_t	i;

	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
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

static void
gate_done(struct mcd *d, const struct launchctl_result *r, void *arg)
{
	struct gate_entry	*e = arg;
	struct gate_waiter	*w, *next;
	const struct profile	*p = profile_find(&d->profiles, e->profile);
	struct mcd_event	 ev = { .job = NULL };

	gate_judge(e, e->family != 0, r);
	e->done = true;
	e->time = (long)time(NULL);
	log_info("probe of profile %s: %s%s%s", e->profile,
	    e->status == GATE_PASS ? "pass" : e->status == GATE_PARTIAL ?
	    "partial" : "FAIL", e->reason[0] ? ": " : "", e->reason);
	e->running = false;
	/* A request to re-probe arrived meanwhile: this verdict is old. */
	if (e->rerun && p != NULL) {
		e->rerun = false;
		gate_run(d, p);
		return;
	}
	w = e->waiters;
	e->waiters = NULL;
	for (; w != NULL; w = next) {
		next = w->next;
		w->fn(d, e, w->arg);
		free(w);
	}
	/* The jobs on this profile hear the verdict. */
	ev.profile = e->profile;
	ev.type = e->status == GATE_PASS ? LC_EV_PROBE_PASS :
	    e->status == GATE_PARTIAL ? LC_EV_PROBE_PARTIAL : LC_EV_PROBE_FAIL;
	d->emit(d, &ev);
}

/* Start a probe of profile p (or note that one more is wanted). */
void
gate_run(struct mcd *d, const struct profile *p)
{
	struct gate_entry	*e = gate_find(d, p->name);
	char			 stage[16];
	char			*argv[] = { d->paths.probe, "--json",
	    "--timeout-ms", stage, NULL };
	char			**env;

	/* A stage never outlives the whole probe's deadline. */
	snprintf(stage, sizeof stage, "%d", d->probe_timeout_ms <
	    GATE_STAGE_TIMEOUT_MS ? d->probe_timeout_ms : GATE_STAGE_TIMEOUT_MS);

	if (e == NULL) {
		e = calloc(1, sizeof *e);
		snprintf(e->profile, sizeof e->profile, "%s", p->name);
		d->gates = realloc(d->gates, (d->ngates + 1) *
		    sizeof *d->gates);
		d->gates[d->ngates++] = e;
	}
	if (e->running) {
		e->rerun = true;
		return;
	}
	e->running = true;
	e->family = p->family_max;
	e->tg = p->threadgroup_memory;
	e->ws = p->working_set;
	gate_stamp(d, e->stamp, sizeof e->stamp);
	json_decref(e->report);
	e->report = NULL;
	e->done = false;
	log_info("probing profile %s", p->name);
	env = gate_env(d, p);
	proc_run(d, argv, env, d->probe_timeout_ms, gate_done, e);
	gate_free_env(env);
}

/* The cached verdict for p if it is still valid, else NULL. */
const struct gate_entry *
gate_peek(struct mcd *d, const struct profile *p)
{
	struct gate_entry	*e = gate_find(d, p->name);
	char			 stamp[sizeof e->stamp];

	if (e == NULL || e->running || !e->done)
		return NULL;
	gate_stamp(d, stamp, sizeof stamp);
	if (e->family != p->family_max || e->tg != p->threadgroup_memory ||
	    e->ws != p->working_set || strcmp(e->stamp, stamp) != 0)
		return NULL;
	return e;
}

/* The cached verdict for p if still valid; else NULL and a probe runs. */
const struct gate_entry *
gate_verdict(struct mcd *d, const struct profile *p)
{
	const struct gate_entry	*e = gate_peek(d, p);
	const struct gate_entry	*known = gate_find(d, p->name);

	if (e == NULL && (known == NULL || !known->running))
		gate_run(d, p);
	return e;
}

/* Forget the verdict for a profile: the next use probes again. */
void
gate_invalidate(struct mcd *d, const char *profile)
{
	struct gate_entry	*e = gate_find(d, profile);

	if (e == NULL)
		return;
	if (e->running)
		e->rerun = true;
	else
		e->done = false;
}

/* Run a fresh probe of p and call fn with its verdict. */
void
gate_wait(struct mcd *d, const struct profile *p, gate_done_fn fn, void *arg)
{
	struct gate_entry	*e;
	struct gate_waiter	*w = calloc(1, sizeof *w);

	gate_invalidate(d, p->name);
	gate_run(d, p);
	e = gate_find(d, p->name);
	w->fn = fn;
	w->arg = arg;
	w->next = e->waiters;
	e->waiters = w;
}
