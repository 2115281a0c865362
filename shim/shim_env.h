/* SPDX-License-Identifier: MIT */
/*
 * Removing the injection from the environment so children are not injected.
 */
#ifndef SHIM_ENV_H
#define SHIM_ENV_H

#include <stddef.h>

/* How each loader splits its list: dyld on colons only, glibc on blanks too. */
#define SHIM_ENV_DYLD_SEPS	":"
#define SHIM_ENV_GLIBC_SEPS	": \t"

#ifdef __APPLE__
#define SHIM_ENV_INJECT_VAR	"DYLD_INSERT_LIBRARIES"
#define SHIM_ENV_INJECT_SEPS	SHIM_ENV_DYLD_SEPS
#else
#define SHIM_ENV_INJECT_VAR	"LD_PRELOAD"
#define SHIM_ENV_INJECT_SEPS	SHIM_ENV_GLIBC_SEPS
#endif

void	shim_env_scrub(const char *self_path);
size_t	shim_env_without(const char *list, const char *seps,
	    const char *self, const char *self_real, char *kept);

#endif
