/* SPDX-License-Identifier: MIT */
/*
 * Fault injection: the real metalcapd, the launchctl SIMULATOR and the
 * SIMULATED device, with things going wrong around them -- the daemon
 * killed -9 in a burst of changes, launchctl hanging or failing with each
 * documented code or missing, the probe hanging, crashing or lying
 * (the folders and the log: test_io_faults.c).  Each test says what it
 * measured on stderr ("fault: ..."), the figures docs/RELIABILITY.md
 * reports.  MC_FAULT_ROUNDS (default 3) and
 * MC_FAULT_FULL=1 (every launchctl code) make the long run of make faults.
 */
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "child.h"
#include "harness.h"
#include "proc.h"
#include "mc_rpc.h"
#include "protocol.h"

#define SOURCE		MC_TEST_SOURCE
#define PROBE		BUILD "/bin/metalcap-probe"
#define NJOBS		3
#define BURST		200

static int
env_int(const char *name, int fallback)
{
	const char	*v = getenv(name);

	return v != NULL && atoi(v) > 0 ? atoi(v) : fallback;
}

/* home/NAME holds text ("" empties it). */
static void
home_file(const char *name, const char *text)
{
	char	path[256];

	snprintf(path, sizeof path, "%s/%s", home, name);
	write_file(path, "w", text);
}

/* Restart the daemon with the arguments and environment set since. */
static void
restart_daemon(void)
{
	kill_daemon(SIGTERM);
	start_daemon();
}

/* The daemon started again with probe-fault in front of the probe. */
static void
restart_with_probe_fault(const char *mode)
{
	static char	fault[256], real[256];

	snprintf(fault, sizeof fault, "PROBE_FAULT=%s/probe.fault", home);
	snprintf(real, sizeof real, "PROBE_REAL=%s", PROBE);
	home_file("probe.fault", mode);
	daemon_env = fault;
	daemon_env2 = real;
	daemon_args[0] = "--probe";
	daemon_args[1] = SOURCE "/tests/fault/probe-fault";
	restart_daemon();
}

/* Does the job's running process have var=value in its environment? */
static bool
job_env_is(const char *job, const char *var_value)
{
	json_t	*j = job_status(job);
	long	 pid = j ? pid_of(j) : 0;

	json_decref(j);
	return pid > 0 && environ_has(pid, var_value);
}

/* --- kill -9 in a burst ----------------------------------------------------- */

struct change {
	uint32_t	id;
	int		job;
	int		kind;		/* 0 enable, 1 disable, 2 profile */
	int		profile;	/* 0 apple9, 1 apple7 */
	bool		acked;
};

static const char *const profiles[] = { "apple9", "apple7" };

static void
pack_change(msgpack_packer *pk, const struct change *c)
{
	char	name[16];

	snprintf(name, sizeof name, "j%d", c->job);
	mc_rpc_pack_request(pk, c->id, c->kind == 0 ? MC_M_ENABLE :
	    c->kind == 1 ? MC_M_DISABLE : MC_M_PROFILE_SET, c->kind == 2 ? 2 :
	    1);
	mc_rpc_pack_str(pk, name);
	if (c->kind == 2)
		mc_rpc_pack_str(pk, profiles[c->profile]);
}

/*
 * What may be persisted for one job and one dimension: the value of the
 * last acknowledged change and of every change sent after it (processed,
 * perhaps, before the kill), or if none was acknowledged, the value before
 * the round and of every change sent.
 */
static bool
allowed(const struct change *sent, int n, int job, bool unlocked_dim,
    int before, int now)
{
	int	i, last = -1;

	for (i = 0; i < n; i++)
		if (sent[i].job == job && sent[i].acked &&
		    (sent[i].kind == 2) != unlocked_dim)
			last = i;
	if (last == -1 && now == before)
		return true;
	for (i = last == -1 ? 0 : last; i < n; i++) {
		if (sent[i].job != job || (sent[i].kind == 2) == unlocked_dim)
			continue;
		if (unlocked_dim ? (sent[i].kind == 0) == now :
		    sent[i].profile == now)
			return true;
	}
	return false;
}

