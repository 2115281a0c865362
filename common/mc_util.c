/* SPDX-License-Identifier: MIT */
/*
 * Small utilities shared by daemon, client and tools.
 */
#include <stdarg.h>
#include <stdio.h>

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
