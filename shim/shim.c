/* SPDX-License-Identifier: MIT */
/*
 * libmetalcap: raises the Metal capability answers a paravirtual Apple GPU
 * gives, so inference engines pick their fast kernels.
 *
 * Load order of events:
 *   1. the constructor parses the environment; any error leaves the process
 *      stock and reports why;
 *   2. it replaces -[_MTLDevice initGPUFamilySupport], which every device
 *      runs while it is created -- at once if Metal is loaded, else as soon
 *      as an image that brings the class is loaded (Python with MLX,
 *      llama.cpp's GGML_BACKEND_DL, plugins): the platform tells us of new
 *      images (dyld and libobjc on macOS, the GNU runtime's load hook
 *      here), and the decision is the same code either way;
 *   3. the first device to get there installs the answer hooks on its own
 *      concrete class, once, under a lock.
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

#define SHIM_BASE_CLASS		"_MTLDevice"
#define SHIM_INIT_SELECTOR	"initGPUFamilySupport"

typedef BOOL		(*shim_supports_fn)(id, SEL, long);
typedef unsigned long	(*shim_size_fn)(id, SEL);
typedef uint64_t	(*shim_u64_fn)(id, SEL);
/*
 * The private initializer's return type is not published; returning the
 * original's register-sized result through id passes any of them along.
 */
typedef id		(*shim_init_fn)(id, SEL);

/*
 * IMP is variadic on the GNU runtime and void (*)(void) on Apple's; going
 * through void (*)(void) is the cast both compilers accept as deliberate.
 */
#define SHIM_AS_IMP(fn)		((IMP)(void (*)(void))(fn))
#define SHIM_FROM_IMP(type, imp) ((type)(void (*)(void))(imp))

static struct shim_config	shim_config;
static uint64_t			shim_ctor_ns;	/* constructor's own cost */
static char			shim_report_path[1024];

static shim_init_fn		shim_orig_init;
static shim_supports_fn		shim_orig_supports;
static shim_size_fn		shim_orig_tg_memory;
static shim_u64_fn		shim_orig_working_set;

static pthread_mutex_t		shim_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool		shim_device_done;
static atomic_bool		shim_init_done;	/* initGPUFamilySupport */
static const char		*shim_init_how;	/* "ctor", "image-load" */
static uint64_t			shim_init_ms;
static uint64_t			shim_start_ns;

static void	shim_report(const char *, const char *, const char *,
		    const char *, bool);
static const char *shim_getenv(const char *, void *);
static bool	shim_hook(Class, const char *, IMP, IMP *, char *, size_t);
static void	shim_hook_device(id);
static id	shim_init_gpu_family_support(id, SEL);
static BOOL	shim_supports_family(id, SEL, long);
static unsigned long shim_max_threadgroup_memory(id, SEL);
static uint64_t	shim_working_set(id, SEL);

/* Emit the one report line of this process. */
static void
shim_report(const char *state, const char *device_class, const char *hooked,
    const char *reason, bool loaded)
{
	struct shim_report	report = {
		.state = state,
		.config = loaded ? &shim_config : NULL,
		.device_class = device_class,
		.hooked = hooked,
		.reason = reason,
		.ctor_ns = shim_ctor_ns,
		.init_hook = shim_init_how,
		.init_hook_ms = shim_init_ms,
	};
	char			line[SHIM_REPORT_LINE_MAX];
	size_t			len;

	len = shim_report_format(&report, (long)getpid(), line, sizeof line);
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
	return shim_orig_supports(self, cmd, family);
}

static unsigned long
shim_max_threadgroup_memory(id self, SEL cmd)
{
	unsigned long	stock = shim_orig_tg_memory(self, cmd);

	return stock > shim_config.threadgroup_memory ? stock :
	    (unsigned long)shim_config.threadgroup_memory;
}

static uint64_t
shim_working_set(id self, SEL cmd)
{
	uint64_t	stock = shim_orig_working_set(self, cmd);

	return stock > shim_config.working_set ? stock :
	    shim_config.working_set;
}

/*
 * Put replacement on cls for name, keeping the implementation it had (its
 * own or inherited) in *original.  class_replaceMethod adds the method to
 * cls when it was inherited, so the superclass and its other subclasses
 * keep their answers.
 */
static bool
shim_hook(Class cls, const char *name, IMP replacement, IMP *original,
    char *hooked, size_t hookedlen)
{
	SEL	 sel = sel_registerName(name);
	Method	 method = class_getInstanceMethod(cls, sel);

	if (method == NULL)
		return false;
	*original = method_getImplementation(method);
	if (*original == NULL)
		return false;
	class_replaceMethod(cls, sel, replacement,
	    method_getTypeEncoding(method));
	if (*hooked != '\0')
		strncat(hooked, ",", hookedlen - strlen(hooked) - 1);
	strncat(hooked, name, hookedlen - strlen(hooked) - 1);
	return true;
}

