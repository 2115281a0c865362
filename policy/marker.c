/* SPDX-License-Identifier: MIT */
/*
 * The shim's report line (libmetalcap(7), REPORT FORMAT): what proves or
 * disproves that the shim took effect in one process.  metalcapd reads it
 * for a job's pid, metalcapctl exec and bench for the program they ran.
 */
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
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
 * A witness line of the shim's ("metalcap witness pid=N failed=KIND
 * call=SELECTOR"): the first is kept (the first of another kind than
 * library, when one came), all are counted.  One of another pid proves
 * nothing about this one.
 */
static void
marker_witness(struct shim_seen *s, const char *line, long pid)
{
	char	raw[sizeof s->failed_call];

	if (marker_number(line, "pid") != pid)
		return;
	/* A library that would not load (ggml may do without it) gives way
	 * to a later failure of another kind. */
	if (s->witnessed++ > 0 && strcmp(s->failed, "library") != 0)
		return;
	if (!marker_field(line, "failed", raw, sizeof s->failed) ||
	    (s->witnessed > 1 && strcmp(raw, "library") == 0))
		return;
	mc_text(s->failed, sizeof s->failed, raw);
	if (marker_field(line, "call", raw, sizeof s->failed_call))
		mc_text(s->failed_call, sizeof s->failed_call, raw);
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
	    dir, pid) == -1 || (f = fopen(path, "r")) == NULL)
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
	if (n == 0)
		return false;
	s->witnessed = witness.witnessed;
	memcpy(s->failed, witness.failed, sizeof s->failed);
	memcpy(s->failed_call, witness.failed_call, sizeof s->failed_call);
	return true;
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

/* At start: the reports of pids no longer running (the daemon was down). */
void
marker_sweep(const char *dir)
{
	struct dirent	*de;
	DIR		*dp;
	long		 pid;
	char		 tail[16];

	if ((dp = opendir(dir)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL)
		if (sscanf(de->d_name, "metalcap.%ld%15s", &pid, tail) == 2 &&
		    strcmp(tail, ".report") == 0 && pid > 0 &&
		    kill((pid_t)pid, 0) == -1 && errno == ESRCH)
			marker_forget(dir, pid);
	closedir(dp);
}
