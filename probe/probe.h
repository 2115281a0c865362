/* SPDX-License-Identifier: MIT */
/*
 * metalcap-probe: the capability report and real pipeline checks.
 *
 * Three layers: a backend talks to one kind of device (probe_metal.c on
 * macOS, probe_sim.c against the Linux simulator); the catalogue of checks
 * with their CPU references (probe_check.c) and the report
 * (probe_report.c) are backend-free; probe.c is the command line, the
 * stock pass and the timeout.
 */
#ifndef PROBE_H
#define PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#define PROBE_ERROR_LEN		512
#define PROBE_MAX_BUFFERS	4
#define PROBE_MAX_CHECKS	32	/* room in a run for every check */
#define PROBE_MSL_3_1		0x30001UL	/* MTLLanguageVersion3_1 */
#define PROBE_CONTROL_TG_MEMORY	32768
/*
 * Each stage's deadline.  A cold Metal compile is slow: ggml's library
 * took 8.9 s in the stock guest and 10.6 s on the host (the real logs in
 * tests/fixtures/real-logs), 0.01 s once cached.  Three times the slowest
 * seen, so a first probe after boot is not taken for a hang.
 */
#define PROBE_DEFAULT_TIMEOUT	30000

enum probe_exit {
	PROBE_EXIT_OK = 0,
	PROBE_EXIT_FAILED = 1,
	PROBE_EXIT_USAGE = 2,
	PROBE_EXIT_NO_DEVICE = 3,
	PROBE_EXIT_TIMEOUT = 4,
};

/* The families the report lists, in order. */
extern const long	probe_families[];
extern const size_t	probe_nfamilies;

/* --- backend ------------------------------------------------------------ */

struct probe_device;

/* One compute dispatch: a kernel, its buffers and one grid. */
struct probe_dispatch {
	const char	*label;			/* the check's name */
	const char	*source;
	const char	*function;
	unsigned long	 language_version;	/* 0: the default */
	void		*buffers[PROBE_MAX_BUFFERS];
	size_t		 sizes[PROBE_MAX_BUFFERS];
	unsigned	 nbuffers;
	unsigned	 output;		/* index of the written buffer */
	size_t		 threadgroup_memory;	/* dynamic block at index 0 */
	unsigned long	 threadgroups;
	unsigned long	 threads_per_group;
	/* Bit i: buffer i is made with newBufferWithBytesNoCopy over the
	 * caller's pages (page-aligned, a whole number of pages). */
	unsigned	 nocopy;
	void		(*prepare)(void *);	/* once the buffers exist */
	void		*prepare_arg;
};

/* How far a dispatch got; error says why it stopped. */
struct probe_outcome {
	bool	compiled;
	bool	pipeline;
	bool	ran;
	char	error[PROBE_ERROR_LEN];
};

struct probe_backend {
	const char	*name;
	struct probe_device *(*open)(void);	/* NULL: no Metal device */
	void		 (*close)(struct probe_device *);
	void		 (*device_name)(struct probe_device *, char *, size_t);
	bool		 (*supports_family)(struct probe_device *, long);
	uint64_t	 (*threadgroup_memory)(struct probe_device *);
	uint64_t	 (*working_set)(struct probe_device *);
	void		 (*dispatch)(struct probe_device *,
			    const struct probe_dispatch *,
			    struct probe_outcome *);
	/* 0: a residency set was made; -1: nil, error says with what. */
	int		 (*residency_set)(struct probe_device *, char *,
			    size_t);
	/* This program's own path, to run the stock pass. */
	int		 (*self_path)(char *, size_t);
};

extern const struct probe_backend probe_backend;

/* --- checks (probe_check.c) ---------------------------------------------- */

/* The kernels' source (probe_kernels.c). */
extern const char	probe_kernels[];
extern const char	probe_kernels_mm[];	/* half, and bfloat from MSL 3.1 */
extern const char	probe_kernels_bf16[];
extern const char	probe_kernels_ggml[];	/* cumsum, offsets, FA, argmax */
extern const char	probe_kernels_ggml_bf16[];	/* bfloat x bfloat, MSL 3.1 */
extern const char	probe_kernels_sort[];	/* argsort, its merge, top_k */

