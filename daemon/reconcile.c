/* SPDX-License-Identifier: MIT */
/*
 * The reconciler: make launchd's view of one job match the desired one.
 *
 * Desired = job file + profile + persisted overrides, rendered into a
 * LaunchAgent.  The driver (driver.c) asks for a reconcile; each job runs
 * at most one at a time, as a chain of launchctl calls; a request that
 * arrives meanwhile marks the job dirty and runs once more afterwards.
 * Every step is idempotent, so a daemon restart simply reconciles again
 * and changes nothing that is right.  What launchd answers goes back to
 * the driver as events (launchd-ok, -error, -gone, started, exit-*):
 * nothing here decides a job's state.
 *
 * launchctl's answers (launchd.md §1.3-1.4): bootstrap 5/37 = already
 * loaded or still draining after a bootout (retry); 119 = disabled (enable,
 * retry); 112/125 = no GUI domain (fall back to user/<uid> only if the
 * template allows Background); print 113 = not loaded.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mc_util.h"
#include "mcd.h"

#define RETRY_MS	200
#define MAX_RETRIES	50	/* 10 s of a label still held at bootstrap */
/*
 * A booted-out label stays until its process exits, within the agent's
 * ExitTimeOut (agent.c), and launchd's cleanup after (a real bootout's
 * log: "scheduling cleanup in 5 sec after sending Terminated: 15").
 */
#define CLEANUP_S		10
#define PID_POLLS	25	/* 5 s for a started job to show a pid */
#define RETRY_FIRST_MS	1000	/* after launchctl errors: then doubling */
#define RETRY_MAX_MS	60000

static void	reconcile_start(struct mcd *, struct job *);
static void	reconcile_print(struct mcd *, struct job *);
static void	reconcile_bootout(struct mcd *, struct job *);
static void	reconcile_wait_gone(struct mcd *, struct job *);
static void	reconcile_enable(struct mcd *, struct job *);
static void	reconcile_bootstrap(struct mcd *, struct job *);
static void	reconcile_refresh(struct mcd *, struct job *);
static void	reconcile_finish(struct mcd *, struct job *);
static void	reconcile_start_later(struct mcd *, struct job *);
static void	reconcile_retry(struct mcd *, struct job *);
static void	reconcile_kick_held(struct mcd *, struct job *);

/* Hand what launchd said to the driver. */
static void
reconcile_emit(struct mcd *d, struct job *j, enum lifecycle_event type,
    const char *reason)
{
	struct mcd_event	ev = { .type = type, .job = j, .reason = reason };

	d->emit(d, &ev);
}

static void
reconcile_timer_cb(uv_timer_t *t)
{
	struct job	*j = t->data;

	j->next_step(j->daemon, j);
}

/* Run step for the job after ms. */
static void
reconcile_later(struct mcd *d, struct job *j, job_step_fn step, uint64_t ms)
{
	if (j->timer == NULL) {
		j->timer = malloc(sizeof *j->timer);
		uv_timer_init(d->loop, j->timer);
		j->timer->data = j;
	}
	j->next_step = step;
	uv_timer_start(j->timer, reconcile_timer_cb, ms, 0);
}

/*
 * Out until someone acts: stopped or failed, or a machine job while
 * another user has the console.
 */
static bool
reconcile_held(struct mcd *d, const struct job *j)
{
	const struct override	*o = state_get(&d->state, j->name, false);

	return (o != NULL && (o->stopped || o->failed.set)) ||
	    console_holds(d, j);
}

/*
 * launchd may come round (a hung launchctl, a label still held, a session
 * that appears): try again, 1 s after the first failure, doubling to a
 * minute.  Timers run only while a job is in error.
 */
