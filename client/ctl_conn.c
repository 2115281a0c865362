/* SPDX-License-Identifier: MIT */
/*
 * metalcapctl's one connection to metalcapd, as every command uses it:
 * opened with the version check, a call whose failure is said here once,
 * and the events watch reads.  Apart from the command table
 * (metalcapctl.c), so that the commands and the table that names them do
 * not call each other round in a circle.
 */
#include <err.h>

#include "ctl.h"

/*
 * Call a method; a transport failure or the daemon's error is printed
 * here, once.  0, EXIT_DAEMON or EXIT_UNREACH.
 */
int
ctl_call(struct ctl *c, const char *method, char *const *params,
    const char *opt_key, const char *opt_val, struct mc_rpc_message *m)
{
	switch (mc_client_call(&c->client, method, params, opt_key, opt_val,
	    m)) {
	case MC_CLIENT_OK:
		return 0;
	case MC_CLIENT_DAEMON:
		warnx("%s: %s", c->client.code, c->client.error);
		return EXIT_DAEMON;
	default:
		warnx("%s", c->client.error);
		return EXIT_UNREACH;
	}
}

/* The next message (an event, for watch); -1 once the connection is lost. */
int
ctl_read(struct ctl *c, struct mc_rpc_message *m)
{
	if (mc_client_read(&c->client, m) == MC_CLIENT_OK)
		return 0;
	warnx("%s", c->client.error);
	return -1;
}

/* Connect and check the protocol version; 0 or an exit status. */
int
ctl_open(struct ctl *c)
{
	if (mc_client_open(&c->client, c->paths.socket, c->timeout) == -1) {
		warnx("%s", c->client.error);
		return EXIT_UNREACH;
	}
	switch (mc_client_hello(&c->client)) {
	case MC_CLIENT_OK:
		return 0;
	case MC_CLIENT_DAEMON:
		warnx("%s", c->client.error);
		return EXIT_DAEMON;
	default:
		warnx("%s", c->client.error);
		return EXIT_UNREACH;
	}
}
