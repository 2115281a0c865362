/* SPDX-License-Identifier: MIT */
/*
 * The safety loop while a job runs: proof of injection (the shim's report
 * for the pid launchd gave), its stderr followed for failure signatures,
 * its exits counted for a crash loop, and its health check.  What they
 * find goes to the driver as events (struct mcd's emit); the lifecycle
 * table decides what follows: a failed Metal pipeline in an unlocked job
 * sends it back to stock, a crash loop in stock is supervised (crashing)
 * until its process runs a crash window steadily.
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
#include "witness.h"

/* What a spawn failure says when nothing here explains it. */
#define WATCH_NO_CAUSE	"launchd could not set it up to run (no cause " \
			"found from here: see its own log)"

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
	uv_idle_init(d->loop, &w->log_more);
	w->marker_timer.data = w->log_more.data = w;
	w->handles = 2;
	j->watch = w;
	return w;
}

/*
 * The shim's report of the job's last process goes once that process is
 * no longer the job's (it exited, was replaced or stopped): the pid may
 * come again, and the next process must prove its own injection.
 */
static void
watch_forget_report(struct mcd *d, struct job *j)
{
	char	dir[PATH_MAX];

	if (j->report_pid <= 0)
		return;
	mc_fmt(dir, sizeof dir, "%s/reports", d->paths.state);
	marker_forget(dir, j->report_pid);
	/* Its children's (InheritShim): read into the job already. */
	marker_forget_group(dir, j->report_pid);
	j->report_pid = 0;
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
	}
	health_cancel(j);
	job_timer_stop(j->crashing.steady);
	j->watched_pid = 0;
}

/* The job is gone or stopped: close everything (freed by close callbacks). */
void
watch_stop(struct job *j)
{
	struct job_watch	*w = j->watch;

	watch_forget_report(j->daemon, j);
	if (j->tail != NULL) {
		tail_stop(j->tail);
		free(j->tail);
		j->tail = NULL;
	}
	scan_free(j->scan);
	j->scan = NULL;
	witness_stop(j);
	health_stop(j);
	job_timer_close(&j->crashing.steady);
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
	uv_close((uv_handle_t *)&w->log_more, watch_handle_closed);
}

/* --- the log ---------------------------------------------------------------- */

static void
watch_emit(struct mcd *d, struct job *j, enum lifecycle_event type,
    const char *trigger, const char *const *evidence, int n,
    const char *reason)
{
	struct mcd_event	ev = { .type = type, .job = j,
	    .trigger = trigger, .evidence = evidence, .nevidence = n,
	    .reason = reason };

	d->emit(d, &ev);
}

