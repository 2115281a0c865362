/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR workload: a stand-in for llama-server, for tests of what the
 * daemon sees.  It opens the simulated device, decides its kernels the way
 * ggml's Metal backend does, prints ggml's init lines in their real format,
 * and when the device is switched to fail (MTLSIM_FAIL, MTLSIM_RESIDENCY)
 * prints ggml's failure lines and exits or aborts as llama.cpp would.
 * Pipelines compile lazily, on a graph's first use: one warm-up graph at
 * start, as llama-server does, and one more per request (SIGUSR1).
 * Otherwise it serves (sleeps) until SIGTERM or SIGINT.
 *
 *   fake-llama [--once] [--exit-after MS CODE] [--term-delay MS]
 *     --once         exit 0 after the warm-up instead of serving
 *     --exit-after   exit with CODE after MS of serving (a crashing server)
 *     --term-delay   take MS to shut down after SIGTERM (a slow server)
 */
#include <objc/runtime.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtlsim.h"

@interface FakeLlamaDevice
- (BOOL)supportsFamily:(long)family;
- (unsigned long long)recommendedMaxWorkingSetSize;
- (const char *)name;
@end

#define LOG(...)	fprintf(stderr, __VA_ARGS__)

static volatile sig_atomic_t	fake_stop, fake_request;

static void
fake_on_signal(int sig)
{
	if (sig == SIGUSR1)
		fake_request = 1;
	else
		fake_stop = 1;
}

/* ggml prints the highest family that is true in each range. */
static void
fake_print_family(FakeLlamaDevice *dev, const char *kind, long base,
    int last)
{
	char	name[32];
	int	i;

	for (i = last; i >= 1; i--)
		if ([dev supportsFamily:base + i]) {
			snprintf(name, sizeof name, "MTLGPUFamily%s%d", kind, i);
			LOG("ggml_metal_device_init: GPU family: %-19s (%ld)\n",
			    name, base + i);
			return;
		}
}

/* Dispatch one of the kernels a graph would use, as ggml's lazy pipelines. */
static int
fake_kernel(FakeLlamaDevice *dev, const char *label, const char *ggml_name,
    const char *function)
{
	char			error[512], source[256];
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
	case MTLSIM_COMPILE_FAILED:
		LOG("ggml_metal_library_compile_pipeline: failed to compile "
		    "pipeline: base = '%s', name = '%s'\n", ggml_name, ggml_name);
		LOG("ggml_metal_library_compile_pipeline: error: %s\n", error);
		LOG("ggml/src/ggml-metal/ggml-metal-ops.cpp:1721: "
		    "GGML_ASSERT(pipeline.pipeline) failed\n");
		abort();
	case MTLSIM_PIPELINE_FAILED:
		LOG("ggml_metal_library_compile_pipeline: failed to create "
		    "pipeline state: base = '%s', name = '%s'\n", ggml_name,
		    ggml_name);
		LOG("ggml_metal_library_compile_pipeline: error: %s\n", error);
		LOG("ggml/src/ggml-metal/ggml-metal-ops.cpp:1721: "
		    "GGML_ASSERT(pipeline.pipeline) failed\n");
		abort();
	case MTLSIM_RUN_FAILED:
		LOG("ggml_metal_graph_compute: error: command buffer 0 failed "
		    "with status 5\nerror: %s\n", error);
		return 1;
	case MTLSIM_COMPLETED:
		break;
	}
	return 0;
}

/* One graph: the kernels each capability selects, compiled lazily. */
static int
fake_graph(FakeLlamaDevice *dev)
{
	bool	reduction = [dev supportsFamily:1007] ||
	    [dev supportsFamily:5001];
	bool	matrix = [dev supportsFamily:1007];
	bool	bfloat = [dev supportsFamily:5001] || [dev supportsFamily:1006];

	if (reduction && fake_kernel(dev, "simd_sum", "kernel_rms_norm_f32",
	    "probe_simd_sum"))
		return 1;
	if (matrix && fake_kernel(dev, "simdgroup_matrix",
	    "kernel_mul_mm_f16_f32", "probe_simd_mm"))
		return 1;
	if (bfloat && fake_kernel(dev, "bfloat", "kernel_mul_mv_bf16_f32",
	    "probe_bf16"))
		return 1;
	/*
	 * A kernel no probe check compiles, dispatched under ggml's own name
	 * (ggml-metal.metal's host_name): the device can fail it alone, as
	 * a real one fails what the probe never looked at.  ggml takes the
	 * flash-attention path where simdgroup matrices are supported.
	 */
	if (matrix && fake_kernel(dev, "kernel_flash_attn_ext_f16_dk128_dv128",
	    "kernel_flash_attn_ext_f16_dk128_dv128", "probe_simd_sum"))
		return 1;
	return fake_kernel(dev, "threadgroup_32k", "kernel_soft_max_f32",
	    "probe_tg_mem");
}

