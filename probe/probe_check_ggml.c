/* SPDX-License-Identifier: MIT */
/*
 * Checks for what the ggml of the pinned llama.cpp runs that the older
 * checks do not (docs/ggml-paths.md, drawn from its source): CUMSUM's
 * prefix sums, the sparse flash-attention index kernel's simd_shuffle_up
 * scan, and vector flash attention with four queries a threadgroup and a
 * split-and-reduce pass, the path the apple9 profile opens (with family 9
 * ggml tunes the paravirtual device as an M4 Max).  Backend-free, each
 * against a CPU reference, as probe_check.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define APPLE7		1007
#define SIMD_WIDTH	32

/* --- CPU references -------------------------------------------------------- */

/* The inclusive running sum of x within each group of group values. */
void
probe_ref_cumsum(const float *x, int n, int group, float *out)
{
	double	acc = 0;
	int	i;

	for (i = 0; i < n; i++) {
		if (i % group == 0)
			acc = 0;
		acc += x[i];
		out[i] = (float)acc;
	}
}

/* Where each lane's entries start: the exclusive running sum of the
 * whole counts within each SIMD group of width. */
void
probe_ref_offsets(const float *cnt, int n, int width, float *out)
{
	int	i, acc = 0;

	for (i = 0; i < n; i++) {
		if (i % width == 0)
			acc = 0;
		out[i] = (float)acc;
		acc += (int)cnt[i];
	}
}

/* softmax(scale * q k^T) v, row by row, in double. */
void
probe_ref_attention(const float *q, const float *k, const float *v,
    int rows, int keys, int dim, float scale, float *out)
{
	double	*s = malloc((size_t)keys * sizeof *s), max, sum, acc;
	int	 r, j, d;

	for (r = 0; s != NULL && r < rows; r++) {
		max = -1e300;
		for (j = 0; j < keys; j++) {
			for (acc = 0, d = 0; d < dim; d++)
				acc += (double)q[r * dim + d] * k[j * dim + d];
			s[j] = acc * scale;
			if (s[j] > max)
				max = s[j];
		}
		for (sum = 0, j = 0; j < keys; j++)
			sum += (s[j] = exp(s[j] - max));
		for (d = 0; d < dim; d++) {
			for (acc = 0, j = 0; j < keys; j++)
				acc += s[j] * v[j * dim + d];
			out[r * dim + d] = (float)(acc / sum);
		}
	}
	free(s);
}

/* --- the checks ------------------------------------------------------------ */

#define CUMSUM_THREADS	256	/* 8 SIMD groups, as ggml's nth */
#define CUMSUM_GROUPS	2

void
probe_check_cumsum(const struct probe_context *ctx, struct probe_result *r)
{
	static float		x[CUMSUM_GROUPS * CUMSUM_THREADS];
	static float		out[CUMSUM_GROUPS * CUMSUM_THREADS];
	static float		want[CUMSUM_GROUPS * CUMSUM_THREADS];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels_ggml,
		.function = "probe_cumsum", .buffers = { x, out },
		.sizes = { sizeof x, sizeof out }, .nbuffers = 2, .output = 1,
		.threadgroup_memory = 32 * sizeof(float),
		.threadgroups = CUMSUM_GROUPS,
		.threads_per_group = CUMSUM_THREADS,
	};
	int			i;

	if (!probe_gate_reduction(ctx, r))
		return;
	/* Small integers: every partial sum is exact in float. */
	for (i = 0; i < CUMSUM_GROUPS * CUMSUM_THREADS; i++) {
		x[i] = (float)((i * 11) % 13 - 5);
		out[i] = -1.0f;
	}
	if (!probe_run(ctx, &d, r))
		return;
	probe_ref_cumsum(x, CUMSUM_GROUPS * CUMSUM_THREADS, CUMSUM_THREADS,
	    want);
	probe_compare(r, out, want, CUMSUM_GROUPS * CUMSUM_THREADS);
}

