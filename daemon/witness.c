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
#include "witness.h"

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

/* Does a's witness say more than b's (marker_weight), or b has none? */
static bool
witness_outweighs(const struct shim_seen *a, const struct shim_seen *b)
{
	return a->witnessed > 0 && (b->witnessed == 0 ||
	    marker_weight(a->failed) > marker_weight(b->failed));
}

/*
 * A report of another process of the job's group (InheritShim: the shim
 * goes on into its children, and a child may be the one that does the
 * Metal work, as Ollama's runner and mlx_lm's workers do).  The first
 * hooked one stands for the group, and gives way to one whose witness
 * says more, from any child, read again each time; kept, so a child
 * swept after its end still counts.
 */
static void
witness_child(long pid, const struct shim_seen *child, void *arg)
{
	struct job	*j = arg;

	(void)pid;
	if (strcmp(child->state, "hooked") != 0)
		return;
	if (!j->group_seen.present || witness_outweighs(child,
	    &j->group_seen) || (j->group_seen.machine_faults == 0 &&
	    j->group_seen.witnessed == 0 && child->machine_faults > 0))
		j->group_seen = *child;
}

/*
 * The shim's report of the job's process, read again, with its group's
 * where the shim is inherited; false: none hooked.  The witness that
 * says more, the process's own or a child's.
 */
