/* SPDX-License-Identifier: MIT */
/*
 * Will DYLD_INSERT_LIBRARIES reach this program, and will dyld let the
 * shim in?  Decided before launch, from the file, with a reason for each
 * finding.  Refused only where the injection truly cannot happen:
 *
 *   - setuid or setgid: dyld ignores DYLD_* for them;
 *   - the hardened runtime without allow-dyld-environment-variables: dyld
 *     ignores DYLD_* (Apple's hardened-runtime documentation);
 *   - library validation (hardened, or CS_REQUIRE_LV) without
 *     disable-library-validation, unless the shim has the program's team:
 *     AMFI refuses a library of another team;
 *   - only arm64e slices and a shim with none: dyld cannot load it.
 *
 * Warned, with the condition: a SIP-protected path (DYLD_* stripped while
 * SIP is on), a #! script whose interpreter is one, an unsigned arm64
 * binary, children inheriting the shim.  The same code judges job files
 * (jobfile.c) and metalcapctl check.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mc_macho.h"

#define INJECT_SCRIPT_DEPTH	3

static void
inject_say(struct mc_inject *j, enum mc_inject_level level, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

static void
inject_say(struct mc_inject *j, enum mc_inject_level level, const char *fmt,
    ...)
{
	va_list	ap;

	if (level > j->verdict)
		j->verdict = level;
	if (j->n == MC_INJECT_MAX_FINDINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(j->findings[j->n].text, sizeof j->findings[0].text, fmt, ap);
	va_end(ap);
	j->findings[j->n++].level = level;
}

const char *
mc_inject_level_name(enum mc_inject_level level)
{
	return level == MC_INJECT_OK ? "ok" : level == MC_INJECT_WARN ?
	    "warning" : "refused";
}

/* Paths macOS protects with SIP: DYLD_* is stripped for what runs there. */
static bool
inject_sip_path(const char *path)
{
	static const char *const sip[] = { "/bin/", "/sbin/", "/usr/bin/",
	    "/usr/sbin/", "/usr/libexec/", "/System/" };
	size_t	i;

	for (i = 0; i < sizeof sip / sizeof sip[0]; i++)
		if (strncmp(path, sip[i], strlen(sip[i])) == 0)
			return true;
	return false;
}

/*
 * A shell or env starts the workload as a child: the shim would load into
 * the wrapper, and, children not inheriting it, never reach the workload.
 * Interpreters that are the workload (python3 with MLX) are not wrappers.
 */
static bool
inject_wrapper(const char *path)
{
	static const char *const wrappers[] = { "sh", "bash", "zsh", "dash",
	    "ksh", "csh", "tcsh", "fish", "env" };
	const char	*base = strrchr(path, '/');
	size_t		 i;

	base = base ? base + 1 : path;
	for (i = 0; i < sizeof wrappers / sizeof wrappers[0]; i++)
		if (strcmp(base, wrappers[i]) == 0)
			return true;
	return false;
}

/* The interpreter of a #! script at path, or "" when it is not one. */
static void
inject_interpreter(const char *path, char *out, size_t len)
{
	char	line[512];
	ssize_t	n;
	int	fd;

	out[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY))
	    == -1)
		return;
	n = read(fd, line, sizeof line - 1);
	close(fd);
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return;
	line[n] = '\0';
	n = (ssize_t)strspn(line + 2, " \t") + 2;
	snprintf(out, len, "%.*s", (int)strcspn(line + n, " \t\r\n"), line + n);
}

/* Does the shim have a slice this program slice can load? */
static bool
inject_arch_served(const struct mc_macho *shim, const struct mc_macho_slice *s)
{
	int	i;

	for (i = 0; i < shim->nslices; i++)
		if (shim->slices[i].cputype == s->cputype &&
		    strcmp(mc_macho_arch_name(shim->slices[i].cputype,
		    shim->slices[i].cpusubtype), mc_macho_arch_name(s->cputype,
		    s->cpusubtype)) == 0)
			return true;
	return false;
}

