/* SPDX-License-Identifier: MIT */
/*
 * Unit tests: the shim's configuration parser, over tables of good and bad
 * values, with the exact reason given for each rejection; the report's
 * line and where it may be written.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shim_config.h"
#include "shim_env.h"
#include "shim_report.h"

#define FAMILY	"METALCAP_APPLE_FAMILY_MAX"
#define ALIAS	"LUME_METAL_APPLE_FAMILY_MAX"
#define TGMEM	"METALCAP_MAX_THREADGROUP_MEMORY"
#define WSET	"METALCAP_RECOMMENDED_WORKING_SET_SIZE"
#define INHERIT	"METALCAP_INHERIT"

/* A fake environment: NULL-terminated name, value pairs. */
static const char *
table_getenv(const char *name, void *ctx)
{
	const char *const *pairs = ctx;

	for (; pairs[0] != NULL; pairs += 2)
		if (strcmp(pairs[0], name) == 0)
			return pairs[1];
	return NULL;
}

static int
load(const char *const *pairs, struct shim_config *config, char *why)
{
	why[0] = '\0';
	return shim_config_load(config, table_getenv, (void *)pairs, why,
	    SHIM_REASON_LEN);
}

struct family_case {
	const char	*value;
	uint64_t	 expect;	/* 0: rejected */
	const char	*reason;
};

static void
test_family_values(void **state)
{
	static const struct family_case cases[] = {
		{ "", 0, FAMILY "=\"\": is empty" },
		{ "0", 0, FAMILY "=\"0\": is below the first Apple family 1001" },
		{ "1000", 0,
		    FAMILY "=\"1000\": is below the first Apple family 1001" },
		{ "1001", 1001, NULL },
		{ "1009", 1009, NULL },
		{ "1999", 1999, NULL },
		{ "2000", 0, FAMILY "=\"2000\": is above the limit 1999" },
		{ "0x3F1", 1009, NULL },
		{ "0x3f1", 1009, NULL },
		{ "0x", 0, FAMILY "=\"0x\": has no hexadecimal digits after 0x" },
		{ "1009abc", 0,
		    FAMILY "=\"1009abc\": has characters after the number" },
		{ "1009 ", 0,
		    FAMILY "=\"1009 \": has characters after the number" },
		{ " 1009", 0, FAMILY "=\" 1009\": must start with a digit "
		    "(no sign or blanks)" },
		{ "-1", 0, FAMILY "=\"-1\": must start with a digit "
		    "(no sign or blanks)" },
		{ "+1009", 0, FAMILY "=\"+1009\": must start with a digit "
		    "(no sign or blanks)" },
		{ "18446744073709551615", 0, FAMILY
		    "=\"18446744073709551615\": is above the limit 1999" },
		{ "18446744073709551616", 0, FAMILY
		    "=\"18446744073709551616\": is larger than 2^64-1" },
		{ "0x10000000000000000", 0, FAMILY
		    "=\"0x10000000000000000\": is larger than 2^64-1" },
		{ "10\n09", 0, FAMILY
		    "=\"10?09\": has characters after the number" },
	};
	struct shim_config	config;
	char			why[SHIM_REASON_LEN];
	size_t			i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *env[] = { FAMILY, cases[i].value, NULL };
		int rc = load(env, &config, why);

		print_message("value \"%s\" -> %s\n", cases[i].value,
		    rc == 0 ? "accepted" : why);
		if (cases[i].expect != 0) {
			assert_int_equal(rc, 0);
			assert_int_equal(config.family_max, cases[i].expect);
			assert_string_equal(config.family_source, FAMILY);
		} else {
			assert_int_equal(rc, -1);
			assert_string_equal(why, cases[i].reason);
		}
	}
}

static void
test_family_unset(void **state)
{
	const char		*env[] = { TGMEM, "65536", NULL };
	struct shim_config	 config;
	char			 why[SHIM_REASON_LEN];

	(void)state;
	assert_int_equal(load(env, &config, why), -1);
	assert_string_equal(why, FAMILY " is not set");
}

static void
test_alias_only(void **state)
{
	const char		*env[] = { ALIAS, "1007",
	    "LUME_METAL_MAX_THREADGROUP_MEMORY", "32768", NULL };
	struct shim_config	 config;
	char			 why[SHIM_REASON_LEN];

	(void)state;
	assert_int_equal(load(env, &config, why), 0);
	assert_int_equal(config.family_max, 1007);
	assert_string_equal(config.family_source, ALIAS);
	assert_int_equal(config.threadgroup_memory, 32768);
}

