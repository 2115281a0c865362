/* SPDX-License-Identifier: MIT */
/*
 * Small utilities shared by daemon, client and tools.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_os.h"
#include "mc_util.h"

int
mc_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/*
 * The length of the valid UTF-8 sequence at p (1 to 4) of the avail bytes
 * there; 0 when it is not UTF-8; MC_UTF8_CUT when the avail bytes are the
 * start of a valid one and the rest is yet to come.
 */
#define MC_UTF8_CUT	((size_t)-1)

static size_t
mc_utf8_len_n(const unsigned char *p, size_t avail)
{
	size_t	n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n && i < avail; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, surrogates, past U+10FFFF. */
	if (avail >= 2 && ((p[0] == 0xe0 && p[1] < 0xa0) ||
	    (p[0] == 0xed && p[1] > 0x9f) || (p[0] == 0xf0 && p[1] < 0x90) ||
	    (p[0] == 0xf4 && p[1] > 0x8f)))
		return 0;
	return avail < n ? MC_UTF8_CUT : n;
}

/* In a C string: a NUL ends a sequence as any other wrong byte would. */
static size_t
mc_utf8_len(const unsigned char *p)
{
	size_t	n = mc_utf8_len_n(p, 4);

	return n == MC_UTF8_CUT ? 0 : n;
}

/*
 * A control a terminal would act on: C0 and DEL, and C1 (U+0080 to
 * U+009F, where U+009B is CSI, the escape sequence's start in one
 * character).
 */
static bool
mc_utf8_control(const unsigned char *p, size_t n)
{
	return (n == 1 && (*p < 0x20 || *p == 0x7f)) ||
	    (n == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

/*
 * Copy text that came from outside (a log line, a probe's message) into
 * dst: cut at a character boundary, never inside one; a byte that is not
 * UTF-8, and a control character, become '?'.  JSON and XML writers then
 * never refuse it, and a terminal never interprets it.
 */
void
mc_text(char *dst, size_t size, const char *src)
{
	const unsigned char	*p = (const unsigned char *)src;
	size_t			 used = 0, n;

	if (size == 0)
		return;
	while (*p != '\0') {
		n = mc_utf8_len(p);
		if (n == 0 || mc_utf8_control(p, n)) {
			if (used + 1 >= size)
				break;
			dst[used++] = *p == '\t' ? ' ' : '?';
			p += n == 0 ? 1 : n;
			continue;
		}
		if (used + n >= size)
			break;
		memcpy(dst + used, p, n);
		used += n;
		p += n;
	}
	dst[used] = '\0';
}

size_t
mc_text_tty(char *buf, size_t len)
{
	unsigned char	*p = (unsigned char *)buf;
	size_t		 i = 0, n, k;

	while (i < len) {
		n = mc_utf8_len_n(p + i, len - i);
		if (n == MC_UTF8_CUT)
			return i;
		if (n == 0 || (mc_utf8_control(p + i, n) && p[i] != '\n' &&
		    p[i] != '\t'))
			for (k = 0; k < (n == 0 ? 1 : n); k++)
				p[i + k] = '?';
		i += n == 0 ? 1 : n;
	}
	return len;
}

/* The uid of the process at the other end of a unix socket (mc_os.h). */
int
mc_peer_uid(int fd, uid_t *uid)
{
	return mc_os_peer_uid(fd, uid);
}

/* A big-endian number of n bytes (at most 8). */
uint64_t
mc_be(const uint8_t *p, unsigned n)
{
	uint64_t	v = 0;

	while (n-- > 0)
		v = v << 8 | *p++;
	return v;
}

/* FNV-1a over len more bytes, from h (MC_FNV_START for a new hash). */
uint64_t
mc_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char	*p = data;

	while (len-- > 0)
		h = (h ^ *p++) * 1099511628211ULL;
	return h;
}

const char *
mc_text_avoid(char *dst, size_t size, const char *src, const char *avoid,
    char with)
{
	char	*p;

	mc_text(dst, size, src);
	for (p = dst; (p = strpbrk(p, avoid)) != NULL; p++)
		*p = with;
	return dst;
}

ssize_t
mc_read_upto(int fd, void *buf, size_t max)
{
	size_t	got = 0;
	ssize_t	n;

	while (got < max && (n = read(fd, (char *)buf + got, max - got)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

void
mc_strv_free(char **v)
{
	size_t	i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/*
 * macOS keeps some folders from launchd agents (TCC): ~/Downloads,
 * ~/Documents, ~/Desktop, iCloud Drive, removable and network volumes
 * answer "Operation not permitted", usually with no prompt, and a server
 * run from a job exits as it starts.  Which of them path is in, or NULL.
 */
const char *
mc_protected_folder(const char *path)
{
	static const char *const home[] = { "Downloads", "Documents",
	    "Desktop", "Library/Mobile Documents" };
	static const char *const named[] = { "~/Downloads", "~/Documents",
	    "~/Desktop", "iCloud Drive" };
	const char	*rest;
	size_t		 i, n;

	if (strncmp(path, "/Volumes/", 9) == 0)
		return "a removable or network volume";
	if (strncmp(path, "/Users/", 7) != 0 ||
	    (rest = strchr(path + 7, '/')) == NULL)
		return NULL;
	for (i = 0; i < sizeof home / sizeof home[0]; i++) {
		n = strlen(home[i]);
		if (strncmp(rest + 1, home[i], n) == 0 && (rest[1 + n] == '/' ||
		    rest[1 + n] == '\0'))
			return named[i];
	}
	return NULL;
}

/*
 * Is the disk holding dir full, as an unprivileged writer finds it (no
 * block left to it: ENOSPC on the next write)?  false when it cannot be
 * told.
 */
bool
mc_disk_full(const char *dir)
{
	struct statvfs	sv;

	return statvfs(dir, &sv) == 0 && sv.f_bavail == 0;
}

/*
 * llama.cpp's build, as a program of it says with --version, in one form:
 * "build N, commit C".  It prints "version: V (build N, commit C)"
 * (common/build-info.cpp.in:33 of the 2026-09 source); releases before
 * printed "version: N (C)".  -1 when text says neither.
 */
int
mc_llama_build(const char *text, char *out, size_t len)
{
	const char	*v = strstr(text, "version: ");
	long long	 n;
	char		 commit[41], ver[64];

	if (v == NULL)
		return -1;
	v += strlen("version: ");
	if (sscanf(v, "%63s (build %lld, commit %40[0-9a-f])", ver, &n,
	    commit) == 3 || sscanf(v, "%lld (%40[0-9a-f])", &n, commit) == 2)
		return mc_fmt(out, len, "build %lld, commit %s", n, commit);
	return -1;
}

/*
 * What tells a file replaced or rewritten from the one stamped before:
 * size, inode and the change time to the nanosecond.  Not the mtime, which
 * a copy keeps (cp -p, rsync -t over the old inode) and utimes() sets
 * back; the kernel moves ctime on every write and nobody can set it.
 */
void
mc_file_stamp(const char *path, char *buf, size_t len)
{
	struct stat	sb;
	long long	sec;
	long		nsec;

	if (stat(path, &sb) == -1) {
		snprintf(buf, len, "missing: %s", strerror(errno));
		return;
	}
	sec = (long long)MC_OS_CTIME(&sb).tv_sec;
	nsec = (long)MC_OS_CTIME(&sb).tv_nsec;
	snprintf(buf, len, "%lld bytes, inode %llu, changed %lld.%09ld",
	    (long long)sb.st_size, (unsigned long long)sb.st_ino, sec, nsec);
}
