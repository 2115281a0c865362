/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: which lock objc4 takes in each runtime call a shim makes or
 * might make to find a class, find, add, replace or exchange a method,
 * learn a name, make or change an instance, or send a message; and, for
 * each call that takes runtimeLock, the wrapper that checks this thread
 * does not hold it (objc4-model.c).  Read from objc4-951.1
 * (apple-oss-distributions/objc4, runtime/): a line cited is where the
 * lock is taken, or the call that takes it.  A call whose source says
 * "Locking: none" and takes none is listed and not wrapped, so the model
 * is no stricter than objc4 there.
 *
 * test_objc4_model makes every call of the table inside and outside a
 * load-image function, and checks that every runtime function the shim's
 * objects import has its row; check-macos-artifacts.sh does the same for
 * the macOS build's imports.
 */
#include <objc/message.h>
#include <objc/runtime.h>
#include <string.h>

#include "objc4-model.h"

#define RT	MODEL_LOCK_RUNTIME
#define RT_SOME	MODEL_LOCK_RUNTIME_SOME

static const struct model_call model_calls[] = {
	/* Finding a class: look_up_class, which may realize it. */
	{ "objc_getClass", RT, MODEL_BOTH, "objc-runtime.mm:153 -> "
	    "look_up_class, objc-runtime-new.mm:8658" },
	{ "objc_lookUpClass", RT, MODEL_BOTH, "objc-runtime.mm:181 -> "
	    "look_up_class, objc-runtime-new.mm:8658" },
	{ "objc_getRequiredClass", RT, MODEL_BOTH, "objc-runtime.mm:168 -> "
	    "objc_getClass" },
	{ "objc_getMetaClass", RT, MODEL_BOTH, "objc-runtime.mm:194 -> "
	    "objc_getClass" },
	{ "objc_getClassList", RT, MODEL_BOTH, "objc-runtime-new.mm:5871, "
	    "realizes every class" },
	{ "objc_copyClassList", RT, MODEL_APPLE_ONLY,
	    "objc-runtime-new.mm:5909, realizes every class" },
	{ "objc_getProtocol", RT, MODEL_BOTH, "objc-runtime-new.mm:6325" },
	{ "class_conformsToProtocol", RT, MODEL_BOTH,
	    "objc-runtime-new.mm:8274" },
	/* Finding a method: lookUpImpOrForward realizes and may initialize. */
	{ "class_getInstanceMethod", RT, MODEL_BOTH, "objc-runtime-new.mm:"
	    "7373 -> lookUpImpOrForward 7658; _class_getMethod 7352" },
	{ "class_getClassMethod", RT, MODEL_BOTH, "objc-class.mm:598 -> "
	    "class_getInstanceMethod" },
	{ "class_getMethodImplementation", RT_SOME, MODEL_BOTH,
	    "objc-class.mm:698 -> lookUpImpOrNilTryCache, on a cache miss "
	    "lookUpImpOrForward, objc-runtime-new.mm:7603, 7658" },
	{ "class_respondsToSelector", RT_SOME, MODEL_BOTH, "objc-class.mm:665 "
	    "-> lookUpImpOrNilTryCache, as class_getMethodImplementation" },
	{ "class_copyMethodList", RT, MODEL_BOTH, "objc-runtime-new.mm:6346, "
	    "realizes the class" },
	/* Changing a method. */
	{ "class_addMethod", RT, MODEL_BOTH, "objc-runtime-new.mm:8418" },
	{ "class_replaceMethod", RT, MODEL_BOTH, "objc-runtime-new.mm:8428" },
	{ "method_setImplementation", RT, MODEL_BOTH,
	    "objc-runtime-new.mm:4764" },
	{ "method_exchangeImplementations", RT, MODEL_BOTH,
	    "objc-runtime-new.mm:4784" },
	{ "method_getImplementation", RT_SOME, MODEL_BOTH, "objc-runtime-new."
	    "mm:4683 -> method_t::imp(true), a small method's remappedImp "
	    "360" },
	/* What a method is: no lock. */
	{ "method_getName", MODEL_LOCK_NONE, MODEL_BOTH,
	    "objc-runtime-new.mm:4698 (Locking: none)" },
	{ "method_getTypeEncoding", MODEL_LOCK_NONE, MODEL_BOTH,
	    "objc-runtime-new.mm:4715 (Locking: none)" },
	{ "method_getNumberOfArguments", MODEL_LOCK_NONE, MODEL_BOTH,
	    "objc-class.mm:828, the type encoding" },
	{ "method_getReturnType", MODEL_LOCK_NONE, MODEL_BOTH,
	    "objc-class.mm:835, the type encoding" },
	{ "method_copyReturnType", MODEL_LOCK_NONE, MODEL_BOTH,
	    "objc-class.mm:841, the type encoding" },
	{ "method_getArgumentType", MODEL_LOCK_NONE, MODEL_BOTH,
	    "objc-class.mm:847, the type encoding" },
	{ "method_copyArgumentType", MODEL_LOCK_NONE, MODEL_BOTH,
	    "objc-class.mm:855, the type encoding" },
	/* Names and classes of things. */
	{ "class_getName", RT_SOME, MODEL_BOTH, "objc-runtime-new.mm:6946 -> "
	    "demangledName(true), a Swift class's name 6888" },
	{ "object_getClassName", RT_SOME, MODEL_BOTH, "objc-class.mm:225 -> "
	    "class_getName" },
	{ "object_getClass", MODEL_LOCK_NONE, MODEL_BOTH,
	    "objc-class.mm:180 (Locking: None)" },
	{ "class_getSuperclass", MODEL_LOCK_NONE, MODEL_BOTH,
	    "objc-class.mm:802" },
	{ "class_isMetaClass", MODEL_LOCK_NONE, MODEL_BOTH,
	    "objc-class.mm:808" },
	{ "sel_registerName", MODEL_LOCK_SEL, MODEL_BOTH, "objc-sel.mm:113" },
	{ "sel_getUid", MODEL_LOCK_SEL, MODEL_BOTH, "objc-sel.mm:136 -> "
	    "objc-sel.mm:113" },
	{ "sel_getName", MODEL_LOCK_NONE, MODEL_BOTH, "objc-sel.mm:60" },
	{ "sel_isEqual", MODEL_LOCK_NONE, MODEL_BOTH, "objc-sel.mm:154" },
	/* Instances and classes made: realizing an unrealized class. */
	{ "class_createInstance", RT_SOME, MODEL_BOTH, "objc-runtime-new.mm:"
	    "9341 -> realizeIfNeeded 7194" },
	{ "object_dispose", RT_SOME, MODEL_BOTH, "objc-runtime-new.mm:9478 -> "
	    "realizeIfNeeded 7194" },
	{ "class_getInstanceSize", RT_SOME, MODEL_BOTH, "objc-class.mm:820 -> "
	    "realizeIfNeeded, objc-runtime-new.mm:7194" },
	{ "object_setClass", RT_SOME, MODEL_BOTH, "objc-class.mm:203 -> "
	    "lookUpImpOrNilTryCache for +initialize" },
	{ "objc_allocateClassPair", RT, MODEL_BOTH,
	    "objc-runtime-new.mm:8952" },
	{ "objc_registerClassPair", RT, MODEL_BOTH,
	    "objc-runtime-new.mm:8985" },
	/* Sending a message: a cache miss looks the method up, locked. */
	{ "objc_msgSend", RT_SOME, MODEL_APPLE_ONLY, "objc-msg-arm64.s:600 "
	    "-> __objc_msgSend_uncached, 728 -> lookUpImpOrForward, "
	    "objc-runtime-new.mm:7658" },
	{ "objc_msg_lookup", RT_SOME, MODEL_GNU_ONLY, "the GNU runtime's "
	    "send, objc_msgSend's part: as objc_msgSend" },
	/* The callback itself, registered from a callback. */
	{ "objc_addLoadImageFunc", RT, MODEL_BOTH, "objc-os.mm:285" },
	{ NULL, MODEL_LOCK_NONE, MODEL_BOTH, NULL },
};

