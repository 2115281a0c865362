/* SPDX-License-Identifier: MIT */
/*
 * Can the shim be injected into a program?  Read from the program itself,
 * before it is launched: its Mach-O slices (fat or thin), and each slice's
 * code signature -- the CodeDirectory's flags (hardened runtime, library
 * validation), its team, and its entitlements -- as dyld and AMFI will
 * judge them (see docs/libmetalcap.7, "Where injection cannot work").
 *
 * The file is anyone's bytes: it is read with pread at offsets checked
 * against its size, only the headers and the signature (a few KB of an
 * 80 MB binary), and nothing it says is trusted past a bound.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_macho.h"
#include "mc_plist.h"
#include "mc_util.h"

#define FAT_MAGIC		0xcafebabeU
#define FAT_MAGIC_64		0xcafebabfU
#define MH_MAGIC_64		0xfeedfacfU
#define MH_MAGIC		0xfeedfaceU
#define LC_CODE_SIGNATURE	0x1dU
#define LC_VERSION_MIN_MACOSX	0x24U
#define LC_BUILD_VERSION	0x32U
#define CSMAGIC_EMBEDDED	0xfade0cc0U
#define CSMAGIC_CODEDIRECTORY	0xfade0c02U
#define CSMAGIC_ENTITLEMENTS	0xfade7171U
#define CS_ADHOC		0x0002U
#define CS_REQUIRE_LV		0x2000U
#define CS_RUNTIME		0x10000U
#define PLATFORM_MACOS		1U
#define CPU_TYPE_X86_64		0x01000007U
#define CPU_TYPE_ARM64		0x0100000cU
#define CPU_SUBTYPE_MASK	0x00ffffffU
#define CPU_SUBTYPE_ARM64E	2U
/* xnu osfmk/mach/machine.h CPU_SUBTYPE_ARM64_PTR_AUTH_VERSION: the
 * pointer-authentication ABI version of an arm64e slice, bits 24-27 (bit
 * 31, CPU_SUBTYPE_PTRAUTH_ABI, says the slice is versioned at all; macOS's
 * kernel reads the version without it: bsd/kern/kern_exec.c:1668-1669). */
#define PTR_AUTH_VERSION(sub)	(((sub) & 0x0f000000U) >> 24)

#define macho_be32(p)		((uint32_t)mc_be((p), 4))
#define macho_be64(p)		mc_be((p), 8)
#define MACHO_MAX_CMDS		(1024 * 1024)	/* bytes of load commands */
#define MACHO_MAX_SIGNATURE	(4 * 1024 * 1024)

static uint32_t
macho_le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[1] << 8 | p[0];
}

/* len bytes at off, all inside the file; -1 otherwise. */
static int
macho_pread(int fd, uint64_t size, uint64_t off, void *buf, size_t len)
{
	ssize_t	n;

	if (off > size || len > size - off)
		return -1;
	n = pread(fd, buf, len, (off_t)off);
	return n == (ssize_t)len ? 0 : -1;
}

const char *
mc_macho_arch_name(uint32_t cputype, uint32_t cpusubtype)
{
	if (cputype == CPU_TYPE_X86_64)
		return "x86_64";
	if (cputype == CPU_TYPE_ARM64)
		return (cpusubtype & CPU_SUBTYPE_MASK) == CPU_SUBTYPE_ARM64E ?
		    "arm64e" : "arm64";
	return "other";
}

/* The entitlements the judgement needs, from the XML blob. */
static void
macho_entitlements(struct mc_macho_slice *s, const uint8_t *xml, size_t len)
{
	plist_t		root;
	char		why[128];

	if (mc_plist_read_memory((const char *)xml, len, &root, why,
	    sizeof why) == -1)
		return;
	s->allow_dyld_env = mc_plist_bool(root,
	    "com.apple.security.cs.allow-dyld-environment-variables", false);
	s->disable_lv = mc_plist_bool(root,
	    "com.apple.security.cs.disable-library-validation", false);
	/* xnu bsd/kern/mach_loader.c:384-404 (xnu-11417.101.15),
	 * CLEAR_LV_ENTITLEMENT and OVERRIDE_PLUGIN_HOST_ENTITLEMENT from
	 * bsd/sys/codesign.h:37-38. */
	s->plugin_lv = s->disable_lv || mc_plist_bool(root,
	    "com.apple.private.cs.automator-plugins", false) ||
	    mc_plist_bool(root,
	    "com.apple.private.security.clear-library-validation", false);
	s->plugin_override = mc_plist_bool(root,
	    "com.apple.private.security.override-plugin-host-detection",
	    false);
	plist_free(root);
}

/* The string at off in the blob of len bytes, cut to fit out; or "". */
static void
macho_string(const uint8_t *blob, size_t len, uint32_t off, char *out,
    size_t outlen)
{
	size_t	n;

	out[0] = '\0';
	if (off == 0 || off >= len)
		return;
	n = strnlen((const char *)blob + off, len - off);
	if (n == len - off)
		return;		/* no end inside the blob */
	snprintf(out, outlen, "%.*s", (int)n, (const char *)blob + off);
}

