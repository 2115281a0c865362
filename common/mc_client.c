/* SPDX-License-Identifier: MIT */
/*
 * The blocking client of metalcapd's socket: one connection, requests
 * answered in order, the replies read with the strict decoder.  The server
 * must run as this user (a socket in a folder someone else could write
 * might be anybody's), and one that does not answer within the timeout is
 * given up.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mc_client.h"
#include "mc_os.h"
#include "mc_util.h"
#include "protocol.h"

void
mc_client_timeout(struct mc_client *c, long seconds)
{
	struct timeval	tv = { .tv_sec = seconds };

	c->timeout = seconds;
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/*
 * Connect, waiting out a full listen queue for up to MC_CLIENT_CONNECT_MS.
 * The daemon accepts as fast as its loop turns, so a full queue is a burst
 * (a fleet's clients all at once, issue 47) that clears in milliseconds;
 * one that stays full for a second is a daemon stopped or stuck.  The
 * socket is non-blocking meanwhile, so Linux answers a full queue with
 * EAGAIN at once as macOS does with ECONNREFUSED (mc_os.h), and the waits
 * between tries are ours: 2 ms, doubling, at most 100 ms each.  0, or -1
 * with errno and *waited (ms).
 */
static int
mc_client_connect(int fd, const struct sockaddr_un *sun, long *waited)
{
	struct timespec	ts;
	struct stat	sb;
	long		step = 2;
	int		fl, rc, err;

	*waited = 0;
	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		return -1;
	for (;;) {
		rc = connect(fd, (const struct sockaddr *)sun, sizeof *sun);
		err = errno;
		/* ECONNREFUSED with no socket there: nobody to wait for. */
		if (rc == 0 || !mc_os_connect_busy(err) ||
		    *waited >= MC_CLIENT_CONNECT_MS || (err == ECONNREFUSED &&
		    (lstat(sun->sun_path, &sb) == -1 || !S_ISSOCK(sb.st_mode))))
			break;
		ts.tv_sec = 0;
		ts.tv_nsec = step * 1000000L;
		nanosleep(&ts, NULL);
		*waited += step;
		step = step * 2 > 100 ? 100 : step * 2;
	}
	if (fcntl(fd, F_SETFL, fl) == -1 && rc == 0)
		return -1;
	errno = err;
	return rc;
}

/* Why the daemon could not be reached, after mc_client_connect. */
static void
mc_client_unreached(struct mc_client *c, const char *path, int err,
    long waited)
{
	if (waited >= MC_CLIENT_CONNECT_MS && err == ECONNREFUSED)
		snprintf(c->error, sizeof c->error, "cannot reach metalcapd "
		    "at %s (is it running?): refused for %ld ms: nobody "
		    "listens, or its queue of waiting clients stayed full",
		    path, waited);
	else if (waited >= MC_CLIENT_CONNECT_MS)
		snprintf(c->error, sizeof c->error, "metalcapd at %s did not "
		    "take the connection for %ld ms: its queue of waiting "
		    "clients stayed full (is it stopped or stuck?)", path,
		    waited);
	else
		snprintf(c->error, sizeof c->error, "cannot reach metalcapd "
		    "at %s (is it running?): %s", path, strerror(err));
}

