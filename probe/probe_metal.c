/* SPDX-License-Identifier: MIT */
/*
 * The metal backend (macOS): Metal from plain C through objc_msgSend, each
 * send cast to its exact prototype (arm64 has no variadic dispatch), inside
 * an autorelease pool per operation.  Objects from new... and alloc are released
 * here; everything else is autoreleased.
 *
 * Cross-compiled on Linux and checked as a Mach-O file; not run by CI.
 */
#include <stddef.h>

#include <mach-o/dyld.h>
#include <objc/message.h>
#include <objc/runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

/* The layout of MTLSize. */
struct metal_size {
	unsigned long	width, height, depth;
};

id	MTLCreateSystemDefaultDevice(void);
void	*objc_autoreleasePoolPush(void);
void	objc_autoreleasePoolPop(void *);

#define MTL_STATUS_COMPLETED	4	/* MTLCommandBufferStatusCompleted */
#define MTL_STORAGE_SHARED	0	/* MTLResourceStorageModeShared */

/* Typed sends: SEND(return type, receiver, selector, argument types...). */
#define SEND0(R, obj, name) \
	((R (*)(id, SEL))objc_msgSend)((obj), sel_registerName(name))
#define SEND1(R, obj, name, T1, a) \
	((R (*)(id, SEL, T1))objc_msgSend)((obj), sel_registerName(name), (a))
#define SEND2(R, obj, name, T1, a, T2, b) \
	((R (*)(id, SEL, T1, T2))objc_msgSend)((obj), \
	    sel_registerName(name), (a), (b))
#define SEND3(R, obj, name, T1, a, T2, b, T3, c) \
	((R (*)(id, SEL, T1, T2, T3))objc_msgSend)((obj), \
	    sel_registerName(name), (a), (b), (c))
#define SEND4(R, obj, name, T1, a, T2, b, T3, c, T4, e) \
	((R (*)(id, SEL, T1, T2, T3, T4))objc_msgSend)((obj), \
	    sel_registerName(name), (a), (b), (c), (e))
#define CLASS(name)	((id)objc_getClass(name))

struct probe_device {
	id	device;
	id	queue;
};

static void
metal_release(id obj)
{
	if (obj != nil)
		SEND0(void, obj, "release");
}

/* An autoreleased NSString. */
static id
metal_string(const char *s)
{
	return SEND1(id, CLASS("NSString"), "stringWithUTF8String:",
	    const char *, s);
}

static const char *
metal_utf8(id string)
{
	return string == nil ? "" : SEND0(const char *, string, "UTF8String");
}

/* NSError's description: Error Domain=... Code=... "...". */
static void
metal_error(id error, const char *fallback, char *buf, size_t len)
{
	snprintf(buf, len, "%s", error != nil ?
	    metal_utf8(SEND0(id, error, "description")) : fallback);
}

static bool
metal_responds(id obj, const char *name)
{
	return SEND1(BOOL, obj, "respondsToSelector:", SEL,
	    sel_registerName(name)) != NO;
}

static struct probe_device *
metal_open(void)
{
	struct probe_device	*d;
	id			 dev = MTLCreateSystemDefaultDevice();

	if (dev == nil)
		return NULL;
	if ((d = calloc(1, sizeof *d)) == NULL) {
		metal_release(dev);
		return NULL;
	}
	d->device = dev;
	d->queue = SEND0(id, dev, "newCommandQueue");
	return d;
}

static void
metal_close(struct probe_device *d)
{
	metal_release(d->queue);
	metal_release(d->device);
	free(d);
}

static void
metal_device_name(struct probe_device *d, char *buf, size_t len)
{
	void	*pool = objc_autoreleasePoolPush();

	snprintf(buf, len, "%s", metal_utf8(SEND0(id, d->device, "name")));
	objc_autoreleasePoolPop(pool);
}

static bool
metal_supports_family(struct probe_device *d, long family)
{
	return SEND1(BOOL, d->device, "supportsFamily:", long, family) != NO;
}

static uint64_t
metal_threadgroup_memory(struct probe_device *d)
{
	return SEND0(unsigned long, d->device, "maxThreadgroupMemoryLength");
}