/*
 * The reference shim's names are read as the reference reads them: empty
 * is unset (the default), a leading 0 is octal, no limit but the
 * family's.  Our own names stay strict and decimal.
 */
static void
test_reference_rules(void **state)
{
	static const char *const octal[] = { ALIAS, "01761", NULL };
	static const char *const empty_family[] = { ALIAS, "", NULL };
	static const char *const empty_optional[] = { ALIAS, "1009",
	    "LUME_METAL_MAX_THREADGROUP_MEMORY", "",
	    "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE", "", NULL };
	static const char *const octal_memory[] = { ALIAS, "1009",
	    "LUME_METAL_MAX_THREADGROUP_MEMORY", "0200000", NULL };
	static const char *const big_memory[] = { ALIAS, "1009",
	    "LUME_METAL_MAX_THREADGROUP_MEMORY", "2097152", NULL };
	static const char *const big_ours[] = { FAMILY, "1009",
	    TGMEM, "2097152", NULL };
	static const char *const not_octal[] = { ALIAS, "1009",
	    "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE", "08", NULL };
	static const char *const ours_decimal[] = { FAMILY, "01009", NULL };
	static const char *const blank[] = { ALIAS, " 1009", NULL };
	struct shim_config	 c;
	char			 why[SHIM_REASON_LEN];
	uint64_t		 v;
	const char		*problem;

	(void)state;
	assert_int_equal(load(octal, &c, why), 0);
	assert_int_equal(c.family_max, 1009);
	assert_int_equal(load(empty_family, &c, why), -1);
	assert_string_equal(why, ALIAS "=\"\": is empty");
	assert_int_equal(load(empty_optional, &c, why), 0);
	assert_int_equal(c.threadgroup_memory, SHIM_DEFAULT_TG_MEMORY);
	assert_int_equal(c.working_set, 0);
	assert_int_equal(load(octal_memory, &c, why), 0);
	assert_int_equal(c.threadgroup_memory, 65536);
	assert_int_equal(load(big_memory, &c, why), 0);
	assert_int_equal(c.threadgroup_memory, 2097152);
	assert_int_equal(load(big_ours, &c, why), -1);
	assert_string_equal(why, TGMEM "=\"2097152\": is above the limit "
	    "1048576");
	assert_int_equal(load(not_octal, &c, why), -1);
	assert_string_equal(why, "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE="
	    "\"08\": has characters after the (octal) number");
	assert_int_equal(load(ours_decimal, &c, why), 0);
	assert_int_equal(c.family_max, 1009);
	assert_int_equal(load(blank, &c, why), -1);
	assert_string_equal(why, ALIAS "=\" 1009\": must start with a digit "
	    "(no sign or blanks)");
	assert_int_equal(shim_config_parse_reference("0", &v, &problem), 0);
	assert_int_equal(v, 0);
	assert_int_equal(shim_config_parse_reference("0x10", &v, &problem), 0);
	assert_int_equal(v, 16);
	assert_int_equal(shim_config_parse_reference(
	    "02000000000000000000000", &v, &problem), -1);
	assert_string_equal(problem, "is larger than 2^64-1");
}

static void
test_both_names_ours_win(void **state)
{
	const char		*good[] = { FAMILY, "1009", ALIAS, "1007",
	    NULL };
	const char		*ours_bad[] = { FAMILY, "abc", ALIAS, "1007",
	    NULL };
	const char		*alias_bad[] = { FAMILY, "1009", ALIAS, "abc",
	    NULL };
	struct shim_config	 config;
	char			 why[SHIM_REASON_LEN];

	(void)state;
	assert_int_equal(load(good, &config, why), 0);
	assert_int_equal(config.family_max, 1009);
	assert_string_equal(config.family_source, FAMILY);

	assert_int_equal(load(ours_bad, &config, why), -1);
	assert_string_equal(why, FAMILY "=\"abc\": must start with a digit "
	    "(no sign or blanks)");

	assert_int_equal(load(alias_bad, &config, why), 0);
	assert_int_equal(config.family_max, 1009);
}

