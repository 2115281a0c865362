/* SPDX-License-Identifier: MIT */
/*
 * The client library (common/mc_client.c) against a scripted server: a
 * forked child on a real unix socket that checks the request it gets with
 * plain msgpack-c and answers with bytes packed by hand, so that what the
 * client makes of each kind of answer (a result after unrelated messages,
 * an error, silence, a hang-up, garbage, another protocol) is seen.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <sys/syscall.h>

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <msgpack.h>

#include "mc_client.h"
#include "protocol.h"

enum script {
	SCRIPT_RESULT,		/* a notification, a stray response, then ours */
	SCRIPT_ERROR,		/* [0, "ENOENT: no job called x"] */
	SCRIPT_HANGUP,		/* reads the request, closes */
	SCRIPT_SILENT,		/* reads the request, says nothing */
	SCRIPT_GARBAGE,		/* 0xc1 is never valid msgpack */
	SCRIPT_OLD_PROTOCOL,	/* hello answers protocol 1 */
	SCRIPT_HELD,		/* signals the client in its read, then
				   answers once the handler released it */
};

/* SCRIPT_HELD's release: the client's signal handler writes a byte. */
static int	held_release[2] = { -1, -1 };

static void
held_handler(int sig)
{
	(void)sig;
	(void)write(held_release[1], "x", 1);
}

/*
 * Until the process is blocked in read(2), as /proc says (its syscall
 * number first in /proc/PID/syscall), for 5 s at most.
 */
static void
wait_in_read(pid_t pid)
{
	char	path[64], line[64];
	FILE	*f;
	int	i;
	long	nr;

	snprintf(path, sizeof path, "/proc/%ld/syscall", (long)pid);
	for (i = 0; i < 500; i++, usleep(10000)) {
		if ((f = fopen(path, "r")) == NULL)
			continue;
		nr = fgets(line, sizeof line, f) != NULL ? atol(line) : -1;
		fclose(f);
		if (nr == SYS_read)
			return;
	}
	_exit(7);
}

static char	sock_dir[] = "/tmp/mc-client-XXXXXX";
static char	sock_path[sizeof sock_dir + 16];

static void
put(int fd, const msgpack_sbuffer *sb)
{
	if (write(fd, sb->data, sb->size) != (ssize_t)sb->size)
		_exit(3);
}

