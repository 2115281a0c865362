/* SPDX-License-Identifier: MIT */
/*
 * make bench-auto: metalcapd with 100 jobs of profile auto, each measured
 * (llama-bench SIMULATOR) and running (fake-llama), on Linux with the
 * launchctl SIMULATOR.
 *
 *   RSS with 100 running jobs: /proc/PID/status once all of them run
 *     unlocked, the measurements done.  Budget < 4 MiB.
 *   status of 100 auto jobs: 5 000 sequential calls, p50 and p99.  A
 *     status of an auto job says whether a measurement is due, which
 *     compares the program, llama-bench, the model and the shim with what
 *     was measured.  Budget p99 < 1 ms.
 *
 * Three runs of the status calls; the median of each figure, with its
 * spread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define JOBS		100
#define STATUS_CALLS	5000
#define RUNS		3

static char	model[128];

/* A job of profile auto serving the simulator's model. */
static void
put_job(int i)
{
	char	tmp[256], path[256];
	FILE	*f;

	snprintf(tmp, sizeof tmp, "%s/.auto-%d.tmp", bench_home, i);
	snprintf(path, sizeof path, "%s/jobs.d/auto-%d.plist", bench_home, i);
	if ((f = fopen(tmp, "w")) == NULL)
		exit(1);
	fprintf(f, "<plist version=\"1.0\"><dict><key>ProgramArguments</key>"
	    "<array><string>%s/tests/fake-llama</string><string>-m</string>"
	    "<string>%s</string></array><key>Profile</key><string>auto"
	    "</string><key>BenchProgram</key><string>%s/tests/llama-bench-sim"
	    "</string></dict></plist>\n", bench_build, model, bench_build);
	fclose(f);
	rename(tmp, path);
}

static void
put_model(void)
{
	FILE	*f;

	snprintf(model, sizeof model, "%s/tiny.gguf", bench_home);
	if ((f = fopen(model, "w")) == NULL)
		exit(1);
	fprintf(f, "GGUF\ngeneral.type=llama 1B Q4_K - Medium\n"
	    "general.size=667815936\ngeneral.params=1100048384\n");
	fclose(f);
}

int
main(int argc, char **argv)
{
	static long long	 rtt[STATUS_CALLS];
	double			 p50[RUNS], p99[RUNS], rss[3];
	struct summary		 s50, s99;
	struct mc_client	 cl;
	long long		 t0;
	pid_t			 daemon;
	int			 i, r, tries;

	if (argc != 2) {
		fprintf(stderr, "usage: bench_auto BUILD_DIR\n");
		return 2;
	}
	bench_setup(argv[1]);
	put_model();
	daemon = bench_start_daemon();
	bench_connect(&cl);
	for (i = 0; i < JOBS; i++)
		put_job(i);
	/* Each is measured before it runs: minutes on this machine. */
	for (tries = 0; bench_count_state(&cl, "unlocked") < JOBS &&
	    tries < 60000; tries++)
		usleep(10000);
	if (bench_count_state(&cl, "unlocked") < JOBS) {
		fprintf(stderr, "bench_auto: only %u of %d jobs unlocked\n",
		    bench_count_state(&cl, "unlocked"), JOBS);
		exit(1);
	}
	sleep(1);
	rss[0] = (double)proc_rss_kib(daemon);
	rss[1] = (double)proc_status_kib(daemon, "RssAnon");
	rss[2] = (double)proc_status_kib(daemon, "RssFile");
	for (r = 0; r < RUNS; r++) {
		for (i = 0; i < STATUS_CALLS; i++) {
			t0 = now_ns(CLOCK_MONOTONIC);
			if (bench_status(&cl, NULL) != JOBS)
				exit(1);
			rtt[i] = now_ns(CLOCK_MONOTONIC) - t0;
		}
		qsort(rtt, STATUS_CALLS, sizeof rtt[0], cmp_ll);
		p50[r] = rtt[STATUS_CALLS / 2] / 1e3;
		p99[r] = rtt[STATUS_CALLS * 99 / 100] / 1e3;
	}
	s50 = summarize(p50, RUNS);
	s99 = summarize(p99, RUNS);
	printf("auto benchmark (launchctl simulator, llama-bench simulator, "
	    "fake-llama jobs)\n");
	printf("  RSS with %d running auto jobs  %.0f KiB (anonymous %.0f, "
	    "files %.0f)  budget < 4 MiB: %s\n", JOBS, rss[0], rss[1], rss[2],
	    rss[0] < 4096 ? "pass" : "MISS");
	printf("  status of %d auto jobs  p50 %.1f us (%.1f-%.1f)  "
	    "p99 %.1f us (%.1f-%.1f)  budget p99 < 1 ms: %s\n", JOBS,
	    s50.median, s50.min, s50.max, s99.median, s99.min, s99.max,
	    s99.median < 1000 ? "pass" : "MISS");
	bench_stop_daemon(daemon);
	bench_cleanup();
	return 0;
}
