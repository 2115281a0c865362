/* SPDX-License-Identifier: MIT */
/*
 * The shim's report line (libmetalcap(7), REPORT FORMAT): what proves or
 * disproves that the shim took effect in one process.  metalcapd reads it
 * for a job's pid, metalcapctl exec and bench for the program they ran.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_util.h"
#include "policy.h"

/*
 * The value of " key=" in the fields before reason (which is last and
 * free text, so it cannot forge a field), up to the next blank.
 */
static bool
marker_field(const char *line, const char *key, char *buf, size_t len)
{
	char		 pattern[32];
	const char	*p, *reason = strstr(line, " reason=");
	size_t		 n;

	snprintf(pattern, sizeof pattern, " %s=", key);
	if ((p = strstr(line, pattern)) == NULL ||
	    (reason != NULL && p > reason))
		return false;
	p += strlen(pattern);
	n = strcspn(p, " \t\r\n");
	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
	return true;
}

static long
marker_number(const char *line, const char *key)
{
	char	 buf[32], *end;
	long	 v;

	if (!marker_field(line, key, buf, sizeof buf))
		return 0;
	errno = 0;
	v = strtol(buf, &end, 10);
	return errno != 0 || end == buf ? 0 : v;
}

/* What the shim's report line says (the fuzzers call it). */
void
marker_parse(struct shim_seen *s, const char *line)
{
	const char	*p;

	char		 raw[sizeof s->hooked];

	memset(s, 0, sizeof *s);
	s->present = true;
	/* Whatever wrote the file, what is read is printable UTF-8. */
	if (marker_field(line, "state", raw, sizeof s->state))
		mc_text(s->state, sizeof s->state, raw);
	if (marker_field(line, "class", raw, sizeof s->klass))
		mc_text(s->klass, sizeof s->klass, raw);
	if (marker_field(line, "hooked", raw, sizeof s->hooked))
		mc_text(s->hooked, sizeof s->hooked, raw);
	s->pid = marker_number(line, "pid");
	s->pgid = marker_number(line, "pgid");
	s->failed_code = -1;
	s->family_max = marker_number(line, "family_max");
	s->threadgroup_memory = marker_number(line, "threadgroup_memory");
	if ((p = strstr(line, " reason=")) != NULL) {
		char	text[sizeof s->reason];

		snprintf(text, sizeof text, "%.*s", (int)strcspn(p + 8, "\n"),
		    p + 8);
		mc_text(s->reason, sizeof s->reason, text);
	}
}

#define MARKER_WITNESS	"metalcap witness "

/*
 * MTLCommandBufferError (Metal's MTLCommandBuffer.h).  Out of memory, a
 * timeout, access revoked after earlier faults (each told by its own
 * line first), no permission, a device removed: the machine's state,
 * not what a kernel does, so no profile is judged on one (the issue 46
 * red team: one out-of-memory became a verdict that outlived it).  A
 * page fault, an invalid resource, an internal error may be a kernel's.
 */
static const struct marker_code marker_codes[] = {
	{ 1, "MTLCommandBufferErrorInternal", false },
	{ 2, "MTLCommandBufferErrorTimeout", true },
	{ 3, "MTLCommandBufferErrorPageFault", false },
	{ 4, "MTLCommandBufferErrorAccessRevoked", true },
	{ 7, "MTLCommandBufferErrorNotPermitted", true },
	{ 8, "MTLCommandBufferErrorOutOfMemory", true },
	{ 9, "MTLCommandBufferErrorInvalidResource", false },
	{ 10, "MTLCommandBufferErrorMemoryless", false },
	{ 11, "MTLCommandBufferErrorDeviceRemoved", true },
	{ 12, "MTLCommandBufferErrorStackOverflow", false },
};

/* The code's row, or NULL for a code Metal does not name. */
const struct marker_code *
marker_code(long code)
{
	size_t	i;

	for (i = 0; i < sizeof marker_codes / sizeof marker_codes[0]; i++)
		if (marker_codes[i].code == code)
			return &marker_codes[i];
	return NULL;
}

/*
 * A witness line of the shim's ("metalcap witness pid=N failed=KIND
 * [code=C] call=SELECTOR"): the first of the greatest weight is kept
 * (marker_weight), all are counted.  A command buffer the
 * machine failed is counted apart: it judges no kernel.  One of another
 * pid proves nothing about this one.
 */
