/* SPDX-License-Identifier: MIT */
/*
 * The control methods: a const table, one handler per method.  The generic
 * layer checks that the method exists and the parameter count fits before
 * the handler runs; a bad request gets an error response and the
 * connection stays open.  Changes are persisted before they are
 * acknowledged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "mc_util.h"
#include "mcd.h"
#include "protocol.h"

struct rpc_call {
	struct conn			*conn;
	const struct mc_rpc_message	*msg;
	msgpack_sbuffer			 sb;
	msgpack_packer			 pk;
	bool				 deferred;	/* replied later */
	struct override			 before;	/* rpc_override's */
};

/* A reply owed after a probe; holds a reference on the connection. */
struct rpc_later {
	struct conn	*conn;
	uint32_t	 msgid;
	char		 job[MCD_NAME_MAX + 8];
	char		 profile[MCD_NAME_MAX + 1];
};

typedef void (*rpc_handler)(struct rpc_call *);

struct rpc_method {
	const char	*name;
	unsigned	 min_params;
	unsigned	 max_params;
	rpc_handler	 fn;
};

static void	rpc_hello(struct rpc_call *);
static void	rpc_status(struct rpc_call *);
static void	rpc_enable(struct rpc_call *);
static void	rpc_disable(struct rpc_call *);
static void	rpc_profile_set(struct rpc_call *);
static void	rpc_profile_list(struct rpc_call *);
static void	rpc_start(struct rpc_call *);
static void	rpc_stop(struct rpc_call *);
static void	rpc_restart(struct rpc_call *);
static void	rpc_reload(struct rpc_call *);
static void	rpc_subscribe(struct rpc_call *);
static void	rpc_probe(struct rpc_call *);

static const struct rpc_method rpc_methods[] = {
	{ .name = MC_M_HELLO, .min_params = 0, .max_params = 1,
	    .fn = rpc_hello },
	{ .name = MC_M_STATUS, .min_params = 0, .max_params = 1,
	    .fn = rpc_status },
	{ .name = MC_M_ENABLE, .min_params = 1, .max_params = 2,
	    .fn = rpc_enable },
	{ .name = MC_M_DISABLE, .min_params = 1, .max_params = 1,
	    .fn = rpc_disable },
	{ .name = MC_M_PROFILE_SET, .min_params = 2, .max_params = 2,
	    .fn = rpc_profile_set },
	{ .name = MC_M_PROFILE_LIST, .min_params = 0, .max_params = 0,
	    .fn = rpc_profile_list },
	{ .name = MC_M_START, .min_params = 1, .max_params = 1,
	    .fn = rpc_start },
	{ .name = MC_M_STOP, .min_params = 1, .max_params = 1,
	    .fn = rpc_stop },
	{ .name = MC_M_RESTART, .min_params = 1, .max_params = 1,
	    .fn = rpc_restart },
	{ .name = MC_M_RELOAD, .min_params = 0, .max_params = 0,
	    .fn = rpc_reload },
	{ .name = MC_M_SUBSCRIBE, .min_params = 0, .max_params = 1,
	    .fn = rpc_subscribe },
	{ .name = MC_M_PROBE, .min_params = 1, .max_params = 1,
	    .fn = rpc_probe },
};

/* --- packing helpers ---------------------------------------------------------- */

static void
rpc_kv_str(msgpack_packer *pk, const char *key, const char *value)
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
	rpc_kv_str(pk, "trigger", in->trigger);
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
	rpc_kv_str(pk, "state", s->state);
	rpc_kv_str(pk, "class", strcmp(s->klass, "-") ? s->klass : NULL);
	rpc_kv_str(pk, "hooked", strcmp(s->hooked, "-") ? s->hooked : NULL);
	mc_rpc_pack_str(pk, "family_max");
	msgpack_pack_int64(pk, s->family_max);
	mc_rpc_pack_str(pk, "threadgroup_memory");
	msgpack_pack_int64(pk, s->threadgroup_memory);
	rpc_kv_str(pk, "reason", strcmp(s->reason, "-") ? s->reason : NULL);
}

