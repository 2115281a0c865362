/* SPDX-License-Identifier: MIT */
/*
 * The job file's HealthCheck: its program run StartDelaySeconds after each
 * start of the job's process.  A server loading its model is not broken:
 * llama-server refuses connections, then answers 503 "Loading model",
 * then 200 (tools/server), and a multi-gigabyte model takes minutes to
 * read.  So until the check has passed once, a failure is retried every
 * HEALTH_RETRY_MS, and only one still failing LoadSeconds after the start
 * counts; once passed, the next failure counts at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_util.h"
#include "mcd.h"

#define HEALTH_TIMEOUT_S	5
#define HEALTH_LOAD_S		600	/* a large model from a slow disk */
#define HEALTH_RETRY_MS		2000

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
	    .trigger = type == LC_EV_HEALTH_FAIL ? "health check" : NULL,
	    .evidence = ev, .nevidence = n };

	j->daemon->emit(j->daemon, &e);
}

/* Which process a check was run for: its answer is that one's alone. */
struct health_for {
	char	name[MC_NAME_MAX + 8];
	long	pid;
};

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
	if (r->code == 0) {
		j->health_passed = true;
		j->health_blind = false;
		health_emit(j, LC_EV_HEALTH_OK, NULL, 0);
		return;
	}
	/* -1: it timed out or could not run; r->err says which. */
	if (r->code == -1)
		snprintf(words, sizeof words, "%.*s",
		    (int)strcspn(r->err, "\n"), r->err);
	else
		snprintf(words, sizeof words, "the check exited with status %d",
		    r->code);
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
	job_timer_start(j, &j->health_timer, health_timer_fired,
	    health_key(j, "StartDelaySeconds", 0) * 1000);
}
