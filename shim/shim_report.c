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
#include <string.h>
#include <unistd.h>

#include "../common/mc_os.h"
#include "shim_report.h"

#ifndef MC_VERSION
#error "MC_VERSION must be defined by the build"
#endif

/*
 * Format the line as space-separated key=value fields; reason comes last and
 * runs to the end of the line because it may contain blanks.
 */
size_t
shim_report_format(const struct shim_report *report, long pid, long pgid,
    char *line, size_t linelen)
{
	const struct shim_config *c = report->config;
	int			  n;

	n = snprintf(line, linelen,
	    "metalcap pid=%ld pgid=%ld version=%s state=%s family_max=%llu "
	    "threadgroup_memory=%llu working_set=%llu inherit=%d source=%s "
	    "class=%s hooked=%s watched=%s ctor_ns=%llu reason=%s\n",
	    pid, pgid, MC_VERSION, report->state,
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
 * REPORT FORMAT).  The words come from the shim itself, never from the
 * workload's data, so nothing a client sends can fill one in.  code is
 * the NSError's code where the call's error has one that says what kind
 * of failure it was (a command buffer's: out of memory and a page fault
 * are not alike), else -1 and no field.  pgid is the process's group:
 * launchd makes each job its own, so a child's report names its job.
 */
size_t
shim_report_witness_format(const char *failed, const char *call, long code,
    long pid, long pgid, char *line, size_t linelen)
{
	char	field[32] = "";
	int	n;

	if (code >= 0)
		snprintf(field, sizeof field, " code=%ld", code);
	n = snprintf(line, linelen, "metalcap witness pid=%ld pgid=%ld "
	    "failed=%s%s call=%s\n", pid, pgid, failed, field, call);
	return n < 0 || (size_t)n >= linelen ? 0 : (size_t)n;
}

/*
 * No symbolic link at any component of the report's path: O_NOFOLLOW
 * refuses one only at the last, and in a shared folder another user could
 * plant one in the middle (/tmp/reports -> a folder of the victim's, where
 * the line is appended to a file of the same name).
 *
 * The seam (common/mc_os.h) says how.  macOS 11 and later: O_NOFOLLOW_ANY
 * alone, the kernel's own walk refusing a link anywhere, the last
 * component too (ELOOP).  Never with O_NOFOLLOW: xnu refuses that pair
 * with EINVAL before any lookup (bsd/vfs/vfs_vnops.c, vn_open_auth), which
 * once left every report unwritten (issue 45).  Linux has no such flag:
 * the same walk is done here, each folder opened from the one before with
 * O_NOFOLLOW | O_DIRECTORY (O_PATH: search permission is enough, as for
 * the kernel's walk), so a link at any component fails as it does on
 * macOS.  `make test` runs both: this walk, and the Darwin side against
 * tests/sim/xnu-model.c (test_os_darwin).  On macOS /tmp and /var are
 * links themselves (to /private/...): metalcap's own report folders are
 * named by their real paths (probe.c, ctl_run.c, render.c).
 */
#define SHIM_REPORT_NOFOLLOW	MC_OS_NOFOLLOW_PATH

/*
 * Open name (relative to dirfd) for appending, only as a regular file of
 * this user's own with no other name: SHIM_REPORT_NOFOLLOW refuses a
 * symbolic link (at the last component here, and above it with
 * O_NOFOLLOW_ANY; on Linux the walk refused one above),
 * O_NONBLOCK keeps a FIFO from blocking the workload (with no reader the
 * open fails, with one the fstat below refuses it), and a hard link to
 * another file (macOS has no protected_hardlinks) or another user's file
 * is refused by the fstat.  -1 when it is not such a file.
 */
static int
shim_report_open(int dirfd, const char *name)
{
	struct stat	sb;
	int		fd;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    SHIM_REPORT_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
	if (fd == -1)
		return -1;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) || sb.st_nlink != 1 ||
	    sb.st_uid != geteuid()) {
		close(fd);
		return -1;
	}
	return fd;
}

#if MC_OS_WALK
/*
 * Open each folder of path in turn, from / or the working folder, with
 * O_NOFOLLOW: none of them may be a link.  The last component is left to
 * the caller, in *leaf ("." after a final slash: dir/ is dir/.).
 */
static int
shim_report_walk(char *path, const char **leaf)
{
	char	*slash = strrchr(path, '/'), *name, *save = NULL;
	int	 fd, next;

	fd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY |
	    O_CLOEXEC);
	if (slash == NULL)
		return fd;
	*slash = '\0';
	*leaf = slash[1] != '\0' ? slash + 1 : ".";
	for (name = strtok_r(path, "/", &save); name != NULL && fd != -1;
	    name = strtok_r(NULL, "/", &save)) {
		next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		close(fd);
		fd = next;
	}
	return fd;
}
#endif

/*
 * The folder that holds path's last component, reached through no link,
 * and that component (in buf): AT_FDCWD and the whole path where the
 * kernel checks it (O_NOFOLLOW_ANY).  -1 when not reached, or when path
 * is too long to copy whole.
 */
static int
shim_report_parent(const char *path, char *buf, size_t len,
    const char **leaf)
{
	if ((size_t)snprintf(buf, len, "%s", path) >= len)
		return -1;
	*leaf = buf;
#if MC_OS_WALK
	return shim_report_walk(buf, leaf);
#else
	return AT_FDCWD;
#endif
}

/*
 * Append the line to a file, or to DIR/metalcap.<pid>.report when the
 * destination is a directory (a link to one is not followed, nor a link
 * above either: in a shared folder such as /tmp another user could plant
 * it).  One write(2) with O_APPEND keeps lines from concurrent processes
 * whole.
 */
void
shim_report_write(const char *destination, const char *line, size_t len,
    long pid)
{
	char		 name[64], copy[1024];
	const char	*leaf;
	int		 parent, dirfd, fd;

	if (destination == NULL || *destination == '\0' ||
	    (parent = shim_report_parent(destination, copy, sizeof copy,
	    &leaf)) == -1)
		return;
	dirfd = openat(parent, leaf, O_RDONLY | O_DIRECTORY |
	    SHIM_REPORT_NOFOLLOW | O_CLOEXEC);
	if (dirfd != -1) {
		snprintf(name, sizeof name, "metalcap.%ld.report", pid);
		fd = shim_report_open(dirfd, name);
		close(dirfd);
	} else
		fd = shim_report_open(parent, leaf);
	if (parent != AT_FDCWD)
		close(parent);
	if (fd == -1)
		return;
	while (write(fd, line, len) == -1 && errno == EINTR)
		;
	close(fd);
}
