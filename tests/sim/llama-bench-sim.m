/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: llama-bench on the simulated device, for tests of
 * metalcapctl bench.  It takes llama-bench's options (one value each),
 * loads ggml's Metal backend as ggmlsim does (init lines, a warm-up graph
 * that fails as ggml fails), and prints llama-bench's JSON schema (-o
 * json; the fields of tests/fixtures/real-bench) or its markdown table.
 *
 * Its tokens per second follow from where ggml would run the work, given
 * the device's answers (ggml-metal-device.m, ggml-metal.cpp supports_op):
 * without simdgroup reduction MUL_MAT is not a Metal op and runs on the
 * CPU; with it, on the GPU, through simdgroup-matrix kernels (mul_mm) for
 * prompts when Apple7 is reported and through mat-vec kernels (mul_mv)
 * otherwise.  Prompt processing is bound by arithmetic, generation by
 * memory bandwidth; the rates are tests/sim/README.md's.  Samples vary by
 * up to 3 %.
 *
 * The model file is the simulator's own: "GGUF" on the first line, then
 * general.type=, general.size= (bytes of tensors) and general.params=.
 *
 * LLAMA_BENCH_SIM_APPLE9_SPEED=FACTOR: the rates on the GPU are multiplied
 * by FACTOR when ggml's gpu_family is 9 (1.0 when unset).  With family 9
 * ggml tunes the paravirtual device as an M4 Max (ggml-metal-tuning.cpp
 * :3656-3661): whether that is faster or slower than family 7's baseline
 * depends on the host, which nothing here can know, so a test says it.
 *
 * LLAMA_BENCH_SIM_PLANT=PATH: each run writes "planted" to PATH if it
 * is not there, as another process of the user writing into bench's
 * evidence folder while it runs.
 *
 * LLAMA_BENCH_SIM_RUNS=FILE with LLAMA_BENCH_SIM_REBUILD_AFTER=N: after N
 * runs (counted in FILE) the binary reports another build, as when
 * llama.cpp is rebuilt in another terminal during a benchmark.
 */
#include <sys/stat.h>

#include <objc/runtime.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ggmlsim.h"

/* Rates: see the table in tests/sim/README.md. */
#define SIM_GPU_MM_FLOPS	10e12	/* mul_mm, simdgroup matrices */
#define SIM_GPU_MV_FLOPS	1e12	/* mul_mv over a prompt's batch */
#define SIM_GPU_BANDWIDTH	300e9	/* bytes/s, generation */
#define SIM_CPU_FLOPS		25e9	/* per thread */
#define SIM_CPU_BANDWIDTH	1.2e9	/* bytes/s per thread */
#define SIM_CPU_THREADS_MAX	8

struct bench_opts {
	const char	*model;
	const char	*output;
	long		 n_prompt, n_gen, reps, threads, ngl, batch, ubatch;
	long		 flash_attn;
};

struct bench_model {
	char		 type[128];
	long long	 size, params;
};

static const char	*bench_program = "llama-bench";

/*
 * llama-bench's answer to an option it does not take (--version among
 * them: it has none, unlike the tools built on common/arg.cpp): the
 * error on stderr, its usage on stdout, exit 1 (llama-bench.cpp
 * parse_cmd_params, L1114-L1118; print_usage's first line, L425-L427).
 */
static int
bench_usage(const char *arg)
{
	fprintf(stderr, "error: invalid parameter for argument: %s\n", arg);
	printf("usage: %s [options]\n", bench_program);
	return 1;
}

/* One value per option: the simulator does not take llama-bench's lists. */
static int
bench_number(const char *opt, const char *value, long *out)
{
	char	*end;

	errno = 0;
	*out = strtol(value, &end, 10);
	if (errno != 0 || end == value || *end != '\0') {
		fprintf(stderr, "error: %s %s: the simulator takes one "
		    "number\n", opt, value);
		return -1;
	}
	return 0;
}

