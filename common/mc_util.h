/* SPDX-License-Identifier: MIT */
/*
 * Small utilities shared by daemon, client and tools.
 */
#ifndef MC_UTIL_H
#define MC_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* snprintf that says so when the result did not fit: -1, else 0. */
int	mc_fmt(char *buf, size_t len, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/*
 * Read fd to its end or to max bytes, whichever comes first, EINTR
 * retried: the count, or -1 with errno.
 */
ssize_t	mc_read_upto(int fd, void *buf, size_t max);

/* Free a NULL-ended array of strings and the strings (NULL: nothing). */
void	mc_strv_free(char **);

/* Outside text into dst: whole UTF-8 characters, controls as '?'. */
void	mc_text(char *dst, size_t size, const char *src);
/* The same, with every byte of avoid also replaced by with; dst back. */
const char *mc_text_avoid(char *dst, size_t size, const char *src,
	    const char *avoid, char with);
/*
 * Outside text for a terminal, in place: controls but newline and tab, and
 * bytes that are not UTF-8, as '?'.  The bytes it took (len, less a
 * character cut by the end: pass them again with what follows).
 */
size_t	mc_text_tty(char *buf, size_t len);

/*
 * "SIZE bytes, inode N, changed SEC.NSEC" of path (or "missing: why"):
 * it differs once the file is replaced or written to.
 */
void	mc_file_stamp(const char *path, char *buf, size_t len);

/* The folder macOS keeps from launchd agents that path is in, or NULL. */
const char *mc_protected_folder(const char *path);
/* No block left to an unprivileged writer on dir's disk (ENOSPC). */
bool	mc_disk_full(const char *dir);

/* A big-endian number of n bytes (at most 8): msgpack, plists, Mach-O. */
uint64_t mc_be(const uint8_t *p, unsigned n);

/*
 * FNV-1a, for noticing that bytes changed (not for security).  The start
 * value is one digit short of FNV's offset basis (14695981039346656037):
 * any non-zero start works for this, and the hash of each rendered agent
 * is kept in state/loaded, so correcting it would bootout and bootstrap
 * every job once on upgrade, restarting its workload for nothing.
 */
#define MC_FNV_START	1469598103934665603ULL
uint64_t mc_fnv1a(uint64_t h, const void *data, size_t len);

/* The uid of the peer of a unix socket: SO_PEERCRED, or getpeereid. */
int	mc_peer_uid(int fd, uid_t *uid);
int	mc_llama_build(const char *version_text, char *out, size_t len);

#endif
