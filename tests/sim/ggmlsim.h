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

/*
 * How a llama.cpp program's common log writes ggml's lines
 * (common/log.cpp): with a prefix (llama-server's default) each line gets
 * a timestamp "M.SS.mmm.uuu " unless --no-log-timestamps, then its level
 * ("E ", "W ", "I "), in colour with --log-colors on; ggml's INFO lines
 * are shown only from verbosity 4 (common_log_get_verbosity: TRACE) and
 * the default is 3.  Without a prefix (the simulated bench and
 * perplexity tools, as before) every line is printed bare.
 */
struct ggmlsim_log {
	bool	prefix;
	bool	timestamps;
	bool	colors;
	int	verbosity;
};

extern struct ggmlsim_log	ggmlsim_log_style;

/* A line of level I, W or E, shown from verbosity need. */
void	ggmlsim_log(int need, char level, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
#define GLOG_INFO(...)	ggmlsim_log(4, 'I', __VA_ARGS__)
#define GLOG_WARN(...)	ggmlsim_log(2, 'W', __VA_ARGS__)
#define GLOG_ERROR(...)	ggmlsim_log(1, 'E', __VA_ARGS__)
#define LLAMA_INFO(...)	ggmlsim_log(3, 'I', __VA_ARGS__)

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
	int	gpu_family;	/* the highest Apple family answered, 0: none */
};

void	ggmlsim_caps(GgmlSimDevice *, struct ggmlsim_caps *);
void	ggmlsim_version(int argc, char **argv);
int	ggmlsim_setup(GgmlSimDevice *);
int	ggmlsim_init(GgmlSimDevice *);
int	ggmlsim_graph(GgmlSimDevice *);
void	ggmlsim_abort_trace(void) __attribute__((noreturn));

#endif
