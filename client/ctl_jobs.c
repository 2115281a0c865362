/* SPDX-License-Identifier: MIT */
/*
 * The commands about jobs: status, enable, the one-job changes (disable,
 * profile, start, stop, restart), profiles, reload, watch and logs.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "mc_util.h"
#include "protocol.h"

int
cmd_status(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	m;
	char			state[32];
	uint32_t		i;
	int			rc;

	if ((rc = ctl_call(c, MC_M_STATUS, argc ? argv : NULL, NULL, NULL,
	    &m)) != 0)
		return rc;
	if (m.result.type != MSGPACK_OBJECT_ARRAY) {
		warnx("bad status reply");
		return EXIT_DAEMON;
	}
	if (!c->json)
		return ctl_print_jobs(&m.result);
	ctl_print_json(&m.result);
	for (i = 0; i < m.result.via.array.size; i++)
		if (ctl_unhealthy(ctl_field(&m.result.via.array.ptr[i], "state",
		    state, sizeof state)) ||
		    ctl_print_health(&m.result.via.array.ptr[i], false))
			rc = EXIT_UNHEALTHY;
	return rc;
}

int
cmd_enable(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	struct mc_rpc_message	 m;
	char			*params[] = { argv[0], NULL };
	const char		*profile = c->opts.profile;

	(void)cmd;
	(void)argc;
	return ctl_job_reply(c, ctl_call(c, MC_M_ENABLE, params,
	    profile ? "profile" : NULL, profile, &m), "enable", &m);
}

/* disable, profile, start, stop, restart: one request about one job. */
int
cmd_change(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	struct mc_rpc_message	m;

	(void)argc;
	return ctl_job_reply(c, ctl_call(c, cmd->method, argv, NULL, NULL, &m),
	    cmd->name, &m);
}

int
cmd_profiles(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	 m;
	char			 name[80], fam[32], tg[32], desc[256];
	const msgpack_object	*p;
	uint32_t		 i;
	int			 rc;

	(void)argc;
	(void)argv;
	if ((rc = ctl_call(c, MC_M_PROFILE_LIST, NULL, NULL, NULL, &m)) != 0)
		return rc;
	if (c->json) {
		ctl_print_json(&m.result);
		return 0;
	}
	printf("%-12s %-8s %-10s %s\n", "PROFILE", "FAMILY", "TG MEMORY",
	    "DESCRIPTION");
	for (i = 0; m.result.type == MSGPACK_OBJECT_ARRAY &&
	    i < m.result.via.array.size; i++) {
		p = &m.result.via.array.ptr[i];
		printf("%-12s %-8s %-10s %s\n", ctl_field(p, "name", name,
		    sizeof name), ctl_field(p, "apple_family_max", fam,
		    sizeof fam), ctl_field(p, "threadgroup_memory", tg,
		    sizeof tg), mc_rpc_map_get(p, "error") &&
		    mc_rpc_map_get(p, "error")->type == MSGPACK_OBJECT_STR ?
		    ctl_field(p, "error", desc, sizeof desc) :
		    ctl_field(p, "description", desc, sizeof desc));
	}
	return 0;
}

int
cmd_reload(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	m;
	int			rc;

	(void)argc;
	(void)argv;
	if ((rc = ctl_call(c, MC_M_RELOAD, NULL, NULL, NULL, &m)) != 0)
		return rc;
	/* --json prints the daemon's answer, as every command does. */
	if (c->json)
		ctl_print_json(&m.result);
	else
		printf("reloaded\n");
	return 0;
}

/* Print events as they come, one line each (or one JSON object). */
int
cmd_watch(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	 m;
	const msgpack_object	*ev, *job;
	char			 type[64], req[32], name[80], state[32];
	char			 reason[512];
	int			 rc;

	(void)argc;
	(void)argv;
	if ((rc = ctl_call(c, MC_M_SUBSCRIBE, NULL, NULL, NULL, &m)) != 0)
		return rc;
	mc_client_timeout(&c->client, 0);	/* events come when they come */
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (ctl_read(c, &m) == 0) {
		if (m.type != MC_MSG_NOTIFY || m.params.via.array.size < 1)
			continue;
		ev = &m.params.via.array.ptr[0];
		if (c->json) {
			json_t *v = ctl_json(ev);

			json_dumpf(v, stdout, JSON_COMPACT | JSON_SORT_KEYS);
			fputc('\n', stdout);
			json_decref(v);
			continue;
		}
		job = mc_rpc_map_get(ev, "job");
		if (job == NULL)
			continue;
		/* A change names its request: change:enable. */
		ctl_field(ev, "type", type, sizeof type);
		if (strcmp(ctl_field(ev, "request", req, sizeof req), "-") != 0)
			snprintf(type + strlen(type), sizeof type - strlen(type),
			    ":%s", req);
		/* held: launchd's hold is the news, not the state's reason. */
		printf("%s %s %s %s\n", type,
		    ctl_field(job, "name", name, sizeof name),
		    ctl_field(job, "state", state, sizeof state),
		    ctl_field(job, strcmp(type, MC_EV_HELD) ? "reason" : "held",
		    reason, sizeof reason));
	}
	return EXIT_UNREACH;
}

/*
 * A workload's log to a terminal: its controls (an escape sequence a
 * client got logged, say, in C0 or C1 form) shown as '?', never acted on.
 * Piped, the bytes pass as they are.  A character cut by the end of what
 * was read waits for its rest: the bytes carried to the front of buf.
 */
static size_t
ctl_logs_write(char *buf, size_t n, bool tty)
{
	size_t	took = tty ? mc_text_tty(buf, n) : n;

	fwrite(buf, 1, took, stdout);
	memmove(buf, buf + took, n - took);
	return n - took;
}

/* What never got its rest (the file ended inside a character). */
static void
ctl_logs_drop(size_t *carry)
{
	for (; *carry > 0; (*carry)--)
		putchar('?');
}

/* Print the job's stderr log; with -f keep following it. */
int
cmd_logs(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	 m;
	char			 path[4096], buf[65536];
	bool			 follow = c->opts.given & CTL_OPT_FOLLOW;
	char			*params[] = { argv[0], NULL };
	struct stat		 sb;
	off_t			 off = 0;
	ssize_t			 n;
	size_t			 carry = 0;
	int			 rc, fd;
	bool			 tty = isatty(STDOUT_FILENO);

	(void)argc;
	if ((rc = ctl_call(c, MC_M_STATUS, params, NULL, NULL, &m)) != 0)
		return rc;
	if (m.result.type != MSGPACK_OBJECT_ARRAY || m.result.via.array.size != 1 ||
	    strcmp(ctl_field(&m.result.via.array.ptr[0], "stderr_path", path,
	    sizeof path), "-") == 0) {
		warnx("no log path for %s", argv[0]);
		return EXIT_DAEMON;
	}
	if ((fd = open(path, O_RDONLY)) == -1) {
		warn("%s", path);
		return EXIT_DAEMON;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	for (;;) {
		while ((n = read(fd, buf + carry, sizeof buf - carry)) > 0) {
			carry = ctl_logs_write(buf, carry + (size_t)n, tty);
			off += n;
		}
		if (!follow)
			break;
		usleep(250000);
		/* Truncated or rotated: start again from the top. */
		if (stat(path, &sb) == 0 && sb.st_size < off) {
			ctl_logs_drop(&carry);
			close(fd);
			if ((fd = open(path, O_RDONLY)) == -1)
				break;
			off = 0;
		}
	}
	ctl_logs_drop(&carry);
	close(fd);
	return 0;
}

