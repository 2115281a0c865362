/* SPDX-License-Identifier: MIT */
/*
 * metalcap-probe tests: CPU references against hand-computed values, the
 * JSON report read back field by field, and the real probe binary run
 * against the SIMULATED device with and without the shim and with every
 * failure switch.  Also the fake-llama stand-in against real llama.cpp logs.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "child.h"
#include "mtlsim.h"
#include "probe.h"

#define BUILD		MC_TEST_BUILD
#define PROBE_BIN	BUILD "/bin/metalcap-probe"
#define FAKE_LLAMA	BUILD "/tests/fake-llama"
#define PRELOAD		"LD_PRELOAD=" BUILD "/lib/libmetalcap.so"
#define CEILING		"METALCAP_APPLE_FAMILY_MAX=1009"
#define FIXTURES	MC_TEST_FIXTURES

struct probe_run_result {
	struct child_result	child;
	int			exit_code;
	double			seconds;
	json_t			*doc;
};

/* Run the probe with --json and extra environment; parse its output. */
static void
run_probe(struct probe_run_result *r, const char *const *env_extra,
    const char *const *args)
{
	const char	*argv[16] = { PROBE_BIN, "--json" };
	char		*env[CHILD_ENV_MAX];
	json_error_t	 err;
	struct timespec	 t0, t1;
	size_t		 n = 2;

	for (; args != NULL && *args != NULL && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	child_env(env, env_extra);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(child_run(argv, env, &r->child), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->seconds = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(WIFEXITED(r->child.status));
	r->exit_code = WEXITSTATUS(r->child.status);
	r->doc = json_loads(r->child.out, 0, &err);
	if (r->doc == NULL)
		fail_msg("probe output is not JSON (%s):\n%s\nstderr:\n%s",
		    err.text, r->child.out, r->child.err);
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

static bool
field_true(json_t *obj, const char *key)
{
	json_t	*v = json_object_get(obj, key);

	if (!json_is_boolean(v))
		fail_msg("%s is not a boolean", key);
	return json_is_true(v);
}

static const char *
check_status(json_t *doc, const char *name)
{
	json_t	*c = check_named(doc, name);

	if (field_true(c, "skipped"))
		return "skip";
	return field_true(c, "correct") ? "pass" : "fail";
}

static void
test_cpu_references(void **state)
{
	float	a[64], b[64], c[64];
	int	i, j;

	(void)state;
	/* 1 + 2 + ... + 32 */
	assert_float_equal(probe_ref_simd_sum(32), 528.0f, 0);
	assert_float_equal(probe_ref_simd_sum(4), 10.0f, 0);
	/* All-ones times column-index matrix: every row is 8 * j. */
	for (i = 0; i < 8; i++)
		for (j = 0; j < 8; j++) {
			a[i * 8 + j] = 1.0f;
			b[i * 8 + j] = (float)j;
		}
	probe_ref_matmul(8, a, b, c);
	for (i = 0; i < 8; i++)
		for (j = 0; j < 8; j++)
			assert_float_equal(c[i * 8 + j], 8.0f * (float)j, 0);
	/* 32 x 32: the identity times B is B. */
	{
		static float	id[1024], m[1024], out[1024];

		for (i = 0; i < 1024; i++) {
			id[i] = i / 32 == i % 32 ? 1.0f : 0.0f;
			m[i] = (float)(i % 13) - 6.0f;
		}
		probe_ref_matmul(32, id, m, out);
		for (i = 0; i < 1024; i++)
			assert_float_equal(out[i], m[i], 0);
	}
	/* Groups of two: each lane's group total, then its xor-1 neighbour. */
	{
		const float	x[4] = { 1, 2, 3, 4 };
		const float	want[8] = { 3, 2, 3, 1, 7, 4, 7, 3 };
		float		out[8];

		probe_ref_shuffle(x, 4, 2, out);
		for (i = 0; i < 8; i++)
			assert_float_equal(out[i], want[i], 0);
	}
	assert_float_equal(probe_ref_bf16(3.0f), 7.0f, 0);
	assert_float_equal(probe_ref_bf16(-32.0f), -63.0f, 0);
}

static void
test_report_fields_with_shim(void **state)
{
	const char		*env[] = { PRELOAD, CEILING, NULL };
	struct probe_run_result	 r;
	json_t			*doc, *families, *shim, *c, *verdict;
	const char		*key;
	json_t			*v;
	size_t			 i;

	(void)state;
	run_probe(&r, env, NULL);
	doc = r.doc;
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(json_string_value(json_object_get(doc, "device")),
	    "Apple Paravirtual device");
	assert_string_equal(json_string_value(json_object_get(doc,
	    "backend")), "sim");
	families = json_object_get(doc, "families");
	assert_int_equal(json_object_size(families), 35);
	/* What ggml asks (ggml-metal-device.m:1304-1324 of the pinned
	 * llama.cpp): Apple21 down to Apple1, Common 3006 down, Metal 5006
	 * down; and Mac1-2.  Each asked. */
	for (i = 0; i < 35; i++) {
		static const long asked[35] = { 1001, 1002, 1003, 1004, 1005,
		    1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015,
		    1016, 1017, 1018, 1019, 1020, 1021, 2001, 2002, 3001, 3002,
		    3003, 3004, 3005, 3006, 5001, 5002, 5003, 5004, 5005,
		    5006 };
		char	name[16];

		snprintf(name, sizeof name, "%ld", asked[i]);
		if (json_object_get(families, name) == NULL)
			fail_msg("family %s not asked", name);
	}
	json_object_foreach(families, key, v) {
		long f = strtol(key, NULL, 10);

		assert_true(json_is_boolean(v));
		assert_int_equal(json_is_true(v), (f >= 1001 && f <= 1009) ||
		    (f >= 3001 && f <= 3003));
	}
	assert_int_equal(json_integer_value(json_object_get(doc,
	    "threadgroup_memory")), 65536);
	assert_int_equal(json_integer_value(json_object_get(doc,
	    "working_set")), 11453250000LL);
	shim = json_object_get(doc, "shim");
	assert_true(json_is_object(shim));
	assert_string_equal(json_string_value(json_object_get(shim, "state")),
	    "hooked");
	/* Every field of the line, the first (pid) and the second too. */
	assert_true(json_integer_value(json_object_get(shim, "pid")) > 1);
	assert_string_equal(json_string_value(json_object_get(shim,
	    "version")), MC_VERSION);
	assert_int_equal(json_integer_value(json_object_get(shim,
	    "family_max")), 1009);
	assert_string_equal(json_string_value(json_object_get(shim, "class")),
	    "AppleParavirtDevice");
	assert_true(json_is_null(json_object_get(shim, "reason")));
	assert_int_equal(json_array_size(json_object_get(doc, "checks")),
	    probe_nchecks);
	json_array_foreach(json_object_get(doc, "checks"), i, c) {
		assert_true(json_is_string(json_object_get(c, "name")));
		assert_true(json_is_boolean(json_object_get(c, "compiled")));
		assert_true(json_is_boolean(json_object_get(c, "pipeline")));
		assert_true(json_is_boolean(json_object_get(c, "ran")));
		assert_true(json_is_boolean(json_object_get(c, "correct")));
		assert_true(json_is_real(json_object_get(c, "ms")));
		v = json_object_get(c, "error");
		assert_true(json_is_null(v) || json_is_string(v));
	}
	for (i = 0; i < 17; i++) {
		static const char *const run[] = { "simd_sum",
		    "simdgroup_matrix", "bfloat", "simd_reduction",
		    "mul_mm_half", "mul_mm_bfloat", "simdgroup_load_transposed",
		    "simd_shuffle", "simd_half", "prefix_sum",
		    "simd_shuffle_up", "flash_attn_split", "mul_mm_bf16",
		    "argmax", "count_equal", "threadgroup_32k",
		    "threadgroup_advertised" };

		c = check_named(doc, run[i]);
		assert_true(field_true(c, "compiled"));
		assert_true(field_true(c, "pipeline"));
		assert_true(field_true(c, "ran"));
		assert_true(field_true(c, "correct"));
		assert_true(json_is_null(json_object_get(c, "error")));
	}
	assert_string_equal(check_status(doc, "residency_set"), "skip");
	assert_string_equal(check_status(doc, "invariants"), "pass");
	verdict = json_object_get(doc, "verdict");
	assert_true(field_true(verdict, "family"));
	assert_true(field_true(verdict, "threadgroup"));
	json_decref(doc);
}

static void
test_stock_device(void **state)
{
	struct probe_run_result	 r;
	json_t			*c;

	(void)state;
	run_probe(&r, NULL, NULL);
	/* Unsupported checks are skipped, not failed: exit 0. */
	assert_int_equal(r.exit_code, 0);
	assert_true(json_is_null(json_object_get(r.doc, "shim")));
	c = check_named(r.doc, "simd_sum");
	assert_true(field_true(c, "skipped"));
	assert_false(field_true(c, "compiled"));
	assert_string_equal(json_string_value(json_object_get(c, "error")),
	    "not run: the device reports neither Apple7 nor Metal3");
	assert_string_equal(check_status(r.doc, "simdgroup_matrix"), "skip");
	assert_string_equal(check_status(r.doc, "bfloat"), "skip");
	assert_string_equal(check_status(r.doc, "threadgroup_32k"), "pass");
	assert_string_equal(check_status(r.doc, "threadgroup_advertised"),
	    "skip");
	assert_string_equal(check_status(r.doc, "invariants"), "pass");
	assert_int_equal(json_integer_value(json_object_get(r.doc,
	    "threadgroup_memory")), 32768);
	json_decref(r.doc);
}

struct failure_case {
	const char	*check;
	const char	*mode;
	const char	*error;		/* substring of the check's error */
	int		 exit_code;
	bool		 family_safe;
	bool		 threadgroup_safe;
};

static void
test_failure_switches(void **state)
{
	static const char *const checks[] = { "simd_sum", "simdgroup_matrix",
	    "bfloat", "simd_reduction", "mul_mm_half", "mul_mm_bfloat",
	    "simdgroup_load_transposed", "simd_shuffle", "simd_half",
	    "prefix_sum", "simd_shuffle_up", "flash_attn_split",
	    "mul_mm_bf16", "argmax", "count_equal",
	    "threadgroup_32k", "threadgroup_advertised" };
	static const struct { const char *mode, *error; } modes[] = {
		{ "compile", "Error Domain=MTLLibraryErrorDomain" },
		{ "pipeline", "Error Domain=AGXMetalG13X" },
		{ "wrong", "wrong result: " },
		/* A percent off: caught only where inputs are not zeros. */
		{ "off", "wrong result: " },
		{ "hang", "timed out after 500 ms" },
	};
	size_t		 i, k;

	(void)state;
	for (i = 0; i < sizeof checks / sizeof checks[0]; i++)
		for (k = 0; k < sizeof modes / sizeof modes[0]; k++) {
			char	fail[128];
			const char *env[] = { PRELOAD, CEILING, fail, NULL };
			struct probe_run_result r;
			bool	hang = strcmp(modes[k].mode, "hang") == 0;
			bool	tg = strcmp(checks[i],
			    "threadgroup_advertised") == 0;
			json_t	*c, *verdict;
			const char *error;
			/* A hang costs the whole deadline: only that check. */
			const char *args[] = { "--timeout-ms", "500",
			    "--checks", checks[i], NULL };

			snprintf(fail, sizeof fail, "MTLSIM_FAIL=%s:%s",
			    checks[i], modes[k].mode);
			print_message("%s\n", fail);
			run_probe(&r, env, hang ? args : NULL);
			assert_int_equal(r.exit_code, hang ? 4 : 1);
			c = check_named(r.doc, checks[i]);
			assert_false(field_true(c, "correct"));
			assert_false(field_true(c, "skipped"));
			assert_int_equal(field_true(c, "compiled"),
			    !hang && strcmp(modes[k].mode, "compile") != 0);
			assert_int_equal(field_true(c, "ran"),
			    strcmp(modes[k].mode, "wrong") == 0 ||
			    strcmp(modes[k].mode, "off") == 0);
			error = json_string_value(json_object_get(c, "error"));
			assert_non_null(error);
			if (strstr(error, modes[k].error) == NULL)
				fail_msg("error '%s' lacks '%s'", error,
				    modes[k].error);
			verdict = json_object_get(r.doc, "verdict");
			assert_int_equal(field_true(verdict, "family"),
			    tg && !hang);
			assert_false(field_true(verdict, "threadgroup"));
			if (hang) {
				assert_true(r.seconds < 0.5 + 1.0);
				snprintf(fail, sizeof fail, "metalcap-probe: "
				    "%s timed out after 500 ms\n", checks[i]);
				assert_non_null(strstr(r.child.err, fail));
			} else
				assert_null(strstr(r.child.err, "timed out"));
			json_decref(r.doc);
		}
}

static void
test_residency_nil(void **state)
{
	static const struct { const char *mode, *error; } cases[] = {
		{ "MTLSIM_RESIDENCY=nil", "residency set is nil (error: none)" },
		{ "MTLSIM_RESIDENCY=nil-error", "residency set is nil (error: "
		    "MTLResidencySetErrorDomain/1/" },
	};
	size_t	i;

	(void)state;
	for (i = 0; i < 2; i++) {
		const char *env[] = { PRELOAD, CEILING,
		    "MTLSIM_EXTRA_FAMILIES=5001", cases[i].mode, NULL };
		struct probe_run_result r;
		const char *error;

		run_probe(&r, env, NULL);
		assert_int_equal(r.exit_code, 1);
		error = json_string_value(json_object_get(check_named(r.doc,
		    "residency_set"), "error"));
		assert_non_null(strstr(error, cases[i].error));
		/* 5001 is reported stock too: not an invariant breach. */
		assert_string_equal(check_status(r.doc, "invariants"), "pass");
		assert_false(field_true(json_object_get(r.doc, "verdict"),
		    "family"));
		json_decref(r.doc);
	}
}

static void
test_invariants_catch_overbroad(void **state)
{
	const char		*env[] = { PRELOAD, CEILING,
	    "LD_LIBRARY_PATH=" BUILD "/tests/overbroad", NULL };
	const char		*stock_env[] = {
	    "LD_LIBRARY_PATH=" BUILD "/tests/overbroad", NULL };
	struct probe_run_result	 r;
	json_t			*c;

	(void)state;
	/* Without the shim the over-broad device is stock and passes. */
	run_probe(&r, stock_env, NULL);
	assert_int_equal(r.exit_code, 0);
	json_decref(r.doc);

	run_probe(&r, env, NULL);
	assert_int_equal(r.exit_code, 1);
	assert_true(json_is_true(json_object_get(json_object_get(r.doc,
	    "families"), "5001")));
	c = check_named(r.doc, "invariants");
	assert_false(field_true(c, "correct"));
	assert_string_equal(json_string_value(json_object_get(c, "error")),
	    "outside the Apple range, family 5001 is true, stock false");
	assert_false(field_true(json_object_get(r.doc, "verdict"), "family"));
	json_decref(r.doc);
}

/* The invariants check on hand-made answers: the ceiling rule. */
static void
test_invariants_ceiling(void **state)
{
	const struct probe_check	*inv = probe_check_find("invariants");
	struct probe_answers		 stock, now;
	struct probe_context		 ctx = { .answers = &now,
	    .stock = &stock, .ceiling = 1007 };
	struct probe_result		 r;
	char				 want[96];
	size_t				 i;

	(void)state;
	memset(&stock, 0, sizeof stock);
	stock.family[0] = stock.family[1] = true;	/* 1001, 1002 */
	stock.family[8] = true;				/* 1009 */
	now = stock;
	now.family[6] = true;				/* 1007: at ceiling */
	memset(&r, 0, sizeof r);
	inv->run(&ctx, &r);
	assert_true(r.correct);

	now.family[7] = true;				/* 1008: above */
	memset(&r, 0, sizeof r);
	inv->run(&ctx, &r);
	assert_false(r.correct);
	assert_string_equal(r.error, "above the ceiling, family 1008 is true, "
	    "stock false");

	/* ggml asks up to Apple21: an answer that high is seen too. */
	now = stock;
	now.family[20] = true;				/* 1021 */
	memset(&r, 0, sizeof r);
	inv->run(&ctx, &r);
	assert_string_equal(r.error, "above the ceiling, family 1021 is true, "
	    "stock false");

	now = stock;
	now.family[0] = false;				/* went down */
	memset(&r, 0, sizeof r);
	inv->run(&ctx, &r);
	assert_string_equal(r.error, "an answer went down: family 1001 is "
	    "false, stock true");

	/* Past the Apple families (2000 on: Mac, Common, Metal): named so. */
	now = stock;
	for (i = 0; i < probe_nfamilies && probe_families[i] <= 2000; i++)
		;
	assert_true(i < probe_nfamilies);
	now.family[i] = true;
	memset(&r, 0, sizeof r);
	inv->run(&ctx, &r);
	snprintf(want, sizeof want, "outside the Apple range, family %ld is "
	    "true, stock false", probe_families[i]);
	assert_string_equal(r.error, want);
}

static void
test_usage_and_no_device(void **state)
{
	static const char *const bad[][4] = {
		{ PROBE_BIN, "--checks", "simd_sum,nope", NULL },
		{ PROBE_BIN, "--timeout-ms", "0", NULL },
		{ PROBE_BIN, "--timeout-ms", "5x", NULL },
		{ PROBE_BIN, "--timeout-ms", "600001", NULL },
		{ PROBE_BIN, "--checks", ",", NULL },
		{ PROBE_BIN, "--checks", "", NULL },
		{ PROBE_BIN, "--bogus", NULL, NULL },
		{ PROBE_BIN, "extra", NULL, NULL },
	};
	/* The deadline's two ends are taken (--list-checks then exits). */
	static const char *const edges[][5] = {
		{ PROBE_BIN, "--timeout-ms", "1", "--list-checks", NULL },
		{ PROBE_BIN, "--timeout-ms", "600000", "--list-checks", NULL },
	};
	const char		*no_device[] = { "MTLSIM_NO_DEVICE=1", NULL };
	const char		*list[] = { PROBE_BIN, "--list", NULL };
	const char		*p;
	struct child_result	 c;
	struct probe_run_result	 r;
	char			*env[CHILD_ENV_MAX];
	size_t			 i;

	(void)state;
	child_env(env, NULL);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(child_run(bad[i], env, &c), 0);
		assert_int_equal(WEXITSTATUS(c.status), 2);
		assert_non_null(strstr(c.err, "metalcap-probe"));
	}
	assert_non_null(strstr(c.err, "unexpected argument 'extra'"));
	for (i = 0; i < sizeof edges / sizeof edges[0]; i++) {
		assert_int_equal(child_run(edges[i], env, &c), 0);
		assert_int_equal(WEXITSTATUS(c.status), 0);
		assert_string_equal(c.err, "");
	}
	/* --list: every check of the catalogue, one a line, in its order. */
	assert_int_equal(child_run(list, env, &c), 0);
	assert_int_equal(WEXITSTATUS(c.status), 0);
	assert_int_equal(strncmp(c.out, "simd_sum ", 9), 0);
	for (i = 0, p = c.out; (p = strchr(p, '\n')) != NULL; i++, p++)
		;
	assert_int_equal(i, probe_nchecks);
	run_probe(&r, no_device, NULL);
	assert_int_equal(r.exit_code, 3);
	assert_string_equal(json_string_value(json_object_get(r.doc,
	    "error")), "no Metal device");
	assert_string_equal(r.child.err, "metalcap-probe: no Metal device\n");
	json_decref(r.doc);
}

/*
 * The stock pass's answers go from the child to the parent as JSON: read
 * back whole, and refused naming what is missing or mistyped.  A shim
 * report line is read field by field, "-" as null, numbers as numbers.
 */
static void
test_report_parsers(void **state)
{
	struct probe_answers	 a = { .device = "dev", .threadgroup_memory =
	    32768, .working_set = 123 }, back;
	json_t			*doc, *shim;
	char			 why[128], key[16], want[64];
	size_t			 i;

	(void)state;
	a.family[0] = a.family[probe_nfamilies - 1] = true;
	doc = probe_answers_json(&a);
	assert_int_equal(probe_answers_from_json(doc, &back, why, sizeof why),
	    0);
	assert_memory_equal(&a, &back, sizeof a);
	snprintf(key, sizeof key, "%ld", probe_families[probe_nfamilies - 1]);
	json_object_set_new(json_object_get(doc, "families"), key,
	    json_integer(1));
	why[0] = '\0';
	assert_int_equal(probe_answers_from_json(doc, &back, why, sizeof why),
	    -1);
	snprintf(want, sizeof want, "families.%s: expected a boolean", key);
	assert_string_equal(why, want);
	json_object_del(doc, "working_set");
	why[0] = '\0';
	assert_int_equal(probe_answers_from_json(doc, &back, why, sizeof why),
	    -1);
	assert_non_null(strstr(why, "working_set"));
	json_decref(doc);

	/* Each family's answer by its number, the first and last too; a
	 * family the probe never asks is no answer. */
	for (i = 0; i < probe_nfamilies; i++)
		assert_int_equal(probe_answer(&a, probe_families[i]),
		    a.family[i]);
	assert_false(probe_answer(&a, 1000));
	shim = probe_shim_parse("metalcapd pid=5 state=hooked\n");
	assert_int_equal(json_object_size(shim), 0);
	json_decref(shim);
	shim = probe_shim_parse("metalcap pid=5 state=hooked family_max=1009 "
	    "class=- reason=a b c\n");
	assert_int_equal(json_integer_value(json_object_get(shim, "pid")), 5);
	assert_string_equal(json_string_value(json_object_get(shim, "state")),
	    "hooked");
	assert_int_equal(json_integer_value(json_object_get(shim,
	    "family_max")), 1009);
	assert_true(json_is_null(json_object_get(shim, "class")));
	assert_string_equal(json_string_value(json_object_get(shim,
	    "reason")), "a b c");
	json_decref(shim);
}

/* The probe's table for people (no --json), run with env. */
static void
run_human(struct child_result *c, const char *const *extra)
{
	const char	*argv[] = { PROBE_BIN, NULL };
	char		*env[CHILD_ENV_MAX];

	child_env(env, extra);
	assert_int_equal(child_run(argv, env, c), 0);
	assert_true(WIFEXITED(c->status));
}

/* A check's row of the table: its name, then its word. */
static const char *
human_word(const char *out, const char *check, char *word, size_t len)
{
	char		 name[64];
	const char	*line;

	for (line = out; line != NULL && *line != '\0'; line = strchr(line,
	    '\n') ? strchr(line, '\n') + 1 : NULL)
		if (sscanf(line, "%63s %7s", name, word) == 2 &&
		    strcmp(name, check) == 0 && strlen(word) < len)
			return word;
	fail_msg("no row for %s in:\n%s", check, out);
	return NULL;
}

/*
 * The table says what the JSON says: the families answered true, the
 * shim and its ceiling, each check's word (pass, FAIL, skip), a row for
 * every check, and the verdict in words.
 */
static void
test_human_report(void **state)
{
	const char		*with[] = { PRELOAD, CEILING, NULL };
	const char		*alias[] = { PRELOAD, CEILING,
	    "MTLSIM_TG_ALIAS=32768", NULL };
	struct child_result	 c;
	char			 word[8];
	const char		*p;
	size_t			 rows = 0;

	(void)state;
	run_human(&c, with);
	assert_int_equal(WEXITSTATUS(c.status), 0);
	assert_non_null(strstr(c.out, "device              Apple Paravirtual "
	    "device (sim backend)\n"));
	assert_non_null(strstr(c.out, "families true       1001 1002 1003 "
	    "1004 1005 1006 1007 1008 1009 3001 3002 3003\n"));
	assert_non_null(strstr(c.out, "threadgroup memory  65536 bytes\n"));
	assert_non_null(strstr(c.out, "shim                hooked, ceiling "
	    "1009, class AppleParavirtDevice\n"));
	assert_string_equal(human_word(c.out, "simd_sum", word, sizeof word),
	    "pass");
	assert_string_equal(human_word(c.out, "residency_set", word,
	    sizeof word), "skip");
	for (p = strstr(c.out, "\ncheck "); p != NULL && (p = strchr(p + 1,
	    '\n')) != NULL && p[1] != '\n'; )
		rows++;
	assert_int_equal(rows, probe_nchecks);
	assert_null(strstr(c.out, "(null)"));
	assert_non_null(strstr(c.out, "\nverdict: family override safe, "
	    "threadgroup override safe\n"));
	assert_string_equal(c.err, "");
	/* Without the shim: stock families, and no shim said so. */
	run_human(&c, NULL);
	assert_non_null(strstr(c.out, "families true       1001 1002 1003 "
	    "1004 1005 3001 3002 3003\n"));
	assert_non_null(strstr(c.out, "shim                not loaded\n"));
	/* A failed check, in capitals, and the verdict it gives. */
	run_human(&c, alias);
	assert_int_equal(WEXITSTATUS(c.status), 1);
	assert_string_equal(human_word(c.out, "threadgroup_advertised", word,
	    sizeof word), "FAIL");
	assert_non_null(strstr(c.out, "\nverdict: family override safe, "
	    "threadgroup override UNSAFE\n"));
}

static void
test_checks_subset(void **state)
{
	const char		*env[] = { PRELOAD, CEILING, NULL };
	const char		*args[] = { "--checks", "bfloat,simd_sum", NULL };
	struct probe_run_result	 r;

	(void)state;
	run_probe(&r, env, args);
	assert_int_equal(r.exit_code, 0);
	/* Catalogue order, not the order asked. */
	assert_int_equal(json_array_size(json_object_get(r.doc, "checks")), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    json_object_get(r.doc, "checks"), 0), "name")), "simd_sum");
	json_decref(r.doc);
}

