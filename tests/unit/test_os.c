/* SPDX-License-Identifier: MIT */
/*
 * The seam between macOS and Linux (common/mc_os.h), from the product code
 * that goes through it: the shim's report (shim_report.c), the durable
 * state write (mc_plist.c), the client's connect (mc_client.c), the peer's
 * uid and a file's change time (mc_util.c).
 *
 * Built twice.  test_os: the Linux side.  test_os_darwin: with
 * -DMC_OS_MODEL_DARWIN the Darwin side, against tests/sim/xnu-model.c,
 * which gives xnu's constants and applies xnu's rules to openat, fcntl,
 * fsync, listen and connect, and plays libSystem's getpeereid (tests/sim/README.md, "The xnu model").  The
 * same tests assert the same outcomes on both sides; what only one side
 * can show (what the model saw) is asserted under MC_OS_DARWIN.
 *
 * The client's waits for a full listen queue go through nanosleep, which
 * this program replaces (-Wl,--wrap=nanosleep): nobody sleeps, the waits
 * are counted, and a test drains the queue on purpose at a wait, so the
 * client's next try is the one that finds room.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mc_client.h"
#include "mc_os.h"
#include "mc_plist.h"
#include "mc_util.h"
#include "shim_report.h"
#ifdef MC_OS_MODEL_DARWIN
#include "xnu-model.h"
#endif

static char	base[] = "/tmp/mc-os.XXXXXX";

/* --- the client's waits ------------------------------------------------- */

static long	slept_ms;	/* asked for, in all */
static int	sleeps;
static int	drain_at;	/* at this wait, accept one from drain_fd */
static int	drain_fd = -1;
static int	drained = -1;	/* what was accepted */

int	__wrap_nanosleep(const struct timespec *req, struct timespec *rem);

int
__wrap_nanosleep(const struct timespec *req, struct timespec *rem)
{
	(void)rem;
	slept_ms += (long)req->tv_sec * 1000 + req->tv_nsec / 1000000;
	if (++sleeps == drain_at && drain_fd != -1)
		drained = accept(drain_fd, NULL, NULL);
	return 0;
}

static void
waits_reset(void)
{
	slept_ms = 0;
	sleeps = 0;
	drain_at = 0;
	drain_fd = -1;
	drained = -1;
}

static const char *
at(const char *name)
{
	static char	path[4][512];
	static int	i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof path[i], "%s/%s", base, name);
	return path[i];
}

/* The whole of a small file, or "" when there is none. */
static const char *
slurp(const char *path)
{
	static char	buf[256];
	ssize_t		n;
	int		fd;

	buf[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW)) == -1)
		return buf;
	n = read(fd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(base) == NULL)
		return -1;
	if (mkdir(at("real"), 0700) == -1 ||
	    symlink(at("real"), at("link")) == -1)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	char	cmd[128];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static int
each(void **state)
{
	(void)state;
	waits_reset();
#ifdef MC_OS_MODEL_DARWIN
	xnu_model_reset();
#endif
	return 0;
}

/* --- the shim's report -------------------------------------------------- */

/*
 * A report is written: into a folder as metalcap.<pid>.report, and into a
 * file named.  On the Darwin side before issue 45's fix, neither: the
 * shim asked for O_NOFOLLOW | O_NOFOLLOW_ANY, which xnu refuses (EINVAL).
 */
static void
test_report_written(void **state)
{
	(void)state;
	shim_report_write(base, "one\n", 4, 42);
	assert_string_equal(slurp(at("metalcap.42.report")), "one\n");
	shim_report_write(at("named.report"), "two\n", 4, 42);
	shim_report_write(at("named.report"), "three\n", 6, 43);
	assert_string_equal(slurp(at("named.report")), "two\nthree\n");
	shim_report_write(at("real/"), "four\n", 5, 44);
	assert_string_equal(slurp(at("real/metalcap.44.report")), "four\n");
#ifdef MC_OS_DARWIN
	assert_int_equal(xnu_model.openat_einval, 0);
#endif
}

