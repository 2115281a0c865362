/* SPDX-License-Identifier: MIT */
/*
 * make bench-scale: what metalcapd costs as jobs grow and while idle, on
 * Linux with the launchctl SIMULATOR.  The jobs are registered with launchd
 * but not running (RunAtLoad and KeepAlive false, stock): the figures are
 * the daemon's own, not its workloads'.
 *
 *   start-up    N job files already in jobs.d; exec to the first status
 *               answer on the socket; 3 starts each for N = 1, 100, 1000
 *   footprint   RSS and open descriptors once the N jobs are settled
 *   idle        100 jobs settled: CPU ticks and times scheduled (from
 *               /proc/PID/stat and /proc/PID/schedstat) over BENCH_IDLE_S
 *               seconds (default 60)
 *   status      100 jobs, one client: the status of all of them and of
 *               one, p50/p99 over 5000 calls, 3 runs; then 1, 10 and 50
 *               clients asking for one job's status for 2 s, 3 runs
 *
 * Ends with the figures against their budgets (pass or MISS).
 */
#include <sys/wait.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "protocol.h"

#define RUNS		3
#define CALLS		5000
#define CLIENT_S	2.0

static const int	sizes[] = { 1, 100, 1000 };
static const int	clients[] = { 1, 10, 50 };

struct budget {
	const char	*figure;
	struct summary	 s;
	const char	*unit;
	const char	*target;
	bool		 pass;
};
static struct budget	table[32];
static int		ntable;

static void
record(const char *figure, struct summary s, const char *unit,
    const char *target, bool pass)
{
	table[ntable++] = (struct budget){ figure, s, unit, target, pass };
	printf("  %-44s median %9.2f %-5s (%.2f-%.2f)%s%s%s\n", figure,
	    s.median, unit, s.min, s.max, target ? "  budget " : "",
	    target ? target : "", target ? (pass ? ": pass" : ": MISS") : "");
}

static void
put_jobs(int n)
{
	char	path[256];
	FILE	*f;
	int	i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/jobs.d/bench-%d.plist",
		    bench_home, i);
		if ((f = fopen(path, "wx")) == NULL)
			continue;	/* there from a smaller size */
		fprintf(f, "<plist version=\"1.0\"><dict><key>ProgramArguments"
		    "</key><array><string>%s/tests/fake-llama</string></array>"
		    "<key>RunAtLoad</key><false/><key>KeepAlive</key><false/>"
		    "<key>Unlocked</key><false/></dict></plist>\n", bench_build);
		fclose(f);
	}
}

/* Start the daemon; ns until it answers status.  *cl stays connected. */
static long long
start_timed(pid_t *pid, struct mc_client *cl)
{
	long long	t0 = now_ns(CLOCK_MONOTONIC);

	*pid = bench_start_daemon();
	bench_connect(cl);
	bench_status(cl, "bench-0");
	return now_ns(CLOCK_MONOTONIC) - t0;
}

static void
settle(struct mc_client *cl, int n)
{
	int	tries;

	for (tries = 0; bench_count_state(cl, "stock") < (uint32_t)n; tries++) {
		if (tries == 3000) {
			fprintf(stderr, "bench_scale: %d jobs never settled\n",
			    n);
			exit(1);
		}
		usleep(10000);
	}
}

/* 5000 status calls of all jobs (job NULL) or one: p50 and p99, in us. */
static void
status_latency(struct mc_client *cl, const char *job,
    double *p50, double *p99)
{
	static long long	rtt[CALLS];
	long long		t0;
	int			i;

	for (i = 0; i < CALLS; i++) {
		t0 = now_ns(CLOCK_MONOTONIC);
		bench_status(cl, job);
		rtt[i] = now_ns(CLOCK_MONOTONIC) - t0;
	}
	qsort(rtt, CALLS, sizeof rtt[0], cmp_ll);
	*p50 = rtt[CALLS / 2] / 1e3;
	*p99 = rtt[CALLS * 99 / 100] / 1e3;
}

/* k clients asking for one job's status for CLIENT_S: requests/s. */
static double
status_clients(int k)
{
	int	go[2], done[2], i;
	long	count, total = 0;
	pid_t	kids[64];
	char	c;

	if (pipe(go) == -1 || pipe(done) == -1)
		exit(1);
	for (i = 0; i < k; i++) {
		if ((kids[i] = fork()) == 0) {
			struct mc_client	cl;
			long long		end;

			bench_connect(&cl);
			count = 0;
			if (read(go[0], &c, 1) != 1)
				_exit(1);
			end = now_ns(CLOCK_MONOTONIC) +
			    (long long)(CLIENT_S * 1e9);
			for (; now_ns(CLOCK_MONOTONIC) < end; count++)
				bench_status(&cl, "bench-0");
			if (write(done[1], &count, sizeof count) !=
			    (ssize_t)sizeof count)
				_exit(1);
			_exit(0);
		}
	}
	close(go[0]);
	for (i = 0; i < k; i++)
		if (write(go[1], "x", 1) != 1)
			exit(1);
	for (i = 0; i < k; i++) {
		if (read(done[0], &count, sizeof count) != (ssize_t)sizeof count)
			exit(1);
		total += count;
	}
	for (i = 0; i < k; i++)
		waitpid(kids[i], NULL, 0);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	return (double)total / CLIENT_S;
}

