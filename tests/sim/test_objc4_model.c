/* SPDX-License-Identifier: MIT */
/*
 * Tests of the objc4 model itself (tests/sim/README.md, "the objc4
 * model"): every call of its table is stopped inside a load-image function
 * where objc4 takes runtimeLock, and only there; a shim variant that makes
 * such a call from a load-image function is stopped the same; and every
 * runtime function the shim's objects import has its row, so a new call
 * cannot pass unmodelled.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "child.h"

#define CHECK		MC_TEST_BUILD "/tests/objc4-model-check"
#define VARIANT		MC_TEST_BUILD "/tests/variant/libmetalcap.so"
#define SHIM_ALONE	MC_TEST_BUILD "/tests/libmetalcap-alone.o"
#define QUERY		MC_TEST_BUILD "/tests/mtlsim-query"
#define ABORT_WORDS	"Trying to recursively lock an os_unfair_lock"
#define MAX_ROWS	128

struct row {
	char	name[64], lock[32], where[16];
};

static struct row	rows[MAX_ROWS];
static size_t		nrows;

/* The model's table, as objc4-model-check lists it. */
static int
setup(void **state)
{
	const char		*argv[] = { CHECK, "list", NULL };
	char			*env[CHILD_ENV_MAX], *line, *save = NULL;
	static struct child_result r;

	(void)state;
	child_env(env, NULL);
	if (child_run(argv, env, &r) != 0 || !WIFEXITED(r.status) ||
	    WEXITSTATUS(r.status) != 0)
		return -1;
	for (line = strtok_r(r.out, "\n", &save); line != NULL &&
	    nrows < MAX_ROWS; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%63[^\t]\t%31[^\t]\t%15[^\t]",
		    rows[nrows].name, rows[nrows].lock,
		    rows[nrows].where) != 3)
			return -1;
		nrows++;
	}
	return 0;
}

static const struct row *
row_named(const char *name)
{
	size_t	i;

	for (i = 0; i < nrows; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	return NULL;
}

static int
takes_runtime_lock(const struct row *row)
{
	return strncmp(row->lock, "runtimeLock", 11) == 0;
}

/* The child was stopped as objc4 stops it, naming the call. */
static void
assert_stopped(const struct child_result *r, const char *name)
{
	char	words[160];

	snprintf(words, sizeof words, "objc4-model: %s called from a "
	    "load-image function", name);
	if (!WIFSIGNALED(r->status) || WTERMSIG(r->status) != SIGABRT ||
	    strstr(r->err, words) == NULL || strstr(r->err, ABORT_WORDS) ==
	    NULL)
		fail_msg("%s was not stopped: status %d, stderr:\n%s", name,
		    r->status, r->err);
}

static void
assert_ran(const struct child_result *r, const char *name)
{
	char	words[96];

	snprintf(words, sizeof words, "ran %s\n", name);
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0 ||
	    strcmp(r->out, words) != 0)
		fail_msg("%s did not run: status %d, stdout:\n%s\nstderr:\n%s",
		    name, r->status, r->out, r->err);
}

/*
 * The table holds each call the review named and the shim makes, and
 * each is what objc4's source says (objc4-model-calls.c cites it).
 */
static void
test_table_rows(void **state)
{
	static const struct {
		const char	*name, *lock;
	} want[] = {
		{ "objc_lookUpClass", "runtimeLock" },
		{ "objc_getClass", "runtimeLock" },
		{ "class_copyMethodList", "runtimeLock" },
		{ "method_exchangeImplementations", "runtimeLock" },
		{ "class_getInstanceMethod", "runtimeLock" },
		{ "method_setImplementation", "runtimeLock" },
		{ "class_addMethod", "runtimeLock" },
		{ "class_replaceMethod", "runtimeLock" },
		{ "method_getImplementation", "runtimeLock-sometimes" },
		{ "class_getName", "runtimeLock-sometimes" },
		{ "sel_registerName", "selLock" },
		{ "method_getTypeEncoding", "none" },
		{ "object_getClass", "none" },
	};
	const struct row	*row;
	size_t			 i;

	(void)state;
	assert_true(nrows >= 40);
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		if ((row = row_named(want[i].name)) == NULL)
			fail_msg("%s is not in the model's table", want[i].name);
		assert_string_equal(row->lock, want[i].lock);
	}
}

