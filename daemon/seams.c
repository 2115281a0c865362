/* SPDX-License-Identifier: MIT */
/*
 * Where metalcapd's parts are joined.  Data flows one way: the evidence
 * sources hand events to the driver, the driver tells the observers, the
 * server hands requests to rpc.c.  None of them names the one above it;
 * this file names them all, and nothing names this file but main (and
 * the fuzzers, which build a daemon of their own).
 */
#include <string.h>

#include "mcd.h"

/* The log's observer: one line for each new state, with its reason. */
static void
seams_log_state(struct mcd *d, const struct job *j, const char *what)
{
	(void)d;
	if (what == NULL || strcmp(what, "state") != 0)
		return;
	log_info("job %s: %s%s%s", j->name, job_state_name(j->state),
	    j->reason[0] ? ": " : "", j->reason);
}

void
seams_connect(struct mcd *d)
{
	d->emit = driver_emit;
	d->nobservers = 0;
	d->observers[d->nobservers++] = seams_log_state;
	d->observers[d->nobservers++] = rpc_observe;
	d->observers[d->nobservers++] = fleet_observe;
	d->dispatch = rpc_dispatch;
}
