/* SPDX-License-Identifier: MIT */
/*
 * Hostile input and hostile neighbours, as the red-team run found them
 * (issue 13): a FIFO or a device where a program or a log should be,
 * signature patterns that explode, property lists nested or shared past
 * reason, probe requests by the hundred thousand, a socket folder someone
 * else made, two daemons started at once, stray signals, a launchctl that
 * cannot be run, escape sequences in log lines, a server that never
 * answers.  Each test reports ("hostile: ...") what the daemon did, for
 * docs/RELIABILITY.md.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
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
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "child.h"
#include "harness.h"
#include "proc.h"
#include "mc_rpc.h"
#include "protocol.h"

/* The daemon answers a well-behaved client quickly (x sanitizer scale). */

/* ggml's abort right after the failure line, then SIGABRT, is evidence
 * (metalcapd(8), EVIDENCE); the line alone never is. */
#define GGML_ABORT_LINE	"ggml/src/ggml-metal/ggml-metal-device.m:852: " \
			"ggml_metal_encoder_set_pipeline: nil Metal pipeline\n"
static void
assert_responsive(const char *what)
{
	double	rtt = status_rtt_ms();

	if (rtt < 0 || rtt > 500 * time_scale())
		fail_msg("%s: status took %.0f ms", what, rtt);
}

/* The daemon's CPU seconds over the next ms milliseconds. */
static double
daemon_cpu_over(long ms)
{
	long long	before = proc_cpu_ticks(daemon_pid);

	sleep_ms(ms);
	return (double)(proc_cpu_ticks(daemon_pid) - before) /
	    (double)sysconf(_SC_CLK_TCK);
}

/* A job file whose program is path, with extra keys. */
static void
put_program(const char *name, const char *path, const char *extra)
{
	char	file[256], body[2048];

	snprintf(file, sizeof file, "%s/jobs.d/%s.plist", home, name);
	snprintf(body, sizeof body, "<?xml version=\"1.0\"?><plist version="
	    "\"1.0\"><dict><key>ProgramArguments</key><array><string>%s"
	    "</string></array>%s</dict></plist>\n", path, extra);
	write_file(file, "w", body);
}

static void
test_fifo_and_devices(void **state)
{
	char	fifo[256];
	double	cpu;

	(void)state;
	snprintf(fifo, sizeof fifo, "%s/fifo", home);
	assert_int_equal(mkfifo(fifo, 0755), 0);
	put_program("fifo", fifo, "");
	put_program("zero", "/dev/zero", "");
	/* A real job whose log is /dev/zero: never read as a log. */
	put_job("zerolog", "<key>StandardErrorPath</key><string>/dev/zero"
	    "</string>");
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	wait_state("fifo", "invalid", 0, 5.0);
	assert_field_has("fifo", "reason", "is not a regular file");
	wait_state("zero", "invalid", 0, 5.0);
	wait_state("zerolog", "unlocked", 0, 5.0);
	cpu = daemon_cpu_over(2000);
	assert_true(cpu < 0.5 * time_scale());
	assert_responsive("FIFO and devices");
	report("a FIFO and /dev/zero as programs: both invalid, nothing "
	    "blocked; /dev/zero as a log: not followed, daemon CPU %.2f s in "
	    "2 s", cpu);
}

static void
test_regex_bombs(void **state)
{
	struct child_result	*r;
	char			 line[400];
	double			 cpu;
	int			 code;

	(void)state;
	put_job("backref", "<key>FailureSignatures</key><array><string>"
	    "(.*)(.*)(.*)\\3\\2\\1x</string></array>");
	put_job("nested", "<key>FailureSignatures</key><array><string>"
	    "((a{1,100}){1,100}){1,100}</string></array>");
	put_job("fine", "<key>FailureSignatures</key><array><string>"
	    "(a|aa)+$</string></array>");
	wait_state("backref", "invalid", 0, 5.0);
	assert_field_has("backref", "reason", "back-reference");
	wait_state("nested", "invalid", 0, 5.0);
	assert_field_has("nested", "reason", "expand it past 2000");
	wait_state("fine", "unlocked", 0, 5.0);
	/* 300 characters that make a backtracking matcher suffer. */
	memset(line, 'a', 300);
	strcpy(line + 300, "!\n");
	append_job_log("fine", line);
	cpu = daemon_cpu_over(1000);
	assert_responsive("regex bombs");
	r = ctl(&code, "status", "fine", NULL, NULL);
	assert_non_null(strstr(r->out, "unlocked"));
	report("FailureSignatures bombs: back-references and a 10^6-copy "
	    "repetition refused as job-file errors; a 300-character line "
	    "through (a|aa)+$ cost %.2f s of daemon CPU", cpu);
}

