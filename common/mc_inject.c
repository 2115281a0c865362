/* SPDX-License-Identifier: MIT */
/*
 * Will DYLD_INSERT_LIBRARIES reach this program, and will dyld let the
 * shim in?  Decided before launch, from the file, for a given Mac (struct
 * mc_inject_host), with a reason for each finding.  The slice judged is
 * the one that Mac's kernel runs (xnu grade_binary: arm64e over arm64 on
 * Apple silicon, x86_64 under Rosetta only when there is no arm64 slice
 * or the launch prefers it; x86_64 on Intel), and it is named.  Refused
 * only where the injection truly cannot happen:
 *
 *   - a program in a SIP-protected location (rootless.conf), or a script
 *     run by one, while SIP is on: AMFI has dyld strip DYLD_* from it and
 *     so from everything it starts (dyld ProcessConfig::Security,
 *     pruneEnvVars);
 *   - setuid or setgid: dyld ignores DYLD_* for them;
 *   - the hardened runtime without allow-dyld-environment-variables: dyld
 *     ignores DYLD_* (Apple's hardened-runtime documentation);
 *   - library validation (hardened, or CS_REQUIRE_LV) without
 *     disable-library-validation, unless the shim has the program's team:
 *     AMFI refuses a library of another team;
 *   - a third-party arm64e slice of the preview pointer-authentication
 *     ABI (version 0) that the kernel chose: it kills the program at
 *     exec, and does not fall back to another slice;
 *   - a running slice the shim has no slice for: an arm64e process with
 *     pointer authentication on loads only arm64e libraries (dyld
 *     GradedArchitectures archs_arm64e), one with it off (an arm64e slice
 *     of another ABI version, an Apple plugin host) and an arm64 one
 *     arm64e or arm64, an x86_64 one x86_64, and a missing inserted
 *     library is fatal.
 *
 * Warned, with the condition: a SIP-protected path while SIP is off, an
 * unsigned arm64 binary, children inheriting the shim.  The same code
 * judges job files (jobfile.c) and metalcapctl check.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_macho.h"

#define INJECT_SCRIPT_DEPTH	3

/* A finding; the verdict is the worst of them. */
void
mc_inject_say(struct mc_inject *j, enum mc_inject_level level,
    const char *fmt, ...)
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

/*
 * Where SIP protects the files, after macOS's rootless.conf
 * (/System/Library/Sandbox/rootless.conf; the entries below as published
 * for macOS 10.15, a "*" entry being a writable exception inside a
 * protected one), and Apple's System Integrity Protection Guide
 * ("Runtime Protections": DYLD_* is purged when a program protected on
 * disk is launched).  The longest entry that holds the path decides.
 * Apple's other apps in /Applications are not listed: their own
 * signatures are judged (inject_slice).  What strips DYLD_* is AMFI's
 * answer to dyld, not the path (dyld-1378 DyldProcessConfig.cpp:893-903,
 * 951-955, 984-1001): the path stands for the on-disk protection AMFI
 * goes by, and cannot be read from a Linux build.
 */
static const struct {
	const char	*dir;
	bool		 sip;
} inject_rootless[] = {
	{ "/bin", true },
	{ "/sbin", true },
	{ "/usr", true },
	{ "/usr/libexec/cups", false },	/* printer vendors' filters */
	{ "/usr/local", false },
	{ "/usr/share/man", false },
	{ "/usr/share/snmp", false },
	{ "/System", true },
	{ "/Library/Apple", true },
	{ "/Applications/Safari.app", true },
};

/* Whether dir holds path: dir itself, or a path under it. */
static bool
inject_under(const char *path, const char *dir)
{
	size_t	n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '/' ||
	    path[n] == '\0');
}

/*
 * Judged on the real path, so that a link elsewhere to /usr/bin/env is
 * protected and /usr/bin/../local/bin/x is not.  The Data volume, mounted
 * at /System/Volumes/Data, holds the writable half of the same tree
 * (/usr/local, /Library) under its own names: judged as those.
 */
