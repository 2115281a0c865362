/* SPDX-License-Identifier: MIT */
/*
 * Helper programs (launchctl, the probe, health checks) as asynchronous
 * child processes: each call captures stdout and stderr, has a deadline,
 * and reports its exit status to a callback once.  The meaning of
 * launchctl's codes (launchd.md §1.3-1.4) is the reconciler's business.
 */
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcd.h"

struct lc_call {
	uv_process_t		 proc;
	uv_pipe_t		 out, err;
	uv_timer_t		 timer;
	struct mcd		*daemon;
	launchctl_cb		 cb;
	void			*arg;
	size_t			 outlen, errlen;
	int			 waiting;	/* exit + two EOFs */
	int			 handles;	/* still open */
	bool			 timed_out;
	bool			 overdue;	/* its deadline went by once */
	int			 timeout_ms;
	char			 program[NAME_MAX + 1];	/* a basename */
	struct launchctl_result	 res;	/* last: lc_new leaves out[] untouched */
};

/*
 * Helpers alive, and started since the heap was last given back.  A burst
 * (a start with a hundred jobs, their measurements) leaves freed calls
 * all over the heap, which glibc keeps resident: given back once the
 * burst is over, not at every call.
 */
#define LC_RELEASE_AFTER	16
static int	lc_live, lc_since_release;

/*
 * A call, zeroed but for its 64 KiB output buffer: only what the helper
 * writes is touched, so a call costs its output, not 64 KiB of resident
 * memory (calloc clears a reused chunk page by page).
 */
static struct lc_call *
lc_new(void)
{
	struct lc_call	*c = malloc(sizeof *c);

	if (c == NULL)
		return NULL;
	memset(c, 0, offsetof(struct lc_call, res) +
	    offsetof(struct launchctl_result, out));
	c->res.out[0] = '\0';
	memset(c->res.err, 0, sizeof c->res.err);
	lc_live++;
	lc_since_release++;
	return c;
}

static void
lc_closed(uv_handle_t *h)
{
	struct lc_call	*c = h->data;

	if (--c->handles > 0)
		return;
	free(c);
	if (--lc_live == 0 && lc_since_release >= LC_RELEASE_AFTER) {
		lc_since_release = 0;
		platform_release_memory();
	}
}

static void
lc_close_all(struct lc_call *c)
{
	uv_close((uv_handle_t *)&c->proc, lc_closed);
	uv_close((uv_handle_t *)&c->out, lc_closed);
	uv_close((uv_handle_t *)&c->err, lc_closed);
	uv_close((uv_handle_t *)&c->timer, lc_closed);
}

static void
lc_done(struct lc_call *c)
{
	if (--c->waiting > 0)
		return;
	uv_timer_stop(&c->timer);
	if (c->timed_out) {
		c->res.code = -1;
		snprintf(c->res.err, sizeof c->res.err, "%s did not finish "
		    "within %d ms", c->program, c->timeout_ms);
	} else if (c->res.signal != 0)	/* not by us: said, not left blank */
		snprintf(c->res.err, sizeof c->res.err, "%s was killed by "
		    "signal %d", c->program, c->res.signal);
	c->cb(c->daemon, &c->res, c->arg);
	lc_close_all(c);
}

static void
lc_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct lc_call	*c = h->data;
	bool		 is_out = h == (uv_handle_t *)&c->out;
	size_t		 used = is_out ? c->outlen : c->errlen;
	size_t		 cap = is_out ? sizeof c->res.out : sizeof c->res.err;

	(void)suggested;
	/* Past the buffer, read into a scratch area and drop it. */
	if (used + 1 >= cap) {
		static char scratch[4096];

		*buf = uv_buf_init(scratch, sizeof scratch);
		return;
	}
	*buf = uv_buf_init((is_out ? c->res.out : c->res.err) + used,
	    (unsigned)(cap - 1 - used));
}

static void
lc_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct lc_call	*c = s->data;
	bool		 is_out = s == (uv_stream_t *)&c->out;
	char		*base = is_out ? c->res.out : c->res.err;
	size_t		*len = is_out ? &c->outlen : &c->errlen;

	if (n > 0 && buf->base == base + *len) {
		*len += (size_t)n;
		base[*len] = '\0';
	}
	if (n < 0) {
		uv_read_stop(s);
		lc_done(c);
	}
}

