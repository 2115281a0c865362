/* SPDX-License-Identifier: MIT */
/*
 * make bench-shim: what the shim costs.
 *
 *   bench_shim SHIM_PATH        run everything and print the figures
 *
 * Per-call cost: a fresh process sends supportsFamily: to the SIMULATED
 * device (tests/sim) many times, cycling through the 17 families the probe
 * asks about (Apple, Mac, Common, Metal), stock and with the shim preloaded;
 * each figure is the median of several processes.  Constructor cost: the
 * shim times its own constructor and puts it in its report (ctor_ns=),
 * which excludes the dynamic loader's work common to every library.
 */
#include <objc/runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mtlsim.h"

#define BENCH_RUNS	7
#define BENCH_CALLS	20000000L

@interface BenchDevice
- (BOOL)supportsFamily:(long)family;
@end

static double
bench_now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static const long bench_families[] = {
	1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010,
	2001, 2002, 3001, 3002, 3003, 5001, 5002,
};
#define BENCH_NFAMILIES	(sizeof bench_families / sizeof bench_families[0])

/* Child: ns per supportsFamily: call. */
static double
bench_calls(void)
{
	BenchDevice		*dev = MTLCreateSystemDefaultDevice();
	volatile unsigned	 sink = 0;
	double			 t0;
	long			 i;

	t0 = bench_now_ns();
	for (i = 0; i < BENCH_CALLS; i++)
		sink += [dev supportsFamily:bench_families[i % BENCH_NFAMILIES]];
	(void)sink;
	return (bench_now_ns() - t0) / BENCH_CALLS;
}

/* Child: create a device, so the shim's report carries ctor_ns. */
static double
bench_device(void)
{
	return MTLCreateSystemDefaultDevice() != nil ? 0 : -1;
}

/* The constructor time from a report file, in ns. */
static double
bench_report_ctor(const char *path)
{
	char		 line[1024];
	const char	*p;
	FILE		*f;
	double		 v = -1;

	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(line, sizeof line, f) != NULL &&
		    (p = strstr(line, " ctor_ns=")) != NULL)
			v = strtod(p + 9, NULL);
		fclose(f);
	}
	unlink(path);
	return v;
}

/* Run this program again as "mode" in a fresh process; read its figure. */
static double
bench_child(const char *self, const char *mode, const char *shim,
    int preload)
{
	char	cmd[4096], report[] = "/tmp/mc-bench.XXXXXX";
	FILE	*p;
	double	v = -1;
	int	fd;

	if ((fd = mkstemp(report)) == -1)
		exit(1);
	close(fd);
	snprintf(cmd, sizeof cmd, "%s%s%s METALCAP_APPLE_FAMILY_MAX=1009 "
	    "METALCAP_REPORT='%s' '%s' %s '%s'", preload ? "LD_PRELOAD='" : "",
	    preload ? shim : "", preload ? "'" : "", report, self, mode, shim);
	if ((p = popen(cmd, "r")) == NULL || fscanf(p, "%lf", &v) != 1 ||
	    pclose(p) != 0) {
		fprintf(stderr, "bench_shim: %s failed\n", mode);
		exit(1);
	}
	if (strcmp(mode, "--device") == 0)
		v = bench_report_ctor(report);
	else
		unlink(report);
	if (v < 0) {
		fprintf(stderr, "bench_shim: no figure from %s\n", mode);
		exit(1);
	}
	return v;
}

static int
bench_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
bench_median(const char *self, const char *mode, const char *shim,
    int preload, double *lo, double *hi)
{
	double	v[BENCH_RUNS];
	int	i;

	for (i = 0; i < BENCH_RUNS; i++)
		v[i] = bench_child(self, mode, shim, preload);
	qsort(v, BENCH_RUNS, sizeof v[0], bench_cmp);
	*lo = v[0];
	*hi = v[BENCH_RUNS - 1];
	return v[BENCH_RUNS / 2];
}

int
main(int argc, char **argv)
{
	double	stock, hooked, load, lo, hi;

	if (argc == 3 && strcmp(argv[1], "--calls") == 0) {
		printf("%.3f\n", bench_calls());
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "--device") == 0) {
		printf("%.0f\n", bench_device());
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: bench_shim SHIM_PATH\n");
		return 2;
	}
	printf("shim benchmark (simulated device, median of %d processes, "
	    "%ld calls each)\n", BENCH_RUNS, BENCH_CALLS);
	stock = bench_median(argv[0], "--calls", argv[1], 0, &lo, &hi);
	printf("  supportsFamily: stock   %7.2f ns/call  (%.2f-%.2f)\n",
	    stock, lo, hi);
	hooked = bench_median(argv[0], "--calls", argv[1], 1, &lo, &hi);
	printf("  supportsFamily: hooked  %7.2f ns/call  (%.2f-%.2f)\n",
	    hooked, lo, hi);
	printf("  ratio hooked/stock      %7.2f x        target <= 1.50: %s\n",
	    hooked / stock, hooked / stock <= 1.5 ? "pass" : "MISS");
	load = bench_median(argv[0], "--device", argv[1], 1, &lo, &hi);
	printf("  constructor             %7.1f us       (%.1f-%.1f) "
	    "target < 100 us: %s\n", load / 1000, lo / 1000, hi / 1000,
	    load < 100000 ? "pass" : "MISS");
	return 0;
}
