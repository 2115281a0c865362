/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR check: the objc4 model is as strict as objc4, and no
 * stricter.  Linked with the model (hidden, as in the shim) and the
 * simulated Metal.
 *
 *   objc4-model-check list           every call of the model's table:
 *                                    name, lock, runtime, source
 *   objc4-model-check inside CALL    CALL from a load-image function
 *   objc4-model-check outside CALL   CALL from main
 *
 * objc4 would abort inside with "Trying to recursively lock an
 * os_unfair_lock" for a call that takes runtimeLock; so must the model.
 * Any other call, and every call outside, prints "ran CALL" and exits 0.
 */
#include <stdio.h>
#include <string.h>

#include "objc4-model.h"

static const char	*check_call;
static int		 check_ran;

static void
check_in_callback(const void *image)
{
	(void)image;
	check_ran += model_exercise(check_call);
}

static void
check_list(void)
{
	static const char *const where[] = {
		[MODEL_BOTH] = "both",
		[MODEL_APPLE_ONLY] = "apple-only",
		[MODEL_GNU_ONLY] = "gnu-only",
	};
	const struct model_call	*call;
	size_t			 i;

	for (i = 0; (call = model_call_at(i)) != NULL; i++)
		printf("%s\t%s\t%s\t%s\n", call->name,
		    model_lock_name(call->lock), where[call->where],
		    call->source);
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "list") == 0) {
		check_list();
		return 0;
	}
	if (argc != 3 || (strcmp(argv[1], "inside") != 0 &&
	    strcmp(argv[1], "outside") != 0)) {
		fprintf(stderr, "usage: objc4-model-check list | "
		    "inside|outside CALL\n");
		return 2;
	}
	check_call = argv[2];
	model_exercise_prepare();
	if (strcmp(argv[1], "inside") == 0)
		objc_addLoadImageFunc(check_in_callback);
	else
		check_ran = model_exercise(check_call);
	if (check_ran == 0) {
		fprintf(stderr, "objc4-model-check: %s was not made: not a "
		    "call of the table's\n", check_call);
		return 3;
	}
	printf("ran %s\n", check_call);
	return 0;
}