void
probe_check_shuffle_up(const struct probe_context *ctx,
    struct probe_result *r)
{
	float			cnt[4 * SIMD_WIDTH], out[4 * SIMD_WIDTH];
	float			want[4 * SIMD_WIDTH];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels_ggml,
		.function = "probe_shuffle_up", .buffers = { cnt, out },
		.sizes = { sizeof cnt, sizeof out }, .nbuffers = 2,
		.output = 1, .threadgroups = 2,
		.threads_per_group = 2 * SIMD_WIDTH,
	};
	int			i;

	if (!probe_gate_reduction(ctx, r))
		return;
	for (i = 0; i < 4 * SIMD_WIDTH; i++) {
		cnt[i] = (float)((i * 7) % 5 + 1);
		out[i] = -1.0f;
	}
	if (!probe_run(ctx, &d, r))
		return;
	probe_ref_offsets(cnt, 4 * SIMD_WIDTH, SIMD_WIDTH, want);
	probe_compare(r, out, want, 4 * SIMD_WIDTH);
}

/* The kernels' constants (probe_kernels_ggml). */
#define FA_DIM		32
#define FA_Q		4
#define FA_SPLITS	32
#define FA_KEYS		(FA_SPLITS * 2 * 32)
#define FA_ROWS		8
/*
 * ggml's threadgroup memory for the M4 Max rows that take 4 queries with
 * head size 128 and 4 SIMD groups: PAD((128 + 4*32 + 2*128) * 4 * 4 * 2,
 * 16) (ggml-metal-ops.cpp:3574), the most any of them asks on this
 * device; more than this check uses, as a dispatch of ggml's would be.
 */
#define FA_TG_MEMORY	16384

void
probe_check_fa_split(const struct probe_context *ctx, struct probe_result *r)
{
	static float		q[FA_ROWS * FA_DIM], k[FA_KEYS * FA_DIM];
	static float		v[FA_KEYS * FA_DIM], want[FA_ROWS * FA_DIM];
	static float		tmp[FA_ROWS * FA_DIM * FA_SPLITS +
	    FA_ROWS * 2 * FA_SPLITS], out[FA_ROWS * FA_DIM];
	struct probe_dispatch	split = {
		.label = r->name, .source = probe_kernels_ggml,
		.function = "probe_fa_split", .buffers = { q, k, v, tmp },
		.sizes = { sizeof q, sizeof k, sizeof v, sizeof tmp },
		.nbuffers = 4, .output = 3, .threadgroup_memory = FA_TG_MEMORY,
		.threadgroups = FA_ROWS / FA_Q * FA_SPLITS,
		.threads_per_group = FA_Q * SIMD_WIDTH,
	}, reduce = {
		.label = r->name, .source = probe_kernels_ggml,
		.function = "probe_fa_reduce", .buffers = { tmp, out },
		.sizes = { sizeof tmp, sizeof out }, .nbuffers = 2,
		.output = 1, .threadgroups = FA_ROWS,
		.threads_per_group = FA_SPLITS * SIMD_WIDTH,
	};
	int			i;

	if (!probe_gate(r, probe_answer(ctx->answers, APPLE7),
	    "the device does not report Apple7"))
		return;
	/*
	 * Scores of a few units: a softmax peaked enough that its output is
	 * far from the values' mean, and values far from zero, so that a
	 * device writing zeros, or one percent off, cannot pass.
	 */
	for (i = 0; i < FA_ROWS * FA_DIM; i++) {
		q[i] = (float)((i * 7) % 11 - 5) / 2.0f;
		out[i] = -1.0f;
	}
	for (i = 0; i < FA_KEYS * FA_DIM; i++) {
		k[i] = (float)((i * 13) % 17 - 8) / 4.0f;
		v[i] = (float)((i * 5) % 9 + 4) / 4.0f;
	}
	if (!probe_run(ctx, &split, r) || !probe_run(ctx, &reduce, r))
		return;
	probe_ref_attention(q, k, v, FA_ROWS, FA_KEYS, FA_DIM, 0.125f, want);
	probe_compare(r, out, want, FA_ROWS * FA_DIM);
}
