/* SPDX-License-Identifier: MIT */
/*
 * Test support: run a program with an exact environment and capture its
 * output, without touching the test process's own environment.
 */
#ifndef CHILD_H
#define CHILD_H

#include <stddef.h>
#include <sys/types.h>

#define CHILD_OUTPUT_MAX	65536
#define CHILD_ENV_MAX		64
/* No test child runs this long unless it hangs (the probe's own default
 * deadline is the longest wait a child makes). */
#define CHILD_DEADLINE_MS	180000

struct child_result {
	int	status;			/* as from waitpid */
	pid_t	pid;
	int	overdue;		/* killed at CHILD_DEADLINE_MS */
	char	out[CHILD_OUTPUT_MAX];
	char	err[CHILD_OUTPUT_MAX];
};

/* A minimal environment: PATH, sanitizer options, then extra (NULL-ended). */
void		child_env(char **env, const char *const *extra);
int		child_run(const char *const *argv, char *const *env,
		    struct child_result *result);
const char	*child_value(const char *text, const char *key, char *buf,
		    size_t buflen);

#endif
