/* SPDX-License-Identifier: MIT */
/*
 * The catalogue of checks.  Each dispatches a small kernel through the
 * backend and compares its output with a CPU reference, so "supported"
 * means "produced the right numbers", not "the device said yes".
 * Backend-free: the same code runs against Metal and the simulator.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define APPLE6		1006
#define APPLE7		1007
#define METAL3		5001
#define SIMD_WIDTH	32

static void	probe_check_simd_sum(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_simd_mm(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_bfloat(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_simd_reduce(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_mm_half(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_mm_bfloat(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_load_transposed(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_simd_shuffle(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_simd_half(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_tg_control(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_tg_advertised(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_residency(const struct probe_context *,
		    struct probe_result *);
static void	probe_check_invariants(const struct probe_context *,
		    struct probe_result *);

const struct probe_check probe_checks[] = {
	{ "simd_sum", "SIMD-group reduction (needs Apple7 or Metal3)",
	    probe_check_simd_sum },
	{ "simdgroup_matrix", "8x8 SIMD-group multiply-accumulate "
	    "(needs Apple7)", probe_check_simd_mm },
	{ "bfloat", "bfloat arithmetic, MSL 3.1 (needs Apple6 or Metal3)",
	    probe_check_bfloat },
	{ "simd_reduction", "simd_sum and simd_max, as ggml's norms and "
	    "soft_max (needs Apple7 or Metal3)", probe_check_simd_reduce },
	{ "mul_mm_half", "half SIMD-group matrix multiply staged through "
	    "threadgroup memory, as ggml's mul_mm (needs Apple7)",
	    probe_check_mm_half },
	{ "mul_mm_bfloat", "the same with bfloat, compiled at MSL 3.1 as "
	    "ggml's bf16 kernels need (needs Apple7)", probe_check_mm_bfloat },
	{ "simdgroup_load_transposed", "half 8x8 matrices, one loaded "
	    "transposed with a row stride of 16, as flash attention's "
	    "Q x K^T (needs Apple7)", probe_check_load_transposed },
	{ "simd_shuffle", "simd_shuffle_down, simd_shuffle and "
	    "simd_shuffle_xor, as the vector flash-attention kernel (needs "
	    "Apple7 or Metal3)", probe_check_simd_shuffle },
	{ "simd_half", "simd_max and simd_min on half, as flash "
	    "attention's masks (needs Apple7 or Metal3)",
	    probe_check_simd_half },
	{ "prefix_sum", "simd_prefix_inclusive_sum within SIMD groups and "
	    "simd_prefix_exclusive_sum across them, as ggml's CUMSUM (needs "
	    "Apple7 or Metal3)", probe_check_cumsum },
	{ "simd_shuffle_up", "a running sum by simd_shuffle_up, as sparse "
	    "flash attention's index offsets (needs Apple7 or Metal3)",
	    probe_check_shuffle_up },
	{ "flash_attn_split", "vector flash attention over 32 splits of "
	    "the keys, 1, 2 and 4 SIMD groups a split merged through "
	    "threadgroup memory, then a reduce pass of 1024 threads; 1 query "
	    "a threadgroup, and 2 and 4 where Apple9 is the highest family, "
	    "as ggml (needs Apple7)", probe_check_fa_split },
	{ "mul_mm_bf16", "bfloat x bfloat SIMD-group matrix multiply, both "
	    "staged through threadgroup memory as ggml's bf16 mul_mm, at MSL "
	    "3.1 (needs Apple7, and Apple6 or Metal3)", probe_check_mm_bf16 },
	{ "argmax", "integer simd_max choosing among tied lanes and SIMD "
	    "groups, as ggml's ARGMAX (needs Apple7 or Metal3)",
	    probe_check_argmax },
	{ "count_equal", "integer simd_sum of per-thread counts, as ggml's "
	    "COUNT_EQUAL and sparse flash attention's index (needs Apple7 or "
	    "Metal3)", probe_check_count_equal },
	{ "argsort", "a bitonic sort of indices in threadgroup memory, then "
	    "merge passes, as ggml's ARGSORT and TOP_K over a row wider than "
	    "a threadgroup (backend sampling's top-p and top-k; any family)",
	    probe_check_argsort },
	{ "top_k", "a radix select by threadgroup atomic counters, as "
	    "ggml's TOP_K on long rows (backend sampling's top-k past 64; "
	    "any family)", probe_check_top_k },
	{ "threadgroup_32k", "a unique value at every address of a 32 KB "
	    "block, 16 threadgroups (control)", probe_check_tg_control },
	{ "threadgroup_advertised", "the same at the advertised size",
	    probe_check_tg_advertised },
	{ "residency_set", "a residency set can be made (when Metal3 is "
	    "reported)", probe_check_residency },
	{ "nocopy_mmap", "a buffer made with newBufferWithBytesNoCopy over "
	    "a file mapping, as llama.cpp's mmapped weights, sees the file's "
	    "bytes and later writes through the mapping (stale on macOS 14 "
	    "guests: --no-mmap)", probe_check_nocopy_mmap },
	{ "invariants", "Common, Mac and Metal answers as stock; no Apple "
	    "family above the ceiling", probe_check_invariants },
};
const size_t probe_nchecks = sizeof probe_checks / sizeof probe_checks[0];
/* probe.c keeps a run's results in an array of PROBE_MAX_CHECKS. */
_Static_assert(sizeof probe_checks / sizeof probe_checks[0] <=
    PROBE_MAX_CHECKS, "more checks than PROBE_MAX_CHECKS");

