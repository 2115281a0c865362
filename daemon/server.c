/* SPDX-License-Identifier: MIT */
/*
 * The control socket: a unix stream socket, mode 0600 in a 0700 directory,
 * peers of another uid refused at accept.  Each connection feeds a strict
 * incremental msgpack-RPC decoder; a malformed or oversized message costs
 * that connection, never the daemon.  Writes are queued with a bound: a
 * client that stops reading stops being read.  A connection that leaves a
 * message half sent, or its replies unread, for the client timeout is
 * closed; when all places are taken, the connection idle the longest
 * makes room for a new one.  A connection is freed only once its handles'
 * uv_close callbacks have run and no reply is owed.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_os.h"
#include "mc_util.h"
#include "mcd.h"
#include "protocol.h"

#define SERVER_STR_(x)	#x
#define SERVER_STR(x)	SERVER_STR_(x)
/* Events waiting for a subscriber, past what the kernel took: 256 KiB. */
#define SERVER_SUBSCRIBER_BEHIND	262144

struct write_req {
	uv_write_t	 req;
	struct conn	*conn;
	char		*data;
	size_t		 held;		/* bytes this write keeps allocated */
};

static void	server_read(uv_stream_t *, ssize_t, const uv_buf_t *);
static void	conn_dispatch(struct conn *);
static void	server_shed(struct mcd *);

/*
 * After a crowd of clients has come and gone, hand the memory back: the
 * allocator would keep it for a crowd that may never return.
 */
static void
conn_free(struct conn *c)
{
	struct mcd	*d = c->daemon;

	mc_rpc_decoder_free(&c->decoder);
	free(c);
	if (++d->conns_freed >= 16 && d->nconns == 0) {
		d->conns_freed = 0;
		platform_release_memory();
	}
}

/* Freed here, or by the last conn_unref if a reply is still owed. */
static void
conn_closed(uv_handle_t *h)
{
	struct conn	*c = h->data;

	if (--c->handles > 0)
		return;
	c->closed = true;
	if (c->refs == 0)
		conn_free(c);
}

/* A reply will come later (a probe runs): keep the memory. */
void
conn_ref(struct conn *c)
{
	c->refs++;
}

void
conn_unref(struct conn *c)
{
	if (--c->refs == 0 && c->closed)
		conn_free(c);
}

static void
conn_close(struct conn *c, const char *why)
{
	struct mcd	*d = c->daemon;
	struct conn	**pp;

	if (c->closing)
		return;
	c->closing = true;
	if (why != NULL)
		log_warnx("client closed: %s", why);
	for (pp = &d->conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	d->nconns--;
	uv_close((uv_handle_t *)&c->timer, conn_closed);
	uv_close((uv_handle_t *)&c->pipe, conn_closed);
}

static void
conn_timeout(uv_timer_t *t)
{
	conn_close(t->data, "stalled: a message half sent or replies unread "
	    "for the client timeout");
}

/*
 * After I/O: advanced when a whole message came or a reply was taken.
 * A client owing us the rest of a message, or owing its reads, has the
 * client timeout from the last time it advanced: bytes that trickle in
 * without making a message neither restart the timeout nor count as
 * activity (a connection sending a byte every 2 s would hold its place
 * for ever).  An idle one has no timer.
 */
static void
conn_progress(struct conn *c, bool advanced)
{
	if (advanced)
		c->last_active = ++c->daemon->io_serial;
	if (c->closing)
		return;
	if (mc_rpc_partial(&c->decoder) || c->pending_writes > 0) {
		if (advanced || !uv_is_active((uv_handle_t *)&c->timer))
			uv_timer_start(&c->timer, conn_timeout,
			    (uint64_t)c->daemon->client_timeout_ms, 0);
	} else
		uv_timer_stop(&c->timer);
}

static void
conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	buf->base = malloc(suggested);
	buf->len = buf->base ? suggested : 0;
}

static void
conn_resume(struct conn *c)
{
	if (!c->reading && !c->closing &&
	    c->pending_writes < MC_MAX_OUTSTANDING) {
		c->reading = true;
		uv_read_start((uv_stream_t *)&c->pipe, conn_alloc, server_read);
	}
}

static void
server_written(uv_write_t *req, int status)
{
	struct write_req	*w = (struct write_req *)req;
	struct conn		*c = w->conn;

	c->queued -= w->held;
	free(w->data);
	free(w);
	c->pending_writes--;
	if (status < 0) {
		conn_close(c, uv_strerror(status));
		return;
	}
	conn_progress(c, true);
	conn_dispatch(c);
	conn_resume(c);
}

