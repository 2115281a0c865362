/* SPDX-License-Identifier: MIT */
/*
 * What the control socket sends, packed with msgpack-c: a job's map (the
 * fields docs/metalcap-rpc.7 lists), events to subscribers, the probe's
 * report and the managed settings.  Strings the daemon has not made are
 * already whole UTF-8 (mc_text) by the time they get here.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "mc_util.h"
#include "mcd.h"
#include "protocol.h"

void
rpc_pack_kv(msgpack_packer *pk, const char *key, const char *value)
{
	mc_rpc_pack_str(pk, key);
	if (value == NULL || *value == '\0')
		msgpack_pack_nil(pk);
	else
		mc_rpc_pack_str(pk, value);
}

static void
rpc_pack_strings(msgpack_packer *pk, const struct diag *d)
{
	size_t	i;

	msgpack_pack_array(pk, (uint32_t)d->count);
	for (i = 0; i < d->count; i++)
		mc_rpc_pack_str(pk, d->items[i]);
}

static void
rpc_pack_incident(msgpack_packer *pk, const char *key,
    const struct incident *in)
{
	int	i;

	mc_rpc_pack_str(pk, key);
	if (in == NULL || !in->set) {
		msgpack_pack_nil(pk);
		return;
	}
	msgpack_pack_map(pk, 3);
	mc_rpc_pack_str(pk, "time");
	msgpack_pack_int64(pk, in->time);
	rpc_pack_kv(pk, "trigger", in->trigger);
	mc_rpc_pack_str(pk, "evidence");
	msgpack_pack_array(pk, (uint32_t)in->nevidence);
	for (i = 0; i < in->nevidence; i++)
		mc_rpc_pack_str(pk, in->evidence[i]);
}

/* What the shim in the running process reported, or nil. */
static void
rpc_pack_shim(msgpack_packer *pk, const struct job *j)
{
	const struct shim_seen	*s = j->shim;

	mc_rpc_pack_str(pk, "shim");
	if (s == NULL) {
		msgpack_pack_nil(pk);
		return;
	}
	msgpack_pack_map(pk, 6);
	rpc_pack_kv(pk, "state", s->state);
	rpc_pack_kv(pk, "class", strcmp(s->klass, "-") ? s->klass : NULL);
	rpc_pack_kv(pk, "hooked", strcmp(s->hooked, "-") ? s->hooked : NULL);
	mc_rpc_pack_str(pk, "family_max");
	msgpack_pack_int64(pk, s->family_max);
	mc_rpc_pack_str(pk, "threadgroup_memory");
	msgpack_pack_int64(pk, s->threadgroup_memory);
	rpc_pack_kv(pk, "reason", strcmp(s->reason, "-") ? s->reason : NULL);
}

/*
 * Its HealthCheck, or nil without one: what status calls it
 * (health_state), its failures in a row, its restarts for it in a row,
 * and its last answer (when, for which pid, passed, words, first line).
 */
static void
rpc_pack_health(msgpack_packer *pk, const struct job *j)
{
	const struct health_answer	*a = &j->health_last;
	const char			*state = health_state(j);

	mc_rpc_pack_str(pk, "health");
	if (state == NULL) {
		msgpack_pack_nil(pk);
		return;
	}
	msgpack_pack_map(pk, 5);
	rpc_pack_kv(pk, "state", state);
	mc_rpc_pack_str(pk, "passed");
	j->health_passed ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
	mc_rpc_pack_str(pk, "failures");
	msgpack_pack_int64(pk, j->health_failures);
	mc_rpc_pack_str(pk, "restarts");
	msgpack_pack_int64(pk, j->health_lapses);
	mc_rpc_pack_str(pk, "last");
	if (a->time == 0) {
		msgpack_pack_nil(pk);
		return;
	}
	msgpack_pack_map(pk, 5);
	mc_rpc_pack_str(pk, "time");
	msgpack_pack_int64(pk, a->time);
	mc_rpc_pack_str(pk, "pid");
	msgpack_pack_int64(pk, a->pid);
	mc_rpc_pack_str(pk, "passed");
	a->passed ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
	rpc_pack_kv(pk, "answer", a->words);
	rpc_pack_kv(pk, "output", a->output);
}

