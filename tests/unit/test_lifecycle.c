/* SPDX-License-Identifier: MIT */
/*
 * The job lifecycle (daemon/lifecycle.c).
 *
 * Where a job settles, for every combination of the thirteen facts it
 * depends on, checked against the rules written out here a second way.
 *
 * The transition table: every state by every event by every combination
 * of the sixteen facts (and, for an exit, the seventeenth), held to the promises the daemon makes (an
 * unlocked profile never runs unproved, a request is saved first, an
 * incident is saved and told, ...); the whole row, state by event, for
 * three kinds of job written out by hand; and metalcapd(8)'s copy of the
 * table, which must match it.  "test_lifecycle --man" prints that copy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mcd.h"

#define NFACTS	13

static void
facts_from_bits(unsigned bits, struct lifecycle_facts *f)
{
	bool	*b[NFACTS] = { &f->valid, &f->stopped, &f->failed,
	    &f->reverted, &f->wants_unlocked, &f->managed, &f->profile_exists,
	    &f->profile_ok, &f->profile_unlocks, &f->verdict_known,
	    &f->verdict_fails, &f->blocked, &f->crashing };
	int	 i;

	for (i = 0; i < NFACTS; i++)
		*b[i] = (bits >> i) & 1;
}

/* The rules as predicates: what each state means. */
static enum job_state
expected(const struct lifecycle_facts *f)
{
	bool	runs = f->wants_unlocked && f->profile_exists &&
	    f->profile_ok && f->profile_unlocks;
	bool	open = f->valid && !f->stopped && !f->failed;

	if (!f->valid)
		return JOB_INVALID;
	if (f->stopped)
		return JOB_STOPPED;
	/* Crashing runs stock, shown before a revert it may also have. */
	if (f->crashing && !f->failed)
		return JOB_CRASHING;
	if (open && (f->reverted || (runs && f->verdict_known &&
	    f->verdict_fails)))
		return f->failed ? JOB_FAILED : JOB_REVERTED;
	if (f->failed)
		return JOB_FAILED;
	if (!runs)
		return JOB_STOCK;
	if (!f->verdict_known)
		return JOB_PROBING;
	return f->blocked ? JOB_BLOCKED : JOB_UNLOCKED;
}

static void
test_every_combination(void **state)
{
	struct lifecycle_facts	f;
	enum lifecycle_why	why;
	enum job_state		got;
	unsigned		bits, unlocked = 0;

	(void)state;
	for (bits = 0; bits < 1u << NFACTS; bits++) {
		facts_from_bits(bits, &f);
		got = lifecycle_settle(&f, &why);
		if (got != expected(&f))
			fail_msg("facts %#x: %s, want %s", bits,
			    job_state_name(got), job_state_name(expected(&f)));
		/* The reason fits the state. */
		switch (got) {
		case JOB_STOPPED:
			assert_int_equal(why, LC_WHY_STOPPED);
			break;
		case JOB_FAILED:
		case JOB_REVERTED:
			assert_int_equal(why, LC_WHY_INCIDENT);
			break;
		case JOB_PROBING:
			assert_int_equal(why, LC_WHY_PROBING);
			break;
		case JOB_CRASHING:
			assert_int_equal(why, LC_WHY_CRASHING);
			break;
		case JOB_BLOCKED:
			assert_int_equal(why, LC_WHY_BLOCKED);
			break;
		case JOB_UNLOCKED:
			assert_int_equal(why, LC_WHY_PARTIAL);
			unlocked++;
			break;
		case JOB_STOCK:
			assert_true(why == LC_WHY_NONE || why ==
			    LC_WHY_MANAGED || why == LC_WHY_NO_PROFILE ||
			    why == LC_WHY_BAD_PROFILE);
			assert_true(why != LC_WHY_MANAGED || f.managed);
			break;
		case JOB_INVALID:
			assert_int_equal(why, LC_WHY_INVALID);
			break;
		default:
			assert_int_equal(why, LC_WHY_NONE);
		}
	}
	/* Unlocked takes every fact in its favour: 2^1 rows (managed). */
	assert_int_equal(unlocked, 2);
}