const struct probe_check *
probe_check_find(const char *name)
{
	size_t	i;

	for (i = 0; i < probe_nchecks; i++)
		if (strcmp(probe_checks[i].name, name) == 0)
			return &probe_checks[i];
	return NULL;
}

/* --- CPU references ------------------------------------------------------ */

/* simd_sum over lanes contributing 1..width. */
float
probe_ref_simd_sum(unsigned width)
{
	return (float)width * (float)(width + 1) / 2.0f;
}

/*
 * What probe_simd_shuffle writes for n values in SIMD groups of width:
 * each lane's group total (broadcast from lane 0), then the value of its
 * xor-1 neighbour.
 */
void
probe_ref_shuffle(const float *x, int n, int width, float *out)
{
	int	i, k;
	float	total;

	for (i = 0; i < n; i++) {
		total = 0;
		for (k = i - i % width; k < i - i % width + width; k++)
			total += x[k];
		out[2 * i] = total;
		out[2 * i + 1] = x[i ^ 1];
	}
}

/* Small integers are exact in bfloat, so 2x + 1 is exact too. */
float
probe_ref_bf16(float x)
{
	return 2.0f * x + 1.0f;
}

/* --- the checks ------------------------------------------------------------ */

static void
probe_check_simd_sum(const struct probe_context *ctx, struct probe_result *r)
{
	float			totals[2] = { 0 }, want[2];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels,
		.function = "probe_simd_sum", .buffers = { totals },
		.sizes = { sizeof totals }, .nbuffers = 1, .output = 0,
		.threadgroups = 1, .threads_per_group = 2 * SIMD_WIDTH,
	};

	if (!probe_gate_reduction(ctx, r))
		return;
	if (!probe_run(ctx, &d, r))
		return;
	want[0] = want[1] = probe_ref_simd_sum(SIMD_WIDTH);
	probe_compare(r, totals, want, 2);
}

/*
 * One 8 x 8 SIMD-group multiply, C = A x B, or A x B^T where the kernel
 * loads B transposed.  Small integers keep every product exact in half
 * and float; B is not symmetric, so a load that forgot to transpose (or
 * transposed unasked) gives another product.
 */