/* A profile's three values, as three pairs of the map being packed. */
static void
rpc_pack_values(msgpack_packer *pk, const struct profile *p)
{
	mc_rpc_pack_str(pk, "apple_family_max");
	msgpack_pack_uint64(pk, p->family_max);
	mc_rpc_pack_str(pk, "threadgroup_memory");
	msgpack_pack_uint64(pk, p->threadgroup_memory);
	mc_rpc_pack_str(pk, "working_set");
	msgpack_pack_uint64(pk, p->working_set);
}

/* One job's status map (DESIGN §6.6). */
void
rpc_pack_job(msgpack_packer *pk, const struct job *j, const char *action)
{
	const struct profile	*p = j->profile;
	const struct override	*o = state_get(&j->daemon->state, j->name,
	    false);
	json_t			*verdict;
	char			 due[sizeof j->measure_due];

	msgpack_pack_map(pk, action != NULL ? 24 : 23);
	/* start and restart say what they did. */
	if (action != NULL)
		rpc_pack_kv(pk, "action", action);
	rpc_pack_kv(pk, "name", j->name);
	rpc_pack_kv(pk, "label", j->label);
	rpc_pack_kv(pk, "state", job_state_name(j->state));
	rpc_pack_kv(pk, "next_state", job_state_name(driver_next_state(j->daemon,
	    j)));
	rpc_pack_kv(pk, "desired", job_desired(j->daemon, j));
	rpc_pack_kv(pk, "profile", p ? p->name : NULL);
	/* Set to run unlocked: what was asked, not what runs now. */
	mc_rpc_pack_str(pk, "unlocked");
	if (job_runs_unlocked(j))
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	mc_rpc_pack_str(pk, "pid");
	if (j->pid > 0)
		msgpack_pack_int64(pk, j->pid);
	else
		msgpack_pack_nil(pk);
	rpc_pack_kv(pk, "last_exit", strcmp(j->last_exit, "(never exited)") ?
	    j->last_exit : NULL);
	rpc_pack_kv(pk, "reason", j->reason);
	mc_rpc_pack_str(pk, "errors");
	rpc_pack_strings(pk, &j->errors);
	mc_rpc_pack_str(pk, "warnings");
	rpc_pack_strings(pk, &j->warnings);
	rpc_pack_kv(pk, "file", j->file ? j->file : "");
	rpc_pack_kv(pk, "note", j->note);
	/* launchd has it and does not run it (held.c): why, or nil. */
	rpc_pack_kv(pk, "held", j->held);
	rpc_pack_incident(pk, "reverted", o ? &o->reverted : NULL);
	rpc_pack_incident(pk, "failed", o ? &o->failed : NULL);
	/* Profile auto: what it chose and why not higher, or nil. */
	mc_rpc_pack_str(pk, "auto");
	if (j->auto_profile) {
		msgpack_pack_map(pk, 5);
		rpc_pack_kv(pk, "chosen", p ? p->name : j->auto_stock ?
		    "stock" : NULL);
		rpc_pack_kv(pk, "passed_over", j->auto_note);
		/* Its measurement (measure.c): the figures, in words. */
		rpc_pack_kv(pk, "measured", j->measured);
		(void)measure_due_why(j->daemon, j, false, due, sizeof due);
		rpc_pack_kv(pk, "measure_due", due);
		mc_rpc_pack_str(pk, "measuring");
		j->measuring ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
	} else
		msgpack_pack_nil(pk);
	/* verify's newest verdict on its profile here, or nil. */
	mc_rpc_pack_str(pk, "verified");
	if ((verdict = p != NULL ? verified_newest(j->daemon->verified,
	    p->name) : NULL) != NULL)
		rpc_pack_json(pk, verdict);
	else
		msgpack_pack_nil(pk);
	rpc_pack_shim(pk, j);
	rpc_pack_health(pk, j);
	mc_rpc_pack_str(pk, "stderr_path");
	if (j->spec != NULL && j->spec->stderr_path != NULL)
		mc_rpc_pack_str(pk, j->spec->stderr_path);
	else {
		char	path[PATH_MAX];

		mc_fmt(path, sizeof path, "%s/%s.err.log",
		    j->daemon->paths.logs, j->name);
		mc_rpc_pack_str(pk, path);
	}
	mc_rpc_pack_str(pk, "values");
	if (j->state != JOB_UNLOCKED || p == NULL) {
		msgpack_pack_nil(pk);
		return;
	}
	msgpack_pack_map(pk, 3);
	rpc_pack_values(pk, p);
}