/* --- the transition table ------------------------------------------------ */

#define NSTEPFACTS	16
#define NSTATES		(JOB_CRASHING + 1)

static void
step_facts_from_bits(unsigned bits, struct lifecycle_facts *f)
{
	facts_from_bits(bits, f);
	f->carries_shim = (bits >> 13) & 1;
	f->crash_loop = (bits >> 14) & 1;
	f->background_ok = (bits >> 15) & 1;
}

static bool
is_request(enum lifecycle_event e)
{
	return e == LC_EV_ENABLE || e == LC_EV_DISABLE || e == LC_EV_PROFILE ||
	    e == LC_EV_START || e == LC_EV_STOP;
}

/* Events after which the job's agent is rendered anew. */
static bool
is_converge(enum lifecycle_event e)
{
	return is_request(e) || e == LC_EV_FILE_CHANGED ||
	    e == LC_EV_MANAGED || e == LC_EV_LOGIN || e == LC_EV_PROBE_PASS ||
	    e == LC_EV_PROBE_PARTIAL || e == LC_EV_PROBE_FAIL ||
	    e == LC_EV_STEADY;
}

static bool
is_exit(enum lifecycle_event e)
{
	return e == LC_EV_EXIT_CODE || e == LC_EV_EXIT_SIGNAL ||
	    e == LC_EV_EXIT_JETSAM;
}