/*
 * The overrides metalcapd persisted, read with Python's plistlib: for each
 * job, unlocked (the job file says 1 when nothing is persisted) and the
 * profile (0 apple9, the default; 1 apple7).
 */
static void
read_persisted(int *unlocked, int *profile)
{
	char	cmd[1024];
	FILE	*p;
	int	k, u, pr;

	snprintf(cmd, sizeof cmd, "python3 -c '\n"
	    "import os, plistlib, sys\n"
	    "f = sys.argv[1]\n"
	    "d = plistlib.load(open(f, \"rb\")) if os.path.exists(f) else {}\n"
	    "for k in range(%d):\n"
	    "    o = d.get(\"j%%d\" %% k, {})\n"
	    "    print(int(o.get(\"Unlocked\", True)),\n"
	    "        int(o.get(\"Profile\", \"apple9\") == \"apple7\"))\n"
	    "' %s/state/overrides.plist", NJOBS, home);
	assert_non_null(p = popen(cmd, "r"));
	for (k = 0; k < NJOBS; k++) {
		if (fscanf(p, "%d %d", &u, &pr) != 2)
			fail_msg("the state file could not be read");
		unlocked[k] = u;
		profile[k] = pr;
	}
	assert_int_equal(pclose(p), 0);
}

static void
test_kill9_burst(void **state)
{
	struct change		 sent[BURST];
	struct mc_rpc_decoder	 dec;
	struct mc_rpc_message	 m;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	char			 buf[65536], name[16];
	int			 rounds = env_int("MC_FAULT_ROUNDS", 3);
	int			 round, i, k, fd, want_acks, acks, total_acks = 0;
	int			 unlocked[NJOBS], profile[NJOBS];
	int			 now_unlocked[NJOBS], now_profile[NJOBS];
	char			 mark[NJOBS][32], var[64];
	double			 converge, worst = 0;
	const char		*why;
	ssize_t			 n;
	json_t			*j;

	(void)state;
	srand(42);
	for (k = 0; k < NJOBS; k++) {
		snprintf(mark[k], sizeof mark[k], "start");
		edit_job(k, mark[k]);
		unlocked[k] = 1;
		profile[k] = 0;
	}
	for (k = 0; k < NJOBS; k++) {
		snprintf(name, sizeof name, "j%d", k);
		wait_state(name, "unlocked", 0, 5.0);
	}
	/* Both profiles probed once: every enable answers at once after. */
	ctl(&k, "probe", "--profile", "apple7", NULL);
	assert_int_equal(k, 0);
	for (round = 0; round < rounds; round++) {
		fd = raw_connect();
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		for (i = 0; i < BURST; i++) {
			sent[i] = (struct change){ .id = (uint32_t)i + 1,
			    .job = rand() % NJOBS, .kind = rand() % 3,
			    .profile = rand() % 2 };
			pack_change(&pk, &sent[i]);
		}
		mc_rpc_decoder_init(&dec, MC_MAX_MESSAGE);
		want_acks = rand() % BURST;
		acks = 0;
		/* Half the requests, a job-file edit, the rest. */
		assert_int_equal(write(fd, sb.data, sb.size / 2),
		    (ssize_t)(sb.size / 2));
		k = rand() % NJOBS;
		snprintf(mark[k], sizeof mark[k], "round%d", round);
		edit_job(k, mark[k]);
		assert_int_equal(write(fd, sb.data + sb.size / 2,
		    sb.size - sb.size / 2), (ssize_t)(sb.size - sb.size / 2));
		while (acks < want_acks) {
			while (mc_rpc_next(&dec, &m, &why) == MC_RPC_OK) {
				if (m.type != MC_MSG_RESPONSE || m.msgid == 0 ||
				    m.msgid > BURST)
					continue;
				acks++;
				sent[m.msgid - 1].acked =
				    m.error.type == MSGPACK_OBJECT_NIL;
			}
			if (acks >= want_acks)
				break;
			if ((n = read(fd, buf, sizeof buf)) <= 0)
				break;
			mc_rpc_feed(&dec, buf, (size_t)n);
		}
		kill_daemon(SIGKILL);
		close(fd);
		mc_rpc_decoder_free(&dec);
		msgpack_sbuffer_destroy(&sb);
		for (i = 0; i < BURST; i++)
			total_acks += sent[i].acked;
		/* The state file, read by an independent reader. */
		read_persisted(now_unlocked, now_profile);
		start_daemon();
		/* Every acknowledged change is there. */
		for (k = 0; k < NJOBS; k++) {
			if (!allowed(sent, BURST, k, true, unlocked[k],
			    now_unlocked[k]))
				fail_msg("round %d: j%d unlocked=%d was never "
				    "asked for after the last acknowledged "
				    "change", round, k, now_unlocked[k]);
			if (!allowed(sent, BURST, k, false, profile[k],
			    now_profile[k]))
				fail_msg("round %d: j%d profile %s was never "
				    "asked for after the last acknowledged "
				    "change", round, k,
				    profiles[now_profile[k]]);
			unlocked[k] = now_unlocked[k];
			profile[k] = now_profile[k];
		}
		/* launchd's jobs converge to what is persisted. */
		converge = now_s();
		for (k = 0; k < NJOBS; k++) {
			snprintf(name, sizeof name, "j%d", k);
			wait_state(name, unlocked[k] ? "unlocked" : "stock", 0,
			    10.0);
			snprintf(buf, sizeof buf, "METALCAP_APPLE_FAMILY_MAX=%s",
			    profile[k] ? "1007" : "1009");
			snprintf(var, sizeof var, "MARK=%s", mark[k]);
			while (job_env_is(name, INJECTED) != unlocked[k] ||
			    (unlocked[k] && !job_env_is(name, buf)) ||
			    !job_env_is(name, var)) {
				if (now_s() - converge > 10 * time_scale()) {
					j = job_status(name);
					fail_msg("round %d: %s did not converge to "
					    "unlocked=%d profile=%s %s: %s/%ld %s",
					    round, name, unlocked[k],
					    profiles[profile[k]], var,
					    str_of(j, "state"), pid_of(j),
					    str_of(j, "reason"));
				}
				sleep_ms(20);
			}
		}
		converge = now_s() - converge;
		if (converge > worst)
			worst = converge;
	}
	report("kill -9 during bursts: %d rounds of %d requests and a job-file "
	    "edit, %d acknowledged, all present after restart; state file "
	    "valid every time; slowest convergence %.2f s", rounds, BURST,
	    total_acks, worst);
}

