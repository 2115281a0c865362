/* SPDX-License-Identifier: MIT */
/*
 * A fault for tests, preloaded into metalcapctl: a SIGINT from a process
 * arrives at the very moment metalcapctl starts its workload, before it
 * can know the workload's pid (kill(2) of itself inside posix_spawn, when
 * the program's path ends with $MC_SPAWN_SIGNAL_AT).  The answer held
 * back on purpose: metalcapctl must block the signal across the spawn and
 * pass it on once the pid is known, or the program never gets it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*spawn_fn)(pid_t *, const char *,
    const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
    char *const [], char *const []);

int
posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	static spawn_fn	 real;
	const char	*at = getenv("MC_SPAWN_SIGNAL_AT");
	size_t		 n = at != NULL ? strlen(at) : 0, len = strlen(path);

	if (real == NULL)
		real = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawn");
	if (n > 0 && len >= n && strcmp(path + len - n, at) == 0)
		kill(getpid(), SIGINT);
	return real(pid, path, fa, attr, argv, envp);
}