/* The promises, for one state, event and set of facts. */
static void
check_step(enum job_state s, enum lifecycle_event e,
    const struct lifecycle_facts *f, unsigned bits)
{
	struct lifecycle_step	st;
	enum lifecycle_why	why;
	bool			runs = f->wants_unlocked && f->profile_exists &&
	    f->profile_ok && f->profile_unlocks;
	bool			open = !f->reverted && !f->failed;
	bool			held = f->stopped || f->failed;
	enum job_state		settles = lifecycle_settle(f, &why);

#define PROMISE(c) do { if (!(c)) fail_msg("%s in %s, facts %#x: %s -> %s " \
	"actions %#x: broken: %s", lifecycle_event_name(e), \
	job_state_name(s), bits, job_state_name(s), job_state_name(st.next), \
	st.actions, #c); } while (0)

	lifecycle_step(s, e, f, &st);
	PROMISE(st.row != NULL);
	PROMISE((st.next != JOB_PENDING || s == JOB_PENDING) &&
	    (int)st.next < NSTATES);
	PROMISE((st.actions & ~((1u << LC_ACTION_BITS) - 1)) == 0);
	PROMISE(!((st.actions & LC_BOOTSTRAP) && (st.actions & LC_BOOTOUT)));
	/*
	 * An unlocked agent is never rendered before the gate passed it (a
	 * row that reverts saves the revert first, one that makes it
	 * crashing marks it so first: either renders stock, as a job
	 * reverted or crashing does).
	 */
	PROMISE(!(st.actions & LC_RENDER) || !runs || held || f->reverted ||
	    f->crashing || (st.next == JOB_REVERTED && (st.actions & LC_PERSIST)) ||
	    st.next == JOB_CRASHING ||
	    (f->verdict_known && !f->verdict_fails));
	/* Unlocked only from a passed verdict, or the shim reporting in. */
	if (st.next == JOB_UNLOCKED && s != JOB_UNLOCKED)
		PROMISE((e == LC_EV_SHIM_HOOKED && s == JOB_BLOCKED) ||
		    (e == LC_EV_LAUNCHD_OK && runs && f->verdict_known &&
		    !f->verdict_fails && !held && !f->reverted));
	/* A probe is asked for only by a job that then waits for it. */
	PROMISE(!(st.actions & LC_PROBE) || st.next == JOB_PROBING);
	/* A request is saved before anything is done for it. */
	if (is_request(e))
		PROMISE(st.actions & LC_PERSIST);
	else
		PROMISE(!(st.actions & LC_PERSIST) ||
		    ((st.next == JOB_REVERTED || st.next == JOB_FAILED) &&
		    st.why == LC_WHY_INCIDENT));
	/* An incident is saved and told. */
	if ((st.next == JOB_REVERTED || st.next == JOB_FAILED) &&
	    st.why == LC_WHY_INCIDENT && e != LC_EV_LAUNCHD_OK)
		PROMISE((st.actions & (LC_PERSIST | LC_NOTIFY)) ==
		    (LC_PERSIST | LC_NOTIFY));
	/* Stopped or failed needs no valid file: launchd lets go. */
	if (!f->valid && held && is_converge(e))
		PROMISE(st.next == JOB_INVALID && (st.actions & LC_BOOTOUT));
	/* An invalid file: the last good agent keeps running, but for that. */
	if (!f->valid && !held && is_converge(e))
		PROMISE(st.next == JOB_INVALID && !(st.actions &
		    (LC_RENDER | LC_BOOTSTRAP | LC_BOOTOUT)));
	/* Stopped or failed: launchd lets go, whatever changed. */
	if (f->valid && held && is_converge(e))
		PROMISE((st.actions & LC_BOOTOUT) && st.next == s);
	if (e == LC_EV_FILE_REMOVED)
		PROMISE(st.actions == LC_BOOTOUT && st.next == s);
	/* Evidence of a failed pipeline reverts only a process at risk. */
	if (e == LC_EV_FAILURE_LINE || e == LC_EV_HEALTH_FAIL)
		PROMISE(f->carries_shim && open ? st.next == JOB_REVERTED :
		    st.next == s && st.actions == 0);
	/*
	 * No exit gives a job up or boots it out: a client's request can
	 * crash a server.  A crash loop of a process that may carry the
	 * shim reverts it, unless launchd or the kernel named its
	 * environment; any other is supervised, crashing, kept loaded.
	 */
	if (is_exit(e)) {
		PROMISE((st.next != JOB_FAILED || s == JOB_FAILED) &&
		    !(st.actions & LC_BOOTOUT));
		if (f->crash_loop && !f->failed && f->env_fault)
			PROMISE(st.next == JOB_CRASHING &&
			    !(st.actions & LC_PERSIST) &&
			    (st.actions & LC_BOOTSTRAP));
		else if (f->crash_loop && !f->failed && f->carries_shim &&
		    !f->reverted)
			PROMISE(st.next == JOB_REVERTED &&
			    (st.actions & LC_RENDER));
		else if (f->crash_loop && !f->failed)
			PROMISE(st.next == JOB_CRASHING &&
			    !(st.actions & LC_PERSIST) &&
			    (st.actions & LC_BOOTSTRAP));
		else if (settles == JOB_CRASHING)
			PROMISE(st.next == JOB_CRASHING &&
			    st.actions == LC_NOTIFY);
		else
			PROMISE(st.next == s && st.actions == 0);
	}
	/* A program launchd cannot start is given up, never reverted. */
	if (e == LC_EV_SPAWN_FAILED)
		PROMISE(f->failed ? st.next == s && st.actions == 0 :
		    st.next == JOB_FAILED && (st.actions & LC_BOOTOUT));
	if (e == LC_EV_LAUNCHD_OK)
		PROMISE(st.next == settles || (st.next == JOB_REVERTED &&
		    !f->reverted && (st.actions & LC_PERSIST)));
	if (e == LC_EV_LAUNCHD_ERROR || e == LC_EV_REFUSED)
		PROMISE(st.next == JOB_ERROR);
	/* With no GUI session a job moves to user/UID if it may. */
	if (e == LC_EV_LOGOUT)
		PROMISE(f->background_ok ? st.next == s && st.actions == 0 :
		    st.next == JOB_ERROR);
	if ((e == LC_EV_SHIM_STOCK || e == LC_EV_SHIM_ABSENT))
		PROMISE(runs ? st.next == JOB_BLOCKED : st.next == s);
	if (e == LC_EV_RESTART)
		PROMISE(held ? st.actions == 0 : st.actions == LC_KICKSTART);
	/* A hung server is restarted, never reverted nor given up: a
	 * client can keep a server too busy to answer its check. */
	if (e == LC_EV_HEALTH_LAPSED)
		PROMISE(st.next == s && (held ? st.actions == 0 :
		    st.actions == (LC_NOTIFY | LC_KICKSTART)));
#undef PROMISE
}