/* --- launchctl that hangs, fails, or is missing ----------------------------- */

/* The daemon behind tests/fault/launchctl-fault, with short deadlines. */
static void
start_with_launchctl_fault(void)
{
	daemon_args[0] = "--launchctl-timeout";
	daemon_args[1] = "500";
	restart_with_launchctl_fault("");
}

/*
 * With the fault in place a changed job cannot be loaded: the daemon keeps
 * answering (the slowest status round trip is returned), the job shows an
 * error or keeps trying, and once the fault is gone it converges.
 */
static double
launchctl_fault_round(const char *fault, const char *mark, char *seen,
    size_t seenlen)
{
	char	var[64];
	double	start, worst = 0, rtt;
	json_t	*j;

	home_file("lc.fault", fault);
	edit_job(0, mark);
	start = now_s();
	while (now_s() - start < 1.2 * time_scale()) {
		if ((rtt = status_rtt_ms()) < 0)
			fail_msg("%s: the daemon stopped answering", fault);
		if (rtt > worst)
			worst = rtt;
		sleep_ms(50);
	}
	snprintf(var, sizeof var, "MARK=%s", mark);
	assert_non_null(j = job_status("j0"));
	snprintf(seen, seenlen, "%s: %s", str_of(j, "state"),
	    str_of(j, "reason"));
	if (strcmp(str_of(j, "state"), "unlocked") == 0 && job_env_is("j0",
	    var))
		fail_msg("%s: the change went through a failing launchctl",
		    fault);
	json_decref(j);
	home_file("lc.fault", "");
	start = now_s();
	for (;;) {
		assert_non_null(j = job_status("j0"));
		if (strcmp(str_of(j, "state"), "unlocked") == 0 &&
		    job_env_is("j0", var))
			break;
		if (now_s() - start > 15 * time_scale())
			fail_msg("%s: no convergence after the fault went: %s/%ld "
			    "%s", fault, str_of(j, "state"), pid_of(j),
			    str_of(j, "reason"));
		json_decref(j);
		sleep_ms(50);
	}
	json_decref(j);
	return worst;
}

