/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: a Linux program's stand-in for LC_BUILD_VERSION.  On macOS the
 * linker writes the platform, the minimum OS and the SDK a program was
 * built for into its Mach-O header (-platform_version macos MIN SDK), and
 * Metal picks a compile's default language version from it.  Linked into
 * the Linux build of a program that the macOS build links that way (the
 * probe), with the Makefile's MACOS_MIN, so the simulated device answers
 * the Linux program what Metal answers the macOS one
 * (mtlsim_default_language).
 *
 * An ELF note: 4-byte name size, descriptor size and type, then the name
 * and the descriptor, each padded to 4 (System V gABI, "Note Section");
 * the descriptor is LC_BUILD_VERSION's platform, minos and sdk
 * (mach-o/loader.h, struct build_version_command).
 */
#include <stdint.h>

#include "mtlsim.h"

#ifndef MTLSIM_BUILD_MINOS
#error "MTLSIM_BUILD_MINOS: the Makefile's MACOS_MIN, as xxxx.yy.zz nibbles"
#endif
#ifndef MTLSIM_BUILD_SDK
#define MTLSIM_BUILD_SDK	MTLSIM_BUILD_MINOS
#endif

struct mtlsim_build_note {
	uint32_t	namesz, descsz, type;
	char		name[12];	/* "metalcap", padded to 4 */
	uint32_t	platform, minos, sdk;
};

__attribute__((section(".note.metalcap.build"), used, aligned(4)))
static const struct mtlsim_build_note mtlsim_build_note = {
	sizeof MTLSIM_NOTE_NAME, 12, MTLSIM_NOTE_BUILD_VERSION,
	MTLSIM_NOTE_NAME, 1 /* PLATFORM_MACOS */, MTLSIM_BUILD_MINOS,
	MTLSIM_BUILD_SDK,
};
