/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR of the paravirtual Metal device (see mtlsim.h).  Built with gobjc
 * on the GNU Objective-C runtime, so the shim's real hooking code runs
 * against it unchanged.
 */
#ifdef MTLSIM_OVERBROAD
#define _GNU_SOURCE
#include <link.h>
#endif
#include <objc/runtime.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtlsim.h"

#ifdef MTLSIM_BASE_RENAMED
/* Test-only: a Metal release whose private base class has another name. */
#define _MTLDevice	_MTLDeviceRenamed
#endif

/*
 * The private base class the shim looks up by name; a root class here.
 * supportsFamily: is the base class's, inherited by the concrete device
 * classes as on macOS: the shim must add its hook to the concrete class
 * without touching the base.
 */
@interface _MTLDevice
{
	Class			isa;
@public
	unsigned long		apple_max;
	unsigned long		tg_memory;
	unsigned long long	working_set;
	char			extra[256];
}
+ (id)alloc;
- (id)init;
- (id)initGPUFamilySupport;
- (BOOL)supportsFamily:(long)family;
- (id)newLibraryWithSource:(id)source options:(id)options error:(id *)error;
- (id)newComputePipelineStateWithFunction:(id)function error:(id *)error;
- (id)newCommandQueue;
- (id)newResidencySetWithDescriptor:(id)descriptor error:(id *)error;
- (id)newBufferWithBytesNoCopy:(void *)bytes length:(unsigned long)length
    options:(unsigned long)options deallocator:(id)deallocator;
@end

/*
 * What the device's calls make: a library, a function, a pipeline, a
 * queue, a command buffer, an error.  Each holds the dispatch it is for
 * (the "source" handed to newLibraryWithSource:, opaque to the shim as an
 * NSString is) and Metal's error text; freed with object_dispose.
 */
@interface MTLSimObject
{
	Class				 isa;
@public
	const struct mtlsim_dispatch	*dispatch;
	unsigned long			 status;
	char				 text[512];
}
+ (id)alloc;
@end

/* An NSError: its text, and its code (status holds it) for -code. */
@interface MTLSimError : MTLSimObject
- (long)code;
@end

/* A buffer over the caller's pages, or over a copy of them (stale). */
@interface MTLSimBuffer : MTLSimObject
{
@public
	void		*bytes;
	void		*copy;
	unsigned long	 length;
}
- (void *)contents;
@end

@interface MTLSimLibrary : MTLSimObject
- (id)newFunctionWithName:(const char *)name;
@end

@interface MTLSimFunction : MTLSimObject
@end

@interface MTLSimPipeline : MTLSimObject
@end

@interface MTLSimCommandQueue : MTLSimObject
- (id)commandBuffer;
- (id)commandBufferWithUnretainedReferences;
@end

/*
 * Its error is its own, as Metal's error property is the buffer's (not
 * handed over): whoever asks for it, the shim too, frees nothing.
 */
@interface MTLSimCommandBuffer : MTLSimObject
{
@public
	id	 error_obj;
	long	 code;
}
- (void)commit;
- (void)waitUntilCompleted;
- (unsigned long)status;
- (id)error;
@end

/* The concrete class of the guest's device (MLX issue #31's log). */
@interface AppleParavirtDevice : _MTLDevice
- (unsigned long)maxThreadgroupMemoryLength;
- (unsigned long long)recommendedMaxWorkingSetSize;
- (const char *)name;
@end

/* A paravirtual device class that lacks one method the shim may hook. */
@interface MTLSimParavirtLimitedDevice : _MTLDevice
- (unsigned long)maxThreadgroupMemoryLength;
- (const char *)name;
@end

/* A Mac's own GPU: M1 Ultra, as llama.cpp logged it on the host. */
@interface AGXG13XDevice : _MTLDevice
- (unsigned long)maxThreadgroupMemoryLength;
- (unsigned long long)recommendedMaxWorkingSetSize;
- (const char *)name;
@end

static unsigned long long
mtlsim_env_number(const char *name, unsigned long long fallback)
{
	const char	*text = mtlsim_getenv(name);

	return text != NULL && *text != '\0' ? strtoull(text, NULL, 0) :
	    fallback;
}

#ifdef MTLSIM_OVERBROAD
static int
mtlsim_find_shim(struct dl_phdr_info *info, size_t size, void *found)
{
	(void)size;
	if (info->dlpi_name != NULL && strstr(info->dlpi_name, "libmetalcap"))
		*(int *)found = 1;
	return 0;
}