/* Install the answer hooks on the device's concrete class, once. */
static void
shim_hook_device(id device)
{
	Class	 cls = object_getClass(device);
	char	 hooked[128] = "", reason[SHIM_REASON_LEN];
	IMP	 imp;

	pthread_mutex_lock(&shim_lock);
	if (atomic_load(&shim_device_done))
		goto out;
	/* Check every method first so that a miss leaves nothing hooked. */
	if (class_getInstanceMethod(cls, sel_registerName("supportsFamily:"))
	    == NULL ||
	    (shim_config.threadgroup_memory != 0 && class_getInstanceMethod(cls,
	    sel_registerName("maxThreadgroupMemoryLength")) == NULL) ||
	    (shim_config.working_set != 0 && class_getInstanceMethod(cls,
	    sel_registerName("recommendedMaxWorkingSetSize")) == NULL)) {
		snprintf(reason, sizeof reason,
		    "device class %s lacks a required method",
		    class_getName(cls));
		shim_report("stock", class_getName(cls), NULL, reason, true);
		goto done;
	}
	if (shim_hook(cls, "supportsFamily:", SHIM_AS_IMP(shim_supports_family), &imp,
	    hooked, sizeof hooked))
		shim_orig_supports = SHIM_FROM_IMP(shim_supports_fn, imp);
	if (shim_config.threadgroup_memory != 0 && shim_hook(cls,
	    "maxThreadgroupMemoryLength", SHIM_AS_IMP(shim_max_threadgroup_memory),
	    &imp, hooked, sizeof hooked))
		shim_orig_tg_memory = SHIM_FROM_IMP(shim_size_fn, imp);
	if (shim_config.working_set != 0 && shim_hook(cls,
	    "recommendedMaxWorkingSetSize", SHIM_AS_IMP(shim_working_set), &imp,
	    hooked, sizeof hooked))
		shim_orig_working_set = SHIM_FROM_IMP(shim_u64_fn, imp);
	shim_report("hooked", class_getName(cls), hooked, NULL, true);
done:
	atomic_store(&shim_device_done, true);
out:
	pthread_mutex_unlock(&shim_lock);
}

static id
shim_init_gpu_family_support(id self, SEL cmd)
{
	if (!atomic_load(&shim_device_done))
		shim_hook_device(self);
	return shim_orig_init(self, cmd);
}

/*
 * Replace -[_MTLDevice initGPUFamilySupport] if the class is there and it
 * is not done yet; how says when.  True once it is in place.
 */
static bool
shim_hook_init(const char *how)
{
	Class	 base;
	Method	 init;

	if (atomic_load(&shim_init_done))
		return true;
	pthread_mutex_lock(&shim_lock);
	if (!atomic_load(&shim_init_done) &&
	    (base = objc_getClass(SHIM_BASE_CLASS)) != NULL &&
	    (init = class_getInstanceMethod(base,
	    sel_registerName(SHIM_INIT_SELECTOR))) != NULL) {
		shim_orig_init = SHIM_FROM_IMP(shim_init_fn,
		    method_setImplementation(init,
		    SHIM_AS_IMP(shim_init_gpu_family_support)));
		shim_init_how = how;
		shim_init_ms = (shim_now_ns() - shim_start_ns) / 1000000u;
		atomic_store(&shim_init_done, true);
	}
	pthread_mutex_unlock(&shim_lock);
	return atomic_load(&shim_init_done);
}

/* Metal never came: say so once the process ends. */
static void
shim_report_never(void)
{
	char	why[SHIM_REASON_LEN];

	if (atomic_load(&shim_device_done))
		return;
	if (atomic_load(&shim_init_done))
		snprintf(why, sizeof why, "no Metal device was created");
	else
		snprintf(why, sizeof why, "class %s not found: Metal never "
		    "loaded", SHIM_BASE_CLASS);
	shim_report("stock", NULL, NULL, why, true);
}

/* --- the platform seam: learning of images loaded later ------------------ */

#ifdef __APPLE__
#include <mach-o/dyld.h>

/* macOS 13 and later: after an image's Objective-C classes are ready. */
extern void	objc_addLoadImageFunc(void (*)(const struct mach_header *))
		    __attribute__((weak_import));

static void
shim_image_objc(const struct mach_header *mh)
{
	(void)mh;
	shim_hook_init("image-load");
}

static void
shim_image_dyld(const struct mach_header *mh, intptr_t slide)
{
	(void)mh;
	(void)slide;
	shim_hook_init("image-load");
}

static void
shim_watch_images(void)
{
	if (objc_addLoadImageFunc != NULL)
		objc_addLoadImageFunc(shim_image_objc);
	else
		_dyld_register_func_for_add_image(shim_image_dyld);
}
#else
/* The GNU runtime calls this for each class or category it loads. */
static void	(*shim_prev_load)(Class, struct objc_category *);

static void
shim_class_loaded(Class cls, struct objc_category *category)
{
	if (shim_prev_load != NULL)
		shim_prev_load(cls, category);
	if (category == NULL && strcmp(class_getName(cls), SHIM_BASE_CLASS)
	    == 0)
		shim_hook_init("image-load");
}

static void
shim_watch_images(void)
{
	shim_prev_load = _objc_load_callback;
	_objc_load_callback = shim_class_loaded;
}
#endif

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
	const char	*report;

	shim_start_ns = shim_now_ns();
	report = getenv(SHIM_REPORT_VAR);
	/* A path cut short names another file: then no report at all. */
	if (report != NULL && snprintf(shim_report_path,
	    sizeof shim_report_path, "%s", report) >=
	    (int)sizeof shim_report_path)
		shim_report_path[0] = '\0';

	if (shim_config_load(&shim_config, shim_getenv, NULL, why,
	    sizeof why) == -1) {
		shim_ctor_ns = shim_now_ns() - shim_start_ns;
		shim_report("stock", NULL, NULL, why, false);
		goto scrub;
	}
	/* Metal may come later: the report waits for a device, or exit. */
	if (!shim_hook_init("ctor"))
		shim_watch_images();
	atexit(shim_report_never);
	shim_ctor_ns = shim_now_ns() - shim_start_ns;
scrub:
	if (!shim_config.inherit)
		shim_env_scrub(shim_self_path());
}
