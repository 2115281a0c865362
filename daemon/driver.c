/* SPDX-License-Identifier: MIT */
/*
 * The driver: the one place a job's state changes.  Every event about a
 * job comes here, from the evidence sources through struct mcd's emit
 * pointer (dirwatch.c, watch.c, gate.c, and reconcile.c's launchctl
 * results) or from a request (rpc.c, driver_request).  The driver gathers
 * the job's facts, asks lifecycle_step where the job goes, and carries
 * out the row's actions in one order: persist, notify, probe, kickstart,
 * then render, bootstrap or bootout (one reconcile).  What those find out
 * comes back as events.
 *
 * Observers (the log, RPC subscribers, the fleet status file) hear of
 * every change through the pointers in struct mcd; nothing here knows
 * who they are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "mc_util.h"
#include "mcd.h"
#include "protocol.h"

#define GONE_ASK_MS		100	/* launchd records an exit after reaping */
#define UNWATCHABLE_ASK_MS	2000

static void
driver_notify(struct mcd *d, const struct job *j, const char *what)
{
	size_t	i;

	for (i = 0; i < d->nobservers; i++)
		d->observers[i](d, j, what);
}

/*
 * Save the overrides.  A revert or failure that could not be saved is
 * still in force in memory (state_unsaved says so, and status shows it),
 * and the next save, whoever makes it, writes it too.
 */
static int
driver_save(struct mcd *d, char *why, size_t whylen)
{
	if (state_save(&d->state, why, whylen) == -1) {
		d->state_unsaved = true;
		return -1;
	}
	d->state_unsaved = false;
	return 0;
}

static void
driver_set_state(struct mcd *d, struct job *j, enum job_state s,
    const char *reason)
{
	char	kept[sizeof j->reason];
	bool	changed;

	/* The reason is kept cut to its field: compare what is kept. */
	mc_text(kept, sizeof kept, reason ? reason : "");
	changed = j->state != s || strcmp(j->reason, kept) != 0;
	j->state = s;
	memcpy(j->reason, kept, sizeof j->reason);
	/*
	 * Never probing for a probe no one runs: a verdict found stale on a
	 * path that does not probe (a restart after the probe or the shim
	 * was replaced) used to leave the job probing for good.
	 */
	if (s == JOB_PROBING && j->profile != NULL) {
		j->probing = true;
		gate_verdict(d, j->profile);
	}
	/* The status file shows state and pid: tell for those only. */
	if (changed || j->pid != j->fleet_pid) {
		j->fleet_pid = j->pid;
		driver_notify(d, j, changed ? "state" : NULL);
	}
}

/*
 * The gate's valid verdict on the job's profile, or NULL: looked up once
 * a step (each look stats the shim and the probe).
 */
static const struct gate_entry *
driver_verdict(struct mcd *d, const struct job *j)
{
	return j->profile != NULL ? gate_peek(d, j->profile) : NULL;
}

/* The facts lifecycle_step decides on, as the job stands now. */
static void
driver_facts(struct mcd *d, const struct job *j, const struct gate_entry *v,
    struct lifecycle_facts *f)
{
	const struct override	*o = state_get(&d->state, j->name, false);

	memset(f, 0, sizeof *f);
	f->valid = j->spec != NULL;
	f->stopped = (o != NULL && o->stopped) || console_holds(d, j);
	f->failed = o != NULL && o->failed.set;
	f->reverted = o != NULL && o->reverted.set;
	f->crashing = j->crashing.set;
	/* launchd's or the kernel's word only: a log line never decides. */
	f->env_fault = crashing_env_fault(j);
	f->wants_unlocked = j->unlocked;
	f->managed = j->stock_note[0] != '\0';
	f->profile_exists = j->profile != NULL;
	f->profile_ok = j->profile != NULL && j->profile->error[0] == '\0';
	f->profile_unlocks = j->profile != NULL && j->profile->family_max != 0;
	/* Under an allowlist, its identity is part of the verdict. */
	f->verdict_known = v != NULL && !ident_pending(d, j);
	f->verdict_fails = v != NULL && v->status == GATE_FAIL;
	f->blocked = j->state == JOB_BLOCKED || j->blocked;
	f->background_ok = d->background_ok;
	/*
	 * Broad on purpose, for evidence: a job just set stock may run the
	 * injected process until launchd has the new agent.
	 */
	f->carries_shim = j->state == JOB_UNLOCKED ||
	    j->state == JOB_BLOCKED || (j->unlocked && f->profile_unlocks);
}

