/* SPDX-License-Identifier: MIT */
/*
 * Profile auto's judgement of its measurements (daemon/measure.c runs
 * them): which option is fastest, from llama-bench's figures as
 * state/measured.json keeps them, each test {"median", "lo", "hi"} in
 * tokens per second.  A higher option takes the place of a lower one
 * only when faster by more than the noise: a tie keeps the lower, which
 * asks less of the device.  No event loop: tested on its own.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "mc_util.h"
#include "policy.h"

/* The half-range of a test's samples, against its median. */
static double
measure_spread(json_t *t)
{
	double	med = json_number_value(json_object_get(t, "median"));

	return med > 0 ? (json_number_value(json_object_get(t, "hi")) -
	    json_number_value(json_object_get(t, "lo"))) / (2 * med) : 0;
}

/*
 * How much faster a is than b: the mean of their tests' median ratios,
 * over the tests both ran (prompt and generation weigh alike); and the noise that ratio must
 * clear, MEASURE_NOISE or the two runs' spreads added, if larger.  0
 * when they share no test.
 */
double
measure_ratio(json_t *a, json_t *b, double *noise)
{
	json_t		*ta, *tb;
	const char	*name;
	double		 sum = 0, x, y;
	int		 n = 0;

	*noise = MEASURE_NOISE;
	json_object_foreach(a, name, ta) {
		if ((tb = json_object_get(b, name)) == NULL)
			continue;
		x = json_number_value(json_object_get(ta, "median"));
		y = json_number_value(json_object_get(tb, "median"));
		if (x <= 0 || y <= 0)
			continue;
		sum += x / y;
		n++;
		if (measure_spread(ta) + measure_spread(tb) > *noise)
			*noise = measure_spread(ta) + measure_spread(tb);
	}
	return n ? sum / n : 0;
}

/*
 * The fastest of the options named (lowest first) in a measurement's
 * figures: each higher one takes the place only when faster than the
 * one holding it by more than the noise.  NULL when none has figures.
 * Each step's words go to reason.
 */
const char *
measure_pick(json_t *opts, const char *const *names, size_t n, char *reason,
    size_t len)
{
	const char	*best = NULL, *err;
	json_t		*o, *tests, *held = NULL;
	double		 r, noise;
	size_t		 i, at;

	reason[0] = '\0';
	for (i = 0; i < n; i++) {
		at = strlen(reason);
		o = json_object_get(opts, names[i]);
		tests = json_object_get(o, "tests");
		if (json_object_size(tests) == 0) {
			err = json_string_value(json_object_get(o, "error"));
			mc_fmt(reason + at, len - at, "%s%s not measured (%s)",
			    at ? "; " : "", names[i], err ? err : "no figures");
			continue;
		}
		if (best == NULL) {
			best = names[i];
			held = tests;
			continue;
		}
		r = measure_ratio(tests, held, &noise);
		mc_fmt(reason + at, len - at, "%s%s %.2fx %s%s", at ? "; " : "",
		    names[i], r, best, r > 1 + noise ? "" : r < 1 - noise ?
		    ", slower" : ", inside the noise");
		if (r > 1 + noise) {
			best = names[i];
			held = tests;
		}
	}
	return best;
}