/* The answers a device gave: the whole capability report. */
struct probe_answers {
	char		device[128];
	bool		family[48];		/* by probe_families index */
	uint64_t	threadgroup_memory;
	uint64_t	working_set;
};

struct probe_result {
	const char	*name;
	bool		 skipped;		/* not applicable: see error */
	bool		 compiled, pipeline, ran, correct;
	char		 error[PROBE_ERROR_LEN];
	double		 ms;
};

struct probe_context {
	struct probe_device		*device;
	const struct probe_answers	*answers;
	const struct probe_answers	*stock;		/* NULL: see below */
	const char			*stock_error;	/* why it is NULL */
	uint64_t			 ceiling;	/* shim's; 0: none */
};

typedef void (*probe_check_fn)(const struct probe_context *,
    struct probe_result *);

struct probe_check {
	const char	*name;
	const char	*summary;
	probe_check_fn	 run;
};

extern const struct probe_check	probe_checks[];
extern const size_t		probe_nchecks;

const struct probe_check *probe_check_find(const char *name);
void	probe_answers_read(struct probe_device *, struct probe_answers *);
bool	probe_answer(const struct probe_answers *, long family);

/* CPU references, exported for their unit tests. */
float	probe_ref_simd_sum(unsigned width);
void	probe_ref_matmul(int n, const float *a, const float *b, float *c);
float	probe_ref_bf16(float x);
void	probe_ref_shuffle(const float *x, int n, int width, float *out);
bool	probe_close(float got, float want);

/* Running a check's dispatches (probe_check.c), for probe_check_ggml.c. */
bool	probe_gate(struct probe_result *, bool supported, const char *why);
bool	probe_gate_reduction(const struct probe_context *,
	    struct probe_result *);
bool	probe_run(const struct probe_context *, const struct probe_dispatch *,
	    struct probe_result *);
void	probe_compare(struct probe_result *, const float *got,
	    const float *want, size_t n);

/* What the ggml of the pinned llama.cpp adds (probe_check_ggml.c). */
void	probe_check_cumsum(const struct probe_context *, struct probe_result *);
void	probe_check_shuffle_up(const struct probe_context *,
	    struct probe_result *);
void	probe_check_fa_split(const struct probe_context *,
	    struct probe_result *);
void	probe_ref_cumsum(const float *x, int n, int group, float *out);
void	probe_ref_offsets(const float *cnt, int n, int width, float *out);
void	probe_ref_attention(const float *q, const float *k, const float *v,
	    int rows, int keys, int dim, float scale, float *out);
void	probe_check_mm_bf16(const struct probe_context *,
	    struct probe_result *);
void	probe_check_argmax(const struct probe_context *,
	    struct probe_result *);
void	probe_check_count_equal(const struct probe_context *,
	    struct probe_result *);
void	probe_check_argsort(const struct probe_context *,
	    struct probe_result *);
void	probe_check_top_k(const struct probe_context *, struct probe_result *);
int	probe_gpu_family(const struct probe_answers *);
int	probe_fa_queries(const struct probe_answers *, int q[3]);
void	probe_ref_argmax(const float *x, int rows, int n, int nth, float *out);
void	probe_ref_count_equal(const int32_t *a, const int32_t *b, int rows,
	    int n, float *out);
void	probe_mm_bf16_data(float *a, float *b, int n);
void	probe_ref_argsort(const float *x, int n, int32_t *out);

/* A no-copy buffer over a file mapping (probe_check_mmap.c). */
void	probe_check_nocopy_mmap(const struct probe_context *,
	    struct probe_result *);

/* --- report (probe_report.c) --------------------------------------------- */

struct probe_verdict {
	bool	family;		/* the family override is safe */
	bool	threadgroup;	/* the threadgroup override is safe */
};

struct probe_verdict probe_verdict(const struct probe_result *, size_t);
json_t	*probe_report_json(const struct probe_answers *, json_t *shim,
	    const struct probe_result *, size_t, struct probe_verdict);
void	 probe_report_human(FILE *, const struct probe_answers *,
	    json_t *shim, const struct probe_result *, size_t,
	    struct probe_verdict);
json_t	*probe_shim_parse(const char *line);
json_t	*probe_answers_json(const struct probe_answers *);
int	 probe_answers_from_json(json_t *, struct probe_answers *,
	    char *why, size_t whylen);

#endif