/* Tell subscribers: {type, job, request} (request: the change's method). */
void
rpc_event_change(struct mcd *d, const struct job *j, const char *type,
    const char *request)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;

	if (d->conns == NULL)
		return;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 3);
	rpc_pack_kv(&pk, "type", type);
	mc_rpc_pack_str(&pk, "job");
	rpc_pack_job(&pk, j, NULL);
	rpc_pack_kv(&pk, "request", request);
	server_broadcast(d, &sb);
}

/* The observer: subscribers hear of states, reverts, failures, removals. */
void
rpc_observe(struct mcd *d, const struct job *j, const char *what)
{
	if (what != NULL)
		rpc_event_change(d, j, what, NULL);
}

/* Every profile, its values, whether shipped, and its error (profiles). */
void
rpc_pack_profiles(msgpack_packer *pk, const struct profile_set *set)
{
	const struct profile	*p;
	size_t			 i;

	msgpack_pack_array(pk, (uint32_t)set->count);
	for (i = 0; i < set->count; i++) {
		p = &set->list[i];
		msgpack_pack_map(pk, 7);
		rpc_pack_kv(pk, "name", p->name);
		rpc_pack_values(pk, p);
		rpc_pack_kv(pk, "description", p->description);
		mc_rpc_pack_str(pk, "builtin");
		if (p->builtin)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		rpc_pack_kv(pk, "error", p->error);
	}
}

/* jansson value -> msgpack, for the probe's report. */
void
rpc_pack_json(msgpack_packer *pk, json_t *v)
{
	const char	*key;
	json_t		*item;
	size_t		 i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		msgpack_pack_map(pk, (uint32_t)json_object_size(v));
		json_object_foreach(v, key, item) {
			mc_rpc_pack_str(pk, key);
			rpc_pack_json(pk, item);
		}
		break;
	case JSON_ARRAY:
		msgpack_pack_array(pk, (uint32_t)json_array_size(v));
		json_array_foreach(v, i, item)
			rpc_pack_json(pk, item);
		break;
	case JSON_STRING:
		mc_rpc_pack_str(pk, json_string_value(v));
		break;
	case JSON_INTEGER:
		msgpack_pack_int64(pk, json_integer_value(v));
		break;
	case JSON_REAL:
		msgpack_pack_double(pk, json_real_value(v));
		break;
	case JSON_TRUE:
		msgpack_pack_true(pk);
		break;
	case JSON_FALSE:
		msgpack_pack_false(pk);
		break;
	default:
		msgpack_pack_nil(pk);
	}
}

/* The managed settings in force: {force_stock, allowed, default, error}. */
void
rpc_pack_managed(msgpack_packer *pk, const struct managed *m)
{
	size_t	i;

	mc_rpc_pack_str(pk, "managed");
	if (!m->present) {
		msgpack_pack_nil(pk);
		return;
	}
	msgpack_pack_map(pk, 6);
	mc_rpc_pack_str(pk, "force_stock");
	if (m->force_stock || m->error[0] != '\0')
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	mc_rpc_pack_str(pk, "allowed_profiles");
	if (!m->has_allowed)
		msgpack_pack_nil(pk);
	else {
		msgpack_pack_array(pk, (uint32_t)m->nallowed);
		for (i = 0; i < m->nallowed; i++)
			mc_rpc_pack_str(pk, m->allowed[i]);
	}
	rpc_pack_kv(pk, "default_profile", m->default_profile);
	rpc_pack_kv(pk, "error", m->error);
	/* The allowlist: how many entries, nil when there is none. */
	mc_rpc_pack_str(pk, "unlock_only_where");
	if (m->unlock_only_where == NULL)
		msgpack_pack_nil(pk);
	else
		msgpack_pack_uint32(pk,
		    plist_array_get_size(m->unlock_only_where));
	mc_rpc_pack_str(pk, "local_verify_allows");
	if (m->local_verify_allows)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
}
