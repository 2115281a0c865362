/* SPDX-License-Identifier: MIT */
/*
 * The probe gate: a profile runs unlocked only after metalcap-probe, run
 * with that profile's shim environment, says its overrides work on this
 * device.  The probe runs asynchronously with a deadline; its verdict is
 * cached per profile and dropped when the profile's values, the shim or
 * the probe change, and on request (enable, profile change).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "mc_util.h"
#include "mcd.h"

/* Each stage inside the probe: a cold Metal compile (probe.h). */
#define GATE_STAGE_TIMEOUT_MS	30000

struct gate_waiter {
	gate_done_fn		 fn;
	void			*arg;
	uint64_t		 run;	/* the probe it waits for (e->runs) */
	struct gate_waiter	*next;
};

/*
 * What identifies the binaries a verdict was reached with.  Read once a
 * turn of the loop: a status of a hundred jobs of profile auto asks it of
 * every profile of every job, two stats each, within one turn.
 */
static void
gate_stamp(struct mcd *d, char *buf, size_t len)
{
	static char	 kept[sizeof ((struct gate_entry *)0)->stamp];
	static uint64_t	 kept_turn;
	char		 shim[128], probe[128];

	if (d->turn == 0 || d->turn != kept_turn) {
		mc_file_stamp(d->paths.shim, shim, sizeof shim);
		mc_file_stamp(d->paths.probe, probe, sizeof probe);
		snprintf(kept, sizeof kept, "%s / %s", shim, probe);
		kept_turn = d->turn;
	}
	snprintf(buf, len, "%s", kept);
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

/*
 * Answer the waiters whose probe (this one, or an earlier) is done; all of
 * them when no later probe will come (the profile is gone).
 */
static void
gate_answer(struct mcd *d, struct gate_entry *e, bool all)
{
	struct gate_waiter	*w, **at = &e->waiters, *ready = NULL;

	while ((w = *at) != NULL)
		if (all || w->run <= e->runs) {
			*at = w->next;
			w->next = ready;
			ready = w;
		} else
			at = &w->next;
	for (; ready != NULL; ready = w) {
		w = ready->next;
		ready->fn(d, e, ready->arg);
		free(ready);
	}
}

/*
 * A profile whose newest verify on this guest failed is held back as a
 * failed probe holds it: the kernels answered wrong on a whole model,
 * which the probe's small checks cannot see (policy/verified.c).
 */
static void
gate_held_back(struct mcd *d, struct gate_entry *e)
{
	if (e->family == 0 || e->status == GATE_FAIL ||
	    !verified_holds_back(d->verified, e->profile))
		return;
	e->status = GATE_FAIL;
	verified_why(d->verified, e->profile, e->reason, sizeof e->reason);
}

static void
gate_done(struct mcd *d, const struct launchctl_result *r, void *arg)
{
	struct gate_entry	*e = arg;
	const struct profile	*p = profile_find(&d->profiles, e->profile);
	struct mcd_event	 ev = { .job = NULL };

	gate_judge(e, e->family != 0, r);
	gate_held_back(d, e);
	e->done = true;
	e->failed_last = e->status == GATE_FAIL;
	e->time = (long)time(NULL);
	log_info("probe of profile %s: %s%s%s", e->profile,
	    e->status == GATE_PASS ? "pass" : e->status == GATE_PARTIAL ?
	    "partial" : "FAIL", e->reason[0] ? ": " : "", e->reason);
	e->running = false;
	gate_answer(d, e, p == NULL);
	/*
	 * The jobs on this profile hear the verdict, unless the profile's
	 * values changed while it ran; a request to re-probe that arrived
	 * meanwhile gets its own, later probe, and does not hold this
	 * verdict back (probe requests in a row would starve the jobs).
	 */
	if (p == NULL || (e->family == p->family_max &&
	    e->tg == p->threadgroup_memory && e->ws == p->working_set)) {
		ev.profile = e->profile;
		ev.type = e->status == GATE_PASS ? LC_EV_PROBE_PASS :
		    e->status == GATE_PARTIAL ? LC_EV_PROBE_PARTIAL :
		    LC_EV_PROBE_FAIL;
		d->emit(d, &ev);
	} else
		e->rerun = true;
	if (e->rerun && p != NULL && (e = gate_find(d, p->name)) != NULL &&
	    !e->running) {
		e->rerun = false;
		gate_run(d, p);
	}
}

/* Start a probe of profile p (or note that one more is wanted). */
void
gate_run(struct mcd *d, const struct profile *p)
{
	struct gate_entry	*e = gate_find(d, p->name);
	char			 stage[16], stamp[sizeof e->stamp];
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
	e->runs++;
	/* The last verdict stays in force only for a re-check of the same
	 * values and binaries: new ones are unproven until this probe ends. */
	gate_stamp(d, stamp, sizeof stamp);
	if (e->family != p->family_max || e->tg != p->threadgroup_memory ||
	    e->ws != p->working_set || strcmp(e->stamp, stamp) != 0)
		e->done = false;
	e->family = p->family_max;
	e->tg = p->threadgroup_memory;
	e->ws = p->working_set;
	snprintf(e->stamp, sizeof e->stamp, "%s", stamp);
	json_decref(e->report);
	e->report = NULL;
	log_info("probing profile %s", p->name);
	/* The probe re-runs itself to point the shim's report at itself. */
	env = gate_env(d->paths.shim, p, true, NULL);
	proc_run(d, argv, env, d->probe_timeout_ms, gate_done, e);
	mc_strv_free(env);
}

/*
 * The cached verdict for p if it is still valid, else NULL.  A probe that
 * only re-checks (a probe request) leaves the last verdict in force until
 * its own comes; one for new values or binaries does not (the values and
 * stamp below differ).
 */
const struct gate_entry *
gate_peek(struct mcd *d, const struct profile *p)
{
	struct gate_entry	*e = gate_find(d, p->name);
	char			 stamp[sizeof e->stamp];

	if (e == NULL || !e->done)
		return NULL;
	gate_stamp(d, stamp, sizeof stamp);
	if (e->family != p->family_max || e->tg != p->threadgroup_memory ||
	    e->ws != p->working_set || strcmp(e->stamp, stamp) != 0)
		return NULL;
	return e;
}

/*
 * Did p's last probe fail, even if a new one runs now?  Profile auto
 * passes over it meanwhile, rather than climb to it and back.
 */
bool
gate_failed_last(struct mcd *d, const struct profile *p)
{
	const struct gate_entry	*e = gate_find(d, p->name);

	return e != NULL && e->failed_last;
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

/*
 * Forget the verdict for a profile, and probe it again at once: a job
 * that runs on it waits in probing for that probe, never for none.
 */
void
gate_invalidate(struct mcd *d, const char *profile)
{
	struct gate_entry	*e = gate_find(d, profile);
	const struct profile	*p = profile_find(&d->profiles, profile);

	if (e == NULL)
		return;
	e->done = false;
	if (p != NULL)
		gate_run(d, p);
}

/*
 * Probe a profile afresh, or for auto every shipped one: a job that fell
 * past them may climb back when one passes now (driver_auto).
 */
void
gate_probe_afresh(struct mcd *d, const char *profile)
{
	const struct profile	*p = NULL;

	if (strcmp(profile, PROFILE_AUTO) != 0) {
		gate_invalidate(d, profile);
		return;
	}
	while ((p = profile_next_shipped(&d->profiles, p)) != NULL)
		gate_invalidate(d, p->name);
}

/* Run a fresh probe of p and call fn with its verdict. */
void
gate_wait(struct mcd *d, const struct profile *p, gate_done_fn fn, void *arg)
{
	struct gate_entry	*e;
	struct gate_waiter	*w = calloc(1, sizeof *w);

	gate_run(d, p);
	e = gate_find(d, p->name);
	w->fn = fn;
	w->arg = arg;
	/* A probe under way started before the request: the next one. */
	w->run = e->rerun ? e->runs + 1 : e->runs;
	w->next = e->waiters;
	e->waiters = w;
}

#define GATE_AUTO_RETRY_MS	30000
#define GATE_AUTO_RETRY_MAX_MS	1800000

static void
gate_auto_retry_cb(uv_timer_t *t)
{
	struct mcd	*d = t->data;

	log_info("profile auto: no shipped profile passed its probe: probing "
	    "them again");
	d->auto_retry_ms = d->auto_retry_ms * 2 > GATE_AUTO_RETRY_MAX_MS ?
	    GATE_AUTO_RETRY_MAX_MS : d->auto_retry_ms * 2;
	gate_probe_afresh(d, PROFILE_AUTO);
}

/*
 * A job of profile auto whose every shipped profile failed its probe
 * runs stock (waiting), but the device may have failed only for a moment,
 * a guest still starting: every shipped profile is probed again 30 s
 * later, then at doubling waits up to 30 min, while one waits; a verdict
 * that passes moves the job up (driver_auto).  One that found a profile
 * (not waiting) starts the waits afresh.
 */
void
gate_auto_wait(struct mcd *d, bool waiting)
{
	if (d->auto_retry_ms == 0) {
		uv_timer_init(d->loop, &d->auto_timer);
		d->auto_timer.data = d;
		d->auto_retry_ms = GATE_AUTO_RETRY_MS;
	}
	if (!waiting)
		d->auto_retry_ms = GATE_AUTO_RETRY_MS;
	else if (!uv_is_active((uv_handle_t *)&d->auto_timer))
		uv_timer_start(&d->auto_timer, gate_auto_retry_cb,
		    d->auto_retry_ms, 0);
}

/*
 * verify's verdicts changed (state/verified.json): a profile whose newest
 * verdict now fails, or no longer does, is probed again, and the gate
 * (gate.c) holds it back or lets it through; the jobs on it follow the
 * verdict as after any probe.  The fleet file carries the verdicts.
 */
void
gate_verified(struct mcd *d)
{
	json_t	*old = d->verified;
	size_t	 i;

	d->verified = verified_load(&d->paths);
	for (i = 0; i < d->profiles.count; i++)
		if (verified_holds_back(old, d->profiles.list[i].name) !=
		    verified_holds_back(d->verified, d->profiles.list[i].name)) {
			log_info("profile %s: %s by metalcapctl verify",
			    d->profiles.list[i].name, verified_holds_back(
			    d->verified, d->profiles.list[i].name) ?
			    "held back" : "no longer held back");
			gate_invalidate(d, d->profiles.list[i].name);
		}
	json_decref(old);
	fleet_observe(d, NULL, "verified");
	/*
	 * A pass here may now let a run through the allowlist: each job is
	 * judged again, from a snapshot (a step may end the job it is for).
	 */
	if (d->managed.unlock_only_where != NULL &&
	    d->managed.local_verify_allows && d->njobs > 0) {
		struct mcd_event	  ev = { .type = LC_EV_MANAGED };
		struct job		**snap = malloc(d->njobs * sizeof *snap);
		size_t			  n = d->njobs;

		memcpy(snap, d->jobs, n * sizeof *snap);
		for (i = 0; i < n; i++) {
			ev.job = snap[i];
			d->emit(d, &ev);
		}
		free(snap);
	}
}