/* fake-llama's stderr, less the library load time, as lines. */
static void
run_fake_llama(struct child_result *c, const char *const *extra)
{
	/* The fixtures are llama-bench's stderr: no log prefix, and ggml's
	 * INFO lines shown, which llama-server's flags give too. */
	const char	*argv[] = { FAKE_LLAMA, "--once", "--no-log-prefix",
	    "-lv", "4", NULL };
	char		*env[CHILD_ENV_MAX];

	child_env(env, extra);
	assert_int_equal(child_run(argv, env, c), 0);
}

static char *
slurp_without_timing(const char *path, int skip_lines)
{
	FILE	*f = fopen(path, "r");
	char	 line[512], *out = calloc(1, 65536);
	size_t	 len = 0;

	assert_non_null(f);
	while (fgets(line, sizeof line, f) != NULL) {
		if (skip_lines-- > 0 || strstr(line, "loaded in ") != NULL)
			continue;
		len += (size_t)snprintf(out + len, 65536 - len, "%s", line);
	}
	fclose(f);
	return out;
}

static char *
strip_timing(const char *text)
{
	char	*out = calloc(1, strlen(text) + 1), *o = out;
	const char *p, *nl;

	for (p = text; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL)
			break;
		if (strstr(p, "loaded in ") == NULL ||
		    strstr(p, "loaded in ") > nl) {
			/* The server's own line: llama-bench has none. */
			if (strncmp(p, "srv  llama_server: listening", 28) != 0) {
				memcpy(o, p, (size_t)(nl - p + 1));
				o += nl - p + 1;
			}
		}
	}
	return out;
}