/*
 * A binary plist of depth arrays each naming the next twice: 2^(depth-1)
 * values from a few bytes (the "billion laughs" of plists).
 */
static void
write_laughs(const char *path, unsigned depth)
{
	unsigned char	b[4096];
	size_t		n = 8, table, k;
	unsigned	offs[64];
	FILE		*f;

	memcpy(b, "bplist00", 8);
	for (k = 0; k < depth; k++) {
		offs[k] = (unsigned)n;
		if (k + 1 == depth) {
			b[n++] = 0x09;
			break;
		}
		b[n++] = 0xa2;
		b[n++] = (unsigned char)(k + 1);
		b[n++] = (unsigned char)(k + 1);
	}
	table = n;
	for (k = 0; k < depth; k++) {
		b[n++] = (unsigned char)(offs[k] >> 8);
		b[n++] = (unsigned char)offs[k];
	}
	memset(b + n, 0, 32);
	b[n + 6] = 2;
	b[n + 7] = 1;
	b[n + 15] = (unsigned char)depth;
	b[n + 30] = (unsigned char)(table >> 8);
	b[n + 31] = (unsigned char)table;
	assert_non_null(f = fopen(path, "w"));
	fwrite(b, 1, n + 32, f);
	fclose(f);
}

/* Plists in every place the daemon reads one, before it starts. */
static void
test_plist_bombs_everywhere(void **state)
{
	char	path[256];

	(void)state;
	kill_daemon(SIGTERM);
	snprintf(path, sizeof path, "%s/jobs.d/bomb.plist", home);
	write_laughs(path, 30);
	snprintf(path, sizeof path, "%s/profiles.d/apple7.plist", home);
	write_laughs(path, 30);
	snprintf(path, sizeof path, "%s/state/overrides.plist", home);
	write_laughs(path, 30);
	snprintf(path, sizeof path, "%s/managed", home);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/managed/org.metalcap.plist", home);
	write_laughs(path, 30);
	start_daemon();
	put_job("llama", "");
	wait_state("bomb", "invalid", 0, 5.0);
	assert_field_has("bomb", "reason", "a shared reference counts");
	/* The managed file is unusable: fail safe, stock. */
	wait_state("llama", "stock", 0, 5.0);
	assert_field_has("llama", "reason", "managed settings unusable");
	assert_responsive("plist bombs");
	assert_true(proc_rss_kib(daemon_pid) < 64 * 1024 * time_scale());
	report("a 2^29-value binary plist (30 levels) as a job file, a profile, the "
	    "overrides and the managed settings: all refused from their "
	    "bytes; the daemon started, RSS %ld KiB", proc_rss_kib(daemon_pid));
}

static void
test_probe_flood(void **state)
{
	uint32_t	busy, ok;
	long		rss0, rss1;
	int		fd;

	(void)state;
	rss0 = proc_rss_kib(daemon_pid);
	fd = raw_connect();
	pipeline_probes(fd, 5000, &busy, &ok, NULL);
	close(fd);
	rss1 = proc_rss_kib(daemon_pid);
	/* At most 64 owed at once: the rest are told to wait. */
	assert_true(ok >= 1 && busy >= 5000 - 64 * 8);
	assert_int_equal(busy + ok, 5000);
	assert_responsive("probe flood");
	assert_true(sanitized() || rss1 < rss0 + 8192);
	report("5000 pipelined probe requests on one connection: %u answered, "
	    "%u EBUSY (64 owed at most); RSS %ld -> %ld KiB", ok, busy, rss0,
	    rss1);
}

/* Start a daemon with extra arguments; its exit status and output. */
static int
daemon_exit(const char *const *args, char *err, size_t len)
{
	const char	*argv[16] = { DAEMON, "--home", home, "--launchctl", SIM,
	    "--foreground" };
	struct child_result r;
	char		*env[CHILD_ENV_MAX];
	size_t		 i;

	for (i = 0; args[i] != NULL && i < 9; i++)
		argv[6 + i] = args[i];
	child_env(env, NULL);
	assert_int_equal(child_run(argv, env, &r), 0);
	snprintf(err, len, "%.1000s", r.err);
	return WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
}

