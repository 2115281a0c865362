/* SPDX-License-Identifier: MIT */
/*
 * The status file for fleet tools (Jamf, osquery, inventory scripts):
 * state/status.json, and the same document as state/status.plist for
 * readers that know property lists but not JSON (osquery's plist table,
 * PlistBuddy), there with its jobs keyed by name.  Both are rewritten atomically shortly after anything
 * changes, so a reader never needs the socket and never sees half a file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "mc_plist.h"
#include "mc_sha256.h"
#include "mc_util.h"
#include "mcd.h"
#include "protocol.h"

#define FLEET_DELAY_MS	50	/* coalesce bursts of changes */

/* A new random id into d->instance_id. */
static void
fleet_new_id(struct mcd *d)
{
	unsigned char	raw[16];
	size_t		i;
	int		fd;

	memset(raw, 0, sizeof raw);
	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) != -1) {
		if (read(fd, raw, sizeof raw) != (ssize_t)sizeof raw)
			memset(raw, 0, sizeof raw);
		close(fd);
	}
	for (i = 0; i < sizeof raw; i++)
		snprintf(d->instance_id + 2 * i, 3, "%02x", raw[i]);
}

/*
 * A random id, kept in state/instance-id with the machine it was made on
 * ("ID\nmachine UUID\n").  Guests cloned from an image a user was logged
 * in to while it was built inherit the file; unless it names this very
 * machine, a new id is made, so that 500 clones do not report as one: a
 * file of the id alone (older), or of "machine unknown" (an image built
 * with its machine id emptied), cannot tell its guest from a clone.
 * Only where this machine cannot be told either is such a file kept.
 */
static void
fleet_instance_id(struct mcd *d)
{
	char	path[PATH_MAX], why[256], machine[128] = "", kept[128] = "";
	char	text[200];
	bool	known, keep = false;
	FILE	*f;
	int	n = 0;

	known = paths_machine(&d->paths, machine, sizeof machine);
	mc_fmt(path, sizeof path, "%s/instance-id", d->paths.state);
	if ((f = fopen(path, "r")) != NULL) {
		n = fscanf(f, "%32s machine %127s", d->instance_id, kept);
		fclose(f);
		keep = n >= 1 && strlen(d->instance_id) == 32;
	}
	if (keep && (!known || (n == 2 && strcmp(kept, machine) == 0)))
		return;
	if (keep)
		log_warnx("instance id: state/instance-id names %s%s, this is "
		    "machine %s (it may be a cloned guest): a new id", n == 2 ?
		    "machine " : "no machine", n == 2 ? kept : "", machine);
	fleet_new_id(d);
	snprintf(text, sizeof text, "%s\nmachine %s\n", d->instance_id,
	    known ? machine : "unknown");
	if (mc_write_atomic(path, text, strlen(text), 0644, why,
	    sizeof why) == -1)
		log_warnx("%s", why);
}

/*
 * The guest's id for a fleet to count guests by (paths_guest), hashed so
 * that an inventory does not carry the hardware's ids; "" when the
 * machine cannot be told (the fleet counts by instance id then).
 */
static void
fleet_guest_id(struct mcd *d)
{
	char	guest[256], text[300], hex[MC_SHA256_HEX];

	d->guest_id[0] = '\0';
	if (!paths_guest(&d->paths, guest, sizeof guest))
		return;
	snprintf(text, sizeof text, "metalcap guest %s", guest);
	if (mc_sha256_text(text, hex) == 0)
		snprintf(d->guest_id, sizeof d->guest_id, "%.32s", hex);
}

static json_t *
fleet_job(struct mcd *d, const struct job *j)
{
	const struct override	*o = state_get(&d->state, j->name, false);
	const struct gate_entry	*g = NULL;
	json_t			*job, *probe = json_null(), *verdict;
	size_t			 i;

	for (i = 0; j->profile != NULL && i < d->ngates; i++)
		if (strcmp(d->gates[i]->profile, j->profile->name) == 0 &&
		    d->gates[i]->done)
			g = d->gates[i];
	if (g != NULL)
		probe = json_pack("{s:s, s:s, s:I}", "profile", g->profile,
		    "verdict", gate_word(g),
		    "time", (json_int_t)g->time);
	verdict = j->profile != NULL ? verified_newest(d->verified,
	    j->profile->name) : NULL;
	job = json_pack("{s:s, s:s?, s:s, s:s?, s:s?, s:o, s:o, s:o, s:I, "
	    "s:I, s:O?}",
	    "name", j->name, "profile", j->profile ? j->profile->name : NULL,
	    "state", job_state_name(j->state),
	    "reason", j->reason[0] ? j->reason : NULL,
	    "held", j->held[0] ? j->held : NULL,
	    "pid", j->pid > 0 ? json_integer(j->pid) : json_null(),
	    "seen", j->shim != NULL ? json_pack("{s:I, s:I}", "family_max",
	    (json_int_t)j->shim->family_max, "threadgroup_memory",
	    (json_int_t)j->shim->threadgroup_memory) : json_null(),
	    "last_probe", probe,
	    "reverts", (json_int_t)(o ? o->revert_count : 0),
	    "reverts_withdrawn", (json_int_t)(o ? o->withdrawn_count : 0),
	    "verified", verdict);
	return job;
}

