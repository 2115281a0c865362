/* SPDX-License-Identifier: MIT */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "protocol.h"

char	bench_home[64], bench_build[1024];

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
	snprintf(path, sizeof path, "%s/jobs.d", bench_home);
	if (mkdir(path, 0755) == -1)
		exit(1);
}

/* Boot out what the simulator still runs; remove the scratch home. */
void
bench_cleanup(void)
{
	char	cmd[4096];

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
	return pid;
}

void
bench_stop_daemon(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

int
bench_connect(void)
{
	struct sockaddr_un	sun = { .sun_family = AF_UNIX };
	int			fd, i;

	snprintf(sun.sun_path, sizeof sun.sun_path, "%s/metalcapd.sock",
	    bench_home);
	for (i = 0; i < 5000; i++) {
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0)
			return fd;
		close(fd);
		usleep(1000);
	}
	fprintf(stderr, "bench: metalcapd did not start\n");
	exit(1);
}

/* status [job]; the answer in *m (pointing into dec). */
static void
bench_status_reply(int fd, struct mc_rpc_decoder *dec, uint32_t id,
    const char *job, struct mc_rpc_message *m)
{
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	const char		*why;
	static char		 buf[65536];
	ssize_t			 n;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	mc_rpc_pack_request(&pk, id, MC_M_STATUS, job ? 1 : 0);
	if (job != NULL)
		mc_rpc_pack_str(&pk, job);
	if (write(fd, sb.data, sb.size) != (ssize_t)sb.size)
		exit(1);
	msgpack_sbuffer_destroy(&sb);
	while (mc_rpc_next(dec, m, &why) != MC_RPC_OK) {
		if ((n = read(fd, buf, sizeof buf)) <= 0)
			exit(1);
		mc_rpc_feed(dec, buf, (size_t)n);
	}
}

uint32_t
bench_status(int fd, struct mc_rpc_decoder *dec, uint32_t id, const char *job)
{
	struct mc_rpc_message	m;

	bench_status_reply(fd, dec, id, job, &m);
	return m.result.type == MSGPACK_OBJECT_ARRAY ?
	    m.result.via.array.size : 0;
}

/* How many jobs status lists in state. */
uint32_t
bench_count_state(int fd, struct mc_rpc_decoder *dec, const char *state)
{
	struct mc_rpc_message	m;
	char			s[32];
	uint32_t		i, count = 0;

	bench_status_reply(fd, dec, 1, NULL, &m);
	for (i = 0; m.result.type == MSGPACK_OBJECT_ARRAY &&
	    i < m.result.via.array.size; i++)
		if (mc_rpc_str(mc_rpc_map_get(&m.result.via.array.ptr[i],
		    "state"), s, sizeof s) && strcmp(s, state) == 0)
			count++;
	return count;
}
