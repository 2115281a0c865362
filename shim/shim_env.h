/* SPDX-License-Identifier: MIT */
/*
 * Removing the injection from the environment so children are not injected.
 */
#ifndef SHIM_ENV_H
#define SHIM_ENV_H

#include <stddef.h>

#include "../common/mc_os.h"

/* How each loader splits its list, and which one this is (mc_os.h). */
#define SHIM_ENV_DYLD_SEPS	MC_OS_DYLD_SEPS
#define SHIM_ENV_GLIBC_SEPS	MC_OS_GLIBC_SEPS
#define SHIM_ENV_INJECT_VAR	MC_OS_INJECT_VAR
#define SHIM_ENV_INJECT_SEPS	MC_OS_INJECT_SEPS

void	shim_env_scrub(const char *self_path);
size_t	shim_env_without(const char *list, const char *seps,
	    const char *self, const char *self_real, char *kept);

#endif
