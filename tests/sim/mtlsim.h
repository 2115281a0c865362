/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: a stand-in for the paravirtual Metal device of a macOS guest,
 * for Linux where there is no Metal.  It defines the private class the shim
 * hooks (_MTLDevice, with -initGPUFamilySupport run at creation) and a
 * concrete device subclass with the stock Tahoe guest's answers.
 *
 * Environment switches (read when a device is created):
 *   MTLSIM_NO_DEVICE=1            MTLCreateSystemDefaultDevice returns nil
 *   MTLSIM_APPLE_FAMILY=N         highest Apple family reported (default 5)
 *   MTLSIM_EXTRA_FAMILIES=a,b,... further families reported true
 *   MTLSIM_THREADGROUP_MEMORY=N   maxThreadgroupMemoryLength (default 32768)
 *   MTLSIM_WORKING_SET=N          recommendedMaxWorkingSetSize
 *   MTLSIM_DEVICE=limited         a device class without
 *                                 recommendedMaxWorkingSetSize
 */
#ifndef MTLSIM_H
#define MTLSIM_H

#include <objc/objc.h>

#define MTLSIM_DEVICE_NAME		"Apple Paravirtual device"
#define MTLSIM_STOCK_APPLE_FAMILY	5
#define MTLSIM_STOCK_COMMON_FAMILY	3
#define MTLSIM_STOCK_TG_MEMORY		32768UL
/* About what llama.cpp logged in the stock guest: "11453.25 MB" (fixtures). */
#define MTLSIM_STOCK_WORKING_SET	11453250000ULL

id	MTLCreateSystemDefaultDevice(void);

#endif
