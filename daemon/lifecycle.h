/* SPDX-License-Identifier: MIT */
/*
 * lifecycle.c: a job's states, the events that move it, and the table of
 * transitions the driver (driver.c) reads.  Data only: which row applies
 * is the driver's decision.
 */
#ifndef LIFECYCLE_H
#define LIFECYCLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct job;

enum job_state {
	JOB_PENDING,	/* not reconciled yet since the daemon started */
	JOB_STOCK,
	JOB_PROBING,
	JOB_UNLOCKED,
	JOB_REVERTED,
	JOB_BLOCKED,
	JOB_FAILED,
	JOB_INVALID,
	JOB_ERROR,
	JOB_STOPPED,
	JOB_CRASHING,	/* crash-looping without the shim: kept served */
};

/*
 * What can happen to a job.  The evidence sources (dirwatch.c, watch.c,
 * gate.c, reconcile.c's launchctl results) and the requests (rpc.c) hand
 * these to the driver (driver.c) through struct mcd's emit pointer.
 */
enum lifecycle_event {
	LC_EV_FILE_CHANGED,	/* its file is new or its bytes changed */
	LC_EV_FILE_REMOVED,
	LC_EV_ENABLE,		/* the requests */
	LC_EV_DISABLE,
	LC_EV_PROFILE,
	LC_EV_START,
	LC_EV_STOP,
	LC_EV_RESTART,
	LC_EV_PROBE_PASS,	/* the verdict on its profile */
	LC_EV_PROBE_PARTIAL,
	LC_EV_PROBE_FAIL,
	LC_EV_STARTED,		/* launchd gave a new pid */
	LC_EV_GONE,		/* that pid exited: how, launchd will say */
	LC_EV_EXIT_CODE,	/* launchd: exited with a non-zero status */
	LC_EV_EXIT_SIGNAL,	/* ... killed by a signal */
	LC_EV_EXIT_JETSAM,	/* ... killed by the kernel for memory */
	LC_EV_SPAWN_FAILED,	/* ... never started: 78: EX_CONFIG */
	LC_EV_FAILURE_LINE,	/* its stderr matched a failure signature */
	LC_EV_HEALTH_OK,
	LC_EV_HEALTH_FAIL,
	LC_EV_HEALTH_LAPSED,	/* passed, then failed: hung or held busy */
	LC_EV_SHIM_HOOKED,	/* the shim's report: overrides in place */
	LC_EV_SHIM_STOCK,	/* ... loaded but stayed stock */
	LC_EV_SHIM_ABSENT,	/* no report in time: injection dropped */
	LC_EV_MANAGED,		/* managed settings or profiles were reread */
	LC_EV_LAUNCHD_OK,	/* launchd has the job as rendered */
	LC_EV_LAUNCHD_ERROR,	/* launchctl failed; it is retried */
	LC_EV_LAUNCHD_GONE,	/* booted out for good: its file is gone */
	LC_EV_REFUSED,		/* launchd refused its agent file (mode, owner) */
	LC_EV_LOGOUT,		/* its GUI domain is gone: no GUI session */
	LC_EV_LOGIN,		/* metalcapd starts: launchd loads only its
				   own agent at login, and it brings each job
				   to its kept state */
	LC_EV_STEADY,		/* a crashing job ran a window steadily */
	LC_EV_COUNT,
	/* Not a job's: the driver turns them into the events above. */
	LC_EV_RESCAN = LC_EV_COUNT,	/* a watched folder changed */
	LC_EV_REPORTS,		/* the shim's report folder changed */
	LC_EV_HELD,		/* launchd has it and does not run it, or
				   runs it again: for the observers */
	LC_EV_VERIFIED,		/* state/verified.json changed (verify) */
};

