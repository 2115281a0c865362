/* SPDX-License-Identifier: MIT */
/*
 * Replacing a method on a class found at run time (shim_hook.h).
 */
#include <string.h>

#include "shim_hook.h"

/*
 * An original implementation, stored (release) before its replacement went
 * live: a thread that reached the replacement through its method cache
 * sees it (acquire), on arm64 too.
 */
IMP
shim_original(_Atomic(IMP) *slot)
{
	return atomic_load_explicit(slot, memory_order_acquire);
}

/*
 * Put replacement on cls for name, storing the implementation it had (its
 * own or inherited) in *original first.  class_replaceMethod adds the
 * method to cls when it was inherited, so the superclass and its other
 * subclasses keep their answers.
 */
bool
shim_hook(Class cls, const char *name, IMP replacement, _Atomic(IMP) *original,
    char *hooked, size_t hookedlen)
{
	SEL	 sel = sel_registerName(name);
	Method	 method = class_getInstanceMethod(cls, sel);
	IMP	 was;

	if (method == NULL || (was = method_getImplementation(method)) == NULL)
		return false;
	atomic_store_explicit(original, was, memory_order_release);
	class_replaceMethod(cls, sel, replacement,
	    method_getTypeEncoding(method));
	if (*hooked != '\0')
		strncat(hooked, ",", hookedlen - strlen(hooked) - 1);
	strncat(hooked, name, hookedlen - strlen(hooked) - 1);
	return true;
}