static void
reconcile_retry(struct mcd *d, struct job *j)
{
	uint64_t	ms = RETRY_FIRST_MS << (j->failures < 6 ? j->failures : 6);

	j->failures++;
	if (j->busy)
		return;		/* a newer reconcile is already on its way */
	j->busy = true;
	j->retry_pending = true;
	reconcile_later(d, j, reconcile_start_later, ms < RETRY_MAX_MS ? ms :
	    RETRY_MAX_MS);
}

/*
 * After a failure: a request that came meanwhile runs now, else a retry
 * with back-off.  reconcile() is the last thing done with the job: it may
 * end it (a job never loaded is forgotten at once).
 */
static void
reconcile_give_way(struct mcd *d, struct job *j)
{
	j->busy = false;
	if (j->dirty) {
		j->dirty = false;
		j->failures++;
		reconcile(d, j);
		return;
	}
	reconcile_retry(d, j);
}

/* launchd has the job as the driver wants it. */
static void
reconcile_settle(struct mcd *d, struct job *j)
{
	j->failures = 0;
	reconcile_emit(d, j, LC_EV_LAUNCHD_OK, NULL);
}

/* launchctl failed in a way retrying at once will not fix. */
static void
reconcile_fail(struct mcd *d, struct job *j, enum lifecycle_event type,
    const char *what, const struct launchctl_result *r)
{
	char	reason[MC_ERR_LEN];

	snprintf(reason, sizeof reason, "launchctl %s failed (%d): %.*s", what,
	    r->code, (int)strcspn(r->err, "\n"), r->err[0] ? r->err :
	    "no message");
	reconcile_emit(d, j, type, reason);
	reconcile_give_way(d, j);
}

static void
reconcile_error(struct mcd *d, struct job *j, const char *what,
    const struct launchctl_result *r)
{
	reconcile_fail(d, j, LC_EV_LAUNCHD_ERROR, what, r);
}

/* The gui domain is missing: use user/<uid> if the template allows it. */
static bool
reconcile_no_gui(struct mcd *d, struct job *j,
    const struct launchctl_result *r)
{
	if ((r->code != 112 && r->code != 125) ||
	    strncmp(agent_domain(d, j), "gui/", 4) != 0)
		return false;
	/* Nothing can be loaded in a domain that is not there. */
	j->domain[0] = '\0';
	reconcile_emit(d, j, LC_EV_LOGOUT, "no GUI session for this user: "
	    "log in, or allow Background in the job template's "
	    "LimitLoadToSessionType");
	if (!d->background_ok) {
		reconcile_give_way(d, j);
		return true;
	}
	if (strncmp(d->domain, "user/", 5) != 0) {
		snprintf(d->domain, sizeof d->domain, "user/%ld",
		    (long)getuid());
		log_info("no GUI session: using the %s domain", d->domain);
	}
	reconcile_later(d, j, reconcile_print, 0);
	return true;
}

static void
reconcile_removed_cb(struct mcd *d, const struct launchctl_result *r,
    void *arg)
{
	struct job	*j = arg;

	/*
	 * launchd still has it (3: it had not; 112, 125: no such domain, so
	 * nothing there): keep the job, its agent and its record, and say so
	 * until a bootout goes through.  Forgotten, it would run on with the
	 * shim and nothing would name it, not even the uninstaller.
	 */
	if (j->removed && r->code != 0 && r->code != 3 && r->code != 36 &&
	    r->code != 112 && r->code != 125) {
		reconcile_error(d, j, "bootout of a removed job", r);
		return;
	}
	watch_stop(j);
	/*
	 * Its file came back while the bootout was on its way (an editor
	 * that deletes and writes anew): not gone, booted out; start again.
	 */
	if (!j->removed) {
		j->loaded = false;
		j->pid = 0;
		j->watched_pid = 0;
		j->busy = false;
		j->dirty = false;
		reconcile(d, j);
		return;
	}
	agent_forget(d, j);
	measure_forget(d, j);
	log_info("job %s: removed", j->name);
	j->busy = false;
	reconcile_emit(d, j, LC_EV_LAUNCHD_GONE, NULL);
}