/*
 * Where the job is going, as far as the daemon knows now: where it
 * settles once launchd has it (a process that turns out not to carry the
 * shim, "blocked", is learnt only once it runs).
 */
enum job_state
driver_next_state(struct mcd *d, const struct job *j)
{
	struct lifecycle_facts	f;
	enum lifecycle_why	why;

	driver_facts(d, j, driver_verdict(d, j), &f);
	return lifecycle_settle(&f, &why);
}

/* "trigger: first evidence", or that it is not saved (a full disk). */
static void
driver_incident_text(struct mcd *d, const struct incident *in, char *buf,
    size_t len)
{
	char	why[256];

	/* Each telling tries the save again. */
	if (d->state_unsaved && driver_save(d, why, sizeof why) == -1) {
		snprintf(buf, len, "%s (not saved yet: %s)", in->trigger, why);
		return;
	}
	snprintf(buf, len, "%s%s%s", in->trigger, in->nevidence ? ": " : "",
	    in->nevidence ? in->evidence[0] : "");
}

static void
driver_incident_set(struct incident *in, const char *trigger,
    const char *const *evidence, int n)
{
	int	i;

	memset(in, 0, sizeof *in);
	in->set = true;
	in->time = (long)time(NULL);
	/* Log lines are anyone's bytes: kept as whole UTF-8 characters. */
	mc_text(in->trigger, sizeof in->trigger, trigger);
	for (i = 0; i < n && i < EVIDENCE_MAX; i++)
		mc_text(in->evidence[in->nevidence++], sizeof in->evidence[0],
		    evidence[i]);
}

/*
 * The stock run of a job its health check reverted fails the check too:
 * the revert is withdrawn (withdraw.c) and saved, and the event becomes a
 * change of the job's settings, judged on facts taken after it: the job
 * goes where it settles, unlocked again once the gate passes its profile.
 */
static void
driver_health_fails_stock(struct mcd *d, struct job *j, struct mcd_event *ev)
{
	char	why[256];

	if (ev->type != LC_EV_HEALTH_FAIL || !withdraw_health(d, j))
		return;
	if (driver_save(d, why, sizeof why) == -1)
		log_warnx("job %s: its withdrawn revert is not saved yet: %s",
		    j->name, why);
	ev->type = LC_EV_MANAGED;
	ev->trigger = NULL;
	ev->evidence = NULL;
	ev->nevidence = 0;
}

/*
 * Record a revert or a failure with its evidence, and save it.  Saved
 * with it is the request that led to it, if any: when that save fails,
 * -1 and why, and the caller refuses the request and undoes both.  The
 * evidence's own incident stays in force in memory, unsaved, and the next
 * save, whoever makes it, writes it too.
 */
static int
driver_record(struct mcd *d, struct job *j, enum job_state next,
    const struct mcd_event *ev, bool request, char *why, size_t whylen)
{
	struct override	*o = state_get(&d->state, j->name, true);
	const char	*unsaved = "", *trigger = ev->trigger;

	driver_incident_set(next == JOB_FAILED ? &o->failed : &o->reverted,
	    trigger, ev->evidence, ev->nevidence);
	if (next != JOB_FAILED)
		o->revert_count++;
	if (driver_save(d, why, whylen) == -1) {
		if (request)
			return -1;
		unsaved = "; not saved yet, kept in memory until the state can "
		    "be saved: ";
	}
	if (next == JOB_FAILED)
		log_warnx("job %s: failed, no more restarts: %s%s%s", j->name,
		    trigger, unsaved, *unsaved ? why : "");
	else
		log_warnx("job %s: reverted to stock: %s: %s%s%s", j->name,
		    ev->trigger, ev->nevidence > 0 ? ev->evidence[0] : "",
		    unsaved, *unsaved ? why : "");
	return 0;
}