static void
marker_witness(struct shim_seen *s, const char *line, long pid)
{
	char				 raw[sizeof s->failed_call];
	const struct marker_code	*c;
	long				 code = -1;

	if (marker_number(line, "pid") != pid)
		return;
	if (marker_field(line, "code", raw, sizeof raw))
		code = marker_number(line, "code");
	if ((c = marker_code(code)) != NULL && c->machine) {
		if (s->machine_faults++ == 0)
			s->machine_code = code;
		return;
	}
	/* One ggml may do without gives way to a later one it may not. */
	if (!marker_field(line, "failed", raw, sizeof s->failed) ||
	    (s->witnessed++ > 0 && marker_weight(raw) <=
	    marker_weight(s->failed)))
		return;
	mc_text(s->failed, sizeof s->failed, raw);
	s->failed_code = code;
	if (marker_field(line, "call", raw, sizeof s->failed_call))
		mc_text(s->failed_call, sizeof s->failed_call, raw);
}

/*
 * What a kind of witness says of the process: 0, a library ggml may do
 * without (its tensor API's: ggml-metal-device.m:515-529, 1181-1184);
 * 1, a function or pipeline, which ggml aborts on wherever it needs one
 * (ggml_metal_encoder_set_pipeline, L851-852) and does without in its
 * tensor API check alone (dummy_kernel, L1186-1190); 2, a call ggml
 * cannot go on without (a command buffer, a queue, a residency set).
 */
int
marker_weight(const char *failed)
{
	if (strcmp(failed, "library") == 0)
		return 0;
	if (strcmp(failed, "function") == 0 || strcmp(failed, "pipeline") == 0)
		return 1;
	return 2;
}

/*
 * Is this report, written by a process of group pgid, the one of the
 * process running as pid now?  A pid comes again: a report left by an
 * earlier process of that number (a child of another job, swept at its
 * end or not yet) names the earlier one's group.  Launchd makes each job
 * its own process group, so a job's process and its group never differ
 * while it runs.  A process gone, or a report that says no group (an
 * older shim), cannot be told apart: taken as its.
 */
static bool
marker_owned(long pid, long pgid)
{
	pid_t	now;

	if (pgid <= 0 || (now = getpgid((pid_t)pid)) == -1)
		return true;
	return (long)now == pgid;
}

/*
 * The report file, opened for reading only when it is a regular file: a
 * FIFO someone put there would block the daemon's one thread in open(2),
 * a device or a link would read another thing.
 */
static FILE *
marker_open(const char *path)
{
	struct stat	 st;
	FILE		*f;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return NULL;
	}
	return f;
}

/*
 * The report of process pid in dir (METALCAP_REPORT was dir); false when
 * there is none, which means the shim never ran in that process.  The
 * shim writes one activation line, then a witness line for each kind of
 * Metal call it saw fail; more activation lines (the program wrote there
 * too, or a pid was reused) prove nothing unless every one agrees.
 */
bool
marker_read(const char *dir, long pid, struct shim_seen *s)
{
	struct shim_seen	 next, witness;
	char			 path[PATH_MAX], line[1024];
	FILE			*f;
	int			 n = 0;

	if (pid <= 0 || mc_fmt(path, sizeof path, "%s/metalcap.%ld.report",
	    dir, pid) == -1 || (f = marker_open(path)) == NULL)
		return false;
	memset(&witness, 0, sizeof witness);
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, MARKER_WITNESS, strlen(MARKER_WITNESS)) == 0) {
			marker_witness(&witness, line, pid);
			continue;
		}
		marker_parse(n++ == 0 ? s : &next, line);
		if (n > 1 && (strcmp(next.state, s->state) != 0 ||
		    next.family_max != s->family_max ||
		    next.threadgroup_memory != s->threadgroup_memory)) {
			snprintf(s->state, sizeof s->state, "conflicting");
			snprintf(s->reason, sizeof s->reason, "the report of "
			    "pid %ld has lines that disagree: written by "
			    "something besides the shim", pid);
		}
	}
	fclose(f);
	if (n == 0 || !marker_owned(pid, s->pgid))
		return false;
	s->pid = pid;
	s->witnessed = witness.witnessed;
	memcpy(s->failed, witness.failed, sizeof s->failed);
	memcpy(s->failed_call, witness.failed_call, sizeof s->failed_call);
	s->failed_code = witness.witnessed > 0 ? witness.failed_code : -1;
	s->machine_faults = witness.machine_faults;
	s->machine_code = witness.machine_code;
	return true;
}