static void
test_launchctl_hangs(void **state)
{
	char	seen[512], dead[512];
	double	rtt;

	(void)state;
	start_with_launchctl_fault();
	edit_job(0, "before");
	wait_state("j0", "unlocked", 0, 5.0);
	rtt = launchctl_fault_round("bootstrap hang", "after-hang", seen,
	    sizeof seen);
	assert_non_null(strstr(seen, "error: launchctl bootstrap failed"));
	/* Killed by a signal: no answer, not a success. */
	launchctl_fault_round("bootstrap signal", "after-signal", dead,
	    sizeof dead);
	assert_non_null(strstr(dead, "error: launchctl bootstrap failed (-1): "
	    "launchctl-fault was killed by signal 9"));
	/* The program by its name, as ps shows it to whoever reads this. */
	assert_non_null(strstr(seen, ": launchctl-fault did not finish within "
	    "500 ms"));
	report("launchctl hangs in bootstrap: killed after 500 ms, job shows "
	    "'%s', status answered in at most %.1f ms meanwhile, converged "
	    "once launchctl answered again", seen, rtt);
}

static void
test_launchctl_error_codes(void **state)
{
	static const int full[] = { 2, 3, 5, 36, 37, 64, 108, 109, 111, 112,
	    113, 119, 122, 125, 133, 134, 161 };
	static const int quick[] = { 5, 113, 119, 125 };
	const int	*codes = getenv("MC_FAULT_FULL") ? full : quick;
	size_t		 n = getenv("MC_FAULT_FULL") ? sizeof full / sizeof *full :
			    sizeof quick / sizeof *quick, i;
	char		 fault[64], mark[32], seen[512];
	double		 rtt, worst = 0;

	(void)state;
	start_with_launchctl_fault();
	edit_job(0, "before");
	wait_state("j0", "unlocked", 0, 5.0);
	for (i = 0; i < n; i++) {
		snprintf(fault, sizeof fault, "any %d", codes[i]);
		snprintf(mark, sizeof mark, "code%d", codes[i]);
		rtt = launchctl_fault_round(fault, mark, seen, sizeof seen);
		if (rtt > worst)
			worst = rtt;
		report("launchctl exits %d on every call: job showed '%.120s', "
		    "converged once it was gone", codes[i], seen);
	}
	report("launchctl error codes: %zu codes, status answered in at most "
	    "%.1f ms throughout", n, worst);
}

/*
 * bootstrap answering 5 (a label still draining from its bootout: launchd
 * says 5 for that too) is waited out, a retry every 200 ms for 10 s, not
 * shown as an error: the change goes through once launchd takes it.
 */
static void
test_bootstrap_busy_waited_out(void **state)
{
	json_t	*j;
	double	 start;

	(void)state;
	start_with_launchctl_fault();
	edit_job(0, "before");
	wait_state("j0", "unlocked", 0, 5.0);
	home_file("lc.fault", "bootstrap 5");
	edit_job(0, "busy");
	for (start = now_s(); now_s() - start < 1.0 * time_scale();
	    sleep_ms(50)) {
		assert_non_null(j = job_status("j0"));
		if (strcmp(str_of(j, "state"), "error") == 0)
			fail_msg("a busy label shown as an error: %s",
			    str_of(j, "reason"));
		json_decref(j);
	}
	home_file("lc.fault", "");
	for (start = now_s(); !job_env_is("j0", "MARK=busy"); sleep_ms(50))
		if (now_s() - start > 5.0 * time_scale())
			fail_msg("the change did not go through once launchd "
			    "took the bootstrap");
	assert_false(daemon_log_has("job j0: error"));
}

