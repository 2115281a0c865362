/* SPDX-License-Identifier: MIT */
/*
 * A model of the xnu rules the Darwin side of common/mc_os.h depends on,
 * on top of Linux's system calls (tests/sim/README.md, "The xnu model",
 * cites each rule).  A test build of product code on Linux is compiled with
 * -DMC_OS_MODEL_DARWIN -include xnu-model.h, so it sees xnu's constants as
 * it would in macOS's headers, and linked with
 * -Wl,--wrap=openat,--wrap=fcntl,--wrap=fsync,--wrap=connect,--wrap=listen
 * so that its calls meet xnu's rules (xnu-model.c).  Product code written
 * before the seam, that used the constants directly, meets them as well.
 */
#ifndef XNU_MODEL_H
#define XNU_MODEL_H

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

/* xnu bsd/sys/fcntl.h:181 (xnu-11417), "no symlinks allowed in path". */
#define O_NOFOLLOW_ANY		0x20000000
/*
 * xnu's O_SYMLINK is 0x00200000 (bsd/sys/fcntl.h:159), which is Linux's
 * O_PATH: the model gives it a bit Linux does not use, and only the model
 * knows it (product code never opens a link itself).
 */
#define XNU_MODEL_O_SYMLINK	0x40000000
/* xnu bsd/sys/fcntl.h:304. */
#define F_FULLFSYNC		51
/* xnu bsd/sys/socket.h:597; glibc's is 4096. */
#undef SOMAXCONN
#define SOMAXCONN		128

/*
 * struct stat's change time: st_ctimespec in xnu (bsd/sys/stat.h:129,
 * with _DARWIN_C_SOURCE), the same struct timespec Linux calls st_ctim.
 */
#define st_ctimespec		st_ctim

/* What the model saw and what it is told to do; xnu_model_reset clears. */
struct xnu_model {
	int	fullfsync_refuse;	/* errno F_FULLFSYNC fails with; 0: works */
	int	fullfsync_files;	/* F_FULLFSYNC on regular files */
	int	fullfsync_dirs;		/* on folders */
	int	fullfsync_refused;	/* refused as fullfsync_refuse said */
	int	fsyncs;			/* fsync(2) */
	int	openat_einval;		/* opens refused by the flag rules */
	int	openat_eloop;		/* opens refused for a link */
	int	listen_backlog;		/* the queue xnu gave the last listen */
	int	connect_full;		/* connects refused for a full queue */
	int	getpeereid;		/* getpeereid(3) calls */
};
extern struct xnu_model	xnu_model;

void	xnu_model_reset(void);

/* libSystem's, which glibc has not. */
int	getpeereid(int fd, uid_t *uid, gid_t *gid);

int	__wrap_openat(int dirfd, const char *path, int flags, ...);
int	__wrap_fcntl(int fd, int cmd, ...);
int	__wrap_fsync(int fd);
int	__wrap_connect(int fd, const struct sockaddr *addr, socklen_t len);
int	__wrap_listen(int fd, int backlog);

#endif
