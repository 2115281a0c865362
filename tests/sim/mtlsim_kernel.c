/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: the simulated device's "GPU".  It compiles nothing: it knows
 * the probe's kernels by name, checks what the real compiler and pipeline
 * would check (the function exists in the source, bfloat needs MSL 3.1, the
 * threadgroup block fits), and executes each kernel lane by lane the way a
 * SIMD group would.  MTLSIM_FAIL turns any dispatch into the failures seen
 * on the real paravirtual device.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtlsim.h"
#include "mtlsim_ggml.h"

#define MSL_3_1		0x30001UL

typedef void (*mtlsim_kernel_fn)(const struct mtlsim_dispatch *);

/*
 * A switch from the MTLSIM_SWITCHES file, else the environment.  The value
 * is kept in a per-thread buffer until the next call.
 */
const char *
mtlsim_getenv(const char *name)
{
	static _Thread_local char	 value[1024];
	const char			*file = getenv("MTLSIM_SWITCHES");
	char				 line[1024];
	size_t				 n = strlen(name);
	FILE				*f;

	if (file != NULL && (f = fopen(file, "r")) != NULL) {
		while (fgets(line, sizeof line, f) != NULL) {
			if (strncmp(line, name, n) != 0 || line[n] != '=')
				continue;
			line[strcspn(line, "\n")] = '\0';
			snprintf(value, sizeof value, "%s", line + n + 1);
			fclose(f);
			return value;
		}
		fclose(f);
	}
	return getenv(name);
}

static void	mtlsim_simd_sum(const struct mtlsim_dispatch *);
static void	mtlsim_simd_mm(const struct mtlsim_dispatch *);
static void	mtlsim_tg_mem(const struct mtlsim_dispatch *);
static void	mtlsim_bf16(const struct mtlsim_dispatch *);
static void	mtlsim_simd_reduce(const struct mtlsim_dispatch *);
static void	mtlsim_mul_mm_half(const struct mtlsim_dispatch *);
static void	mtlsim_mul_mm_bfloat(const struct mtlsim_dispatch *);
static void	mtlsim_load_transposed(const struct mtlsim_dispatch *);
static void	mtlsim_simd_shuffle(const struct mtlsim_dispatch *);
static void	mtlsim_simd_half(const struct mtlsim_dispatch *);

static const struct {
	const char		*name;
	mtlsim_kernel_fn	 fn;
	unsigned long		 min_language;
	unsigned		 nbuffers;
} mtlsim_kernels[] = {
	{ "probe_simd_sum", mtlsim_simd_sum, 0, 1 },
	{ "probe_simd_mm", mtlsim_simd_mm, 0, 3 },
	{ "probe_tg_mem", mtlsim_tg_mem, 0, 2 },
	{ "probe_bf16", mtlsim_bf16, MSL_3_1, 2 },
	{ "probe_simd_reduce", mtlsim_simd_reduce, 0, 2 },
	/* In a `#if __METAL_VERSION__ >= 310` block: at a lower language
	 * version, explicit or the default, the function is not there. */
	{ "probe_mul_mm_half", mtlsim_mul_mm_half, 0, 3 },
	{ "probe_mul_mm_bfloat", mtlsim_mul_mm_bfloat, 0, 3 },
	{ "probe_simdgroup_load_t", mtlsim_load_transposed, 0, 3 },
	{ "probe_simd_shuffle", mtlsim_simd_shuffle, 0, 2 },
	{ "probe_simd_half", mtlsim_simd_half, 0, 2 },
	{ "probe_cumsum", mtlsim_cumsum, 0, 2 },
	{ "probe_shuffle_up", mtlsim_shuffle_up, 0, 2 },
	{ "probe_fa_split", mtlsim_fa_split, 0, 4 },
	{ "probe_fa_reduce", mtlsim_fa_reduce, 0, 2 },
	{ "probe_mul_mm_bf16", mtlsim_mul_mm_bf16, MSL_3_1, 3 },
	{ "probe_argmax", mtlsim_argmax, 0, 2 },
	{ "probe_count_equal", mtlsim_count_equal, 0, 3 },
	{ "probe_argsort", mtlsim_argsort, 0, 2 },
	{ "probe_argsort_merge", mtlsim_argsort_merge, 0, 4 },
	{ "probe_top_k", mtlsim_top_k, 0, 2 },
	{ "probe_nocopy_read", mtlsim_nocopy_read, 0, 2 },
};

