/* SPDX-License-Identifier: MIT */
/*
 * metalcapd: a per-user agent that turns job files into launchd jobs with
 * the Metal capability shim injected, and serves status and changes over a
 * msgpack-RPC unix socket.  It never forks into the background: launchd
 * (or the test harness) supervises it.
 */
#include <sys/resource.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "mcd.h"
#include "protocol.h"

static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: metalcapd [--home DIR] [--foreground] [--launchctl PATH]\n"
	    "                 [--launchctl-timeout MS] [--probe-timeout MS]\n"
	    "                 [--client-timeout MS] [--marker-timeout MS]\n"
	    "                 [--jobs DIR] [--profiles DIR] [--state DIR]\n"
	    "                 [--agents DIR] [--logs DIR] [--socket PATH]\n"
	    "                 [--shim PATH] [--probe PATH] [--template PATH]\n"
	    "       metalcapd [--home DIR] --paths | --help | --version\n"
	    "\n"
	    "Runs each job file in the job directory as its own launchd job,\n"
	    "with libmetalcap injected when the job is unlocked.\n"
	    "\n"
	    "  --home DIR        everything under DIR: jobs.d, profiles.d,\n"
	    "                    state, agents, logs, metalcapd.sock\n"
	    "                    (also METALCAP_HOME)\n"
	    "  --foreground      also log to stderr\n"
	    "                    (LOGS/metalcapd.log rotates at 8 MB to\n"
	    "                    metalcapd.log.1; METALCAPD_LOG_MAX)\n"
	    "  --launchctl PATH  the launchctl to drive (default "
	    "/bin/launchctl)\n"
	    "  --launchctl-timeout MS  kill a launchctl that has not "
	    "answered (10000)\n"
	    "  --probe-timeout MS  kill a probe that has not answered "
	    "(120000)\n"
	    "  --client-timeout MS  close a client that leaves a message "
	    "half sent\n"
	    "                    or its replies unread this long (10000)\n"
	    "  --shim, --probe   default: beside this program, or in ../lib\n"
	    "  --template PATH   the job LaunchAgent template\n"
	    "  --managed PATH    the managed-preferences plist (MDM)\n"
	    "  --paths           print the paths in effect and exit\n"
	    "  --marker-timeout MS  how long an unlocked process has to show\n"
	    "                    the shim's report before it is blocked "
	    "(10000)\n"
	    "\n"
	    "See metalcapd(8), metalcap(5), metalcapctl(1).\n");
}

static struct mcd	daemon_state;

/*
 * Room for every client, job and log watch: launchd gives agents a soft
 * limit of 256 descriptors, as many as the clients alone may take.
 */
static void
raise_fd_limit(void)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= 4096)
		return;
	rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		log_warnx("cannot raise the descriptor limit: %s",
		    strerror(errno));
}

static void
on_signal(uv_signal_t *s, int signum)
{
	struct mcd	*d = s->data;

	log_info("signal %d: stopping (jobs keep running under launchd)",
	    signum);
	server_stop(d);
	proc_stop_all(d);
	uv_stop(d->loop);
}

/* SIGHUP reloads, as daemons do; SIGUSR1 and SIGUSR2 are not ours. */
static void
on_other_signal(uv_signal_t *s, int signum)
{
	struct mcd	*d = s->data;

	if (signum == SIGHUP) {
		log_info("SIGHUP: rescanning the job and profile folders");
		driver_rescan(d);
	} else
		log_info("signal %d ignored", signum);
}

static void
start_signals(struct mcd *d)
{
	uv_signal_t	*handles[] = { &d->sigterm, &d->sigint, &d->sighup,
	    &d->sigusr1, &d->sigusr2 };
	const int	 signums[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1,
	    SIGUSR2 };
	size_t		 i;

	for (i = 0; i < sizeof handles / sizeof handles[0]; i++) {
		uv_signal_init(d->loop, handles[i]);
		handles[i]->data = d;
		uv_signal_start(handles[i], i < 2 ? on_signal : on_other_signal,
		    signums[i]);
	}
}

/* --paths: where this daemon would look, for doctor, installers and people. */
static void
print_paths(const struct paths *p)
{
	printf("jobs %s\nprofiles %s\nstate %s\nagents %s\nlogs %s\n"
	    "socket %s\nshim %s\nprobe %s\ntemplate %s\nlaunchctl %s\n"
	    "managed %s\nmanaged-user %s\n", p->jobs, p->profiles, p->state, p->agents, p->logs,
	    p->socket, p->shim, p->probe, p->job_template, p->launchctl,
	    p->managed[0] ? p->managed : "-",
	    p->managed_user[0] ? p->managed_user : "-");
}

