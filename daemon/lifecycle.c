/* SPDX-License-Identifier: MIT */
/*
 * A job's lifecycle, in one place: the states, the events that move a job
 * between them, and what the daemon does on each.  Two pure functions, no
 * I/O and no call into the rest of the daemon:
 *
 * lifecycle_step (state, event, facts) -> (next state, actions) reads the
 * table below, one row per transition, first match wins.  driver.c builds
 * the facts, carries out the actions and feeds their results back in.
 *
 * lifecycle_settle is where a job comes to rest once launchd has it as
 * rendered (the LAUNCHD_OK row), and what status calls its next state.
 * Read top to bottom, the first line that matches wins:
 *
 *   file invalid                              invalid
 *   stopped by request                        stopped
 *   failed (launchd cannot start it)          failed
 *   crashing (a crash loop without the shim)  crashing (runs stock, kept
 *                                                     served)
 *   reverted (probe, log, crash, health)      reverted
 *   not set to run with a usable profile      stock  (why: no profile, a
 *                                                     bad one, managed)
 *   probe verdict not in yet                  probing
 *   probe verdict failed                      reverted (by the gate)
 *   its process dropped the shim              blocked
 *   otherwise                                 unlocked
 *
 * tests/unit/test_lifecycle.c checks every state by every event and every
 * combination of the facts; metalcapd(8) prints the table, checked
 * against this one by that test.
 */
#include "mcd.h"

static const char *const lifecycle_names[] = {
	[JOB_PENDING] = "pending",
	[JOB_STOCK] = "stock",
	[JOB_PROBING] = "probing",
	[JOB_UNLOCKED] = "unlocked",
	[JOB_REVERTED] = "reverted",
	[JOB_BLOCKED] = "blocked",
	[JOB_FAILED] = "failed",
	[JOB_INVALID] = "invalid",
	[JOB_ERROR] = "error",
	[JOB_STOPPED] = "stopped",
	[JOB_CRASHING] = "crashing",
};

static const char *const lifecycle_event_names[] = {
	[LC_EV_FILE_CHANGED] = "file-changed",
	[LC_EV_FILE_REMOVED] = "file-removed",
	[LC_EV_ENABLE] = "enable",
	[LC_EV_DISABLE] = "disable",
	[LC_EV_PROFILE] = "profile",
	[LC_EV_START] = "start",
	[LC_EV_STOP] = "stop",
	[LC_EV_RESTART] = "restart",
	[LC_EV_PROBE_PASS] = "probe-pass",
	[LC_EV_PROBE_PARTIAL] = "probe-partial",
	[LC_EV_PROBE_FAIL] = "probe-fail",
	[LC_EV_STARTED] = "started",
	[LC_EV_GONE] = "gone",
	[LC_EV_EXIT_CODE] = "exit-code",
	[LC_EV_EXIT_SIGNAL] = "exit-signal",
	[LC_EV_EXIT_JETSAM] = "exit-jetsam",
	[LC_EV_SPAWN_FAILED] = "spawn-failed",
	[LC_EV_FAILURE_LINE] = "failure-line",
	[LC_EV_HEALTH_OK] = "health-ok",
	[LC_EV_HEALTH_FAIL] = "health-fail",
	[LC_EV_HEALTH_LAPSED] = "health-lapsed",
	[LC_EV_SHIM_HOOKED] = "shim-hooked",
	[LC_EV_SHIM_STOCK] = "shim-stock",
	[LC_EV_SHIM_ABSENT] = "shim-absent",
	[LC_EV_MANAGED] = "managed",
	[LC_EV_LAUNCHD_OK] = "launchd-ok",
	[LC_EV_LAUNCHD_ERROR] = "launchd-error",
	[LC_EV_LAUNCHD_GONE] = "launchd-gone",
	[LC_EV_REFUSED] = "refused",
	[LC_EV_LOGOUT] = "logout",
	[LC_EV_LOGIN] = "login",
	[LC_EV_STEADY] = "steady",
};

