/* SPDX-License-Identifier: MIT */
/*
 * Checks for what the ggml of the pinned llama.cpp runs that the older
 * checks do not (docs/ggml-paths.md, drawn from its source): CUMSUM's
 * prefix sums, the sparse flash-attention index kernel's simd_shuffle_up
 * scan, vector flash attention as ggml runs it on any Apple7 device (32
 * splits of the keys, 1-4 SIMD groups a split merged through threadgroup
 * memory, a reduce pass), with the 2 and 4 queries a threadgroup that
 * family 9 adds (ggml tunes the paravirtual device as an M4 Max then),
 * bfloat x bfloat SIMD-group matrices as mul_mm stages them, and the
 * integer simd_max and simd_sum of ARGMAX and COUNT_EQUAL.  Backend-free,
 * each against a CPU reference, as probe_check.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define APPLE6		1006
#define APPLE7		1007
#define APPLE9		1009
#define METAL3		5001
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

/*
 * ggml's gpu_family: the highest Apple family the device answers, asked
 * from Apple21 down (ggml-metal-device.m:1304-1307); 0 when none.
 */
int
probe_gpu_family(const struct probe_answers *answers)
{
	long	f;

	for (f = 1021; f >= 1001; f--)
		if (probe_answer(answers, f))
			return (int)(f - 1000);
	return 0;
}

/*
 * The queries a threadgroup ggml's vector flash attention takes on this
 * device, for a head size of 32: 1, the baseline, on every family
 * (ggml-metal-tuning.cpp:61-63, the GENERIC device has no rows); with
 * gpu_family 9 alone also the M4 Max rows' 2 and 4 (tun.cpp:3656-3661,
 * 3719-3727; rows 2656-2677).  Returns how many, into q.
 */
int
probe_fa_queries(const struct probe_answers *answers, int q[3])
{
	q[0] = 1;
	if (probe_gpu_family(answers) != 9)
		return 1;
	q[1] = 2;
	q[2] = 4;
	return 3;
}

/* The argmax ggml's kernel finds: among the threads (i mod nth) whose
 * first largest value is the row's maximum, the largest such index. */
void
probe_ref_argmax(const float *x, int rows, int n, int nth, float *out)
{
	int	r, t, i, first, best;
	float	max;

	for (r = 0; r < rows; r++) {
		const float *row = x + (size_t)r * n;

		for (max = -INFINITY, i = 0; i < n; i++)
			max = row[i] > max ? row[i] : max;
		for (best = -1, t = 0; t < nth; t++) {
			for (first = -1, i = t; i < n && first < 0; i += nth)
				if (row[i] == max)
					first = i;
			best = first > best ? first : best;
		}
		out[r] = (float)best;
	}
}

/* How many of each row's n pairs are equal. */
void
probe_ref_count_equal(const int32_t *a, const int32_t *b, int rows, int n,
    float *out)
{
	int	r, i, c;

	for (r = 0; r < rows; r++) {
		for (c = 0, i = 0; i < n; i++)
			c += a[r * n + i] == b[r * n + i];
		out[r] = (float)c;
	}
}

/*
 * The bfloat multiply's 32 x 32 operands: small integers, times 2^16 in
 * A's rows and 2^8 in B's columns but the last of each, exact in bfloat
 * and float and past half's largest (65504), so a device that stages
 * bfloat as half overflows; every sum of products is exact in a float
 * accumulator.  C's last element, of the unscaled row and column, is
 * small: one unit off there shows.
 */
void
probe_mm_bf16_data(float *a, float *b, int n)
{
	int	i;

	for (i = 0; i < n; i++) {
		a[i] = (float)((i * 7) % 9 - 4) * (i / 32 == 31 ? 1.0f :
		    65536.0f);
		b[i] = (float)((i * 5) % 7 - 3) * (i % 32 == 31 ? 1.0f :
		    256.0f);
	}
}

