/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: ggml's Metal backend as the simulated llama.cpp programs
 * need it (ggmlsim.h).
 */
#include <objc/runtime.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggmlsim.h"

struct ggmlsim_log	ggmlsim_log_style = { .verbosity = 4 };

/* A command buffer failed: ggml's has_error, until the backend is made
 * again (ggml-metal-context.m:274, 297, 459-462). */
static bool	ggmlsim_backend_error;

static int64_t
ggmlsim_now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* common_log's entry::print, for a line of this level. */
void
ggmlsim_log(int need, char level, const char *fmt, ...)
{
	static int64_t			 start;
	const struct ggmlsim_log	*s = &ggmlsim_log_style;
	const char			*def = s->colors ? "\033[0m" : "";
	const char			*col = "";
	int64_t				 t;
	va_list				 ap;

	if (start == 0)
		start = ggmlsim_now_us();
	/* ggml's INFO is TRACE (4) to llama.cpp's common log. */
	if (s->verbosity < need)
		return;
	if (s->prefix) {
		if (s->timestamps) {
			t = ggmlsim_now_us() - start;
			fprintf(stderr, "%s%d.%02d.%03d.%03d%s ", s->colors ?
			    "\033[34m" : "", (int)(t / 1000000 / 60),
			    (int)(t / 1000000 % 60), (int)(t / 1000 % 1000),
			    (int)(t % 1000), def);
		}
		if (s->colors)
			col = level == 'I' ? "\033[32m" : level == 'W' ?
			    "\033[35m" : level == 'E' ? "\033[31m" : "\033[33m";
		fprintf(stderr, "%s%c %s", col, level, level == 'I' ? def : "");
	}
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (level != 'I')
		fputs(def, stderr);
	fflush(stderr);
}

/* ggml-metal-device.m's three capability flags, from the same questions. */
void
ggmlsim_caps(GgmlSimDevice *dev, struct ggmlsim_caps *c)
{
	c->reduction = [dev supportsFamily:1007] || [dev supportsFamily:5001];
	c->matrix = [dev supportsFamily:1007];
	c->bfloat = [dev supportsFamily:5001] || [dev supportsFamily:1006];
	/* Asked from Apple21 down, the first yes kept
	 * (ggml-metal-device.m:1304-1307 of the pinned llama.cpp). */
	for (c->gpu_family = 21; c->gpu_family > 0; c->gpu_family--)
		if ([dev supportsFamily:1000 + c->gpu_family])
			break;
}

/*
 * --version anywhere among the arguments: what a llama.cpp program
 * prints on stderr and exits 0 with (common/build-info.cpp.in:33 of the
 * pinned source: "version: V (build N, commit C)", then the compiler
 * line; test_llama_e2e compares it with the real llama-server's).
 * LLAMA_SIM_BUILD="N C" stands for another build (default: the one
 * llama-bench-sim reports, 10167 and 5e1f0c3a).
 */
void
ggmlsim_version(int argc, char **argv)
{
	const char	*b = getenv("LLAMA_SIM_BUILD");
	long long	 n = 10167;
	char		 commit[41] = "5e1f0c3a";
	int		 i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--version") == 0)
			break;
	if (i == argc)
		return;
	if (b != NULL && sscanf(b, "%lld %40s", &n, commit) != 2) {
		n = 10167;
		snprintf(commit, sizeof commit, "5e1f0c3a");
	}
	fprintf(stderr, "version: 0.4.0-dev (build %lld, commit %s)\n"
	    "built with GNU 12.2.0 for Linux x86_64\n", n, commit);
	exit(0);
}

/* ggml prints the highest family that is true in each range. */
static void
ggmlsim_print_family(GgmlSimDevice *dev, const char *kind, long base,
    int last)
{
	char	name[32];
	int	i;

	for (i = last; i >= 1; i--)
		if ([dev supportsFamily:base + i]) {
			snprintf(name, sizeof name, "MTLGPUFamily%s%d", kind, i);
			GLOG_INFO("ggml_metal_device_init: GPU family: "
			    "%-19s (%ld)\n",
			    name, base + i);
			return;
		}
}