/* One slice's signature against dyld's and AMFI's rules. */
static void
inject_slice(struct mc_inject *j, const struct mc_macho_slice *s,
    const struct mc_macho_slice *shim_sig)
{
	const char	*arch = mc_macho_arch_name(s->cputype, s->cpusubtype);

	if (!s->is_signed) {
		inject_say(j, MC_INJECT_WARN, "%s: not signed (Apple silicon "
		    "runs no unsigned arm64 code)", arch);
		return;
	}
	if (s->hardened && !s->allow_dyld_env)
		inject_say(j, MC_INJECT_REFUSED, "%s: hardened runtime without "
		    "com.apple.security.cs.allow-dyld-environment-variables: "
		    "dyld ignores DYLD_INSERT_LIBRARIES", arch);
	else if ((s->hardened || s->require_lv) && !s->disable_lv &&
	    (s->team[0] == '\0' || strcmp(s->team, shim_sig->team) != 0))
		inject_say(j, MC_INJECT_REFUSED, "%s: library validation "
		    "(team %s) without com.apple.security.cs.disable-library-"
		    "validation: the shim is not signed by the program's team",
		    arch, s->team[0] ? s->team : "none");
	else if (s->hardened)
		inject_say(j, MC_INJECT_OK, "%s: hardened runtime that allows "
		    "DYLD_* and libraries of other teams", arch);
	else
		inject_say(j, MC_INJECT_OK, "%s: %s signature, no hardened "
		    "runtime", arch, s->adhoc ? "ad-hoc" : "a");
}

/* The Mach-O program at path (a script's interpreter already followed). */
static void
inject_binary(struct mc_inject *j, const char *path, const char *shim)
{
	struct mc_macho		 m, shim_m;
	struct mc_macho_slice	 none = { 0 };
	char			 why[128];
	int			 i, served = 0;

	if (mc_macho_read(path, &m, why, sizeof why) == -1) {
		inject_say(j, MC_INJECT_OK, "%s: %s: nothing to check", path,
		    why);
		return;
	}
	/* A shim that is no Mach-O (the Linux build): the slices make
	 * macos ships, arm64 and x86_64, and no team. */
	if (shim == NULL || mc_macho_read(shim, &shim_m, why, sizeof why) ==
	    -1) {
		memset(&shim_m, 0, sizeof shim_m);
		shim_m.slices[0].cputype = 0x0100000cU;
		shim_m.slices[1].cputype = 0x01000007U;
		shim_m.nslices = 2;
	}
	for (i = 0; i < m.nslices; i++) {
		snprintf(j->archs + strlen(j->archs), sizeof j->archs -
		    strlen(j->archs), "%s%s", i ? "," : "", mc_macho_arch_name(
		    m.slices[i].cputype, m.slices[i].cpusubtype));
		if (!inject_arch_served(&shim_m, &m.slices[i]))
			continue;
		served++;
		inject_slice(j, &m.slices[i], shim_m.nslices > 0 &&
		    shim_m.slices[0].is_signed ? &shim_m.slices[0] : &none);
	}
	if (served == 0)
		inject_say(j, MC_INJECT_REFUSED, "no slice the shim can serve "
		    "(%s; the shim has no arm64e slice unless built on a Mac)",
		    j->archs);
}

void
mc_inject_judge(const char *path, const char *shim, bool inherit,
    struct mc_inject *j)
{
	char		interp[1024];
	struct stat	sb;
	int		depth;

	memset(j, 0, sizeof *j);
	snprintf(j->program, sizeof j->program, "%s", path);
	for (depth = 0; depth < INJECT_SCRIPT_DEPTH; depth++) {
		if (stat(j->program, &sb) == -1) {
			inject_say(j, MC_INJECT_REFUSED, "%s: %s", j->program,
			    strerror(errno));
			return;
		}
		if (sb.st_mode & (S_ISUID | S_ISGID))
			inject_say(j, MC_INJECT_REFUSED, "%s is setuid or "
			    "setgid: dyld ignores DYLD_* for it", j->program);
		if (inject_sip_path(j->program))
			inject_say(j, MC_INJECT_WARN, "%s is under a "
			    "SIP-protected path: macOS strips DYLD_* there "
			    "unless System Integrity Protection is off",
			    j->program);
		if (inject_wrapper(j->program)) {
			inject_say(j, inherit ? MC_INJECT_WARN :
			    MC_INJECT_REFUSED, "%s is a shell or env wrapper: "
			    "the shim would load into it, not the workload; "
			    "name the real binary", j->program);
			break;
		}
		inject_interpreter(j->program, interp, sizeof interp);
		if (interp[0] == '\0')
			break;
		inject_say(j, MC_INJECT_OK, "%s is a script run by %s",
		    j->program, interp);
		snprintf(j->program, sizeof j->program, "%s", interp);
	}
	if (j->verdict != MC_INJECT_REFUSED)
		inject_binary(j, j->program, shim);
	if (inherit)
		inject_say(j, MC_INJECT_WARN, "children inherit the shim: "
		    "where SIP is off, dyld kills an arm64e child (a system "
		    "tool run by system() or popen) that gets a library "
		    "without an arm64e slice");
}
