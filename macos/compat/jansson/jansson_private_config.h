/*
 * Compatibility header for the macOS cross-build: the feature tests
 * jansson's configure would have found true on macOS.
 */
#define HAVE_ATOMIC_BUILTINS	1
#define HAVE_CLOSE		1
#define HAVE_FCNTL_H		1
#define HAVE_GETPID		1
#define HAVE_GETTIMEOFDAY	1
#define HAVE_LOCALECONV		1
#define HAVE_OPEN		1
#define HAVE_READ		1
#define HAVE_SCHED_H		1
#define HAVE_SCHED_YIELD	1
#define HAVE_STDINT_H		1
#define HAVE_SYNC_BUILTINS	1
#define HAVE_SYS_STAT_H		1
#define HAVE_SYS_TIME_H		1
#define HAVE_SYS_TYPES_H	1
#define HAVE_UNISTD_H		1
#define USE_URANDOM		1
#define INITIAL_HASHTABLE_ORDER	3
#define HAVE_LOCALE_H		1
#define HAVE_SETLOCALE		1
#define HAVE_STRTOLL		1
/* 2.15: dtoa for reals, as its configure and CMake do by default. */
#define DTOA_ENABLED		1
