/* SPDX-License-Identifier: MIT */
/*
 * The probe's ggml-shaped checks against the pinned ggml's own shapes
 * (docs/ggml-paths.md): the grids flash_attn_split asks for on each
 * family, as ggml-metal-ops.cpp and ggml-metal-tuning.cpp choose them;
 * the bfloat x bfloat multiply at MSL 3.1; ARGMAX's and COUNT_EQUAL's
 * integer SIMD reductions, which a device that mishandles them fails
 * while passing every other check.  The probe binary runs against the
 * SIMULATED device (MTLSIM_TRACE shows its dispatches).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "child.h"
#include "probe.h"

#define BUILD		MC_TEST_BUILD
#define PROBE_BIN	BUILD "/bin/metalcap-probe"
#define PRELOAD		"LD_PRELOAD=" BUILD "/lib/libmetalcap.so"

/* The probe's JSON report, run with extra environment and arguments. */
static json_t *
run_probe(const char *const *env_extra, const char *const *args, int *code)
{
	const char		*argv[16] = { PROBE_BIN, "--json" };
	char			*env[CHILD_ENV_MAX];
	static struct child_result c;
	json_error_t		 err;
	json_t			*doc;
	size_t			 n = 2;

	for (; args != NULL && *args != NULL && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	child_env(env, env_extra);
	assert_int_equal(child_run(argv, env, &c), 0);
	assert_true(WIFEXITED(c.status));
	*code = WEXITSTATUS(c.status);
	if ((doc = json_loads(c.out, 0, &err)) == NULL)
		fail_msg("probe output is not JSON (%s):\n%s\nstderr:\n%s",
		    err.text, c.out, c.err);
	return doc;
}

static json_t *
check_named(json_t *doc, const char *name)
{
	json_t	*c;
	size_t	 i;

	json_array_foreach(json_object_get(doc, "checks"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "name")),
		    name) == 0)
			return c;
	fail_msg("no check %s in the report", name);
	return NULL;
}

static const char *
check_status(json_t *doc, const char *name)
{
	json_t	*c = check_named(doc, name);

	if (json_is_true(json_object_get(c, "skipped")))
		return "skip";
	return json_is_true(json_object_get(c, "correct")) ? "pass" : "fail";
}

/* The new checks are in the catalogue, after flash_attn_split. */
static void
test_catalogue(void **state)
{
	const char *const	 argv[] = { PROBE_BIN, "--list-checks", NULL };
	static struct child_result c;
	char			*env[CHILD_ENV_MAX];
	const char		*fa, *mm, *am, *ce, *as, *tk;

	(void)state;
	child_env(env, NULL);
	assert_int_equal(child_run(argv, env, &c), 0);
	assert_int_equal(WEXITSTATUS(c.status), 0);
	fa = strstr(c.out, "\nflash_attn_split ");
	mm = strstr(c.out, "\nmul_mm_bf16 ");
	am = strstr(c.out, "\nargmax ");
	ce = strstr(c.out, "\ncount_equal ");
	as = strstr(c.out, "\nargsort ");
	tk = strstr(c.out, "\ntop_k ");
	if (fa == NULL || mm == NULL || am == NULL || ce == NULL ||
	    as == NULL || tk == NULL)
		fail_msg("--list-checks lacks a ggml check:\n%s", c.out);
	assert_true(fa < mm && mm < am && am < ce && ce < as && as < tk);
	assert_non_null(probe_check_find("mul_mm_bf16"));
	assert_non_null(probe_check_find("argmax"));
	assert_non_null(probe_check_find("count_equal"));
	assert_non_null(probe_check_find("argsort"));
	assert_non_null(probe_check_find("top_k"));
}

/* The dispatches a run made, from the simulated device's trace. */
static size_t
read_trace(const char *path, const char *label, char lines[][128],
    size_t max)
{
	char	 line[256];
	size_t	 n = 0, len = strlen(label);
	FILE	*f = fopen(path, "r");

	if (f == NULL)
		fail_msg("no trace at %s", path);
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, label, len) == 0 && line[len] == ' ' &&
		    n < max)
			snprintf(lines[n++], 128, "%s", line + len + 1);
	fclose(f);
	return n;
}