/*
 * Did the shim in pid make its report and fail to write the line: the
 * file is there and holds no whole line?  It opens the file first and
 * writes once (shim_report_write), so a full disk or a failing one
 * leaves it empty: the shim loaded, its injection was not dropped.
 */
bool
marker_unwritten(const char *dir, long pid)
{
	char	 path[PATH_MAX], buf[256];
	FILE	*f;
	bool	 line = false;

	if (pid <= 0 || mc_fmt(path, sizeof path, "%s/metalcap.%ld.report",
	    dir, pid) == -1 || (f = marker_open(path)) == NULL)
		return false;
	while (!line && fgets(buf, sizeof buf, f) != NULL)
		line = strchr(buf, '\n') != NULL;
	fclose(f);
	return !line;
}

/*
 * The report of a pid that has exited goes with it: a later process given
 * the same pid must prove its own injection, not pass on an old "hooked".
 */
void
marker_forget(const char *dir, long pid)
{
	char	path[PATH_MAX];

	if (pid > 0 && mc_fmt(path, sizeof path, "%s/metalcap.%ld.report", dir,
	    pid) == 0)
		unlink(path);
}

/* The pid a report file's name gives, or -1 when it is no report. */
static long
marker_name_pid(const char *name)
{
	long	pid;
	char	tail[16];

	if (sscanf(name, "metalcap.%ld%15s", &pid, tail) == 2 &&
	    strcmp(tail, ".report") == 0 && pid > 0)
		return pid;
	return -1;
}

/* The group a report says its process was in; 0 when it says none. */
static long
marker_pgid(const char *dir, long pid)
{
	char	 path[PATH_MAX], line[1024];
	FILE	*f;
	long	 pgid = 0;

	if (mc_fmt(path, sizeof path, "%s/metalcap.%ld.report", dir, pid) ==
	    -1 || (f = marker_open(path)) == NULL)
		return 0;
	if (fgets(line, sizeof line, f) != NULL)
		pgid = marker_number(line, "pgid");
	fclose(f);
	return pgid;
}

/*
 * The reports no process owns: of pids no longer running, and of pids
 * running now as another process than the one that wrote them (a child
 * of a job leaves one behind, and the next process given its pid must
 * not read it as its own).  keep spares the ended ones still to be
 * judged (a job's process whose end is not heard yet).
 */
void
marker_sweep(const char *dir, bool (*keep)(long, void *), void *arg)
{
	struct dirent	*de;
	DIR		*dp;
	long		 pid;

	if ((dp = opendir(dir)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		if ((pid = marker_name_pid(de->d_name)) == -1)
			continue;
		if (!marker_owned(pid, marker_pgid(dir, pid)) ||
		    (kill((pid_t)pid, 0) == -1 && errno == ESRCH &&
		    (keep == NULL || !keep(pid, arg))))
			marker_forget(dir, pid);
	}
	closedir(dp);
}

/*
 * The reports of group pgid's processes but its leader's: the group's
 * leader, a job's process, is no longer the job's, and no later process
 * of the job is of its group.
 */
void
marker_forget_group(const char *dir, long pgid)
{
	struct dirent	*de;
	DIR		*dp;
	long		 pid;

	if (pgid <= 0 || (dp = opendir(dir)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL)
		if ((pid = marker_name_pid(de->d_name)) != -1 && pid != pgid &&
		    marker_pgid(dir, pid) == pgid)
			marker_forget(dir, pid);
	closedir(dp);
}

/*
 * Each report of a process in group pgid but its leader's (a job's
 * children, where the shim is inherited): how many.
 */
int
marker_group(const char *dir, long pgid, void (*fn)(long,
    const struct shim_seen *, void *), void *arg)
{
	struct shim_seen	 seen;
	struct dirent		*de;
	DIR			*dp;
	long			 pid;
	int			 n = 0;

	if (pgid <= 0 || (dp = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL)
		if ((pid = marker_name_pid(de->d_name)) != -1 && pid != pgid &&
		    marker_read(dir, pid, &seen) && seen.pgid == pgid) {
			fn(pid, &seen, arg);
			n++;
		}
	closedir(dp);
	return n;
}