/* The words for a new state. */
static const char *
driver_reason(struct mcd *d, struct job *j, const struct lifecycle_step *st,
    const struct mcd_event *ev, char *buf, size_t len)
{
	const struct override	*o = state_get(&d->state, j->name, false);

	switch (st->why) {
	case LC_WHY_STOPPED:
		if (console_holds(d, j))
			return console_reason(d, buf, len);
		return "stopped by request";
	case LC_WHY_INCIDENT:
		if (o == NULL)
			return "";
		driver_incident_text(d, st->next == JOB_FAILED ? &o->failed :
		    &o->reverted, buf, len);
		return buf;
	case LC_WHY_NO_PROFILE:
		return "the profile does not exist: running stock";
	case LC_WHY_BAD_PROFILE:
		return j->profile->error;
	case LC_WHY_MANAGED:
		return j->stock_note;
	case LC_WHY_PROBING:
		return "probing the profile before running it unlocked";
	case LC_WHY_BLOCKED:
		return j->reason;
	case LC_WHY_PARTIAL:
		return j->note;
	case LC_WHY_INVALID:
		return j->errors.count ? j->errors.items[0] :
		    "invalid job file";
	case LC_WHY_EVENT:
		return ev->reason != NULL ? ev->reason : "";
	case LC_WHY_CRASHING:
		return crashing_text(j, buf, len);
	case LC_WHY_NONE:
		break;
	}
	return "";
}

/* What an event tells of the job before it is judged. */
static void
driver_absorb(struct mcd *d, struct job *j, const struct gate_entry *v,
    struct mcd_event *ev, struct lifecycle_facts *f,
    char evidence[3][WATCH_EVIDENCE_LEN], const char *evp[3], int *loop_n)
{
	const char	*said;

	switch (ev->type) {
	case LC_EV_GONE:
		j->pid = 0;
		j->loaded = false;
		break;
	case LC_EV_START:
	case LC_EV_STOP:
		/* Make the reconcile ask launchd again. */
		j->loaded = false;
		break;
	case LC_EV_FILE_CHANGED:
	case LC_EV_ENABLE:
	case LC_EV_DISABLE:
	case LC_EV_PROFILE:
		/* Another check or another profile: judged afresh. */
		j->health_blind = false;
		break;
	case LC_EV_EXIT_CODE:
	case LC_EV_EXIT_SIGNAL:
	case LC_EV_EXIT_JETSAM:
		*loop_n = watch_count_exits(j, ev, evidence);
		f->crash_loop = *loop_n > 0;
		evp[0] = evidence[0];
		evp[1] = evidence[1];
		ev->evidence = evp;
		ev->nevidence = 2;
		/* A line of its log may describe, as a likely cause only. */
		if ((said = crashing_said(j)) != NULL) {
			mc_fmt(evidence[2], WATCH_EVIDENCE_LEN, "its log names "
			    "a likely cause (%s): %s", said, j->said.line);
			evp[ev->nevidence++] = evidence[2];
		}
		/* Revert or crashing, the row decides: see driver_step. */
		ev->trigger = "crash loop";
		break;
	case LC_EV_SPAWN_FAILED:
		watch_spawn_cause(d, j, evidence[0], WATCH_EVIDENCE_LEN);
		snprintf(evidence[1], WATCH_EVIDENCE_LEN, "launchd: last exit "
		    "code = %s", ev->last_exit);
		evp[0] = evidence[0];
		evp[1] = evidence[1];
		ev->evidence = evp;
		ev->nevidence = 2;
		ev->trigger = RESPAWN_TRIGGER;
		break;
	default:
		break;
	}
	/* A revert the gate calls for carries the verdict as evidence. */
	if (ev->trigger == NULL && v != NULL && v->status == GATE_FAIL) {
		ev->trigger = "probe";
		evp[0] = v->reason;
		ev->evidence = evp;
		ev->nevidence = 1;
	}
}

/* A partial verdict keeps the family override only. */
static void
driver_partial(struct job *j, const struct gate_entry *v)
{
	j->drop_tg = false;
	j->note[0] = '\0';
	if (job_runs_unlocked(j) && v != NULL && v->status == GATE_PARTIAL) {
		j->drop_tg = true;
		mc_text(j->note, sizeof j->note, v->reason);
	}
}