/* Test-only: an over-broad profile also claims Metal3 once injected. */
static BOOL
mtlsim_overbroad(long family)
{
	int	found = 0;

	if (family != 5001)
		return NO;
	dl_iterate_phdr(mtlsim_find_shim, &found);
	return found ? YES : NO;
}
#endif

/* Stock answers of the guest, plus the test's extra families. */
static BOOL
mtlsim_supports(_MTLDevice *dev, long family)
{
	const char	*p;
	char		*end;

	if (family >= 1001 && family <= 1000 + (long)dev->apple_max)
		return YES;
	if (family >= 3001 && family <= 3000 + MTLSIM_STOCK_COMMON_FAMILY)
		return YES;
#ifdef MTLSIM_OVERBROAD
	if (mtlsim_overbroad(family))
		return YES;
#endif
	for (p = dev->extra; *p != '\0'; p = end + (*end == ',')) {
		if (strtol(p, &end, 10) == family)
			return YES;
		if (end == p)
			break;
	}
	return NO;
}

/* An NSError as the calls hand it back: its text, freed by the caller. */
static id
mtlsim_error(const char *text)
{
	MTLSimError	*e = [MTLSimError alloc];

	snprintf(e->text, sizeof e->text, "%s", text);
	return e;
}

@implementation _MTLDevice
+ (id)alloc
{
	return class_createInstance(self, 0);
}

/* The guest's stock answers, or the M1 Ultra host's for AGXG13XDevice. */
- (id)init
{
	const char	*families = mtlsim_getenv("MTLSIM_EXTRA_FAMILIES");
	bool		 host = strcmp(class_getName(object_getClass(self)),
	    "AGXG13XDevice") == 0;

	/* Copy first: mtlsim_getenv reuses its buffer. */
	strncpy(extra, families ? families : host ? MTLSIM_HOST_EXTRA_FAMILIES :
	    "", sizeof extra - 1);
	apple_max = mtlsim_env_number("MTLSIM_APPLE_FAMILY", host ?
	    MTLSIM_HOST_APPLE_FAMILY : MTLSIM_STOCK_APPLE_FAMILY);
	tg_memory = mtlsim_env_number("MTLSIM_THREADGROUP_MEMORY",
	    MTLSIM_STOCK_TG_MEMORY);
	working_set = mtlsim_env_number("MTLSIM_WORKING_SET", host ?
	    MTLSIM_HOST_WORKING_SET : MTLSIM_STOCK_WORKING_SET);
	return [self initGPUFamilySupport];
}

- (id)initGPUFamilySupport
{
	return self;
}

- (BOOL)supportsFamily:(long)family
{
	return mtlsim_supports(self, family);
}

- (id)newLibraryWithSource:(id)source options:(id)options error:(id *)error
{
	MTLSimLibrary	*lib = [MTLSimLibrary alloc];

	(void)options;
	lib->dispatch = (const struct mtlsim_dispatch *)(void *)source;
	if (mtlsim_stage_compile(lib->dispatch, lib->text,
	    sizeof lib->text) == 0)
		return lib;
	*error = mtlsim_error(lib->text);
	object_dispose(lib);
	return nil;
}

- (id)newComputePipelineStateWithFunction:(id)function error:(id *)error
{
	MTLSimPipeline	*pipe = [MTLSimPipeline alloc];

	pipe->dispatch = ((MTLSimFunction *)function)->dispatch;
	if (mtlsim_stage_pipeline(pipe->dispatch, pipe->text,
	    sizeof pipe->text) == 0)
		return pipe;
	*error = mtlsim_error(pipe->text);
	object_dispose(pipe);
	return nil;
}

- (id)newCommandQueue
{
	return [MTLSimCommandQueue alloc];
}

/* ggml fails on a residency set only when an NSError came back. */
- (id)newResidencySetWithDescriptor:(id)descriptor error:(id *)error
{
	char	text[512];

	(void)descriptor;
	if (mtlsim_stage_residency(text, sizeof text) == 0)
		return [MTLSimObject alloc];
	*error = text[0] != '\0' ? mtlsim_error(text) : nil;
	return nil;
}

/*
 * No copy: the buffer is the caller's pages, so a later write through them
 * is what the GPU reads.  MTLSIM_NOCOPY=stale plays the macOS 14 guest's
 * paravirtual device (unslothai/llama.cpp PR #37): over a file mapping,
 * the GPU reads the bytes as they were when the buffer was made.  A Mac's
 * own GPU is not affected.
 */