static void
pack_cstr(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

/* The request must be [0, msgid, method, params]; returns msgid. */
static uint32_t
take_request(int fd, const char *method, const char *param, const char *key)
{
	static char		buf[4096];
	msgpack_unpacked	u;
	msgpack_object		*a, *p;
	ssize_t			n = read(fd, buf, sizeof buf);
	size_t			off = 0;
	uint32_t		id;

	msgpack_unpacked_init(&u);
	if (n <= 0 || msgpack_unpack_next(&u, buf, (size_t)n, &off) !=
	    MSGPACK_UNPACK_SUCCESS || u.data.type != MSGPACK_OBJECT_ARRAY ||
	    u.data.via.array.size != 4)
		_exit(4);
	a = u.data.via.array.ptr;
	if (a[0].via.u64 != 0 || a[2].type != MSGPACK_OBJECT_STR ||
	    a[2].via.str.size != strlen(method) ||
	    memcmp(a[2].via.str.ptr, method, strlen(method)) != 0 ||
	    a[3].type != MSGPACK_OBJECT_ARRAY)
		_exit(5);
	p = a[3].via.array.ptr;
	if (a[3].via.array.size != (uint32_t)((param != NULL) + (key != NULL)) ||
	    (param != NULL && (p[0].type != MSGPACK_OBJECT_STR ||
	    memcmp(p[0].via.str.ptr, param, strlen(param)) != 0)) ||
	    (key != NULL && p[param != NULL].type != MSGPACK_OBJECT_MAP))
		_exit(6);
	id = (uint32_t)a[1].via.u64;
	msgpack_unpacked_destroy(&u);
	return id;
}

static void
serve(int fd, enum script script)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;
	uint32_t	id, take_id;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	if (script == SCRIPT_OLD_PROTOCOL) {
		id = take_request(fd, MC_M_HELLO, NULL, NULL);
		msgpack_pack_array(&pk, 4);
		msgpack_pack_uint32(&pk, 1);
		msgpack_pack_uint32(&pk, id);
		msgpack_pack_nil(&pk);
		msgpack_pack_map(&pk, 1);
		pack_cstr(&pk, "protocol");
		msgpack_pack_uint32(&pk, 1);
		put(fd, &sb);
		return;
	}
	id = take_request(fd, MC_M_STATUS, "x", "k");
	take_id = id;
	switch (script) {
	case SCRIPT_RESULT:
		msgpack_pack_array(&pk, 3);	/* a notification */
		msgpack_pack_uint32(&pk, 2);
		pack_cstr(&pk, "change");
		msgpack_pack_array(&pk, 0);
		msgpack_pack_array(&pk, 4);	/* someone else's msgid */
		msgpack_pack_uint32(&pk, 1);
		msgpack_pack_uint32(&pk, id + 7);
		msgpack_pack_nil(&pk);
		pack_cstr(&pk, "not this one");
		msgpack_pack_array(&pk, 4);
		msgpack_pack_uint32(&pk, 1);
		msgpack_pack_uint32(&pk, id);
		msgpack_pack_nil(&pk);
		pack_cstr(&pk, "this one");
		break;
	case SCRIPT_ERROR:
		msgpack_pack_array(&pk, 4);
		msgpack_pack_uint32(&pk, 1);
		msgpack_pack_uint32(&pk, id);
		msgpack_pack_array(&pk, 2);
		msgpack_pack_uint32(&pk, 0);
		pack_cstr(&pk, "ENOENT: no job called x");
		msgpack_pack_nil(&pk);
		break;
	case SCRIPT_GARBAGE:
		msgpack_sbuffer_write(&sb, "\xc1", 1);
		break;
	case SCRIPT_SILENT:
		sleep(3);
		break;
	case SCRIPT_HELD:
		wait_in_read(getppid());
		kill(getppid(), SIGUSR1);
		if (read(held_release[0], &id, 1) != 1)
			_exit(8);
		msgpack_pack_array(&pk, 4);
		msgpack_pack_uint32(&pk, 1);
		msgpack_pack_uint32(&pk, take_id);
		msgpack_pack_nil(&pk);
		pack_cstr(&pk, "this one");
		break;
	default:
		break;
	}
	if (sb.size > 0)
		put(fd, &sb);
}

/* A server for one connection, run as a child; its exit status says
 * whether the request it got was right. */
static pid_t
start_server(enum script script)
{
	struct sockaddr_un	sun = { .sun_family = AF_UNIX };
	int			lfd, fd;
	pid_t			pid;

	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", sock_path);
	unlink(sock_path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof sun), 0);
	assert_int_equal(listen(lfd, 1), 0);
	if ((pid = fork()) == 0) {
		if ((fd = accept(lfd, NULL, NULL)) == -1)
			_exit(2);
		serve(fd, script);
		close(fd);
		_exit(0);
	}
	close(lfd);
	return pid;
}

static void
server_was_asked_right(pid_t pid)
{
	int	status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static enum mc_client_status
status_x(struct mc_client *c, struct mc_rpc_message *m)
{
	char *const	params[] = { "x", NULL };

	return mc_client_call(c, MC_M_STATUS, params, "k", "v", m);
}

static void
test_result_after_unrelated_messages(void **state)
{
	struct mc_client	c;
	struct mc_rpc_message	m;
	char			s[32];
	pid_t			pid = start_server(SCRIPT_RESULT);

	(void)state;
	assert_int_equal(mc_client_open(&c, sock_path, 5), 0);
	assert_int_equal(status_x(&c, &m), MC_CLIENT_OK);
	assert_int_equal(m.type, MC_MSG_RESPONSE);
	assert_true(mc_rpc_str(&m.result, s, sizeof s));
	assert_string_equal(s, "this one");
	mc_client_close(&c);
	server_was_asked_right(pid);
}

static void
test_error_reply(void **state)
{
	struct mc_client	c;
	struct mc_rpc_message	m;
	pid_t			pid = start_server(SCRIPT_ERROR);

	(void)state;
	assert_int_equal(mc_client_open(&c, sock_path, 5), 0);
	assert_int_equal(status_x(&c, &m), MC_CLIENT_DAEMON);
	assert_string_equal(c.code, "ENOENT");
	assert_string_equal(c.error, "no job called x");
	mc_client_close(&c);
	server_was_asked_right(pid);
}

static void
test_transport_failures(void **state)
{
	static const struct {
		enum script	script;
		const char	*error;
	} cases[] = {
		{ SCRIPT_HANGUP, "metalcapd closed the connection" },
		{ SCRIPT_SILENT, "metalcapd did not answer within 1 s "
		    "(--timeout)" },
		{ SCRIPT_GARBAGE, "bad reply from metalcapd" },
	};
	struct mc_client	c;
	struct mc_rpc_message	m;
	size_t			i;
	pid_t			pid;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		pid = start_server(cases[i].script);
		assert_int_equal(mc_client_open(&c, sock_path, 1), 0);
		assert_int_equal(status_x(&c, &m), MC_CLIENT_TRANSPORT);
		assert_non_null(strstr(c.error, cases[i].error));
		mc_client_close(&c);
		server_was_asked_right(pid);
	}
}