/* Queue the buffer's bytes to the client; takes the buffer's data. */
void
server_send(struct conn *c, msgpack_sbuffer *sb)
{
	struct write_req	*w;
	uv_buf_t		 buf;
	char			*data;

	if (c->closing) {
		msgpack_sbuffer_destroy(sb);
		return;
	}
	w = malloc(sizeof *w);
	w->conn = c;
	buf.len = sb->size;
	w->data = msgpack_sbuffer_release(sb);
	/*
	 * A packer's buffer starts at 8 KiB: queued as it is, a 300-byte
	 * event would hold 8 KiB until written.  Cut to what it holds, and
	 * count what stays allocated, for the subscriber bound.
	 */
	if (buf.len > 0 && (data = realloc(w->data, buf.len)) != NULL)
		w->data = data;
	w->held = buf.len + sizeof *w;
	c->queued += w->held;
	buf = uv_buf_init(w->data, (unsigned)buf.len);
	c->pending_writes++;
	if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &buf, 1,
	    server_written) != 0) {
		c->queued -= w->held;
		free(w->data);
		free(w);
		c->pending_writes--;
		conn_close(c, "write failed");
		return;
	}
	if (c->pending_writes == 1)
		conn_progress(c, false);
	/* Back-pressure: stop reading a client that does not read. */
	if (c->pending_writes >= MC_MAX_OUTSTANDING && c->reading) {
		uv_read_stop((uv_stream_t *)&c->pipe);
		c->reading = false;
	}
}

/*
 * Send an event (its packed map) to every subscriber, as the notification
 * "event" [map], or as nvim_call_function [F, [map]] to one that asked
 * for a call.
 */
void
server_broadcast(struct mcd *d, msgpack_sbuffer *event)
{
	struct conn	*c, *next;
	msgpack_sbuffer	 sb;
	msgpack_packer	 pk;

	for (c = d->conns; c != NULL; c = next) {
		next = c->next;
		if (!c->subscribed || c->closing)
			continue;
		/*
		 * A subscriber this far behind reads slower than events come:
		 * queued for it, they would grow the daemon without bound.
		 * Judged by the memory its queued writes hold (buffers and
		 * requests, those libuv could not hand to the kernel yet: a
		 * burst of events in one turn is not a slow reader).  Closed,
		 * it can connect again and ask for status.
		 */
		if (c->queued > SERVER_SUBSCRIBER_BEHIND) {
			conn_close(c, "a subscriber " SERVER_STR(
			    SERVER_SUBSCRIBER_BEHIND) " bytes of events behind: "
			    "closed");
			continue;
		}
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		if (c->call[0] != '\0') {
			mc_rpc_pack_notify(&pk, MC_N_CALL, 2);
			mc_rpc_pack_str(&pk, c->call);
			msgpack_pack_array(&pk, 1);
		} else
			mc_rpc_pack_notify(&pk, MC_N_EVENT, 1);
		msgpack_sbuffer_write(&sb, event->data, event->size);
		server_send(c, &sb);
	}
	msgpack_sbuffer_destroy(event);
}

/* A request that cannot be run: say why, and keep the connection. */
static void
conn_refuse(struct conn *c, uint32_t msgid, const char *why)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	mc_rpc_pack_response_error(&pk, msgid, MC_E_PROTO, why);
	server_send(c, &sb);
}

/*
 * Answer the whole messages buffered, as long as the client reads its
 * replies: one that pipelines thousands without reading gets
 * MC_MAX_OUTSTANDING answers queued, the rest waits in its buffer.
 * Responses and notifications from a client mean nothing here, whatever
 * their shape; only bytes that are not msgpack cost the connection.
 */
static void
conn_dispatch(struct conn *c)
{
	struct mc_rpc_message	 m;
	const char		*why = NULL;
	enum mc_rpc_status	 st = MC_RPC_MORE;
	bool			 whole = false;

	while (!c->closing && c->pending_writes < MC_MAX_OUTSTANDING) {
		st = mc_rpc_next(&c->decoder, &m, &why);
		whole |= st != MC_RPC_MORE;
		if (st == MC_RPC_OK && m.type == MC_MSG_REQUEST)
			c->daemon->dispatch(c, &m);
		else if (st == MC_RPC_BADREQUEST)
			conn_refuse(c, m.msgid, why);
		else if (st == MC_RPC_IGNORED)
			log_debug("client message ignored: %s", why);
		else if (st != MC_RPC_OK)
			break;
	}
	if (c->closing)
		return;
	if (st != MC_RPC_OK && st != MC_RPC_MORE && st != MC_RPC_BADREQUEST &&
	    st != MC_RPC_IGNORED)
		conn_close(c, why);
	else
		conn_progress(c, whole);
}