static void
test_threadgroup_memory(void **state)
{
	const char		*unset[] = { FAMILY, "1009", NULL };
	const char		*zero[] = { FAMILY, "1009", TGMEM, "0", NULL };
	const char		*big[] = { FAMILY, "1009", TGMEM, "131072",
	    NULL };
	const char		*huge[] = { FAMILY, "1009", TGMEM, "2097152",
	    NULL };
	const char		*suffix[] = { FAMILY, "1009", TGMEM, "64k",
	    NULL };
	struct shim_config	 config;
	char			 why[SHIM_REASON_LEN];

	(void)state;
	assert_int_equal(load(unset, &config, why), 0);
	assert_int_equal(config.threadgroup_memory, 65536);
	assert_int_equal(load(zero, &config, why), 0);
	assert_int_equal(config.threadgroup_memory, 0);
	assert_int_equal(load(big, &config, why), 0);
	assert_int_equal(config.threadgroup_memory, 131072);
	assert_int_equal(load(huge, &config, why), -1);
	assert_string_equal(why, TGMEM "=\"2097152\": is above the limit "
	    "1048576");
	assert_int_equal(load(suffix, &config, why), -1);
	assert_string_equal(why, TGMEM "=\"64k\": has characters after the "
	    "number");
}

static void
test_working_set(void **state)
{
	const char		*unset[] = { FAMILY, "1009", NULL };
	const char		*hex[] = { FAMILY, "1009", WSET, "0x400000000",
	    NULL };
	const char		*neg[] = { FAMILY, "1009", WSET, "-5", NULL };
	struct shim_config	 config;
	char			 why[SHIM_REASON_LEN];

	(void)state;
	assert_int_equal(load(unset, &config, why), 0);
	assert_int_equal(config.working_set, 0);
	assert_int_equal(load(hex, &config, why), 0);
	assert_int_equal(config.working_set, 17179869184ULL);
	assert_int_equal(load(neg, &config, why), -1);
	assert_string_equal(why, WSET "=\"-5\": must start with a digit "
	    "(no sign or blanks)");
}

static void
test_inherit(void **state)
{
	const char		*unset[] = { FAMILY, "1009", NULL };
	const char		*off[] = { FAMILY, "1009", INHERIT, "0", NULL };
	const char		*on[] = { FAMILY, "1009", INHERIT, "1", NULL };
	const char		*bad[] = { FAMILY, "1009", INHERIT, "no", NULL };
	const char		*off_bad_family[] = { FAMILY, "x", INHERIT, "0",
	    NULL };
	struct shim_config	 config;
	char			 why[SHIM_REASON_LEN];

	(void)state;
	assert_int_equal(load(unset, &config, why), 0);
	assert_true(config.inherit);
	assert_int_equal(load(off, &config, why), 0);
	assert_false(config.inherit);
	assert_int_equal(load(on, &config, why), 0);
	assert_true(config.inherit);
	assert_int_equal(load(bad, &config, why), -1);
	assert_string_equal(why, INHERIT "=\"no\": must be 0 or 1");
	assert_true(config.inherit);
	/* A bad ceiling still honours the request not to inherit. */
	assert_int_equal(load(off_bad_family, &config, why), -1);
	assert_false(config.inherit);
}

