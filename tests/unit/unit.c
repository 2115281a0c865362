/* SPDX-License-Identifier: MIT */
/*
 * What the daemon's unit tests share: a scratch folder for each test that
 * writes files, a writer, and the start of main.
 */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mcd.h"
#include "unit.h"

char	tmpdir[64];

int
setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/mc-unit.XXXXXX");
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

int
teardown(void **state)
{
	char	cmd[128];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

const char *
write_file(const char *name, const char *body)
{
	static char	path[256];
	FILE		*f;

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(body, f);
	fclose(f);
	return path;
}

/* Quiet daemon logging; MC_TEST_ONLY=pattern runs the matching tests
 * (make mutate). */
void
unit_start(void)
{
	log_open(NULL, false);
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
}
