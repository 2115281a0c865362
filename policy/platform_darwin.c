/* SPDX-License-Identifier: MIT */
/*
 * macOS side of the platform seam: ~/Library directories (the socket
 * beside the configuration, so the agent and an SSH shell agree and no
 * cleaner removes it), getpeereid, _NSGetExecutablePath, kqueue.
 * Cross-compiled, not run by CI.
 */
#include <sys/event.h>
#include <sys/socket.h>
#include <sys/sysctl.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <ifaddrs.h>
#include <libgen.h>
#include <libproc.h>
#include <malloc/malloc.h>
#include <mach-o/dyld.h>
#include <net/if_dl.h>
#include <time.h>
#include <uuid/uuid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_util.h"
#include "mc_macho.h"
#include "policy.h"

#define PLATFORM_SUN_PATH	sizeof ((struct sockaddr_un *)0)->sun_path

/*
 * The hardware UUID (IOPlatformUUID, what System Information shows), which
 * the hypervisor gives each VM, through gethostuuid(2).  -1 when it does
 * not answer.
 */
int
platform_machine_id(char *buf, size_t len)
{
	struct timespec	wait = { 1, 0 };
	uuid_t		id;
	uuid_string_t	text;

	if (gethostuuid(id, &wait) == -1)
		return -1;
	uuid_unparse_upper(id, text);
	snprintf(buf, len, "%s", text);
	return 0;
}

int
platform_default_dirs(char *config, char *state, char *runtime, char *logs,
    char *agents, size_t len)
{
	const char	*home = getenv("HOME");

	if (home == NULL)
		return -1;
	snprintf(config, len, "%s/Library/Application Support/metalcap", home);
	snprintf(state, len, "%s/Library/Application Support/metalcap/state",
	    home);
	/*
	 * Not in $TMPDIR (_CS_DARWIN_USER_TEMP_DIR): macOS deletes files
	 * there that go unused for days, tmux's old trouble.  Beside the
	 * configuration, unless that path is over the 104 bytes a socket
	 * path may have; then a private folder in /tmp.
	 */
	paths_run_dir(config, PLATFORM_SUN_PATH, runtime, len);
	snprintf(logs, len, "%s/Library/Logs/metalcap", home);
	/*
	 * Not ~/Library/LaunchAgents, which launchd loads at login: a
	 * stopped or failed job's agent there would start again, shim and
	 * all, and go on starting after an uninstall (metalcapd(8), DESIGN).
	 */
	snprintf(agents, len, "%s/Library/Application Support/metalcap/agents",
	    home);
	return 0;
}

/* The folder launchd loads the user's agents from at login. */
void
platform_login_agents(const char *home, char *dir, size_t len)
{
	snprintf(dir, len, "%s/Library/LaunchAgents", home);
}

int
platform_self_dir(const char *argv0, char *dir, size_t len)
{
	char		path[PATH_MAX], link[PATH_MAX], joined[PATH_MAX];
	uint32_t	size = sizeof path;
	ssize_t		n;
	int		hops;

	(void)argv0;
	if (_NSGetExecutablePath(path, &size) != 0)
		return -1;
	/*
	 * Run through a link (PREFIX/bin/metalcapctl): follow the program's
	 * own links, not its folders', so that Homebrew's opt/metalcap path
	 * stays (the versioned Cellar folder behind it goes at an upgrade,
	 * and job agents name the shim through this path).
	 */
	for (hops = 0; hops < 8 && (n = readlink(path, link,
	    sizeof link - 1)) > 0; hops++) {
		link[n] = '\0';
		if (link[0] == '/')
			snprintf(path, sizeof path, "%s", link);
		else {
			snprintf(joined, sizeof joined, "%s", path);
			if (mc_fmt(path, sizeof path, "%s/%s", dirname(joined),
			    link) == -1)
				return -1;
		}
	}
	snprintf(dir, len, "%s", dirname(path));
	return 0;
}

const char *
platform_shim_name(void)
{
	return "libmetalcap.dylib";
}

const char *
platform_inject_var(void)
{
	return "DYLD_INSERT_LIBRARIES";
}

/*
 * A kqueue watching pid for NOTE_EXIT: readable when the process exits.
 * The daemon is not the parent (launchd is), so the status comes from
 * launchctl print.
 */
int
platform_pid_fd(long pid)
{
	struct kevent	kev;
	int		kq = kqueue();

	if (kq == -1)
		return -1;
	EV_SET(&kev, (uintptr_t)pid, EVFILT_PROC, EV_ADD | EV_ONESHOT,
	    NOTE_EXIT, 0, NULL);
	if (kevent(kq, &kev, 1, NULL, 0, NULL) == -1) {
		close(kq);
		return -1;
	}
	return kq;
}

