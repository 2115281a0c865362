/* SPDX-License-Identifier: MIT */
/*
 * The invariant checker: seeded random interleavings of what users, files,
 * launchd and the device do to metalcapd (job files written, edited, made
 * invalid and removed; requests; failure lines; a failing device; crashes
 * of jobs; the daemon killed with SIGKILL and started again), and after
 * each step, once the daemon has settled, its promises checked against
 * what the launchctl SIMULATOR really runs:
 *
 *   1. a process runs with the shim only if its job's state is unlocked
 *      (or invalid: the last good agent keeps running, metalcapd(8));
 *   2. a label launchd runs belongs to a job with a file: a removed job
 *      runs nowhere;
 *   3. every label recorded in state/loaded has a job, or is gone;
 *   4. no job waits in a transitional state (pending, probing) once the
 *      actions that end it had their time.
 *
 * MC_INVARIANT_SEEDS (a comma list; default 1,2,3) and MC_INVARIANT_STEPS
 * (default 24) bound the run; make stress runs more.  A failure names the
 * seed, the step and every action so far, so that it can be replayed.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "child.h"
#include "harness.h"

#define NJOBS		3
#define LABEL_PREFIX	"org.metalcap.job."
#define SETTLE_S	20.0
#define FAILURE_LINE	"ggml_metal_library_compile_pipeline: failed to " \
			"compile pipeline: base = 'kernel_mul_mm_f16_f32', " \
			"name = 'kernel_mul_mm_f16_f32'\n"

static uint64_t	rng;
static char	history[16384];

static unsigned
pick(unsigned n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rng >> 33) % n);
}

static void
did(const char *fmt, ...)
{
	size_t	n = strlen(history);
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(history + n, sizeof history - n, fmt, ap);
	va_end(ap);
	n = strlen(history);
	snprintf(history + n, sizeof history - n, "; ");
}

static bool
has_file(int k)
{
	char	path[256];

	snprintf(path, sizeof path, "%s/jobs.d/j%d.plist", home, k);
	return access(path, F_OK) == 0;
}

/* One random thing done to the daemon's world. */
static void
step(void)
{
	static const char *const requests[] = { "enable", "disable", "stop",
	    "start", "restart" };
	char		 name[16], path[256], extra[256];
	json_t		*j;
	long		 pid;
	int		 k = (int)pick(NJOBS), code;
	unsigned	 what = pick(12);

	snprintf(name, sizeof name, "j%d", k);
	switch (what) {
	case 0: case 1:
		snprintf(extra, sizeof extra, "<key>Unlocked</key><%s/><key>"
		    "Profile</key><string>%s</string>", pick(3) ? "true" :
		    "false", pick(2) ? "apple9" : "apple7");
		put_job(name, extra);
		did("write %s (%s)", name, extra);
		break;
	case 2:
		snprintf(path, sizeof path, "%s/jobs.d/%s.plist", home, name);
		unlink(path);
		did("remove %s", name);
		break;
	case 3: case 4: case 5:
		ctl(&code, requests[pick(5)], name, NULL, NULL);
		did("request %s", name);
		break;
	case 6:
		ctl(&code, "profile", name, pick(2) ? "apple9" : "apple7",
		    NULL);
		did("profile %s", name);
		break;
	case 7:
		kill_daemon(SIGKILL);
		/* What happens while it is down happens to it too. */
		if (pick(2)) {
			snprintf(path, sizeof path, "%s/jobs.d/%s.plist", home,
			    name);
			unlink(path);
			did("kill -9 metalcapd, remove %s, start it", name);
		} else
			did("kill -9 metalcapd, start it");
		start_daemon();
		break;
	case 8:
		append_job_log(name, FAILURE_LINE);
		did("failure line in %s", name);
		break;
	case 9:
		set_device(pick(2) ? "MTLSIM_FAIL=simdgroup_matrix:wrong" :
		    NULL);
		did("device switched");
		break;
	case 10:
		if ((j = job_status(name)) != NULL && (pid = pid_of(j)) > 0)
			kill((pid_t)pid, SIGSEGV);
		json_decref(j);
		did("SIGSEGV %s", name);
		break;
	default:
		if (has_file(k)) {
			snprintf(path, sizeof path, "%s.plist", name);
			write_raw(path, "<plist version=\"1.0\"><dict><key>"
			    "Profile</key><string>apple9</string></dict>"
			    "</plist>");
			did("make %s invalid", name);
		}
		break;
	}
}

