/* SPDX-License-Identifier: MIT */
/*
 * xnu's rules for the calls the Darwin side of common/mc_os.h makes, on
 * top of Linux's (xnu-model.h says how a test build uses it).  Each rule is
 * cited in tests/sim/README.md, "The xnu model"; the model is as strict as
 * the strictest macOS release metalcap supports (11.7.1 and later).
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "xnu-model.h"

struct xnu_model	xnu_model;

int	__real_openat(int dirfd, const char *path, int flags, ...);
int	__real_fcntl(int fd, int cmd, ...);
int	__real_fsync(int fd);
int	__real_connect(int fd, const struct sockaddr *addr, socklen_t len);
int	__real_listen(int fd, int backlog);

void
xnu_model_reset(void)
{
	memset(&xnu_model, 0, sizeof xnu_model);
}

/*
 * open(2)'s flag rules, before any lookup (vn_open_auth): O_NOFOLLOW_ANY
 * with O_NOFOLLOW is EINVAL in every release that has the flag, with
 * O_SYMLINK up to xnu-10063 (macOS 14); O_CREAT with O_DIRECTORY is EINVAL.
 */
static int
xnu_model_open_flags(int flags)
{
	if ((flags & O_NOFOLLOW_ANY) &&
	    (flags & (O_NOFOLLOW | XNU_MODEL_O_SYMLINK)))
		return EINVAL;
	if ((flags & O_CREAT) && (flags & O_DIRECTORY))
		return EINVAL;
	return 0;
}

/*
 * O_NOFOLLOW_ANY: the lookup starts with its whole link budget spent
 * (namei: ni_loopcnt = MAXSYMLINKS), so the first link it would follow is
 * ELOOP, at any component, the last too when it is followed (an open
 * without O_CREAT, or with O_CREAT and no O_EXCL).  Linux's openat2 with
 * RESOLVE_NO_SYMLINKS refuses a link anywhere in the same way, ELOOP.
 */
int
__wrap_openat(int dirfd, const char *path, int flags, ...)
{
	struct open_how	how;
	mode_t		mode = 0;
	va_list		ap;
	long		fd;
	int		err;

	if (flags & O_CREAT) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if ((err = xnu_model_open_flags(flags)) != 0) {
		xnu_model.openat_einval++;
		errno = err;
		return -1;
	}
	if ((flags & O_NOFOLLOW_ANY) == 0)
		return __real_openat(dirfd, path, flags, mode);
	memset(&how, 0, sizeof how);
	how.flags = (unsigned long long)(flags & ~O_NOFOLLOW_ANY);
	how.mode = flags & O_CREAT ? mode : 0;
	how.resolve = RESOLVE_NO_SYMLINKS;
	fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
	if (fd == -1 && errno == ELOOP)
		xnu_model.openat_eloop++;
	return (int)fd;
}

/*
 * F_FULLFSYNC: the file system's VNOP_IOCTL, which flushes the file and
 * then the drive (here fsync(2), which on Linux does both), or refuses it
 * when the file system does not do it (fullfsync_refuse).  Other commands
 * are Linux's; the argument is read as glibc's own fcntl reads it.
 */
int
__wrap_fcntl(int fd, int cmd, ...)
{
	struct stat	 sb;
	va_list		 ap;
	void		*arg;

	if (cmd != F_FULLFSYNC) {
		va_start(ap, cmd);
		arg = va_arg(ap, void *);
		va_end(ap);
		return __real_fcntl(fd, cmd, arg);
	}
	if (fstat(fd, &sb) == -1)
		return -1;
	if (S_ISDIR(sb.st_mode))
		xnu_model.fullfsync_dirs++;
	else
		xnu_model.fullfsync_files++;
	if (xnu_model.fullfsync_refuse != 0) {
		xnu_model.fullfsync_refused++;
		errno = xnu_model.fullfsync_refuse;
		return -1;
	}
	return __real_fsync(fd);
}

int
__wrap_fsync(int fd)
{
	xnu_model.fsyncs++;
	return __real_fsync(fd);
}

/*
 * listen(2): a backlog of 0 or less, or over kern.ipc.somaxconn (128 by
 * default), is somaxconn (solisten); the queue then holds so_qlimit
 * connections (sonewconn with soqlimitcompat, the default).  Linux's holds
 * one more than its backlog (af_unix.c, unix_recvq_full: full when the
 * queue is longer than the backlog): asked for one less.
 */
int
__wrap_listen(int fd, int backlog)
{
	if (backlog <= 0 || backlog > SOMAXCONN)
		backlog = SOMAXCONN;
	xnu_model.listen_backlog = backlog;
	return __real_listen(fd, backlog - 1);
}

/*
 * connect(2) to a unix stream socket whose listen queue is full fails at
 * once with ECONNREFUSED (unp_connect: sonewconn returns no socket), where
 * Linux makes a blocking socket wait and gives a non-blocking one EAGAIN.
 * The model asks Linux without blocking and answers as xnu would.
 */
int
__wrap_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	int	fl, type, rc, err;
	socklen_t tlen = sizeof type;

	if (addr == NULL || addr->sa_family != AF_UNIX ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == -1 ||
	    type != SOCK_STREAM || (fl = __real_fcntl(fd, F_GETFL)) == -1)
		return __real_connect(fd, addr, len);
	__real_fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	rc = __real_connect(fd, addr, len);
	err = errno;
	__real_fcntl(fd, F_SETFL, fl);
	if (rc == -1 && (err == EAGAIN || err == EWOULDBLOCK)) {
		xnu_model.connect_full++;
		err = ECONNREFUSED;
	}
	errno = err;
	return rc;
}

/*
 * getpeereid(3): the peer's effective ids as they were at connect(2) (the
 * connecting side's, copied to the accepted socket) or listen(2) (the
 * listener's, copied to the connecting one): unp_connect, unp_listen and
 * LOCAL_PEERCRED in uipc_usrreq.c.  Linux's SO_PEERCRED keeps the same.
 */
int
getpeereid(int fd, uid_t *uid, gid_t *gid)
{
	struct ucred	cred;
	socklen_t	len = sizeof cred;

	xnu_model.getpeereid++;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return -1;
	*uid = cred.uid;
	*gid = cred.gid;
	return 0;
}