/* A link at the last component is refused, to a folder or to a file. */
static void
test_report_link_last(void **state)
{
	(void)state;
	shim_report_write(at("link"), "x\n", 2, 50);
	assert_string_equal(slurp(at("real/metalcap.50.report")), "");
	assert_int_equal(symlink(at("real/target"), at("flink")), 0);
	shim_report_write(at("flink"), "x\n", 2, 51);
	assert_int_equal(access(at("real/target"), F_OK), -1);
	close(open(at("real/kept"), O_WRONLY | O_CREAT, 0600));
	assert_int_equal(symlink(at("real/kept"), at("klink")), 0);
	shim_report_write(at("klink"), "x\n", 2, 52);
	assert_string_equal(slurp(at("real/kept")), "");
#ifdef MC_OS_DARWIN
	assert_true(xnu_model.openat_eloop >= 3);
	assert_int_equal(xnu_model.openat_einval, 0);
#endif
}

/* A link at a middle component is refused: the kernel's walk, or ours. */
static void
test_report_link_middle(void **state)
{
	(void)state;
	assert_int_equal(mkdir(at("real/sub"), 0700), 0);
	shim_report_write(at("link/m.report"), "x\n", 2, 60);
	shim_report_write(at("link/sub"), "x\n", 2, 61);
	shim_report_write(at("link/sub/"), "x\n", 2, 62);
	assert_int_equal(access(at("real/m.report"), F_OK), -1);
	assert_int_equal(access(at("real/sub/metalcap.61.report"), F_OK), -1);
	assert_int_equal(access(at("real/sub/metalcap.62.report"), F_OK), -1);
	/* The same folder by its own name: written. */
	shim_report_write(at("real/sub"), "y\n", 2, 63);
	assert_string_equal(slurp(at("real/sub/metalcap.63.report")), "y\n");
#ifdef MC_OS_DARWIN
	assert_true(xnu_model.openat_eloop >= 3);
#endif
}

#ifdef MC_OS_MODEL_DARWIN
/*
 * The model's open rules on their own (tests/sim/README.md): the flag pair
 * the shim used is EINVAL before any lookup, O_SYMLINK with NOFOLLOW_ANY
 * too (before xnu-11215), O_CREAT with O_DIRECTORY too; NOFOLLOW_ANY
 * alone opens a real path and refuses a link last or in the middle.
 */
