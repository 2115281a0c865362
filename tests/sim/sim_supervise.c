/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR of launchd's part in running a job: a detached supervisor per
 * registered service that starts the program, records its pid and exits,
 * restarts it per KeepAlive and stops it on bootout.
 */
#include <sys/file.h>
#include <sys/resource.h>
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

extern char **environ;

/* --- the supervisor (launchd's part) ------------------------------------- */

static volatile sig_atomic_t	sup_stop, sup_restart;

static void
sup_on_term(int sig)
{
	(void)sig;
	sup_stop = 1;
}

static void
sup_on_usr1(int sig)
{
	(void)sig;
	sup_restart = 1;
}

/* SIGCHLD wakes sup_wait's sigsuspend; nothing else to do. */
static void
sup_on_chld(int sig)
{
	(void)sig;
}

/*
 * dyld, before main: each inserted library must load, or the process is
 * ended with SIGABRT after two lines on stderr (dyld's
 * loadInsertedLibraries and halt; proxychains-ng#530 for the words).
 * Here "loads" is "is an ELF file we can read";
 * LAUNCHCTL_SIM_DYLD_ARCH=arm64e plays a workload of another architecture
 * than the library's, which no file check can see.  list is the variable's
 * value as the process gets it: empty inserts nothing, and otherwise every
 * ':' splits, an empty piece being a path that cannot load (dyld-1378
 * DyldProcessConfig.cpp PathOverrides::forEachInsertedDylib skips an empty
 * value; forEachInColonList hands each piece on, empty ones included).
 */
static void
sup_dyld(const char *list)
{
	const char	*arch = getenv("LAUNCHCTL_SIM_DYLD_ARCH");
	const char	*why = NULL, *p, *end;
	char		 path[4096], magic[4];
	int		 fd;

	if (list == NULL || *list == '\0')
		return;
	for (p = list;; p = end + 1) {
		end = p + strcspn(p, ":");
		snprintf(path, sizeof path, "%.*s", (int)(end - p), p);
		if ((fd = open(path, O_RDONLY)) == -1)
			why = "(no such file)";
		else if (read(fd, magic, 4) != 4 || memcmp(magic, "\177ELF", 4))
			why = "(not a mach-o file)";
		else if (arch != NULL)
			why = "(mach-o file, but is an incompatible architecture "
			    "(have 'arm64', need 'arm64e'))";
		if (fd != -1)
			close(fd);
		if (why != NULL) {
			fprintf(stderr, "dyld[%d]: terminating because inserted "
			    "dylib '%s' could not be loaded: tried: '%s' %s\n"
			    "dyld[%d]: tried: '%s' %s\n", (int)getpid(), path,
			    path, why, (int)getpid(), path, why);
			abort();
		}
		if (*end == '\0')
			return;
	}
}

/*
 * What launchd gives every job, whoever asked for it: every signal's
 * default disposition and an empty mask (launchd 842 runtime_fork resets
 * them; a caller's ignored SIGPIPE would otherwise survive exec), and the
 * default umask 022 unless the plist has Umask (Apple HT201684).  The
 * caller's raised descriptor limit still passes: launchd's own is not
 * in our sources.
 */
static void
sup_context(void)
{
	sigset_t	none;
	int		sig;

	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	umask(022);
}

/*
 * The descriptors a job may open: launchd's own soft limit, 256 (what
 * `launchctl limit maxfiles` shows; NixOS/nix#5726 hit it), unless the
 * plist's SoftResourceLimits says otherwise (launchd 842
 * job_setup_attributes: setrlimit with the soft value, the hard kept).
 * launchd's hard limit is unlimited (`256 unlimited`, skypilot#4836), so
 * xnu takes any soft value and enforces at most kern.maxfilesperproc
 * (proc_limitgetcur_nofile; xnu-2422 clamped the value itself).  Linux
 * refuses a soft value over the hard one, which stands here for
 * maxfilesperproc: such a value gets the hard limit.
 */
