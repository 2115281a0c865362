/* SPDX-License-Identifier: MIT */
/*
 * The status file for fleet tools (Jamf, osquery, inventory scripts):
 * state/status.json, rewritten atomically shortly after anything changes,
 * so a reader never needs the socket and never sees half a file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "mcd.h"
#include "protocol.h"

#define FLEET_DELAY_MS	50	/* coalesce bursts of changes */

/* A random id, made once and kept in state/instance-id. */
static void
fleet_instance_id(struct mcd *d)
{
	char		path[PATH_MAX], why[256];
	unsigned char	raw[16];
	size_t		i;
	FILE		*f;
	int		fd;

	mc_fmt(path, sizeof path, "%s/instance-id", d->paths.state);
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%32s", d->instance_id) == 1 &&
		    strlen(d->instance_id) == 32) {
			fclose(f);
			return;
		}
		fclose(f);
	}
	memset(raw, 0, sizeof raw);
	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) != -1) {
		if (read(fd, raw, sizeof raw) != (ssize_t)sizeof raw)
			memset(raw, 0, sizeof raw);
		close(fd);
	}
	for (i = 0; i < sizeof raw; i++)
		snprintf(d->instance_id + 2 * i, 3, "%02x", raw[i]);
	if (mc_write_atomic(path, d->instance_id, 32, 0644, why,
	    sizeof why) == -1)
		log_warnx("%s", why);
}

static json_t *
fleet_job(struct mcd *d, const struct job *j)
{
	const struct override	*o = state_get(&d->state, j->name, false);
	const struct gate_entry	*g = NULL;
	json_t			*job, *probe = json_null();
	size_t			 i;

	for (i = 0; j->profile != NULL && i < d->ngates; i++)
		if (strcmp(d->gates[i]->profile, j->profile->name) == 0 &&
		    d->gates[i]->done)
			g = d->gates[i];
	if (g != NULL)
		probe = json_pack("{s:s, s:s, s:I}", "profile", g->profile,
		    "verdict", g->status == GATE_PASS ? "pass" :
		    g->status == GATE_PARTIAL ? "partial" : "fail",
		    "time", (json_int_t)g->time);
	job = json_pack("{s:s, s:s?, s:s, s:s?, s:o, s:o, s:o, s:I}",
	    "name", j->name, "profile", j->profile ? j->profile->name : NULL,
	    "state", job_state_name(j->state),
	    "reason", j->reason[0] ? j->reason : NULL,
	    "pid", j->pid > 0 ? json_integer(j->pid) : json_null(),
	    "seen", j->shim.present ? json_pack("{s:I, s:I}", "family_max",
	    (json_int_t)j->shim.family_max, "threadgroup_memory",
	    (json_int_t)j->shim.threadgroup_memory) : json_null(),
	    "last_probe", probe,
	    "reverts", (json_int_t)(o ? o->revert_count : 0));
	return job;
}

static void
fleet_write_cb(uv_timer_t *t)
{
	struct mcd	*d = t->data;
	json_t		*doc, *jobs = json_array();
	char		 path[PATH_MAX], why[256], *text;
	size_t		 i;

	for (i = 0; i < d->njobs; i++)
		if (!d->jobs[i]->removed)
			json_array_append_new(jobs, fleet_job(d, d->jobs[i]));
	doc = json_pack("{s:s, s:s, s:i, s:I, s:o}", "instance_id",
	    d->instance_id, "version", MC_VERSION, "protocol",
	    MC_PROTOCOL_VERSION, "updated", (json_int_t)time(NULL), "jobs",
	    jobs);
	text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(doc);
	mc_fmt(path, sizeof path, "%s/status.json", d->paths.state);
	if (text == NULL || mc_write_atomic(path, text, strlen(text), 0644, why,
	    sizeof why) == -1)
		log_warnx("status file: %s", text ? why : "cannot format");
	free(text);
}

void
fleet_init(struct mcd *d)
{
	fleet_instance_id(d);
	uv_timer_init(d->loop, &d->fleet_timer);
	d->fleet_timer.data = d;
	fleet_changed(d);
}

/* Something changed: rewrite the status file soon. */
void
fleet_changed(struct mcd *d)
{
	if (d->fleet_timer.data == NULL)
		return;		/* before fleet_init (unit tests) */
	if (!uv_is_active((uv_handle_t *)&d->fleet_timer))
		uv_timer_start(&d->fleet_timer, fleet_write_cb, FLEET_DELAY_MS,
		    0);
}
