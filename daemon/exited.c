/* SPDX-License-Identifier: MIT */
/*
 * What launchd's print says of a job's runs since we last looked: how
 * many ended, and what the last end was (a crash, a kill, an exit code,
 * a spawn that failed), handed to the driver as one event.  What to do
 * about it is the driver's (lifecycle.c); this file only reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcd.h"

/* How the run ended, in launchd's words. */
static const char *
exited_how(const struct launchd_seen *seen, char *buf, size_t len)
{
	if (seen->signal != 0)
		snprintf(buf, len, "killed by signal %d", seen->signal);
	else if (seen->exit_reason[0] != '\0')
		snprintf(buf, len, "%s", seen->exit_reason);
	else
		snprintf(buf, len, "exit status %s", seen->last_exit);
	return buf;
}

/*
 * Jetsam's reasons for a kill that is no fault of the process's own: ""
 * for an idle reclaim (an ordinary end), or what the whole Mac ran short
 * of; NULL for the rest, such as its own memory limit
 * (..._PERPROCESSLIMIT, ..._HIGHWATER).  The names are xnu's
 * (bsd/sys/kern_memorystatus.h), as launchctl print shows them in "last
 * exit reason".
 */
static const char *
exited_reclaim(const char *reason)
{
	static const struct {
		const char	*reason;
		const char	*why;
	} reclaims[] = {
		{ "MEMORY_IDLE_EXIT", "" },
		{ "MEMORY_LONGIDLE_EXIT", "" },
		{ "MEMORY_DISK_SPACE_SHORTAGE", "a full disk" },
		{ "VNODE", "the Mac ran out of vnodes" },
		{ "ZONE_MAP_EXHAUSTION", "the kernel ran out of memory" },
		{ "LOWSWAP", "memory pressure on the Mac" },
		{ "MEMORY_VMPAGESHORTAGE", "memory pressure on the Mac" },
		{ "MEMORY_PROCTHRASHING", "memory pressure on the Mac" },
		{ "MEMORY_FCTHRASHING", "memory pressure on the Mac" },
		{ "MEMORY_VMCOMPRESSOR_THRASHING", "memory pressure on the Mac" },
		{ "MEMORY_VMCOMPRESSOR_SPACE_SHORTAGE",
		    "memory pressure on the Mac" },
		{ "MEMORY_SUSTAINED_PRESSURE", "memory pressure on the Mac" },
		{ "MEMORY_VMPAGEOUT_STARVATION", "memory pressure on the Mac" },
	};
	size_t	i;

	if (strncmp(reason, "JETSAM_REASON_", 14) != 0)
		return NULL;
	for (i = 0; i < sizeof reclaims / sizeof reclaims[0]; i++)
		if (strcmp(reason + 14, reclaims[i].reason) == 0)
			return reclaims[i].why;
	return NULL;
}

/* The exit is the environment's, what: launchd's reason is the line. */
static void
exited_note_reason(struct job *j, const char *what,
    const struct launchd_seen *seen)
{
	char	line[sizeof seen->exit_reason + 32];

	snprintf(line, sizeof line, "last exit reason = %s",
	    seen->exit_reason);
	crashing_note_env(j, what, line);
}

/*
 * A registration metalcapd found loaded and whose runs it has no count
 * of (a record from before counts were kept): the exits launchd counted
 * so far are taken as judged, since when they came is not known.
 */
void
exited_baseline(struct mcd *d, struct job *j, long finished)
{
	if (j->runs_counted >= 0)
		return;
	log_info("job %s: %ld earlier runs of its registration ended before "
	    "metalcapd counted them; not judged", j->name, finished);
	j->runs_counted = finished;
	agent_save_counts(d, j);
}

/*
 * Exits launchd counted since we last looked, told by how the last one
 * ended: a signal ("last terminating signal"), a kill with a reason and
 * no exit code ("last exit reason = JETSAM_REASON_...", or OS_REASON_...
 * for dyld and code signing), or an exit code (78: EX_CONFIG, it never
 * started, unless its one run was seen running the program, which may
 * exit 78 itself).
 */
