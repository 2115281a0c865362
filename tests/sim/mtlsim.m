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