static void
test_model_open_rules(void **state)
{
	int	fd;

	(void)state;
	errno = 0;
	assert_int_equal(openat(AT_FDCWD, base, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW_ANY | O_NOFOLLOW), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(openat(AT_FDCWD, at("nothing"), O_WRONLY | O_CREAT |
	    O_NOFOLLOW_ANY | O_NOFOLLOW, 0600), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(access(at("nothing"), F_OK), -1);
	assert_int_equal(openat(AT_FDCWD, base, O_RDONLY | O_NOFOLLOW_ANY |
	    XNU_MODEL_O_SYMLINK), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(openat(AT_FDCWD, at("dir"), O_RDONLY | O_CREAT |
	    O_DIRECTORY, 0700), -1);
	assert_int_equal(errno, EINVAL);

	fd = openat(AT_FDCWD, at("real"), O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW_ANY);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(openat(AT_FDCWD, at("link"), O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW_ANY), -1);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(openat(AT_FDCWD, at("link/new"), O_WRONLY | O_CREAT |
	    O_NOFOLLOW_ANY, 0600), -1);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(access(at("real/new"), F_OK), -1);
}
#endif

/* --- the durable write -------------------------------------------------- */

/*
 * A state file is written whole; on the Darwin side with F_FULLFSYNC, on
 * the file before it is renamed into place and on its folder after, and
 * no plain fsync needed.
 */
static void
test_durable_write(void **state)
{
	char	why[256];

	(void)state;
	assert_int_equal(mc_write_atomic(at("state.plist"), "abc\n", 4, 0600,
	    why, sizeof why), 0);
	assert_string_equal(slurp(at("state.plist")), "abc\n");
#ifdef MC_OS_DARWIN
	assert_int_equal(xnu_model.fullfsync_files, 1);
	assert_int_equal(xnu_model.fullfsync_dirs, 1);
	assert_int_equal(xnu_model.fsyncs, 0);
#endif
}

#ifdef MC_OS_MODEL_DARWIN
/*
 * A file system that does not do F_FULLFSYNC refuses it (ENOTTY, or
 * EINVAL): the write falls back to fsync, as SQLite's full_fsync does, and
 * succeeds.
 */
static void
test_durable_write_fullfsync_refused(void **state)
{
	char	why[256];

	(void)state;
	xnu_model.fullfsync_refuse = ENOTTY;
	assert_int_equal(mc_write_atomic(at("smb.plist"), "d\n", 2, 0600,
	    why, sizeof why), 0);
	assert_string_equal(slurp(at("smb.plist")), "d\n");
	assert_int_equal(xnu_model.fullfsync_refused, 2);
	assert_int_equal(xnu_model.fsyncs, 2);
	xnu_model.fullfsync_refuse = EINVAL;
	assert_int_equal(mc_write_new(at("nfs.plist"), "e\n", 2, 0600, why,
	    sizeof why), 0);
	assert_string_equal(slurp(at("nfs.plist")), "e\n");
	assert_int_equal(xnu_model.fsyncs, 4);
	/* An I/O error is no refusal: nothing falls back, nothing is
	 * renamed into place, the old state stays. */
	xnu_model.fullfsync_refuse = EIO;
	assert_int_equal(mc_write_atomic(at("smb.plist"), "f\n", 2, 0600,
	    why, sizeof why), -1);
	assert_string_equal(slurp(at("smb.plist")), "d\n");
	assert_int_equal(xnu_model.fsyncs, 4);
	assert_non_null(strstr(why, "Input/output error"));
}
#endif

/* --- the client's connect ----------------------------------------------- */

/* A listener at path that nobody accepts from, its queue filled. */
static int
full_listener(const char *path, int *fillers, int max)
{
	struct sockaddr_un	sun;
	int			l, n = 0, fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	unlink(path);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sun, sizeof sun), 0);
	assert_int_equal(listen(l, 1), 0);
	for (; n < max; n++) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
			/* Full: Linux says EAGAIN, xnu ECONNREFUSED. */
#ifdef MC_OS_DARWIN
			assert_int_equal(errno, ECONNREFUSED);
#else
			assert_int_equal(errno, EAGAIN);
#endif
			close(fd);
			break;
		}
		fillers[n] = fd;
	}
	assert_true(n > 0 && n < max);
#ifdef MC_OS_DARWIN
	/* listen(l, 1) holds 1 on xnu (so_qlimit), 2 on Linux. */
	assert_int_equal(n, 1);
	assert_int_equal(xnu_model.listen_backlog, 1);
#endif
	fillers[n] = -1;
	return l;
}

static void
close_all(int l, int *fillers)
{
	int	i;

	for (i = 0; fillers[i] != -1; i++)
		close(fillers[i]);
	close(l);
}

/*
 * A full queue is waited out: the client is turned away (EAGAIN here,
 * ECONNREFUSED on macOS), waits, and the queue is drained on purpose at
 * its third wait; its next try gets in, and its socket is blocking again.
 * Before issue 47's fix the client's blocking connect waited for ever on
 * Linux (the alarm ends it) and gave up at once on macOS.
 */
static void
test_connect_waits_out_full_queue(void **state)
{
	struct mc_client	c;
	int			fillers[8], l;

	(void)state;
	l = full_listener(at("sock"), fillers, 8);
	drain_fd = l;
	drain_at = 3;
	alarm(30);
	assert_int_equal(mc_client_open(&c, at("sock"), 5), 0);
	alarm(0);
	assert_true(drained >= 0);
	assert_int_equal(sleeps, 3);
	assert_true(slept_ms < MC_CLIENT_CONNECT_MS);
	assert_int_equal(fcntl(c.fd, F_GETFL) & O_NONBLOCK, 0);
#ifdef MC_OS_DARWIN
	assert_int_equal(xnu_model.connect_full, 1 + 3);
#endif
	mc_client_close(&c);
	close(drained);
	close_all(l, fillers);
}

