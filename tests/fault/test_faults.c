/* SPDX-License-Identifier: MIT */
/*
 * Fault injection: the real metalcapd, the launchctl SIMULATOR and the
 * SIMULATED device, with things going wrong around them -- the daemon
 * killed -9 in a burst of changes, launchctl hanging or failing with each
 * documented code or missing, the probe hanging, crashing or lying, the
 * job folder abused, the state folder full, a job's log deleted or
 * flooded.  Each test says what it measured on stderr ("fault: ..."), the
 * figures docs/RELIABILITY.md reports.  MC_FAULT_ROUNDS (default 3) and
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

/* Write job k's file, with MARK=mark in its environment. */
static void
edit_job(int k, const char *mark)
{
	char	tmp[256], path[256], body[4096];

	snprintf(tmp, sizeof tmp, "%s/.j%d.tmp", home, k);
	snprintf(path, sizeof path, "%s/jobs.d/j%d.plist", home, k);
	snprintf(body, sizeof body, "<?xml version=\"1.0\"?><plist "
	    "version=\"1.0\"><dict><key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string></array><key>EnvironmentVariables</key><dict>"
	    "<key>MTLSIM_SWITCHES</key><string>%s</string><key>MARK</key>"
	    "<string>%s</string></dict></dict></plist>\n",
	    switches + strlen("MTLSIM_SWITCHES="), mark);
	write_file(tmp, "w", body);
	assert_int_equal(rename(tmp, path), 0);
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
			while (job_env_is(name, "LD_PRELOAD=") != unlocked[k] ||
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
	static char	fault[256], real[256];

	snprintf(fault, sizeof fault, "LAUNCHCTL_FAULT=%s/lc.fault", home);
	snprintf(real, sizeof real, "LAUNCHCTL_SIM=%s", SIM);
	home_file("lc.fault", "");
	daemon_launchctl = SOURCE "/tests/fault/launchctl-fault";
	daemon_env = fault;
	daemon_env2 = real;
	daemon_args[0] = "--launchctl-timeout";
	daemon_args[1] = "500";
	restart_daemon();
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
	char	seen[512];
	double	rtt;

	(void)state;
	start_with_launchctl_fault();
	edit_job(0, "before");
	wait_state("j0", "unlocked", 0, 5.0);
	rtt = launchctl_fault_round("bootstrap hang", "after-hang", seen,
	    sizeof seen);
	assert_non_null(strstr(seen, "error: launchctl bootstrap failed"));
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
	static char	 fault[256], real[256];
	struct child_result *r;
	long		 pid;
	size_t		 i;
	int		 code;
	double		 start;

	(void)state;
	snprintf(fault, sizeof fault, "PROBE_FAULT=%s/probe.fault", home);
	snprintf(real, sizeof real, "PROBE_REAL=%s", PROBE);
	home_file("probe.fault", "");
	daemon_env = fault;
	daemon_env2 = real;
	daemon_args[0] = "--probe";
	daemon_args[1] = SOURCE "/tests/fault/probe-fault";
	daemon_args[2] = "--probe-timeout";
	daemon_args[3] = "1000";
	restart_daemon();
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
		assert_false(environ_has(pid, "LD_PRELOAD="));
	}
	home_file("probe.fault", "");
	ctl(&code, "enable", "j0", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("j0", "unlocked", 0, 5.0);
}

/* --- the job folder ----------------------------------------------------------- */

/* Poll until job's status has field containing text. */
static void
wait_field(const char *job, const char *field, const char *text)
{
	double	 start = now_s();
	json_t	*j;
	char	 last[512] = "(no job)";

	for (;;) {
		if ((j = job_status(job)) != NULL) {
			char *dump = json_dumps(json_object_get(j, field),
			    JSON_ENCODE_ANY);

			snprintf(last, sizeof last, "%s", dump ? dump : "");
			free(dump);
			if (strstr(last, text) != NULL) {
				json_decref(j);
				return;
			}
			json_decref(j);
		}
		if (now_s() - start > 5 * time_scale())
			fail_msg("%s.%s never held '%s' (last: %s)", job, field,
			    text, last);
		sleep_ms(50);
	}
}

/* How many jobs status lists (read unbounded: it may be large). */
static size_t
job_count(void)
{
	char		 cmd[256];
	json_error_t	 err;
	json_t		*doc;
	FILE		*p;
	size_t		 n;

	snprintf(cmd, sizeof cmd, "%s --home %s --json status", CTL, home);
	assert_non_null(p = popen(cmd, "r"));
	doc = json_loadf(p, 0, &err);
	pclose(p);
	n = json_array_size(doc);
	json_decref(doc);
	return n;
}

static void
test_job_folder_abuse(void **state)
{
	char	path[512], other[512], cmd[1024];
	long	rss_before, rss_after;
	double	start, rtt;
	int	i, fd;

	(void)state;
	edit_job(0, "x");
	wait_state("j0", "unlocked", 0, 5.0);
	/* A 10 MB file, a FIFO, a loop of symbolic links. */
	snprintf(path, sizeof path, "%s/jobs.d/big.plist", home);
	assert_int_equal(truncate(path, 0) == 0 || errno == ENOENT, 1);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_int_equal(ftruncate(fd, 10 * 1024 * 1024), 0);
	close(fd);
	snprintf(path, sizeof path, "%s/jobs.d/fifo.plist", home);
	assert_int_equal(mkfifo(path, 0644), 0);
	snprintf(path, sizeof path, "%s/jobs.d/loop1.plist", home);
	snprintf(other, sizeof other, "%s/jobs.d/loop2.plist", home);
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(symlink(path, other), 0);
	wait_field("big", "errors", "is larger than 1048576 bytes");
	wait_field("fifo", "errors", "not a regular file");
	wait_field("loop1", "errors", "is a symbolic link");
	assert_field_has("j0", "state", "unlocked");
	report("job folder: a 10 MB file, a FIFO and a symlink loop are three "
	    "invalid jobs naming why; the good job kept running");
	/* 1000 files at once. */
	rss_before = proc_rss_kib(daemon_pid);
	for (i = 0; i < 1000; i++) {
		snprintf(path, sizeof path, "%s/jobs.d/junk%04d.plist", home, i);
		write_file(path, "w", "not a plist\n");
	}
	start = now_s();
	while (job_count() < 1004) {
		if (now_s() - start > 20 * time_scale())
			fail_msg("1000 files: %zu jobs listed", job_count());
		sleep_ms(100);
	}
	rtt = status_rtt_ms();
	rss_after = proc_rss_kib(daemon_pid);
	assert_field_has("j0", "state", "unlocked");
	report("job folder: 1000 bad files listed as invalid jobs in %.2f s; "
	    "a status of 1004 jobs took %.1f ms; RSS %ld -> %ld KiB",
	    now_s() - start, rtt, rss_before, rss_after);
	snprintf(cmd, sizeof cmd, "rm -f %s/jobs.d/junk*.plist", home);
	assert_int_equal(system(cmd), 0);
	/* Deleted and made again: its jobs go, and come back with it. */
	snprintf(cmd, sizeof cmd, "rm -rf %s/jobs.d", home);
	assert_int_equal(system(cmd), 0);
	start = now_s();
	while (job_count() > 0) {
		if (now_s() - start > 5 * time_scale()) {
			snprintf(cmd, sizeof cmd, "tail -n 5 %s/logs/metalcapd.log"
			    " >&2", home);
			if (system(cmd) != 0)
				fail_msg("no daemon log");
			fail_msg("jobs.d deleted: %zu jobs left", job_count());
		}
		sleep_ms(50);
	}
	snprintf(path, sizeof path, "%s/jobs.d", home);
	assert_int_equal(mkdir(path, 0755), 0);
	edit_job(0, "back");
	wait_state("j0", "unlocked", 0, 5.0);
	report("job folder deleted: its jobs were booted out; made again: "
	    "the new job file was seen and ran");
	/*
	 * Replaced while the daemon was stopped: the new folder may get the
	 * old one's inode number (ext4 gives it at once), yet it is a new
	 * folder to watch, or the next job file goes unseen.
	 */
	assert_int_equal(kill(daemon_pid, SIGSTOP), 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s/jobs.d && mkdir %s/jobs.d", home,
	    home);
	assert_int_equal(system(cmd), 0);
	edit_job(0, "replaced");
	edit_job(2, "replaced");
	assert_int_equal(kill(daemon_pid, SIGCONT), 0);
	wait_state("j2", "unlocked", 0, 5.0);
	edit_job(1, "new");
	wait_state("j1", "unlocked", 0, 5.0);
	report("job folder replaced while the daemon was stopped: a job file "
	    "written after it was seen without a reload");
	/*
	 * Unreadable: permissions do not bind root, so as root the folder
	 * is swapped for a file (opendir fails with ENOTDIR, not ENOENT).
	 */
	if (geteuid() == 0) {
		snprintf(other, sizeof other, "%s/jobs.d.away", home);
		assert_int_equal(rename(path, other), 0);
		write_file(path, "w", "not a folder\n");
	} else
		assert_int_equal(chmod(path, 0), 0);
	ctl(&i, "reload", NULL, NULL, NULL);
	sleep_ms(500);
	assert_field_has("j0", "state", "unlocked");
	if (geteuid() == 0) {
		assert_int_equal(unlink(path), 0);
		assert_int_equal(rename(other, path), 0);
	} else
		assert_int_equal(chmod(path, 0755), 0);
	ctl(&i, "reload", NULL, NULL, NULL);
	wait_state("j0", "unlocked", 0, 5.0);
	report("job folder unreadable (%s): its job was left running, and "
	    "the folder was read again once it could be", geteuid() == 0 ?
	    "as root: a file in its place, ENOTDIR" : "mode 000");
}

/* --- a full state folder ------------------------------------------------------ */

static char	state_mount[256];

static int
teardown_unmount(void **state)
{
	if (state_mount[0] != '\0') {
		kill_daemon(SIGTERM);
		umount(state_mount);
		state_mount[0] = '\0';
	}
	return teardown(state);
}

/*
 * Restart the daemon with its state folder on a 256 KiB tmpfs; false
 * (and the test skipped) where no tmpfs can be mounted.
 */
static bool
state_on_small_tmpfs(const char *what)
{
	char	cmd[600];

	kill_daemon(SIGTERM);
	snprintf(state_mount, sizeof state_mount, "%s/state", home);
	snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir %s", state_mount,
	    state_mount);
	assert_int_equal(system(cmd), 0);
	if (mount("tmpfs", state_mount, "tmpfs", 0, "size=256k") == -1) {
		report("%s: SKIPPED, cannot mount a small tmpfs here: %s", what,
		    strerror(errno));
		state_mount[0] = '\0';
		start_daemon();
		return false;
	}
	start_daemon();
	return true;
}