static void
probe_mm8_check(const struct probe_context *ctx, struct probe_result *r,
    const char *function, bool transposed)
{
	float			a[64], b[64], bt[64], c[64] = { 0 }, want[64];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels,
		.function = function, .buffers = { a, b, c },
		.sizes = { sizeof a, sizeof b, sizeof c }, .nbuffers = 3,
		.output = 2, .threadgroups = 1,
		.threads_per_group = SIMD_WIDTH,
	};
	int			i;

	if (!probe_gate(r, probe_answer(ctx->answers, APPLE7),
	    "the device does not report Apple7"))
		return;
	for (i = 0; i < 64; i++) {
		a[i] = (float)((i * 5) % 7) - 3.0f;
		b[i] = (float)((i * 3 + i / 8) % 9) - 4.0f;
	}
	if (!probe_run(ctx, &d, r))
		return;
	for (i = 0; i < 64; i++)
		bt[i] = transposed ? b[(i % 8) * 8 + i / 8] : b[i];
	probe_ref_matmul(8, a, bt, want);
	probe_compare(r, c, want, 64);
}

static void
probe_check_simd_mm(const struct probe_context *ctx, struct probe_result *r)
{
	probe_mm8_check(ctx, r, "probe_simd_mm", false);
}

static void
probe_check_bfloat(const struct probe_context *ctx, struct probe_result *r)
{
	float			x[64], y[64] = { 0 }, want[64];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels_bf16,
		.function = "probe_bf16", .language_version = PROBE_MSL_3_1,
		.buffers = { x, y }, .sizes = { sizeof x, sizeof y },
		.nbuffers = 2, .output = 1, .threadgroups = 1,
		.threads_per_group = 64,
	};
	int			i;

	if (!probe_gate(r, probe_answer(ctx->answers, APPLE6) ||
	    probe_answer(ctx->answers, METAL3),
	    "the device reports neither Apple6 nor Metal3"))
		return;
	for (i = 0; i < 64; i++)
		x[i] = (float)(i - 32);
	if (!probe_run(ctx, &d, r))
		return;
	for (i = 0; i < 64; i++)
		want[i] = probe_ref_bf16(x[i]);
	probe_compare(r, y, want, 64);
}

/* What one SIMD group of n values reduces to: two figures. */
typedef void	(*probe_group_ref)(const float *x, int n, float want[2]);

static void
probe_ref_sum_max(const float *x, int n, float want[2])
{
	int	i;

	want[0] = 0;
	want[1] = x[0];
	for (i = 0; i < n; i++) {
		want[0] += x[i];
		want[1] = x[i] > want[1] ? x[i] : want[1];
	}
}

static void
probe_ref_max_min(const float *x, int n, float want[2])
{
	int	i;

	want[0] = want[1] = x[0];
	for (i = 0; i < n; i++) {
		want[0] = x[i] > want[0] ? x[i] : want[0];
		want[1] = x[i] < want[1] ? x[i] : want[1];
	}
}

/*
 * A kernel whose lane 0 writes two figures of its SIMD group, over two
 * groups of quarters, (i * mul) % mod - mod / 2 (exact in half too, the
 * extremes inside each group), against ref.
 */
static void
probe_group_check(const struct probe_context *ctx, struct probe_result *r,
    const char *function, int mul, int mod, probe_group_ref ref)
{
	float			x[2 * SIMD_WIDTH], out[4] = { 0 }, want[4];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels,
		.function = function, .buffers = { x, out },
		.sizes = { sizeof x, sizeof out }, .nbuffers = 2, .output = 1,
		.threadgroups = 1, .threads_per_group = 2 * SIMD_WIDTH,
	};
	int			i;

	if (!probe_gate_reduction(ctx, r))
		return;
	for (i = 0; i < 2 * SIMD_WIDTH; i++)
		x[i] = (float)((i * mul) % mod - mod / 2) / 4.0f;
	if (!probe_run(ctx, &d, r))
		return;
	ref(x, SIMD_WIDTH, want);
	ref(x + SIMD_WIDTH, SIMD_WIDTH, want + 2);
	probe_compare(r, out, want, 4);
}

static void
probe_check_simd_reduce(const struct probe_context *ctx,
    struct probe_result *r)
{
	probe_group_check(ctx, r, "probe_simd_reduce", 37, 101,
	    probe_ref_sum_max);
}