static void
test_every_state_by_every_event(void **state)
{
	unsigned		bits, s, e;
	struct lifecycle_facts	f;

	(void)state;
	for (s = 0; s < NSTATES; s++)
		for (e = 0; e < LC_EV_COUNT; e++)
			for (bits = 0; bits < 1u << NSTEPFACTS; bits++) {
				step_facts_from_bits(bits, &f);
				check_step(s, e, &f, bits);
				/* Only an exit asks what launchd named. */
				if (!is_exit(e))
					continue;
				f.env_fault = true;
				check_step(s, e, &f, bits | 1u << NSTEPFACTS);
			}
}

/*
 * Three kinds of job, every event in every state, written out: "=" is
 * the state it was in.  Only the shim reporting in from a blocked job
 * depends on the state (check_kind).
 *
 *   running unlocked: set unlocked, its profile passed, its process
 *     carries the shim, and this exit would complete a crash loop;
 *   looping stock: set stock, crash-looping: crashing, kept loaded and
 *     restarted, never given up and never reverted;
 *   awaiting a verdict: set unlocked, its profile not probed yet:
 *     nothing is rendered unproved.
 */
enum { RUNNING_UNLOCKED, LOOPING_STOCK, AWAITING_VERDICT, NKINDS };

struct expect {
	enum lifecycle_event	 event;
	struct {
		const char	*next;
		const char	*actions;
	}			 kind[NKINDS];
};

