/* SPDX-License-Identifier: MIT */
/*
 * Where metalcapd keeps things.  With --home DIR (or METALCAP_HOME) the
 * layout is fixed under DIR; otherwise the platform's defaults.  The shim,
 * the probe and the job template are found relative to the executable, in
 * one of two layouts:
 *
 *   installed   /usr/local/libexec/metalcap/{metalcapd,metalcap-probe,
 *               libmetalcap.dylib}, /usr/local/share/metalcap/job.plist
 *   build tree  build/bin/{metalcapd,metalcap-probe}, build/lib/libmetalcap.*,
 *               build/share/metalcap/job.plist
 */
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_util.h"
#include "policy.h"
#include "protocol.h"

/*
 * The first of dir/candidate that exists, else the first candidate, so a
 * missing file is reported under the path of the installed layout.
 */
static int
paths_find(char *out, size_t len, const char *dir,
    const char *const *candidates, size_t n)
{
	struct stat	sb;
	size_t		i;

	for (i = 0; i < n; i++) {
		if (mc_fmt(out, len, "%s/%s", dir, candidates[i]) == -1)
			return -1;
		if (stat(out, &sb) == 0)
			return 0;
	}
	return mc_fmt(out, len, "%s/%s", dir, candidates[0]);
}

static void
paths_join(char *out, const char *dir, const char *name)
{
	mc_fmt(out, PATH_MAX, "%s/%s", dir, name);
}

static int
paths_find_tools(struct paths *p, const char *self)
{
	char		 shim_here[64], shim_lib[64], shim_bin[64];
	const char	*shim[] = { shim_here, shim_lib, shim_bin };
	/* Beside us (libexec/metalcap), or from PREFIX/bin. */
	const char	*probe[] = { "metalcap-probe",
			    "../libexec/metalcap/metalcap-probe" };
	const char	*tmpl[] = { "../../share/metalcap/job.plist",
			    "../share/metalcap/job.plist" };

	snprintf(shim_here, sizeof shim_here, "%s", platform_shim_name());
	snprintf(shim_lib, sizeof shim_lib, "../lib/%s", platform_shim_name());
	snprintf(shim_bin, sizeof shim_bin, "../libexec/metalcap/%s",
	    platform_shim_name());
	if (paths_find(p->shim, sizeof p->shim, self, shim, 3) == -1 ||
	    paths_find(p->probe, sizeof p->probe, self, probe, 2) == -1 ||
	    paths_find(p->job_template, sizeof p->job_template, self, tmpl,
	    2) == -1)
		return -1;
	return 0;
}

int
paths_init(struct paths *p, const char *home, const char *argv0,
    char *why, size_t whylen)
{
	char			config[PATH_MAX], state[PATH_MAX], run[PATH_MAX];
	char			self[PATH_MAX];
	struct sockaddr_un	sun;

	memset(p, 0, sizeof *p);
	/* Room for every name joined below: nothing is silently cut. */
	if (home != NULL && strlen(home) > PATH_MAX - 256) {
		snprintf(why, whylen, "--home: path too long");
		return -1;
	}
	if (home != NULL && *home != '\0') {
		if (*home != '/') {
			snprintf(why, whylen, "--home %s: must be an absolute "
			    "path", home);
			return -1;
		}
		snprintf(p->home, sizeof p->home, "%s", home);
		paths_join(p->jobs, home, "jobs.d");
		paths_join(p->profiles, home, "profiles.d");
		paths_join(p->state, home, "state");
		paths_join(p->agents, home, "agents");
		platform_login_agents(home, p->login_agents,
		    sizeof p->login_agents);
		/* Stands in for /Library/LaunchAgents, the package's. */
		paths_join(p->system_agents, home, "Library/LaunchAgents");
		paths_join(p->logs, home, "logs");
		paths_join(p->socket, home, MC_SOCKET_NAME);
		/* Stands in for /Library/Managed Preferences in tests. */
		paths_join(p->managed, home, "managed/org.metalcap.plist");
		/* And for /Library/Application Support/metalcap/jobs.d. */
		paths_join(p->managed_jobs, home,
		    "Library/Application Support/metalcap/jobs.d");
		/* And for /dev/console: its owner is the user in front. */
		paths_join(p->console, home, "console");
		/* And for the machine's hardware UUID. */
		paths_join(p->machine_id, home, "machine-id");
		paths_join(p->link_addr, home, "link-addr");
		/* And for the host: an OS update or another chip, in a
		 * file of os_build=, cpu_brand=, hw_model= lines. */
		paths_join(p->host, home, "host");
	} else {
		if (platform_default_dirs(config, state, run, p->logs,
		    p->agents, PATH_MAX) == -1) {
			snprintf(why, whylen, "cannot find the home directory");
			return -1;
		}
		paths_join(p->jobs, config, "jobs.d");
		paths_join(p->profiles, config, "profiles.d");
		snprintf(p->state, sizeof p->state, "%s", state);
		if (getenv("HOME") != NULL)
			platform_login_agents(getenv("HOME"), p->login_agents,
			    sizeof p->login_agents);
		paths_join(p->socket, run, MC_SOCKET_NAME);
		snprintf(p->system_agents, sizeof p->system_agents,
		    "/Library/LaunchAgents");
#ifdef __APPLE__
		snprintf(p->managed_jobs, sizeof p->managed_jobs,
		    "/Library/Application Support/metalcap/jobs.d");
		snprintf(p->managed, sizeof p->managed,
		    "/Library/Managed Preferences/org.metalcap.plist");
		snprintf(p->console, sizeof p->console, "/dev/console");
#endif
	}
	if (strlen(p->socket) >= sizeof sun.sun_path) {
		snprintf(why, whylen, "socket path %s is %zu bytes, over the "
		    "%zu a unix socket allows here", p->socket,
		    strlen(p->socket), sizeof sun.sun_path - 1);
		return -1;
	}
	if (platform_self_dir(argv0, self, sizeof self) == -1)
		snprintf(self, sizeof self, "/usr/local/libexec/metalcap");
	if (paths_find_tools(p, self) == -1) {
		snprintf(why, whylen, "the program's directory is too long");
		return -1;
	}
	snprintf(p->launchctl, sizeof p->launchctl, "/bin/launchctl");
	/* Both programs obey this user's managed settings too. */
	paths_managed_user(p);
	return 0;
}