void
probe_check_mm_bf16(const struct probe_context *ctx, struct probe_result *r)
{
	static float		a[1024], b[1024], c[1024], want[1024];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels_ggml_bf16,
		.function = "probe_mul_mm_bf16",
		.language_version = PROBE_MSL_3_1, .buffers = { a, b, c },
		.sizes = { sizeof a, sizeof b, sizeof c }, .nbuffers = 3,
		.output = 2, .threadgroup_memory = 2 * 1024 * 2,
		.threadgroups = 1, .threads_per_group = 4 * SIMD_WIDTH,
	};
	int			i;

	/* ggml's mul_mm needs has_simdgroup_mm, bfloat has_bfloat
	 * (ggml-metal-device.m:1118, 1121-1122, 1513). */
	if (!probe_gate(r, probe_answer(ctx->answers, APPLE7) &&
	    (probe_answer(ctx->answers, APPLE6) ||
	    probe_answer(ctx->answers, METAL3)),
	    "the device does not report Apple7 with Apple6 or Metal3"))
		return;
	probe_mm_bf16_data(a, b, 1024);
	for (i = 0; i < 1024; i++)
		c[i] = -1.0f;
	if (!probe_run(ctx, &d, r))
		return;
	probe_ref_matmul(32, a, b, want);
	probe_compare(r, c, want, 1024);
}

#define ARGMAX_ROWS	4
#define ARGMAX_N	1000
#define ARGMAX_NTH	64	/* ggml's nth for 4 rows of 1000 (ops.cpp:5122-5125) */

void
probe_check_argmax(const struct probe_context *ctx, struct probe_result *r)
{
	static float		x[ARGMAX_ROWS * ARGMAX_N];
	float			out[ARGMAX_ROWS], want[ARGMAX_ROWS];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels_ggml,
		.function = "probe_argmax", .buffers = { x, out },
		.sizes = { sizeof x, sizeof out }, .nbuffers = 2, .output = 1,
		.threadgroup_memory = 32 * (sizeof(float) + sizeof(int32_t)),
		.threadgroups = ARGMAX_ROWS, .threads_per_group = ARGMAX_NTH,
	};
	int			i, row;

	if (!probe_gate_reduction(ctx, r))
		return;
	/*
	 * Each row's maximum appears about 19 times, in several threads'
	 * slices: the index is the largest of their first ones.  Row 0 is
	 * all negative.  The indices differ by row and none is 0.
	 */
	for (row = 0; row < ARGMAX_ROWS; row++)
		for (i = 0; i < ARGMAX_N; i++)
			x[row * ARGMAX_N + i] = (float)((i * 37 + row * 11) %
			    53 - (row == 0 ? 60 : 40)) / 4.0f;
	for (i = 0; i < ARGMAX_ROWS; i++)
		out[i] = -2.0f;
	if (!probe_run(ctx, &d, r))
		return;
	probe_ref_argmax(x, ARGMAX_ROWS, ARGMAX_N, ARGMAX_NTH, want);
	probe_compare(r, out, want, ARGMAX_ROWS);
}

#define COUNT_ROWS	8
#define COUNT_N		200
#define COUNT_NTH	256	/* 32 * nsg, nsg from ne00 (dev.cpp:2307-2310) */