/*
 * What ggml_abort writes after its line on macOS, then abort() (ggml.c,
 * pinned: ggml_abort:253-273, ggml_print_backtrace:158-175): unless
 * GGML_NO_BACKTRACE is set, three notices and backtrace_symbols_fd's
 * frames, "%-4d%-35s 0x%016lx %s + %lu" (Libc gen/backtrace.c).
 */
void
ggmlsim_abort_trace(void)
{
	static const char *const frames[] = { "ggml_print_backtrace",
	    "ggml_abort", "ggml_metal_encoder_set_pipeline", "start" };
	size_t	i;

	if (getenv("GGML_NO_BACKTRACE") == NULL) {
		LOG("WARNING: Using native backtrace. Set GGML_BACKTRACE_LLDB "
		    "for more info.\n");
		LOG("WARNING: GGML_BACKTRACE_LLDB may cause native MacOS "
		    "Terminal.app to crash.\n");
		LOG("See: https://github.com/ggml-org/llama.cpp/pull/17869\n");
		for (i = 0; i < sizeof frames / sizeof frames[0]; i++)
			LOG("%-4zu%-35s 0x%016lx %s + %lu\n", i, i < 3 ?
			    "libggml-base.dylib" : "dyld", 0x100000000UL +
			    0x1000UL * i, frames[i], 44UL + i);
	}
	fflush(stderr);
	abort();
}

/*
 * ggml_metal_encoder_set_pipeline on a nil pipeline (ggml-metal-device.m):
 * GGML_ABORT, written by ggml_abort straight to stderr with its file and
 * line, never through the log, then its trace and abort().
 */
static void
ggmlsim_nil_pipeline(void)
{
	fflush(stderr);
	LOG("/Users/runner/work/llama.cpp/ggml/src/ggml-metal/"
	    "ggml-metal-device.m:852: ggml_metal_encoder_set_pipeline: nil "
	    "Metal pipeline (missing kernel; see compile_pipeline log "
	    "above)\n\n");
	ggmlsim_abort_trace();
}

/*
 * An NSError's localizedDescription, from the simulator's description
 * ("Error Domain=D Code=N \"text\""): the quoted text, or all of it.
 */
static void
ggmlsim_localized(const char *error, char *out, size_t len)
{
	const char	*a = strchr(error, '"'), *b = strrchr(error, '"');

	if (a != NULL && b > a)
		snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
	else
		snprintf(out, len, "%s", error);
}

/* Dispatch one of the kernels a graph would use, as ggml's lazy pipelines. */
static int
ggmlsim_kernel(GgmlSimDevice *dev, const char *label, const char *ggml_name,
    const char *function)
{
	char			error[512], source[256], said[512];
	float			in[256] = { 0 }, in2[256] = { 0 }, out[256];
	unsigned		count = 1024;
	struct mtlsim_dispatch	d = {
		.label = label, .source = source, .function = function,
		.language_version = 0x30001, .buffers = { out, in, in2 },
		.sizes = { sizeof out, sizeof in, sizeof in2 }, .nbuffers = 3,
		.threadgroups = 1, .threads_per_group = 64,
	};

	snprintf(source, sizeof source, "kernel void %s(", function);
	if (strcmp(function, "probe_tg_mem") == 0) {
		d.buffers[1] = &count;
		d.threadgroup_memory = 4096;
	} else if (strcmp(function, "probe_simd_mm") == 0) {
		d.buffers[0] = in;	/* a, b -> c */
		d.buffers[1] = in2;
		d.buffers[2] = out;
	}
	switch (mtlsim_dispatch(dev, &d, error, sizeof error)) {
	case MTLSIM_LIBRARY_FAILED:
	case MTLSIM_COMPILE_FAILED:
		GLOG_ERROR("ggml_metal_library_compile_pipeline: failed to "
		    "compile pipeline: base = '%s', name = '%s'\n", ggml_name,
		    ggml_name);
		GLOG_ERROR("ggml_metal_library_compile_pipeline: %s\n", error);
		ggmlsim_nil_pipeline();
		break;
	case MTLSIM_PIPELINE_FAILED:
		GLOG_ERROR("ggml_metal_library_compile_pipeline: failed to "
		    "create pipeline state: base = '%s', name = '%s'\n",
		    ggml_name, ggml_name);
		GLOG_ERROR("ggml_metal_library_compile_pipeline: %s\n", error);
		ggmlsim_nil_pipeline();
		break;
	/*
	 * ggml_metal_graph_compute commits the graph and returns; the wait
	 * that reads its results, ggml_metal_synchronize, finds the command
	 * buffer in error (MTLCommandBufferStatusError, 5), logs it at
	 * ERROR with the NSError's localizedDescription and leaves the
	 * backend in error state (ggml-metal-context.m:268-275).  Its INFO
	 * lines (L586-L603) are the GGML_METAL_CAPTURE_COMPUTE path alone.
	 */
	case MTLSIM_RUN_FAILED:
		ggmlsim_localized(error, said, sizeof said);
		GLOG_ERROR("ggml_metal_synchronize: error: command buffer 0 "
		    "failed with status 5\n");
		GLOG_ERROR("error: %s\n", said);
		ggmlsim_backend_error = true;
		return 1;
	case MTLSIM_COMPLETED:
		break;
	}
	return 0;
}

