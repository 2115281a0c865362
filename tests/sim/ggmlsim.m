/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: ggml's Metal backend as the simulated llama.cpp programs
 * need it (ggmlsim.h).
 */
#include <objc/runtime.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggmlsim.h"

/* ggml-metal-device.m's three capability flags, from the same questions. */
void
ggmlsim_caps(GgmlSimDevice *dev, struct ggmlsim_caps *c)
{
	c->reduction = [dev supportsFamily:1007] || [dev supportsFamily:5001];
	c->matrix = [dev supportsFamily:1007];
	c->bfloat = [dev supportsFamily:5001] || [dev supportsFamily:1006];
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
			LOG("ggml_metal_device_init: GPU family: %-19s (%ld)\n",
			    name, base + i);
			return;
		}
}

/* Dispatch one of the kernels a graph would use, as ggml's lazy pipelines. */
static int
ggmlsim_kernel(GgmlSimDevice *dev, const char *label, const char *ggml_name,
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
int
ggmlsim_graph(GgmlSimDevice *dev)
{
	struct ggmlsim_caps	c;

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

int
ggmlsim_init(GgmlSimDevice *dev)
{
	struct ggmlsim_caps	c;
	char			error[512];

	ggmlsim_caps(dev, &c);

	LOG("ggml_metal_device_init: tensor API disabled for pre-M5 and "
	    "pre-A19 devices\n");
	LOG("ggml_metal_library_init: using embedded metal library\n");
	LOG("ggml_metal_library_init: loaded in 0.011 sec\n");
	LOG("ggml_metal_rsets_init: creating a residency set collection "
	    "(keep_alive = 180 s)\n");
	LOG("ggml_metal_device_init: GPU name:   MTL0 (%s)\n", [dev name]);
	ggmlsim_print_family(dev, "Apple", 1000, 21);
	ggmlsim_print_family(dev, "Common", 3000, 6);
	ggmlsim_print_family(dev, "Metal", 5000, 6);
	LOG("ggml_metal_device_init: simdgroup reduction   = %s\n",
	    c.reduction ? "true" : "false");
	LOG("ggml_metal_device_init: simdgroup matrix mul. = %s\n",
	    c.matrix ? "true" : "false");
	LOG("ggml_metal_device_init: has unified memory    = true\n");
	LOG("ggml_metal_device_init: has bfloat            = %s\n",
	    c.bfloat ? "true" : "false");
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
	return ggmlsim_graph(dev);
}