static void
test_fake_llama(void **state)
{
	const char		*shim[] = { PRELOAD, CEILING, NULL };
	const char		*broken[] = { PRELOAD, CEILING,
	    "MTLSIM_FAIL=simdgroup_matrix:pipeline", NULL };
	struct child_result	 c;
	char			*got, *want;

	(void)state;
	run_fake_llama(&c, NULL);
	assert_int_equal(WEXITSTATUS(c.status), 0);
	assert_non_null(strstr(c.err, "simdgroup matrix mul. = false\n"));
	got = strip_timing(c.err);
	want = slurp_without_timing(FIXTURES "/llama-stock-guest.stderr", 0);
	assert_string_equal(got, want);
	free(got);
	free(want);

	run_fake_llama(&c, shim);
	assert_int_equal(WEXITSTATUS(c.status), 0);
	assert_non_null(strstr(c.err, "simdgroup matrix mul. = true\n"));
	got = strip_timing(c.err);
	/* The real run's first line is the reference shim's NSLog banner. */
	want = slurp_without_timing(FIXTURES "/llama-unlocked-guest.stderr",
	    1);
	assert_string_equal(got, want);
	free(got);
	free(want);

	run_fake_llama(&c, broken);
	assert_true(WIFSIGNALED(c.status));
	assert_int_equal(WTERMSIG(c.status), SIGABRT);
	assert_non_null(strstr(c.err, "ggml_metal_library_compile_pipeline: "
	    "failed to create pipeline state: base = 'kernel_mul_mm_f16_f32'"));
	assert_non_null(strstr(c.err, "ggml-metal-device.m:852: "
	    "ggml_metal_encoder_set_pipeline: nil Metal pipeline"));
}

