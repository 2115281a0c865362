/* SPDX-License-Identifier: MIT */
/*
 * The job file's HealthCheck: its program run StartDelaySeconds after each
 * start of the job's process, and, once it has passed, every
 * IntervalSeconds for as long as the process runs (a liveness check, as
 * systemd's WatchdogSec and Kubernetes' livenessProbe give).
 *
 * A server loading its model is not broken: llama-server refuses
 * connections, then answers 503 "Loading model", then 200 (tools/server),
 * and a multi-gigabyte model takes minutes to read.  So until the check
 * has passed once, a failure is retried every HEALTH_RETRY_MS, and only
 * one still failing LoadSeconds after the start counts (LC_EV_HEALTH_FAIL).
 *
 * Once it has passed, a failure counts only when FailuresBeforeAction of
 * them come in a row (LC_EV_HEALTH_LAPSED): one slow answer under load is
 * no hang.  What is done about it is the driver's (lifecycle.c); here is
 * only when to ask, and what the answers were.  Each lapse in a row
 * doubles the failures the next process is allowed (up to 16 times), so
 * a server that hangs again at once is restarted less and less often;
 * HEALTH_STEADY passes in a row end the run of lapses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mc_util.h"
#include "mcd.h"

#define HEALTH_TIMEOUT_S	5
#define HEALTH_LOAD_S		600	/* a large model from a slow disk */
#define HEALTH_RETRY_MS		2000
#define HEALTH_INTERVAL_S	30
#define HEALTH_FAILURES		3
#define HEALTH_BACKOFF_MAX	4	/* 2^4: 16 times FailuresBeforeAction */
#define HEALTH_STEADY		10

static void	health_run(struct job *);

static void
health_timer_fired(uv_timer_t *t)
{
	health_run(t->data);
}

/* Its process is gone, or ours to stop: no check is due for it. */
void
health_cancel(struct job *j)
{
	job_timer_stop(j->health_timer);
}

/* The job's watch ends: its timer goes. */
void
health_stop(struct job *j)
{
	job_timer_close(&j->health_timer);
}

static uint64_t
health_key(const struct job *j, const char *key, uint64_t fallback)
{
	plist_t	v;

	if (j->spec != NULL && j->spec->health_check != NULL &&
	    (v = plist_dict_get_item(j->spec->health_check, key)) != NULL)
		plist_get_uint_val(v, &fallback);
	return fallback;
}

static void
health_emit(struct job *j, enum lifecycle_event type, const char *const *ev,
    int n)
{
	struct mcd_event	e = { .type = type, .job = j,
	    .trigger = type != LC_EV_HEALTH_OK ? "health check" : NULL,
	    .evidence = ev, .nevidence = n };

	j->daemon->emit(j->daemon, &e);
}

/* Which process a check was run for: its answer is that one's alone. */
struct health_for {
	char	name[MC_NAME_MAX + 8];
	long	pid;
};

/* The first line of text, into buf. */
static void
health_line(char *buf, size_t len, const char *text)
{
	snprintf(buf, len, "%.*s", (int)strcspn(text, "\n"), text);
}

/* Keep the answer for status: when, for which process, what it said. */
static void
health_keep(struct job *j, const struct launchctl_result *r, long pid,
    const char *words)
{
	struct health_answer	*a = &j->health_last;
	const char		*out = r->code == -1 ? r->out : r->err;

	memset(a, 0, sizeof *a);
	a->time = (long)time(NULL);
	a->pid = pid;
	a->passed = r->code == 0;
	mc_text(a->words, sizeof a->words, words);
	/* Its first words on stderr, else on stdout (curl -f's body). */
	if (*out == '\0' || *out == '\n')
		out = r->out;
	health_line(a->output, sizeof a->output, out);
	mc_text(a->output, sizeof a->output, a->output);
}

/* Failures in a row this process is allowed once it has passed. */
static int
health_allowed(const struct job *j)
{
	int	shift = j->health_lapses < HEALTH_BACKOFF_MAX ?
	    j->health_lapses : HEALTH_BACKOFF_MAX;

	return (int)health_key(j, "FailuresBeforeAction", HEALTH_FAILURES) <<
	    shift;
}

/* The next check, IntervalSeconds from now; 0: none after a pass. */
static void
health_again(struct job *j)
{
	uint64_t	every = health_key(j, "IntervalSeconds",
	    HEALTH_INTERVAL_S);

	if (every > 0)
		job_timer_start(j, &j->health_timer, health_timer_fired,
		    every * 1000);
}

/* A pass: the failures in a row end; steady passes end the lapses. */
static void
health_passed(struct job *j)
{
	j->health_passed = true;
	j->health_blind = false;
	j->health_told = false;
	j->health_failures = 0;
	if (++j->health_passes >= HEALTH_STEADY)
		j->health_lapses = 0;
	health_again(j);
	health_emit(j, LC_EV_HEALTH_OK, NULL, 0);
}

/*
 * Passed before, failed now: FailuresBeforeAction in a row is a lapse,
 * and the driver acts; fewer, the check is asked again.
 */