static void
test_socket_paths(void **state)
{
	char		 dir[128], sock[256], err[1024], file[256];
	const char	*args[] = { "--socket", sock, NULL };
	const char	*paths[] = { "--socket", sock, "--paths", NULL };
	const size_t	 room = sizeof ((struct sockaddr_un *)NULL)->sun_path -
			    1;
	struct stat	 sb;

	(void)state;
	kill_daemon(SIGTERM);
	/* A folder others may write: refused. */
	snprintf(dir, sizeof dir, "%s/squat", home);
	mkdir(dir, 0777);
	chmod(dir, 0777);
	snprintf(sock, sizeof sock, "%s/metalcapd.sock", dir);
	assert_int_equal(daemon_exit(args, err, sizeof err), 1);
	assert_non_null(strstr(err, "writable by others"));
	if (getuid() == 0) {
		/* Another user's folder: refused. */
		chmod(dir, 0700);
		assert_int_equal(chown(dir, 65534, 65534), 0);
		assert_int_equal(daemon_exit(args, err, sizeof err), 1);
		assert_non_null(strstr(err, "another user's"));
	}
	/* A regular file where the socket goes: refused, and kept. */
	snprintf(file, sizeof file, "%s/precious", home);
	write_file(file, "w", "keep me\n");
	snprintf(sock, sizeof sock, "%s", file);
	assert_int_equal(daemon_exit(args, err, sizeof err), 1);
	assert_non_null(strstr(err, "is not a socket; not removing it"));
	assert_int_equal(stat(file, &sb), 0);
	assert_int_equal(sb.st_size, 8);
	/* A path longer than a socket may have: refused, not cut. */
	snprintf(sock, sizeof sock, "%s/%0120d.sock", home, 0);
	assert_int_equal(daemon_exit(args, err, sizeof err), 2);
	assert_non_null(strstr(err, "over the 107 a unix socket allows"));
	/* At the edge: sun_path's room less its NUL is taken, one more not. */
	memset(sock, 's', room);
	sock[0] = '/';
	sock[room] = '\0';
	assert_int_equal(daemon_exit(paths, err, sizeof err), 0);
	sock[room] = 's';
	sock[room + 1] = '\0';
	assert_int_equal(daemon_exit(paths, err, sizeof err), 2);
	snprintf(file, sizeof file, "is %zu bytes, over the %zu a unix socket "
	    "allows", room + 1, room);
	assert_non_null(strstr(err, file));
	start_daemon();
	report("socket folder writable by others%s: refused; a regular file "
	    "as --socket: refused and kept; a 130-byte --socket: refused",
	    getuid() == 0 ? ", or another user's" : "");
}

/* Two daemons started at the same instant, ten times: one serves. */
static void
test_two_daemons_race(void **state)
{
	pid_t	a, b;
	int	trial, alive, fd;
	double	start;

	(void)state;
	kill_daemon(SIGTERM);
	for (trial = 0; trial < 10; trial++) {
		a = spawn_daemon("race-a.log");
		b = spawn_daemon("race-b.log");
		/* The loser's exit is the event waited for, not a time. */
		start = now_s();
		do {
			sleep_ms(20);
			alive = (waitpid(a, NULL, WNOHANG) == 0) +
			    (waitpid(b, NULL, WNOHANG) == 0);
		} while (alive == 2 && now_s() - start < 10 * time_scale());
		if (alive != 1)
			fail_msg("trial %d: %d daemons running", trial, alive);
		/* The winner may still be on its way to listening. */
		while ((fd = try_connect()) == -1 &&
		    now_s() - start < 10 * time_scale())
			sleep_ms(20);
		if (fd == -1)
			fail_msg("trial %d: the winner never listened", trial);
		close(fd);
		/* The loser never took the winner's socket away. */
		assert_responsive("two daemons");
		kill(a, SIGTERM);
		kill(b, SIGTERM);
		waitpid(a, NULL, 0);
		waitpid(b, NULL, 0);
	}
	start_daemon();
	report("two daemons started at once, 10 times: exactly one ran each "
	    "time, and its socket stayed");
}