static uint64_t
metal_working_set(struct probe_device *d)
{
	if (!metal_responds(d->device, "recommendedMaxWorkingSetSize"))
		return 0;
	return SEND0(uint64_t, d->device, "recommendedMaxWorkingSetSize");
}

/* Compile the library and make the pipeline; nil with o->error on failure. */
static id
metal_pipeline(struct probe_device *d, const struct probe_dispatch *p,
    struct probe_outcome *o)
{
	id	options, library, function, pipeline, error = nil;

	options = SEND0(id, CLASS("MTLCompileOptions"), "new");
	if (p->language_version != 0)
		SEND1(void, options, "setLanguageVersion:", unsigned long,
		    p->language_version);
	library = SEND3(id, d->device, "newLibraryWithSource:options:error:",
	    id, metal_string(p->source), id, options, id *, &error);
	metal_release(options);
	if (library == nil) {
		metal_error(error, "newLibraryWithSource failed", o->error,
		    sizeof o->error);
		return nil;
	}
	function = SEND1(id, library, "newFunctionWithName:", id,
	    metal_string(p->function));
	metal_release(library);
	if (function == nil) {
		snprintf(o->error, sizeof o->error, "function %s not found in "
		    "the library", p->function);
		return nil;
	}
	o->compiled = true;
	pipeline = SEND2(id, d->device,
	    "newComputePipelineStateWithFunction:error:", id, function,
	    id *, &error);
	metal_release(function);
	if (pipeline == nil) {
		metal_error(error, "newComputePipelineState failed", o->error,
		    sizeof o->error);
		return nil;
	}
	/* llama.cpp's "incompatible pipeline" test, plus our group size. */
	if (SEND0(unsigned long, pipeline, "threadExecutionWidth") == 0 ||
	    SEND0(unsigned long, pipeline, "maxTotalThreadsPerThreadgroup") <
	    p->threads_per_group) {
		snprintf(o->error, sizeof o->error, "incompatible pipeline: "
		    "width %lu, at most %lu threads per threadgroup",
		    SEND0(unsigned long, pipeline, "threadExecutionWidth"),
		    SEND0(unsigned long, pipeline,
		    "maxTotalThreadsPerThreadgroup"));
		metal_release(pipeline);
		return nil;
	}
	o->pipeline = true;
	return pipeline;
}

/* Encode, commit and wait; true when the command buffer completed. */
static bool
metal_run(struct probe_device *d, const struct probe_dispatch *p,
    id pipeline, id *buffers, struct probe_outcome *o)
{
	struct metal_size	groups = { p->threadgroups, 1, 1 };
	struct metal_size	threads = { p->threads_per_group, 1, 1 };
	id			cmd, enc;
	unsigned long		i;
	long			status;

	cmd = SEND0(id, d->queue, "commandBuffer");
	enc = SEND0(id, cmd, "computeCommandEncoder");
	SEND1(void, enc, "setComputePipelineState:", id, pipeline);
	for (i = 0; i < p->nbuffers; i++)
		SEND3(void, enc, "setBuffer:offset:atIndex:", id, buffers[i],
		    unsigned long, 0UL, unsigned long, i);
	if (p->threadgroup_memory != 0)
		SEND2(void, enc, "setThreadgroupMemoryLength:atIndex:",
		    unsigned long, p->threadgroup_memory, unsigned long, 0UL);
	SEND2(void, enc, "dispatchThreadgroups:threadsPerThreadgroup:",
	    struct metal_size, groups, struct metal_size, threads);
	SEND0(void, enc, "endEncoding");
	SEND0(void, cmd, "commit");
	SEND0(void, cmd, "waitUntilCompleted");
	status = SEND0(long, cmd, "status");
	if (status == MTL_STATUS_COMPLETED)
		return true;
	metal_error(SEND0(id, cmd, "error"), "command buffer failed",
	    o->error, sizeof o->error);
	return false;
}