/* launchd has been told; what runs now is learnt as after any change. */
static void
driver_restarted(struct mcd *d, struct job *j)
{
	j->loaded = false;
	reconcile(d, j);
}

static void
driver_kickstart(struct mcd *d, struct job *j)
{
	char		 target[256];

	/*
	 * A restart asked for before the last one's run has shown is done
	 * once that run is known (reconcile.c): a kill is then counted for
	 * the process it kills, and a burst of requests cannot count stops
	 * of ours that would hide the crashes after it.
	 */
	if (j->kicked) {
		j->kick_again = true;
		return;
	}
	snprintf(target, sizeof target, "%s/%s", j->domain[0] ? j->domain :
	    d->domain, j->label);
	/* Our stop is not a crash: neither its pid's end nor launchd's count. */
	watch_unwatch_pid(j);
	if (j->pid > 0 && j->pid != j->stopped_pid) {
		j->own_stops++;
		j->stopped_pid = j->pid;
		agent_save_counts(d, j);
	}
	j->kicked = true;
	restart_graceful(d, j, target, driver_restarted);
}

/* A new pid: follow it, or, if it cannot be followed, ask launchd soon. */
static void
driver_started(struct mcd *d, struct job *j)
{
	int	err;

	if (watch_started(d, j) == 0)
		return;
	if ((err = errno) != ESRCH)
		log_warnx("job %s: cannot watch pid %ld: %s", j->name, j->pid,
		    strerror(err));
	/* Unwatched: the same pid seen again must be followed again. */
	j->watched_pid = 0;
	j->pid = 0;
	j->loaded = false;
	reconcile_after(d, j, err == ESRCH ? GONE_ASK_MS : UNWATCHABLE_ASK_MS);
}

/* Carry out the row's actions; -1 only when a request cannot be saved. */
static int
driver_act(struct mcd *d, struct job *j, const struct gate_entry *v,
    const struct lifecycle_step *st, const struct mcd_event *ev, char *why,
    size_t whylen)
{
	const bool	 incident = st->row != NULL &&
	    st->row->why == LC_WHY_INCIDENT && (st->actions & LC_PERSIST);
	char		 reason[MC_ERR_LEN], spare[256];
	bool		 request = true;
	const bool	 was_unsaved = d->state_unsaved;

	/*
	 * A request that cannot be saved is refused and undone (rpc.c), so
	 * nothing is done for it, and what memory holds is as saved as it
	 * was before.  Only requests and incidents are saved.
	 */
	if (why == NULL) {
		why = spare;
		whylen = sizeof spare;
		request = false;
	}
	if ((st->actions & LC_PERSIST) && (incident ? driver_record(d, j,
	    st->next, ev, request, why, whylen) : driver_save(d, why,
	    whylen)) == -1) {
		d->state_unsaved = was_unsaved;
		return -1;
	}
	/* What a full disk kept from being saved, each settle tries again. */
	if (ev->type == LC_EV_LAUNCHD_OK && d->state_unsaved &&
	    driver_save(d, spare, sizeof spare) == 0)
		log_info("state saved again: %s", d->state.path);
	/* Saved: a start runs what launchd leaves down (reconcile.c); an
	 * incident or a stop is no start's to undo. */
	if (ev->type == LC_EV_START || ev->type == LC_EV_STOP || incident)
		j->start_wanted = ev->type == LC_EV_START && !incident;
	if (st->next == JOB_BLOCKED)
		j->blocked = true;
	else if (ev->type == LC_EV_SHIM_HOOKED)
		j->blocked = false;
	if (st->row != NULL && st->row->next != LC_SAME)
		driver_set_state(d, j, st->next, driver_reason(d, j, st, ev,
		    reason, sizeof reason));
	else if (st->actions & LC_NOTIFY) {
		j->fleet_pid = j->pid;
		driver_notify(d, j, NULL);
	}
	if (incident) {
		job_effective(d, j);
		driver_notify(d, j, st->next == JOB_FAILED ? "failed" :
		    "revert");
	}
	if (ev->type == LC_EV_STARTED)
		driver_started(d, j);
	/* Started from files since replaced (an upgrade under KeepAlive):
	 * read again, and judged again by the allowlist when read. */
	if (ev->type == LC_EV_STARTED && ident_pending(d, j))
		ident_start(d, j);
	if (st->actions & LC_PROBE) {
		j->probing = true;
		gate_verdict(d, j->profile);
		ident_start(d, j);
	}
	if (st->actions & LC_KICKSTART) {
		if (ev->type == LC_EV_HEALTH_LAPSED)
			log_warnx("job %s: restarting it: its health check "
			    "passed, then failed: %s", j->name,
			    ev->nevidence > 0 ? ev->evidence[0] : "");
		driver_kickstart(d, j);
	}
	if (st->actions & (LC_RENDER | LC_BOOTSTRAP | LC_BOOTOUT)) {
		j->probing = false;
		if (st->next == JOB_FAILED)
			j->loaded = false;
		driver_partial(j, v);
		if (ev->type == LC_EV_GONE)
			reconcile_after(d, j, GONE_ASK_MS);
		else
			reconcile(d, j);
	}
	return 0;
}