static const char *const lifecycle_action_names[LC_ACTION_BITS] = {
	"persist", "notify", "probe", "kickstart", "render", "bootstrap",
	"bootout",
};

/* The facts a row may ask for, each one line of lifecycle_guard_holds. */
enum lifecycle_guard {
	LG_ANY,
	LG_INVALID,
	LG_INVALID_HELD,
	LG_HELD,
	LG_NEEDS_PROBE,
	LG_PROBE_FAILS,
	LG_SHIM_AT_RISK,
	LG_LOOP_ENV,
	LG_LOOP_WITH_SHIM,
	LG_LOOP,
	LG_RUNS_UNLOCKED,
	LG_CRASHING,
	LG_NOT_FAILED,
	LG_BACKGROUND,
	LG_COUNT,
};

static const char *const lifecycle_guard_texts[LG_COUNT] = {
	[LG_ANY] = "",
	[LG_INVALID] = "file invalid",
	[LG_INVALID_HELD] = "file invalid, stopped or failed",
	[LG_HELD] = "stopped or failed",
	[LG_NEEDS_PROBE] = "would unlock, no verdict",
	[LG_PROBE_FAILS] = "would unlock, verdict fails",
	[LG_SHIM_AT_RISK] = "may carry the shim, no incident",
	[LG_LOOP_ENV] = "crash loop, launchd or kernel names its environment",
	[LG_LOOP_WITH_SHIM] = "crash loop, may carry the shim",
	[LG_LOOP] = "crash loop, not failed",
	[LG_RUNS_UNLOCKED] = "its agent carries the shim",
	[LG_CRASHING] = "crashing",
	[LG_NOT_FAILED] = "not failed",
	[LG_BACKGROUND] = "the template allows Background",
};

#define EV(e)		(UINT64_C(1) << (e))
#define ST(s)		(1u << (s))
#define ALL		0xffffffffu
#define REQUESTS	(EV(LC_EV_ENABLE) | EV(LC_EV_DISABLE) | \
			 EV(LC_EV_PROFILE) | EV(LC_EV_START) | EV(LC_EV_STOP))
#define CONVERGE	(EV(LC_EV_FILE_CHANGED) | EV(LC_EV_MANAGED) | \
			 EV(LC_EV_LOGIN) | EV(LC_EV_STEADY) | \
			 EV(LC_EV_PROBE_PASS) | EV(LC_EV_PROBE_PARTIAL) | \
			 EV(LC_EV_PROBE_FAIL))
#define EXITS		(EV(LC_EV_EXIT_CODE) | EV(LC_EV_EXIT_SIGNAL) | \
			 EV(LC_EV_EXIT_JETSAM))
#define EVIDENCE	(EV(LC_EV_FAILURE_LINE) | EV(LC_EV_HEALTH_FAIL))
#define SHIM_MISSING	(EV(LC_EV_SHIM_STOCK) | EV(LC_EV_SHIM_ABSENT))
#define UP		(LC_RENDER | LC_BOOTSTRAP)
#define INCIDENT	(LC_PERSIST | LC_NOTIFY)

/*
 * The table.  A request is saved before anything is done for it; while
 * its file is invalid the last good agent keeps running, unless the job
 * is stopped or failed (a bootout needs no valid file, and a restarted
 * daemon carries it out again); an unlocked
 * profile never runs before the gate passed it; evidence of a failed
 * Metal pipeline reverts only a process that may carry the shim; a crash
 * loop without the shim is supervised (crashing: run stock, kept loaded,
 * restarted by launchd every ThrottleInterval) and never given up, for a
 * client's request can crash a server; a program launchd cannot start
 * gives the job up (no process ran, so no client was served).
 */
