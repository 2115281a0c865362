/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: the objc4 model's parts (tests/sim/README.md, "the objc4
 * model").  objc4-model.c holds runtimeLock's mark and the load-image
 * functions; objc4-model-calls.c the table of runtime calls, each with
 * the lock objc4 takes in it, and the wrappers of those that take
 * runtimeLock; objc4-model-exercise.c makes each call, for the checks.
 */
#ifndef OBJC4_MODEL_H
#define OBJC4_MODEL_H

#include <stdbool.h>
#include <stddef.h>

/* What objc4-951 locks in a call (objc-locks.h names every lock). */
enum model_lock {
	MODEL_LOCK_NONE,	/* no lock */
	MODEL_LOCK_SEL,		/* selLock: never held when a load-image
				 * function runs, and after runtimeLock in
				 * objc4's lock order (objc-os.mm:785,
				 * 787): allowed there */
	MODEL_LOCK_RUNTIME,	/* runtimeLock, on every call */
	MODEL_LOCK_RUNTIME_SOME,/* runtimeLock in some cases: the model
				 * takes it on every call (the strict side) */
};

/* Which runtime has the call as a function the model can wrap or call. */
enum model_where {
	MODEL_BOTH,
	MODEL_APPLE_ONLY,	/* objc4 alone: listed, not wrapped */
	MODEL_GNU_ONLY,		/* the GNU runtime's form of an objc4 call */
};

struct model_call {
	const char		*name;
	enum model_lock		 lock;
	enum model_where	 where;
	const char		*source;	/* objc4-951 file:line, why */
};

/* The table, NULL past its end; a call by name, or NULL. */
const struct model_call	*model_call_at(size_t i);
const struct model_call	*model_call_find(const char *name);
const char		*model_lock_name(enum model_lock lock);

/* objc4's (objc-os.mm:283), which the model plays. */
void	objc_addLoadImageFunc(void (*func)(const void *image));

/* A call that takes runtimeLock in objc4: aborts if this thread holds it. */
void	model_runtime_call(const char *name);
/* The GNU runtime's function of that name (dlsym RTLD_NEXT), or abort. */
void	*model_next(const char *name);

/* objc4-model-exercise.c: make the call name, as a shim might. */
void	model_exercise_prepare(void);
bool	model_exercise(const char *name);

#endif