/*
 * The probe with the shim, running check alone on a device that fails it
 * in mode (MTLSIM_FAIL); the check's error, NULL when it passed.
 */
static const char *
run_fault(struct probe_run_result *r, const char *check, const char *mode)
{
	char		 fail[96];
	const char	*env[] = { PRELOAD, CEILING, fail, NULL };
	const char	*args[] = { "--checks", check, NULL };

	snprintf(fail, sizeof fail, "MTLSIM_FAIL=%s:%s", check, mode);
	run_probe(r, env, args);
	return json_string_value(json_object_get(check_named(r->doc, check),
	    "error"));
}

/*
 * Results one percent off are wrong: the comparison is tight enough to
 * see a device that is slightly wrong, not only one that returns zeros.
 */
static void
test_slightly_off(void **state)
{
	static const char *const checks[] = { "simd_sum", "simdgroup_matrix",
	    "bfloat", "simd_reduction", "mul_mm_half", "mul_mm_bfloat",
	    "simdgroup_load_transposed", "simd_shuffle", "simd_half",
	    "prefix_sum", "simd_shuffle_up", "flash_attn_split",
	    "mul_mm_bf16", "argmax", "count_equal",
	    "threadgroup_32k", "threadgroup_advertised" };
	struct probe_run_result	 r;
	const char		*error;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof checks / sizeof checks[0]; i++) {
		error = run_fault(&r, checks[i], "off");
		assert_int_equal(r.exit_code, 1);
		if (error == NULL || strstr(error, "wrong result") == NULL)
			fail_msg("%s:off: %s", checks[i], error ? error :
			    "passed");
		json_decref(r.doc);
	}
}