/*
 * A copy of the caller's bytes, or, where the dispatch asks, a buffer over
 * its pages themselves, as ggml wraps mmapped weights
 * (ggml-metal-device.m, ggml_metal_buffer_map): shared storage, no
 * deallocator (the caller unmaps).
 */
static id
metal_buffer(struct probe_device *d, const struct probe_dispatch *p,
    unsigned i)
{
	if (p->nocopy & (1U << i))
		return SEND4(id, d->device,
		    "newBufferWithBytesNoCopy:length:options:deallocator:",
		    void *, p->buffers[i], unsigned long, p->sizes[i],
		    unsigned long, (unsigned long)MTL_STORAGE_SHARED, id, nil);
	return SEND3(id, d->device, "newBufferWithBytes:length:options:",
	    const void *, p->buffers[i], unsigned long, p->sizes[i],
	    unsigned long, (unsigned long)MTL_STORAGE_SHARED);
}

static void
metal_dispatch(struct probe_device *d, const struct probe_dispatch *p,
    struct probe_outcome *o)
{
	void		*pool = objc_autoreleasePoolPush();
	id		 pipeline, buffers[PROBE_MAX_BUFFERS] = { nil };
	unsigned	 i;
	void		*out;

	if ((pipeline = metal_pipeline(d, p, o)) == nil)
		goto out;
	for (i = 0; i < p->nbuffers; i++)
		buffers[i] = metal_buffer(d, p, i);
	/* A buffer the device would not make: nothing to run, or to copy. */
	for (i = 0; i < p->nbuffers; i++)
		if (buffers[i] == nil) {
			snprintf(o->error, sizeof o->error, "the device made no "
			    "buffer %u of %zu bytes (newBufferWithBytes%s "
			    "returned nil)", i, p->sizes[i],
			    p->nocopy & (1U << i) ? "NoCopy" : "");
			goto release;
		}
	if (p->prepare != NULL)
		p->prepare(p->prepare_arg);
	if (metal_run(d, p, pipeline, buffers, o)) {
		o->ran = true;
		out = SEND0(void *, buffers[p->output], "contents");
		if (out != p->buffers[p->output])	/* not a no-copy one */
			memcpy(p->buffers[p->output], out,
			    p->sizes[p->output]);
	}
release:
	for (i = 0; i < p->nbuffers; i++)
		metal_release(buffers[i]);
	metal_release(pipeline);
out:
	objc_autoreleasePoolPop(pool);
}

/* As MLX does: an empty descriptor; nil, with or without an error, fails. */
static int
metal_residency_set(struct probe_device *d, char *error, size_t len)
{
	void	*pool = objc_autoreleasePoolPush();
	id	 desc, set, err = nil;
	int	 rc = 0;

	error[0] = '\0';
	/* Before macOS 15 there are no residency sets, and MLX uses none. */
	if (!metal_responds(d->device, "newResidencySetWithDescriptor:error:"))
		goto out;
	desc = SEND0(id, SEND0(id, CLASS("MTLResidencySetDescriptor"),
	    "alloc"), "init");
	set = SEND2(id, d->device, "newResidencySetWithDescriptor:error:",
	    id, desc, id *, &err);
	metal_release(desc);
	if (set == nil) {
		if (err != nil)
			snprintf(error, len, "%s/%ld/%s", metal_utf8(SEND0(id,
			    err, "domain")), SEND0(long, err, "code"),
			    metal_utf8(SEND0(id, err, "localizedDescription")));
		rc = -1;
	}
	metal_release(set);
out:
	objc_autoreleasePoolPop(pool);
	return rc;
}

static int
metal_self_path(char *buf, size_t len)
{
	uint32_t	size = (uint32_t)len;

	return _NSGetExecutablePath(buf, &size) == 0 ? 0 : -1;
}

const struct probe_backend probe_backend = {
	.name = "metal",
	.open = metal_open,
	.close = metal_close,
	.device_name = metal_device_name,
	.supports_family = metal_supports_family,
	.threadgroup_memory = metal_threadgroup_memory,
	.working_set = metal_working_set,
	.dispatch = metal_dispatch,
	.residency_set = metal_residency_set,
	.self_path = metal_self_path,
};
