/* SPDX-License-Identifier: MIT */
/*
 * A graceful restart.  kickstart -k kills the job's process with SIGKILL
 * at once (KiroCrew#1562: "LastExitStatus" = 9 after it), so a server
 * loses the requests in flight and the ExitTimeOut its agent gives it.
 * A restart therefore stops the process as launchd stops a job: SIGTERM
 * (launchctl kill), up to ExitTimeOut for it to go, and kickstart -k
 * only for one that stayed.  One that went is started again by launchd
 * (KeepAlive) or, if launchd leaves it down, by a plain kickstart.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcd.h"

#define RESTART_POLL_MS		100

struct restart {
	struct mcd	*d;
	char		 name[MC_NAME_MAX + 8];
	char		 target[256];
	long		 pid;		/* the process asked to go */
	long		 now;		/* what launchd runs now, once known */
	bool		 scheduled;	/* launchd starts it itself, throttled */
	uint64_t	 deadline;	/* when kickstart -k comes */
	restart_done_fn	 done;
	uv_timer_t	 timer;
};

static void
restart_closed(uv_handle_t *h)
{
	free(h->data);
}

/* The job learns what runs now; the restart is over. */
static void
restart_end(struct restart *rs)
{
	struct job	*j = job_find(rs->d, rs->name);

	if (j != NULL && !j->removed)
		rs->done(rs->d, j);
	uv_close((uv_handle_t *)&rs->timer, restart_closed);
}

static void
restart_kicked_cb(struct mcd *d, const struct launchctl_result *r,
    void *arg)
{
	struct restart	*rs = arg;

	if (r->code != 0)
		log_warnx("job %s: kickstart failed (%d): %s", rs->name,
		    r->code, r->err);
	(void)d;
	restart_end(rs);
}

static void restart_poll(uv_timer_t *);
static void restart_settle(struct restart *, long);

/* Only the old group is waited for: launchd has nothing new to tell. */
static void
restart_group_cb(uv_timer_t *t)
{
	struct restart	*rs = t->data;

	restart_settle(rs, rs->now);
}

/*
 * Whatever the process left in its group (a Python or MLX server's
 * workers) got SIGTERM from launchd when it ended (launchd 842
 * job_reap); one that ignores it would keep the port from the new run.
 * true while such a process waits out the exit timeout; past it, the
 * group is killed.
 */
static bool
restart_group_lingers(struct restart *rs)
{
	if (kill(-(pid_t)rs->pid, 0) == -1)
		return false;
	if (uv_now(rs->d->loop) < rs->deadline) {
		uv_timer_start(&rs->timer, restart_group_cb, RESTART_POLL_MS,
		    0);
		return true;
	}
	log_info("job %s: what pid %ld left in its process group outlived "
	    "its exit timeout: killed", rs->name, rs->pid);
	killpg((pid_t)rs->pid, SIGKILL);
	return false;
}

/* The process asked to go is gone (0), still there, or replaced. */
static void
restart_settle(struct restart *rs, long now)
{
	const char	*kill[] = { "kickstart", "-k", rs->target, NULL };
	const char	*start[] = { "kickstart", rs->target, NULL };

	rs->now = now;
	if (now != rs->pid && restart_group_lingers(rs))
		return;
	/*
	 * Gone, and launchd has not scheduled its next run: a plain
	 * kickstart.  One scheduled ("spawn scheduled": KeepAlive waiting out
	 * ThrottleInterval) starts by itself, and a kickstart of it blocks
	 * until then (KiroCrew#1698, aragora#5997), holding one of the few
	 * launchctl calls that run at once.
	 */
	if (now == rs->pid) {
		log_info("job %s: pid %ld still runs after its exit timeout: "
		    "killed", rs->name, rs->pid);
		launchctl_run(rs->d, kill, restart_kicked_cb, rs);
	} else if (now == 0 && !rs->scheduled)
		launchctl_run(rs->d, start, restart_kicked_cb, rs);
	else
		restart_end(rs);
}

static void
restart_print_cb(struct mcd *d, const struct launchctl_result *r, void *arg)
{
	struct restart		*rs = arg;
	struct launchd_seen	 seen;

	memset(&seen, 0, sizeof seen);
	if (r->code != 0) {
		restart_end(rs);	/* not loaded: reconcile sees to it */
		return;
	}
	launchctl_parse_print(r->out, &seen);
	rs->scheduled = strcmp(seen.state, "spawn scheduled") == 0;
	/* "running" without a pid: its end is not reaped yet; look again. */
	if ((seen.pid == rs->pid || (seen.pid == 0 && strcmp(seen.state,
	    "running") == 0)) && uv_now(d->loop) < rs->deadline)
		uv_timer_start(&rs->timer, restart_poll, RESTART_POLL_MS, 0);
	else
		restart_settle(rs, seen.pid);
}

static void
restart_poll(uv_timer_t *t)
{
	struct restart	*rs = t->data;
	const char	*print[] = { "print", rs->target, NULL };

	launchctl_run(rs->d, print, restart_print_cb, rs);
}

static void
restart_termed_cb(struct mcd *d, const struct launchctl_result *r,
    void *arg)
{
	struct restart	*rs = arg;
	const char	*kill[] = { "kickstart", "-k", rs->target, NULL };

	(void)d;
	if (r->code == 0)
		restart_poll(&rs->timer);
	else if (r->code == 3)		/* ESRCH: gone; what does launchd do? */
		restart_poll(&rs->timer);
	else {
		log_warnx("job %s: launchctl kill failed (%d): %s; killing "
		    "it", rs->name, r->code, r->err);
		launchctl_run(rs->d, kill, restart_kicked_cb, rs);
	}
}

/*
 * Restart j's process at target; done(d, j) once launchd has been told
 * all it needs, unless the job went meanwhile.
 */
void
restart_graceful(struct mcd *d, struct job *j, const char *target,
    restart_done_fn done)
{
	struct restart	*rs = calloc(1, sizeof *rs);
	const char	*term[] = { "kill", "SIGTERM", target, NULL };
	const char	*kill[] = { "kickstart", "-k", target, NULL };

	if (rs == NULL) {
		log_warnx("job %s: out of memory for its restart", j->name);
		return;
	}
	rs->d = d;
	rs->done = done;
	rs->pid = j->pid;
	snprintf(rs->name, sizeof rs->name, "%s", j->name);
	snprintf(rs->target, sizeof rs->target, "%s", target);
	rs->deadline = uv_now(d->loop) + agent_exit_timeout_s(d, j) * 1000;
	uv_timer_init(d->loop, &rs->timer);
	rs->timer.data = rs;
	/* A process not known yet cannot be waited for: kill what runs. */
	launchctl_run(d, j->pid > 0 ? term : kill, j->pid > 0 ?
	    restart_termed_cb : restart_kicked_cb, rs);
}