int
mc_client_open(struct mc_client *c, const char *socket_path, long timeout)
{
	struct sockaddr_un	sun;
	uid_t			uid;
	long			waited = 0;

	memset(c, 0, sizeof *c);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (mc_fmt(sun.sun_path, sizeof sun.sun_path, "%s", socket_path) ==
	    -1) {
		snprintf(c->error, sizeof c->error, "%s: over the %zu bytes a "
		    "unix socket path may have", socket_path,
		    sizeof sun.sun_path - 1);
		return (c->fd = -1);
	}
	if ((c->fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    mc_client_connect(c->fd, &sun, &waited) == -1) {
		mc_client_unreached(c, socket_path, errno, waited);
		goto fail;
	}
	if (mc_peer_uid(c->fd, &uid) == -1 || uid != getuid()) {
		snprintf(c->error, sizeof c->error, "%s is served by another "
		    "user: refusing to talk to it", socket_path);
		goto fail;
	}
	mc_client_timeout(c, timeout);
	return mc_rpc_decoder_init(&c->decoder, MC_MAX_REPLY);
fail:
	if (c->fd != -1)
		close(c->fd);
	return (c->fd = -1);
}

void
mc_client_close(struct mc_client *c)
{
	if (c->fd == -1)
		return;
	mc_rpc_decoder_free(&c->decoder);
	close(c->fd);
	c->fd = -1;
}

static enum mc_client_status
mc_client_write(struct mc_client *c, const msgpack_sbuffer *sb)
{
	size_t	off = 0;
	ssize_t	n;

	while (off < sb->size) {
		if ((n = write(c->fd, sb->data + off, sb->size - off)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(c->error, sizeof c->error, errno == EPIPE ||
			    errno == ECONNRESET ? "metalcapd closed the "
			    "connection" : "write to metalcapd: %s",
			    strerror(errno));
			return MC_CLIENT_TRANSPORT;
		}
		off += (size_t)n;
	}
	return MC_CLIENT_OK;
}

/* Read until a whole message is decoded into *m. */
enum mc_client_status
mc_client_read(struct mc_client *c, struct mc_rpc_message *m)
{
	char		 buf[65536];
	const char	*why = NULL;
	ssize_t		 n;

	for (;;) {
		switch (mc_rpc_next(&c->decoder, m, &why)) {
		case MC_RPC_OK:
			return MC_CLIENT_OK;
		case MC_RPC_MORE:
			break;
		case MC_RPC_IGNORED:
			continue;
		default:
			snprintf(c->error, sizeof c->error, "bad reply from "
			    "metalcapd: %s", why);
			return MC_CLIENT_TRANSPORT;
		}
		if ((n = read(c->fd, buf, sizeof buf)) == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			snprintf(c->error, sizeof c->error, "metalcapd did not "
			    "answer within %ld s (--timeout)", c->timeout);
		else if (n == 0 || (n == -1 && errno == ECONNRESET))
			snprintf(c->error, sizeof c->error, "metalcapd closed "
			    "the connection");
		else if (n == -1)
			snprintf(c->error, sizeof c->error, "read from "
			    "metalcapd: %s", strerror(errno));
		else if (mc_rpc_feed(&c->decoder, buf, (size_t)n) == -1)
			snprintf(c->error, sizeof c->error, "bad reply from "
			    "metalcapd: %s", c->decoder.error);
		else
			continue;
		return MC_CLIENT_TRANSPORT;
	}
}

/*
 * Send method with string params (NULL-ended, and a trailing map of one
 * opt_key: opt_val when opt_key is set) and wait for its response.
 */
enum mc_client_status
mc_client_call(struct mc_client *c, const char *method, char *const *params,
    const char *opt_key, const char *opt_val, struct mc_rpc_message *m)
{
	msgpack_sbuffer		sb;
	msgpack_packer		pk;
	uint32_t		n = 0, id = ++c->msgid;
	enum mc_client_status	st;

	while (params != NULL && params[n] != NULL)
		n++;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	mc_rpc_pack_request(&pk, id, method, n + (opt_key != NULL));
	for (n = 0; params != NULL && params[n] != NULL; n++)
		mc_rpc_pack_str(&pk, params[n]);
	if (opt_key != NULL) {
		msgpack_pack_map(&pk, 1);
		mc_rpc_pack_str(&pk, opt_key);
		mc_rpc_pack_str(&pk, opt_val);
	}
	st = mc_client_write(c, &sb);
	msgpack_sbuffer_destroy(&sb);
	while (st == MC_CLIENT_OK && (st = mc_client_read(c, m)) ==
	    MC_CLIENT_OK && (m->type != MC_MSG_RESPONSE || m->msgid != id))
		;
	if (st != MC_CLIENT_OK || m->error.type == MSGPACK_OBJECT_NIL)
		return st;
	mc_rpc_error_parse(&m->error, c->code, sizeof c->code, c->error,
	    sizeof c->error);
	return MC_CLIENT_DAEMON;
}

/*
 * The daemon must speak this client's protocol version; *m holds its hello
 * (valid until the next call), for what else it says.
 */
enum mc_client_status
mc_client_hello_reply(struct mc_client *c, struct mc_rpc_message *m)
{
	const msgpack_object	*proto;
	enum mc_client_status	 st;

	if ((st = mc_client_call(c, MC_M_HELLO, NULL, NULL, NULL, m)) !=
	    MC_CLIENT_OK)
		return st;
	proto = mc_rpc_map_get(&m->result, "protocol");
	if (proto == NULL || proto->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    proto->via.u64 != MC_PROTOCOL_VERSION) {
		snprintf(c->code, sizeof c->code, "EPROTO");
		snprintf(c->error, sizeof c->error, "metalcapd speaks another "
		    "protocol version; this client speaks %d",
		    MC_PROTOCOL_VERSION);
		return MC_CLIENT_DAEMON;
	}
	return MC_CLIENT_OK;
}

enum mc_client_status
mc_client_hello(struct mc_client *c)
{
	struct mc_rpc_message	m;

	return mc_client_hello_reply(c, &m);
}