void
probe_check_count_equal(const struct probe_context *ctx,
    struct probe_result *r)
{
	static int32_t		a[COUNT_ROWS * COUNT_N], b[COUNT_ROWS * COUNT_N];
	float			out[COUNT_ROWS], want[COUNT_ROWS];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels_ggml,
		.function = "probe_count_equal", .buffers = { a, b, out },
		.sizes = { sizeof a, sizeof b, sizeof out }, .nbuffers = 3,
		.output = 2, .threadgroup_memory = 32 * sizeof(int32_t),
		.threadgroups = COUNT_ROWS, .threads_per_group = COUNT_NTH,
	};
	int			i;

	if (!probe_gate_reduction(ctx, r))
		return;
	/* About one pair in five equal, a different count each row. */
	for (i = 0; i < COUNT_ROWS * COUNT_N; i++) {
		a[i] = (i * 7) % 5 - 2;
		b[i] = (i * 3 + i / COUNT_N) % 5 - 2 + (i % 11 == 0);
	}
	for (i = 0; i < COUNT_ROWS; i++)
		out[i] = -1.0f;
	if (!probe_run(ctx, &d, r))
		return;
	probe_ref_count_equal(a, b, COUNT_ROWS, COUNT_N, want);
	probe_compare(r, out, want, COUNT_ROWS);
}

/* The sort kernels' constants (probe_kernels_sort). */
#define SORT_N		3000	/* wider than a threadgroup: 3 blocks, 2 merges */
#define SORT_ROWS	2
#define SORT_NTH	1024	/* the power of two >= ne00, at most 1024
				   (ggml-metal-ops.cpp:5157-5160) */
#define SORT_MERGE_NTH	512	/* ops.cpp:5230 */
#define TOPK_N		4096	/* past 2048, k past 64: the radix select */
#define TOPK_K		100	/* (ops.cpp:5418-5419) */
#define TOPK_NTH	1024	/* ops.cpp:5377 */
#define TOPK_SMEM	(1024 + 16 + 16 + 16)	/* ops.cpp:5391-5394 */

/* The indices of x's n values, largest first (the values are distinct). */
void
probe_ref_argsort(const float *x, int n, int32_t *out)
{
	int	i, j;
	int32_t	v;

	for (i = 0; i < n; i++) {
		for (v = i, j = i; j > 0 && x[out[j - 1]] < x[v]; j--)
			out[j] = out[j - 1];
		out[j] = v;
	}
}

/* Indices are compared exactly: one off is another token. */
static void
probe_compare_index(struct probe_result *r, const int32_t *got,
    const int32_t *want, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (got[i] != want[i]) {
			snprintf(r->error, sizeof r->error, "wrong result: "
			    "element %zu is %d, the CPU reference says %d", i,
			    (int)got[i], (int)want[i]);
			r->correct = false;
			return;
		}
	r->correct = true;
}

/* Distinct values, negative and positive, a different order each row. */
static void
probe_sort_data(float *x, int rows, int n, int prime)
{
	int	row, i;

	for (row = 0; row < rows; row++)
		for (i = 0; i < n; i++)
			x[row * n + i] = (float)((i * 1237 + row * 101) % prime -
			    prime / 2) / 8.0f;
}

/*
 * ARGSORT as ggml runs it on a row wider than a threadgroup: each block
 * of 1024 sorted in threadgroup memory (the last padded), then merge
 * passes of runs of 1024 and 2048, to and fro between two buffers.
 */
