/* SPDX-License-Identifier: MIT */
/*
 * Running one program with a profile's shim, outside launchd: what exec
 * and bench share.  Before the run, the profile is settled as the daemon
 * settles a job's (managed settings, the probe's verdict on this device)
 * and the program's own file is judged as check judges it.  The run is the
 * program itself, never a shell: macOS strips DYLD_* from protected
 * binaries such as /bin/sh.  After it, the shim's report for that pid is
 * the only proof that the injection held.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "mc_util.h"
#include "protocol.h"

#define CTL_PROBE_STAGE_MS	"30000"		/* probe.h: a cold compile */

/*
 * Signals while exec or bench runs: caught from the command's start to its
 * end, so that nothing it made is left behind.  The terminal's ^C and ^\
 * reach the program itself (one process group); sent to us alone (kill),
 * they are passed on, as SIGTERM and SIGHUP always are.  Once the program
 * is reaped the command stops, cleans up and dies of the same signal
 * (ctl_signals_die), so a shell script stops as it would for the program.
 * A signal ignored when metalcapctl started stays ignored, in the program
 * too, as env(1) leaves it.
 */
static volatile sig_atomic_t	ctl_child, ctl_caught;
static sigset_t			ctl_ignored;	/* at start */
static const int		ctl_sigs[] = { SIGINT, SIGQUIT, SIGTERM,
    SIGHUP };

static void
ctl_on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	ctl_caught = sig;
	if (ctl_child > 0 && ((sig != SIGINT && sig != SIGQUIT) ||
	    si == NULL || si->si_pid != 0))
		kill((pid_t)ctl_child, sig);
}

