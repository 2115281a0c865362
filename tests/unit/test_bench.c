/* SPDX-License-Identifier: MIT */
/*
 * llama-bench's JSON read as a stock-against-unlocked comparison
 * (common/mc_bench.c), on Cua's raw files (tests/fixtures/real-bench):
 * the medians and ratios Cua published in its results.csv come out of
 * the JSON again, and runs of another model, build or settings are not
 * compared.  And llama-perplexity's KL-divergence statistics
 * (common/mc_kld.c) read from real pasted output
 * (tests/fixtures/real-perplexity).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mc_bench.h"
#include "mc_kld.h"
#include "mc_sha256.h"

#define BENCH	MC_TEST_SOURCE "/tests/fixtures/real-bench/"
#define PPL	MC_TEST_SOURCE "/tests/fixtures/real-perplexity/"

static char *
slurp(const char *path)
{
	FILE	*f = fopen(path, "r");
	char	*text = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_true(fread(text, 1, (1 << 20) - 1, f) > 0);
	fclose(f);
	return text;
}

static void
load(const char *file, struct mc_bench_run *run)
{
	char	*text = slurp(file), why[512];

	if (mc_bench_parse(text, run, why, sizeof why) == -1)
		fail_msg("%s: %s", file, why);
	free(text);
}

/* Within the published figures' own rounding. */
static void
near(double got, double want, double tolerance, const char *what)
{
	if (fabs(got - want) > tolerance)
		fail_msg("%s: %.6f, published %.6f", what, got, want);
}

struct published {
	const char	*stock, *unlocked, *test;
	double		 stock_median, unlocked_median, ratio;
};

/* From m1u-results.csv and gemma4-results.csv, as Cua wrote them. */
static const struct published cua[] = {
	{ "m1u-tiny-stock-minimal.json", "m1u-tiny-safe-shim-10x-final.json",
	    "pp512", 431.8625, 4786.7, 11.0839 },
	{ "m1u-tiny-stock-minimal.json", "m1u-tiny-safe-shim-10x-final.json",
	    "tg128", 12.6307, 206.5965, 16.3567 },
	{ "gemma4-stock-10x.json", "gemma4-safe-shim-10x.json",
	    "pp512", 71.65675, 515.763, 7.197689 },
	{ "gemma4-stock-10x.json", "gemma4-safe-shim-10x.json",
	    "tg128", 3.41483, 49.66695, 14.544487 },
};

static void
test_cua_published_ratios(void **state)
{
	struct mc_bench_run		 stock, unlocked, both;
	const struct mc_bench_test	*s, *u;
	char				 why[1024], path[512];
	size_t				 i;

	(void)state;
	for (i = 0; i < sizeof cua / sizeof cua[0]; i++) {
		snprintf(path, sizeof path, BENCH "%s", cua[i].stock);
		load(path, &stock);
		snprintf(path, sizeof path, BENCH "%s", cua[i].unlocked);
		load(path, &unlocked);
		assert_non_null(s = mc_bench_find(&stock, cua[i].test));
		assert_non_null(u = mc_bench_find(&unlocked, cua[i].test));
		assert_int_equal(s->nsamples, 10);
		near(s->median, cua[i].stock_median, 5e-5, cua[i].stock);
		near(u->median, cua[i].unlocked_median, 5e-5, cua[i].unlocked);
		near(u->median / s->median, cua[i].ratio, 5e-5, cua[i].test);
		assert_true(s->lo <= s->median && s->median <= s->hi);
		/* The same model, build and settings: comparable. */
		both = stock;
		assert_int_equal(mc_bench_merge(&both, &unlocked, why,
		    sizeof why), 0);
	}
}

/* Runs of another build are not compared, and the reason says which. */
static void
test_other_build_refused(void **state)
{
	struct mc_bench_run	a, b;
	char			*text, *p, why[2048];

	(void)state;
	load(BENCH "m1u-tiny-stock-minimal.json", &a);
	text = slurp(BENCH "m1u-tiny-safe-shim-10x-final.json");
	assert_non_null(strstr(text, "ee3d1b54c"));
	while ((p = strstr(text, "ee3d1b54c")) != NULL)
		memcpy(p, "0badc0de0", 9);
	assert_int_equal(mc_bench_parse(text, &b, why, sizeof why), 0);
	free(text);
	assert_int_equal(mc_bench_merge(&a, &b, why, sizeof why), -1);
	assert_non_null(strstr(why, "build_commit=\"0badc0de0\""));
	/* Tiny Llama against Gemma: another model. */
	load(BENCH "gemma4-stock-10x.json", &b);
	assert_int_equal(mc_bench_merge(&a, &b, why, sizeof why), -1);
	assert_non_null(strstr(why, "model_type"));
}