static void
watch_log_line(void *arg, const char *text)
{
	struct job	*j = arg;
	const char	*what;
	char		 plain[TAIL_LINE_MAX + 1];	/* a line cut to the max */
	const char	*line = scan_plain(text, plain, sizeof plain);

	/* What ggml's abort writes after its line keeps that line last. */
	if (scan_trace(line))
		return;
	if ((what = scan_environment(line)) != NULL) {
		witness_said(j, NULL, line);
		if (j->said.what == NULL)
			log_info("job %s: its log names its environment: %s",
			    j->name, what);
		crashing_note_said(j, what, line);
		return;
	}
	what = j->scan != NULL ? scan_line(j->scan, line) : NULL;
	witness_said(j, what, line);
	if (what != NULL)
		witness_line(j, what, line);
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
watch_log_path(struct mcd *d, const struct job *j, char *buf, size_t len)
{
	if (j->spec != NULL && j->spec->stderr_path != NULL)
		mc_fmt(buf, len, "%s", j->spec->stderr_path);
	else
		mc_fmt(buf, len, "%s/%s.err.log", d->paths.logs, j->name);
	return buf;
}

/*
 * Is the disk the job writes to full: the one of the shim's reports, or
 * the one of its own log?  buf (if any) says so of that disk, full or
 * not.  A process writing to a full disk fails in its own ways (a log, a
 * cache, a report it cannot write), never for its profile.
 */
bool
watch_disk_full(struct mcd *d, const struct job *j, bool reports, char *buf,
    size_t len)
{
	char	path[PATH_MAX], dir[PATH_MAX];

	if (reports)
		mc_fmt(path, sizeof path, "%s/reports", d->paths.state);
	else
		watch_log_path(d, j, path, sizeof path);
	snprintf(dir, sizeof dir, "%s", path);
	if (buf != NULL)
		mc_fmt(buf, len, "the disk holding %s is full (no space left "
		    "on device)", path);
	return mc_disk_full(reports ? path : dirname(dir));
}

/* Could the job's log be opened for appending, as launchd must? */
static int
watch_log_writable(const char *path)
{
	char	dir[PATH_MAX];

	if (access(path, F_OK) == 0)
		return access(path, W_OK);
	snprintf(dir, sizeof dir, "%s", path);
	return access(dirname(dir), W_OK);
}

/*
 * Why launchd could not start the job (78: EX_CONFIG), as far as the
 * daemon, running as the same user, can see: its program, a log folder,
 * or its working directory.
 */
void
watch_spawn_cause(struct mcd *d, const struct job *j, char *buf, size_t len)
{
	char		 path[PATH_MAX];
	const char	*cwd = j->spec != NULL ? j->spec->working_dir : NULL;

	if (j->spec == NULL) {
		snprintf(buf, len, "its job file is invalid");
		return;
	}
	if (access(j->spec->argv[0], X_OK) == -1) {
		snprintf(buf, len, "program %s: %s", j->spec->argv[0],
		    strerror(errno));
		return;
	}
	watch_log_path(d, j, path, sizeof path);
	if (watch_log_writable(path) == -1) {
		snprintf(buf, len, "log %s: %s", path, strerror(errno));
		return;
	}
	if (j->spec->stdout_path != NULL &&
	    watch_log_writable(j->spec->stdout_path) == -1) {
		snprintf(buf, len, "log %s: %s", j->spec->stdout_path,
		    strerror(errno));
		return;
	}
	if (cwd != NULL && access(cwd, X_OK) == -1) {
		snprintf(buf, len, "working directory %s: %s", cwd,
		    strerror(errno));
		return;
	}
	snprintf(buf, len, "%s", WATCH_NO_CAUSE);
}

/*
 * Is the cause a spawn failure was recorded with (its first evidence: a
 * program, a log or a working directory) gone?  A failure whose cause
 * could not be found here is never taken as gone.
 */
bool
watch_spawn_fixed(struct mcd *d, const struct job *j, const char *cause)
{
	static const char *const named[] = { "program ", "log ",
	    "working directory " };
	char	now[WATCH_EVIDENCE_LEN];
	size_t	i;

	for (i = 0; i < sizeof named / sizeof named[0]; i++)
		if (strncmp(cause, named[i], strlen(named[i])) == 0)
			break;
	if (i == sizeof named / sizeof named[0] || j->spec == NULL)
		return false;
	watch_spawn_cause(d, j, now, sizeof now);
	return strcmp(now, WATCH_NO_CAUSE) == 0;
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

/*
 * Look for the shim's report from the job's pid, or (InheritShim) from a
 * hooked process of its group; true when found.
 */
static bool
watch_check_marker(struct mcd *d, struct job *j)
{
	struct shim_seen	 seen;
	char			 dir[PATH_MAX], line[1024];

	if (j->pid <= 0)
		return false;
	mc_fmt(dir, sizeof dir, "%s/reports", d->paths.state);
	if (!witness_read(j, &seen) && !marker_read(dir, j->pid, &seen))
		return false;
	if (j->shim == NULL)
		j->shim = malloc(sizeof *j->shim);
	*j->shim = seen;
	if (j->watch != NULL)
		uv_timer_stop(&j->watch->marker_timer);
	if (strcmp(j->shim->state, "hooked") == 0) {
		watch_emit(d, j, LC_EV_SHIM_HOOKED, NULL, NULL, 0, NULL);
		witness_report(j, watch_log_line);
		return true;
	}
	snprintf(line, sizeof line, "the shim loaded into pid %ld but stayed "
	    "stock: %s", seen.pid, j->shim->reason);
	watch_emit(d, j, LC_EV_SHIM_STOCK, NULL, NULL, 0, line);
	return true;
}

static void
watch_marker_timeout(uv_timer_t *t)
{
	struct job_watch	*w = t->data;
	struct job		*j = w->job;
	char			 reason[MC_ERR_LEN], full[PATH_MAX + 64];
	char			 dir[PATH_MAX];

	if (j == NULL || !job_runs_unlocked(j) ||
	    watch_check_marker(j->daemon, j))
		return;
	if (j->pid <= 0 || kill((pid_t)j->pid, 0) != 0)
		return;		/* it exited: the crash-loop watch has it */
	/*
	 * The shim reports once a device is made, or at the exit: a program
	 * that makes none (a CPU build, a server that loads its model
	 * later) is silent until then too.  On a full disk it cannot write.
	 */
	mc_fmt(dir, sizeof dir, "%s/reports", j->daemon->paths.state);
	if (watch_disk_full(j->daemon, j, true, full, sizeof full) ||
	    j->reports_full)
		mc_fmt(reason, sizeof reason, "no report from the shim in "
		    "pid %ld within %d ms: %s, so the shim could not write "
		    "one: free space", j->pid, j->daemon->marker_timeout_ms,
		    full);
	else if (marker_unwritten(dir, j->pid))
		mc_fmt(reason, sizeof reason, "no report from the shim in "
		    "pid %ld within %d ms: the shim loaded and made its "
		    "report, but could not write it (its disk was full or "
		    "failing): %s/metalcap.%ld.report is empty", j->pid,
		    j->daemon->marker_timeout_ms, dir, j->pid);
	else
		snprintf(reason, sizeof reason, "no report from the shim in "
		    "pid %ld within %d ms: the injection was dropped (a "
		    "hardened-runtime, SIP-protected or setuid/setgid "
		    "program, or a wrapper script), or the program has made "
		    "no Metal device yet", j->pid,
		    j->daemon->marker_timeout_ms);
	watch_emit(j->daemon, j, LC_EV_SHIM_ABSENT, NULL, NULL, 0, reason);
}

/*
 * launchd told how the job's last process ended: what the log holds is
 * read first (the process may have ended before its end was heard), then
 * the end is judged with its last words.
 */
void
watch_exited(struct job *j, bool abnormal, int sig, const char *how)
{
	witness_exited(j, abnormal, sig, how, watch_log_line);
}

/* A job's process's report stays until the end of that process is heard. */
static bool
watch_keep_report(long pid, void *arg)
{
	struct mcd	*d = arg;
	size_t		 i;

	for (i = 0; i < d->njobs; i++)
		if (d->jobs[i]->pid == pid || d->jobs[i]->report_pid == pid)
			return true;
	return false;
}

/*
 * A report came or changed: each job's is judged (its children's too,
 * read into the job), then the reports no process owns go, so the ones
 * of a job's children do not pile up, nor pass for a later process's.
 */
void
watch_reports_changed(struct mcd *d)
{
	char	dir[PATH_MAX];
	size_t	i;

	for (i = 0; i < d->njobs; i++) {
		struct job *j = d->jobs[i];

		/* Where the shim is inherited, a child's report may be the
		 * first hooked one of the group. */
		if (j->pid > 0 && job_runs_unlocked(j) && (j->shim == NULL ||
		    (j->spec != NULL && j->spec->inherit_shim &&
		    strcmp(j->shim->state, "hooked") != 0)))
			watch_check_marker(d, j);
		else if (j->pid > 0 && j->shim != NULL)
			witness_report(j, watch_log_line);
	}
	mc_fmt(dir, sizeof dir, "%s/reports", d->paths.state);
	marker_sweep(dir, watch_keep_report, d);
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
	job_timer_stop(j->crashing.steady);
	witness_gone(j, watch_log_line);
	if (w->job == NULL || j->pid != j->watched_pid)
		return;		/* what it wrote last sent the job elsewhere */
	watch_forget_report(j->daemon, j);
	uv_timer_stop(&w->marker_timer);
	health_cancel(j);
	/* launchd knows how it ended: the driver asks. */
	watch_emit(j->daemon, j, LC_EV_GONE, NULL, NULL, 0, NULL);
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
 * When the i-th (from 0) of count exits learned at one look came.  One
 * alone is the pid's end just seen: now.  More were missed (metalcapd was
 * paused, as on a sleeping Mac, or down), and only bounds are known: each
 * came after the last look, since, and launchd starts a job at most every
 * ThrottleInterval, counted from its last start (842 core.c job_start,
 * 4396-4406), so the third ended at least one interval after since, the
 * fourth two.  They are stamped with those bounds, the least damning
 * times they can have: all "now" would make a loop of exits that were
 * minutes apart.
 */
static long
watch_exit_time(const struct job *j, long since, long i, long count,
    long now)
{
	long	t;

	if (count == 1)
		return now;
	if (since <= 0)		/* no look before: the earliest there is */
		return 0;
	t = since + (i > 1 ? (i - 1) * (long)j->throttle_s : 0);
	return t < now ? t : now;
}

/*
 * Count ev's abnormal exits, the last one as launchd told it; when they
 * make a crash loop (the job file's CrashLoop, or 3 in 60 s), how many
 * came within the window, else 0.  The evidence says so, for the incident.
 */
int
watch_count_exits(struct job *j, const struct mcd_event *ev,
    char out[2][WATCH_EVIDENCE_LEN])
{
	uint64_t	 max = job_crash_max(j);
	uint64_t	 window = job_crash_window_s(j);
	long		 now = (long)time(NULL), k;
	int		 i, n = 0, sig = ev->signal;
	const char	*last_exit = ev->last_exit;

	for (k = 0; k < ev->count; k++) {
		if (j->nexits == (int)(sizeof j->exits / sizeof j->exits[0]))
			memmove(j->exits, j->exits + 1, sizeof j->exits -
			    sizeof j->exits[0]);
		else
			j->nexits++;
		j->exits[j->nexits - 1] = watch_exit_time(j, ev->since, k,
		    ev->count, now);
	}
	for (i = 0; i < j->nexits; i++)
		if (now - j->exits[i] < (long)window)
			n++;
	if (sig != 0)
		snprintf(out[1], WATCH_EVIDENCE_LEN, "last: signal %d", sig);
	else if (last_exit[0] >= '0' && last_exit[0] <= '9')
		snprintf(out[1], WATCH_EVIDENCE_LEN, "last: exit status %s",
		    last_exit);
	else	/* launchd's reason: JETSAM_REASON_... */
		snprintf(out[1], WATCH_EVIDENCE_LEN, "last: %s", last_exit);
	snprintf(out[0], WATCH_EVIDENCE_LEN, "%d abnormal exits within %llu s",
	    n, (unsigned long long)window);
	log_info("job %s: exited abnormally (%s), %d in %llu s", j->name,
	    out[1] + 6, n, (unsigned long long)window);
	if (n < (int)max)
		return 0;
	j->nexits = 0;
	return n;
}

/*
 * Does the job's pid run its program?  Before its exec it is launchd's
 * (xpcproxy on macOS, which exits 78 when it cannot set the job up), so a
 * pid seen running the program is one whose exit is the program's own.
 */
static bool
watch_runs_program(const struct job *j)
{
	char	image[PATH_MAX], program[PATH_MAX];

	return j->spec != NULL && platform_pid_path(j->pid, image,
	    sizeof image) == 0 && realpath(j->spec->argv[0], program) !=
	    NULL && strcmp(image, program) == 0;
}

/*
 * A (new) process: watch its exit, its shim report and its health.  -1
 * (errno) when it cannot be watched: ESRCH, it is gone already.
 */
int
watch_started(struct mcd *d, struct job *j)
{
	struct job_watch	*w;

	if (j->pid <= 0 || j->pid == j->watched_pid)
		return 0;
	log_debug("job %s: watching pid %ld", j->name, j->pid);
	w = watch_get(d, j);
	watch_stop_pid(w);
	/*
	 * The reports' disk as the shim found it: removing the last
	 * process's report frees a block, and a disk full when the shim
	 * wrote would look free when its report is due.
	 */
	j->reports_full = watch_disk_full(d, j, true, NULL, 0);
	if (j->report_pid != j->pid)
		watch_forget_report(d, j);
	j->report_pid = j->pid;
	j->watched_pid = j->pid;
	j->ran_pid = watch_runs_program(j) ? j->pid : 0;
	free(j->shim);
	j->shim = NULL;
	j->blocked = false;
	witness_reset(j);
	if (watch_pid(d, w, j->pid) == -1)
		return -1;
	crashing_arm(j);
	/* Only a process started with the shim owes a report. */
	if (job_runs_unlocked(j) && !watch_check_marker(d, j))
		uv_timer_start(&w->marker_timer, watch_marker_timeout,
		    (uint64_t)d->marker_timeout_ms, 0);
	health_begin(j);
	return 0;
}
