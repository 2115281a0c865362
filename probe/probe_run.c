/* SPDX-License-Identifier: MIT */
/*
 * What every check shares (probe_check.c, probe_check_ggml.c): the
 * families asked and the device's answers to them, and running a
 * dispatch through the backend and judging its output against a CPU
 * reference.  Backend-free.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "probe.h"

#define APPLE7		1007
#define METAL3		5001

/*
 * Every family ggml asks: Apple21 down to Apple1 (the first yes is its
 * gpu_family), Common 3006 down and Metal 5006 down for its log
 * (ggml-metal-device.m:1304-1324 of the pinned llama.cpp); and Mac2.
 */
const long probe_families[] = {
	1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010,
	1011, 1012, 1013, 1014, 1015, 1016, 1017, 1018, 1019, 1020, 1021,
	2001, 2002, 3001, 3002, 3003, 3004, 3005, 3006,
	5001, 5002, 5003, 5004, 5005, 5006,
};
const size_t probe_nfamilies = sizeof probe_families / sizeof probe_families[0];

static int
probe_family_index(long family)
{
	size_t	i;

	for (i = 0; i < probe_nfamilies; i++)
		if (probe_families[i] == family)
			return (int)i;
	return -1;
}

bool
probe_answer(const struct probe_answers *answers, long family)
{
	int	i = probe_family_index(family);

	return i >= 0 && answers->family[i];
}

void
probe_answers_read(struct probe_device *device, struct probe_answers *answers)
{
	size_t	i;

	memset(answers, 0, sizeof *answers);
	probe_backend.device_name(device, answers->device,
	    sizeof answers->device);
	for (i = 0; i < probe_nfamilies; i++)
		answers->family[i] = probe_backend.supports_family(device,
		    probe_families[i]);
	answers->threadgroup_memory = probe_backend.threadgroup_memory(device);
	answers->working_set = probe_backend.working_set(device);
}

/* --- running a dispatch ---------------------------------------------------- */

bool
probe_gate(struct probe_result *r, bool supported, const char *why)
{
	if (supported)
		return true;
	r->skipped = true;
	snprintf(r->error, sizeof r->error, "not run: %s", why);
	return false;
}

/* Apple7 or Metal3: ggml's has_simdgroup_reduction. */
bool
probe_gate_reduction(const struct probe_context *ctx, struct probe_result *r)
{
	return probe_gate(r, probe_answer(ctx->answers, APPLE7) ||
	    probe_answer(ctx->answers, METAL3),
	    "the device reports neither Apple7 nor Metal3");
}

/* Dispatch and copy the outcome; true when the kernel completed. */
bool
probe_run(const struct probe_context *ctx, const struct probe_dispatch *d,
    struct probe_result *r)
{
	struct probe_outcome	o;

	memset(&o, 0, sizeof o);
	probe_backend.dispatch(ctx->device, d, &o);
	r->compiled = o.compiled;
	r->pipeline = o.pipeline;
	r->ran = o.ran;
	if (!o.ran)
		snprintf(r->error, sizeof r->error, "%s", o.error[0] ?
		    o.error : "the kernel did not complete");
	return o.ran;
}

/*
 * Is got within the relative tolerance of want?  Asked as "close", never
 * as "far": every comparison with a NaN is false, so a NaN can only fail;
 * an infinity is refused by name.
 */
bool
probe_close(float got, float want)
{
	return isfinite(got) && isfinite(want) &&
	    fabsf(got - want) <= 1e-3f * (1.0f + fabsf(want));
}

/* Compare n floats; on a mismatch say where. */
void
probe_compare(struct probe_result *r, const float *got, const float *want,
    size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (!probe_close(got[i], want[i])) {
			snprintf(r->error, sizeof r->error, "wrong result: "
			    "element %zu is %g, the CPU reference says %g", i,
			    (double)got[i], (double)want[i]);
			r->correct = false;
			return;
		}
	r->correct = true;
}

/* C = A x B for n x n matrices (row-major), summed in double. */
void
probe_ref_matmul(int n, const float *a, const float *b, float *c)
{
	int	i, j, k;
	double	acc;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			for (acc = 0, k = 0; k < n; k++)
				acc += (double)a[i * n + k] * b[k * n + j];
			c[i * n + j] = (float)acc;
		}
}