static size_t
trace_check(const char *family_max, const char *check, char lines[][128],
    size_t max)
{
	char		 trace[] = "/tmp/mc-trace-XXXXXX", tenv[64];
	char		 fenv[64];
	const char	*env[] = { PRELOAD, fenv, tenv, NULL };
	const char	*args[] = { "--checks", check, NULL };
	json_t		*doc;
	int		 fd, code;
	size_t		 n;

	assert_true((fd = mkstemp(trace)) >= 0);
	close(fd);
	snprintf(tenv, sizeof tenv, "MTLSIM_TRACE=%s", trace);
	snprintf(fenv, sizeof fenv, "METALCAP_APPLE_FAMILY_MAX=%s",
	    family_max);
	doc = run_probe(env, args, &code);
	n = read_trace(trace, check, lines, max);
	unlink(trace);
	/* The shapes first: a check of another shape fails on them. */
	snprintf(lines[n < max ? n : max - 1], 128, "%s %d",
	    check_status(doc, check), code);
	json_decref(doc);
	return n;
}

/*
 * flash_attn_split asks for what ggml dispatches on the device: 32
 * splits (nwg, ggml-metal-ops.cpp:3601-3607, any family), 1, 2 and 4
 * SIMD groups a split (nsg, the same lines, as the keys grow), each split
 * followed by the reduce of 1024 threads; one query a threadgroup on
 * every family, and 2 and 4 too only where Apple9 is the highest family
 * (ggml-metal-tuning.cpp:3656-3661, 3719-3727), with ggml's threadgroup
 * memory for a head of 32 (ops.cpp:3574).  Family 10 is GENERIC again.
 */
static void
test_flash_attention_shapes(void **state)
{
	static const char *const q1[] = {
		"probe_fa_split 0 256 32 1024\n", "probe_fa_reduce 0 8 1024 0\n",
		"probe_fa_split 0 256 64 2048\n", "probe_fa_reduce 0 8 1024 0\n",
		"probe_fa_split 0 256 128 4096\n", "probe_fa_reduce 0 8 1024 0\n",
	};
	static const char *const q24[] = {
		"probe_fa_split 0 128 32 2048\n", "probe_fa_reduce 0 8 1024 0\n",
		"probe_fa_split 0 128 64 4096\n", "probe_fa_reduce 0 8 1024 0\n",
		"probe_fa_split 0 128 128 8192\n", "probe_fa_reduce 0 8 1024 0\n",
		"probe_fa_split 0 64 32 4096\n", "probe_fa_reduce 0 8 1024 0\n",
		"probe_fa_split 0 64 64 8192\n", "probe_fa_reduce 0 8 1024 0\n",
		"probe_fa_split 0 64 128 16384\n", "probe_fa_reduce 0 8 1024 0\n",
	};
	static const char *const families[] = { "1007", "1009", "1010" };
	char	lines[32][128];
	size_t	f, i, n;

	(void)state;
	for (f = 0; f < 3; f++) {
		bool tuned = strcmp(families[f], "1009") == 0;

		n = trace_check(families[f], "flash_attn_split", lines, 32);
		print_message("family %s: %zu dispatches\n", families[f], n);
		for (i = 0; i < n && i < (tuned ? 18u : 6u); i++) {
			const char *want = i < 6 ? q1[i] : q24[i - 6];

			if (strcmp(lines[i], want) != 0)
				fail_msg("family %s, dispatch %zu: %s, not %s",
				    families[f], i, lines[i], want);
		}
		assert_int_equal(n, tuned ? 18 : 6);
		assert_string_equal(lines[n], "pass 0");
	}
}