/* What is not llama-bench's JSON says what is missing. */
static void
test_not_llama_bench(void **state)
{
	struct mc_bench_run	run;
	char			why[512];

	(void)state;
	assert_int_equal(mc_bench_parse("{", &run, why, sizeof why), -1);
	assert_non_null(strstr(why, "not JSON"));
	assert_int_equal(mc_bench_parse("{\"a\": 1}", &run, why, sizeof why),
	    -1);
	assert_non_null(strstr(why, "array of tests"));
	assert_int_equal(mc_bench_parse("[{\"n_prompt\": 512}]", &run, why,
	    sizeof why), -1);
	assert_non_null(strstr(why, "test 0: no \"model_type\""));
	/* A test without samples (an older llama-bench, another output):
	 * refused, named, not taken as a run of no tests. */
	assert_int_equal(mc_bench_parse("[{\"model_type\": \"m\", "
	    "\"model_size\": 1, \"model_n_params\": 1, \"build_commit\": "
	    "\"b\", \"n_threads\": 4, \"n_prompt\": 512, \"n_gen\": 0}]",
	    &run, why, sizeof why), -1);
	assert_non_null(strstr(why, "no \"samples_ts\""));
}

/* One test object: a model name, threads, the tests' samples. */
static int
parse_one(const char *model, int threads, const char *samples,
    struct mc_bench_run *run, char *why, size_t whylen)
{
	char	*text;
	int	 rc;

	text = malloc(strlen(model) + strlen(samples) + 512);
	sprintf(text, "[{\"model_type\": \"%s\", \"model_size\": 1, "
	    "\"model_n_params\": 1, \"build_commit\": \"b\", \"n_threads\": "
	    "%d, \"n_prompt\": 512, \"n_gen\": 0, \"samples_ts\": [%s]}]", model,
	    threads, samples);
	rc = mc_bench_parse(text, run, why, whylen);
	free(text);
	return rc;
}

/*
 * The settings after a long model name still count: an identity that
 * would not fit is refused, not cut (a cut one compared equal while
 * n_threads differed).  Settings an older llama-bench does not write
 * compare as null.
 */
static void
test_identity_whole(void **state)
{
	static struct mc_bench_run	a, b;
	char				name[2100], why[4096];

	(void)state;
	memset(name, 'y', 460);
	name[460] = '\0';
	assert_int_equal(parse_one(name, 8, "10, 11", &a, why, sizeof why), 0);
	assert_int_equal(parse_one(name, 1, "10, 11", &b, why, sizeof why), 0);
	assert_non_null(strstr(a.identity, "n_depth=null"));
	assert_int_equal(mc_bench_merge(&a, &b, why, sizeof why), -1);
	assert_non_null(strstr(why, "n_threads=1"));
	memset(name, 'y', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	assert_int_equal(parse_one(name, 8, "10", &a, why, sizeof why), -1);
	assert_non_null(strstr(why, "take over"));
}

/* A rate is finite and positive; a run's tests are those of the others. */
static void
test_samples_and_tests_checked(void **state)
{
	static struct mc_bench_run	a, b;
	char				why[4096];
	const char			*bad[] = { "0", "-3", "1e13", "\"9\"" };
	size_t				i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(parse_one("m", 8, bad[i], &a, why,
		    sizeof why), -1);
		assert_non_null(strstr(why, "tokens-per-second"));
	}
	load(BENCH "m1u-tiny-stock-minimal.json", &a);
	assert_int_equal(parse_one("m", 8, "10", &b, why, sizeof why), 0);
	memcpy(b.identity, a.identity, sizeof b.identity);
	b.tests[0].samples[0] = 10;
	assert_false(mc_bench_same_tests(&a, &b));
	assert_int_equal(mc_bench_merge(&a, &b, why, sizeof why), -1);
	assert_non_null(strstr(why, "different tests"));
}

