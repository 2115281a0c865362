/* SPDX-License-Identifier: MIT */
/*
 * Where metalcapd's parts are joined.  Data flows one way: the evidence
 * sources hand events to the driver, the driver tells the observers, the
 * server hands requests to rpc.c.  None of them names the one above it;
 * this file names them all, and nothing names this file but main (and
 * the fuzzers, which build a daemon of their own).
 */
#include "mcd.h"

void
seams_connect(struct mcd *d)
{
	d->emit = driver_emit;
	d->nobservers = 0;
	d->observers[d->nobservers++] = log_observe;
	d->observers[d->nobservers++] = rpc_observe;
	d->observers[d->nobservers++] = fleet_observe;
	d->dispatch = rpc_dispatch;
}
