/*
 * Compatibility header for the macOS cross-build: zig 0.11 ships no
 * <paths.h>, which libuv's src/unix/process.c includes.  The values are
 * macOS's own.
 */
#ifndef _PATHS_H_
#define _PATHS_H_
#define _PATH_BSHELL	"/bin/sh"
#define _PATH_DEVNULL	"/dev/null"
#define _PATH_DEFPATH	"/usr/bin:/bin"
#endif
