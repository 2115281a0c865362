/* SPDX-License-Identifier: MIT */
/*
 * The end-to-end harness: a real metalcapd in its own --home, driving the
 * launchctl SIMULATOR that runs fake-llama on the SIMULATED device, and
 * metalcapctl to talk to it.  Shared by the e2e, fault and abuse tests.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "child.h"
#include "harness.h"
#include "mc_client.h"
#include "mc_rpc.h"
#include "protocol.h"

char		home[64], simdir[128], simvar[160], switches[160];
pid_t		daemon_pid;

/* Sanitizer builds run several times slower: scale the time bounds. */
double
time_scale(void)
{
	const char	*s = getenv("MC_TEST_TIME_SCALE");

	return s != NULL && atof(s) >= 1 ? atof(s) : 1.0;
}

/*
 * A sanitizer build (make check-asan scales time): ASan keeps freed
 * memory in quarantine, so resident memory says nothing there.
 */
bool
sanitized(void)
{
	return time_scale() > 1;
}

double
now_s(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
sleep_ms(long ms)
{
	struct timespec	ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Run metalcapctl --home H ARGS... (NULL-ended) with extra environment
 * (NULL-ended, or NULL); *code gets its status.
 */
struct child_result *
ctlv_env(int *code, const char *const *extra, const char *const *args)
{
	static struct child_result	r;
	const char			*argv[40] = { ctl_program ? ctl_program :
	    CTL, "--home", home };
	char				*env[CHILD_ENV_MAX];
	size_t				 i;

	for (i = 0; args[i] != NULL && i + 4 < sizeof argv / sizeof argv[0];
	    i++)
		argv[i + 3] = args[i];
	argv[i + 3] = NULL;
	child_env(env, extra);
	assert_int_equal(child_run(argv, env, &r), 0);
	*code = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
	return &r;
}

struct child_result *
ctlv(int *code, const char *const *args)
{
	return ctlv_env(code, NULL, args);
}

struct child_result *
ctl(int *code, const char *a1, const char *a2, const char *a3,
    const char *a4)
{
	const char	*args[] = { a1, a2, a3, a4, NULL };

	return ctlv(code, args);
}

/* The status of one job as JSON, or NULL when there is no such job. */
json_t *
job_status(const char *name)
{
	struct child_result	*r;
	json_t			*doc, *j;
	int			 code;

	r = ctl(&code, "--json", "status", name, NULL);
	if (code != 0 && code != 4)
		return NULL;
	doc = json_loads(r->out, 0, NULL);
	if (doc == NULL || json_array_size(doc) != 1) {
		json_decref(doc);
		return NULL;
	}
	j = json_incref(json_array_get(doc, 0));
	json_decref(doc);
	return j;
}

const char *
str_of(json_t *j, const char *key)
{
	json_t	*v = json_object_get(j, key);

	return json_is_string(v) ? json_string_value(v) : "";
}

long
pid_of(json_t *j)
{
	json_t	*v = json_object_get(j, "pid");

	return json_is_integer(v) ? (long)json_integer_value(v) : 0;
}

/* The job's string field key contains text. */
void
assert_field_has(const char *name, const char *key, const char *text)
{
	json_t	*j = job_status(name);

	if (j == NULL || strstr(str_of(j, key), text) == NULL)
		fail_msg("%s.%s is '%s', lacking '%s'", name, key,
		    j ? str_of(j, key) : "(no job)", text);
	json_decref(j);
}

/* Write job k's file, with MARK=mark in its environment. */
void
edit_job(int k, const char *mark)
{
	char	tmp[256], path[256], body[4096];

	snprintf(tmp, sizeof tmp, "%s/.j%d.tmp", home, k);
	snprintf(path, sizeof path, "%s/jobs.d/j%d.plist", home, k);
	snprintf(body, sizeof body, "<?xml version=\"1.0\"?><plist "
	    "version=\"1.0\"><dict><key>ProgramArguments</key><array><string>"
	    FAKE_LLAMA "</string></array><key>EnvironmentVariables</key><dict>"
	    "<key>MTLSIM_SWITCHES</key><string>%s</string><key>MARK</key>"
	    "<string>%s</string></dict>%s</dict></plist>\n",
	    switches + strlen("MTLSIM_SWITCHES="), mark, job_throttle);
	write_file(tmp, "w", body);
	assert_int_equal(rename(tmp, path), 0);
}

/*
 * A string of a job's status: its field key, or with map, the field key
 * of its map of that name ("verified", "auto"); "" when there is none.
 */
const char *
status_string(const char *name, const char *map, const char *key, char *buf,
    size_t len)
{
	json_t	*job = job_status(name), *in = job;

	if (map != NULL)
		in = json_object_get(job, map);
	snprintf(buf, len, "%s", json_string_value(json_object_get(in, key)) ?:
	    "");
	json_decref(job);
	return buf;
}

/*
 * Poll until the job is in state (with a pid, if running) and its pid
 * differs from not_pid; returns the pid, or fails after timeout seconds.
 */
long
wait_state(const char *name, const char *state, long not_pid, double timeout)
{
	double	 start = now_s();
	json_t	*j;
	long	 pid;
	char	 last[400] = "none";

	timeout *= time_scale();
	while (now_s() - start < timeout) {
		if ((j = job_status(name)) != NULL) {
			pid = pid_of(j);
			/* The reason too: a wrong state says why in the log. */
			snprintf(last, sizeof last, "%s/%ld: %s", str_of(j,
			    "state"), pid, str_of(j, "reason"));
			if (strcmp(str_of(j, "state"), state) == 0 &&
			    (pid > 0 || strcmp(state, "stopped") == 0 ||
			    strcmp(state, "invalid") == 0 ||
			    strcmp(state, "failed") == 0 || not_pid == -1) &&
			    (not_pid <= 0 || pid != not_pid)) {
				json_decref(j);
				return pid;
			}
			json_decref(j);
		}
		sleep_ms(20);
	}
	fail_msg("%s did not reach %s within %.1f s (last: %s)", name, state,
	    timeout, last);
	return 0;
}

/*
 * Wait until process pid runs program comm (a shell's exec done): a test
 * that changes what the shell tests must not do so before it tested.
 */
void
wait_comm(long pid, const char *comm, double timeout)
{
	char	name[64] = "";
	double	start = now_s();

	for (timeout *= time_scale(); now_s() - start < timeout;
	    sleep_ms(20)) {
		if (!proc_comm(pid, name, sizeof name))
			break;
		if (strcmp(name, comm) == 0)
			return;
	}
	fail_msg("pid %ld did not come to run %s (last: \"%s\")", pid, comm,
	    name);
}

/* The program pid runs now (/proc/PID/comm); false: it is gone. */
bool
proc_comm(long pid, char *name, size_t len)
{
	char	path[64];
	ssize_t	n;
	int	fd;

	snprintf(path, sizeof path, "/proc/%ld/comm", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return false;
	n = read(fd, name, len - 1);
	close(fd);
	name[n > 0 ? n - 1 : 0] = '\0';
	return true;
}

/*
 * Overwrite bytes of path at offset 0 in place, its size and times kept
 * as they were (what rsync --inplace -t or cp -p over it leaves).
 */
void
rewrite_in_place(const char *path, const char *bytes)
{
	struct timespec	times[2];
	struct stat	sb;
	ssize_t		n = (ssize_t)strlen(bytes);
	int		fd;

	assert_int_equal(stat(path, &sb), 0);
	assert_true((fd = open(path, O_WRONLY | O_CLOEXEC)) != -1);
	assert_int_equal(pwrite(fd, bytes, (size_t)n, 0), n);
	assert_int_equal(close(fd), 0);
	times[0] = sb.st_atim;
	times[1] = sb.st_mtim;
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

/* Does /proc/PID/environ hold a variable starting with prefix?  -1: gone. */
int
environ_lookup(long pid, const char *prefix)
{
	char	path[64], buf[65536];
	size_t	n, off;
	FILE	*f;
	int	found = 0;

	snprintf(path, sizeof path, "/proc/%ld/environ", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (off = 0; off < n; off += strlen(buf + off) + 1)
		if (strncmp(buf + off, prefix, strlen(prefix)) == 0)
			found = 1;
	return found;
}

/* The same, for a process that must be there. */
bool
environ_has(long pid, const char *prefix)
{
	int	found = environ_lookup(pid, prefix);

	if (found == -1)
		fail_msg("cannot read /proc/%ld/environ", pid);
	return found == 1;
}

/* Write (mode "w") or append ("a") text to path. */
void
write_file(const char *path, const char *mode, const char *text)
{
	FILE	*f = fopen(path, mode);

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A copy of from put at to in one step (a rename over it). */
void
copy_file(const char *from, const char *to)
{
	char	 tmp[512], buf[65536];
	size_t	 n;
	FILE	*in, *out;

	snprintf(tmp, sizeof tmp, "%s.tmp", to);
	assert_non_null(in = fopen(from, "rb"));
	assert_non_null(out = fopen(tmp, "wb"));
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	assert_int_equal(ferror(in), 0);
	fclose(in);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(rename(tmp, to), 0);
}

void
append_job_log(const char *job, const char *text)
{
	char	path[256];

	snprintf(path, sizeof path, "%s/logs/%s.err.log", home, job);
	write_file(path, "a", text);
}

/* The computer-level managed preferences, or a user's (user != NULL). */
void
write_managed(const char *user, const char *keys)
{
	char	path[256], text[1024];

	snprintf(path, sizeof path, "%s/managed", home);
	mkdir(path, 0755);
	if (user != NULL) {
		snprintf(path, sizeof path, "%s/managed/%s", home, user);
		mkdir(path, 0755);
	}
	snprintf(path, sizeof path, "%s/managed/%s%sorg.metalcap.plist", home,
	    user ? user : "", user ? "/" : "");
	snprintf(text, sizeof text, "<plist version=\"1.0\"><dict>%s</dict>"
	    "</plist>\n", keys);
	write_file(path, "w", text);
}

/*
 * A job in the machine's job folder (the administrator's), the folder
 * made first if it is not there, as an installer would.
 */
void
put_machine_job(const char *name)
{
	char	cmd[512], path[384];

	snprintf(cmd, sizeof cmd, "mkdir -p '%s/Library/Application Support/"
	    "metalcap/jobs.d'", home);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof path, "%s/Library/Application Support/metalcap/"
	    "jobs.d/%s.plist", home, name);
	write_file(path, "w", "<plist version=\"1.0\"><dict><key>"
	    "ProgramArguments</key><array><string>" FAKE_LLAMA "</string>"
	    "</array></dict></plist>\n");
}

/* Write a job file elsewhere and rename it in, as editors and tools do. */
void
put_job(const char *name, const char *extra)
{
	char	tmp[256], path[256], body[4096];

	snprintf(tmp, sizeof tmp, "%s/.%s.tmp", home, name);
	snprintf(path, sizeof path, "%s/jobs.d/%s.plist", home, name);
	snprintf(body, sizeof body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
	    "\n<plist version=\"1.0\"><dict><key>ProgramArguments</key><array>"
	    "<string>" FAKE_LLAMA "</string></array><key>EnvironmentVariables"
	    "</key><dict><key>MTLSIM_SWITCHES</key><string>%s</string></dict>"
	    "%s%s</dict></plist>\n", switches + strlen("MTLSIM_SWITCHES="),
	    strstr(extra, "<key>ThrottleInterval</key>") ? "" : job_throttle,
	    extra);
	write_file(tmp, "w", body);
	assert_int_equal(rename(tmp, path), 0);
}

void
write_raw(const char *file, const char *body)
{
	char	path[256];

	snprintf(path, sizeof path, "%s/jobs.d/%s", home, file);
	write_file(path, "w", body);
}

/* Extra environment and arguments for the next daemon started. */
const char	*daemon_program, *ctl_program;
const char	*daemon_env, *daemon_env2;
const char	*daemon_template;
/*
 * launchd's throttle is 10 s (the template's ThrottleInterval): a crash
 * loop takes half a minute to show.  The job files put_job and edit_job
 * write ask for 1 s in their own ThrottleInterval, as a user may, so
 * that the tests see one in seconds, and metalcapd checks a CrashLoop
 * against the throttle that really applies; a test that wants launchd's
 * pace sets this to "" (test_crash_loop_real_throttle).
 */
const char	*job_throttle;
const char	*daemon_launchctl;
const char	*daemon_args[16];

/*
 * make check-valgrind: the daemon under memcheck, which sees inside libuv
 * (ASan cannot: Debian's libuv is not instrumented).  Same pid, so the
 * tests' signals reach it; its report goes to HOME/valgrind-LOG.
 */
static void
exec_valgrind(const char **argv, char **env, const char *logname)
{
	const char	*vg[48] = { "/usr/bin/valgrind", "--tool=memcheck",
	    "--error-exitcode=99", "--track-origins=no", "--leak-check=no",
	    "--child-silent-after-fork=yes", "--trace-children=no", NULL };
	char		 logopt[300];
	int		 n = 7, i;

	snprintf(logopt, sizeof logopt, "--log-file=%s/valgrind-%s", home,
	    logname);
	vg[n++] = logopt;
	for (i = 0; argv[i] != NULL && n < 47; i++)
		vg[n++] = argv[i];
	vg[n] = NULL;
	execve(vg[0], (char *const *)vg, env);
	_exit(127);
}

pid_t
spawn_daemon(const char *logname)
{
	const char	*program = daemon_program ? daemon_program : DAEMON;
	const char	*argv[32] = { program, "--home", home, "--launchctl",
	    daemon_launchctl ? daemon_launchctl : SIM, "--foreground",
	    "--marker-timeout", "1500" };
	const char	*extra[] = { simvar, switches, daemon_env, daemon_env2,
	    NULL };
	char		*env[CHILD_ENV_MAX], log[256];
	pid_t		 pid;
	int		 n = 8, i;

	if (daemon_template != NULL) {
		argv[n++] = "--template";
		argv[n++] = daemon_template;
	}
	for (i = 0; daemon_args[i] != NULL && n < 31; i++)
		argv[n++] = daemon_args[i];
	/* env ends at the first NULL: daemon_env2 only after daemon_env. */
	if (daemon_env == NULL)
		extra[2] = daemon_env2;

	child_env(env, extra);
	snprintf(log, sizeof log, "%s/%s", home, logname);
	if ((pid = fork()) == 0) {
		freopen(log, "a", stdout);
		freopen(log, "a", stderr);
		if (getenv("MC_TEST_VALGRIND") != NULL)
			exec_valgrind(argv, env, logname);
		execve(program, (char *const *)argv, env);
		_exit(127);
	}
	return pid;
}

void
start_daemon(void)
{
	double	start = now_s();
	int	code;

	daemon_pid = spawn_daemon("daemon.log");
	while (now_s() - start < 5) {
		ctl(&code, "status", NULL, NULL, NULL);
		if (code == 0 || code == 4)
			return;
		sleep_ms(20);
	}
	fail_msg("metalcapd did not answer within 5 s");
}

void
kill_daemon(int sig)
{
	if (daemon_pid > 0) {
		kill(daemon_pid, sig);
		waitpid(daemon_pid, NULL, 0);
	}
	daemon_pid = 0;
}

/* A fresh home (TEMPLATE for mkdtemp) and the settings cleared. */
int
setup_home(const char *template)
{
	daemon_env = daemon_env2 = NULL;
	daemon_program = ctl_program = NULL;
	daemon_template = NULL;
	job_throttle = "<key>ThrottleInterval</key><integer>1</integer>";
	daemon_launchctl = NULL;
	memset(daemon_args, 0, sizeof daemon_args);
	snprintf(home, sizeof home, "%s", template);
	if (mkdtemp(home) == NULL)
		return -1;
	snprintf(simdir, sizeof simdir, "%s/launchd", home);
	snprintf(simvar, sizeof simvar, "LAUNCHCTL_SIM_DIR=%s", simdir);
	snprintf(switches, sizeof switches, "MTLSIM_SWITCHES=%s/switches", home);
	return 0;
}

int
setup(void **state)
{
	(void)state;
	if (setup_home("/tmp/mc-e2e.XXXXXX") == -1)
		return -1;
	start_daemon();
	return 0;
}

/* Stop the daemon, then every job the simulator still runs. */
/* Does pid's environment hold the entry want (a NUL-ended string)? */
static bool
environ_holds(const char *pid, const char *want)
{
	static char	buf[65536];
	char		path[300];
	ssize_t		n, i;
	int		fd;

	snprintf(path, sizeof path, "/proc/%s/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return false;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
		if (strcmp(buf + i, want) == 0)
			return true;
	return false;
}

/* The program a process runs, from /proc (for the message). */
static const char *
proc_name(const char *pid)
{
	static char	name[64];
	char		path[300];
	ssize_t		n;
	int		fd;

	snprintf(path, sizeof path, "/proc/%s/comm", pid);
	name[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		if ((n = read(fd, name, sizeof name - 1)) > 0)
			name[n - 1] = '\0';
		close(fd);
	}
	return name;
}

/*
 * What the simulator ran for this test and its bootouts missed (a
 * supervisor outlived one test of a busy run): killed, and named, so
 * that no process outlives its test unseen.  Its jobs carry the test's
 * device switches; the supervisors, its simulator folder.
 */
static void
teardown_leftovers(void)
{
	struct dirent	*de;
	DIR		*dp;
	pid_t		 pid;

	if ((dp = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		if ((pid = (pid_t)atol(de->d_name)) <= 0 || pid == getpid() ||
		    (!environ_holds(de->d_name, switches) &&
		    !environ_holds(de->d_name, simvar)))
			continue;
		print_message("teardown: pid %ld (%s) of this test outlived "
		    "it: killed\n", (long)pid, proc_name(de->d_name));
		kill(pid, SIGKILL);
	}
	closedir(dp);
}

int
teardown(void **state)
{
	char	cmd[1024];
	int	sanitizer;

	(void)state;
	kill_daemon(SIGTERM);
	/* MC_TEST_SHOW_LOG=1: metalcapd's log after each test, to debug. */
	if (getenv("MC_TEST_SHOW_LOG") != NULL) {
		snprintf(cmd, sizeof cmd, "cat %s/daemon.log >&2", home);
		if (system(cmd) != 0)
			print_message("no daemon.log in %s\n", home);
	}
	/* A sanitizer report from the daemon fails the test (check-asan). */
	/* The daemon's own reports, not those of a probe the test crashed. */
	snprintf(cmd, sizeof cmd, "cat %s/*.log 2>/dev/null | grep -A40 -E "
	    "'ERROR: [A-Za-z]*Sanitizer|runtime error:' >&2", home);
	sanitizer = system(cmd) == 0;
	/* And memcheck's (make check-valgrind), with the report. */
	snprintf(cmd, sizeof cmd, "grep -l 'ERROR SUMMARY: [1-9]' "
	    "%s/valgrind-* 2>/dev/null | xargs -r cat >&2; ! grep -q "
	    "'ERROR SUMMARY: [1-9]' %s/valgrind-* 2>/dev/null", home, home);
	sanitizer |= system(cmd) != 0;
	/* Every domain's jobs: the simulator keeps them apart. */
	snprintf(cmd, sizeof cmd, "for f in %s/services/*/*.plist; do "
	    "[ -e \"$f\" ] || continue; d=$(basename $(dirname \"$f\")); "
	    "LAUNCHCTL_SIM_DIR=%s %s bootout $d/$(id -u)/$(basename \"$f\" "
	    ".plist) 2>/dev/null; done; sleep 0.5", simdir, simdir, SIM);
	sanitizer |= system(cmd) != 0;
	teardown_leftovers();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
	return system(cmd) == 0 && !sanitizer ? 0 : -1;
}


/* Switch the simulated device for every process (the probe included). */
void
set_device(const char *line)
{
	char	text[256];

	snprintf(text, sizeof text, "%s%s", line ? line : "", line ? "\n" : "");
	write_file(switches + strlen("MTLSIM_SWITCHES="), "w", text);
}

bool
marker_exists(long pid)
{
	char	path[256];

	snprintf(path, sizeof path, "%s/state/reports/metalcap.%ld.report",
	    home, pid);
	return access(path, F_OK) == 0;
}

int
raw_connect(void)
{
	int	fd = try_connect();

	assert_true(fd != -1);
	return fd;
}

/* Send bytes; read one message back (or report the connection closed). */
int
raw_exchange(int fd, const void *bytes, size_t len,
    struct mc_rpc_decoder *dec, struct mc_rpc_message *m)
{
	char		 buf[65536];
	const char	*why;
	ssize_t		 n;

	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	for (;;) {
		if (mc_rpc_next(dec, m, &why) == MC_RPC_OK)
			return 0;
		if ((n = read(fd, buf, sizeof buf)) <= 0)
			return -1;
		mc_rpc_feed(dec, buf, (size_t)n);
	}
}

/* method with no parameters on fd as msgid 1; its answer read and dropped. */
void
raw_call(int fd, const char *method)
{
	struct mc_rpc_decoder	 dec;
	struct mc_rpc_message	 m;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	mc_rpc_pack_request(&pk, 1, method, 0);
	mc_rpc_decoder_init(&dec, MC_MAX_REPLY);
	assert_int_equal(raw_exchange(fd, sb.data, sb.size, &dec, &m), 0);
	assert_int_equal(m.msgid, 1);
	mc_rpc_decoder_free(&dec);
	msgpack_sbuffer_destroy(&sb);
}

/* A connection to the daemon, or -1 (no abort: attackers use it too). */
int
try_connect(void)
{
	struct sockaddr_un	sun = { .sun_family = AF_UNIX };
	int			fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sun.sun_path, sizeof sun.sun_path, "%s/metalcapd.sock", home);
	if (fd != -1 && connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0)
		return fd;
	if (fd != -1)
		close(fd);
	return -1;
}

/* Has the daemon closed fd (EOF or reset)? Drains what it sent. */
bool
closed_by_daemon(int fd, double wait_s)
{
	char	buf[65536];
	double	start = now_s();
	ssize_t	n;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (;;) {
		n = read(fd, buf, sizeof buf);
		if (n == 0 || (n == -1 && errno != EAGAIN))
			return true;
		if (n == -1 && now_s() - start > wait_s)
			return false;
		if (n == -1)
			sleep_ms(10);
	}
}

/*
 * The words that run a program as another user, ahead of its own: as
 * root, setpriv; otherwise an unprivileged user namespace whose uid 1 is
 * one of this user's subordinate uids (/etc/subuid, newuidmap), so the
 * daemon outside sees a real uid of someone else.  0 and the words in
 * prefix, or -1 and why.
 */
int
other_uid_prefix(const char **prefix, size_t n, char *why, size_t whylen)
{
	static const char *const as_root[] = { "/usr/bin/setpriv",
	    "--reuid=65534", "--regid=65534", "--clear-groups", NULL };
	static const char *const as_user[] = { "/usr/bin/unshare", "--user",
	    "--map-auto", "--map-root-user", "/usr/bin/setpriv", "--reuid=1",
	    "--regid=1", "--clear-groups", NULL };
	const char *const *words = getuid() == 0 ? as_root : as_user;
	size_t		 i;

	if (getuid() != 0 && (access("/usr/bin/newuidmap", X_OK) != 0 ||
	    system("/usr/bin/unshare --user --map-auto --map-root-user "
	    "/usr/bin/setpriv --reuid=1 --regid=1 --clear-groups /bin/true "
	    "2>/dev/null") != 0)) {
		snprintf(why, whylen, "not root, and no subordinate uids to "
		    "map (uidmap and an /etc/subuid entry)");
		return -1;
	}
	for (i = 0; words[i] != NULL && i + 1 < n; i++)
		prefix[i] = words[i];
	prefix[i] = NULL;
	return 0;
}

/*
 * The daemon's next start uses a job template that allows the Background
 * session, so jobs may go to user/UID when there is no GUI session.
 */
void
use_background_template(void)
{
	static char	tmpl[256];

	snprintf(tmpl, sizeof tmpl, "%s/template.plist", home);
	write_file(tmpl, "w", "<plist version=\"1.0\"><dict><key>"
	    "LimitLoadToSessionType</key><array><string>Aqua</string><string>"
	    "Background</string></array></dict></plist>");
	daemon_template = tmpl;
}

/*
 * Put job "restricted": a sleep started through a launcher that the
 * pre-launch check cannot recognize (env(1) copied under another name, as
 * a vendor's front-end binary would be).  The shim loads into the
 * launcher, takes itself out of the environment (METALCAP_INHERIT=0), and
 * the exec'd sleep, the same pid, never has it: the injection is dropped
 * as dyld drops it behind a SIP-protected launcher, and only the missing
 * report can show it.
 */
void
put_restricted_job(void)
{
	char	prog[256], cmd[600], extra[512];

	snprintf(prog, sizeof prog, "%s/run-sleep", home);
	snprintf(cmd, sizeof cmd, "cp /usr/bin/env '%s' && chmod 0755 '%s'",
	    prog, home);
	assert_int_equal(system(cmd), 0);
	snprintf(extra, sizeof extra, "<key>ProgramArguments</key><array>"
	    "<string>%s</string><string>/bin/sleep</string><string>1000"
	    "</string></array>", prog);
	put_job("restricted", extra);
}

/*
 * Pipeline n probe requests on fd; count the replies that are EBUSY and
 * those that are answers, and note the first refused msgid (1 to n).
 */
void
pipeline_probes(int fd, uint32_t n, uint32_t *busy, uint32_t *ok,
    uint32_t *first_busy)
{
	struct mc_rpc_decoder	 dec;
	struct mc_rpc_message	 m;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	char			 code[32], msg[256], buf[65536];
	const char		*why;
	uint32_t		 i, got = 0;
	ssize_t			 r;
	pid_t			 writer;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	for (i = 1; i <= n; i++) {
		mc_rpc_pack_request(&pk, i, MC_M_PROBE, 1);
		msgpack_pack_map(&pk, 1);
		mc_rpc_pack_str(&pk, "profile");
		mc_rpc_pack_str(&pk, "stock");
	}
	mc_rpc_decoder_init(&dec, MC_MAX_REPLY);
	*busy = *ok = 0;
	/* A writer of its own: the daemon stops reading a client that does
	 * not read its replies, and this one reads them meanwhile. */
	if ((writer = fork()) == 0) {
		for (i = 0; i < sb.size; i += (uint32_t)r)
			if ((r = write(fd, sb.data + i, sb.size - i)) <= 0)
				_exit(1);
		_exit(0);
	}
	while (got < n) {
		while (mc_rpc_next(&dec, &m, &why) == MC_RPC_OK) {
			got++;
			mc_rpc_error_parse(&m.error, code, sizeof code, msg,
			    sizeof msg);
			if (m.error.type == MSGPACK_OBJECT_NIL)
				(*ok)++;
			else if (strcmp(code, MC_E_BUSY) == 0 && (*busy)++ == 0 &&
			    first_busy != NULL)
				*first_busy = m.msgid;
		}
		if (got < n && ((r = read(fd, buf, sizeof buf)) <= 0 ||
		    mc_rpc_feed(&dec, buf, (size_t)r) == -1))
			fail_msg("the daemon closed after %u replies", got);
	}
	waitpid(writer, NULL, 0);
	mc_rpc_decoder_free(&dec);
	msgpack_sbuffer_destroy(&sb);
}

/*
 * A well-behaved client's status round trip in ms, through the client
 * library metalcapctl uses; -1 if refused.
 */
double
status_rtt_ms(void)
{
	struct mc_client	 cl;
	struct mc_rpc_message	 m;
	char			 sock[512];
	double			 start = now_s(), ms = -1;

	snprintf(sock, sizeof sock, "%s/metalcapd.sock", home);
	if (mc_client_open(&cl, sock, 10) != 0)
		return -1;
	if (mc_client_call(&cl, MC_M_STATUS, NULL, NULL, NULL, &m) ==
	    MC_CLIENT_OK)
		ms = (now_s() - start) * 1000;
	mc_client_close(&cl);
	return ms;
}

/* How many lines of home/daemon.log hold text (0 without a log). */
int
daemon_log_count(const char *text)
{
	char		 path[256], *buf, *line, *end;
	struct stat	 sb;
	FILE		*f;
	size_t		 n;
	int		 count = 0;

	snprintf(path, sizeof path, "%s/daemon.log", home);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	assert_int_equal(fstat(fileno(f), &sb), 0);
	buf = malloc((size_t)sb.st_size + 1);
	assert_non_null(buf);
	n = fread(buf, 1, (size_t)sb.st_size, f);
	buf[n] = '\0';
	fclose(f);
	for (line = buf; line != NULL; line = end != NULL ? end + 1 : NULL) {
		if ((end = strchr(line, '\n')) != NULL)
			*end = '\0';
		count += strstr(line, text) != NULL;
	}
	free(buf);
	return count;
}

/*
 * The device starts failing the pipeline fake-llama's next request
 * compiles, and a request comes (SIGUSR1): it logs ggml's lines and
 * aborts, and the shim saw the call fail.
 */
void
real_pipeline_failure(long pid)
{
	set_device("MTLSIM_FAIL=simdgroup_matrix:pipeline");
	send_request(pid);
}

/* Does pid have a handler for sig (SigCgt in /proc/PID/status)? */
static bool
proc_catches(long pid, int sig)
{
	char			 path[64], line[256];
	unsigned long long	 mask = 0;
	FILE			*f;
	bool			 found = false;

	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	while (!found && fgets(line, sizeof line, f) != NULL)
		found = sscanf(line, "SigCgt: %llx", &mask) == 1;
	fclose(f);
	return found && (mask >> (sig - 1) & 1) != 0;
}

/*
 * A request to fake-llama (SIGUSR1), once it is ready for one: a
 * launchd pid can still be in exec or in the shim's constructor, where
 * the signal's default action would kill the server, which no request
 * does.  One that comes before it serves is taken when it does.
 */
void
send_request(long pid)
{
	double	start = now_s();

	while (!proc_catches(pid, SIGUSR1)) {
		if (now_s() - start > 5 * time_scale())
			fail_msg("pid %ld never took requests (SIGUSR1)", pid);
		sleep_ms(10);
	}
	assert_int_equal(kill((pid_t)pid, SIGUSR1), 0);
}

/* Wait until pid's shim has written its report. */
void
wait_marker(long pid)
{
	double	start = now_s();

	while (!marker_exists(pid)) {
		if (now_s() - start > 5 * time_scale())
			fail_msg("pid %ld's shim wrote no report", pid);
		sleep_ms(10);
	}
}

bool
daemon_log_has(const char *text)
{
	return daemon_log_count(text) > 0;
}

/* Wait until metalcapd's log has n lines holding text, and no more. */
void
wait_daemon_log(const char *text, int n)
{
	double	start = now_s();

	while (daemon_log_count(text) < n) {
		if (now_s() - start > 5 * time_scale())
			fail_msg("metalcapd's log has %d lines with '%s', not %d",
			    daemon_log_count(text), text, n);
		sleep_ms(20);
	}
	assert_int_equal(daemon_log_count(text), n);
}

const char	*report_prefix = "report";

/* A figure for the documents, on stderr: "PREFIX: ...". */
void
report(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", report_prefix);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

/* Is the job's label loaded in the simulated GUI domain? */
bool
loaded_in_gui(const char *name)
{
	char	cmd[512];

	snprintf(cmd, sizeof cmd, "%s %s print gui/%ld/org.metalcap.job.%s "
	    ">/dev/null 2>&1", simvar, SIM, (long)getuid(), name);
	return system(cmd) == 0;
}

/*
 * A number of the simulated launchd's print of the job's label ("pid",
 * "runs"), or 0.
 */
long
launchd_number(const char *name, const char *key)
{
	char	 cmd[512], line[256], format[64];
	long	 n = 0;
	FILE	*p;

	snprintf(cmd, sizeof cmd, "%s %s print gui/%ld/org.metalcap.job.%s "
	    "2>/dev/null", simvar, SIM, (long)getuid(), name);
	snprintf(format, sizeof format, "\t%s = %%ld", key);
	if ((p = popen(cmd, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof line, p) != NULL)
		if (sscanf(line, format, &n) == 1)
			break;
	pclose(p);
	return n;
}

/* The pid the simulated launchd runs the job's label with, or 0. */
long
launchd_pid(const char *name)
{
	return launchd_number(name, "pid");
}

/*
 * The daemon started again with tests/fault's launchctl-fault in front of
 * the simulator, home/lc.fault holding fault ("VERB WHAT", or "" for
 * none; the test writes it again to change it).
 */
void
restart_with_launchctl_fault(const char *fault)
{
	static char	var[300], real[300];
	char		path[256];

	snprintf(path, sizeof path, "%s/lc.fault", home);
	write_file(path, "w", fault);
	snprintf(var, sizeof var, "LAUNCHCTL_FAULT=%s", path);
	snprintf(real, sizeof real, "LAUNCHCTL_SIM=%s", SIM);
	kill_daemon(SIGTERM);
	daemon_launchctl = MC_TEST_SOURCE "/tests/fault/launchctl-fault";
	daemon_env = var;
	daemon_env2 = real;
	start_daemon();
}

/* The pid a file holds once it is written whole; waits for it. */
long
wait_pid_file(const char *path)
{
	double	 start = now_s();
	long	 pid = 0;
	FILE	*f;

	for (;; sleep_ms(10)) {
		if ((f = fopen(path, "r")) != NULL) {
			if (fscanf(f, "%ld\n", &pid) != 1 || !feof(f))
				pid = 0;
			fclose(f);
		}
		if (pid > 0)
			return pid;
		if (now_s() - start > 5 * time_scale())
			fail_msg("no pid in %s", path);
	}
}

/* pid's state letter in /proc/PID/stat (R, S, T, Z...); 0 when gone. */
char
proc_state(long pid)
{
	char	path[64], stat[256], *p;
	FILE	*f;
	size_t	n;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	n = fread(stat, 1, sizeof stat - 1, f);
	fclose(f);
	stat[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')'. */
	return (p = strrchr(stat, ')')) != NULL && p[1] == ' ' ? p[2] : 0;
}

/* Does pid run (a zombie, dead and not yet reaped, does not)? */
bool
proc_runs(long pid)
{
	char	s = proc_state(pid);

	return s != 0 && s != 'Z';
}