static const struct lifecycle_row lifecycle_table[] = {
	/* events          states  guard  next  actions  why */
	{ EV(LC_EV_FILE_REMOVED), ALL, LG_ANY, LC_SAME, LC_BOOTOUT,
	    LC_WHY_NONE },
	{ REQUESTS, ALL, LG_INVALID_HELD, JOB_INVALID, LC_PERSIST |
	    LC_NOTIFY | LC_BOOTOUT, LC_WHY_INVALID },
	{ REQUESTS, ALL, LG_INVALID, JOB_INVALID, LC_PERSIST | LC_NOTIFY,
	    LC_WHY_INVALID },
	{ REQUESTS, ALL, LG_HELD, LC_SAME, LC_PERSIST | LC_RENDER |
	    LC_BOOTOUT, LC_WHY_NONE },
	{ REQUESTS, ALL, LG_NEEDS_PROBE, JOB_PROBING, LC_PERSIST | LC_PROBE |
	    LC_NOTIFY, LC_WHY_PROBING },
	{ REQUESTS, ALL, LG_PROBE_FAILS, JOB_REVERTED, INCIDENT | UP,
	    LC_WHY_INCIDENT },
	{ REQUESTS, ALL, LG_ANY, LC_SAME, LC_PERSIST | UP, LC_WHY_NONE },
	{ CONVERGE, ALL, LG_INVALID_HELD, JOB_INVALID, LC_NOTIFY | LC_BOOTOUT,
	    LC_WHY_INVALID },
	{ CONVERGE, ALL, LG_INVALID, JOB_INVALID, LC_NOTIFY, LC_WHY_INVALID },
	{ CONVERGE, ALL, LG_HELD, LC_SAME, LC_RENDER | LC_BOOTOUT,
	    LC_WHY_NONE },
	{ CONVERGE, ALL, LG_NEEDS_PROBE, JOB_PROBING, LC_PROBE | LC_NOTIFY,
	    LC_WHY_PROBING },
	{ CONVERGE, ALL, LG_PROBE_FAILS, JOB_REVERTED, INCIDENT | UP,
	    LC_WHY_INCIDENT },
	{ CONVERGE, ALL, LG_ANY, LC_SAME, UP, LC_WHY_NONE },
	{ EV(LC_EV_RESTART), ALL, LG_HELD, LC_SAME, 0, LC_WHY_NONE },
	{ EV(LC_EV_RESTART), ALL, LG_ANY, LC_SAME, LC_KICKSTART,
	    LC_WHY_NONE },
	{ EV(LC_EV_STARTED), ALL, LG_ANY, LC_SAME, LC_NOTIFY, LC_WHY_NONE },
	{ EV(LC_EV_GONE), ALL, LG_ANY, LC_SAME, LC_BOOTSTRAP, LC_WHY_NONE },
	/*
	 * Killed for memory the whole Mac lacked, for its code signature, or
	 * its log's disk full (launchd's and the kernel's word, never a log
	 * line): not the profile.  Crashing, not reverted.
	 */
	{ EXITS, ALL, LG_LOOP_ENV, JOB_CRASHING, LC_NOTIFY | UP,
	    LC_WHY_CRASHING },
	{ EXITS, ALL, LG_LOOP_WITH_SHIM, JOB_REVERTED, INCIDENT | UP,
	    LC_WHY_INCIDENT },
	/* Without the shim: launchd keeps restarting it, and we watch. */
	{ EXITS, ALL, LG_LOOP, JOB_CRASHING, LC_NOTIFY | UP,
	    LC_WHY_CRASHING },
	{ EXITS, ALL, LG_CRASHING, JOB_CRASHING, LC_NOTIFY, LC_WHY_CRASHING },
	{ EXITS, ALL, LG_ANY, LC_SAME, 0, LC_WHY_NONE },
	/* launchd could not start it: no profile is to blame. */
	{ EV(LC_EV_SPAWN_FAILED), ALL, LG_NOT_FAILED, JOB_FAILED,
	    INCIDENT | LC_BOOTOUT, LC_WHY_INCIDENT },
	{ EV(LC_EV_SPAWN_FAILED), ALL, LG_ANY, LC_SAME, 0, LC_WHY_NONE },
	{ EVIDENCE, ALL, LG_SHIM_AT_RISK, JOB_REVERTED, INCIDENT | UP,
	    LC_WHY_INCIDENT },
	{ EVIDENCE | EV(LC_EV_HEALTH_OK), ALL, LG_ANY, LC_SAME, 0,
	    LC_WHY_NONE },
	/*
	 * Its check passed, then failed FailuresBeforeAction times in a
	 * row: a hung server, or one its clients keep busy, which says
	 * nothing of a profile.  It is restarted, as launchd's KeepAlive or
	 * systemd's WatchdogSec would; never reverted or given up.
	 */
	{ EV(LC_EV_HEALTH_LAPSED), ALL, LG_HELD, LC_SAME, 0, LC_WHY_NONE },
	{ EV(LC_EV_HEALTH_LAPSED), ALL, LG_ANY, LC_SAME, LC_NOTIFY |
	    LC_KICKSTART, LC_WHY_NONE },
	{ EV(LC_EV_SHIM_HOOKED), ST(JOB_BLOCKED), LG_ANY, JOB_UNLOCKED,
	    LC_NOTIFY, LC_WHY_PARTIAL },
	{ EV(LC_EV_SHIM_HOOKED), ALL, LG_ANY, LC_SAME, LC_NOTIFY,
	    LC_WHY_NONE },
	{ SHIM_MISSING, ALL, LG_RUNS_UNLOCKED, JOB_BLOCKED, LC_NOTIFY,
	    LC_WHY_EVENT },
	{ SHIM_MISSING, ALL, LG_ANY, LC_SAME, LC_NOTIFY, LC_WHY_NONE },
	{ EV(LC_EV_LAUNCHD_OK), ALL, LG_PROBE_FAILS, JOB_REVERTED,
	    INCIDENT | UP, LC_WHY_INCIDENT },
	{ EV(LC_EV_LAUNCHD_OK), ALL, LG_ANY, LC_SETTLE, LC_NOTIFY,
	    LC_WHY_NONE },
	{ EV(LC_EV_LAUNCHD_ERROR), ALL, LG_ANY, JOB_ERROR, LC_NOTIFY,
	    LC_WHY_EVENT },
	{ EV(LC_EV_LAUNCHD_GONE), ALL, LG_ANY, LC_SAME, LC_NOTIFY,
	    LC_WHY_NONE },
	/* Rendered anew before each bootstrap: a refusal that stays is
	 * someone else's doing, and says so. */
	{ EV(LC_EV_REFUSED), ALL, LG_ANY, JOB_ERROR, LC_NOTIFY, LC_WHY_EVENT },
	/*
	 * No GUI session (a logout, an SSH-only boot): the job moves to
	 * user/UID where the template allows the Background session
	 * (reconcile.c does the move), else it waits in error for a login.
	 * A login is metalcapd's own start (launchd loads only its agent):
	 * each job is brought to the state it keeps, with the converging
	 * rows above, so a stopped one stays booted out.
	 */
	{ EV(LC_EV_LOGOUT), ALL, LG_BACKGROUND, LC_SAME, 0, LC_WHY_NONE },
	{ EV(LC_EV_LOGOUT), ALL, LG_ANY, JOB_ERROR, LC_NOTIFY, LC_WHY_EVENT },
};