/*
 * The socket's folder on macOS: beside the configuration (config/run), so
 * that no cleaner of temporary folders removes it, unless the socket's
 * path there would pass sun_max bytes; then a private folder in /tmp.
 */
void
paths_run_dir(const char *config, size_t sun_max, char *out, size_t len)
{
	if (strlen(config) + sizeof "/run/" MC_SOCKET_NAME <= sun_max)
		snprintf(out, len, "%s/run", config);
	else
		snprintf(out, len, "/tmp/metalcap-%ld", (long)getuid());
}

/*
 * The user-level managed preferences sit in a folder named after the user
 * beside the computer-level file (/Library/Managed Preferences/USER/).
 */
void
paths_managed_user(struct paths *p)
{
	struct passwd	*pw = getpwuid(getuid());
	char		 dir[PATH_MAX], *slash;

	p->managed_user[0] = '\0';
	if (p->managed[0] == '\0' || pw == NULL)
		return;
	snprintf(dir, sizeof dir, "%s", p->managed);
	if ((slash = strrchr(dir, '/')) == NULL)
		return;
	*slash = '\0';
	if (mc_fmt(p->managed_user, sizeof p->managed_user, "%s/%s/%s", dir,
	    pw->pw_name, slash + 1) == -1)
		p->managed_user[0] = '\0';
}

/* mkdir -p, the last part with mode. */
int
paths_mkdir(const char *dir, mode_t mode, char *why, size_t whylen)
{
	char	buf[PATH_MAX], *p;

	snprintf(buf, sizeof buf, "%s", dir);
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			goto fail;
		*p = '/';
	}
	if (mkdir(buf, mode) == -1 && errno != EEXIST)
		goto fail;
	return 0;
fail:
	snprintf(why, whylen, "cannot create %s: %s", buf, strerror(errno));
	return -1;
}

/*
 * The socket's folder must be this user's and writable by nobody else: in
 * a shared place (/tmp/metalcap-UID), someone who made it first could put
 * their own socket in ours.
 */
