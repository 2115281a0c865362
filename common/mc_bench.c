/* SPDX-License-Identifier: MIT */
/*
 * llama-bench's JSON output (-o json: an array of one object per test,
 * each with n_prompt, n_gen and samples_ts) read for a stock-against-
 * unlocked comparison.  A run's identity is what must be equal for two
 * runs to be compared: the model by its type, size and parameters (not
 * its path, which differs between machines), the build, and the settings
 * that change throughput.  Medians are of the samples, as Cua published.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mc_bench.h"
#include "mc_util.h"

/*
 * The keys of a run's identity, in the order they are written: the first
 * four every llama-bench has written; the settings may be missing from
 * older builds (n_depth came in 2025), and are then compared as null.
 */
static const char *const mc_bench_identity_keys[] = {
	"model_type", "model_size", "model_n_params", "build_commit",
	"n_threads", "n_gpu_layers", "n_batch", "n_ubatch", "flash_attn",
	"type_k", "type_v", "n_depth",
};
#define MC_BENCH_REQUIRED	4

static int
mc_bench_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
mc_bench_median(const double *v, size_t n)
{
	double	*s, m;

	if (n == 0)
		return 0;
	s = malloc(n * sizeof *s);
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, mc_bench_cmp);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

/* Unlocked over stock, by their medians; 0 when stock has none. */
double
mc_bench_ratio(const struct mc_bench_test *stock,
    const struct mc_bench_test *unlocked)
{
	return stock->median > 0 ? unlocked->median / stock->median : 0;
}

static void
mc_bench_summarize(struct mc_bench_test *t)
{
	size_t	i;

	t->median = mc_bench_median(t->samples, t->nsamples);
	t->lo = t->hi = t->nsamples ? t->samples[0] : 0;
	for (i = 1; i < t->nsamples; i++) {
		if (t->samples[i] < t->lo)
			t->lo = t->samples[i];
		if (t->samples[i] > t->hi)
			t->hi = t->samples[i];
	}
}

/*
 * "key=value, ..." of the identity keys; -1 when a required one is
 * missing, or when it does not fit (a cut identity would compare equal
 * while the settings after the cut differ).
 */
static int
mc_bench_identity(json_t *o, char *buf, size_t len, char *why, size_t whylen)
{
	size_t	 i, n = 0;
	json_t	*v;
	char	*text;
	int	 w;

	buf[0] = '\0';
	for (i = 0; i < sizeof mc_bench_identity_keys /
	    sizeof mc_bench_identity_keys[0]; i++) {
		v = json_object_get(o, mc_bench_identity_keys[i]);
		if (v == NULL && i < MC_BENCH_REQUIRED) {
			snprintf(why, whylen, "no \"%s\"",
			    mc_bench_identity_keys[i]);
			return -1;
		}
		text = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
		w = snprintf(buf + n, len - n, "%s%s=%s", i ? ", " : "",
		    mc_bench_identity_keys[i], text ? text : "null");
		free(text);
		if (w < 0 || (size_t)w >= len - n) {
			snprintf(why, whylen, "the model, build and settings "
			    "take over %zu bytes", len - 1);
			return -1;
		}
		n += (size_t)w;
	}
	return 0;
}

static struct mc_bench_test *
mc_bench_test_for(struct mc_bench_run *run, const char *name)
{
	struct mc_bench_test	*t = (struct mc_bench_test *)mc_bench_find(run,
	    name);

	if (t != NULL || run->ntests == MC_BENCH_TESTS_MAX)
		return t;
	t = &run->tests[run->ntests++];
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "%s", name);
	return t;
}

/* Whether two runs hold the same tests (by name, in any order). */
bool
mc_bench_same_tests(const struct mc_bench_run *a, const struct mc_bench_run *b)
{
	size_t	i;

	if (a->ntests != b->ntests)
		return false;
	for (i = 0; i < a->ntests; i++)
		if (mc_bench_find(b, a->tests[i].name) == NULL)
			return false;
	return true;
}

const struct mc_bench_test *
mc_bench_find(const struct mc_bench_run *run, const char *name)
{
	size_t	i;

	for (i = 0; i < run->ntests; i++)
		if (strcmp(run->tests[i].name, name) == 0)
			return &run->tests[i];
	return NULL;
}

