/* SPDX-License-Identifier: MIT */
/*
 * What counts as evidence of a failed Metal pipeline (metalcapd(8),
 * EVIDENCE).  A line of the job's stderr is text: llama-server prints a
 * client's grammar, prompt and URL there, so a line shaped like ggml's
 * failure can be written by anyone who can reach the server.  Evidence
 * is what the process did:
 *
 *   - the shim's witness: a Metal call of the process came back failed
 *     (a library, a kernel's function, a pipeline, a command queue, a
 *     command buffer's status, a residency set), written into its
 *     report from inside;
 *   - its death by ggml's abort: the process ended by SIGABRT, and the
 *     last it said was ggml_abort's line from a ggml-metal source, with
 *     nothing after it but the trace ggml_abort writes (GGML_ABORT,
 *     GGML_ASSERT: a nil pipeline, a missing kernel).  A client can
 *     have a server print any line, and can crash some servers (a deep
 *     grammar overflows the stack: SIGSEGV); it cannot make ggml abort
 *     right after its text.  Lines of the seconds before never count;
 *     the failure line ggml logged right before its abort only names it;
 *   - the shim's own answer: a family above any Apple GPU's is a profile
 *     too broad, whatever llama.cpp logs (its INFO lines are hidden by
 *     default).
 *
 * A failure line alone is held as unconfirmed: logged, never acted on.
 * The shim writes its witness inside the failing call, before ggml logs
 * what failed, so a witness waits up to WITNESS_GRACE_MS for that line
 * (or for the process's end), to name it too.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_util.h"
#include "mcd.h"

/* How long a held line waits for the shim's witness. */
#define WITNESS_DEATH_MS	10000
/* ggml logs what failed, maybe its error (two lines), then aborts. */
#define WITNESS_CAUSE_LINES	2
/* MTLGPUFamilyApple10 (M5, A19): the highest family of a real Apple GPU. */
#define WITNESS_APPLE_LAST	1010
/* Lines a process's end reads from its log before it is judged. */
#define WITNESS_DRAIN_ROUNDS	16
/* How long a witness waits for the line ggml logs after the call. */
#define WITNESS_GRACE_MS	1000

static const struct {
	const char	*failed;
	const char	*trigger;
} witness_triggers[] = {
	{ "pipeline", "pipeline failure" },
	{ "function", "pipeline failure" },	/* ggml: failed to compile */
	{ "library", "Metal library failure" },
	{ "queue", "command queue failure" },
	{ "command-buffer", "command buffer failure" },
	{ "residency-set", "residency set failure" },
};

static void
witness_emit(struct job *j, const char *trigger, const char *const *evidence,
    int n)
{
	struct mcd_event	ev = { .type = LC_EV_FAILURE_LINE, .job = j,
	    .trigger = trigger, .evidence = evidence, .nevidence = n };

	j->daemon->emit(j->daemon, &ev);
}

/* The shim's report of the job's process, read again; false: none. */
static bool
witness_read(struct job *j, struct shim_seen *seen)
{
	char	dir[PATH_MAX];

	if (j->pid <= 0)
		return false;
	mc_fmt(dir, sizeof dir, "%s/reports", j->daemon->paths.state);
	return marker_read(dir, j->pid, seen) &&
	    strcmp(seen->state, "hooked") == 0;
}

static const char *
witness_trigger(const struct shim_seen *seen)
{
	size_t	i;

	for (i = 0; i < sizeof witness_triggers / sizeof witness_triggers[0];
	    i++)
		if (strcmp(seen->failed, witness_triggers[i].failed) == 0)
			return witness_triggers[i].trigger;
	return "Metal failure";
}

/*
 * May this witness act without a line?  A library that would not load is
 * fatal to ggml only with its error line (an optional one, the tensor
 * API's, it does without: ggml-metal-device.m), so it waits for one; the
 * others stand alone (a failed command buffer's line is INFO, hidden by
 * default).
 */
static bool
witness_alone(const struct shim_seen *seen)
{
	return strcmp(seen->failed, "library") != 0;
}

/*
 * Does a line of kind what go with this witness?  A library's goes only
 * with a line about a library: text of another kind is no part of it.
 */
static bool
witness_pairs(const struct shim_seen *seen, const char *what)
{
	return witness_alone(seen) || strstr(what, "library") != NULL;
}

