/* SPDX-License-Identifier: MIT */
/*
 * make bench-daemon: metalcapd's reaction time and control-plane speed, on
 * Linux with the launchctl SIMULATOR and the fake-llama stand-in.
 *
 *   job file -> bootstrap: a job file is renamed into jobs.d; the time until
 *     the simulator records the bootstrap call (LAUNCHCTL_SIM_TRACE), median
 *     of 20 jobs.
 *   status round trip: 10 000 sequential status requests over the socket
 *     with 100 jobs registered; p50, p99 and requests per second.
 *   RSS with 100 running jobs: /proc/PID/status once all run unlocked.
 *   failed pipeline -> stock bootstrap: the simulated device starts failing
 *     pipeline compiles and an unlocked job serves a request (SIGUSR1 to
 *     fake-llama), which compiles one: the shim's witness of the failure
 *     reverts it (text in a log alone does not).  The time from the
 *     request until the simulator records the stock bootstrap, median of
 *     20 (the device is mended and enable re-probes and unlocks in
 *     between).  The simulator's drain after bootout is set to 0: the
 *     figure is the daemon's reaction, not launchd's teardown.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "mc_rpc.h"
#include "protocol.h"

#define JOBS_TIMED	20
#define JOBS_TOTAL	100
#define STATUS_CALLS	10000
#define REVERTS		20

#define home	bench_home
#define build	bench_build

static void
put_job(int i)
{
	char	tmp[256], path[256];
	FILE	*f;

	snprintf(tmp, sizeof tmp, "%s/.bench-%d.tmp", home, i);
	snprintf(path, sizeof path, "%s/jobs.d/bench-%d.plist", home, i);
	f = fopen(tmp, "w");
	fprintf(f, "<plist version=\"1.0\"><dict><key>ProgramArguments</key>"
	    "<array><string>%s/tests/fake-llama</string></array>"
	    "<key>EnvironmentVariables</key><dict><key>MTLSIM_SWITCHES</key>"
	    "<string>%s/switches</string></dict></dict></plist>\n", build,
	    home);
	fclose(f);
	rename(tmp, path);
}

/* The first trace timestamp after `after` of a bootstrap of label. */
static long long
bootstrap_after(const char *label, long long after)
{
	char		 trace[256], line[2048], needle[128];
	long long	 deadline = now_ns(CLOCK_MONOTONIC) + 5000000000LL, t;
	FILE		*f;

	snprintf(trace, sizeof trace, "%s/trace", home);
	snprintf(needle, sizeof needle, "%s.plist", label);
	while (now_ns(CLOCK_MONOTONIC) < deadline) {
		if ((f = fopen(trace, "r")) != NULL) {
			while (fgets(line, sizeof line, f) != NULL)
				if (strstr(line, " bootstrap ") &&
				    strstr(line, needle) &&
				    sscanf(line, "%lld", &t) == 1 && t > after) {
					fclose(f);
					return t;
				}
			fclose(f);
		}
		usleep(1000);
	}
	fprintf(stderr, "bench_daemon: %s was never bootstrapped\n", label);
	exit(1);
}

static long long
bootstrap_time(int i)
{
	char	label[64];

	snprintf(label, sizeof label, "org.metalcap.job.bench-%d", i);
	return bootstrap_after(label, 0);
}

/* Run metalcapctl ARGS, quietly; its exit status. */
static int
ctl(const char *a1, const char *a2)
{
	char	cmd[2048];

	snprintf(cmd, sizeof cmd, "%s/bin/metalcapctl --home %s %s %s "
	    ">/dev/null 2>&1", build, home, a1, a2 ? a2 : "");
	return system(cmd);
}

/* Wait until bench-0 is unlocked and running; its pid. */
static long
wait_unlocked(void)
{
	char	cmd[2048];
	long	pid = 0;
	FILE	*f;
	int	i;

	snprintf(cmd, sizeof cmd, "%s/bin/metalcapctl --home %s status bench-0 "
	    "| awk 'NR == 2 && $2 == \"unlocked\" && $4 != \"-\" { print $4 }'",
	    build, home);
	for (i = 0; i < 500 && pid <= 0; i++) {
		if ((f = popen(cmd, "r")) != NULL) {
			if (fscanf(f, "%ld", &pid) != 1)
				pid = 0;
			pclose(f);
		}
		if (pid <= 0)
			usleep(10000);
	}
	if (pid <= 0) {
		fprintf(stderr, "bench_daemon: bench-0 never came back "
		    "unlocked\n");
		exit(1);
	}
	return pid;
}

/* The simulated device's switches, as the job's shim reads them. */
static void
set_device(const char *line)
{
	char	path[256];
	FILE	*f;

	snprintf(path, sizeof path, "%s/switches", home);
	if ((f = fopen(path, "w")) == NULL)
		exit(1);
	fprintf(f, "%s", line);
	fclose(f);
}

