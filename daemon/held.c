/* SPDX-License-Identifier: MIT */
/*
 * A job launchd has but does not run.  macOS 13's Background Task
 * Management can hold a launch agent until the user allows it in Login
 * Items, or refuse it by policy: bootstrap answers 0, the job's runs stay
 * 0, and the reason ("Service cannot be launched because of BTM policy",
 * 161) goes to the unified log alone, never to launchctl (launchd.md §4).
 * Without a word here, status shows a job with no pid and no reason,
 * looked at every 2 seconds for ever.  So the job is named held, in
 * status, watch, doctor and the fleet file, with where to allow it; it is
 * looked at less and less often, and each look kickstarts it, so it runs
 * once allowed, whether or not launchd would start it by itself then.
 * A label switched off in the disabled store (which Login Items may
 * write) is no hold: each bootstrap is preceded by launchctl enable, as
 * brew services does (launchd.md §2), the job file being the user's ask.
 */
#include <stdio.h>
#include <string.h>

#include "mcd.h"

#define HELD_POLL_FIRST_MS	2000
#define HELD_POLL_MAX_MS	60000

#define HELD_WHERE	"allow it in System Settings > General > Login " \
			"Items (Allow in the Background)"

/* Tell the observers when the held note comes or goes. */
static void
held_set(struct mcd *d, struct job *j, const char *text)
{
	struct mcd_event	ev = { .type = LC_EV_HELD, .job = j };

	if (strcmp(j->held, text) == 0)
		return;
	snprintf(j->held, sizeof j->held, "%s", text);
	if (text[0] != '\0')
		log_warnx("job %s: %s", j->name, text);
	else
		log_info("job %s: no longer held", j->name);
	d->emit(d, &ev);
}

/*
 * After a look at launchd: held once the quick looks are over if it
 * should be running, has no pid and never ran since it was registered;
 * no longer once it runs or should not.  True while held.
 */
bool
held_update(struct mcd *d, struct job *j, const struct launchd_seen *seen,
    bool wanted, bool looked_long)
{
	/* No "runs" line (a launchd that prints none): it cannot be told. */
	if (!wanted || seen->pid > 0 || seen->runs > 0 || !seen->runs_known)
		held_set(d, j, "");
	else if (looked_long)
		held_set(d, j, "launchd has it but has not started it: "
		    "Background Task Management may be holding it; "
		    HELD_WHERE " (sfltool dumpbtm shows its disposition)");
	return j->held[0] != '\0';
}

/* Registered anew, or out of launchd: nothing is held now. */
void
held_clear(struct mcd *d, struct job *j)
{
	held_set(d, j, "");
}

/* The wait before the n-th look at a held job: doubling to a minute. */
uint64_t
held_poll_ms(int n)
{
	uint64_t	ms = (uint64_t)HELD_POLL_FIRST_MS << (n < 0 ? 0 :
	    n < 5 ? n : 5);

	return ms < HELD_POLL_MAX_MS ? ms : HELD_POLL_MAX_MS;
}