/*
 * Every call of the table, from a load-image function: stopped if it
 * takes runtimeLock, made if not (objc4 takes selLock or nothing there);
 * from main, always made.  The GNU runtime has no objc4-only call.
 */
static void
test_each_call_inside_and_outside(void **state)
{
	const char		*inside[] = { CHECK, "inside", NULL, NULL };
	const char		*outside[] = { CHECK, "outside", NULL, NULL };
	char			*env[CHILD_ENV_MAX];
	static struct child_result r;
	size_t			 i, stopped = 0;

	(void)state;
	child_env(env, NULL);
	for (i = 0; i < nrows; i++) {
		if (strcmp(rows[i].where, "apple-only") == 0)
			continue;
		inside[2] = outside[2] = rows[i].name;
		assert_int_equal(child_run(inside, env, &r), 0);
		if (takes_runtime_lock(&rows[i])) {
			assert_stopped(&r, rows[i].name);
			stopped++;
		} else
			assert_ran(&r, rows[i].name);
		assert_int_equal(child_run(outside, env, &r), 0);
		assert_ran(&r, rows[i].name);
	}
	assert_true(stopped >= 25);
}

/*
 * A shim variant (-DOBJC4_MODEL_VARIANT, a test build only) that makes a
 * call from a load-image function it registers, preloaded into a
 * workload as the shim is: stopped for every call that takes runtimeLock,
 * the six the model had and those it lacked (objc_lookUpClass,
 * class_copyMethodList, method_exchangeImplementations, class_addMethod,
 * ...); the workload unlocked as usual when the call takes no such lock.
 */
static void
test_shim_variant_in_callback(void **state)
{
	const char		*argv[] = { QUERY, NULL };
	const char		*extra[] = { "LD_PRELOAD=" VARIANT,
	    "METALCAP_APPLE_FAMILY_MAX=1009", NULL, NULL };
	char			*env[CHILD_ENV_MAX], var[128], buf[16];
	static struct child_result r;
	size_t			 i;

	(void)state;
	child_env(env, extra);
	assert_int_equal(child_run(argv, env, &r), 0);
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_string_equal(child_value(r.out, "family.1009", buf, sizeof buf),
	    "1");
	extra[2] = var;
	for (i = 0; i < nrows; i++) {
		if (strcmp(rows[i].where, "apple-only") == 0)
			continue;
		snprintf(var, sizeof var, "OBJC4_MODEL_VARIANT_CALL=%s",
		    rows[i].name);
		child_env(env, extra);
		assert_int_equal(child_run(argv, env, &r), 0);
		if (takes_runtime_lock(&rows[i]))
			assert_stopped(&r, rows[i].name);
		else if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 ||
		    strcmp(child_value(r.out, "family.1009", buf, sizeof buf),
		    "1") != 0)
			fail_msg("%s: status %d, stderr:\n%s", rows[i].name,
			    r.status, r.err);
	}
}

static int
runtime_symbol(const char *name)
{
	static const char *const prefix[] = { "objc_", "_objc_", "__objc_",
	    "class_", "method_", "sel_", "object_", "imp_", "protocol_",
	    "property_", "ivar_" };
	size_t	i;

	for (i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
		if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	return 0;
}

/*
 * What the shim's objects import from the runtime (nm -u, without the
 * model linked in): each in the model's table, so that a call added to
 * the shim cannot pass the Linux tests without its lock being decided.
 */
static void
test_shim_imports_modelled(void **state)
{
	const char		*argv[] = { "/usr/bin/nm", "-u", SHIM_ALONE,
	    NULL };
	char			*env[CHILD_ENV_MAX], *line, *save = NULL;
	char			 name[128];
	static struct child_result r;
	size_t			 seen = 0;

	(void)state;
	child_env(env, NULL);
	assert_int_equal(child_run(argv, env, &r), 0);
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	for (line = strtok_r(r.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, " U %127s", name) != 1 ||
		    !runtime_symbol(name))
			continue;
		if (row_named(name) == NULL)
			fail_msg("the shim imports %s, which the objc4 model "
			    "does not list (tests/sim/objc4-model-calls.c)",
			    name);
		seen++;
	}
	/* The filter found the calls the shim is known to make. */
	assert_true(seen >= 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_rows),
		cmocka_unit_test(test_each_call_inside_and_outside),
		cmocka_unit_test(test_shim_variant_in_callback),
		cmocka_unit_test(test_shim_imports_modelled),
	};

	return cmocka_run_group_tests_name("objc4_model", tests, setup, NULL);
}