/* One test object of llama-bench -o json: pp, tg, n samples of 10. */
static size_t
bench_object(char *buf, size_t len, long long pp, long long tg, size_t n)
{
	size_t	at, i;

	at = (size_t)snprintf(buf, len, "{\"model_type\": \"m\", "
	    "\"model_size\": 1, \"model_n_params\": 1, \"build_commit\": "
	    "\"b\", \"n_threads\": 4, \"n_prompt\": %lld, \"n_gen\": %lld, "
	    "\"samples_ts\": [", pp, tg);
	for (i = 0; i < n; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s10", i ? ", " :
		    "");
	return at + (size_t)snprintf(buf + at, len - at, "]}");
}

/* A run of the objects given as (pp, tg, samples) triples; 0 or -1. */
static int
bench_run(struct mc_bench_run *run, char *why, size_t whylen, size_t n,
    const long long *triples)
{
	static char	text[1 << 20];
	size_t		at = 1, i;

	text[0] = '[';
	for (i = 0; i < n; i++) {
		at += bench_object(text + at, sizeof text - at - 2,
		    triples[3 * i], triples[3 * i + 1],
		    (size_t)triples[3 * i + 2]);
		text[at++] = i + 1 < n ? ',' : ']';
	}
	text[at] = '\0';
	if (n == 0)
		snprintf(text, sizeof text, "[]");
	return mc_bench_parse(text, run, why, whylen);
}

/*
 * The limits of what bench reads, each at its edge and one past: test
 * sizes up to 8 digits, 16 tests, 1024 samples in a run and in the runs
 * merged, an identity of 2047 bytes; no test, a test of no tokens, one
 * named twice.
 */
static void
test_bench_limits(void **state)
{
	static struct mc_bench_run	a, b;
	static long long		many[3 * (MC_BENCH_TESTS_MAX + 1)];
	char				why[4096], name[2100];
	size_t				i, base;

	(void)state;
	assert_int_equal(bench_run(&a, why, sizeof why, 0, NULL), -1);
	assert_non_null(strstr(why, "expected an array of tests"));
	assert_int_equal(bench_run(&a, why, sizeof why, 1,
	    (long long[]){ 512, 0, 0 }), -1);
	assert_string_equal(why, "test 0: no \"samples_ts\" (llama-bench -o "
	    "json)");
	assert_int_equal(bench_run(&a, why, sizeof why, 1,
	    (long long[]){ 99999999, 0, 1 }), 0);
	assert_string_equal(a.tests[0].name, "pp99999999");
	assert_int_equal(bench_run(&a, why, sizeof why, 1,
	    (long long[]){ 0, 99999999, 1 }), 0);
	assert_string_equal(a.tests[0].name, "tg99999999");
	assert_int_equal(bench_run(&a, why, sizeof why, 1,
	    (long long[]){ 100000000, 0, 1 }), -1);
	assert_string_equal(why, "test 0: n_prompt or n_gen out of range");
	assert_int_equal(bench_run(&a, why, sizeof why, 1,
	    (long long[]){ 0, 100000000, 1 }), -1);
	assert_string_equal(why, "test 0: n_prompt or n_gen out of range");
	assert_int_equal(bench_run(&a, why, sizeof why, 1,
	    (long long[]){ 1, 1, 1 }), 0);
	assert_string_equal(a.tests[0].name, "pp1+tg1");
	assert_int_equal(bench_run(&a, why, sizeof why, 1,
	    (long long[]){ 0, 0, 1 }), -1);
	assert_string_equal(why, "test 0: neither \"n_prompt\" nor "
	    "\"n_gen\"");
	assert_int_equal(bench_run(&a, why, sizeof why, 2,
	    (long long[]){ 512, 0, 1, 512, 0, 1 }), -1);
	assert_string_equal(why, "test 1: pp512 twice in one run");
	for (i = 0; i <= MC_BENCH_TESTS_MAX; i++) {
		many[3 * i] = (long long)i + 1;
		many[3 * i + 2] = 1;
	}
	assert_int_equal(bench_run(&a, why, sizeof why, MC_BENCH_TESTS_MAX,
	    many), 0);
	assert_int_equal(a.ntests, MC_BENCH_TESTS_MAX);
	assert_int_equal(bench_run(&a, why, sizeof why, MC_BENCH_TESTS_MAX + 1,
	    many), -1);
	assert_string_equal(why, "test 16: more than 16 tests");
	/* Samples: 1024 in a run, and 1024 in runs merged. */
	assert_int_equal(bench_run(&a, why, sizeof why, 1,
	    (long long[]){ 512, 0, MC_BENCH_SAMPLES_MAX }), 0);
	assert_int_equal(bench_run(&a, why, sizeof why, 1,
	    (long long[]){ 512, 0, MC_BENCH_SAMPLES_MAX + 1 }), -1);
	assert_string_equal(why, "test 0: pp512: over 1024 samples");
	assert_int_equal(bench_run(&a, why, sizeof why, 1,
	    (long long[]){ 512, 0, MC_BENCH_SAMPLES_MAX - 1 }), 0);
	assert_int_equal(bench_run(&b, why, sizeof why, 1,
	    (long long[]){ 512, 0, 1 }), 0);
	assert_int_equal(mc_bench_merge(&a, &b, why, sizeof why), 0);
	assert_int_equal(a.tests[0].nsamples, MC_BENCH_SAMPLES_MAX);
	assert_int_equal(mc_bench_merge(&a, &b, why, sizeof why), -1);
	assert_string_equal(why, "pp512: too many samples");
	/* The identity: 2047 bytes and its NUL fit, one more does not. */
	assert_int_equal(parse_one("m", 8, "10", &a, why, sizeof why), 0);
	base = strlen(a.identity) - 1;
	memset(name, 'y', sizeof a.identity - 1 - base);
	name[sizeof a.identity - 1 - base] = '\0';
	assert_int_equal(parse_one(name, 8, "10", &a, why, sizeof why), 0);
	assert_int_equal(strlen(a.identity), sizeof a.identity - 1);
	strcat(name, "y");
	assert_int_equal(parse_one(name, 8, "10", &a, why, sizeof why), -1);
	assert_non_null(strstr(why, "take over 2047 bytes"));
}