static int
bench_parse(int argc, char **argv, struct bench_opts *o)
{
	static const struct { const char *s, *l; size_t off; } nums[] = {
		{ "-p", "--n-prompt", offsetof(struct bench_opts, n_prompt) },
		{ "-n", "--n-gen", offsetof(struct bench_opts, n_gen) },
		{ "-r", "--repetitions", offsetof(struct bench_opts, reps) },
		{ "-t", "--threads", offsetof(struct bench_opts, threads) },
		{ "-ngl", "--n-gpu-layers", offsetof(struct bench_opts, ngl) },
		{ "-b", "--batch-size", offsetof(struct bench_opts, batch) },
		{ "-ub", "--ubatch-size", offsetof(struct bench_opts, ubatch) },
		{ "-fa", "--flash-attn", offsetof(struct bench_opts,
		    flash_attn) },
	};
	size_t	k;
	int	i;

	for (i = 1; i < argc; i++) {
		if (i + 1 == argc)
			return bench_usage(argv[i]);
		if (strcmp(argv[i], "-m") == 0 || strcmp(argv[i],
		    "--model") == 0) {
			o->model = argv[++i];
			continue;
		}
		if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i],
		    "--output") == 0) {
			o->output = argv[++i];
			continue;
		}
		for (k = 0; k < sizeof nums / sizeof nums[0]; k++)
			if (strcmp(argv[i], nums[k].s) == 0 ||
			    strcmp(argv[i], nums[k].l) == 0)
				break;
		if (k == sizeof nums / sizeof nums[0])
			return bench_usage(argv[i]);
		if (bench_number(argv[i], argv[i + 1], (long *)((char *)o +
		    nums[k].off)) == -1)
			return 1;
		i++;
	}
	if (strcmp(o->output, "json") != 0 && strcmp(o->output, "md") != 0)
		return bench_usage(o->output);
	return 0;
}

/* The simulator's model file: its type, tensor bytes and parameters. */
static int
bench_load_model(const char *path, struct bench_model *m)
{
	char	 line[256];
	FILE	*f = fopen(path, "r");
	bool	 magic;

	memset(m, 0, sizeof m[0]);
	magic = f != NULL && fgets(line, sizeof line, f) != NULL &&
	    strncmp(line, "GGUF", 4) == 0;
	while (magic && fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "general.type=", 13) == 0)
			snprintf(m->type, sizeof m->type, "%.127s", line + 13);
		sscanf(line, "general.size=%lld", &m->size);
		sscanf(line, "general.params=%lld", &m->params);
	}
	if (f != NULL)
		fclose(f);
	if (!magic || m->size <= 0 || m->params <= 0) {
		fprintf(stderr, "llama_model_load: error loading model: "
		    "%s\nmain: error: failed to load model '%s'\n", f == NULL ?
		    strerror(errno) : "not a GGUF file", path);
		return -1;
	}
	return 0;
}

/* LLAMA_BENCH_SIM_PLANT (see above): a file written from outside. */
static void
bench_plant(void)
{
	const char	*path = getenv("LLAMA_BENCH_SIM_PLANT");
	FILE		*f;

	if (path != NULL && access(path, F_OK) == -1 &&
	    (f = fopen(path, "w")) != NULL) {
		fputs("planted\n", f);
		fclose(f);
	}
}

/* The build this binary reports; another once "rebuilt" (see above). */
static const char *
bench_build(void)
{
	const char	*runs = getenv("LLAMA_BENCH_SIM_RUNS");
	const char	*after = getenv("LLAMA_BENCH_SIM_REBUILD_AFTER");
	long		 n = 0;
	FILE		*f;

	if (runs == NULL || after == NULL)
		return "5e1f0c3a";
	if ((f = fopen(runs, "r")) != NULL) {
		if (fscanf(f, "%ld", &n) != 1)
			n = 0;
		fclose(f);
	}
	if ((f = fopen(runs, "w")) != NULL) {
		fprintf(f, "%ld\n", n + 1);
		fclose(f);
	}
	return n >= atol(after) ? "9d27b6e1" : "5e1f0c3a";
}

/* Tokens per second where ggml would run this test's matrix products. */
static double
bench_rate(GgmlSimDevice *dev, const struct bench_opts *o,
    const struct bench_model *m, bool prompt)
{
	struct ggmlsim_caps	c;
	double			threads = o->threads < SIM_CPU_THREADS_MAX ?
	    o->threads : SIM_CPU_THREADS_MAX;

	const char		*apple9 = getenv("LLAMA_BENCH_SIM_APPLE9_SPEED");
	double			 host;

	ggmlsim_caps(dev, &c);
	if (!c.reduction || o->ngl == 0)
		return prompt ? SIM_CPU_FLOPS * threads / (2.0 * m->params) :
		    SIM_CPU_BANDWIDTH * threads / m->size;
	host = c.gpu_family == 9 && apple9 != NULL ? atof(apple9) : 1.0;
	if (!prompt)
		return host * SIM_GPU_BANDWIDTH / m->size;
	return host * (c.matrix ? SIM_GPU_MM_FLOPS : SIM_GPU_MV_FLOPS) /
	    (2.0 * m->params);
}