/* Fill the state folder to the last byte; the filler's path in path. */
static void
fill_state(char *path, size_t len)
{
	static char	block[65536];
	int		fd;

	snprintf(path, len, "%s/filler", state_mount);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	while (write(fd, block, sizeof block) > 0)
		continue;
	while (write(fd, block, 1) > 0)
		continue;
	close(fd);
}

static void
test_state_disk_full(void **state)
{
	char		 path[512], before[8192], after[8192], filler[600];
	struct child_result *r;
	FILE		*f;
	size_t		 nb, na;
	int		 code;

	(void)state;
	if (!state_on_small_tmpfs("state folder full"))
		skip();
	edit_job(0, "x");
	wait_state("j0", "unlocked", 0, 5.0);
	ctl(&code, "disable", "j0", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("j0", "stock", 0, 5.0);
	snprintf(path, sizeof path, "%s/overrides.plist", state_mount);
	assert_non_null(f = fopen(path, "r"));
	nb = fread(before, 1, sizeof before, f);
	fclose(f);
	fill_state(filler, sizeof filler);
	r = ctl(&code, "enable", "j0", NULL, NULL);
	if (code != 1 || strstr(r->err, "EIO") == NULL ||
	    strstr(r->err, "No space left") == NULL)
		fail_msg("enable on a full disk gave %d: %s", code, r->err);
	report("state folder full: enable refused: %.150s", r->err);
	r = ctl(&code, "profile", "j0", "apple7", NULL);
	assert_int_equal(code, 1);
	assert_non_null(f = fopen(path, "r"));
	na = fread(after, 1, sizeof after, f);
	fclose(f);
	assert_true(na == nb && memcmp(before, after, nb) == 0);
	sleep_ms(300);
	assert_field_has("j0", "state", "stock");
	assert_field_has("j0", "profile", "apple9");
	/* Room again: the same request goes through. */
	unlink(filler);
	ctl(&code, "enable", "j0", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("j0", "unlocked", 0, 5.0);
	report("state folder full: the state file stayed byte for byte as it "
	    "was, the job as it was; with room again the request worked");
}

static void	log_path(char *, size_t);

static const char failure_line[] = "ggml_metal_library_compile_pipeline: "
    "failed to compile pipeline: base = 'kernel_mul_mm_f16_f32'\n";

/*
 * A revert that cannot be saved stays in force: the job runs stock, status
 * says it is not saved, a later request that fails to save does not undo
 * it (it used to reload the state file and restart the job injected), and
 * the first save that succeeds writes it.
 */
static void
test_revert_kept_when_disk_full(void **state)
{
	char	log[256], filler[600], cmd[700];
	long	pid;
	int	code;

	(void)state;
	if (!state_on_small_tmpfs("revert on a full disk"))
		skip();
	edit_job(0, "x");
	edit_job(1, "y");
	wait_state("j0", "unlocked", 0, 5.0);
	wait_state("j1", "unlocked", 0, 5.0);
	fill_state(filler, sizeof filler);
	log_path(log, sizeof log);
	write_file(log, "a", failure_line);
	pid = wait_state("j0", "reverted", 0, 10.0);
	assert_field_has("j0", "reason", "not saved yet");
	ctl(&code, "profile", "j1", "apple7", NULL);
	assert_int_equal(code, 1);
	sleep_ms(500);
	assert_field_has("j0", "state", "reverted");
	pid = wait_state("j0", "reverted", -1, 1.0);
	assert_false(pid > 0 && environ_has(pid, "LD_PRELOAD="));
	/* Room again: the next save writes the revert too. */
	unlink(filler);
	ctl(&code, "profile", "j1", "apple7", NULL);
	assert_int_equal(code, 0);
	snprintf(cmd, sizeof cmd, "grep -q 'failed to compile pipeline' "
	    "%s/overrides.plist", state_mount);
	assert_int_equal(system(cmd), 0);
	kill_daemon(SIGKILL);
	start_daemon();
	wait_state("j0", "reverted", 0, 5.0);
	report("revert on a full disk: kept in force and shown as not saved, "
	    "survived a failed save of another job's change, written by the "
	    "next save, still reverted after kill -9");
}

/* --- the job's log -------------------------------------------------------------- */

/* Revert seen within seconds; then enable again (a fresh probe passes). */
static double
expect_revert_then_enable(const char *what, double started)
{
	double	took;
	int	code;

	wait_state("j0", "reverted", 0, 10.0);
	took = now_s() - started;
	assert_field_has("j0", "reason", "failed to compile pipeline");
	ctl(&code, "enable", "j0", NULL, NULL);
	if (code != 0)
		fail_msg("%s: enable after the revert gave %d", what, code);
	wait_state("j0", "unlocked", 0, 10.0);
	return took;
}

static void
log_path(char *buf, size_t len)
{
	snprintf(buf, len, "%s/logs/j0.err.log", home);
}

/* A writer of benign llama.cpp-like lines at bytes_per_s for seconds. */
static pid_t
flood(double bytes_per_s, double seconds)
{
	char	path[256], chunk[65536];
	pid_t	pid;
	size_t	i, n = 0;

	log_path(path, sizeof path);
	while (n + 100 < sizeof chunk) {
		i = (size_t)snprintf(chunk + n, sizeof chunk - n, "slot update_"
		    "slots: id  0 | task %zu | n_past = %zu, memory_seq_rm "
		    "[%zu, end)\n", n, n * 3, n);
		n += i;
	}
	if ((pid = fork()) == 0) {
		double	start = now_s(), sent = 0;
		int	fd = open(path, O_WRONLY | O_APPEND);

		while (now_s() - start < seconds) {
			if (sent < bytes_per_s * (now_s() - start)) {
				if (write(fd, chunk, n) > 0)
					sent += (double)n;
			} else
				sleep_ms(1);
		}
		_exit(0);
	}
	return pid;
}

static void
test_log_faults(void **state)
{
	char	path[256], moved[300];
	double	start, took, worst = 0, rtt, cpu, rate;
	long	rss0, rss1;
	pid_t	writer;
	int	status;

	(void)state;
	edit_job(0, "x");
	wait_state("j0", "unlocked", 0, 5.0);
	log_path(path, sizeof path);
	/* Deleted, then written again. */
	assert_int_equal(unlink(path), 0);
	sleep_ms(200);
	start = now_s();
	write_file(path, "a", failure_line);
	took = expect_revert_then_enable("deleted", start);
	report("log deleted, then a failure line in a new file: reverted in "
	    "%.0f ms", took * 1000);
	/* Truncated. */
	assert_int_equal(truncate(path, 0), 0);
	start = now_s();
	write_file(path, "a", failure_line);
	took = expect_revert_then_enable("truncated", start);
	report("log truncated, then a failure line: reverted in %.0f ms",
	    took * 1000);
	/* Rotated. */
	snprintf(moved, sizeof moved, "%s.1", path);
	assert_int_equal(rename(path, moved), 0);
	start = now_s();
	write_file(path, "a", failure_line);
	took = expect_revert_then_enable("rotated", start);
	report("log rotated, then a failure line in the new file: reverted "
	    "in %.0f ms", took * 1000);
	/*
	 * Growing at 50 MB/s for 4 s: the daemon keeps answering.  A
	 * sanitizer build reads some 30 times slower, so it gets a flood
	 * slowed by the time scale, or the failure line after it would wait
	 * behind most of 200 MB.
	 */
	rss0 = proc_rss_kib(daemon_pid);
	cpu = (double)proc_cpu_ticks(daemon_pid) / (double)sysconf(_SC_CLK_TCK);
	rate = 50e6 / time_scale();
	writer = flood(rate, 4.0);
	while (waitpid(writer, &status, WNOHANG) == 0) {
		if ((rtt = status_rtt_ms()) < 0)
			fail_msg("the daemon stopped answering under the flood");
		if (rtt > worst)
			worst = rtt;
		sleep_ms(100);
	}
	start = now_s();
	write_file(path, "a", failure_line);
	took = expect_revert_then_enable("flood", start);
	rss1 = proc_rss_kib(daemon_pid);
	report("log growing at %.1f MB/s for 4 s (%.0f MB): status answered "
	    "in at most %.1f ms meanwhile; the failure line after it reverted "
	    "in %.0f ms; daemon CPU %.2f s; RSS %ld -> %ld KiB", rate / 1e6,
	    rate * 4 / 1e6, worst, took * 1000, (double)proc_cpu_ticks(daemon_pid) / (double)sysconf(_SC_CLK_TCK) - cpu, rss0, rss1);
	assert_true(sanitized() || rss1 < rss0 + 4096);
	/*
	 * Not a speed target: a daemon reading the flood in one go (libuv
	 * before 1.48 re-ran a zero timer in the same turn) kept a status
	 * waiting seconds; one that reads a turn's budget at a time answers in
	 * milliseconds, so half a second means the clients starved.
	 */
	if (worst > 500 * time_scale())
		fail_msg("status waited %.0f ms behind the log flood", worst);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kill9_burst, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_launchctl_hangs, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_launchctl_error_codes,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_launchctl_missing, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_probe_faults, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_job_folder_abuse, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_revert_kept_when_disk_full,
		    setup, teardown_unmount),
		cmocka_unit_test_setup_teardown(test_state_disk_full, setup,
		    teardown_unmount),
		cmocka_unit_test_setup_teardown(test_log_faults, setup,
		    teardown),
	};

	/* MC_FAULT_ONLY=test_name runs one (cmocka's filter, wildcards). */
	report_prefix = "fault";
	if (getenv("MC_FAULT_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_FAULT_ONLY"));
	return cmocka_run_group_tests_name("faults", tests, NULL, NULL);
}
