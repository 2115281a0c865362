/* SPDX-License-Identifier: MIT */
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "protocol.h"

char	bench_home[64], bench_build[1024];

/* What an exit on a failure still has to undo (bench_atexit). */
static pid_t	bench_daemon_pid;
static bool	bench_cleaned = true;

long long
now_ns(clockid_t clk)
{
	struct timespec	ts;

	clock_gettime(clk, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int
cmp_ll(const void *a, const void *b)
{
	long long	x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct summary
summarize(double *v, int n)
{
	struct summary	s;

	qsort(v, (size_t)n, sizeof *v, cmp_double);
	s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s.min = v[0];
	s.max = v[n - 1];
	return s;
}

/* A scratch --home with its job folder, for the build in build_dir. */
void
bench_setup(const char *build_dir)
{
	char	path[128];

	if (realpath(build_dir, bench_build) == NULL) {
		fprintf(stderr, "bench: no build directory %s\n", build_dir);
		exit(2);
	}
	snprintf(bench_home, sizeof bench_home, "/tmp/mc-bench.XXXXXX");
	if (mkdtemp(bench_home) == NULL)
		exit(1);
	bench_cleaned = false;
	snprintf(path, sizeof path, "%s/jobs.d", bench_home);
	if (mkdir(path, 0755) == -1)
		exit(1);
}

/*
 * A benchmark that gives up (exit 1) stops its daemon and boots out its
 * jobs all the same: left behind, they slow every later run.
 */
static void
bench_atexit(void)
{
	if (bench_daemon_pid > 0)
		bench_stop_daemon(bench_daemon_pid);
	if (!bench_cleaned)
		bench_cleanup();
}

/* Boot out what the simulator still runs; remove the scratch home. */
void
bench_cleanup(void)
{
	char	cmd[4096];

	bench_cleaned = true;
	snprintf(cmd, sizeof cmd, "for l in $(%s/tests/launchctl-sim list | "
	    "tail -n +2 | cut -f3); do %s/tests/launchctl-sim bootout "
	    "gui/$(id -u)/$l 2>/dev/null; done; sleep 1; rm -rf %s",
	    bench_build, bench_build, bench_home);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: cleanup of %s failed\n", bench_home);
}

pid_t
bench_start_daemon(void)
{
	char	daemon[1200], sim[1200], simdir[128], trace[128];
	pid_t	pid;

	snprintf(daemon, sizeof daemon, "%s/bin/metalcapd", bench_build);
	snprintf(sim, sizeof sim, "%s/tests/launchctl-sim", bench_build);
	snprintf(simdir, sizeof simdir, "%s/launchd", bench_home);
	snprintf(trace, sizeof trace, "%s/trace", bench_home);
	setenv("LAUNCHCTL_SIM_DIR", simdir, 1);
	setenv("LAUNCHCTL_SIM_TRACE", trace, 1);
	setenv("LAUNCHCTL_SIM_DRAIN_MS", "0", 1);
	if ((pid = fork()) == 0) {
		if (freopen("/dev/null", "w", stderr) == NULL)
			_exit(126);
		execl(daemon, daemon, "--home", bench_home, "--launchctl", sim,
		    (char *)NULL);
		_exit(127);
	}
	if (bench_daemon_pid == 0 && atexit(bench_atexit) != 0)
		exit(1);
	bench_daemon_pid = pid;
	return pid;
}

void
bench_stop_daemon(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	if (pid == bench_daemon_pid)
		bench_daemon_pid = 0;
}

/* Connect as metalcapctl does, waiting up to 5 s for the daemon. */
void
bench_connect(struct mc_client *c)
{
	char	path[128];
	int	i;

	snprintf(path, sizeof path, "%s/metalcapd.sock", bench_home);
	for (i = 0; i < 5000; i++) {
		if (mc_client_open(c, path, 10) == 0)
			return;
		usleep(1000);
	}
	fprintf(stderr, "bench: %s\n", c->error);
	exit(1);
}

/* status [job]; the answer in *m (pointing into the client's decoder). */
static void
bench_status_reply(struct mc_client *c, const char *job,
    struct mc_rpc_message *m)
{
	char *const	params[] = { (char *)job, NULL };

	if (mc_client_call(c, MC_M_STATUS, params, NULL, NULL, m) !=
	    MC_CLIENT_OK) {
		fprintf(stderr, "bench: status: %s\n", c->error);
		exit(1);
	}
}

uint32_t
bench_status(struct mc_client *c, const char *job)
{
	struct mc_rpc_message	m;

	bench_status_reply(c, job, &m);
	return m.result.type == MSGPACK_OBJECT_ARRAY ?
	    m.result.via.array.size : 0;
}

/* How many jobs status lists in state. */
uint32_t
bench_count_state(struct mc_client *c, const char *state)
{
	struct mc_rpc_message	m;
	char			s[32];
	uint32_t		i, count = 0;

	bench_status_reply(c, NULL, &m);
	for (i = 0; m.result.type == MSGPACK_OBJECT_ARRAY &&
	    i < m.result.via.array.size; i++)
		if (mc_rpc_str(mc_rpc_map_get(&m.result.via.array.ptr[i],
		    "state"), s, sizeof s) && strcmp(s, state) == 0)
			count++;
	return count;
}