static void
test_launchctl_missing(void **state)
{
	json_t	*j;
	double	 start = now_s();

	(void)state;
	daemon_launchctl = "/nonexistent/launchctl";
	restart_daemon();
	edit_job(0, "x");
	for (;;) {
		if ((j = job_status("j0")) != NULL &&
		    strcmp(str_of(j, "state"), "error") == 0)
			break;
		json_decref(j);
		if (now_s() - start > 5 * time_scale())
			fail_msg("no error for a missing launchctl");
		sleep_ms(50);
	}
	assert_non_null(strstr(str_of(j, "reason"), "cannot run"));
	report("launchctl missing: job shows '%s'; the daemon keeps answering",
	    str_of(j, "reason"));
	json_decref(j);
	assert_true(status_rtt_ms() >= 0);
}

/* --- a probe that hangs, crashes or lies ------------------------------------ */

static void
test_probe_faults(void **state)
{
	static const char *const modes[] = { "hang", "crash", "garbage",
	    "truncated" };
	struct child_result *r;
	long		 pid;
	size_t		 i;
	int		 code;
	double		 start;

	(void)state;
	daemon_args[2] = "--probe-timeout";
	daemon_args[3] = "1000";
	restart_with_probe_fault("");
	edit_job(0, "x");
	wait_state("j0", "unlocked", 0, 5.0);
	ctl(&code, "disable", "j0", NULL, NULL);
	wait_state("j0", "stock", 0, 5.0);
	for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		home_file("probe.fault", modes[i]);
		start = now_s();
		/* A fresh probe through the daemon: the profile fails. */
		r = ctl(&code, "probe", "--profile", "apple9", NULL);
		if (code != 4)
			fail_msg("probe %s: metalcapctl probe gave %d: %s %s",
			    modes[i], code, r->out, r->err);
		report("probe %s: verdict fail in %.2f s: %.150s", modes[i],
		    now_s() - start, r->out);
		assert_true(status_rtt_ms() >= 0);
		/*
		 * And the job never runs unlocked on it: enable is refused
		 * (a reverted job), or accepted and then reverted by the
		 * probe it starts.
		 */
		r = ctl(&code, "enable", "j0", NULL, NULL);
		if (code != 0 && strstr(r->err, "EPROBE") == NULL)
			fail_msg("probe %s: enable gave %d: %s", modes[i], code,
			    r->err);
		pid = wait_state("j0", "reverted", 0, 5.0);
		assert_false(environ_has(pid, INJECTED));
	}
	home_file("probe.fault", "");
	ctl(&code, "enable", "j0", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("j0", "unlocked", 0, 5.0);
}

/* metalcapctl --home H ARGS... started, not waited for; stderr to home/ERR. */
static pid_t
ctl_start(const char *err, const char *const *args)
{
	const char	*argv[16] = { CTL, "--home", home };
	char		*env[CHILD_ENV_MAX], path[256];
	pid_t		 pid;
	size_t		 i;
	int		 fd;

	for (i = 0; args[i] != NULL && i + 4 < 16; i++)
		argv[i + 3] = args[i];
	argv[i + 3] = NULL;
	child_env(env, NULL);
	snprintf(path, sizeof path, "%s/%s", home, err);
	assert_true((pid = fork()) != -1);
	if (pid == 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		execve(argv[0], (char *const *)argv, env);
		_exit(127);
	}
	return pid;
}

/* Wait until home/NAME exists, or fail the test after seconds. */
static void
wait_for_file(const char *name, double seconds)
{
	char	path[256];
	double	end = now_s() + seconds * time_scale();

	snprintf(path, sizeof path, "%s/%s", home, name);
	while (access(path, F_OK) != 0) {
		if (now_s() > end)
			fail_msg("%s did not appear within %.0f s", name,
			    seconds * time_scale());
		sleep_ms(20);
	}
}

/*
 * j0 unlocked, then reverted by a probe that fails, then `enable j0`
 * started while its fresh probe is held back: the enable's pid (its
 * stderr in home/enable.err).
 */