static void
health_lapse(struct job *j, const char *const *evp, int n)
{
	int	allowed = health_allowed(j);

	if (j->health_failures < allowed) {
		log_warnx("job %s: health check failed (%d of %d in a row): %s",
		    j->name, j->health_failures, allowed, evp[0]);
		health_again(j);
		return;
	}
	log_warnx("job %s: health check failed %d times in a row after "
	    "passing: %s", j->name, j->health_failures, evp[0]);
	j->health_told = true;
	j->health_lapses++;
	/* No check until the process the driver acts on is replaced. */
	health_emit(j, LC_EV_HEALTH_LAPSED, evp, n);
}

static void
health_done(struct mcd *d, const struct launchctl_result *r, void *arg)
{
	struct health_for	*run = arg;
	struct job		*j = job_find(d, run->name);
	char			 ev[2][256], words[160];
	const char		*evp[2] = { ev[0], ev[1] };
	uint64_t		 load_ms, since;
	long			 pid = run->pid;

	free(run);
	/* The process it checked ended, or is not watched: not this one's. */
	if (j == NULL || pid != j->watched_pid)
		return;
	/* -1: it timed out or could not run; r->err says which. */
	if (r->code == -1)
		health_line(words, sizeof words, r->err);
	else
		snprintf(words, sizeof words, "the check exited with status %d",
		    r->code);
	health_keep(j, r, pid, words);
	if (r->code == 0) {
		health_passed(j);
		return;
	}
	j->health_failures++;
	j->health_passes = 0;
	load_ms = health_key(j, "LoadSeconds", HEALTH_LOAD_S) * 1000;
	since = uv_now(d->loop) - j->health_start;
	if (!j->health_passed && since < load_ms) {
		log_debug("job %s: health check not passed yet (%s): it may "
		    "still be loading", j->name, words);
		job_timer_start(j, &j->health_timer, health_timer_fired,
		    HEALTH_RETRY_MS);
		return;
	}
	if (j->health_passed || load_ms == 0)
		snprintf(ev[0], sizeof ev[0], "%s", words);
	else
		snprintf(ev[0], sizeof ev[0], "%s, and it never passed in "
		    "LoadSeconds (%llu s)", words,
		    (unsigned long long)(load_ms / 1000));
	snprintf(ev[1], sizeof ev[1], "%.*s", (int)strcspn(r->err, "\n"),
	    r->code == -1 ? "" : r->err);
	if (j->health_passed) {
		health_lapse(j, evp, ev[1][0] ? 2 : 1);
		return;
	}
	/* Never passed: asked again, to show when it does; told once. */
	health_again(j);
	if (j->health_told)
		return;
	j->health_told = true;
	/* It failed stock too (driver.c): no evidence until it passes. */
	if (j->health_blind) {
		log_warnx("job %s: health check failed: %s; it failed the stock "
		    "run too, so it counts against no profile until it passes",
		    j->name, ev[0]);
		return;
	}
	log_warnx("job %s: health check failed: %s", j->name, ev[0]);
	health_emit(j, LC_EV_HEALTH_FAIL, evp, ev[1][0] ? 2 : 1);
}

/* Run the check's program now; health_done hears how it went. */
static void
health_run(struct job *j)
{
	struct health_for	 *run;
	plist_t			  hc, args;
	char			**argv;
	uint32_t		  i, n;

	if (j->spec == NULL || (hc = j->spec->health_check) == NULL ||
	    (args = plist_dict_get_item(hc, "ProgramArguments")) == NULL ||
	    (n = plist_array_get_size(args)) == 0)
		return;
	/* Every argument the job file gives: none is dropped. */
	argv = calloc((size_t)n + 1, sizeof *argv);
	for (i = 0; i < n; i++)
		plist_get_string_val(plist_array_get_item(args, i), &argv[i]);
	run = calloc(1, sizeof *run);
	snprintf(run->name, sizeof run->name, "%s", j->name);
	run->pid = j->watched_pid;
	proc_run(j->daemon, argv, NULL, (int)health_key(j, "TimeoutSeconds",
	    HEALTH_TIMEOUT_S) * 1000, health_done, run);
	mc_strv_free(argv);
}

/* A new process: its check is due StartDelaySeconds from now. */
void
health_begin(struct job *j)
{
	if (j->spec == NULL || j->spec->health_check == NULL)
		return;
	j->health_start = uv_now(j->daemon->loop);
	j->health_passed = false;
	j->health_told = false;
	j->health_failures = 0;
	j->health_passes = 0;
	job_timer_start(j, &j->health_timer, health_timer_fired,
	    health_key(j, "StartDelaySeconds", 0) * 1000);
}

/*
 * What status calls the check of the running process: NULL without a
 * check, "not running", "starting" (not passed, within LoadSeconds),
 * "healthy", "failing" (passed, then failed fewer times in a row than
 * allowed), or "unhealthy": it failed that many times, or never passed
 * in LoadSeconds.
 */
const char *
health_state(const struct job *j)
{
	if (j->spec == NULL || j->spec->health_check == NULL)
		return NULL;
	/* Not j->watched_pid: a restart stops watching the process it
	 * stops, which runs until it has gone. */
	if (j->pid <= 0)
		return "not running";
	if (j->health_told)
		return "unhealthy";
	if (!j->health_passed)
		return "starting";
	return j->health_failures == 0 ? "healthy" : "failing";
}
