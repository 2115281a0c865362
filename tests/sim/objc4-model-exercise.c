/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR check: makes any call of the objc4 model's table
 * (objc4-model-calls.c), with real arguments prepared beforehand, as a
 * shim would.  objc4-model-check makes it inside or outside a load-image
 * function; built into a shim with -DOBJC4_MODEL_VARIANT (a test build
 * only: $(O)/tests/variant/libmetalcap.so), it is the shim variant that
 * makes the call named by OBJC4_MODEL_VARIANT_CALL from a load-image
 * function it registers in its constructor, which the model must stop
 * wherever objc4 would.
 *
 * The class is one of the simulated Metal's that a workload's device
 * never uses, and every change made to it is to a method of its own:
 * the same implementation set again, a method exchanged with itself, a
 * new selector added.
 */
#include <objc/message.h>
#include <objc/runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objc4-model.h"

#define MODEL_EXERCISE_CLASS	"MTLSimLibrary"
#define MODEL_EXERCISE_METHOD	"newFunctionWithName:"

static struct model_exercise_fix {
	Class	cls, pair, pair2;
	SEL	sel, fresh, fresh2, alloc;
	Method	method;
	IMP	imp;
	id	obj;
} model_exercise_fix;

/* Everything a call needs, got outside any load-image function. */
void
model_exercise_prepare(void)
{
	struct model_exercise_fix *f = &model_exercise_fix;

	if ((f->cls = objc_getClass(MODEL_EXERCISE_CLASS)) == Nil) {
		fprintf(stderr, "objc4-model-exercise: no class %s\n",
		    MODEL_EXERCISE_CLASS);
		abort();
	}
	f->sel = sel_registerName(MODEL_EXERCISE_METHOD);
	f->fresh = sel_registerName("metalcapModelExercise");
	f->fresh2 = sel_registerName("metalcapModelExercise2");
	f->alloc = sel_registerName("alloc");
	f->method = class_getInstanceMethod(f->cls, f->sel);
	f->imp = method_getImplementation(f->method);
	f->obj = class_createInstance(f->cls, 0);
	f->pair = objc_allocateClassPair(f->cls, "MetalcapModelPair", 0);
}

static void
model_exercise_noop(const void *image)
{
	(void)image;
}

static bool
model_exercise_classes(const char *name)
{
	struct model_exercise_fix *f = &model_exercise_fix;

	if (strcmp(name, "objc_getClass") == 0)
		(void)objc_getClass(MODEL_EXERCISE_CLASS);
	else if (strcmp(name, "objc_lookUpClass") == 0)
		(void)objc_lookUpClass(MODEL_EXERCISE_CLASS);
	else if (strcmp(name, "objc_getRequiredClass") == 0)
		(void)objc_getRequiredClass(MODEL_EXERCISE_CLASS);
	else if (strcmp(name, "objc_getMetaClass") == 0)
		(void)objc_getMetaClass(MODEL_EXERCISE_CLASS);
	else if (strcmp(name, "objc_getClassList") == 0)
		(void)objc_getClassList(NULL, 0);
	else if (strcmp(name, "objc_getProtocol") == 0)
		(void)objc_getProtocol("MetalcapModelProtocol");
	else if (strcmp(name, "class_conformsToProtocol") == 0)
		(void)class_conformsToProtocol(f->cls, NULL);
	else if (strcmp(name, "objc_allocateClassPair") == 0)
		f->pair2 = objc_allocateClassPair(f->cls, "MetalcapModelPair2",
		    0);
	else if (strcmp(name, "objc_registerClassPair") == 0)
		objc_registerClassPair(f->pair);
	else if (strcmp(name, "objc_addLoadImageFunc") == 0)
		objc_addLoadImageFunc(model_exercise_noop);
	else
		return false;
	return true;
}

static bool
model_exercise_lookups(const char *name)
{
	struct model_exercise_fix *f = &model_exercise_fix;
	unsigned int	 n;

	if (strcmp(name, "class_getInstanceMethod") == 0)
		(void)class_getInstanceMethod(f->cls, f->sel);
	else if (strcmp(name, "class_getClassMethod") == 0)
		(void)class_getClassMethod(f->cls, f->alloc);
	else if (strcmp(name, "class_getMethodImplementation") == 0)
		(void)class_getMethodImplementation(f->cls, f->sel);
	else if (strcmp(name, "class_respondsToSelector") == 0)
		(void)class_respondsToSelector(f->cls, f->sel);
	else if (strcmp(name, "class_copyMethodList") == 0)
		free(class_copyMethodList(f->cls, &n));
	else if (strcmp(name, "objc_msg_lookup") == 0)
		(void)objc_msg_lookup(f->obj, f->sel);
	else
		return false;
	return true;
}