/* The failure mode MTLSIM_FAIL sets for this label, or NULL. */
static const char *
mtlsim_failure(const char *label, char *mode, size_t modelen)
{
	const char	*spec = mtlsim_getenv("MTLSIM_FAIL"), *p;
	size_t		 n = strlen(label), m;

	for (p = spec; p != NULL && *p != '\0'; p += strcspn(p, ","),
	    p += *p == ',') {
		if (strncmp(p, label, n) != 0 || p[n] != ':')
			continue;
		m = strcspn(p + n + 1, ",");
		if (m >= modelen)
			m = modelen - 1;
		memcpy(mode, p + n + 1, m);
		mode[m] = '\0';
		return mode;
	}
	return NULL;
}

/* Lane i of each SIMD group adds i + 1; lane 0 stores the group's total. */
static void
mtlsim_simd_sum(const struct mtlsim_dispatch *d)
{
	float		*out = d->buffers[0];
	unsigned long	 groups = d->threadgroups * d->threads_per_group /
	    MTLSIM_SIMD_WIDTH, sg, lane;
	float		 acc;

	for (sg = 0; sg < groups; sg++) {
		acc = 0;
		for (lane = 0; lane < MTLSIM_SIMD_WIDTH; lane++)
			acc += (float)(lane + 1);
		out[sg] = acc;
	}
}

/* One 8x8 simdgroup_multiply_accumulate, as eight row dot products. */
static void
mtlsim_simd_mm(const struct mtlsim_dispatch *d)
{
	const float	*a = d->buffers[0], *b = d->buffers[1];
	float		*c = d->buffers[2];
	int		 row, col, k;

	for (row = 0; row < 8; row++)
		for (col = 0; col < 8; col++) {
			c[row * 8 + col] = 0;
			for (k = 0; k < 8; k++)
				c[row * 8 + col] += a[row * 8 + k] *
				    b[k * 8 + col];
		}
}

/*
 * Each threadgroup in turn: a unique value at every address of its block,
 * then each thread counts what it reads back right.  MTLSIM_TG_ALIAS=N
 * makes the block wrap every N bytes, as hardware with N bytes would
 * behave if the advertised size were believed: addresses N apart share
 * storage.
 */
static void
mtlsim_tg_mem(const struct mtlsim_dispatch *d)
{
	uint32_t	*out = d->buffers[0], *shm;
	uint32_t	 count = *(const uint32_t *)d->buffers[1], i, slots;
	unsigned long	 nth = d->threads_per_group, tid, g;
	const char	*alias = mtlsim_getenv("MTLSIM_TG_ALIAS");

	slots = (uint32_t)(d->threadgroup_memory / sizeof(uint32_t));
	if (alias != NULL && strtoul(alias, NULL, 0) / sizeof(uint32_t) > 0 &&
	    strtoul(alias, NULL, 0) / sizeof(uint32_t) < slots)
		slots = (uint32_t)(strtoul(alias, NULL, 0) / sizeof(uint32_t));
	if ((shm = calloc(slots, sizeof *shm)) == NULL)
		return;
	for (g = 0; g < d->threadgroups; g++) {
		for (tid = 0; tid < nth; tid++)
			for (i = (uint32_t)tid; i < count; i += (uint32_t)nth)
				shm[i % slots] = (uint32_t)g * count + i;
		for (tid = 0; tid < nth; tid++) {
			uint32_t good = 0;

			for (i = (uint32_t)tid; i < count; i += (uint32_t)nth)
				good += shm[i % slots] == (uint32_t)g * count + i;
			out[g * nth + tid] = good;
		}
	}
	free(shm);
}

