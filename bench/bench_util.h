/* SPDX-License-Identifier: MIT */
/*
 * Shared by the daemon benchmarks: a metalcapd in a scratch --home
 * driving the launchctl SIMULATOR, a socket to it, status calls, clocks,
 * figures of the daemon process from /proc, and median/spread summaries.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "mc_client.h"
#include "proc.h"

extern char	bench_home[64], bench_build[1024];

long long	now_ns(clockid_t);
int		cmp_ll(const void *, const void *);
void		bench_setup(const char *build_dir);
void		bench_cleanup(void);
pid_t		bench_start_daemon(void);
void		bench_stop_daemon(pid_t);
void		bench_connect(struct mc_client *);
/* status [job]: the number of jobs answered. */
uint32_t	bench_status(struct mc_client *, const char *job);

/* How many jobs status lists in state. */
uint32_t	bench_count_state(struct mc_client *, const char *state);

/* Median and spread of n samples (sorted in place). */
struct summary {
	double	median, min, max;
};
struct summary	summarize(double *v, int n);

#endif
