/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the shim's configuration, as the environment of an injected
 * process gives it.  The input is NUL-separated NAME=VALUE pairs.  Fail
 * closed: either a configuration within the documented limits, or a
 * refusal with a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim_config.h"

struct fuzz_env {
	char	*names[16];
	char	*values[16];
	int	 count;
};

static const char *
fuzz_getenv(const char *name, void *ctx)
{
	struct fuzz_env	*e = ctx;
	int		 i;

	for (i = 0; i < e->count; i++)
		if (strcmp(e->names[i], name) == 0)
			return e->values[i];
	return NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_env		 env = { .count = 0 };
	struct shim_config	 config;
	char			*text = malloc(size + 1), *p, *end, *eq, why[256];
	uint64_t		 value;
	const char		*reason;

	memcpy(text, data, size);
	text[size] = '\0';
	end = text + size;
	for (p = text; p < end && env.count < 16; p += strlen(p) + 1) {
		if ((eq = strchr(p, '=')) == NULL)
			continue;
		*eq = '\0';
		env.names[env.count] = p;
		env.values[env.count++] = eq + 1;
		p = eq + 1;
	}
	why[0] = '\0';
	if (shim_config_load(&config, fuzz_getenv, &env, why,
	    sizeof why) == 0) {
		/* Only our name has the 1 MiB limit: the reference's has
		 * none, as in the reference. */
		if (config.family_max < SHIM_FAMILY_APPLE_MIN ||
		    config.family_max > SHIM_FAMILY_APPLE_LAST ||
		    (fuzz_getenv("METALCAP_MAX_THREADGROUP_MEMORY", &env) !=
		    NULL && config.threadgroup_memory > SHIM_TG_MEMORY_LIMIT))
			abort();
	} else if (why[0] == '\0')
		abort();	/* refused without a reason */
	(void)shim_config_parse_number(text, &value, &reason);
	free(text);
	return 0;
}