/*
 * The file pid runs (its image after exec): 0, or -1 and errno.  Written
 * for macOS, not run here: proc_pidpath (libproc.h) fills at most
 * PROC_PIDPATHINFO_MAXSIZE and returns the length, 0 on failure.
 */
int
platform_pid_path(long pid, char *buf, size_t len)
{
	char	path[PROC_PIDPATHINFO_MAXSIZE];

	if (proc_pidpath((int)pid, path, sizeof path) <= 0)
		return -1;
	if (strlen(path) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, strlen(path) + 1);
	return 0;
}

/* Give freed memory back to the system. */
void
platform_release_memory(void)
{
	malloc_zone_pressure_relief(NULL, 0);
}

/* sysctl's string value of name, or "unknown". */
static void
platform_sysctl(const char *name, char *buf, size_t len)
{
	size_t	n = len;

	if (sysctlbyname(name, buf, &n, NULL, 0) == -1 || n == 0)
		snprintf(buf, len, "unknown");
}

/*
 * For evidence: "macOS 26.5.2 (25F84)" and the hardware model, such as
 * VirtualMac2,1 in a guest (what sw_vers and Cua's metadata record).
 */
void
platform_host(char *os, size_t oslen, char *model, size_t modellen)
{
	char	version[64], build[64];

	platform_sysctl("kern.osproductversion", version, sizeof version);
	platform_sysctl("kern.osversion", build, sizeof build);
	snprintf(os, oslen, "macOS %s (%s)", version, build);
	platform_sysctl("hw.model", model, modellen);
}

/* kern.osversion, machdep.cpu.brand_string, hw.model ("unknown" each). */
void
platform_host_id(struct host_id *h)
{
	platform_sysctl("kern.osversion", h->os_build, sizeof h->os_build);
	platform_sysctl("machdep.cpu.brand_string", h->cpu_brand,
	    sizeof h->cpu_brand);
	platform_sysctl("hw.model", h->hw_model, sizeof h->hw_model);
}

/*
 * en0's link-layer address, in a virtual Mac (hw.model VirtualMac...)
 * only.  A VM's configuration gives it one; tart clone gives a clone a
 * new one, where it copies the machine identifier and with it the
 * hardware UUID (cirruslabs/tart issue #311).  A Mac of its own has a
 * UUID of its own, and its en0 may be Wi-Fi, whose private address
 * rotates.  -1 when there is no such address.
 */
int
platform_link_addr(char *buf, size_t len)
{
	const struct sockaddr_dl	*sdl;
	const unsigned char		*a;
	struct ifaddrs			*all, *i;
	char				 model[64];
	int				 rc = -1;

	platform_sysctl("hw.model", model, sizeof model);
	if (strncmp(model, "VirtualMac", 10) != 0 || getifaddrs(&all) == -1)
		return -1;
	for (i = all; i != NULL && rc == -1; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_LINK ||
		    strcmp(i->ifa_name, "en0") != 0)
			continue;
		sdl = (const struct sockaddr_dl *)(const void *)i->ifa_addr;
		if (sdl->sdl_alen != 6)
			continue;
		a = (const unsigned char *)sdl->sdl_data + sdl->sdl_nlen;
		snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1],
		    a[2], a[3], a[4], a[5]);
		rc = 0;
	}
	freeifaddrs(all);
	return rc;
}

/* xnu bsd/sys/csr.h; libSystem exports csr_check, the SDK has no header. */
int	csr_check(uint32_t mask);
#define CSR_ALLOW_TASK_FOR_PID	(1U << 2)

/*
 * The Mac that runs the jobs: Apple silicon when hw.optional.arm64 is 1
 * (also under Rosetta: xnu kern_mib.c), and SIP on unless csr_check
 * allows task_for_pid, the flag dyld itself read to decide whether a
 * restricted process keeps DYLD_* (dyld-832 dyld2.cpp "usingSIP"; newer
 * dyld asks AMFI, whose rule is not published).
 */
void
platform_inject_host(struct mc_inject_host *host)
{
	int	arm64 = 0;
	size_t	len = sizeof arm64;

	host->apple_silicon = sysctlbyname("hw.optional.arm64", &arm64, &len,
	    NULL, 0) == 0 && arm64 == 1;
	host->sip = csr_check(CSR_ALLOW_TASK_FOR_PID) != 0;
	host->detected = true;
	host->x86_64 = false;	/* the kernel's own choice of slice */
}