static void
test_signals(void **state)
{
	int	code;

	(void)state;
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	kill(daemon_pid, SIGUSR1);
	kill(daemon_pid, SIGUSR2);
	kill(daemon_pid, SIGHUP);
	sleep_ms(300);
	assert_int_equal(waitpid(daemon_pid, NULL, WNOHANG), 0);
	assert_responsive("signals");
	ctl(&code, "status", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	assert_true(daemon_log_has("SIGHUP: rescanning"));
	report("SIGUSR1, SIGUSR2: ignored; SIGHUP: a rescan; the daemon kept "
	    "serving");
}

/* launchctl cannot be run at all, under 40 concurrent restarts. */
static void
test_spawn_failures(void **state)
{
	char	name[16];
	int	i, k, code;

	(void)state;
	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof name, "j%d", i);
		put_job(name, "<key>HealthCheck</key><dict><key>"
		    "ProgramArguments</key><array><string>/nonexistent/check"
		    "</string></array><key>StartDelaySeconds</key><integer>0"
		    "</integer><key>LoadSeconds</key><integer>0</integer>"
		    "</dict>");
	}
	/*
	 * The health check cannot run: a failed check, so reverted, and
	 * withdrawn when it fails the stock run too.
	 */
	wait_daemon_log("job j0: health check failed", 1);
	kill_daemon(SIGTERM);
	daemon_launchctl = "/nonexistent/launchctl";
	start_daemon();
	for (k = 0; k < 2; k++)
		for (i = 0; i < 20; i++) {
			snprintf(name, sizeof name, "j%d", i);
			ctl(&code, "restart", name, NULL, NULL);
		}
	sleep_ms(1000);
	assert_int_equal(waitpid(daemon_pid, NULL, WNOHANG), 0);
	assert_responsive("spawn failures");
	assert_field_has("j0", "reason", "cannot run /nonexistent/launchctl");
	report("launchctl missing, 40 restarts of 20 jobs whose health check "
	    "is missing too: every call failed cleanly, the daemon kept "
	    "serving");
}

/* Job steps a rescan made so far, from the daemon's debug log. */
static long
rescans_logged(void)
{
	char	path[256], line[1024];
	long	n = 0;
	FILE	*f;

	snprintf(path, sizeof path, "%s/daemon.log", home);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof line, f) != NULL)
		if (strstr(line, ": managed: ") != NULL)
			n++;
	fclose(f);
	return n;
}

/*
 * The machine's job folder, missing, is waited for at its nearest
 * ancestor, here the home folder, where the daemon's own log is too
 * (under FSEvents, which reports whole trees, /Library holds far busier
 * neighbours).  Only the way down to the folder counts: a rescan that
 * logged a line (debug logging, or a full disk's warnings) used to
 * rescan again, for ever, at full CPU, and a job file that came
 * meanwhile was never acted on.
 */
static void
test_log_beside_watched_ancestor(void **state)
{
	char	path[384];
	double	cpu;
	long	rescans;

	(void)state;
	kill_daemon(SIGTERM);
	daemon_env = "METALCAPD_DEBUG=1";
	start_daemon();
	snprintf(path, sizeof path, "%s/Library", home);
	assert_int_equal(access(path, F_OK), -1);
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	put_job("second", "");
	wait_state("second", "unlocked", 0, 5.0);
	/* Idle: no rescan (each shows as a job's "managed" step), no CPU. */
	sleep_ms(500);
	rescans = rescans_logged();
	cpu = daemon_cpu_over(1000);
	rescans = rescans_logged() - rescans;
	report("the machine's job folder waited for at the home folder, "
	    "beside the daemon's debug log: %ld rescans and %.2f s of daemon "
	    "CPU in 1 s", rescans, cpu);
	assert_int_equal(rescans, 0);
	assert_true(cpu < 0.2);
	/* The way down is still watched: the folder made is followed. */
	put_machine_job("fleet");
	wait_state("fleet", "unlocked", 0, 5.0);
}