/* One job's status map (DESIGN §6.6). */
void
rpc_pack_job(msgpack_packer *pk, const struct job *j)
{
	const struct profile	*p = j->profile;
	const struct override	*o = state_get(&j->daemon->state, j->name,
	    false);

	msgpack_pack_map(pk, 19);
	rpc_kv_str(pk, "name", j->name);
	rpc_kv_str(pk, "label", j->label);
	rpc_kv_str(pk, "state", job_state_name(j->state));
	rpc_kv_str(pk, "next_state", job_state_name(job_next_state(j->daemon,
	    j)));
	rpc_kv_str(pk, "desired", job_desired(j->daemon, j));
	rpc_kv_str(pk, "profile", p ? p->name : NULL);
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
	rpc_kv_str(pk, "last_exit", strcmp(j->last_exit, "(never exited)") ?
	    j->last_exit : NULL);
	rpc_kv_str(pk, "reason", j->reason);
	mc_rpc_pack_str(pk, "errors");
	rpc_pack_strings(pk, &j->errors);
	mc_rpc_pack_str(pk, "warnings");
	rpc_pack_strings(pk, &j->warnings);
	rpc_kv_str(pk, "file", j->file ? j->file : "");
	rpc_kv_str(pk, "note", j->note);
	rpc_pack_incident(pk, "reverted", o ? &o->reverted : NULL);
	rpc_pack_incident(pk, "failed", o ? &o->failed : NULL);
	rpc_pack_shim(pk, j);
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
	mc_rpc_pack_str(pk, "apple_family_max");
	msgpack_pack_uint64(pk, p->family_max);
	mc_rpc_pack_str(pk, "threadgroup_memory");
	msgpack_pack_uint64(pk, p->threadgroup_memory);
	mc_rpc_pack_str(pk, "working_set");
	msgpack_pack_uint64(pk, p->working_set);
}

/* Tell subscribers: {type, job, request} (request: the change's method). */
static void
rpc_event_send(struct mcd *d, const struct job *j, const char *type,
    const char *request)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;

	if (d->conns == NULL)
		return;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 3);
	rpc_kv_str(&pk, "type", type);
	mc_rpc_pack_str(&pk, "job");
	rpc_pack_job(&pk, j);
	rpc_kv_str(&pk, "request", request);
	server_broadcast(d, &sb);
}

void
rpc_event(struct mcd *d, const struct job *j, const char *type)
{
	rpc_event_send(d, j, type, NULL);
}

/* --- replies ---------------------------------------------------------------- */