/* The labels the simulated launchd holds in the GUI domain, space-ended. */
static void
launchd_labels(char *out, size_t len)
{
	char		 dir[256];
	DIR		*dp;
	struct dirent	*de;
	size_t		 n;

	out[0] = '\0';
	snprintf(dir, sizeof dir, "%s/services/gui", simdir);
	if ((dp = opendir(dir)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		n = strlen(de->d_name);
		if (n > 6 && strcmp(de->d_name + n - 6, ".plist") == 0 &&
		    strncmp(de->d_name, LABEL_PREFIX, strlen(LABEL_PREFIX)) ==
		    0)
			snprintf(out + strlen(out), len - strlen(out), "%.*s ",
			    (int)(n - 6 - strlen(LABEL_PREFIX)), de->d_name +
			    strlen(LABEL_PREFIX));
	}
	closedir(dp);
}

/* Every job's state, as one string: the daemon has settled when it stays. */
static json_t *
all_status(void)
{
	struct child_result	*r;
	int			 code;

	r = ctl(&code, "--json", "status", NULL, NULL);
	return code == 0 || code == 4 ? json_loads(r->out, 0, NULL) : NULL;
}

/*
 * Does pid carry the shim?  A process that ended between launchd's answer
 * and this look carries nothing (the settle loop looks again).
 */
static bool
carries_shim(long pid)
{
	return pid > 0 && environ_lookup(pid, INJECTED) == 1;
}

static bool
transitional(const char *state)
{
	return strcmp(state, "pending") == 0 || strcmp(state, "probing") == 0;
}

/*
 * What is wrong now, or NULL.  Settled means: no job in a transitional
 * state, and every invariant holding twice in a row, 200 ms apart.
 */
static const char *
violation(char *why, size_t len)
{
	char		 labels[2048], *l, *save = NULL;
	json_t		*doc = all_status(), *j;
	size_t		 i;
	long		 pid;
	const char	*state, *name;
	bool		 found;

	if (doc == NULL)
		return snprintf(why, len, "status did not answer"), why;
	json_array_foreach(doc, i, j) {
		name = json_string_value(json_object_get(j, "name"));
		state = str_of(j, "state");
		pid = launchd_pid(name);
		if (transitional(state))
			snprintf(why, len, "job %s is still %s", name, state);
		else if (carries_shim(pid) &&
		    strcmp(state, "unlocked") != 0 &&
		    strcmp(state, "invalid") != 0)
			snprintf(why, len, "job %s is %s, but pid %ld runs with "
			    "the shim", name, state, pid);
		else
			continue;
		json_decref(doc);
		return why;
	}
	launchd_labels(labels, sizeof labels);
	for (l = strtok_r(labels, " ", &save); l != NULL;
	    l = strtok_r(NULL, " ", &save)) {
		found = false;
		json_array_foreach(doc, i, j)
			found |= strcmp(json_string_value(json_object_get(j,
			    "name")), l) == 0;
		if (!found) {
			snprintf(why, len, "launchd runs %s, which metalcapd "
			    "does not list", l);
			json_decref(doc);
			return why;
		}
	}
	json_decref(doc);
	return NULL;
}

/* Records in state/loaded with no job listed and nothing loaded. */
static const char *
stale_record(char *why, size_t len)
{
	char		 dir[256];
	DIR		*dp;
	struct dirent	*de;
	const char	*name;
	json_t		*j;

	snprintf(dir, sizeof dir, "%s/state/loaded", home);
	if ((dp = opendir(dir)) == NULL)
		return NULL;
	while ((de = readdir(dp)) != NULL) {
		if (strncmp(de->d_name, LABEL_PREFIX, strlen(LABEL_PREFIX)) != 0)
			continue;
		name = de->d_name + strlen(LABEL_PREFIX);
		j = job_status(name);
		json_decref(j);
		if (!has_file(name[1] - '0') && j == NULL) {
			snprintf(why, len, "state/loaded records %s, whose job "
			    "is gone", name);
			closedir(dp);
			return why;
		}
	}
	closedir(dp);
	return NULL;
}

static void
check(unsigned seed, int n)
{
	char		 why[512];
	const char	*bad = NULL;
	double		 end = now_s() + SETTLE_S * time_scale();
	int		 good = 0;

	while (now_s() < end && good < 2) {
		bad = violation(why, sizeof why);
		if (bad == NULL)
			bad = stale_record(why, sizeof why);
		good = bad == NULL ? good + 1 : 0;
		sleep_ms(200);
	}
	if (good < 2)
		fail_msg("seed %u, after step %d: %s\nsteps: %s", seed, n, bad,
		    history);
}

static void
run_seed(unsigned seed, int steps)
{
	int	i;

	rng = seed;
	history[0] = '\0';
	for (i = 0; i < NJOBS; i++) {
		char	name[16];

		snprintf(name, sizeof name, "j%d", i);
		put_job(name, "");
	}
	for (i = 1; i <= steps; i++) {
		step();
		check(seed, i);
	}
	report("seed %u: %d steps, every promise held after each: %.300s%s",
	    seed, steps, history, strlen(history) > 300 ? "..." : "");
}

static void
test_invariants(void **state)
{
	const char	*seeds = getenv("MC_INVARIANT_SEEDS");
	const char	*steps = getenv("MC_INVARIANT_STEPS");
	char		 list[256], *s, *save = NULL;

	(void)state;
	snprintf(list, sizeof list, "%s", seeds ? seeds : "1,2,3");
	for (s = strtok_r(list, ",", &save); s != NULL;
	    s = strtok_r(NULL, ",", &save)) {
		run_seed((unsigned)strtoul(s, NULL, 10), steps ? atoi(steps) :
		    24);
		/* Each seed from a clean world. */
		teardown(NULL);
		setup(NULL);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_invariants, setup,
		    teardown),
	};

	report_prefix = "invariants";
	return cmocka_run_group_tests_name("invariants", tests, NULL, NULL);
}