static const struct expect expected_steps[LC_EV_COUNT] = {
	/* each: running unlocked, looping stock, awaiting a verdict */
	{ LC_EV_FILE_CHANGED, {
	    { "=",		"render bootstrap" },
	    { "=",		"render bootstrap" },
	    { "probing",	"notify probe" } } },
	{ LC_EV_FILE_REMOVED, {
	    { "=",		"bootout" },
	    { "=",		"bootout" },
	    { "=",		"bootout" } } },
	{ LC_EV_ENABLE, {
	    { "=",		"persist render bootstrap" },
	    { "=",		"persist render bootstrap" },
	    { "probing",	"persist notify probe" } } },
	{ LC_EV_DISABLE, {
	    { "=",		"persist render bootstrap" },
	    { "=",		"persist render bootstrap" },
	    { "probing",	"persist notify probe" } } },
	{ LC_EV_PROFILE, {
	    { "=",		"persist render bootstrap" },
	    { "=",		"persist render bootstrap" },
	    { "probing",	"persist notify probe" } } },
	{ LC_EV_START, {
	    { "=",		"persist render bootstrap" },
	    { "=",		"persist render bootstrap" },
	    { "probing",	"persist notify probe" } } },
	{ LC_EV_STOP, {
	    { "=",		"persist render bootstrap" },
	    { "=",		"persist render bootstrap" },
	    { "probing",	"persist notify probe" } } },
	{ LC_EV_RESTART, {
	    { "=",		"kickstart" },
	    { "=",		"kickstart" },
	    { "=",		"kickstart" } } },
	{ LC_EV_PROBE_PASS, {
	    { "=",		"render bootstrap" },
	    { "=",		"render bootstrap" },
	    { "probing",	"notify probe" } } },
	{ LC_EV_PROBE_PARTIAL, {
	    { "=",		"render bootstrap" },
	    { "=",		"render bootstrap" },
	    { "probing",	"notify probe" } } },
	{ LC_EV_PROBE_FAIL, {
	    { "=",		"render bootstrap" },
	    { "=",		"render bootstrap" },
	    { "probing",	"notify probe" } } },
	{ LC_EV_STARTED, {
	    { "=",		"notify" },
	    { "=",		"notify" },
	    { "=",		"notify" } } },
	{ LC_EV_GONE, {
	    { "=",		"bootstrap" },
	    { "=",		"bootstrap" },
	    { "=",		"bootstrap" } } },
	{ LC_EV_EXIT_CODE, {
	    { "reverted",	"persist notify render bootstrap" },
	    { "crashing",	"notify render bootstrap" },
	    { "=",		"" } } },
	{ LC_EV_EXIT_SIGNAL, {
	    { "reverted",	"persist notify render bootstrap" },
	    { "crashing",	"notify render bootstrap" },
	    { "=",		"" } } },
	{ LC_EV_EXIT_JETSAM, {
	    { "reverted",	"persist notify render bootstrap" },
	    { "crashing",	"notify render bootstrap" },
	    { "=",		"" } } },
	{ LC_EV_SPAWN_FAILED, {
	    { "failed",		"persist notify bootout" },
	    { "failed",		"persist notify bootout" },
	    { "failed",		"persist notify bootout" } } },
	{ LC_EV_FAILURE_LINE, {
	    { "reverted",	"persist notify render bootstrap" },
	    { "=",		"" },
	    { "reverted",	"persist notify render bootstrap" } } },
	{ LC_EV_HEALTH_OK, {
	    { "=",		"" },
	    { "=",		"" },
	    { "=",		"" } } },
	{ LC_EV_HEALTH_FAIL, {
	    { "reverted",	"persist notify render bootstrap" },
	    { "=",		"" },
	    { "reverted",	"persist notify render bootstrap" } } },
	{ LC_EV_HEALTH_LAPSED, {
	    { "=",		"notify kickstart" },
	    { "=",		"notify kickstart" },
	    { "=",		"notify kickstart" } } },
	{ LC_EV_SHIM_HOOKED, {
	    { "=",		"notify" },
	    { "=",		"notify" },
	    { "=",		"notify" } } },
	{ LC_EV_SHIM_STOCK, {
	    { "blocked",	"notify" },
	    { "=",		"notify" },
	    { "blocked",	"notify" } } },
	{ LC_EV_SHIM_ABSENT, {
	    { "blocked",	"notify" },
	    { "=",		"notify" },
	    { "blocked",	"notify" } } },
	{ LC_EV_MANAGED, {
	    { "=",		"render bootstrap" },
	    { "=",		"render bootstrap" },
	    { "probing",	"notify probe" } } },
	{ LC_EV_LAUNCHD_OK, {
	    { "unlocked",	"notify" },
	    { "stock",	"notify" },
	    { "probing",	"notify" } } },
	{ LC_EV_LAUNCHD_ERROR, {
	    { "error",	"notify" },
	    { "error",	"notify" },
	    { "error",	"notify" } } },
	{ LC_EV_LAUNCHD_GONE, {
	    { "=",		"notify" },
	    { "=",		"notify" },
	    { "=",		"notify" } } },
	{ LC_EV_REFUSED, {
	    { "error",		"notify" },
	    { "error",		"notify" },
	    { "error",		"notify" } } },
	{ LC_EV_LOGOUT, {
	    { "error",		"notify" },
	    { "error",		"notify" },
	    { "error",		"notify" } } },
	{ LC_EV_LOGIN, {
	    { "=",		"render bootstrap" },
	    { "=",		"render bootstrap" },
	    { "probing",	"notify probe" } } },
	{ LC_EV_STEADY, {
	    { "=",		"render bootstrap" },
	    { "=",		"render bootstrap" },
	    { "probing",	"notify probe" } } },
};

