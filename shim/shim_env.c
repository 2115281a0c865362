/* SPDX-License-Identifier: MIT */
/*
 * METALCAP_INHERIT=0: after loading, take this library out of the injection
 * variable (other injected libraries stay) and drop every METALCAP_* and
 * LUME_METAL_* variable, so shells, tee and helpers started by the workload
 * run stock.  Runs from the constructor, before the workload has threads.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "shim_env.h"

extern char **environ;

static bool	shim_env_is_self(const char *, size_t, const char *,
		    const char *);
static void	shim_env_drop_self(const char *);
static char	*shim_env_next_prefixed(void);
static void	shim_env_drop_prefixed(void);

/* True when the list entry names this library, as given or resolved. */
static bool
shim_env_is_self(const char *entry, size_t len, const char *self,
    const char *self_real)
{
	char	path[PATH_MAX], real[PATH_MAX];

	if (len == 0 || len >= sizeof path)
		return false;
	memcpy(path, entry, len);
	path[len] = '\0';
	if (strcmp(path, self) == 0)
		return true;
	return self_real != NULL && realpath(path, real) != NULL &&
	    strcmp(real, self_real) == 0;
}

/*
 * list without the entries that name self, joined by ':' into kept (room
 * for strlen(list) + 1).  The loader's own separators split the list:
 * dyld splits DYLD_INSERT_LIBRARIES on ':' only, so a path may hold a
 * blank ("~/Library/Application Support/..."); glibc splits LD_PRELOAD on
 * ':' and blanks.
 */
size_t
shim_env_without(const char *list, const char *seps, const char *self,
    const char *self_real, char *kept)
{
	const char	*p, *end;
	size_t		 len, n = 0;

	for (p = list; *p != '\0'; p = end) {
		len = strcspn(p, seps);
		end = p + len + (p[len] != '\0');
		if (len == 0 || shim_env_is_self(p, len, self, self_real))
			continue;
		if (n > 0)
			kept[n++] = ':';
		memcpy(kept + n, p, len);
		n += len;
	}
	kept[n] = '\0';
	return n;
}

static void
shim_env_drop_self(const char *self)
{
	const char	*list;
	char		*kept, self_real[PATH_MAX];

	list = getenv(SHIM_ENV_INJECT_VAR);
	if (list == NULL)
		return;
	kept = malloc(strlen(list) + 1);
	if (kept == NULL)
		return;
	if (realpath(self, self_real) == NULL)
		self_real[0] = '\0';
	if (shim_env_without(list, SHIM_ENV_INJECT_SEPS, self,
	    self_real[0] ? self_real : NULL, kept) == 0)
		unsetenv(SHIM_ENV_INJECT_VAR);
	else
		setenv(SHIM_ENV_INJECT_VAR, kept, 1);
	free(kept);
}

/* Returns a copy of the name of the first shim variable, or NULL. */
static char *
shim_env_next_prefixed(void)
{
	static const char *const prefixes[] = { "METALCAP_", "LUME_METAL_" };
	char			**e;
	size_t			 i;

	for (e = environ; *e != NULL; e++) {
		for (i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
			if (strncmp(*e, prefixes[i], strlen(prefixes[i])) == 0)
				return strndup(*e, strcspn(*e, "="));
		}
	}
	return NULL;
}

/* Rescan after each removal: unsetenv while walking environ skips entries. */
static void
shim_env_drop_prefixed(void)
{
	char	*name;

	while ((name = shim_env_next_prefixed()) != NULL) {
		unsetenv(name);
		free(name);
	}
}

void
shim_env_scrub(const char *self_path)
{
	if (self_path != NULL)
		shim_env_drop_self(self_path);
	shim_env_drop_prefixed();
}