/* One event for one job, start to end. */
static int
driver_step(struct mcd *d, struct job *j, const struct mcd_event *event,
    char *why, size_t whylen)
{
	struct mcd_event	 ev = *event;
	struct lifecycle_facts	 f;
	struct lifecycle_step	 st;
	char			 evidence[3][WATCH_EVIDENCE_LEN];
	const char		*evp[3];
	const struct gate_entry	*v;
	int			 loop_n = 0;

	driver_health_fails_stock(d, j, &ev);
	crashing_clear(j, &ev);
	job_effective(d, j);
	v = driver_verdict(d, j);
	driver_facts(d, j, v, &f);
	driver_absorb(d, j, v, &ev, &f, evidence, evp, &loop_n);
	lifecycle_step(j->state, ev.type, &f, &st);
	/* The evidence's second line is "last: ..." (watch_count_exits). */
	if (st.next == JOB_CRASHING && (ev.type == LC_EV_EXIT_CODE ||
	    ev.type == LC_EV_EXIT_SIGNAL || ev.type == LC_EV_EXIT_JETSAM))
		crashing_exit(d, j, &ev, loop_n, evidence[1] + 6);
	log_debug("job %s: %s: %s -> %s", j->name,
	    lifecycle_event_name(ev.type), job_state_name(j->state),
	    job_state_name(st.next));
	return driver_act(d, j, v, &st, &ev, why, whylen);
}

/* A request for a job (rpc.c); -1 and why if it could not be saved. */
int
driver_request(struct mcd *d, struct job *j, enum lifecycle_event type,
    char *why, size_t whylen)
{
	struct mcd_event	ev = { .type = type, .job = j };

	/* A request answered later (enable after its probe) yields to it. */
	j->last_request = ++d->requests;
	return driver_step(d, j, &ev, why, whylen);
}

/*
 * Hand an event to each job that takes it (which: the event it is for
 * that job, or -1).  A step may end a job (one never given to launchd is
 * forgotten at once): walk a snapshot, and let a job end only itself.
 */
static void
driver_each(struct mcd *d, struct mcd_event *ev,
    int (*which)(const struct job *, const struct mcd_event *))
{
	size_t		  i, n = d->njobs;
	struct job	**snap;
	struct mcd_event  one;
	int		  type;

	if (n == 0)
		return;
	snap = malloc(n * sizeof *snap);
	memcpy(snap, d->jobs, n * sizeof *snap);
	for (i = 0; i < n; i++) {
		if ((type = which(snap[i], ev)) == -1)
			continue;
		one = *ev;
		one.type = (enum lifecycle_event)type;
		one.job = snap[i];
		driver_step(d, snap[i], &one, NULL, 0);
	}
	free(snap);
}

/* A verdict concerns the jobs that use the profile judged. */
static int
driver_verdict_for(const struct job *j, const struct mcd_event *ev)
{
	return j->profile != NULL && strcmp(j->profile->name,
	    ev->profile) == 0 ? (int)ev->type : -1;
}

