/* SPDX-License-Identifier: MIT */
/*
 * A job launchd could not start (its program missing, a log or working
 * directory it could not open) fails, and is booted out.  Its cause may
 * go by itself: brew upgrade replaces a binary, a volume is mounted
 * again.  launchd itself waits for a missing program's path and starts
 * the job once it is there (launchd 842 job_reap: waiting4ok), so such a
 * job waits here too, looked at every 2 seconds, and is started again
 * once its cause is gone, as a start request would.
 */
#include <string.h>

#include "mcd.h"

#define RESPAWN_POLL_MS		2000

static void
respawn_poll_cb(uv_timer_t *t)
{
	struct mcd	*d = t->data;
	struct override	*o;
	struct job	*j;
	size_t		 i;

	for (i = 0; i < d->njobs; i++) {
		j = d->jobs[i];
		o = state_get(&d->state, j->name, false);
		if (o == NULL || !o->failed.set || o->stopped ||
		    strcmp(o->failed.trigger, RESPAWN_TRIGGER) != 0 ||
		    o->failed.nevidence < 1 ||
		    !watch_spawn_fixed(d, j, o->failed.evidence[0]))
			continue;
		log_info("job %s: what kept launchd from starting it (%s) is "
		    "gone: starting it again", j->name,
		    o->failed.evidence[0]);
		memset(&o->failed, 0, sizeof o->failed);
		d->emit(d, &(struct mcd_event){ .type = LC_EV_START, .job = j });
	}
}

void
respawn_start(struct mcd *d)
{
	uv_timer_init(d->loop, &d->respawn_timer);
	d->respawn_timer.data = d;
	uv_timer_start(&d->respawn_timer, respawn_poll_cb, RESPAWN_POLL_MS,
	    RESPAWN_POLL_MS);
}
