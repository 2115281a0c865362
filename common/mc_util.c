/* SPDX-License-Identifier: MIT */
/*
 * Small utilities shared by daemon, client and tools.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0. */
static size_t
mc_utf8_len(const unsigned char *p)
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
	for (i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, surrogates, past U+10FFFF. */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
		return 0;
	return n;
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
		if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
			if (used + 1 >= size)
				break;
			dst[used++] = *p == '\t' ? ' ' : '?';
			p++;
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

/* The uid of the process at the other end of a unix socket. */
int
mc_peer_uid(int fd, uid_t *uid)
{
#ifdef __APPLE__
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