/* simd_sum and simd_max of each SIMD group; lane 0 stores both. */
static void
mtlsim_simd_reduce(const struct mtlsim_dispatch *d)
{
	const float	*x = d->buffers[0];
	float		*out = d->buffers[1], s, m;
	unsigned long	 groups = d->threadgroups * d->threads_per_group /
	    MTLSIM_SIMD_WIDTH, sg, lane;

	for (sg = 0; sg < groups; sg++) {
		s = 0;
		m = x[sg * MTLSIM_SIMD_WIDTH];
		for (lane = 0; lane < MTLSIM_SIMD_WIDTH; lane++) {
			s += x[sg * MTLSIM_SIMD_WIDTH + lane];
			if (x[sg * MTLSIM_SIMD_WIDTH + lane] > m)
				m = x[sg * MTLSIM_SIMD_WIDTH + lane];
		}
		out[2 * sg] = s;
		out[2 * sg + 1] = m;
	}
}

/* Round to nearest even, dropping drop bits of the fraction. */
float
mtlsim_round(float f, int drop)
{
	uint32_t	bits;

	memcpy(&bits, &f, sizeof bits);
	bits += ((1u << (drop - 1)) - 1) + ((bits >> drop) & 1);
	bits &= ~((1u << drop) - 1);
	memcpy(&f, &bits, sizeof f);
	return f;
}

/*
 * 32 x 32 x 32 through "threadgroup memory": A rounded to the staging type
 * (half: 10 fraction bits; bfloat: 7), B float, accumulated in float in
 * 8 x 8 fragments, as the kernel does.
 */
static void
mtlsim_mul_mm(const struct mtlsim_dispatch *d, int drop)
{
	const float	*a = d->buffers[0], *b = d->buffers[1];
	float		*c = d->buffers[2], sa[1024];
	int		 i, j, k;

	for (i = 0; i < 1024; i++)
		sa[i] = mtlsim_round(a[i], drop);
	for (i = 0; i < 32; i++)
		for (j = 0; j < 32; j++) {
			c[i * 32 + j] = 0;
			for (k = 0; k < 32; k++)
				c[i * 32 + j] += sa[i * 32 + k] * b[k * 32 + j];
		}
}

static void
mtlsim_mul_mm_half(const struct mtlsim_dispatch *d)
{
	mtlsim_mul_mm(d, 13);
}

static void
mtlsim_mul_mm_bfloat(const struct mtlsim_dispatch *d)
{
	mtlsim_mul_mm(d, 16);
}

/*
 * A staged in half, B staged in half at a row stride of 16 and loaded
 * transposed (element [k][j] of the loaded matrix is B's [j][k]),
 * accumulated in float.
 */
static void
mtlsim_load_transposed(const struct mtlsim_dispatch *d)
{
	const float	*a = d->buffers[0], *b = d->buffers[1];
	float		*c = d->buffers[2], sa[64], sb[128] = { 0 }, acc;
	int		 i, j, k;

	for (i = 0; i < 64; i++) {
		sa[i] = mtlsim_round(a[i], 13);
		sb[(i / 8) * 16 + i % 8] = mtlsim_round(b[i], 13);
	}
	for (i = 0; i < 8; i++)
		for (j = 0; j < 8; j++) {
			for (acc = 0, k = 0; k < 8; k++)
				acc += sa[i * 8 + k] * sb[j * 16 + k];
			c[i * 8 + j] = acc;
		}
}

/*
 * Lane by lane, as the SIMD group runs it: the shuffle-down tree (a lane
 * whose source is past the group keeps its own value), lane 0's total
 * broadcast, and each lane's xor-1 neighbour.
 */
static void
mtlsim_simd_shuffle(const struct mtlsim_dispatch *d)
{
	const float	*x = d->buffers[0];
	float		*out = d->buffers[1], s[MTLSIM_SIMD_WIDTH], next[
	    MTLSIM_SIMD_WIDTH];
	unsigned long	 groups = d->threadgroups * d->threads_per_group /
	    MTLSIM_SIMD_WIDTH, g, lane, off;

	for (g = 0; g < groups; g++) {
		for (lane = 0; lane < MTLSIM_SIMD_WIDTH; lane++)
			s[lane] = x[g * MTLSIM_SIMD_WIDTH + lane];
		for (off = MTLSIM_SIMD_WIDTH / 2; off > 0; off /= 2) {
			for (lane = 0; lane < MTLSIM_SIMD_WIDTH; lane++)
				next[lane] = s[lane] + (lane + off <
				    MTLSIM_SIMD_WIDTH ? s[lane + off] : s[lane]);
			memcpy(s, next, sizeof s);
		}
		for (lane = 0; lane < MTLSIM_SIMD_WIDTH; lane++) {
			out[2 * (g * MTLSIM_SIMD_WIDTH + lane)] = s[0];
			out[2 * (g * MTLSIM_SIMD_WIDTH + lane) + 1] =
			    x[g * MTLSIM_SIMD_WIDTH + (lane ^ 1)];
		}
	}
}