/* The JSON document as a property list; nulls are left out (plist has none). */
static plist_t
fleet_plist(json_t *v)
{
	plist_t		 out, item;
	const char	*key;
	json_t		*member;
	size_t		 i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		out = plist_new_dict();
		json_object_foreach(v, key, member)
			if ((item = fleet_plist(member)) != NULL)
				plist_dict_set_item(out, key, item);
		return out;
	case JSON_ARRAY:
		out = plist_new_array();
		json_array_foreach(v, i, member)
			if ((item = fleet_plist(member)) != NULL)
				plist_array_append_item(out, item);
		return out;
	case JSON_STRING:
		return plist_new_string(json_string_value(v));
	case JSON_INTEGER:
		/* Every integer of the document is a count, time or pid. */
		return plist_new_uint((uint64_t)(json_integer_value(v) < 0 ? 0 :
		    json_integer_value(v)));
	case JSON_TRUE:
	case JSON_FALSE:
		return plist_new_bool(json_is_true(v));
	default:
		return NULL;
	}
}

/*
 * The property list keys its jobs by name: osquery's plist table flattens
 * a top-level array without the element's index (preferences.cpp,
 * genOSXPlistPrefValue adds one only below another key), so the rows of
 * two jobs of an array could not be told apart.
 */
static plist_t
fleet_plist_doc(json_t *doc)
{
	json_t	*copy = json_copy(doc), *byname = json_object(), *job;
	json_t	*byseq = json_object();
	plist_t	 plist;
	char	 key[32];
	size_t	 i;

	json_array_foreach(json_object_get(doc, "jobs"), i, job)
		json_object_set(byname, json_string_value(json_object_get(job,
		    "name")), job);
	json_object_set_new(copy, "jobs", byname);
	/* The verdicts likewise, by their sequence number: "v12". */
	json_array_foreach(json_object_get(doc, "verdicts"), i, job) {
		snprintf(key, sizeof key, "v%lld", (long long)
		    json_integer_value(json_object_get(job, "seq")));
		json_object_set(byseq, key, job);
	}
	json_object_set_new(copy, "verdicts", byseq);
	plist = fleet_plist(copy);
	json_decref(copy);
	return plist;
}

/*
 * verify's verdicts on this guest, a row each with what it is about:
 * what a fleet aggregates into an allowlist (metalcapctl fleet
 * allowlist).  The damaged-file sentinel is no verdict.
 */
static json_t *
fleet_verdicts(struct mcd *d)
{
	static const char *const keys[] = { "seq", "profile", "verdict",
	    "date", "program_sha256", "model_sha256", "llama_build",
	    "os_build", "cpu_brand", "hw_model", "shim_version" };
	json_t	*rows = json_array(), *r, *row, *v;
	size_t	 i, k;

	json_array_foreach(d->verified, i, r) {
		if (json_object_get(r, "damaged") != NULL ||
		    json_integer_value(json_object_get(r, "seq")) < 0)
			continue;
		row = json_object();
		for (k = 0; k < sizeof keys / sizeof keys[0]; k++)
			if ((v = json_object_get(r, keys[k])) != NULL &&
			    !json_is_null(v))
				json_object_set(row, keys[k], v);
		json_array_append_new(rows, row);
	}
	return rows;
}

static void
fleet_write(struct mcd *d, const char *name, const char *text, size_t len)
{
	char	path[PATH_MAX], why[256];

	mc_fmt(path, sizeof path, "%s/%s", d->paths.state, name);
	if (text == NULL || mc_write_atomic(path, text, len, 0644, why,
	    sizeof why) == -1)
		log_warnx("status file %s: %s", path, text ? why :
		    "cannot format");
}

static void
fleet_write_cb(uv_timer_t *t)
{
	struct mcd	*d = t->data;
	json_t		*doc, *jobs = json_array();
	plist_t		 plist;
	char		*text, *xml = NULL;
	uint32_t	 xmllen = 0;
	size_t		 i;

	for (i = 0; i < d->njobs; i++)
		if (!d->jobs[i]->removed)
			json_array_append_new(jobs, fleet_job(d, d->jobs[i]));
	doc = json_pack("{s:s, s:s, s:s, s:i, s:I, s:o, s:o}", "instance_id",
	    d->instance_id, "guest_id", d->guest_id, "version", MC_VERSION,
	    "protocol", MC_PROTOCOL_VERSION, "updated", (json_int_t)time(NULL),
	    "jobs", jobs, "verdicts", fleet_verdicts(d));
	text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	plist = fleet_plist_doc(doc);
	plist_to_xml(plist, &xml, &xmllen);
	plist_free(plist);
	json_decref(doc);
	fleet_write(d, "status.json", text, text ? strlen(text) : 0);
	fleet_write(d, "status.plist", xml, xmllen);
	free(text);
	mc_plist_mem_free(xml);
	/* Documents of many jobs leave a high-water mark in the heap. */
	if (d->njobs >= 64)
		platform_release_memory();
}

void
fleet_init(struct mcd *d)
{
	fleet_instance_id(d);
	fleet_guest_id(d);
	uv_timer_init(d->loop, &d->fleet_timer);
	d->fleet_timer.data = d;
	fleet_observe(d, NULL, NULL);
}

/* Something changed (any job, anything): rewrite the status file soon. */
void
fleet_observe(struct mcd *d, const struct job *j, const char *what)
{
	(void)j;
	(void)what;
	if (d->fleet_timer.data == NULL)
		return;		/* before fleet_init (unit tests) */
	if (!uv_is_active((uv_handle_t *)&d->fleet_timer))
		uv_timer_start(&d->fleet_timer, fleet_write_cb, FLEET_DELAY_MS,
		    0);
}
