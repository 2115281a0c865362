/* SPDX-License-Identifier: MIT */
/*
 * report: the fleet summary from the status file alone, no socket, so a
 * script run as root can report on any user.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "mc_util.h"
#include "protocol.h"

static const char *
ctl_json_str(json_t *obj, const char *key)
{
	const char	*s = json_string_value(json_object_get(obj, key));

	return s != NULL ? s : "";
}

/*
 * One line for inventory tools, from the status file alone (no socket: a
 * root-run Jamf or osquery script reads any user's file):
 *   ok|attention version=V jobs=N STATE=COUNT...[; JOB: STATE (REASON)]...
 */
static int
ctl_report_file(const char *path, bool as_json)
{
	static const char *const states[] = { "unlocked", "stock", "pending",
	    "probing", "stopped", "reverted", "blocked", "failed", "invalid",
	    "error" };
	json_error_t	 jerr;
	json_t		*doc, *jobs, *job, *bad, *counts;
	size_t		 i, k, n[sizeof states / sizeof states[0]] = { 0 };
	const char	*state;

	if ((doc = json_load_file(path, 0, &jerr)) == NULL) {
		fprintf(stderr, "metalcapctl: %s: %s\n", path, jerr.text);
		return EXIT_DAEMON;
	}
	jobs = json_object_get(doc, "jobs");
	if (!json_is_array(jobs)) {
		fprintf(stderr, "metalcapctl: %s:jobs: expected an array\n",
		    path);
		json_decref(doc);
		return EXIT_DAEMON;
	}
	bad = json_array();
	json_array_foreach(jobs, i, job) {
		state = ctl_json_str(job, "state");
		for (k = 0; k < sizeof states / sizeof states[0]; k++)
			if (strcmp(state, states[k]) == 0)
				n[k]++;
		if (ctl_unhealthy(state))
			json_array_append_new(bad, json_pack("{s:s, s:s, s:O}",
			    "name", ctl_json_str(job, "name"), "state", state,
			    "reason", json_object_get(job, "reason") ?
			    json_object_get(job, "reason") : json_null()));
	}
	if (as_json) {
		counts = json_object();
		for (k = 0; k < sizeof states / sizeof states[0]; k++)
			json_object_set_new(counts, states[k],
			    json_integer((json_int_t)n[k]));
		json_dumpf(json_pack("{s:s, s:s, s:s, s:O, s:I, s:o, s:O}",
		    "verdict", json_array_size(bad) ? "attention" : "ok",
		    "version", ctl_json_str(doc, "version"), "instance_id",
		    ctl_json_str(doc, "instance_id"), "updated",
		    json_object_get(doc, "updated"), (json_int_t)
		    json_array_size(jobs), "states", counts, "attention", bad),
		    stdout, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		putchar('\n');
	} else {
		printf("%s version=%s jobs=%zu", json_array_size(bad) ?
		    "attention" : "ok", ctl_json_str(doc, "version"),
		    json_array_size(jobs));
		for (k = 0; k < sizeof states / sizeof states[0]; k++)
			if (n[k] > 0)
				printf(" %s=%zu", states[k], n[k]);
		json_array_foreach(bad, i, job)
			printf("; %s: %s%s%s%s", ctl_json_str(job, "name"),
			    ctl_json_str(job, "state"),
			    json_is_string(json_object_get(job, "reason")) ?
			    " (" : "", ctl_json_str(job, "reason"),
			    json_is_string(json_object_get(job, "reason")) ?
			    ")" : "");
		putchar('\n');
	}
	k = json_array_size(bad);
	json_decref(bad);
	json_decref(doc);
	return k > 0 ? EXIT_UNHEALTHY : 0;
}

/* report [FILE]: the fleet summary, read from the status file. */
int
cmd_report(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	char	path[4096];

	(void)cmd;
	if (argc == 1)
		snprintf(path, sizeof path, "%s", argv[0]);
	else if (mc_fmt(path, sizeof path, "%s/status.json",
	    c->paths.state) == -1) {
		fprintf(stderr, "metalcapctl: cannot tell where the status "
		    "file is; name it: metalcapctl report FILE\n");
		return EXIT_USAGE;
	}
	return ctl_report_file(path, c->json);
}

