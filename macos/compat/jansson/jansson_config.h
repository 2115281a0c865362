/*
 * Compatibility header for the macOS cross-build: what jansson's configure
 * would generate from jansson_config.h.in for macOS (clang, arm64/x86_64).
 * Written for metalcap because configure cannot run for a foreign target.
 */
#ifndef JANSSON_CONFIG_H
#define JANSSON_CONFIG_H

#define JSON_INLINE			inline
#define JSON_INTEGER_IS_LONG_LONG	1
#define JSON_HAVE_LOCALECONV		1
#define JSON_HAVE_ATOMIC_BUILTINS	1
#define JSON_HAVE_SYNC_BUILTINS		1
#define JSON_PARSER_MAX_DEPTH		2048

#endif