const char *
job_state_name(enum job_state s)
{
	return lifecycle_names[s];
}

const char *
lifecycle_event_name(enum lifecycle_event e)
{
	return lifecycle_event_names[e];
}

const char *
lifecycle_action_name(unsigned bit)
{
	return bit < LC_ACTION_BITS ? lifecycle_action_names[bit] : "?";
}

const char *
lifecycle_guard_text(int guard)
{
	return guard >= 0 && guard < LG_COUNT ? lifecycle_guard_texts[guard] :
	    "?";
}

const struct lifecycle_row *
lifecycle_rows(size_t *count)
{
	*count = sizeof lifecycle_table / sizeof lifecycle_table[0];
	return lifecycle_table;
}


enum job_state
lifecycle_settle(const struct lifecycle_facts *f, enum lifecycle_why *why)
{
	*why = LC_WHY_NONE;
	if (!f->valid)
		return (*why = LC_WHY_INVALID, JOB_INVALID);
	if (f->stopped)
		return (*why = LC_WHY_STOPPED, JOB_STOPPED);
	if (f->failed)
		return (*why = LC_WHY_INCIDENT, JOB_FAILED);
	if (f->crashing)
		return (*why = LC_WHY_CRASHING, JOB_CRASHING);
	if (f->reverted)
		return (*why = LC_WHY_INCIDENT, JOB_REVERTED);
	if (f->wants_unlocked && !f->profile_exists)
		return (*why = LC_WHY_NO_PROFILE, JOB_STOCK);
	if (f->wants_unlocked && !f->profile_ok)
		return (*why = LC_WHY_BAD_PROFILE, JOB_STOCK);
	if (!f->wants_unlocked || !f->profile_unlocks)
		return (*why = f->managed ? LC_WHY_MANAGED : LC_WHY_NONE,
		    JOB_STOCK);
	if (!f->verdict_known)
		return (*why = LC_WHY_PROBING, JOB_PROBING);
	if (f->verdict_fails)
		return (*why = LC_WHY_INCIDENT, JOB_REVERTED);
	if (f->blocked)
		return (*why = LC_WHY_BLOCKED, JOB_BLOCKED);
	return (*why = LC_WHY_PARTIAL, JOB_UNLOCKED);
}