static void
lc_exit(uv_process_t *p, int64_t status, int sig)
{
	struct lc_call	*c = p->data;

	c->res.code = sig != 0 ? -1 : (int)status;
	c->res.signal = c->timed_out ? 0 : sig;
	lc_done(c);
}

static void
lc_spawn_failed(uv_timer_t *t)
{
	lc_done(t->data);
}

static void
lc_timeout(uv_timer_t *t)
{
	struct lc_call	*c = t->data;

	/*
	 * A deadline that went by while the loop did not run (metalcapd
	 * stopped, a sleeping Mac) is due with the exit and EOFs it may have
	 * overslept, and libuv runs timers before it polls for those: one
	 * poll first, then the verdict.  1 ms, as a timer of 0 started here
	 * would run in this same pass over the timers (libuv 1.44
	 * uv__run_timers).
	 */
	if (!c->overdue) {
		c->overdue = true;
		uv_timer_start(&c->timer, lc_timeout, 1, 0);
		return;
	}
	c->timed_out = true;
	/* Its own process group: helpers it started (the probe's workers)
	 * go too, and cannot hold our pipes open. */
	uv_kill(-c->proc.pid, SIGKILL);
	uv_process_kill(&c->proc, SIGKILL);
}

/*
 * Run argv (env NULL: the daemon's own) with a deadline; cb gets the
 * result exactly once, always after this returns, a failure to start
 * included (code -1).
 */
void
proc_run(struct mcd *d, char *const *argv, char *const *env, int timeout_ms,
    launchctl_cb cb, void *arg)
{
	struct lc_call			*c = lc_new();
	uv_process_options_t		 opts;
	uv_stdio_container_t		 stdio[3];
	const char			*base = strrchr(argv[0], '/');
	int				 rc;

	c->daemon = d;
	c->cb = cb;
	c->arg = arg;
	c->timeout_ms = timeout_ms;
	snprintf(c->program, sizeof c->program, "%s", base ? base + 1 : argv[0]);
	uv_pipe_init(d->loop, &c->out, 0);
	uv_pipe_init(d->loop, &c->err, 0);
	uv_timer_init(d->loop, &c->timer);
	c->out.data = c->err.data = c->timer.data = c->proc.data = c;
	memset(&opts, 0, sizeof opts);
	stdio[0].flags = UV_IGNORE;
	stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[1].data.stream = (uv_stream_t *)&c->out;
	stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[2].data.stream = (uv_stream_t *)&c->err;
	opts.file = argv[0];
	opts.args = (char **)argv;
	opts.env = (char **)env;
	opts.stdio = stdio;
	opts.stdio_count = 3;
	opts.exit_cb = lc_exit;
	opts.flags = UV_PROCESS_DETACHED;	/* a group of its own */
	c->handles = 4;
	if ((rc = uv_spawn(d->loop, &c->proc, &opts)) != 0) {
		/*
		 * libuv keeps the process handle registered even when the
		 * spawn fails: it is closed with the rest, never freed under
		 * it.  The callback runs on the next turn, not inside the
		 * caller, which may be another call's callback.
		 */
		c->res.code = -1;
		snprintf(c->res.err, sizeof c->res.err, "cannot run %s: %s",
		    argv[0], uv_strerror(rc));
		c->waiting = 1;
		uv_timer_start(&c->timer, lc_spawn_failed, 0, 0);
		return;
	}
	c->waiting = 3;
	uv_read_start((uv_stream_t *)&c->out, lc_alloc, lc_read);
	uv_read_start((uv_stream_t *)&c->err, lc_alloc, lc_read);
	uv_timer_start(&c->timer, lc_timeout, (uint64_t)timeout_ms, 0);
}

static void
proc_stop_one(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (h->type == UV_PROCESS && uv_is_active(h))
		uv_kill(-((uv_process_t *)h)->pid, SIGTERM);
}

/*
 * metalcapd stops: its helpers go with it.  Each runs in a group of its
 * own (UV_PROCESS_DETACHED), which launchd's killpg of the daemon's group
 * does not reach: a bench ran on after a SIGTERM, and the restarted
 * daemon started a second beside it (issue 47, 3).  A launchctl call cut
 * short leaves nothing the next daemon does not read back from launchd.
 */
void
proc_stop_all(struct mcd *d)
{
	uv_walk(d->loop, proc_stop_one, NULL);
}

/*
 * launchctl runs at most LC_PARALLEL at a time, the rest queued in order:
 * a daemon starting with a thousand jobs forks a few processes at once,
 * not a thousand, and serves its socket meanwhile.  Each job has one call
 * at a time in flight, so its calls keep their order.
 */
