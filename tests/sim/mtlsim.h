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
 *   MTLSIM_DEVICE=limited         a paravirtual device class without
 *                                 recommendedMaxWorkingSetSize
 *   MTLSIM_DEVICE=bare-metal      a Mac's own GPU (AGXG13XDevice, "Apple
 *                                 M1 Ultra", the host's stock answers)
 *   MTLSIM_FAIL=check:mode,...    make the kernel dispatched under that
 *                                 label (the probe's check name) fail the
 *                                 way the real device can: compile,
 *                                 pipeline, error (the command buffer
 *                                 ends with status 5), wrong (zeros),
 *                                 hang, off
 *                                 (each result 1 % off), nan (every
 *                                 float NaN), inf (every float
 *                                 infinite)
 *   MTLSIM_NOCOPY=stale           newBufferWithBytesNoCopy over a file
 *                                 mapping reads the bytes as they were
 *                                 when the buffer was made, as the
 *                                 macOS 14 guest's device (anonymous
 *                                 memory is unaffected)
 *   MTLSIM_RESIDENCY=nil|nil-error  newResidencySet returns nil, without or
 *                                 with an error
 *   MTLSIM_HW_THREADGROUP_MEMORY=N  the largest dynamic threadgroup block a
 *                                 dispatch may use (default 65536)
 *   MTLSIM_TG_ALIAS=N             threadgroup memory wraps every N bytes:
 *                                 a pipeline of a larger block is made,
 *                                 but addresses N apart share storage
 *                                 (32768: the documented limit)
 *   MTLSIM_FAIL also takes the ggml-shaped checks by name: simd_reduction,
 *                                 mul_mm_half, mul_mm_bfloat,
 *                                 simdgroup_load_transposed,
 *                                 simd_shuffle, simd_half; and ggml
 *                                 kernels only the workload dispatches,
 *                                 by ggml's name:
 *                                 kernel_flash_attn_ext_f16_dk128_dv128,
 *                                 kernel_mul_mm_f16_f32
 *
 * Every switch can also be set in the file named by MTLSIM_SWITCHES, one
 * NAME=VALUE a line, read at each device creation and dispatch; the file
 * wins.  Changing it switches the device for every process at once, as a
 * host or driver change would.
 *
 * Built with -DMTLSIM_OVERBROAD (tests only), the device also answers true
 * for Metal3 (5001) once the shim has hooked it, like an over-broad
 * research profile.
 */
#ifndef MTLSIM_H
#define MTLSIM_H

#include <objc/objc.h>
#include <stdbool.h>
#include <stdint.h>

#define MTLSIM_DEVICE_NAME		"Apple Paravirtual device"
#define MTLSIM_STOCK_APPLE_FAMILY	5
#define MTLSIM_STOCK_COMMON_FAMILY	3
#define MTLSIM_STOCK_TG_MEMORY		32768UL
/* About what llama.cpp logged in the stock guest: "11453.25 MB" (fixtures). */
#define MTLSIM_STOCK_WORKING_SET	11453250000ULL

/* The M1 Ultra host of the same evidence (llama-bare-metal-host.stderr):
 * Apple7, Common3, Metal4 (and Metal3, Mac2 below it), 115448.73 MB. */
#define MTLSIM_HOST_DEVICE_NAME		"Apple M1 Ultra"
#define MTLSIM_HOST_APPLE_FAMILY	7
#define MTLSIM_HOST_EXTRA_FAMILIES	"2002,5001,5002"
#define MTLSIM_HOST_WORKING_SET		115448730000ULL

#define MTLSIM_HW_TG_MEMORY		65536UL
#define MTLSIM_SIMD_WIDTH		32

/* What a real dispatch needs, flattened: one compute kernel, one grid. */
struct mtlsim_dispatch {
	const char	*label;			/* the probe's check name */
	const char	*source;		/* Metal Shading Language */
	const char	*function;
	unsigned long	 language_version;	/* 0: the default */
	void		*buffers[4];
	size_t		 sizes[4];
	unsigned	 nbuffers;
	unsigned	 output;		/* the buffer the kernel writes */
	size_t		 threadgroup_memory;	/* dynamic block, index 0 */
	unsigned long	 threadgroups;
	unsigned long	 threads_per_group;
	unsigned	 nocopy;		/* bit i: buffer i over the
						 * caller's pages, no copy */
	void		(*prepare)(void *);	/* once the buffers exist */
	void		*prepare_arg;
};

enum mtlsim_stage {
	MTLSIM_LIBRARY_FAILED,		/* newLibraryWithSource: nil */
	MTLSIM_COMPILE_FAILED,		/* the function: nil */
	MTLSIM_PIPELINE_FAILED,
	MTLSIM_RUN_FAILED,
	MTLSIM_COMPLETED,
};

id			MTLCreateSystemDefaultDevice(void);
const char		*mtlsim_getenv(const char *name);
enum mtlsim_stage	mtlsim_dispatch(id device,
			    const struct mtlsim_dispatch *dispatch,
			    char *error, size_t errorlen);
enum mtlsim_stage	mtlsim_build(id device,
			    const struct mtlsim_dispatch *dispatch,
			    char *error, size_t errorlen);
int			mtlsim_new_residency_set(id device, char *error,
			    size_t errorlen);

/*
 * mtlsim_dispatch goes through the device's Objective-C calls, as ggml's
 * does through Metal's (so the shim sees each one fail):
 * newLibraryWithSource:options:error:, the library's newFunctionWithName:,
 * newComputePipelineStateWithFunction:error:, newCommandQueue, the queue's
 * commandBuffer and the buffer's status (MTLCommandBufferStatusError, 5,
 * for a run that failed); newResidencySetWithDescriptor:error:.  What the
 * simulated GPU decides at each of them (mtlsim_kernel.c): 0, or -1 with
 * Metal's error text.
 */
#define MTLSIM_STATUS_COMPLETED	4	/* MTLCommandBufferStatusCompleted */
#define MTLSIM_STATUS_ERROR	5	/* MTLCommandBufferStatusError */

int	mtlsim_stage_function(const struct mtlsim_dispatch *, char *, size_t);
int	mtlsim_stage_compile(const struct mtlsim_dispatch *, char *, size_t);
int	mtlsim_stage_pipeline(const struct mtlsim_dispatch *, char *, size_t);
int	mtlsim_stage_run(const struct mtlsim_dispatch *, char *, size_t,
	    long *);
int	mtlsim_stage_residency(char *, size_t);

/*
 * The platform around the kernels (mtlsim_platform.c): Metal's default
 * language version follows the main executable's build version, which a
 * Linux program carries in an ELF note (mtlsim_build_note.c).
 */
#define MTLSIM_NOTE_NAME		"metalcap"
#define MTLSIM_NOTE_BUILD_VERSION	1
/* A program without the note: built with the Tahoe guest's own SDK. */
#define MTLSIM_GUEST_LANGUAGE		0x40000UL	/* MSL 4.0 */

unsigned long	mtlsim_language_for(uint32_t os);
int		mtlsim_build_version(uint32_t *minos, uint32_t *sdk);
unsigned long	mtlsim_default_language(void);
bool		mtlsim_source_keeps(const char *source, const char *function,
		    unsigned long language);
bool		mtlsim_file_backed(const void *addr);
/* probe_nocopy_read: y[i] = x[i] + 1, x read through a no-copy buffer. */
void		mtlsim_nocopy_read(const struct mtlsim_dispatch *);

#endif