/*
 * The shim saw a Metal call fail: the job goes back to stock once, with
 * the witness and the failure line that went with it, if one came.
 */
static void
witness_act(struct job *j, const struct shim_seen *seen)
{
	char		 said[WATCH_EVIDENCE_LEN];
	const char	*evidence[2] = { j->unconfirmed, said };
	bool		 line = j->unconfirmed[0] != '\0';

	j->witness_acted = true;
	job_timer_stop(j->witness_timer);
	snprintf(said, sizeof said, "the shim saw %s fail in pid %ld",
	    seen->failed_call, j->pid);
	log_warnx("job %s: %s", j->name, said);
	/* The line first when one came: it says the most to a person. */
	witness_emit(j, witness_trigger(seen), line ? evidence : evidence + 1,
	    line ? 2 : 1);
	j->unconfirmed[0] = '\0';
	/* This process's failure is told: its abort tells it no more. */
	j->abort.line[0] = '\0';
}

/*
 * Every line the process wrote but ggml's trace, with the failure it
 * shows (what, or NULL): is it ggml's abort from a ggml-metal source,
 * and what failure line came right before?  Any other line ends an
 * abort's standing as the last word.
 */
void
witness_said(struct job *j, const char *what, const char *line)
{
	j->lines++;
	if (!scan_fatal(what)) {
		j->abort.line[0] = '\0';
		/* The first of a run of failure lines says what failed; the
		 * ones after it (the NSError's text) say how. */
		if (what != NULL && (j->recent_what == NULL ||
		    j->recent_last != j->lines - 1)) {
			mc_text(j->recent, sizeof j->recent, line);
			j->recent_what = what;
			j->recent_seq = j->lines;
		}
		if (what != NULL)
			j->recent_last = j->lines;
		return;
	}
	mc_text(j->abort.line, sizeof j->abort.line, line);
	j->abort.what = what;
	j->abort.cause[0] = '\0';
	if (j->recent_what != NULL && j->recent_last == j->lines - 1 &&
	    j->lines - j->recent_seq <= WITNESS_CAUSE_LINES + 1) {
		mc_text(j->abort.cause, sizeof j->abort.cause, j->recent);
		j->abort.cause_what = j->recent_what;
	}
}

/* A line of the job's stderr matched the failure signature what. */
void
witness_line(struct job *j, const char *what, const char *line)
{
	struct shim_seen	seen;
	uint64_t		now = uv_now(j->daemon->loop);

	if (j->witness_acted)
		return;
	/*
	 * The window runs from the line held, and a line older than it
	 * gives way: more lines (a client resending its text) never keep
	 * one open for a crash that comes later.
	 */
	if (j->unconfirmed[0] == '\0' ||
	    now - j->unconfirmed_ms > WITNESS_DEATH_MS) {
		mc_text(j->unconfirmed, sizeof j->unconfirmed, line);
		j->unconfirmed_what = what;
		j->unconfirmed_ms = now;
	}
	if (witness_read(j, &seen) && seen.witnessed > 0 &&
	    witness_pairs(&seen, what)) {
		witness_act(j, &seen);
		return;
	}
	log_limited(j->name, "held", "job %s: its log shows a %s, but the "
	    "shim saw no Metal call fail: not acted on unless the process "
	    "dies of it (%s)", j->name, what, j->unconfirmed);
}

/* A profile that claims more than any Apple GPU has. */
static void
witness_overbroad(struct job *j, const struct shim_seen *seen)
{
	char		 said[WATCH_EVIDENCE_LEN];
	const char	*evidence[1] = { said };

	snprintf(said, sizeof said, "the shim answers Apple families up to "
	    "%ld in pid %ld: no Apple GPU has one above %d", seen->family_max,
	    j->pid, WITNESS_APPLE_LAST);
	j->witness_acted = true;
	witness_emit(j, "over-broad profile", evidence, 1);
}

static void	witness_due(struct job *);

static void
witness_timer_fired(uv_timer_t *t)
{
	witness_due(t->data);
}

/* The job's watch ends: its timer goes. */
void
witness_stop(struct job *j)
{
	job_timer_close(&j->witness_timer);
}