/*
 * Only the output's last float wrong: each float check compares its whole
 * output, so it fails, naming that element (the output's size less one).
 */
static void
test_last_element(void **state)
{
	static const struct { const char *check; unsigned last; } checks[] = {
		{ "simd_sum", 1 }, { "simdgroup_matrix", 63 }, { "bfloat", 63 },
		{ "simd_reduction", 3 }, { "mul_mm_half", 1023 },
		{ "mul_mm_bfloat", 1023 }, { "simdgroup_load_transposed", 63 },
		{ "simd_shuffle", 127 }, { "simd_half", 3 },
		{ "prefix_sum", 511 }, { "simd_shuffle_up", 127 },
		{ "flash_attn_split", 255 }, { "mul_mm_bf16", 1023 },
		{ "argmax", 3 }, { "count_equal", 7 } };
	struct probe_run_result	 r;
	const char		*error;
	char			 want[64];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof checks / sizeof checks[0]; i++) {
		snprintf(want, sizeof want, "wrong result: element %u is ",
		    checks[i].last);
		error = run_fault(&r, checks[i].check, "last");
		assert_int_equal(r.exit_code, 1);
		if (error == NULL || strncmp(error, want, strlen(want)) != 0)
			fail_msg("%s:last: %s, not '%s...'", checks[i].check,
			    error ? error : "passed", want);
		json_decref(r.doc);
	}
}