static int
fake_init(FakeLlamaDevice *dev)
{
	bool	reduction, matrix, bfloat;
	char	error[512];

	reduction = [dev supportsFamily:1007] || [dev supportsFamily:5001];
	matrix = [dev supportsFamily:1007];
	bfloat = [dev supportsFamily:5001] || [dev supportsFamily:1006];

	LOG("ggml_metal_device_init: tensor API disabled for pre-M5 and "
	    "pre-A19 devices\n");
	LOG("ggml_metal_library_init: using embedded metal library\n");
	LOG("ggml_metal_library_init: loaded in 0.011 sec\n");
	LOG("ggml_metal_rsets_init: creating a residency set collection "
	    "(keep_alive = 180 s)\n");
	LOG("ggml_metal_device_init: GPU name:   MTL0 (%s)\n", [dev name]);
	fake_print_family(dev, "Apple", 1000, 21);
	fake_print_family(dev, "Common", 3000, 6);
	fake_print_family(dev, "Metal", 5000, 6);
	LOG("ggml_metal_device_init: simdgroup reduction   = %s\n",
	    reduction ? "true" : "false");
	LOG("ggml_metal_device_init: simdgroup matrix mul. = %s\n",
	    matrix ? "true" : "false");
	LOG("ggml_metal_device_init: has unified memory    = true\n");
	LOG("ggml_metal_device_init: has bfloat            = %s\n",
	    bfloat ? "true" : "false");
	LOG("ggml_metal_device_init: has tensor            = false\n");
	LOG("ggml_metal_device_init: use residency sets    = true\n");
	LOG("ggml_metal_device_init: use shared buffers    = true\n");
	LOG("ggml_metal_device_init: recommendedMaxWorkingSetSize  = %.2f MB\n",
	    [dev recommendedMaxWorkingSetSize] / 1e6);

	/* ggml fails on a residency set only when an NSError came back. */
	if (mtlsim_new_residency_set(dev, error, sizeof error) == -1 &&
	    error[0] != '\0') {
		LOG("ggml_metal_buffer_rset_init: error: %s\n", error);
		LOG("ggml_metal_buffer_rset_init: error: failed to initialize "
		    "residency set\n");
		return 1;
	}
	/* The warm-up graph. */
	return fake_graph(dev);
}

int
main(int argc, char **argv)
{
	FakeLlamaDevice	*dev;
	bool		 once = false;
	long		 exit_ms = -1, exit_code = 0, term_ms = 0;
	int		 i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--once") == 0)
			once = true;
		else if (strcmp(argv[i], "--exit-after") == 0 && i + 2 < argc) {
			exit_ms = atol(argv[++i]);
			exit_code = atol(argv[++i]);
		} else if (strcmp(argv[i], "--term-delay") == 0 && i + 1 < argc)
			term_ms = atol(argv[++i]);
		else {
			fprintf(stderr, "usage: fake-llama [--once] "
			    "[--exit-after MS CODE] [--term-delay MS]\n");
			return 2;
		}
	}
	signal(SIGTERM, fake_on_signal);
	signal(SIGINT, fake_on_signal);
	signal(SIGUSR1, fake_on_signal);
	if ((dev = MTLCreateSystemDefaultDevice()) == nil) {
		LOG("ggml_metal_init: error: failed to allocate context\n");
		return 1;
	}
	if (fake_init(dev) != 0)
		return 1;
	LOG("main: server is listening on http://127.0.0.1:8080 - starting "
	    "the main loop\n");
	if (exit_ms >= 0) {
		usleep((useconds_t)exit_ms * 1000);
		return (int)exit_code;
	}
	while (!once && !fake_stop) {
		pause();
		if (fake_request) {
			fake_request = 0;
			if (fake_graph(dev) != 0)
				return 1;
		}
	}
	/* Finishing requests, flushing caches: a server's slow goodbye. */
	if (fake_stop && term_ms > 0)
		usleep((useconds_t)term_ms * 1000);
	object_dispose(dev);
	return 0;
}
