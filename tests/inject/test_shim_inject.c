/* SPDX-License-Identifier: MIT */
/*
 * Injection tests: the real shim, preloaded into a workload that uses the
 * SIMULATED paravirtual device (tests/sim), exactly as dyld would insert it
 * on macOS.  Each case runs a fresh process with an exact environment.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"

#define SHIM		MC_TEST_BUILD "/lib/libmetalcap.so"
#define SIM_LIB		MC_TEST_BUILD "/tests/libmtlsim.so"
#define QUERY		MC_TEST_BUILD "/tests/mtlsim-query"
#define PRELOAD		"LD_PRELOAD=" SHIM

static const long stock_true[] = { 1001, 1002, 1003, 1004, 1005, 3001, 3002,
    3003 };
static const long stock_false[] = { 1006, 1007, 1008, 1009, 1010, 2001, 2002,
    5001, 5002 };
/* Families the shim must never touch, whatever the ceiling. */
static const long outside_apple[] = { 2001, 2002, 3001, 3002, 3003, 5001,
    5002 };

struct run {
	struct child_result	result;
	char			report[4096];
	char			dir[64];
};

/* Run argv (default: the query tool) with extra env and a report file. */
static void
run(struct run *r, const char *const *extra, const char *const *argv)
{
	static const char *const query[] = { QUERY, NULL };
	const char		*all[CHILD_ENV_MAX];
	char			*env[CHILD_ENV_MAX], report_var[160], path[128];
	size_t			 n = 0;
	FILE			*f;

	snprintf(r->dir, sizeof r->dir, "/tmp/mc-inject.XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(path, sizeof path, "%s/report", r->dir);
	snprintf(report_var, sizeof report_var, "METALCAP_REPORT=%s", path);
	for (; extra != NULL && *extra != NULL && n < CHILD_ENV_MAX / 2; extra++) {
		/* glibc's getenv takes the first: a caller's report wins. */
		if (strncmp(*extra, "METALCAP_REPORT=", 16) == 0)
			report_var[0] = '\0';
		all[n++] = *extra;
	}
	if (report_var[0] != '\0')
		all[n++] = report_var;
	all[n] = NULL;
	child_env(env, all);
	assert_int_equal(child_run(argv ? argv : query, env, &r->result), 0);
	r->report[0] = '\0';
	if ((f = fopen(path, "r")) != NULL) {
		r->report[fread(r->report, 1, sizeof r->report - 1, f)] = '\0';
		fclose(f);
		unlink(path);
	}
	rmdir(r->dir);
	if (!WIFEXITED(r->result.status) || WEXITSTATUS(r->result.status))
		print_message("child failed: status %d, stderr:\n%s\n",
		    r->result.status, r->result.err);
	assert_true(WIFEXITED(r->result.status));
	assert_int_equal(WEXITSTATUS(r->result.status), 0);
}

static long
answer(const struct run *r, const char *key)
{
	char	buf[64];

	if (child_value(r->result.out, key, buf, sizeof buf) == NULL)
		fail_msg("no %s in output:\n%s", key, r->result.out);
	return strtol(buf, NULL, 10);
}

static int
family(const struct run *r, long f)
{
	char	key[32];

	snprintf(key, sizeof key, "family.%ld", f);
	return (int)answer(r, key);
}

/* The report line of the run: count of lines, and one field's value. */
static int
report_lines(const struct run *r)
{
	int		 n = 0;
	const char	*p;

	for (p = r->report; *p != '\0'; p++)
		n += *p == '\n';
	return n;
}

static const char *
report_field(const struct run *r, const char *key, char *buf, size_t len)
{
	char		 pat[64];
	const char	*p;
	size_t		 n;

	snprintf(pat, sizeof pat, " %s=", key);
	if ((p = strstr(r->report, pat)) == NULL)
		fail_msg("no %s in report: %s", key, r->report);
	p += strlen(pat);
	n = strcmp(key, "reason") == 0 ? strcspn(p, "\n") : strcspn(p, " \n");
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

static void
assert_stock(const struct run *r)
{
	size_t	i;

	for (i = 0; i < sizeof stock_true / sizeof stock_true[0]; i++)
		assert_int_equal(family(r, stock_true[i]), 1);
	for (i = 0; i < sizeof stock_false / sizeof stock_false[0]; i++)
		assert_int_equal(family(r, stock_false[i]), 0);
	assert_int_equal(answer(r, "threadgroup_memory"), 32768);
	assert_int_equal(answer(r, "working_set"), 11453250000L);
}

static void
test_stock_without_shim(void **state)
{
	struct run	r;

	(void)state;
	run(&r, NULL, NULL);
	assert_stock(&r);
	assert_string_equal(r.report, "");
}

static void
test_ceiling_1009(void **state)
{
	const char	*env[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    NULL };
	struct run	 stock, r;
	char		 buf[256];
	long		 f;
	size_t		 i;

	(void)state;
	run(&stock, NULL, NULL);
	run(&r, env, NULL);
	for (f = 1001; f <= 1009; f++)
		assert_int_equal(family(&r, f), 1);
	assert_int_equal(family(&r, 1010), 0);
	for (i = 0; i < sizeof outside_apple / sizeof outside_apple[0]; i++)
		assert_int_equal(family(&r, outside_apple[i]),
		    family(&stock, outside_apple[i]));
	assert_int_equal(answer(&r, "threadgroup_memory"), 65536);
	assert_int_equal(answer(&r, "working_set"), 11453250000L);

	/* Silent: nothing on stderr, nothing extra on stdout. */
	assert_string_equal(r.result.err, "");
	assert_int_equal(strlen(r.result.out), strlen(stock.result.out));

	assert_int_equal(report_lines(&r), 1);
	assert_string_equal(report_field(&r, "state", buf, sizeof buf),
	    "hooked");
	snprintf(buf, sizeof buf, "metalcap pid=%ld ", (long)r.result.pid);
	assert_memory_equal(r.report, buf, strlen(buf));
	assert_string_equal(report_field(&r, "class", buf, sizeof buf),
	    "AppleParavirtDevice");
	assert_string_equal(report_field(&r, "hooked", buf, sizeof buf),
	    "supportsFamily:,maxThreadgroupMemoryLength");
	assert_string_equal(report_field(&r, "family_max", buf, sizeof buf),
	    "1009");
	assert_string_equal(report_field(&r, "version", buf, sizeof buf),
	    MC_VERSION);
}

static void
test_device_reporting_more_keeps_it(void **state)
{
	const char	*env[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    "MTLSIM_THREADGROUP_MEMORY=131072", "MTLSIM_APPLE_FAMILY=9",
	    "MTLSIM_EXTRA_FAMILIES=5001", NULL };
	const char	*low[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1007",
	    "MTLSIM_APPLE_FAMILY=9", NULL };
	struct run	 r;

	(void)state;
	run(&r, env, NULL);
	assert_int_equal(answer(&r, "threadgroup_memory"), 131072);
	assert_int_equal(family(&r, 5001), 1);
	/* A lower ceiling never takes away what the device has. */
	run(&r, low, NULL);
	assert_int_equal(family(&r, 1009), 1);
	assert_int_equal(family(&r, 1010), 0);
}

static void
test_working_set_only_when_set(void **state)
{
	const char	*up[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    "METALCAP_RECOMMENDED_WORKING_SET_SIZE=34359738368", NULL };
	const char	*down[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    "METALCAP_RECOMMENDED_WORKING_SET_SIZE=1024", NULL };
	const char	*keep_tg[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    "METALCAP_MAX_THREADGROUP_MEMORY=0", NULL };
	struct run	 r;
	char		 buf[128];

	(void)state;
	run(&r, up, NULL);
	assert_int_equal(answer(&r, "working_set"), 34359738368L);
	assert_string_equal(report_field(&r, "hooked", buf, sizeof buf),
	    "supportsFamily:,maxThreadgroupMemoryLength,"
	    "recommendedMaxWorkingSetSize");
	run(&r, down, NULL);
	assert_int_equal(answer(&r, "working_set"), 11453250000L);
	run(&r, keep_tg, NULL);
	assert_int_equal(answer(&r, "threadgroup_memory"), 32768);
	assert_int_equal(family(&r, 1009), 1);
	assert_string_equal(report_field(&r, "hooked", buf, sizeof buf),
	    "supportsFamily:");
}

static void
test_malformed_config_stays_stock(void **state)
{
	static const struct {
		const char	*var;
		const char	*reason;
	} cases[] = {
		{ "METALCAP_APPLE_FAMILY_MAX=1009abc",
		    "METALCAP_APPLE_FAMILY_MAX=\"1009abc\": has characters "
		    "after the number" },
		{ "METALCAP_APPLE_FAMILY_MAX=2000",
		    "METALCAP_APPLE_FAMILY_MAX=\"2000\": is above the limit "
		    "1999" },
		{ "METALCAP_APPLE_FAMILY_MAX= 1009",
		    "METALCAP_APPLE_FAMILY_MAX=\" 1009\": must start with a "
		    "digit (no sign or blanks)" },
		{ "METALCAP_MAX_THREADGROUP_MEMORY=64k",
		    "METALCAP_MAX_THREADGROUP_MEMORY=\"64k\": has characters "
		    "after the number" },
		{ "METALCAP_RECOMMENDED_WORKING_SET_SIZE=-1",
		    "METALCAP_RECOMMENDED_WORKING_SET_SIZE=\"-1\": must start "
		    "with a digit (no sign or blanks)" },
		{ "METALCAP_INHERIT=no",
		    "METALCAP_INHERIT=\"no\": must be 0 or 1" },
	};
	struct run	 r;
	char		 buf[256];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		/* The good ceiling comes last so the bad one overrides it. */
		const char *env[] = { PRELOAD, cases[i].var,
		    strncmp(cases[i].var, "METALCAP_APPLE", 14) == 0 ?
		    NULL : "METALCAP_APPLE_FAMILY_MAX=1009", NULL };

		run(&r, env, NULL);
		assert_stock(&r);
		assert_string_equal(r.result.err, "");
		assert_int_equal(report_lines(&r), 1);
		assert_string_equal(report_field(&r, "state", buf, sizeof buf),
		    "stock");
		assert_string_equal(report_field(&r, "reason", buf,
		    sizeof buf), cases[i].reason);
	}
	{
		const char *unset[] = { PRELOAD, NULL };

		run(&r, unset, NULL);
		assert_stock(&r);
		assert_string_equal(report_field(&r, "reason", buf,
		    sizeof buf), "METALCAP_APPLE_FAMILY_MAX is not set");
	}
}

static void
test_alias_and_precedence(void **state)
{
	const char	*alias[] = { PRELOAD, "LUME_METAL_APPLE_FAMILY_MAX=1007",
	    NULL };
	const char	*both[] = { PRELOAD, "LUME_METAL_APPLE_FAMILY_MAX=1007",
	    "METALCAP_APPLE_FAMILY_MAX=1009", NULL };
	struct run	 r;
	char		 buf[128];

	(void)state;
	run(&r, alias, NULL);
	assert_int_equal(family(&r, 1007), 1);
	assert_int_equal(family(&r, 1008), 0);
	assert_string_equal(report_field(&r, "source", buf, sizeof buf),
	    "LUME_METAL_APPLE_FAMILY_MAX");
	run(&r, both, NULL);
	assert_int_equal(family(&r, 1009), 1);
	assert_string_equal(report_field(&r, "source", buf, sizeof buf),
	    "METALCAP_APPLE_FAMILY_MAX");
}

static void
test_eight_threads_hook_once(void **state)
{
	const char	*env[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    NULL };
	const char	*argv[] = { QUERY, "--threads", "8", NULL };
	struct run	 r;
	int		 round;

	(void)state;
	/* A race shows only sometimes: repeat it. */
	for (round = 0; round < 10; round++) {
		run(&r, env, argv);
		assert_int_equal(WEXITSTATUS(r.result.status), 0);
		assert_int_equal(report_lines(&r), 1);
		assert_int_equal(family(&r, 1009), 1);
		assert_int_equal(family(&r, 1005), 1);
		assert_int_equal(family(&r, 1010), 0);
		assert_int_equal(answer(&r, "threadgroup_memory"), 65536);
	}
}

static void
test_missing_pieces_hook_nothing(void **state)
{
	const char	*limited[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    "METALCAP_RECOMMENDED_WORKING_SET_SIZE=34359738368",
	    "MTLSIM_DEVICE=limited", NULL };
	const char	*no_class[] = { PRELOAD,
	    "METALCAP_APPLE_FAMILY_MAX=1009", NULL };
	const char	*renamed[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    "LD_LIBRARY_PATH=" MC_TEST_BUILD "/tests/renamed", NULL };
	const char	*true_argv[] = { "/bin/true", NULL };
	struct run	 r;
	char		 buf[256];

	(void)state;
	run(&r, limited, NULL);
	assert_int_equal(family(&r, 1009), 0);
	assert_int_equal(answer(&r, "threadgroup_memory"), 32768);
	assert_string_equal(report_field(&r, "reason", buf, sizeof buf),
	    "device class MTLSimParavirtLimitedDevice lacks a required method");

	/* The shim loads Metal itself: a process that never makes a device
	 * says so when it ends. */
	run(&r, no_class, true_argv);
	assert_string_equal(report_field(&r, "state", buf, sizeof buf),
	    "stock");
	assert_string_equal(report_field(&r, "reason", buf, sizeof buf),
	    "no Metal device was created");

	/* A Metal release without the private base class: nothing hooked. */
	run(&r, renamed, NULL);
	assert_int_equal(family(&r, 1009), 0);
	assert_int_equal(answer(&r, "threadgroup_memory"), 32768);
	assert_string_equal(report_field(&r, "reason", buf, sizeof buf),
	    "class _MTLDevice not found: Metal did not load or no longer "
	    "has it");
	assert_int_equal(report_lines(&r), 1);
}

/*
 * Metal loaded after start (dlopen, as MLX in Python or a GGML_BACKEND_DL
 * build): the shim brought Metal in already, so the device made late is
 * unlocked all the same, hooked from the constructor's one hook.
 */
static void
test_late_metal(void **state)
{
	const char	*env[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    NULL };
	const char	*argv[] = { MC_TEST_BUILD "/tests/late-metal", SIM_LIB,
	    "100", NULL };
	struct run	 r;
	char		 buf[64];

	(void)state;
	run(&r, NULL, argv);
	assert_int_equal(family(&r, 1009), 0);
	assert_int_equal(answer(&r, "threadgroup_memory"), 32768);
	run(&r, env, argv);
	assert_int_equal(family(&r, 1009), 1);
	assert_int_equal(answer(&r, "threadgroup_memory"), 65536);
	assert_string_equal(report_field(&r, "state", buf, sizeof buf),
	    "hooked");
	assert_int_equal(report_lines(&r), 1);
}

/*
 * supportsFamily: is inherited from _MTLDevice: the hook is added to the
 * guest's device class alone, so another device class in the process (a
 * Mac's own GPU) keeps its answers, and the hook is in place before the
 * original it calls is needed (another thread sending the message the
 * instant it is replaced: the model's knob).
 */
static void
test_inherited_method_hooked_alone(void **state)
{
	const char	*env[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    NULL };
	const char	*racing[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    "OBJC4_MODEL_SEND_ON_REPLACE=1", NULL };
	const char	*argv[] = { QUERY, "--then", "bare-metal", NULL };
	struct run	 r;

	(void)state;
	run(&r, env, argv);
	assert_int_equal(family(&r, 1009), 1);
	assert_int_equal(answer(&r, "then.family.1008"), 0);
	assert_int_equal(answer(&r, "then.family.1007"), 1);
	assert_int_equal(answer(&r, "then.threadgroup_memory"), 32768);
	run(&r, racing, NULL);
	assert_int_equal(family(&r, 1009), 1);
	assert_int_equal(family(&r, 3003), 1);
	assert_int_equal(family(&r, 2001), 0);
	assert_int_equal(answer(&r, "threadgroup_memory"), 65536);
}

/* A Mac's own GPU is not raised, and the report says why. */
static void
test_bare_metal_untouched(void **state)
{
	const char	*host[] = { "MTLSIM_DEVICE=bare-metal", NULL };
	const char	*env[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    "MTLSIM_DEVICE=bare-metal", NULL };
	const char	*then_guest[] = { QUERY, "--then", "guest", NULL };
	struct run	 stock, r;
	char		 buf[256];

	(void)state;
	run(&stock, host, NULL);
	run(&r, env, NULL);
	assert_string_equal(r.result.out, stock.result.out);
	assert_int_equal(family(&r, 1007), 1);
	assert_int_equal(family(&r, 1009), 0);
	assert_string_equal(report_field(&r, "state", buf, sizeof buf),
	    "stock");
	assert_string_equal(report_field(&r, "class", buf, sizeof buf),
	    "AGXG13XDevice");
	assert_string_equal(report_field(&r, "reason", buf, sizeof buf),
	    "device class AGXG13XDevice is not the paravirtual GPU of a "
	    "guest: nothing to raise");
	assert_int_equal(report_lines(&r), 1);
	/* The Mac's GPU first, a guest's device after it: that one is
	 * raised, and the one line says so. */
	run(&r, env, then_guest);
	assert_int_equal(family(&r, 1009), 0);
	assert_int_equal(answer(&r, "then.family.1009"), 1);
	assert_string_equal(report_field(&r, "state", buf, sizeof buf),
	    "hooked");
	assert_int_equal(report_lines(&r), 1);
}

/* Does the child's `env` output have a line starting with prefix? */
static int
child_has(const struct run *r, const char *prefix)
{
	const char	*p;

	for (p = r->result.out; p != NULL; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			return 1;
	}
	return 0;
}

static void
test_inherit(void **state)
{
	const char	*scrub[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    "METALCAP_INHERIT=0", "LUME_METAL_MAX_THREADGROUP_MEMORY=65536",
	    NULL };
	const char	*keep[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    NULL };
	const char	*others[] = { "LD_PRELOAD=" SHIM " " SIM_LIB,
	    "METALCAP_APPLE_FAMILY_MAX=1009", "METALCAP_INHERIT=0", NULL };
	const char	*argv[] = { QUERY, "--exec", "/usr/bin/env", NULL };
	struct run	 r;

	(void)state;
	run(&r, scrub, argv);
	assert_int_equal(WEXITSTATUS(r.result.status), 0);
	assert_int_equal(family(&r, 1009), 1);	/* the workload is unlocked */
	assert_false(child_has(&r, "LD_PRELOAD="));
	assert_false(child_has(&r, "METALCAP_"));
	assert_false(child_has(&r, "LUME_METAL_"));
	assert_true(child_has(&r, "PATH="));
	/* Only the workload's own line: the child was not injected. */
	assert_int_equal(report_lines(&r), 1);

	run(&r, keep, argv);
	assert_true(child_has(&r, PRELOAD "\n") || child_has(&r, PRELOAD));
	assert_true(child_has(&r, "METALCAP_APPLE_FAMILY_MAX=1009"));
	assert_true(child_has(&r, "METALCAP_REPORT="));
	/* The child (env, no Metal) was injected too and said so. */
	assert_int_equal(report_lines(&r), 2);

	/* Other preloaded libraries stay in the list. */
	run(&r, others, argv);
	assert_true(child_has(&r, "LD_PRELOAD=" SIM_LIB "\n"));
}

static void
test_report_directory(void **state)
{
	char		 dir[] = "/tmp/mc-report-dir.XXXXXX", var[128];
	char		 path[192];
	const char	*env[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    var, NULL };
	struct run	 r;
	struct stat	 sb;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(var, sizeof var, "METALCAP_REPORT=%s", dir);
	run(&r, env, NULL);
	snprintf(path, sizeof path, "%s/metalcap.%ld.report", dir,
	    (long)r.result.pid);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(sb.st_size > 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	unlink(path);
	rmdir(dir);
}

/*
 * METALCAP_REPORT=via/name: nothing written through via when it is a link
 * (the workload unlocked all the same, as for a link at the last
 * component), the line written when it is the folder itself.  name is a
 * file, or a folder made for the run (its metalcap.<pid>.report).
 */
static bool
report_through(struct run *r, const char *via, const char *name,
    const char **env, char *var, size_t varlen)
{
	char		 real[128], written[192];
	struct stat	 sb;
	bool		 folder = strcmp(name, "sub") == 0, link;

	assert_int_equal(lstat(via, &sb), 0);
	link = S_ISLNK(sb.st_mode);
	assert_int_equal(stat(via, &sb), 0);
	snprintf(real, sizeof real, "%s/%s", via, name);
	if (folder)
		assert_int_equal(mkdir(real, 0700), 0);
	snprintf(var, varlen, "METALCAP_REPORT=%s", real);
	run(r, env, NULL);
	assert_int_equal(family(r, 1009), 1);
	if (folder)
		snprintf(written, sizeof written, "%s/metalcap.%ld.report",
		    real, (long)r->result.pid);
	else
		snprintf(written, sizeof written, "%s", real);
	if ((lstat(written, &sb) == 0) == link)
		return false;
	unlink(written);
	if (folder)
		rmdir(real);
	return true;
}

/*
 * A report path another user could plant in a shared folder: a FIFO must
 * not block the workload, and a link (to a file or to a folder), at the
 * last component or above it, must not be followed.  A path too long to
 * keep writes nothing rather than a shorter, other path.
 */
static void
test_report_planted(void **state)
{
	char		 dir[] = "/tmp/mc-report-plant.XXXXXX", var[256];
	char		 at[64], target[64], inside[128], longvar[1400];
	const char	*env[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    var, NULL };
	const char	*env_long[] = { PRELOAD,
	    "METALCAP_APPLE_FAMILY_MAX=1009", longvar, NULL };
	struct run	 r;
	struct stat	 sb;
	size_t		 n;
	FILE		*f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(at, sizeof at, "%s/report", dir);
	snprintf(target, sizeof target, "%s/target", dir);
	snprintf(var, sizeof var, "METALCAP_REPORT=%s", at);

	assert_int_equal(mkfifo(at, 0600), 0);
	run(&r, env, NULL);
	assert_false(r.result.overdue);
	assert_int_equal(family(&r, 1009), 1);
	unlink(at);

	assert_int_equal(symlink(target, at), 0);
	run(&r, env, NULL);
	assert_int_equal(family(&r, 1009), 1);
	assert_int_equal(lstat(target, &sb), -1);
	unlink(at);

	/* A hard link to a file of the user's (another name for it). */
	assert_non_null(f = fopen(target, "w"));
	fclose(f);
	assert_int_equal(link(target, at), 0);
	run(&r, env, NULL);
	assert_int_equal(stat(target, &sb), 0);
	assert_int_equal(sb.st_size, 0);
	unlink(at);
	unlink(target);

	/* Another user's file at the path (as root here: chown works). */
	if (geteuid() == 0) {
		assert_non_null(f = fopen(at, "w"));
		fclose(f);
		assert_int_equal(chown(at, 65534, 65534), 0);
		run(&r, env, NULL);
		assert_int_equal(stat(at, &sb), 0);
		assert_int_equal(sb.st_size, 0);
		unlink(at);
	}

	assert_int_equal(mkdir(target, 0700), 0);
	assert_int_equal(symlink(target, at), 0);
	run(&r, env, NULL);
	snprintf(inside, sizeof inside, "%s/metalcap.%ld.report", target,
	    (long)r.result.pid);
	assert_int_equal(lstat(inside, &sb), -1);

	/* The link above the last component: a file in it, a folder. */
	assert_true(report_through(&r, at, "r", env, var, sizeof var));
	assert_true(report_through(&r, target, "r", env, var, sizeof var));
	assert_true(report_through(&r, at, "sub", env, var, sizeof var));
	assert_true(report_through(&r, target, "sub", env, var, sizeof var));
	unlink(at);

	/* dir/target/././.../report: names the same file only when whole. */
	n = (size_t)snprintf(longvar, sizeof longvar, "METALCAP_REPORT=%s",
	    target);
	while (n < 1100)
		n += (size_t)snprintf(longvar + n, sizeof longvar - n, "/.");
	snprintf(longvar + n, sizeof longvar - n, "/r");
	run(&r, env_long, NULL);
	assert_int_equal(family(&r, 1009), 1);
	snprintf(inside, sizeof inside, "%s/r", target);
	assert_int_equal(lstat(inside, &sb), -1);
	rmdir(target);
	rmdir(dir);
}

/*
 * fake-llama injected, on a device switched to fail (NULL: none); its
 * report file's whole text in report, its exit status returned.
 */
static int
witnessed(const char *device, const char *report_dir, char *report,
    size_t len)
{
	const char		*argv[] = { MC_TEST_BUILD "/tests/fake-llama",
	    "--once", NULL };
	char			 var[160], path[256], *env[CHILD_ENV_MAX];
	const char		*extra[] = { PRELOAD,
	    "METALCAP_APPLE_FAMILY_MAX=1009", var, device, NULL };
	struct child_result	 r;
	size_t			 got = 0;
	FILE			*f;

	snprintf(var, sizeof var, "METALCAP_REPORT=%s", report_dir);
	child_env(env, extra);
	assert_int_equal(child_run(argv, env, &r), 0);
	snprintf(path, sizeof path, "%s/metalcap.%ld.report", report_dir,
	    (long)r.pid);
	report[0] = '\0';
	if ((f = fopen(path, "r")) != NULL) {
		got = fread(report, 1, len - 1, f);
		fclose(f);
		unlink(path);
	}
	report[got] = '\0';
	return r.status;
}

/*
 * The shim's witness: each Metal call of the workload that comes back
 * failed gives one line after the activation line, naming its kind and
 * call (and a command buffer's error code), whatever the workload prints; a healthy run, or a device that is
 * not the guest's (nothing hooked, nothing watched), gives none.
 */
static void
test_witness_lines(void **state)
{
	static const struct {
		const char	*device, *line;
	} cases[] = {
	    { "MTLSIM_FAIL=simdgroup_matrix:compile", "failed=function "
	      "call=newFunctionWithName:\n" },
	    { "MTLSIM_FAIL=simdgroup_matrix:pipeline", "failed=pipeline "
	      "call=newComputePipelineStateWithFunction:error:\n" },
	    { "MTLSIM_FAIL=simdgroup_matrix:error", "failed=command-buffer "
	      "code=1 call=status\n" },
	    /* The error's code, read from the buffer's own error. */
	    { "MTLSIM_FAIL=simdgroup_matrix:oom", "failed=command-buffer "
	      "code=8 call=status\n" },
	    { "MTLSIM_RESIDENCY=nil-error", "failed=residency-set "
	      "call=newResidencySetWithDescriptor:error:\n" },
	};
	char	 dir[64], report[4096], group[32];
	char	*w;
	size_t	 i;

	(void)state;
	/* The child's group is this one's: each line names it. */
	snprintf(group, sizeof group, " pgid=%ld ", (long)getpgrp());
	snprintf(dir, sizeof dir, "/tmp/mc-witness.XXXXXX");
	assert_non_null(mkdtemp(dir));
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		witnessed(cases[i].device, dir, report, sizeof report);
		w = strstr(report, "\nmetalcap witness pid=");
		if (w == NULL || strstr(w, cases[i].line) == NULL)
			fail_msg("%s: no witness %s in:\n%s", cases[i].device,
			    cases[i].line, report);
		/* One line for the kind, the last of the file. */
		assert_string_equal(strstr(w, " failed=") + 1, cases[i].line);
		assert_non_null(strstr(report, " state=hooked "));
		assert_non_null(strstr(w, group));
		assert_non_null(strstr(report, group));
	}
	/* No MTLSIM_RESIDENCY error: nil alone is no failure to ggml. */
	witnessed("MTLSIM_RESIDENCY=nil", dir, report, sizeof report);
	assert_null(strstr(report, "witness"));
	witnessed(NULL, dir, report, sizeof report);
	assert_non_null(strstr(report, " watched=newLibraryWithSource:options:"
	    "error:,newComputePipelineStateWithFunction:error:,newCommandQueue,"
	    "newResidencySetWithDescriptor:error: "));
	assert_null(strstr(report, "witness"));
	witnessed("MTLSIM_DEVICE=bare-metal", dir, report, sizeof report);
	assert_non_null(strstr(report, " watched=- "));
	assert_null(strstr(report, "witness"));
	rmdir(dir);
}

/*
 * One witness line per kind: an engine that keeps serving after a kernel
 * fails (the query tool dispatching it three times) fails the same call
 * each time, and its report grows by one line, not three; a command
 * buffer's are one per code.  Kills: a line for every failed call (a
 * server failing every request would fill the reports' disk).
 */
static void
test_witness_once_per_kind(void **state)
{
	static const char *const argv[] = { QUERY, "--dispatch",
	    "simdgroup_matrix", "probe_simd_mm", "3", NULL };
	static const struct {
		const char	*device, *line;
	} cases[] = {
	    { "MTLSIM_FAIL=simdgroup_matrix:compile", " failed=function " },
	    { "MTLSIM_FAIL=simdgroup_matrix:pipeline", " failed=pipeline " },
	    { "MTLSIM_FAIL=simdgroup_matrix:error", " failed=command-buffer "
	      "code=1 " },
	};
	const char	*extra[] = { PRELOAD, "METALCAP_APPLE_FAMILY_MAX=1009",
	    NULL, NULL };
	struct run	 r;
	const char	*p;
	size_t		 i;
	int		 n;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		extra[2] = cases[i].device;
		run(&r, extra, argv);
		assert_non_null(strstr(r.result.out, "dispatch="));
		for (n = 0, p = r.report; (p = strstr(p, cases[i].line)) !=
		    NULL; p++)
			n++;
		if (n != 1 || report_lines(&r) != 2)
			fail_msg("%s: %d witness lines of the kind, %d lines in "
			    "all:\n%s", cases[i].device, n, report_lines(&r),
			    r.report);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stock_without_shim),
		cmocka_unit_test(test_ceiling_1009),
		cmocka_unit_test(test_device_reporting_more_keeps_it),
		cmocka_unit_test(test_working_set_only_when_set),
		cmocka_unit_test(test_malformed_config_stays_stock),
		cmocka_unit_test(test_alias_and_precedence),
		cmocka_unit_test(test_eight_threads_hook_once),
		cmocka_unit_test(test_missing_pieces_hook_nothing),
		cmocka_unit_test(test_late_metal),
		cmocka_unit_test(test_inherited_method_hooked_alone),
		cmocka_unit_test(test_bare_metal_untouched),
		cmocka_unit_test(test_inherit),
		cmocka_unit_test(test_report_directory),
		cmocka_unit_test(test_report_planted),
		cmocka_unit_test(test_witness_lines),
		cmocka_unit_test(test_witness_once_per_kind),
	};

	return cmocka_run_group_tests_name("shim_inject", tests, NULL, NULL);
}
