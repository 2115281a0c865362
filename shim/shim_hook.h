/* SPDX-License-Identifier: MIT */
/*
 * Replacing a method of a class found at run time, safely for the threads
 * that may send it meanwhile: the device's answers (shim.c) and the calls
 * the shim witnesses (shim_witness.c).
 */
#ifndef SHIM_HOOK_H
#define SHIM_HOOK_H

#include <objc/runtime.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * IMP is variadic on the GNU runtime and void (*)(void) on Apple's; going
 * through void (*)(void) is the cast both compilers accept as deliberate.
 */
#define SHIM_AS_IMP(fn)		((IMP)(void (*)(void))(fn))
#define SHIM_FROM_IMP(type, imp) ((type)(void (*)(void))(imp))

bool	shim_hook(Class cls, const char *name, IMP replacement,
	    _Atomic(IMP) *original, char *hooked, size_t hookedlen);
IMP	shim_original(_Atomic(IMP) *slot);

#endif
