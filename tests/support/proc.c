/* SPDX-License-Identifier: MIT */
/*
 * A process seen from /proc (Linux): what the fault tests and the
 * benchmarks read of the daemon without a tracer.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

long
proc_rss_kib(pid_t pid)
{
	return proc_status_kib(pid, "VmRSS");
}

/* A "FIELD: N kB" line of /proc/PID/status (VmRSS, RssAnon, RssFile). */
long
proc_status_kib(pid_t pid, const char *field)
{
	char	path[64], line[256], fmt[64];
	long	kib = -1;
	FILE	*f;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	snprintf(fmt, sizeof fmt, "%s: %%ld kB", field);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, fmt, &kib) == 1)
			break;
	fclose(f);
	return kib;
}

int
proc_fds(pid_t pid)
{
	char		 path[64];
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * Does pid hold a descriptor of what was at path?  A file removed but
 * still open reads "PATH (deleted)", as the kernel names it.
 */
bool
proc_holds(pid_t pid, const char *path, bool deleted)
{
	char		 dir[64], link[512], want[512];
	DIR		*d;
	struct dirent	*de;
	ssize_t		 n;
	bool		 found = false;

	snprintf(want, sizeof want, "%s%s", path, deleted ? " (deleted)" : "");
	snprintf(dir, sizeof dir, "/proc/%ld/fd", (long)pid);
	if ((d = opendir(dir)) == NULL)
		return false;
	while (!found && (de = readdir(d)) != NULL) {
		n = readlinkat(dirfd(d), de->d_name, link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = strcmp(link, want) == 0;
	}
	closedir(d);
	return found;
}

/* utime + stime, in clock ticks (/proc/PID/stat fields 14 and 15). */
long long
proc_cpu_ticks(pid_t pid)
{
	char		 path[64], buf[1024], *p;
	unsigned long	 ut = 0, st = 0;
	FILE		*f;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(buf, sizeof buf, f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL &&
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu "
	    "%lu", &ut, &st) != 2)
		ut = st = 0;
	fclose(f);
	return (long long)(ut + st);
}

/* Times scheduled onto a CPU (/proc/PID/schedstat, third field). */
long long
proc_wakeups(pid_t pid)
{
	char		path[64];
	long long	run = -1, wait = -1, slices = -1;
	FILE		*f;

	snprintf(path, sizeof path, "/proc/%ld/schedstat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fscanf(f, "%lld %lld %lld", &run, &wait, &slices) != 3)
		slices = -1;
	fclose(f);
	return slices;
}