static void
test_median(void **state)
{
	const double	odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 };

	(void)state;
	assert_true(mc_bench_median(odd, 3) == 2);
	assert_true(mc_bench_median(even, 4) == 2.5);
}

/*
 * The range bench prints beside each median ("93.06 [91.20-95.31]"): the
 * least and the most sample, wherever they stand, one sample its own.
 */
static void
test_spread(void **state)
{
	static const struct {
		const char	*samples;
		double		 median, lo, hi;
	} cases[] = {
		{ "9, 2, 5", 5, 2, 9 },		/* the first the most */
		{ "1, 7, 4, 3", 3.5, 1, 7 },	/* the first the least */
		{ "4, 6, 2", 4, 2, 6 },		/* the ends last */
		{ "42.5", 42.5, 42.5, 42.5 },
	};
	struct mc_bench_run		 run;
	const struct mc_bench_test	*t;
	char				 why[512];
	size_t				 i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (parse_one("m", 4, cases[i].samples, &run, why,
		    sizeof why) != 0)
			fail_msg("%s: %s", cases[i].samples, why);
		assert_non_null(t = mc_bench_find(&run, "pp512"));
		if (t->median != cases[i].median || t->lo != cases[i].lo ||
		    t->hi != cases[i].hi)
			fail_msg("[%s]: median %g [%g-%g]", cases[i].samples,
			    t->median, t->lo, t->hi);
	}
}

/* The figures of a fixture, read back; the header's lines are '#'. */
static void
kld_of(const char *file, struct mc_kld *k, int want)
{
	char	*text = slurp(file), why[256] = "";
	int	 rc = mc_kld_parse(text, k, why, sizeof why);

	if (rc != want)
		fail_msg("%s: %d, want %d: %s", file, rc, want, why);
	free(text);
}

#define NEAR(a, b)	assert_true(fabs((a) - (b)) < 1e-9)

/* The current format (PR #23572, 2026-05): every figure as printed. */
static void
test_kld_current_format(void **state)
{
	struct mc_kld	k;

	(void)state;
	kld_of(PPL "05_pr23572_sanmai_2026-05_current-format.txt", &k, 0);
	NEAR(k.ppl_q.value, 7.017811);
	NEAR(k.ppl_q.error, 0.078949);
	NEAR(k.ppl_base.value, 6.793059);
	NEAR(k.ln_ratio.value, 0.032550);
	NEAR(k.ratio.value, 1.033085);
	NEAR(k.ratio.error, 0.001837);
	NEAR(k.kld_mean.value, 0.048630);
	NEAR(k.kld_mean.error, 0.001529);
	NEAR(k.kld_max.value, 20.373335);
	NEAR(k.kld_999.value, 4.150642);
	NEAR(k.kld_99.value, 0.445333);
	NEAR(k.kld_median.value, 0.015681);
	NEAR(k.same_top.value, 91.712);
	NEAR(k.same_top.error, 0.122);
	NEAR(k.rms_dp.value, 5.970);
	NEAR(k.rms_dp.error, 0.101);
}