bool
mc_inject_sip_path(const char *path)
{
	static const char	 data[] = "/System/Volumes/Data";
	char			 real[PATH_MAX];
	const char		*p = real;
	size_t			 i, best = 0;
	bool			 sip = false;

	if (realpath(path, real) == NULL)
		snprintf(real, sizeof real, "%s", path);
	if (inject_under(real, data))
		p = real[sizeof data - 1] ? real + sizeof data - 1 : "/";
	for (i = 0; i < sizeof inject_rootless / sizeof inject_rootless[0];
	    i++)
		if (inject_under(p, inject_rootless[i].dir) &&
		    strlen(inject_rootless[i].dir) > best) {
			best = strlen(inject_rootless[i].dir);
			sip = inject_rootless[i].sip;
		}
	return sip;
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

#define INJECT_ARM64		0x0100000cU
#define INJECT_X86_64		0x01000007U
#define INJECT_SUBTYPE_LOW	0x00ffffffU	/* xnu's ~CPU_SUBTYPE_MASK */
#define INJECT_ARM64E		2U
/* dyld mach_o/Architecture.cpp:315, 330: arm64e of ABI version 0 and 1,
 * CPU_SUBTYPE_PTRAUTH_ABI set. */
#define INJECT_ARM64E_V0	0x80000002U
#define INJECT_ARM64E_V1	0x81000002U

static bool
inject_is_arm64e(const struct mc_macho_slice *s)
{
	return s->cputype == INJECT_ARM64 &&
	    (s->cpusubtype & INJECT_SUBTYPE_LOW) == INJECT_ARM64E;
}

/*
 * The kernel's grade of a slice on Apple silicon, whose own subtype is
 * arm64e (xnu-11417.101.15 bsd/dev/arm/kern_machdep.c:40-61, 95-103): an
 * arm64e slice of the current pointer-authentication ABI (version 0) 12,
 * of another version 11, arm64 V8 10, arm64 ALL 9, anything else 0.  The
 * best wins, the first of equals (bsd/kern/mach_fat.c fatfile_getarch).
 */
static int
inject_grade(const struct mc_macho_slice *s)
{
	uint32_t	sub = s->cpusubtype & INJECT_SUBTYPE_LOW;

	if (s->cputype != INJECT_ARM64)
		return 0;
	if (sub == INJECT_ARM64E)
		return s->ptrauth_version == 0 ? 12 : 11;
	return sub == 1 ? 10 : sub == 0 ? 9 : 0;
}

/* The first x86_64 slice of m, or NULL. */
static const struct mc_macho_slice *
inject_x86_64_slice(const struct mc_macho *m)
{
	int	i;

	for (i = 0; i < m->nslices; i++)
		if (m->slices[i].cputype == INJECT_X86_64)
			return &m->slices[i];
	return NULL;
}

/*
 * The slice the host's kernel runs, or NULL when none can run there: on
 * Apple silicon the best graded arm64 slice, else x86_64 translated (the
 * grading of x86_64 for Rosetta is not in the published kernel; dyld's
 * archs_AppleSilicon, GradedArchitectures.cpp:167, puts it last); on
 * Intel x86_64 alone.  Launched preferring x86_64, x86_64 or none:
 * arch -x86_64 passes its preference to posix_spawn (system_cmds
 * arch/arch.c:227), and the kernel runs the slice of the type preferred
 * or fails the exec (xnu bsd/kern/kern_exec.c:822-857 for a universal
 * file, 1435-1461 for a thin one).  A parent under Rosetta passes its
 * affinity for x86_64 to the kernel's choice (P_AFFINITY, kern_exec.c:865),
 * which the published fatfile_getbestarch does not use: judged the same.
 */
static const struct mc_macho_slice *
inject_running_slice(const struct mc_macho *m,
    const struct mc_inject_host *host)
{
	const struct mc_macho_slice	*best = NULL;
	int				 i;

	if (!host->apple_silicon || host->x86_64)
		return inject_x86_64_slice(m);
	for (i = 0; i < m->nslices; i++)
		if (inject_grade(&m->slices[i]) > (best ? inject_grade(best) :
		    0))
			best = &m->slices[i];
	return best ? best : inject_x86_64_slice(m);
}

/*
 * Whether xnu runs an Apple arm64e program as a plugin host, keys off
 * (bsd/kern/mach_loader.c:368-430, 693-709): a platform binary with an
 * entitlement that lets it load others' libraries, or one of the
 * scripting engines named there, by the prefix of its identifier.  With
 * override-plugin-host-detection only a posix_spawn attribute turns the
 * keys off, which metalcapd does not set.
 */
static bool
inject_plugin_host(const struct mc_macho_slice *s)
{
	static const char *const engines[] = { "com.apple.perl5",
	    "com.apple.perl", "org.python.python", "com.apple.expect",
	    "com.tcltk.wish", "com.tcltk.tclsh", "com.apple.ruby",
	    "com.apple.bash", "com.apple.zsh", "com.apple.ksh" };
	size_t	i;

	if (!s->platform || s->ident[0] == '\0' || s->plugin_override)
		return false;
	if (s->plugin_lv)
		return true;
	for (i = 0; i < sizeof engines / sizeof engines[0]; i++)
		if (strncmp(s->ident, engines[i], strlen(engines[i])) == 0)
			return true;
	return false;
}

/*
 * Whether a process running slice s has pointer authentication off: an
 * arm64 one always, an arm64e one of ABI version other than 0 (xnu
 * bsd/kern/kern_exec.c:1043-1047, 1484-1490: IMGPF_NOJOP) or a plugin
 * host.  The kernel tells dyld with the apple string ptrauth_disabled=1
 * (kern_exec.c:6362, 6616; dyld DyldProcessConfig.cpp:813-822).
 */
static bool
inject_keys_off(const struct mc_macho_slice *s)
{
	return !inject_is_arm64e(s) || s->ptrauth_version != 0 ||
	    inject_plugin_host(s);
}

/*
 * The shim's slice that a process running slice s loads, or NULL: dyld
 * GradedArchitectures::currentLoad (mach_o/GradedArchitectures.cpp:162,
 * 164), whose arm64 flavours compare the whole subtype
 * (Architecture.cpp:155-165): keys on, arm64e of ABI version 0 alone;
 * keys off, arm64e v0, arm64e v1, arm64 ALL, arm64 V8.  x86_64 loads
 * x86_64.
 */
static const struct mc_macho_slice *
inject_loaded_slice(const struct mc_macho *shim,
    const struct mc_macho_slice *s)
{
	static const uint32_t	order[] = { INJECT_ARM64E_V0,
	    INJECT_ARM64E_V1, 0, 1 };
	size_t			k, n = inject_keys_off(s) ? 4 : 1;
	int			i;

	if (s->cputype == INJECT_X86_64)
		return inject_x86_64_slice(shim);
	for (k = 0; k < n; k++)
		for (i = 0; i < shim->nslices; i++)
			if (shim->slices[i].cputype == INJECT_ARM64 &&
			    shim->slices[i].cpusubtype == order[k])
				return &shim->slices[i];
	return NULL;
}

/* One slice's signature against dyld's and AMFI's rules. */
static void
inject_slice(struct mc_inject *j, const struct mc_macho_slice *s,
    const struct mc_macho_slice *shim_sig)
{
	const char	*arch = mc_macho_arch_name(s->cputype, s->cpusubtype);

	/* Only native arm64 code must be signed on Apple silicon; x86_64
	 * code runs unsigned, translated by Rosetta or on an Intel Mac. */
	if (!s->is_signed && s->cputype == INJECT_X86_64) {
		mc_inject_say(j, MC_INJECT_OK, "%s: not signed, which x86_64 "
		    "code need not be (Rosetta runs it unsigned, as an Intel "
		    "Mac does): no hardened runtime, no library validation",
		    arch);
		return;
	}
	if (!s->is_signed) {
		mc_inject_say(j, MC_INJECT_WARN, "%s: not signed (Apple "
		    "silicon runs no unsigned arm64 code)", arch);
		return;
	}
	if (s->hardened && !s->allow_dyld_env)
		mc_inject_say(j, MC_INJECT_REFUSED, "%s: hardened runtime "
		    "without "
		    "com.apple.security.cs.allow-dyld-environment-variables: "
		    "dyld ignores DYLD_INSERT_LIBRARIES", arch);
	else if ((s->hardened || s->require_lv) && !s->disable_lv &&
	    (s->team[0] == '\0' || strcmp(s->team, shim_sig->team) != 0))
		mc_inject_say(j, MC_INJECT_REFUSED, "%s: library validation "
		    "(team %s) without com.apple.security.cs.disable-library-"
		    "validation: the shim is not signed by the program's team",
		    arch, s->team[0] ? s->team : "none");
	else if (s->hardened && s->disable_lv)
		mc_inject_say(j, MC_INJECT_OK, "%s: hardened runtime that "
		    "allows DYLD_* and libraries of other teams", arch);
	else if (s->hardened || s->require_lv)
		mc_inject_say(j, MC_INJECT_OK, "%s: %slibrary validation, "
		    "which the shim passes: it is signed by the program's team "
		    "(%s)", arch, s->hardened ? "hardened runtime that allows "
		    "DYLD_*; " : "", s->team);
	else
		mc_inject_say(j, MC_INJECT_OK, "%s: %s signature, no hardened "
		    "runtime", arch, s->adhoc ? "ad-hoc" : "a");
}

/* The shim's Mach-O, or for a shim that is none (the Linux build, or
 * none named): the slices make macos ships, arm64 and x86_64 (both ALL),
 * no team. */
static void
inject_shim(const char *shim, struct mc_macho *m)
{
	char	why[128];

	if (shim != NULL && mc_macho_read(shim, m, why, sizeof why) == 0)
		return;
	memset(m, 0, sizeof *m);
	m->slices[0].cputype = INJECT_ARM64;
	m->slices[1].cputype = INJECT_X86_64;
	m->slices[1].cpusubtype = 3;
	m->nslices = 2;
}

/*
 * An arm64e slice that runs: xnu kills a program not Apple's of the
 * preview ABI (version 0) at exec, past the point of return, unless
 * booted with -arm64e_preview_abi (bsd/kern/kern_exec.c:1662-1690,
 * 2369-2387); having chosen this slice, the kernel does not try another.
 * True when it does not run; else a note when its keys are off.
 */
static bool
inject_arm64e(struct mc_inject *j, const struct mc_macho *m,
    const struct mc_macho_slice *s)
{
	if (s->ptrauth_version == 0 && !s->platform) {
		mc_inject_say(j, MC_INJECT_REFUSED, "arm64e: not Apple's, and "
		    "of the preview pointer-authentication ABI (version 0): "
		    "the kernel kills it at exec without the "
		    "-arm64e_preview_abi boot-arg (xnu kern_exec.c:1662)%s",
		    m->nslices > 1 ? "; it chose this slice and does not fall "
		    "back to another" : "");
		return true;
	}
	if (s->ptrauth_version != 0)
		mc_inject_say(j, MC_INJECT_OK, "arm64e: pointer-authentication "
		    "ABI version %u, which the kernel runs as arm64, keys off "
		    "(xnu kern_exec.c:1484): it loads arm64e or arm64 "
		    "libraries", s->ptrauth_version);
	else if (inject_plugin_host(s))
		mc_inject_say(j, MC_INJECT_OK, "arm64e: an Apple plugin host "
		    "(%s), which the kernel runs keys off (xnu "
		    "mach_loader.c:368): it loads arm64e or arm64 libraries",
		    s->ident);
	return false;
}

/* The shim has no slice the process running s loads: refused. */
static void
inject_no_lib(struct mc_inject *j, const struct mc_macho_slice *s)
{
	mc_inject_say(j, MC_INJECT_REFUSED, "%s: %s runs the %s slice, and "
	    "the shim has none it can load (%s; the shim has no arm64e slice "
	    "unless built on a Mac)", j->slice, j->host, j->slice,
	    s->cputype == INJECT_X86_64 ? "an x86_64 process loads x86_64 "
	    "libraries only" : inject_keys_off(s) ? "it loads arm64e or "
	    "arm64 libraries" : "with pointer authentication on it loads "
	    "arm64e libraries of ABI version 0 only");
}

/* The Mach-O program at path (a script's interpreter already followed). */
static void
inject_binary(struct mc_inject *j, const char *path, const char *shim,
    const struct mc_inject_host *host)
{
	struct mc_macho			 m, shim_m;
	const struct mc_macho_slice	*run, *lib;
	char				 why[128];
	int				 i;

	if (mc_macho_read(path, &m, why, sizeof why) == -1) {
		mc_inject_say(j, MC_INJECT_OK, "%s: %s: nothing to check", path,
		    why);
		return;
	}
	inject_shim(shim, &shim_m);
	for (i = 0; i < m.nslices; i++)
		snprintf(j->archs + strlen(j->archs), sizeof j->archs -
		    strlen(j->archs), "%s%s", i ? "," : "", mc_macho_arch_name(
		    m.slices[i].cputype, m.slices[i].cpusubtype));
	if ((run = inject_running_slice(&m, host)) == NULL) {
		mc_inject_say(j, MC_INJECT_REFUSED, "no slice of %s runs on "
		    "%s%s", j->archs, j->host, host->x86_64 ? ": the kernel "
		    "runs the x86_64 slice asked for, or fails the exec" : "");
		return;
	}
	snprintf(j->slice, sizeof j->slice, "%s", mc_macho_arch_name(
	    run->cputype, run->cpusubtype));
	if (inject_is_arm64e(run) && inject_arm64e(j, &m, run))
		return;
	if ((lib = inject_loaded_slice(&shim_m, run)) == NULL) {
		inject_no_lib(j, run);
		return;
	}
	inject_slice(j, run, lib);
}

/* Fill j->host with what the judgement assumes of the Mac. */
static void
inject_host_name(struct mc_inject *j, const struct mc_inject_host *host)
{
	snprintf(j->host, sizeof j->host, "%s%s with SIP %s%s",
	    host->detected ? "this Mac, " : "", host->apple_silicon ?
	    "Apple silicon" : "an Intel Mac", host->sip ? "on" : "off",
	    host->x86_64 ? ", launched preferring x86_64" : "");
}

/*
 * A SIP-protected program: refused while SIP is on, whatever it would
 * start (env, a shell, a python3 stub into the Command Line Tools): dyld
 * prunes DYLD_* from its environment, which its children then inherit.
 * True when that ends the judgement.
 */
static bool
inject_sip(struct mc_inject *j, const struct mc_inject_host *host,
    const char *program, int depth)
{
	if (!mc_inject_sip_path(program))
		return false;
	if (!host->sip) {
		mc_inject_say(j, MC_INJECT_WARN, "%s is in a SIP-protected "
		    "location (rootless.conf): SIP is off on %s, so dyld keeps "
		    "DYLD_* for it", program, j->host);
		return false;
	}
	mc_inject_say(j, MC_INJECT_REFUSED, "%s%s is protected by System "
	    "Integrity Protection (a SIP location in rootless.conf): AMFI, "
	    "which decides, has dyld remove DYLD_* from such a restricted "
	    "process and so from all it starts; name the workload's own "
	    "binary (or turn SIP off)", program, depth > 0 ? ", the "
	    "script's interpreter," : "");
	return true;
}

/*
 * Launched preferring x86_64 by /usr/bin/arch: arch is in a SIP location,
 * so while SIP is on dyld removes DYLD_* from its environment (dyld-1378
 * DyldProcessConfig.cpp:941-955, pruneEnvVars :984-1010), and it execs the
 * program with that environment (system_cmds arch.c, spawnIt:
 * POSIX_SPAWN_SETEXEC with environ) unless -e puts a variable back into
 * the copy it passes.  A parent running under Rosetta passes DYLD_* on.
 */
static void
inject_arch_launch(struct mc_inject *j, const struct mc_inject_host *host,
    const char *shim)
{
	if (!host->sip) {
		mc_inject_say(j, MC_INJECT_OK, "launched by arch -x86_64: SIP "
		    "is off, so arch keeps DYLD_* and passes them on");
		return;
	}
	mc_inject_say(j, MC_INJECT_WARN, "arch -x86_64 starts it without "
	    "the shim: dyld strips DYLD_* from the SIP-protected arch; run "
	    "arch -x86_64 -e DYLD_INSERT_LIBRARIES=%s PROGRAM",
	    shim != NULL ? shim : "SHIM");
}

void
mc_inject_judge(const char *path, const char *shim, bool inherit,
    const struct mc_inject_host *host, struct mc_inject *j)
{
	char		interp[1024];
	struct stat	sb;
	int		depth;

	memset(j, 0, sizeof *j);
	inject_host_name(j, host);
	snprintf(j->program, sizeof j->program, "%s", path);
	for (depth = 0; depth < INJECT_SCRIPT_DEPTH; depth++) {
		if (stat(j->program, &sb) == -1) {
			mc_inject_say(j, MC_INJECT_REFUSED, "%s: %s",
			    j->program, strerror(errno));
			return;
		}
		if (sb.st_mode & (S_ISUID | S_ISGID))
			mc_inject_say(j, MC_INJECT_REFUSED, "%s is setuid or "
			    "setgid: dyld ignores DYLD_* for it", j->program);
		if (inject_sip(j, host, j->program, depth))
			break;
		if (inject_wrapper(j->program)) {
			mc_inject_say(j, inherit ? MC_INJECT_WARN :
			    MC_INJECT_REFUSED, "%s is a shell or env wrapper: "
			    "the shim would load into it, not the workload; "
			    "name the real binary", j->program);
			break;
		}
		inject_interpreter(j->program, interp, sizeof interp);
		if (interp[0] == '\0')
			break;
		mc_inject_say(j, MC_INJECT_OK, "%s is a script run by %s",
		    j->program, interp);
		snprintf(j->program, sizeof j->program, "%s", interp);
	}
	if (j->verdict != MC_INJECT_REFUSED)
		inject_binary(j, j->program, shim, host);
	if (host->x86_64)
		inject_arch_launch(j, host, shim);
	if (inherit)
		mc_inject_say(j, MC_INJECT_WARN, "children inherit the shim: "
		    "where SIP is off, dyld kills an arm64e child (a system "
		    "tool run by system() or popen) that gets a library "
		    "without an arm64e slice");
}