static void
test_hello_refuses_other_protocol(void **state)
{
	struct mc_client	c;
	pid_t			pid = start_server(SCRIPT_OLD_PROTOCOL);

	(void)state;
	assert_int_equal(mc_client_open(&c, sock_path, 5), 0);
	assert_int_equal(mc_client_hello(&c), MC_CLIENT_DAEMON);
	assert_string_equal(c.code, "EPROTO");
	assert_non_null(strstr(c.error, "another protocol version"));
	mc_client_close(&c);
	server_was_asked_right(pid);
}

static void
test_open_failures(void **state)
{
	struct mc_client	c;
	char			longpath[200], want[96];
	int			fd, i, saved;

	(void)state;
	unlink(sock_path);
	assert_int_equal(mc_client_open(&c, sock_path, 1), -1);
	assert_non_null(strstr(c.error, "cannot reach metalcapd at"));
	assert_non_null(strstr(c.error, sock_path));
	assert_int_equal(c.fd, -1);
	/* A failed open keeps no descriptor (a tool retrying would run out):
	 * the lowest free one is the same after fifty. */
	fd = dup(0);
	close(fd);
	for (i = 0; i < 50; i++)
		assert_int_equal(mc_client_open(&c, sock_path, 1), -1);
	assert_int_equal(dup(0), fd);
	close(fd);
	/* Started with stdin closed, the socket is descriptor 0: a failed
	 * open gives that back too. */
	saved = dup(0);
	close(0);
	assert_int_equal(mc_client_open(&c, sock_path, 1), -1);
	assert_int_equal(fcntl(0, F_GETFD), -1);
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
	memset(longpath, 'a', sizeof longpath - 1);
	longpath[0] = '/';
	longpath[sizeof longpath - 1] = '\0';
	assert_int_equal(mc_client_open(&c, longpath, 1), -1);
	/* The room there is, as the system has it (104 bytes on macOS). */
	snprintf(want, sizeof want, "over the %zu bytes a unix socket path "
	    "may have", sizeof ((struct sockaddr_un *)NULL)->sun_path - 1);
	assert_non_null(strstr(c.error, want));
	mc_client_close(&c);	/* harmless on a client that never opened */
}

/*
 * A signal whose handler does not restart system calls arrives while the
 * client waits for its answer (the server holds the answer until the
 * handler has run): the read it interrupted is retried and the answer
 * taken.  Kills: EINTR taken for a broken connection.
 */
static void
test_call_survives_a_signal(void **state)
{
	struct sigaction	sa = { .sa_handler = held_handler }, old;
	struct mc_client	c;
	struct mc_rpc_message	m;
	char			s[32];
	pid_t			pid;

	(void)state;
	assert_int_equal(pipe(held_release), 0);
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	pid = start_server(SCRIPT_HELD);
	assert_int_equal(mc_client_open(&c, sock_path, 5), 0);
	assert_int_equal(status_x(&c, &m), MC_CLIENT_OK);
	assert_true(mc_rpc_str(&m.result, s, sizeof s));
	assert_string_equal(s, "this one");
	mc_client_close(&c);
	server_was_asked_right(pid);
	sigaction(SIGUSR1, &old, NULL);
	close(held_release[0]);
	close(held_release[1]);
}

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(sock_dir) == NULL)
		return -1;
	snprintf(sock_path, sizeof sock_path, "%s/s.sock", sock_dir);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(sock_path);
	return rmdir(sock_dir);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_result_after_unrelated_messages),
		cmocka_unit_test(test_error_reply),
		cmocka_unit_test(test_transport_failures),
		cmocka_unit_test(test_hello_refuses_other_protocol),
		cmocka_unit_test(test_open_failures),
		cmocka_unit_test(test_call_survives_a_signal),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
