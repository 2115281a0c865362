/* SPDX-License-Identifier: MIT */
/*
 * What the llama tests ask of a server over HTTP: a free port on the
 * loopback, and curl with arguments (the real client a user would run).
 */
#ifndef LLAMA_HTTP_H
#define LLAMA_HTTP_H

#include <stdarg.h>
#include <stddef.h>

#define CURL	"/usr/bin/curl"

int	llama_free_port(void);
int	llama_curl(char *out, size_t outlen, ...);
int	llama_curl_va(char *out, size_t outlen, const char *last, va_list);

#endif