static void
actions_text(unsigned actions, char *buf, size_t len)
{
	unsigned	bit;

	buf[0] = '\0';
	for (bit = 0; bit < LC_ACTION_BITS; bit++)
		if (actions & (1u << bit))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			    buf[0] ? " " : "", lifecycle_action_name(bit));
}

static void
check_kind(const char *name, int kind, const struct lifecycle_facts *f)
{
	const struct expect	*want = expected_steps;
	struct lifecycle_step	st;
	unsigned		s, e;
	char			got[128];
	const char		*next;

	for (s = 0; s < NSTATES; s++)
		for (e = 0; e < LC_EV_COUNT; e++) {
			assert_int_equal(want[e].event, e);
			lifecycle_step(s, e, f, &st);
			actions_text(st.actions, got, sizeof got);
			next = strcmp(want[e].kind[kind].next, "=") == 0 ?
			    job_state_name(s) : want[e].kind[kind].next;
			/* The shim reporting in lifts a block. */
			if (s == JOB_BLOCKED && e == LC_EV_SHIM_HOOKED)
				next = "unlocked";
			if (strcmp(job_state_name(st.next), next) != 0 ||
			    strcmp(got, want[e].kind[kind].actions) != 0)
				fail_msg("%s, %s in %s: got %s [%s], want %s "
				    "[%s]", name, lifecycle_event_name(e),
				    job_state_name(s), job_state_name(st.next),
				    got, next, want[e].kind[kind].actions);
		}
}

static void
test_three_kinds_of_job(void **state)
{
	struct lifecycle_facts	unlocked = { .valid = true,
	    .wants_unlocked = true, .profile_exists = true, .profile_ok = true,
	    .profile_unlocks = true, .verdict_known = true,
	    .carries_shim = true, .crash_loop = true };
	struct lifecycle_facts	stock = { .valid = true,
	    .profile_exists = true, .profile_ok = true,
	    .profile_unlocks = true, .crash_loop = true };
	struct lifecycle_facts	waiting = unlocked;

	(void)state;
	check_kind("running unlocked", RUNNING_UNLOCKED, &unlocked);
	check_kind("looping stock", LOOPING_STOCK, &stock);
	/* Set unlocked, so the driver counts its process at risk. */
	waiting.verdict_known = false;
	waiting.crash_loop = false;
	check_kind("awaiting a verdict", AWAITING_VERDICT, &waiting);
}

/*
 * The question metalcapd(8) answers from the table: an unlocked job's
 * process dies of a signal while a probe of its profile is running.
 */
static void
test_signal_during_probe(void **state)
{
	struct lifecycle_facts	f = { .valid = true, .wants_unlocked = true,
	    .profile_exists = true, .profile_ok = true,
	    .profile_unlocks = true, .carries_shim = true };
	struct lifecycle_step	st;

	(void)state;
	/* The pid watch sees it go: launchd is asked how it ended. */
	lifecycle_step(JOB_UNLOCKED, LC_EV_GONE, &f, &st);
	assert_int_equal(st.next, JOB_UNLOCKED);
	assert_int_equal(st.actions, LC_BOOTSTRAP);
	/* One death is no loop: launchd respawns it, nothing changes. */
	lifecycle_step(JOB_UNLOCKED, LC_EV_EXIT_SIGNAL, &f, &st);
	assert_int_equal(st.next, JOB_UNLOCKED);
	assert_int_equal(st.actions, 0);
	/* The third in the window is: back to stock, saved, at once. */
	f.crash_loop = true;
	lifecycle_step(JOB_UNLOCKED, LC_EV_EXIT_SIGNAL, &f, &st);
	assert_int_equal(st.next, JOB_REVERTED);
	assert_int_equal(st.actions, LC_PERSIST | LC_NOTIFY | LC_RENDER |
	    LC_BOOTSTRAP);
	/* The probe passing later does not unlock it again. */
	f.crash_loop = false;
	f.reverted = true;
	f.wants_unlocked = false;
	f.verdict_known = true;
	lifecycle_step(JOB_REVERTED, LC_EV_PROBE_PASS, &f, &st);
	assert_int_equal(st.next, JOB_REVERTED);
	lifecycle_step(JOB_REVERTED, LC_EV_LAUNCHD_OK, &f, &st);
	assert_int_equal(st.next, JOB_REVERTED);
}