/* ggml's gpu_family and the queries it takes, on hand-made answers. */
static void
test_fa_queries(void **state)
{
	static const struct { long max; int gpu, n; } cases[] = {
		{ 1005, 5, 1 }, { 1007, 7, 1 }, { 1008, 8, 1 },
		{ 1009, 9, 3 }, { 1010, 10, 1 }, { 1021, 21, 1 }, { 0, 0, 1 },
	};
	struct probe_answers	a;
	int			q[3];
	size_t			c, i;

	(void)state;
	for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		memset(&a, 0, sizeof a);
		for (i = 0; i < probe_nfamilies; i++)
			a.family[i] = probe_families[i] >= 1001 &&
			    probe_families[i] <= cases[c].max;
		a.family[probe_nfamilies - 1] = true;	/* Metal3+: not Apple */
		assert_int_equal(probe_gpu_family(&a), cases[c].gpu);
		assert_int_equal(probe_fa_queries(&a, q), cases[c].n);
		assert_int_equal(q[0], 1);
		if (cases[c].n == 3) {
			assert_int_equal(q[1], 2);
			assert_int_equal(q[2], 4);
		}
	}
}

/*
 * mul_mm_bf16 is compiled at MSL 3.1 (0x30001) by name, 128 threads and
 * both 32 x 32 operands staged as bfloat (4096 bytes); its data are
 * exact in bfloat, some past half's range, and C's last element small
 * enough for a unit to show.
 */
static void
test_bf16_multiply(void **state)
{
	static float	a[1024], b[1024], c[1024];
	char		lines[4][128];
	uint32_t	bits;
	size_t		i;
	bool		past_half = false;

	(void)state;
	assert_int_equal(trace_check("1009", "mul_mm_bf16", lines, 4), 1);
	assert_string_equal(lines[0], "probe_mul_mm_bf16 0x30001 1 128 4096\n");
	assert_string_equal(lines[1], "pass 0");
	probe_mm_bf16_data(a, b, 1024);
	for (i = 0; i < 1024; i++) {
		memcpy(&bits, &a[i], sizeof bits);
		assert_int_equal(bits & 0xffff, 0);
		memcpy(&bits, &b[i], sizeof bits);
		assert_int_equal(bits & 0xffff, 0);
		past_half |= fabsf(a[i]) > 65504.0f;
	}
	assert_true(past_half);
	probe_ref_matmul(32, a, b, c);
	assert_true(fabsf(c[1023]) < 500.0f && c[1023] != 0.0f);
}

/* The tie rules of ggml's kernels, by hand. */
static void
test_int_references(void **state)
{
	/* Threads 0 and 1 of 2: thread 0's first 3 is at 2, thread 1's at
	 * 1; the kernel takes the larger index, 2, not the first. */
	const float	x[12] = { 1, 3, 3, 2, 3, 0,  -5, -1, -2, -1, -1, -9 };
	const int32_t	a[8] = { 1, 2, 3, 4, -1, 0, 7, 7 };
	const int32_t	b[8] = { 1, 0, 3, 0, -1, 1, 7, 8 };
	float		out[2];

	(void)state;
	probe_ref_argmax(x, 2, 6, 2, out);
	assert_float_equal(out[0], 2.0f, 0);
	/* Row 1: -1 at 1, 3 and 4; thread 1's first is 1, thread 0's 4. */
	assert_float_equal(out[1], 4.0f, 0);
	probe_ref_count_equal(a, b, 2, 4, out);
	assert_float_equal(out[0], 2.0f, 0);
	assert_float_equal(out[1], 2.0f, 0);
}

/*
 * A device whose integer simd_max compares unsigned, or whose integer
 * simd_sum does not reduce, passes every other check: only argmax, or
 * only count_equal, sees it.
 */