/*
 * A timeout in ms: digits only (atoi took "100x" and "5e3"), 100 or more
 * (shorter ones race the work they bound), and an int.
 */
static int
parse_ms(const char *text, int *ms)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || v < 100 ||
	    v > INT_MAX)
		return -1;
	*ms = (int)v;
	return 0;
}

/* Apply --flag overrides to the computed paths. */
static int
parse_args(int argc, char **argv, struct mcd *d, bool *foreground)
{
	static const struct option longopts[] = {
		{ "home", required_argument, NULL, 'H' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "launchctl", required_argument, NULL, 'L' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "profiles", required_argument, NULL, 'p' },
		{ "state", required_argument, NULL, 's' },
		{ "agents", required_argument, NULL, 'a' },
		{ "logs", required_argument, NULL, 'l' },
		{ "socket", required_argument, NULL, 'S' },
		{ "shim", required_argument, NULL, 'm' },
		{ "probe", required_argument, NULL, 'P' },
		{ "template", required_argument, NULL, 'T' },
		{ "marker-timeout", required_argument, NULL, 'M' },
		{ "managed", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "paths", no_argument, NULL, 'W' },
		{ "launchctl-timeout", required_argument, NULL, 't' },
		{ "probe-timeout", required_argument, NULL, 'o' },
		{ "client-timeout", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char	*home = getenv("METALCAP_HOME");
	char		 why[512], *set[16] = { NULL };
	int		 ch, i;
	bool		 show_paths = false;
	const char	 keys[] = "LjpsalSmPTg";

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'H':
			home = optarg;
			break;
		case 'f':
			*foreground = true;
			break;
		case 'M':
		case 't':
		case 'o':
		case 'c':
			if (parse_ms(optarg, ch == 'M' ? &d->marker_timeout_ms :
			    ch == 't' ? &d->launchctl_timeout_ms : ch == 'o' ?
			    &d->probe_timeout_ms : &d->client_timeout_ms) ==
			    -1) {
				fprintf(stderr, "metalcapd: --%s-timeout: '%s' is "
				    "not a number of ms >= 100\n", ch == 'M' ?
				    "marker" : ch == 't' ? "launchctl" : ch ==
				    'o' ? "probe" : "client", optarg);
				return -1;
			}
			break;
		case 'W':
			show_paths = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("metalcapd %s (protocol %d)\n", MC_VERSION,
			    MC_PROTOCOL_VERSION);
			exit(0);
		case '?':
			usage(stderr);
			return -1;
		default:
			set[strchr(keys, ch) - keys] = optarg;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "metalcapd: unexpected argument '%s'\n",
		    argv[optind]);
		return -1;
	}
	if (paths_init(&d->paths, home, argv[0], why, sizeof why) == -1) {
		fprintf(stderr, "metalcapd: %s\n", why);
		return -1;
	}
	{
		char *const dest[] = { d->paths.launchctl, d->paths.jobs,
		    d->paths.profiles, d->paths.state, d->paths.agents,
		    d->paths.logs, d->paths.socket, d->paths.shim,
		    d->paths.probe, d->paths.job_template, d->paths.managed };

		for (i = 0; i < (int)(sizeof dest / sizeof dest[0]); i++)
			if (set[i] != NULL)
				if (mc_fmt(dest[i], PATH_MAX, "%s", set[i]) == -1) {
					fprintf(stderr, "metalcapd: %s: path too "
					    "long\n", set[i]);
					return -1;
				}
	}
	paths_managed_user(&d->paths);
	if (strlen(d->paths.socket) >= sizeof ((struct sockaddr_un *)0)->sun_path) {
		fprintf(stderr, "metalcapd: socket path %s is %zu bytes, over "
		    "the %zu a unix socket allows\n", d->paths.socket,
		    strlen(d->paths.socket),
		    sizeof ((struct sockaddr_un *)0)->sun_path - 1);
		return -1;
	}
	if (show_paths) {
		print_paths(&d->paths);
		exit(0);
	}
	return 0;
}

/*
 * Job agents an older metalcapd rendered into the folder launchd loads at
 * login: gone, so a stopped or failed job cannot start again at the next
 * login.  A job launchd has loaded from one keeps running; its next
 * reconcile renders it where it belongs now and loads it from there.
 */
