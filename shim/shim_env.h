/* SPDX-License-Identifier: MIT */
/*
 * Removing the injection from the environment so children are not injected.
 */
#ifndef SHIM_ENV_H
#define SHIM_ENV_H

#ifdef __APPLE__
#define SHIM_ENV_INJECT_VAR	"DYLD_INSERT_LIBRARIES"
#else
#define SHIM_ENV_INJECT_VAR	"LD_PRELOAD"
#endif

void	shim_env_scrub(const char *self_path);

#endif