/*
 * Before 2025-09-15 (PR #12557): the 99.0% line twice, the first taken;
 * the ± as the stored copy has it.
 */
static void
test_kld_older_format(void **state)
{
	struct mc_kld	k;

	(void)state;
	kld_of(PPL "03_pr12557_compilade_2025-03_IQ4_XS-master_"
	    "pre-Sep2025-format.txt", &k, 0);
	NEAR(k.ppl_q.value, 10.910139);
	NEAR(k.ppl_q.error, 0.080259);
	NEAR(k.kld_mean.value, 0.042532);
	NEAR(k.kld_999.value, 1.545680);
	NEAR(k.kld_99.value, 0.324855);
	NEAR(k.same_top.value, 89.938);
	NEAR(k.same_top.error, 0.078);
}

/*
 * The error's three spellings (llama.cpp's ±, its "+/-" elsewhere, the
 * "_" of a pasted copy), none at all, labels spaced out, a percent sign;
 * a figure that is not a number is not seen, so its line is missing.
 */
static void
test_kld_spellings(void **state)
{
	struct mc_kld	k;
	char		why[256];
	const char	*text = "Mean PPL(Q)   :  7.017811 +/-1.078949\n"
	    "Mean PPL(base)   : 6.5 _12.25\n"
	    "Mean    KLD:   0.048630 \xc2\xb1" "2.001529\n"
	    "99.9%   KLD:  1.5\n"
	    "Same top p: 91.712 \xc2\xb1 0.078 %\n";

	(void)state;
	assert_int_equal(mc_kld_parse(text, &k, why, sizeof why), 0);
	NEAR(k.ppl_q.value, 7.017811);
	NEAR(k.ppl_q.error, 1.078949);
	NEAR(k.ppl_base.value, 6.5);
	NEAR(k.ppl_base.error, 12.25);
	NEAR(k.kld_mean.value, 0.048630);
	NEAR(k.kld_mean.error, 2.001529);
	NEAR(k.kld_999.value, 1.5);
	NEAR(k.kld_999.error, 0);
	NEAR(k.same_top.value, 91.712);
	NEAR(k.same_top.error, 0.078);
	assert_int_equal(mc_kld_parse("Mean PPL(Q): 7 +/- x\nMean PPL(base): "
	    "6\nMean KLD: n/a\n99.9% KLD: 1\nSame top p: 9\n", &k, why,
	    sizeof why), -1);
	assert_non_null(strstr(why, "no \"Mean PPL(Q)\" line"));
	assert_int_equal(mc_kld_parse("Mean PPL(Q): 7\nMean PPL(base): 6\n"
	    "Mean KLD: n/a\n99.9% KLD: 1\nSame top p: 9\n", &k, why,
	    sizeof why), -1);
	assert_non_null(strstr(why, "no \"Mean KLD\" line"));
}

/*
 * Output cut before its KL block (PR #19661), and the oldest format's
 * labels (PR #5081): refused, naming what is missing.
 */
static void
test_kld_incomplete_refused(void **state)
{
	struct mc_kld	k;
	char		*text, why[256];

	(void)state;
	kld_of(PPL "04_pr19661_AesSedai_2026-02-16_per-chunk-repeated-"
	    "header.txt", &k, -1);
	text = slurp(PPL "04_pr19661_AesSedai_2026-02-16_per-chunk-repeated-"
	    "header.txt");
	assert_int_equal(mc_kld_parse(text, &k, why, sizeof why), -1);
	assert_non_null(strstr(why, "no \"Mean KLD\" line"));
	free(text);
	kld_of(PPL "02_pr5081_ikawrakow_2024-01-22_oldest-format.txt", &k,
	    -1);
	assert_int_equal(mc_kld_parse("", &k, why, sizeof why), -1);
	assert_non_null(strstr(why, "no \"Mean PPL(Q)\" line"));
}

/*
 * Which figures a verdict needs: verify's limits (mean KLD, its 99.9th
 * percentile, same top p) and the two perplexities.  Each line of the
 * current format taken out in turn: a needed one refused by its name,
 * any other read without it.
 */