static void
server_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct conn	*c = s->data;

	if (n < 0) {
		free(buf->base);
		conn_close(c, n == UV_EOF ? NULL : uv_strerror((int)n));
		return;
	}
	if (n > 0 && mc_rpc_feed(&c->decoder, buf->base, (size_t)n) == -1) {
		free(buf->base);
		conn_close(c, c->decoder.error);
		return;
	}
	free(buf->base);
	conn_dispatch(c);
	server_shed(c->daemon);
}

/*
 * Bytes waiting unread make a connection busy, not idle: one accepted in
 * the same turn of the loop as hundreds of others has not been read yet,
 * and its request may be there already.
 */
static bool
conn_has_input(struct conn *c)
{
	uv_os_fd_t	fd;
	char		byte;

	return uv_fileno((uv_handle_t *)&c->pipe, &fd) == 0 &&
	    recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

/*
 * All places are taken: the connection that has advanced the least
 * recently (one that only listens to events last) gives its place, a
 * half-sent message or not; NULL if every other one is busy (owed
 * replies, bytes waiting unread).  Bytes waiting behind a half-sent
 * message do not make it busy: on a busy machine every one of 256
 * clients trickling a message in had its next byte unread when a client
 * came, and it was refused.  Its I/O is ordered by a counter, not
 * the loop's clock, which stands still while one turn accepts a burst:
 * ties there gave the place of the newest, not the idlest.
 */
static struct conn *
server_idlest(struct mcd *d, struct conn *except)
{
	struct conn	*c, *best = NULL;

	for (c = d->conns; c != NULL; c = c->next) {
		/* A subscriber's queue holds events only: it may give way. */
		if (c == except || c->closing || (c->pending_writes > 0 &&
		    !c->subscribed) || c->refs > 0)
			continue;
		if (best != NULL && !(best->subscribed && !c->subscribed) &&
		    !(best->subscribed == c->subscribed &&
		    c->last_active < best->last_active))
			continue;
		if (mc_rpc_partial(&c->decoder) || !conn_has_input(c))
			best = c;
	}
	return best;
}

/*
 * Over MC_MAX_CLIENTS, with no one idle at the accept, a connection is held
 * in one of SERVER_RESERVE places more until reads tell who gives way:
 * one whose bytes waited unread may hold a whole request (a well-behaved
 * client's, come with a burst) or the next byte of a trickle, and only
 * reading it tells the two apart.  After each read, the table sheds back
 * down to MC_MAX_CLIENTS, the idlest first.
 */
#define SERVER_RESERVE	16

static void
server_shed(struct mcd *d)
{
	struct conn	*idle;

	while (d->nconns > MC_MAX_CLIENTS &&
	    (idle = server_idlest(d, NULL)) != NULL)
		conn_close(idle, "too many clients: closed the one idle the "
		    "longest");
}

static void
server_accept(uv_stream_t *server, int status)
{
	struct mcd	*d = server->data;
	struct conn	*c;
	uv_os_fd_t	 fd;
	uid_t		 uid;

	if (status < 0)
		return;
	c = calloc(1, sizeof *c);
	c->daemon = d;
	uv_pipe_init(d->loop, &c->pipe, 0);
	uv_timer_init(d->loop, &c->timer);
	c->pipe.data = c->timer.data = c;
	c->handles = 2;
	c->last_active = ++d->io_serial;
	mc_rpc_decoder_init(&c->decoder, MC_MAX_MESSAGE);
	c->next = d->conns;
	d->conns = c;
	d->nconns++;
	if (uv_accept(server, (uv_stream_t *)&c->pipe) != 0) {
		conn_close(c, "accept failed");
		return;
	}
	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0 ||
	    mc_peer_uid(fd, &uid) == -1 || uid != getuid()) {
		conn_close(c, "peer of another user refused");
		return;
	}
	if (d->nconns > MC_MAX_CLIENTS) {
		struct conn *idle = server_idlest(d, c);

		if (idle != NULL)
			conn_close(idle, "too many clients: closed the one "
			    "idle the longest");
		else if (d->nconns > MC_MAX_CLIENTS + SERVER_RESERVE) {
			conn_close(c, "too many clients, none of them idle");
			return;
		}
	}
	conn_resume(c);
}

