/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: everything a client can send.  A real metalcapd core (its
 * server, decoder, dispatcher, state, one job) runs in this process on a
 * socket in a scratch folder; each input is written by a client that then
 * shuts down its side, and the loop runs until the daemon has answered and
 * closed the connection.  launchctl and the probe are paths that do not
 * exist, so the changes requests make fail fast, as they may in real life.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "mc_plist.h"
#include "mcd.h"

static struct mcd	d;

static const char job[] = "<?xml version=\"1.0\"?><plist version=\"1.0\">"
    "<dict><key>ProgramArguments</key><array><string>/opt/llama/bin/"
    "llama-server</string></array></dict></plist>";

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char	why[512], path[64];

	(void)argc;
	(void)argv;
	log_open(NULL, false);
	d.loop = uv_default_loop();
	d.launchctl_timeout_ms = 1000;
	d.probe_timeout_ms = 1000;
	d.client_timeout_ms = 1000;
	d.marker_timeout_ms = 1000;
	if (paths_init(&d.paths, fuzz_dir(), "fuzz", why, sizeof why) == -1)
		abort();
	snprintf(d.paths.launchctl, sizeof d.paths.launchctl, "/nonexistent/"
	    "launchctl");
	snprintf(d.paths.probe, sizeof d.paths.probe, "/nonexistent/probe");
	paths_managed_user(&d.paths);
	if (paths_make_dirs(&d.paths, why, sizeof why) == -1 ||
	    mc_plist_read_file(MC_FUZZ_SOURCE "/agent-template/job.plist",
	    &d.job_template, why, sizeof why) == -1)
		abort();
	state_load(&d.state, d.paths.state, why, sizeof why);
	snprintf(d.domain, sizeof d.domain, "gui/%ld", (long)getuid());
	seams_connect(&d);
	if (server_start(&d, why, sizeof why) == -1)
		abort();
	uv_timer_init(d.loop, &d.rescan_timer);
	d.rescan_timer.data = &d;
	fuzz_write_file(path, "jobs.d/llama.plist", (const uint8_t *)job,
	    sizeof job - 1);
	fleet_init(&d);
	driver_rescan(&d);
	uv_run(d.loop, UV_RUN_NOWAIT);
	return 0;
}

static int
fuzz_connect(void)
{
	struct sockaddr_un	sun = { .sun_family = AF_UNIX };
	int			fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", d.paths.socket);
	if (fd == -1 || connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1)
		abort();
	return fd;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	buf[65536];
	size_t	off = 0;
	ssize_t	n;
	int	fd = fuzz_connect(), spins;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	/* Write it all, reading replies as they come, then end our side. */
	for (spins = 0; spins < 100000; spins++) {
		if (off < size) {
			n = write(fd, data + off, size - off);
			if (n > 0)
				off += (size_t)n;
			else if (n == -1 && errno != EAGAIN)
				break;	/* the daemon closed on us */
			if (off == size)
				shutdown(fd, SHUT_WR);
		} else if (size == 0 && spins == 0)
			shutdown(fd, SHUT_WR);
		uv_run(d.loop, UV_RUN_NOWAIT);
		n = read(fd, buf, sizeof buf);
		if (n == 0 || (n == -1 && errno != EAGAIN))
			break;	/* closed: every reply is out */
	}
	if (spins == 100000)
		abort();	/* the daemon never finished with a client */
	close(fd);
	uv_run(d.loop, UV_RUN_NOWAIT);
	return 0;
}
