/* SPDX-License-Identifier: MIT */
/*
 * The seam between macOS and Linux: every flag, call or default of the
 * operating system that differs between the two, for the product's code
 * that is not policy/platform_*.c (docs/macos-only.md lists them all).
 *
 * Three builds: on macOS the Darwin side against the real kernel; on Linux
 * the Linux side; and on Linux with MC_OS_MODEL_DARWIN the Darwin side
 * against tests/sim/xnu-model.c, which gives xnu's constants and applies
 * xnu's rules to the calls below (tests/sim/README.md, "The xnu model").
 * That last build is how `make test` runs the Darwin side.
 *
 * Header only (macros and static inline functions over libc), so that any
 * layer may include it, the self-contained shim too: it defines no symbol
 * (scripts/check-layers.py, EVERYWHERE).
 */
#ifndef MC_OS_H
#define MC_OS_H

#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#if defined(__APPLE__) || defined(MC_OS_MODEL_DARWIN)
#define MC_OS_DARWIN	1
#endif

#ifdef MC_OS_DARWIN
#ifndef O_NOFOLLOW_ANY
#error "O_NOFOLLOW_ANY is missing: the report would follow a link"
#endif
#ifndef F_FULLFSYNC
#error "F_FULLFSYNC is missing: a state write would not reach the disk"
#endif
/*
 * No symbolic link at any component of a path, the last included: the
 * kernel's own walk.  O_NOFOLLOW_ANY alone: xnu refuses it together with
 * O_NOFOLLOW (EINVAL before any lookup, bsd/vfs/vfs_vnops.c vn_open_auth;
 * with O_SYMLINK too before xnu-11215), and it already refuses a link at
 * the last component (ELOOP: the lookup starts with its link budget spent,
 * bsd/vfs/vfs_lookup.c namei and lookup_handle_symlink).
 */
#define MC_OS_NOFOLLOW_PATH	O_NOFOLLOW_ANY
#define MC_OS_WALK		0
#else
/*
 * Linux has no such flag: O_NOFOLLOW refuses a link at the last component
 * only, and the caller walks the folders above it one by one
 * (shim_report.c, shim_report_walk).
 */
#define MC_OS_NOFOLLOW_PATH	O_NOFOLLOW
#define MC_OS_WALK		1
#endif

/*
 * The loader's variable that inserts a library, and how the loader splits
 * its list: dyld on colons only (dyld-1378 DyldProcessConfig.cpp,
 * forEachInColonList), glibc's ld.so on colons and blanks (ld.so(8)).
 */
#define MC_OS_DYLD_SEPS		":"
#define MC_OS_GLIBC_SEPS	": \t"
#ifdef MC_OS_DARWIN
#define MC_OS_INJECT_VAR	"DYLD_INSERT_LIBRARIES"
#define MC_OS_INJECT_SEPS	MC_OS_DYLD_SEPS
#else
#define MC_OS_INJECT_VAR	"LD_PRELOAD"
#define MC_OS_INJECT_SEPS	MC_OS_GLIBC_SEPS
#endif

/*
 * A file's change time to the nanosecond: struct stat's st_ctimespec on
 * macOS (sys/stat.h with _DARWIN_C_SOURCE), st_ctim on Linux (POSIX.1-2008).
 */
#ifdef MC_OS_DARWIN
#define MC_OS_CTIME(sb)		((sb)->st_ctimespec)
#else
#define MC_OS_CTIME(sb)		((sb)->st_ctim)
#endif

/*
 * The effective uid of the process at the other end of a unix socket, as
 * it was at connect(2) or listen(2): getpeereid(3) on macOS (LOCAL_PEERCRED,
 * xnu bsd/kern/uipc_usrreq.c), SO_PEERCRED on Linux (unix(7)).
 */
static inline int
mc_os_peer_uid(int fd, uid_t *uid)
{
#ifdef MC_OS_DARWIN
	gid_t	gid;

	return getpeereid(fd, uid, &gid);
#else
	struct ucred	cred;
	socklen_t	len = sizeof cred;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return -1;
	*uid = cred.uid;
	return 0;
#endif
}

/*
 * The listen queue of the daemon's socket: as long as the system allows.
 * A full queue refuses the next client at once on macOS (ECONNREFUSED) and
 * with EAGAIN on Linux; 128 on macOS (xnu bsd/sys/socket.h), 4096 on Linux
 * (glibc), and the kernel caps either at its kern.ipc.somaxconn or
 * net.core.somaxconn.
 */
#define MC_OS_LISTEN_BACKLOG	SOMAXCONN

/*
 * Make fd's data reach the medium, before a rename makes it the state.
 * macOS: after fsync(2) "the drive itself may not physically write the
 * data ... for quite some time" (xnu bsd/man/man2/fsync.2); F_FULLFSYNC
 * "asks the drive to flush all buffered data", as SQLite does
 * (os_unix.c, full_fsync).  A file system that does
 * not do it refuses it (ENOTTY, ENOTSUP or EINVAL from its VNOP_IOCTL:
 * xnu bsd/kern/kern_descrip.c), and then, as in SQLite, fsync(2) is the
 * best there is.  Linux: fsync(2) flushes the drive's cache itself.
 */
static inline int
mc_os_sync(int fd)
{
#ifdef MC_OS_DARWIN
	if (fcntl(fd, F_FULLFSYNC) == 0)
		return 0;
	/* Only a refusal falls back: an I/O error is the answer. */
	if (errno != ENOTTY && errno != ENOTSUP && errno != EINVAL)
		return -1;
#endif
	return fsync(fd);
}

/*
 * Whether a failed connect(2) to a unix socket may be a full listen queue,
 * worth a retry.  Linux: EAGAIN (a non-blocking socket; a blocking one
 * would wait).  macOS: ECONNREFUSED at once (xnu bsd/kern/uipc_usrreq.c,
 * unp_connect, when sonewconn finds the queue full), which is also what it
 * says when nobody listens: the caller tells the two apart by whether the
 * socket's file is there, and gives up after a while anyway.  On Linux
 * ECONNREFUSED only ever means nobody listens.
 */
static inline int
mc_os_connect_busy(int err)
{
#ifdef MC_OS_DARWIN
	if (err == ECONNREFUSED)
		return 1;
#endif
	return err == EAGAIN || err == EWOULDBLOCK;
}

#endif
