/* SPDX-License-Identifier: MIT */
/*
 * metalcapctl: the command-line client of metalcapd.  One blocking
 * connection (common/mc_client.c), one request (two with the version
 * check), a table for people or --json for scripts.  This file holds the
 * command table, the options and main; each command lives in a ctl_*.c.
 *
 * Exit: 0 ok, 1 an error (the daemon's, or a job file's), 2 usage,
 * 3 daemon unreachable, 4 status shows a job that is not healthy.
 */
#include <sys/un.h>

#include <err.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "mc_util.h"
#include "protocol.h"


#define P	CTL_OPT_PROFILE
/* name, arguments min-max, options, usage, handler, method, offline */
static const struct ctl_command commands[] = {
	{ "status", 0, 1, 0, "status [JOB]", cmd_status, NULL, false },
	{ "enable", 1, 1, P, "enable JOB [--profile P]", cmd_enable, NULL,
	    false },
	{ "disable", 1, 1, 0, "disable JOB", cmd_change, MC_M_DISABLE, false },
	{ "profile", 2, 2, 0, "profile JOB PROFILE", cmd_change,
	    MC_M_PROFILE_SET, false },
	{ "profiles", 0, 0, 0, "profiles", cmd_profiles, NULL, false },
	{ "start", 1, 1, 0, "start JOB", cmd_change, MC_M_START, false },
	{ "stop", 1, 1, 0, "stop JOB", cmd_change, MC_M_STOP, false },
	{ "restart", 1, 1, 0, "restart JOB", cmd_change, MC_M_RESTART, false },
	{ "reload", 0, 0, 0, "reload", cmd_reload, NULL, false },
	{ "watch", 0, 0, 0, "watch", cmd_watch, NULL, false },
	{ "logs", 1, 1, CTL_OPT_FOLLOW, "logs JOB [-f]", cmd_logs, NULL,
	    false },
	{ "probe", 0, 1, P, "probe JOB | probe --profile P", cmd_probe, NULL,
	    false },
	{ "doctor", 0, 0, 0, "doctor", cmd_doctor, NULL, true },
	{ "report", 0, 1, CTL_OPT_USER_HOME, "report [STATUS-FILE | "
	    "--user-home DIR]", cmd_report, NULL, true },
	{ "add", 2, -1, P | CTL_OPT_STOCK | CTL_OPT_ENV | CTL_OPT_FORCE,
	    "add NAME [--profile P | --stock] [--env K=V]... [--force] -- "
	    "PROGRAM [ARG]...", cmd_add, NULL, true },
	{ "remove", 1, 1, 0, "remove NAME", cmd_remove, NULL, true },
	{ "check", 1, 1, CTL_OPT_INHERIT | CTL_OPT_MACHINE | CTL_OPT_SIP |
	    CTL_OPT_ARCH, "check PROGRAM [--inherit] [--machine "
	    "apple-silicon|intel] [--sip on|off] [--arch native|x86_64]",
	    cmd_check, NULL, true },
	{ "exec", 1, -1, P | CTL_OPT_REPORT, "exec [--profile P] [--report "
	    "FILE] -- PROGRAM [ARG]...", cmd_exec, NULL, true },
	{ "bench", 1, -1, P | CTL_OPT_SAMPLES | CTL_OPT_OUT, "bench "
	    "[--profile P] [--samples N] [--out DIR] -- llama-bench [ARG]...",
	    cmd_bench, NULL, true },
	{ "verify", 1, -1, P | CTL_OPT_OUT | CTL_OPT_LIMIT, "verify "
	    "[--profile P] [--out DIR] [--limit NAME=VALUE]... -- "
	    "llama-perplexity [ARG]...", cmd_verify, NULL, true },
	{ "fleet", 2, -1, CTL_OPT_GUESTS | CTL_OPT_WINDOW | CTL_OPT_LOCAL |
	    CTL_OPT_OUT, "fleet allowlist [--min-guests N] [--window DAYS] "
	    "[--local-verify-allows] [--out DIR] RESULTS...", cmd_fleet, NULL,
	    true },
};
#undef P

static void
usage(FILE *out)
{
	size_t	i;

	fprintf(out, "usage: metalcapctl [--socket PATH | --home DIR] [--json] "
	    "[--timeout S] COMMAND [ARG]...\n\ncommands:\n");
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %s\n", commands[i].usage);
	fprintf(out, "\nOptions may come before or after the command; "
	    "\"--\" ends them.\nExit: 0 ok, 1 error, 2 usage, 3 daemon "
	    "unreachable, 4 a job is not healthy;\nexec exits with the "
	    "program's status, 125 to 127 its own.\nSee metalcapctl(1).\n");
}

/*
 * --machine apple-silicon|intel, --sip on|off, --arch native|x86_64: the
 * Mac check judges for, and the slice a launch there prefers.  Each is
 * one of two words; the second sets its flag.
 */