/*
 * After a scan: gone, read anew, or to check against new settings; the
 * daemon's first scan is a login's (its own start).
 */
static int
driver_scanned(const struct job *j, const struct mcd_event *ev)
{
	if (j->removed)
		return LC_EV_FILE_REMOVED;
	if (ev->type == LC_EV_LOGIN)
		return LC_EV_LOGIN;
	return j->file_changed ? LC_EV_FILE_CHANGED : LC_EV_MANAGED;
}

/*
 * A job that is gone takes its override and incidents with it: a new job
 * of the same name starts from its own file, not from an old enable.
 */
static void
driver_forget_override(struct mcd *d, struct job *j)
{
	char	why[256];

	if (state_get(&d->state, j->name, false) == NULL)
		return;
	state_drop(&d->state, j->name);
	/* Unsaved, it would come back after a restart: retried (driver_act). */
	if (driver_save(d, why, sizeof why) == -1)
		log_warnx("job %s: its override could not be forgotten on "
		    "disk yet: %s", j->name, why);
}

/* Re-read profiles, managed settings and job folders; act on each job. */
void
driver_rescan(struct mcd *d)
{
	struct mcd_event	ev = { .type = d->scanned ? LC_EV_MANAGED :
	    LC_EV_LOGIN };
	bool			first = !d->scanned;

	d->scanned = true;
	managed_load(&d->managed, &d->paths);
	profile_load_all(&d->profiles, d->paths.profiles);
	reconcile_prefer_gui(d);
	job_scan(d, first);
	driver_each(d, &ev, driver_scanned);
	dirwatch_rearm(d);
	/* Reading many job files leaves a high-water mark in the heap. */
	if (d->njobs >= 64)
		platform_release_memory();
}

/*
 * A verdict came: each job of profile auto chooses again (job_effective),
 * and one whose choice changed moves as after a profile change: down
 * past a profile that failed, rather than being reverted on it, or back
 * up to one that passes again; with none left it runs stock.
 */
static void
driver_auto(struct mcd *d)
{
	struct mcd_event	 ev = { .type = LC_EV_PROFILE };
	const struct profile	*was;
	struct job		**snap;
	size_t			 i, n = d->njobs;

	if (n == 0)
		return;		/* d->jobs may be NULL: no memcpy from it */
	snap = malloc(n * sizeof *snap);
	memcpy(snap, d->jobs, n * sizeof *snap);
	for (i = 0; i < n; i++) {
		if (!snap[i]->auto_profile)
			continue;
		was = snap[i]->profile;
		job_effective(d, snap[i]);
		if (snap[i]->profile == was)
			continue;
		log_info("job %s: profile auto: %s%s%s", snap[i]->name,
		    snap[i]->profile ? snap[i]->profile->name : "stock",
		    snap[i]->auto_note[0] ? ", passed over: " : "",
		    snap[i]->auto_note);
		ev.job = snap[i];
		driver_step(d, snap[i], &ev, NULL, 0);
	}
	free(snap);
}

/* The emit seam: what the sources and launchctl results hand over. */
void
driver_emit(struct mcd *d, const struct mcd_event *event)
{
	struct mcd_event	ev = *event;

	switch (ev.type) {
	case LC_EV_RESCAN:
		driver_rescan(d);
		return;
	case LC_EV_REPORTS:
		watch_reports_changed(d);
		return;
	case LC_EV_VERIFIED:
		gate_verified(d);
		return;
	case LC_EV_HELD:
		driver_notify(d, ev.job, MC_EV_HELD);
		return;
	case LC_EV_LAUNCHD_GONE:
		driver_step(d, ev.job, &ev, NULL, 0);
		driver_notify(d, ev.job, "removed");
		driver_forget_override(d, ev.job);
		job_forget(d, ev.job);
		return;
	default:
		break;
	}
	if (ev.job != NULL) {
		driver_step(d, ev.job, &ev, NULL, 0);
		return;
	}
	/* A verdict: auto's choices first, then the jobs on the profile. */
	driver_auto(d);
	driver_each(d, &ev, driver_verdict_for);
}