static bool
lifecycle_guard_holds(int guard, const struct lifecycle_facts *f)
{
	enum lifecycle_why	why;
	bool			open = !f->reverted && !f->failed;

	switch (guard) {
	case LG_INVALID:
		return !f->valid;
	case LG_INVALID_HELD:
		return !f->valid && (f->stopped || f->failed);
	case LG_HELD:
		return f->stopped || f->failed;
	case LG_NEEDS_PROBE:
		return lifecycle_settle(f, &why) == JOB_PROBING;
	case LG_PROBE_FAILS:
		return !f->reverted &&
		    lifecycle_settle(f, &why) == JOB_REVERTED;
	case LG_SHIM_AT_RISK:
		return f->carries_shim && open;
	case LG_LOOP_ENV:
		return f->crash_loop && f->env_fault && !f->failed;
	case LG_LOOP_WITH_SHIM:
		return f->crash_loop && f->carries_shim && open;
	case LG_LOOP:
		return f->crash_loop && !f->failed;
	case LG_CRASHING:
		return lifecycle_settle(f, &why) == JOB_CRASHING;
	case LG_NOT_FAILED:
		return !f->failed;
	case LG_BACKGROUND:
		return f->background_ok;
	case LG_RUNS_UNLOCKED:
		return f->wants_unlocked && f->profile_exists &&
		    f->profile_ok && f->profile_unlocks;
	default:
		return true;
	}
}

/* Where an event takes a job in state s, and what is done for it. */
void
lifecycle_step(enum job_state s, enum lifecycle_event e,
    const struct lifecycle_facts *f, struct lifecycle_step *out)
{
	const struct lifecycle_row	*r = lifecycle_table;
	const struct lifecycle_row	*end = r + sizeof lifecycle_table /
	    sizeof lifecycle_table[0];

	for (; r < end; r++)
		if ((r->events & EV(e)) && (r->states & ST(s)) &&
		    lifecycle_guard_holds(r->guard, f))
			break;
	/* The last rows of each event match anything: never reached. */
	if (r == end) {
		out->next = s;
		out->actions = 0;
		out->why = LC_WHY_NONE;
		out->row = NULL;
		return;
	}
	out->row = r;
	out->actions = r->actions;
	out->why = r->why;
	if (r->next == LC_SETTLE)
		out->next = lifecycle_settle(f, &out->why);
	else
		out->next = r->next == LC_SAME ? s : (enum job_state)r->next;
}
