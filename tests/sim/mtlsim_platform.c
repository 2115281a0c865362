/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: what the simulated platform decides around a kernel rather
 * than in it.
 *
 * - Metal's default shading-language version, when a compile sets none,
 *   follows the main executable's build version (the SDK field of its
 *   LC_BUILD_VERSION on macOS).  A Linux program carries the same numbers
 *   in an ELF note (mtlsim_build_note.c); one without the note plays a
 *   program built with the guest's own SDK.
 * - The preprocessor's `#if __METAL_VERSION__ >= N` guards: a kernel
 *   inside a guard its language version fails is not in the library.
 * - Whether memory is a mapping of a file, for newBufferWithBytesNoCopy
 *   over ggml's mmapped weights.
 *
 * Sources: tests/sim/README.md, "The default language version" and "No-copy
 * buffers over a file mapping".
 */
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mtlsim.h"

/*
 * MTLLanguageVersion by macOS release (the SDK's MTLLibrary.h availability
 * of each enumerator): 2_0 10.13, 2_1 10.14, 2_2 10.15, 2_3 11, 2_4 12,
 * 3_0 13, 3_1 14, 3_2 15, 4_0 26.  Versions as LC_BUILD_VERSION encodes
 * them: xxxx.yy.zz in nibbles.
 */
static const struct {
	uint32_t	os;
	unsigned long	language;
} mtlsim_languages[] = {
	{ 0x1a0000, 0x40000 },	/* 26 */
	{ 0x0f0000, 0x30002 },	/* 15 */
	{ 0x0e0000, 0x30001 },	/* 14 */
	{ 0x0d0000, 0x30000 },	/* 13 */
	{ 0x0c0000, 0x20004 },	/* 12 */
	{ 0x0b0000, 0x20003 },	/* 11 */
	{ 0x0a0f00, 0x20002 },	/* 10.15 */
	{ 0x0a0e00, 0x20001 },	/* 10.14 */
	{ 0x0a0d00, 0x20000 },	/* 10.13 */
};

unsigned long
mtlsim_language_for(uint32_t os)
{
	size_t	i;

	for (i = 0; i < sizeof mtlsim_languages / sizeof mtlsim_languages[0];
	    i++)
		if (os >= mtlsim_languages[i].os)
			return mtlsim_languages[i].language;
	return 0x10002;		/* MTLLanguageVersion1_2, 10.12 and before */
}

struct mtlsim_note_find {
	uint32_t	minos, sdk;
	bool		found;
};

/* The build-version note in one PT_NOTE segment, if there. */
static void
mtlsim_scan_notes(const char *p, size_t len, struct mtlsim_note_find *f)
{
	const uint32_t	*h;
	size_t		 at = 0, name, desc;

	while (at + 12 <= len) {
		h = (const uint32_t *)(const void *)(p + at);
		name = (h[0] + 3) & ~(size_t)3;
		desc = (h[1] + 3) & ~(size_t)3;
		if (at + 12 + name + desc > len)
			return;
		if (h[0] == sizeof MTLSIM_NOTE_NAME && h[2] ==
		    MTLSIM_NOTE_BUILD_VERSION && h[1] >= 12 &&
		    memcmp(p + at + 12, MTLSIM_NOTE_NAME, h[0]) == 0) {
			h = (const uint32_t *)(const void *)(p + at + 12 +
			    name);
			f->minos = h[1];
			f->sdk = h[2];
			f->found = true;
			return;
		}
		at += 12 + name + desc;
	}
}

/* dl_iterate_phdr reports the main program first: read it and stop. */
static int
mtlsim_main_note(struct dl_phdr_info *info, size_t size, void *arg)
{
	int	i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE)
			mtlsim_scan_notes((const char *)(info->dlpi_addr +
			    info->dlpi_phdr[i].p_vaddr),
			    info->dlpi_phdr[i].p_memsz, arg);
	return 1;
}

int
mtlsim_build_version(uint32_t *minos, uint32_t *sdk)
{
	struct mtlsim_note_find	f = { 0, 0, false };

	dl_iterate_phdr(mtlsim_main_note, &f);
	if (!f.found)
		return -1;
	*minos = f.minos;
	*sdk = f.sdk;
	return 0;
}

/* What a compile with no languageVersion gets in this process. */
unsigned long
mtlsim_default_language(void)
{
	uint32_t	minos, sdk;

	if (mtlsim_build_version(&minos, &sdk) == -1)
		return MTLSIM_GUEST_LANGUAGE;
	return mtlsim_language_for(sdk);
}

/* __METAL_VERSION__ at a language version: 3.1 is 310. */
static unsigned
mtlsim_metal_version(unsigned long language)
{
	return (unsigned)((language >> 16) * 100 + (language & 0xffff) * 10);
}

/*
 * Whether `kernel void FUNCTION(` survives the preprocessor.  Only the
 * conditionals these sources use are evaluated: `#if __METAL_VERSION__`
 * compared with `>=` or `<`; any other #if, #ifdef or #ifndef is taken as
 * true.  At most 16 levels deep.
 */
bool
mtlsim_source_keeps(const char *source, const char *function,
    unsigned long language)
{
	char		 decl[128];
	const char	*end, *p;
	bool		 on[16];
	unsigned	 depth = 0, n, v = mtlsim_metal_version(language), k;

	snprintf(decl, sizeof decl, "kernel void %s(", function);
	if ((end = strstr(source, decl)) == NULL)
		return false;
	for (p = source; p != NULL && p < end; p = strchr(p, '\n'),
	    p += p != NULL) {
		p += strspn(p, " \t");
		if (strncmp(p, "#if", 3) == 0 && depth < 16)
			on[depth++] = sscanf(p, "#if __METAL_VERSION__ >= %u",
			    &n) == 1 ? v >= n : sscanf(p,
			    "#if __METAL_VERSION__ < %u", &n) == 1 ? v < n :
			    true;
		else if (strncmp(p, "#else", 5) == 0 && depth > 0)
			on[depth - 1] = !on[depth - 1];
		else if (strncmp(p, "#endif", 6) == 0 && depth > 0)
			depth--;
	}
	for (k = 0; k < depth; k++)
		if (!on[k])
			return false;
	return true;
}

/* Whether addr is in a mapping of a file: /proc/self/maps gives an inode. */
bool
mtlsim_file_backed(const void *addr)
{
	FILE			*f = fopen("/proc/self/maps", "r");
	char			 line[512];
	unsigned long		 lo, hi, inode;
	uintptr_t		 a = (uintptr_t)addr;
	bool			 file = false;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi,
		    &inode) == 3 && a >= lo && a < hi) {
			file = inode != 0;
			break;
		}
	fclose(f);
	return file;
}

void
mtlsim_nocopy_read(const struct mtlsim_dispatch *d)
{
	const float	*x = d->buffers[0];
	float		*y = d->buffers[1];
	size_t		 i, n = d->threadgroups * d->threads_per_group;

	for (i = 0; i < n && (i + 1) * sizeof(float) <= d->sizes[0] &&
	    (i + 1) * sizeof(float) <= d->sizes[1]; i++)
		y[i] = x[i] + 1.0f;
}