/*
 * Issue 46, finding 3: six requests that crash a server took it down for
 * good (reverted, then "crash loop in stock too", failed and booted out).
 * A crash loop without the shim now leaves the job loaded, crashing, for
 * launchd to restart; more exits keep it so, and a steady run, or any
 * request, lets it settle again.  Only a program launchd cannot start is
 * still given up: no process ran, so no client did it.
 */
static void
test_crash_loop_kept_served(void **state)
{
	struct lifecycle_facts	f = { .valid = true, .wants_unlocked = true,
	    .profile_exists = true, .profile_ok = true,
	    .profile_unlocks = true, .verdict_known = true, .reverted = true,
	    .crash_loop = true };
	struct lifecycle_step	st;
	enum lifecycle_why	why;

	(void)state;
	/* Reverted on a crash loop, its stock run loops too. */
	lifecycle_step(JOB_REVERTED, LC_EV_EXIT_SIGNAL, &f, &st);
	assert_int_equal(st.next, JOB_CRASHING);
	assert_int_equal(st.why, LC_WHY_CRASHING);
	assert_int_equal(st.actions, LC_NOTIFY | LC_RENDER | LC_BOOTSTRAP);
	/* A stock job's loop, and one launchd named the environment of. */
	memset(&f, 0, sizeof f);
	f.valid = true;
	f.crash_loop = true;
	lifecycle_step(JOB_STOCK, LC_EV_EXIT_CODE, &f, &st);
	assert_int_equal(st.next, JOB_CRASHING);
	assert_false(st.actions & LC_BOOTOUT);
	f.env_fault = true;
	f.carries_shim = true;
	lifecycle_step(JOB_UNLOCKED, LC_EV_EXIT_JETSAM, &f, &st);
	assert_int_equal(st.next, JOB_CRASHING);
	assert_false(st.actions & (LC_BOOTOUT | LC_PERSIST));
	/* Crashing: each exit keeps it so, told; launchd keeps it. */
	memset(&f, 0, sizeof f);
	f.valid = true;
	f.crashing = true;
	lifecycle_step(JOB_CRASHING, LC_EV_EXIT_SIGNAL, &f, &st);
	assert_int_equal(st.next, JOB_CRASHING);
	assert_int_equal(st.actions, LC_NOTIFY);
	lifecycle_step(JOB_CRASHING, LC_EV_LAUNCHD_OK, &f, &st);
	assert_int_equal(st.next, JOB_CRASHING);
	assert_int_equal(lifecycle_settle(&f, &why), JOB_CRASHING);
	/* Steady again (the driver clears the fact first): it settles. */
	f.crashing = false;
	lifecycle_step(JOB_CRASHING, LC_EV_STEADY, &f, &st);
	assert_int_equal(st.actions, LC_RENDER | LC_BOOTSTRAP);
	lifecycle_step(JOB_CRASHING, LC_EV_LAUNCHD_OK, &f, &st);
	assert_int_equal(st.next, JOB_STOCK);
	/* launchd cannot start it: given up, as before. */
	lifecycle_step(JOB_STOCK, LC_EV_SPAWN_FAILED, &f, &st);
	assert_int_equal(st.next, JOB_FAILED);
	assert_true(st.actions & LC_BOOTOUT);
}

/* --- metalcapd(8)'s copy -------------------------------------------------- */

#define MAN_BEGIN	".\\\" BEGIN lifecycle table"
#define MAN_END		".\\\" END lifecycle table"