static void
test_integer_reductions(void **state)
{
	static const struct { const char *mode, *check, *error; } cases[] = {
		{ "MTLSIM_SIMD_INT=max-unsigned", "argmax",
		    "wrong result: element 0 is -1, " },
		{ "MTLSIM_SIMD_INT=sum-lane", "count_equal",
		    "wrong result: element 0 is " },
	};
	size_t	k, i;

	(void)state;
	for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const char *env[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
		    cases[k].mode, NULL };
		const char *error;
		json_t	*doc, *c;
		int	 code;

		doc = run_probe(env, NULL, &code);
		assert_int_equal(code, 1);
		assert_string_equal(check_status(doc, cases[k].check), "fail");
		json_array_foreach(json_object_get(doc, "checks"), i, c) {
			const char *name = json_string_value(json_object_get(c,
			    "name"));

			if (strcmp(name, cases[k].check) == 0)
				continue;
			if (strcmp(check_status(doc, name), "fail") == 0)
				fail_msg("%s: %s failed too", cases[k].mode,
				    name);
		}
		error = json_string_value(json_object_get(check_named(doc,
		    cases[k].check), "error"));
		if (error == NULL || strncmp(error, cases[k].error,
		    strlen(cases[k].error)) != 0)
			fail_msg("%s: %s", cases[k].mode, error ? error : "-");
		json_decref(doc);
	}
}

/*
 * llama-server's "backend_sampling": true has ggml sort on the GPU: top-p
 * an ARGSORT of the logits, top-k a TOP_K (llama-sampler.cpp:1486, 1645).
 * argsort runs ggml's block sort of 1024 and its two merge passes over a
 * row of 3000 (ops.cpp:5157-5160, 5203-5240), top_k the radix select on
 * 4096 with k = 100 (ops.cpp:5363-5423).  A device that gets either wrong
 * under the profile fails the probe, every other check passing.  Kills:
 * a profile passed without the kernels a client can choose (issue 46,
 * finding 14).
 */
static void
test_sampling_kernels(void **state)
{
	static const struct { const char *fail, *check, *error; } cases[] = {
		{ "MTLSIM_FAIL=argsort:wrong", "argsort",
		    "wrong result: element 0 is 0, the CPU reference says " },
		{ "MTLSIM_FAIL=argsort:last", "argsort",
		    "wrong result: element 5995 is " },
		{ "MTLSIM_FAIL=top_k:wrong", "top_k",
		    "wrong result: element 0 is 0, the CPU reference says " },
		{ "MTLSIM_FAIL=top_k:pipeline", "top_k",
		    "Error Domain=AGXMetalG13X" },
	};
	char	lines[8][128];
	size_t	k, i;

	(void)state;
	assert_int_equal(trace_check("1009", "argsort", lines, 8), 3);
	assert_string_equal(lines[0], "probe_argsort 0 6 1024 4096\n");
	assert_string_equal(lines[1], "probe_argsort_merge 0 4 512 0\n");
	assert_string_equal(lines[2], "probe_argsort_merge 0 2 512 0\n");
	assert_string_equal(lines[3], "pass 0");
	assert_int_equal(trace_check("1009", "top_k", lines, 8), 1);
	assert_string_equal(lines[0], "probe_top_k 0 2 1024 1072\n");
	assert_string_equal(lines[1], "pass 0");
	for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const char *env[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
		    cases[k].fail, NULL };
		const char *error;
		json_t	*doc, *c;
		int	 code;

		doc = run_probe(env, NULL, &code);
		assert_int_equal(code, 1);
		assert_string_equal(check_status(doc, cases[k].check), "fail");
		assert_true(json_is_false(json_object_get(json_object_get(doc,
		    "verdict"), "family")));
		json_array_foreach(json_object_get(doc, "checks"), i, c) {
			const char *name = json_string_value(json_object_get(c,
			    "name"));

			if (strcmp(name, cases[k].check) != 0 &&
			    strcmp(check_status(doc, name), "fail") == 0)
				fail_msg("%s: %s failed too", cases[k].fail,
				    name);
		}
		error = json_string_value(json_object_get(check_named(doc,
		    cases[k].check), "error"));
		if (error == NULL || strncmp(error, cases[k].error,
		    strlen(cases[k].error)) != 0)
			fail_msg("%s: %s", cases[k].fail, error ? error : "-");
		json_decref(doc);
	}
}