static void
reconcile_start(struct mcd *d, struct job *j)
{
	char	why[256];

	j->retries = 0;
	/*
	 * Where it was loaded, before anything goes to launchd about it
	 * (once: a render reads the file again only for its hash).
	 */
	if (j->domain[0] == '\0')
		(void)agent_loaded_hash(d, j);
	if (!j->counts_read)
		agent_read_counts(d, j);
	if (j->removed) {
		char		path[PATH_MAX];
		struct stat	sb;

		/* Never given to launchd (invalid from the start): forget. */
		agent_path(d, j, path, sizeof path);
		if (!j->loaded && stat(path, &sb) == -1 && errno == ENOENT) {
			static struct launchctl_result none = { .code = 3 };

			reconcile_removed_cb(d, &none, j);
			return;
		}
		agent_launchctl(d, j, "bootout", reconcile_removed_cb);
		return;
	}
	/*
	 * Invalid: the last good agent, if any, keeps running, unless the job
	 * is stopped or failed (its label needs no valid file).  Waiting for
	 * the gate: whatever runs keeps running, and a new job waits (a probe
	 * takes milliseconds) rather than start stock and restart.
	 */
	if (j->spec == NULL && reconcile_held(d, j)) {
		watch_stop(j);
		j->out_for_good = true;
		reconcile_bootout(d, j);
		return;
	}
	if (j->spec == NULL || j->probing) {
		reconcile_finish(d, j);
		return;
	}
	job_effective(d, j);
	if (agent_render(d, j, why, sizeof why) == -1) {
		reconcile_emit(d, j, LC_EV_LAUNCHD_ERROR, why);
		reconcile_finish(d, j);
		return;
	}
	if (reconcile_held(d, j)) {
		watch_stop(j);
		reconcile_bootout(d, j);
		return;
	}
	if (!j->changed && j->loaded) {
		/*
		 * Right already; only a pid still to learn needs launchd: one
		 * it runs by itself, or a kickstarted run of a job it would
		 * not run by itself (RunAtLoad and KeepAlive false).
		 */
		if (j->pid == 0 && (jobfile_should_run(j->spec) || j->kicked ||
		    j->start_wanted)) {
			j->retries = 0;
			reconcile_refresh(d, j);
			return;
		}
		reconcile_settle(d, j);
		reconcile_finish(d, j);
		return;
	}
	reconcile_print(d, j);
}

static void
reconcile_print_cb(struct mcd *d, const struct launchctl_result *r, void *arg)
{
	struct job	*j = arg;

	if (reconcile_no_gui(d, j, r))
		return;
	if (r->code == 0) {
		j->loaded = true;
		if (j->changed)
			reconcile_bootout(d, j);
		else
			reconcile_refresh(d, j);
	} else if (r->code == 113) {
		j->loaded = false;
		reconcile_enable(d, j);
	} else
		reconcile_error(d, j, "print", r);
}

static void
reconcile_print(struct mcd *d, struct job *j)
{
	agent_launchctl(d, j, "print", reconcile_print_cb);
}

static void
reconcile_bootout_cb(struct mcd *d, const struct launchctl_result *r,
    void *arg)
{
	struct job		*j = arg;
	/*
	 * Out for good: held, or sent for an invalid file that was (a start
	 * that came meanwhile waits for a valid file).  A re-render's bootout
	 * goes on to load the agent rendered, the last good one, even if the
	 * file went bad meanwhile.
	 */
	const bool		 held = j->out_for_good || reconcile_held(d, j);
	/* No such domain (112, 125: launchd.md §1.4): nothing loaded there. */
	const bool		 no_domain = r->code == 112 || r->code == 125;

	j->out_for_good = false;
	if (no_domain && !held && reconcile_no_gui(d, j, r))
		return;
	/* 3: it was not loaded; 36: it is already going. */
	if (r->code != 0 && r->code != 3 && r->code != 36 &&
	    !(no_domain && held)) {
		reconcile_error(d, j, "bootout", r);
		return;
	}
	j->loaded = false;
	j->pid = 0;
	if (held) {
		reconcile_settle(d, j);
		reconcile_finish(d, j);
		return;
	}
	reconcile_wait_gone(d, j);
}