static void
events_text(uint64_t events, char *buf, size_t len)
{
	unsigned	e;

	buf[0] = '\0';
	for (e = 0; e < LC_EV_COUNT; e++)
		if (events & (UINT64_C(1) << e))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			    buf[0] ? " " : "", lifecycle_event_name(e));
}

static void
states_text(unsigned states, char *buf, size_t len)
{
	unsigned	s;

	buf[0] = '\0';
	if ((states & ((1u << NSTATES) - 1)) == (1u << NSTATES) - 1)
		return;
	for (s = 0; s < NSTATES; s++)
		if (states & (1u << s))
			snprintf(buf + strlen(buf), len - strlen(buf), "%sin %s",
			    buf[0] ? ", " : "", job_state_name(s));
}

/* The table as tbl(7) rows for metalcapd(8), between the two markers. */
static char *
man_table(void)
{
	size_t				 n, i, len = 0;
	const struct lifecycle_row	*r = lifecycle_rows(&n);
	char				*out = NULL, ev[512], when[128], acts[128];
	const char			*next;
	FILE				*f = open_memstream(&out, &len);

	fprintf(f, "%s\n.TS\nl l l l.\nEvents\tWhen\tNext\tActions\n_\n",
	    MAN_BEGIN);
	for (i = 0; i < n; i++, r++) {
		events_text(r->events, ev, sizeof ev);
		states_text(r->states, when, sizeof when);
		if (lifecycle_guard_text(r->guard)[0] != '\0')
			snprintf(when + strlen(when), sizeof when -
			    strlen(when), "%s%s", when[0] ? ", " : "",
			    lifecycle_guard_text(r->guard));
		actions_text(r->actions, acts, sizeof acts);
		next = r->next == LC_SAME ? "\\&=" : r->next == LC_SETTLE ?
		    "settle" : job_state_name((enum job_state)r->next);
		fprintf(f, "T{\n%s\nT}\tT{\n%s\nT}\t%s\tT{\n%s\nT}\n", ev,
		    when[0] ? when : "any", next, acts[0] ? acts : "\\(em");
	}
	fprintf(f, ".TE\n%s\n", MAN_END);
	fclose(f);
	return out;
}

static void
test_manual_matches_table(void **state)
{
	char	*want = man_table(), *page = NULL, *begin, *end;
	size_t	 len = 0;
	FILE	*f;
	char	 buf[4096];
	size_t	 n;

	(void)state;
	f = fopen(MC_TEST_SOURCE "/docs/metalcapd.8", "r");
	assert_non_null(f);
	{
		FILE *m = open_memstream(&page, &len);

		while ((n = fread(buf, 1, sizeof buf, f)) > 0)
			fwrite(buf, 1, n, m);
		fclose(m);
	}
	fclose(f);
	begin = strstr(page, MAN_BEGIN);
	end = begin != NULL ? strstr(begin, MAN_END) : NULL;
	if (begin == NULL || end == NULL)
		fail_msg("docs/metalcapd.8 has no lifecycle table: run make "
		    "lifecycle-man");
	end += strlen(MAN_END) + 1;
	if ((size_t)(end - begin) != strlen(want) ||
	    memcmp(begin, want, strlen(want)) != 0)
		fail_msg("docs/metalcapd.8's lifecycle table is not "
		    "daemon/lifecycle.c's: run make lifecycle-man");
	free(want);
	free(page);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_combination),
		cmocka_unit_test(test_every_state_by_every_event),
		cmocka_unit_test(test_three_kinds_of_job),
		cmocka_unit_test(test_signal_during_probe),
		cmocka_unit_test(test_crash_loop_kept_served),
		cmocka_unit_test(test_manual_matches_table),
	};

	if (argc == 2 && strcmp(argv[1], "--man") == 0) {
		char *t = man_table();

		fputs(t, stdout);
		free(t);
		return 0;
	}

	return cmocka_run_group_tests_name("lifecycle", tests, NULL, NULL);
}
