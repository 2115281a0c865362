/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR workload: creates the simulated device the way an inference
 * engine does and prints every answer the shim may change, one key=value a
 * line.  Linux test tool only.
 *
 *   mtlsim-query [--threads N] [--then KIND]
 *                [--dispatch LABEL FUNCTION N] [--exec PROGRAM [ARG...]]
 *
 * --threads N creates N devices at once from N threads (a race on the
 * shim's one-time hook installation); --then KIND creates a second device
 * of another class (MTLSIM_DEVICE=KIND) and prints its answers as then.*;
 * --dispatch builds and runs FUNCTION, check LABEL's kernel (its name in
 * mtlsim_kernel.c, as ggmlsim dispatches it), N times, as an
 * engine that keeps serving does after a kernel fails (each result
 * printed as dispatch=STAGE); --exec then runs PROGRAM as a child, so
 * tests can see what environment a child inherits.
 */
#include <objc/runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mtlsim.h"

@interface MTLSimQuery
- (BOOL)supportsFamily:(long)family;
- (unsigned long)maxThreadgroupMemoryLength;
- (unsigned long long)recommendedMaxWorkingSetSize;
- (const char *)name;
@end

static const long query_families[] = {
	1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010,
	2001, 2002, 3001, 3002, 3003, 5001, 5002,
};

static pthread_barrier_t	query_barrier;

static void *
query_create(void *arg)
{
	pthread_barrier_wait(&query_barrier);
	*(id *)arg = MTLCreateSystemDefaultDevice();
	return NULL;
}

static id
query_create_concurrently(int nthreads)
{
	pthread_t	threads[64];
	id		devices[64];
	int		i;

	pthread_barrier_init(&query_barrier, NULL, (unsigned)nthreads);
	for (i = 0; i < nthreads; i++)
		pthread_create(&threads[i], NULL, query_create, &devices[i]);
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&query_barrier);
	for (i = 1; i < nthreads; i++)
		object_dispose(devices[i]);
	return devices[0];
}

/* Each answer as key=value; a second device's keys start with "then.". */
static void
query_print(MTLSimQuery *dev, const char *prefix)
{
	size_t	i;

	printf("%sdevice=%s\n", prefix, [dev name]);
	for (i = 0; i < sizeof query_families / sizeof query_families[0]; i++)
		printf("%sfamily.%ld=%d\n", prefix, query_families[i],
		    [dev supportsFamily:query_families[i]] ? 1 : 0);
	printf("%sthreadgroup_memory=%lu\n", prefix,
	    [dev maxThreadgroupMemoryLength]);
	if (class_getInstanceMethod(object_getClass(dev),
	    sel_registerName("recommendedMaxWorkingSetSize")) != NULL)
		printf("%sworking_set=%llu\n", prefix,
		    [dev recommendedMaxWorkingSetSize]);
	fflush(stdout);
}

/* Run LABEL's kernel n times; each one's stage (mtlsim.h) printed. */
static void
query_dispatch(id dev, const char *label, const char *function, int n)
{
	char			error[512], source[128];
	float			a[256] = { 0 }, b[256] = { 0 }, out[256];
	struct mtlsim_dispatch	d = {
		.label = label, .source = source, .function = function,
		.language_version = 0x30001, .buffers = { a, b, out },
		.sizes = { sizeof a, sizeof b, sizeof out }, .nbuffers = 3,
		.threadgroups = 1, .threads_per_group = 64,
	};
	int			i;

	snprintf(source, sizeof source, "kernel void %s(", function);
	for (i = 0; i < n; i++)
		printf("dispatch=%d\n", (int)mtlsim_dispatch(dev, &d, error,
		    sizeof error));
	fflush(stdout);
}

static int
query_exec(char **argv)
{
	pid_t	pid;
	int	status;

	pid = fork();
	if (pid == -1)
		return 1;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) == -1 || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

int
main(int argc, char **argv)
{
	id		 dev;
	int		 nthreads = 1, i, ndispatch = 0;
	const char	*then = NULL, *label = NULL, *function = NULL;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--then") == 0 && i + 1 < argc)
			then = argv[++i];
		else if (strcmp(argv[i], "--dispatch") == 0 && i + 3 < argc) {
			label = argv[++i];
			function = argv[++i];
			ndispatch = atoi(argv[++i]);
		}
		else if (strcmp(argv[i], "--exec") == 0 && i + 1 < argc)
			break;
		else {
			fprintf(stderr, "usage: mtlsim-query [--threads N] "
			    "[--then KIND] [--dispatch LABEL FUNCTION N] [--exec "
			    "PROGRAM [ARG...]]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "mtlsim-query: --threads takes 1 to 64\n");
		return 2;
	}
	dev = nthreads == 1 ? MTLCreateSystemDefaultDevice() :
	    query_create_concurrently(nthreads);
	if (dev == nil) {
		fprintf(stderr, "mtlsim-query: no Metal device\n");
		return 3;
	}
	query_print(dev, "");
	if (label != NULL)
		query_dispatch(dev, label, function, ndispatch);
	object_dispose(dev);
	/* Another device of another class in the same process. */
	if (then != NULL) {
		setenv("MTLSIM_DEVICE", then, 1);
		if ((dev = MTLCreateSystemDefaultDevice()) == nil)
			return 3;
		query_print(dev, "then.");
		object_dispose(dev);
	}
	return i < argc ? query_exec(argv + i + 1) : 0;
}
