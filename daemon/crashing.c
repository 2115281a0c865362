/* SPDX-License-Identifier: MIT */
/*
 * A job crash-looping without the shim: crashing.  Clients' requests can
 * crash a server (a grammar nested too deep), so such a loop is never a
 * reason to give the job up: it stays loaded, runs stock, and launchd
 * restarts it every ThrottleInterval, as KeepAlive alone would.  No
 * back-off of our own is added: each extra delay would be outage a client
 * chooses the length of.  Here: its words for status, the steady run
 * that ends it, and what a line of its log named of its environment,
 * which only ever describes (a client can get such a line echoed).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mc_util.h"
#include "mcd.h"

/* A fault of the job's environment, seen now (launchd's or the kernel's word). */
void
crashing_note_env(struct job *j, const char *what, const char *evidence)
{
	j->env.what = what;
	mc_text(j->env.line, sizeof j->env.line, evidence);
	j->env.ms = uv_now(j->daemon->loop);
}

/*
 * Was a fault of its environment seen by launchd or the kernel within
 * the crash window?  Only that decides a verdict (lifecycle.c).
 */
bool
crashing_env_fault(const struct job *j)
{
	return j->env.what != NULL && uv_now(j->daemon->loop) - j->env.ms <=
	    job_crash_window_s(j) * 1000;
}

/*
 * A fault of the job's environment a line of its log named.  Anyone the
 * process echoes can write that line (a client's grammar, a request
 * body), so it is kept apart from watch_note_env's: it may name a likely
 * cause in the words of an incident, never choose one.
 */
void
crashing_note_said(struct job *j, const char *what, const char *line)
{
	j->said.what = what;
	mc_text(j->said.line, sizeof j->said.line, line);
	j->said.ms = uv_now(j->daemon->loop);
}

/* What its log named of its environment within the window, or NULL. */
const char *
crashing_said(const struct job *j)
{
	return j->said.what != NULL && uv_now(j->daemon->loop) -
	    j->said.ms <= job_crash_window_s(j) * 1000 ? j->said.what : NULL;
}

static void
crashing_steady(uv_timer_t *t)
{
	struct job	*j = t->data;

	/* Still the process the timer was armed for, still running. */
	if (!j->crashing.set || j->pid <= 0 || j->pid != j->watched_pid ||
	    kill((pid_t)j->pid, 0) != 0)
		return;
	j->daemon->emit(j->daemon, &(struct mcd_event){ .type = LC_EV_STEADY,
	    .job = j });
}

/*
 * A crashing job's watched process: once it has run a whole crash window
 * (job_crash_window_s) without an abnormal exit, the driver hears
 * LC_EV_STEADY and the job is no longer crashing.  Any exit or stop of
 * ours stops the timer; the next process arms it again.
 */
void
crashing_arm(struct job *j)
{
	if (!j->crashing.set || j->watched_pid <= 0 ||
	    j->watched_pid != j->pid)
		return;
	job_timer_start(j, &j->crashing.steady, crashing_steady,
	    job_crash_window_s(j) * 1000);
}

/*
 * "crashing: N abnormal exits since T, last: ...", then a likely cause:
 * launchd's or the kernel's word, or, only as a likely one, what a line
 * of its log named (a client can write that line), and that launchd
 * starts it again.
 */
const char *
crashing_text(const struct job *j, char *buf, size_t len)
{
	char		when[32];
	time_t		t = (time_t)j->crashing.since;
	struct tm	tm;

	strftime(when, sizeof when, "%H:%M:%S", localtime_r(&t, &tm));
	snprintf(buf, len, "crashing: %ld abnormal exits since %s, last: "
	    "%s%s%s; launchd starts it again within %llu s (ThrottleInterval)",
	    j->crashing.exits, when, j->crashing.last,
	    j->crashing.cause[0] ? "; " : "", j->crashing.cause,
	    (unsigned long long)j->throttle_s);
	return buf;
}

/*
 * A crash loop without the shim, or one more exit of a crashing job: the
 * job stays loaded and launchd restarts it (never booted out: a client's
 * request can crash a server, and giving it up would be an outage of our
 * making).  A revert for a crash loop or a health check was a hypothesis
 * its stock run now tests: crashing stock too, it is withdrawn and saved.
 * n: the exits of the loop, 0 for one more.
 */
void
crashing_exit(struct mcd *d, struct job *j, const struct mcd_event *ev,
    int n, const char *last)
{
	struct override	*o = state_get(&d->state, j->name, false);
	const char	*said = crashing_said(j);
	struct crashing *c = &j->crashing;
	char		 why[256];
	bool		 begun = !c->set;

	if (begun) {
		*c = (struct crashing){ .set = true, .steady = c->steady };
		c->since = (long)time(NULL);
	}
	c->exits += n > 0 && begun ? n : ev->count;
	mc_text(c->last, sizeof c->last, last);
	if (crashing_env_fault(j))
		mc_fmt(c->cause, sizeof c->cause, "its environment: %s",
		    j->env.what);
	else if (said != NULL)
		mc_fmt(c->cause, sizeof c->cause, "its log names a likely "
		    "cause: %s", said);
	if (o != NULL && n > 0 && (withdraw_revert(j, o, "crash loop") ||
	    withdraw_revert(j, o, "health check"))) {
		snprintf(c->cause + strlen(c->cause), sizeof c->cause -
		    strlen(c->cause), "%sit crashes stock too: its revert is "
		    "withdrawn", c->cause[0] ? "; " : "");
		/* Unsaved, kept in memory: the next save writes it. */
		d->state_unsaved = state_save(&d->state, why, sizeof why) ==
		    -1;
		if (d->state_unsaved)
			log_warnx("job %s: its withdrawn revert is not saved "
			    "yet: %s", j->name, why);
	}
	if (begun)
		log_warnx("job %s: crashing (%d abnormal exits within %llu "
		    "s, last: %s%s%s): kept loaded, stock, launchd restarts "
		    "it; clear once a run lasts %llu s", j->name, n,
		    (unsigned long long)job_crash_window_s(j), last,
		    c->cause[0] ? "; " : "", c->cause,
		    (unsigned long long)job_crash_window_s(j));
	/* Stock from now on (job_effective), until steady again. */
	job_effective(d, j);
	crashing_arm(j);
}

/*
 * A crashing job's process ran a crash window steadily, or someone
 * changed its settings (a request, its file): it is judged afresh.
 */
void
crashing_clear(struct job *j, const struct mcd_event *ev)
{
	switch (ev->type) {
	case LC_EV_STEADY:
	case LC_EV_FILE_CHANGED:
	case LC_EV_ENABLE:
	case LC_EV_DISABLE:
	case LC_EV_PROFILE:
	case LC_EV_START:
	case LC_EV_STOP:
		break;
	default:
		return;
	}
	if (!j->crashing.set)
		return;
	log_info("job %s: no longer crashing (%s)", j->name,
	    ev->type == LC_EV_STEADY ? "a run lasted its crash window" :
	    lifecycle_event_name(ev->type));
	job_timer_stop(j->crashing.steady);
	j->crashing = (struct crashing){ .steady = j->crashing.steady };
}