static void
test_long_value_is_shortened(void **state)
{
	const char		*env[] = { FAMILY,
	    "1009xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	    NULL };
	struct shim_config	 config;
	char			 why[SHIM_REASON_LEN];

	(void)state;
	assert_int_equal(load(env, &config, why), -1);
	assert_string_equal(why, FAMILY "=\"1009xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xx...\": has characters after the number");
}

/*
 * The injection list without this library, split as each loader splits
 * it: a path with a blank (~/Library/Application Support/...) is one
 * entry for dyld, and must come out whole; glibc splits on blanks.
 */
static void
test_env_without_self(void **state)
{
	const char	*self = "/Users/ml/Library/Application Support/metalcap/"
	    "libmetalcap.dylib";
	char		 list[512], kept[512];

	(void)state;
	snprintf(list, sizeof list, "/opt/a b/first.dylib:%s:/opt/last.dylib",
	    self);
	assert_int_equal(shim_env_without(list, SHIM_ENV_DYLD_SEPS, self, NULL,
	    kept), strlen("/opt/a b/first.dylib:/opt/last.dylib"));
	assert_string_equal(kept, "/opt/a b/first.dylib:/opt/last.dylib");
	snprintf(list, sizeof list, "%s", self);
	assert_int_equal(shim_env_without(list, SHIM_ENV_DYLD_SEPS, self, NULL,
	    kept), 0);
	/* glibc: blanks separate, so a blank in a path cannot be preloaded. */
	assert_int_equal(shim_env_without("/lib/x.so /usr/lib/self.so:/y.so",
	    SHIM_ENV_GLIBC_SEPS, "/usr/lib/self.so", NULL, kept), 15);
	assert_string_equal(kept, "/lib/x.so:/y.so");
}

/*
 * A report line longer than its buffer is cut and stays one line: its
 * last byte is the newline, so the next process's line starts on its own
 * (the daemon reads the file a line at a time).  Kills: a cut line whose
 * newline is left out of what is written.
 */
static void
test_report_cut_stays_a_line(void **state)
{
	char			reason[600], line[128];
	struct shim_report	r = { .state = "stock", .reason = reason };
	size_t			n;

	(void)state;
	memset(reason, 'x', sizeof reason - 1);
	reason[sizeof reason - 1] = '\0';
	n = shim_report_format(&r, 4242, 4242, line, sizeof line);
	assert_int_equal(n, sizeof line - 1);
	assert_int_equal(line[n - 1], '\n');
	assert_null(memchr(line, '\n', n - 1));
	assert_memory_equal(line, "metalcap pid=4242 ", 18);
	r.reason = "short";
	n = shim_report_format(&r, 4242, 4242, line, sizeof line);
	assert_int_equal(line[n - 1], '\n');
	assert_int_equal(n, strlen(line));
}

/* Write a line to path (relative to base when not absolute). */
static void
report_at(const char *base, const char *path)
{
	char	full[512];

	if (path[0] == '/')
		snprintf(full, sizeof full, "%s", path);
	else
		snprintf(full, sizeof full, "%s/%s", base, path);
	shim_report_write(full, "line\n", 5, 42);
}

static int
exists(const char *base, const char *path)
{
	char		full[512];
	struct stat	sb;

	snprintf(full, sizeof full, "%s/%s", base, path);
	return lstat(full, &sb) == 0;
}

/*
 * No link at any component of the report's path, not only the last
 * (O_NOFOLLOW_ANY on macOS, the shim's own walk here): through a link to
 * a folder, neither a file nor a folder's metalcap.<pid>.report is
 * written; the same paths through the folder itself are, with "..",
 * "." and a trailing slash.  Kills: the walk of before (O_NOFOLLOW at the
 * last component alone) and a walk that follows a link.
 */
static void
test_report_no_link_above(void **state)
{
	char	base[] = "/tmp/mc-report-walk.XXXXXX", path[512], at[512];
	int	cwd;

	(void)state;
	assert_non_null(mkdtemp(base));
	snprintf(path, sizeof path, "%s/real", base);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/real/sub", base);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/real", base);
	snprintf(at, sizeof at, "%s/link", base);
	assert_int_equal(symlink(path, at), 0);
	snprintf(at, sizeof at, "%s/up", base);
	assert_int_equal(symlink(base, at), 0);

	report_at(base, "link/f");
	report_at(base, "link/sub");
	report_at(base, "link/sub/");
	report_at(base, "up/real/g");
	report_at(base, "real/../link/h");
	assert_false(exists(base, "real/f"));
	assert_false(exists(base, "real/sub/metalcap.42.report"));
	assert_false(exists(base, "real/g"));
	assert_false(exists(base, "real/h"));

	report_at(base, "real/./sub/");
	assert_true(exists(base, "real/sub/metalcap.42.report"));
	report_at(base, "real/../real/f");
	assert_true(exists(base, "real/f"));

	/* Relative to the working folder: the first component is checked. */
	assert_int_not_equal(cwd = open(".", O_RDONLY | O_DIRECTORY), -1);
	assert_int_equal(chdir(base), 0);
	shim_report_write("link/i", "line\n", 5, 42);
	shim_report_write("real/j", "line\n", 5, 42);
	shim_report_write("k", "line\n", 5, 42);
	assert_int_equal(fchdir(cwd), 0);
	close(cwd);
	assert_false(exists(base, "real/i"));
	assert_true(exists(base, "real/j"));
	assert_true(exists(base, "k"));

	snprintf(path, sizeof path, "rm -rf '%s'", base);
	assert_int_equal(system(path), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_values),
		cmocka_unit_test(test_family_unset),
		cmocka_unit_test(test_alias_only),
		cmocka_unit_test(test_reference_rules),
		cmocka_unit_test(test_both_names_ours_win),
		cmocka_unit_test(test_threadgroup_memory),
		cmocka_unit_test(test_working_set),
		cmocka_unit_test(test_inherit),
		cmocka_unit_test(test_long_value_is_shortened),
		cmocka_unit_test(test_env_without_self),
		cmocka_unit_test(test_report_cut_stays_a_line),
		cmocka_unit_test(test_report_no_link_above),
	};

	return cmocka_run_group_tests_name("shim_config", tests, NULL, NULL);
}
