/* SPDX-License-Identifier: MIT */
/*
 * The shim as a witness of the Metal calls that fail.  A log line is text:
 * llama-server prints a client's grammar, prompt or URL to stderr, so a
 * line shaped like ggml's "failed to compile pipeline" proves nothing by
 * itself.  What ggml's Metal backend does when a kernel breaks goes
 * through the device (ggml-metal-device.m: newLibraryWithSource:options:
 * error:, newLibraryWithURL:error:, newComputePipelineStateWithFunction:
 * error:, newCommandQueue, newResidencySetWithDescriptor:error:), the
 * library's functions (newFunctionWithName:constantValues:error:, where
 * ggml's lazy "failed to compile pipeline" comes from) and a command
 * buffer's status (ggml-metal-context.m), and the shim, hooked on the
 * device's class already, sees each of them come back failed.  It
 * appends one witness line per kind of failure to the process's report;
 * metalcapd counts a failure line of the log only when a witness or the
 * process's death agrees (metalcapd(8), EVIDENCE).
 *
 * The library and the command buffer are reached in steps: the first
 * library the device makes shows the library's class, whose functions
 * are then watched; the first queue shows the queue's class, whose
 * commandBuffer hooks show the buffer's class, whose status is watched.
 * Every hook passes the original's answer on unchanged.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "shim_hook.h"
#include "shim_report.h"
#include "shim_witness.h"

/* MTLCommandBufferStatusError (Metal's MTLCommandBuffer.h). */
#define SHIM_STATUS_ERROR	5

typedef id		(*shim_source_fn)(id, SEL, id, id, id *);
typedef id		(*shim_name_fn)(id, SEL, id);
typedef id		(*shim_error_fn)(id, SEL, id, id *);
typedef id		(*shim_make_fn)(id, SEL);
typedef unsigned long	(*shim_status_fn)(id, SEL);
typedef long		(*shim_code_fn)(id, SEL);

enum shim_witness_kind {
	SHIM_WITNESS_LIBRARY,
	SHIM_WITNESS_FUNCTION,
	SHIM_WITNESS_PIPELINE,
	SHIM_WITNESS_QUEUE,
	SHIM_WITNESS_COMMAND_BUFFER,
	SHIM_WITNESS_RESIDENCY_SET,
	SHIM_WITNESS_COUNT,
};

static const char *const shim_witness_names[SHIM_WITNESS_COUNT] = {
	[SHIM_WITNESS_LIBRARY] = "library",
	[SHIM_WITNESS_FUNCTION] = "function",
	[SHIM_WITNESS_PIPELINE] = "pipeline",
	[SHIM_WITNESS_QUEUE] = "queue",
	[SHIM_WITNESS_COMMAND_BUFFER] = "command-buffer",
	[SHIM_WITNESS_RESIDENCY_SET] = "residency-set",
};

static const char		*shim_witness_path;
/* One line per kind: a server failing every request writes one. */
static atomic_bool		 shim_witness_said[SHIM_WITNESS_COUNT];
/*
 * A command buffer's, one per code (MTLCommandBufferError, 0 to 12 in
 * Metal's MTLCommandBuffer.h; the last slot takes any other): running
 * out of memory first must not hide a page fault that comes later.
 */
#define SHIM_CODES	14
static atomic_bool		 shim_buffer_said[SHIM_CODES];
static pthread_mutex_t		 shim_witness_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool		 shim_library_hooked, shim_queue_hooked;
static atomic_bool		 shim_buffer_hooked;

static _Atomic(IMP)	shim_orig_library_source;
static _Atomic(IMP)	shim_orig_library_url;
static _Atomic(IMP)	shim_orig_pipeline;
static _Atomic(IMP)	shim_orig_function;
static _Atomic(IMP)	shim_orig_function_constants;
static _Atomic(IMP)	shim_orig_queue;
static _Atomic(IMP)	shim_orig_residency;
static _Atomic(IMP)	shim_orig_command_buffer;
static _Atomic(IMP)	shim_orig_command_buffer_unretained;
static _Atomic(IMP)	shim_orig_status;

static void
shim_witness_code(enum shim_witness_kind kind, const char *call, long code)
{
	char		 line[SHIM_REPORT_LINE_MAX];
	size_t		 len;
	atomic_bool	*said = &shim_witness_said[kind];

	if (kind == SHIM_WITNESS_COMMAND_BUFFER)
		said = &shim_buffer_said[code >= 0 && code < SHIM_CODES - 1 ?
		    code : SHIM_CODES - 1];
	if (atomic_exchange(said, true))
		return;
	len = shim_report_witness_format(shim_witness_names[kind], call, code,
	    (long)getpid(), (long)getpgrp(), line, sizeof line);
	if (len > 0)
		shim_report_write(shim_witness_path, line, len, (long)getpid());
}