static void
sup_limits(plist_t job)
{
	plist_t		limits = plist_dict_get_item(job, "SoftResourceLimits");
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	rl.rlim_cur = rl.rlim_max < 256 ? rl.rlim_max : 256;
	if (limits != NULL && plist_get_node_type(limits) == PLIST_DICT)
		rl.rlim_cur = (rlim_t)sim_int(limits, "NumberOfFiles",
		    (long)rl.rlim_cur);
	if (rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* key=value into env (*n used of cap), replacing key's entry if any. */
static void
sup_env_set(char **env, size_t *n, size_t cap, const char *key,
    const char *value)
{
	size_t	klen = strlen(key), len = klen + strlen(value) + 2, i;
	char	*kv = malloc(len);

	snprintf(kv, len, "%s=%s", key, value);
	for (i = 0; i < *n; i++)
		if (strncmp(env[i], key, klen) == 0 && env[i][klen] == '=') {
			free(env[i]);
			env[i] = kv;
			return;
		}
	if (*n < cap - 1)
		env[(*n)++] = kv;
	else
		free(kv);
}

/* Each string of a dictionary into env, replacing. */
static void
sup_env_dict(char **env, size_t *n, size_t cap, plist_t dict)
{
	plist_dict_iter	 it = NULL;
	plist_t		 node;
	char		*key, *val;

	if (dict == NULL || plist_get_node_type(dict) != PLIST_DICT)
		return;
	plist_dict_new_iter(dict, &it);
	for (;;) {
		key = NULL;
		plist_dict_next_item(dict, it, &key, &node);
		if (key == NULL)
			break;
		val = NULL;
		if (plist_get_node_type(node) == PLIST_STRING)
			plist_get_string_val(node, &val);
		if (val != NULL)
			sup_env_set(env, n, cap, key, val);
		free(key);
		free(val);
	}
	free(it);
}

/*
 * The program's environment, built as launchd builds it (launchd 842
 * job_setup_attributes): launchd's own, which launchctl setenv changed,
 * with HOME, USER, LOGNAME, SHELL and TMPDIR (job_postfork_become_user)
 * and PATH /usr/bin:/bin:/usr/sbin:/sbin; then XPC_SERVICE_NAME (the
 * label) and XPC_FLAGS 0x0, which launchd 2.0 sets (not in 842's source:
 * public environment dumps, openclaw PR #20641); then the plist's
 * EnvironmentVariables, each replacing.  Nothing else of the caller's
 * passes but the sanitizers' options for the tests' own builds.  *inject
 * is where DYLD_INSERT_LIBRARIES ended, played by LD_PRELOAD.
 */
static char **
sup_environment(plist_t job, const char **inject)
{
	static const char *const pass[] = { "HOME=", "USER=", "LOGNAME=",
	    "SHELL=", "TMPDIR=", "ASAN_OPTIONS=", "UBSAN_OPTIONS=",
	    "LSAN_OPTIONS=" };
	plist_t		  store = sim_environment_store();
	char		**env, **e, *label = mc_plist_string(job, "Label");
	size_t		  n = 0, i, cap = 64;

	env = calloc(cap, sizeof *env);
	env[n++] = strdup("PATH=/usr/bin:/bin:/usr/sbin:/sbin");
	for (e = environ; *e != NULL; e++)
		for (i = 0; i < sizeof pass / sizeof pass[0]; i++)
			if (strncmp(*e, pass[i], strlen(pass[i])) == 0 &&
			    n < cap - 1)
				env[n++] = strdup(*e);
	sup_env_dict(env, &n, cap, store);
	plist_free(store);
	sup_env_set(env, &n, cap, "XPC_SERVICE_NAME", label ? label : "");
	sup_env_set(env, &n, cap, "XPC_FLAGS", "0x0");
	free(label);
	sup_env_dict(env, &n, cap, plist_dict_get_item(job,
	    "EnvironmentVariables"));
	*inject = NULL;
	for (i = 0; i < n; i++)
		if (strncmp(env[i], "DYLD_INSERT_LIBRARIES=", 22) == 0) {
			char *kv = malloc(strlen(env[i]) + 1);

			sprintf(kv, "LD_PRELOAD=%s", env[i] + 22);
			free(env[i]);
			env[i] = kv;
			*inject = kv + 11;
		}
	env[n] = NULL;
	return env;
}

static char **
sup_arguments(plist_t job)
{
	plist_t		 args = plist_dict_get_item(job, "ProgramArguments");
	uint32_t	 n = plist_array_get_size(args), i;
	char		**argv = calloc(n + 1, sizeof *argv);

	for (i = 0; i < n; i++)
		plist_get_string_val(plist_array_get_item(args, i), &argv[i]);
	return argv;
}

/* Open a log file for fd; -1 when it cannot be opened. */
static int
sup_log(plist_t job, const char *key, int fd)
{
	char	*path = mc_plist_string(job, key);
	int	 lfd;

	if (path == NULL)
		return 0;
	/* launchd 842 job_setup_fd: DEFFILEMODE, 0666, under the umask. */
	lfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOCTTY, 0666);
	free(path);
	if (lfd == -1)
		return -1;
	dup2(lfd, fd);
	close(lfd);
	return 0;
}

struct sup_exit {
	int		 status;
	pid_t		 pid;
	bool		 config_error;
	const char	*next;		/* the state it leaves: NULL, the
					   exit's own */
};

/* The machine's clock since boot, the same in every process. */
static long
sup_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sup_record_start(plist_t rec, void *arg)
{
	pid_t	pid = *(pid_t *)arg;

	/* launchd's start_time: the throttle of a later start counts from it. */
	sim_set_int(rec, "StartedMs", sup_now_ms());
	sim_set_int(rec, "PID", pid);
	sim_set_int(rec, "Runs", sim_int(rec, "Runs", 0) + 1);
	sim_set_str(rec, "State", "running");
}

static void
sup_record_exit(plist_t rec, void *arg)
{
	struct sup_exit	*x = arg;
	char		 text[64], *reason;

	/*
	 * How the run ended, as print says it: an exit code, or a signal
	 * and no exit code, or a kill with launchd's reason and neither
	 * (tests/fixtures/launchctl-print).  Each replaces the others.
	 */
	plist_dict_remove_item(rec, "PID");
	plist_dict_remove_item(rec, "LastExit");
	plist_dict_remove_item(rec, "LastSignal");
	if ((reason = mc_plist_string(rec, "KillReason")) != NULL) {
		sim_set_str(rec, "ExitReason", reason);
		plist_dict_remove_item(rec, "KillReason");
		free(reason);
	} else {
		plist_dict_remove_item(rec, "ExitReason");
		if (x->config_error)
			sim_set_str(rec, "LastExit", "78: EX_CONFIG");
		else if (WIFEXITED(x->status)) {
			snprintf(text, sizeof text, "%d",
			    WEXITSTATUS(x->status));
			sim_set_str(rec, "LastExit", text);
		} else
			sim_set_int(rec, "LastSignal", WTERMSIG(x->status));
	}
	sim_set_int(rec, "WaitStatus", x->config_error ? 78 << 8 : x->status);
	sim_set_str(rec, "State", x->next != NULL ? x->next : sup_stop ?
	    "SIGTERMed" : "not running");
}

static void
sup_record_state(plist_t rec, void *arg)
{
	sim_set_str(rec, "State", arg);
}

/* Start the program; 0 and *pid, or -1 when xpcproxy's part fails. */
static int
sup_spawn(plist_t job, pid_t *pid)
{
	char	*cwd = mc_plist_string(job, "WorkingDirectory");
	int	 fds[2], err = 0;

	if (pipe(fds) == -1)
		return -1;
	if ((*pid = fork()) == 0) {
		const char *inject;
		char **argv = sup_arguments(job), **env = sup_environment(job,
		    &inject);

		close(fds[0]);
		fcntl(fds[1], F_SETFD, FD_CLOEXEC);
		sup_context();
		if (plist_dict_get_item(job, "Umask") != NULL)
			umask((mode_t)sim_int(job, "Umask", 022));
		setpgid(0, 0);
		/*
		 * xpcproxy sets the job up and execs it; whatever fails on
		 * the way (its working directory, a log it cannot open, the
		 * program itself) ends it with EX_CONFIG (launchd.md §2,
		 * StandardOutPath row).
		 */
		sup_limits(job);
		/*
		 * Where launchd runs, / (dryvist/nix-ai#1088), without a
		 * WorkingDirectory.  One that is not there fails the spawn:
		 * "Service could not initialize: Unable to set current
		 * working directory. error = 2" from xpcproxy (maddox/
		 * wallop#61, 10.11); launchd 842 logged it and ran the job
		 * in / instead, which no longer happens.
		 */
		if (cwd == NULL)
			(void)chdir("/");
		if ((cwd != NULL && chdir(cwd) == -1) ||
		    sup_log(job, "StandardOutPath", 1) == -1 ||
		    sup_log(job, "StandardErrorPath", 2) == -1)
			err = 78;
		else {
			sup_dyld(inject);
			execve(argv[0], argv, env);
			err = 78;
		}
		write(fds[1], &err, sizeof err);
		_exit(78);
	}
	free(cwd);
	close(fds[1]);
	if (read(fds[0], &err, sizeof err) != (ssize_t)sizeof err)
		err = 0;
	close(fds[0]);
	return err == 78 ? -1 : 0;
}

/*
 * Stop the run: SIGTERM to the main process, SIGKILL after the exit
 * timeout, 0 being none (launchd 842 job_stop and job_kill signal the
 * pid, not its group: proc_terminate, kill2).  kickstart -k kills at
 * once (KiroCrew#1562: "LastExitStatus" = 9 after it, where a bootout's
 * stop leaves 0).
 */
static int
sup_terminate(pid_t pid, long timeout_s, bool kill_now)
{
	int	status = 0;
	long	i;

	if (!kill_now) {
		kill(pid, SIGTERM);
		for (i = 0; timeout_s == 0 || i < timeout_s * 20; i++) {
			if (waitpid(pid, &status, WNOHANG) == pid)
				return status;
			usleep(50000);
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return status;
}

/*
 * A test knob for a real event: each spawn held until the file
 * LAUNCHCTL_SIM_SPAWN_WHEN names exists, so that what launchd is told
 * while a job is about to start (a bootout right after its bootstrap)
 * comes then on purpose.
 */
static void
sup_spawn_when(void)
{
	const char	*path = getenv("LAUNCHCTL_SIM_SPAWN_WHEN");

	while (path != NULL && access(path, F_OK) != 0)
		usleep(10000);
}

/*
 * Wait for the run to end (0, its status in *status), or for a stop or
 * restart asked meanwhile (1: it runs on).  The signals stay blocked
 * from the flags' check to sigsuspend, which takes them atomically: one
 * that comes just before the wait is not lost.  With a plain waitpid, a
 * bootout sent right after a bootstrap could land between the check and
 * the wait, and the job ran on (issue 47, 4); launchd 842 serialises a
 * removal with the job's start (job_remove).
 */
static int
sup_wait(pid_t pid, int *status)
{
	sigset_t	block, old;
	pid_t		got;
	int		asked = 0;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);
	for (;;) {
		if ((got = waitpid(pid, status, WNOHANG)) == pid ||
		    (got == -1 && errno != EINTR))
			break;
		if (sup_stop || sup_restart) {
			asked = 1;
			break;
		}
		sigsuspend(&old);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return asked;
}

/*
 * The main process is gone, however it ended: what it left in its
 * process group gets SIGTERM, unless the job abandons its group
 * (launchd 842 job_reap: killpg2(j->p, SIGTERM) unless abandon_pg).
 */
static void
sup_reap_group(plist_t job, pid_t pid)
{
	plist_t	v = plist_dict_get_item(job, "AbandonProcessGroup");
	uint8_t	abandon = 0;

	if (v != NULL && plist_get_node_type(v) == PLIST_BOOLEAN)
		plist_get_bool_val(v, &abandon);
	if (!abandon && pid > 0)
		killpg(pid, SIGTERM);
}

static bool
sup_should_restart(plist_t job, int status)
{
	return sim_keepalive(job, false, status);
}

/* Is the job still registered?  Its state directory may be gone. */
static bool
sup_registered(const char *label)
{
	char	path[4096];

	sim_service_path(label, path, sizeof path);
	return access(path, F_OK) == 0;
}

/* Sleep up to ms, waking early for a stop or restart request. */
static void
sup_sleep(long ms)
{
	while (ms > 0 && !sup_stop && !sup_restart) {
		usleep(50000);
		ms -= 50;
	}
}

static void
sup_unregister(const char *label)
{
	char	path[4096];
	long	drain = getenv("LAUNCHCTL_SIM_DRAIN_MS") ?
	    atol(getenv("LAUNCHCTL_SIM_DRAIN_MS")) : 300;

	usleep((useconds_t)drain * 1000);
	sim_lock();
	sim_service_path(label, path, sizeof path);
	unlink(path);
	sim_unlock();
}

static void
sup_run(const char *label, plist_t job)
{
	/* The switch wins over the plist, so tests need not wait 10 s. */
	long		 throttle = getenv("LAUNCHCTL_SIM_THROTTLE") ?
	    atol(getenv("LAUNCHCTL_SIM_THROTTLE")) :
	    sim_int(job, "ThrottleInterval", 10);
	long		 exit_timeout = sim_int(job, "ExitTimeOut", 5);
	struct sup_exit	 x;
	pid_t		 pid = -1;
	long		 started, ran;
	bool		 again;
	plist_t		 rec;

	/*
	 * A start asked for (kickstart) within ThrottleInterval of the job's
	 * last start waits out the rest, as a KeepAlive restart does: launchd
	 * 842 job_mig_kickstart and launchctl start go through job_dispatch
	 * to job_start, whose throttle check ("Throttling respawn: Will start
	 * in N seconds") arms a timer and returns.  A fresh bootstrap has no
	 * last start.
	 */
	sim_lock();
	rec = sim_load(label);
	started = rec != NULL ? sim_int(rec, "StartedMs", -1) : -1;
	if (rec != NULL)
		plist_free(rec);
	sim_unlock();
	if (started >= 0 && (ran = (sup_now_ms() - started) / 1000) <
	    throttle) {
		sim_update(label, sup_record_state, "spawn scheduled");
		sup_sleep((throttle - ran) * 1000);
		if (sup_stop) {
			sup_unregister(label);
			return;
		}
	}
	for (;;) {
		sup_restart = 0;
		memset(&x, 0, sizeof x);
		if (!sup_registered(label))
			return;
		sup_spawn_when();
		started = sup_now_ms();
		if (sup_spawn(job, &pid) == -1) {
			/* A run that never got going: counted, and retried
			 * as any exit is (launchd keeps trying, throttled). */
			x.config_error = true;
			sim_update(label, sup_record_start, &pid);
			if (pid > 0)
				waitpid(pid, &x.status, 0);
		} else
			sim_update(label, sup_record_start, &pid);
		if (!x.config_error && sup_wait(pid, &x.status))
			x.status = sup_terminate(pid, exit_timeout, !sup_stop);
		sup_reap_group(job, pid);
		/*
		 * The throttle counts from the start, in whole seconds: a run
		 * shorter than ThrottleInterval waits the rest from its exit,
		 * the fraction of a second it ran not taken off, and a longer
		 * one restarts at once (launchd 842 job_start: td, the
		 * seconds since the start, truncated; respawn_delta =
		 * min_run_time - td, a timer armed now; "Service only ran for
		 * 3 seconds.  Pushing respawn out by 7 seconds.").  launchd
		 * reaps and schedules in one turn of its queue (job_reap,
		 * job_dispatch), so no look sees the job "not running" in
		 * between: the exit is recorded with the state it leaves.
		 */
		again = !sup_stop && !sup_restart &&
		    sup_should_restart(job, x.status);
		ran = (sup_now_ms() - started) / 1000;
		x.next = again && ran < throttle ? "spawn scheduled" : NULL;
		sim_update(label, sup_record_exit, &x);
		if (sup_stop)
			break;
		if (sup_restart)
			continue;
		if (!again)
			break;
		if (ran >= throttle)
			continue;
		sup_sleep((throttle - ran) * 1000);
		if (sup_stop)
			break;
	}
	if (sup_stop)
		sup_unregister(label);
}

/* Detach a supervisor for label; records its pid. */
void
sim_supervise(const char *label, plist_t job)
{
	pid_t	pid;
	int	fd;

	if ((pid = fork()) != 0) {
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return;
	}
	setsid();
	if (fork() != 0)
		_exit(0);
	fd = open("/dev/null", O_RDWR);
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (sim_lock_fd != -1)
		close(sim_lock_fd);
	sim_lock_fd = -1;
	{
		struct sigaction sa = { .sa_handler = sup_on_term };

		sigaction(SIGTERM, &sa, NULL);
		sa.sa_handler = sup_on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		/* Restarted: a blocking call elsewhere is no wait of ours. */
		sa.sa_handler = sup_on_chld;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGCHLD, &sa, NULL);
	}
	{
		pid_t	 self = getpid();
		plist_t	 rec;

		sim_lock();
		if ((rec = sim_load(label)) != NULL) {
			sim_set_int(rec, "Supervisor", self);
			sim_save(label, rec);
			plist_free(rec);
		}
		sim_unlock();
	}
	sup_run(label, job);
	_exit(0);
}