/* A log line full of escape sequences reaches no terminal raw. */
static void
test_control_characters(void **state)
{
	struct child_result	*r;
	long			 pid;
	int			 code;

	(void)state;
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 5.0);
	/* The line, then ggml's abort: evidence (witness.c). */
	append_job_log("llama", "ggml_metal_init: error: \x1b]0;pwned\x07\x1b[2J"
	    "\xc2\x9b" "2J\xff\xfe broken\n");	/* C1's CSI too */
	append_job_log("llama", GGML_ABORT_LINE);
	assert_int_equal(kill((pid_t)pid, SIGABRT), 0);
	wait_state("llama", "reverted", -1, 10.0);
	r = ctl(&code, "status", NULL, NULL, NULL);
	assert_null(strchr(r->out, '\x1b'));
	assert_null(strchr(r->out, '\x07'));
	/* ESC [ 2J, a control sequence as colours are, is taken out before
	 * the line is scanned; the rest is shown with '?'. */
	assert_non_null(strstr(r->out, "?]0;pwned??2J?? broken"));
	assert_null(strstr(r->out, "\xc2\x9b"));
	r = ctl(&code, "--json", "status", NULL, NULL);
	assert_non_null(strstr(r->out, "pwned"));
	report("a failure line with terminal escapes and invalid UTF-8: "
	    "reverted, shown with '?' in their place, JSON still valid");
}

/*
 * Evidence is cut to fit: never inside a UTF-8 character, or the fleet
 * files lose the job (jansson refuses the string) and plistlib refuses
 * the overrides.
 */
static void
test_evidence_cut_in_utf8(void **state)
{
	char	line[1024], cmd[768];
	size_t	n;
	long	pid;

	(void)state;
	put_job("llama", "");
	pid = wait_state("llama", "unlocked", 0, 5.0);
	n = (size_t)snprintf(line, sizeof line, "ggml_metal_init: error: ");
	/* Two-byte characters from an odd offset: byte 255 splits one. */
	line[n++] = 'x';
	while (n < 600) {
		line[n++] = (char)0xc3;
		line[n++] = (char)0xa9;
	}
	strcpy(line + n, "\n");
	append_job_log("llama", line);
	append_job_log("llama", GGML_ABORT_LINE);
	assert_int_equal(kill((pid_t)pid, SIGABRT), 0);
	wait_state("llama", "reverted", -1, 10.0);
	sleep_ms(300);
	/* Independent readers: Python's json and plistlib. */
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c 'import json, plistlib, "
	    "sys; d = json.load(open(sys.argv[1])); "
	    "assert [j[\"state\"] for j in d[\"jobs\"]] == [\"reverted\"], d; "
	    "p = plistlib.load(open(sys.argv[2], \"rb\")); "
	    "assert \"\\u00e9\" in str(p), p' %s/state/status.json "
	    "%s/state/overrides.plist", home, home);
	assert_int_equal(system(cmd), 0);
	report("a 600-byte failure line of two-byte characters: the evidence "
	    "cut at a character boundary; status.json and overrides.plist "
	    "read by Python's json and plistlib");
}

/* A file name that is no job name never takes over a job's name. */
static void
test_long_name_no_takeover(void **state)
{
	char	name[80], path[256];

	(void)state;
	memset(name, 'a', 64);
	name[64] = '\0';
	put_job(name, "");
	wait_state(name, "unlocked", 0, 5.0);
	snprintf(path, sizeof path, "%s/jobs.d/%sbbbbbb.plist", home, name);
	write_file(path, "w", "not a plist");
	sleep_ms(500);
	assert_field_has(name, "state", "unlocked");
	report("a 70-character job file beside the 64-character job it would "
	    "have been cut to: ignored, the job unharmed");
}

/*
 * What in the job folder is no job: hidden files (an editor's, macOS's
 * AppleDouble ._ files), files not ending in .plist, and a name one
 * character past 64, which is not cut down to the 64 it starts with.
 * Each holds a valid job; none becomes one, and the long name is named
 * in the log.
 */
