/* SPDX-License-Identifier: MIT */
/*
 * The safety loop while a job runs: proof of injection (the shim's report
 * for the pid launchd gave), its stderr followed for failure signatures,
 * its exits watched for a crash loop, and its health check.  Any of these
 * showing a failed Metal pipeline while the job is unlocked sends it back
 * to stock, persisted with the evidence; a job that crash-loops in stock
 * too is given up (failed) instead of being respawned forever.
 */
#include <sys/stat.h>

#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mc_util.h"
#include "mcd.h"

#define CRASH_MAX_EXITS		3
#define CRASH_WINDOW_S		60
#define HEALTH_TIMEOUT_S	5

/*
 * One process being watched; a new pid gets a new one (handles are never
 * reused before their close callback).  A pidfd where the kernel has one;
 * where it has none (Linux before 5.3, or under Valgrind, which does not
 * know the call) the pid is looked at every PID_POLL_MS.
 */
#define PID_POLL_MS		100

struct pid_watch {
	uv_poll_t		 poll;		/* fd != -1 */
	uv_timer_t		 timer;		/* fd == -1 */
	int			 fd;
	long			 pid;
	struct job_watch	*owner;		/* NULL once abandoned */
};

struct job_watch {
	struct job	*job;		/* NULL once the job is gone */
	struct pid_watch *pid;
	uv_timer_t	 marker_timer;
	uv_timer_t	 health_timer;
	uv_idle_t	 log_more;	/* a flooded log: read each turn */
	uv_fs_event_t	 log_dir;
	bool		 log_watching;
	int		 handles;	/* open handles; free at 0 */
};

static void
watch_handle_closed(uv_handle_t *h)
{
	struct job_watch	*w = h->data;

	if (--w->handles == 0)
		free(w);
}

static void
watch_pid_closed(uv_handle_t *h)
{
	struct pid_watch	*p = h->data;

	if (p->fd != -1)
		close(p->fd);
	free(p);
}

static struct job_watch *
watch_get(struct mcd *d, struct job *j)
{
	struct job_watch	*w = j->watch;

	if (w != NULL)
		return w;
	w = calloc(1, sizeof *w);
	w->job = j;
	uv_timer_init(d->loop, &w->marker_timer);
	uv_timer_init(d->loop, &w->health_timer);
	uv_idle_init(d->loop, &w->log_more);
	w->marker_timer.data = w->health_timer.data = w->log_more.data = w;
	w->handles = 3;
	j->watch = w;
	return w;
}

static void
watch_stop_pid(struct job_watch *w)
{
	if (w->pid != NULL) {
		w->pid->owner = NULL;
		uv_close(w->pid->fd != -1 ? (uv_handle_t *)&w->pid->poll :
		    (uv_handle_t *)&w->pid->timer, watch_pid_closed);
		w->pid = NULL;
	}
}

/* We are about to stop the process ourselves: that exit is no crash. */
void
watch_unwatch_pid(struct job *j)
{
	if (j->watch != NULL) {
		watch_stop_pid(j->watch);
		uv_timer_stop(&j->watch->marker_timer);
		uv_timer_stop(&j->watch->health_timer);
	}
	j->watched_pid = 0;
}

/* The job is gone or stopped: close everything (freed by close callbacks). */
void
watch_stop(struct job *j)
{
	struct job_watch	*w = j->watch;

	if (j->tail != NULL) {
		tail_stop(j->tail);
		free(j->tail);
		j->tail = NULL;
	}
	scan_free(j->scan);
	j->scan = NULL;
	if (w == NULL)
		return;
	j->watch = NULL;
	w->job = NULL;
	watch_stop_pid(w);
	if (w->log_watching) {
		w->log_watching = false;
		uv_close((uv_handle_t *)&w->log_dir, watch_handle_closed);
	}
	uv_close((uv_handle_t *)&w->marker_timer, watch_handle_closed);
	uv_close((uv_handle_t *)&w->health_timer, watch_handle_closed);
	uv_close((uv_handle_t *)&w->log_more, watch_handle_closed);
}

/*
 * Could the process carry the shim?  Broad on purpose, for failure lines,
 * health checks and crashes: a job set stock may still run the injected
 * process until launchd has the new agent.
 */
static bool
watch_unlocked(const struct job *j)
{
	return j->state == JOB_UNLOCKED || j->state == JOB_BLOCKED ||
	    (j->unlocked && j->profile != NULL && j->profile->family_max != 0);
}