static void
forget_login_agents(struct mcd *d)
{
	const char	*dir = d->paths.login_agents;
	char		 path[PATH_MAX];
	struct dirent	*de;
	DIR		*dp;
	size_t		 n, pre = strlen(MC_LABEL_PREFIX);

	if (dir[0] == '\0' || strcmp(dir, d->paths.agents) == 0 ||
	    (dp = opendir(dir)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		n = strlen(de->d_name);
		if (n <= pre + 6 || strncmp(de->d_name, MC_LABEL_PREFIX, pre) !=
		    0 || strcmp(de->d_name + n - 6, ".plist") != 0 ||
		    mc_fmt(path, sizeof path, "%s/%s", dir, de->d_name) == -1)
			continue;
		if (unlink(path) == 0)
			log_info("removed %s: job agents live in %s, which "
			    "launchd does not load at login", path,
			    d->paths.agents);
	}
	closedir(dp);
}

static int
load_template(struct mcd *d)
{
	char	why[256];

	if (mc_plist_read_file(d->paths.job_template, &d->job_template, why,
	    sizeof why) == -1) {
		fprintf(stderr, "metalcapd: template %s: %s\n",
		    d->paths.job_template, why);
		return -1;
	}
	if (plist_get_node_type(d->job_template) != PLIST_DICT) {
		fprintf(stderr, "metalcapd: template %s: not a dictionary\n",
		    d->paths.job_template);
		return -1;
	}
	d->background_ok = render_allows_session(d->job_template,
	    "Background");
	d->aqua_ok = render_allows_session(d->job_template, "Aqua");
	/* launchd would refuse every job (134): say so once, here. */
	if (!d->background_ok && !d->aqua_ok) {
		fprintf(stderr, "metalcapd: template %s: LimitLoadToSessionType "
		    "allows neither Aqua nor Background, the sessions a user's "
		    "jobs run in\n", d->paths.job_template);
		return -1;
	}
	return 0;
}

/* A new turn of the loop: what was read in the last one is read again. */
static void
count_turn(uv_prepare_t *h)
{
	struct mcd	*d = h->data;

	d->turn++;
}

int
main(int argc, char **argv)
{
	struct mcd	*d = &daemon_state;
	bool		 foreground = false;
	char		 why[512], logfile[PATH_MAX + 16], reports[PATH_MAX + 16];
	int		 rc;

	signal(SIGPIPE, SIG_IGN);
	d->loop = uv_default_loop();
	/* Unreferenced: it never keeps the loop running, and it wakes
	 * nothing (it runs only in turns that happen anyway). */
	d->turn = 1;
	d->turn_tick.data = d;
	uv_prepare_init(d->loop, &d->turn_tick);
	uv_prepare_start(&d->turn_tick, count_turn);
	uv_unref((uv_handle_t *)&d->turn_tick);
	d->launchctl_timeout_ms = 10000;
	/* The probe's stages (30 s each, cold compiles) and its stock pass. */
	d->probe_timeout_ms = 120000;
	d->client_timeout_ms = 10000;
	d->marker_timeout_ms = 10000;
	d->lock_fd = -1;
	if (parse_args(argc, argv, d, &foreground) == -1)
		return 2;
	raise_fd_limit();
	if (paths_make_dirs(&d->paths, why, sizeof why) == -1) {
		fprintf(stderr, "metalcapd: %s\n", why);
		return 1;
	}
	mc_fmt(logfile, sizeof logfile, "%s/metalcapd.log", d->paths.logs);
	log_open(logfile, foreground);
	mc_fmt(reports, sizeof reports, "%s/reports", d->paths.state);
	marker_sweep(reports, NULL, NULL);
	if (load_template(d) == -1)
		return 1;
	if (state_load(&d->state, d->paths.state, why, sizeof why) == -1)
		log_warnx("%s", why);
	d->verified = verified_load(&d->paths);
	d->measured = measure_load(&d->paths);
	snprintf(d->domain, sizeof d->domain, "gui/%ld", (long)getuid());
	seams_connect(d);
	/*
	 * Not an error when another serves this user: launchd starts one per
	 * session type the agent allows (Homebrew's service.rb allows them
	 * all), and an exit of 0 is not restarted (KeepAlive SuccessfulExit
	 * false), where a failure would be, every 10 seconds, for ever.
	 */
	if ((rc = server_start(d, why, sizeof why)) != 0) {
		fprintf(stderr, "metalcapd: %s%s\n", why, rc == 1 ?
		    ": this one exits" : "");
		log_warnx("%s%s", why, rc == 1 ? ": this one exits" : "");
		return rc == 1 ? 0 : 1;
	}
	log_info("metalcapd %s serving %s, jobs in %s", MC_VERSION,
	    d->paths.socket, d->paths.jobs);
	/* Only the daemon holding the lock cleans up. */
	forget_login_agents(d);
	dirwatch_start(d);
	start_signals(d);
	fleet_init(d);
	console_start(d);
	respawn_start(d);
	driver_rescan(d);
	uv_run(d->loop, UV_RUN_DEFAULT);
	return 0;
}