/*
 * One daemon per home: an exclusive flock on state/metalcapd.lock, held
 * for the daemon's life and gone with it however it ends.  The socket is
 * not the lock: two daemons starting at once both found no one answering
 * on it, and the one that exited first unlinked the other's socket.
 *
 * A daemon killed while it was starting a child leaves the lock, and its
 * listening socket, with that child until it execs (both close on exec):
 * for those milliseconds the lock is held and a connect even succeeds.
 * The holder writes its pid into the lock file: a held lock whose pid
 * is alive is a live daemon, and this one gives way at once; one whose
 * pid is gone (or not written yet) is tried again for up to
 * SERVER_LOCK_WAIT_MS.
 */
#define SERVER_LOCK_WAIT_MS	2000
#define SERVER_LOCK_POLL_MS	20

/* Is the pid written in the lock file a running process? */
static bool
server_holder_alive(int fd)
{
	char	buf[32];
	ssize_t	n;
	long	pid;

	if ((n = pread(fd, buf, sizeof buf - 1, 0)) <= 0)
		return false;
	buf[n] = '\0';
	pid = strtol(buf, NULL, 10);
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/*
 * One daemon per user: 0 with the lock held, 1 when another metalcapd
 * holds it, -1 on an error; why says which.
 */
static int
server_lock(struct mcd *d, char *why, size_t whylen)
{
	char	path[PATH_MAX], pid[32];
	int	fd, n, rc, waited = 0;

	if (mc_fmt(path, sizeof path, "%s/metalcapd.lock", d->paths.state) ==
	    -1 || (fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) == -1) {
		snprintf(why, whylen, "cannot open the lock file %s: %s", path,
		    strerror(errno));
		return -1;
	}
	while (flock(fd, LOCK_EX | LOCK_NB) == -1 && errno == EWOULDBLOCK &&
	    waited < SERVER_LOCK_WAIT_MS && !server_holder_alive(fd)) {
		usleep(SERVER_LOCK_POLL_MS * 1000);
		waited += SERVER_LOCK_POLL_MS;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		rc = errno == EWOULDBLOCK ? 1 : -1;
		snprintf(why, whylen, rc == 1 ? "another metalcapd is already "
		    "serving %s (it holds %s)" : "cannot lock %s: %s",
		    rc == 1 ? d->paths.socket : path,
		    rc == 1 ? path : strerror(errno));
		close(fd);
		return rc;
	}
	n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == -1 || pwrite(fd, pid, (size_t)n, 0) != n)
		log_warnx("cannot write %s: %s", path, strerror(errno));
	d->lock_fd = fd;
	return 0;
}

/*
 * With the lock held, a file at the socket's path is a dead daemon's
 * socket: removed, but only if it is a socket.
 */
static int
server_clear_path(const char *path, char *why, size_t whylen)
{
	struct stat	sb;

	if (lstat(path, &sb) == -1)
		return 0;
	if (!S_ISSOCK(sb.st_mode)) {
		snprintf(why, whylen, "%s exists and is not a socket; not "
		    "removing it", path);
		return -1;
	}
	unlink(path);
	return 0;
}

int
server_start(struct mcd *d, char *why, size_t whylen)
{
	mode_t	old;
	int	rc;

	if ((rc = server_lock(d, why, whylen)) != 0)
		return rc;
	if (server_clear_path(d->paths.socket, why, whylen) == -1)
		return -1;
	uv_pipe_init(d->loop, &d->server, 0);
	d->server.data = d;
	old = umask(0177);
	rc = uv_pipe_bind(&d->server, d->paths.socket);
	umask(old);
	/*
	 * As many waiting clients as the system allows: a full queue refuses
	 * the next one at once on macOS, where 64 was less than a fleet's
	 * burst (issue 47); mc_client retries briefly either way.
	 */
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&d->server, MC_OS_LISTEN_BACKLOG,
		    server_accept);
	if (rc != 0) {
		snprintf(why, whylen, "cannot listen on %s: %s",
		    d->paths.socket, uv_strerror(rc));
		return -1;
	}
	chmod(d->paths.socket, 0600);
	return 0;
}

void
server_stop(struct mcd *d)
{
	while (d->conns != NULL)
		conn_close(d->conns, NULL);
	uv_close((uv_handle_t *)&d->server, NULL);
	unlink(d->paths.socket);
}
