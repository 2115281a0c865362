/* SPDX-License-Identifier: MIT */
/*
 * Property-list files on libplist: strict reading (regular file, size
 * limit, XML or binary) and atomic writing (temp file, fsync, rename, fsync
 * of the directory).  Errors are returned with a reason; nothing logs.
 */
#ifndef MC_PLIST_H
#define MC_PLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <plist/plist.h>

#define MC_PLIST_MAX_FILE	(1024 * 1024)
/* What libplist may build from one file: levels, and values expanded. */
#define MC_PLIST_MAX_DEPTH	32
#define MC_PLIST_MAX_NODES	262144
#define MC_PLIST_STR_(x)	#x
#define MC_PLIST_STR(x)		MC_PLIST_STR_(x)

int		 mc_plist_read_file(const char *path, plist_t *out, char *why,
		    size_t whylen);
int		 mc_plist_read_memory(const char *buf, size_t len,
		    plist_t *out, char *why, size_t whylen);
const char	*mc_plist_refused(const char *buf, size_t len);
int		 mc_plist_write_atomic(const char *path, plist_t plist,
		    mode_t mode, char *why, size_t whylen);
int		 mc_write_atomic(const char *path, const char *data,
		    size_t len, mode_t mode, char *why, size_t whylen);
int		 mc_write_new(const char *path, const char *data,
		    size_t len, mode_t mode, char *why, size_t whylen);
const char	*mc_plist_type_name(plist_t node);
/*
 * libplist 2.3.0 broke its API (NEWS: "plist_from_memory() gets additional
 * parameter"; plist_to_xml_free and plist_to_bin_free gave way to
 * plist_mem_free).  Debian 12 has 2.2.0, Homebrew 2.7.0: both are built
 * (make check-compat).  PLIST_IS_INT came with 2.3.0's PLIST_UINT rename,
 * so the header tells which one is there.
 */
void		 mc_plist_from_memory(const char *buf, uint32_t len,
		    plist_t *out);
void		 mc_plist_mem_free(void *mem);
char		*mc_plist_string(plist_t dict, const char *key);
bool		 mc_plist_bool(plist_t dict, const char *key, bool fallback);

#endif