/* What the driver does for a step, in this order. */
enum lifecycle_action {
	LC_PERSIST	= 1 << 0,	/* save the overrides (and an incident) */
	LC_NOTIFY	= 1 << 1,	/* tell the observers the job changed */
	LC_PROBE	= 1 << 2,	/* get the gate's verdict on its profile */
	LC_KICKSTART	= 1 << 3,	/* launchctl kickstart -k */
	LC_RENDER	= 1 << 4,	/* write its agent as things now stand */
	LC_BOOTSTRAP	= 1 << 5,	/* launchd runs that agent (replacing
					   a changed one) and gives its pid */
	LC_BOOTOUT	= 1 << 6,	/* launchd lets go of it */
	LC_ACTION_BITS	= 7,
};

/* What is known of a job, for where it goes. */
struct lifecycle_facts {
	bool	valid;			/* its file parsed */
	bool	stopped;		/* by request, or the console held */
	bool	failed;			/* given up: an incident */
	bool	reverted;		/* back to stock: an incident */
	bool	wants_unlocked;		/* after overrides and managed */
	bool	managed;		/* managed settings made it stock */
	bool	profile_exists;
	bool	profile_ok;		/* its file is valid */
	bool	profile_unlocks;	/* a family above stock */
	bool	verdict_known;		/* the probe's verdict is in */
	bool	verdict_fails;
	bool	blocked;		/* its process dropped the shim */
	bool	carries_shim;		/* its process may have the shim */
	bool	crash_loop;		/* this exit completes a crash loop */
	bool	crashing;		/* crash-looping stock: supervised */
	bool	env_fault;		/* launchd, the kernel: its environment */
	bool	background_ok;		/* the template allows user/UID */
};

/* Which words the reason takes. */
enum lifecycle_why {
	LC_WHY_NONE,
	LC_WHY_STOPPED,
	LC_WHY_INCIDENT,	/* the revert's or failure's evidence */
	LC_WHY_NO_PROFILE,
	LC_WHY_BAD_PROFILE,
	LC_WHY_MANAGED,
	LC_WHY_PROBING,
	LC_WHY_BLOCKED,
	LC_WHY_PARTIAL,		/* unlocked: a partial verdict's note, if any */
	LC_WHY_INVALID,		/* the file's first error */
	LC_WHY_EVENT,		/* the event's own words (launchctl, shim) */
	LC_WHY_CRASHING,	/* its crashes: count, last exit, cause */
};

#define LC_SAME		(-1)	/* a row's next: the state it is in */
#define LC_SETTLE	(-2)	/* ... where lifecycle_settle says */

/* One transition: first row that matches wins. */
struct lifecycle_row {
	uint64_t	 events;	/* 1 << event, or'd */
	unsigned	 states;	/* 1 << state, or'd */
	int		 guard;		/* enum in lifecycle.c */
	int		 next;		/* a job_state, LC_SAME or LC_SETTLE */
	unsigned	 actions;
	enum lifecycle_why why;
};

struct lifecycle_step {
	enum job_state		next;
	unsigned		actions;
	enum lifecycle_why	why;
	const struct lifecycle_row *row;
};

enum job_state lifecycle_settle(const struct lifecycle_facts *,
	    enum lifecycle_why *);
void	lifecycle_step(enum job_state, enum lifecycle_event,
	    const struct lifecycle_facts *, struct lifecycle_step *);
const struct lifecycle_row *lifecycle_rows(size_t *count);
const char *lifecycle_event_name(enum lifecycle_event);
const char *lifecycle_action_name(unsigned bit);
const char *lifecycle_guard_text(int guard);

/* An event as a source hands it over; only the fields it needs are set. */
struct mcd_event {
	enum lifecycle_event	 type;
	struct job		*job;		/* NULL: PROBE_*, RESCAN, REPORTS */
	const char		*profile;	/* PROBE_*: the profile judged */
	const char		*trigger;	/* an incident's first words */
	const char *const	*evidence;
	int			 nevidence;
	const char		*reason;	/* LAUNCHD_ERROR, SHIM_* */
	const char		*last_exit;	/* EXIT_*: launchd's words */
	int			 signal;
	long			 count;		/* EXIT_*: exits since last seen */
	long			 since;		/* EXIT_*: they came after this
						   look at launchd (time()) */
};

#endif