/* simd_max and simd_min of each group's values rounded to half. */
static void
mtlsim_simd_half(const struct mtlsim_dispatch *d)
{
	const float	*x = d->buffers[0];
	float		*out = d->buffers[1], h, m, n;
	unsigned long	 groups = d->threadgroups * d->threads_per_group /
	    MTLSIM_SIMD_WIDTH, g, lane;

	for (g = 0; g < groups; g++) {
		m = n = mtlsim_round(x[g * MTLSIM_SIMD_WIDTH], 13);
		for (lane = 0; lane < MTLSIM_SIMD_WIDTH; lane++) {
			h = mtlsim_round(x[g * MTLSIM_SIMD_WIDTH + lane], 13);
			m = h > m ? h : m;
			n = h < n ? h : n;
		}
		out[2 * g] = m;
		out[2 * g + 1] = n;
	}
}

/* bfloat keeps the top 16 bits of a float. */
static float
mtlsim_to_bf16(float f)
{
	uint32_t	bits;

	memcpy(&bits, &f, sizeof bits);
	bits &= 0xffff0000u;
	memcpy(&f, &bits, sizeof f);
	return f;
}

static void
mtlsim_bf16(const struct mtlsim_dispatch *d)
{
	const float	*x = d->buffers[0];
	float		*y = d->buffers[1];
	unsigned long	 i, n = d->threadgroups * d->threads_per_group;

	for (i = 0; i < n; i++)
		y[i] = mtlsim_to_bf16(mtlsim_to_bf16(mtlsim_to_bf16(x[i]) *
		    2.0f) + 1.0f);
}

/* One percent off in every float of the output; one read short in counts. */
static void
mtlsim_slightly_off(const struct mtlsim_dispatch *d)
{
	size_t	i, n = d->sizes[d->output] / sizeof(float);

	if (strcmp(d->function, "probe_tg_mem") == 0) {
		((uint32_t *)d->buffers[d->output])[0]--;
		return;
	}
	for (i = 0; i < n; i++)
		((float *)d->buffers[d->output])[i] *= 1.01f;
}

/*
 * Not a number in every float of the output: what a half or bfloat path
 * that overflows, or a SIMD-group op reading lanes that never ran, gives.
 * The counts of probe_tg_mem are integers and cannot be NaN: they are
 * left alone, so the mode fails exactly the float checks.
 */
static void
mtlsim_not_a_number(const struct mtlsim_dispatch *d)
{
	size_t	i, n = d->sizes[d->output] / sizeof(float);

	if (strcmp(d->function, "probe_tg_mem") == 0)
		return;
	for (i = 0; i < n; i++)
		((float *)d->buffers[d->output])[i] = NAN;
}

/*
 * One float wrong, the output's last: a kernel that misses its final
 * lane or row (a bound off by one), which a check comparing less than
 * the whole output would pass.  Counts are left alone.
 */
static void
mtlsim_last_wrong(const struct mtlsim_dispatch *d)
{
	size_t	n = d->sizes[d->output] / sizeof(float);

	if (strcmp(d->function, "probe_tg_mem") == 0 || n == 0)
		return;
	((float *)d->buffers[d->output])[n - 1] += 1.0f;
}

/* Infinity with the reference's sign: overflow in a half accumulator. */
static void
mtlsim_infinite(const struct mtlsim_dispatch *d)
{
	size_t	i, n = d->sizes[d->output] / sizeof(float);
	float	*out = d->buffers[d->output];

	if (strcmp(d->function, "probe_tg_mem") == 0)
		return;
	for (i = 0; i < n; i++)
		out[i] = out[i] < 0 ? -INFINITY : INFINITY;
}

/*
 * The stages of one dispatch, as the device's Objective-C calls in
 * mtlsim.m run them: newFunctionWithName: (the kernel is in the source),
 * newLibraryWithSource:options:error: (it compiles), then
 * newComputePipelineStateWithFunction:error: and a command buffer's
 * commit.  Each returns 0, or -1 with Metal's error text.
 */