/* One test's object, in llama-bench's field order. */
static json_t *
bench_test(GgmlSimDevice *dev, const struct bench_opts *o,
    const struct bench_model *m, const char *build, bool prompt)
{
	json_t		*ns = json_array(), *ts = json_array(), *t;
	long		 tokens = prompt ? o->n_prompt : o->n_gen, i;
	double		 rate = bench_rate(dev, o, m, prompt), x, sum = 0,
	    sq = 0, avg;
	char		 when[32];
	time_t		 now = time(NULL);

	for (i = 0; i < o->reps; i++) {
		x = rate * (1.0 + 0.03 * (2.0 * rand() / RAND_MAX - 1.0));
		json_array_append_new(ts, json_real(x));
		json_array_append_new(ns, json_integer((json_int_t)(1e9 *
		    tokens / x)));
		sum += x;
		sq += x * x;
		usleep(1000);	/* a sample takes time, if not its own */
		if (ggmlsim_graph(dev) != 0)
			exit(1);
	}
	avg = sum / o->reps;
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	t = json_object();
	json_object_set_new(t, "build_commit", json_string(build));
	json_object_set_new(t, "build_number", json_integer(10167));
	json_object_set_new(t, "cpu_info", json_string("Simulated CPU"));
	json_object_set_new(t, "gpu_info", json_string([dev name]));
	json_object_set_new(t, "backends", json_string("MTL,BLAS"));
	json_object_set_new(t, "model_filename", json_string(o->model));
	json_object_set_new(t, "model_type", json_string(m->type));
	json_object_set_new(t, "model_size", json_integer(m->size));
	json_object_set_new(t, "model_n_params", json_integer(m->params));
	json_object_set_new(t, "n_batch", json_integer(o->batch));
	json_object_set_new(t, "n_ubatch", json_integer(o->ubatch));
	json_object_set_new(t, "n_threads", json_integer(o->threads));
	json_object_set_new(t, "type_k", json_string("f16"));
	json_object_set_new(t, "type_v", json_string("f16"));
	json_object_set_new(t, "n_gpu_layers", json_integer(o->ngl));
	json_object_set_new(t, "flash_attn", json_integer(o->flash_attn));
	json_object_set_new(t, "n_prompt", json_integer(prompt ? tokens : 0));
	json_object_set_new(t, "n_gen", json_integer(prompt ? 0 : tokens));
	json_object_set_new(t, "n_depth", json_integer(0));
	json_object_set_new(t, "test_time", json_string(when));
	json_object_set_new(t, "avg_ts", json_real(avg));
	json_object_set_new(t, "stddev_ts", json_real(o->reps > 1 ?
	    sqrt((sq - sum * avg) / (o->reps - 1)) : 0));
	json_object_set_new(t, "samples_ns", ns);
	json_object_set_new(t, "samples_ts", ts);
	return t;
}

static void
bench_print_md(json_t *tests)
{
	json_t	*t;
	size_t	 i;

	printf("| model | size | params | backend | ngl | test | t/s |\n"
	    "| --- | ---: | ---: | --- | --: | --: | --: |\n");
	json_array_foreach(tests, i, t)
		printf("| %s | %.2f GiB | %.2f B | MTL,BLAS | %lld | %s%lld | "
		    "%.2f |\n", json_string_value(json_object_get(t,
		    "model_type")), json_integer_value(json_object_get(t,
		    "model_size")) / 1073741824.0, json_integer_value(
		    json_object_get(t, "model_n_params")) / 1e9,
		    json_integer_value(json_object_get(t, "n_gpu_layers")),
		    json_integer_value(json_object_get(t, "n_prompt")) ? "pp" :
		    "tg", json_integer_value(json_object_get(t, "n_prompt")) ?:
		    json_integer_value(json_object_get(t, "n_gen")),
		    json_real_value(json_object_get(t, "avg_ts")));
}

int
main(int argc, char **argv)
{
	struct bench_opts	 o = { .output = "md", .n_prompt = 512,
	    .n_gen = 128, .reps = 5, .threads = 8, .ngl = 99, .batch = 2048,
	    .ubatch = 512, .flash_attn = -1 };
	struct bench_model	 m;
	GgmlSimDevice		*dev;
	json_t			*tests;
	const char		*build;

	bench_program = argv[0];
	if (bench_parse(argc, argv, &o) != 0)
		return 1;
	if (o.model == NULL || o.reps < 1 || o.threads < 1) {
		fprintf(stderr, "error: the simulator needs -m MODEL, and -r "
		    "and -t of at least 1\n");
		return 1;
	}
	if (bench_load_model(o.model, &m) == -1)
		return 1;
	bench_plant();
	if ((dev = MTLCreateSystemDefaultDevice()) == nil) {
		LOG("ggml_metal_init: error: failed to allocate context\n");
		return 1;
	}
	if (ggmlsim_init(dev) != 0)
		return 1;
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	build = bench_build();
	tests = json_array();
	if (o.n_prompt > 0)
		json_array_append_new(tests, bench_test(dev, &o, &m, build,
		    true));
	if (o.n_gen > 0)
		json_array_append_new(tests, bench_test(dev, &o, &m, build,
		    false));
	if (strcmp(o.output, "json") == 0) {
		json_dumpf(tests, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
	} else
		bench_print_md(tests);
	json_decref(tests);
	object_dispose(dev);
	return 0;
}