/* The sort reference: largest first, by index. */
static void
test_sort_reference(void **state)
{
	const float	x[6] = { 0.5f, -2.0f, 3.0f, -0.25f, 7.0f, 1.0f };
	int32_t		out[6];

	(void)state;
	probe_ref_argsort(x, 6, out);
	assert_int_equal(out[0], 4);
	assert_int_equal(out[1], 2);
	assert_int_equal(out[2], 5);
	assert_int_equal(out[3], 0);
	assert_int_equal(out[4], 3);
	assert_int_equal(out[5], 1);
}

/*
 * A failing flash-attention dispatch says which shape failed: here the
 * first, one query and one SIMD group.
 */
static void
test_fa_failure_names_shape(void **state)
{
	const char	*env[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    "MTLSIM_FAIL=flash_attn_split:wrong", NULL };
	const char	*args[] = { "--checks", "flash_attn_split", NULL };
	const char	*error;
	json_t		*doc;
	int		 code;

	(void)state;
	doc = run_probe(env, args, &code);
	assert_int_equal(code, 1);
	error = json_string_value(json_object_get(check_named(doc,
	    "flash_attn_split"), "error"));
	assert_non_null(error);
	assert_non_null(strstr(error, "wrong result: element "));
	assert_non_null(strstr(error, " (1 query a threadgroup, 1 SIMD group "
	    "a split)"));
	json_decref(doc);
}

/* A file of the source tree, whole (NULL-terminated, static). */
static const char *
read_source(const char *rel)
{
	static char	 buf[2][262144];
	static int	 which;
	char		 path[512];
	size_t		 n;
	FILE		*f;

	snprintf(path, sizeof path, "%s/%s", MC_TEST_SOURCE, rel);
	if ((f = fopen(path, "r")) == NULL)
		fail_msg("cannot read %s", path);
	which = !which;
	n = fread(buf[which], 1, sizeof buf[which] - 1, f);
	buf[which][n] = '\0';
	fclose(f);
	return buf[which];
}

/*
 * The README and metalcap-probe(1) name every check of the catalogue and
 * the families the probe asks, as probe_families holds them.
 */
static void
test_documented(void **state)
{
	const char	*man = read_source("docs/metalcap-probe.1");
	const char	*readme = read_source("README.md");
	char		 want[96];
	size_t		 i;

	(void)state;
	for (i = 0; i < probe_nchecks; i++) {
		snprintf(want, sizeof want, "`%s`", probe_checks[i].name);
		if (strstr(readme, want) == NULL)
			fail_msg("README.md does not name %s", want);
		snprintf(want, sizeof want, ".It Cm %s", probe_checks[i].name);
		if (strstr(man, want) == NULL && (snprintf(want, sizeof want,
		    ", %s\n", probe_checks[i].name), strstr(man, want) == NULL))
			fail_msg("metalcap-probe.1 has no entry for %s",
			    probe_checks[i].name);
	}
	assert_int_equal(probe_families[20], 1021);
	assert_int_equal(probe_families[28], 3006);
	assert_int_equal(probe_families[probe_nfamilies - 1], 5006);
	assert_non_null(strstr(readme, "families 1001–1021, 2001–2002, "
	    "3001–3006 and 5001–5006"));
	assert_non_null(strstr(man, "for 1001\\(en1021, 2001\\(en2002, "
	    "3001\\(en3006 and 5001\\(en5006"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalogue),
		cmocka_unit_test(test_flash_attention_shapes),
		cmocka_unit_test(test_fa_queries),
		cmocka_unit_test(test_bf16_multiply),
		cmocka_unit_test(test_int_references),
		cmocka_unit_test(test_integer_reductions),
		cmocka_unit_test(test_fa_failure_names_shape),
		cmocka_unit_test(test_sampling_kernels),
		cmocka_unit_test(test_sort_reference),
		cmocka_unit_test(test_documented),
	};

	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("probe_ggml", tests, NULL, NULL);
}