static size_t
mtlsim_kernel_index(const struct mtlsim_dispatch *d)
{
	size_t	i;

	for (i = 0; i < sizeof mtlsim_kernels / sizeof mtlsim_kernels[0]; i++)
		if (strcmp(mtlsim_kernels[i].name, d->function) == 0)
			break;
	return i;
}

/* The language version the compile runs at: set, or the default. */
static unsigned long
mtlsim_language(const struct mtlsim_dispatch *d)
{
	return d->language_version != 0 ? d->language_version :
	    mtlsim_default_language();
}

/* The whole source compiles: unguarded bfloat needs MSL 3.1. */
int
mtlsim_stage_compile(const struct mtlsim_dispatch *d, char *error,
    size_t errorlen)
{
	char		 mode[32];
	const char	*fail = mtlsim_failure(d->label, mode, sizeof mode);
	size_t		 i = mtlsim_kernel_index(d);

	/* The whole source would not compile (MTLSIM_FAIL's library). */
	if (fail != NULL && strcmp(fail, "library") == 0) {
		snprintf(error, errorlen, "Error Domain=MTLLibraryErrorDomain "
		    "Code=3 \"program_source: error: simulated compiler "
		    "failure of the library\"");
		return -1;
	}
	if (i < sizeof mtlsim_kernels / sizeof mtlsim_kernels[0] &&
	    mtlsim_language(d) < mtlsim_kernels[i].min_language) {
		snprintf(error, errorlen, "Error Domain=MTLLibraryErrorDomain "
		    "Code=3 \"program_source:3:5: error: unknown type name "
		    "'bfloat'\"");
		return -1;
	}
	return 0;
}

/*
 * The kernel's function, made from the library: the kernel is in the
 * source, and the specialization compiles (ggml's lazy step, where its
 * "failed to compile pipeline" comes from; MTLSIM_FAIL's compile).
 */
int
mtlsim_stage_function(const struct mtlsim_dispatch *d, char *error,
    size_t errorlen)
{
	char		 decl[128], mode[32];
	const char	*fail = mtlsim_failure(d->label, mode, sizeof mode);

	snprintf(decl, sizeof decl, "kernel void %s(", d->function);
	if (mtlsim_kernel_index(d) == sizeof mtlsim_kernels /
	    sizeof mtlsim_kernels[0] || strstr(d->source, decl) == NULL ||
	    !mtlsim_source_keeps(d->source, d->function, mtlsim_language(d))) {
		snprintf(error, errorlen, "Function %s was not found in the "
		    "library", d->function);
		return -1;
	}
	if (fail != NULL && strcmp(fail, "compile") == 0) {
		snprintf(error, errorlen, "Error Domain=MTLLibraryErrorDomain "
		    "Code=3 \"program_source: error: simulated compiler "
		    "failure for %s\"", d->function);
		return -1;
	}
	return 0;
}

int
mtlsim_stage_pipeline(const struct mtlsim_dispatch *d, char *error,
    size_t errorlen)
{
	char		 mode[32];
	const char	*fail = mtlsim_failure(d->label, mode, sizeof mode);
	unsigned long	 hw;

	hw = mtlsim_getenv("MTLSIM_HW_THREADGROUP_MEMORY") != NULL ?
	    strtoul(mtlsim_getenv("MTLSIM_HW_THREADGROUP_MEMORY"), NULL, 0) :
	    MTLSIM_HW_TG_MEMORY;
	if (fail != NULL && strcmp(fail, "pipeline") == 0 &&
	    d->threadgroup_memory == 0) {
		snprintf(error, errorlen, "Error Domain=AGXMetalG13X Code=3 "
		    "\"Compiler encountered an internal error (simulated, %s)\"",
		    d->function);
		return -1;
	}
	if ((fail != NULL && strcmp(fail, "pipeline") == 0) ||
	    d->threadgroup_memory > hw) {
		snprintf(error, errorlen, "Error Domain=AGXMetalG13X Code=3 "
		    "\"Threadgroup memory size (%zu) exceeds the maximum "
		    "threadgroup memory allowed (%lu)\"",
		    d->threadgroup_memory, d->threadgroup_memory > hw ? hw :
		    d->threadgroup_memory / 2);
		return -1;
	}
	return 0;
}