/* --- reverting ------------------------------------------------------------- */

static void
watch_incident(struct incident *in, const char *trigger,
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

static void
watch_persist(struct mcd *d)
{
	char	why[256];

	if (job_save_state(d, why, sizeof why) == -1)
		log_warnx("%s; the job stays stock, kept in memory until the "
		    "state can be saved", why);
}

/* Say so at once; launchd catches up with the reconcile. */
static void
watch_say(struct mcd *d, struct job *j, enum job_state s,
    const struct incident *in)
{
	char	reason[MCD_ERR_LEN];

	if (d->state_unsaved)
		snprintf(reason, sizeof reason, "%s (not saved yet: the state "
		    "folder cannot be written; kept in memory)", in->trigger);
	else
		snprintf(reason, sizeof reason, "%s%s%s", in->trigger,
		    in->nevidence ? ": " : "", in->nevidence ?
		    in->evidence[0] : "");
	job_set_state(d, j, s, reason);
}

/* Back to stock, with the evidence; one reconcile does the rest. */
void
job_revert(struct mcd *d, struct job *j, const char *trigger,
    const char *const *evidence, int n)
{
	struct override	*o = state_get(&d->state, j->name, true);

	if (o->reverted.set || o->failed.set)
		return;
	watch_incident(&o->reverted, trigger, evidence, n);
	o->revert_count++;
	watch_persist(d);
	log_warnx("job %s: reverted to stock: %s: %s", j->name, trigger,
	    n > 0 ? evidence[0] : "");
	watch_say(d, j, JOB_REVERTED, &o->reverted);
	rpc_event(d, j, "revert");
	reconcile(d, j);
}

/* Crashing in stock too: stop it instead of respawning it forever. */
void
job_fail(struct mcd *d, struct job *j, const char *trigger,
    const char *const *evidence, int n)
{
	struct override	*o = state_get(&d->state, j->name, true);

	if (o->failed.set)
		return;
	watch_incident(&o->failed, trigger, evidence, n);
	watch_persist(d);
	log_warnx("job %s: failed, no more restarts: %s", j->name, trigger);
	watch_say(d, j, JOB_FAILED, &o->failed);
	rpc_event(d, j, "failed");
	j->loaded = false;
	reconcile(d, j);
}

/* --- the log ---------------------------------------------------------------- */

static void
watch_log_line(void *arg, const char *line)
{
	struct job	*j = arg;
	const char	*what;
	const char	*evidence[1] = { line };

	if (j->scan == NULL || (what = scan_line(j->scan, line)) == NULL)
		return;
	if (watch_unlocked(j))
		job_revert(j->daemon, j, what, evidence, 1);
}

/*
 * One turn's budget of what the log gained.  An idle handle, not a
 * zero timer: libuv before 1.48 runs a zero timer started from its own
 * callback again in the same turn (libuv#4245), so a log growing faster
 * than it is read would starve the clients.  An idle callback runs once
 * a turn, and keeps the poll from blocking while more is waiting.
 */
static void
watch_log_read(uv_idle_t *h)
{
	struct job_watch	*w = h->data;

	if (w->job == NULL || w->job->tail == NULL ||
	    !tail_read(w->job->tail, watch_log_line, w->job) || w->job == NULL)
		uv_idle_stop(h);
}

static void
watch_log_event(uv_fs_event_t *h, const char *file, int events, int status)
{
	struct job_watch	*w = h->data;

	(void)file;
	(void)events;
	(void)status;
	/* One read per turn of the loop, however many events came. */
	uv_idle_start(&w->log_more, watch_log_read);
}

static const char *
watch_log_path(struct mcd *d, struct job *j, char *buf, size_t len)
{
	if (j->spec != NULL && j->spec->stderr_path != NULL)
		mc_fmt(buf, len, "%s", j->spec->stderr_path);
	else
		mc_fmt(buf, len, "%s/%s.err.log", d->paths.logs, j->name);
	return buf;
}

/*
 * Follow the stderr log from its current end, before the unlocked process
 * starts, so everything it writes is seen exactly once.
 */
void
watch_begin_tail(struct mcd *d, struct job *j)
{
	struct job_watch	*w = watch_get(d, j);
	char			 path[PATH_MAX], dir[PATH_MAX];

	if (j->spec == NULL)
		return;
	watch_log_path(d, j, path, sizeof path);
	if (j->tail == NULL)
		j->tail = malloc(sizeof *j->tail);
	else
		tail_stop(j->tail);
	tail_start(j->tail, path);
	scan_free(j->scan);
	j->scan = scan_new(j->spec->failure_signatures);
	if (!w->log_watching) {
		snprintf(dir, sizeof dir, "%s", path);
		uv_fs_event_init(d->loop, &w->log_dir);
		w->log_dir.data = w;
		w->handles++;
		w->log_watching = true;
		if (uv_fs_event_start(&w->log_dir, watch_log_event,
		    dirname(dir), 0) != 0)
			log_warnx("job %s: cannot watch %s", j->name, path);
	}
}

/* --- proof of injection ------------------------------------------------------- */

/* The value of " key=" in line, up to the next blank, into buf. */
static bool
watch_marker_field(const char *line, const char *key, char *buf, size_t len)
{
	char		 pattern[32];
	const char	*p;
	size_t		 n;

	snprintf(pattern, sizeof pattern, " %s=", key);
	if ((p = strstr(line, pattern)) == NULL)
		return false;
	p += strlen(pattern);
	n = strcspn(p, " \t\r\n");
	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
	return true;
}

static long
watch_marker_number(const char *line, const char *key)
{
	char	 buf[32], *end;
	long	 v;

	if (!watch_marker_field(line, key, buf, sizeof buf))
		return 0;
	errno = 0;
	v = strtol(buf, &end, 10);
	return errno != 0 || end == buf ? 0 : v;
}

/* What the shim's report line says (the fuzzers call it). */
void
watch_parse_marker(struct shim_seen *s, const char *line)
{
	const char	*p;

	memset(s, 0, sizeof *s);
	s->present = true;
	watch_marker_field(line, "state", s->state, sizeof s->state);
	watch_marker_field(line, "class", s->klass, sizeof s->klass);
	watch_marker_field(line, "hooked", s->hooked, sizeof s->hooked);
	s->family_max = watch_marker_number(line, "family_max");
	s->threadgroup_memory = watch_marker_number(line, "threadgroup_memory");
	if ((p = strstr(line, " reason=")) != NULL) {
		char	text[sizeof s->reason];

		snprintf(text, sizeof text, "%.*s", (int)strcspn(p + 8, "\n"),
		    p + 8);
		mc_text(s->reason, sizeof s->reason, text);
	}
}

/* Look for the shim's report from the job's pid; true when found. */
static bool
watch_check_marker(struct mcd *d, struct job *j)
{
	char	 path[PATH_MAX], line[1024];
	FILE	*f;

	if (j->pid <= 0)
		return false;
	mc_fmt(path, sizeof path, "%s/reports/metalcap.%ld.report",
	    d->paths.state, j->pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	if (fgets(line, sizeof line, f) == NULL) {
		fclose(f);
		return false;
	}
	fclose(f);
	if (j->shim == NULL)
		j->shim = malloc(sizeof *j->shim);
	watch_parse_marker(j->shim, line);
	fleet_changed(d);
	if (j->watch != NULL)
		uv_timer_stop(&j->watch->marker_timer);
	if (strcmp(j->shim->state, "hooked") == 0) {
		if (j->blocked) {
			j->blocked = false;
			job_set_state(d, j, JOB_UNLOCKED, j->note);
		}
		return true;
	}
	j->blocked = true;
	snprintf(line, sizeof line, "the shim loaded into pid %ld but stayed "
	    "stock: %s", j->pid, j->shim->reason);
	job_set_state(d, j, JOB_BLOCKED, line);
	return true;
}

static void
watch_marker_timeout(uv_timer_t *t)
{
	struct job_watch	*w = t->data;
	struct job		*j = w->job;
	char			 reason[MCD_ERR_LEN];

	if (j == NULL || !job_runs_unlocked(j) ||
	    watch_check_marker(j->daemon, j))
		return;
	if (j->pid <= 0 || kill((pid_t)j->pid, 0) != 0)
		return;		/* it exited: the crash-loop watch has it */
	j->blocked = true;
	snprintf(reason, sizeof reason, "no report from the shim in pid %ld "
	    "within %d ms: the injection was dropped (a hardened-runtime, "
	    "SIP-protected or setuid/setgid program, or a wrapper script)",
	    j->pid, j->daemon->marker_timeout_ms);
	job_set_state(j->daemon, j, JOB_BLOCKED, reason);
}

void
watch_reports_changed(struct mcd *d)
{
	size_t	i;

	for (i = 0; i < d->njobs; i++) {
		struct job *j = d->jobs[i];

		if (j->pid > 0 && job_runs_unlocked(j) && j->shim == NULL)
			watch_check_marker(d, j);
	}
}

/* --- exits ------------------------------------------------------------------ */

static void
watch_pid_gone(struct pid_watch *p)
{
	struct job_watch	*w = p->owner;
	struct job		*j;

	if (w == NULL)
		return;
	watch_stop_pid(w);
	if ((j = w->job) == NULL || j->pid != j->watched_pid) {
		log_debug("pid exit ignored (job %p pid %ld watched %ld)",
		    (void *)j, j ? j->pid : 0, j ? j->watched_pid : 0);
		return;
	}
	log_debug("job %s: pid %ld exited", j->name, j->pid);
	uv_timer_stop(&w->marker_timer);
	uv_timer_stop(&w->health_timer);
	/*
	 * launchd knows how it ended: ask (a moment later: it records the
	 * exit after reaping), then look for the next pid.
	 */
	j->pid = 0;
	j->loaded = false;
	reconcile_after(j->daemon, j, 100);
}

static void
watch_pid_exit(uv_poll_t *h, int status, int events)
{
	(void)status;
	(void)events;
	watch_pid_gone(h->data);
}

static void
watch_pid_tick(uv_timer_t *t)
{
	struct pid_watch	*p = t->data;

	if (kill((pid_t)p->pid, 0) == -1 && errno == ESRCH)
		watch_pid_gone(p);
}

/* Watch j's pid for its exit: 0, or -1 (errno) if it cannot be. */
static int
watch_pid(struct mcd *d, struct job_watch *w, long pid)
{
	struct pid_watch	*p;
	int			 fd;

	if ((fd = platform_pid_fd(pid)) == -1 && errno != ENOSYS)
		return -1;
	p = calloc(1, sizeof *p);
	p->fd = fd;
	p->pid = pid;
	p->owner = w;
	w->pid = p;
	if (fd != -1) {
		uv_poll_init(d->loop, &p->poll, fd);
		p->poll.data = p;
		uv_poll_start(&p->poll, UV_READABLE, watch_pid_exit);
	} else {
		uv_timer_init(d->loop, &p->timer);
		p->timer.data = p;
		uv_timer_start(&p->timer, watch_pid_tick, PID_POLL_MS,
		    PID_POLL_MS);
	}
	return 0;
}

/*
 * Count an abnormal exit; a loop of them reverts (or, in stock, fails).
 * True when that happened.
 */
bool
watch_exited(struct mcd *d, struct job *j, const char *last_exit, int sig,
    long count)
{
	plist_t		 loop = j->spec ? j->spec->crash_loop : NULL;
	uint64_t	 max = CRASH_MAX_EXITS, window = CRASH_WINDOW_S;
	char		 ev[EVIDENCE_MAX][256];
	const char	*evp[EVIDENCE_MAX];
	long		 now = (long)time(NULL);
	int		 i, n = 0;

	if (sig == 0 && (last_exit[0] == '\0' || strcmp(last_exit, "0") == 0 ||
	    strcmp(last_exit, "(never exited)") == 0))
		return false;
	if (loop != NULL) {
		plist_t v;

		if ((v = plist_dict_get_item(loop, "MaxExits")) != NULL)
			plist_get_uint_val(v, &max);
		if ((v = plist_dict_get_item(loop, "WindowSeconds")) != NULL)
			plist_get_uint_val(v, &window);
	}
	while (count-- > 0) {
		if (j->nexits == (int)(sizeof j->exits / sizeof j->exits[0]))
			memmove(j->exits, j->exits + 1, sizeof j->exits -
			    sizeof j->exits[0]);
		else
			j->nexits++;
		j->exits[j->nexits - 1] = now;
	}
	for (i = 0; i < j->nexits; i++)
		if (now - j->exits[i] < (long)window)
			n++;
	if (sig != 0)
		snprintf(ev[1], sizeof ev[1], "last: signal %d", sig);
	else
		snprintf(ev[1], sizeof ev[1], "last: exit status %s", last_exit);
	log_info("job %s: exited abnormally (%s), %d in %llu s", j->name,
	    ev[1] + 6, n, (unsigned long long)window);
	if (n < (int)max)
		return false;
	snprintf(ev[0], sizeof ev[0], "%d abnormal exits within %llu s", n,
	    (unsigned long long)window);
	evp[0] = ev[0];
	evp[1] = ev[1];
	j->nexits = 0;
	if (watch_unlocked(j) && !state_get(&d->state, j->name,
	    true)->reverted.set)
		job_revert(d, j, "crash loop", evp, 2);
	else
		job_fail(d, j, "crash loop in stock", evp, 2);
	return true;
}

/* --- health check -------------------------------------------------------------- */

static void
watch_health_done(struct mcd *d, const struct launchctl_result *r, void *arg)
{
	struct job	*j = job_find(d, (const char *)arg);
	char		 ev[2][256];
	const char	*evp[2] = { ev[0], ev[1] };

	free(arg);
	if (j == NULL || r->code == 0)
		return;
	/* -1: it timed out or could not run; r->err says which. */
	if (r->code == -1)
		snprintf(ev[0], sizeof ev[0], "%.*s", (int)strcspn(r->err, "\n"),
		    r->err);
	else
		snprintf(ev[0], sizeof ev[0], "the check exited with status %d",
		    r->code);
	snprintf(ev[1], sizeof ev[1], "%.*s", (int)strcspn(r->err, "\n"),
	    r->code == -1 ? "" : r->err);
	log_warnx("job %s: health check failed: %s", j->name, ev[0]);
	if (watch_unlocked(j))
		job_revert(d, j, "health check", evp, ev[1][0] ? 2 : 1);
}

static void
watch_health_due(uv_timer_t *t)
{
	struct job_watch	*w = t->data;
	struct job		*j = w->job;
	plist_t			 hc, args, v;
	uint64_t		 timeout = HEALTH_TIMEOUT_S;
	char			*argv[32];
	uint32_t		 i, n;

	if (j == NULL || j->spec == NULL || (hc = j->spec->health_check) ==
	    NULL || (args = plist_dict_get_item(hc, "ProgramArguments")) ==
	    NULL || (n = plist_array_get_size(args)) == 0)
		return;
	if ((v = plist_dict_get_item(hc, "TimeoutSeconds")) != NULL)
		plist_get_uint_val(v, &timeout);
	for (i = 0; i < n && i < 31; i++) {
		argv[i] = NULL;
		plist_get_string_val(plist_array_get_item(args, i), &argv[i]);
	}
	argv[i] = NULL;
	proc_run(j->daemon, argv, NULL, (int)timeout * 1000,
	    watch_health_done, strdup(j->name));
	while (i-- > 0)
		free(argv[i]);
}

/* A (new) process: watch its exit, its shim report and its health. */
void
watch_started(struct mcd *d, struct job *j)
{
	struct job_watch	*w;
	plist_t			 v;
	uint64_t		 delay = 0;

	if (j->pid <= 0 || j->pid == j->watched_pid)
		return;
	log_debug("job %s: watching pid %ld", j->name, j->pid);
	w = watch_get(d, j);
	watch_stop_pid(w);
	j->watched_pid = j->pid;
	free(j->shim);
	j->shim = NULL;
	j->blocked = false;
	if (watch_pid(d, w, j->pid) == -1) {
		/* Gone already, or not watchable: ask launchd again soon. */
		if (errno != ESRCH)
			log_warnx("job %s: cannot watch pid %ld: %s", j->name,
			    j->pid, strerror(errno));
		j->pid = 0;
		j->loaded = false;
		reconcile_after(d, j, errno == ESRCH ? 100 : 2000);
		return;
	}
	/* Only a process started with the shim owes a report. */
	if (job_runs_unlocked(j) && !watch_check_marker(d, j))
		uv_timer_start(&w->marker_timer, watch_marker_timeout,
		    (uint64_t)d->marker_timeout_ms, 0);
	if (j->spec != NULL && j->spec->health_check != NULL) {
		if ((v = plist_dict_get_item(j->spec->health_check,
		    "StartDelaySeconds")) != NULL)
			plist_get_uint_val(v, &delay);
		uv_timer_start(&w->health_timer, watch_health_due,
		    delay * 1000, 0);
	}
}
