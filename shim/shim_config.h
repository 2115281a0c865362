/* SPDX-License-Identifier: MIT */
/*
 * Strict, fail-closed parsing of the shim's environment configuration.
 * Pure code: no Objective-C, no I/O, so it is unit tested on its own.
 */
#ifndef SHIM_CONFIG_H
#define SHIM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHIM_FAMILY_APPLE_MIN		1001
#define SHIM_FAMILY_APPLE_LAST		1999
#define SHIM_DEFAULT_TG_MEMORY		65536
/* No Apple GPU lists more than 32 KB; a value past 1 MiB is a typo. */
#define SHIM_TG_MEMORY_LIMIT		(1024 * 1024)

#define SHIM_REASON_LEN			256

struct shim_config {
	uint64_t	 family_max;		/* 1001..1999 */
	uint64_t	 threadgroup_memory;	/* 0: leave the device's answer */
	uint64_t	 working_set;		/* 0: leave the device's answer */
	bool		 inherit;		/* false: scrub env after load */
	const char	*family_source;		/* variable the ceiling came from */
};

/* Looks up one environment variable; NULL when unset. */
typedef const char *(*shim_config_getenv_fn)(const char *name, void *ctx);

int	shim_config_parse_number(const char *text, uint64_t *value,
	    const char **why);
int	shim_config_parse_reference(const char *text, uint64_t *value,
	    const char **why);
int	shim_config_load(struct shim_config *config,
	    shim_config_getenv_fn getenv_fn, void *ctx, char *why,
	    size_t whylen);

#endif