static void
test_kld_needed(void **state)
{
	static const struct {
		const char	*line;	/* how the line starts */
		const char	*needed;	/* its name in the refusal */
	} lines[] = {
		{ "Mean PPL(Q) ", "Mean PPL(Q)" },
		{ "Mean PPL(base) ", "Mean PPL(base)" },
		{ "Mean ln(PPL(Q)/PPL(base))", NULL },
		{ "Mean PPL(Q)/PPL(base) ", NULL },
		{ "Mean    KLD:", "Mean KLD" },
		{ "Maximum KLD:", NULL },
		{ "99.9%   KLD:", "99.9% KLD" },
		{ "99.0%   KLD:", NULL },
		{ "Median  KLD:", NULL },
		{ "Same top p:", "Same top p" },
		{ "RMS \xce\x94p", NULL },
	};
	char		*text = slurp(PPL "05_pr23572_sanmai_2026-05_current-"
	    "format.txt"), *cut, *at, *end, why[256], want[64];
	struct mc_kld	 k;
	size_t		 i;
	int		 rc;

	(void)state;
	cut = malloc(strlen(text) + 1);
	assert_non_null(cut);
	for (i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		/* The line at the start of a line, once, past the header. */
		at = strstr(strstr(text, "====== Perplexity"), lines[i].line);
		assert_non_null(at);
		assert_true(at[-1] == '\n');
		assert_null(strstr(at + 1, lines[i].line));
		end = strchr(at, '\n') + 1;
		memcpy(cut, text, (size_t)(at - text));
		strcpy(cut + (at - text), end);
		why[0] = '\0';
		rc = mc_kld_parse(cut, &k, why, sizeof why);
		if (lines[i].needed == NULL && rc != 0)
			fail_msg("without \"%s\": %s", lines[i].line, why);
		if (lines[i].needed == NULL)
			continue;
		snprintf(want, sizeof want, "no \"%s\" line", lines[i].needed);
		if (rc != -1 || strstr(why, want) == NULL)
			fail_msg("without \"%s\": %d, %s", lines[i].line, rc,
			    why);
	}
	free(cut);
	free(text);
}

/*
 * The evidence's SHA256SUMS and verify's record of what it ran: FIPS
 * 180-2's vectors (a million 'a's read 64 KiB at a time), whatever errno
 * a call before left (EINTR stale, a read loop would not end at EOF), and
 * a file that cannot be read, named.
 */
static void
test_sha256(void **state)
{
	char		 dir[] = "/tmp/mc-sha.XXXXXX", path[64], hex[MC_SHA256_HEX];
	char		 why[256], *a;
	FILE		*f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/f", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(mc_sha256_file(path, hex, why, sizeof why), 0);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855");
	a = malloc(1000000);
	assert_non_null(a);
	memset(a, 'a', 1000000);
	f = fopen(path, "w");
	assert_int_equal(fwrite(a, 1, 1000000, f), 1000000);
	fclose(f);
	free(a);
	alarm(20);		/* a loop that does not end fails, named */
	errno = EINTR;
	assert_int_equal(mc_sha256_file(path, hex, why, sizeof why), 0);
	alarm(0);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0");
	assert_int_equal(mc_sha256_file(dir, hex, why, sizeof why), -1);
	snprintf(path, sizeof path, "%s: %s", dir, strerror(EISDIR));
	assert_string_equal(why, path);
	snprintf(path, sizeof path, "%s/none", dir);
	assert_int_equal(mc_sha256_file(path, hex, why, sizeof why), -1);
	assert_non_null(strstr(why, strerror(ENOENT)));
	snprintf(path, sizeof path, "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cua_published_ratios),
		cmocka_unit_test(test_other_build_refused),
		cmocka_unit_test(test_not_llama_bench),
		cmocka_unit_test(test_identity_whole),
		cmocka_unit_test(test_samples_and_tests_checked),
		cmocka_unit_test(test_bench_limits),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_kld_current_format),
		cmocka_unit_test(test_kld_older_format),
		cmocka_unit_test(test_kld_spellings),
		cmocka_unit_test(test_kld_incomplete_refused),
		cmocka_unit_test(test_kld_needed),
		cmocka_unit_test(test_sha256),
	};

	return cmocka_run_group_tests_name("bench", tests, NULL, NULL);
}