static pid_t
enable_held_for_reverted_j0(void)
{
	const char *const	 enable[] = { "enable", "j0", NULL };
	pid_t			 pid;
	int			 code;

	restart_with_probe_fault("");
	edit_job(0, "x");
	wait_state("j0", "unlocked", 0, 5.0);
	ctl(&code, "disable", "j0", NULL, NULL);
	wait_state("j0", "stock", 0, 5.0);
	home_file("probe.fault", "garbage");
	ctl(&code, "probe", "--profile", "apple9", NULL);
	ctl(&code, "enable", "j0", NULL, NULL);
	wait_state("j0", "reverted", 0, 5.0);
	home_file("probe.fault", "hold");
	pid = ctl_start("enable.err", enable);
	wait_for_file("probe.fault.held", 10.0);
	return pid;
}

/*
 * An enable that waits for its probe does not undo a disable answered
 * meanwhile: the probe is held back until the disable is answered, then
 * released; the enable is refused as superseded and the job stays stock.
 */
static void
test_enable_superseded(void **state)
{
	char			 path[256], err[512] = "";
	struct child_result	*r;
	json_t			*j;
	pid_t			 pid;
	int			 code, status;
	FILE			*f;

	(void)state;
	pid = enable_held_for_reverted_j0();
	r = ctl(&code, "disable", "j0", NULL, NULL);
	if (code != 0)
		fail_msg("disable while the probe ran: %d %s", code, r->err);
	home_file("probe.fault", "");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	snprintf(path, sizeof path, "%s/enable.err", home);
	if ((f = fopen(path, "r")) != NULL) {
		err[fread(err, 1, sizeof err - 1, f)] = '\0';
		fclose(f);
	}
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	if (strstr(err, "ESUPERSEDED") == NULL)
		fail_msg("the held enable said: %s", err);
	j = job_status("j0");
	assert_string_equal(str_of(j, "desired"), "stock");
	assert_false(pid_of(j) > 0 && environ_has(pid_of(j), INJECTED));
	json_decref(j);
	report("enable held behind its probe, disable answered meanwhile: the "
	    "enable was refused (%.80s), the job stayed stock", err);
}

/*
 * A probe request that comes while the gate's probe runs gets a probe of
 * its own, later, and does not hold back the verdict under way: the job
 * waiting for it runs unlocked while the request's probe is still held.
 * (Requests in a row used to keep every verdict from the jobs.)
 */
static void
test_probe_requests_do_not_starve(void **state)
{
	struct mc_rpc_decoder	 dec;
	struct mc_rpc_message	 m;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	struct child_result	*r;
	int			 fd, code;

	(void)state;
	restart_with_probe_fault("hold");
	edit_job(0, "x");
	wait_for_file("probe.fault.held", 10.0);
	r = ctl(&code, "--json", "status", "j0", NULL);
	assert_non_null(strstr(r->out, "probing"));
	/*
	 * A probe request, then hello on the same connection: hello's reply
	 * says the request was taken (the daemon answers a connection's
	 * requests in order), before the probe under way is let go.
	 */
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	mc_rpc_pack_request(&pk, 1, MC_M_PROBE, 1);
	msgpack_pack_map(&pk, 1);
	mc_rpc_pack_str(&pk, "profile");
	mc_rpc_pack_str(&pk, "apple9");
	mc_rpc_pack_request(&pk, 2, MC_M_HELLO, 0);
	mc_rpc_decoder_init(&dec, MC_MAX_REPLY);
	fd = raw_connect();
	assert_int_equal(raw_exchange(fd, sb.data, sb.size, &dec, &m), 0);
	assert_int_equal(m.msgid, 2);
	home_file("probe.fault.release", "");
	/* The job hears the verdict under way; the request's probe holds. */
	wait_state("j0", "unlocked", 0, 5.0);
	wait_for_file("probe.fault.held", 10.0);
	home_file("probe.fault.release", "");
	assert_int_equal(raw_exchange(fd, "", 0, &dec, &m), 0);
	assert_int_equal(m.msgid, 1);
	assert_true(m.error.type == MSGPACK_OBJECT_NIL);
	close(fd);
	mc_rpc_decoder_free(&dec);
	msgpack_sbuffer_destroy(&sb);
	home_file("probe.fault", "");
	report("a probe request during the gate's probe: the job ran unlocked "
	    "on the verdict under way; the request got a probe of its own");
}

