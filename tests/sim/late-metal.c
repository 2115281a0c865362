/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR workload: Metal loaded late, as Python loads MLX, llama.cpp
 * built with GGML_BACKEND_DL loads its Metal backend, or an app loads an
 * engine plug-in.  Nothing of the simulated device is linked: it is
 * dlopen()ed after a pause, then a device is made and asked for its
 * answers (family.N=0|1, threadgroup_memory=N), as mtlsim-query prints
 * them.
 *
 *   late-metal LIBMTLSIM [MS]
 */
#include <dlfcn.h>
#include <objc/message.h>
#include <objc/runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef id		(*create_fn)(void);
typedef BOOL		(*supports_fn)(id, SEL, long);
typedef unsigned long	(*size_fn)(id, SEL);

int
main(int argc, char **argv)
{
	void		*lib;
	create_fn	 create;
	id		 device;
	SEL		 supports = sel_registerName("supportsFamily:");
	SEL		 tg = sel_registerName("maxThreadgroupMemoryLength");

	if (argc < 2) {
		fprintf(stderr, "usage: late-metal LIBMTLSIM [MS]\n");
		return 2;
	}
	usleep((useconds_t)(argc > 2 ? atoi(argv[2]) : 50) * 1000);
	if ((lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) == NULL ||
	    (create = (create_fn)(void (*)(void))dlsym(lib,
	    "MTLCreateSystemDefaultDevice")) == NULL) {
		fprintf(stderr, "late-metal: %s\n", dlerror());
		return 1;
	}
	if ((device = create()) == NULL)
		return 1;
	/* The GNU runtime's message send: look the method up, call it. */
	printf("family.1009=%d\n", ((supports_fn)(void (*)(void))
	    objc_msg_lookup(device, supports))(device, supports, 1009) ? 1 : 0);
	printf("family.1005=%d\n", ((supports_fn)(void (*)(void))
	    objc_msg_lookup(device, supports))(device, supports, 1005) ? 1 : 0);
	printf("threadgroup_memory=%lu\n", ((size_fn)(void (*)(void))
	    objc_msg_lookup(device, tg))(device, tg));
	object_dispose(device);
	return 0;
}