const struct model_call *
model_call_at(size_t i)
{
	if (i >= sizeof model_calls / sizeof model_calls[0] - 1)
		return NULL;
	return &model_calls[i];
}

const struct model_call *
model_call_find(const char *name)
{
	const struct model_call	*call;
	size_t			 i;

	for (i = 0; (call = model_call_at(i)) != NULL; i++)
		if (strcmp(call->name, name) == 0)
			return call;
	return NULL;
}

const char *
model_lock_name(enum model_lock lock)
{
	switch (lock) {
	case MODEL_LOCK_SEL:
		return "selLock";
	case MODEL_LOCK_RUNTIME:
		return "runtimeLock";
	case MODEL_LOCK_RUNTIME_SOME:
		return "runtimeLock-sometimes";
	case MODEL_LOCK_NONE:
		break;
	}
	return "none";
}

/*
 * A call that takes runtimeLock: checked, then the GNU runtime's own.
 * (class_replaceMethod and objc_addLoadImageFunc, which the model also
 * makes behave as objc4's, are in objc4-model.c.)
 */
#define MODEL_WRAP(type, name, params, args)			\
type								\
name params							\
{								\
	__typeof__(&name) next = model_next(#name);		\
								\
	model_runtime_call(#name);				\
	return next args;					\
}

MODEL_WRAP(Class, objc_getClass, (const char *n), (n))
MODEL_WRAP(Class, objc_lookUpClass, (const char *n), (n))
MODEL_WRAP(Class, objc_getRequiredClass, (const char *n), (n))
MODEL_WRAP(Class, objc_getMetaClass, (const char *n), (n))
MODEL_WRAP(int, objc_getClassList, (Class *buf, int len), (buf, len))
MODEL_WRAP(Protocol *, objc_getProtocol, (const char *n), (n))
MODEL_WRAP(BOOL, class_conformsToProtocol, (Class c, Protocol *p), (c, p))
MODEL_WRAP(Method, class_getInstanceMethod, (Class c, SEL s), (c, s))
MODEL_WRAP(Method, class_getClassMethod, (Class c, SEL s), (c, s))
MODEL_WRAP(IMP, class_getMethodImplementation, (Class c, SEL s), (c, s))
MODEL_WRAP(BOOL, class_respondsToSelector, (Class c, SEL s), (c, s))
MODEL_WRAP(Method *, class_copyMethodList, (Class c, unsigned int *n),
    (c, n))
MODEL_WRAP(BOOL, class_addMethod, (Class c, SEL s, IMP i, const char *t),
    (c, s, i, t))
MODEL_WRAP(IMP, method_setImplementation, (Method m, IMP i), (m, i))
MODEL_WRAP(IMP, method_getImplementation, (Method m), (m))
MODEL_WRAP(const char *, class_getName, (Class c), (c))
MODEL_WRAP(const char *, object_getClassName, (id o), (o))
MODEL_WRAP(id, class_createInstance, (Class c, size_t n), (c, n))
MODEL_WRAP(id, object_dispose, (id o), (o))
MODEL_WRAP(size_t, class_getInstanceSize, (Class c), (c))
MODEL_WRAP(Class, object_setClass, (id o, Class c), (o, c))
MODEL_WRAP(Class, objc_allocateClassPair, (Class s, const char *n, size_t x),
    (s, n, x))
MODEL_WRAP(IMP, objc_msg_lookup, (id r, SEL s), (r, s))

void
method_exchangeImplementations(Method a, Method b)
{
	__typeof__(&method_exchangeImplementations) next =
	    model_next("method_exchangeImplementations");

	model_runtime_call("method_exchangeImplementations");
	next(a, b);
}

void
objc_registerClassPair(Class c)
{
	__typeof__(&objc_registerClassPair) next =
	    model_next("objc_registerClassPair");

	model_runtime_call("objc_registerClassPair");
	next(c);
}
