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
	const char			*action;	/* what start or restart
							   does, in words */
};

/* A reply owed after a probe; holds a reference on the connection. */
struct rpc_later {
	struct conn	*conn;
	uint32_t	 msgid;
	char		 job[MC_NAME_MAX + 8];
	char		 profile[MC_NAME_MAX + 1];
	uint64_t	 requests;	/* the daemon's count when deferred */
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

/* Listed: a job with a file, or one whose removal launchd refused. */
static bool
rpc_listed(const struct job *j)
{
	return !j->removed || j->state == JOB_ERROR;
}

/*
 * The job named by parameter i, or an error reply and NULL.  A removed job
 * takes no request; status (shown) still shows one launchd will not let
 * go of.
 */
static struct job *
rpc_job_named(struct rpc_call *call, unsigned i, bool shown)
{
	char		 name[MC_NAME_MAX + 8];
	struct job	*j;

	if (!mc_rpc_str(rpc_param(call, i), name, sizeof name)) {
		rpc_error(call, MC_E_INVAL, "parameter %u: expected a job name",
		    i + 1);
		return NULL;
	}
	if ((j = job_find(call->conn->daemon, name)) == NULL || (j->removed &&
	    !(shown && rpc_listed(j)))) {
		rpc_error(call, MC_E_NOJOB, "no job named %s", name);
		return NULL;
	}
	return j;
}

static struct job *
rpc_job(struct rpc_call *call, unsigned i)
{
	return rpc_job_named(call, i, false);
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
	rpc_pack_job(&call->pk, j, call->action);
	rpc_event_change(d, j, MC_EV_CHANGE, call->msg->method);
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

/*
 * Hand the changed override to the driver, which saves it before acting
 * on it, and answer with the job.
 */
static void
rpc_commit(struct rpc_call *call, struct job *j, enum lifecycle_event type)
{
	struct mcd	*d = call->conn->daemon;
	char		 why[256];

	if (driver_request(d, j, type, why, sizeof why) == -1) {
		log_warnx("job %s: request not saved, undone: %s", j->name,
		    why);
		rpc_undo(d, j, &call->before);
		rpc_error(call, MC_E_IO, "could not save the change: %s", why);
		return;
	}
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
	l->requests = call->conn->daemon->requests;
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

/* --- handlers --------------------------------------------------------------- */

static void
rpc_hello(struct rpc_call *call)
{
	rpc_ok(call);
	msgpack_pack_map(&call->pk, 5);
	rpc_pack_kv(&call->pk, "version", MC_VERSION);
	mc_rpc_pack_str(&call->pk, "protocol");
	msgpack_pack_int(&call->pk, MC_PROTOCOL_VERSION);
	mc_rpc_pack_str(&call->pk, "pid");
	msgpack_pack_int64(&call->pk, (int64_t)getpid());
	rpc_pack_managed(&call->pk, &call->conn->daemon->managed);
	/* The library its probes and jobs get: whose verdict this is. */
	rpc_pack_kv(&call->pk, "shim", call->conn->daemon->paths.shim);
}

static void
rpc_status(struct rpc_call *call)
{
	struct mcd	*d = call->conn->daemon;
	struct job	*j;
	size_t		 i, n = 0;

	if (rpc_param(call, 0) != NULL) {
		if ((j = rpc_job_named(call, 0, true)) == NULL)
			return;
		rpc_ok(call);
		msgpack_pack_array(&call->pk, 1);
		rpc_pack_job(&call->pk, j, NULL);
		return;
	}
	for (i = 0; i < d->njobs; i++)
		n += rpc_listed(d->jobs[i]);
	rpc_ok(call);
	msgpack_pack_array(&call->pk, (uint32_t)n);
	for (i = 0; i < d->njobs; i++)
		if (rpc_listed(d->jobs[i]))
			rpc_pack_job(&call->pk, d->jobs[i], NULL);
}

/* Does managed configuration allow profile?  Else an EMANAGED reply. */
static bool
rpc_managed_ok(struct rpc_call *call, const char *profile)
{
	struct mcd	*d = call->conn->daemon;
	const char	*key = managed_forbids(&d->managed, &d->profiles, profile);

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

/*
 * A profile held back on this guest by a failed verify may not be asked
 * for (verified.c); an error reply if it is.  Auto passes over it.
 */
static bool
rpc_verified_ok(struct rpc_call *call, const char *profile)
{
	char	why[512];

	if (strcmp(profile, PROFILE_AUTO) == 0 ||
	    !verified_holds_back(call->conn->daemon->verified, profile))
		return true;
	verified_why(call->conn->daemon->verified, profile, why, sizeof why);
	rpc_error(call, MC_E_PROBE, "profile %s is held back: %s", profile,
	    why);
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
	if (strcmp(name, PROFILE_AUTO) == 0)
		return true;
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
	if (j == NULL || j->removed)
		mc_rpc_pack_response_error(&pk, l->msgid, MC_E_NOJOB,
		    "the job is gone");
	else if (j->last_request > l->requests)
		/* disable, profile, stop... answered while the probe ran:
		 * the later request stands. */
		mc_rpc_pack_response_error(&pk, l->msgid, MC_E_SUPERSEDED,
		    "a later request for the job was answered while the "
		    "profile was probed: it stands, and this enable changed "
		    "nothing");
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
		/* A failed job was booted out: ask launchd afresh. */
		j->loaded = false;
		if (driver_request(d, j, LC_EV_ENABLE, why, sizeof why) == -1) {
			rpc_undo(d, j, &before);
			mc_rpc_pack_response_error(&pk, l->msgid, MC_E_IO, why);
		} else {
			job_effective(d, j);
			mc_rpc_pack_response_ok(&pk, l->msgid);
			rpc_pack_job(&pk, j, NULL);
			rpc_event_change(d, j, MC_EV_CHANGE, MC_M_ENABLE);
		}
	}
	rpc_later_send(l, &sb);
}

static void
rpc_enable(struct rpc_call *call)
{
	struct job		*j = rpc_job(call, 0);
	const msgpack_object	*opts = rpc_param(call, 1), *prof = NULL;
	char			 profile[MC_NAME_MAX + 1] = "";
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
		    job_profile_wanted(call->conn->daemon, j));
	if (!rpc_managed_ok(call, profile) || !rpc_verified_ok(call, profile))
		return;
	/*
	 * Reverted: a fresh probe must pass before the revert is cleared.
	 * Profile auto has none to wait for: it takes the highest profile
	 * whose probe has not failed, probes it, and steps down on failure.
	 */
	if ((o->reverted.set || o->failed.set) &&
	    strcmp(profile, PROFILE_AUTO) == 0) {
		memset(&o->reverted, 0, sizeof o->reverted);
		memset(&o->failed, 0, sizeof o->failed);
	} else if (o->reverted.set || o->failed.set) {
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
	gate_probe_afresh(call->conn->daemon, profile);
	rpc_commit(call, j, LC_EV_ENABLE);
}

static void
rpc_disable(struct rpc_call *call)
{
	struct job	*j = rpc_job(call, 0);

	if (j == NULL)
		return;
	rpc_override(call, j)->unlocked = 0;
	rpc_commit(call, j, LC_EV_DISABLE);
}

static void
rpc_profile_set(struct rpc_call *call)
{
	struct job	*j = rpc_job(call, 0);
	char		 profile[MC_NAME_MAX + 1];
	struct override	*o;

	if (j == NULL || !rpc_profile_ok(call, rpc_param(call, 1), profile,
	    sizeof profile) || !rpc_managed_ok(call, profile) ||
	    !rpc_verified_ok(call, profile))
		return;
	o = rpc_override(call, j);
	snprintf(o->profile, sizeof o->profile, "%s", profile);
	gate_probe_afresh(call->conn->daemon, profile);
	rpc_commit(call, j, LC_EV_PROFILE);
}

static void
rpc_profile_list(struct rpc_call *call)
{
	rpc_ok(call);
	rpc_pack_profiles(&call->pk, &call->conn->daemon->profiles);
}

static void
rpc_set_stopped(struct rpc_call *call, struct job *j, bool stopped)
{
	struct override	*o = rpc_override(call, j);

	o->stopped = stopped;
	/*
	 * start on a failed job starts it again, as supervisorctl start does
	 * for FATAL and systemctl start for a failed unit: the failure is
	 * cleared (the log keeps it), and a revert stays.
	 */
	if (!stopped && o->failed.set) {
		log_info("job %s: start: its failure (%s) cleared, starting "
		    "it again", j->name, o->failed.trigger);
		memset(&o->failed, 0, sizeof o->failed);
	}
	rpc_commit(call, j, stopped ? LC_EV_STOP : LC_EV_START);
}

/*
 * start, or restart (kickstart -k: the process goes and launchd starts the
 * job again).  A job that runs nothing (stopped, failed, or left down) is
 * started by either, as kickstart -k starts a service that is not running.
 */
static void
rpc_run(struct rpc_call *call, bool restart)
{
	struct job		*j = rpc_job(call, 0);
	const struct override	*o;

	if (j == NULL)
		return;
	o = state_get(&call->conn->daemon->state, j->name, false);
	call->action = job_start_action(j, o, restart);
	if (!restart || j->pid <= 0 || (o != NULL && (o->stopped ||
	    o->failed.set))) {
		rpc_set_stopped(call, j, false);
		return;
	}
	driver_request(call->conn->daemon, j, LC_EV_RESTART, NULL, 0);
	rpc_changed(call, j);
}

static void
rpc_start(struct rpc_call *call)
{
	rpc_run(call, false);
}

static void
rpc_stop(struct rpc_call *call)
{
	struct job	*j = rpc_job(call, 0);

	if (j != NULL)
		rpc_set_stopped(call, j, true);
}

static void
rpc_restart(struct rpc_call *call)
{
	rpc_run(call, true);
}

static void
rpc_reload(struct rpc_call *call)
{
	driver_rescan(call->conn->daemon);
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
	rpc_pack_kv(&pk, "profile", e->profile);
	rpc_pack_kv(&pk, "status", gate_word(e));
	rpc_pack_kv(&pk, "reason", e->reason);
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
	char			 name[MC_NAME_MAX + 1];
	const struct profile	*p;
	struct job		*j;

	if (arg->type == MSGPACK_OBJECT_MAP) {
		if ((prof = mc_rpc_map_get(arg, "profile")) == NULL ||
		    !rpc_profile_ok(call, prof, name, sizeof name))
			return;
	} else {
		if ((j = rpc_job(call, 0)) == NULL)
			return;
		/* Profile auto: the profile it chose. */
		snprintf(name, sizeof name, "%s", j->auto_profile &&
		    j->profile != NULL ? j->profile->name :
		    job_profile_wanted(d, j));
	}
	if (strcmp(name, PROFILE_AUTO) == 0) {
		rpc_error(call, MC_E_NOPROFILE, "auto is not a profile of its "
		    "own but the highest shipped one that passes: probe that "
		    "one (metalcapctl profiles)");
		return;
	}
	if ((p = profile_find(&d->profiles, name)) == NULL) {
		rpc_error(call, MC_E_NOPROFILE, "no profile named %s", name);
		return;
	}
	/* A probe injects the profile's shim: what may not run, no probe
	 * (stock, which injects nothing, always may). */
	if ((p->family_max != 0 && !rpc_managed_ok(call, name)) ||
	    !rpc_may_defer(call))
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
