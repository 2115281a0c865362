/* SPDX-License-Identifier: MIT */
/*
 * The sim backend (Linux): the SIMULATED paravirtual device of tests/sim.
 * Capability questions are real Objective-C messages on the GNU runtime, so
 * an injected libmetalcap answers them exactly as it would on macOS;
 * kernels go to the simulator's lane-by-lane executor.
 */
#include <objc/message.h>
#include <objc/runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtlsim.h"
#include "probe.h"

/* The GNU runtime looks the implementation up; then it is a C call. */
#define SIM_SEND(type, obj, name) \
	((type)(void (*)(void))objc_msg_lookup((obj), \
	    sel_registerName(name)))

struct probe_device {
	id	device;
};

static struct probe_device *
sim_open(void)
{
	struct probe_device	*d;
	id			 dev = MTLCreateSystemDefaultDevice();

	if (dev == nil || (d = calloc(1, sizeof *d)) == NULL)
		return NULL;
	d->device = dev;
	return d;
}

static void
sim_close(struct probe_device *d)
{
	object_dispose(d->device);
	free(d);
}

static void
sim_device_name(struct probe_device *d, char *buf, size_t len)
{
	typedef const char *(*name_fn)(id, SEL);

	snprintf(buf, len, "%s", SIM_SEND(name_fn, d->device, "name")(
	    d->device, sel_registerName("name")));
}

static bool
sim_supports_family(struct probe_device *d, long family)
{
	typedef BOOL (*family_fn)(id, SEL, long);

	return SIM_SEND(family_fn, d->device, "supportsFamily:")(d->device,
	    sel_registerName("supportsFamily:"), family) != 0;
}

static uint64_t
sim_size(struct probe_device *d, const char *name)
{
	typedef unsigned long long (*size_fn)(id, SEL);

	if (class_getInstanceMethod(object_getClass(d->device),
	    sel_registerName(name)) == NULL)
		return 0;
	return SIM_SEND(size_fn, d->device, name)(d->device,
	    sel_registerName(name));
}

static uint64_t
sim_threadgroup_memory(struct probe_device *d)
{
	return sim_size(d, "maxThreadgroupMemoryLength");
}

static uint64_t
sim_working_set(struct probe_device *d)
{
	return sim_size(d, "recommendedMaxWorkingSetSize");
}

static void
sim_dispatch(struct probe_device *d, const struct probe_dispatch *p,
    struct probe_outcome *o)
{
	struct mtlsim_dispatch	m = {
		.label = p->label, .source = p->source,
		.function = p->function,
		.language_version = p->language_version,
		.nbuffers = p->nbuffers, .output = p->output,
		.threadgroup_memory = p->threadgroup_memory,
		.threadgroups = p->threadgroups,
		.threads_per_group = p->threads_per_group,
		.nocopy = p->nocopy, .prepare = p->prepare,
		.prepare_arg = p->prepare_arg,
	};
	enum mtlsim_stage	stage;

	memcpy(m.buffers, p->buffers, sizeof m.buffers);
	memcpy(m.sizes, p->sizes, sizeof m.sizes);
	stage = mtlsim_dispatch(d->device, &m, o->error, sizeof o->error);
	o->compiled = stage > MTLSIM_COMPILE_FAILED;
	o->pipeline = stage > MTLSIM_PIPELINE_FAILED;
	o->ran = stage == MTLSIM_COMPLETED;
}

static int
sim_residency_set(struct probe_device *d, char *error, size_t len)
{
	return mtlsim_new_residency_set(d->device, error, len);
}

static int
sim_self_path(char *buf, size_t len)
{
	ssize_t	n = readlink("/proc/self/exe", buf, len - 1);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

const struct probe_backend probe_backend = {
	.name = "sim",
	.open = sim_open,
	.close = sim_close,
	.device_name = sim_device_name,
	.supports_family = sim_supports_family,
	.threadgroup_memory = sim_threadgroup_memory,
	.working_set = sim_working_set,
	.dispatch = sim_dispatch,
	.residency_set = sim_residency_set,
	.self_path = sim_self_path,
};