/*
 * Does pid catch SIGUSR1 yet?  Before fake-llama installs its handler
 * (in exec, in the shim's constructor) the signal would kill it.
 */
static bool
catches_usr1(long pid)
{
	char			 path[64], line[256];
	unsigned long long	 mask = 0;
	FILE			*f;

	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	fclose(f);
	return (mask >> (SIGUSR1 - 1)) & 1;
}

/* A request that compiles a failing pipeline -> the stock bootstrap, ns. */
static long long
revert_once(void)
{
	long long	 t0;
	long		 pid = wait_unlocked();
	int		 i;

	for (i = 0; i < 500 && !catches_usr1(pid); i++)
		usleep(10000);
	set_device("MTLSIM_FAIL=simdgroup_matrix:compile\n");
	t0 = now_ns(CLOCK_REALTIME);
	if (kill((pid_t)pid, SIGUSR1) == -1)
		exit(1);
	t0 = bootstrap_after("org.metalcap.job.bench-0", t0) - t0;
	set_device("");
	if (ctl("enable", "bench-0") != 0) {
		fprintf(stderr, "bench_daemon: enable failed\n");
		exit(1);
	}
	return t0;
}

int
main(int argc, char **argv)
{
	static long long	 lat[JOBS_TIMED], rtt[STATUS_CALLS];
	static long long	 rev[REVERTS];
	struct mc_client	 cl;
	long long		 t0, total;
	long			 rss, anon, files;
	pid_t			 daemon;
	int			 i, tries;

	if (argc != 2) {
		fprintf(stderr, "usage: bench_daemon BUILD_DIR\n");
		return 2;
	}
	bench_setup(argv[1]);
	set_device("");
	daemon = bench_start_daemon();
	bench_connect(&cl);
	for (i = 0; i < JOBS_TIMED; i++) {
		t0 = now_ns(CLOCK_REALTIME);
		put_job(i);
		lat[i] = bootstrap_time(i) - t0;
		usleep(100000);
	}
	for (; i < JOBS_TOTAL; i++)
		put_job(i);
	/* Measured once all of them run unlocked: not their start-up. */
	for (tries = 0; bench_count_state(&cl, "unlocked") < JOBS_TOTAL &&
	    tries < 3000; tries++)
		usleep(10000);
	sleep(1);
	rss = proc_rss_kib(daemon);
	anon = proc_status_kib(daemon, "RssAnon");
	files = proc_status_kib(daemon, "RssFile");

	total = now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < STATUS_CALLS; i++) {
		t0 = now_ns(CLOCK_MONOTONIC);
		bench_status(&cl, NULL);
		rtt[i] = now_ns(CLOCK_MONOTONIC) - t0;
	}
	total = now_ns(CLOCK_MONOTONIC) - total;
	for (i = 0; i < REVERTS; i++)
		rev[i] = revert_once();
	qsort(rev, REVERTS, sizeof rev[0], cmp_ll);
	qsort(lat, JOBS_TIMED, sizeof lat[0], cmp_ll);
	qsort(rtt, STATUS_CALLS, sizeof rtt[0], cmp_ll);
	printf("daemon benchmark (launchctl simulator, fake-llama jobs)\n");
	printf("  job file -> bootstrap   median %6.2f ms  (%.2f-%.2f, %d jobs)"
	    "  target < 50 ms: %s\n", lat[JOBS_TIMED / 2] / 1e6, lat[0] / 1e6,
	    lat[JOBS_TIMED - 1] / 1e6, JOBS_TIMED,
	    lat[JOBS_TIMED / 2] < 50000000 ? "pass" : "MISS");
	printf("  RSS with %d running jobs  %ld KiB (anonymous %ld, files %ld)"
	    "  budget < 4 MiB: %s\n", JOBS_TOTAL, rss, anon, files,
	    rss < 4096 ? "pass" : "MISS");
	printf("  status round trip       p50 %6.1f us  p99 %6.1f us  "
	    "(%d calls, %d jobs)  target p99 < 1 ms: %s\n",
	    rtt[STATUS_CALLS / 2] / 1e3, rtt[STATUS_CALLS * 99 / 100] / 1e3,
	    STATUS_CALLS, JOBS_TOTAL,
	    rtt[STATUS_CALLS * 99 / 100] < 1000000 ? "pass" : "MISS");
	printf("  status throughput       %.0f requests/s on one client\n",
	    STATUS_CALLS / (total / 1e9));
	printf("  failed pipeline -> stock bootstrap  median %6.2f ms  (%.2f-%.2f, "
	    "%d reverts)  target < 200 ms: %s\n", rev[REVERTS / 2] / 1e6,
	    rev[0] / 1e6, rev[REVERTS - 1] / 1e6, REVERTS,
	    rev[REVERTS / 2] < 200000000 ? "pass" : "MISS");
	bench_stop_daemon(daemon);
	bench_cleanup();
	return 0;
}