/* One graph: the kernels each capability selects, compiled lazily. */
int
ggmlsim_graph(GgmlSimDevice *dev)
{
	struct ggmlsim_caps	c;

	/* Every graph after a failed command buffer fails at once
	 * (ggml-metal-context.m:459-462): the server goes on, its requests
	 * fail. */
	if (ggmlsim_backend_error) {
		GLOG_ERROR("ggml_metal_graph_compute: backend is in error "
		    "state from a previous command buffer failure - recreate "
		    "the backend to recover\n");
		return 1;
	}
	ggmlsim_caps(dev, &c);
	if (c.reduction && ggmlsim_kernel(dev, "simd_sum",
	    "kernel_rms_norm_f32", "probe_simd_sum"))
		return 1;
	if (c.matrix && ggmlsim_kernel(dev, "simdgroup_matrix",
	    "kernel_mul_mm_f16_f32", "probe_simd_mm"))
		return 1;
	if (c.bfloat && ggmlsim_kernel(dev, "bfloat", "kernel_mul_mv_bf16_f32",
	    "probe_bf16"))
		return 1;
	/*
	 * A kernel no probe check compiles, dispatched under ggml's own name
	 * (ggml-metal.metal's host_name): the device can fail it alone, as
	 * a real one fails what the probe never looked at.  ggml takes the
	 * flash-attention path where simdgroup matrices are supported.
	 */
	if (c.matrix && ggmlsim_kernel(dev,
	    "kernel_flash_attn_ext_f16_dk128_dv128",
	    "kernel_flash_attn_ext_f16_dk128_dv128", "probe_simd_sum"))
		return 1;
	return ggmlsim_kernel(dev, "threadgroup_32k", "kernel_soft_max_f32",
	    "probe_tg_mem");
}

/* The device's name holds one of these words. */
static bool
ggmlsim_named(GgmlSimDevice *dev, const char *const *words)
{
	for (; *words != NULL; words++)
		if (strstr([dev name], *words) != NULL)
			return true;
	return false;
}

/*
 * ggml's tensor API: asked for where the device answers Metal4 (5002),
 * kept on M5, M6, A19 and A20 or with GGML_METAL_TENSOR_ENABLE (else
 * "disabled", said whatever the device answers), then
 * checked by building a dummy kernel from source, never run.  ggml does
 * without the API when that fails, after an ERROR line of its own: the
 * library's (verbose false: no NSError text) or the pipeline's
 * (ggml-metal-device.m:1127-1190, 587-640, compile_pipeline).
 */