static void
shim_witness(enum shim_witness_kind kind, const char *call)
{
	shim_witness_code(kind, call, -1);
}

/*
 * An instance method's implementation, or NULL when the object's class
 * has none: called through the IMP, never messaged, so a class without
 * it cannot raise (Apple's runtime forwards an unknown selector and
 * NSObject's forwarding throws).
 */
static IMP
shim_method(id obj, const char *name)
{
	Method	m;

	if (obj == nil || (m = class_getInstanceMethod(object_getClass(obj),
	    sel_registerName(name))) == NULL)
		return NULL;
	return method_getImplementation(m);
}

/*
 * The code of a failed command buffer's error (NSError's -code, an
 * MTLCommandBufferError), or -1 when it has none to give.
 */
static long
shim_buffer_code(id buffer)
{
	IMP	get = shim_method(buffer, "error"), code;
	id	error;

	if (get == NULL || (error = SHIM_FROM_IMP(shim_make_fn, get)(buffer,
	    sel_registerName("error"))) == nil ||
	    (code = shim_method(error, "code")) == NULL)
		return -1;
	return SHIM_FROM_IMP(shim_code_fn, code)(error,
	    sel_registerName("code"));
}

/* A kernel's function: nil is ggml's "failed to compile pipeline". */
static id
shim_function(id self, SEL cmd, id name)
{
	id	fn = SHIM_FROM_IMP(shim_name_fn, shim_original(
	    &shim_orig_function))(self, cmd, name);

	if (fn == nil)
		shim_witness(SHIM_WITNESS_FUNCTION, "newFunctionWithName:");
	return fn;
}

static id
shim_function_constants(id self, SEL cmd, id name, id constants, id *error)
{
	id	fn = SHIM_FROM_IMP(shim_source_fn, shim_original(
	    &shim_orig_function_constants))(self, cmd, name, constants, error);

	if (fn == nil)
		shim_witness(SHIM_WITNESS_FUNCTION,
		    "newFunctionWithName:constantValues:error:");
	return fn;
}

/* The first library shows the class whose functions are watched. */
static void
shim_hook_library(id lib)
{
	char	unused[128] = "";
	Class	cls;

	if (lib == nil || atomic_load(&shim_library_hooked))
		return;
	pthread_mutex_lock(&shim_witness_lock);
	if (!atomic_load(&shim_library_hooked)) {
		cls = object_getClass(lib);
		shim_hook(cls, "newFunctionWithName:",
		    SHIM_AS_IMP(shim_function), &shim_orig_function, unused,
		    sizeof unused);
		shim_hook(cls, "newFunctionWithName:constantValues:error:",
		    SHIM_AS_IMP(shim_function_constants),
		    &shim_orig_function_constants, unused, sizeof unused);
		atomic_store(&shim_library_hooked, true);
	}
	pthread_mutex_unlock(&shim_witness_lock);
}

static id
shim_library_source(id self, SEL cmd, id source, id options, id *error)
{
	id	lib = SHIM_FROM_IMP(shim_source_fn, shim_original(
	    &shim_orig_library_source))(self, cmd, source, options, error);

	if (lib == nil)
		shim_witness(SHIM_WITNESS_LIBRARY,
		    "newLibraryWithSource:options:error:");
	shim_hook_library(lib);
	return lib;
}

static id
shim_library_url(id self, SEL cmd, id url, id *error)
{
	id	lib = SHIM_FROM_IMP(shim_error_fn, shim_original(
	    &shim_orig_library_url))(self, cmd, url, error);

	if (lib == nil)
		shim_witness(SHIM_WITNESS_LIBRARY, "newLibraryWithURL:error:");
	shim_hook_library(lib);
	return lib;
}

static id
shim_pipeline(id self, SEL cmd, id function, id *error)
{
	id	pipeline = SHIM_FROM_IMP(shim_error_fn, shim_original(
	    &shim_orig_pipeline))(self, cmd, function, error);

	if (pipeline == nil)
		shim_witness(SHIM_WITNESS_PIPELINE,
		    "newComputePipelineStateWithFunction:error:");
	return pipeline;
}

/*
 * ggml goes on without residency sets when nil comes back alone, and
 * fails only when an error came with it (ggml_metal_buffer_rset_init).
 */
