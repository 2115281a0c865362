/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR of launchctl(1) for Linux, which has no launchd: the subset
 * metalcapd uses, with launchctl's exit codes and stderr texts
 * (../shared/docs/launchd.md §1.4, §6).  State lives in $LAUNCHCTL_SIM_DIR:
 * services/<label>.plist (one per registered job) and disabled.plist.
 *
 * A registered job that should run gets a detached supervisor process
 * (launchd's part): it starts the program with the plist's environment
 * (DYLD_INSERT_LIBRARIES becomes LD_PRELOAD) and log files, records pid and
 * exit status, restarts it per KeepAlive after ThrottleInterval, and on
 * bootout stops it (SIGTERM, then SIGKILL after ExitTimeOut) and only then
 * unregisters: bootout is asynchronous, as on macOS.
 *
 * Switches: LAUNCHCTL_SIM_AS_ROOT=1 (root's texts and codes),
 * LAUNCHCTL_SIM_NO_GUI=1 (no GUI session: gui/<uid> fails with 125, as
 * after sim-logout until sim-login),
 * LAUNCHCTL_SIM_THROTTLE=S (seconds between KeepAlive restarts, over the
 * plist's ThrottleInterval; launchd's default is 10),
 * LAUNCHCTL_SIM_DRAIN_MS=N (how long a booted-out label lingers, 300),
 * LAUNCHCTL_SIM_TRACE=FILE (log each call with a timestamp).
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <plist/plist.h>

#include "mc_plist.h"
#include "launchctl-sim.h"

/* --- commands -------------------------------------------------------------- */

/*
 * After sim-logout, until sim-login: SIM_DIR/logged-out.  The GUI domain
 * exists only while its user has a GUI session (launchd.md §1.1; "a GUI
 * session that has fully logged out", rjwalters/loom#4130), unlike
 * user/UID, which "does not terminate when a user logs out"
 * (geldata/gel-cli#740).
 */
static void
sim_logged_out_path(char *buf, size_t len)
{
	snprintf(buf, len, "%s/logged-out", sim_dir);
}

/* "gui/501" or "user/501": 0, or the launchctl error code printed. */
static int
sim_domain(const char *domain, const char *verb)
{
	char	expect[64], out[4096];

	snprintf(expect, sizeof expect, "%ld", (long)getuid());
	sim_logged_out_path(out, sizeof out);
	if (strncmp(domain, "gui/", 4) == 0 &&
	    strcmp(domain + 4, expect) == 0) {
		const char *nogui = getenv("LAUNCHCTL_SIM_NO_GUI");

		if ((nogui != NULL && strcmp(nogui, "1") == 0) ||
		    access(out, F_OK) == 0) {
			fprintf(stderr, "%s failed: 125: Domain does not "
			    "support specified action\n", verb);
			return 125;
		}
		return 0;
	}
	if (strncmp(domain, "user/", 5) == 0 &&
	    strcmp(domain + 5, expect) == 0)
		return 0;
	fprintf(stderr, "%s failed: 112: Could not find specified domain\n",
	    verb);
	return 112;
}

/*
 * Does the plist allow the session ("Aqua": gui/<uid>, "Background":
 * user/<uid>)?  An agent without LimitLoadToSessionType is Aqua's alone
 * (launchd.md §4, "Aqua by default").
 */
static bool
sim_allows_session(plist_t job, const char *session)
{
	plist_t		 t = plist_dict_get_item(job, "LimitLoadToSessionType");
	char		*s = NULL;
	uint32_t	 i;
	bool		 ok = false;

	if (t == NULL)
		return strcmp(session, "Aqua") == 0;
	if (plist_get_node_type(t) == PLIST_STRING) {
		plist_get_string_val(t, &s);
		ok = s != NULL && strcmp(s, session) == 0;
		free(s);
		return ok;
	}
	for (i = 0; plist_get_node_type(t) == PLIST_ARRAY &&
	    i < plist_array_get_size(t); i++) {
		plist_get_string_val(plist_array_get_item(t, i), &s);
		ok = ok || (s != NULL && strcmp(s, session) == 0);
		free(s);
		s = NULL;
	}
	return ok;
}

static int
sim_fail_5(const char *verb)
{
	fprintf(stderr, "%s failed: 5: Input/output error\n"
	    "Try re-running the command as root for richer errors.\n", verb);
	return 5;
}

static bool
sim_wants_run(plist_t job)
{
	return mc_plist_bool(job, "RunAtLoad", false) ||
	    sim_keepalive(job, true, 0);
}

/*
 * Background Task Management holding a label (macOS 13+, launchd.md §4):
 * launchd accepts the bootstrap (0) and never runs the job; the denial,
 * "Service cannot be launched because of BTM policy" (161), is only in
 * the unified log, never in launchctl's output [inf S24]; macadmins/
 * nudge#515.  A hold is SIM_DIR/btm-held/LABEL; sim-btm sets and lifts it.
 * Whether launchd starts a held job once it is allowed is not known, so
 * the simulator does not: a kickstart after the approval does.
 */
static void
sim_btm_path(const char *label, char *buf, size_t len)
{
	snprintf(buf, len, "%s/btm-held/%s", sim_dir, label);
}

static bool
sim_btm_holds(const char *label)
{
	char	path[4096];

	sim_btm_path(label, path, sizeof path);
	return access(path, F_OK) == 0;
}

/*
 * setenv KEY VALUE, unsetenv KEY, getenv KEY: launchd's own environment,
 * which jobs started afterwards inherit below their plist's
 * EnvironmentVariables.  launchd 842 support/launchctl.c: setenv and
 * unsetenv answer 0 (1 and "usage: setenv <key> <value>" for a wrong
 * count); getenv prints the value and a newline, or nothing when unset,
 * and answers 0 either way.
 */
static int
sim_env_verb(const char *verb, int argc, char **argv)
{
	plist_t	store;
	char	*value;

	if (strcmp(verb, "setenv") == 0 && argc != 2) {
		fprintf(stderr, "usage: setenv <key> <value>\n");
		return 1;
	}
	if (strcmp(verb, "setenv") != 0 && argc != 1) {
		fprintf(stderr, "usage: %s <key>\n", verb);
		return 1;
	}
	if (strcmp(verb, "setenv") == 0)
		sim_set_environment(argv[0], argv[1]);
	else if (strcmp(verb, "unsetenv") == 0)
		sim_set_environment(argv[0], NULL);
	else {
		store = sim_environment_store();
		if ((value = mc_plist_string(store, argv[0])) != NULL)
			printf("%s\n", value);
		free(value);
		plist_free(store);
	}
	return 0;
}

/* Not launchctl's: sim-btm hold|allow LABEL, for tests. */
static int
sim_btm(int argc, char **argv)
{
	char	path[4096];
	int	fd;

	if (argc != 2 || strchr(argv[1], '/') != NULL)
		return EX_USAGE_CODE;
	sim_btm_path("", path, sizeof path);
	mkdir(path, 0700);
	sim_btm_path(argv[1], path, sizeof path);
	if (strcmp(argv[0], "allow") == 0)
		return unlink(path) == 0 || errno == ENOENT ? 0 : 1;
	if (strcmp(argv[0], "hold") != 0 ||
	    (fd = open(path, O_WRONLY | O_CREAT, 0600)) == -1)
		return EX_USAGE_CODE;
	close(fd);
	return 0;
}

static int
sim_bootstrap_one(const char *domain, const char *path)
{
	struct stat	 sb;
	char		 why[256], *label;
	const char	*refused = NULL;
	plist_t		 job, rec, args;
	int		 rc = 0;

	/*
	 * launchctl(1): "Configuration files must disallow group and world
	 * writes", and an agent must be owned by the user loading it (or
	 * root).  Root is told why; anyone else gets error 5, and the log
	 * says "Caller specified a plist with bad ownership/permissions".
	 */
	if (stat(path, &sb) == 0 && ((sb.st_mode & (S_IWGRP | S_IWOTH)) ||
	    (sb.st_uid != 0 && sb.st_uid != getuid()))) {
		if (!sim_root())
			return sim_fail_5("Bootstrap");
		fprintf(stderr, "Bootstrap failed: 122: Path had bad "
		    "ownership/permissions\n");
		return 122;
	}
	if (mc_plist_read_file(path, &job, why, sizeof why) == -1) {
		if (access(path, F_OK) == -1) {
			fprintf(stderr, "Bootstrap failed: 2: No such file or "
			    "directory\n");
			return 2;
		}
		if (!sim_root())
			return sim_fail_5("Bootstrap");
		fprintf(stderr, "Bootstrap failed: 109: Invalid property "
		    "list\n");
		return 109;
	}
	label = mc_plist_string(job, "Label");
	args = plist_dict_get_item(job, "ProgramArguments");
	if (label == NULL)
		rc = 109, refused = "109: Invalid property list";
	else if (args == NULL || plist_get_node_type(args) != PLIST_ARRAY ||
	    plist_array_get_size(args) == 0)
		rc = 111, refused = "111: Invalid or missing "
		    "Program/ProgramArguments";
	else if (!sim_allows_session(job, strncmp(domain, "user/", 5) == 0 ?
	    "Background" : "Aqua"))
		rc = 134, refused = "134: Service cannot load in requested "
		    "session";
	/* Not root: these too come out as 5 (issue 27's review, finding 12). */
	if (rc != 0 && !sim_root())
		rc = sim_fail_5("Bootstrap");
	else if (rc != 0)
		fprintf(stderr, "Bootstrap failed: %s\n", refused);
	if (rc != 0)
		goto out;
	sim_lock();
	if ((rec = sim_load(label)) != NULL) {
		plist_free(rec);
		sim_unlock();
		if (!sim_root()) {
			rc = sim_fail_5("Bootstrap");
			goto out;
		}
		fprintf(stderr, "%s: service already bootstrapped\n"
		    "Bootstrap failed: 37: Operation already in progress\n",
		    path);
		rc = 37;
		goto out;
	}
	if (sim_is_disabled(label)) {
		sim_unlock();
		if (!sim_root()) {
			rc = sim_fail_5("Bootstrap");
			goto out;
		}
		fprintf(stderr, "%s: Service is disabled\nBootstrap failed: 119: "
		    "Service is disabled\n", path);
		rc = 119;
		goto out;
	}
	rec = plist_copy(job);
	sim_set_str(rec, "Domain", domain);
	sim_set_str(rec, "Path", path);
	sim_set_str(rec, "State", "not running");
	sim_set_int(rec, "Runs", 0);
	sim_set_str(rec, "LastExit", "(never exited)");
	sim_save(label, rec);
	plist_free(rec);
	sim_unlock();
	if (sim_wants_run(job) && !sim_btm_holds(label))
		sim_supervise(label, job);
out:
	free(label);
	plist_free(job);
	return rc;
}

static int
sim_bootstrap(int argc, char **argv)
{
	int	rc = 0, i;

	if (argc < 2) {
		fprintf(stderr, "Usage: launchctl bootstrap <domain-target> "
		    "[service-path, service-path2, ...]\n");
		return EX_USAGE_CODE;
	}
	sim_use_domain(argv[0]);
	if ((rc = sim_domain(argv[0], "Bootstrap")) != 0)
		return rc;
	for (i = 1; i < argc && rc == 0; i++)
		rc = sim_bootstrap_one(argv[0], argv[i]);
	return rc;
}

/* "gui/501/label" -> label; NULL if not a service target. */
static const char *
sim_target_label(const char *target, char *domain, size_t len)
{
	const char	*slash = strchr(target, '/');

	if (slash == NULL || (slash = strchr(slash + 1, '/')) == NULL)
		return NULL;
	snprintf(domain, len, "%.*s", (int)(slash - target), target);
	sim_use_domain(domain);
	return slash + 1;
}

static int
sim_bootout(int argc, char **argv)
{
	char		 domain[128], why[256], *plabel = NULL;
	const char	*label;
	plist_t		 rec, job;
	long long	 sup;

	if (argc == 2) {	/* bootout <domain> <plist> */
		if (mc_plist_read_file(argv[1], &job, why, sizeof why) == -1) {
			fprintf(stderr, "%s: No such file or directory\n"
			    "Boot-out failed: 2: No such file or directory\n",
			    argv[1]);
			return 2;
		}
		plabel = mc_plist_string(job, "Label");
		plist_free(job);
		label = plabel;
		if (label == NULL || (rec = sim_load(label)) == NULL) {
			free(plabel);
			fprintf(stderr, "Boot-out failed: 5: Input/output "
			    "error\n");
			return 5;
		}
		plist_free(rec);
	} else if (argc != 1 ||
	    (label = sim_target_label(argv[0], domain, sizeof domain)) == NULL) {
		fprintf(stderr, "Usage: launchctl bootout <domain-target> "
		    "[service-path1, service-path2, ...] | <service-target>\n");
		return EX_USAGE_CODE;
	}
	sim_lock();
	if ((rec = sim_load(label)) == NULL) {
		sim_unlock();
		free(plabel);
		fprintf(stderr, "Boot-out failed: 3: No such process\n");
		return 3;
	}
	sup = sim_int(rec, "Supervisor", 0);
	if (mc_plist_bool(rec, "Draining", false) && sim_alive(sup)) {
		sim_unlock();
		plist_free(rec);
		free(plabel);
		fprintf(stderr, "Boot-out failed: 36: Operation now in "
		    "progress\n");
		return 36;
	}
	if (sim_alive(sup)) {
		plist_dict_set_item(rec, "Draining", plist_new_bool(1));
		sim_save(label, rec);
		kill((pid_t)sup, SIGTERM);
	} else {
		sim_service_path(label, why, sizeof why);
		unlink(why);
	}
	sim_unlock();
	plist_free(rec);
	free(plabel);
	return 0;
}

static int
sim_not_found(const char *label, bool bad_request)
{
	if (bad_request)
		fprintf(stderr, "Bad request.\n");
	fprintf(stderr, "Could not find service \"%s\" in domain for user "
	    "gui: %ld\n", label, (long)getuid());
	return 113;
}

/*
 * A kickstart of a job launchd holds in "spawn scheduled" (a KeepAlive
 * restart waiting out ThrottleInterval) blocks until that spawn happens:
 * its runs never move meanwhile (KiroCrew#1698: 7 minutes, no output,
 * no exit; aragora#5997: hung for the throttle's cooldown).  Booted out
 * meanwhile, it returns.
 */
static void
sim_kickstart_wait(const char *label)
{
	plist_t	 rec;
	char	*state;
	bool	 scheduled = true;

	while (scheduled) {
		if ((rec = sim_load(label)) == NULL)
			return;
		state = mc_plist_string(rec, "State");
		scheduled = state != NULL && strcmp(state, "spawn scheduled") ==
		    0;
		free(state);
		plist_free(rec);
		if (scheduled)
			usleep(20000);
	}
}

static int
sim_kickstart(int argc, char **argv)
{
	bool		 kill_first = false, print_pid = false;
	char		 domain[128];
	const char	*label;
	plist_t		 rec, job;
	long long	 sup, pid;
	int		 i;

	for (i = 0; i < argc - 1; i++) {
		if (strcmp(argv[i], "-k") == 0)
			kill_first = true;
		else if (strcmp(argv[i], "-p") == 0)
			print_pid = true;
	}
	if (argc < 1 || (label = sim_target_label(argv[argc - 1], domain,
	    sizeof domain)) == NULL) {
		fprintf(stderr, "Usage: launchctl kickstart [-kp] "
		    "<service-target>\n");
		return EX_USAGE_CODE;
	}
	if ((rec = sim_load(label)) == NULL)
		return sim_not_found(label, false);
	/* Held: launchctl says nothing and nothing runs (see sim_btm_holds). */
	if (sim_btm_holds(label)) {
		plist_free(rec);
		return 0;
	}
	sup = sim_int(rec, "Supervisor", 0);
	pid = sim_int(rec, "PID", 0);
	if (sim_alive(sup)) {
		/* -k kills a process; a scheduled spawn is not hastened. */
		if (kill_first && pid > 0)
			kill((pid_t)sup, SIGUSR1);
		sim_kickstart_wait(label);
	} else {
		/* Within the throttle its supervisor waits (sup_run). */
		job = plist_copy(rec);
		sim_supervise(label, job);
		plist_free(job);
	}
	plist_free(rec);
	if (!print_pid)
		return 0;
	for (i = 0; i < 100; i++) {	/* until the (new) pid is recorded */
		if ((rec = sim_load(label)) != NULL) {
			long long now = sim_int(rec, "PID", 0);

			plist_free(rec);
			if (now > 0 && (now != pid || !kill_first)) {
				printf("%lld\n", now);
				return 0;
			}
		}
		usleep(20000);
	}
	return 0;
}

/*
 * kill SIGNAL SERVICE-TARGET: the signal, by name (with or without SIG)
 * or number, to the service's process (launchctl(1), 10.10 and later:
 * "Sends the specified signal to the specified service if it is
 * running").  Not running: 3, ESRCH, the code launchctl gives for "No
 * such process" elsewhere (launchd.md §1.4, bootout's) - inferred.
 */
static int
sim_kill(int argc, char **argv)
{
	static const struct {
		const char	*name;
		int		 sig;
	} names[] = { { "TERM", SIGTERM }, { "KILL", SIGKILL },
	    { "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
	    { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 } };
	char		 domain[128];
	const char	*label, *name;
	plist_t		 rec;
	long long	 pid;
	long		 sig = -1;
	size_t		 i;

	if (argc == 2) {
		name = strncmp(argv[0], "SIG", 3) == 0 ? argv[0] + 3 : argv[0];
		for (i = 0; i < sizeof names / sizeof names[0]; i++)
			if (strcmp(name, names[i].name) == 0)
				sig = names[i].sig;
		if (sig == -1 && *argv[0] != '\0' && strspn(argv[0],
		    "0123456789") == strlen(argv[0]))
			sig = strtol(argv[0], NULL, 10);
	}
	if (argc != 2 || sig <= 0 || sig >= NSIG || (label = sim_target_label(argv[1],
	    domain, sizeof domain)) == NULL) {
		fprintf(stderr, "Usage: launchctl kill <signal-name|"
		    "signal-number> <service-target>\n");
		return EX_USAGE_CODE;
	}
	if ((rec = sim_load(label)) == NULL)
		return sim_not_found(label, false);
	pid = sim_int(rec, "PID", 0);
	plist_free(rec);
	if (pid <= 0 || kill((pid_t)pid, (int)sig) == -1) {
		fprintf(stderr, "Could not kill service: 3: No such process\n");
		return 3;
	}
	return 0;
}

static void
sim_print_strings(plist_t array, const char *indent)
{
	uint32_t	 i;
	char		*s;

	for (i = 0; array != NULL && i < plist_array_get_size(array); i++) {
		s = NULL;
		plist_get_string_val(plist_array_get_item(array, i), &s);
		printf("%s%s\n", indent, s ? s : "");
		free(s);
	}
}

static const char *
sim_signal_name(int sig)
{
	switch (sig) {
	case SIGTERM:	return "Terminated";
	case SIGKILL:	return "Killed";
	case SIGABRT:	return "Abort trap";
	case SIGSEGV:	return "Segmentation fault";
	case SIGINT:	return "Interrupt";
	case SIGBUS:	return "Bus error";
	case SIGILL:	return "Illegal instruction";
	case SIGFPE:	return "Floating point exception";
	case SIGTRAP:	return "Trace/BPT trap";
	case SIGHUP:	return "Hangup";
	case SIGPIPE:	return "Broken pipe";
	default:	return "Signal";
	}
}

/* How the last run ended: one of three lines, or "(never exited)". */
static void
sim_print_last_run(plist_t rec)
{
	char	*s;

	if ((s = mc_plist_string(rec, "ExitReason")) != NULL)
		printf("\tlast exit reason = %s\n", s);
	else if (sim_int(rec, "LastSignal", 0) > 0)
		printf("\tlast terminating signal = %s: %lld\n",
		    sim_signal_name((int)sim_int(rec, "LastSignal", 0)),
		    sim_int(rec, "LastSignal", 0));
	else if ((s = mc_plist_string(rec, "LastExit")) != NULL)
		printf("\tlast exit code = %s\n", s);
	else
		printf("\tlast exit code = (never exited)\n");
	free(s);
}

static int
sim_print(int argc, char **argv)
{
	char		 domain[128], *s;
	const char	*label;
	plist_t		 rec, env;
	plist_dict_iter	 it = NULL;
	long long	 pid;
	int		 rc;

	if (argc != 1) {
		fprintf(stderr, "Usage: launchctl print <domain-target> | "
		    "<service-target>\n");
		return EX_USAGE_CODE;
	}
	if ((label = sim_target_label(argv[0], domain, sizeof domain)) == NULL)
		return sim_domain(argv[0], "Print") == 0 ?
		    (printf("%s = {\n}\n", argv[0]), 0) : 125;
	if ((rc = sim_domain(domain, "Print")) != 0)
		return rc;
	if ((rec = sim_load(label)) == NULL)
		return sim_not_found(label, true);
	pid = sim_int(rec, "PID", 0);
	printf("%s = {\n", argv[0]);
	printf("\tactive count = %d\n", pid > 0 ? 1 : 0);
	s = mc_plist_string(rec, "Path");
	printf("\tpath = %s\n\ttype = LaunchAgent\n", s ? s : "");
	free(s);
	s = mc_plist_string(rec, "State");
	printf("\tstate = %s\n", s ? s : "not running");
	free(s);
	printf("\targuments = {\n");
	sim_print_strings(plist_dict_get_item(rec, "ProgramArguments"), "\t\t");
	printf("\t}\n");
	if ((s = mc_plist_string(rec, "StandardOutPath")) != NULL)
		printf("\tstdout path = %s\n", s);
	free(s);
	if ((s = mc_plist_string(rec, "StandardErrorPath")) != NULL)
		printf("\tstderr path = %s\n", s);
	free(s);
	env = plist_dict_get_item(rec, "EnvironmentVariables");
	printf("\tenvironment = {\n");
	if (env != NULL && plist_get_node_type(env) == PLIST_DICT)
		plist_dict_new_iter(env, &it);
	while (it != NULL) {
		char	*key = NULL, *val = NULL;
		plist_t	 node;

		plist_dict_next_item(env, it, &key, &node);
		if (key == NULL)
			break;
		if (plist_get_node_type(node) == PLIST_STRING)
			plist_get_string_val(node, &val);
		printf("\t\t%s => %s\n", key, val ? val : "");
		free(key);
		free(val);
	}
	free(it);
	printf("\t}\n\texit timeout = %lld\n", sim_int(rec, "ExitTimeOut", 5));
	printf("\truns = %lld\n", sim_int(rec, "Runs", 0));
	if (pid > 0 && sim_alive(pid))
		printf("\tpid = %lld\n", pid);
	sim_print_last_run(rec);
	/* A running service's coalitions, each with a state of its own
	 * (wazuh#30799 in tests/fixtures/launchctl-print). */
	if (pid > 0 && sim_alive(pid))
		printf("\n\tresource coalition = {\n\t\tID = %lld\n\t\ttype = "
		    "resource\n\t\tstate = active\n\t\tactive count = 1\n"
		    "\t\tname = %s\n\t}\n\n\tjetsam coalition = {\n\t\tID = "
		    "%lld\n\t\ttype = jetsam\n\t\tstate = active\n\t\tactive "
		    "count = 1\n\t\tname = %s\n\t}\n", pid, label, pid + 1,
		    label);
	printf("\n\tspawn type = interactive (4)\n}\n");
	plist_free(rec);
	return 0;
}

static int
sim_print_disabled(int argc, char **argv)
{
	plist_t		 store;
	plist_dict_iter	 it = NULL;
	char		*key;
	plist_t		 node;
	uint8_t		 v;
	int		 rc;

	if (argc != 1) {
		fprintf(stderr, "Usage: launchctl print-disabled "
		    "<domain-target>\n");
		return EX_USAGE_CODE;
	}
	if ((rc = sim_domain(argv[0], "Print")) != 0)
		return rc;
	store = sim_disabled_store();
	printf("\tdisabled services = {\n");
	plist_dict_new_iter(store, &it);
	for (;;) {
		key = NULL;
		plist_dict_next_item(store, it, &key, &node);
		if (key == NULL)
			break;
		plist_get_bool_val(node, &v);
		printf("\t\t\"%s\" => %s\n", key, v ? "disabled" : "enabled");
		free(key);
	}
	free(it);
	printf("\t}\n");
	plist_free(store);
	return 0;
}

static int
sim_list(int argc, char **argv)
{
	DIR		*dir;
	struct dirent	*de;
	char		 path[4096], label[1024];
	plist_t		 rec;
	long long	 pid, ws;

	if (argc == 1) {
		if ((rec = sim_load(argv[0])) == NULL) {
			fprintf(stderr, "Could not find service \"%s\" in "
			    "domain for port\n", argv[0]);
			return 113;
		}
		pid = sim_int(rec, "PID", 0);
		printf("{\n\t\"LimitLoadToSessionType\" = \"Aqua\";\n"
		    "\t\"Label\" = \"%s\";\n\t\"OnDemand\" = false;\n", argv[0]);
		ws = sim_int(rec, "WaitStatus", -1);
		if (ws >= 0)
			printf("\t\"LastExitStatus\" = %lld;\n", ws);
		if (pid > 0)
			printf("\t\"PID\" = %lld;\n", pid);
		printf("};\n");
		plist_free(rec);
		return 0;
	}
	/* The GUI domain's, for a user logged in at the console. */
	snprintf(path, sizeof path, "%s/services/gui", sim_dir);
	printf("PID\tStatus\tLabel\n");
	if ((dir = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(dir)) != NULL) {
		size_t n = strlen(de->d_name);

		if (n < 7 || strcmp(de->d_name + n - 6, ".plist") != 0)
			continue;
		snprintf(label, sizeof label, "%.*s", (int)(n - 6), de->d_name);
		if ((rec = sim_load(label)) == NULL)
			continue;
		pid = sim_int(rec, "PID", 0);
		if (pid > 0)
			printf("%lld\t", pid);
		else
			printf("-\t");
		if (sim_int(rec, "LastSignal", 0) > 0)
			printf("-%lld\t", sim_int(rec, "LastSignal", 0));
		else
			printf("%lld\t", (sim_int(rec, "WaitStatus", 0) >> 8) &
			    0xff);
		printf("%s\n", label);
		plist_free(rec);
	}
	closedir(dir);
	return 0;
}

/* LAUNCHCTL_SIM_TRACE=FILE: "<realtime ns> <args>" per call, for benches. */
static void
sim_trace(int argc, char **argv)
{
	const char	*file = getenv("LAUNCHCTL_SIM_TRACE");
	struct timespec	 ts;
	FILE		*f;
	int		 i;

	if (file == NULL || (f = fopen(file, "a")) == NULL)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(f, "%lld", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	for (i = 1; i < argc; i++)
		fprintf(f, " %s", argv[i]);
	fputc('\n', f);
	fclose(f);
}

static void
sim_mark_jetsam(plist_t rec, void *arg)
{
	/* iPadOS 18.5's words for a process over its limit (GhostVT, in
	 * tests/fixtures/launchctl-print/README.md), or the reason asked. */
	sim_set_str(rec, "KillReason", arg != NULL ? (const char *)arg :
	    "JETSAM_REASON_MEMORY_PERPROCESSLIMIT");
}

/*
 * Not launchctl's: the kernel's memory killer, for tests.  The job's
 * process dies of SIGKILL and print tells the run's end as launchd does
 * for jetsam: a "last exit reason" (the one given, say macOS's
 * JETSAM_REASON_MEMORY_IDLE_EXIT for an idle process reclaimed), no exit
 * code.
 */
static int
sim_jetsam(int argc, char **argv)
{
	char		 domain[128];
	const char	*label;
	plist_t		 rec;
	long long	 pid;

	if (argc < 1 || argc > 2 || (label = sim_target_label(argv[0], domain,
	    sizeof domain)) == NULL || (rec = sim_load(label)) == NULL)
		return 113;
	pid = sim_int(rec, "PID", 0);
	plist_free(rec);
	if (pid <= 0 || !sim_alive(pid))
		return 3;
	sim_update(label, sim_mark_jetsam, argc == 2 ? (void *)argv[1] : NULL);
	kill((pid_t)pid, SIGKILL);
	return 0;
}

/*
 * Not launchctl's: a login, for tests.  launchd loads every plist in the
 * user's LaunchAgents folder into the GUI domain, skipping disabled
 * labels silently (launchd 842 launchctl: the overrides store; launchd-dev
 * 2015-08: "if the job exists in that disabled list, launchd will refuse
 * to load it"), and plists with bad ownership or modes (EnvPane#16).
 */
static int
sim_login(int argc, char **argv)
{
	char		 gui[64], path[4096], why[256], *label;
	struct dirent	*de;
	plist_t		 job;
	DIR		*dp;
	size_t		 n;
	int		 saved, devnull;

	if (argc != 1 || (dp = opendir(argv[0])) == NULL)
		return EX_USAGE_CODE;
	sim_logged_out_path(path, sizeof path);
	unlink(path);	/* the GUI domain is there again */
	snprintf(gui, sizeof gui, "gui/%ld", (long)getuid());
	saved = dup(2);
	devnull = open("/dev/null", O_WRONLY);
	dup2(devnull, 2);	/* launchd tells no one at login */
	while ((de = readdir(dp)) != NULL) {
		n = strlen(de->d_name);
		if (n <= 6 || strcmp(de->d_name + n - 6, ".plist") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", argv[0], de->d_name);
		if (mc_plist_read_file(path, &job, why, sizeof why) == -1)
			continue;
		label = mc_plist_string(job, "Label");
		plist_free(job);
		if (label != NULL && !sim_is_disabled(label))
			sim_bootstrap_one(gui, path);
		free(label);
	}
	closedir(dp);
	dup2(saved, 2);
	close(saved);
	close(devnull);
	return 0;
}

/*
 * Not launchctl's: a logout, for tests.  The GUI domain's jobs end and
 * the domain is gone: bootstrap and print of gui/UID answer 125, as with
 * no GUI session, until sim-login (see sim_logged_out_path).
 */
static int
sim_logout(void)
{
	char		 path[4096], target[256], *args[1] = { target };
	struct dirent	*de;
	DIR		*dp;
	size_t		 n;
	int		 fd;

	sim_logged_out_path(path, sizeof path);
	if ((fd = open(path, O_WRONLY | O_CREAT, 0600)) != -1)
		close(fd);
	snprintf(path, sizeof path, "%s/services/gui", sim_dir);
	if ((dp = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL) {
		n = strlen(de->d_name);
		if (n <= 6 || strcmp(de->d_name + n - 6, ".plist") != 0)
			continue;
		snprintf(target, sizeof target, "gui/%ld/%.*s", (long)getuid(),
		    (int)(n - 6), de->d_name);
		sim_bootout(1, args);
	}
	closedir(dp);
	return 0;
}

static void
sim_usage(void)
{
	fprintf(stderr, "Usage: launchctl <subcommand> ... | help "
	    "[subcommand]\n(simulator: bootstrap bootout enable disable "
	    "kickstart kill print print-disabled list setenv unsetenv getenv; "
	    "for tests: sim-jetsam "
	    "sim-login sim-logout sim-btm)\n");
}

int
main(int argc, char **argv)
{
	char	path[4096];

	if ((sim_dir = getenv("LAUNCHCTL_SIM_DIR")) == NULL) {
		fprintf(stderr, "launchctl-sim: LAUNCHCTL_SIM_DIR is not set\n");
		return 1;
	}
	snprintf(path, sizeof path, "%s/services", sim_dir);
	mkdir(sim_dir, 0700);
	mkdir(path, 0700);
	sim_use_domain("gui/");
	sim_trace(argc, argv);
	if (argc < 2) {
		sim_usage();
		return EX_USAGE_CODE;
	}
	argc -= 2;
	if (strcmp(argv[1], "bootstrap") == 0)
		return sim_bootstrap(argc, argv + 2);
	if (strcmp(argv[1], "bootout") == 0)
		return sim_bootout(argc, argv + 2);
	if (strcmp(argv[1], "enable") == 0 && argc == 1)
		return sim_set_disabled(argv[2], false);
	if (strcmp(argv[1], "disable") == 0 && argc == 1)
		return sim_set_disabled(argv[2], true);
	if (strcmp(argv[1], "kickstart") == 0)
		return sim_kickstart(argc, argv + 2);
	if (strcmp(argv[1], "kill") == 0)
		return sim_kill(argc, argv + 2);
	if (strcmp(argv[1], "print") == 0)
		return sim_print(argc, argv + 2);
	if (strcmp(argv[1], "print-disabled") == 0)
		return sim_print_disabled(argc, argv + 2);
	if (strcmp(argv[1], "sim-jetsam") == 0)
		return sim_jetsam(argc, argv + 2);
	if (strcmp(argv[1], "sim-login") == 0)
		return sim_login(argc, argv + 2);
	if (strcmp(argv[1], "setenv") == 0 || strcmp(argv[1], "unsetenv") == 0 ||
	    strcmp(argv[1], "getenv") == 0)
		return sim_env_verb(argv[1], argc, argv + 2);
	if (strcmp(argv[1], "sim-btm") == 0)
		return sim_btm(argc, argv + 2);
	if (strcmp(argv[1], "sim-logout") == 0 && argc == 0)
		return sim_logout();
	if (strcmp(argv[1], "list") == 0)
		return sim_list(argc, argv + 2);
	fprintf(stderr, "Unrecognized subcommand: %s\n", argv[1]);
	sim_usage();
	return EX_USAGE_CODE;
}