/*
 * MTLSIM_TRACE=path: a line for each dispatch that reaches the GPU (label,
 * function, language version, threadgroups, threads a threadgroup,
 * threadgroup memory), appended, so that a test can see the grids a
 * check asks for, as Metal's frame capture would show them.
 */
static void
mtlsim_trace(const struct mtlsim_dispatch *d)
{
	const char	*path = mtlsim_getenv("MTLSIM_TRACE");
	FILE		*f;

	if (path == NULL || (f = fopen(path, "a")) == NULL)
		return;
	fprintf(f, "%s %s %#lx %lu %lu %zu\n", d->label, d->function,
	    d->language_version, d->threadgroups, d->threads_per_group,
	    d->threadgroup_memory);
	fclose(f);
}

/* The command buffer's work: -1 is MTLCommandBufferStatusError. */
int
mtlsim_stage_run(const struct mtlsim_dispatch *d, char *error,
    size_t errorlen, long *code)
{
	char		 mode[32];
	const char	*fail = mtlsim_failure(d->label, mode, sizeof mode);
	size_t		 i = mtlsim_kernel_index(d);

	*code = 1;	/* MTLCommandBufferErrorInternal */
	/* Metal's validation layer: every bound index must have a buffer. */
	if (d->nbuffers < mtlsim_kernels[i].nbuffers) {
		snprintf(error, errorlen, "Error Domain=MTLCommandBufferErrorDomain "
		    "Code=1 \"missing buffer binding at index %u for %s\"",
		    d->nbuffers, d->function);
		return -1;
	}
	/* The kernel faulted on the GPU: the buffer ends in error. */
	if (fail != NULL && strcmp(fail, "error") == 0) {
		snprintf(error, errorlen, "Error Domain=MTLCommandBufferErrorDomain "
		    "Code=1 \"Internal Error (0000000e:Internal Error)\"");
		return -1;
	}
	/*
	 * The GPU ran out of memory for it (MTLCommandBufferErrorOutOfMemory,
	 * 8): a failure of the machine's, not of the kernel.  The text is
	 * the one llama.cpp's users report (ggml-org/llama.cpp#9701,
	 * ollama/ollama#6257: "Insufficient Memory (00000008:kIOGPUCommand
	 * BufferCallbackErrorOutOfMemory)").
	 */
	if (fail != NULL && strcmp(fail, "oom") == 0) {
		*code = 8;
		snprintf(error, errorlen, "Error Domain=MTLCommandBufferErrorDomain "
		    "Code=8 \"Insufficient Memory (00000008:kIOGPUCommandBuffer"
		    "CallbackErrorOutOfMemory)\"");
		return -1;
	}
	mtlsim_trace(d);
	if (fail != NULL && strcmp(fail, "hang") == 0)
		for (;;)
			pause();
	mtlsim_kernels[i].fn(d);
	/* Metal.jl saw custom kernels return zeros on this device. */
	if (fail != NULL && strcmp(fail, "wrong") == 0)
		memset(d->buffers[d->output], 0, d->sizes[d->output]);
	/* Slightly off: a percent, the kind of error a lax check misses. */
	if (fail != NULL && strcmp(fail, "off") == 0)
		mtlsim_slightly_off(d);
	if (fail != NULL && strcmp(fail, "nan") == 0)
		mtlsim_not_a_number(d);
	if (fail != NULL && strcmp(fail, "inf") == 0)
		mtlsim_infinite(d);
	if (fail != NULL && strcmp(fail, "last") == 0)
		mtlsim_last_wrong(d);
	return 0;
}

/*
 * newResidencySetWithDescriptor:error: with an empty descriptor: 0, or -1
 * for nil, with the NSError's text (empty when none came back).
 */
int
mtlsim_stage_residency(char *error, size_t errorlen)
{
	const char	*mode = mtlsim_getenv("MTLSIM_RESIDENCY");

	error[0] = '\0';
	if (mode == NULL)
		return 0;
	if (strcmp(mode, "nil-error") == 0)
		snprintf(error, errorlen, "MTLResidencySetErrorDomain/1/"
		    "simulated: residency sets are unavailable");
	return -1;
}
