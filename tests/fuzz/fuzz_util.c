/* SPDX-License-Identifier: MIT */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"

static char	scratch[64];

static void
fuzz_remove_dir(void)
{
	char	cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz: could not remove %s\n", scratch);
}

/* One scratch folder per fuzzing process, removed at exit. */
const char *
fuzz_dir(void)
{
	if (scratch[0] == '\0') {
		snprintf(scratch, sizeof scratch, "/tmp/mc-fuzz.XXXXXX");
		if (mkdtemp(scratch) == NULL)
			abort();
		atexit(fuzz_remove_dir);
	}
	return scratch;
}

void
fuzz_write_file(char *path, const char *name, const uint8_t *data,
    size_t size)
{
	FILE	*f;

	snprintf(path, 64, "%s/%s", fuzz_dir(), name);
	if ((f = fopen(path, "wb")) == NULL)
		abort();
	if (size > 0 && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
}