/* Flash attention's Q x K^T: B loaded transposed. */
static void
probe_check_load_transposed(const struct probe_context *ctx,
    struct probe_result *r)
{
	probe_mm8_check(ctx, r, "probe_simdgroup_load_t", true);
}

static void
probe_check_simd_shuffle(const struct probe_context *ctx,
    struct probe_result *r)
{
	float			x[2 * SIMD_WIDTH], out[4 * SIMD_WIDTH] = { 0 };
	float			want[4 * SIMD_WIDTH];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels,
		.function = "probe_simd_shuffle", .buffers = { x, out },
		.sizes = { sizeof x, sizeof out }, .nbuffers = 2, .output = 1,
		.threadgroups = 1, .threads_per_group = 2 * SIMD_WIDTH,
	};
	int			i;

	if (!probe_gate_reduction(ctx, r))
		return;
	for (i = 0; i < 2 * SIMD_WIDTH; i++)
		x[i] = (float)((i * 29) % 37 - 18) / 4.0f;
	if (!probe_run(ctx, &d, r))
		return;
	probe_ref_shuffle(x, 2 * SIMD_WIDTH, SIMD_WIDTH, want);
	probe_compare(r, out, want, 4 * SIMD_WIDTH);
}

static void
probe_check_simd_half(const struct probe_context *ctx, struct probe_result *r)
{
	probe_group_check(ctx, r, "probe_simd_half", 41, 97, probe_ref_max_min);
}

/* C = A x B through threadgroup memory, A staged as half or bfloat. */
static void
probe_mm_tg(const struct probe_context *ctx, struct probe_result *r,
    const char *function, size_t a_bytes, unsigned long language)
{
	static float		a[1024], b[1024], c[1024], want[1024];
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels_mm,
		.function = function, .language_version = language,
		.buffers = { a, b, c },
		.sizes = { sizeof a, sizeof b, sizeof c }, .nbuffers = 3,
		.output = 2, .threadgroup_memory = 1024 * a_bytes + 4096,
		.threadgroups = 1, .threads_per_group = 4 * SIMD_WIDTH,
	};
	int			i;

	if (!probe_gate(r, probe_answer(ctx->answers, APPLE7),
	    "the device does not report Apple7"))
		return;
	/* Halves and small integers: exact in half, bfloat and float. */
	for (i = 0; i < 1024; i++) {
		a[i] = (float)((i * 7) % 9 - 4) / 2.0f;
		b[i] = (float)((i * 5) % 7 - 3);
		c[i] = -1.0f;
	}
	if (!probe_run(ctx, &d, r))
		return;
	probe_ref_matmul(32, a, b, want);
	probe_compare(r, c, want, 1024);
}

static void
probe_check_mm_half(const struct probe_context *ctx, struct probe_result *r)
{
	probe_mm_tg(ctx, r, "probe_mul_mm_half", 2, 0);
}

/*
 * At MSL 3.1, not the default: Metal's default follows the main
 * executable's build version (tests/sim/README.md), the probe's own, which
 * is macOS 11 (MSL 2.3), where the kernel's `#if __METAL_VERSION__ >= 310`
 * leaves it out.  3.1 is what a workload whose ggml keeps its bf16 kernels
 * compiles them at; one that does not is metalcapctl check's warning.
 */
static void
probe_check_mm_bfloat(const struct probe_context *ctx, struct probe_result *r)
{
	probe_mm_tg(ctx, r, "probe_mul_mm_bfloat", 2, PROBE_MSL_3_1);
}

#define TG_THREADS	256
#define TG_GROUPS	16

/*
 * Many threadgroups at once, each writing a unique value at every address
 * of a block of bytes and reading it all back: any thread that read a
 * wrong value counts it.
 */