void
probe_check_argsort(const struct probe_context *ctx, struct probe_result *r)
{
	static float		x[SORT_ROWS * SORT_N];
	static int32_t		a[SORT_ROWS * SORT_N], b[SORT_ROWS * SORT_N];
	static int32_t		want[SORT_ROWS * SORT_N];
	int32_t			len;
	struct probe_dispatch	sort = {
		.label = r->name, .source = probe_kernels_sort,
		.function = "probe_argsort", .buffers = { x, a },
		.sizes = { sizeof x, sizeof a }, .nbuffers = 2, .output = 1,
		.threadgroup_memory = SORT_NTH * sizeof(int32_t),
		.threadgroups = (SORT_N + SORT_NTH - 1) / SORT_NTH * SORT_ROWS,
		.threads_per_group = SORT_NTH,
	}, merge = {
		.label = r->name, .source = probe_kernels_sort,
		.function = "probe_argsort_merge", .nbuffers = 4, .output = 2,
		.threads_per_group = SORT_MERGE_NTH,
	};
	int32_t			*in = a, *out = b, *t;
	int			i;

	probe_sort_data(x, SORT_ROWS, SORT_N, 3001);
	for (i = 0; i < SORT_ROWS * SORT_N; i++)
		a[i] = b[i] = -1;
	if (!probe_run(ctx, &sort, r))
		return;
	for (len = SORT_NTH; len < SORT_N; len *= 2) {
		merge.buffers[0] = x;
		merge.buffers[1] = in;
		merge.buffers[2] = out;
		merge.buffers[3] = &len;
		merge.sizes[0] = sizeof x;
		merge.sizes[1] = merge.sizes[2] = sizeof a;
		merge.sizes[3] = sizeof len;
		merge.threadgroups = (unsigned long)((SORT_N + 2 * len - 1) /
		    (2 * len) * SORT_ROWS);
		if (!probe_run(ctx, &merge, r))
			return;
		t = in;
		in = out;
		out = t;
	}
	for (i = 0; i < SORT_ROWS; i++)
		probe_ref_argsort(x + i * SORT_N, SORT_N, want + i * SORT_N);
	probe_compare_index(r, in, want, SORT_ROWS * SORT_N);
}

/* Ascending, in place: the order the radix select's atomics place its
 * k indices in is the device's, the set is not. */
static void
probe_sort_index(int32_t *v, int n)
{
	int	i, j;
	int32_t	t;

	for (i = 1; i < n; i++) {
		for (t = v[i], j = i; j > 0 && v[j - 1] > t; j--)
			v[j] = v[j - 1];
		v[j] = t;
	}
}

/* TOP_K by ggml's radix select: the 100 largest of each row of 4096. */
void
probe_check_top_k(const struct probe_context *ctx, struct probe_result *r)
{
	static float		x[SORT_ROWS * TOPK_N];
	static int32_t		out[SORT_ROWS * TOPK_K], all[TOPK_N];
	static int32_t		want[SORT_ROWS * TOPK_K];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels_sort,
		.function = "probe_top_k", .buffers = { x, out },
		.sizes = { sizeof x, sizeof out }, .nbuffers = 2, .output = 1,
		.threadgroup_memory = TOPK_SMEM, .threadgroups = SORT_ROWS,
		.threads_per_group = TOPK_NTH,
	};
	int			i;

	probe_sort_data(x, SORT_ROWS, TOPK_N, 4099);
	for (i = 0; i < SORT_ROWS * TOPK_K; i++)
		out[i] = -1;
	if (!probe_run(ctx, &d, r))
		return;
	for (i = 0; i < SORT_ROWS; i++) {
		probe_ref_argsort(x + i * TOPK_N, TOPK_N, all);
		memcpy(want + i * TOPK_K, all, TOPK_K * sizeof *all);
		probe_sort_index(want + i * TOPK_K, TOPK_K);
		probe_sort_index(out + i * TOPK_K, TOPK_K);
	}
	probe_compare_index(r, out, want, SORT_ROWS * TOPK_K);
}

/* The kernels' constants (probe_kernels_ggml). */
#define FA_DIM		32
#define FA_SPLITS	32	/* nwg, whatever the family (ops.cpp:3601-3607) */
#define FA_KEYS		4096
#define FA_ROWS		8

/* Say which of the flash-attention dispatches went wrong. */
static void
probe_fa_note(struct probe_result *r, int q, int nsg)
{
	size_t	len = strlen(r->error);

	snprintf(r->error + len, sizeof r->error - len, " (%d quer%s a "
	    "threadgroup, %d SIMD group%s a split)", q, q == 1 ? "y" : "ies",
	    nsg, nsg == 1 ? "" : "s");
}