/* A queue that stays full: given up after about a second, and said so. */
static void
test_connect_gives_up(void **state)
{
	struct mc_client	c;
	int			fillers[8], l;

	(void)state;
	l = full_listener(at("sock"), fillers, 8);
	alarm(30);
	assert_int_equal(mc_client_open(&c, at("sock"), 5), -1);
	alarm(0);
	assert_true(slept_ms >= MC_CLIENT_CONNECT_MS);
	assert_true(slept_ms < MC_CLIENT_CONNECT_MS + 100);
	assert_true(sleeps > 5);
	assert_non_null(strstr(c.error, "queue of waiting clients stayed "
	    "full"));
	assert_non_null(strstr(c.error, at("sock")));
	close_all(l, fillers);
}

/*
 * Nobody there: no socket file is not waited for; a socket file nobody
 * listens on is ECONNREFUSED on both, waited for on macOS only (where it
 * may be a full queue) and then said so.
 */
static void
test_connect_nobody(void **state)
{
	struct sockaddr_un	sun;
	struct mc_client	c;
	int			l;

	(void)state;
	assert_int_equal(mc_client_open(&c, at("none"), 5), -1);
	assert_int_equal(sleeps, 0);
	assert_non_null(strstr(c.error, "is it running?"));

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", at("stale"));
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sun, sizeof sun), 0);
	close(l);
	assert_int_equal(mc_client_open(&c, at("stale"), 5), -1);
	assert_non_null(strstr(c.error, "is it running?"));
#ifdef MC_OS_DARWIN
	assert_true(slept_ms >= MC_CLIENT_CONNECT_MS);
	assert_non_null(strstr(c.error, "refused for"));
#else
	assert_int_equal(sleeps, 0);
	assert_non_null(strstr(c.error, strerror(ECONNREFUSED)));
#endif
}

/* --- the peer's uid and a file's change time ---------------------------- */

/*
 * The uid at the other end of a unix socket is this process's own, on
 * both sides of a connection; on the Darwin side through getpeereid(3).
 */
static void
test_peer_uid(void **state)
{
	uid_t	uid = (uid_t)-1;
	int	sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(mc_peer_uid(sv[0], &uid), 0);
	assert_int_equal(uid, geteuid());
	uid = (uid_t)-1;
	assert_int_equal(mc_peer_uid(sv[1], &uid), 0);
	assert_int_equal(uid, geteuid());
	close(sv[0]);
	close(sv[1]);
	assert_int_equal(mc_peer_uid(sv[0], &uid), -1);
#ifdef MC_OS_DARWIN
	assert_int_equal(xnu_model.getpeereid, 3);
#endif
}

/*
 * A file's stamp names its change time to the nanosecond: the same as
 * stat(2) says, whichever field the platform keeps it in.
 */
static void
test_file_stamp_ctime(void **state)
{
	struct stat	sb;
	char		stamp[128], want[64];

	(void)state;
	close(open(at("stamped"), O_WRONLY | O_CREAT, 0600));
	mc_file_stamp(at("stamped"), stamp, sizeof stamp);
	assert_int_equal(stat(at("stamped"), &sb), 0);
	snprintf(want, sizeof want, "changed %lld.%09ld",
	    (long long)sb.st_ctim.tv_sec, (long)sb.st_ctim.tv_nsec);
	assert_non_null(strstr(stamp, want));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_report_written, each),
		cmocka_unit_test_setup(test_report_link_last, each),
		cmocka_unit_test_setup(test_report_link_middle, each),
#ifdef MC_OS_MODEL_DARWIN
		cmocka_unit_test_setup(test_model_open_rules, each),
#endif
		cmocka_unit_test_setup(test_durable_write, each),
#ifdef MC_OS_MODEL_DARWIN
		cmocka_unit_test_setup(test_durable_write_fullfsync_refused,
		    each),
#endif
		cmocka_unit_test_setup(test_connect_waits_out_full_queue, each),
		cmocka_unit_test_setup(test_connect_gives_up, each),
		cmocka_unit_test_setup(test_connect_nobody, each),
		cmocka_unit_test_setup(test_peer_uid, each),
		cmocka_unit_test_setup(test_file_stamp_ctime, each),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