/* The CodeDirectory: flags, identifier, the team from version 0x20200. */
static void
macho_code_directory(struct mc_macho_slice *s, const uint8_t *cd, size_t len)
{
	uint32_t	version, team;
	size_t		n;

	if (len < 52)
		return;
	macho_string(cd, len, macho_be32(cd + 20), s->ident, sizeof s->ident);
	version = macho_be32(cd + 8);
	s->cs_flags = macho_be32(cd + 12);
	s->adhoc = (s->cs_flags & CS_ADHOC) != 0;
	s->hardened = (s->cs_flags & CS_RUNTIME) != 0;
	s->require_lv = (s->cs_flags & CS_REQUIRE_LV) != 0;
	/* uint8_t platform after hashSize and hashType (cs_blobs.h). */
	s->platform = cd[38] != 0;
	team = macho_be32(cd + 48);
	if (version < 0x20200 || team == 0 || team >= len)
		return;
	n = strnlen((const char *)cd + team, len - team);
	if (n < len - team && n < sizeof s->team)
		memcpy(s->team, cd + team, n + 1);
}

/* The embedded signature's SuperBlob: its CodeDirectory, entitlements. */
static void
macho_signature(struct mc_macho_slice *s, const uint8_t *sig, size_t len)
{
	uint32_t	count, i, off, magic, blen;
	bool		have_cd = false;

	if (len < 12 || macho_be32(sig) != CSMAGIC_EMBEDDED)
		return;
	s->is_signed = true;
	count = macho_be32(sig + 8);
	for (i = 0; i < count && 12 + (size_t)i * 8 + 8 <= len; i++) {
		off = macho_be32(sig + 12 + i * 8 + 4);
		if (off >= len || len - off < 8)
			continue;
		magic = macho_be32(sig + off);
		blen = macho_be32(sig + off + 4);
		if (blen < 8 || blen > len - off)
			continue;
		if (magic == CSMAGIC_CODEDIRECTORY && !have_cd) {
			macho_code_directory(s, sig + off, blen);
			have_cd = true;
		} else if (magic == CSMAGIC_ENTITLEMENTS)
			macho_entitlements(s, sig + off + 8, blen - 8);
	}
}

/*
 * The versions a slice was built for (mach-o/loader.h): LC_BUILD_VERSION's
 * platform, minos, sdk at 8, 12, 16; LC_VERSION_MIN_MACOSX's version, sdk
 * at 8, 12.  The first LC_BUILD_VERSION wins over the older command.
 */
static void
macho_build_version(struct mc_macho_slice *s, uint32_t cmd, const uint8_t *lc)
{
	if (cmd == LC_BUILD_VERSION && macho_le32(lc + 8) == PLATFORM_MACOS &&
	    !s->build_version) {
		s->minos = macho_le32(lc + 12);
		s->sdk = macho_le32(lc + 16);
		s->build_version = true;
	} else if (cmd == LC_VERSION_MIN_MACOSX && !s->build_version &&
	    s->minos == 0) {
		s->minos = macho_le32(lc + 8);
		s->sdk = macho_le32(lc + 12);
	}
}

/*
 * The MTLLanguageVersion Metal gives a compile that sets none, for a main
 * executable built with this SDK (LC_BUILD_VERSION's sdk; 0: unknown, 0):
 * 11 -> 2.3, 12 -> 2.4, 13 -> 3.0, 14 -> 3.1, 15 -> 3.2, 26 -> 4.0, the
 * releases each enumerator came with.  Field reports: xorbitsai/xllamacpp
 * PR #174, hybridgroup/yzma#226, lmstudio-bug-tracker#2040; that the SDK
 * field rather than minos decides is inferred (tests/sim/README.md).
 */
unsigned long
mc_macho_default_msl(uint32_t sdk)
{
	static const uint32_t	os[] = { 0x1a0000, 0x0f0000, 0x0e0000,
	    0x0d0000, 0x0c0000, 0x0b0000 };
	static const unsigned long msl[] = { 0x40000, 0x30002, 0x30001,
	    0x30000, 0x20004, 0x20003 };
	size_t			i;

	if (sdk == 0)
		return 0;
	for (i = 0; i < sizeof os / sizeof os[0]; i++)
		if (sdk >= os[i])
			return msl[i];
	return 0x20002;		/* 10.15 and before: 2.2 at most */
}

/* One thin Mach-O at off (size bytes): its type and its signature. */
static const char *
macho_slice(int fd, uint64_t fsize, uint64_t off, uint64_t size,
    struct mc_macho_slice *s)
{
	uint8_t		 hdr[32], *cmds = NULL, *sig;
	uint32_t	 ncmds, sizeofcmds, i, cmd, cmdsize, dataoff, datasize;
	size_t		 at;
	int		 sig_seen = 0;

