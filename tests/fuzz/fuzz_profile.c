/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a profile file in profiles.d, read the way metalcapd reads
 * the folder (profile_load_all), and the same bytes as the managed
 * preferences (managed_load).  A bad file must become a profile carrying
 * its error, never a crash or a silently accepted value out of range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "mcd.h"

static struct mcd	d;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char	why[256];

	(void)argc;
	(void)argv;
	log_open(NULL, false);
	if (paths_init(&d.paths, fuzz_dir(), "fuzz", why, sizeof why) == -1 ||
	    paths_make_dirs(&d.paths, why, sizeof why) == -1)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct profile	*p;
	char			 path[64];

	fuzz_write_file(path, "profiles.d/mine.plist", data, size);
	profile_load_all(&d.profiles, d.paths.profiles);
	if ((p = profile_find(&d.profiles, "mine")) == NULL)
		abort();
	/* Accepted only within the documented ranges. */
	if (p->error[0] == '\0' && (p->family_max < 1001 ||
	    p->family_max > 1999 || p->threadgroup_memory > 1048576))
		abort();
	if (profile_find(&d.profiles, "stock")->family_max != 0)
		abort();
	unlink(path);
	fuzz_write_file(path, "managed/org.metalcap.plist", data, size);
	managed_load(&d.managed, &d.paths);
	(void)managed_forbids(&d.managed, &d.profiles, "apple9");
	(void)managed_default_profile(&d.managed);
	unlink(path);
	return 0;
}
