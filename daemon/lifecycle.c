/* SPDX-License-Identifier: MIT */
/*
 * Where a job settles: one pure function of what is known about it, with
 * no I/O and no call into the rest of the daemon.  The reconciler uses it
 * once launchd has the job as desired (reconcile_settle), and status uses
 * it to say where a job is going (job_next_state), so the two cannot
 * disagree.  Read top to bottom, the first row that matches wins:
 *
 *   file invalid                              invalid
 *   stopped by request                        stopped
 *   failed (crash loop in stock)              failed
 *   reverted (probe, log, crash, health)      reverted
 *   not set to run with a usable profile      stock  (why: no profile, a
 *                                                     bad one, managed)
 *   probe verdict not in yet                  probing
 *   probe verdict failed                      reverted (by the gate)
 *   its process dropped the shim              blocked
 *   otherwise                                 unlocked
 *
 * tests/unit/test_lifecycle.c checks every combination of the facts.
 */
#include "mcd.h"

static const char *const lifecycle_names[] = {
	[JOB_PENDING] = "pending",
	[JOB_STOCK] = "stock",
	[JOB_PROBING] = "probing",
	[JOB_UNLOCKED] = "unlocked",
	[JOB_REVERTED] = "reverted",
	[JOB_BLOCKED] = "blocked",
	[JOB_FAILED] = "failed",
	[JOB_INVALID] = "invalid",
	[JOB_ERROR] = "error",
	[JOB_STOPPED] = "stopped",
};

const char *
job_state_name(enum job_state s)
{
	return lifecycle_names[s];
}


enum job_state
lifecycle_settle(const struct lifecycle_facts *f, enum lifecycle_why *why)
{
	*why = LC_WHY_NONE;
	if (!f->valid)
		return JOB_INVALID;
	if (f->stopped)
		return (*why = LC_WHY_STOPPED, JOB_STOPPED);
	if (f->failed)
		return (*why = LC_WHY_INCIDENT, JOB_FAILED);
	if (f->reverted)
		return (*why = LC_WHY_INCIDENT, JOB_REVERTED);
	if (f->wants_unlocked && !f->profile_exists)
		return (*why = LC_WHY_NO_PROFILE, JOB_STOCK);
	if (f->wants_unlocked && !f->profile_ok)
		return (*why = LC_WHY_BAD_PROFILE, JOB_STOCK);
	if (!f->wants_unlocked || !f->profile_unlocks)
		return (*why = f->managed ? LC_WHY_MANAGED : LC_WHY_NONE,
		    JOB_STOCK);
	if (!f->verdict_known)
		return (*why = LC_WHY_PROBING, JOB_PROBING);
	if (f->verdict_fails)
		return (*why = LC_WHY_INCIDENT, JOB_REVERTED);
	if (f->blocked)
		return (*why = LC_WHY_BLOCKED, JOB_BLOCKED);
	return (*why = LC_WHY_PARTIAL, JOB_UNLOCKED);
}