static bool
ggmlsim_tensor(GgmlSimDevice *dev)
{
	static const char *const newer[] = { "M5", "M6", "A19", "A20", NULL };
	char			 error[512];
	struct mtlsim_dispatch	 d = {
		.label = "tensor_api", .function = "probe_simd_sum",
		.source = "kernel void probe_simd_sum(",
		.language_version = 0x40000,
	};
	bool			 has;

	/* ggml reads the environment; a test may set it in the switches. */
	has = [dev supportsFamily:5002] &&
	    mtlsim_getenv("GGML_METAL_TENSOR_DISABLE") == NULL;
	/* Said whatever the family (L1137-L1146). */
	if (mtlsim_getenv("GGML_METAL_TENSOR_ENABLE") == NULL &&
	    !ggmlsim_named(dev, newer)) {
		GLOG_INFO("ggml_metal_device_init: tensor API disabled for "
		    "pre-M5 and pre-A19 devices\n");
		has = false;
	}
	if (!has)
		return false;
	GLOG_INFO("ggml_metal_device_init: testing tensor API for f16 "
	    "support\n");
	switch (mtlsim_build(dev, &d, error, sizeof error)) {
	case MTLSIM_COMPLETED:
		return true;
	case MTLSIM_LIBRARY_FAILED:
		GLOG_ERROR("ggml_metal_library_init_from_source: error "
		    "compiling source\n");
		break;
	case MTLSIM_COMPILE_FAILED:
		GLOG_ERROR("ggml_metal_library_compile_pipeline: failed to "
		    "compile pipeline: base = 'dummy_kernel', name = "
		    "'dummy_kernel'\n");
		GLOG_ERROR("ggml_metal_library_compile_pipeline: %s\n", error);
		break;
	case MTLSIM_PIPELINE_FAILED:
	case MTLSIM_RUN_FAILED:
		GLOG_ERROR("ggml_metal_library_compile_pipeline: failed to "
		    "create pipeline state: base = 'dummy_kernel', name = "
		    "'dummy_kernel'\n");
		GLOG_ERROR("ggml_metal_library_compile_pipeline: %s\n", error);
		break;
	}
	GLOG_WARN("ggml_metal_device_init: - the tensor API is not supported "
	    "in this environment - disabling\n");
	return false;
}

/* ggml's init lines and its residency set: 0, or 1 when ggml fails. */
int
ggmlsim_setup(GgmlSimDevice *dev)
{
	struct ggmlsim_caps	c;
	char			error[512];
	bool			tensor;

	ggmlsim_caps(dev, &c);

	tensor = ggmlsim_tensor(dev);
	GLOG_INFO("ggml_metal_library_init: using embedded metal library\n");
	GLOG_INFO("ggml_metal_library_init: loaded in 0.011 sec\n");
	GLOG_INFO("ggml_metal_rsets_init: creating a residency set collection "
	    "(keep_alive = 180 s)\n");
	GLOG_INFO("ggml_metal_device_init: GPU name:   MTL0 (%s)\n",
	    [dev name]);
	ggmlsim_print_family(dev, "Apple", 1000, 21);
	ggmlsim_print_family(dev, "Common", 3000, 6);
	ggmlsim_print_family(dev, "Metal", 5000, 6);
	GLOG_INFO("ggml_metal_device_init: simdgroup reduction   = %s\n",
	    c.reduction ? "true" : "false");
	GLOG_INFO("ggml_metal_device_init: simdgroup matrix mul. = %s\n",
	    c.matrix ? "true" : "false");
	GLOG_INFO("ggml_metal_device_init: has unified memory    = true\n");
	GLOG_INFO("ggml_metal_device_init: has bfloat            = %s\n",
	    c.bfloat ? "true" : "false");
	GLOG_INFO("ggml_metal_device_init: has tensor            = %s\n",
	    tensor ? "true" : "false");
	GLOG_INFO("ggml_metal_device_init: use residency sets    = true\n");
	GLOG_INFO("ggml_metal_device_init: use shared buffers    = true\n");
	GLOG_INFO("ggml_metal_device_init: recommendedMaxWorkingSetSize  = "
	    "%.2f MB\n", [dev recommendedMaxWorkingSetSize] / 1e6);

	/* ggml fails on a residency set only when an NSError came back. */
	if (mtlsim_new_residency_set(dev, error, sizeof error) == -1 &&
	    error[0] != '\0') {
		GLOG_ERROR("ggml_metal_buffer_rset_init: error: %s\n", error);
		GLOG_ERROR("ggml_metal_buffer_rset_init: error: failed to "
		    "initialize residency set\n");
		return 1;
	}
	return 0;
}

/* Set up, then the warm-up graph, whose failure fails the program. */
int
ggmlsim_init(GgmlSimDevice *dev)
{
	return ggmlsim_setup(dev) != 0 ? 1 : ggmlsim_graph(dev);
}

