/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 of a file, in hex, for evidence a reader can check with
 * shasum -a 256 or sha256sum: the system's CommonCrypto on macOS,
 * OpenSSL's libcrypto elsewhere.
 */
#ifndef MC_SHA256_H
#define MC_SHA256_H

#include <stddef.h>

#define MC_SHA256_HEX	65	/* 64 digits and the NUL */

int	mc_sha256_file(const char *path, char hex[MC_SHA256_HEX], char *why,
	    size_t whylen);
int	mc_sha256_fd(int fd, const char *path, char hex[MC_SHA256_HEX],
	    char *why, size_t whylen);
int	mc_sha256_text(const char *text, char hex[MC_SHA256_HEX]);

#endif