/* One configuration: the split, then the reduce; false on a failure. */
static bool
probe_fa_run(const struct probe_context *ctx, struct probe_result *r,
    const float *const in[3], float *tmp, size_t tmpsize, float *out,
    int q, int nsg)
{
	struct probe_dispatch	split = {
		.label = r->name, .source = probe_kernels_ggml,
		.function = "probe_fa_split",
		.buffers = { (void *)in[0], (void *)in[1], (void *)in[2], tmp },
		.sizes = { FA_ROWS * FA_DIM * sizeof(float),
		    FA_KEYS * FA_DIM * sizeof(float),
		    FA_KEYS * FA_DIM * sizeof(float), tmpsize },
		.nbuffers = 4, .output = 3,
		/* ggml's FATTN_SMEM(nsg) for head size 32 (padded to 128):
		 * PAD((128 + 4*32 + 2*128) * nsg * q * 2, 16), ops.cpp:3574;
		 * more than the kernel uses, as a dispatch of ggml's would. */
		.threadgroup_memory = (size_t)512 * nsg * q * 2,
		.threadgroups = FA_ROWS / q * FA_SPLITS,
		.threads_per_group = (unsigned long)nsg * SIMD_WIDTH,
	}, reduce = {
		.label = r->name, .source = probe_kernels_ggml,
		.function = "probe_fa_reduce", .buffers = { tmp, out },
		.sizes = { tmpsize, FA_ROWS * FA_DIM * sizeof(float) },
		.nbuffers = 2, .output = 1, .threadgroups = FA_ROWS,
		.threads_per_group = FA_SPLITS * SIMD_WIDTH,
	};
	int			i;

	for (i = 0; i < FA_ROWS * FA_DIM; i++)
		out[i] = -1.0f;
	if (!probe_run(ctx, &split, r) || !probe_run(ctx, &reduce, r)) {
		probe_fa_note(r, q, nsg);
		return false;
	}
	return true;
}

void
probe_check_fa_split(const struct probe_context *ctx, struct probe_result *r)
{
	static float		q[FA_ROWS * FA_DIM], k[FA_KEYS * FA_DIM];
	static float		v[FA_KEYS * FA_DIM], want[FA_ROWS * FA_DIM];
	static float		tmp[FA_ROWS * FA_DIM * FA_SPLITS +
	    FA_ROWS * 2 * FA_SPLITS], out[FA_ROWS * FA_DIM];
	const float *const	in[3] = { q, k, v };
	int			queries[3], nq, iq, nsg, i;

	/* FLASH_ATTN_EXT needs has_simdgroup_mm (ggml-metal-device.m:1741). */
	if (!probe_gate(r, probe_answer(ctx->answers, APPLE7),
	    "the device does not report Apple7"))
		return;
	/*
	 * Scores of a few units: a softmax peaked enough that its output is
	 * far from the values' mean, and values far from zero, so that a
	 * device writing zeros, or one percent off, cannot pass.
	 */
	for (i = 0; i < FA_ROWS * FA_DIM; i++)
		q[i] = (float)((i * 7) % 11 - 5) / 2.0f;
	for (i = 0; i < FA_KEYS * FA_DIM; i++) {
		k[i] = (float)((i * 13) % 17 - 8) / 4.0f;
		v[i] = (float)((i * 5) % 9 + 4) / 4.0f;
	}
	probe_ref_attention(q, k, v, FA_ROWS, FA_KEYS, FA_DIM, 0.125f, want);
	nq = probe_fa_queries(ctx->answers, queries);
	/* nsg 1, 2 and 4: what ggml picks as the keys grow (ops.cpp:3601-3607). */
	for (iq = 0; iq < nq; iq++)
		for (nsg = 1; nsg <= 4; nsg *= 2) {
			if (!probe_fa_run(ctx, r, in, tmp, sizeof tmp, out,
			    queries[iq], nsg))
				return;
			probe_compare(r, out, want, FA_ROWS * FA_DIM);
			if (!r->correct) {
				probe_fa_note(r, queries[iq], nsg);
				return;
			}
		}
}