bool
witness_read(struct job *j, struct shim_seen *seen)
{
	char	dir[PATH_MAX];
	bool	own;

	if (j->pid <= 0)
		return false;
	mc_fmt(dir, sizeof dir, "%s/reports", j->daemon->paths.state);
	own = marker_read(dir, j->pid, seen) &&
	    strcmp(seen->state, "hooked") == 0;
	if (j->spec == NULL || !j->spec->inherit_shim)
		return own;
	marker_group(dir, j->pid, witness_child, j);
	if (!j->group_seen.present)
		return own;
	if (!own)
		*seen = j->group_seen;
	else if (witness_outweighs(&j->group_seen, seen)) {
		seen->witnessed = j->group_seen.witnessed;
		seen->failed_code = j->group_seen.failed_code;
		seen->pid = j->group_seen.pid;
		memcpy(seen->failed, j->group_seen.failed, sizeof seen->failed);
		memcpy(seen->failed_call, j->group_seen.failed_call,
		    sizeof seen->failed_call);
	}
	return true;
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
 * May this witness act without a line?  Only one of a call ggml cannot go
 * on without (marker_weight 2).  A failed command buffer's ERROR line
 * comes only when something waits for the graph (ggml_metal_synchronize,
 * ggml-metal-context.m:268-298; at INFO on the capture path alone), and
 * the backend stays in error state after it (L459-462), so the witness
 * need not wait for the line.
 */
static bool
witness_alone(const struct shim_seen *seen)
{
	return marker_weight(seen->failed) == 2;
}

/*
 * Is this witness judged by how its process ends?  A function or a
 * pipeline: ggml aborts on a nil one it needs (ggml-metal-device.m:851),
 * and does without the one of its tensor API check (L1186-1190), after
 * the same "failed to compile pipeline" line.  So only the abort that
 * follows (SIGABRT, launchd's word) makes it a verdict.
 */
static bool
witness_fated(const struct shim_seen *seen)
{
	return marker_weight(seen->failed) == 1;
}

/*
 * Does a line of kind what go with this witness?  A library's goes only
 * with a line about a library: text of another kind is no part of it.
 */
static bool
witness_pairs(const struct shim_seen *seen, const char *what)
{
	return witness_alone(seen) || (marker_weight(seen->failed) == 0 &&
	    strstr(what, "library") != NULL);
}

/* What the shim saw, in words: the call, its code's name, the pid. */
static void
witness_words(const struct shim_seen *seen, char *buf, size_t len)
{
	const struct marker_code	*c = marker_code(seen->failed_code);
	char				 code[64] = "";

	if (c != NULL)
		snprintf(code, sizeof code, " with %s (%ld)", c->name,
		    c->code);
	else if (seen->failed_code >= 0)
		snprintf(code, sizeof code, " with code %ld",
		    seen->failed_code);
	snprintf(buf, len, "the shim saw %s fail%s in pid %ld",
	    seen->failed_call, code, seen->pid);
}

/*
 * The shim saw a Metal call fail: the job goes back to stock once, with
 * the witness and the failure line that went with it, if one came.  The
 * shim's words come first: they are what the verdict rests on, and the
 * reason status shows.  The line is text a client may have written (a
 * kernel's name of its choosing), so it follows, said to be the log's.
 */
static void
witness_act(struct job *j, const struct shim_seen *seen)
{
	char		 said[WATCH_EVIDENCE_LEN], line[WATCH_EVIDENCE_LEN];
	const char	*evidence[2] = { said, line };

	j->witness_acted = true;
	job_timer_stop(j->witness_timer);
	witness_words(seen, said, sizeof said);
	/* Cut to fit: the evidence holds WATCH_EVIDENCE_LEN bytes. */
	snprintf(line, sizeof line, "its log said: %.*s",
	    (int)(sizeof line - sizeof "its log said: "), j->unconfirmed);
	log_warnx("job %s: %s", j->name, said);
	witness_emit(j, witness_trigger(seen), evidence,
	    j->unconfirmed[0] != '\0' ? 2 : 1);
	j->unconfirmed[0] = '\0';
	/* This process's failure is told: its abort tells it no more. */
	j->abort.line[0] = '\0';
}

/*
 * The GPU failed a command buffer for a reason of the machine's (out of
 * memory, a timeout, a device removed): said once, judged against no
 * profile.
 */
static void
witness_machine(struct job *j, const struct shim_seen *seen)
{
	const struct marker_code	*c = marker_code(seen->machine_code);

	if (j->machine_told || seen->machine_faults == 0)
		return;
	j->machine_told = true;
	log_warnx("job %s: the GPU failed a command buffer with %s (%ld) in "
	    "pid %ld: the machine's state, not a kernel's, so no profile is "
	    "judged on it", j->name, c != NULL ? c->name : "?",
	    seen->machine_code, seen->pid);
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
	/* Its NSError's text, read as no failure line, may come between. */
	if (j->recent_what != NULL &&
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
	if (!witness_read(j, &seen))
		memset(&seen, 0, sizeof seen);
	if (seen.witnessed > 0 && witness_pairs(&seen, what)) {
		witness_act(j, &seen);
		return;
	}
	/* The line just read, with its own kind: the held one may differ. */
	log_limited(j->name, "held", "job %s: its log shows a %s, but the "
	    "shim saw %s: not acted on unless the process dies of it (%s)",
	    j->name, what, seen.witnessed > 0 ? "a failure no line "
	    "confirms" : seen.machine_faults > 0 ? "only the machine's "
	    "fault" : "no Metal call fail", line);
}

/* A profile that claims more than any Apple GPU has. */
static void
witness_overbroad(struct job *j, const struct shim_seen *seen)
{
	char		 said[WATCH_EVIDENCE_LEN];
	const char	*evidence[1] = { said };

	snprintf(said, sizeof said, "the shim answers Apple families up to "
	    "%ld in pid %ld: no Apple GPU has one above %d", seen->family_max,
	    seen->pid, WITNESS_APPLE_LAST);
	j->witness_acted = true;
	witness_emit(j, "over-broad profile", evidence, 1);
}

static void	witness_due(struct job *);

/* A witness that is no verdict yet: said once, with what would make it. */
static void
witness_waits(struct job *j, const struct shim_seen *seen, const char *when)
{
	char	said[WATCH_EVIDENCE_LEN];

	if (j->witness_told)
		return;
	j->witness_told = true;
	witness_words(seen, said, sizeof said);
	log_info("job %s: %s: a verdict only %s", j->name, said, when);
}

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
	witness_machine(j, &seen);
	if (seen.witnessed == 0)
		return;
	if (witness_fated(&seen)) {
		if (j->fate.witnessed == 0)
			j->fate = seen;
		witness_waits(j, &seen, "if the process then aborts, as ggml "
		    "does on a pipeline it needs");
		return;
	}
	witness_drain(j, read_line);
	if (j->witness_acted)
		return;
	if (j->unconfirmed[0] != '\0' && witness_pairs(&seen,
	    j->unconfirmed_what))
		witness_act(j, &seen);
	else if (!witness_alone(&seen))
		witness_waits(j, &seen, "with ggml's line that its library "
		    "failed: it does without an optional one");
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
 * A pipeline witness, and the process then ended by SIGABRT: ggml aborted
 * on the pipeline it needed.  The shim's words, the failure line ggml
 * logged before its abort (or the one held), ggml's abort line if it was
 * the last, then how it ended.
 */
static void
witness_aborted(struct job *j, const struct witness_abort *a,
    const char *how)
{
	char		 said[WATCH_EVIDENCE_LEN], line[WATCH_EVIDENCE_LEN];
	char		 died[WATCH_EVIDENCE_LEN];
	const char	*evidence[4], *cause;
	int		 n = 0;

	witness_words(&j->fate, said, sizeof said);
	evidence[n++] = said;
	cause = a->cause[0] != '\0' ? a->cause : j->unconfirmed;
	if (cause[0] != '\0') {
		snprintf(line, sizeof line, "its log said: %.*s",
		    (int)(sizeof line - sizeof "its log said: "), cause);
		evidence[n++] = line;
	}
	if (a->line[0] != '\0')
		evidence[n++] = a->line;
	snprintf(died, sizeof died, "then the process ended: %s", how);
	evidence[n++] = died;
	log_warnx("job %s: %s, %s", j->name, said, died);
	witness_emit(j, witness_trigger(&j->fate), evidence, n);
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
	/* ggml's own abort, last: any other SIGABRT (an assert a client
	 * reaches, std::terminate) after an optional pipeline's failure is
	 * no verdict on it. */
	if (abnormal && sig == SIGABRT && j->fate.witnessed > 0 &&
	    a->line[0] != '\0' && a->what != NULL &&
	    strcmp(a->what, SCAN_METAL_ABORT) == 0)
		witness_aborted(j, a, how);
	else if (abnormal && sig == SIGABRT && a->line[0] != '\0') {
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
	memset(&j->fate, 0, sizeof j->fate);
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
	j->machine_told = false;
	j->witness_told = false;
	/* Another process's pipeline (a bootout and bootstrap tell no
	 * exit): its abort, if it is told, still stands alone. */
	memset(&j->fate, 0, sizeof j->fate);
	memset(&j->group_seen, 0, sizeof j->group_seen);
	job_timer_stop(j->witness_timer);
}