static int
paths_check_private(const char *dir, char *why, size_t whylen)
{
	struct stat	sb;

	if (lstat(dir, &sb) == -1) {
		snprintf(why, whylen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != getuid() ||
	    (sb.st_mode & 022) != 0) {
		snprintf(why, whylen, "the socket's folder %s is %s: refusing "
		    "it, someone else could replace the socket (it must be "
		    "yours and writable by you alone)", dir,
		    !S_ISDIR(sb.st_mode) ? "not a folder" : sb.st_uid !=
		    getuid() ? "another user's" : "writable by others");
		return -1;
	}
	return 0;
}

/* Create what is ours; the socket's directory is private (0700). */
int
paths_make_dirs(const struct paths *p, char *why, size_t whylen)
{
	char	sockdir[PATH_MAX], reports[PATH_MAX], *slash;

	snprintf(sockdir, sizeof sockdir, "%s", p->socket);
	if ((slash = strrchr(sockdir, '/')) != NULL)
		*slash = '\0';
	if (paths_mkdir(sockdir, 0700, why, whylen) == -1 ||
	    paths_check_private(sockdir, why, whylen) == -1 ||
	    paths_mkdir(p->jobs, 0755, why, whylen) == -1 ||
	    paths_mkdir(p->profiles, 0755, why, whylen) == -1 ||
	    paths_mkdir(p->state, 0700, why, whylen) == -1 ||
	    paths_mkdir(p->agents, 0755, why, whylen) == -1 ||
	    paths_mkdir(p->logs, 0755, why, whylen) == -1)
		return -1;
	/* Under --home, the stand-in for /Library/Managed Preferences. */
	if (p->home[0] != '\0' && mc_fmt(reports, sizeof reports,
	    "%s/managed", p->home) == 0 &&
	    paths_mkdir(reports, 0755, why, whylen) == -1)
		return -1;
	/* What launchd was given, per job (reconcile.c). */
	if (mc_fmt(reports, sizeof reports, "%s/loaded", p->state) == -1 ||
	    paths_mkdir(reports, 0700, why, whylen) == -1)
		return -1;
	/* The shim writes one report per injected process here. */
	if (mc_fmt(reports, sizeof reports, "%s/reports", p->state) == -1 ||
	    paths_mkdir(reports, 0700, why, whylen) == -1)
		return -1;
	return 0;
}

/*
 * A stand-in file's first line, or the platform's answer (answer) when
 * no stand-in is set: false when neither gives one.
 */
static bool
paths_stand_in(const char *file, int (*answer)(char *, size_t), char *buf,
    size_t len)
{
	FILE	*f;
	bool	 read;

	if (file[0] == '\0')
		return answer(buf, len) == 0;
	if ((f = fopen(file, "r")) == NULL)
		return false;
	read = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	buf[read ? strcspn(buf, "\n") : 0] = '\0';
	return buf[0] != '\0';
}

/*
 * The machine this runs on: the platform's id, or the stand-in file a
 * --home gives (a test's, for either platform).  False when unknown.
 */
bool
paths_machine(const struct paths *p, char *buf, size_t len)
{
	return paths_stand_in(p->machine_id, platform_machine_id, buf, len);
}

/*
 * The guest, as a fleet counts guests: the machine's id and its en0
 * address ("ID ADDRESS"), the same for every user of the machine, and
 * another on a clone whose hardware UUID was copied but whose address was
 * not (an address that cannot be read leaves the id alone to tell).
 * False when the machine cannot be told.
 */
bool
paths_guest(const struct paths *p, char *buf, size_t len)
{
	char	machine[128], link[64];

	if (!paths_machine(p, machine, sizeof machine))
		return false;
	if (!paths_stand_in(p->link_addr, platform_link_addr, link,
	    sizeof link))
		link[0] = '\0';
	return mc_fmt(buf, len, "%s %s", machine, link) == 0;
}

/*
 * The host as verdicts and allowlists name it (struct host_id); under
 * --home, a line of its stand-in file replaces the platform's answer.
 * The platform's answer is read once: the OS build, the chip and the
 * model change only across a restart, and status asks for them at every
 * job of profile auto (on Linux a read of /proc/cpuinfo each).
 */
void
paths_host(const struct paths *p, struct host_id *h)
{
	static struct host_id	platform;
	static bool		read;
	char			line[256], *v;
	FILE			*f;

	if (!read) {
		platform_host_id(&platform);
		read = true;
	}
	*h = platform;
	if (p->host[0] == '\0' || (f = fopen(p->host, "r")) == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((v = strchr(line, '=')) == NULL)
			continue;
		*v++ = '\0';
		if (strcmp(line, "os_build") == 0)
			snprintf(h->os_build, sizeof h->os_build, "%s", v);
		else if (strcmp(line, "cpu_brand") == 0)
			snprintf(h->cpu_brand, sizeof h->cpu_brand, "%s", v);
		else if (strcmp(line, "hw_model") == 0)
			snprintf(h->hw_model, sizeof h->hw_model, "%s", v);
	}
	fclose(f);
}
