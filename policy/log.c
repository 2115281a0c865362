/* SPDX-License-Identifier: MIT */
/*
 * The daemon's log: one timestamped line per event, to its log file and,
 * in the foreground, to stderr.  log_debug is silent unless
 * METALCAPD_DEBUG is set.
 *
 * Bounded two ways (metalcapd(8), LOGGING).  A job's server prints what
 * its clients send, so lines the daemon logs for each line a job writes
 * go through log_limited: LOG_BURST a minute per job and kind, then one
 * line saying more are counted, and their count with the next window's
 * first (the kernel's printk_ratelimit, journald's RateLimitBurst).  And
 * the file rotates itself at LOG_MAX_BYTES to one old generation,
 * FILE.1: metalcapd is a per-user agent, and newsyslog(8) runs as root
 * from a conf the pkg would install, which reaches neither a Homebrew
 * install nor a --home of the user's choosing.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"

/* Like lines a job may have logged a minute before they are counted. */
#define LOG_BURST		10
#define LOG_WINDOW_MS		60000
/* Jobs and kinds tracked at once; the stalest gives its place up. */
#define LOG_LIMIT_SLOTS		64
/* The file's bound before it rotates (METALCAPD_LOG_MAX overrides). */
#define LOG_MAX_BYTES		(8L * 1024 * 1024)

struct log_limit {
	char		 who[64];	/* "": a free place */
	const char	*kind;
	uint64_t	 start_ms;	/* the window's */
	unsigned	 told;		/* lines logged in it */
	unsigned long	 counted;	/* lines not logged in it */
};

static FILE		*log_file;
static char		 log_path[PATH_MAX];
static long		 log_max = LOG_MAX_BYTES;
static bool		 log_stderr = true;
static bool		 log_verbose;
static struct log_limit	 log_limits[LOG_LIMIT_SLOTS];

static FILE *
log_reopen(const char *file)
{
	FILE	*f;
	int	 fd;

	if ((fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0644)) == -1)
		return NULL;
	if ((f = fdopen(fd, "a")) == NULL) {
		close(fd);
		return NULL;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

/*
 * The log is the daemon's alone: close-on-exec, so that no program it
 * starts (launchctl, the probe, a job's health check) can write lines
 * into it.
 */
void
log_open(const char *file, bool to_stderr)
{
	const char	*max = getenv("METALCAPD_LOG_MAX");
	char		*end;
	long		 n;

	log_stderr = to_stderr;
	log_verbose = getenv("METALCAPD_DEBUG") != NULL;
	log_max = LOG_MAX_BYTES;
	if (log_file != NULL)
		fclose(log_file);
	log_file = NULL;
	if (max != NULL) {
		errno = 0;
		n = strtol(max, &end, 10);
		if (errno == 0 && end != max && *end == '\0' && n >= 4096)
			log_max = n;
		else
			fprintf(stderr, "metalcapd: METALCAPD_LOG_MAX: '%s' is "
			    "not a number of bytes of at least 4096; %ld "
			    "used\n", max, log_max);
	}
	if (file == NULL || strlen(file) >= sizeof log_path)
		return;
	strcpy(log_path, file);
	log_file = log_reopen(file);
}

/*
 * The file passed its bound: it becomes FILE.1 (the one before goes) and
 * a new one starts.  Renamed, not copied: a reader holding the old one
 * (tail -f) keeps what it had.  Should the new one not open, the old
 * one's descriptor is kept and written on.
 */
static void
log_rotate(void)
{
	char	 old[PATH_MAX + 2];
	FILE	*f;

	snprintf(old, sizeof old, "%s.1", log_path);
	if (rename(log_path, old) == -1 || (f = log_reopen(log_path)) ==
	    NULL)
		return;
	fclose(log_file);
	log_file = f;
}

/*
 * stderr that is a file (launchd's StandardErrorPath, opened O_APPEND)
 * starts again empty past the bound: the log file holds the history.
 */
static void
log_bound_stderr(void)
{
	struct stat	sb;

	if (fstat(STDERR_FILENO, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_size > log_max)
		(void)ftruncate(STDERR_FILENO, 0);
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
	if (log_stderr) {
		fprintf(stderr, "%s metalcapd[%ld] %s: %s\n", stamp,
		    (long)getpid(), level, line);
		log_bound_stderr();
	}
	if (log_file != NULL) {
		fprintf(log_file, "%s metalcapd[%ld] %s: %s\n", stamp,
		    (long)getpid(), level, line);
		if (ftell(log_file) > log_max)
			log_rotate();
	}
}

static void
log_write(const char *level, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(level, fmt, ap);
	va_end(ap);
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

static uint64_t
log_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A window's lines not logged, told once it is over. */
static void
log_limit_told(struct log_limit *l)
{
	if (l->counted > 0)
		log_write("info", "job %s: %lu more lines of the kind \"%s\" "
		    "were counted, not logged (at most %d a minute)", l->who,
		    l->counted, l->kind, LOG_BURST);
	l->counted = 0;
}

/* who's place for kind: its own, else a free one, else the stalest. */
static struct log_limit *
log_limit_find(const char *who, const char *kind)
{
	struct log_limit	*l, *stalest = &log_limits[0];

	for (l = log_limits; l < log_limits + LOG_LIMIT_SLOTS; l++) {
		if (l->who[0] == '\0' || (strncmp(l->who, who,
		    sizeof l->who - 1) == 0 && strcmp(l->kind, kind) == 0))
			return l;
		if (l->start_ms < stalest->start_ms)
			stalest = l;
	}
	log_limit_told(stalest);
	stalest->who[0] = '\0';
	return stalest;
}

/*
 * An info line of who (a job) that comes once per line the job writes
 * (kind names them, a string that lives on): LOG_BURST of a kind a
 * minute are logged, the first past them says the rest are counted, and
 * the count comes with the first of the next window.
 */
void
log_limited(const char *who, const char *kind, const char *fmt, ...)
{
	struct log_limit	*l = log_limit_find(who, kind);
	uint64_t		 now = log_now_ms();
	va_list			 ap;

	if (l->who[0] == '\0' || now - l->start_ms >= LOG_WINDOW_MS) {
		if (l->who[0] != '\0')
			log_limit_told(l);
		snprintf(l->who, sizeof l->who, "%s", who);
		l->kind = kind;
		l->start_ms = now;
		l->told = 0;
	}
	if (l->told >= LOG_BURST) {
		if (l->counted++ == 0)
			log_write("info", "job %s: more lines of the kind \"%s\" "
			    "this minute are counted, not logged", l->who,
			    kind);
		return;
	}
	l->told++;
	va_start(ap, fmt);
	log_vwrite("info", fmt, ap);
	va_end(ap);
}