/* What the job wrote up to now, read (a bounded amount) before judging. */
static void
witness_drain(struct job *j, tail_line_fn read_line)
{
	int	i;

	for (i = 0; i < WITNESS_DRAIN_ROUNDS && read_line != NULL &&
	    j->tail != NULL && !j->witness_acted; i++)
		if (!tail_read(j->tail, read_line, j))
			break;
}

/*
 * The job's report, read and judged: an answer above any Apple GPU's, or a
 * witness, with the failure line ggml writes after the call (read first)
 * if it goes with it.  A witness that may stand alone and has no line yet
 * waits WITNESS_GRACE_MS for it, once, when wait; else it acts now.
 */
static void
witness_judge(struct job *j, tail_line_fn read_line, bool wait)
{
	struct shim_seen	seen;

	if (j->witness_acted || !job_runs_unlocked(j) ||
	    !witness_read(j, &seen))
		return;
	if (seen.family_max > WITNESS_APPLE_LAST) {
		witness_overbroad(j, &seen);
		return;
	}
	if (seen.witnessed == 0)
		return;
	witness_drain(j, read_line);
	if (j->witness_acted)
		return;
	if (j->unconfirmed[0] != '\0' && witness_pairs(&seen,
	    j->unconfirmed_what))
		witness_act(j, &seen);
	else if (!witness_alone(&seen))
		return;
	else if (!wait)
		witness_act(j, &seen);
	/* Armed once: other reports changing meanwhile do not delay it. */
	else if (j->witness_timer == NULL ||
	    !uv_is_active((uv_handle_t *)j->witness_timer))
		job_timer_start(j, &j->witness_timer, witness_timer_fired,
		    WITNESS_GRACE_MS);
}

/* The job's report changed (or was first read). */
void
witness_report(struct job *j, tail_line_fn read_line)
{
	witness_judge(j, read_line, true);
}

/* The grace is over: the witness acts alone (its line never came). */
static void
witness_due(struct job *j)
{
	witness_judge(j, NULL, false);
}

/*
 * The process is gone: what it wrote last is read now, and its report,
 * while it is still there, whether or not its change was heard yet (a
 * process that dies at once may end before that).
 */
void
witness_gone(struct job *j, tail_line_fn read_line)
{
	witness_drain(j, read_line);
	witness_judge(j, read_line, false);
	/* Its last word, kept for launchd's telling of how it ended. */
	j->died = j->abort;
	j->died_seen = true;
	j->abort.line[0] = '\0';
}

/*
 * launchd says how the last process ended: by SIGABRT with ggml's abort as
 * the last it said, that abort is the evidence (and the failure line right
 * before it names what failed).  Any other end after a failure line is
 * not the line's doing.  Its end seen (witness_gone), its last words were
 * kept apart from the next process's; else it ended before that was heard
 * and what the log holds now is read first, and is its own.  Either way
 * its lines are spent, and only its.
 */
void
witness_exited(struct job *j, bool abnormal, int sig, const char *how,
    tail_line_fn read_line)
{
	struct witness_abort	*a = &j->died;
	char			 died[WATCH_EVIDENCE_LEN];
	const char		*evidence[3];
	int			 n = 0;

	if (!j->died_seen) {
		witness_drain(j, read_line);
		a = &j->abort;
	}
	if (abnormal && sig == SIGABRT && a->line[0] != '\0') {
		snprintf(died, sizeof died, "then the process ended: %s", how);
		if (a->cause[0] != '\0')
			evidence[n++] = a->cause;
		evidence[n++] = a->line;
		evidence[n++] = died;
		log_warnx("job %s: %s, %s", j->name, a->line, died);
		witness_emit(j, a->cause[0] != '\0' ? a->cause_what :
		    a->what, evidence, n);
	} else if (abnormal && j->unconfirmed[0] != '\0')
		log_info("job %s: it ended (%s) after a failure line, but not "
		    "by ggml's abort right after it: not the line's doing",
		    j->name, how);
	j->unconfirmed[0] = '\0';
	a->line[0] = '\0';
	j->died_seen = false;
}

/*
 * A new process proves its own failures.  A line held from the last one
 * stays until launchd says how that one ended.
 */
void
witness_reset(struct job *j)
{
	j->recent_what = NULL;
	j->witness_acted = false;
	job_timer_stop(j->witness_timer);
}