static void
test_not_job_files(void **state)
{
	static const char	*body = "<plist version=\"1.0\"><dict><key>"
	    "ProgramArguments</key><array><string>" FAKE_LLAMA "</string>"
	    "</array><key>Unlocked</key><false/></dict></plist>\n";
	char			 name[80], file[96];

	(void)state;
	memset(name, 'a', 64);
	name[64] = '\0';
	snprintf(file, sizeof file, "%sb.plist", name);
	write_raw(".hidden.plist", body);
	write_raw("._llama.plist", body);
	write_raw("llama.txt", body);
	write_raw("llama.plist~", body);
	write_raw(file, body);
	put_job("real", "");
	wait_state("real", "unlocked", 0, 5.0);
	assert_null(job_status(".hidden"));
	assert_null(job_status("._llama"));
	assert_null(job_status("llama"));
	assert_null(job_status(name));
	assert_true(daemon_log_has(": ignored: a job's name must be 1-64 of "
	    "A-Z a-z 0-9 . _ -"));
	report("hidden, AppleDouble, .txt, backup and 65-character job files "
	    "beside a job: none became a job");
}

/* ForceStock flipped on and off faster than launchd can follow. */
static void
test_forcestock_toggles(void **state)
{
	char	path[256];
	int	i;
	long	pid;

	(void)state;
	put_job("llama", "");
	wait_state("llama", "unlocked", 0, 5.0);
	snprintf(path, sizeof path, "%s/managed", home);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/managed/org.metalcap.plist", home);
	for (i = 0; i < 10; i++) {
		write_file(path, "w", i % 2 ? "<plist version=\"1.0\"><dict/>"
		    "</plist>\n" : "<plist version=\"1.0\"><dict><key>"
		    "ForceStock</key><true/></dict></plist>\n");
		sleep_ms(80);
	}
	write_file(path, "w", "<plist version=\"1.0\"><dict><key>ForceStock"
	    "</key><true/></dict></plist>\n");
	pid = wait_state("llama", "stock", 0, 5.0);
	/* Past the marker timeout, it is still stock, never "blocked". */
	sleep_ms(2000 * (long)time_scale());
	pid = wait_state("llama", "stock", 0, 1.0);
	assert_false(environ_has(pid, INJECTED));
	report("ForceStock toggled 10 times in 0.8 s: the job settled stock "
	    "and was never taken for blocked");
}

/*
 * A job blocked (its program drops the injection: one with a file
 * capability stands in for a restricted one), then forced stock: the
 * stock process is stock, not left "blocked" by the old process's flag.
 */
static void
test_blocked_then_forcestock(void **state)
{
	char	path[256];

	(void)state;
	put_restricted_job();
	wait_state("restricted", "blocked", 0, 5.0);
	snprintf(path, sizeof path, "%s/managed", home);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/managed/org.metalcap.plist", home);
	write_file(path, "w", "<plist version=\"1.0\"><dict><key>ForceStock"
	    "</key><true/></dict></plist>\n");
	wait_state("restricted", "stock", 0, 5.0);
	sleep_ms(2000 * (long)time_scale());
	assert_field_has("restricted", "state", "stock");
	report("a blocked job forced stock: stock, and stayed so past the "
	    "marker timeout");
}

/* A server that accepts and never answers: metalcapctl gives up. */
static void
test_client_timeout(void **state)
{
	struct sockaddr_un	 sun = { .sun_family = AF_UNIX };
	const char		*argv[] = { CTL, "--socket", sun.sun_path,
	    "--timeout", "1", "status", NULL };
	struct child_result	 r;
	char			*env[CHILD_ENV_MAX];
	double			 start;
	int			 fd;

	(void)state;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s/mute.sock", home);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	assert_int_equal(listen(fd, 4), 0);
	child_env(env, NULL);
	start = now_s();
	assert_int_equal(child_run(argv, env, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 3);
	assert_non_null(strstr(r.err, "did not answer within 1 s"));
	assert_true(now_s() - start < 5 * time_scale());
	close(fd);
	report("a server that never answers: metalcapctl --timeout 1 gave up "
	    "after %.1f s", now_s() - start);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fifo_and_devices, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_regex_bombs, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_plist_bombs_everywhere,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_probe_flood, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_socket_paths, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_two_daemons_race, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_signals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spawn_failures, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_log_beside_watched_ancestor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_characters, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_evidence_cut_in_utf8, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_not_job_files, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_long_name_no_takeover,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_forcestock_toggles, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_blocked_then_forcestock,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_timeout, setup,
		    teardown),
	};

	report_prefix = "hostile";
	if (getenv("MC_FAULT_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_FAULT_ONLY"));
	return cmocka_run_group_tests_name("hostile input", tests, NULL, NULL);
}
