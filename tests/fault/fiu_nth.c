/* SPDX-License-Identifier: MIT */
/*
 * FAULT INJECTION, counter-driven, with libfiu (Debian's libfiu-dev): in
 * metalcapd only, with MC_FIU="N HOME [kill]", its open, write, rename,
 * fsync and mkdir of a path under HOME (the test's: state, reports,
 * agents, logs) are libfiu failure points "metalcap/io/CALL", and the Nth
 * of them (from 1; 0: none) fails with EIO, as SQLite's I/O error tests
 * fail the Nth call of a run; with "kill", metalcapd is killed with
 * SIGKILL instead, before that call, as SQLite's crash tests stop a
 * writer at each step (every state change is one of these calls).  At
 * exit the calls seen go to HOME/fiu-count, so a sweep knows how far to
 * go.  libfiu's own POSIX preload cannot be used:
 * it fails libuv's internal writes too, on which libuv aborts, and its
 * callbacks do not see the path.  tests/fault/test_fiu_sweep.c drives it.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fiu.h>
#include <fiu-control.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const	fiu_nth_points[] = { "metalcap/io/open",
    "metalcap/io/write", "metalcap/io/rename", "metalcap/io/fsync",
    "metalcap/io/mkdir" };

static atomic_long	fiu_nth_calls;
static long		fiu_nth_at;
static bool		fiu_nth_on, fiu_nth_kill;
static char		fiu_nth_count[PATH_MAX + 16], fiu_nth_under[PATH_MAX];

static int
fiu_nth_cb(const char *name, int *failnum, void **failinfo,
    unsigned int *flags)
{
	(void)name;
	(void)failnum;
	(void)failinfo;
	(void)flags;
	if (atomic_fetch_add(&fiu_nth_calls, 1) + 1 != fiu_nth_at)
		return 0;
	if (fiu_nth_kill)
		kill(getpid(), SIGKILL);
	return 1;
}

static bool
fiu_nth_path(const char *path)
{
	return fiu_nth_on && path != NULL && strncmp(path, fiu_nth_under,
	    strlen(fiu_nth_under)) == 0;
}

static bool
fiu_nth_fd(int fd)
{
	char	link[64], path[PATH_MAX];
	ssize_t	n;

	if (!fiu_nth_on)
		return false;
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof path - 1)) <= 0)
		return false;
	path[n] = '\0';
	return fiu_nth_path(path);
}

/* Does this call fail?  errno is EIO when it does. */
static bool
fiu_nth_fails(bool ours, const char *point)
{
	if (!ours || !fiu_fail(point))
		return false;
	errno = EIO;
	return true;
}

static void *
fiu_nth_real(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

int
open(const char *path, int flags, ...)
{
	static int	(*real)(const char *, int, ...);
	mode_t		mode = 0;
	va_list		ap;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (fiu_nth_fails(fiu_nth_path(path), "metalcap/io/open"))
		return -1;
	if (real == NULL)
		real = (int (*)(const char *, int, ...))fiu_nth_real("open");
	return real(path, flags, mode);
}

ssize_t
write(int fd, const void *buf, size_t len)
{
	static ssize_t	(*real)(int, const void *, size_t);

	if (fiu_nth_fails(fiu_nth_fd(fd), "metalcap/io/write"))
		return -1;
	if (real == NULL)
		real = (ssize_t (*)(int, const void *, size_t))
		    fiu_nth_real("write");
	return real(fd, buf, len);
}

int
rename(const char *from, const char *to)
{
	static int	(*real)(const char *, const char *);

	if (fiu_nth_fails(fiu_nth_path(to), "metalcap/io/rename"))
		return -1;
	if (real == NULL)
		real = (int (*)(const char *, const char *))
		    fiu_nth_real("rename");
	return real(from, to);
}

int
fsync(int fd)
{
	static int	(*real)(int);

	if (fiu_nth_fails(fiu_nth_fd(fd), "metalcap/io/fsync"))
		return -1;
	if (real == NULL)
		real = (int (*)(int))fiu_nth_real("fsync");
	return real(fd);
}

int
mkdir(const char *path, mode_t mode)
{
	static int	(*real)(const char *, mode_t);

	if (fiu_nth_fails(fiu_nth_path(path), "metalcap/io/mkdir"))
		return -1;
	if (real == NULL)
		real = (int (*)(const char *, mode_t))fiu_nth_real("mkdir");
	return real(path, mode);
}

static void
fiu_nth_exit(void)
{
	char	text[32];
	int	fd, n;

	fiu_nth_on = false;
	if (fiu_nth_count[0] == '\0' || (fd = open(fiu_nth_count, O_WRONLY |
	    O_CREAT | O_TRUNC, 0644)) == -1)
		return;
	n = snprintf(text, sizeof text, "%ld\n", atomic_load(&fiu_nth_calls));
	if (write(fd, text, (size_t)n) != n)
		fprintf(stderr, "fiu_nth: %s not written\n", fiu_nth_count);
	close(fd);
}

/* Only metalcapd: its helpers (launchctl, the probe) run as they would. */
static bool
fiu_nth_is_daemon(void)
{
	char	exe[PATH_MAX], *base;
	ssize_t	n = readlink("/proc/self/exe", exe, sizeof exe - 1);

	if (n <= 0)
		return false;
	exe[n] = '\0';
	base = strrchr(exe, '/');
	return strcmp(base != NULL ? base + 1 : exe, "metalcapd") == 0;
}

__attribute__((constructor)) static void
fiu_nth_init(void)
{
	const char	*s;
	char		 mode[8] = "";
	size_t		 i;

	if (!fiu_nth_is_daemon() || (s = getenv("MC_FIU")) == NULL ||
	    sscanf(s, "%ld %4000s %7s", &fiu_nth_at, fiu_nth_under, mode) < 2)
		return;
	fiu_nth_kill = strcmp(mode, "kill") == 0;
	unsetenv("LD_PRELOAD");		/* its children get none of it */
	snprintf(fiu_nth_count, sizeof fiu_nth_count, "%s/fiu-count",
	    fiu_nth_under);
	fiu_init(0);
	for (i = 0; i < sizeof fiu_nth_points / sizeof fiu_nth_points[0]; i++)
		fiu_enable_external(fiu_nth_points[i], 1, NULL, 0,
		    fiu_nth_cb);
	atexit(fiu_nth_exit);
	fiu_nth_on = true;
}
