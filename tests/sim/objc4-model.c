/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: Apple's Objective-C runtime (objc4) where it differs from the
 * GNU runtime the tests run on, for the calls a shim makes.  Linked into
 * the Linux build of the shim with the shim's hidden visibility, so the
 * shim's own calls into the runtime come here first and each is passed on
 * to the GNU runtime (dlsym RTLD_NEXT); nothing else in the process is
 * touched.  Sources: tests/sim/README.md, "the objc4 model".
 *
 * 1. objc_addLoadImageFunc calls its function at once for every image
 *    loaded, then for each image loaded later, "with ObjC's internal
 *    runtime lock held" (objc4-951 runtime.h; objc-os.mm:285, 562;
 *    objc-runtime-new.mm:3553).  That lock, runtimeLock, is a
 *    non-recursive os_unfair_lock (objc-os.h mutex_t), and most runtime
 *    calls take it: objc4-model-calls.c lists every call a shim makes or
 *    might, with the lock objc4's source takes in it, and wraps each that
 *    takes runtimeLock (those that take it in some cases too: the strict
 *    reading).  Taking it again on the same thread is libplatform's
 *    "Trying to recursively lock an os_unfair_lock" abort.  GNU libobjc's
 *    lock is recursive, so without this model such a call passes.
 * 2. class_replaceMethod replaces the method only where the class itself
 *    has it, and otherwise adds it to the class, so the superclass and
 *    its other subclasses keep theirs (objc4 objc-runtime-new.mm addMethod
 *    with replace, getMethodNoSuper_nolock).  GNU's replaces the
 *    inherited method in the superclass, and a subclass whose dispatch
 *    table is already installed keeps the old implementation.
 *
 * A test knob, not objc4's behaviour: OBJC4_MODEL_SEND_ON_REPLACE=1 plays
 * another thread that sends the message the instant class_replaceMethod
 * has put the new implementation in place, on a fresh instance (a family
 * outside the Apple range as its argument, so a hook must reach the
 * original).  A hook that stores the original after replacing crashes.
 */
#include <dlfcn.h>
#include <link.h>
#include <objc/runtime.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "objc4-model.h"

#define MODEL_MAX_FUNCS		8
#define MODEL_OUTSIDE_APPLE	3001L

typedef void	(*model_image_fn)(const void *);

/* objc4's runtimeLock: held by this thread while load-image funcs run. */
static __thread int	 model_lock_held;
static pthread_mutex_t	 model_lock = PTHREAD_MUTEX_INITIALIZER;
static model_image_fn	 model_funcs[MODEL_MAX_FUNCS];
static int		 model_nfuncs;
static void		(*model_prev_load)(Class, struct objc_category *);

static void	model_hook_intact(void);

void *
model_next(const char *name)
{
	void	*fn = dlsym(RTLD_NEXT, name);

	if (fn == NULL) {
		fprintf(stderr, "objc4-model: %s not found\n", name);
		abort();
	}
	return fn;
}

/*
 * Every runtime call that takes runtimeLock in objc4 comes through here,
 * and only those: a wrapper without its row in the table is the model's
 * own mistake.
 */
void
model_runtime_call(const char *function)
{
	const struct model_call	*call = model_call_find(function);

	if (call == NULL || (call->lock != MODEL_LOCK_RUNTIME &&
	    call->lock != MODEL_LOCK_RUNTIME_SOME)) {
		fprintf(stderr, "objc4-model: %s is wrapped but its row does "
		    "not say runtimeLock\n", function);
		abort();
	}
	model_hook_intact();
	if (!model_lock_held)
		return;
	fprintf(stderr, "objc4-model: %s called from a load-image function, "
	    "with runtimeLock held\nBUG IN CLIENT OF LIBPLATFORM: Trying to "
	    "recursively lock an os_unfair_lock\n", function);
	abort();
}

/* Run every load-image function, as objc4 does: under runtimeLock. */
static void
model_notify(int from, const void *image)
{
	int	f;

	model_lock_held = 1;
	for (f = from; f < model_nfuncs; f++)
		model_funcs[f](image);
	model_lock_held = 0;
}

static int
model_each_image(struct dl_phdr_info *info, size_t size, void *from)
{
	(void)size;
	model_notify(*(int *)from, (const void *)info->dlpi_addr);
	return 0;
}