- (id)newBufferWithBytesNoCopy:(void *)bytes length:(unsigned long)length
    options:(unsigned long)options deallocator:(id)deallocator
{
	MTLSimBuffer	*buf = [MTLSimBuffer alloc];
	const char	*mode = mtlsim_getenv("MTLSIM_NOCOPY");

	(void)options;
	(void)deallocator;
	buf->bytes = bytes;
	buf->length = length;
	if (mode != NULL && strcmp(mode, "stale") == 0 &&
	    strncmp(class_getName(object_getClass(self)), "AGX", 3) != 0 &&
	    mtlsim_file_backed(bytes) && (buf->copy = malloc(length)) != NULL)
		memcpy(buf->copy, bytes, length);
	return buf;
}
@end

@implementation MTLSimObject
+ (id)alloc
{
	return class_createInstance(self, 0);
}
@end

@implementation MTLSimError
- (long)code
{
	return (long)status;
}
@end

@implementation MTLSimBuffer
- (void *)contents
{
	return copy != NULL ? copy : bytes;
}
@end

@implementation MTLSimLibrary
- (id)newFunctionWithName:(const char *)name
{
	MTLSimFunction	*fn;

	(void)name;
	if (mtlsim_stage_function(dispatch, text, sizeof text) == -1)
		return nil;
	fn = [MTLSimFunction alloc];
	fn->dispatch = dispatch;
	return fn;
}
@end

@implementation MTLSimFunction
@end

@implementation MTLSimPipeline
@end

@implementation MTLSimCommandQueue
- (id)commandBuffer
{
	return [MTLSimCommandBuffer alloc];
}

- (id)commandBufferWithUnretainedReferences
{
	return [MTLSimCommandBuffer alloc];
}
@end

@implementation MTLSimCommandBuffer
- (void)commit
{
	status = mtlsim_stage_run(dispatch, text, sizeof text, &code) == 0 ?
	    MTLSIM_STATUS_COMPLETED : MTLSIM_STATUS_ERROR;
}

- (void)waitUntilCompleted
{
}

- (unsigned long)status
{
	return status;
}

- (id)error
{
	if (status != MTLSIM_STATUS_ERROR)
		return nil;
	if (error_obj == nil) {
		error_obj = mtlsim_error(text);
		((MTLSimError *)error_obj)->status = (unsigned long)code;
	}
	return error_obj;
}
@end

@implementation AppleParavirtDevice
- (unsigned long)maxThreadgroupMemoryLength
{
	return tg_memory;
}

- (unsigned long long)recommendedMaxWorkingSetSize
{
	return working_set;
}

- (const char *)name
{
	return MTLSIM_DEVICE_NAME;
}
@end

@implementation MTLSimParavirtLimitedDevice
- (unsigned long)maxThreadgroupMemoryLength
{
	return tg_memory;
}

- (const char *)name
{
	return MTLSIM_DEVICE_NAME;
}
@end

@implementation AGXG13XDevice
- (unsigned long)maxThreadgroupMemoryLength
{
	return tg_memory;
}

- (unsigned long long)recommendedMaxWorkingSetSize
{
	return working_set;
}

- (const char *)name
{
	return MTLSIM_HOST_DEVICE_NAME;
}
@end

id
MTLCreateSystemDefaultDevice(void)
{
	const char	*kind;

	if (mtlsim_getenv("MTLSIM_NO_DEVICE") != NULL)
		return nil;
	kind = mtlsim_getenv("MTLSIM_DEVICE");
	if (kind != NULL && strcmp(kind, "limited") == 0)
		return [[MTLSimParavirtLimitedDevice alloc] init];
	if (kind != NULL && strcmp(kind, "bare-metal") == 0)
		return [[AGXG13XDevice alloc] init];
	return [[AppleParavirtDevice alloc] init];
}

/* The device's error text, and the error freed. */
static void
mtlsim_take_error(id error, char *buf, size_t len)
{
	snprintf(buf, len, "%s", error != nil ? ((MTLSimError *)error)->text :
	    "(no error)");
	if (error != nil)
		object_dispose(error);
}

/*
 * The buffers the dispatch asks to be made without a copy, through the
 * device's newBufferWithBytesNoCopy:length:options:deallocator: (as ggml
 * wraps mmapped weights, ggml-metal-device.m ggml_metal_buffer_map); the
 * kernel reads what each buffer's contents are.
 */
