/* SPDX-License-Identifier: MIT */
/*
 * nocopy_mmap: what llama.cpp does with a model's weights by default.  It
 * maps the file and wraps the mapping in a Metal buffer without a copy
 * (ggml-metal-device.m, ggml_metal_buffer_map:
 * newBufferWithBytesNoCopy:length:options:deallocator: over the
 * page-aligned mapping, shared storage).  On macOS 14 guests the
 * paravirtual device then reads stale data: the server loads, /health is
 * 200, and completions are empty or garbage; --no-mmap avoids it
 * (unslothai/llama.cpp PR #37).  No kernel check sees that, so this one
 * reads a file mapping through such a buffer, and reads it again after
 * new bytes were written through the mapping once the buffer was made.
 * Backend-free.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "probe.h"

#define NOCOPY_THREADS	64

/* y[i] = x[i] + 1, x read through the no-copy buffer. */
static const char probe_kernels_nocopy[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void probe_nocopy_read(device const float *x [[buffer(0)]],\n"
    "    device float *y [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n"
    "  y[i] = x[i] + 1.0f;\n"
    "}\n";

struct nocopy_file {
	float	*map;
	size_t	 n;		/* floats in the mapping */
	int	 seed;		/* of the values written next */
};

/* Small integers, exact in float; each seed gives other values. */
static void
nocopy_fill(float *x, size_t n, int seed)
{
	size_t	i;

	for (i = 0; i < n; i++)
		x[i] = (float)(((int)i * 7 + seed) % 251);
}

/* Run once the buffer exists: new bytes through the mapping. */
static void
nocopy_rewrite(void *arg)
{
	struct nocopy_file	*f = arg;

	nocopy_fill(f->map, f->n, f->seed);
}

/* A page-sized temporary file, unlinked, mapped shared: NULL on failure. */
static float *
nocopy_map(size_t bytes, char *why, size_t whylen)
{
	const char	*tmp = getenv("TMPDIR");
	char		 path[1024];
	float		*map = NULL;
	int		 fd;

	snprintf(path, sizeof path, "%s/metalcap-probe-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if ((fd = mkstemp(path)) == -1) {
		snprintf(why, whylen, "no temporary file in %.200s", path);
		return NULL;
	}
	unlink(path);
	if (ftruncate(fd, (off_t)bytes) == -1)
		snprintf(why, whylen, "cannot size the temporary file");
	else if ((map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0)) == MAP_FAILED) {
		snprintf(why, whylen, "cannot map the temporary file");
		map = NULL;
	}
	close(fd);
	return map;
}

/* One dispatch over the mapping; true when the GPU read what was there. */
static bool
nocopy_pass(const struct probe_context *ctx, struct probe_result *r,
    struct nocopy_file *f, float *out, bool rewrite)
{
	struct probe_dispatch	d = {
		.label = r->name, .source = probe_kernels_nocopy,
		.function = "probe_nocopy_read", .buffers = { f->map, out },
		.sizes = { f->n * sizeof(float), f->n * sizeof(float) },
		.nbuffers = 2, .output = 1, .nocopy = 1U << 0,
		.threadgroups = f->n / NOCOPY_THREADS,
		.threads_per_group = NOCOPY_THREADS,
		.prepare = rewrite ? nocopy_rewrite : NULL, .prepare_arg = f,
	};
	float			*want = malloc(f->n * sizeof(float));
	size_t			 i;

	if (want == NULL) {
		snprintf(r->error, sizeof r->error, "out of memory");
		return false;
	}
	memset(out, 0, f->n * sizeof(float));
	if (probe_run(ctx, &d, r)) {
		for (i = 0; i < f->n; i++)
			want[i] = f->map[i] + 1.0f;
		probe_compare(r, out, want, f->n);
	}
	free(want);
	return r->correct;
}

void
probe_check_nocopy_mmap(const struct probe_context *ctx,
    struct probe_result *r)
{
	struct nocopy_file	f = { NULL, 0, 0 };
	size_t			bytes = (size_t)sysconf(_SC_PAGESIZE);
	float			*out = malloc(bytes);
	char			 detail[PROBE_ERROR_LEN];

	f.n = bytes / sizeof(float);
	if (out == NULL || (f.map = nocopy_map(bytes, r->error,
	    sizeof r->error)) == NULL)
		goto out;
	/* The file's bytes as the buffer is made over them ... */
	nocopy_fill(f.map, f.n, 3);
	if (!nocopy_pass(ctx, r, &f, out, false))
		goto out;
	/* ... and bytes written through the mapping after it was made. */
	f.seed = 101;
	if (!nocopy_pass(ctx, r, &f, out, true) && r->ran) {
		memcpy(detail, r->error, sizeof detail);
		snprintf(r->error, sizeof r->error, "stale data: the GPU did "
		    "not see bytes written through the file mapping after "
		    "newBufferWithBytesNoCopy (%.120s); llama.cpp's mmapped "
		    "weights would read wrong: run it with --no-mmap", detail);
	}
out:
	if (f.map != NULL)
		munmap(f.map, bytes);
	free(out);
}
