/* SPDX-License-Identifier: MIT */
/*
 * A revert for a crash loop or a failed health check is a hypothesis: the
 * stock run tests it.  A job that fails stock the same way fails for its
 * own cause (a model it cannot open, a port in use, a wrong URL...), not
 * the profile's: the revert is withdrawn, counted apart from the reverts
 * that blamed the profile, and the job keeps its wish to run unlocked.
 * Reverts on a pipeline failure or a failed probe stay: they are verdicts.
 */
#include <string.h>

#include "mcd.h"

/* Withdraw the job's revert if by (its trigger) made it. */
bool
withdraw_revert(struct job *j, struct override *o, const char *by)
{
	if (!o->reverted.set || strcmp(o->reverted.trigger, by) != 0)
		return false;
	log_warnx("job %s: it fails stock too: its revert (%s) is withdrawn, "
	    "the profile is not to blame", j->name, o->reverted.trigger);
	memset(&o->reverted, 0, sizeof o->reverted);
	if (o->revert_count > 0)
		o->revert_count--;
	o->withdrawn_count++;
	return true;
}

/*
 * The health check failed the job's process: if that process is the stock
 * run of a job the check reverted (no shim, so no report from it), the
 * check says nothing of the profile.  The revert is withdrawn, and the
 * check counts against no profile until it has passed (health.c).
 */
bool
withdraw_health(struct mcd *d, struct job *j)
{
	struct override	*o = state_get(&d->state, j->name, false);

	if (o == NULL || j->state != JOB_REVERTED || j->shim != NULL ||
	    !withdraw_revert(j, o, "health check"))
		return false;
	j->health_blind = true;
	return true;
}