static int
ctl_host_option(struct ctl *c, unsigned bit, const char *arg)
{
	static const struct {
		unsigned	 bit;
		const char	*name, *no, *yes;
	} opts[] = {
		{ CTL_OPT_MACHINE, "machine", "apple-silicon", "intel" },
		{ CTL_OPT_SIP, "sip", "off", "on" },
		{ CTL_OPT_ARCH, "arch", "native", "x86_64" },
	};
	size_t	i;
	bool	yes;

	for (i = 0; i + 1 < sizeof opts / sizeof opts[0] && opts[i].bit != bit;
	    i++)
		;
	yes = strcmp(arg, opts[i].yes) == 0;
	if (!yes && strcmp(arg, opts[i].no) != 0) {
		fprintf(stderr, "metalcapctl: --%s %s: expected %s or %s\n",
		    opts[i].name, arg, opts[i].no, opts[i].yes);
		return -1;
	}
	c->opts.given |= bit;
	if (bit == CTL_OPT_MACHINE)
		c->opts.intel = yes;
	else if (bit == CTL_OPT_SIP)
		c->opts.sip = yes;
	else
		c->opts.x86_64 = yes;
	return 0;
}

/* --min-guests N (1 to 100000) or --window DAYS (1 to 3650). */
static int
ctl_count_option(struct ctl *c, bool guests, const char *arg)
{
	char	*end;
	long	 v = strtol(arg, &end, 10), max = guests ? 100000 : 3650;

	if (*arg == '\0' || *end != '\0' || v < 1 || v > max) {
		fprintf(stderr, "metalcapctl: --%s %s: expected %s, 1 to "
		    "%ld\n", guests ? "min-guests" : "window", arg, guests ?
		    "a number of guests" : "days", max);
		return -1;
	}
	c->opts.given |= guests ? CTL_OPT_GUESTS : CTL_OPT_WINDOW;
	*(guests ? &c->opts.min_guests : &c->opts.window_days) = v;
	return 0;
}

/*
 * Every option, global or a command's, wherever it stands (getopt
 * permutes; "--" ends them): metalcapctl status --json is the same as
 * metalcapctl --json status.
 */
static int
ctl_options(struct ctl *c, int argc, char **argv, const char **sock,
    const char **home)
{
	enum { O_JSON = 256, O_SOCKET, O_HOME, O_VERSION, O_PROFILE, O_STOCK,
	    O_ENV, O_FORCE, O_TIMEOUT, O_INHERIT, O_REPORT, O_SAMPLES, O_OUT,
	    O_USER_HOME, O_MACHINE, O_SIP, O_LIMIT, O_ARCH, O_GUESTS, O_WINDOW,
	    O_LOCAL };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "socket", required_argument, NULL, O_SOCKET },
		{ "home", required_argument, NULL, O_HOME },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ "profile", required_argument, NULL, O_PROFILE },
		{ "follow", no_argument, NULL, 'f' },
		{ "stock", no_argument, NULL, O_STOCK },
		{ "env", required_argument, NULL, O_ENV },
		{ "force", no_argument, NULL, O_FORCE },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "inherit", no_argument, NULL, O_INHERIT },
		{ "report", required_argument, NULL, O_REPORT },
		{ "samples", required_argument, NULL, O_SAMPLES },
		{ "out", required_argument, NULL, O_OUT },
		{ "user-home", required_argument, NULL, O_USER_HOME },
		{ "machine", required_argument, NULL, O_MACHINE },
		{ "sip", required_argument, NULL, O_SIP },
		{ "limit", required_argument, NULL, O_LIMIT },
		{ "arch", required_argument, NULL, O_ARCH },
		{ "min-guests", required_argument, NULL, O_GUESTS },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "local-verify-allows", no_argument, NULL, O_LOCAL },
		{ NULL, 0, NULL, 0 }
	};
	char	*end;
	int	ch;

	while ((ch = getopt_long(argc, argv, "fh", longopts, NULL)) != -1) {
		switch (ch) {
		case O_JSON:	c->json = true; break;
		case O_SOCKET:	*sock = optarg; break;
		case O_HOME:	*home = optarg; break;
		case 'h':	usage(stdout); exit(0);
		case O_VERSION:
			printf("metalcapctl %s (protocol %d)\n", MC_VERSION,
			    MC_PROTOCOL_VERSION);
			exit(0);
		case O_PROFILE:
			c->opts.given |= CTL_OPT_PROFILE;
			c->opts.profile = optarg;
			break;
		case 'f':	c->opts.given |= CTL_OPT_FOLLOW; break;
		case O_STOCK:	c->opts.given |= CTL_OPT_STOCK; break;
		case O_FORCE:	c->opts.given |= CTL_OPT_FORCE; break;
		case O_INHERIT:	c->opts.given |= CTL_OPT_INHERIT; break;
		case O_REPORT:
			c->opts.given |= CTL_OPT_REPORT;
			c->opts.report = optarg;
			break;
		case O_OUT:
			c->opts.given |= CTL_OPT_OUT;
			c->opts.out = optarg;
			break;
		case O_USER_HOME:
			c->opts.given |= CTL_OPT_USER_HOME;
			c->opts.user_home = optarg;
			break;
		case O_MACHINE:
		case O_SIP:
		case O_ARCH:
			if (ctl_host_option(c, ch == O_MACHINE ?
			    CTL_OPT_MACHINE : ch == O_SIP ? CTL_OPT_SIP :
			    CTL_OPT_ARCH, optarg) == -1)
				return -1;
			break;
		case O_SAMPLES:
			c->opts.given |= CTL_OPT_SAMPLES;
			c->opts.samples = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' ||
			    c->opts.samples < 1 || c->opts.samples > 100) {
				fprintf(stderr, "metalcapctl: --samples %s: "
				    "expected rounds, 1 to 100\n", optarg);
				return -1;
			}
			break;
		case O_GUESTS:
		case O_WINDOW:
			if (ctl_count_option(c, ch == O_GUESTS, optarg) == -1)
				return -1;
			break;
		case O_LOCAL:	c->opts.given |= CTL_OPT_LOCAL; break;
		case O_TIMEOUT:
			c->timeout = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || c->timeout < 0 ||
			    c->timeout > 86400) {
				fprintf(stderr, "metalcapctl: --timeout %s: "
				    "expected seconds, 0 to 86400\n", optarg);
				return -1;
			}
			break;
		case O_LIMIT:
			c->opts.given |= CTL_OPT_LIMIT;
			c->opts.limits = realloc(c->opts.limits,
			    (size_t)(c->opts.nlimits + 1) *
			    sizeof *c->opts.limits);
			c->opts.limits[c->opts.nlimits++] = optarg;
			break;
		case O_ENV:
			c->opts.given |= CTL_OPT_ENV;
			c->opts.env = realloc(c->opts.env,
			    (size_t)(c->opts.nenv + 1) * sizeof *c->opts.env);
			c->opts.env[c->opts.nenv++] = optarg;
			break;
		default:
			usage(stderr);
			return -1;
		}
	}
	return optind;
}

