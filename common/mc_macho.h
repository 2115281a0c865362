/* SPDX-License-Identifier: MIT */
/*
 * Mach-O programs as dyld and AMFI see them (mc_macho.c), and whether the
 * shim can be injected into one (mc_inject.c).  No I/O beyond reading the
 * file; no logging: findings are returned as text.
 */
#ifndef MC_MACHO_H
#define MC_MACHO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_MACHO_MAX_SLICES	8

struct mc_macho_slice {
	uint32_t	cputype;
	uint32_t	cpusubtype;
	unsigned	ptrauth_version; /* arm64e: the pointer-auth ABI's */
	bool		is_signed;
	bool		adhoc;
	bool		hardened;	/* CS_RUNTIME */
	bool		require_lv;	/* CS_REQUIRE_LV */
	bool		allow_dyld_env;	/* ...allow-dyld-environment-variables */
	bool		disable_lv;	/* ...disable-library-validation */
	bool		platform;	/* Apple's own: CodeDirectory platform */
	bool		plugin_lv;	/* an entitlement xnu takes for a plugin
					   host: disable-library-validation,
					   or Apple's private two */
	bool		plugin_override; /* ...override-plugin-host-detection */
	uint32_t	cs_flags;
	char		team[32];	/* "" when none */
	char		ident[128];	/* the CodeDirectory's identifier, cut */
	/* LC_BUILD_VERSION's, else LC_VERSION_MIN_MACOSX's: xxxx.yy.zz in
	 * nibbles; 0 when the slice has neither. */
	uint32_t	minos;
	uint32_t	sdk;
	bool		build_version;	/* from LC_BUILD_VERSION */
};

struct mc_macho {
	struct mc_macho_slice	slices[MC_MACHO_MAX_SLICES];
	int			nslices;
};

int		 mc_macho_read(const char *path, struct mc_macho *,
		    char *why, size_t whylen);
const char	*mc_macho_arch_name(uint32_t cputype, uint32_t cpusubtype);
unsigned long	 mc_macho_default_msl(uint32_t sdk);

/* The judgement: what stands in the way of the injection, if anything. */
enum mc_inject_level {
	MC_INJECT_OK,		/* nothing known stands in the way */
	MC_INJECT_WARN,		/* it may not work: the reason says when */
	MC_INJECT_REFUSED,	/* it cannot work: the program runs stock */
};

#define MC_INJECT_MAX_FINDINGS	12

/*
 * The Mac the program will run on: which of its slices the kernel runs,
 * and whether dyld strips DYLD_* from SIP-protected programs there; and
 * how it is launched: preferring x86_64 (arch -x86_64, a parent running
 * under Rosetta), the x86_64 slice runs where there is one.
 */
struct mc_inject_host {
	bool	apple_silicon;	/* else an Intel Mac */
	bool	sip;		/* System Integrity Protection on */
	bool	detected;	/* read from this Mac; else the default */
	bool	x86_64;		/* launched preferring x86_64 */
};

struct mc_inject {
	enum mc_inject_level	 verdict;	/* the worst finding */
	int			 n;
	struct {
		enum mc_inject_level	level;
		char			text[256];
	}			 findings[MC_INJECT_MAX_FINDINGS];
	char			 program[1024];	/* judged, after #! */
	char			 archs[64];	/* "arm64,x86_64" */
	char			 slice[16];	/* the one judged: what runs */
	char			 host[96];	/* the Mac judged for */
};

void	mc_inject_judge(const char *path, const char *shim, bool inherit,
	    const struct mc_inject_host *, struct mc_inject *);
const char *mc_inject_level_name(enum mc_inject_level);
bool	mc_inject_sip_path(const char *path);
void	mc_inject_say(struct mc_inject *, enum mc_inject_level,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
