/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR check: the objc4 model is as strict as objc4.  Linked with the
 * model and the simulated Metal; registers a load-image function, as a
 * late-loading shim might, that does what the shim's constructor does.
 * objc4 would abort it ("Trying to recursively lock an os_unfair_lock");
 * so must the model.  With "outside", the same calls made outside any
 * callback succeed.
 *
 *   objc4-model-check inside|outside
 */
#include <objc/runtime.h>
#include <stdio.h>
#include <string.h>

void	objc_addLoadImageFunc(void (*)(const void *));

static void
look_up(const void *image)
{
	(void)image;
	printf("class=%s\n", objc_getClass("_MTLDevice") ? "found" : "none");
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: objc4-model-check inside|outside\n");
		return 2;
	}
	if (strcmp(argv[1], "inside") == 0)
		objc_addLoadImageFunc(look_up);
	else
		look_up(NULL);
	return 0;
}