/* By when must the job's label be gone after a bootout sent now? */
static uint64_t
reconcile_gone_by(struct mcd *d, struct job *j)
{
	return uv_now(d->loop) + (agent_exit_timeout_s(d, j) + CLEANUP_S) *
	    1000;
}

static void
reconcile_bootout(struct mcd *d, struct job *j)
{
	j->gone_by = reconcile_gone_by(d, j);
	watch_unwatch_pid(j);
	held_clear(d, j);	/* out of launchd: nothing holds it */
	agent_launchctl(d, j, "bootout", reconcile_bootout_cb);
}

/* bootout returns before the label is gone: wait for print to say 113. */
static void
reconcile_wait_cb(struct mcd *d, const struct launchctl_result *r, void *arg)
{
	struct job	*j = arg;

	if (r->code == 113) {
		reconcile_enable(d, j);
		return;
	}
	if (uv_now(d->loop) > j->gone_by) {
		reconcile_error(d, j, "bootout (the job did not go away)", r);
		return;
	}
	++j->retries;
	/* Usually gone within milliseconds: look soon, then back off. */
	reconcile_later(d, j, reconcile_wait_gone, j->retries < 4 ?
	    (uint64_t)10 << j->retries : RETRY_MS);
}

static void
reconcile_wait_gone(struct mcd *d, struct job *j)
{
	agent_launchctl(d, j, "print", reconcile_wait_cb);
}

static void
reconcile_enable_cb(struct mcd *d, const struct launchctl_result *r,
    void *arg)
{
	struct job	*j = arg;

	if (reconcile_no_gui(d, j, r))
		return;
	if (r->code != 0) {
		reconcile_error(d, j, "enable", r);
		return;
	}
	reconcile_bootstrap(d, j);
}

/* Measured: choose and render again, then on to the bootstrap. */
static void
reconcile_measured(struct mcd *d, struct job *j)
{
	reconcile_start(d, j);
}

/*
 * Clear a disabled-store entry first, as Homebrew does (launchd.md §2).
 * The job is loaded nowhere now: it goes to the daemon's domain.  Down
 * and about to be loaded is where profile auto measures, never while
 * the job serves (measure.c).
 */
static void
reconcile_enable(struct mcd *d, struct job *j)
{
	if (measure_due(d, j)) {
		measure_run(d, j, reconcile_measured);
		return;
	}
	snprintf(j->domain, sizeof j->domain, "%s", d->domain);
	agent_launchctl(d, j, "enable", reconcile_enable_cb);
}

static void
reconcile_bootstrap_cb(struct mcd *d, const struct launchctl_result *r,
    void *arg)
{
	struct job	*j = arg;
	char		 path[PATH_MAX];

	if (reconcile_no_gui(d, j, r))
		return;
	agent_path(d, j, path, sizeof path);
	switch (r->code) {
	case 0:
		j->loaded = true;
		j->retries = 0;
		agent_mark_loaded(d, j);
		reconcile_refresh(d, j);
		return;
	case 122:	/* root: "Path had bad ownership/permissions" */
		reconcile_fail(d, j, LC_EV_REFUSED, "bootstrap", r);
		return;
	case 5:		/* non-root: loaded, draining, disabled, or refused */
		if (!agent_ok(path)) {
			reconcile_fail(d, j, LC_EV_REFUSED, "bootstrap (the "
			    "agent file is group- or world-writable or not "
			    "ours, and launchd refuses it)", r);
			return;
		}
		/* FALLTHROUGH */
	case 37:	/* root: already bootstrapped */
	case 119:	/* root: disabled */
		if (++j->retries <= MAX_RETRIES) {
			reconcile_later(d, j, r->code == 119 ? reconcile_enable :
			    reconcile_print, RETRY_MS);
			return;
		}
		break;
	}
	reconcile_error(d, j, "bootstrap", r);
}

