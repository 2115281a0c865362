/* SPDX-License-Identifier: MIT */
/*
 * A small blocking client of metalcapd's msgpack-RPC socket (mc_client.c),
 * for metalcapctl and anything else in C: connect (refusing a server of
 * another user), call a method, read events.  Errors are returned with
 * their text in the client; nothing is printed.
 */
#ifndef MC_CLIENT_H
#define MC_CLIENT_H

#include <stdint.h>

#include "mc_rpc.h"

/* How long a full listen queue is waited out at connect (mc_client.c). */
#define MC_CLIENT_CONNECT_MS	1000

enum mc_client_status {
	MC_CLIENT_OK = 0,
	MC_CLIENT_DAEMON = 1,		/* the daemon answered with an error */
	MC_CLIENT_TRANSPORT = -1,	/* no answer: closed, timed out, ... */
};

struct mc_client {
	int			fd;
	uint32_t		msgid;
	long			timeout;	/* seconds; 0: wait for ever */
	struct mc_rpc_decoder	decoder;
	char			code[32];	/* the daemon's error code */
	char			error[512];	/* why the last call failed */
};

int	mc_client_open(struct mc_client *, const char *socket, long timeout);
void	mc_client_close(struct mc_client *);
void	mc_client_timeout(struct mc_client *, long seconds);
enum mc_client_status mc_client_call(struct mc_client *, const char *method,
	    char *const *params, const char *opt_key, const char *opt_val,
	    struct mc_rpc_message *);
enum mc_client_status mc_client_read(struct mc_client *,
	    struct mc_rpc_message *);
enum mc_client_status mc_client_hello(struct mc_client *);
enum mc_client_status mc_client_hello_reply(struct mc_client *,
	    struct mc_rpc_message *);

#endif