static id
shim_residency(id self, SEL cmd, id descriptor, id *error)
{
	id	set = SHIM_FROM_IMP(shim_error_fn, shim_original(
	    &shim_orig_residency))(self, cmd, descriptor, error);

	if (set == nil && error != NULL && *error != nil)
		shim_witness(SHIM_WITNESS_RESIDENCY_SET,
		    "newResidencySetWithDescriptor:error:");
	return set;
}

static unsigned long
shim_status(id self, SEL cmd)
{
	unsigned long	status = SHIM_FROM_IMP(shim_status_fn,
	    shim_original(&shim_orig_status))(self, cmd);

	if (status == SHIM_STATUS_ERROR)
		shim_witness_code(SHIM_WITNESS_COMMAND_BUFFER, "status",
		    shim_buffer_code(self));
	return status;
}

/* The first command buffer shows the class whose status is watched. */
static void
shim_hook_buffer(id buffer)
{
	char	unused[64] = "";

	if (buffer == nil || atomic_load(&shim_buffer_hooked))
		return;
	pthread_mutex_lock(&shim_witness_lock);
	if (!atomic_load(&shim_buffer_hooked)) {
		shim_hook(object_getClass(buffer), "status",
		    SHIM_AS_IMP(shim_status), &shim_orig_status, unused,
		    sizeof unused);
		atomic_store(&shim_buffer_hooked, true);
	}
	pthread_mutex_unlock(&shim_witness_lock);
}

static id
shim_command_buffer(id self, SEL cmd)
{
	id	buffer = SHIM_FROM_IMP(shim_make_fn, shim_original(
	    &shim_orig_command_buffer))(self, cmd);

	shim_hook_buffer(buffer);
	return buffer;
}

static id
shim_command_buffer_unretained(id self, SEL cmd)
{
	id	buffer = SHIM_FROM_IMP(shim_make_fn, shim_original(
	    &shim_orig_command_buffer_unretained))(self, cmd);

	shim_hook_buffer(buffer);
	return buffer;
}

/* The first queue shows the class whose command buffers are followed. */
static id
shim_queue(id self, SEL cmd)
{
	char	unused[128] = "";
	id	queue = SHIM_FROM_IMP(shim_make_fn, shim_original(
	    &shim_orig_queue))(self, cmd);
	Class	cls;

	if (queue == nil) {
		shim_witness(SHIM_WITNESS_QUEUE, "newCommandQueue");
		return queue;
	}
	if (atomic_load(&shim_queue_hooked))
		return queue;
	pthread_mutex_lock(&shim_witness_lock);
	if (!atomic_load(&shim_queue_hooked)) {
		cls = object_getClass(queue);
		shim_hook(cls, "commandBuffer",
		    SHIM_AS_IMP(shim_command_buffer),
		    &shim_orig_command_buffer, unused, sizeof unused);
		shim_hook(cls, "commandBufferWithUnretainedReferences",
		    SHIM_AS_IMP(shim_command_buffer_unretained),
		    &shim_orig_command_buffer_unretained, unused,
		    sizeof unused);
		atomic_store(&shim_queue_hooked, true);
	}
	pthread_mutex_unlock(&shim_witness_lock);
	return queue;
}

/*
 * Watch the device class's calls (from the device hook, under its lock,
 * once); a call the class lacks is not watched, and watched lists those
 * that are.  The report path is the shim's own copy: the environment may
 * be scrubbed by then.
 */
void
shim_witness_install(Class cls, const char *report_path, char *watched,
    size_t watchedlen)
{
	shim_witness_path = report_path;
	shim_hook(cls, "newLibraryWithSource:options:error:",
	    SHIM_AS_IMP(shim_library_source), &shim_orig_library_source,
	    watched, watchedlen);
	shim_hook(cls, "newLibraryWithURL:error:",
	    SHIM_AS_IMP(shim_library_url), &shim_orig_library_url, watched,
	    watchedlen);
	shim_hook(cls, "newComputePipelineStateWithFunction:error:",
	    SHIM_AS_IMP(shim_pipeline), &shim_orig_pipeline, watched,
	    watchedlen);
	shim_hook(cls, "newCommandQueue", SHIM_AS_IMP(shim_queue),
	    &shim_orig_queue, watched, watchedlen);
	shim_hook(cls, "newResidencySetWithDescriptor:error:",
	    SHIM_AS_IMP(shim_residency), &shim_orig_residency, watched,
	    watchedlen);
}