static void
reconcile_bootstrap(struct mcd *d, struct job *j)
{
	char		 path[PATH_MAX];
	const char	*args[] = { "bootstrap", j->domain, path, NULL };

	log_info("job %s: bootstrap %s", j->name, j->domain);
	j->watched_pid = 0;
	j->runs_counted = 0;	/* a new registration counts from zero */
	j->own_stops = 0;
	j->looked_at = (long)time(NULL);	/* its runs all come after */
	j->kick_again = false;	/* the new registration's run is newer */
	j->env.what = NULL;	/* its runs will say so again */
	j->said.what = NULL;
	held_clear(d, j);
	if (job_runs_unlocked(j))
		watch_begin_tail(d, j);
	agent_path(d, j, path, sizeof path);
	launchctl_run(d, args, reconcile_bootstrap_cb, j);
}

/* Learn pid and last exit; a job just started may need a moment. */
static void
reconcile_refresh_cb(struct mcd *d, const struct launchctl_result *r,
    void *arg)
{
	struct job		*j = arg;
	struct launchd_seen	 seen;
	long			 finished, since = j->looked_at;
	bool			 unrecorded = false, wanted;

	if (r->code == 113) {
		j->loaded = false;
		reconcile_later(d, j, reconcile_start, RETRY_MS);
		return;
	}
	if (r->code != 0) {
		reconcile_error(d, j, "print", r);
		return;
	}
	launchctl_parse_print(r->out, &seen);
	log_debug("job %s: print: pid %ld runs %ld last exit %s state %s",
	    j->name, seen.pid, seen.runs, seen.last_exit, seen.state);
	j->pid = seen.pid;
	snprintf(j->last_exit, sizeof j->last_exit, "%s", seen.last_exit);
	snprintf(j->launchd_state, sizeof j->launchd_state, "%s", seen.state);
	/*
	 * Exits launchd has seen since we last looked (whether or not we
	 * caught them by pid), judged by the last exit status.
	 */
	finished = seen.runs - (seen.pid > 0 ? 1 : 0);
	exited_baseline(d, j, finished);
	/*
	 * launchd may not have recorded the exit yet (a run counted, no pid,
	 * no exit): look again soon, whether or not it should be running.
	 */
	if (strcmp(seen.last_exit, "(never exited)") == 0 && seen.signal == 0) {
		unrecorded = finished > j->runs_counted;
		finished = j->runs_counted;
	}
	/* Exits after this look come after it (an unrecorded one did not). */
	if (!unrecorded)
		j->looked_at = (long)time(NULL);
	if (finished > j->runs_counted) {
		long	n = finished - j->runs_counted;
		bool	was_dirty = j->dirty;

		j->runs_counted = finished;
		j->kicked = false;
		exited_report(d, j, &seen, n, since);
		if (j->dirty && !was_dirty) {
			/* A revert or failure is queued: let it run. */
			reconcile_finish(d, j);
			return;
		}
	}
	/* Settled once per look, the poll's looks included. */
	reconcile_settle(d, j);
	/*
	 * start or restart was asked for and launchd runs nothing (a job it
	 * leaves down, as KeepAlive SuccessfulExit=false after an exit of 0,
	 * or one it runs only when asked): kickstart it, as launchctl
	 * kickstart does for a loaded service (launchd 842 job_mig_kickstart).
	 */
	if (seen.pid > 0)
		j->start_wanted = false;
	else if (j->start_wanted && !unrecorded && !j->dirty &&
	    strcmp(seen.state, "spawn scheduled") != 0) {	/* see restart.c */
		j->start_wanted = false;
		j->kicked = true;
		j->retries = 0;
		reconcile_kick_held(d, j);
		return;
	}
	/*
	 * A job launchd should be running but that has no pid (starting,
	 * just exited, or throttled): look again, quickly at first.  A
	 * request that came meanwhile goes first.
	 */
	/* A kickstarted run shows in launchd a moment later. */
	wanted = jobfile_should_run(j->spec) || j->kicked;
	if (seen.pid > 0 || j->retries > PID_POLLS)
		j->kicked = false;
	if (held_update(d, j, &seen, wanted, j->retries > PID_POLLS) &&
	    !j->dirty) {
		reconcile_later(d, j, reconcile_kick_held,
		    held_poll_ms(++j->retries - PID_POLLS - 2));
		return;
	}
	if (j->pid == 0 && (jobfile_should_run(j->spec) || unrecorded ||
	    j->kicked) && !j->dirty) {
		reconcile_later(d, j, reconcile_refresh,
		    ++j->retries <= PID_POLLS ? RETRY_MS : 2000);
		return;
	}
	if (j->pid > 0 && j->pid != j->watched_pid)
		reconcile_emit(d, j, LC_EV_STARTED, NULL);
	/* A restart asked for while the last was under way: its turn. */
	if (j->kick_again && !j->kicked && !j->dirty && !j->removed) {
		j->kick_again = false;
		reconcile_emit(d, j, LC_EV_RESTART, NULL);
	}
	reconcile_finish(d, j);
}