	if (macho_pread(fd, fsize, off, hdr, sizeof hdr) == -1)
		return "a slice past the end of the file";
	if (macho_le32(hdr) == MH_MAGIC) {
		s->cputype = macho_le32(hdr + 4);
		return NULL;	/* 32-bit: no macOS of ours runs it */
	}
	if (macho_le32(hdr) != MH_MAGIC_64)
		return "a slice that is not a Mach-O file";
	s->cputype = macho_le32(hdr + 4);
	s->cpusubtype = macho_le32(hdr + 8);
	if (s->cputype == CPU_TYPE_ARM64 &&
	    (s->cpusubtype & CPU_SUBTYPE_MASK) == CPU_SUBTYPE_ARM64E)
		s->ptrauth_version = PTR_AUTH_VERSION(s->cpusubtype);
	ncmds = macho_le32(hdr + 16);
	sizeofcmds = macho_le32(hdr + 20);
	if (sizeofcmds > MACHO_MAX_CMDS || sizeofcmds > size - 32)
		return "load commands larger than the slice";
	if ((cmds = malloc(sizeofcmds + 1)) == NULL ||
	    macho_pread(fd, fsize, off + 32, cmds, sizeofcmds) == -1) {
		free(cmds);
		return "load commands past the end of the file";
	}
	for (i = 0, at = 0; i < ncmds && at + 8 <= sizeofcmds; i++,
	    at += cmdsize) {
		cmd = macho_le32(cmds + at);
		cmdsize = macho_le32(cmds + at + 4);
		if (cmdsize < 8 || cmdsize > sizeofcmds - at)
			break;
		if ((cmd == LC_BUILD_VERSION && cmdsize >= 24) ||
		    (cmd == LC_VERSION_MIN_MACOSX && cmdsize >= 16)) {
			macho_build_version(s, cmd, cmds + at);
			continue;
		}
		if (cmd != LC_CODE_SIGNATURE || cmdsize < 16 || sig_seen++)
			continue;
		dataoff = macho_le32(cmds + at + 8);
		datasize = macho_le32(cmds + at + 12);
		if (datasize > MACHO_MAX_SIGNATURE || dataoff > size ||
		    datasize > size - dataoff)
			break;
		if ((sig = malloc(datasize ? datasize : 1)) != NULL &&
		    macho_pread(fd, fsize, off + dataoff, sig, datasize) == 0)
			macho_signature(s, sig, datasize);
		free(sig);
	}
	free(cmds);
	return NULL;
}

/* The slices of a fat file, each read in turn. */
static const char *
macho_fat(int fd, uint64_t fsize, const uint8_t *hdr, struct mc_macho *m)
{
	bool		 wide = macho_be32(hdr) == FAT_MAGIC_64;
	size_t		 entry = wide ? 32 : 20;
	uint32_t	 n = macho_be32(hdr + 4), i;
	uint8_t		 arch[32];
	uint64_t	 off, size;
	const char	*why;

	/* Java class files share 0xcafebabe; their "count" is a version. */
	if (n == 0 || n > MC_MACHO_MAX_SLICES)
		return "not a Mach-O file";
	for (i = 0; i < n; i++) {
		if (macho_pread(fd, fsize, 8 + (uint64_t)i * entry, arch, entry)
		    == -1)
			return "a fat header past the end of the file";
		off = wide ? macho_be64(arch + 8) : macho_be32(arch + 8);
		size = wide ? macho_be64(arch + 16) : macho_be32(arch + 12);
		if (off > fsize || size > fsize - off)
			return "a slice past the end of the file";
		if ((why = macho_slice(fd, fsize, off, size,
		    &m->slices[m->nslices])) != NULL)
			return why;
		m->nslices++;
	}
	return NULL;
}

int
mc_macho_read(const char *path, struct mc_macho *m, char *why, size_t len)
{
	struct stat	 sb;
	uint8_t		 hdr[8];
	const char	*bad;
	int		 fd;

	memset(m, 0, sizeof *m);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY))
	    == -1) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    macho_pread(fd, (uint64_t)sb.st_size, 0, hdr, sizeof hdr) == -1) {
		close(fd);
		snprintf(why, len, "not a Mach-O file");
		return -1;
	}
	if (macho_be32(hdr) == FAT_MAGIC || macho_be32(hdr) == FAT_MAGIC_64)
		bad = macho_fat(fd, (uint64_t)sb.st_size, hdr, m);
	else if (macho_le32(hdr) == MH_MAGIC_64 || macho_le32(hdr) == MH_MAGIC) {
		bad = macho_slice(fd, (uint64_t)sb.st_size, 0,
		    (uint64_t)sb.st_size, &m->slices[0]);
		m->nslices = bad == NULL;
	} else
		bad = "not a Mach-O file";
	close(fd);
	if (bad != NULL) {
		snprintf(why, len, "%s", bad);
		return -1;
	}
	return 0;
}
