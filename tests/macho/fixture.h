/* SPDX-License-Identifier: MIT */
/*
 * Test support for the injection judgement (test_inject_judge,
 * test_inject_arch): the real macOS binaries fetched from npm, copies of
 * them changed in a few bytes, universal files made of their slices, and
 * the judgement's findings checked.
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_macho.h"

#define FX_BINS		MC_TEST_BUILD "/npm-macho"
#define FX_ARM64	0x0100000cU
#define FX_X86_64	0x01000007U

/* The Macs judged for. */
extern const struct mc_inject_host fx_silicon;		/* SIP on */
extern const struct mc_inject_host fx_silicon_sip_off;
extern const struct mc_inject_host fx_intel;		/* SIP on */

extern char	fx_tmpdir[64];	/* a fresh directory, for the group */

/* One slice of a universal file made by fx_make_fat. */
struct fx_slice {
	const char	*file;	/* a thin Mach-O, or a fat one and... */
	int		 index;	/* ...its slice; -1 for a thin file */
	uint32_t	 cputype, cpusubtype;
};

int	fx_setup(void **state);
int	fx_teardown(void **state);
void	fx_put_be32(uint8_t *, uint32_t);
uint32_t fx_get_be32(const uint8_t *);
uint8_t	*fx_slurp(const char *file, size_t *len);
void	fx_derive(const char *src, const char *dst, mode_t mode, long off,
	    const void *bytes, size_t len);
void	fx_write_script(const char *path, const char *body);
void	fx_make_fat(const char *dst, const struct fx_slice *, int n);
void	fx_expect_shim(const struct mc_inject_host *, const char *path,
	    const char *shim, bool inherit, enum mc_inject_level,
	    const char *text);
void	fx_expect_on(const struct mc_inject_host *, const char *path,
	    bool inherit, enum mc_inject_level, const char *text);
void	fx_expect(const char *path, bool inherit, enum mc_inject_level,
	    const char *text);
const char *fx_judged_slice(const struct mc_inject_host *, const char *path,
	    struct mc_inject *);

#endif