static void
probe_tg_block(const struct probe_context *ctx, struct probe_result *r,
    size_t bytes)
{
	static uint32_t		right[TG_GROUPS * TG_THREADS];
	uint32_t		count = (uint32_t)(bytes / sizeof(uint32_t));
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels,
		.function = "probe_tg_mem", .buffers = { right, &count },
		.sizes = { sizeof right, sizeof count }, .nbuffers = 2,
		.output = 0, .threadgroup_memory = bytes,
		.threadgroups = TG_GROUPS, .threads_per_group = TG_THREADS,
	};
	size_t			i;
	uint64_t		good = 0, bad;

	memset(right, 0, sizeof right);
	if (!probe_run(ctx, &d, r))
		return;
	for (i = 0; i < TG_GROUPS * TG_THREADS; i++)
		good += right[i];
	bad = (uint64_t)count * TG_GROUPS - (good < (uint64_t)count *
	    TG_GROUPS ? good : (uint64_t)count * TG_GROUPS);
	r->correct = good == (uint64_t)count * TG_GROUPS;
	if (!r->correct)
		snprintf(r->error, sizeof r->error, "wrong result: %llu of %u "
		    "reads in %u threadgroups of %zu bytes gave another "
		    "address's value (the block aliases, or was not written)",
		    (unsigned long long)bad, count * TG_GROUPS, TG_GROUPS,
		    bytes);
}

static void
probe_check_tg_control(const struct probe_context *ctx,
    struct probe_result *r)
{
	probe_tg_block(ctx, r, PROBE_CONTROL_TG_MEMORY);
}

static void
probe_check_tg_advertised(const struct probe_context *ctx,
    struct probe_result *r)
{
	/* Metal wants threadgroup lengths in multiples of 16 bytes. */
	uint64_t	bytes = ctx->answers->threadgroup_memory & ~(uint64_t)15;

	if (!probe_gate(r, bytes > PROBE_CONTROL_TG_MEMORY,
	    "the advertised size is not above the 32 KB control"))
		return;
	probe_tg_block(ctx, r, (size_t)bytes);
}

static void
probe_check_residency(const struct probe_context *ctx,
    struct probe_result *r)
{
	char	why[256];

	if (!probe_gate(r, probe_answer(ctx->answers, METAL3),
	    "the device does not report Metal3"))
		return;
	r->compiled = r->pipeline = true;
	if (probe_backend.residency_set(ctx->device, why, sizeof why) == 0) {
		r->ran = r->correct = true;
		return;
	}
	/* MLX treats nil as fatal, with or without an NSError. */
	snprintf(r->error, sizeof r->error, "residency set is nil (error: %s); "
	    "MLX will fail with \"Unable to construct residency set\"",
	    why[0] ? why : "none");
}

/* Append "what; " to the check's error text. */
static void
probe_note(struct probe_result *r, const char *what, long family,
    bool now, bool stock)
{
	size_t	len = strlen(r->error);

	snprintf(r->error + len, sizeof r->error - len, "%s%s %ld is %s, "
	    "stock %s", len ? "; " : "", what, family, now ? "true" : "false",
	    stock ? "true" : "false");
}

static void
probe_check_invariants(const struct probe_context *ctx,
    struct probe_result *r)
{
	const struct probe_answers	*now = ctx->answers, *stock = ctx->stock;
	size_t				 i;
	long				 f;

	if (stock == NULL) {
		snprintf(r->error, sizeof r->error, "stock pass failed: %s",
		    ctx->stock_error ? ctx->stock_error : "unknown");
		return;
	}
	r->compiled = r->pipeline = r->ran = true;
	for (i = 0; i < probe_nfamilies; i++) {
		f = probe_families[i];
		if (now->family[i] == stock->family[i])
			continue;
		if (f > 2000)
			probe_note(r, "outside the Apple range, family", f,
			    now->family[i], stock->family[i]);
		else if (!now->family[i])
			probe_note(r, "an answer went down: family", f, false,
			    true);
		else if (ctx->ceiling == 0 || (uint64_t)f > ctx->ceiling)
			probe_note(r, "above the ceiling, family", f, true,
			    false);
	}
	r->correct = r->error[0] == '\0';
}