static void
rpc_error(struct rpc_call *call, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
rpc_error(struct rpc_call *call, const char *code, const char *fmt, ...)
{
	char	message[512];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	mc_rpc_pack_response_error(&call->pk, call->msg->msgid, code, message);
}

static void
rpc_ok(struct rpc_call *call)
{
	mc_rpc_pack_response_ok(&call->pk, call->msg->msgid);
}

static const msgpack_object *
rpc_param(struct rpc_call *call, unsigned i)
{
	return i < call->msg->params.via.array.size ?
	    &call->msg->params.via.array.ptr[i] : NULL;
}

/* The job named by parameter i, or an error reply and NULL. */
static struct job *
rpc_job(struct rpc_call *call, unsigned i)
{
	char		 name[MCD_NAME_MAX + 8];
	struct job	*j;

	if (!mc_rpc_str(rpc_param(call, i), name, sizeof name)) {
		rpc_error(call, MC_E_INVAL, "parameter %u: expected a job name",
		    i + 1);
		return NULL;
	}
	if ((j = job_find(call->conn->daemon, name)) == NULL || j->removed) {
		rpc_error(call, MC_E_NOJOB, "no job named %s", name);
		return NULL;
	}
	return j;
}

/*
 * A change is made: answer with the job as it now stands (its desired
 * state and the state it is moving to), and tell subscribers.
 */
static void
rpc_changed(struct rpc_call *call, struct job *j)
{
	struct mcd	*d = call->conn->daemon;

	job_effective(d, j);
	rpc_ok(call);
	rpc_pack_job(&call->pk, j);
	rpc_event_send(d, j, MC_EV_CHANGE, call->msg->method);
}

/*
 * The job's override, to change; what it was is kept, so that a change
 * that cannot be saved is taken back.  Only this override goes back: a
 * revert another job holds only in memory (its save failed too) stays.
 */
static struct override *
rpc_override(struct rpc_call *call, const struct job *j)
{
	struct override	*o = state_get(&call->conn->daemon->state, j->name,
	    true);

	call->before = *o;
	return o;
}

static void
rpc_undo(struct mcd *d, struct job *j, const struct override *before)
{
	*state_get(&d->state, j->name, true) = *before;
	job_effective(d, j);
}

/* Persist an override, then reconcile and answer with the job. */
static void
rpc_commit(struct rpc_call *call, struct job *j)
{
	struct mcd	*d = call->conn->daemon;
	char		 why[256];

	if (job_save_state(d, why, sizeof why) == -1) {
		log_warnx("%s", why);
		rpc_undo(d, j, &call->before);
		rpc_error(call, MC_E_IO, "could not save the change: %s", why);
		return;
	}
	reconcile(d, j);
	rpc_changed(call, j);
}

/*
 * May this client have one more reply owed?  Probes take a while, and
 * each owed reply holds memory: the same bound as queued replies.
 */
static bool
rpc_may_defer(struct rpc_call *call)
{
	if (call->conn->refs < MC_MAX_OUTSTANDING)
		return true;
	rpc_error(call, MC_E_BUSY, "%d probes of this connection are still "
	    "running: wait for their replies", MC_MAX_OUTSTANDING);
	return false;
}

static struct rpc_later *
rpc_defer(struct rpc_call *call, const char *job, const char *profile)
{
	struct rpc_later	*l = calloc(1, sizeof *l);

	call->deferred = true;
	conn_ref(call->conn);
	l->conn = call->conn;
	l->msgid = call->msg->msgid;
	snprintf(l->job, sizeof l->job, "%s", job ? job : "");
	snprintf(l->profile, sizeof l->profile, "%s", profile);
	return l;
}

/* Send a deferred reply (unless the client left) and drop the reference. */
static void
rpc_later_send(struct rpc_later *l, msgpack_sbuffer *sb)
{
	server_send(l->conn, sb);
	conn_unref(l->conn);
	free(l);
}

/* jansson value -> msgpack, for the probe's report. */
static void
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

static const char *
rpc_gate_word(const struct gate_entry *e)
{
	return e->status == GATE_PASS ? "pass" : e->status == GATE_PARTIAL ?
	    "partial" : "fail";
}

/* The profile a job would run with (override, job file, default). */
static const char *
rpc_job_profile(struct mcd *d, const struct job *j)
{
	const struct override	*o = state_get(&d->state, j->name, false);

	if (o != NULL && o->profile[0] != '\0')
		return o->profile;
	if (j->spec != NULL && j->spec->profile != NULL)
		return j->spec->profile;
	return managed_default_profile(d);
}

/* --- handlers --------------------------------------------------------------- */

/* The managed settings in force: {force_stock, allowed, default, error}. */
static void
rpc_pack_managed(msgpack_packer *pk, const struct managed *m)
{
	size_t	i;

	mc_rpc_pack_str(pk, "managed");
	if (!m->present) {
		msgpack_pack_nil(pk);
		return;
	}
	msgpack_pack_map(pk, 4);
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
	rpc_kv_str(pk, "default_profile", m->default_profile);
	rpc_kv_str(pk, "error", m->error);
}

static void
rpc_hello(struct rpc_call *call)
{
	rpc_ok(call);
	msgpack_pack_map(&call->pk, 4);
	rpc_kv_str(&call->pk, "version", MC_VERSION);
	mc_rpc_pack_str(&call->pk, "protocol");
	msgpack_pack_int(&call->pk, MC_PROTOCOL_VERSION);
	mc_rpc_pack_str(&call->pk, "pid");
	msgpack_pack_int64(&call->pk, (int64_t)getpid());
	rpc_pack_managed(&call->pk, &call->conn->daemon->managed);
}

static void
rpc_status(struct rpc_call *call)
{
	struct mcd	*d = call->conn->daemon;
	struct job	*j;
	size_t		 i, n = 0;

	if (rpc_param(call, 0) != NULL) {
		if ((j = rpc_job(call, 0)) == NULL)
			return;
		rpc_ok(call);
		msgpack_pack_array(&call->pk, 1);
		rpc_pack_job(&call->pk, j);
		return;
	}
	for (i = 0; i < d->njobs; i++)
		n += !d->jobs[i]->removed;
	rpc_ok(call);
	msgpack_pack_array(&call->pk, (uint32_t)n);
	for (i = 0; i < d->njobs; i++)
		if (!d->jobs[i]->removed)
			rpc_pack_job(&call->pk, d->jobs[i]);
}

/* Does managed configuration allow profile?  Else an EMANAGED reply. */
static bool
rpc_managed_ok(struct rpc_call *call, const char *profile)
{
	const char	*key = managed_forbids(call->conn->daemon, profile);

	if (key == NULL)
		return true;
	if (call->conn->daemon->managed.error[0] != '\0')
		rpc_error(call, MC_E_MANAGED, "refused: the managed settings "
		    "cannot be used (%s), so every job runs stock",
		    call->conn->daemon->managed.error);
	else
		rpc_error(call, MC_E_MANAGED, "refused: the managed setting %s "
		    "(set by your administrator) does not allow profile %s%s",
		    key, profile, strcmp(key, "AllowedProfiles") == 0 &&
		    profile_find(&call->conn->daemon->profiles, profile) &&
		    !profile_find(&call->conn->daemon->profiles,
		    profile)->builtin ? " as your profiles folder defines it "
		    "(only the shipped one is allowed)" : "");
	return false;
}

/* A profile name that exists and loaded cleanly, or an error reply. */
static bool
rpc_profile_ok(struct rpc_call *call, const msgpack_object *o, char *name,
    size_t len)
{
	const struct profile	*p;

	if (!mc_rpc_str(o, name, len)) {
		rpc_error(call, MC_E_INVAL, "expected a profile name");
		return false;
	}
	if ((p = profile_find(&call->conn->daemon->profiles, name)) == NULL) {
		rpc_error(call, MC_E_NOPROFILE, "no profile named %s", name);
		return false;
	}
	if (p->error[0] != '\0') {
		rpc_error(call, MC_E_NOPROFILE, "profile %s is invalid: %s",
		    name, p->error);
		return false;
	}
	return true;
}

/* The probe for enabling a reverted job is in. */
static void
rpc_enable_probed(struct mcd *d, const struct gate_entry *e, void *arg)
{
	struct rpc_later	*l = arg;
	struct job		*j = job_find(d, l->job);
	struct override		*o, before;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	char			 why[1024];

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	if (j == NULL)
		mc_rpc_pack_response_error(&pk, l->msgid, MC_E_NOJOB,
		    "the job is gone");
	else if (e->status == GATE_FAIL) {
		snprintf(why, sizeof why, "profile %s still fails the probe: "
		    "%s", l->profile, e->reason);
		mc_rpc_pack_response_error(&pk, l->msgid, MC_E_PROBE, why);
	} else {
		o = state_get(&d->state, j->name, true);
		before = *o;
		memset(&o->reverted, 0, sizeof o->reverted);
		memset(&o->failed, 0, sizeof o->failed);
		o->unlocked = 1;
		snprintf(o->profile, sizeof o->profile, "%s", l->profile);
		if (job_save_state(d, why, sizeof why) == -1) {
			rpc_undo(d, j, &before);
			mc_rpc_pack_response_error(&pk, l->msgid, MC_E_IO, why);
		} else {
			j->loaded = false;
			reconcile(d, j);
			job_effective(d, j);
			mc_rpc_pack_response_ok(&pk, l->msgid);
			rpc_pack_job(&pk, j);
			rpc_event_send(d, j, MC_EV_CHANGE, MC_M_ENABLE);
		}
	}
	rpc_later_send(l, &sb);
}

static void
rpc_enable(struct rpc_call *call)
{
	struct job		*j = rpc_job(call, 0);
	const msgpack_object	*opts = rpc_param(call, 1), *prof = NULL;
	char			 profile[MCD_NAME_MAX + 1] = "";
	struct override		*o;

	if (j == NULL)
		return;
	if (opts != NULL && opts->type != MSGPACK_OBJECT_NIL) {
		if (opts->type != MSGPACK_OBJECT_MAP) {
			rpc_error(call, MC_E_INVAL, "parameter 2: expected a "
			    "map such as {profile: NAME}");
			return;
		}
		prof = mc_rpc_map_get(opts, "profile");
		if (prof != NULL && !rpc_profile_ok(call, prof, profile,
		    sizeof profile))
			return;
	}
	o = rpc_override(call, j);
	if (profile[0] == '\0')
		snprintf(profile, sizeof profile, "%s",
		    rpc_job_profile(call->conn->daemon, j));
	if (!rpc_managed_ok(call, profile))
		return;
	/* Reverted: a fresh probe must pass before the revert is cleared. */
	if (o->reverted.set || o->failed.set) {
		const struct profile *p = profile_find(
		    &call->conn->daemon->profiles, profile);

		if (p == NULL || p->error[0] != '\0') {
			rpc_error(call, MC_E_NOPROFILE, "no usable profile %s",
			    profile);
			return;
		}
		if (!rpc_may_defer(call))
			return;
		gate_wait(call->conn->daemon, p, rpc_enable_probed,
		    rpc_defer(call, j->name, profile));
		return;
	}
	o->unlocked = 1;
	snprintf(o->profile, sizeof o->profile, "%s", profile);
	gate_invalidate(call->conn->daemon, profile);
	rpc_commit(call, j);
}

static void
rpc_disable(struct rpc_call *call)
{
	struct job	*j = rpc_job(call, 0);

	if (j == NULL)
		return;
	rpc_override(call, j)->unlocked = 0;
	rpc_commit(call, j);
}

static void
rpc_profile_set(struct rpc_call *call)
{
	struct job	*j = rpc_job(call, 0);
	char		 profile[MCD_NAME_MAX + 1];
	struct override	*o;

	if (j == NULL || !rpc_profile_ok(call, rpc_param(call, 1), profile,
	    sizeof profile) || !rpc_managed_ok(call, profile))
		return;
	o = rpc_override(call, j);
	snprintf(o->profile, sizeof o->profile, "%s", profile);
	gate_invalidate(call->conn->daemon, profile);
	rpc_commit(call, j);
}

static void
rpc_profile_list(struct rpc_call *call)
{
	const struct profile_set	*set = &call->conn->daemon->profiles;
	size_t				 i;

	rpc_ok(call);
	msgpack_pack_array(&call->pk, (uint32_t)set->count);
	for (i = 0; i < set->count; i++) {
		const struct profile *p = &set->list[i];

		msgpack_pack_map(&call->pk, 7);
		rpc_kv_str(&call->pk, "name", p->name);
		mc_rpc_pack_str(&call->pk, "apple_family_max");
		msgpack_pack_uint64(&call->pk, p->family_max);
		mc_rpc_pack_str(&call->pk, "threadgroup_memory");
		msgpack_pack_uint64(&call->pk, p->threadgroup_memory);
		mc_rpc_pack_str(&call->pk, "working_set");
		msgpack_pack_uint64(&call->pk, p->working_set);
		rpc_kv_str(&call->pk, "description", p->description);
		mc_rpc_pack_str(&call->pk, "builtin");
		if (p->builtin)
			msgpack_pack_true(&call->pk);
		else
			msgpack_pack_false(&call->pk);
		rpc_kv_str(&call->pk, "error", p->error);
	}
}

static void
rpc_set_stopped(struct rpc_call *call, bool stopped)
{
	struct job	*j = rpc_job(call, 0);

	if (j == NULL)
		return;
	rpc_override(call, j)->stopped = stopped;
	/* Make the next reconcile ask launchd again. */
	j->loaded = false;
	rpc_commit(call, j);
}

static void
rpc_start(struct rpc_call *call)
{
	rpc_set_stopped(call, false);
}

static void
rpc_stop(struct rpc_call *call)
{
	rpc_set_stopped(call, true);
}

static void
rpc_restart_cb(struct mcd *d, const struct launchctl_result *r, void *arg)
{
	struct job	*j = arg;

	if (r->code != 0)
		log_warnx("job %s: kickstart -k failed (%d): %s", j->name,
		    r->code, r->err);
	j->loaded = false;
	reconcile(d, j);
}

static void
rpc_restart(struct rpc_call *call)
{
	struct mcd	*d = call->conn->daemon;
	struct job	*j = rpc_job(call, 0);
	char		 target[256];
	const char	*args[] = { "kickstart", "-k", target, NULL };

	if (j == NULL)
		return;
	snprintf(target, sizeof target, "%s/%s", d->domain, j->label);
	watch_unwatch_pid(j);	/* our kill is not a crash */
	launchctl_run(d, args, rpc_restart_cb, j);
	rpc_changed(call, j);
}

static void
rpc_reload(struct rpc_call *call)
{
	job_rescan(call->conn->daemon);
	rpc_ok(call);
	msgpack_pack_true(&call->pk);
}

static void
rpc_probe_done(struct mcd *d, const struct gate_entry *e, void *arg)
{
	struct rpc_later	*l = arg;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;

	(void)d;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	mc_rpc_pack_response_ok(&pk, l->msgid);
	msgpack_pack_map(&pk, 4);
	rpc_kv_str(&pk, "profile", e->profile);
	rpc_kv_str(&pk, "status", rpc_gate_word(e));
	rpc_kv_str(&pk, "reason", e->reason);
	mc_rpc_pack_str(&pk, "report");
	if (e->report != NULL)
		rpc_pack_json(&pk, e->report);
	else
		msgpack_pack_nil(&pk);
	rpc_later_send(l, &sb);
}

/* probe [job] or probe [{profile: P}]: a fresh probe and its report. */
static void
rpc_probe(struct rpc_call *call)
{
	struct mcd		*d = call->conn->daemon;
	const msgpack_object	*arg = rpc_param(call, 0), *prof;
	char			 name[MCD_NAME_MAX + 1];
	const struct profile	*p;
	struct job		*j;

	if (arg->type == MSGPACK_OBJECT_MAP) {
		if ((prof = mc_rpc_map_get(arg, "profile")) == NULL ||
		    !rpc_profile_ok(call, prof, name, sizeof name))
			return;
	} else {
		if ((j = rpc_job(call, 0)) == NULL)
			return;
		snprintf(name, sizeof name, "%s", rpc_job_profile(d, j));
	}
	if ((p = profile_find(&d->profiles, name)) == NULL) {
		rpc_error(call, MC_E_NOPROFILE, "no profile named %s", name);
		return;
	}
	if (!rpc_may_defer(call))
		return;
	gate_wait(d, p, rpc_probe_done, rpc_defer(call, NULL, name));
}

/*
 * subscribe [] or [{call: F}]: events as "event" notifications, or, for a
 * Neovim client (which runs only its own API for a peer), as
 * nvim_call_function(F, [event]).
 */
static void
rpc_subscribe(struct rpc_call *call)
{
	const msgpack_object	*opts = rpc_param(call, 0), *fn;
	char			 name[sizeof call->conn->call];

	name[0] = '\0';
	if (opts != NULL && opts->type != MSGPACK_OBJECT_NIL) {
		fn = mc_rpc_map_get(opts, "call");
		if (opts->type != MSGPACK_OBJECT_MAP || fn == NULL ||
		    !mc_rpc_str(fn, name, sizeof name) || name[0] == '\0' ||
		    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrs"
		    "tuvwxyz0123456789_#.:") != strlen(name)) {
			rpc_error(call, MC_E_INVAL, "parameter 1: expected "
			    "{call: FUNCTION}, a function name of letters, "
			    "digits, _ # . : and at most %zu bytes",
			    sizeof name - 1);
			return;
		}
	}
	memcpy(call->conn->call, name, sizeof name);
	call->conn->subscribed = true;
	rpc_ok(call);
	msgpack_pack_true(&call->pk);
}

/* Check the method and its parameter count; run it; send the reply. */
void
rpc_dispatch(struct conn *conn, const struct mc_rpc_message *msg)
{
	struct rpc_call		 call = { .conn = conn, .msg = msg };
	const struct rpc_method	*m = NULL;
	size_t			 i;
	uint32_t		 n = msg->params.via.array.size;

	msgpack_sbuffer_init(&call.sb);
	msgpack_packer_init(&call.pk, &call.sb, msgpack_sbuffer_write);
	for (i = 0; i < sizeof rpc_methods / sizeof rpc_methods[0]; i++)
		if (strcmp(rpc_methods[i].name, msg->method) == 0)
			m = &rpc_methods[i];
	if (m == NULL)
		rpc_error(&call, MC_E_PROTO, "unknown method %s", msg->method);
	else if (n < m->min_params || n > m->max_params)
		rpc_error(&call, MC_E_INVAL, "%s takes %u to %u parameters, "
		    "got %u", m->name, m->min_params, m->max_params, n);
	else
		m->fn(&call);
	if (call.deferred)
		msgpack_sbuffer_destroy(&call.sb);
	else
		server_send(conn, &call.sb);
}