/*
 * An enable held behind its probe finds its job removed and another made
 * under the name, stock: the enable is not the new job's, and changes it
 * not (an override outliving its job, by the back door).
 */
static void
test_enable_outlived_by_new_job(void **state)
{
	char			 path[256];
	json_t			*j;
	pid_t			 pid;
	int			 status, i;

	(void)state;
	pid = enable_held_for_reverted_j0();
	snprintf(path, sizeof path, "%s/jobs.d/j0.plist", home);
	assert_int_equal(unlink(path), 0);
	/*
	 * Gone all the way (booted out, its record deleted, its override
	 * forgotten in the same turn) before a job comes back under the
	 * name; a file back sooner is the same job, as an editor's save.
	 */
	snprintf(path, sizeof path, "%s/state/loaded/org.metalcap.job.j0",
	    home);
	for (i = 0; i < 400 && access(path, F_OK) == 0; i++)
		sleep_ms(25 * (long)time_scale());
	assert_int_equal(access(path, F_OK), -1);
	assert_null(j = job_status("j0"));
	put_job("j0", "<key>Unlocked</key><false/>");
	wait_state("j0", "stock", 0, 5.0);
	home_file("probe.fault.release", "");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	j = job_status("j0");
	assert_string_equal(str_of(j, "desired"), "stock");
	json_decref(j);
	home_file("probe.fault", "");
}

/* profiles.d/mine.plist with this Apple family ceiling. */
static void
write_profile_mine(int family)
{
	char	path[256], body[512];

	snprintf(path, sizeof path, "%s/profiles.d", home);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/profiles.d/mine.plist", home);
	snprintf(body, sizeof body, "<plist version=\"1.0\"><dict><key>"
	    "AppleFamilyMax</key><integer>%d</integer><key>Description</key>"
	    "<string>a test's own</string></dict></plist>\n", family);
	write_file(path, "w", body);
}

/*
 * New values of a profile are unproven until their own probe ends: the
 * last verdict (for the old values) does not let a job run them while
 * that probe is held back.
 */
static void
test_new_values_wait_for_their_probe(void **state)
{
	char	var[64];
	long	pid;
	int	code;

	(void)state;
	write_profile_mine(1009);
	restart_with_probe_fault("");
	put_job("j0", "<key>Profile</key><string>mine</string>");
	pid = wait_state("j0", "unlocked", 0, 5.0);
	assert_true(environ_has(pid, "METALCAP_APPLE_FAMILY_MAX=1009"));
	home_file("probe.fault", "hold");
	write_profile_mine(1008);
	ctl(&code, "reload", NULL, NULL, NULL);
	wait_for_file("probe.fault.held", 10.0);
	/* Held: the job waits for it (reload answers after the rescan),
	 * and nothing runs the new ceiling yet. */
	snprintf(var, sizeof var, "METALCAP_APPLE_FAMILY_MAX=1008");
	assert_field_has("j0", "state", "probing");
	assert_false(job_env_is("j0", var));
	home_file("probe.fault.release", "");
	pid = wait_state("j0", "unlocked", pid, 5.0);
	assert_true(environ_has(pid, var));
	home_file("probe.fault", "");
}

/* --- the job folder ----------------------------------------------------------- */

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kill9_burst, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_launchctl_hangs, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bootstrap_busy_waited_out,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_launchctl_error_codes,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_launchctl_missing, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_probe_faults, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_enable_superseded, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_probe_requests_do_not_starve, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_new_values_wait_for_their_probe, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_enable_outlived_by_new_job, setup, teardown),
	};

	/* MC_FAULT_ONLY=test_name runs one (cmocka's filter, wildcards). */
	report_prefix = "fault";
	if (getenv("MC_FAULT_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_FAULT_ONLY"));
	return cmocka_run_group_tests_name("faults", tests, NULL, NULL);
}
