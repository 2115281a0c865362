/* SPDX-License-Identifier: MIT */
/*
 * Test support: spawn, capture, and read key=value output.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"

extern char **environ;

/* Sanitizer settings must reach the children for check-asan to mean it. */
void
child_env(char **env, const char *const *extra)
{
	static const char *const pass[] = { "ASAN_OPTIONS=", "UBSAN_OPTIONS=",
	    "LSAN_OPTIONS=", "METALCAPD_DEBUG=" };
	size_t	n = 0, i;
	char	**e;

	env[n++] = "PATH=/usr/local/bin:/usr/bin:/bin";
	for (e = environ; *e != NULL; e++)
		for (i = 0; i < sizeof pass / sizeof pass[0]; i++)
			if (strncmp(*e, pass[i], strlen(pass[i])) == 0 &&
			    n < CHILD_ENV_MAX - 1)
				env[n++] = *e;
	for (i = 0; extra != NULL && extra[i] != NULL &&
	    n < CHILD_ENV_MAX - 1; i++)
		env[n++] = (char *)extra[i];
	env[n] = NULL;
}

/* Read what is there; closes the pipe and sets *fd to -1 at its end. */
static void
child_drain(int *fd, char *buf, size_t *len)
{
	char	discard[4096];
	ssize_t	r;

	if (*len < CHILD_OUTPUT_MAX - 1)
		r = read(*fd, buf + *len, CHILD_OUTPUT_MAX - 1 - *len);
	else
		r = read(*fd, discard, sizeof discard);
	if (r > 0 && *len < CHILD_OUTPUT_MAX - 1)
		*len += (size_t)r;
	else if (r == 0 || (r == -1 && errno != EINTR)) {
		close(*fd);
		*fd = -1;
	}
	buf[*len] = '\0';
}

/* Milliseconds left of the child's deadline, 0 when it has passed. */
static int
child_left_ms(const struct timespec *start)
{
	struct timespec	now;
	long long	spent;

	clock_gettime(CLOCK_MONOTONIC, &now);
	spent = (long long)(now.tv_sec - start->tv_sec) * 1000 +
	    (now.tv_nsec - start->tv_nsec) / 1000000;
	return spent >= CHILD_DEADLINE_MS ? 0 : (int)(CHILD_DEADLINE_MS - spent);
}

/*
 * A child that hangs fails its test, named, instead of hanging the suite:
 * it is killed, and its pipes are closed (a grandchild may hold them).
 */
static void
child_overdue(struct child_result *result, const char *program, int *out,
    int *err)
{
	fprintf(stderr, "child: %s ran past its %d ms deadline: killed\n",
	    program, CHILD_DEADLINE_MS);
	result->overdue = 1;
	kill(result->pid, SIGKILL);
	if (out[0] != -1)
		close(out[0]);
	if (err[0] != -1)
		close(err[0]);
	out[0] = err[0] = -1;
}

/* Run argv with env; returns 0 and fills result, or -1 if it cannot run. */
int
child_run(const char *const *argv, char *const *env,
    struct child_result *result)
{
	posix_spawn_file_actions_t	 actions;
	int				 out[2], err[2], rc;
	size_t				 outlen = 0, errlen = 0;
	struct pollfd			 pfd[2];
	struct timespec			 start;
	int				 left;

	memset(result, 0, sizeof *result);
	if (pipe2(out, O_CLOEXEC) == -1)
		return -1;
	if (pipe2(err, O_CLOEXEC) == -1) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, out[1], 1);
	posix_spawn_file_actions_adddup2(&actions, err[1], 2);
	posix_spawn_file_actions_addclose(&actions, out[0]);
	posix_spawn_file_actions_addclose(&actions, err[0]);
	rc = posix_spawn(&result->pid, argv[0], &actions, NULL,
	    (char *const *)argv, env);
	posix_spawn_file_actions_destroy(&actions);
	close(out[1]);
	close(err[1]);
	if (rc != 0) {
		close(out[0]);
		close(err[0]);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (out[0] != -1 || err[0] != -1) {
		pfd[0] = (struct pollfd){ .fd = out[0], .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = err[0], .events = POLLIN };
		if ((left = child_left_ms(&start)) == 0) {
			child_overdue(result, argv[0], out, err);
			break;
		}
		if (poll(pfd, 2, left) == -1 && errno != EINTR)
			break;
		if (pfd[0].revents != 0)
			child_drain(&out[0], result->out, &outlen);
		if (pfd[1].revents != 0)
			child_drain(&err[0], result->err, &errlen);
	}
	while (waitpid(result->pid, &result->status, 0) == -1 &&
	    errno == EINTR)
		;
	return 0;
}

/* The value of "key=value" on its own line of text, or NULL. */
const char *
child_value(const char *text, const char *key, char *buf, size_t buflen)
{
	size_t		 klen = strlen(key), vlen;
	const char	*p;

	for (p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) != 0 || p[klen] != '=')
			continue;
		p += klen + 1;
		vlen = strcspn(p, "\n");
		if (vlen >= buflen)
			vlen = buflen - 1;
		memcpy(buf, p, vlen);
		buf[vlen] = '\0';
		return buf;
	}
	return NULL;
}