/*
 * NaN and infinity fail every float check: a comparison written as "far
 * apart" is false for NaN and would pass it.
 */
static void
test_not_a_number(void **state)
{
	static const char *const checks[] = { "simd_sum", "simdgroup_matrix",
	    "bfloat", "simd_reduction", "mul_mm_half", "mul_mm_bfloat",
	    "simdgroup_load_transposed", "simd_shuffle", "simd_half",
	    "prefix_sum", "simd_shuffle_up", "flash_attn_split",
	    "mul_mm_bf16", "argmax", "count_equal" };
	static const char *const modes[] = { "nan", "inf" };
	struct probe_run_result	 r;
	const char		*error;
	size_t			 i, k;

	(void)state;
	assert_false(probe_close(NAN, 1.0f));
	assert_false(probe_close(NAN, NAN));
	assert_false(probe_close(INFINITY, INFINITY));
	assert_false(probe_close(1.0f, INFINITY));
	assert_false(probe_close(INFINITY, 1.0f));
	assert_false(probe_close(-INFINITY, 1e30f));
	assert_true(probe_close(1.0005f, 1.0f));
	assert_false(probe_close(1.003f, 1.0f));
	for (i = 0; i < sizeof checks / sizeof checks[0]; i++)
		for (k = 0; k < sizeof modes / sizeof modes[0]; k++) {
			error = run_fault(&r, checks[i], modes[k]);
			if (r.exit_code != 1 || error == NULL ||
			    strstr(error, "wrong result") == NULL)
				fail_msg("%s:%s: exit %d, %s", checks[i],
				    modes[k], r.exit_code, error ? error :
				    "passed");
			assert_false(field_true(json_object_get(r.doc,
			    "verdict"), "family"));
			json_decref(r.doc);
		}
}

