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

/* The private base class the shim looks up by name; a root class here. */
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
@end

/* The concrete class of the guest's device. */
@interface MTLSimParavirtualDevice : _MTLDevice
- (BOOL)supportsFamily:(long)family;
- (unsigned long)maxThreadgroupMemoryLength;
- (unsigned long long)recommendedMaxWorkingSetSize;
- (const char *)name;
@end

/* A device class that lacks one of the methods the shim may hook. */
@interface MTLSimLimitedDevice : _MTLDevice
- (BOOL)supportsFamily:(long)family;
- (unsigned long)maxThreadgroupMemoryLength;
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

- (id)init
{
	const char	*families = mtlsim_getenv("MTLSIM_EXTRA_FAMILIES");

	/* Copy first: mtlsim_getenv reuses its buffer. */
	strncpy(extra, families ? families : "", sizeof extra - 1);
	apple_max = mtlsim_env_number("MTLSIM_APPLE_FAMILY",
	    MTLSIM_STOCK_APPLE_FAMILY);
	tg_memory = mtlsim_env_number("MTLSIM_THREADGROUP_MEMORY",
	    MTLSIM_STOCK_TG_MEMORY);
	working_set = mtlsim_env_number("MTLSIM_WORKING_SET",
	    MTLSIM_STOCK_WORKING_SET);
	return [self initGPUFamilySupport];
}

- (id)initGPUFamilySupport
{
	return self;
}
@end

@implementation MTLSimParavirtualDevice
- (BOOL)supportsFamily:(long)family
{
	return mtlsim_supports(self, family);
}

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

@implementation MTLSimLimitedDevice
- (BOOL)supportsFamily:(long)family
{
	return mtlsim_supports(self, family);
}

- (unsigned long)maxThreadgroupMemoryLength
{
	return tg_memory;
}

- (const char *)name
{
	return MTLSIM_DEVICE_NAME;
}
@end

id
MTLCreateSystemDefaultDevice(void)
{
	bool	limited;

	if (mtlsim_getenv("MTLSIM_NO_DEVICE") != NULL)
		return nil;
	limited = mtlsim_getenv("MTLSIM_DEVICE") != NULL &&
	    strcmp(mtlsim_getenv("MTLSIM_DEVICE"), "limited") == 0;
	if (limited)
		return [[MTLSimLimitedDevice alloc] init];
	return [[MTLSimParavirtualDevice alloc] init];
}