/* Later images: the GNU runtime tells of each class it loads. */
static void
model_class_loaded(Class cls, struct objc_category *category)
{
	if (model_prev_load != NULL)
		model_prev_load(cls, category);
	if (category == NULL)
		model_notify(0, cls);
}

/*
 * objc4 has no class-load hook of the GNU runtime's kind: the model takes
 * it before anything else can, and a library that replaces it (to learn of
 * late images another way than objc_addLoadImageFunc) is stopped at its
 * next runtime call or at exit, as it would not even build on macOS.
 */
static bool	model_hook_taken;

__attribute__((constructor(101))) static void
model_take_hook(void)
{
	model_prev_load = _objc_load_callback;
	_objc_load_callback = model_class_loaded;
	model_hook_taken = true;
}

/* (Before the constructor, only the runtime's own loading calls here.) */
static void
model_hook_intact(void)
{
	if (!model_hook_taken || _objc_load_callback == model_class_loaded)
		return;
	fprintf(stderr, "objc4-model: the GNU runtime's class-load hook was "
	    "replaced: objc4 has none, and its load-image functions run with "
	    "runtimeLock held\n");
	abort();
}

__attribute__((destructor)) static void
model_check_at_exit(void)
{
	model_hook_intact();
}

/*
 * objc4 objc-os.mm:283 objc_addLoadImageFunc: existing images first,
 * locked; itself a call that takes runtimeLock (objc-os.mm:285).
 */
void
objc_addLoadImageFunc(model_image_fn func)
{
	int	from;

	model_runtime_call("objc_addLoadImageFunc");
	pthread_mutex_lock(&model_lock);
	if (model_nfuncs < MODEL_MAX_FUNCS) {
		from = model_nfuncs;
		model_funcs[model_nfuncs++] = func;
		dl_iterate_phdr(model_each_image, &from);
	}
	pthread_mutex_unlock(&model_lock);
}

/*
 * Can the knob make up this message's arguments?  Only integers (the
 * family asked), and only where nothing comes back to own: an object or
 * pointer argument (a library's source, an error out-parameter) would be
 * garbage made up here, not another thread's real call.
 */
static bool
model_sendable(Method m)
{
	unsigned int	 i, n = method_getNumberOfArguments(m);
	char		*type;
	bool		 ok;

	type = method_copyReturnType(m);
	ok = type != NULL && strchr("cislqCISLQB", type[0]) != NULL;
	free(type);
	for (i = 2; ok && i < n; i++) {
		type = method_copyArgumentType(m, i);
		ok = type != NULL && strchr("cislqCISLQ", type[0]) != NULL;
		free(type);
	}
	return ok;
}

/* The knob: another thread's send, the instant the method is replaced. */
static void
model_send_now(Class cls, SEL sel)
{
	typedef uintptr_t (*send_fn)(id, SEL, long);
	Method	 m;
	IMP	 imp;
	id	 obj;

	if ((m = class_getInstanceMethod(cls, sel)) == NULL ||
	    !model_sendable(m) ||
	    (imp = method_getImplementation(m)) == NULL ||
	    (obj = class_createInstance(cls, 0)) == nil)
		return;
	((send_fn)(void (*)(void))imp)(obj, sel, MODEL_OUTSIDE_APPLE);
	object_dispose(obj);
}

/* The method cls has of its own (not inherited) for sel, or NULL. */
static Method
model_own_method(Class cls, SEL sel)
{
	unsigned int	 n, i;
	Method		*list = class_copyMethodList(cls, &n), found = NULL;

	for (i = 0; list != NULL && i < n && found == NULL; i++)
		if (sel_isEqual(method_getName(list[i]), sel))
			found = list[i];
	free(list);
	return found;
}

IMP
class_replaceMethod(Class cls, SEL sel, IMP imp, const char *types)
{
	IMP		 (*set)(Method, IMP) =
	    model_next("method_setImplementation");
	Method		 own;
	IMP		 old = NULL;
	const char	*knob = getenv("OBJC4_MODEL_SEND_ON_REPLACE");

	model_runtime_call("class_replaceMethod");
	if ((own = model_own_method(cls, sel)) != NULL)
		old = set(own, imp);
	else
		class_addMethod(cls, sel, imp, types);
	if (knob != NULL && strcmp(knob, "1") == 0)
		model_send_now(cls, sel);
	return old;
}