/* In main, first: what was ignored, and children reapable. */
void
ctl_signals_init(void)
{
	static const int	all[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP,
	    SIGPIPE };
	struct sigaction	old;
	size_t			i;

	sigemptyset(&ctl_ignored);
	for (i = 0; i < sizeof all / sizeof all[0]; i++)
		if (sigaction(all[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			sigaddset(&ctl_ignored, all[i]);
	/* Started with SIGCHLD ignored, waitpid would find no child. */
	signal(SIGCHLD, SIG_DFL);
}

void
ctl_signals_catch(void)
{
	struct sigaction	sa = { .sa_sigaction = ctl_on_signal,
	    .sa_flags = SA_SIGINFO };
	size_t			i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof ctl_sigs / sizeof ctl_sigs[0]; i++)
		if (!sigismember(&ctl_ignored, ctl_sigs[i]))
			sigaction(ctl_sigs[i], &sa, NULL);
}

/* The signal that stopped the command, or 0. */
int
ctl_signal_caught(void)
{
	return ctl_caught;
}

/*
 * The terminal's ^C or ^\ reached the program too: when it handled it and
 * went on (llama-cli's first ^C stops a generation), the program's status
 * stands, as a shell lets a child that survives ^C decide.
 */
void
ctl_signals_settle(int status)
{
	if ((ctl_caught == SIGINT || ctl_caught == SIGQUIT) &&
	    status != 128 + ctl_caught)
		ctl_caught = 0;
}

/* After cleaning up: die of the signal caught, if one was. */
void
ctl_signals_die(void)
{
	if (ctl_caught == 0)
		return;
	signal(ctl_caught, SIG_DFL);
	raise(ctl_caught);
}

/*
 * Start argv[0] (a path) with env; out and err are its stdout and stderr
 * (-1: ours).  Signals are blocked until the pid is known, so none meant
 * for the program is lost; the program gets the mask and SIGPIPE as they
 * were when metalcapctl started (it ignores SIGPIPE for itself, and an
 * ignored signal survives exec).  0, or an errno.
 */
static int
ctl_spawn(char *const *argv, char *const *env, int out, int err, pid_t *pid)
{
	posix_spawn_file_actions_t	fa;
	posix_spawnattr_t		attr;
	sigset_t			deflt, block, old;
	size_t				i;
	int				rc;

	sigemptyset(&block);
	for (i = 0; i < sizeof ctl_sigs / sizeof ctl_sigs[0]; i++)
		sigaddset(&block, ctl_sigs[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	/* One came between the caller's check and the block: do not start. */
	if (ctl_caught != 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return EINTR;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	sigemptyset(&deflt);
	if (!sigismember(&ctl_ignored, SIGPIPE))
		sigaddset(&deflt, SIGPIPE);
	posix_spawnattr_setsigdefault(&attr, &deflt);
	posix_spawnattr_setsigmask(&attr, &old);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF |
	    POSIX_SPAWN_SETSIGMASK);
	if (out != -1)
		posix_spawn_file_actions_adddup2(&fa, out, STDOUT_FILENO);
	if (err != -1)
		posix_spawn_file_actions_adddup2(&fa, err, STDERR_FILENO);
	rc = posix_spawn(pid, argv[0], &fa, &attr, argv, env);
	if (rc == 0)
		ctl_child = *pid;
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/*
 * Wait for the program: its status as a shell reports it (128 plus a
 * signal that ended it), or -1 if it could not be waited for.
 */
static int
ctl_wait(pid_t pid)
{
	int	status, rc;

	while ((rc = waitpid(pid, &status, 0)) == -1 && errno == EINTR)
		;
	ctl_child = 0;
	if (rc == -1)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

extern char **environ;

/*
 * llama.cpp's build of program, from its --version ("build N, commit
 * C"), into out; "" when it says none.  Its output is read through a
 * pipe, at most a page: --version writes two lines.
 */
void
ctl_llama_build(const char *program, char *out, size_t len)
{
	char	*argv[] = { (char *)program, "--version", NULL }, text[4096];
	int	 fds[2];
	pid_t	 pid;
	ssize_t	 n;

	out[0] = '\0';
	if (pipe(fds) == -1)
		return;
	if (ctl_spawn(argv, environ, fds[1], fds[1], &pid) != 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	close(fds[1]);
	n = mc_read_upto(fds[0], text, sizeof text - 1);
	close(fds[0]);
	(void)ctl_wait(pid);
	text[n > 0 ? n : 0] = '\0';
	if (mc_llama_build(text, out, len) == -1)
		out[0] = '\0';
}

/* A mkstemp or mkdtemp template in $TMPDIR (per user on macOS). */
void
ctl_tmp_name(char *buf, size_t len, const char *what)
{
	const char	*tmp = getenv("TMPDIR");

	if (tmp == NULL || *tmp == '\0' || mc_fmt(buf, len,
	    "%s/metalcap-%s.XXXXXX", tmp, what) == -1)
		snprintf(buf, len, "/tmp/metalcap-%s.XXXXXX", what);
}

/* An executable regular file, as execve will take it. */
static bool
ctl_runnable(const char *path)
{
	struct stat	sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    access(path, X_OK) == 0;
}

/*
 * PROGRAM as execvp would find it (an empty PATH entry is the current
 * folder; folders and files that cannot run are passed over), but never
 * handed to a shell.
 */
static int
ctl_resolve(const char *name, char *out, size_t len)
{
	const char	*path = getenv("PATH"), *p, *end;
	char		 dir[PATH_MAX];

	if (*name == '\0')
		return -1;
	if (strchr(name, '/') != NULL)
		return ctl_runnable(name) && mc_fmt(out, len, "%s",
		    name) == 0 ? 0 : -1;
	for (p = path ? path : "/usr/bin:/bin"; ; p = end + 1) {
		end = p + strcspn(p, ":");
		snprintf(dir, sizeof dir, "%.*s", (int)(end - p), p);
		if (mc_fmt(out, len, "%s/%s", dir[0] ? dir : ".", name) == 0 &&
		    ctl_runnable(out))
			return 0;
		if (*end == '\0')
			return -1;
	}
}

/* The verdict of a fresh metalcap-probe run here, judged as the gate does. */
static int
ctl_probe_direct(struct ctl *c, struct ctl_unlock *u)
{
	static struct launchctl_result	 r;
	struct gate_entry		 e;
	char				*argv[] = { c->paths.probe, "--json",
	    "--timeout-ms", CTL_PROBE_STAGE_MS, NULL };
	char				 out[PATH_MAX], err[PATH_MAX];
	char				**env;
	int				 ofd, efd, rc;
	pid_t				 pid;
	ssize_t				 n;

	memset(&e, 0, sizeof e);
	memset(&r, 0, sizeof r);
	if (ctl_caught != 0) {
		snprintf(u->why, sizeof u->why, "interrupted by signal %d",
		    (int)ctl_caught);
		return -1;
	}
	ctl_tmp_name(out, sizeof out, "probe");
	ctl_tmp_name(err, sizeof err, "probe");
	efd = -1;
	if ((ofd = mkstemp(out)) == -1 || (efd = mkstemp(err)) == -1) {
		/* Named, so that a TMPDIR that cannot be written is found. */
		mc_fmt(u->why, sizeof u->why, "the probe's temporary file %s: "
		    "%s", ofd == -1 ? out : err, strerror(errno));
		if (ofd != -1) {
			unlink(out);
			close(ofd);
		}
		return -1;
	}
	unlink(out);
	unlink(err);
	env = gate_env(c->paths.shim, u->profile, true, NULL);
	rc = env == NULL ? ENAMETOOLONG : ctl_spawn(argv, env, ofd, efd, &pid);
	mc_strv_free(env);
	if (rc != 0) {
		mc_fmt(u->why, sizeof u->why, "%s: %s", c->paths.probe,
		    strerror(rc));
		close(ofd);
		close(efd);
		return -1;
	}
	r.code = ctl_wait(pid);
	if (r.code == -1 || ctl_caught != 0) {
		mc_fmt(u->why, sizeof u->why, "%s: %s", c->paths.probe,
		    ctl_caught ? "interrupted" : strerror(errno));
		close(ofd);
		close(efd);
		return -1;
	}
	if (r.code > 128)
		r.signal = r.code - 128;
	n = pread(ofd, r.out, sizeof r.out - 1, 0);
	r.out[n > 0 ? n : 0] = '\0';
	n = pread(efd, r.err, sizeof r.err - 1, 0);
	r.err[n > 0 ? n : 0] = '\0';
	close(ofd);
	close(efd);
	gate_judge(&e, true, &r);
	snprintf(u->verdict, sizeof u->verdict, "%s", gate_word(&e));
	snprintf(u->why, sizeof u->why, "%s", e.reason);
	snprintf(u->device, sizeof u->device, "%s", json_string_value(
	    json_object_get(e.report, "device")) ?: "");
	json_decref(e.report);
	return 0;
}

/* Whether two paths name one file. */
static bool
ctl_same_file(const char *a, const char *b)
{
	struct stat	sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * The daemon's verdict (a cached one if still valid); -1 if none answers,
 * or if it probes another library than the one this run would inject (a
 * build's metalcapctl beside an installed daemon): then the probe runs
 * here.
 */
static int
ctl_probe_daemon(struct ctl *c, struct ctl_unlock *u)
{
	struct mc_rpc_message	 m;
	const msgpack_object	*report;
	char			 shim[PATH_MAX];

	snprintf(u->prober, sizeof u->prober, "metalcap-probe, run by "
	    "metalcapctl (no daemon answered)");
	if (mc_client_open(&c->client, c->paths.socket, c->timeout) == -1 ||
	    mc_client_hello_reply(&c->client, &m) != MC_CLIENT_OK) {
		mc_client_close(&c->client);
		return -1;
	}
	if (!ctl_same_file(ctl_field(&m.result, "shim", shim, sizeof shim),
	    c->paths.shim)) {
		mc_fmt(u->prober, sizeof u->prober, "metalcap-probe, run by "
		    "metalcapctl (metalcapd probes another shim, %s)", shim);
		mc_client_close(&c->client);
		return -1;
	}
	if (mc_client_call(&c->client, MC_M_PROBE, NULL, "profile",
	    u->profile->name, &m) != MC_CLIENT_OK) {
		mc_client_close(&c->client);
		return -1;
	}
	ctl_field(&m.result, "status", u->verdict, sizeof u->verdict);
	ctl_field(&m.result, "reason", u->why, sizeof u->why);
	if (strcmp(u->why, "-") == 0)
		u->why[0] = '\0';
	report = mc_rpc_map_get(&m.result, "report");
	if (report != NULL && report->type == MSGPACK_OBJECT_MAP)
		ctl_field(report, "device", u->device, sizeof u->device);
	snprintf(u->prober, sizeof u->prober, "metalcapd %s",
	    c->paths.socket);
	mc_client_close(&c->client);
	return 0;
}

/* The profile by name, as the daemon would allow it; -1 and u->why. */
static int
ctl_profile(struct ctl *c, struct ctl_unlock *u)
{
	const char	*name, *key;

	profile_load_all(&u->profiles, c->paths.profiles);
	managed_load(&u->managed, &c->paths);
	name = c->opts.profile ? c->opts.profile :
	    managed_default_profile(&u->managed);
	if ((u->auto_profile = strcmp(name, PROFILE_AUTO) == 0)) {
		if ((key = managed_forbids(&u->managed, &u->profiles,
		    name)) == NULL)
			return 0;
		snprintf(u->why, sizeof u->why, "profile auto is forbidden "
		    "by the managed setting %s", key);
		return -1;
	}
	if ((u->profile = profile_find(&u->profiles, name)) == NULL) {
		mc_fmt(u->why, sizeof u->why, "no profile %s in %s (see "
		    "metalcapctl profiles)", name, c->paths.profiles);
		return -1;
	}
	if (u->profile->error[0] != '\0') {
		snprintf(u->why, sizeof u->why, "profile %s",
		    u->profile->error);
		return -1;
	}
	if (u->profile->family_max == 0) {
		snprintf(u->why, sizeof u->why, "profile %s injects nothing; "
		    "run the program as it is", name);
		return -1;
	}
	if ((key = managed_forbids(&u->managed, &u->profiles, name)) != NULL) {
		snprintf(u->why, sizeof u->why, "profile %s is forbidden by "
		    "the managed setting %s%s%s", name, key,
		    u->managed.error[0] ? ": " : "", u->managed.error);
		return -1;
	}
	return 0;
}

/*
 * u->profile passed by the probe on this device, and not held back by a
 * failed verify here (as the daemon's gate holds it, also when it does
 * not run); -1 and u->why if not.  verify (probe_here) is never held.
 */
static int
ctl_unlock_probe(struct ctl *c, struct ctl_unlock *u, bool probe_here)
{
	char	reason[sizeof u->why];
	json_t	*verified;
	bool	 held;

	if (probe_here)
		snprintf(u->prober, sizeof u->prober, "metalcap-probe, run by "
		    "metalcapctl (verify probes for itself, so that a failed "
		    "verify cannot hold it back)");
	if ((probe_here || ctl_probe_daemon(c, u) == -1) &&
	    ctl_probe_direct(c, u) == -1)
		return -1;
	if (!probe_here && strcmp(u->verdict, "pass") == 0) {
		verified = verified_load(&c->paths);
		held = verified_holds_back(verified, u->profile->name);
		json_decref(verified);
		if (held) {
			mc_fmt(u->why, sizeof u->why, "profile %s is held back "
			    "on this guest: its newest metalcapctl verify "
			    "failed (metalcapctl doctor); a verify that passes "
			    "lifts it", u->profile->name);
			return -1;
		}
	}
	if (strcmp(u->verdict, "pass") == 0) {
		if (u->why[0] != '\0')	/* a pass's hazard: nocopy_mmap */
			fprintf(stderr, "metalcapctl: warning: %s\n", u->why);
		return 0;
	}
	memcpy(reason, u->why, sizeof reason);
	mc_fmt(u->why, sizeof u->why, "profile %s did not pass the probe on "
	    "this device (%s%s%s)", u->profile->name, u->verdict,
	    reason[0] ? ": " : "", reason);
	return -1;
}

/*
 * Profile auto: the shipped profiles from the highest family down, each
 * the managed settings allow, probed in turn; the first that passes is
 * u->profile.  Those passed over are said on stderr.
 */
static int
ctl_unlock_auto(struct ctl *c, struct ctl_unlock *u, bool probe_here)
{
	char			 over[sizeof u->why] = "";
	size_t			 n;

	u->profile = NULL;
	while ((u->profile = profile_next_shipped(&u->profiles,
	    u->profile)) != NULL) {
		if (managed_forbids(&u->managed, &u->profiles,
		    u->profile->name) != NULL)
			continue;
		if (ctl_unlock_probe(c, u, probe_here) == 0) {
			fprintf(stderr, "metalcapctl: profile auto: %s%s%s%s\n",
			    u->profile->name, over[0] ? " (passed over: " : "",
			    over, over[0] ? ")" : "");
			return 0;
		}
		n = strlen(over);
		mc_fmt(over + n, sizeof over - n, "%s%s", n ? "; " : "",
		    u->why);
	}
	mc_fmt(u->why, sizeof u->why, "profile auto: no shipped profile "
	    "passes the probe on this device%s%s", over[0] ? ": " : "", over);
	return -1;
}

/*
 * Settle everything before a run: the program found, the profile allowed
 * and passed by the probe on this device (the daemon's verdict when one
 * answers, else a probe run here; always here with probe_here: verify
 * must not be refused by the daemon's hold on a profile verify failed,
 * which only a passing verify lifts), and the program's file injectable.
 * 0, or -1 with u->why; warnings are printed.
 */
int
ctl_unlock_prepare(struct ctl *c, const char *program, bool probe_here,
    struct ctl_unlock *u)
{
	struct mc_inject_host	host;
	int			i;

	memset(u, 0, sizeof *u);
	if (ctl_resolve(program, u->program, sizeof u->program) == -1) {
		snprintf(u->why, sizeof u->why, "%s: %s", program,
		    strchr(program, '/') ? "not an executable file" :
		    "not found in PATH");
		u->not_found = true;
		return -1;
	}
	if (ctl_profile(c, u) == -1)
		return -1;
	platform_inject_host(&host);
	mc_inject_judge(u->program, c->paths.shim, false, &host, &u->judge);
	if (u->judge.verdict == MC_INJECT_REFUSED) {
		mc_fmt(u->why, sizeof u->why, "%s: the shim cannot be "
		    "injected (metalcapctl check %s):", u->program, program);
		for (i = 0; i < u->judge.n; i++)
			if (u->judge.findings[i].level == MC_INJECT_REFUSED)
				mc_fmt(u->why + strlen(u->why), sizeof u->why -
				    strlen(u->why), " %s",
				    u->judge.findings[i].text);
		return -1;
	}
	for (i = 0; i < u->judge.n; i++)
		if (u->judge.findings[i].level == MC_INJECT_WARN)
			fprintf(stderr, "metalcapctl: warning: %s: %s\n",
			    u->program, u->judge.findings[i].text);
	return u->auto_profile ? ctl_unlock_auto(c, u, probe_here) :
	    ctl_unlock_probe(c, u, probe_here);
}

void
ctl_unlock_free(struct ctl_unlock *u)
{
	profile_free_all(&u->profiles);
	managed_free(&u->managed);
	u->profile = NULL;
}

/* Every report left in dir (a child that forked writes its own), then it. */
static void
ctl_report_dir_remove(const char *dir)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX];

	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (strncmp(de->d_name, "metalcap.", 9) == 0 &&
			    mc_fmt(path, sizeof path, "%s/%s", dir,
			    de->d_name) == 0)
				unlink(path);
		closedir(d);
	}
	rmdir(dir);
}

/* Whether the report proves the injection, in one sentence either way. */
static void
ctl_judge_report(const struct ctl_unlock *u, struct ctl_outcome *o)
{
	const struct shim_seen	*s = &o->seen;

	o->injected = false;
	if (!s->present && o->status > 128)
		snprintf(o->why, sizeof o->why, "pid %ld ended by signal %d "
		    "before the shim reported (it reports when Metal makes its "
		    "first device, or at exit)", o->pid, o->status - 128);
	else if (!s->present)
		snprintf(o->why, sizeof o->why, "no report from the shim in "
		    "pid %ld: the injection was dropped (a hardened-runtime, "
		    "SIP-protected or setuid program, or one that cleared "
		    "%s)", o->pid, platform_inject_var());
	else if (strcmp(s->state, "hooked") != 0)
		snprintf(o->why, sizeof o->why, "the shim loaded into pid %ld "
		    "but the process stayed stock: %s", o->pid, s->reason[0] ?
		    s->reason : "no reason given");
	else if ((uint64_t)s->family_max != u->profile->family_max)
		snprintf(o->why, sizeof o->why, "pid %ld was given family %ld, "
		    "not profile %s's %llu", o->pid, s->family_max,
		    u->profile->name,
		    (unsigned long long)u->profile->family_max);
	else {
		o->injected = true;
		snprintf(o->why, sizeof o->why, "pid %ld saw Apple families up "
		    "to %ld (Apple%ld) and at least %ld bytes of threadgroup "
		    "memory from %s (hooked %s)", o->pid, s->family_max,
		    s->family_max - 1000, s->threadgroup_memory,
		    s->klass[0] ? s->klass : "the device", s->hooked);
	}
}

/*
 * A private folder for the shim's report of a run, named by a path with
 * no link in it: the shim refuses a link at any component
 * (libmetalcap(7)), and on macOS $TMPDIR is under /var, a link to
 * /private/var.  dir has PATH_MAX bytes, as realpath fills.  -1 with
 * errno set.
 */
static int
ctl_report_dir_make(char *dir)
{
	char	made[PATH_MAX];
	int	saved;

	ctl_tmp_name(made, sizeof made, "run");
	if (mkdtemp(made) == NULL)
		return -1;
	if (realpath(made, dir) == NULL) {
		saved = errno;
		rmdir(made);
		errno = saved;
		return -1;
	}
	return 0;
}

/*
 * Run argv (argv[0] resolved in u) stock or with u's profile, stdout and
 * stderr to out and err (-1: ours).  -1 with o->why if it could not start
 * (o->status is then EXIT_EXEC_CANNOT or EXIT_EXEC_NOTFOUND); else 0,
 * o->status the program's.
 */
int
ctl_run(struct ctl *c, const struct ctl_unlock *u, bool unlocked,
    char **argv, int out, int err, struct ctl_outcome *o)
{
	char	 dir[PATH_MAX], *first = argv[0];
	char	**env;
	pid_t	 pid;
	int	 rc;

	memset(o, 0, sizeof *o);
	/* A signal that came before the program: it does not start. */
	if (ctl_caught != 0) {
		snprintf(o->why, sizeof o->why, "interrupted by signal %d",
		    (int)ctl_caught);
		o->status = 128 + ctl_caught;
		return -1;
	}
	if (unlocked && ctl_report_dir_make(dir) == -1) {
		snprintf(o->why, sizeof o->why, "a report folder: %s",
		    strerror(errno));
		o->status = EXIT_EXEC_CANNOT;
		return -1;
	}
	env = gate_env(c->paths.shim, unlocked ? u->profile : NULL, false,
	    unlocked ? dir : NULL);
	argv[0] = (char *)u->program;
	rc = env == NULL ? ENAMETOOLONG : ctl_spawn(argv, env, out, err, &pid);
	argv[0] = first;
	mc_strv_free(env);
	if (rc != 0) {
		mc_fmt(o->why, sizeof o->why, "%s: %s", u->program,
		    strerror(rc));
		o->status = rc == ENOENT ? EXIT_EXEC_NOTFOUND :
		    EXIT_EXEC_CANNOT;
		if (unlocked)
			ctl_report_dir_remove(dir);
		return -1;
	}
	o->pid = pid;
	if ((o->status = ctl_wait(pid)) == -1) {
		mc_fmt(o->why, sizeof o->why, "pid %ld: %s", (long)pid,
		    strerror(errno));
		o->status = EXIT_EXEC_REFUSED;
		if (unlocked)
			ctl_report_dir_remove(dir);
		return -1;
	}
	if (unlocked) {
		marker_read(dir, pid, &o->seen);
		ctl_report_dir_remove(dir);
		ctl_judge_report(u, o);
	}
	return 0;
}