#define LC_PARALLEL	8
#define LC_ARGS		16

struct lc_queued {
	char			*argv[LC_ARGS];
	launchctl_cb		 cb;
	void			*arg;
	struct lc_queued	*next;
};

static struct lc_queued	*lc_head, **lc_tail = &lc_head;
static int		 lc_running;

static void	lc_next(struct mcd *);

static void
lc_finished(struct mcd *d, const struct launchctl_result *r, void *arg)
{
	struct lc_queued	*q = arg;
	size_t			 i;

	lc_running--;
	q->cb(d, r, q->arg);
	for (i = 0; q->argv[i] != NULL; i++)
		free(q->argv[i]);
	free(q);
	lc_next(d);
}

static void
lc_next(struct mcd *d)
{
	struct lc_queued	*q;

	while (lc_running < LC_PARALLEL && (q = lc_head) != NULL) {
		if ((lc_head = q->next) == NULL)
			lc_tail = &lc_head;
		lc_running++;
		proc_run(d, q->argv, NULL, d->launchctl_timeout_ms,
		    lc_finished, q);
	}
}

/* Run launchctl with args (NULL-ended); cb gets the result once. */
void
launchctl_run(struct mcd *d, const char *const *args, launchctl_cb cb,
    void *arg)
{
	struct lc_queued	*q = calloc(1, sizeof *q);
	size_t			 n = 0;

	q->argv[n++] = strdup(d->paths.launchctl);
	while (args[n - 1] != NULL && n < LC_ARGS - 1) {
		q->argv[n] = strdup(args[n - 1]);
		n++;
	}
	q->cb = cb;
	q->arg = arg;
	*lc_tail = q;
	lc_tail = &q->next;
	lc_next(d);
}

/*
 * The service's own "key = value" lines: launchd nests blocks ("resource
 * coalition = {", "endpoints = {") with keys of their own, a state among
 * them (tests/fixtures/launchctl-print).  Its own keys are those at the
 * depth of the first key line: inside the "LABEL = {" header, or at the
 * top of an excerpt without one.
 */
static const char *
launchctl_own_key(const char *line, int *depth, int *top)
{
	size_t	len = strcspn(line, "\n");

	while (*line == '\t' || *line == ' ')
		line++, len--;
	if (*line == '}') {
		(*depth)--;
		return NULL;
	}
	if (len > 0 && line[len - 1] == '{') {
		(*depth)++;
		return NULL;
	}
	if (strstr(line, " = ") == NULL || strstr(line, " = ") > line + len)
		return NULL;
	if (*top == -1)
		*top = *depth;
	return *depth == *top ? line : NULL;
}

/* Pull pid, runs, last exit and state out of `launchctl print` output. */
bool
launchctl_parse_print(const char *out, struct launchd_seen *seen)
{
	const char	*p, *key, *colon;
	bool		 any = false;
	int		 depth = 0, top = -1;

	memset(seen, 0, sizeof *seen);
	for (p = out; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p ? p + 1 : NULL) {
		if ((key = launchctl_own_key(p, &depth, &top)) == NULL)
			continue;
		if (strncmp(key, "pid = ", 6) == 0)
			seen->pid = strtol(key + 6, NULL, 10);
		else if (strncmp(key, "runs = ", 7) == 0) {
			seen->runs = strtol(key + 7, NULL, 10);
			seen->runs_known = true;
		}
		else if (strncmp(key, "last exit code = ", 17) == 0)
			snprintf(seen->last_exit, sizeof seen->last_exit, "%.*s",
			    (int)strcspn(key + 17, "\n"), key + 17);
		else if (strncmp(key, "last terminating signal = ", 26) == 0) {
			/* "Terminated: 15" */
			colon = strchr(key, ':');
			seen->signal = colon ? atoi(colon + 1) : 0;
		} else if (strncmp(key, "last exit reason = ", 19) == 0)
			/* "JETSAM_REASON_MEMORY_IDLE_EXIT" */
			snprintf(seen->exit_reason, sizeof seen->exit_reason,
			    "%.*s", (int)strcspn(key + 19, " \n"), key + 19);
		else if (strncmp(key, "state = ", 8) == 0)
			snprintf(seen->state, sizeof seen->state, "%.*s",
			    (int)strcspn(key + 8, "\n"), key + 8);
		else
			continue;
		any = true;
	}
	return any;
}