/* One test object: its name from n_prompt and n_gen, its samples. */
static int
mc_bench_object(json_t *o, struct mc_bench_run *run, char *why, size_t whylen)
{
	json_t			*samples = json_object_get(o, "samples_ts"), *v;
	json_int_t		 pp = json_integer_value(json_object_get(o,
	    "n_prompt")), tg = json_integer_value(json_object_get(o, "n_gen"));
	struct mc_bench_test	*t;
	char			 name[64];
	size_t			 i;

	if (!json_is_array(samples) || json_array_size(samples) == 0) {
		snprintf(why, whylen, "no \"samples_ts\" (llama-bench -o json)");
		return -1;
	}
	if (pp > 99999999 || tg > 99999999) {
		snprintf(why, whylen, "n_prompt or n_gen out of range");
		return -1;
	}
	if (pp > 0 && tg > 0)
		snprintf(name, sizeof name, "pp%lld+tg%lld", (long long)pp,
		    (long long)tg);
	else if (pp > 0)
		snprintf(name, sizeof name, "pp%lld", (long long)pp);
	else if (tg > 0)
		snprintf(name, sizeof name, "tg%lld", (long long)tg);
	else {
		snprintf(why, whylen, "neither \"n_prompt\" nor \"n_gen\"");
		return -1;
	}
	if ((t = mc_bench_test_for(run, name)) == NULL) {
		snprintf(why, whylen, "more than %d tests", MC_BENCH_TESTS_MAX);
		return -1;
	}
	if (t->nsamples > 0) {
		snprintf(why, whylen, "%s twice in one run", name);
		return -1;
	}
	json_array_foreach(samples, i, v) {
		if (i == MC_BENCH_SAMPLES_MAX) {
			snprintf(why, whylen, "%s: over %d samples", name,
			    MC_BENCH_SAMPLES_MAX);
			return -1;
		}
		/* A rate is finite and positive, or the median means nothing. */
		if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
		    json_number_value(v) <= 0 || json_number_value(v) > 1e12) {
			snprintf(why, whylen, "%s: samples_ts[%zu] is not a "
			    "tokens-per-second figure", name, i);
			return -1;
		}
		t->samples[t->nsamples++] = json_number_value(v);
	}
	mc_bench_summarize(t);
	return 0;
}

/* A string of the record, printable and cut on a character boundary. */
static void
mc_bench_string(json_t *o, const char *key, char *buf, size_t len)
{
	const char	*s = json_string_value(json_object_get(o, key));

	mc_text(buf, len, s != NULL ? s : "");
}

static void
mc_bench_record(json_t *o, struct mc_bench_run *run)
{
	mc_bench_string(o, "model_type", run->model_type,
	    sizeof run->model_type);
	mc_bench_string(o, "model_filename", run->model_file,
	    sizeof run->model_file);
	mc_bench_string(o, "gpu_info", run->gpu_info, sizeof run->gpu_info);
	mc_bench_string(o, "build_commit", run->build, sizeof run->build);
	run->build_number = (long long)json_integer_value(json_object_get(o,
	    "build_number"));
}

/* Read llama-bench's JSON into run; -1 and why (the field) if it is not. */
int
mc_bench_parse(const char *text, struct mc_bench_run *run, char *why,
    size_t whylen)
{
	json_t		*doc, *o;
	json_error_t	 err;
	char		 identity[sizeof run->identity], what[256];
	size_t		 i;
	int		 rc = -1;

	memset(run, 0, sizeof *run);
	if ((doc = json_loads(text, 0, &err)) == NULL) {
		snprintf(why, whylen, "not JSON: line %d: %s", err.line,
		    err.text);
		return -1;
	}
	if (!json_is_array(doc) || json_array_size(doc) == 0) {
		snprintf(why, whylen, "not llama-bench -o json: expected an "
		    "array of tests");
		goto out;
	}
	json_array_foreach(doc, i, o) {
		if (!json_is_object(o) || mc_bench_identity(o, identity,
		    sizeof identity, what, sizeof what) == -1 ||
		    mc_bench_object(o, run, what, sizeof what) == -1) {
			snprintf(why, whylen, "test %zu: %s", i,
			    json_is_object(o) ? what : "not an object");
			goto out;
		}
		if (i == 0) {
			memcpy(run->identity, identity, sizeof identity);
			mc_bench_record(o, run);
		}
		else if (strcmp(run->identity, identity) != 0) {
			snprintf(why, whylen, "test %zu: another model, build "
			    "or settings than test 0 (a sweep: bench compares "
			    "one setting at a time, so give llama-bench single "
			    "values, not lists)", i);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(doc);
	return rc;
}

/* Add another run of the same model, build and settings to into. */
int
mc_bench_merge(struct mc_bench_run *into, const struct mc_bench_run *run,
    char *why, size_t whylen)
{
	const struct mc_bench_test	*t;
	struct mc_bench_test		*u;
	size_t				 i, k;

	if (into->ntests == 0) {
		*into = *run;
		return 0;
	}
	if (strcmp(into->identity, run->identity) != 0) {
		snprintf(why, whylen, "the runs differ: %s; against %s",
		    into->identity, run->identity);
		return -1;
	}
	if (!mc_bench_same_tests(into, run)) {
		snprintf(why, whylen, "the runs hold different tests");
		return -1;
	}
	for (i = 0; i < run->ntests; i++) {
		t = &run->tests[i];
		if ((u = mc_bench_test_for(into, t->name)) == NULL ||
		    u->nsamples + t->nsamples > MC_BENCH_SAMPLES_MAX) {
			snprintf(why, whylen, "%s: too many samples", t->name);
			return -1;
		}
		for (k = 0; k < t->nsamples; k++)
			u->samples[u->nsamples++] = t->samples[k];
		mc_bench_summarize(u);
	}
	return 0;
}
