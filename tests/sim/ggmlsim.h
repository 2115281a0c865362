/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: the device side of ggml's Metal backend, shared by the
 * simulated llama.cpp programs (fake-llama, llama-bench-sim).  What ggml
 * decides from the device's answers (ggml-metal-device.m: simdgroup
 * reduction needs Apple7 or Metal3, simdgroup matrices Apple7, bfloat
 * Metal3 or Apple6), its init lines in their real format, and its kernels
 * dispatched lazily on the simulated device, failing as ggml fails.
 */
#ifndef GGMLSIM_H
#define GGMLSIM_H

#include <stdbool.h>
#include <stdio.h>

#include "mtlsim.h"

#define LOG(...)	fprintf(stderr, __VA_ARGS__)

@interface GgmlSimDevice
- (BOOL)supportsFamily:(long)family;
- (unsigned long)maxThreadgroupMemoryLength;
- (unsigned long long)recommendedMaxWorkingSetSize;
- (const char *)name;
@end

struct ggmlsim_caps {
	bool	reduction;	/* has_simdgroup_reduction */
	bool	matrix;		/* has_simdgroup_mm */
	bool	bfloat;		/* has_bfloat */
};

void	ggmlsim_caps(GgmlSimDevice *, struct ggmlsim_caps *);
int	ggmlsim_init(GgmlSimDevice *);
int	ggmlsim_graph(GgmlSimDevice *);

#endif