/*
 * Threadgroup memory that wraps at the documented 32 KB while 64 KB is
 * advertised: every address holds its own value, so the aliasing shows
 * (a repeating pattern would not), and the verdict keeps the family
 * override alone.
 */
static void
test_threadgroup_alias(void **state)
{
	const char		*env[] = { PRELOAD, CEILING,
	    "MTLSIM_TG_ALIAS=32768", NULL };
	struct probe_run_result	 r;
	json_t			*verdict;
	const char		*error;

	(void)state;
	run_probe(&r, env, NULL);
	assert_int_equal(r.exit_code, 1);
	assert_string_equal(check_status(r.doc, "threadgroup_32k"), "pass");
	assert_string_equal(check_status(r.doc, "threadgroup_advertised"),
	    "fail");
	error = json_string_value(json_object_get(check_named(r.doc,
	    "threadgroup_advertised"), "error"));
	/* Half of each 64 KB block's reads land in the other 32 KB. */
	assert_string_equal(error, "wrong result: 131072 of 262144 reads in 16 "
	    "threadgroups of 65536 bytes gave another address's value (the "
	    "block aliases, or was not written)");
	verdict = json_object_get(r.doc, "verdict");
	assert_true(field_true(verdict, "family"));
	assert_false(field_true(verdict, "threadgroup"));
	json_decref(r.doc);
}

/*
 * The default stage deadline against the real logs: ggml's library is
 * compiled cold at run time, and the probe must not take the slowest
 * compile seen for a hang ("ggml_metal_library_init: loaded in S sec").
 */
