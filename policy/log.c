/* SPDX-License-Identifier: MIT */
/*
 * The daemon's log: one timestamped line per event, to its log file and,
 * in the foreground, to stderr.  log_debug is silent unless
 * METALCAPD_DEBUG is set.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"

static FILE	*log_file;
static bool	 log_stderr = true;
static bool	 log_verbose;

/*
 * The log is the daemon's alone: close-on-exec, so that no program it
 * starts (launchctl, the probe, a job's health check) can write lines
 * into it.
 */
void
log_open(const char *file, bool to_stderr)
{
	int	fd;

	log_stderr = to_stderr;
	log_verbose = getenv("METALCAPD_DEBUG") != NULL;
	if (file == NULL || (fd = open(file, O_WRONLY | O_CREAT | O_APPEND |
	    O_CLOEXEC, 0644)) == -1)
		return;
	if ((log_file = fdopen(fd, "a")) == NULL) {
		close(fd);
		return;
	}
	setvbuf(log_file, NULL, _IOLBF, 0);
}

static void
log_vwrite(const char *level, const char *fmt, va_list ap)
{
	char		stamp[32], line[2048];
	time_t		now = time(NULL);
	struct tm	tm;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
	vsnprintf(line, sizeof line, fmt, ap);
	if (log_stderr)
		fprintf(stderr, "%s metalcapd[%ld] %s: %s\n", stamp,
		    (long)getpid(), level, line);
	if (log_file != NULL)
		fprintf(log_file, "%s metalcapd[%ld] %s: %s\n", stamp,
		    (long)getpid(), level, line);
}

void
log_info(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite("info", fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite("warning", fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	log_vwrite("debug", fmt, ap);
	va_end(ap);
}
