/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 of a file through the platform's own library (a hash is not
 * something to write by hand).  Read in blocks: a model is gigabytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef __APPLE__
#include <CommonCrypto/CommonDigest.h>
#else
#include <nettle/sha2.h>
#endif

#include "mc_sha256.h"

#ifdef __APPLE__
typedef CC_SHA256_CTX	mc_sha256_ctx;
#define MC_SHA256_LEN	CC_SHA256_DIGEST_LENGTH
static int
mc_sha256_init(mc_sha256_ctx *c)
{
	return CC_SHA256_Init(c);
}

static int
mc_sha256_update(mc_sha256_ctx *c, const void *p, size_t n)
{
	return CC_SHA256_Update(c, p, (CC_LONG)n);
}

static int
mc_sha256_final(mc_sha256_ctx *c, unsigned char *md)
{
	return CC_SHA256_Final(md, c);
}
#else
/*
 * Linux (the tests' platform): nettle, GnuTLS's hash library.  Not
 * OpenSSL: loading libcrypto and its EVP provider costs metalcapd 3.6 MiB
 * of its 4 MiB RSS budget; nettle costs about 0.4 MiB.
 */
typedef struct sha256_ctx	mc_sha256_ctx;
#define MC_SHA256_LEN	SHA256_DIGEST_SIZE
static int
mc_sha256_init(mc_sha256_ctx *c)
{
	sha256_init(c);
	return 1;
}

static int
mc_sha256_update(mc_sha256_ctx *c, const void *p, size_t n)
{
	sha256_update(c, n, p);
	return 1;
}

static int
mc_sha256_final(mc_sha256_ctx *c, unsigned char *md)
{
	sha256_digest(c, MC_SHA256_LEN, md);
	return 1;
}
#endif

/* The file's SHA-256 as 64 hex digits; -1 and why (with the path) if not. */
int
mc_sha256_file(const char *path, char hex[MC_SHA256_HEX], char *why,
    size_t whylen)
{
	int	fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return mc_sha256_fd(fd, path, hex, why, whylen);
}

static void
mc_sha256_hex(const unsigned char *md, char hex[MC_SHA256_HEX])
{
	static const char	digits[] = "0123456789abcdef";
	int			i;

	for (i = 0; i < MC_SHA256_LEN; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * MC_SHA256_LEN] = '\0';
}

/* The SHA-256 of a string; -1 when the crypto library has none. */
int
mc_sha256_text(const char *text, char hex[MC_SHA256_HEX])
{
	unsigned char	md[MC_SHA256_LEN];
	mc_sha256_ctx	ctx;

	if (!mc_sha256_init(&ctx))
		return -1;
	mc_sha256_update(&ctx, text, strlen(text));
	if (!mc_sha256_final(&ctx, md))
		return -1;
	mc_sha256_hex(md, hex);
	return 0;
}

/* The same of an open file, read from where it stands; closes fd. */
int
mc_sha256_fd(int fd, const char *path, char hex[MC_SHA256_HEX], char *why,
    size_t whylen)
{
	unsigned char		 buf[1 << 16], md[MC_SHA256_LEN];
	mc_sha256_ctx		 ctx;
	ssize_t			 n;
	int			 ok;

	if (!mc_sha256_init(&ctx)) {
		close(fd);
		snprintf(why, whylen, "%s: no SHA-256 in the crypto library",
		    path);
		return -1;
	}
	while ((n = read(fd, buf, sizeof buf)) > 0 ||
	    (n == -1 && errno == EINTR))
		if (n > 0)
			mc_sha256_update(&ctx, buf, (size_t)n);
	ok = mc_sha256_final(&ctx, md);
	if (n == -1 || !ok) {
		snprintf(why, whylen, "%s: %s", path, n == -1 ?
		    strerror(errno) : "SHA-256 failed");
		close(fd);
		return -1;
	}
	close(fd);
	mc_sha256_hex(md, hex);
	return 0;
}
