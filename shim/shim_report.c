/* SPDX-License-Identifier: MIT */
/*
 * Writing the activation report.  The shim lives in somebody else's process,
 * so this never prints and never fails loudly: a report that cannot be
 * written is simply missing, which the daemon treats as "not injected".
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "shim_report.h"

#ifndef MC_VERSION
#error "MC_VERSION must be defined by the build"
#endif

/*
 * Format the line as space-separated key=value fields; reason comes last and
 * runs to the end of the line because it may contain blanks.
 */
size_t
shim_report_format(const struct shim_report *report, long pid, char *line,
    size_t linelen)
{
	const struct shim_config *c = report->config;
	int			  n;

	n = snprintf(line, linelen,
	    "metalcap pid=%ld version=%s state=%s family_max=%llu "
	    "threadgroup_memory=%llu working_set=%llu inherit=%d source=%s "
	    "class=%s hooked=%s ctor_ns=%llu init_hook=%s init_hook_ms=%llu "
	    "reason=%s\n",
	    pid, MC_VERSION, report->state,
	    c ? (unsigned long long)c->family_max : 0ULL,
	    c ? (unsigned long long)c->threadgroup_memory : 0ULL,
	    c ? (unsigned long long)c->working_set : 0ULL,
	    c ? (int)c->inherit : 1,
	    c && c->family_source ? c->family_source : "-",
	    report->device_class ? report->device_class : "-",
	    report->hooked && *report->hooked ? report->hooked : "-",
	    (unsigned long long)report->ctor_ns,
	    report->init_hook ? report->init_hook : "-",
	    (unsigned long long)report->init_hook_ms,
	    report->reason ? report->reason : "-");
	if (n < 0)
		return 0;
	if ((size_t)n >= linelen) {
		/* Truncated: keep it one line. */
		line[linelen - 2] = '\n';
		return linelen - 1;
	}
	return (size_t)n;
}

/*
 * Append the line to a file, or to DIR/metalcap.<pid>.report when the
 * destination is a directory.  One write(2) with O_APPEND keeps lines from
 * concurrent processes whole.
 */
void
shim_report_write(const char *destination, const char *line, size_t len,
    long pid)
{
	struct stat	 sb;
	char		 path[1024];
	int		 fd;

	if (destination == NULL || *destination == '\0')
		return;
	if (stat(destination, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (snprintf(path, sizeof path, "%s/metalcap.%ld.report",
		    destination, pid) >= (int)sizeof path)
			return;
		destination = path;
	}
	fd = open(destination, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd == -1)
		return;
	while (write(fd, line, len) == -1 && errno == EINTR)
		;
	close(fd);
}
