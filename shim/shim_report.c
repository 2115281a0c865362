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
	    "class=%s hooked=%s watched=%s ctor_ns=%llu reason=%s\n",
	    pid, MC_VERSION, report->state,
	    c ? (unsigned long long)c->family_max : 0ULL,
	    c ? (unsigned long long)c->threadgroup_memory : 0ULL,
	    c ? (unsigned long long)c->working_set : 0ULL,
	    c ? (int)c->inherit : 1,
	    c && c->family_source ? c->family_source : "-",
	    report->device_class ? report->device_class : "-",
	    report->hooked && *report->hooked ? report->hooked : "-",
	    report->watched && *report->watched ? report->watched : "-",
	    (unsigned long long)report->ctor_ns,
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
 * A witness line: a Metal call of this process failed (libmetalcap(7),
 * REPORT FORMAT).  The two words come from the shim itself, never from
 * the workload's data, so nothing a client sends can fill one in.
 */
size_t
shim_report_witness_format(const char *failed, const char *call, long pid,
    char *line, size_t linelen)
{
	int	n;

	n = snprintf(line, linelen, "metalcap witness pid=%ld failed=%s "
	    "call=%s\n", pid, failed, call);
	return n < 0 || (size_t)n >= linelen ? 0 : (size_t)n;
}

/*
 * Open name (relative to dirfd) for appending, only as a regular file of
 * this user's own with no other name: O_NOFOLLOW refuses a symbolic link
 * planted at the last component, O_NONBLOCK keeps a FIFO from blocking the
 * workload (with no reader the open fails, with one the fstat below
 * refuses it), and a hard link to another file (macOS has no
 * protected_hardlinks) or another user's file is refused by the fstat.
 * -1 when it is not such a file.
 */
static int
shim_report_open(int dirfd, const char *name)
{
	struct stat	sb;
	int		fd;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
	if (fd == -1)
		return -1;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) || sb.st_nlink != 1 ||
	    sb.st_uid != geteuid()) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Append the line to a file, or to DIR/metalcap.<pid>.report when the
 * destination is a directory (a link to one is not followed: in a shared
 * folder such as /tmp another user could plant it).  One write(2) with
 * O_APPEND keeps lines from concurrent processes whole.
 */
void
shim_report_write(const char *destination, const char *line, size_t len,
    long pid)
{
	char	 name[64];
	int	 dirfd, fd;

	if (destination == NULL || *destination == '\0')
		return;
	dirfd = open(destination, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (dirfd != -1) {
		snprintf(name, sizeof name, "metalcap.%ld.report", pid);
		fd = shim_report_open(dirfd, name);
		close(dirfd);
	} else
		fd = shim_report_open(AT_FDCWD, destination);
	if (fd == -1)
		return;
	while (write(fd, line, len) == -1 && errno == EINTR)
		;
	close(fd);
}