static void
mtlsim_nocopy_buffers(_MTLDevice *dev, const struct mtlsim_dispatch *d,
    struct mtlsim_dispatch *run, MTLSimBuffer **nocopy)
{
	unsigned	i;

	for (i = 0; i < d->nbuffers && i < 4; i++) {
		if ((d->nocopy & (1U << i)) == 0)
			continue;
		nocopy[i] = [dev newBufferWithBytesNoCopy:d->buffers[i]
		    length:d->sizes[i] options:0 deallocator:nil];
		run->buffers[i] = [nocopy[i] contents];
	}
}

static void
mtlsim_nocopy_free(MTLSimBuffer **nocopy)
{
	unsigned	i;

	for (i = 0; i < 4; i++)
		if (nocopy[i] != nil) {
			free(nocopy[i]->copy);
			object_dispose(nocopy[i]);
		}
}

/*
 * A kernel's pipeline, through the calls ggml makes to build one
 * (ggml-metal-device.m: newLibraryWithSource:options:error:,
 * newFunctionWithName:, newComputePipelineStateWithFunction:error:), and
 * nothing run: ggml's tensor API check builds one and never runs it.
 */
enum mtlsim_stage
mtlsim_build(id device, const struct mtlsim_dispatch *d, char *error,
    size_t errorlen)
{
	_MTLDevice		*dev = device;
	MTLSimLibrary		*lib;
	MTLSimFunction		*fn;
	id			 pipe, err = nil;

	if ((lib = [dev newLibraryWithSource:(id)(void *)d options:nil
	    error:&err]) == nil) {
		mtlsim_take_error(err, error, errorlen);
		return MTLSIM_LIBRARY_FAILED;
	}
	fn = [lib newFunctionWithName:d->function];
	if (fn == nil) {
		snprintf(error, errorlen, "%s", lib->text);
		object_dispose(lib);
		return MTLSIM_COMPILE_FAILED;
	}
	object_dispose(lib);
	pipe = [dev newComputePipelineStateWithFunction:fn error:&err];
	object_dispose(fn);
	if (pipe == nil) {
		mtlsim_take_error(err, error, errorlen);
		return MTLSIM_PIPELINE_FAILED;
	}
	object_dispose(pipe);
	return MTLSIM_COMPLETED;
}

/*
 * Dispatch one kernel and wait for it: its pipeline built, then the calls
 * ggml-metal-context.m makes (commandBuffer, commit, waitUntilCompleted,
 * status).
 */
enum mtlsim_stage
mtlsim_dispatch(id device, const struct mtlsim_dispatch *d, char *error,
    size_t errorlen)
{
	_MTLDevice		*dev = device;
	MTLSimCommandQueue	*queue;
	MTLSimCommandBuffer	*cb;
	enum mtlsim_stage	 stage;
	struct mtlsim_dispatch	 run = *d;
	MTLSimBuffer		*nocopy[4] = { nil, nil, nil, nil };

	if ((stage = mtlsim_build(device, d, error, errorlen)) !=
	    MTLSIM_COMPLETED)
		return stage;
	mtlsim_nocopy_buffers(dev, d, &run, nocopy);
	if (d->prepare != NULL)
		d->prepare(d->prepare_arg);
	queue = [dev newCommandQueue];
	cb = [queue commandBuffer];
	cb->dispatch = &run;
	[cb commit];
	[cb waitUntilCompleted];
	if ([cb status] != MTLSIM_STATUS_COMPLETED) {
		snprintf(error, errorlen, "%s", [cb error] != nil ?
		    ((MTLSimError *)[cb error])->text : "(no error)");
		stage = MTLSIM_RUN_FAILED;
	}
	if (cb->error_obj != nil)
		object_dispose(cb->error_obj);
	object_dispose(cb);
	object_dispose(queue);
	mtlsim_nocopy_free(nocopy);
	return stage;
}

/* -1 for nil, with the error's text (empty when none came back). */
int
mtlsim_new_residency_set(id device, char *error, size_t errorlen)
{
	id	set, err = nil;

	set = [(_MTLDevice *)device newResidencySetWithDescriptor:nil
	    error:&err];
	if (set != nil) {
		object_dispose(set);
		error[0] = '\0';
		return 0;
	}
	if (err != nil)
		mtlsim_take_error(err, error, errorlen);
	else
		error[0] = '\0';
	return -1;
}