void
exited_report(struct mcd *d, struct job *j, const struct launchd_seen *seen,
    long count, long since)
{
	char			how[128], full[PATH_MAX + 64];
	const char		*why;
	struct mcd_event	ev = { .job = j, .last_exit = seen->last_exit,
	    .signal = seen->signal, .count = count, .since = since };
	long			ours = j->own_stops < count ? j->own_stops : count;
	/* The one run that ended was seen running the program itself. */
	bool			ran = count == 1 && j->ran_pid > 0 &&
	    j->ran_pid != seen->pid;

	j->ran_pid = 0;
	/* Exits our restarts caused are no one's fault (the last is ours). */
	j->own_stops -= ours;
	/*
	 * Kept before they are judged: a metalcapd killed now judges them
	 * never rather than twice (a crash loop of exits counted twice).
	 */
	agent_save_counts(d, j);
	if ((ev.count -= ours) == 0) {
		if (count > 0)
			watch_exited(j, false, 0, NULL);
		return;
	}
	/*
	 * macOS reclaims an idle process (one that said it may be, through
	 * vproc or xpc transactions) as "JETSAM_REASON_MEMORY_IDLE_EXIT", or
	 * after a long idle as "..._LONGIDLE_EXIT": an ordinary end.
	 */
	why = exited_reclaim(seen->exit_reason);
	if (why != NULL && *why == '\0') {
		watch_exited(j, false, 0, NULL);
		return;
	}
	/*
	 * One killed because the whole Mac ran short (of memory, compressor
	 * space, swap, vnodes or disk) still counts, or launchd would start
	 * it for ever; a crash loop of them is its environment's, not its
	 * profile's, unless the process ran with a profile that asked for
	 * more GPU memory (RecommendedWorkingSetSize), which may be why.  A
	 * reverted job's process ran stock, whatever it wishes.
	 */
	if (why != NULL && !(j->state == JOB_UNLOCKED && j->profile != NULL &&
	    j->profile->working_set != 0)) {
		log_info("job %s: its process was killed by macOS: %s (%s)",
		    j->name, why, seen->exit_reason);
		exited_note_reason(j, why, seen);
	}
	/*
	 * Killed for its code signature (a binary changed in place, an
	 * ad-hoc signature gone stale): the program's own state, never a
	 * profile's doing, whatever the shim.  Named as its environment.
	 */
	if (strstr(seen->exit_reason, "CODESIGNING") != NULL)
		exited_note_reason(j, "macOS killed it for its code signature",
		    seen);
	if (seen->signal != 0)
		ev.type = LC_EV_EXIT_SIGNAL;
	else if (seen->exit_reason[0] != '\0') {
		ev.type = strncmp(seen->exit_reason, "JETSAM", 6) == 0 ?
		    LC_EV_EXIT_JETSAM : LC_EV_EXIT_CODE;
		ev.last_exit = seen->exit_reason;
	} else if (strtol(seen->last_exit, NULL, 10) == 78 && !ran)
		ev.type = LC_EV_SPAWN_FAILED;	/* "78: EX_CONFIG" */
	else if (seen->last_exit[0] != '\0' &&
	    strcmp(seen->last_exit, "0") != 0 &&
	    strcmp(seen->last_exit, "(never exited)") != 0)
		ev.type = LC_EV_EXIT_CODE;
	else {
		watch_exited(j, false, 0, NULL);
		return;
	}
	/* Its log had nowhere to go: the exit is likely the disk's doing. */
	if (watch_disk_full(d, j, false, full, sizeof full))
		crashing_note_env(j, "a full disk", full);
	/* A failure line it died of counts before the exit does. */
	watch_exited(j, ev.type == LC_EV_EXIT_SIGNAL ||
	    ev.type == LC_EV_EXIT_CODE, seen->signal,
	    exited_how(seen, how, sizeof how));
	d->emit(d, &ev);
}