/* The command named at argv[a], if its arguments and options fit. */
static const struct ctl_command *
ctl_command(const struct ctl *c, int argc, char **argv, int a)
{
	/* By bit, CTL_OPT_PROFILE first: each option has its name. */
	static const char *const names[] = { "--profile", "--follow",
	    "--stock", "--env", "--force", "--inherit", "--report",
	    "--samples", "--out", "--user-home", "--machine", "--sip",
	    "--limit", "--arch", "--min-guests", "--window",
	    "--local-verify-allows" };
	_Static_assert(1u << (sizeof names / sizeof names[0] - 1) ==
	    CTL_OPT_LOCAL, "a name for every CTL_OPT_ bit, the last "
	    "--local-verify-allows");
	const struct ctl_command *cmd = NULL;
	unsigned	 extra;
	size_t		 i;
	int		 nargs = argc - a - 1;

	for (i = 0; a < argc && i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, argv[a]) == 0)
			cmd = &commands[i];
	if (cmd == NULL) {
		if (a < argc)
			fprintf(stderr, "metalcapctl: unknown command %s\n",
			    argv[a]);
		usage(stderr);
		return NULL;
	}
	if ((extra = c->opts.given & ~cmd->opts) != 0) {
		for (i = 0; !(extra & (1u << i)); i++)
			;
		fprintf(stderr, "metalcapctl: %s does not take %s\nusage: "
		    "metalcapctl %s\n", cmd->name, names[i], cmd->usage);
		return NULL;
	}
	if (nargs < cmd->min_args || (cmd->max_args >= 0 &&
	    nargs > cmd->max_args)) {
		fprintf(stderr, "usage: metalcapctl %s\n", cmd->usage);
		return NULL;
	}
	return cmd;
}

int
main(int argc, char **argv)
{
	struct ctl		 c = { .client = { .fd = -1 }, .timeout = 120 };
	const char		*sock = NULL, *home = getenv("METALCAP_HOME");
	const struct ctl_command *cmd;
	char			 why[512];
	int			 a, rc;

	ctl_signals_init();
	signal(SIGPIPE, SIG_IGN);
	rc = EXIT_USAGE;
	if ((a = ctl_options(&c, argc, argv, &sock, &home)) == -1 ||
	    (cmd = ctl_command(&c, argc, argv, a)) == NULL)
		goto out;
	if (paths_init(&c.paths, home, argv[0], why, sizeof why) == -1) {
		fprintf(stderr, "metalcapctl: %s\n", why);
		goto out;
	}
	if (sock != NULL && strlen(sock) >= sizeof
	    ((struct sockaddr_un *)0)->sun_path) {
		fprintf(stderr, "metalcapctl: --socket %s: over the %zu bytes "
		    "a unix socket path may have\n", sock,
		    sizeof ((struct sockaddr_un *)0)->sun_path - 1);
		goto out;
	}
	if (sock != NULL)
		snprintf(c.paths.socket, sizeof c.paths.socket, "%s", sock);
	if (cmd->offline)
		rc = cmd->fn(&c, cmd, argc - a - 1, argv + a + 1);
	else if ((rc = ctl_open(&c)) == 0)
		rc = cmd->fn(&c, cmd, argc - a - 1, argv + a + 1);
out:
	/* --env's list, also when the command refused it. */
	mc_client_close(&c.client);
	free(c.opts.env);
	free(c.opts.limits);
	return rc;
}