static void
test_timeout_fits_real_compiles(void **state)
{
	static const char *const logs[] = { "llama-stock-guest.stderr",
	    "llama-bare-metal-host.stderr", "llama-unlocked-guest.stderr",
	    "llama-overbroad-profile.stderr" };
	char	 path[512], line[512];
	double	 s, slowest = 0;
	size_t	 i;
	FILE	*f;

	(void)state;
	for (i = 0; i < sizeof logs / sizeof logs[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", FIXTURES, logs[i]);
		assert_non_null(f = fopen(path, "r"));
		while (fgets(line, sizeof line, f) != NULL)
			if (sscanf(line, "ggml_metal_library_init: loaded in "
			    "%lf sec", &s) == 1 && s > slowest)
				slowest = s;
		fclose(f);
	}
	assert_true(slowest > 8.0);	/* the fixtures hold a cold compile */
	assert_true(PROBE_DEFAULT_TIMEOUT >= 2 * slowest * 1000);
}

/*
 * Metal's default language version follows the main executable's build
 * version; this program carries the probe's (the Makefile's MACOS_MIN,
 * 11.7.1) in its ELF note, as the macOS probe in LC_BUILD_VERSION.  At
 * MSL 2.3 the bfloat kernel's `#if __METAL_VERSION__ >= 310` leaves it
 * out, so mul_mm_bfloat must set 3.1 itself (issue 45).
 */
static void
test_default_language_follows_build(void **state)
{
	const struct probe_check	*mm = probe_check_find("mul_mm_bfloat");
	struct probe_answers		 answers;
	struct probe_context		 ctx = { 0 };
	struct probe_result		 r = { .name = "mul_mm_bfloat" };
	struct probe_dispatch		 d = {
		.label = "default", .source = probe_kernels_mm,
		.function = "probe_mul_mm_bfloat", .nbuffers = 3,
		.threadgroups = 1, .threads_per_group = 128,
		.threadgroup_memory = 6144,
	};
	struct probe_outcome		 o = { 0 };
	static float			 a[1024], b[1024], c[1024];
	uint32_t			 minos, sdk;

	(void)state;
	assert_int_equal(mtlsim_build_version(&minos, &sdk), 0);
	assert_int_equal(minos, MTLSIM_BUILD_MINOS);
	assert_int_equal(sdk, MTLSIM_BUILD_SDK);
	assert_int_equal(mtlsim_language_for(0x000b0701), 0x20003);
	assert_int_equal(mtlsim_language_for(0x000d0600), 0x30000);
	assert_int_equal(mtlsim_language_for(0x000e0000), 0x30001);
	assert_int_equal(mtlsim_language_for(0x000f0700), 0x30002);
	assert_int_equal(mtlsim_language_for(0x001a0000), 0x40000);
	assert_int_equal(mtlsim_default_language(),
	    mtlsim_language_for(MTLSIM_BUILD_SDK));
	assert_false(mtlsim_source_keeps(probe_kernels_mm,
	    "probe_mul_mm_bfloat", 0x20003));
	assert_true(mtlsim_source_keeps(probe_kernels_mm,
	    "probe_mul_mm_bfloat", 0x30001));
	assert_true(mtlsim_source_keeps(probe_kernels_mm,
	    "probe_mul_mm_half", 0x20003));

	/* On a Mac's GPU, which has bfloat: gone at the default ... */
	setenv("MTLSIM_DEVICE", "bare-metal", 1);
	ctx.device = probe_backend.open();
	assert_non_null(ctx.device);
	d.buffers[0] = a, d.buffers[1] = b, d.buffers[2] = c;
	d.sizes[0] = d.sizes[1] = d.sizes[2] = sizeof a;
	d.output = 2;
	probe_backend.dispatch(ctx.device, &d, &o);
	assert_false(o.compiled && o.ran);
	assert_non_null(strstr(o.error, "probe_mul_mm_bfloat was not found"));
	/* ... and the check, which sets 3.1, passes. */
	probe_answers_read(ctx.device, &answers);
	ctx.answers = &answers;
	mm->run(&ctx, &r);
	probe_backend.close(ctx.device);
	unsetenv("MTLSIM_DEVICE");
	assert_true(r.correct);
	assert_string_equal(r.error, "");
}

/* The no-copy read writes y = x + 1 after the rewrite, for the test below. */
static void
nocopy_bump(void *arg)
{
	((float *)arg)[0] = 41.0f;
}

/*
 * nocopy_mmap: right on a device whose no-copy buffers are the caller's
 * pages; on the macOS 14 guest's (MTLSIM_NOCOPY=stale), the GPU misses a
 * write through the file mapping and the check fails naming --no-mmap,
 * without calling the overrides unsafe.  Anonymous memory is not stale.
 */
static void
test_nocopy_mmap(void **state)
{
	static const char *const stale[] = { "MTLSIM_NOCOPY=stale", NULL };
	static const char *const host[] = { "MTLSIM_NOCOPY=stale",
	    "MTLSIM_DEVICE=bare-metal", NULL };
	static const char *const only[] = { "--checks", "nocopy_mmap", NULL };
	struct probe_run_result	 r;
	struct probe_context	 ctx = { 0 };
	static float		 x[1024] __attribute__((aligned(4096)));
	float			 y[1024];
	struct probe_dispatch	 d = {
		.label = "anon", .source = "kernel void probe_nocopy_read(",
		.function = "probe_nocopy_read", .buffers = { x, y },
		.sizes = { sizeof x, sizeof y }, .nbuffers = 2, .output = 1,
		.nocopy = 1, .threadgroups = 16, .threads_per_group = 64,
		.prepare = nocopy_bump, .prepare_arg = x,
	};
	struct probe_outcome	 o = { 0 };

	(void)state;
	run_probe(&r, NULL, only);
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(check_status(r.doc, "nocopy_mmap"), "pass");
	json_decref(r.doc);

	run_probe(&r, stale, only);
	assert_int_equal(r.exit_code, 1);
	assert_string_equal(check_status(r.doc, "nocopy_mmap"), "fail");
	assert_non_null(strstr(json_string_value(json_object_get(check_named(
	    r.doc, "nocopy_mmap"), "error")), "stale data"));
	assert_non_null(strstr(json_string_value(json_object_get(check_named(
	    r.doc, "nocopy_mmap"), "error")), "--no-mmap"));
	assert_true(field_true(json_object_get(r.doc, "verdict"), "family"));
	json_decref(r.doc);

	run_probe(&r, host, only);
	assert_string_equal(check_status(r.doc, "nocopy_mmap"), "pass");
	json_decref(r.doc);

	/* Stale is a file mapping's trouble: anonymous pages read fresh. */
	setenv("MTLSIM_NOCOPY", "stale", 1);
	ctx.device = probe_backend.open();
	assert_non_null(ctx.device);
	probe_backend.dispatch(ctx.device, &d, &o);
	probe_backend.close(ctx.device);
	unsetenv("MTLSIM_NOCOPY");
	assert_true(o.ran);
	assert_true(y[0] == 42.0f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_references),
		cmocka_unit_test(test_report_fields_with_shim),
		cmocka_unit_test(test_stock_device),
		cmocka_unit_test(test_failure_switches),
		cmocka_unit_test(test_residency_nil),
		cmocka_unit_test(test_invariants_catch_overbroad),
		cmocka_unit_test(test_invariants_ceiling),
		cmocka_unit_test(test_usage_and_no_device),
		cmocka_unit_test(test_report_parsers),
		cmocka_unit_test(test_human_report),
		cmocka_unit_test(test_checks_subset),
		cmocka_unit_test(test_fake_llama),
		cmocka_unit_test(test_timeout_fits_real_compiles),
		cmocka_unit_test(test_threadgroup_alias),
		cmocka_unit_test(test_slightly_off),
		cmocka_unit_test(test_last_element),
		cmocka_unit_test(test_not_a_number),
		cmocka_unit_test(test_default_language_follows_build),
		cmocka_unit_test(test_nocopy_mmap),
	};

	/* MC_TEST_ONLY=pattern runs the matching tests (make mutate). */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("probe", tests, NULL, NULL);
}