static bool
model_exercise_changes(const char *name)
{
	struct model_exercise_fix *f = &model_exercise_fix;

	if (strcmp(name, "class_addMethod") == 0)
		(void)class_addMethod(f->cls, f->fresh, f->imp, "@@:*");
	else if (strcmp(name, "class_replaceMethod") == 0)
		(void)class_replaceMethod(f->cls, f->fresh2, f->imp, "@@:*");
	else if (strcmp(name, "method_setImplementation") == 0)
		(void)method_setImplementation(f->method, f->imp);
	else if (strcmp(name, "method_exchangeImplementations") == 0)
		method_exchangeImplementations(f->method, f->method);
	else if (strcmp(name, "method_getImplementation") == 0)
		(void)method_getImplementation(f->method);
	else if (strcmp(name, "class_createInstance") == 0)
		(void)object_dispose(class_createInstance(f->cls, 0));
	else if (strcmp(name, "object_dispose") == 0)
		(void)object_dispose(f->obj);
	else if (strcmp(name, "class_getInstanceSize") == 0)
		(void)class_getInstanceSize(f->cls);
	else if (strcmp(name, "object_setClass") == 0)
		(void)object_setClass(f->obj, f->cls);
	else
		return false;
	return true;
}

static bool
model_exercise_method_info(const char *name)
{
	struct model_exercise_fix *f = &model_exercise_fix;
	char		 buf[32];

	if (strcmp(name, "method_getName") == 0)
		(void)method_getName(f->method);
	else if (strcmp(name, "method_getTypeEncoding") == 0)
		(void)method_getTypeEncoding(f->method);
	else if (strcmp(name, "method_getNumberOfArguments") == 0)
		(void)method_getNumberOfArguments(f->method);
	else if (strcmp(name, "method_getReturnType") == 0)
		method_getReturnType(f->method, buf, sizeof buf);
	else if (strcmp(name, "method_copyReturnType") == 0)
		free(method_copyReturnType(f->method));
	else if (strcmp(name, "method_getArgumentType") == 0)
		method_getArgumentType(f->method, 2, buf, sizeof buf);
	else if (strcmp(name, "method_copyArgumentType") == 0)
		free(method_copyArgumentType(f->method, 2));
	else
		return false;
	return true;
}

static bool
model_exercise_names(const char *name)
{
	struct model_exercise_fix *f = &model_exercise_fix;

	if (strcmp(name, "class_getName") == 0)
		(void)class_getName(f->cls);
	else if (strcmp(name, "object_getClassName") == 0)
		(void)object_getClassName(f->obj);
	else if (strcmp(name, "object_getClass") == 0)
		(void)object_getClass(f->obj);
	else if (strcmp(name, "class_getSuperclass") == 0)
		(void)class_getSuperclass(f->cls);
	else if (strcmp(name, "class_isMetaClass") == 0)
		(void)class_isMetaClass(f->cls);
	else if (strcmp(name, "sel_registerName") == 0)
		(void)sel_registerName("metalcapModelExercise3");
	else if (strcmp(name, "sel_getUid") == 0)
		(void)sel_getUid("metalcapModelExercise4");
	else if (strcmp(name, "sel_getName") == 0)
		(void)sel_getName(f->sel);
	else if (strcmp(name, "sel_isEqual") == 0)
		(void)sel_isEqual(f->sel, f->fresh);
	else
		return false;
	return true;
}

/* Make the call name; false when it is not one of the table's. */
bool
model_exercise(const char *name)
{
	return model_exercise_classes(name) || model_exercise_lookups(name) ||
	    model_exercise_changes(name) || model_exercise_method_info(name) ||
	    model_exercise_names(name);
}

#ifdef OBJC4_MODEL_VARIANT
static const char	*model_exercise_call;

static void
model_exercise_in_callback(const void *image)
{
	(void)image;
	if (!model_exercise(model_exercise_call)) {
		fprintf(stderr, "objc4-model-exercise: no call %s\n",
		    model_exercise_call);
		abort();
	}
}

/* The variant: a load-image function that makes the call named. */
__attribute__((constructor)) static void
model_exercise_variant(void)
{
	model_exercise_call = getenv("OBJC4_MODEL_VARIANT_CALL");
	if (model_exercise_call == NULL || *model_exercise_call == '\0')
		return;
	model_exercise_prepare();
	objc_addLoadImageFunc(model_exercise_in_callback);
}
#endif