int
main(int argc, char **argv)
{
	struct mc_client	 cl;
	double			 v[RUNS], p50[RUNS], p99[RUNS], w[RUNS];
	double			 rss100 = 0, rss1000 = 0;
	const char		*idle_env = getenv("BENCH_IDLE_S");
	int			 idle_s = idle_env ? atoi(idle_env) : 60;
	char			 label[64];
	long long		 ticks, wakeups;
	size_t			 z, c;
	pid_t			 pid;
	int			 r;
	struct summary		 s;

	if (argc != 2) {
		fprintf(stderr, "usage: bench_scale BUILD_DIR\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	bench_setup(argv[1]);
	printf("scale benchmark (launchctl simulator; jobs registered, not "
	    "running)\n");
	for (z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
		put_jobs(sizes[z]);
		for (r = 0; r < RUNS; r++) {
			v[r] = start_timed(&pid, &cl) / 1e6;
			settle(&cl, sizes[z]);
			if (r < RUNS - 1) {
				mc_client_close(&cl);
				bench_stop_daemon(pid);
			}
		}
		snprintf(label, sizeof label, "start-up to socket answer, %d "
		    "jobs", sizes[z]);
		s = summarize(v, RUNS);
		record(strdup(label), s, "ms", sizes[z] == 1000 ? "< 1000 ms" :
		    NULL, s.median < 1000);
		/* Settled: memory and descriptors of the last start. */
		sleep(1);
		v[0] = (double)proc_rss_kib(pid);
		snprintf(label, sizeof label, "RSS, %d jobs", sizes[z]);
		s = (struct summary){ v[0], v[0], v[0] };
		record(strdup(label), s, "KiB", sizes[z] == 100 ? "< 4096 KiB" :
		    NULL, v[0] < 4096);
		if (sizes[z] == 100)
			rss100 = v[0];
		if (sizes[z] == 1000)
			rss1000 = v[0];
		v[0] = proc_fds(pid);
		snprintf(label, sizeof label, "open descriptors, %d jobs",
		    sizes[z]);
		record(strdup(label), (struct summary){ v[0], v[0], v[0] }, "",
		    NULL, true);
		if (sizes[z] == 100) {
			/* Idle: nothing changes for idle_s seconds. */
			ticks = proc_cpu_ticks(pid);
			wakeups = proc_wakeups(pid);
			sleep((unsigned)idle_s);
			ticks = proc_cpu_ticks(pid) - ticks;
			wakeups = proc_wakeups(pid) - wakeups;
			snprintf(label, sizeof label, "idle %d s, 100 jobs: CPU "
			    "ticks", idle_s);
			record(strdup(label), (struct summary){ (double)ticks,
			    (double)ticks, (double)ticks }, "", "0", ticks == 0);
			snprintf(label, sizeof label, "idle %d s, 100 jobs: "
			    "wakeups", idle_s);
			record(strdup(label), (struct summary){ (double)wakeups,
			    (double)wakeups, (double)wakeups }, "", NULL, true);
			/* Status with 100 jobs. */
			for (r = 0; r < RUNS; r++)
				status_latency(&cl, NULL, &p50[r], &p99[r]);
			record("status of 100 jobs, p50", summarize(p50, RUNS),
			    "us", NULL, true);
			s = summarize(p99, RUNS);
			record("status of 100 jobs, p99", s, "us", "< 1000 us",
			    s.median < 1000);
			for (r = 0; r < RUNS; r++)
				status_latency(&cl, "bench-0", &p50[r],
				    &p99[r]);
			record("status of one job, p50", summarize(p50, RUNS),
			    "us", NULL, true);
			record("status of one job, p99", summarize(p99, RUNS),
			    "us", NULL, true);
			for (c = 0; c < sizeof clients / sizeof clients[0];
			    c++) {
				for (r = 0; r < RUNS; r++)
					w[r] = status_clients(clients[c]);
				snprintf(label, sizeof label, "status of one "
				    "job, %d client%s", clients[c],
				    clients[c] > 1 ? "s" : "");
				s = summarize(w, RUNS);
				record(strdup(label), s, "req/s", clients[c] ==
				    1 ? ">= 20000 req/s" : NULL,
				    s.median >= 20000);
			}
		}
		mc_client_close(&cl);
		bench_stop_daemon(pid);
	}
	v[0] = (rss1000 - rss100) / 900 * 1024;
	record("RSS growth per job, 100 -> 1000 jobs", (struct summary){ v[0],
	    v[0], v[0] }, "bytes", "< 2048 bytes", v[0] < 2048);
	printf("\n| figure | median | spread | budget | verdict |\n"
	    "|---|---|---|---|---|\n");
	for (r = 0; r < ntable; r++)
		if (table[r].target != NULL)
			printf("| %s | %.2f %s | %.2f-%.2f | %s | %s |\n",
			    table[r].figure, table[r].s.median, table[r].unit,
			    table[r].s.min, table[r].s.max, table[r].target,
			    table[r].pass ? "pass" : "MISS");
	bench_cleanup();
	return 0;
}
