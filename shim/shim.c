/* SPDX-License-Identifier: MIT */
/*
 * libmetalcap: raises the Metal capability answers a paravirtual Apple GPU
 * gives, so inference engines pick their fast kernels.
 *
 * Load order of events:
 *   1. the library links Metal, so dyld maps Metal (and objc registers its
 *      classes) before this constructor runs, whether the workload links
 *      Metal, loads it later (Python with MLX, GGML_BACKEND_DL) or never;
 *   2. the constructor parses the environment (any error leaves the
 *      process stock and reports why) and replaces
 *      -[_MTLDevice initGPUFamilySupport], which every device runs while
 *      it is created;
 *   3. the first device to get there installs the answer hooks on its own
 *      concrete class, once, under a lock, if it is the paravirtual GPU.
 * No callback of the loader is used: objc4 runs its load-image callbacks
 * with its runtime lock held, and the calls this library makes to find and
 * replace methods take that lock (tests/sim/README.md, "the objc4 model",
 * lists each call with the lock objc4 takes in it).
 * Answers only ever go up, and only the Apple families 1001..max; the
 * Common, Mac and Metal families are left to the device.
 */
#include <dlfcn.h>
#include <objc/runtime.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim_config.h"
#include "shim_env.h"
#include "shim_report.h"
#include "shim_hook.h"
#include "shim_witness.h"

#define SHIM_BASE_CLASS		"_MTLDevice"
#define SHIM_INIT_SELECTOR	"initGPUFamilySupport"
#define SHIM_PARAVIRT_CLASS	"Paravirt"

typedef BOOL		(*shim_supports_fn)(id, SEL, long);
typedef unsigned long	(*shim_size_fn)(id, SEL);
typedef uint64_t	(*shim_u64_fn)(id, SEL);
/*
 * The private initializer's return type is not published; returning the
 * original's register-sized result through id passes any of them along.
 */
typedef id		(*shim_init_fn)(id, SEL);

static struct shim_config	shim_config;
static uint64_t			shim_ctor_ns;	/* constructor's own cost */
static char			shim_report_path[1024];

/*
 * The implementations replaced, each stored before its replacement goes
 * live: another thread may send the message the instant it is replaced.
 */
static _Atomic(IMP)		shim_orig_init;
static _Atomic(IMP)		shim_orig_supports;
static _Atomic(IMP)		shim_orig_tg_memory;
static _Atomic(IMP)		shim_orig_working_set;

static pthread_mutex_t		shim_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool		shim_device_done;
/* The first device that was not the guest's GPU, for the exit report. */
static char			shim_other_class[128];

static void	shim_report(const char *, const char *, const char *,
		    const char *, const char *, bool);
static const char *shim_getenv(const char *, void *);
static void	shim_hook_device(id);
static id	shim_init_gpu_family_support(id, SEL);
static BOOL	shim_supports_family(id, SEL, long);
static unsigned long shim_max_threadgroup_memory(id, SEL);
static uint64_t	shim_working_set(id, SEL);

/* Emit the one report line of this process. */
static void
shim_report(const char *state, const char *device_class, const char *hooked,
    const char *watched, const char *reason, bool loaded)
{
	struct shim_report	report = {
		.state = state,
		.config = loaded ? &shim_config : NULL,
		.device_class = device_class,
		.hooked = hooked,
		.watched = watched,
		.reason = reason,
		.ctor_ns = shim_ctor_ns,
	};
	char			line[SHIM_REPORT_LINE_MAX];
	size_t			len;

	len = shim_report_format(&report, (long)getpid(), (long)getpgrp(),
	    line, sizeof line);
	shim_report_write(shim_report_path, line, len, (long)getpid());
}