static void
reconcile_refresh(struct mcd *d, struct job *j)
{
	agent_launchctl(d, j, "print", reconcile_refresh_cb);
}

static void
reconcile_kick_held_cb(struct mcd *d, const struct launchctl_result *r,
    void *arg)
{
	(void)r;	/* the look that follows tells */
	reconcile_refresh(d, arg);
}

/*
 * kickstart: a held job is asked again, so that it runs once allowed
 * (held.c); one that start asked for is run.
 */
static void
reconcile_kick_held(struct mcd *d, struct job *j)
{
	agent_launchctl(d, j, "kickstart", reconcile_kick_held_cb);
}

static void
reconcile_finish(struct mcd *d, struct job *j)
{
	j->busy = false;
	if (j->dirty) {
		j->dirty = false;
		reconcile(d, j);
	}
}

/*
 * Take the job for a reconcile: true if it was free; if busy, it runs once
 * more afterwards.  A request does not wait out an error's back-off.
 */
static bool
reconcile_claim(struct job *j)
{
	if (j->retry_pending) {
		uv_timer_stop(j->timer);
		j->retry_pending = false;
		j->busy = false;
	}
	if (j->busy) {
		j->dirty = true;
		return false;
	}
	j->busy = true;
	return true;
}

/* Bring one job to its desired state (or queue that, if it is busy). */
/*
 * New jobs go to the GUI domain again: someone may have logged in since
 * the daemon fell back to user/UID.  A job loaded stays where it is.
 */
void
reconcile_prefer_gui(struct mcd *d)
{
	/* A template for Background alone: launchd refuses it in gui (134). */
	snprintf(d->domain, sizeof d->domain, "%s/%ld", d->aqua_ok ? "gui" :
	    "user", (long)getuid());
}

void
reconcile(struct mcd *d, struct job *j)
{
	if (reconcile_claim(j))
		reconcile_start(d, j);
}

static void
reconcile_start_later(struct mcd *d, struct job *j)
{
	j->busy = false;
	j->retry_pending = false;
	reconcile(d, j);
}

/* Reconcile after ms (at once if busy: it will run again anyway). */
void
reconcile_after(struct mcd *d, struct job *j, uint64_t ms)
{
	if (reconcile_claim(j))
		reconcile_later(d, j, reconcile_start_later, ms);
}
