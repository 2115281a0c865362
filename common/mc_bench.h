/* SPDX-License-Identifier: MIT */
/*
 * llama-bench's JSON (-o json) read into what a stock-against-unlocked
 * comparison needs (mc_bench.c): per test, the median of its samples and
 * their spread, and what must match for two runs to be compared.
 */
#ifndef MC_BENCH_H
#define MC_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#define MC_BENCH_TESTS_MAX	16
#define MC_BENCH_SAMPLES_MAX	1024

struct mc_bench_test {
	char	name[32];		/* "pp512", "tg128", "pp512+tg128" */
	double	samples[MC_BENCH_SAMPLES_MAX];	/* tokens/s */
	size_t	nsamples;
	double	median, lo, hi;
};

struct mc_bench_run {
	char			 identity[2048];	/* model, build, settings */
	/* For the record, from the first test: what a reader looks for. */
	char			 model_type[128];	/* "llama 1B Q4_K - Medium" */
	char			 model_file[1024];	/* model_filename */
	char			 gpu_info[128];		/* the device's name */
	char			 build[64];		/* build_commit */
	long long		 build_number;
	struct mc_bench_test	 tests[MC_BENCH_TESTS_MAX];
	size_t			 ntests;
};

int	mc_bench_parse(const char *json, struct mc_bench_run *, char *why,
	    size_t whylen);
int	mc_bench_merge(struct mc_bench_run *into, const struct mc_bench_run *,
	    char *why, size_t whylen);
const struct mc_bench_test *mc_bench_find(const struct mc_bench_run *,
	    const char *name);
bool	mc_bench_same_tests(const struct mc_bench_run *,
	    const struct mc_bench_run *);
double	mc_bench_median(const double *, size_t);
double	mc_bench_ratio(const struct mc_bench_test *stock,
	    const struct mc_bench_test *unlocked);

#endif