static uint64_t
shim_now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *
shim_getenv(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

/* original || in range; the range test first saves a call on the hot path. */
static BOOL
shim_supports_family(id self, SEL cmd, long family)
{
	if (family >= SHIM_FAMILY_APPLE_MIN &&
	    (uint64_t)family <= shim_config.family_max)
		return YES;
	return SHIM_FROM_IMP(shim_supports_fn, shim_original(
	    &shim_orig_supports))(self, cmd, family);
}

static unsigned long
shim_max_threadgroup_memory(id self, SEL cmd)
{
	unsigned long	stock = SHIM_FROM_IMP(shim_size_fn,
	    shim_original(&shim_orig_tg_memory))(self, cmd);

	return stock > shim_config.threadgroup_memory ? stock :
	    (unsigned long)shim_config.threadgroup_memory;
}

static uint64_t
shim_working_set(id self, SEL cmd)
{
	uint64_t	stock = SHIM_FROM_IMP(shim_u64_fn,
	    shim_original(&shim_orig_working_set))(self, cmd);

	return stock > shim_config.working_set ? stock :
	    shim_config.working_set;
}

/*
 * Is this the paravirtual GPU of a macOS guest?  Told by its class, which
 * is known before the device has finished initializing (its name may not
 * be, and nothing is asked of a half-made device).  The class of the
 * guest's device is AppleParavirtDevice (MLX issue #31, a Parallels guest
 * on Virtualization.framework); a Mac's own GPU is AGX... (Apple silicon)
 * or the Intel or AMD driver's class, and answers for itself.
 */
static bool
shim_paravirtual(Class cls)
{
	return strstr(class_getName(cls), SHIM_PARAVIRT_CLASS) != NULL;
}

/* Does cls have every method the configuration asks to hook? */
static bool
shim_has_methods(Class cls)
{
	return class_getInstanceMethod(cls, sel_registerName("supportsFamily:"))
	    != NULL &&
	    (shim_config.threadgroup_memory == 0 || class_getInstanceMethod(cls,
	    sel_registerName("maxThreadgroupMemoryLength")) != NULL) &&
	    (shim_config.working_set == 0 || class_getInstanceMethod(cls,
	    sel_registerName("recommendedMaxWorkingSetSize")) != NULL);
}

/* Install the answer hooks on the device's concrete class, once. */
static void
shim_hook_device(id device)
{
	Class		 cls = object_getClass(device);
	const char	*name = class_getName(cls);
	char		 hooked[128] = "", watched[256] = "";
	char		 reason[SHIM_REASON_LEN];

	pthread_mutex_lock(&shim_lock);
	if (atomic_load(&shim_device_done))
		goto out;
	/* Not the guest's GPU: left alone, and a later device may be. */
	if (!shim_paravirtual(cls)) {
		if (shim_other_class[0] == '\0')
			snprintf(shim_other_class, sizeof shim_other_class,
			    "%s", name);
		goto out;
	}
	/* Check every method first so that a miss leaves nothing hooked. */
	if (!shim_has_methods(cls)) {
		snprintf(reason, sizeof reason,
		    "device class %s lacks a required method", name);
		shim_report("stock", name, NULL, NULL, reason, true);
		goto done;
	}
	shim_hook(cls, "supportsFamily:", SHIM_AS_IMP(shim_supports_family),
	    &shim_orig_supports, hooked, sizeof hooked);
	if (shim_config.threadgroup_memory != 0)
		shim_hook(cls, "maxThreadgroupMemoryLength",
		    SHIM_AS_IMP(shim_max_threadgroup_memory),
		    &shim_orig_tg_memory, hooked, sizeof hooked);
	if (shim_config.working_set != 0)
		shim_hook(cls, "recommendedMaxWorkingSetSize",
		    SHIM_AS_IMP(shim_working_set), &shim_orig_working_set,
		    hooked, sizeof hooked);
	shim_witness_install(cls, shim_report_path, watched, sizeof watched);
	shim_report("hooked", name, hooked, watched, NULL, true);
done:
	atomic_store(&shim_device_done, true);
out:
	pthread_mutex_unlock(&shim_lock);
}

/*
 * The hooks go in before the device's own initializer runs, as in Cua's
 * reference shim, so that whatever it derives from the answers is raised
 * too.
 */
static id
shim_init_gpu_family_support(id self, SEL cmd)
{
	if (!atomic_load(&shim_device_done))
		shim_hook_device(self);
	return SHIM_FROM_IMP(shim_init_fn, shim_original(&shim_orig_init))(self,
	    cmd);
}

/*
 * Replace -[_MTLDevice initGPUFamilySupport], from the constructor: the
 * class is there, since this library links Metal.  NULL, or why not.
 */
static const char *
shim_hook_init(void)
{
	Class	 base;
	Method	 init;
	IMP	 was;

	if ((base = objc_getClass(SHIM_BASE_CLASS)) == NULL)
		return "class " SHIM_BASE_CLASS " not found: Metal did not load "
		    "or no longer has it";
	init = class_getInstanceMethod(base,
	    sel_registerName(SHIM_INIT_SELECTOR));
	if (init == NULL || (was = method_getImplementation(init)) == NULL)
		return "class " SHIM_BASE_CLASS " has no -" SHIM_INIT_SELECTOR;
	atomic_store_explicit(&shim_orig_init, was, memory_order_release);
	method_setImplementation(init,
	    SHIM_AS_IMP(shim_init_gpu_family_support));
	return NULL;
}

/*
 * No guest's device was hooked: say so once the process ends, naming the
 * Mac's own GPU if that is what came.  Under the lock, so that a device
 * hooking on another thread during exit() makes one line, not two.
 */
static void
shim_report_never(void)
{
	char	reason[SHIM_REASON_LEN];

	pthread_mutex_lock(&shim_lock);
	if (!atomic_load(&shim_device_done)) {
		if (shim_other_class[0] != '\0') {
			snprintf(reason, sizeof reason, "device class %s is not "
			    "the paravirtual GPU of a guest: nothing to raise",
			    shim_other_class);
			shim_report("stock", shim_other_class, NULL, NULL,
			    reason, true);
		} else
			shim_report("stock", NULL, NULL, NULL, "no Metal device "
			    "was created", true);
		atomic_store(&shim_device_done, true);
	}
	pthread_mutex_unlock(&shim_lock);
}

/* Find where this library was loaded from, for METALCAP_INHERIT=0. */
static const char *
shim_self_path(void)
{
	Dl_info	info;

	if (dladdr((void *)shim_self_path, &info) == 0)
		return NULL;
	return info.dli_fname;
}

__attribute__((constructor)) static void
shim_load(void)
{
	char		 why[SHIM_REASON_LEN];
	const char	*report, *problem = NULL;
	uint64_t	 start = shim_now_ns();

	report = getenv(SHIM_REPORT_VAR);
	/* A path cut short names another file: then no report at all. */
	if (report != NULL && snprintf(shim_report_path,
	    sizeof shim_report_path, "%s", report) >=
	    (int)sizeof shim_report_path)
		shim_report_path[0] = '\0';

	if (shim_config_load(&shim_config, shim_getenv, NULL, why,
	    sizeof why) == -1) {
		shim_ctor_ns = shim_now_ns() - start;
		shim_report("stock", NULL, NULL, NULL, why, false);
		goto scrub;
	}
	problem = shim_hook_init();
	shim_ctor_ns = shim_now_ns() - start;
	/* Hooked: the report waits for a device, or for the exit. */
	if (problem != NULL)
		shim_report("stock", NULL, NULL, NULL, problem, true);
	else
		atexit(shim_report_never);
scrub:
	if (!shim_config.inherit)
		shim_env_scrub(shim_self_path());
}
